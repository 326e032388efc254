package policies

import (
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/workloads"
)

var _ fleet.Router = (*RoundRobin)(nil)

// RoundRobin sends requests to replicas in index order, skipping unavailable
// ones. The cursor starts at replica 0; after choosing replica i the next
// decision starts its search at i+1 (wrapping), so a replica that becomes
// unavailable is skipped without disturbing the order of the others. The zero
// value is ready to use. Route is O(n) in the worst case (many unavailable
// replicas), O(1) when the next replica is available.
type RoundRobin struct {
	next int // index at which the next search starts
}

// NewRoundRobin returns a round-robin router whose first choice is the lowest
// available index.
func NewRoundRobin() *RoundRobin { return &RoundRobin{} }

// Route implements fleet.Router.
func (r *RoundRobin) Route(_ *workloads.Request, replicas []engine.ReplicaState) (int, bool) {
	n := len(replicas)
	if n == 0 {
		return 0, false
	}
	start := r.next
	if start >= n {
		start %= n
	}
	for k := 0; k < n; k++ {
		i := start + k
		if i >= n {
			i -= n
		}
		if replicas[i].Available {
			r.next = i + 1
			return i, true
		}
	}
	return 0, false
}
