package engine

import (
	"math"

	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
)

// staticSched is request-level batching (BatchStatic): when the previous
// batch is over it forms a batch from the head of the queue, reserving each
// request's whole length up front, prefills it in one step and decodes it
// until its longest request finishes. A finished or withdrawn sequence
// stays in the batch as padding (s.finished) until the batch ends; arrivals
// wait for the whole batch (head-of-line blocking).
type staticSched struct{ r *Replica }

var _ scheduler = staticSched{}

// plan forms a new batch when the previous one is over, or continues
// decoding the current one.
func (b staticSched) plan(now sim.Time) {
	r := b.r
	if r.nRunning() == 0 {
		b.form(now)
		return
	}
	// Decode the whole padded batch until the next unfinished request ends.
	k := int64(math.MaxInt32)
	var ctx float64
	for _, s := range r.batch() {
		ctx += float64(s.kvTokens)
		if !s.finished {
			k = min(k, int64(s.req.OutputTokens-s.gen))
		}
	}
	if k == math.MaxInt32 {
		// Every request of the batch is done or withdrawn: end the batch.
		b.end()
		b.form(now)
		return
	}
	k = min(k, maxRunSteps)
	r.startRun(now, r.nRunning(), ctx, k, 0) // every block was reserved up front
}

// form admits a new batch and schedules its prefill step, or goes idle.
func (b staticSched) form(now sim.Time) {
	r := b.r
	var sh hw.StepShape
	for r.head() != nil && r.nRunning() < r.cfg.MaxSeqs {
		s := r.head()
		// Static batching reserves a request's whole length up front.
		need := r.blocksFor(int64(s.req.InputTokens) + int64(s.req.OutputTokens))
		if !r.alloc.whole(s, need) {
			break
		}
		r.join(s)
		s.tailBlocks = need
		s.tailTokens = int64(s.prompt)
		r.started(s, now)
		s.chunk = s.prompt
		sh.PrefillTokens += float64(s.prompt)
		sh.PrefillPairs += float64(s.prompt) * float64(s.prompt+1) / 2
		sh.PrefillSeqs++
	}
	if r.nRunning() == 0 {
		r.idle(now)
		return
	}
	r.startStep(now, sh)
}

// end releases the whole batch.
func (b staticSched) end() {
	r := b.r
	for _, s := range r.batch() {
		r.alloc.release(s)
		r.recycle(s)
	}
	clear(r.running)
	r.running, r.runHoles = r.running[:0], 0
}

// finishRun: the padding decodes too (its KV grows) but produces nothing.
func (b staticSched) finishRun(now sim.Time) {
	r := b.r
	k := r.runSteps
	r.Stats.Steps += k
	gaps := r.gaps()
	defer gaps.done()
	for _, s := range r.batch() {
		if !s.decoding() {
			continue // its prefill step was cut short (a hang): it does not decode
		}
		s.kvTokens += k
		if !s.finished {
			gaps.add(s)
			s.gen += int32(k)
			r.Stats.DecodeTokens += k
			if !s.cancelled { // a withdrawn copy was already taken off
				r.state.OutstandingTokens -= k
			}
		}
	}
	b.reap(now)
}

// reap marks the sequences that produced all their tokens done, keeping
// them in the batch as padding, and ends the batch when all are.
func (b staticSched) reap(now sim.Time) {
	r := b.r
	allDone := true
	for _, s := range r.batch() {
		if !s.finished && s.gen >= s.req.OutputTokens && s.decoding() {
			r.state.Outstanding--
			r.outstandingChanged()
			r.notes = append(r.notes, note{kind: noteDoneInBatch, s: s, at: now})
			s.finished = true
		}
		if !s.finished {
			allDone = false
		}
	}
	if allDone {
		b.end()
	}
}

func (b staticSched) canJoin() bool { return false }

// cancel: the batch runs on; the copy is padding until it ends.
func (b staticSched) cancel(s *seq) {
	if !s.finished {
		r := b.r
		s.finished = true
		r.Stats.WastedPrefillTokens += int64(s.done)
		r.Stats.WastedDecodeTokens += int64(s.gen)
		r.Stats.CancelledTokens += int64(s.done) + int64(s.gen)
	}
}
