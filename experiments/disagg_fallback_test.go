package experiments

import (
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/stretchr/testify/require"
)

// TestDisaggFallback: a disaggregated fleet with a [fallback] pool (was
// refused). While every prefill replica is down (two scripted failures over
// the same minute), the gateway sends what it cannot place to the fallback
// pool, which serves requests whole; the decode pool's indices follow the
// fallback's. Requests are conserved and every replica of the three pools
// consistent after every event, nothing is left between the pools, the
// fallback pool's GPUs are paid, and the run is deterministic.
func TestDisaggFallback(t *testing.T) {
	src := strings.Replace(pdFailuresSrc, "[disagg]\n", `[[faults]]
at_s = 30
replica = 0
mode = "fail"
duration_s = 60
[[faults]]
at_s = 30
replica = 1
mode = "fail"
duration_s = 60
[fallback]
enabled = true
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 2
[disagg]
`, 1)
	src = strings.Replace(src, "rate_multiplier = 40\n", "rate_multiplier = 0.000001\n", 1) // the scripted faults only
	sc, err := scenario.Parse("pd-fallback.toml", []byte(src))
	require.NoError(t, err)
	fl, _ := runStepChecked(t, sc, src)
	require.Len(t, fl.Fallback.Replicas, 2)
	for j, r := range fl.Fallback.Replicas {
		require.NoError(t, r.CheckInvariants())
		require.Equal(t, fl.Fallback.Base+j, r.Index(), "fallback replica %d", j)
	}
	require.Equal(t, len(fl.Replicas)+len(fl.Fallback.Replicas), fl.Disagg.Decode.Base, "decode indices follow the fallback's")
	require.Positive(t, fl.GW.Fallbacks, "the fallback pool took requests while no prefill replica was up")
	t.Logf("%d of %d completed, %d sent to the fallback pool, %d failed", fl.Rec.Completed, fl.Rec.Arrived, fl.GW.Fallbacks, fl.Rec.Failed)
	rec := fl.Rec
	require.Equal(t, rec.Arrived, rec.Completed+rec.Failed+rec.Shed)
	require.Greater(t, rec.Completed, rec.Arrived*9/10, "most requests complete: %d of %d", rec.Completed, rec.Arrived)

	var outs [2]string
	for k := range outs {
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		s := report.Summarize(res)
		require.NotNil(t, s.Disagg)
		js, err := s.MarshalJSON()
		require.NoError(t, err)
		outs[k] = string(js)
		if k == 0 {
			// The fallback pool's 2 GPUs are in the fleet's GPU-hours.
			base, err := scenario.Parse("pd.toml", []byte(strings.Replace(src, "[fallback]\nenabled = true\n", "[fallback]\nenabled = false\n", 1)))
			require.NoError(t, err)
			resB, err := Run(base, Options{})
			require.NoError(t, err)
			sb := report.Summarize(resB)
			require.InDelta(t, 2*res.EndTime.Seconds()/3600, s.Cost.GPUHours-sb.Cost.GPUHours*res.EndTime.Seconds()/resB.EndTime.Seconds(), 1e-3,
				"GPU-hours with and without the fallback pool")
		}
	}
	require.Equal(t, outs[0], outs[1], "determinism")
}
