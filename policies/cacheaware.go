package policies

import (
	"math"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/workloads"
)

// CacheAware routes a request to the replica whose caches would save it the
// most prefill time: its leading prompt segments found in HBM, or in a KV
// tier less their load time ([kv_tiers]; fleet.PrefixIndex), among the
// replicas under prefix-affinity's load bound (ceil(load_bound ×
// (outstanding + 1) / available)); ties, and requests nothing is cached
// for, go to the fewest outstanding. Unlike prefix-affinity it looks at what
// is cached, not at a hash of the prefix, so conversations that share
// their first segments are not sent to one replica.
type CacheAware struct {
	idx       fleet.PrefixIndex
	loadBound float64
}

var _ fleet.PrefixAwareRouter = (*CacheAware)(nil)

// NewCacheAware returns the router; it needs SetPrefixIndex before it can
// see caches (until then it is bounded least-outstanding).
func NewCacheAware(loadBound float64) *CacheAware { return &CacheAware{loadBound: loadBound} }

// SetPrefixIndex implements fleet.PrefixAwareRouter.
func (c *CacheAware) SetPrefixIndex(ix fleet.PrefixIndex) { c.idx = ix }

// Route implements fleet.Router.
func (c *CacheAware) Route(req *workloads.Request, replicas []engine.ReplicaState) (int, bool) {
	var total int64
	avail := 0
	for i := range replicas {
		if replicas[i].Available {
			total += int64(replicas[i].Outstanding)
			avail++
		}
	}
	if avail == 0 {
		return 0, false
	}
	capacity := int64(math.Ceil(c.loadBound * float64(total+1) / float64(avail)))
	best, bestS := -1, 0.0
	for i := range replicas {
		r := &replicas[i]
		if !r.Available || int64(r.Outstanding) >= capacity {
			continue
		}
		var s float64
		if c.idx != nil && req != nil && len(req.Prefix) > 0 {
			s = c.idx.PrefixSavingS(i, req)
		}
		if best < 0 || s > bestS || (s == bestS && r.Outstanding < replicas[best].Outstanding) {
			best, bestS = i, s
		}
	}
	if best < 0 {
		return leastOutstanding(replicas)
	}
	return best, true
}
