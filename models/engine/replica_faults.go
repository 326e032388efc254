package engine

import (
	"github.com/fleetsim/fleetsim/sim"

	"github.com/fleetsim/fleetsim/models/hw"
)

// faultState is what failures do to a replica: whether its process is
// dead, hung or slow, the callbacks of a recovery, and a pending out-of-memory
// crash.
type faultState struct {
	onReady  []func() // more callbacks for when it is up
	onChange func()   // the fleet's hook: up/down changed
	slow     float64  // step-time factor: fail-slow's (1 = healthy) times build's
	// build is the running build's own step-time factor (a rollout's new
	// version: SetBuild; 1 = the baseline build): a restart or a spot
	// replacement runs the same build, and fail-slow's end restores it.
	build      float64
	down       bool // failed: holds nothing, takes nothing until Recover
	recovering bool // a Recover is under way
	retired    bool // in repair for the whole run (Retire): nothing recovers it
	hung       bool // a zombie: accepts requests, never finishes a step
	// oom is set when a contiguous allocation failed for fragmentation: the
	// worker dies with a CUDA out-of-memory error at the end of the event
	// (checkOOM).
	oom bool
	// heldOut counts copies withdrawn while the replica was stalled (hung):
	// they stay in the routing snapshot's Outstanding until it resumes, so
	// that a stalled replica whose copies lost their hedges does not look
	// idle to least-outstanding or P2C routing and draw more traffic.
	heldOut int
	hungAt  sim.Time // when the current hang began
	// basePerf is the healthy step model while a degraded NVLink domain
	// has replaced perf (SetNVLinkFraction); nil before the first.
	basePerf *hw.StepModel
}

// Up reports whether the replica's process is alive (it may still be hung).
func (r *Replica) Up() bool { return !r.down }

// Hung reports whether the replica is a zombie.
func (r *Replica) Hung() bool { return r.hung }

// SlowFactor is the replica's current step-time factor (1 when healthy,
// on the baseline build).
func (r *Replica) SlowFactor() float64 { return r.slow }

// Fail kills the replica's process (fail-stop, OOM crash): every copy it
// holds fails with reason, its KV cache and prefix cache are lost, and it
// takes nothing until Recover.
func (r *Replica) Fail(now sim.Time, reason string) {
	if r.down {
		return
	}
	r.dropAll(now, reason, false)
	r.kv = r.alloc.newCache(r.kv.Total())
	r.oom = false
	r.down, r.hung = true, false
	idx, avail := r.state.Index, r.state.Available
	*r.state = ReplicaState{Index: idx, Available: avail, Capacity: r.state.Capacity}
	r.outstandingChanged()
	r.heldOut = 0
	r.changed()
	r.flush()
}

// Retire takes the replica out of service for the rest of the run, as
// Fail does, and for good: no restart (a health probe's, a failure's
// repair, a scripted fault's) recovers it. run.down_replicas' replicas
// in repair (N+k) are retired.
func (r *Replica) Retire(now sim.Time) {
	r.Fail(now, FailReplicaDown)
	r.retired = true
}

// Retired reports whether Retire took the replica out for the run.
func (r *Replica) Retired() bool { return r.retired }

// changed tells the fleet that the replica went down or came up.
func (r *Replica) changed() {
	if r.onChange != nil {
		r.onChange()
	}
}

func (r *Replica) failSeq(s *seq, now sim.Time, reason string) {
	r.Stats.Failed++
	r.Stats.WastedPrefillTokens += int64(s.done)
	r.Stats.WastedDecodeTokens += int64(s.gen)
	if s.finished { // static padding already reported
		r.recycle(s)
		return
	}
	r.failNote(s, now, reason)
}

