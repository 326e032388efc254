package engine

import (
	"cmp"
	"fmt"
	"slices"

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
// blocks their next token takes.
func (b iterSched) begin(now sim.Time) (decoders int, need int64) {
	r := b.r
	for {
		decoders = r.dec.n
		var ok bool
		if need, ok = r.demand1(); !ok {
			need = r.demand(1)
		}
		if need <= r.kv.Available() {
			return decoders, need
		}
		b.preemptNewest(now)
	}
}

// launch schedules the step planned in st with decoders decoding
// sequences, whose next token takes need more blocks (begin's answer): a
// decode-only run when it prefills nothing, else a single step whose
// decoders' blocks are taken now; or goes idle.
func (b iterSched) launch(now sim.Time, st *stepBuild, decoders int, need int64) {
	r := b.r
	if st.chunks == 0 {
		if decoders == 0 {
			if r.nRunning() > 0 {
				panic(fmt.Sprintf("models: replica %d: %d running sequences but nothing to do", r.idx, r.nRunning()))
			}
			r.idle(now)
			return
		}
		b.planDecodeRun(now, decoders)
		return
	}
	// A single mixed step: decoders' blocks are taken now (each
	// decoder's tailBlocks follows when it is synced).
	if decoders > 0 {
		if need > 0 && !r.alloc.grow(need) {
			panic(fmt.Sprintf("models: replica %d: decode blocks reserved but unavailable", r.idx))
		}
		r.dec.ahead = 1
		st.sh.DecodeSeqs = float64(decoders)
		st.sh.DecodeCtx = float64(r.dec.ctx()) // the sum of integers, exact as the per-sequence float sum was
	}
	r.startStep(now, st.sh)
}

// planDecodeRun schedules k decode-only steps of the running batch, k being
// the largest run before a sequence finishes or the KV runs out.
func (b iterSched) planDecodeRun(now sim.Time, n int) {
	r := b.r
	ctx := float64(r.dec.ctx()) // the sum of integers, exact as the per-sequence float sum was
	k := min(maxRunSteps, r.dec.minRem())
	if k < 1 {
		panic(fmt.Sprintf("models: replica %d: decode run with a finished sequence", r.idx))
	}
	// Largest j <= k whose block demand fits in what is available.
	avail := r.kv.Available()
	need := r.demand(k)
	if need > avail {
		lo, hi := int64(1), k
		need = r.demand(1)
		for lo < hi {
			mid := lo + (hi-lo+1)/2
			if d := r.demand(mid); d <= avail {
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
	n := len(r.running) // (its last entry is never a hole)
	if n == 0 {
		panic(fmt.Sprintf("models: replica %d: out of KV with nothing to preempt", r.idx))
	}
	s := r.running[n-1]
	r.unrun(s)
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
	r.waiting.pushFront(s)
	r.state.Waiting++
}

// finishRun applies k decode steps to every decoding sequence and takes the
// blocks they grew into (planDecodeRun made sure they are there), then
// reaps.
func (b iterSched) finishRun(now sim.Time) {
	r := b.r
	k := r.runSteps
	r.Stats.Steps += k
	// The blocks are taken before any finished sequence releases its own,
	// as when they were counted sequence by sequence. Nothing changes the
	// decoders during a run, so a run that ran as planned takes what
	// planDecodeRun counted.
	need := r.runBlocks
	if k != r.planSteps {
		need = r.demand(k)
	}
	if need > 0 && !r.alloc.grow(need) {
		panic(fmt.Sprintf("models: replica %d: decode run of %d steps planned without %d KV blocks", r.idx, k, need))
	}
	if n := r.dec.n; n > 0 {
		gaps := r.gaps()
		gaps.n = uint64(n)
		r.decodeSteps(k, gaps.firstAt, gaps.endAt, &gaps.conv)
		gaps.done()
	}
	b.reap(now)
}

// reap completes the decoders that produced all their tokens and drops
// withdrawn sequences, releasing their KV, in batch order.
func (b iterSched) reap(now sim.Time) {
	r := b.r
	d := &r.dec
	if r.cancelRun == 0 && (d.rem.len() == 0 || d.rem.minKey() > d.clk) {
		return
	}
	leaving := r.leavingBuf[:0]
	if r.cancelRun == 0 {
		// The common case, one decoder finished and none withdrawn, without
		// the list: a second finished one sends them all through it.
		s := d.rem.pop()
		if d.rem.len() == 0 || d.rem.minKey() > d.clk {
			b.complete(s, now)
			return
		}
		leaving = append(leaving, s)
	}
	for d.rem.len() > 0 && d.rem.minKey() <= d.clk { // gen >= OutputTokens
		leaving = append(leaving, d.rem.pop())
	}
	if r.cancelRun > 0 {
		for _, s := range r.batch() {
			if s.cancelled {
				leaving = append(leaving, s)
			}
		}
	}
	if len(leaving) > 1 {
		slices.SortFunc(leaving, func(a, b *seq) int { return cmp.Compare(a.joinNo, b.joinNo) })
	}
	for i, s := range leaving {
		if i > 0 && leaving[i-1] == s {
			continue // a withdrawn sequence that also finished
		}
		if s.cancelled {
			r.unrun(s)
			r.drop(s)
			continue
		}
		b.complete(s, now)
	}
	r.leavingBuf = leaving[:0] // (not cleared: its sequences are recycled, kept for reuse)
}

// complete takes s, which produced its last token, out of the batch and
// reports it done.
func (b iterSched) complete(s *seq, now sim.Time) {
	r := b.r
	r.unrun(s)
	r.alloc.finish(s)
	r.state.Outstanding--
	r.outstandingChanged()
	r.notes = append(r.notes, note{kind: noteDone, s: s, at: now})
}

func (b iterSched) canJoin() bool { return b.r.nRunning() < b.r.cfg.MaxSeqs }

// cancel ends the decode run under way at its next step boundary so the
// batch shrinks promptly (a hung replica is not stepping: s leaves now).
func (b iterSched) cancel(s *seq) {
	r := b.r
	r.cancelRun++
	if s.inDec {
		r.dec.cancelled++
	}
	if r.hung {
		r.removeRunning(s)
		return
	}
	if r.runSteps > 1 {
		r.endRunEarly(r.eng.Now())
	}
}
