package hw

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func deployed(t testing.TB, gpu, model string, l Layout, w Precision, d Deployment) *StepModel {
	t.Helper()
	cat := NewCatalog()
	d.Layout = l
	m, err := NewDeployedStepModel(cat.GPUs[gpu], cat.LLMs[model], d, w, FP8, testProfile())
	require.NoError(t, err)
	return m
}

// A dense model deployed with TP only is exactly NewStepModel.
func TestDeployedDenseIsStepModel(t *testing.T) {
	cat := NewCatalog()
	pp := testProfile()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, name := range []string{"llama-3-8b", "llama-3-70b"} {
		for _, tp := range []int{1, 2, 8} {
			a, err := NewStepModel(cat.GPUs["H100"], cat.LLMs[name], tp, BF16, FP8, pp)
			require.NoError(t, err)
			b, err := NewDeployedStepModel(cat.GPUs["H100"], cat.LLMs[name], Deployment{Layout: Layout{TP: tp}}, BF16, FP8, pp)
			require.NoError(t, err)
			require.Equal(t, a.WeightBytesPerGPU, b.WeightBytesPerGPU)
			for i := 0; i < 100; i++ {
				s := StepShape{DecodeSeqs: float64(rng.IntN(300)), DecodeCtx: float64(rng.IntN(1 << 20)),
					PrefillTokens: float64(rng.IntN(3000)), PrefillSeqs: 1, PrefillPairs: float64(rng.IntN(1 << 22))}
				require.Equal(t, a.Step(s), b.Step(s))
				require.Equal(t, a.Decode(int(s.DecodeSeqs)+1, s.DecodeCtx), b.Decode(int(s.DecodeSeqs)+1, s.DecodeCtx))
			}
		}
	}
}

// A batch-1 MoE decode step streams the dense weights and only top-k of E
// experts; a large batch streams nearly all of them; the expected count
// is E·(1 − (1 − k/E)^B); skewed routing touches fewer.
func TestMoEDistinctExperts(t *testing.T) {
	for _, name := range []string{"deepseek-v3", "qwen3-235b-a22b", "mixtral-8x7b", "gpt-oss-120b"} {
		llm := NewCatalog().LLMs[name]
		m := deployed(t, "H200", name, Layout{TP: 8}, FP8, Deployment{})
		e := m.moe
		k, E := float64(llm.ExpertsPerToken), float64(llm.Experts)
		require.InEpsilon(t, k/E, (m.minWeightsRead(1)-e.denseBytes)/e.routedBytes, 1e-9, name)
		require.InEpsilon(t, e.denseBytes+e.routedBytes*k/E, m.weightsRead1(), 1e-9, name)
		for _, b := range []float64{2, 16, 64} {
			want := E * (1 - pow(1-k/E, b))
			require.InEpsilon(t, want, e.distinct(b), 1e-12)
		}
		require.Greater(t, e.distinct(4096)/E, 0.999, name)
		// All MoE layers' weights are far more than what batch 1 reads.
		require.Less(t, m.minWeightsRead(1), 0.5*m.WeightBytesPerGPU, name)
		require.InEpsilon(t, m.WeightBytesPerGPU, m.minWeightsRead(1e6), 1e-6, name)

		sk := deployed(t, "H200", name, Layout{TP: 8}, FP8, Deployment{MoE: MoEConfig{RoutingSkew: 0.5}})
		require.InEpsilon(t, k, sk.moe.distinct(1), 1e-9, "one token still takes k experts")
		require.Less(t, sk.moe.distinct(32), e.distinct(32), name)
	}
	// Decode per token is cheap at batch 1 and weight-bound growth after.
	ds := deployed(t, "H200", "deepseek-v3", Layout{TP: 8}, FP8, Deployment{})
	step1 := ds.Step(StepShape{DecodeSeqs: 1, DecodeCtx: 1000})
	step64 := ds.Step(StepShape{DecodeSeqs: 64, DecodeCtx: 64000})
	require.Greater(t, step64, 2*step1, "64 tokens touch ~219 of 256 experts, batch 1 touches 8")
}

func (m *StepModel) weightsRead1() float64 { return m.moe.weightsRead(1) }

func pow(x, y float64) float64 {
	r := 1.0
	for i := 0; i < int(y); i++ {
		r *= x
	}
	return r
}

