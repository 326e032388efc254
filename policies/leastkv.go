package policies

import (
	"github.com/fleetsim/fleetsim/models"
	"github.com/fleetsim/fleetsim/workloads"
)

var _ models.Router = (*LeastKV)(nil)

// LeastKV sends each request to the available replica with the lowest KV
// cache utilisation (ReplicaState.KVUtilization, a fraction in 0..1); ties go
// to fewer outstanding requests, then to the lowest index. Route is one O(n)
// scan. The zero value is ready to use and holds no state.
type LeastKV struct{}

// NewLeastKV returns a least-KV-utilisation router.
func NewLeastKV() *LeastKV { return &LeastKV{} }

// Route implements models.Router.
func (LeastKV) Route(_ *workloads.Request, replicas []models.ReplicaState) (int, bool) {
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
