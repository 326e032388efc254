package hw

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSpecTokensPerStep(t *testing.T) {
	for _, c := range []struct {
		k    int
		a    float64
		want float64
	}{{3, 0, 1}, {3, 1, 4}, {1, 0.5, 1.5}, {4, 0.8, (1 - 0.8*0.8*0.8*0.8*0.8) / 0.2}} {
		require.InDelta(t, c.want, SpecConfig{Enabled: true, Tokens: c.k, Acceptance: c.a}.TokensPerStep(), 1e-12)
	}
}

// With α = 0 speculation is never faster: every step pays the draft and
// verifies k tokens it then throws away.
func TestSpecZeroAcceptanceNeverFaster(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, name := range []string{"llama-3-8b", "llama-3-70b", "deepseek-v3", "qwen3-30b-a3b"} {
		for _, k := range []int{1, 3, 7} {
			tp := 8
			plain := deployed(t, "H200", name, Layout{TP: tp}, FP8, Deployment{})
			spec := deployed(t, "H200", name, Layout{TP: tp}, FP8, Deployment{Spec: SpecConfig{Enabled: true, Tokens: k, Acceptance: 0, DraftFraction: rng.Float64() * 0.2}})
			for i := 0; i < 200; i++ {
				s := StepShape{DecodeSeqs: float64(1 + rng.IntN(512)), DecodeCtx: float64(rng.IntN(1 << 20))}
				if rng.IntN(2) == 0 {
					c := float64(1 + rng.IntN(8192))
					s.PrefillTokens, s.PrefillSeqs, s.PrefillPairs = c, 1, c*(c+1)/2
				}
				require.GreaterOrEqual(t, spec.Step(s), plain.Step(s), "%s k=%d %+v", name, k, s)
				n := int(s.DecodeSeqs)
				require.GreaterOrEqual(t, spec.Decode(n, s.DecodeCtx).Seconds(50), plain.Decode(n, s.DecodeCtx).Seconds(50))
			}
		}
	}
}

// As α → 1, a batch-1 decode step tends to the real step over k+1: between
// step/(k+1) and (verify + draft)/(k+1).
func TestSpecFullAcceptance(t *testing.T) {
	for _, k := range []int{1, 3, 5} {
		const frac = 0.05
		plain := deployed(t, "H100", "llama-3-70b", Layout{TP: 4}, FP8, Deployment{})
		spec := deployed(t, "H100", "llama-3-70b", Layout{TP: 4}, FP8, Deployment{Spec: SpecConfig{Enabled: true, Tokens: k, Acceptance: 1, DraftFraction: frac}})
		s := StepShape{DecodeSeqs: 1, DecodeCtx: 2000}
		step := plain.Step(s)
		got := spec.Step(s)
		kf := float64(k)
		require.Greater(t, got, step/(kf+1))
		// Memory-bound at batch 1: verifying k+1 tokens costs about one
		// step (the per-token comm grows a little), plus k drafts.
		require.Less(t, got, step*(1+kf*frac)/(kf+1)*1.05, "k=%d step %.3g ms spec %.3g ms", k, step*1e3, got*1e3)
		near := deployed(t, "H100", "llama-3-70b", Layout{TP: 4}, FP8, Deployment{Spec: SpecConfig{Enabled: true, Tokens: k, Acceptance: 0.9999, DraftFraction: frac}})
		require.InEpsilon(t, got, near.Step(s), 1e-3)
	}
}