// No MoE step beats the roofline at 100% of peak, under any layout,
// routing or speculation.
func TestMoEStepNeverBeatsRoofline(t *testing.T) {
	cat := NewCatalog()
	rng := rand.New(rand.NewPCG(5, 6))
	n := 0
	for _, name := range cat.LLMNames() {
		llm := cat.LLMs[name]
		for _, g := range []string{"H200", "GB200"} {
			gpu := cat.GPUs[g]
			for _, l := range []Layout{{TP: 8}, {TP: 4, DP: 2}, {TP: 1, DP: 8, EP: 8}, {TP: 2, DP: 8, EP: 16}, {TP: 1, DP: 64, EP: 64}, {TP: 4, PP: 2}, {TP: 8, PP: 4}} {
				for _, d := range []Deployment{{}, {MoE: MoEConfig{RoutingSkew: 0.9, LoadImbalance: 1}}, {Spec: SpecConfig{Enabled: true, Tokens: 4, Acceptance: 0.9}}} {
					d.Layout = l
					m, err := NewDeployedStepModel(gpu, llm, d, FP8, FP8, testProfile())
					if err != nil {
						continue
					}
					for i := 0; i < 50; i++ {
						s := StepShape{DecodeSeqs: float64(rng.IntN(1024)), DecodeCtx: float64(rng.IntN(1 << 22))}
						if rng.IntN(2) == 0 {
							c := float64(1 + rng.IntN(8192))
							s.PrefillTokens, s.PrefillSeqs = c, 1
							s.PrefillPairs = c*float64(rng.IntN(1<<16)) + c*(c+1)/2
						}
						if d.Spec.On() {
							continue // speculation emits τ tokens per step: not one step's work
						}
						require.GreaterOrEqual(t, m.Step(s), m.RooflineBound(gpu, s), "%s %s %+v %+v", g, name, l, s)
						n++
					}
				}
			}
		}
	}
	require.Greater(t, n, 1000)
}

// At a fixed number of tokens per GPU, the all-to-all grows with the EP
// degree across RDMA (8-GPU H200 servers) and stays under a bound inside
// an NVLink domain (GB200 NVL72).
func TestAllToAllScaling(t *testing.T) {
	const perGPU = 128.0
	a2a := func(gpu string, ep int) float64 {
		m := deployed(t, gpu, "deepseek-v3", Layout{TP: 1, DP: ep, EP: ep}, FP8, Deployment{})
		return m.a2aFixedS + m.a2aPerTokenS*perGPU*float64(ep)
	}
	prev := 0.0
	for _, ep := range []int{16, 32, 64, 128, 256} {
		x := a2a("H200", ep)
		require.Greater(t, x, prev, "ep %d", ep)
		prev = x
	}
	cat := NewCatalog()
	g, llm := cat.GPUs["GB200"], cat.LLMs["deepseek-v3"]
	pp := testProfile()
	// Every copy over NVLink: bytes per GPU < perGPU·layers·k·hidden·(1+2).
	bound := 2*float64(llm.MoELayers())*pp.AllReduceLatencyS +
		perGPU*float64(llm.MoELayers())*8*float64(llm.Hidden)*3/(g.NVLinkBytesPerS/2*pp.NVLinkEfficiency)
	for _, ep := range []int{2, 4, 8, 16, 32, 64} {
		x := a2a("GB200", ep)
		require.Less(t, x, bound, "ep %d", ep)
	}
	require.Greater(t, a2a("H200", 64), 3*a2a("GB200", 64), "RDMA at 50 GB/s vs NVLink at 900 GB/s")
}

func TestCheckDeployment(t *testing.T) {
	cat := NewCatalog()
	h200, ds := cat.GPUs["H200"], cat.LLMs["deepseek-v3"]
	for _, c := range []struct {
		gpu  GPU
		llm  LLM
		l    Layout
		want string
	}{
		{h200, ds, Layout{TP: 1, DP: 3, EP: 3}, "does not divide"},
		{h200, ds, Layout{TP: 1, DP: 8, EP: 4}, "must equal"},
		{h200, cat.LLMs["llama-3-70b"], Layout{TP: 1, DP: 8, EP: 8}, "dense"},
		{h200, ds, Layout{TP: 8, DP: 2, EP: 1}, "only expert parallelism"},
		{h200, ds, Layout{TP: 1, DP: 12, EP: 12}, "does not divide"},
		{func() GPU { g := h200; g.NICBytesPerS = 0; return g }(), ds, Layout{TP: 1, DP: 16, EP: 16}, "nic_bytes_per_s"},
		{h200, cat.LLMs["qwen3-235b-a22b"], Layout{TP: 1, DP: 24, EP: 24}, "does not divide"},
	} {
		err := CheckDeployment(c.gpu, c.llm, c.l)
		require.ErrorContains(t, err, c.want, "%+v", c.l)
	}
	require.NoError(t, CheckDeployment(h200, ds, Layout{TP: 1, DP: 16, EP: 16}))
	require.NoError(t, CheckDeployment(cat.GPUs["GB200"], ds, Layout{TP: 1, DP: 64, EP: 64}))
}

