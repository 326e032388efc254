package engine

import (
	"math"

	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// CopyKind says why a copy of a client request was sent.
type CopyKind uint8

// Copy kinds.
const (
	CopyPrimary CopyKind = iota
	CopyHedge
	CopyRetry
)

// Copy is one copy of a client request sent to a replica: the primary, a
// hedge or a retry. A client request completes with its first copy to
// finish, and fails when its last copy fails and no retry follows.
type Copy struct {
	Req     *workloads.Request // the client request (shared by its copies)
	Replica int
	Kind    CopyKind
	SentAt  sim.Time

	// Client is the sender's record of the client request (the gateway's;
	// opaque to the replica), nil once the sender has let the copy go.
	Client any
	// Gen is bumped by the sender when it releases the record for reuse,
	// so that a callback scheduled for an earlier use can tell.
	Gen uint32

	seq *seq // set while a replica holds the copy
}

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
	// ClientDelay and FinishDelay are how long after its engine step the
	// first and the last token reach the client (the engine profile's
	// stream_s, and first_token_lag_steps times the step planned after the
	// one that sampled the token): the client's TTFT ends ClientDelay after
	// FirstToken, its end-to-end latency FinishDelay after Finished.
	ClientDelay, FinishDelay sim.Time
}

// Failure reasons a replica reports.
const (
	FailTooLong     = "context exceeds KV capacity"
	FailContext     = "exceeds the model's context window"
	FailReplicaDown = "replica failed"
)

