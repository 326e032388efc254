package plot

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The spend rate is provisioned replicas × the arm's price per replica-hour;
// an arm without a price is left out, and none at all is an error.
func TestCostTimeline(t *testing.T) {
	pts := []TimePoint{
		{Arm: "a", TimeS: 0, ProvisionedReplicas: 2}, {Arm: "a", TimeS: 10, ProvisionedReplicas: 6},
		{Arm: "b", TimeS: 0, ProvisionedReplicas: 3}, {Arm: "b", TimeS: 10, ProvisionedReplicas: 3},
	}
	f, err := CostTimeline(Meta{}, pts, map[string]float64{"a": 52})
	require.NoError(t, err)
	require.InDelta(t, headroom(6*52, 1), f.Plot.Y.Max, 1e-9, "the axis fits 6 replicas at $52/h")
	text := legendText(t, f)
	require.Contains(t, text, "a: $ per hour")
	require.NotContains(t, text, "b: $ per hour", "b has no price")
	_, err = CostTimeline(Meta{}, pts, nil)
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

// Dir draws both from an A/B directory: usd_per_hour from timeseries.csv
// and each arm's summary.json, cost_vs_slo from replications.csv (the means
// per arm).
func TestDirCostFigures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	}
	for arm, usd := range map[string]string{"static": "416", "scaled": "208"} {
		write(filepath.Join("arms", arm, "summary.json"), `{"scenario": "s", "fleet": {"replicas": 8, "gpus": 64}, "cost": {"usd": `+usd+`, "gpu_hours": 64}}`)
	}
	write("timeseries.csv", "arm,replication,time_s,available_replicas,provisioned_replicas\nstatic,0,0,8,8\nstatic,0,60,8,8\nscaled,0,0,2,2\nscaled,0,60,2,4\n")
	write("replications.csv", "arm,replication,seed,cost.usd_per_month,goodput.slo_attainment\nstatic,0,1,299520,1\nstatic,1,2,299520,0.999\nscaled,0,1,149760,0.99\nscaled,1,2,149760,0.98\n")
	rates, err := readRates(dir)
	require.NoError(t, err)
	require.Equal(t, map[string]float64{"static": 52, "scaled": 26}, rates)
	written, err := Dir(dir)
	require.NoError(t, err)
	require.Contains(t, written, filepath.Join(dir, "plots", "usd_per_hour.png"))
	require.Contains(t, written, filepath.Join(dir, "plots", "cost_vs_slo.svg"))

	write("replications.csv", "arm,replication,seed,cost.usd_per_month,goodput.slo_attainment\nstatic,0,1,299520,1.5\n")
	_, err = Dir(dir)
	require.ErrorIs(t, err, ErrBadInput)
	require.ErrorContains(t, err, "replications.csv:2")
}

// A fleet of groups is drawn split: a reserved group flat at all its
// replicas whatever is provisioned, an on-demand group at its provisioned
// replicas less its spot ones, those at the spot fraction, and the total.
func TestCostTimelineByGroup(t *testing.T) {
	gs := []GroupPrice{
		{Name: "base", Replicas: 2, Reserved: true, USDPerH: 4},
		{Name: "burst", Replicas: 4, USDPerH: 18, SpotFrac: 0.5},
	}
	pt := func(ts, base, burst, spot float64) TimePoint {
		return TimePoint{TimeS: ts, ProvisionedReplicas: base + burst,
			Groups: map[string]float64{"base": base, "burst": burst}, Spot: map[string]float64{"burst": spot}}
	}
	pts := []TimePoint{pt(0, 1, 0, 0), pt(10, 2, 4, 2), pt(20, 0, 1, 1)}
	base, _ := groupUSDPerHour(gs[0], pts[0])
	require.Equal(t, 2*4.0, base, "reserved: both replicas, though one is provisioned")
	own, spot := groupUSDPerHour(gs[1], pts[1])
	require.Equal(t, 2*18.0, own, "two on-demand of four provisioned")
	require.Equal(t, 2*18*0.5, spot, "two spot at half price")
	own, spot = groupUSDPerHour(gs[1], pts[2])
	require.Equal(t, 0.0, own)
	require.Equal(t, 9.0, spot)

	f, err := CostTimeline(Meta{GroupPrices: map[string][]GroupPrice{"": gs}}, pts, nil)
	require.NoError(t, err, "no blended rate needed when split")
	require.InDelta(t, headroom(8+36+18, 1), f.Plot.Y.Max, 1e-9, "the axis fits the highest total, $62/h")
	text := legendText(t, f)
	for _, want := range []string{"base (reserved, flat)", "burst (on-demand)", "burst (spot at 0.5×)", "total $ per hour"} {
		require.Contains(t, text, want)
	}
	require.NotContains(t, text, "base (spot")

	// Without the per-group columns the arm falls back to one blended line.
	plain := []TimePoint{{TimeS: 0, ProvisionedReplicas: 3}, {TimeS: 10, ProvisionedReplicas: 6}}
	f, err = CostTimeline(Meta{GroupPrices: map[string][]GroupPrice{"": gs}}, plain, map[string]float64{"": 10})
	require.NoError(t, err)
	require.NotContains(t, legendText(t, f), "total")
}

