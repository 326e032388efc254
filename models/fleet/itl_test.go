package fleet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/quantile"
	"github.com/fleetsim/fleetsim/workloads"
	"github.com/stretchr/testify/require"
)

// itlRun runs reqs on cfg and returns the recorder, and the sum over
// completed requests of the time from first token to finish (ms) and of
// their output tokens after the first.
func itlRun(t *testing.T, cfg FleetConfig, reqs []workloads.Request) (rec *Recorder, decodeMs float64, gaps int64) {
	t.Helper()
	eng, f := testFleet(t, cfg)
	f.Rec.OnDone = func(o *engine.Outcome) {
		decodeMs += (o.Finished - o.FirstToken).Milliseconds()
		gaps += int64(o.Req.OutputTokens - 1)
	}
	require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
	eng.Run(sim.Time(math.MaxInt64))
	require.NoError(t, f.Err())
	require.Zero(t, f.Rec.InFlight())
	require.Zero(t, f.Rec.ITL.Count(), "the replicas' gaps reach the recorder at Finish")
	f.Finish(eng.Now())
	return f.Rec, decodeMs, gaps
}

// TestITLAccountsForEveryGap: whatever the batching mode, with preemption
// (small KV) and prefix caching, the gaps add up to the requests' time from
// first token to last, and there is one per token after a request's
// first (no copy fails or is withdrawn here, so every gap is a completed
// request's). Closed-form runs record a gap ramp (quantile.AddRamp) rather than
// one value per token; their values are the unrounded step lengths, so the
// sums agree to within a nanosecond per run.
func TestITLAccountsForEveryGap(t *testing.T) {
	var preempted int64
	for trial := 0; trial < 9; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 7))
		cfg := defaultFleet(1 + rng.IntN(2))
		cfg.Replica.Batching = engine.BatchingModes[trial%3]
		cfg.Replica.MaxSeqs = 4 + rng.IntN(40)
		cfg.Replica.KVBlocks = int64(300 + rng.IntN(1500))
		t.Run(fmt.Sprintf("%d-%s", trial, cfg.Replica.Batching), func(t *testing.T) {
			rec, decodeMs, gaps := itlRun(t, cfg, randomWorkload(rng, 300, 20, trial%2 == 0))
			require.Positive(t, rec.Completed)
			require.EqualValues(t, gaps, rec.ITL.Count())
			require.InDelta(t, decodeMs, rec.ITL.Sum(), 1e-9*decodeMs+1e-3, "gaps sum to the decode time")
			preempted += rec.Preempted
		})
	}
	require.Positive(t, preempted, "the small caches must preempt somewhere, so stalls are covered")
}

// TestITLClosedFormMatchesTokenByToken is the brute-force check: the same
// requests on one replica, once with closed-form decode runs and once
// stepping token by token (maxRunSteps = 1, every gap added one by one),
// give the same ITL distribution: the same count, the same sum, min and
// max to within float rounding, and quantiles within the sketch's
// accuracy (the two timelines differ by sub-nanosecond rounding, which can
// move a value across a bucket edge).
func TestITLClosedFormMatchesTokenByToken(t *testing.T) {
	for _, mode := range engine.BatchingModes {
		t.Run(mode, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, 3))
			var reqs []workloads.Request
			for i := range 24 {
				reqs = append(reqs, workloads.Request{ID: uint64(i + 1),
					Arrival:     sim.FromSeconds(float64(i/6)*0.4137 + float64(i%6)*1.7e-4),
					InputTokens: 50 + int32(rng.IntN(800)), OutputTokens: 1 + int32(rng.IntN(600))})
			}
			cfg := defaultFleet(1)
			cfg.Replica.Batching = mode
			cfg.Replica.MaxSeqs = 8
			// legacy has no output lag: every latency is the engine's.
			lagFree := cfg
			lagFree.Replica.Perf.Profile = "legacy"
			fast, _, _ := itlRun(t, lagFree, reqs)
			lagged, _, _ := itlRun(t, cfg, reqs)
			restore := engine.SetMaxRunSteps(1)
			slow, _, _ := itlRun(t, lagFree, reqs)
			slowLagged, _, _ := itlRun(t, cfg, reqs)
			engine.SetMaxRunSteps(restore)
			requireCloseSketch(t, slow.ITL, fast.ITL)
			// The other latencies agree too: the runs are the same run.
			requireCloseSketch(t, slow.TPOT, fast.TPOT)
			// With an output lag, the client's TPOT holds the last token's
			// lag: lag steps times the step planned after it, which a run
			// takes as its mean step and stepping as the next step itself.
			// Steps within a run differ by the KV read of the tokens it adds,
			// so the two agree to a small fraction of one step a request.
			requireCloseSketch(t, slowLagged.ITL, lagged.ITL)
			require.Equal(t, slowLagged.TPOT.Count(), lagged.TPOT.Count())
			require.InEpsilon(t, slowLagged.TPOT.Sum(), lagged.TPOT.Sum(), 1e-3)
		})
	}
}

func requireCloseSketch(t *testing.T, want, got *quantile.Sketch) {
	t.Helper()
	require.Equal(t, want.Count(), got.Count())
	// Stepping rounds every step to the nanosecond, a run only its
	// cumulative time: up to 0.5 ns a step on gaps of milliseconds.
	require.InEpsilon(t, want.Sum(), got.Sum(), 1e-7)
	require.InEpsilon(t, want.Min(), got.Min(), 1e-6)
	require.InEpsilon(t, want.Max(), got.Max(), 1e-6)
	for _, q := range []float64{0.01, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999} {
		w, g := want.Quantile(q), got.Quantile(q)
		require.LessOrEqual(t, math.Abs(g-w), 2.1*want.Alpha()*w, "q=%v: token by token %v, closed form %v", q, w, g)
	}
}
