package models

import (
	"math"

	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// Outcome is what a replica reports about a request copy when it finishes.
type Outcome struct {
	Copy         *Copy
	Req          *workloads.Request
	Replica      int
	Enqueued     sim.Time // arrival at the replica
	Scheduled    sim.Time // first admission into the running batch
	FirstToken   sim.Time
	Finished     sim.Time
	CachedTokens int32 // prompt tokens served by the prefix cache at first admission
	Preemptions  int32
}

// Failure reasons a replica reports.
const (
	FailTooLong     = "context exceeds KV capacity"
	FailContext     = "exceeds the model's context window"
	FailReplicaDown = "replica failed"
)

// Observer hears what happens to the request copies a replica serves. The
// replica calls it after it has finished its own bookkeeping for the event,
// so the observer may submit or cancel copies, on this replica too. The
// Outcome is only valid during the call.
type Observer interface {
	// CopyStarted: the copy was admitted into a batch for the first time.
	CopyStarted(c *Copy, at sim.Time)
	FirstToken(c *Copy, at sim.Time)
	CopyDone(c *Copy, o *Outcome)
	CopyFailed(c *Copy, at sim.Time, reason string)
}

// Replica is a vLLM-like serving engine on one TP group: a waiting queue, a
// running batch under a token budget and a sequence cap, chunked prefill, a
// paged KV allocator with watermark and preemption by recompute, and a prefix
// cache.
//
// Its cost per request does not depend on output length: while the batch is
// decode-only and unchanged, a whole run of steps is one event whose length
// comes from StepModel.Decode's closed form; the run ends at the earliest of
// a sequence finishing, the KV running out, or an arrival that can join.
type Replica struct {
	idx   int
	eng   *sim.Engine
	cfg   ReplicaConfig
	perf  *StepModel
	kv    *KVCache    // the blocks
	alloc kvAllocator // places sequences' KV in them
	adm   kvAdmission // how much KV an admission leaves for others
	sched scheduler   // the batching mode
	obs   Observer
	state *ReplicaState

	blockTokens int64
	watermark   int64

	waiting deque
	running []*seq
	spare   []*seq // finished sequences for reuse: no allocation per request

	busy      bool
	ev        sim.EventID
	onStep    sim.Action
	onKick    sim.Action
	runStart  sim.Time
	run       DecodeRun
	runSteps  int64 // > 0: a decode-only run of this many steps is under way
	runBlocks int64 // KV blocks the run under way takes by its end
	stepEnd   sim.Time
	stepFLOPs float64   // FLOPs of the single step under way
	shape     StepShape // the step under way (first step of a run)

	// stepRec, when set, hears of every step or run as it completes.
	stepRec func(StepRecord)
	firsts  int64 // first tokens emitted so far

	// oom is set when a contiguous allocation failed for fragmentation: the
	// worker dies with a CUDA out-of-memory error at the end of the event.
	oom bool

	// faults (replica_faults.go)
	down       bool     // failed: holds nothing, takes nothing until Recover
	recovering bool     // a Recover is under way
	onReady    []func() // more callbacks for when it is up
	onChange   func()   // the fleet's hook: up/down changed
	hung       bool     // a zombie: accepts requests, never finishes a step
	slow       float64  // step-time factor (1 = healthy; fail-slow > 1)
	runSlow    float64  // the factor the step under way was planned with

	// notes are observer calls held until the replica's state is settled;
	// later are sequences to recycle once they are delivered.
	notes []note
	later []*seq

	// statistics
	Stats ReplicaStats
	lastT sim.Time
	out   Outcome
}

// NewReplica builds replica idx. state is the replica's entry in the fleet's
// snapshot slice; the replica keeps it up to date.
func NewReplica(idx int, eng *sim.Engine, cfg ReplicaConfig, perf *StepModel, kvBlocks int64, obs Observer, state *ReplicaState) *Replica {
	r := &Replica{
		idx: idx, eng: eng, cfg: cfg, perf: perf, obs: obs, state: state,
		blockTokens: int64(cfg.BlockTokens),
		watermark:   int64(math.Ceil(cfg.WatermarkFraction * float64(kvBlocks))),
	}
	r.alloc = newKVAllocator(r)
	r.adm = newKVAdmission(cfg)
	r.sched = newScheduler(r)
	r.kv = r.alloc.newCache(kvBlocks)
	r.slow, r.runSlow = 1, 1
	r.onStep = r.stepDone
	r.onKick = func(now sim.Time) { r.account(now); r.plan(now); r.flush(); r.checkOOM(now) }
	state.Index = idx
	state.Available = true
	return r
}

// StepRecord is one executed step (Steps = 1) or decode-only run of Steps
// steps, whose first step had Shape (each later one adds DecodeSeqs tokens to
// DecodeCtx), and how many sequences emitted their first token at its end.
type StepRecord struct {
	Shape       StepShape
	Steps       int64
	FirstTokens int64
}

// RecordSteps makes the replica report every step or run it completes to
// f (calibration replays them under other profiles; nil stops it).
func (r *Replica) RecordSteps(f func(StepRecord)) { r.stepRec = f }

// KV exposes the allocator (read-only use: tests and metrics).
func (r *Replica) KV() *KVCache { return r.kv }

// Outstanding is the number of request copies waiting or running.
func (r *Replica) Outstanding() int { return r.state.Outstanding }

// Submit hands a request copy to the replica at the current time. A copy
// the replica can never serve (too long for its KV, or the replica is down)
// fails at once through the observer.
func (r *Replica) Submit(c *Copy) {
	now := r.eng.Now()
	req := c.Req
	c.Replica = r.idx
	total := int64(req.InputTokens) + int64(req.OutputTokens)
	need := r.blocksFor(total)
	overContext := r.perf.ContextTokens > 0 && total > int64(r.perf.ContextTokens)
	if r.down || overContext || need > r.kv.Total()-r.watermark {
		reason := FailTooLong
		switch {
		case r.down:
			reason = FailReplicaDown
		case overContext:
			reason = FailContext
		}
		// Answer in an event of its own: the gateway is still sending this
		// copy (arming its timers) and must not hear of its end before.
		gen := c.gen
		r.eng.Schedule(now, sim.PriorityNormal, func(at sim.Time) {
			if c.gen != gen {
				return // the gateway has let the copy go meanwhile
			}
			r.Stats.Failed++
			r.obs.CopyFailed(c, at, reason)
		})
		return
	}
	s := r.newSeq()
	s.cp, s.req, s.enqueued, s.prompt = c, *req, now, req.InputTokens
	c.seq = s
	wasEmpty := r.state.Waiting == 0
	r.waiting.pushBack(s)
	r.state.Outstanding++
	r.state.Waiting++
	r.state.OutstandingTokens += int64(req.InputTokens) + int64(req.OutputTokens)
	switch {
	case r.hung:
		// A zombie queues work and never finishes a step.
	case !r.busy:
		// Plan at the end of this instant, after every arrival at the same
		// time has queued.
		r.busy = true
		r.runSteps = 0
		r.runStart, r.stepEnd = now, now
		r.ev = r.eng.Schedule(now, sim.PriorityStep, r.onKick)
	case r.runSteps > 1 && wasEmpty && r.sched.canJoin():
		// A decode run is under way and the newcomer could join: end the run
		// at the first step boundary at or after now.
		k := r.firstBoundary(now)
		if k < r.runSteps {
			r.account(now)
			r.eng.Cancel(r.ev)
			// The blocks the shorter run takes, at the linear rate
			// runGrowth assumes (an exact count would scan the batch on
			// every arrival).
			r.runBlocks = r.runBlocks * k / r.runSteps
			r.runSteps = k
			r.stepEnd = r.runStart + r.runNs(k)
			r.ev = r.eng.Schedule(r.stepEnd, sim.PriorityStep, r.onStep)
		}
	}
}

func (r *Replica) runNs(k int64) sim.Time {
	return sim.Time(math.Round(r.run.Seconds(k) * r.runSlow * 1e9))
}

// stepNs is a single step of d seconds at the current slow-down, which it
// records for the step.
func (r *Replica) stepNs(d float64) sim.Time {
	r.runSlow = r.slow
	return sim.Time(math.Round(d * r.slow * 1e9))
}

// firstBoundary is the smallest k >= 1 with runStart + runNs(k) >= now.
func (r *Replica) firstBoundary(now sim.Time) int64 {
	lo, hi := int64(1), r.runSteps
	for lo < hi {
		mid := lo + (hi-lo)/2
		if r.runStart+r.runNs(mid) >= now {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func (r *Replica) blocksFor(tokens int64) int64 {
	return (tokens + r.blockTokens - 1) / r.blockTokens
}

// stepDone fires at the end of a step or decode run: apply its effects, then
// plan the next.
func (r *Replica) stepDone(now sim.Time) {
	r.Stats.Events++
	r.account(now)
	r.Stats.BusyNs += int64(now - r.runStart)
	firsts := r.firsts
	steps := int64(1)
	if r.runSteps > 0 {
		steps = r.runSteps
		r.Stats.FLOPs += r.run.FLOPs(r.runSteps)
		r.sched.finishRun(now)
	} else {
		r.Stats.FLOPs += r.stepFLOPs
		r.finishStep(now)
	}
	if r.stepRec != nil {
		r.stepRec(StepRecord{Shape: r.shape, Steps: steps, FirstTokens: r.firsts - firsts})
	}
	r.plan(now)
	r.flush()
	r.checkOOM(now)
}

// finishStep applies a single step: prefill chunks, and one decode token for
// every sequence that was decoding (their blocks were taken when planned).
func (r *Replica) finishStep(now sim.Time) {
	r.Stats.Steps++
	for _, s := range r.running {
		switch {
		case s.finished:
		case s.chunk < 0:
			s.chunk = 0
		case s.chunk > 0:
			s.done += s.chunk
			s.kvTokens += int64(s.chunk)
			r.Stats.PrefillTokens += int64(s.chunk)
			if !s.cancelled { // a withdrawn copy was already taken off
				r.state.OutstandingTokens -= int64(s.chunk)
			}
			s.chunk = 0
			if s.done == s.prompt {
				r.alloc.prefilled(s)
				r.emit(s, now)
			}
		case s.decoding():
			s.kvTokens++
			s.tailTokens++
			r.emit(s, now)
		}
	}
	r.sched.reap(now)
}

// emit records one output token of s produced at now.
func (r *Replica) emit(s *seq, now sim.Time) {
	if s.gen == 0 {
		r.firsts++
		s.first = now
		r.notes = append(r.notes, note{kind: noteFirst, s: s, at: now})
	}
	s.gen++
	r.Stats.DecodeTokens++
	if !s.cancelled {
		r.state.OutstandingTokens--
	}
}

// plan chooses the next step, or goes idle.
func (r *Replica) plan(now sim.Time) {
	r.runStart = now
	r.runSteps = 0
	r.stepFLOPs = 0
	r.sched.plan(now)
}

func (r *Replica) idle(sim.Time) {
	r.busy = false
	r.ev = sim.EventID{}
}

// startStep schedules the end of a single step of shape sh.
func (r *Replica) startStep(now sim.Time, sh StepShape) {
	d := r.perf.Step(sh)
	r.stepFLOPs = r.perf.FLOPs(sh)
	r.shape = sh
	r.stepEnd = now + r.stepNs(d)
	r.ev = r.eng.Schedule(r.stepEnd, sim.PriorityStep, r.onStep)
}

// startRun schedules the end of a run of k decode-only steps of n
// sequences that read ctx tokens of KV at its first step and take blocks
// more KV blocks by its end.
func (r *Replica) startRun(now sim.Time, n int, ctx float64, k, blocks int64) {
	r.run = r.perf.Decode(n, ctx)
	r.shape = StepShape{DecodeSeqs: float64(n), DecodeCtx: ctx}
	r.runSlow = r.slow
	r.runSteps = k
	r.runBlocks = blocks
	r.stepEnd = now + r.runNs(k)
	r.ev = r.eng.Schedule(r.stepEnd, sim.PriorityStep, r.onStep)
}
