package experiments

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// Metrics with no value are reported as such, not as numbers: attainment
// without an SLO (every request would "meet" it) and $ per good token when
// no token met the SLO (undefined, not free: it must never make the worst
// configuration look cheapest).
func TestUndefinedMetricsAreNotNumbers(t *testing.T) {
	noSLO := strings.Replace(small, "[slo]\nttft_ms = 800\ntpot_ms = 100\n", "", 1)
	require.NotEqual(t, small, noSLO)
	sc, err := mustParse(t, noSLO).Derive(OverrideOverlay("run.replications", "1"))
	require.NoError(t, err)
	reps, err := RunReplications(sc, RunOptions{Workers: 1})
	require.NoError(t, err)
	arm := report.NewArmResult("", reps)
	js, err := arm.SummaryJSON()
	require.NoError(t, err)
	var m struct {
		Goodput map[string]any `json:"goodput"`
	}
	require.NoError(t, json.Unmarshal(js, &m))
	require.NotEmpty(t, m.Goodput)
	require.NotContains(t, m.Goodput, "slo_attainment", "no SLO, no attainment")
	require.Contains(t, arm.Table(), "attainment n/a  (no SLO set)")

	// An SLO nothing meets: no $ per good token, in one run and in an
	// aggregate whose replications mix (never averaged as 0).
	impossible, err := mustParse(t, small).Derive(OverrideOverlay("slo.ttft_ms", "0.001"), OverrideOverlay("run.replications", "2"))
	require.NoError(t, err)
	reps, err = RunReplications(impossible, RunOptions{Workers: 1})
	require.NoError(t, err)
	arm = report.NewArmResult("", reps)
	require.Contains(t, arm.Table(), "n/a (no good output tokens) per 1M good output tokens")
	_, ok := report.StatMap(arm.Stats)["cost.usd_per_million_output_tokens"]
	require.False(t, ok)
	good, err := RunReplications(mustParse(t, small), RunOptions{Workers: 1})
	require.NoError(t, err)
	mixed := report.NewArmResult("", []*report.RepResult{good[0], reps[0]})
	_, ok = report.StatMap(mixed.Stats)["cost.usd_per_million_output_tokens"]
	require.False(t, ok, "defined in one replication only: undefined, not averaged with 0")
	js, err = mixed.SummaryJSON()
	require.NoError(t, err)
	require.NotContains(t, string(js), "usd_per_million_output_tokens\"")

	// A sweep across the two writes an empty cell, and the A/B table n/a.
	sw, err := RunSweep(mustParse(t, small), []scenario.Axis{mustAxis(t, "slo.ttft_ms=0.001,800")}, RunOptions{Workers: 1})
	require.NoError(t, err)
	csv := string(sw.CSV())
	require.Contains(t, csv, "\n")
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	require.Len(t, lines, 3)
	head, row := strings.Split(lines[0], ","), strings.Split(lines[1], ",")
	col := -1
	for i, h := range head {
		if h == "usd_per_million_output_tokens" {
			col = i
		}
	}
	require.GreaterOrEqual(t, col, 0)
	require.Equal(t, "", row[col], "the undefined cell is empty")
	require.NotEqual(t, "", strings.Split(lines[2], ",")[col])
	arms, err := ArmsFromScenario(mustParse(t, small+"\n[[arms]]\nname = \"a\"\n[[arms]]\nname = \"b\"\n[arms.slo]\nttft_ms = 0.001\n"))
	require.NoError(t, err)
	ab, err := RunAB(arms, RunOptions{Workers: 1})
	require.NoError(t, err)
	var rep bytes.Buffer
	rep.WriteString(ab.Report())
	require.Regexp(t, `\$ / 1M good tok +[0-9.]+ +n/a +n/a`, rep.String())
}

func mustAxis(t *testing.T, spec string) scenario.Axis {
	t.Helper()
	ax, err := scenario.ParseAxis(spec)
	require.NoError(t, err)
	return ax
}

// An end-to-end SLO counts in goodput: a request that streams its first
// token in time but finishes late does not meet it.
func TestE2ESLO(t *testing.T) {
	base, err := mustParse(t, small).Derive(OverrideOverlay("run.replications", "1"))
	require.NoError(t, err)
	tight, err := base.Derive(OverrideOverlay("slo.e2e_ms", "2000"))
	require.NoError(t, err)
	a, err := RunReplications(base, RunOptions{Workers: 1})
	require.NoError(t, err)
	b, err := RunReplications(tight, RunOptions{Workers: 1})
	require.NoError(t, err)
	require.Less(t, *b[0].Summary.Goodput.SLOAttainment, *a[0].Summary.Goodput.SLOAttainment)
	require.Contains(t, report.NewArmResult("", b).Table(), "end-to-end ≤ 2000 ms")
}

// Identical replications (a trace replay draws nothing) do not pretend to
// have confidence intervals.
func TestIdenticalReplicationsSaySo(t *testing.T) {
	sc, err := LoadBuiltin("azure-code-replay")
	require.NoError(t, err)
	sc, err = sc.Derive(OverrideOverlay("run.replications", "2"), OverrideOverlay("workload.max_requests", "300"))
	require.NoError(t, err)
	reps, err := RunReplications(sc, RunOptions{Workers: 1})
	require.NoError(t, err)
	require.Contains(t, report.NewArmResult("", reps).Table(), "2 replications, all identical")
	require.Contains(t, report.NewArmResult("", reps).Table(), `workload.trace.resample = "poisson"`)

	// Resampled, the replications of the same trace differ and have CIs;
	// replication 0 is a resample too, not the trace as recorded.
	rs, err := sc.Derive(OverrideOverlay("workload.trace.resample", `"poisson"`))
	require.NoError(t, err)
	boot, err := RunReplications(rs, RunOptions{Workers: 1})
	require.NoError(t, err)
	require.Contains(t, report.NewArmResult("", boot).Table(), "2 replications (mean ± 95% CI, Student t)")
	require.NotEqual(t, boot[0].Summary.LatencyMs.TTFT, reps[0].Summary.LatencyMs.TTFT)
	require.NotEqual(t, boot[0].Summary.LatencyMs.TTFT, boot[1].Summary.LatencyMs.TTFT)
	_, err = sc.Derive(OverrideOverlay("workload.trace.resample", `"shuffle"`))
	require.ErrorContains(t, err, "workload.trace.resample")

	reps, err = RunReplications(mustParse(t, small), RunOptions{Workers: 1})
	require.NoError(t, err)
	require.Contains(t, report.NewArmResult("", reps).Table(), "replications (mean ± 95% CI, Student t)")
}
