package hw

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The dense step path (denseStep, and Decode's first step) gives the
// generic stageStep's value bit for bit, for random shapes on every GPU,
// model, TP and precision under two profiles: it is a copy written for
// speed, and a difference would change every output.
func TestDenseStepMatchesStageStep(t *testing.T) {
	cat := NewCatalog()
	other := testProfile()
	for _, p := range ProfileParams {
		p.Set(&other, p.Lo+(p.Hi-p.Lo)/3)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	checked := 0
	for _, pp := range []PerfProfile{testProfile(), other} {
		for _, g := range cat.GPUNames() {
			for _, name := range cat.LLMNames() {
				for _, tp := range []int{1, 2, 4, 8} {
					for _, w := range []Precision{BF16, FP8, FP4} {
						m, err := NewStepModel(cat.GPUs[g], cat.LLMs[name], tp, w, FP8, pp)
						if err != nil {
							continue
						}
						for i := 0; i < 100; i++ {
							n := rng.IntN(1024)
							s := StepShape{DecodeSeqs: float64(n), DecodeCtx: float64(rng.IntN(1 << 22))}
							if rng.IntN(2) == 0 {
								c := float64(1 + rng.IntN(8192))
								s.PrefillTokens, s.PrefillSeqs = c, float64(1+rng.IntN(4))
								s.PrefillPairs = c*float64(rng.IntN(1<<16)) + c*(c+1)/2
							}
							require.Equal(t, math.Float64bits(m.stageStep(s)), math.Float64bits(m.Step(s)), "%s %s TP=%d %s %+v", g, name, tp, w, s)
							dec := StepShape{DecodeSeqs: float64(n), DecodeCtx: s.DecodeCtx}
							require.Equal(t, math.Float64bits(m.stageStep(dec)), math.Float64bits(m.Decode(n, s.DecodeCtx).a), "%s %s TP=%d %s n=%d", g, name, tp, w, n)
							checked++
						}
					}
				}
			}
		}
	}
	t.Logf("%d shapes checked", checked)
}

// decodeRun's cached per-count terms give Decode's run bit for bit, on
// every dense GPU/model/TP/precision, for random counts and contexts, for
// counts seen before and not, and for a copy with a slower NVLink made
// after the cache was filled (its terms are its own).
func TestDecodeRunMatchesDecode(t *testing.T) {
	cat := NewCatalog()
	rng := rand.New(rand.NewPCG(9, 10))
	same := func(a, b DecodeRun) bool {
		return math.Float64bits(a.a) == math.Float64bits(b.a) && math.Float64bits(a.b) == math.Float64bits(b.b) &&
			math.Float64bits(a.fa) == math.Float64bits(b.fa) && math.Float64bits(a.fb) == math.Float64bits(b.fb)
	}
	checked := 0
	for _, g := range cat.GPUNames() {
		for _, name := range cat.LLMNames() {
			for _, tp := range []int{1, 2, 8} {
				for _, w := range []Precision{BF16, FP8} {
					m, err := NewStepModel(cat.GPUs[g], cat.LLMs[name], tp, w, FP8, testProfile())
					if err != nil {
						continue
					}
					for i := 0; i < 200; i++ {
						n, ctx := rng.IntN(300), float64(rng.IntN(1<<22))
						if got, want := m.DecodeCached(n, ctx), m.Decode(n, ctx); !same(got, want) {
							t.Fatalf("%s %s TP=%d %s n=%d ctx=%v: decodeRun %+v, Decode %+v", g, name, tp, w, n, ctx, got, want)
						}
						checked++
					}
					if q := m.WithNVLinkFraction(0.5); q != m {
						for i := 0; i < 50; i++ {
							n, ctx := rng.IntN(300), float64(rng.IntN(1<<22))
							if got, want := q.DecodeCached(n, ctx), q.Decode(n, ctx); !same(got, want) {
								t.Fatalf("%s %s TP=%d %s at half NVLink n=%d: decodeRun %+v, Decode %+v", g, name, tp, w, n, got, want)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d runs checked", checked)
}
