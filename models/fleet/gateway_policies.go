package fleet

import (
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/sim"
)

// Policies are the gateway's decision makers; any may be nil.
type Policies struct {
	Admit   Admitter
	Hedge   Hedger
	Breaker Breaker
	// DecodeBreaker watches a disaggregated fleet's decode pool: the same
	// settings as Breaker with its own state per decode replica (Breaker's
	// replica indices are the prefill pool's). SetPolicies requires it on
	// a disaggregated fleet with a Breaker; nil otherwise.
	DecodeBreaker Breaker
	Retry         Retrier
	// TimeoutNs is the client timeout: a request that has not streamed its
	// first token by then fails ("client timeout") and its copies are
	// withdrawn (streaming clients time out on the first byte; a long
	// generation that is streaming is not cut off). 0: none.
	TimeoutNs sim.Time
	// TotalTimeoutNs fails a request not finished by then, streaming or
	// not. 0: none.
	TotalTimeoutNs sim.Time
	// Probe configures health probes; Kind ProbeNone (the zero value with
	// IntervalNs 0) runs none.
	Probe ProbeConfig
	// DeferNs and DeferMax: a request the admitter refuses waits DeferNs at
	// the gateway and is asked again, up to DeferMax times, before it is
	// shed. DeferMax 0 sheds at once.
	DeferNs  sim.Time
	DeferMax int
	// Queue is early or late binding (QueuePolicy; the zero value: early).
	Queue QueuePolicy
}

// ProbeConfig configures the gateway's health probes of every replica.
type ProbeConfig struct {
	Kind            engine.ProbeKind
	IntervalNs      sim.Time // 0: no probes
	TimeoutNs       sim.Time // a deep probe slower than this fails
	FailuresToEject int      // consecutive failures that take a replica out of rotation
	// KVPressure is the KV utilisation above which a deep probe fails
	// (HBM pressure).
	KVPressure float64
	// RestartNs is how long an ejected replica takes to be restarted
	// (process restart or reboot) before its cold start; then it rejoins.
	RestartNs sim.Time
	// ColdStartNs is the weight-loading time of a restarted replica.
	ColdStartNs sim.Time
}

// Failure reasons the gateway reports.
const (
	FailTimeout    = "client timeout"
	FailDrained    = "drained"
	FailNewVersion = "5xx from the new version"
)

// admit applies admission control to a new request, then sends it. A
// refused request is shed, or, with a defer policy, held at the gateway
// and asked again every DeferNs up to DeferMax times before it is shed.
func (g *Gateway) admit(cr *clientReq, now sim.Time, tries int) {
	if g.pol.Admit != nil && !g.pol.Admit.Admit(&cr.req, g.pool.states, now) {
		if tries < g.pol.DeferMax {
			g.GW.Deferred++
			g.eng.Schedule(now+g.pol.DeferNs, sim.PriorityArrival, func(at sim.Time) { g.admit(cr, at, tries+1) })
			return
		}
		g.rec.shed(&cr.req, now)
		g.releaseClientReq(cr)
		return
	}
	var ok bool
	if g.pol.Queue.Late {
		ok = g.sendOrQueueLate(cr, engine.CopyPrimary, -1, now)
	} else {
		ok = g.send(cr, engine.CopyPrimary)
	}
	if !ok {
		g.rec.shed(&cr.req, now)
		g.releaseClientReq(cr)
		return
	}
	g.startPolicies(cr, now)
}

// recordBreaker feeds an outcome of primary replica i to its pool's
// breaker (Pool.recordBreaker).
func (g *Gateway) recordBreaker(i int, now sim.Time, ok bool, latencyMs float64) {
	g.pool.recordBreaker(i, now, ok, latencyMs)
}

// onTimeout fails a client request that ran out of time.
func (g *Gateway) onTimeout(cr *clientReq, now sim.Time) {
	g.GW.Timeouts++
	for _, c := range cr.copies {
		if g.disagg == nil || !g.disagg.timedOut(c, now) { // a decode replica's copy: its own breaker
			g.recordBreaker(c.Replica, now, false, (now - c.SentAt).Milliseconds())
		}
		g.replicaAt(c.Replica).Cancel(c)
		g.GW.Cancelled++
	}
	g.wake(now)
	g.rec.RequestFailed(&cr.req, cr.last, now, FailTimeout)
	g.releaseClientReq(cr)
}

// startPolicies arms a new request's timers: the client timeout and the
// hedge (or, for tied requests, the second copy at once).
func (g *Gateway) startPolicies(cr *clientReq, now sim.Time) {
	if g.pol.TimeoutNs > 0 {
		cr.armed = true
		cr.timeout = g.eng.Schedule(now+g.pol.TimeoutNs, sim.PriorityNormal, func(at sim.Time) {
			cr.timeout = sim.EventID{}
			g.onTimeout(cr, at)
		})
	}
	if g.pol.TotalTimeoutNs > 0 {
		cr.armed = true
		cr.deadline = g.eng.Schedule(now+g.pol.TotalTimeoutNs, sim.PriorityNormal, func(at sim.Time) {
			cr.deadline = sim.EventID{}
			g.onTimeout(cr, at)
		})
	}
	if !cr.queued {
		g.startHedge(cr, now)
	}
}

// startHedge arms a sent request's hedge (or, for tied requests, sends
// the second copy at once). A request waiting in the late-binding queue
// gets it when it is sent (drain): a hedge is a second copy of one that
// is on a replica.
func (g *Gateway) startHedge(cr *clientReq, now sim.Time) {
	h := g.pol.Hedge
	if h == nil {
		return
	}
	h.Observe(now, -1)
	if h.Tied() {
		if h.Allow(now) && g.send(cr, engine.CopyHedge) {
			g.GW.Hedges++
		}
		return
	}
	d, ok := sim.Time(0), false
	if ph, is := h.(PromptHedger); is {
		d, ok = ph.DelayFor(now, cr.req.InputTokens)
	} else {
		d, ok = h.Delay(now)
	}
	if ok {
		cr.armed = true
		cr.hedge = g.eng.Schedule(now+d, sim.PriorityNormal, func(at sim.Time) {
			cr.hedge = sim.EventID{}
			if !cr.firstSeen && len(cr.copies) > 0 && g.copiesStalled(cr, at) && h.Allow(at) && g.send(cr, engine.CopyHedge) {
				g.GW.Hedges++
			}
		})
	}
}

// copiesStalled reports whether a stall-aware hedger (StallHedger) may
// hedge cr at now: every copy's replica has been silent for its stall
// delay. Other hedgers always may.
func (g *Gateway) copiesStalled(cr *clientReq, now sim.Time) bool {
	sh, ok := g.pol.Hedge.(StallHedger)
	if !ok {
		return true
	}
	d, on := sh.StallDelay()
	if !on {
		return true
	}
	for _, c := range cr.copies {
		if r := g.replicaAt(c.Replica); !r.Hung() || r.StalledFor(now) < d {
			return false
		}
	}
	return true
}
