package calibrate

import (
	"testing"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/stretchr/testify/require"
)

// closedRows are a few closed-loop rows of the shipped silicon file: a
// dense model at TP 8 and 2, a long prompt, and an MoE with W4A16 experts.
func closedRows(t *testing.T) []Row {
	t.Helper()
	rows, _, err := ReadSilicon("testdata/silicon-h100-h200-b200.csv")
	require.NoError(t, err)
	var out []Row
	pick := func(model, gpu string, tp, isl, osl, c int) {
		for _, r := range rows {
			if r.Model == model && r.GPU == gpu && r.TP == tp && r.ISL == isl && r.OSL == osl && r.Concurrency == c && r.Backend == "vllm" {
				out = append(out, r)
				return
			}
		}
		t.Fatalf("no row %s %s tp%d %d/%d c%d", model, gpu, tp, isl, osl, c)
	}
	pick("llama-3.1-70b", "H200", 8, 1024, 1024, 16)
	pick("qwen3-32b", "H100", 2, 1024, 512, 64)
	pick("llama-3.1-70b", "H100", 4, 8192, 1024, 8)
	pick("gpt-oss-120b", "H100", 2, 1024, 1024, 8)
	return out
}

// A closed loop's tally estimate is its simulation under the profile it
// was tallied under (up to rounding), and stays close under a nearby one:
// what the fit relies on between re-simulations.
func TestClosedTallyMatchesSimulation(t *testing.T) {
	pp, ok := hw.BuiltinProfile("legacy")
	require.True(t, ok)
	pp.LayerOverheadS, pp.FrontEndS, pp.StreamS, pp.FirstTokenLagSteps = 30e-6, 10e-3, 2e-3, 0.5
	opt := Options{}
	cases, _, err := Prepare(closedRows(t), hw.NewCatalog(), pp, opt)
	require.NoError(t, err)
	near := pp
	near.WeightBandwidthEfficiency *= 0.95
	near.LayerOverheadS *= 1.1
	near.GEMMEfficiencyFP8 *= 0.95
	near.FirstTokenLagSteps = 0.8
	for _, c := range cases {
		sim, err := c.Predict(pp)
		require.NoError(t, err)
		est, err := c.estimate(pp)
		require.NoError(t, err)
		require.InEpsilon(t, sim.TTFTMs, est.TTFTMs, 1e-6, c.Row.Where())
		require.InEpsilon(t, sim.TPOTMs, est.TPOTMs, 1e-6, c.Row.Where())
		sim, err = c.Predict(near)
		require.NoError(t, err)
		est, err = c.estimate(near)
		require.NoError(t, err)
		require.InEpsilon(t, sim.TPOTMs, est.TPOTMs, 0.03, "%s: TPOT under a nearby profile", c.Row.Where())
		require.InEpsilon(t, sim.TTFTMs, est.TTFTMs, 0.15, "%s: TTFT under a nearby profile", c.Row.Where())
	}
}

// A row the roofline rules out is refused, naming why: a TPOT below one
// read of a GPU's weights, or latencies implying more GEMM FLOP/s than the
// GPUs reach; a row near the bound is kept.
func TestFeasibleRefusesWhatNoEngineRuns(t *testing.T) {
	cat := hw.NewCatalog()
	gpu, llm := cat.GPUs["H200"], cat.LLMs["llama-3.1-8b"]
	fc := closedFleet(1)
	row := Row{Model: "llama-3.1-8b", GPU: "H200", TP: 1, Weights: "fp8", ISL: 1000, OSL: 100, Concurrency: 8, TTFTMs: 50, MeanTPOTMs: 6}
	require.NoError(t, feasible(row, gpu, llm, fc))
	fast := row
	fast.MeanTPOTMs = 1.5 // 8 GB at 4.8 TB/s takes 1.67 ms
	require.ErrorContains(t, feasible(fast, gpu, llm, fc), "less than one read of a GPU's weights")
	busy := row
	busy.ISL, busy.Concurrency = 2000, 64
	busy.TTFTMs, busy.MeanTPOTMs = 122, 9.74 // 59 requests/s of 2,100 tokens on one GPU
	require.ErrorContains(t, feasible(busy, gpu, llm, fc), "of the GPUs' dense peak FLOP/s")
}

// closedFleet is a one-replica fleet of llama-3.1-8b on H200 at TP tp.
func closedFleet(tp int) fleet.FleetConfig {
	return fleet.FleetConfig{GPU: "H200", Model: "llama-3.1-8b", TP: tp, Replicas: 1, Replica: engine.DefaultReplicaConfig()}
}

// TestPhaseBurst: a silicon row's measured phase opens with all its
// clients at once (aiperf drains the warm-up first), so its predicted
// mean TTFT is (burst + (rounds − 1) × steady) / rounds; the burst of 64
// long prompts queues its prefills, so it is far above the steady loop's,
// and --steady-only (PhaseRounds 0) predicts the steady loop alone.
func TestPhaseBurst(t *testing.T) {
	rows, _, err := ReadSilicon("testdata/silicon-h100-h200-b200.csv")
	require.NoError(t, err)
	var row Row
	for _, r := range rows {
		if r.Model == "llama-3.1-70b" && r.GPU == "H200" && r.TP == 8 && r.ISL == 8192 && r.OSL == 1024 && r.Concurrency == 64 && r.Backend == "vllm" {
			row = r
		}
	}
	require.Equal(t, SiliconRounds, row.PhaseRounds)
	pp, ok := hw.BuiltinProfile("vllm-hopper")
	require.True(t, ok)
	steadyRow := row
	steadyRow.PhaseRounds = 0
	cases, _, err := Prepare([]Row{row, steadyRow}, hw.NewCatalog(), pp, Options{})
	require.NoError(t, err)
	withBurst, err := cases[0].Predict(pp)
	require.NoError(t, err)
	steady, err := cases[1].Predict(pp)
	require.NoError(t, err)
	burst, err := cases[0].burstTTFT(pp)
	require.NoError(t, err)
	require.Greater(t, burst, 3*steady.TTFTMs, "64 prompts of 8,192 tokens at once queue their prefills")
	require.InEpsilon(t, (burst+19*steady.TTFTMs)/20, withBurst.TTFTMs, 1e-9)
	require.Equal(t, steady.TPOTMs, withBurst.TPOTMs)
	// The fit's tally estimate matches the simulation under the profile
	// it was tallied under.
	est, err := cases[0].estimate(pp)
	require.NoError(t, err)
	require.InEpsilon(t, withBurst.TTFTMs, est.TTFTMs, 1e-6)
}
