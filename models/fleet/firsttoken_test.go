package fleet

import (
	"math"
	"testing"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
	"github.com/stretchr/testify/require"
)

// neutralProfile is the constants of fleetsim's default before the fitted
// profiles (the start of their fits) with none of the first-token path's or
// the per-layer costs, for tests that set the ones they check.
func neutralProfile() hw.PerfProfile {
	return hw.PerfProfile{Name: "neutral", GEMMEfficiencyBF16: 0.75, GEMMEfficiencyFP8: 0.5, GEMMEfficiencyFP4: 0.5,
		GEMMHalfTokens: 1, WeightBandwidthEfficiency: 0.95, AttentionEfficiency: 0.9, AttentionHalfContext: 1,
		KVBandwidthEfficiency: 0.95, NVLinkEfficiency: 0.7, AllReduceLatencyS: 8e-6,
		StepOverheadS: 1e-6, SeqOverheadS: 6.89779e-06, RuntimeReserveBytes: 2147483648}
}

// pathProfile is a neutral profile with every cost of the first-token
// path (but the output lag) and the per-step and per-layer costs set.
func pathProfile() hw.PerfProfile {
	pp := neutralProfile()
	pp.Name = "path"
	pp.StepOverheadS, pp.SeqOverheadS, pp.LayerOverheadS = 2e-3, 20e-6, 40e-6
	pp.FrontEndS, pp.FrontEndSPerToken, pp.StreamS = 7e-3, 1e-6, 3e-3
	pp.OverlapExponent = 4
	return pp
}

// pathFleet runs reqs on one llama-3-8b replica on an H100 under pp and
// returns the fleet after the run.
func pathFleet(t *testing.T, pp hw.PerfProfile, reqs []workloads.Request) *Fleet {
	t.Helper()
	cat := hw.NewCatalog()
	cat.Profiles[pp.Name] = pp
	cfg := defaultFleet(1)
	cfg.Replica.Perf.Profile = pp.Name
	cfg.Replica.PrefixCaching = false
	eng := sim.NewEngine()
	f, err := NewFleet(eng, cat, cfg, leastOutstanding{}, NewRecorder(SLO{}), "cluster")
	require.NoError(t, err)
	require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
	eng.Run(sim.Time(math.MaxInt64))
	require.NoError(t, f.Err())
	f.Finish(eng.Now())
	return f
}

// At low load TTFT is exactly the first-token path: the front end (a fixed
// time plus tokenisation per prompt token), the prefill step, and the way
// back to the client; end-to-end latency adds the decode steps, and the
// client's way back counts once in each.
func TestTTFTAtLowLoadIsTheFirstTokenPath(t *testing.T) {
	pp := pathProfile()
	const prompt, out = 1000, 50
	f := pathFleet(t, pp, []workloads.Request{{ID: 1, Arrival: sim.Second, InputTokens: prompt, OutputTokens: out}})
	m, err := hw.NewStepModel(hw.NewCatalog().GPUs["H100"], hw.NewCatalog().LLMs["llama-3-8b"], 1, hw.BF16, hw.BF16, pp)
	require.NoError(t, err)
	front := sim.FromSeconds(pp.FrontEndS + pp.FrontEndSPerToken*prompt)
	prefill := sim.FromSeconds(m.Step(hw.StepShape{PrefillTokens: prompt, PrefillPairs: prompt * (prompt + 1) / 2, PrefillSeqs: 1}))
	stream := sim.FromSeconds(pp.StreamS)
	want := (front + prefill + stream).Milliseconds()
	require.InDelta(t, want, f.Rec.TTFT.Mean(), 1e-6, "TTFT = front end + prefill step + stream")
	// The decode steps: a run of out−1 steps of one sequence.
	decode := sim.FromSeconds(m.Decode(1, prompt).Seconds(out - 1)).Milliseconds() // (DecodeCtx: the context before the step)
	require.InDelta(t, want+decode, f.Rec.E2E.Mean(), 1e-3, "E2E = TTFT + decode steps (the stream counted once)")
}

