package fleet

import (
	"github.com/fleetsim/fleetsim/sim"

	"github.com/fleetsim/fleetsim/models/engine"
)

// Pool is a set of replicas of one role (the primary pool, a disaggregated
// fleet's decode pool) and the routing snapshot they keep up to date: one
// ReplicaState per replica, whose Available flag the pool derives from
// three sources: the replica is up, no mechanism holds it out of service
// (Hold, lifecycle.go: probes, maintenance, drains, rollouts, spot, the
// autoscaler, warm spares, each its own), and its breaker is not open. The
// pool owns the holds, its circuit breaker's state and its health checker;
// the mechanisms change them through its methods and never write the
// snapshot's Available directly (the gateway masks it for the length of
// one routing decision only).
// Whoever writes a snapshot entry's Available, Outstanding or
// KVUtilization calls fixIndex (or the replica's outstandingChanged) right
// after, so that the routing index stays exact (Capacity is set before the
// index is built and never changes); TestGolden and the chaos tests check
// every decision the index takes against the router's scan.
type Pool struct {
	eng      *sim.Engine
	Replicas []*engine.Replica
	// Base is the fleet index of replica 0: a fleet's pools number their
	// replicas one after the other (Gateway.pools).
	Base   int
	states []engine.ReplicaState
	// holds are the mechanisms holding each replica out of service; Life
	// each replica's phase over time (lifecycle.go).
	holds []Hold
	Life  Lifecycle
	// model is each replica's model (its index in [[serve]]) in a fleet
	// of several models; nil when the fleet serves one.
	model []int16
	brk   []BreakerState // last breaker state applied
	// breaker is the pool's circuit breaker (nil: none); brkEv each
	// replica's pending re-check of its state; BreakerOpens counts the
	// times one opened.
	breaker      Breaker
	brkEv        []sim.EventID
	BreakerOpens int64
	// health probes the pool's replicas and times their isolation.
	health *Health
	// onAvailable, when set, is called after a refresh that leaves a
	// replica available (the decode pool: landed requests may go there).
	onAvailable func()
	// onStandIn, when set, hears every StandIn (the pool's autoscaler).
	onStandIn func(i, j int)
	tp        int
	// ri is the routing index over states, nil unless the gateway's
	// router is an IndexedRouter (indexRoutes).
	ri *routeIndex

	Memory engine.MemoryPlan
	Place  Placement
	// PeakFLOPS is one GPU's dense peak at the weights' precision.
	PeakFLOPS float64
	// ParamsPerGPU is the model's parameters over the TP degree.
	ParamsPerGPU float64
	// Groups are a heterogeneous fleet's replica groups ([[cluster.groups]]),
	// in replica order; nil for a fleet of one kind, which Memory, Place,
	// PeakFLOPS and ParamsPerGPU describe (for groups they describe the
	// first group, but Place.GPUs and Place.Domains are the totals).
	Groups []Group
}

// newPool sizes the holds and the snapshot for n replicas, none held; the
// replicas themselves are added by the caller (NewFleet), which points
// each at its entry of states.
func newPool(eng *sim.Engine, n int) *Pool {
	return &Pool{eng: eng, states: make([]engine.ReplicaState, n), holds: make([]Hold, n), Life: newLifecycle(n),
		brk: make([]BreakerState, n), brkEv: make([]sim.EventID, n)}
}

// watch makes every replica's up/down changes refresh its availability.
func (p *Pool) watch() {
	for i, r := range p.Replicas {
		i := i
		r.SetOnChange(func() { p.refresh(i) })
	}
}

// States is the routing snapshot (read-only; for tests and reports).
func (p *Pool) States() []engine.ReplicaState { return p.states }

// refresh recomputes replica i's availability to the router: up, not
// held out of service, and its breaker not open.
func (p *Pool) refresh(i int) {
	r := p.Replicas[i]
	up := r.Up()
	p.states[i].Available = up && p.holds[i] == 0 && p.brk[i] != BreakerOpen
	p.Life.note(i, phaseOf(p.holds[i], up, r.Recovering()), p.holds[i], p.eng.Now())
	p.fixIndex(i)
	if p.onAvailable != nil && p.states[i].Available {
		p.onAvailable()
	}
}

// fixIndex updates the routing index, if any, after replica i's
// Available, Outstanding or KVUtilization changed in the snapshot.
func (p *Pool) fixIndex(i int) {
	if p.ri != nil {
		p.ri.fix(i)
	}
}

