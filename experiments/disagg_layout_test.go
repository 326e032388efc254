package experiments

import (
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/stretchr/testify/require"
)

// TestDisaggWideLayouts: disaggregation with data- and expert-parallel
// replicas in either pool (was refused): an MoE model prefilled on TP=2
// replicas and decoded on attention-DP, expert-parallel replicas of 4 GPUs
// (DP=4, EP=4), and the reverse, under calibrated failures of both pools.
// Requests are conserved and every replica of both pools consistent after
// every event, nothing is left between the pools; the decode pool's GPUs
// follow its layout (a DP=4 replica is 4 GPUs); the run is deterministic.
func TestDisaggWideLayouts(t *testing.T) {
	for _, c := range []struct {
		name, prefill, decode string
		decodeGPUs            int
	}{
		{"wide-decode", "tp = 2\n", "tp = 1\ndp = 4\nep = 4\n", 4},
		{"wide-prefill", "tp = 1\ndp = 2\nep = 2\n", "tp = 2\n", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(pdFailuresSrc, "model = \"llama-3-8b\"\ntp = 4\n", "model = \"qwen3-30b-a3b\"\n"+c.prefill, 1)
			src = strings.Replace(src, "[disagg.decode]\nreplicas = 2\n", "[disagg.decode]\nreplicas = 2\n"+c.decode, 1)
			src = strings.Replace(src, "rate_multiplier = 40\n", "rate_multiplier = 20\n", 1) // a few failures, not a siege
			sc, err := scenario.Parse(c.name+".toml", []byte(src))
			require.NoError(t, err, src)
			fl, fs := runStepChecked(t, sc, src)
			d := fl.Disagg
			require.Equal(t, c.decodeGPUs, d.DecodeReplicaTP(), "GPUs of one decode replica")
			require.Equal(t, 2*c.decodeGPUs, d.DecodeGPUs)
			require.Positive(t, d.Stats.Transfers)
			require.Positive(t, fs.ReplicaHits, "failures struck")
			rec := fl.Rec
			require.Equal(t, rec.Arrived, rec.Completed+rec.Failed+rec.Shed)
			require.Greater(t, rec.Completed, rec.Arrived/2, "%d of %d completed (failed: %v)", rec.Completed, rec.Arrived, rec.FailedBy)
			t.Logf("%s: %d of %d completed, %d transfers, %d re-prefills, decode replica hits %d",
				c.name, rec.Completed, rec.Arrived, d.Stats.Transfers, d.Stats.RePrefills, fs.Decode.ReplicaHits)

			var outs [2]string
			for k := range outs {
				res, err := Run(sc, Options{})
				require.NoError(t, err)
				js, err := report.Summarize(res).MarshalJSON()
				require.NoError(t, err)
				outs[k] = string(js)
			}
			require.Equal(t, outs[0], outs[1], "determinism")
		})
	}
}