// Failure reasons of faults (package failures applies them; FailOOM is also
// the reason of the replica's own OOM crashes).
const (
	FailOOM     = "OOM crash"
	FailNVLink  = "NVLink error (Xid 74)"
	FailCrashed = "replica crashed"
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

// Replica is a vLLM-like serving engine on one TP group: a waiting queue
// and a running batch under a token budget and a sequence cap, stepped by
// the scheduler of its batching mode, with the KV allocator of its
// allocator mode (a paged one with watermark, preemption by recompute and a
// prefix cache, or a contiguous one that fragments).
//
// Its cost per request does not depend on output length: while the batch is
// decode-only and unchanged, a whole run of steps is one event whose length
// comes from StepModel.Decode's closed form; the run ends at the earliest of
// a sequence finishing, the KV running out, or an arrival that can join.
//
// Its state is split by concern: the scheduler, allocator and admission
// policy are small interfaces chosen once from the configuration; the step
// under way, the fault state and the held observer calls are the embedded
// parts stepState, faultState and outbox.
type Replica struct {
	idx   int
	eng   *sim.Engine
	cfg   ReplicaConfig
	perf  *hw.StepModel
	obs   Observer
	state *ReplicaState // the routing snapshot, kept up to date
	// ri is the pool's routing index when it keeps one (then state is
	// its slot idx); every change of state.Outstanding calls
	// outstandingChanged, and of state.KVUtilization too when riKV.
	ri   StateIndex
	riKV bool

	sched       scheduler   // the batching mode (sched*.go)
	alloc       kvAllocator // the allocator mode: places sequences' KV in kv (kvalloc*.go)
	adm         kvAdmission // how much KV an admission leaves for others (kvadmission.go)
	kv          *KVCache    // the blocks and the prefix cache
	blockTokens int64       // tokens per KV block
	watermark   int64       // KV blocks admission keeps free

	waiting deque // sequences not admitted, in order
	// running is the batch, oldest admission first (by seq.joinNo), with
	// runHoles nil holes where sequences left (O(1), order kept; never
	// last): read it through batch and nRunning.
	running  []*seq
	runHoles int
	joins    uint64 // sequences that joined the batch so far
	// Under an iteration-level scheduler (iter): the running sequences
	// still prefilling, in batch order; the decoding ones under their
	// decode clock (decoders.go); how many running ones were withdrawn
	// (reaped at the next step boundary); and scratch for the reap.
	iter       bool
	prefill    []*seq
	dec        decoders
	cancelRun  int
	leavingBuf []*seq

	stepState  // the step or decode run under way (replica_step.go)
	faultState // failures, hangs, slow-downs (replica_faults.go)
	outbox     // held observer calls and spare sequences (replica_outbox.go)

	Stats ReplicaStats // counters (replica_stats.go)
	itl   itlGaps      // inter-token gaps of the copies it served (replica_step.go)
	lastT sim.Time     // time-weighted Stats are integrated up to lastT

	// handoff is set on the replicas of a disaggregated fleet
	// (replica_handoff.go); prefillOnly on its prefill pool's, which serve
	// one output token.
	handoff     HandOff
	prefillOnly bool
	tiers       *replicaTiers // KV tiers below HBM (kvtier.go); nil without

	// clientDelay is how long after its step a token reaches the client
	// (the profile's stream_s; Outcome.ClientDelay).
	clientDelay sim.Time
	// lagSteps is the profile's first_token_lag_steps: a sequence's
	// tokens reach the client that many of the next step's durations after
	// their step ends (seq.lag, set at its first token).
	lagSteps float64
}

// NewReplica builds replica idx. state is the replica's entry in the fleet's
// snapshot slice; the replica keeps it up to date.
func NewReplica(idx int, eng *sim.Engine, cfg ReplicaConfig, perf *hw.StepModel, kvBlocks int64, obs Observer, state *ReplicaState) *Replica {
	r := &Replica{
		idx: idx, eng: eng, cfg: cfg, perf: perf, obs: obs, state: state,
		blockTokens: int64(cfg.BlockTokens),
		watermark:   int64(math.Ceil(cfg.WatermarkFraction * float64(kvBlocks))),
	}
	r.dec = newDecoders(r.blockTokens)
	r.iter = cfg.Batching != BatchStatic
	r.alloc = newKVAllocator(r)
	r.adm = newKVAdmission(cfg)
	r.sched = newScheduler(r)
	r.kv = r.alloc.newCache(kvBlocks)
	r.slow, r.runSlow, r.build = 1, 1, 1
	r.clientDelay = sim.FromSeconds(perf.StreamS)
	r.lagSteps = perf.FirstTokenLagSteps
	r.tm = eng.NewTimer()
	r.onStep = r.stepDone
	r.onKick = func(now sim.Time) { r.account(now); r.plan(now); r.flush(); r.checkOOM(now) }
	state.Index = idx
	state.Available = true
	return r
}

// Index is the replica's index in its fleet (stable for the whole run).
func (r *Replica) Index() int { return r.idx }

// State is the replica's routing snapshot entry, which it keeps up to date.
func (r *Replica) State() *ReplicaState { return r.state }

// Config is the replica's engine configuration.
func (r *Replica) Config() *ReplicaConfig { return &r.cfg }

// StepModel is the replica's current step model (a degraded NVLink domain
// swaps in a slower copy, SetNVLinkFraction).
func (r *Replica) StepModel() *hw.StepModel { return r.perf }

// SetObserver makes obs hear what happens to the copies the replica serves.
func (r *Replica) SetObserver(obs Observer) { r.obs = obs }

// RecordSteps makes the replica report every step or run it completes to
// f (calibration replays them under other profiles; nil stops it).
func (r *Replica) RecordSteps(f func(hw.StepRecord)) { r.stepRec = f }

// KV exposes the replica's KV blocks and prefix cache (read-only use:
// tests and metrics).
func (r *Replica) KV() *KVCache { return r.kv }

// SetStateIndex makes the replica keep x up to date (nil: none); watchKV
// when x's key reads KVUtilization. Its state must be x's slot Index().
func (r *Replica) SetStateIndex(x StateIndex, watchKV bool) { r.ri, r.riKV = x, watchKV }

// outstandingChanged updates the pool's routing index, if any, after
// state.Outstanding or state.KVUtilization changed.
func (r *Replica) outstandingChanged() {
	if r.ri != nil {
		r.ri.Fix(r.idx)
	}
}

// Outstanding is the number of request copies waiting or running.
func (r *Replica) Outstanding() int { return r.state.Outstanding }

// Submit hands a request copy to the replica at the current time. A copy
// the replica can never serve (too long for its KV, or the replica is down)
// fails at once through the observer.
func (r *Replica) Submit(c *Copy) {
	now := r.eng.Now()
	req := c.Req
	c.Replica = r.idx
	out := req.OutputTokens
	if r.prefillOnly {
		out = 1 // disaggregated: the decode pool produces the output (disagg.go)
	}
	total := int64(req.InputTokens) + int64(out)
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
		gen := c.Gen
		r.eng.Schedule(now, sim.PriorityNormal, func(at sim.Time) {
			if c.Gen != gen {
				return // the gateway has let the copy go meanwhile
			}
			r.Stats.Failed++
			r.obs.CopyFailed(c, at, reason)
		})
		return
	}
	s := r.newSeq()
	s.cp, s.req, s.enqueued, s.prompt = c, *req, now, req.InputTokens
	s.req.OutputTokens = out
	c.seq = s
	wasEmpty := r.state.Waiting == 0
	r.waiting.pushBack(s)
	r.state.Outstanding++
	r.outstandingChanged()
	r.state.Waiting++
	r.state.OutstandingTokens += total
	switch {
	case r.hung:
		// A zombie queues work and never finishes a step.
	case !r.busy:
		r.kick(now)
	case r.runSteps > 1 && wasEmpty && r.canJoin():
		// A decode run is under way and the newcomer could join: end the run
		// at the first step boundary at or after now.
		k, end := r.firstBoundary(now)
		if k < r.runSteps {
			r.account(now)
			// The blocks the shorter run takes, at the linear rate
			// runGrowth assumes (an exact count would scan the batch on
			// every arrival).
			r.runBlocks = r.runBlocks * k / r.runSteps
			r.cutRun(k, end)
		}
	}
}

func (r *Replica) blocksFor(tokens int64) int64 {
	return (tokens + r.blockTokens - 1) / r.blockTokens
}
