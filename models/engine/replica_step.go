package engine

import (
	"math"

	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/quantile"
)

// stepState is the step or decode-only run a replica has under way, and
// how its end is scheduled. A replica is busy from the moment it has
// something to plan until it goes idle; while busy, exactly one of its
// events (onKick or onStep) is pending, unless it is hung.
type stepState struct {
	busy      bool         // a step or run is under way, or planning is due
	tm        sim.Timer    // holds the pending onKick or onStep event
	onStep    sim.Action   // Replica.stepDone, bound once
	onKick    sim.Action   // plan at the end of an instant, bound once
	runStart  sim.Time     // start of the step or run under way
	stepEnd   sim.Time     // its end
	runSteps  int64        // > 0: a decode-only run of this many steps is under way
	endSteps  int64        // the run length stepEnd was computed for (runStart + runNs(endSteps))
	run       hw.DecodeRun // its closed form
	runBlocks int64        // KV blocks the run under way takes by its end
	planSteps int64        // the run's length when planned: while runSteps equals it, runBlocks is exact
	runSlow   float64      // the step-time factor it was planned with
	stepFLOPs float64      // FLOPs of the single step under way
	shape     hw.StepShape // the step under way (first step of a run)

	// stepRec, when set, hears of every step or run as it completes.
	stepRec func(hw.StepRecord)
	firsts  int64 // first tokens emitted so far
}

// maxRunSteps caps the length of a decode run. It is the largest run
// length a run's int32 token counts allow; tests lower it to 1 to step
// token by token, the brute-force reference the closed form must match.
var maxRunSteps int64 = math.MaxInt32

// SetMaxRunSteps caps decode runs at k steps and returns the cap it
// replaces: at 1 every decode step is an event of its own, as in a
// simulator that steps token by token (tests compare the closed form with
// that). It is package state: set it only while no replica runs.
func SetMaxRunSteps(k int64) (old int64) {
	old, maxRunSteps = maxRunSteps, k
	return old
}

// itlGaps is a replica's inter-token gaps (ms), every gap between two
// consecutive output tokens of a copy it served, recorded as they happen
// and merged into the fleet's Recorder at the end (Fleet.Finish). Equal
// gaps in a row are counted once with a weight (pending), and a decode
// run's shared ramp once for all its decoders (runGaps), so the cost is
// O(1) per sequence per run and O(buckets) per run, never per token.
type itlGaps struct {
	sk    *quantile.Sketch
	pendV float64
	pendN uint64
}

// add records gap v (ms). The common case, a gap equal to the previous
// one, is inlined at the call.
func (g *itlGaps) add(v float64) {
	if g.pendN > 0 && v == g.pendV {
		g.pendN++
		return
	}
	g.restart(v)
}

// addN records gap v (ms) n times.
func (g *itlGaps) addN(v float64, n uint64) {
	if g.pendN > 0 && v == g.pendV {
		g.pendN += n
		return
	}
	g.flush()
	g.pendV, g.pendN = v, n
}

// restart flushes the pending run of equal gaps and starts one of v. (Not
// inlined, so that add is.)
//
//go:noinline
func (g *itlGaps) restart(v float64) {
	g.flush()
	g.pendV, g.pendN = v, 1
}

// flush moves the pending run of equal gaps into the sketch.
func (g *itlGaps) flush() {
	if g.pendN > 0 {
		g.sketch().AddN(g.pendV, g.pendN)
		g.pendN = 0
	}
}

// sketch is the gaps' sketch, made on first use. It is bucketed from the
// first value (exact limit 0): the merge of every replica's gaps then has
// the same buckets whatever the grouping.
func (g *itlGaps) sketch() *quantile.Sketch {
	if g.sk == nil {
		g.newSketch()
	}
	return g.sk
}

// newSketch makes the gaps' sketch (out of line, so that sketch inlines).
func (g *itlGaps) newSketch() { g.sk = quantile.New(quantile.WithExactLimit(0)) }

// ITL returns the replica's inter-token gaps so far (nil when it produced
// no second token).
func (r *Replica) ITL() *quantile.Sketch {
	r.itl.flush()
	return r.itl.sk
}

// runGaps are the inter-token gaps of the decode run under way, in ms:
// each decoder's gap to the run's first token (add), then the ramp of the
// k−1 step lengths, shared by every decoder and recorded once for all of
// them (done).
type runGaps struct {
	itl     *itlGaps
	firstAt sim.Time // when the run's first token is out
	endAt   sim.Time // when its last is
	steps   int64
	a, b    float64 // gap j (j = 0..steps−2) after the first token: a + b·j ms
	n       uint64  // decoders added
	conv    gapConv // s.last -> gap to firstAt, for the last s.last seen
}

