package experiments

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

const mooncakeTrace = "../../shared/data/traces/conversation_trace.jsonl"

// TestPrefixCacheMatchesTraceReuse: replaying the Mooncake conversation trace
// on one replica with an unbounded cache, the simulated token-weighted hit
// rate matches the trace's ideal reuse (37.4%, CALIBRATION.md §4) within one
// point.
func TestPrefixCacheMatchesTraceReuse(t *testing.T) {
	if _, err := os.Stat(mooncakeTrace); err != nil {
		t.Skip("shared traces not present")
	}
	toml := `
name = "mooncake-unbounded"
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 1
[cluster.replica]
kv_blocks = 1000000000   # unbounded cache
[workload]
kind = "trace"
[workload.trace]
path = "` + mooncakeTrace + `"
rate_multiplier = 0.5    # replay at half speed so one H100 keeps up
`
	sc, err := scenario.Parse("mooncake.toml", []byte(toml))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	require.EqualValues(t, 12031, s.Requests.Completed)
	t.Logf("simulated hit rate %.4f (trace ideal 0.3736)", s.Prefix.HitRate)
	require.InDelta(t, 0.374, s.Prefix.HitRate, 0.01)
}
