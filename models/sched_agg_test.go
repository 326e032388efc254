package models

import (
	"math/rand/v2"
	"testing"
)

// TestBatchAggDemandMatchesScan checks the histogram's block demand against
// the per-sequence definition (Σ max(0, blocksFor(tailTokens+j) −
// tailBlocks) over decoders) on random batches: paged tails (f < B),
// contiguous-like regions (f >= B), prefilling sequences, block sizes of 1,
// 16, 17 and one too large for a histogram, and runs j from 1 to 5·B.
func TestBatchAggDemandMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, B := range []int64{1, 16, 17, maxFreeHist + 1} {
		for trial := range 300 {
			r := &Replica{blockTokens: B}
			r.agg = newBatchAgg(B)
			for range rng.IntN(40) {
				s := &seq{prompt: 10, done: 10}
				if rng.IntN(5) == 0 {
					s.done = 3 // prefilling
				}
				s.tailTokens = rng.Int64N(5000)
				s.tailBlocks = r.blocksFor(s.tailTokens)
				if trial%3 == 0 && rng.IntN(2) == 0 {
					s.tailBlocks += rng.Int64N(4) // a region beyond the tail
				}
				s.kvTokens = s.tailTokens + 7
				s.req.OutputTokens = int32(rng.IntN(300)) + 1
				r.running = append(r.running, s)
			}
			r.agg.rebuild(r)
			for j := int64(1); j <= 5*B && j <= 200; j++ {
				if got, want := r.agg.demand(r, j), scanDemand(r, j); got != want {
					t.Fatalf("B=%d trial %d: demand(%d) = %d, the scan gives %d", B, trial, j, got, want)
				}
			}
		}
	}
}