// The per-step and per-layer costs show in the inter-token gaps of a lone
// stream: a decode step of one sequence is its weight read (or its math,
// smoothly maxed) plus the step, layer and sequence overheads, and its KV
// read, whatever else.
func TestStepOverheadShowsInITLAtBatchOne(t *testing.T) {
	pp := pathProfile()
	f := pathFleet(t, pp, []workloads.Request{{ID: 1, InputTokens: 16, OutputTokens: 2}})
	cat := hw.NewCatalog()
	gpu, llm := cat.GPUs["H100"], cat.LLMs["llama-3-8b"]
	weights := llm.Params * 2 / (gpu.HBMBytesPerS * pp.WeightBandwidthEfficiency)
	math1 := 2 * llm.Params * (1 + pp.GEMMHalfTokens) / (gpu.BF16FLOPS * pp.GEMMEfficiencyBF16)
	gemm := math.Pow(math.Pow(weights, 4)+math.Pow(math1, 4), 0.25)
	kv := llm.KVBytesPerToken(2) * 16 / (gpu.HBMBytesPerS * pp.KVBandwidthEfficiency) // (DecodeCtx: the context before the step)
	want := gemm + pp.StepOverheadS + pp.SeqOverheadS + float64(llm.Layers)*pp.LayerOverheadS + kv
	require.EqualValues(t, 1, f.Rec.ITL.Count())
	require.InDelta(t, want*1000, f.Rec.ITL.Mean(), 1e-5, "one gap: one decode step of one sequence")
	require.Greater(t, f.Rec.ITL.Mean(), 1000*(weights+kv)+2, "the overheads add milliseconds to the bare weight read")
}

// W4A16: 4-bit weights on a GPU without FP4 tensor cores stream their
// bytes (half FP8's, and NVFP4's scales) and compute at the BF16 peak; on
// Blackwell the same weights compute at FP4's.
func TestW4A16StreamsHalfTheBytesAtBF16Compute(t *testing.T) {
	cat := hw.NewCatalog()
	llm, pp := cat.LLMs["llama-3-70b"], neutralProfile()
	h100 := cat.GPUs["H100"]
	fp8, err := hw.NewStepModel(h100, llm, 4, hw.FP8, hw.BF16, pp)
	require.NoError(t, err)
	w4, err := hw.NewStepModel(h100, llm, 4, hw.FP4, hw.BF16, pp)
	require.NoError(t, err)
	require.Equal(t, hw.BF16, w4.Compute)
	require.Equal(t, h100.BF16FLOPS, w4.PeakFLOPS())
	require.InDelta(t, (0.5+1.0/16)/1, w4.WeightBytesPerGPU/fp8.WeightBytesPerGPU, 1e-12)
	require.InDelta(t, 0.5, w4.WeightBytesPerGPU/fp8.WeightBytesPerGPU, 0.07, "about half FP8's bytes")
	// Decode of a small batch streams weights: W4A16 is faster than FP8.
	s := hw.StepShape{DecodeSeqs: 4, DecodeCtx: 4 * 1024}
	require.Less(t, w4.Step(s), fp8.Step(s))
	// A large prefill is compute-bound: BF16 compute is slower than FP8's.
	p := hw.StepShape{PrefillTokens: 8192, PrefillPairs: 8192 * 4096, PrefillSeqs: 1}
	require.Greater(t, w4.Step(p), fp8.Step(p))
	b200, err := hw.NewStepModel(cat.GPUs["B200"], llm, 4, hw.FP4, hw.BF16, pp)
	require.NoError(t, err)
	require.Equal(t, hw.FP4, b200.Compute)
}

