package hw

import "sort"

// StepTally sums what a sequence of executed steps (StepRecords) did, each
// weighted, in the terms the step model is linear in, so that the total time
// of those steps under any profile is O(distinct token counts) to compute:
// calibration replays a run's steps thousands of times while it fits.
type StepTally struct {
	Steps         float64 // steps (a run of k counts k)
	Active        float64 // steps with GEMM work (tokens > 0)
	Tokens        float64 // GEMM tokens summed over steps
	Seqs          float64 // sequences summed over steps
	PrefillPairs  float64
	PrefillTokens float64
	DecodeCtx     float64 // KV tokens read by decode attention, summed over steps
	DecodeSeqs    float64 // decoding sequences summed over steps (a window's bound)
	gemm          map[float64]float64
	frozen        []gemmCount
}

type gemmCount struct{ tokens, steps float64 }

// Add tallies rec with weight w (1 for makespan; for mean TTFT, the number
// of first tokens emitted at or after rec).
func (t *StepTally) Add(rec StepRecord, w float64) {
	s, k := rec.Shape, float64(rec.Steps)
	if k <= 0 || w == 0 {
		return
	}
	kw := k * w
	tok := s.Tokens()
	t.Steps += kw
	t.Seqs += kw * (s.PrefillSeqs + s.DecodeSeqs)
	t.PrefillPairs += kw * s.PrefillPairs
	t.PrefillTokens += kw * s.PrefillTokens
	// A run's step j reads DecodeCtx + j·DecodeSeqs tokens of KV.
	t.DecodeCtx += w * (k*s.DecodeCtx + s.DecodeSeqs*k*(k-1)/2)
	t.DecodeSeqs += kw * s.DecodeSeqs
	if tok > 0 {
		t.Active += kw
		t.Tokens += kw * tok
		if t.gemm == nil {
			t.gemm = map[float64]float64{}
		}
		t.gemm[tok] += kw
		t.frozen = nil
	}
}

// Seconds is the weighted total duration of the tallied steps under m. It
// equals the sum of m.Step over the steps (up to rounding).
func (m *StepModel) Seconds(t *StepTally) float64 {
	if t.frozen == nil && len(t.gemm) > 0 {
		t.frozen = make([]gemmCount, 0, len(t.gemm))
		for tok, n := range t.gemm {
			t.frozen = append(t.frozen, gemmCount{tok, n})
		}
		sort.Slice(t.frozen, func(i, j int) bool { return t.frozen[i].tokens < t.frozen[j].tokens })
	}
	var d float64
	for _, g := range t.frozen { // sorted: the sum is deterministic
		d += g.steps * m.gemm(g.tokens)
	}
	d += (m.layerFixedS+m.commFixedS)*t.Active + m.commPerTokenS*t.Tokens
	d += m.overheadS*t.Steps + m.seqOverheadS*t.Seqs
	d += m.attnFLOPsPerPair * (m.pairsAttended(t.PrefillPairs, t.PrefillTokens) + m.attnHalf*t.PrefillTokens) / m.attnFLOPS
	d += m.kvRead(t.DecodeCtx, t.DecodeSeqs) / m.kvBW
	return d
}

// Distinct is the number of distinct GEMM token counts tallied (the cost
// of Seconds).
func (t *StepTally) Distinct() int { return len(t.gemm) }

// StepRecord is one executed step (Steps = 1) or decode-only run of Steps
// steps, whose first step had Shape (each later one adds DecodeSeqs tokens to
// DecodeCtx), and how many sequences emitted their first token at its end.
type StepRecord struct {
	Shape       StepShape
	Steps       int64
	FirstTokens int64
	// Start and End are when the step (or run) began and ended, in
	// simulated nanoseconds (calibration splits request times over steps
	// by them).
	Start, End int64
}
