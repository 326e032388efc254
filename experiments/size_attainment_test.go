package experiments

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// size.csv and size_search.csv end with each candidate's SLO attainment
// and its CI (the runs' goodput.slo_attainment), after their existing
// columns, which keep their order; fewer replicas than N attain less than
// N does under a load that one replica cannot carry.
func TestSizeCSVAttainment(t *testing.T) {
	sc, err := mustParse(t, small).Derive(OverrideOverlay("run.replications", "2"), OverrideOverlay("workload.duration_s", "30"),
		OverrideOverlay("workload.arrival.rate_per_s", "60"))
	require.NoError(t, err)
	targets, err := scenario.ParseSLO("ttft_p99=800ms")
	require.NoError(t, err)
	res, err := Size(sc, targets, 0.95, RunOptions{})
	require.NoError(t, err)
	require.Greater(t, res.N, 1, "60 req/s needs more than one replica")
	for _, f := range []struct {
		file   *results.File
		old    string // the header before the attainment columns
		data   []byte
		points []*SizePoint
	}{
		{results.SizeFile, "row,replicas,gpus,failures,usd_per_month,utilization,headroom_pct,ttft_p99_ms,ttft_p99_ms_ci95,success,met_slo", res.CSV(), func() []*SizePoint {
			var ps []*SizePoint
			for _, r := range res.Rows {
				ps = append(ps, r.Point)
			}
			return ps
		}()},
		{results.SizeSearchFile, "replicas,failures,ttft_p99_ms,ttft_p99_ms_ci95,success,met_slo,usd_per_month", res.SearchCSV(), res.Search},
	} {
		recs := readCSV(t, f.data)
		h := recs[0]
		n := slices.Index(h, results.SLOAttainment) + 2 // later columns (size.csv's mfu and targets) follow
		require.Equal(t, []string{results.SLOAttainment, results.SLOAttainmentCI95}, h[n-2:n], f.file.Name)
		require.Equal(t, strings.Split(f.old, ","), h[:n-2], "the earlier columns unchanged")
		require.Len(t, recs, len(f.points)+1)
		for i, r := range recs[1:] {
			want := report.StatMap(f.points[i].Arm.Stats)[sloAttainmentKey]
			a, err := strconv.ParseFloat(r[n-2], 64)
			require.NoError(t, err)
			require.InDelta(t, want.Mean, a, 1e-6, "%s row %d", f.file.Name, i+1)
			require.GreaterOrEqual(t, a, 0.0)
			require.LessOrEqual(t, a, 1.0)
		}
	}
	var below, atN float64 = -1, -1
	for _, p := range res.Search {
		a := report.StatMap(p.Arm.Stats)[sloAttainmentKey].Mean
		switch p.Replicas {
		case 1:
			below = a
		case res.N:
			atN = a
		}
	}
	require.GreaterOrEqual(t, below, 0.0, "the search tried one replica")
	require.Less(t, below, atN, "one replica attains less than N")
}
