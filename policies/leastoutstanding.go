package policies

import (
	"math"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/workloads"
)

var _ fleet.IndexedRouter = (*LeastOutstanding)(nil)

// LeastOutstanding sends each request to the available replica with the
// fewest outstanding requests (ReplicaState.Outstanding); ties go to the
// lowest index. Lowest-index tie-breaking does not herd, because the fleet
// counts a routed request as outstanding before the next decision. Route is
// one O(n) scan; a fleet's gateway does not call it on the pool's snapshot
// but takes the same decision from the O(log n) index it keeps
// (fleet.IndexedRouter). The zero value is ready to use and holds
// no state.
type LeastOutstanding struct{}

// NewLeastOutstanding returns a least-outstanding-requests router.
func NewLeastOutstanding() *LeastOutstanding { return &LeastOutstanding{} }

// Route implements fleet.Router.
func (LeastOutstanding) Route(_ *workloads.Request, replicas []engine.ReplicaState) (int, bool) {
	return leastOutstanding(replicas)
}

// leastOutstanding is the scan behind LeastOutstanding, shared with the
// routers that fall back to it.
func leastOutstanding(replicas []engine.ReplicaState) (int, bool) {
	// Two tight loops rather than one that carries the best index: the
	// least count among available replicas (one compare per replica), then
	// the first available replica with it (the lowest index among ties).
	least := math.MaxInt
	for i := range replicas {
		if r := &replicas[i]; r.Available {
			least = min(least, r.Outstanding)
		}
	}
	for i := range replicas {
		if r := &replicas[i]; r.Available && r.Outstanding == least {
			return i, true
		}
	}
	return 0, false
}

// IndexKey implements fleet.IndexedRouter: Route's decision is exactly
// the available replica with the fewest outstanding, lowest index among
// ties, so the fleet may answer it from its index of the snapshot instead
// of calling Route.
func (LeastOutstanding) IndexKey() fleet.RouteKey { return fleet.KeyOutstanding }
