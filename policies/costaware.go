package policies

import (
	"math"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/workloads"
)

var _ fleet.GroupAwareRouter = (*CostAware)(nil)

// CostAware is a size-aware router for a fleet of GPU groups (the
// direction of Mélange, Griggs et al. 2024, arXiv 2404.14527: each request
// size is served where it is cheapest). For each request it estimates, per
// group, from the group's step model:
//
//   - the prefill time of its prompt alone (one step of p tokens, p(p+1)/2
//     attention pairs);
//   - the batch b the group can run of requests this size: max_seqs, or
//     fewer when the KV capacity holds fewer (KV tokens / (prompt + output));
//   - its dollars: the replica's price × (prefill + output × decode step at
//     b sequences of mean context prompt + output/2 ÷ b), the request's share
//     of a replica running a full batch of its size.
//
// A group is feasible when the request fits its KV at all and, with a TTFT
// budget set, its prefill estimate is within the budget. A replica of a
// feasible group has room while it has fewer than load_bound × b requests
// outstanding; its fill is outstanding / (load_bound × b). The request goes
// to the replica with room whose congestion-priced dollars, estimate ÷
// (1 − fill), are least (ties: fewer (outstanding+1)/capacity, then the
// lowest index): under processor sharing a request's time in a replica, and
// so the share of the replica it holds, grows as 1/(1 − load), so a cheap
// group's replicas fill until the next group's idle ones cost less. This
// keeps the large GPUs free for the requests only they serve well, instead
// of filling them with short requests they serve a little cheaper. When no
// feasible replica has room it goes to the feasible replica least full
// ((outstanding+1)/b); when no available replica is feasible, to the
// weighted-least-outstanding choice among all.
//
// The output length is read from the request (the simulator knows it); a
// real gateway would use a predicted length, as Mélange buckets requests by
// size. In a fleet of one kind (SetGroups never called) it routes as
// WeightedLeastOutstanding. Route costs O(groups) step-model evaluations
// and one O(replicas) scan; it draws nothing, so it is deterministic.
type CostAware struct {
	loadBound   float64
	ttftBudgetS float64 // 0: no TTFT check
	groups      []fleet.GroupView
	groupOf     []int // replica index -> group index
	est         []costEst
}

type costEst struct {
	ok    bool
	usd   float64 // estimated dollars for the request on this group
	slots float64 // requests of this size one replica runs at once
}

// NewCostAware returns a cost-aware router with load bound loadBound
// (>= 1) and TTFT budget ttftBudgetMs (0: none).
func NewCostAware(loadBound, ttftBudgetMs float64) *CostAware {
	return &CostAware{loadBound: loadBound, ttftBudgetS: ttftBudgetMs / 1e3}
}

// SetGroups implements fleet.GroupAwareRouter.
func (c *CostAware) SetGroups(groups []fleet.GroupView) {
	c.groups = groups
	c.est = make([]costEst, len(groups))
	n := 0
	for _, g := range groups {
		n = max(n, g.First+g.Replicas)
	}
	c.groupOf = make([]int, n)
	for k, g := range groups {
		for i := g.First; i < g.First+g.Replicas; i++ {
			c.groupOf[i] = k
		}
	}
}

// Estimate returns the router's estimate for a request of prompt and
// output tokens on group k: its dollars, the batch of such requests a
// replica runs, and whether the group is feasible for it.
func (c *CostAware) Estimate(k int, prompt, output int32) (usd, slots float64, ok bool) {
	e := c.estimate(k, float64(prompt), float64(output))
	return e.usd, e.slots, e.ok
}

func (c *CostAware) estimate(k int, p, o float64) costEst {
	g := &c.groups[k]
	ctx := p + o
	if g.Perf == nil || ctx > g.KVTokens {
		return costEst{}
	}
	prefill := g.Perf.Step(hw.StepShape{PrefillTokens: p, PrefillPairs: p * (p + 1) / 2, PrefillSeqs: 1})
	if c.ttftBudgetS > 0 && prefill > c.ttftBudgetS {
		return costEst{}
	}
	b := max(1, min(float64(g.MaxSeqs), math.Floor(g.KVTokens/ctx)))
	step := g.Perf.Step(hw.StepShape{DecodeSeqs: b, DecodeCtx: b * (p + o/2)})
	return costEst{ok: true, usd: g.USDPerReplicaHour / 3600 * (prefill + o*step/b), slots: b}
}

// Route implements fleet.Router.
func (c *CostAware) Route(req *workloads.Request, replicas []engine.ReplicaState) (int, bool) {
	if len(c.groups) == 0 {
		return WeightedLeastOutstanding{}.Route(req, replicas)
	}
	p, o := float64(req.InputTokens), float64(req.OutputTokens)
	for k := range c.groups {
		c.est[k] = c.estimate(k, p, o)
	}
	// One scan keeps two candidates: the replica with room whose
	// congestion-priced dollars are least, and the least-full feasible one.
	room, roomUSD, roomLoad := -1, 0.0, 0.0
	full, fullFrac := -1, 0.0
	for i := range replicas {
		r := &replicas[i]
		if !r.Available || i >= len(c.groupOf) {
			continue
		}
		e := &c.est[c.groupOf[i]]
		if !e.ok {
			continue
		}
		out := float64(r.Outstanding)
		if frac := (out + 1) / e.slots; full < 0 || frac < fullFrac {
			full, fullFrac = i, frac
		}
		fill := out / (c.loadBound * e.slots)
		if fill >= 1 {
			continue
		}
		capy := r.Capacity
		if capy <= 0 {
			capy = 1
		}
		usd, load := e.usd/(1-fill), (out+1)/capy
		if room < 0 || usd < roomUSD || (usd == roomUSD && load < roomLoad) {
			room, roomUSD, roomLoad = i, usd, load
		}
	}
	switch {
	case room >= 0:
		return room, true
	case full >= 0:
		return full, true
	}
	return WeightedLeastOutstanding{}.Route(req, replicas)
}
