package policies

import (
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/workloads"
)

var _ fleet.Router = (*PowerOfTwo)(nil)

// PowerOfTwo is power-of-two-choices routing (Mitzenmacher, "The Power of Two
// Choices in Randomized Load Balancing", 2001): draw two distinct replicas
// uniformly from the available ones and send the request to the one with
// fewer outstanding requests; on a tie, the first drawn wins. With a single
// available replica it is chosen without a comparison.
//
// Draws use the injected stream (see pickAvailable: O(1) expected when most
// replicas are available, O(n) without allocation otherwise).
type PowerOfTwo struct {
	rng *rand.Rand
}

// NewPowerOfTwo returns a power-of-two-choices router drawing from rng. It
// panics if rng is nil (NewRouter reports that as an error instead).
func NewPowerOfTwo(rng *rand.Rand) *PowerOfTwo {
	if rng == nil {
		panic("policies: NewPowerOfTwo: nil rng")
	}
	return &PowerOfTwo{rng: rng}
}

// Route implements fleet.Router.
func (p *PowerOfTwo) Route(_ *workloads.Request, replicas []engine.ReplicaState) (int, bool) {
	first, ok := pickAvailable(p.rng, replicas, -1)
	if !ok {
		return 0, false
	}
	second, ok := pickAvailable(p.rng, replicas, first)
	if !ok {
		return first, true
	}
	if replicas[second].Outstanding < replicas[first].Outstanding {
		return second, true
	}
	return first, true
}
