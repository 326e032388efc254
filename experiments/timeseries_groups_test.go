package experiments

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// groupsTimeseriesSrc is an autoscaled fleet of two groups (a reserved
// H100 base, an on-demand B200 burst group of which the last two replicas
// are spot) under a load that rises and falls.
const groupsTimeseriesSrc = `name = "tsg"
seed = 3
[cluster]
model = "llama-3-8b"
[[cluster.groups]]
name = "base"
gpu = "H100"
tp = 1
replicas = 2
tier = "reserved"
[[cluster.groups]]
name = "burst"
gpu = "B200"
tp = 2
replicas = 4
[workload]
duration_s = 900
[workload.arrival]
process = "piecewise"
points = [[0, 2], [300, 60], [600, 60], [900, 1]]
[cost]
power = false
[autoscale]
enabled = true
metric = "outstanding"
target = 8
min_replicas = 1
interval_s = 10
scale_up_cooldown_s = 10
scale_down_window_s = 30
[autoscale.cold_start]
engine_start_s = 5
warmup_s = 1
[spot]
group = "burst"
replicas = 2
interruptions_per_hour = 1
notice_s = 30
replace_s = 60
[policies.retry]
name = "budgeted"
`

// timeseries.csv of a fleet of groups has one provisioned_replicas.GROUP
// column per group, summing to provisioned_replicas at every sample, and a
// provisioned_spot_replicas.GROUP column for the spot group, never more
// than the group's provisioned replicas nor its spot replicas; under
// autoscaling the burst group's count moves. A fleet of one kind keeps the
// fixed header (no trailing columns).
func TestTimeseriesGroupColumns(t *testing.T) {
	sc, err := scenario.Parse("tsg.toml", []byte(groupsTimeseriesSrc))
	require.NoError(t, err)
	reps, err := RunReplications(sc, RunOptions{})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, report.WriteRunDir(dir, []*report.ArmResult{report.NewArmResult("", reps)}, ""))
	recs := readFile(t, filepath.Join(dir, "timeseries.csv"))
	h := recs[0]
	fixed := results.TimeseriesFile.Names()
	require.Equal(t, fixed, h[:len(fixed)])
	require.Equal(t, []string{"provisioned_replicas.base", "provisioned_replicas.burst", "provisioned_spot_replicas.burst",
		"usd_per_hour.base", "usd_per_hour.burst", "spot_usd_per_hour.burst"}, h[len(fixed):])
	col := func(name string) int {
		for j, n := range h {
			if n == name {
				return j
			}
		}
		t.Fatalf("no column %s", name)
		return -1
	}
	prov, base, burst, spot := col("provisioned_replicas"), col("provisioned_replicas.base"), col("provisioned_replicas.burst"), col("provisioned_spot_replicas.burst")
	num := func(s string) int {
		n, err := strconv.Atoi(s)
		require.NoError(t, err, s)
		return n
	}
	lo, hi := 1<<30, -1
	for _, r := range recs[1:] {
		b, u, s := num(r[base]), num(r[burst]), num(r[spot])
		require.Equal(t, num(r[prov]), b+u, "the groups' columns sum to provisioned_replicas: %v", r)
		require.LessOrEqual(t, b, 2)
		require.LessOrEqual(t, u, 4)
		require.LessOrEqual(t, s, min(u, 2), "spot replicas are some of the burst group's: %v", r)
		lo, hi = min(lo, u), max(hi, u)
	}
	require.Less(t, lo, hi, "the autoscaler moves the burst group (%d..%d)", lo, hi)

	// The spend columns, from the one price model: the reserved base group
	// flat at both its replicas whatever is provisioned, the groups summing
	// to usd_per_hour, the spot part of the burst group's; over the run
	// they add up to the bill (cost.usd, without power) within the
	// samples' resolution.
	f := func(s string) float64 {
		x, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err, s)
		return x
	}
	usd, uBase, uBurst, uSpot := col("usd_per_hour"), col("usd_per_hour.base"), col("usd_per_hour.burst"), col("spot_usd_per_hour.burst")
	h100 := sc.GroupPrice(sc.Cluster.Groups[0])
	integral := 0.0
	for k, r := range recs[1:] {
		require.InDelta(t, 2*h100, f(r[uBase]), 1e-6, "reserved: flat: %v", r)
		require.InDelta(t, f(r[usd]), f(r[uBase])+f(r[uBurst]), 1e-5, "%v", r)
		require.LessOrEqual(t, f(r[uSpot]), f(r[uBurst]))
		if k+2 < len(recs) {
			integral += f(r[usd]) * (f(recs[k+2][col("time_s")]) - f(r[col("time_s")])) / 3600
		}
	}
	require.InEpsilon(t, reps[0].Summary.Cost.USD, integral, 0.03, "the spend rate integrates to the bill")

	// Deterministic: a second run writes the same bytes.
	reps2, err := RunReplications(sc, RunOptions{})
	require.NoError(t, err)
	dir2 := t.TempDir()
	require.NoError(t, report.WriteRunDir(dir2, []*report.ArmResult{report.NewArmResult("", reps2)}, ""))
	b1, err := os.ReadFile(filepath.Join(dir, "timeseries.csv"))
	require.NoError(t, err)
	b2, err := os.ReadFile(filepath.Join(dir2, "timeseries.csv"))
	require.NoError(t, err)
	require.True(t, bytes.Equal(b1, b2))

	// One kind of replica: the fixed header only.
	one := t.TempDir()
	require.NoError(t, report.WriteRunDir(one, []*report.ArmResult{armNamed(t, "")}, ""))
	require.Equal(t, fixed, readFile(t, filepath.Join(one, "timeseries.csv"))[0])
}