// gaps returns the closed form of the run under way's token gaps: the
// first token comes at the end of step 1 (runNs(1)), and step i+1 takes
// (a + b·i)·slow seconds, so the gaps after the first form a linear ramp.
func (r *Replica) gaps() runGaps {
	const msPerS = 1e3
	st := &r.stepState
	k := st.runSteps
	endAt := st.stepEnd // the run's end, unless a hang cut it short
	if k != st.endSteps {
		endAt = st.runStart + st.runNs(k)
	}
	firstAt := endAt // a run of one step
	if k > 1 {
		firstAt = st.runStart + st.runNs(1)
	}
	return runGaps{itl: &r.itl, firstAt: firstAt, endAt: endAt, steps: k,
		a: st.run.StepSeconds(1) * st.runSlow * msPerS, b: st.run.StepGrowthSeconds() * st.runSlow * msPerS}
}

// add records the gap of s, which produced its previous token at s.last,
// to the run's first token (it includes any stall before the run).
func (g *runGaps) add(s *seq) {
	if s.gen == 0 { // cannot happen: a decoding sequence has its first token
		panic("models: decode run of a sequence without a first token")
	}
	g.itl.add(g.conv.ms(s.last, g.firstAt))
	g.n++
	s.last = g.endAt
}

// done records the run's shared ramp for every decoder added, at
// O(buckets) whatever k and n (quantile.Sketch.AddRampN).
func (g *runGaps) done() {
	if g.n > 0 && g.steps > 1 {
		g.itl.flush()
		g.itl.sketch().AddRampN(g.a, g.b, g.steps-1, g.n)
	}
}

// runNs is the length of the first k steps of the run under way.
func (st *stepState) runNs(k int64) sim.Time {
	return roundNs(st.run.Seconds(k) * st.runSlow * 1e9)
}

// roundNs is sim.Time(math.Round(ns)) by truncation and comparisons,
// exact as math.Round (which works on the bits, ~4x the instructions):
// for |ns| < 2^52, int64(ns) truncates toward zero and ns − int64(ns) is
// exact, so rounding half away from zero is one step away from zero when
// that fraction reaches ±0.5; anything else (|ns| >= 2^52, ±Inf, NaN) is
// what math.Round returns unchanged, converted alike.
func roundNs(ns float64) sim.Time {
	if math.Float64bits(ns)&^(1<<63) >= 0x4330000000000000 { // |ns| >= 2^52, Inf or NaN
		return sim.Time(ns)
	}
	i := int64(ns)
	f := ns - float64(i)
	// Without a branch: the fraction is as good as random, and the
	// branches were mispredicted about every other call.
	return sim.Time(i + b2i(f >= 0.5) - b2i(f <= -0.5))
}

