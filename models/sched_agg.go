package models

import "math"

// batchAgg summarises the running batch for the iteration-level schedulers
// (iterSched), so that planning a step or a decode run does not re-scan the
// batch: reap rebuilds it in the pass it makes anyway, and planning reads
// it. Anything else that changes the running sequences' lengths, blocks or
// membership marks it stale (valid = false) and the next reader rebuilds
// it with one scan.
//
// Block demand comes from a histogram of free token slots: a decoding
// sequence holding H tail blocks for T tail tokens has f = H·B − T free
// slots (B = block tokens), and j more decode steps take
// max(0, ⌈(j − f)/B⌉) more blocks (⌈(T+j)/B⌉ − H, since H·B is a
// multiple of B), so the batch's demand for j steps is a sum over the
// distinct values of f, at most B of them, instead of a division per
// sequence.
type batchAgg struct {
	valid      bool
	decoders   int     // decoding sequences (withdrawn ones too, until reaped)
	prefilling int     // sequences still prefilling
	ctx        int64   // Σ kvTokens of the decoders
	minRem     int64   // least output tokens a decoder still owes (math.MaxInt32 if none)
	free       []int64 // free[f]: decoders with f free slots, 0 <= f < len(free)
	far        int     // decoders with f outside [0, len(free)) (contiguous regions)
	farMin     int64   // the least f among them
}

// maxFreeHist bounds the histogram; larger blocks put every decoder in far
// (exact, by a scan when it matters).
const maxFreeHist = 1024

// newBatchAgg returns an empty, stale summary for blocks of blockTokens.
func newBatchAgg(blockTokens int64) batchAgg {
	var a batchAgg
	if blockTokens <= maxFreeHist {
		a.free = make([]int64, blockTokens)
	}
	return a
}

// reset empties the summary and marks it valid; add then counts each
// sequence of the batch.
func (a *batchAgg) reset() {
	a.valid = true
	a.decoders, a.prefilling, a.ctx = 0, 0, 0
	a.minRem = math.MaxInt32
	clear(a.free)
	a.far, a.farMin = 0, math.MaxInt64
}

// add counts running sequence s.
func (a *batchAgg) add(s *seq, blockTokens int64) {
	if !s.decoding() {
		a.prefilling++
		return
	}
	a.decoders++
	a.ctx += s.kvTokens
	a.minRem = min(a.minRem, int64(s.req.OutputTokens-s.gen))
	f := s.tailBlocks*blockTokens - s.tailTokens
	if f >= 0 && f < int64(len(a.free)) {
		a.free[f]++
		return
	}
	a.far++
	a.farMin = min(a.farMin, f)
}

// rebuild summarises r's batch with one scan.
func (a *batchAgg) rebuild(r *Replica) {
	a.reset()
	for _, s := range r.running {
		a.add(s, r.blockTokens)
	}
}

// demand is the number of new blocks the decoders need for j >= 1 more
// decode steps: Σ over sequences of max(0, blocksFor(tailTokens+j) −
// tailBlocks). The summary must be valid.
func (a *batchAgg) demand(r *Replica, j int64) int64 {
	if a.far > 0 && j > a.farMin {
		return scanDemand(r, j)
	}
	if int64(len(a.free)) != r.blockTokens {
		return 0 // no histogram: every decoder is far, and none needs a block
	}
	// With j−1 = q·B + rem, ⌈(j−f)/B⌉ = q+1 for f <= rem and q for
	// rem < f < B: q blocks for every decoder of the histogram, one more
	// for those with f <= rem. One division per call.
	q, rem := (j-1)/r.blockTokens, (j-1)%r.blockTokens
	need := q * int64(a.decoders-a.far)
	for _, c := range a.free[:rem+1] {
		need += c
	}
	return need
}

// scanDemand is demand by a scan of the batch.
func scanDemand(r *Replica, j int64) int64 {
	var need int64
	for _, s := range r.running {
		if s.decoding() {
			need += max(0, r.blocksFor(s.tailTokens+j)-s.tailBlocks)
		}
	}
	return need
}