// The output lag: with first_token_lag_steps, a token reaches the client
// that many times the step planned after its own later: a lone request's
// first token one decode step's worth (in TTFT), its last none (the engine
// is idle after it, so end-to-end latency does not move; the client's TPOT
// shrinks by the first token's lag), and no inter-token gap changes.
func TestOutputLagShowsInTTFTNotITL(t *testing.T) {
	pp := pathProfile()
	const prompt, out = 1000, 50
	reqs := []workloads.Request{{ID: 1, Arrival: sim.Second, InputTokens: prompt, OutputTokens: out}}
	base := pathFleet(t, pp, reqs)
	pp.FirstTokenLagSteps = 1.5
	lagged := pathFleet(t, pp, reqs)
	cat := hw.NewCatalog()
	m, err := hw.NewStepModel(cat.GPUs["H100"], cat.LLMs["llama-3-8b"], 1, hw.BF16, hw.BF16, pp)
	require.NoError(t, err)
	run := m.Decode(1, prompt)
	step := sim.FromSeconds(run.Seconds(out-1)) / (out - 1) // the run's mean step, as the replica takes it
	lag := sim.Time(1.5 * float64(step)).Milliseconds()
	require.InDelta(t, base.Rec.TTFT.Mean()+lag, lagged.Rec.TTFT.Mean(), 1e-6)
	require.InDelta(t, base.Rec.E2E.Mean(), lagged.Rec.E2E.Mean(), 1e-6)
	require.Equal(t, base.Rec.ITL.Mean(), lagged.Rec.ITL.Mean())
	require.InDelta(t, base.Rec.TPOT.Mean()-lag/(out-1), lagged.Rec.TPOT.Mean(), 1e-6)
}

// A request that finishes while the engine keeps decoding another sees its
// last token lag too: its end-to-end latency grows by lag steps times the
// step after its last, and its TPOT by that over its gaps; the request that
// finishes last, with the engine idle after it, sees no finish lag; a
// one-token request's end is its first token, lag and all.
func TestOutputLagShowsAtFinishWhileBusy(t *testing.T) {
	pp := pathProfile()
	reqs := []workloads.Request{
		{ID: 1, Arrival: sim.Second, InputTokens: 200, OutputTokens: 20},
		{ID: 2, Arrival: sim.Second, InputTokens: 200, OutputTokens: 400},
		{ID: 3, Arrival: sim.Second, InputTokens: 200, OutputTokens: 1},
	}
	ttft := map[uint64]sim.Time{}
	e2e := func(pp hw.PerfProfile) map[uint64]sim.Time {
		out := map[uint64]sim.Time{}
		cat := hw.NewCatalog()
		cat.Profiles[pp.Name] = pp
		cfg := defaultFleet(1)
		cfg.Replica.Perf.Profile = pp.Name
		cfg.Replica.PrefixCaching = false
		eng := sim.NewEngine()
		f, err := NewFleet(eng, cat, cfg, leastOutstanding{}, NewRecorder(SLO{}), "cluster")
		require.NoError(t, err)
		f.Rec.OnDone = func(o *engine.Outcome) {
			out[o.Req.ID] = o.Finished + o.FinishDelay - o.Req.Arrival
			ttft[o.Req.ID] = o.FirstToken + o.ClientDelay - o.Req.Arrival
		}
		require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
		eng.Run(sim.Time(math.MaxInt64))
		require.NoError(t, f.Err())
		return out
	}
	base := e2e(pp)
	pp.FirstTokenLagSteps = 1
	lagged := e2e(pp)
	require.Len(t, lagged, 3)
	require.Equal(t, ttft[3], lagged[3], "a one-token stream ends with its first token")
	require.Greater(t, lagged[3], base[3])
	// One decode step of a batch of one (after request 1 leaves) is a few
	// milliseconds on this profile: the lag is a step, not zero, not a run.
	d := (lagged[1] - base[1]).Milliseconds()
	require.Greater(t, d, 1.0)
	require.Less(t, d, 30.0)
	require.Equal(t, base[2], lagged[2], "nothing decodes after the last request")
}
