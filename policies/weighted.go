package policies

import (
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/workloads"
)

var _ fleet.IndexedRouter = (*WeightedLeastOutstanding)(nil)

// WeightedLeastOutstanding sends each request to the available replica
// whose outstanding requests, counting this one, are fewest per unit of
// capacity: argmin (Outstanding + 1) / Capacity, ties to the lowest index.
// In a fleet of one kind (every Capacity 1) it chooses as LeastOutstanding
// does; in a fleet of GPU groups a replica twice as fast takes about twice
// the requests. A replica with Capacity 0 (unknown) counts as 1. Route is
// one O(n) scan; a fleet's gateway does not call it on the pool's snapshot
// but takes the same decision from the O(log n) index it keeps
// (fleet.IndexedRouter). The zero value is ready to use.
type WeightedLeastOutstanding struct{}

// NewWeightedLeastOutstanding returns a capacity-weighted
// least-outstanding router.
func NewWeightedLeastOutstanding() *WeightedLeastOutstanding { return &WeightedLeastOutstanding{} }

// Route implements fleet.Router.
func (WeightedLeastOutstanding) Route(_ *workloads.Request, replicas []engine.ReplicaState) (int, bool) {
	best, found := 0, false
	var bestLoad float64
	for i := range replicas {
		r := &replicas[i]
		if !r.Available {
			continue
		}
		c := r.Capacity
		if c <= 0 {
			c = 1
		}
		load := float64(r.Outstanding+1) / c
		if !found || load < bestLoad {
			best, bestLoad, found = i, load, true
		}
	}
	return best, found
}

// IndexKey implements fleet.IndexedRouter: Route's decision is exactly
// the available replica with the least float64(Outstanding+1)/Capacity
// (Capacity <= 0 as 1), lowest index among ties.
func (WeightedLeastOutstanding) IndexKey() fleet.RouteKey { return fleet.KeyWeightedOutstanding }
