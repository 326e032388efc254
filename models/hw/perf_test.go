package hw

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func stepModel(t testing.TB, gpu, model string, tp int, w, kv Precision, pp PerfProfile) *StepModel {
	t.Helper()
	cat := NewCatalog()
	m, err := NewStepModel(cat.GPUs[gpu], cat.LLMs[model], tp, w, kv, pp)
	require.NoError(t, err)
	return m
}

// No step is faster than the roofline bound at 100% of the GPU's highest
// peak and bandwidth, for random shapes on every GPU, model, TP and
// precision, and even for a profile at every efficiency's upper bound.
func TestStepNeverBeatsRoofline(t *testing.T) {
	cat := NewCatalog()
	best := testProfile()
	for _, p := range ProfileParams {
		if p.Key == "gemm_half_tokens" || p.Key == "attention_half_context" || p.Key == "step_overhead_s" ||
			p.Key == "seq_overhead_s" || p.Key == "allreduce_latency_s" {
			p.Set(&best, p.Lo)
		} else {
			p.Set(&best, p.Hi)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	checked := 0
	for _, pp := range []PerfProfile{testProfile(), best} {
		for _, g := range cat.GPUNames() {
			gpu := cat.GPUs[g]
			for _, name := range cat.LLMNames() {
				for _, tp := range []int{1, 2, 4, 8} {
					for _, w := range []Precision{BF16, FP8, FP4} {
						m, err := NewStepModel(gpu, cat.LLMs[name], tp, w, FP8, pp)
						if err != nil {
							continue // fp4 before Blackwell
						}
						if llm := cat.LLMs[name]; llm.IsMLA() && m.attnFLOPsPerPair/max(gpu.BF16FLOPS, gpu.FP8FLOPS, gpu.FP4FLOPS) > m.kvBytesPerToken/gpu.HBMBytesPerS {
							// Known limit: the step model takes decode
							// attention as bandwidth-bound, which MLA's
							// 128 heads over one latent are not on GPUs
							// of little compute per byte (A100, H20).
							continue
						}
						for i := 0; i < 200; i++ {
							s := StepShape{DecodeSeqs: float64(rng.IntN(512)), DecodeCtx: float64(rng.IntN(1 << 20))}
							if rng.IntN(2) == 0 {
								c := float64(1 + rng.IntN(8192))
								s.PrefillTokens, s.PrefillSeqs = c, 1
								s.PrefillPairs = c*float64(rng.IntN(1<<16)) + c*(c+1)/2
							}
							require.GreaterOrEqual(t, m.Step(s), m.RooflineBound(gpu, s), "%s %s TP=%d %s %+v", g, name, tp, w, s)
							checked++
						}
					}
				}
			}
		}
	}
	t.Logf("%d steps checked", checked)
}

// Decode throughput per GPU falls from TP=1 to TP=8, and the exposed
// all-reduce time is (1 − tp_overlap) of the all-reduce: with full overlap
// a TP=8 decode step is the TP=1 kernels' time on 1/8 of the weights.
func TestTPDecodeScalingFollowsOverlap(t *testing.T) {
	pp := testProfile()
	n, ctx := 64, 64*2048.0
	perGPU := func(pp PerfProfile, tp int) float64 {
		m := stepModel(t, "H100", "llama-3-8b", tp, FP8, FP8, pp)
		return float64(n) / m.Decode(n, ctx).Seconds(1) / float64(tp)
	}
	prev := math.Inf(1)
	for _, tp := range []int{1, 2, 4, 8} {
		v := perGPU(pp, tp)
		require.Less(t, v, prev, "TP=%d", tp)
		prev = v
	}
	t.Logf("default profile: decode tok/s per GPU TP=1 %.0f, TP=8 %.0f (%.0f%%)", perGPU(pp, 1), perGPU(pp, 8), 100*perGPU(pp, 8)/perGPU(pp, 1))
	// The all-reduce's share of the step is what the overlap leaves exposed.
	none, full := pp, pp
	none.TPOverlap, full.TPOverlap = 0, 1
	m0 := stepModel(t, "H100", "llama-3-8b", 8, FP8, FP8, none)
	m1 := stepModel(t, "H100", "llama-3-8b", 8, FP8, FP8, full)
	mp := stepModel(t, "H100", "llama-3-8b", 8, FP8, FP8, pp)
	s := StepShape{DecodeSeqs: float64(n), DecodeCtx: ctx}
	ar := m0.Step(s) - m1.Step(s)
	llm := NewCatalog().LLMs["llama-3-8b"]
	gpu := NewCatalog().GPUs["H100"]
	// NVLS: a token's activations cross the links once each way.
	want := 2 * float64(llm.Layers) * (pp.AllReduceLatencyS + float64(n)*float64(llm.Hidden)*2/(gpu.NVLinkBytesPerS/2*pp.NVLinkEfficiency))
	require.InEpsilon(t, want, ar, 1e-9)
	require.InEpsilon(t, (1-pp.TPOverlap)*ar, mp.Step(s)-m1.Step(s), 1e-9)
}

// On a decode-bound step with the same batch, H200 is at most as much
// faster than H100 as its HBM bandwidth is higher (4.8/3.35 = 1.43).
func TestH200OverH100BoundedByBandwidth(t *testing.T) {
	pp := testProfile()
	for _, n := range []int{1, 16, 64, 256} {
		for _, ctxPer := range []float64{128, 2048, 16384} {
			h100 := stepModel(t, "H100", "llama-3-8b", 1, FP8, FP8, pp).Decode(n, ctxPer*float64(n)).Seconds(100)
			h200 := stepModel(t, "H200", "llama-3-8b", 1, FP8, FP8, pp).Decode(n, ctxPer*float64(n)).Seconds(100)
			require.LessOrEqual(t, h100/h200, 4.8/3.35+1e-12, "n=%d ctx=%g", n, ctxPer)
			require.Greater(t, h100/h200, 1.0)
		}
	}
}

// TP must divide the attention heads, and past the KV heads be a multiple
// of them; KV capacity stops growing there (KV heads are replicated).
func TestTPLayoutAndKVReplication(t *testing.T) {
	cat := NewCatalog()
	llm := cat.LLMs["llama-3-70b"]
	for _, tp := range []int{9, 24, 72, 3} {
		require.Error(t, CheckTP(llm, tp), "TP=%d", tp)
	}
	for _, tp := range []int{1, 2, 4, 8, 16, 32, 64} {
		require.NoError(t, CheckTP(llm, tp), "TP=%d", tp)
	}
	require.Equal(t, llm.KVBytesPerTokenGPU(2, 8), llm.KVBytesPerTokenGPU(2, 16), "one KV head per GPU at TP=8 and TP=16")
	require.Equal(t, 2*llm.KVBytesPerTokenGPU(2, 8), llm.KVBytesPerTokenGPU(2, 4))

}