// Hang turns the replica into a zombie: the TP group's all-reduce never
// completes, so no step finishes and its requests stall, while the process
// still answers a liveness ping and keeps accepting requests.
func (r *Replica) Hang(now sim.Time) {
	if r.down || r.hung {
		return
	}
	r.account(now)
	r.hung, r.hungAt = true, now
	if r.busy {
		r.eng.StopTimer(r.tm)
	}
	// Steps of a decode run that completed before the hang stand; the step
	// under way never ends and its work is lost.
	if r.runSteps > 1 {
		lo, hi := int64(0), r.runSteps-1
		for lo < hi {
			mid := lo + (hi-lo+1)/2
			if r.runStart+r.runNs(mid) <= now {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		if lo > 0 {
			r.runSteps = lo
			r.Stats.FLOPs += r.run.FLOPs(lo)
			r.sched.finishRun(now)
			r.flush()
		}
	}
	r.runSteps = 0
	r.dec.paused = false
	for _, s := range r.batch() {
		if s.chunk != 0 {
			s.chunk = 0
		}
	}
}

// StalledFor is how long the replica has produced nothing because it is
// hung (0 when it is not): what a gateway sees as every stream on it going
// silent.
func (r *Replica) StalledFor(now sim.Time) sim.Time {
	if !r.hung || r.down {
		return 0
	}
	return now - r.hungAt
}

// SetSlow makes every step from now on take factor times as long
// (fail-slow: a straggler GPU, thermal throttling, a degraded link);
// factor 1 restores health.
func (r *Replica) SetSlow(factor float64) {
	if factor < 1 {
		factor = 1
	}
	r.slow = factor * r.build
}

// SetBuild makes the replica run a build whose steps take factor times as
// long as the baseline's (a rollout's new version; 1: the baseline), from
// its next step on, through restarts and fail-slow.
func (r *Replica) SetBuild(factor float64) {
	factor = max(factor, 1)
	r.slow = r.slow / r.build * factor
	r.build = factor
}

// SetNVLinkFraction makes every step from now on run with its NVLink at
// fraction f of its bandwidth (0 < f <= 1; 1 restores it): the step model's
// all-reduce bandwidth term grows by 1/f (StepModel.WithNVLinkFraction), so
// a TP group slows by its communication share, not by a flat factor. A
// decode run under way keeps the durations it started with.
func (r *Replica) SetNVLinkFraction(f float64) {
	if r.basePerf == nil {
		r.basePerf = r.perf
	}
	r.perf = r.basePerf.WithNVLinkFraction(f)
}

// NVLinkSlowdown is how much longer a step of shape s takes on this
// replica now than on a healthy NVLink (1 when healthy).
func (r *Replica) NVLinkSlowdown(s hw.StepShape) float64 {
	if r.basePerf == nil {
		return 1
	}
	return r.perf.Step(s) / r.basePerf.Step(s)
}

// SetOnChange sets the fleet's hook, called whenever the replica goes down
// or comes up; OnChange is the hook set (to chain another after it).
func (r *Replica) SetOnChange(f func()) { r.onChange = f }

// OnChange is the hook SetOnChange set, nil if none.
func (r *Replica) OnChange() func() { return r.onChange }

// WhenRecovered calls f when the recovery under way (Recovering) ends,
// after Recover's own callback.
func (r *Replica) WhenRecovered(f func()) { r.onReady = append(r.onReady, f) }

// Recover brings a failed or hung replica back: after coldStart (weights
// loading, CALIBRATION.md §4: 2–4 min) it is up with an empty KV and prefix
// cache and healthy speed. Copies held by a hung replica fail at once.
func (r *Replica) Recover(now, coldStart sim.Time, ready func()) {
	if r.retired {
		return // in repair for the whole run: no restart brings it back
	}
	if r.recovering {
		if ready != nil {
			r.onReady = append(r.onReady, ready)
		}
		return
	}
	if r.hung {
		r.hung = false
		r.down = false
		r.Fail(now, FailReplicaDown)
	}
	r.down = true
	r.recovering = true
	r.slow = r.build
	r.changed()
	r.eng.Schedule(now+coldStart, sim.PriorityNormal, func(at sim.Time) {
		r.account(at)
		r.down, r.recovering = false, false
		r.busy = false
		r.lastT = at
		r.changed()
		if ready != nil {
			ready()
		}
		for _, f := range r.onReady {
			f()
		}
		r.onReady = nil
	})
}

// Probe answers a health probe. A liveness probe fails only when the
// process is dead. A deep probe runs a canned inference (a 32-token prompt,
// 8 output tokens) through the current batch: it fails when the replica is
// dead or hung (no answer before the timeout), when the answer would take
// longer than the timeout (fail-slow, overload), or under HBM pressure (KV
// use above kvPressure). The probe's own work is small and not added to
// the batch (assumption).
func (r *Replica) Probe(kind ProbeKind, timeout sim.Time, kvPressure float64) ProbeResult {
	if r.down {
		return ProbeResult{Reason: "process dead"}
	}
	if kind == ProbeLiveness {
		return ProbeResult{OK: true, LatencyMs: 1}
	}
	if r.hung {
		return ProbeResult{LatencyMs: timeout.Milliseconds(), Reason: "no answer (hung)"}
	}
	var ctx float64
	n := 1
	for _, s := range r.batch() {
		if s.decoding() {
			r.sync(s)
			ctx += float64(s.kvTokens)
			n++
		}
	}
	prefill := r.perf.Step(hw.StepShape{PrefillTokens: 32, PrefillPairs: 32 * 33 / 2, PrefillSeqs: 1,
		DecodeSeqs: float64(n - 1), DecodeCtx: ctx})
	decode := r.perf.Decode(n, ctx+32).Seconds(8)
	lat := (prefill + decode) * r.slow * 1000
	if timeout > 0 && lat > timeout.Milliseconds() {
		return ProbeResult{LatencyMs: lat, Reason: "slow answer"}
	}
	if kvPressure > 0 && r.kv.Total() > 0 && float64(r.kv.Used())/float64(r.kv.Total()) > kvPressure {
		return ProbeResult{LatencyMs: lat, Reason: "HBM pressure"}
	}
	return ProbeResult{OK: true, LatencyMs: lat}
}

// Unhang ends a hang: the group's collectives complete again and the
// replica resumes stepping what it holds.
func (r *Replica) Unhang(now sim.Time) {
	if !r.hung || r.down {
		return
	}
	r.hung = false
	r.state.Outstanding -= r.heldOut // the withdrawn copies are gone now
	r.outstandingChanged()
	r.heldOut = 0
	r.account(now)
	r.kick(now)
}

// FailInFlight errors every copy the replica holds (a link error kills the
// step's collectives) but keeps the process, its weights and its prefix
// cache.
func (r *Replica) FailInFlight(now sim.Time, reason string) {
	if r.down {
		return
	}
	r.dropAll(now, reason, true)
	idx, avail := r.state.Index, r.state.Available
	*r.state = ReplicaState{Index: idx, Available: avail, Capacity: r.state.Capacity}
	r.outstandingChanged()
	r.heldOut = 0
	r.flush()
}

// dropAll stops the step under way and fails every copy the replica holds
// with reason; with keepKV their blocks go back to the allocator (the
// cache survives), else the caller discards the allocator whole.
func (r *Replica) dropAll(now sim.Time, reason string, keepKV bool) {
	r.account(now)
	if r.busy {
		r.eng.StopTimer(r.tm)
	}
	r.busy, r.runSteps = false, 0
	fail := func(s *seq) {
		if !s.cancelled {
			r.failSeq(s, now, reason)
		} else {
			r.recycle(s)
		}
	}
	for _, s := range r.batch() {
		r.sync(s)
		s.inDec = false
		if keepKV {
			r.alloc.release(s)
		}
		fail(s)
	}
	clear(r.running)
	r.running, r.runHoles = r.running[:0], 0
	clear(r.prefill)
	r.prefill = r.prefill[:0]
	r.dec.reset()
	r.cancelRun = 0
	for r.waiting.len() > 0 {
		fail(r.waiting.popFront())
	}
}

// checkOOM crashes the worker after a failed contiguous allocation and
// has its supervisor restart it (RestartS, then ColdStartS of weights).
func (r *Replica) checkOOM(now sim.Time) {
	if !r.oom {
		return
	}
	r.oom = false
	r.Stats.OOMCrashes++
	r.Fail(now, FailOOM)
	cold := sim.FromSeconds(r.cfg.ColdStartS)
	r.eng.Schedule(now+sim.FromSeconds(r.cfg.RestartS), sim.PriorityFailure, func(t sim.Time) {
		if !r.Up() {
			r.Recover(t, cold, nil)
		}
	})
}

// Recovering reports whether replica r is restarting: a Recover is under way
// (its cold start), so it is down but will come back by itself.
func (r *Replica) Recovering() bool { return r.recovering }

// ProbeKind is what a health probe checks.
type ProbeKind uint8

// Probe kinds.
const (
	// ProbeLiveness answers unless the process is dead: a zombie passes.
	ProbeLiveness ProbeKind = iota
	// ProbeDeep runs a canned inference: it fails on a hang, on a step
	// slower than the probe timeout allows, and on HBM pressure.
	ProbeDeep
)

// ProbeResult is one probe's answer.
type ProbeResult struct {
	OK        bool
	LatencyMs float64
	Reason    string
}
