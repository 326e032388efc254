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
