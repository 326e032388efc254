package experiments

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/stretchr/testify/require"
)

// TestITLReported: the inter-token latency reaches every output where TPOT
// is (summary.json, the run table, cdf.csv, the headline statistics and
// the A/B table, size's --slo), and it is what it says: one gap per
// output token after the first, summing to the time from first to last
// token of every completed request.
func TestITLReported(t *testing.T) {
	sc, err := mustParse(t, small).Derive(OverrideOverlay("run.replications", "2"))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	rec := res.Rec
	require.Positive(t, rec.Completed)
	require.EqualValues(t, rec.OutputTokens-rec.Completed, rec.ITL.Count(), "one gap per token after the first")
	decodeMs := rec.E2E.Sum() - rec.TTFT.Sum()
	require.InEpsilon(t, decodeMs, rec.ITL.Sum(), 1e-9)
	s := report.Summarize(res)
	require.EqualValues(t, rec.ITL.Count(), s.LatencyMs.ITL.N)
	require.Positive(t, s.LatencyMs.ITL.P99)
	require.LessOrEqual(t, s.LatencyMs.ITL.P50, s.LatencyMs.ITL.P99)

	reps, err := RunReplications(sc, RunOptions{Workers: 1})
	require.NoError(t, err)
	arm := report.NewArmResult("", reps)
	js, err := arm.SummaryJSON()
	require.NoError(t, err)
	require.Contains(t, string(js), `"itl": {`)
	require.Regexp(t, `\nITL +[0-9.]+ +[0-9.]+`, arm.Table())
	cdf := results.NewTable(results.CDFFile, nil, nil)
	arm.CDFRows(cdf)
	require.Contains(t, string(cdf.Bytes()), ",itl,0.99,")
	var b bytes.Buffer
	report.WriteStatsTable(&b, arm.Stats, 2)
	require.Contains(t, b.String(), "ITL p99")
	_, ok := report.StatMap(arm.Stats)["latency_ms.itl.p999"]
	require.True(t, ok)

	ab, err := RunAB([]Arm{{Name: "a", Scenario: sc}, {Name: "b", Scenario: sc}}, RunOptions{Workers: 1})
	require.NoError(t, err)
	require.Regexp(t, `\nITL p99 ms +[0-9.]+ +[0-9.]+`, ab.Report())

	tg, err := scenario.ParseSLO("itl_p99=120ms")
	require.NoError(t, err)
	require.Equal(t, "latency_ms.itl.p99", tg[0].Key)
	_, err = scenario.ParseSLO("itl_p98=1")
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "itl"), err.Error())
}
