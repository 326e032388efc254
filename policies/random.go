package policies

import (
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/workloads"
)

var _ fleet.Router = (*Random)(nil)

// Random sends each request to a replica drawn uniformly from the available
// ones, using the injected random stream.
type Random struct {
	rng *rand.Rand
}

// NewRandom returns a uniform random router drawing from rng. It panics if
// rng is nil (NewRouter reports that as an error instead).
func NewRandom(rng *rand.Rand) *Random {
	if rng == nil {
		panic("policies: NewRandom: nil rng")
	}
	return &Random{rng: rng}
}

// Route implements fleet.Router. The choice is exactly uniform over the
// available replicas; see pickAvailable for the cost and the draws it makes.
func (r *Random) Route(_ *workloads.Request, replicas []engine.ReplicaState) (int, bool) {
	return pickAvailable(r.rng, replicas, -1)
}

// rejectionTries is how many uniform draws over all replicas pickAvailable
// makes before it falls back to counting the eligible replicas.
const rejectionTries = 4

// pickAvailable returns an index drawn uniformly from the available replicas
// other than exclude (-1 excludes none), and false if there is none.
//
// It first tries rejection sampling (draw any index, keep it if eligible),
// which is O(1) when most replicas are available; after rejectionTries misses
// it counts the eligible replicas and draws the k-th of them (O(n), two
// passes, no allocation). Each attempt that succeeds lands uniformly on the
// eligible set, so the mixture is exactly uniform. The number of draws
// depends only on the snapshot and the stream, so decisions are
// deterministic.
func pickAvailable(rng *rand.Rand, replicas []engine.ReplicaState, exclude int) (int, bool) {
	n := len(replicas)
	if n == 0 {
		return 0, false
	}
	for t := 0; t < rejectionTries; t++ {
		i := rng.IntN(n)
		if i != exclude && replicas[i].Available {
			return i, true
		}
	}
	eligible := 0
	for i := range replicas {
		if i != exclude && replicas[i].Available {
			eligible++
		}
	}
	if eligible == 0 {
		return 0, false
	}
	k := rng.IntN(eligible)
	for i := range replicas {
		if i != exclude && replicas[i].Available {
			if k == 0 {
				return i, true
			}
			k--
		}
	}
	panic("policies: pickAvailable: eligible replica not found")
}