// Pipeline parallelism: weights and KV per GPU divide by pp; a batch-1
// decode step costs about what TP alone does (every stage reads its
// weights in turn) plus the hops; a large batch's compute divides by pp;
// hops across servers go over the NIC. Bad stage counts are refused.
func TestPipelineParallel(t *testing.T) {
	cat := NewCatalog()
	tp8 := deployed(t, "H100", "llama-3-405b", Layout{TP: 8}, FP8, Deployment{})
	pp2 := deployed(t, "H100", "llama-3-405b", Layout{TP: 8, PP: 2}, FP8, Deployment{})
	require.InEpsilon(t, tp8.WeightBytesPerGPU/2, pp2.WeightBytesPerGPU, 1e-12)
	one := StepShape{DecodeSeqs: 1, DecodeCtx: 4000}
	require.Greater(t, pp2.Step(one), tp8.Step(one))
	require.Less(t, pp2.Step(one), 1.1*tp8.Step(one))
	big := StepShape{PrefillTokens: 8192, PrefillSeqs: 4, PrefillPairs: 4 * 2048 * 2049 / 2}
	require.Less(t, pp2.Step(big), 0.6*tp8.Step(big))
	// Decode runs keep their closed form.
	run := pp2.Decode(64, 64*3000)
	sum := 0.0
	for j := 0; j < 20; j++ {
		sum += pp2.Step(StepShape{DecodeSeqs: 64, DecodeCtx: 64*3000 + 64*float64(j)})
	}
	require.InEpsilon(t, sum, run.Seconds(20), 1e-9)
	// The stages' hops: inside one server (TP=4) over NVLink, across two
	// (TP=8) over the NIC.
	in := deployed(t, "H100", "llama-3-70b", Layout{TP: 4, PP: 2}, FP8, Deployment{})
	across := deployed(t, "H100", "llama-3-70b", Layout{TP: 8, PP: 2}, FP8, Deployment{})
	require.Greater(t, across.pipe.hopPerTokS, in.pipe.hopPerTokS)
	require.Greater(t, across.pipe.hopFixedS, in.pipe.hopFixedS)
	// MoE with PP: a micro-batch of half the tokens touches fewer experts.
	q := deployed(t, "H200", "qwen3-235b-a22b", Layout{TP: 4, PP: 2}, FP8, Deployment{})
	q4 := deployed(t, "H200", "qwen3-235b-a22b", Layout{TP: 4}, FP8, Deployment{})
	two := StepShape{DecodeSeqs: 2, DecodeCtx: 2000}
	require.Less(t, q.Step(two), q4.Step(two))
	// Speculation with pipeline stages is refused.
	_, err := NewDeployedStepModel(cat.GPUs["H100"], cat.LLMs["llama-3-70b"], Deployment{Layout: Layout{TP: 4, PP: 2}, Spec: SpecConfig{Enabled: true, Tokens: 2}}, FP8, FP8, testProfile())
	require.ErrorContains(t, err, "pipeline")

	for _, c := range []struct {
		l    Layout
		want string
	}{
		{Layout{TP: 8, PP: 3}, "do not divide"},
		{Layout{TP: 1, DP: 2, PP: 2}, "dp = ep = 1"},
	} {
		require.ErrorContains(t, CheckDeployment(cat.GPUs["H100"], cat.LLMs["llama-3-70b"], c.l), c.want)
	}
	g := cat.GPUs["H100"]
	g.NICBytesPerS = 0
	require.ErrorContains(t, CheckDeployment(g, cat.LLMs["llama-3-70b"], Layout{TP: 8, PP: 2}), "nic_bytes_per_s")
	require.NoError(t, CheckDeployment(cat.GPUs["H100"], cat.LLMs["llama-3-405b"], Layout{TP: 8, PP: 2}))
}