// b2i is 1 for true, else 0 (a SETcc, no branch).
func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// firstBoundary is the smallest k in [1, runSteps] with runStart +
// runNs(k) >= now (runSteps if there is none), and that boundary's time
// runStart + runNs(k) (which cutRun takes instead of computing it again).
// runNs(k) rounds (a·k + b·k(k−1)/2)·slow seconds, non-decreasing in k, so
// the root of the quadratic is a guess within a step or so of the answer,
// which a few exact comparisons settle.
func (st *stepState) firstBoundary(now sim.Time) (int64, sim.Time) {
	at := func(k int64) sim.Time { return st.runStart + st.runNs(k) }
	n := st.runSteps
	k := n
	if t := float64(now-st.runStart) / (st.runSlow * 1e9); st.runSlow > 0 {
		a, b := st.run.FirstStepSeconds(), st.run.StepGrowthSeconds()
		var x float64 // the real k with a·k + b·k(k−1)/2 = t
		if h := b / 2; h > 0 {
			p := a - h
			x = (-p + math.Sqrt(p*p+4*h*t)) / (2 * h)
		} else if a > 0 {
			x = t / a
		}
		if x >= 1 && x < float64(n) {
			k = int64(math.Ceil(x))
		} else if x < 1 {
			k = 1
		}
	}
	// Settle the guess, bisecting should it be off by more than a step.
	lo, hi := int64(1), n
	if tk := at(k); tk >= now {
		if k == 1 || at(k-1) < now {
			return k, tk
		}
		hi = k - 1
	} else if k == n {
		return n, tk
	} else if t := at(k + 1); t >= now {
		return k + 1, t
	} else {
		lo = k + 2
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		if at(mid) >= now {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, at(lo)
}

// runGrowth is ∫ dt over [a, b] of the blocks a decode run under way has
// taken so far but allocates only when it ends, taking them to grow
// linearly from the run's start to its end.
func (st *stepState) runGrowth(a, b sim.Time) float64 {
	if st.runSteps <= 0 || st.runBlocks <= 0 || st.stepEnd <= st.runStart {
		return 0
	}
	a, b = max(a, st.runStart), min(b, st.stepEnd)
	if b <= a {
		return 0
	}
	l := float64(st.stepEnd - st.runStart)
	x, y := float64(a-st.runStart), float64(b-st.runStart)
	return float64(st.runBlocks) / (2 * l) * (y*y - x*x)
}

// kick has the replica plan at the end of this instant (after every
// arrival at the same time has queued).
func (r *Replica) kick(now sim.Time) {
	r.busy = true
	r.runSteps = 0
	r.runStart, r.stepEnd = now, now
	r.eng.SetTimer(r.tm, now, sim.PriorityStep, r.onKick)
}

// plan chooses the next step, or goes idle.
func (r *Replica) plan(now sim.Time) {
	r.runStart = now
	r.runSteps = 0
	r.stepFLOPs = 0
	r.sched.plan(now)
}

// idle leaves the replica with nothing under way: the next arrival kicks
// it.
func (r *Replica) idle(sim.Time) {
	r.busy = false // (the timer's event has just fired: it is unarmed)
}

// stepNs is a single step of d seconds at the current slow-down, which it
// records for the step.
func (r *Replica) stepNs(d float64) sim.Time {
	r.runSlow = r.slow
	return roundNs(d * r.slow * 1e9)
}

// startStep schedules the end of a single step of shape sh.
func (r *Replica) startStep(now sim.Time, sh hw.StepShape) {
	if r.perf.Speculative() {
		sh.DecodeTau = r.specTauSum()
	}
	d := r.perf.Step(sh)
	r.stepFLOPs = r.perf.FLOPs(sh)
	r.shape = sh
	r.stepEnd = now + r.withLoad(r.stepNs(d)) // KV-tier loads of its admissions (kvtier.go)
	r.eng.SetTimer(r.tm, r.stepEnd, sim.PriorityStep, r.onStep)
}

// startRun schedules the end of a run of k decode-only steps of n
// sequences that read ctx tokens of KV at its first step and take blocks
// more KV blocks by its end.
func (r *Replica) startRun(now sim.Time, n int, ctx float64, k, blocks int64) {
	if !r.perf.Speculative() {
		r.run = r.perf.DecodeCached(n, ctx) // (decodeTau without speculation)
	} else {
		r.run = r.perf.DecodeTau(n, ctx, r.specTauSum())
	}
	r.shape = hw.StepShape{DecodeSeqs: float64(n), DecodeCtx: ctx}
	r.runSlow = r.slow
	r.runSteps, r.planSteps, r.endSteps = k, k, k
	r.runBlocks = blocks
	r.stepEnd = now + r.runNs(k)
	r.eng.SetTimer(r.tm, r.stepEnd, sim.PriorityStep, r.onStep)
}

// cutRun shortens the decode run under way to its first k < runSteps
// steps, which end at end (runStart + runNs(k), from firstBoundary).
func (r *Replica) cutRun(k int64, end sim.Time) {
	r.runSteps, r.endSteps = k, k
	r.stepEnd = end
	r.eng.SetTimer(r.tm, r.stepEnd, sim.PriorityStep, r.onStep)
}

// endRunEarly ends the decode run under way at its first step boundary at
// or after now.
func (r *Replica) endRunEarly(now sim.Time) {
	k, end := r.firstBoundary(now)
	if k < r.runSteps {
		r.cutRun(k, end)
	}
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
		r.finishRun(now)
	} else {
		r.Stats.FLOPs += r.stepFLOPs
		r.finishStep(now)
	}
	if r.stepRec != nil {
		r.stepRec(hw.StepRecord{Shape: r.shape, Steps: steps, FirstTokens: r.firsts - firsts, Start: int64(r.runStart), End: int64(now)})
	}
	r.plan(now)
	if r.lagSteps > 0 && r.firsts > firsts {
		r.setLags(now)
	}
	r.flush()
	if r.oom { // (checked here: checkOOM does not inline)
		r.checkOOM(now)
	}
}

// finishStep applies a single step: prefill chunks, and one decode token for
// every sequence that was decoding (their blocks were taken when planned).
func (r *Replica) finishStep(now sim.Time) {
	r.Stats.Steps++
	if !r.iter {
		r.finishStaticStep(now)
		return
	}
	d := &r.dec
	if d.paused {
		d.paused = false // continuous batching's prefill step: decoders waited
	} else if d.n > 0 {
		// The decoders, which come before the prefilling sequences in the
		// batch, each emit a token.
		var gc gapConv
		r.decodeSteps(1, now, now, &gc)
	}
	var gc gapConv
	w := 0
	for _, s := range r.prefill {
		if s.chunk > 0 {
			r.prefilled(s, now, &gc)
			if s.decoding() {
				r.startDecoding(s)
				continue
			}
		}
		r.prefill[w] = s
		w++
	}
	r.prefill = r.prefill[:w] // (the rest not cleared: those sequences decode on in the batch)
	iterSched{r}.reap(now)    // (both iteration-level modes reap as iterSched: no interface call)
}

// prefilled applies s's prefill chunk of the step that ended at now, and
// its first token if that completes its prompt.
func (r *Replica) prefilled(s *seq, now sim.Time, gc *gapConv) {
	s.done += s.chunk
	s.kvTokens += int64(s.chunk)
	r.Stats.PrefillTokens += int64(s.chunk)
	if !s.cancelled { // a withdrawn copy was already taken off
		r.state.OutstandingTokens -= int64(s.chunk)
	}
	s.chunk = 0
	if s.done == s.prompt {
		r.alloc.prefilled(s)
		r.emit(s, now, gc)
	}
}

// finishStaticStep is finishStep under static batching, whose sequences
// are kept up to date one by one.
func (r *Replica) finishStaticStep(now sim.Time) {
	var gc gapConv
	for _, s := range r.batch() {
		switch {
		case s.finished:
		case s.chunk > 0:
			r.prefilled(s, now, &gc)
		case s.decoding():
			s.kvTokens++
			s.tailTokens++
			r.emit(s, now, &gc)
		}
	}
	r.sched.reap(now)
}

// gapConv converts gaps to ms, remembering the last conversion: the
// sequences of a step or run mostly produced their previous token together,
// so their gaps repeat and cost one conversion.
type gapConv struct {
	from, to sim.Time
	v        float64
	set      bool
}

// ms is (to − from) in ms.
func (c *gapConv) ms(from, to sim.Time) float64 {
	if !c.set || from != c.from || to != c.to {
		c.from, c.to, c.v, c.set = from, to, (to - from).Milliseconds(), true
	}
	return c.v
}

// setLags gives the sequences whose first token this step emitted their
// output lag: lagSteps times the step now planned (a run's mean step; none
// when nothing follows: the engine is idle and delivers at once). An engine
// that schedules a step before the last one's outputs are processed
// (vLLM's and SGLang's asynchronous scheduling, the overlap of output
// processing with the next step) hands a token to the API server about one
// step after it was sampled; every later token of the sequence lags the
// same, so ITL does not change, TTFT and end-to-end latency do.
func (r *Replica) setLags(now sim.Time) {
	lag := r.lagNow(now)
	for _, n := range r.notes {
		if n.kind == noteFirst && n.at == now {
			n.s.lag = lag
		}
	}
}

// lagNow is the output lag of a token sampled by the step that ended at
// now: lagSteps times the step planned after it (see setLags).
func (r *Replica) lagNow(now sim.Time) sim.Time {
	if r.lagSteps <= 0 || !r.busy || r.stepEnd <= now {
		return 0
	}
	return sim.Time(r.lagSteps * float64((r.stepEnd-now)/sim.Time(max(r.runSteps, 1))))
}

// emit records one output token of s produced at now.
func (r *Replica) emit(s *seq, now sim.Time, gc *gapConv) {
	if s.gen == 0 {
		r.firsts++
		s.first = now
		r.notes = append(r.notes, note{kind: noteFirst, s: s, at: now})
	} else {
		r.itl.add(gc.ms(s.last, now))
	}
	s.last = now
	s.gen++
	r.Stats.DecodeTokens++
	if !s.cancelled {
		r.state.OutstandingTokens--
	}
}

// specTauSum is the running decoding sequences' expected tokens per verify
// step, summed, under per-request acceptance; 0 otherwise (the step model
// then uses its constant).
func (r *Replica) specTauSum() float64 {
	if !r.perf.SpecPerRequest() {
		return 0
	}
	var sum float64
	for _, s := range r.batch() {
		if s.decoding() {
			sum += r.perf.SpecTauFor(s.req.SpecQuantile)
		}
	}
	return sum
}