// indexRoutes starts keeping the routing index by k over the snapshot, if
// k is one of the RouteKeys and every replica's snapshot entry is its own
// slot of states (so that the replicas' own changes reach the index); it
// reports whether it does.
func (p *Pool) indexRoutes(k RouteKey) bool {
	if p.ri != nil {
		return p.ri.key == k
	}
	if k < KeyOutstanding || k > KeyWeightedOutstanding {
		return false // a key this index does not know: the router scans
	}
	if len(p.Replicas) != len(p.states) || len(p.states) >= 1<<31 {
		return false
	}
	for i, r := range p.Replicas {
		if r.State() != &p.states[i] || r.Index() != i {
			return false
		}
	}
	p.ri = newRouteIndex(k, p.states)
	for _, r := range p.Replicas {
		r.SetStateIndex(p.ri, k == KeyKVUtilization)
	}
	return true
}

// StandIn records that replica j, a warm spare, takes replica i's place
// in service (failures' spare pool), or, called again with the same two,
// that i takes its place back (the spare failed during its swap). The
// holds say who serves (HoldSpare on the one out); this tells the
// mechanism that owns which replicas serve, the autoscaler, that the two
// swapped roles: it counts the spare as its serving replica and the
// failed one as a spare.
func (p *Pool) StandIn(i, j int) {
	if p.onStandIn != nil {
		p.onStandIn(i, j)
	}
}

// Refresh recomputes replica i's availability after its health changed
// (a failure, a repair).
func (p *Pool) Refresh(i int) { p.refresh(i) }

// MarkFault records that replica i became faulty at now (for the time to
// isolate it).
func (p *Pool) MarkFault(i int, now sim.Time) { p.health.markFault(i, now) }

// recordBreaker feeds replica i's breaker an outcome (ok false for an
// error or a timeout; latencyMs its time to first token, or to the
// failure) and applies its state.
func (p *Pool) recordBreaker(i int, now sim.Time, ok bool, latencyMs float64) {
	if p.breaker == nil || i < 0 || i >= len(p.Replicas) {
		return
	}
	p.breaker.Record(i, now, ok, latencyMs)
	p.applyBreaker(i, now)
}

// applyBreaker applies replica i's breaker state at now: an open breaker
// takes it out of the routing choice (its fault is then isolated) until
// the breaker looks again, when its cooldown ends.
func (p *Pool) applyBreaker(i int, now sim.Time) {
	st, until := p.breaker.State(i, now)
	was := p.brk[i]
	if st == BreakerOpen && was != BreakerOpen {
		p.BreakerOpens++
		p.health.noteIsolated(i, now)
	}
	p.brk[i] = st
	if st != was {
		p.refresh(i)
	}
	if st == BreakerOpen && until > now {
		p.eng.Cancel(p.brkEv[i])
		p.brkEv[i] = p.eng.Schedule(until, sim.PriorityNormal, func(at sim.Time) {
			p.brkEv[i] = sim.EventID{}
			p.applyBreaker(i, at)
		})
	}
}

// breakerRefuses reports whether replica i's breaker is half-open and
// refuses one more request now (Admit counts it when it does not).
func (p *Pool) breakerRefuses(i int, now sim.Time) bool {
	return p.breaker != nil && p.brk[i] == BreakerHalfOpen && !p.breaker.Admit(i, now)
}

// BreakerState is replica i's breaker state as last applied
// (BreakerClosed without a breaker).
func (p *Pool) BreakerState(i int) BreakerState { return p.brk[i] }

// Drain holds replica i out of service for mechanism h and lets what it
// holds finish: it stops as soon as it is empty (checked every second), or
// at the end of grace, failing what is left (reason "drained"; a retry
// policy may send it elsewhere). Then it calls then, if set. The hold
// stays until h releases it.
func (p *Pool) Drain(i int, h Hold, grace sim.Time, then func(now sim.Time)) {
	p.Hold(i, h)
	drainOut(p.eng, func() *engine.Replica { return p.Replicas[i] }, grace, then)
}

// drainOut waits, checking every second, until the replica replica()
// returns holds nothing or grace has passed, then fails what is left
// (FailDrained) and calls then, if set. The replica is already out of
// service (Pool.Drain).
func drainOut(eng *sim.Engine, replica func() *engine.Replica, grace sim.Time, then func(now sim.Time)) {
	deadline := eng.Now() + grace
	var check sim.Action
	check = func(now sim.Time) {
		r := replica()
		if r.Outstanding() > 0 && now < deadline {
			eng.Schedule(min(now+sim.Second, deadline), sim.PriorityNormal, check)
			return
		}
		r.Fail(now, FailDrained)
		if then != nil {
			then(now)
		}
	}
	eng.Schedule(min(eng.Now()+sim.Second, deadline), sim.PriorityNormal, check)
}
