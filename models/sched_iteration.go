package models

import (
	"fmt"

	"github.com/fleetsim/fleetsim/sim"
)

// iterSched is what the two iteration-level batching modes share
// (continuousSched, chunkedSched): sequences join and leave the batch at
// any step; a step is prefill work plus a decode token for each decoding
// sequence, and a decode-only batch runs as one event (planDecodeRun); KV
// blocks are taken as sequences grow, and a full cache preempts the newest
// sequence, which recomputes later. Each mode brings only its plan.
type iterSched struct{ r *Replica }

// begin starts planning a step: decoding sequences each need one token,
// and a block when their last block is full; it preempts the newest
// sequences until they fit, and returns how many are decoding and the
// blocks their next token takes (from the batch summary, rebuilt by one
// scan after each preemption).
func (b iterSched) begin(now sim.Time) (decoders int, need int64) {
	r := b.r
	for {
		if !r.agg.valid {
			r.agg.rebuild(r)
		}
		decoders, need = r.agg.decoders, r.agg.demand(r, 1)
		if need <= r.kv.Available() {
			return decoders, need
		}
		b.preemptNewest(now)
	}
}

// launch schedules the step planned in st with decoders decoding
// sequences: a decode-only run when it prefills nothing, else a single step
// whose decoders' blocks are taken now; or goes idle.
func (b iterSched) launch(now sim.Time, st *stepBuild, decoders int) {
	r := b.r
	if st.chunks == 0 {
		if decoders == 0 {
			if len(r.running) > 0 {
				panic(fmt.Sprintf("models: replica %d: %d running sequences but nothing to do", r.idx, len(r.running)))
			}
			r.idle(now)
			return
		}
		b.planDecodeRun(now, decoders)
		return
	}
	// A single mixed step: decoders' blocks are taken now.
	if decoders > 0 {
		r.agg.valid = false // tail blocks change here; the step's reap rebuilds it
		var need int64
		B := r.blockTokens
		for _, s := range r.running {
			if s.decoding() {
				// blocksFor(tailTokens+1) > tailBlocks, without a division.
				if s.tailTokens+1 > s.tailBlocks*B {
					s.tailBlocks++
					need++
				}
				st.sh.DecodeSeqs++
				st.sh.DecodeCtx += float64(s.kvTokens)
			}
		}
		if need > 0 && !r.alloc.grow(need) {
			panic(fmt.Sprintf("models: replica %d: decode blocks reserved but unavailable", r.idx))
		}
	}
	r.startStep(now, st.sh)
}

// planDecodeRun schedules k decode-only steps of the running batch, k being
// the largest run before a sequence finishes or the KV runs out. It reads
// the batch summary begin left valid.
func (b iterSched) planDecodeRun(now sim.Time, n int) {
	r := b.r
	a := &r.agg
	ctx := float64(a.ctx) // the sum of integers, exact as the per-sequence float sum was
	k := min(maxRunSteps, a.minRem)
	if k < 1 {
		panic(fmt.Sprintf("models: replica %d: decode run with a finished sequence", r.idx))
	}
	// Largest j <= k whose block demand fits in what is available.
	avail := r.kv.Available()
	need := a.demand(r, k)
	if need > avail {
		lo, hi := int64(1), k
		need = a.demand(r, 1)
		for lo < hi {
			mid := lo + (hi-lo+1)/2
			if d := a.demand(r, mid); d <= avail {
				lo, need = mid, d
			} else {
				hi = mid - 1
			}
		}
		k = lo
	}
	r.startRun(now, n, ctx, k, need)
}

// preemptNewest evicts the most recently admitted running sequence back to
// the head of the queue; it will recompute its prompt and output so far.
func (b iterSched) preemptNewest(now sim.Time) {
	r := b.r
	n := len(r.running)
	if n == 0 {
		panic(fmt.Sprintf("models: replica %d: out of KV with nothing to preempt", r.idx))
	}
	s := r.running[n-1]
	r.agg.valid = false
	r.running[n-1] = nil
	r.running = r.running[:n-1]
	if s.cancelled {
		r.drop(s) // withdrawn: free it, do not queue it again
		return
	}
	r.alloc.release(s)
	old := int64(s.prompt - s.done)
	s.prompt = s.req.InputTokens + s.gen
	s.done, s.kvTokens, s.chunk = 0, 0, 0
	r.state.OutstandingTokens += int64(s.prompt) - old
	s.preempts++
	r.Stats.Preemptions++
	s.inBatch = false
	r.waiting.pushFront(s)
	r.state.Waiting++
}

// finishRun applies k decode steps to every decoding sequence and takes the
// blocks they grew into (planDecodeRun made sure they are there), then
// reaps, in the same pass.
func (b iterSched) finishRun(now sim.Time) {
	r := b.r
	k := r.runSteps
	r.Stats.Steps += k
	if !r.agg.valid {
		r.agg.rebuild(r)
	}
	// The blocks are taken before any finished sequence releases its own,
	// as when they were counted sequence by sequence.
	if need := r.agg.demand(r, k); need > 0 && !r.alloc.grow(need) {
		panic(fmt.Sprintf("models: replica %d: decode run of %d steps planned without %d KV blocks", r.idx, k, need))
	}
	b.sweep(now, k)
}

// reap completes the sequences that produced all their tokens and drops
// withdrawn ones, releasing their KV.
func (b iterSched) reap(now sim.Time) { b.sweep(now, 0) }

// sweep is finishRun's and reap's one pass over the batch: each decoding
// sequence first gets k decode tokens (their blocks already taken); then
// withdrawn sequences are dropped and finished ones completed, in batch
// order; the rest stay, and the batch summary is rebuilt from them.
func (b iterSched) sweep(now sim.Time, k int64) {
	r := b.r
	B := r.blockTokens
	a := &r.agg
	a.reset()
	var gaps runGaps
	if k > 0 {
		gaps = r.gaps()
	}
	var decoded, owed int64 // decoders advanced; those of them not withdrawn
	w := 0                  // r.running[:w] are kept
	for i, s := range r.running {
		if k > 0 && s.decoding() { // a prefill left without budget waits for the next step
			gaps.add(s)
			s.kvTokens += k
			if t := s.tailTokens + k; t > s.tailBlocks*B { // crossed into new blocks
				s.tailBlocks = r.blocksFor(t)
			}
			s.tailTokens += k
			s.gen += int32(k)
			decoded++
			if !s.cancelled { // a withdrawn copy was already taken off
				owed++
			}
		}
		if s.cancelled {
			r.drop(s)
			continue
		}
		if s.gen >= s.req.OutputTokens && s.decoding() {
			r.alloc.finish(s)
			r.state.Outstanding--
			r.outstandingChanged()
			r.notes = append(r.notes, note{kind: noteDone, s: s, at: now})
			continue
		}
		if w != i { // (no pointer store while nothing has left)
			r.running[w] = s
		}
		w++
		a.add(s, B)
	}
	r.Stats.DecodeTokens += k * decoded
	r.state.OutstandingTokens -= k * owed
	clear(r.running[w:])
	r.running = r.running[:w]
	if k > 0 {
		gaps.done()
	}
}

func (b iterSched) canJoin() bool { return len(b.r.running) < b.r.cfg.MaxSeqs }

// cancel ends the decode run under way at its next step boundary so the
// batch shrinks promptly (a hung replica is not stepping: s leaves now).
func (b iterSched) cancel(s *seq) {
	r := b.r
	if r.hung {
		r.agg.valid = false
		r.removeRunning(s)
		return
	}
	if r.runSteps > 1 {
		r.endRunEarly(r.eng.Now())
	}
}