// The gain shrinks as the batch grows: at large batch the verify pass is
// compute-bound and pays for every rejected token. For a dense model it
// shrinks from batch 1 on; for an MoE model it first grows (at batch 1 a
// verify pass of k+1 tokens touches up to (k+1)·top-k experts instead of
// top-k, at moderate batch both touch them all) and then shrinks.
func TestSpecGainShrinksWithBatch(t *testing.T) {
	for _, name := range []string{"llama-3-8b", "llama-3-70b", "qwen3-235b-a22b"} {
		plain := deployed(t, "H100", name, Layout{TP: 8}, FP8, Deployment{})
		spec := deployed(t, "H100", name, Layout{TP: 8}, FP8, Deployment{Spec: SpecConfig{Enabled: true, Tokens: 4, Acceptance: 0.7, DraftFraction: 0.05}})
		moe := plain.moe != nil
		prev, peak := 1e9, 0.0
		for _, n := range []int{1, 8, 64, 256, 1024} {
			ctx := float64(n) * 1000
			gain := plain.Decode(n, ctx).Seconds(10) / spec.Decode(n, ctx).Seconds(10)
			if !moe || n >= 256 {
				require.LessOrEqual(t, gain, prev*(1+1e-9), "%s n=%d", name, n)
			}
			if n == 1 {
				want := 1.5
				if moe {
					want = 1.2
				}
				require.Greater(t, gain, want, "%s: batch 1 gains", name)
			}
			prev, peak = gain, max(peak, gain)
		}
		require.Less(t, prev, 0.75*peak, "%s: batch 1024 gains far less", name)
		// With short contexts (no KV reads to amortise) a large batch of a
		// large model is compute-bound and speculation costs. (Llama-3-8B
		// at TP=8 is overhead-bound even there: per-sequence costs are
		// paid once per verify step.)
		if name == "llama-3-8b" {
			continue
		}
		n := 1024
		require.Less(t, plain.Decode(n, float64(n)*100).Seconds(10), spec.Decode(n, float64(n)*100).Seconds(10), name)
	}
}

// A speculative decode run's closed form is the sum of its steps.
func TestSpecDecodeRunClosedForm(t *testing.T) {
	for _, name := range []string{"llama-3-8b", "deepseek-v3"} {
		m := deployed(t, "H200", name, Layout{TP: 8}, FP8, Deployment{Spec: SpecConfig{Enabled: true, Tokens: 3, Acceptance: 0.6, DraftFraction: 0.1}})
		n, ctx := 17, 17*900.0
		run := m.Decode(n, ctx)
		sum := 0.0
		for j := 0; j < 40; j++ {
			sum += m.Step(StepShape{DecodeSeqs: float64(n), DecodeCtx: ctx + float64(n*j)})
		}
		require.InEpsilon(t, sum, run.Seconds(40), 1e-9, name)
	}
}

// Per-request acceptance: a step's tokens per verify step are the mean of
// its sequences'; a step whose sequences all sit at one acceptance is the
// constant-acceptance step; more draftable requests make faster steps.
func TestSpecPerRequestAcceptance(t *testing.T) {
	c := SpecConfig{Enabled: true, Tokens: 4, Acceptance: 0.6, AcceptanceSpread: 0.3, DraftFraction: 0.05}
	m := deployed(t, "H100", "llama-3-70b", Layout{TP: 4}, FP8, Deployment{Spec: c})
	sp := m.spec
	require.True(t, sp.perRequest)
	require.InDelta(t, 0.3, sp.lo, 1e-12)
	require.InDelta(t, 0.9, sp.hi, 1e-12)
	for _, u := range []float32{0, 0.5, 0.999} {
		at := c
		at.Acceptance, at.AcceptanceSpread = sp.lo+float64(u)*(sp.hi-sp.lo), 0
		fixed := deployed(t, "H100", "llama-3-70b", Layout{TP: 4}, FP8, Deployment{Spec: at})
		n := 16.0
		s := StepShape{DecodeSeqs: n, DecodeCtx: n * 2000}
		s.DecodeTau = n * sp.tauFor(u)
		require.InEpsilon(t, fixed.Step(StepShape{DecodeSeqs: n, DecodeCtx: n * 2000}), m.Step(s), 1e-12)
		require.InEpsilon(t, fixed.Decode(16, n*2000).Seconds(30), m.DecodeTau(16, n*2000, s.DecodeTau).Seconds(30), 1e-12)
	}
	slow := StepShape{DecodeSeqs: 8, DecodeCtx: 8000, DecodeTau: 8 * sp.tauFor(0)}
	fast := StepShape{DecodeSeqs: 8, DecodeCtx: 8000, DecodeTau: 8 * sp.tauFor(0.99)}
	require.Less(t, m.Step(fast), m.Step(slow))
	// Without per-request sums the constant applies.
	require.Equal(t, m.Decode(8, 8000), m.DecodeTau(8, 8000, 0))
}
