package plot

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The spend rate is the time series' usd_per_hour, one line per arm; an arm
// without the column is left out, and none at all is an error.
func TestCostTimeline(t *testing.T) {
	nan := math.NaN()
	pts := []TimePoint{
		{Arm: "a", TimeS: 0, USDPerHour: 104}, {Arm: "a", TimeS: 10, USDPerHour: 312},
		{Arm: "b", TimeS: 0, USDPerHour: nan}, {Arm: "b", TimeS: 10, USDPerHour: nan},
	}
	f, err := CostTimeline(Meta{}, pts)
	require.NoError(t, err)
	require.InDelta(t, headroom(312, 1), f.Plot.Y.Max, 1e-9, "the axis fits the highest rate")
	text := legendText(t, f)
	require.Contains(t, text, "a: $ per hour")
	require.NotContains(t, text, "b: $ per hour", "b has no spend rate")
	_, err = CostTimeline(Meta{}, pts[2:])
	require.Error(t, err)
}

func TestCostVsSLO(t *testing.T) {
	pts := []CostSLOPoint{
		{Label: "cheap", USDPerMonth: 5832, SLOAttainment: 0.99, SLOCI95: 0.003},
		{Label: "dear", USDPerMonth: 9360, USDPerMonthCI95: 10, SLOAttainment: 1},
		{Label: "unknown", USDPerMonth: math.NaN(), SLOAttainment: 0.5},
	}
	f, err := CostVsSLO(Meta{}, pts)
	require.NoError(t, err)
	require.Equal(t, "cost_vs_slo", f.Name)
	require.LessOrEqual(t, f.Plot.X.Max, 100.0)
	require.Greater(t, f.Plot.Y.Max, 9360.0)
	text := legendText(t, f)
	require.Contains(t, text, "cheap")
	require.NotContains(t, text, "unknown")
	_, err = CostVsSLO(Meta{}, pts[2:])
	require.Error(t, err)
}

// Dir draws both from an A/B directory: usd_per_hour from timeseries.csv,
// cost_vs_slo from replications.csv (the means per arm).
func TestDirCostFigures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	}
	for _, arm := range []string{"static", "scaled"} {
		write(filepath.Join("arms", arm, "summary.json"), `{"scenario": "s", "fleet": {"replicas": 8, "gpus": 64}, "cost": {"usd": 416, "gpu_hours": 64}}`)
	}
	write("timeseries.csv", "arm,replication,time_s,available_replicas,provisioned_replicas,usd_per_hour\nstatic,0,0,8,8,416\nstatic,0,60,8,8,416\nscaled,0,0,2,2,104\nscaled,0,60,2,4,208\n")
	write("replications.csv", "arm,replication,seed,cost.usd_per_month,goodput.slo_attainment\nstatic,0,1,299520,1\nstatic,1,2,299520,0.999\nscaled,0,1,149760,0.99\nscaled,1,2,149760,0.98\n")
	written, err := Dir(dir)
	require.NoError(t, err)
	require.Contains(t, written, filepath.Join(dir, "plots", "usd_per_hour.png"))
	require.Contains(t, written, filepath.Join(dir, "plots", "cost_vs_slo.svg"))

	write("replications.csv", "arm,replication,seed,cost.usd_per_month,goodput.slo_attainment\nstatic,0,1,299520,1.5\n")
	_, err = Dir(dir)
	require.ErrorIs(t, err, ErrBadInput)
	require.ErrorContains(t, err, "replications.csv:2")
}

// A fleet of groups is drawn split: each group's spend but its spot
// replicas', those apart where the group has some, and the total.
func TestCostTimelineByGroup(t *testing.T) {
	pt := func(ts, base, burst, spot float64) TimePoint {
		return TimePoint{TimeS: ts, USDPerHour: base + burst, GroupOrder: []string{"base", "burst"},
			GroupUSD: map[string]float64{"base": base, "burst": burst}, SpotUSD: map[string]float64{"burst": spot}}
	}
	pts := []TimePoint{pt(0, 8, 0, 0), pt(10, 8, 54, 18), pt(20, 8, 9, 9)}
	series := groupSeries(pts[0].GroupOrder)
	require.Len(t, series, 5, "base, base (spot), burst, burst (spot), total")
	require.Equal(t, 36.0, series[2].value(pts[1]), "burst's on-demand part: its spend less its spot replicas'")
	require.Equal(t, 18.0, series[3].value(pts[1]))
	require.True(t, math.IsNaN(series[1].value(pts[1])), "base has no spot replicas")
	f, err := CostTimeline(Meta{}, pts)
	require.NoError(t, err)
	require.InDelta(t, headroom(62, 1), f.Plot.Y.Max, 1e-9, "the axis fits the highest total, $62/h")
	text := legendText(t, f)
	for _, want := range []string{"base", "burst", "burst (spot)", "total $ per hour"} {
		require.Contains(t, text, want)
	}
	require.NotContains(t, text, "base (spot")
}