// Dir reads the groups' prices from summary.json and the per-group columns
// of timeseries.csv; a negative count is an error naming file, line and
// column.
func TestDirCostByGroup(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644))
	}
	write("summary.json", `{"scenario": "g", "fleet": {"replicas": 6, "gpus": 10, "groups": [
 {"name": "base", "tp": 1, "replicas": 2, "tier": "reserved", "price_per_gpu_hour": 4},
 {"name": "burst", "tp": 2, "replicas": 4, "tier": "on-demand", "price_per_gpu_hour": 9}]},
 "cost": {"usd": 10, "gpu_hours": 5}, "spot": {"replicas": 2, "group": "burst", "price_fraction": 0.35}}`)
	write("timeseries.csv", "arm,replication,time_s,provisioned_replicas,provisioned_replicas.base,provisioned_replicas.burst,provisioned_spot_replicas.burst\n,0,0,3,2,1,0\n,0,60,6,2,4,2\n")
	_, groups, flat, err := readPrices(dir)
	require.NoError(t, err)
	require.Empty(t, flat, "a fleet of groups is split, not flat")
	require.Equal(t, []GroupPrice{{Name: "base", Replicas: 2, Reserved: true, USDPerH: 4}, {Name: "burst", Replicas: 4, USDPerH: 18, SpotFrac: 0.35}}, groups[""])
	written, err := Dir(dir)
	require.NoError(t, err)
	require.Contains(t, written, filepath.Join(dir, "plots", "usd_per_hour.png"))

	write("timeseries.csv", "arm,replication,time_s,provisioned_replicas,provisioned_replicas.base\n,0,0,3,-1\n")
	_, err = Dir(dir)
	require.ErrorIs(t, err, ErrBadInput)
	require.ErrorContains(t, err, "timeseries.csv:2: column provisioned_replicas.base")
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
	pts := sizeCostSLO(search)
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
			tb, ok, err := readTable(filepath.Join(dir, c.name))
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
// or the mix) while its summary.json is the directory's own: usd_per_hour
// prices that arm with it instead of failing the whole plot.
func TestDirCostSizeArm(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"scenario": "s", "fleet": {"replicas": 3, "gpus": 24}, "cost": {"usd": 52, "gpu_hours": 8}}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "timeseries.csv"), []byte("arm,replication,time_s,available_replicas,provisioned_replicas\ncluster.replicas=3,0,0,3,3\ncluster.replicas=3,0,60,3,3\n"), 0o644))
	written, err := Dir(dir)
	require.NoError(t, err)
	require.Contains(t, written, filepath.Join(dir, "plots", "usd_per_hour.svg"))
	m := costMeta(Meta{USDPerReplicaHour: map[string]float64{"": 52}}, []TimePoint{{Arm: "a"}, {Arm: "b"}})
	require.False(t, m.priced([]TimePoint{{Arm: "a"}}), "two arms: no guessing")
}

// A fleet of one kind at the reserved tier pays every replica whether
// provisioned or not: its spend line is flat at all of them (readPrices
// marks it; not with spot, whose replicas are paid while provisioned).
func TestCostTimelineReservedFlat(t *testing.T) {
	dir := t.TempDir()
	write := func(s string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.json"), []byte(s), 0o644))
	}
	write(`{"scenario": "r", "fleet": {"replicas": 4, "gpus": 4}, "cost": {"usd": 8, "gpu_hours": 4, "tier": "reserved"}}`)
	rates, _, flat, err := readPrices(dir)
	require.NoError(t, err)
	require.Equal(t, map[string]float64{"": 4}, flat)
	pts := []TimePoint{{TimeS: 0, ProvisionedReplicas: 1}, {TimeS: 10, ProvisionedReplicas: 3}}
	f, err := CostTimeline(Meta{FlatReplicas: flat}, pts, rates)
	require.NoError(t, err)
	require.InDelta(t, headroom(8, 1), f.Plot.Y.Max, 1e-9, "flat at 4 replicas × $2 per replica-hour")

	write(`{"scenario": "r", "fleet": {"replicas": 4, "gpus": 4}, "cost": {"usd": 8, "gpu_hours": 4, "tier": "on-demand"}}`)
	_, _, flat, err = readPrices(dir)
	require.NoError(t, err)
	require.Empty(t, flat)
	write(`{"scenario": "r", "fleet": {"replicas": 4, "gpus": 4}, "cost": {"usd": 8, "gpu_hours": 4, "tier": "reserved"}, "spot": {"replicas": 1, "price_fraction": 0.5}}`)
	_, _, flat, err = readPrices(dir)
	require.NoError(t, err)
	require.Empty(t, flat, "spot replicas are paid while provisioned")
}
