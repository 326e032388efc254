package fleet

import "github.com/fleetsim/fleetsim/models/hw"

// GroupView is what a group-aware router reads about one replica group of
// a heterogeneous fleet: which replicas it holds, what one of them costs per
// hour, and the step model and memory that estimate a request's service
// time on it. Routers never mutate it.
type GroupView struct {
	Name string
	// First and Replicas: the group is replicas [First, First+Replicas).
	First, Replicas int
	// USDPerReplicaHour is one replica's price: its GPUs × the group's price
	// per GPU-hour.
	USDPerReplicaHour float64
	// Perf is the group's step model (nil for a group of 0 replicas).
	Perf *hw.StepModel
	// KVTokens is one replica's KV capacity in tokens (KV blocks × block
	// tokens); MaxSeqs its cap on running sequences.
	KVTokens float64
	MaxSeqs  int
}

// GroupAwareRouter is a Router that reads the fleet's replica groups
// before the run (experiments calls SetGroups once, after building the
// fleet of groups; a fleet of one kind never calls it).
type GroupAwareRouter interface {
	Router
	SetGroups(groups []GroupView)
}

// GroupViews describes the fleet's replica groups for a group-aware
// router, pricing each group's GPUs with usdPerGPUHour; nil in a fleet of
// one kind.
func (f *Fleet) GroupViews(usdPerGPUHour func(GroupConfig) float64) []GroupView {
	p := f.Pool
	if len(p.Groups) == 0 {
		return nil
	}
	views := make([]GroupView, len(p.Groups))
	for k, g := range p.Groups {
		v := GroupView{Name: g.Name, First: g.First, Replicas: g.Replicas,
			USDPerReplicaHour: float64(g.TP) * usdPerGPUHour(g.GroupConfig)}
		if g.Replicas > 0 {
			r := p.Replicas[g.First]
			v.Perf = r.StepModel()
			v.KVTokens = float64(g.Memory.KVBlocks) * float64(r.Config().BlockTokens)
			v.MaxSeqs = r.Config().MaxSeqs
		}
		views[k] = v
	}
	return views
}
