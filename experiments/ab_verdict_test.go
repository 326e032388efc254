package experiments

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
)

func armOf(name string, key string, vals ...float64) *report.ArmResult {
	m, _ := report.MeanCI(vals, 0.95)
	return &report.ArmResult{Name: name, Stats: []report.Stat{{Key: key, Mean: m, Values: vals}}}
}

// A verdict's percentage agrees with its own endpoints, and it is called
// significant exactly when the table's paired difference is. Before, the
// percentage was the mean of per-replication ratios (here a cut of 37%, against
// endpoints 20727 → 5289, a 74.5% cut) and its CI was not the table's.
func TestVerdictAgreesWithEndpointsAndTable(t *testing.T) {
	key := "latency_ms.ttft.p99"
	// Paired replications where the mean of ratios differs from the ratio
	// of means: one replication dominates the baseline.
	a := armOf("A", key, 50000, 6000, 6181)
	b := armOf("B", key, 5000, 5400, 5467)
	d := Paired(a, b)
	require.Len(t, d, 1)
	require.InDelta(t, 20727, d[0].A, 0.5)
	require.InDelta(t, 5289, d[0].B, 0.5)
	require.InDelta(t, d[0].B/d[0].A-1, d[0].Rel, 1e-12)
	v := Verdicts("A", "B", d, 3)
	line := strings.Join(v, "\n")
	// The difference's CI crosses zero (one replication carries it), so no
	// verdict of a cut may be stated, whatever the ratios say.
	require.Greater(t, d[0].DiffCI, -d[0].Diff)
	require.Contains(t, line, "no significant change in p99 TTFT: B -74.5%")

	// A consistent cut is significant, with the endpoints' percentage.
	a = armOf("A", key, 1000, 1100, 1050)
	b = armOf("B", key, 500, 560, 520)
	d = Paired(a, b)
	line = strings.Join(Verdicts("A", "B", d, 3), "\n")
	require.Contains(t, line, "B cuts p99 TTFT by 49.8%")
	require.Contains(t, line, ": 1050 → 526.7")
}

// armOfN is armOf with the metric's sample count per replication.
func armOfN(name, key string, n float64, vals ...float64) *report.ArmResult {
	a := armOf(name, key, vals...)
	nk := key[:strings.LastIndex(key, ".")] + ".n"
	ns := make([]float64, len(vals))
	for i := range ns {
		ns[i] = n
	}
	m, _ := report.MeanCI(ns, 0.95)
	a.Stats = append(a.Stats, report.Stat{Key: nk, Mean: m, Values: ns})
	return a
}

// One replication has no interval: no verdict, no "± 0.0%", and the table
// cell says n/a (issue: "B raises p99 TTFT by 17.4% ± 0.0% (95% CI; worse)"
// from one replication).
func TestVerdictOneReplicationStatesNone(t *testing.T) {
	key := "latency_ms.ttft.p99"
	d := Paired(armOf("A", key, 100), armOf("B", key, 117.4))
	require.Len(t, d, 1)
	line := strings.Join(Verdicts("A", "B", d, 1), "\n")
	require.NotContains(t, line, "raises")
	require.NotContains(t, line, "± 0.0")
	require.Contains(t, line, "p99 TTFT: 100.0 → 117.4 (one replication: no verdict)")
	require.Equal(t, "17.4 ± n/a", report.PM(d[0].Diff, d[0].DiffCI, d[0].N))
}

// A latency quantile from a sketch in bucket mode is resolved to one
// bucket (2.02% at alpha 1%): replications that all land one bucket apart
// are no effect (issue: hedging "raises p50 TTFT by 2.0% ± 0.0% (worse)"),
// while the same change on exact quantiles (few samples) is one, and a
// change larger than interval plus resolution is stated.
func TestVerdictSketchResolutionIsNoEffect(t *testing.T) {
	key := "latency_ms.ttft.p50"
	bucket := 1.0202
	a := armOfN("A", key, 48000, 9.12, 9.0, 9.3)
	b := armOfN("B", key, 48000, 9.12*bucket, 9.0*bucket, 9.3*bucket)
	d := Paired(a, b)
	require.Equal(t, key, d[1].Key, "after latency_ms.ttft.n")
	require.InDelta(t, 0.0202, d[1].Res, 1e-4)
	line := strings.Join(Verdicts("A", "B", d, 3), "\n")
	require.Contains(t, line, "no change resolved in p50 TTFT")
	require.NotContains(t, line, "raises")

	// Exact quantiles (n within the exact limit) resolve it.
	d = Paired(armOfN("A", key, 3000, 9.12, 9.0, 9.3), armOfN("B", key, 3000, 9.12*bucket, 9.0*bucket, 9.3*bucket))
	require.Zero(t, d[1].Res)
	require.Contains(t, strings.Join(Verdicts("A", "B", d, 3), "\n"), "B raises p50 TTFT by 2.0%")

	// A change well past the resolution is stated.
	d = Paired(armOfN("A", key, 48000, 9.12, 9.0, 9.3), armOfN("B", key, 48000, 9.12*1.1, 9.0*1.1, 9.3*1.1))
	require.Contains(t, strings.Join(Verdicts("A", "B", d, 3), "\n"), "B raises p50 TTFT by 10.0%")
}

// A change that prints as 0.0% is not stated as a cut (issue: "cuts goodput
// by 0.0% ± 0.0% (worse)").
func TestVerdictBelowPrintedResolution(t *testing.T) {
	key := "goodput.requests_per_s"
	d := Paired(armOf("A", key, 40, 41, 42), armOf("B", key, 39.99, 40.99, 41.99))
	line := strings.Join(Verdicts("A", "B", d, 3), "\n")
	require.NotContains(t, line, "by 0.0%")
	require.Contains(t, line, "B changes goodput by less than 0.05%")
}
