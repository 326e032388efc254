package models

import (
	"github.com/fleetsim/fleetsim/sim"
)

// Policies are the gateway's decision makers; any may be nil.
type Policies struct {
	Admit   Admitter
	Hedge   Hedger
	Breaker Breaker
	Retry   Retrier
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
}

// ProbeConfig configures the gateway's health probes of every replica.
type ProbeConfig struct {
	Kind            ProbeKind
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

// SetPolicies installs the gateway's policies; call before Start.
func (f *Fleet) SetPolicies(p Policies) {
	f.pol = p
	if p.Probe.IntervalNs > 0 {
		f.probeFails = make([]int, len(f.Replicas))
		for i := range f.Replicas {
			i := i
			// Stagger the probes across the interval (deterministically).
			first := p.Probe.IntervalNs * sim.Time(i+1) / sim.Time(len(f.Replicas)+1)
			var tick sim.Action
			tick = func(now sim.Time) {
				f.probe(i, now)
				if !f.srcDone || f.Rec.InFlight() > 0 {
					f.eng.Schedule(now+p.Probe.IntervalNs, sim.PriorityMetrics-1, tick)
				}
			}
			f.eng.Schedule(first, sim.PriorityMetrics-1, tick)
		}
	}
}

// refresh recomputes replica i's availability to the router: up, in
// rotation, and its breaker not open.
func (f *Fleet) refresh(i int) {
	f.states[i].Available = f.Replicas[i].Up() && f.rot[i] && f.brk[i] != BreakerOpen && !f.reserved[i]
}

// SetReserved holds replica i out of service as a warm spare (or returns
// it): unlike rotation, which drains, ejections and rollouts toggle,
// only the spare pool's owner changes it.
func (f *Fleet) SetReserved(i int, reserved bool) {
	f.reserved[i] = reserved
	if reserved {
		f.noteIsolated(i, f.eng.Now()) // out of service now: a fault is isolated
	}
	f.refresh(i)
}

// Refresh recomputes replica i's availability after its health changed
// (a failure, a repair).
func (f *Fleet) Refresh(i int) { f.refresh(i) }

// SetInRotation puts replica i in or out of rotation (drain, ejection,
// rollout).
func (f *Fleet) SetInRotation(i int, in bool) {
	f.rot[i] = in
	f.refresh(i)
}

// recordBreaker feeds an outcome to the breaker and applies its state.
func (f *Fleet) recordBreaker(i int, now sim.Time, ok bool, latencyMs float64) {
	if f.pol.Breaker == nil || i < 0 || i >= len(f.Replicas) {
		return
	}
	f.pol.Breaker.Record(i, now, ok, latencyMs)
	f.applyBreaker(i, now)
}

func (f *Fleet) applyBreaker(i int, now sim.Time) {
	st, until := f.pol.Breaker.State(i, now)
	if st == BreakerOpen && f.brk[i] != BreakerOpen {
		f.noteIsolated(i, now)
	}
	f.brk[i] = st
	f.refresh(i)
	if st == BreakerOpen && until > now {
		f.eng.Cancel(f.brkEv[i])
		f.brkEv[i] = f.eng.Schedule(until, sim.PriorityNormal, func(at sim.Time) {
			f.brkEv[i] = sim.EventID{}
			f.applyBreaker(i, at)
		})
	}
}

// noteIsolated records how long replica i served traffic after its fault.
func (f *Fleet) noteIsolated(i int, now sim.Time) {
	if t := f.faultAt[i]; t >= 0 {
		f.GW.IsolationNs = append(f.GW.IsolationNs, int64(now-t))
		f.faultAt[i] = -1
	}
}

// MarkFault records that replica i became faulty at now (for the time to
// isolate it).
func (f *Fleet) MarkFault(i int, now sim.Time) {
	if f.faultAt[i] < 0 {
		f.faultAt[i] = now
	}
}

// probe runs one health probe of replica i.
func (f *Fleet) probe(i int, now sim.Time) {
	r := f.Replicas[i]
	if !f.rot[i] || r.recovering {
		return // out of rotation or being repaired
	}
	res := r.Probe(f.pol.Probe.Kind, f.pol.Probe.TimeoutNs, f.pol.Probe.KVPressure)
	f.GW.Probes++
	if f.pol.Probe.Kind == ProbeDeep {
		// The probe's own load: its canned inference's time on the replica's
		// GPUs (an upper bound: it rides in the running batch).
		f.GW.ProbeGPUSeconds += res.LatencyMs / 1000 * float64(f.tp)
	}
	if res.OK {
		f.probeFails[i] = 0
		return
	}
	f.probeFails[i]++
	if f.probeFails[i] < f.pol.Probe.FailuresToEject {
		return
	}
	// Eject, restart, rejoin after the cold start.
	f.probeFails[i] = 0
	f.GW.Ejections++
	f.noteIsolated(i, now)
	f.SetInRotation(i, false)
	restart := f.pol.Probe.RestartNs
	f.eng.Schedule(now+restart, sim.PriorityFailure, func(at sim.Time) {
		if r.recovering {
			// Already restarting (a supervisor got there first): rejoin
			// when it is ready.
			r.onReady = append(r.onReady, func() { f.SetInRotation(i, true) })
			return
		}
		r.Recover(at, f.pol.Probe.ColdStartNs, func() { f.SetInRotation(i, true) })
		f.refresh(i)
	})
}

// Drain takes replica i out of rotation and lets what it holds finish: it
// stops as soon as it is empty (checked every second), or at the end of
// grace, failing what is left (reason "drained"; a retry policy may send
// it elsewhere). Then it calls then, if set.
func (f *Fleet) Drain(i int, grace sim.Time, then func(now sim.Time)) {
	f.SetInRotation(i, false)
	deadline := f.eng.Now() + grace
	var check sim.Action
	check = func(now sim.Time) {
		r := f.Replicas[i]
		if r.Outstanding() > 0 && now < deadline {
			f.eng.Schedule(min(now+sim.Second, deadline), sim.PriorityNormal, check)
			return
		}
		r.Fail(now, FailDrained)
		if then != nil {
			then(now)
		}
	}
	f.eng.Schedule(min(f.eng.Now()+sim.Second, deadline), sim.PriorityNormal, check)
}

// onTimeout fails a client request that ran out of time.
func (f *Fleet) onTimeout(cr *clientReq, now sim.Time) {
	f.GW.Timeouts++
	for _, c := range cr.copies {
		f.recordBreaker(c.Replica, now, false, (now - c.SentAt).Milliseconds())
		f.replicaAt(c.Replica).Cancel(c)
		f.GW.Cancelled++
	}
	f.Rec.RequestFailed(&cr.req, cr.last, now, FailTimeout)
	f.releaseClientReq(cr)
}

// startPolicies arms a new request's timers: the client timeout and the
// hedge (or, for tied requests, the second copy at once).
func (f *Fleet) startPolicies(cr *clientReq, now sim.Time) {
	if f.pol.TimeoutNs > 0 {
		cr.timeout = f.eng.Schedule(now+f.pol.TimeoutNs, sim.PriorityNormal, func(at sim.Time) {
			cr.timeout = sim.EventID{}
			f.onTimeout(cr, at)
		})
	}
	if f.pol.TotalTimeoutNs > 0 {
		cr.deadline = f.eng.Schedule(now+f.pol.TotalTimeoutNs, sim.PriorityNormal, func(at sim.Time) {
			cr.deadline = sim.EventID{}
			f.onTimeout(cr, at)
		})
	}
	h := f.pol.Hedge
	if h == nil {
		return
	}
	h.Observe(now, -1)
	if h.Tied() {
		if h.Allow(now) && f.send(cr, CopyHedge) {
			f.GW.Hedges++
		}
		return
	}
	if d, ok := h.Delay(now); ok {
		cr.hedge = f.eng.Schedule(now+d, sim.PriorityNormal, func(at sim.Time) {
			cr.hedge = sim.EventID{}
			if !cr.firstSeen && len(cr.copies) > 0 && h.Allow(at) && f.send(cr, CopyHedge) {
				f.GW.Hedges++
			}
		})
	}
}