// Dir reads the per-group spend columns of timeseries.csv; a negative
// one is an error naming file, line and column.
func TestDirCostByGroup(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644))
	}
	write("summary.json", `{"scenario": "g", "fleet": {"replicas": 6, "gpus": 10}, "cost": {"usd": 10, "gpu_hours": 5}}`)
	write("timeseries.csv", "arm,replication,time_s,provisioned_replicas,usd_per_hour,provisioned_replicas.base,provisioned_replicas.burst,provisioned_spot_replicas.burst,usd_per_hour.base,usd_per_hour.burst,spot_usd_per_hour.burst\n,0,0,3,26,2,1,0,8,18,0\n,0,60,6,70.6,2,4,2,8,62.6,12.6\n")
	written, err := Dir(dir)
	require.NoError(t, err)
	require.Contains(t, written, filepath.Join(dir, "plots", "usd_per_hour.png"))

	write("timeseries.csv", "arm,replication,time_s,provisioned_replicas,usd_per_hour,usd_per_hour.base\n,0,0,3,26,-1\n")
	_, err = Dir(dir)
	require.ErrorIs(t, err, ErrBadInput)
	require.ErrorContains(t, err, "timeseries.csv:2: column usd_per_hour.base")
}

// A sizing directory draws cost_vs_slo with one point per candidate tried:
// size_search.csv's sizes, or size_mix.csv's mixes, grouped by whether
// they met the targets and labelled with the size; files from before the
// attainment column draw none, and an attainment outside [0, 1] is an
// error naming file, line and column.
func TestDirSizeCostVsSLO(t *testing.T) {
	search := []SearchPoint{
		{Replicas: 1, USDPerMonth: 100, SLOAttainment: 0.4, MetSLO: false},
		{Replicas: 2, USDPerMonth: 200, SLOAttainment: 0.97, SLOAttainmentCI95: 0.01, MetSLO: true},
		{Replicas: 3, Failures: true, USDPerMonth: 300, SLOAttainment: 0.99, MetSLO: true},
	}
	pts := sizeCostSLO(search, nil)
	require.Equal(t, []string{"N=1", "N=2", "N=3+failures"}, []string{pts[0].Label, pts[1].Label, pts[2].Label})
	require.Equal(t, []string{groupMissed, groupMet, groupMet}, []string{pts[0].Group, pts[1].Group, pts[2].Group})
	f, err := CostVsSLO(Meta{}, pts)
	require.NoError(t, err)
	text := legendText(t, f)
	require.Contains(t, text, groupMet)
	require.Contains(t, text, groupMissed)
	require.Equal(t, 1, strings.Count(text, "N=3+failures"), "each candidate labelled once, beside its marker")
	require.Equal(t, 1, strings.Count(text, groupMet), "one legend entry per group")
	require.LessOrEqual(t, f.Plot.X.Min, 40.0)

	for _, c := range []struct {
		name, csv string
		want      int // cost_vs_slo points; -1: none drawn
	}{
		{"size_search.csv", "replicas,failures,ttft_p99_ms,ttft_p99_ms_ci95,success,met_slo,usd_per_month,slo_attainment,slo_attainment_ci95\n1,false,900,10,1,false,100,0.5,0.02\n2,false,300,5,1,true,200,0.99,0.001\n", 2},
		{"size_search.csv", "replicas,failures,ttft_p99_ms,ttft_p99_ms_ci95,success,met_slo,usd_per_month\n1,false,900,10,1,false,100\n", -1},
		{"size_mix.csv", "h100,b200,gpus,usd_per_month,met,ttft_p99_bound,slo_attainment,slo_attainment_ci95\n2,0,16,9000,false,900,0.8,0.01\n0,2,16,12000,true,400,0.995,0\n1,1,16,10500,true,450,0.99,0.002\n", 3},
		{"size_mix.csv", "h100,b200,gpus,usd_per_month,met,ttft_p99_bound\n2,0,16,9000,false,900\n", -1},
	} {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, c.name), []byte(c.csv), 0o644))
		if c.name == "size_mix.csv" {
			tb, ok, err := readTable(dir, c.name)
			require.NoError(t, err)
			require.True(t, ok)
			mix, err := readSizeMix(tb)
			require.NoError(t, err)
			if c.want > 0 {
				require.Len(t, mix, c.want)
				require.Equal(t, "h100=1 b200=1", mix[2].Label)
				require.Equal(t, groupMet, mix[2].Group)
				require.InDelta(t, 0.99, mix[2].SLOAttainment, 1e-12)
			} else {
				require.Empty(t, mix)
			}
		}
		written, err := Dir(dir)
		if c.want < 0 && c.name == "size_mix.csv" {
			require.ErrorIs(t, err, ErrBadInput, "nothing else to plot")
			continue
		}
		require.NoError(t, err)
		if c.want > 0 {
			require.Contains(t, written, filepath.Join(dir, "plots", "cost_vs_slo.svg"), c.name)
		} else {
			require.NotContains(t, written, filepath.Join(dir, "plots", "cost_vs_slo.svg"), c.name)
		}
	}

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "size_mix.csv"), []byte("h100,b200,gpus,usd_per_month,met,slo_attainment\n2,0,16,9000,false,1.2\n"), 0o644))
	_, err = Dir(dir)
	require.ErrorIs(t, err, ErrBadInput)
	require.ErrorContains(t, err, "size_mix.csv:2: column slo_attainment")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "size_mix.csv"), []byte("h100,b200,gpus,usd_per_month,met,slo_attainment\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "size_search.csv"), []byte("replicas,met_slo,usd_per_month,slo_attainment\n1,false,10,-0.1\n"), 0o644))
	_, err = Dir(dir)
	require.ErrorIs(t, err, ErrBadInput)
	require.ErrorContains(t, err, "size_search.csv:2: column slo_attainment")
}

