package fleet

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
	"github.com/stretchr/testify/require"
)

func logf(x float64) float64 { return math.Log(x) }
func expf(x float64) float64 { return math.Exp(x) }

// shareGPTOffline is an offline batch shaped like vLLM's ShareGPT throughput
// benchmark: all requests at t=0, prompt and output lengths lognormal with
// means of about 220 and 200 tokens (assumption: the ShareGPT V3 set as
// filtered by vLLM's benchmark_throughput, prompts < 1024 and outputs < 2048
// tokens).
func shareGPTOffline(n int, seed uint64) []workloads.Request {
	rng := rand.New(rand.NewPCG(seed, 1))
	reqs := make([]workloads.Request, n)
	for i := range reqs {
		reqs[i] = workloads.Request{ID: uint64(i + 1), Arrival: 0,
			InputTokens:  lognormalLen(rng, 220, 1.0, 4, 1024),
			OutputTokens: lognormalLen(rng, 200, 1.0, 4, 2048)}
	}
	return reqs
}

// TestCalibrationVLLM8BH100 keeps the default engine profile calibrated:
// Llama-3.1-8B BF16 on one H100 serving a ShareGPT-like offline load at
// ~12.6k output tokens/s (CALIBRATION.md §4, S), within ±15%, for the row
// the default (vllm-hopper) was fitted on: 1,000 requests of ShareGPT's
// mean lengths, 220 in and 200 out (experiments/calibrate/testdata/
// vllm-sharegpt.csv). With the lengths spread as ShareGPT's are (log-normal,
// the same means) the run ends on a tail of long answers decoded in small
// batches, and throughput is lower: that run is reported, and must stay
// below the fixed-length one.
func TestCalibrationVLLM8BH100(t *testing.T) {
	run := func(reqs []workloads.Request) float64 {
		eng, f := testFleet(t, defaultFleet(1))
		require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
		eng.Run(sim.Forever)
		require.NoError(t, f.Err())
		require.EqualValues(t, len(reqs), f.Rec.Completed)
		tps := float64(f.Rec.OutputTokens) / f.Rec.LastFinish.Seconds()
		t.Logf("%d requests: output tokens/s %.0f, steps %d, preemptions %d, kv blocks %d",
			len(reqs), tps, f.Replicas[0].Stats.Steps, f.Replicas[0].Stats.Preemptions, f.Memory.KVBlocks)
		return tps
	}
	fixed := make([]workloads.Request, 1000)
	for i := range fixed {
		fixed[i] = workloads.Request{ID: uint64(i + 1), InputTokens: 220, OutputTokens: 200}
	}
	tpsFixed := run(fixed)
	require.InEpsilon(t, 12600, tpsFixed, 0.15)
	tpsSpread := run(shareGPTOffline(2000, 7))
	require.Less(t, tpsSpread, tpsFixed)
}
