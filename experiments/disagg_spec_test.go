package experiments

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// TestDisaggDecodeSpeculation: speculative decoding on the decode pool
// changes its decode steps as on a co-located replica. At 0.9 acceptance
// of 3 drafted tokens a verify step emits ~3.4 tokens, so TPOT falls; at
// 0 acceptance it emits one token for a longer step, so TPOT rises; the
// decode pool's KV loses k positions per running sequence to the verify
// tokens; TTFT's prefill stages do not change (the prefill pool does not
// speculate). Speculation on the prefill pool is refused at its line.
func TestDisaggDecodeSpeculation(t *testing.T) {
	base := `name = "pd-spec"
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 2
[workload]
kind = "synthetic"
duration_s = 60
[workload.arrival]
rate_per_s = 8
[workload.input]
dist = "lognormal"
mean = 1024
p99 = 3000
[workload.output]
dist = "lognormal"
mean = 300
p99 = 900
[disagg]
enabled = true
[disagg.decode]
replicas = 2
`
	run := func(spec string) (*report.Summary, int64) {
		t.Helper()
		sc, err := scenario.Parse("pd.toml", []byte(base+spec))
		require.NoError(t, err)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		s := report.Summarize(res)
		require.Equal(t, s.Requests.Arrived, s.Requests.Completed)
		if spec != "" {
			requireDeterministic(t, sc, base+spec)
		}
		return s, res.Fleet.Disagg.Decode.Replicas[0].KV().Total()
	}
	plain, plainKV := run("")
	good, goodKV := run("[disagg.decode.replica.speculative]\nenabled = true\ntokens = 3\nacceptance = 0.9\nacceptance_spread = 0.1\n")
	bad, _ := run("[disagg.decode.replica.speculative]\nenabled = true\ntokens = 3\nacceptance = 0\n")
	t.Logf("TPOT mean: plain %.3f ms, α=0.9 %.3f ms, α=0 %.3f ms; decode KV blocks %d → %d",
		plain.LatencyMs.TPOT.Mean, good.LatencyMs.TPOT.Mean, bad.LatencyMs.TPOT.Mean, plainKV, goodKV)
	require.Less(t, good.LatencyMs.TPOT.Mean, 0.6*plain.LatencyMs.TPOT.Mean, "accepted drafts shorten the decode")
	require.Greater(t, bad.LatencyMs.TPOT.Mean, plain.LatencyMs.TPOT.Mean, "rejected drafts only cost")
	require.Less(t, goodKV, plainKV, "verify tokens take KV")
	require.Equal(t, plain.Disagg.TTFTSplitMs["prefill"], good.Disagg.TTFTSplitMs["prefill"], "the prefill pool is unchanged")

	_, err := scenario.Parse("pd.toml", []byte(strings.Replace(base, "[disagg]\n", "[cluster.replica.speculative]\nenabled = true\n[disagg]\n", 1)))
	require.ErrorContains(t, err, "pd.toml:21: cluster.replica.speculative.enabled: the prefill pool of a disaggregated fleet has no decode steps")
}