// A `fleetsim size` directory's run at N names its arm (cluster.replicas=N,
// or the mix): its spend rate is drawn from its own column.
func TestDirCostSizeArm(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"scenario": "s", "fleet": {"replicas": 3, "gpus": 24}, "cost": {"usd": 52, "gpu_hours": 8}}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "timeseries.csv"), []byte("arm,replication,time_s,available_replicas,provisioned_replicas,usd_per_hour\ncluster.replicas=3,0,0,3,3,156\ncluster.replicas=3,0,60,3,3,156\n"), 0o644))
	written, err := Dir(dir)
	require.NoError(t, err)
	require.Contains(t, written, filepath.Join(dir, "plots", "usd_per_hour.svg"))
}

// TestSizeCostVsSLOChosen: sizes at the same place in one group share a
// label (N=8 with and without failures drew two labels over each other),
// and the size the sizing reports is ringed and named in the legend.
func TestSizeCostVsSLOChosen(t *testing.T) {
	search := []SearchPoint{
		{Replicas: 7, USDPerMonth: 700, SLOAttainment: 0.1, MetSLO: false},
		{Replicas: 8, USDPerMonth: 800, SLOAttainment: 1, MetSLO: true},
		{Replicas: 8, Failures: true, USDPerMonth: 800, SLOAttainment: 1, MetSLO: true},
	}
	rows := []SizeRow{{Row: "N (no failures)", Replicas: 8}, {Row: "N", Replicas: 8, Failures: true}}
	pts := sizeCostSLO(search, rows)
	require.Len(t, pts, 2)
	require.Equal(t, "N=8, N=8+failures", pts[1].Label)
	require.True(t, pts[1].Chosen)
	require.False(t, pts[0].Chosen)
	f, err := CostVsSLO(Meta{}, pts)
	require.NoError(t, err)
	require.Contains(t, legendText(t, f), "the size reported: N=8, N=8+failures")
	require.Contains(t, legendText(t, f), "not this axis")
}
