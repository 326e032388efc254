package policies

import (
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/workloads"
)

var _ fleet.IndexedRouter = (*LeastKV)(nil)

// LeastKV sends each request to the available replica with the lowest KV
// cache utilisation (ReplicaState.KVUtilization, a fraction in 0..1); ties go
// to fewer outstanding requests, then to the lowest index. Route is one O(n)
// scan; a fleet's gateway does not call it on the pool's snapshot but takes
// the same decision from the O(log n) index it keeps (fleet.IndexedRouter).
// The zero value is ready to use and holds no state.
type LeastKV struct{}

// NewLeastKV returns a least-KV-utilisation router.
func NewLeastKV() *LeastKV { return &LeastKV{} }

// Route implements fleet.Router.
func (LeastKV) Route(_ *workloads.Request, replicas []engine.ReplicaState) (int, bool) {
	best, found := 0, false
	for i := range replicas {
		r := &replicas[i]
		if !r.Available {
			continue
		}
		if !found {
			best, found = i, true
			continue
		}
		b := &replicas[best]
		if r.KVUtilization < b.KVUtilization ||
			(r.KVUtilization == b.KVUtilization && r.Outstanding < b.Outstanding) {
			best = i
		}
	}
	return best, found
}

// IndexKey implements fleet.IndexedRouter: Route's decision is exactly
// the available replica with the least (KVUtilization, Outstanding,
// index), the utilisations compared as floats.
func (LeastKV) IndexKey() fleet.RouteKey { return fleet.KeyKVUtilization }
