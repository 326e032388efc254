package experiments

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// SizeMix on the mixed-gpus built-in (shortened): the answer meets the SLO
// and costs no more than either GPU alone; every pure size and frontier
// point is minimal (one fewer was run and missed).
func TestSizeMix(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~15 fleets")
	}
	sc, err := LoadBuiltin("mixed-gpus")
	require.NoError(t, err)
	sc, err = sc.Derive(OverrideOverlay("workload.duration_s", "120"), OverrideOverlay("run.replications", "2"))
	require.NoError(t, err)
	targets, err := scenario.ParseSLO("ttft_p99=500ms")
	require.NoError(t, err)
	res, err := SizeMix(sc, targets, 0.95, RunOptions{})
	require.NoError(t, err)
	ran := map[[2]int]*MixPoint{}
	for _, p := range res.Evaluated {
		ran[[2]int{p.Counts[0], p.Counts[1]}] = p
	}
	missed := func(a, b int) bool {
		if a+b == 0 {
			return true
		}
		p, ok := ran[[2]int{a, b}]
		return ok && !p.Met
	}
	require.True(t, res.Best.Met)
	for i, p := range res.Pure {
		if p == nil {
			continue
		}
		require.True(t, p.Met)
		require.LessOrEqual(t, res.Best.USDPerMonth, p.USDPerMonth)
		c := p.Counts
		if i == 0 {
			require.Zero(t, c[1])
			require.True(t, missed(c[0]-1, 0), "pure %v is minimal", c)
		} else {
			require.Zero(t, c[0])
			require.True(t, missed(0, c[1]-1), "pure %v is minimal", c)
		}
	}
	for _, p := range res.Frontier {
		require.True(t, p.Met)
		if p.Counts[1] == 1 && res.Pure[0] != nil {
			// (a, 0) misses without a run: a is below the first group's pure size.
			require.Less(t, p.Counts[0], res.Pure[0].Counts[0])
			continue
		}
		require.True(t, missed(p.Counts[0], p.Counts[1]-1), "frontier %v is minimal", p.Counts)
	}
	require.Contains(t, res.Table("mixed-gpus"), "cheapest: ")
	require.Contains(t, string(res.CSV()), "h100,b200,gpus,usd_per_month,met,ttft_p99_bound,slo_attainment,slo_attainment_ci95\n")
}

func TestSizeMixNeedsTwoGroups(t *testing.T) {
	sc, err := LoadBuiltin("default")
	require.NoError(t, err)
	targets, _ := scenario.ParseSLO("ttft_p99=500ms")
	_, err = SizeMix(sc, targets, 0.95, RunOptions{})
	require.ErrorContains(t, err, "two pool sizes")
}

// SizeMix on a disaggregated fleet searches both pool sizes: the answer
// meets the SLO, both pools have at least one replica, and each frontier
// point is minimal in the decode pool.
func TestSizeMixDisagg(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~15 fleets")
	}
	sc, err := LoadBuiltin("pd-disaggregation")
	require.NoError(t, err)
	sc, err = sc.Derive(OverrideOverlay("disagg.enabled", "true"), OverrideOverlay("cluster.replicas", "4"),
		OverrideOverlay("workload.duration_s", "60"), OverrideOverlay("run.replications", "2"))
	require.NoError(t, err)
	targets, err := scenario.ParseSLO("ttft_p99=1000ms,tpot_p99=10ms")
	require.NoError(t, err)
	res, err := SizeMix(sc, targets, 0.95, RunOptions{})
	require.NoError(t, err)
	require.True(t, res.Best.Met)
	require.GreaterOrEqual(t, res.Best.Counts[0], 1)
	require.GreaterOrEqual(t, res.Best.Counts[1], 1)
	require.Nil(t, res.Pure[0])
	require.Nil(t, res.Pure[1])
	ran := map[[2]int]*MixPoint{}
	for _, p := range res.Evaluated {
		ran[[2]int{p.Counts[0], p.Counts[1]}] = p
		require.GreaterOrEqual(t, p.Counts[0], 1, "a prefill pool is never empty")
		require.GreaterOrEqual(t, p.Counts[1], 1, "a decode pool is never empty")
	}
	for _, p := range res.Frontier {
		require.True(t, p.Met)
		if b := p.Counts[1]; b > 1 {
			q, ok := ran[[2]int{p.Counts[0], b - 1}]
			require.True(t, ok && !q.Met, "frontier %v is minimal", p.Counts)
		}
	}
	require.Contains(t, res.Table("pd"), "cheapest: prefill=")
	t.Log("\n" + res.Table("pd"))
}

// TestSizeMixWithDownReplicas: N+1 on one group of a mix. The search never
// tries a count of that group that would leave it nothing in service (a
// whole group down), every mix it tries keeps the group's replica down,
// and the answer costs at least the answer without it.
func TestSizeMixWithDownReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~30 fleets")
	}
	sc, err := LoadBuiltin("mixed-gpus")
	require.NoError(t, err)
	sc, err = sc.Derive(OverrideOverlay("workload.duration_s", "120"), OverrideOverlay("run.replications", "1"))
	require.NoError(t, err)
	ov, err := overrideOverlay(sc, "--param", "cluster.groups.1.down_replicas", "1")
	require.NoError(t, err)
	down, err := sc.Derive(ov)
	require.NoError(t, err)
	require.Equal(t, 1, down.Cluster.Groups[1].DownReplicas)
	targets, err := scenario.ParseSLO("ttft_p99=500ms")
	require.NoError(t, err)
	without, err := SizeMix(sc, targets, 0.95, RunOptions{})
	require.NoError(t, err)
	with, err := SizeMix(down, targets, 0.95, RunOptions{})
	require.NoError(t, err)
	require.True(t, with.Best.Met)
	for _, p := range with.Evaluated {
		require.NotEqual(t, 1, p.Counts[1], "a mix %v with its one %s replica down is not tried", p.Counts, with.Axes[1].Name)
		if p.Counts[1] > 0 {
			require.Equal(t, 1, p.Arm.Reps[0].Summary.Fleet.Groups[1].DownReplicas, "%v", p.Counts)
		}
	}
	require.GreaterOrEqual(t, with.Best.USDPerMonth, without.Best.USDPerMonth)
	t.Logf("cheapest without a replica down: %v $%.0f; with one %s replica down: %v $%.0f",
		without.Best.Counts, without.Best.USDPerMonth, with.Axes[1].Name, with.Best.Counts, with.Best.USDPerMonth)
}

// TestSplitwiseSize: `fleetsim size splitwise` moves both pools of a
// disaggregated fleet on two GPU types, each priced at its own GPU (H100
// prefill, H200 decode), and returns the cheapest pair that meets the
// [size] SLO: one fewer of either pool beside it misses (or is not
// cheaper), and its $ per month is the sum over the pools of replicas ×
// GPUs × price × 720 h, the price the runs bill.
func TestSplitwiseSize(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~30 fleets")
	}
	sc, err := LoadBuiltin("splitwise")
	require.NoError(t, err)
	targets, err := scenario.ParseSLO(sc.Size.SLO)
	require.NoError(t, err)
	res, err := SizeMix(sc, targets, sc.Size.Confidence, RunOptions{})
	require.NoError(t, err)
	require.Equal(t, [2]string{"H100", "H200"}, [2]string{res.Axes[0].GPU, res.Axes[1].GPU})
	require.Equal(t, [2]float64{6.50, 7.00}, [2]float64{res.Axes[0].PricePerGPUHour, res.Axes[1].PricePerGPUHour}, "H100 prefill, H200 decode")
	require.Equal(t, [2]int{4, 2}, [2]int{res.Axes[0].GPUsPer, res.Axes[1].GPUsPer})
	best := res.Best
	require.True(t, best.Met)
	a, b := best.Counts[0], best.Counts[1]
	require.InDelta(t, (float64(a*4)*6.50+float64(b*2)*7.00)*720, best.USDPerMonth, 1e-6)
	require.Equal(t, a*4+b*2, best.GPUs)
	// The runs bill the same fleet at the same prices.
	require.InDelta(t, best.USDPerMonth, report.StatMap(best.Arm.Stats)["cost.usd_per_month"].Mean, 1e-6)
	// The search moved both pools: it tried more than one count of each.
	seen := [2]map[int]bool{{}, {}}
	ran := map[[2]int]*MixPoint{}
	for _, p := range res.Evaluated {
		seen[0][p.Counts[0]], seen[1][p.Counts[1]] = true, true
		ran[[2]int{p.Counts[0], p.Counts[1]}] = p
	}
	require.Greater(t, len(seen[0]), 1)
	require.Greater(t, len(seen[1]), 1)
	// Minimal: one fewer decode replica beside it missed, and so did every
	// prefill count below it (with any decode count tried).
	if q, ok := ran[[2]int{a, b - 1}]; b > 1 {
		require.True(t, ok && !q.Met, "one fewer decode replica than %v misses", best.Counts)
	}
	for _, p := range res.Evaluated {
		if p.Counts[0] < a {
			require.False(t, p.Met, "%v", p.Counts)
		}
	}
	// The built-in's fleet is the answer (its README row and arms say so).
	require.Equal(t, [2]int{sc.Cluster.Replicas, sc.Disagg.Decode.Replicas}, [2]int{a, b})
	tab := res.Table("splitwise")
	require.Contains(t, tab, "prefill = replicas of the prefill pool: 4× H100 each at $6.50 per GPU-hour")
	require.Contains(t, tab, "decode = replicas of the decode pool: 2× H200 each at $7.00 per GPU-hour")
	require.Contains(t, string(res.CSV()), "prefill,decode,gpus,usd_per_month,met,ttft_p99_bound,tpot_p99_bound,")
	t.Log("\n" + tab)
}

// The decode pool's price, which SizeMix searches with and the runs bill:
// its own GPU's catalog price; cost.price_per_gpu_hour prices the
// cluster's GPU, so the decode pool's too only when it is on that GPU.
func TestDecodePrice(t *testing.T) {
	sc, err := LoadBuiltin("splitwise")
	require.NoError(t, err)
	require.Equal(t, 7.00, sc.DecodePrice())
	over, err := sc.Derive(OverrideOverlay("cost.price_per_gpu_hour", "3"))
	require.NoError(t, err)
	require.Equal(t, 3.0, over.Price())
	require.Equal(t, 7.00, over.DecodePrice(), "the H200 pool keeps its own price")
	same, err := over.Derive(OverrideOverlay("disagg.decode.gpu", "\"H100\""), OverrideOverlay("disagg.decode.tp", "4"))
	require.NoError(t, err)
	require.Equal(t, 3.0, same.DecodePrice(), "on the cluster's GPU, the scenario's price")
	res, err := over.Derive(OverrideOverlay("cost.tier", "\"reserved\""))
	require.NoError(t, err)
	require.Equal(t, 2.50, res.DecodePrice(), "H200 reserved")
}

// sizeSplitwise sizes a minute of the splitwise built-in (2
// replications) with the overlays, for its [size] SLO, and requires an
// answer that meets it.
func sizeSplitwise(t *testing.T, ovs ...scenario.Overlay) *MixResult {
	t.Helper()
	sc, err := LoadBuiltin("splitwise")
	require.NoError(t, err)
	sc, err = sc.Derive(append([]scenario.Overlay{OverrideOverlay("workload.duration_s", "60"), OverrideOverlay("run.replications", "2")}, ovs...)...)
	require.NoError(t, err)
	targets, err := scenario.ParseSLO(sc.Size.SLO)
	require.NoError(t, err)
	res, err := SizeMix(sc, targets, 0.95, RunOptions{})
	require.NoError(t, err)
	require.True(t, res.Best.Met)
	return res
}

// Sizing a disaggregated fleet with spot replicas and warm spares in both
// pools: every point keeps the spares, puts as many spot replicas as fit
// (fewer where a pool is smaller than [spot] asks), and prices them as
// the runs bill them.
func TestSizeMixDisaggSpotSpares(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~30 fleets")
	}
	res := sizeSplitwise(t, OverrideOverlay("spot.replicas", "2"), OverrideOverlay("spot.decode_replicas", "1"),
		OverrideOverlay("failures.enabled", "true"), OverrideOverlay("failures.spares", "1"), OverrideOverlay("failures.decode_spares", "1"))
	require.Equal(t, [2]int{2, 1}, [2]int{res.Axes[0].Spot, res.Axes[1].Spot})
	for _, p := range res.Evaluated {
		a, b := p.Counts[0], p.Counts[1]
		require.Equal(t, []int{1, 1}, p.Spares, "%v", p.Counts)
		require.Equal(t, (a+1)*4+(b+1)*2, p.GPUs, "%v", p.Counts)
		spotA := min(2, a)
		want := (float64((a+1-spotA)*4)*6.50 + float64(spotA*4)*6.50*0.35 + float64(b*2)*7.00 + 2*7.00*0.35) * 720
		require.InDelta(t, want, p.USDPerMonth, 1e-6, "%v", p.Counts)
		require.InDelta(t, p.USDPerMonth, report.StatMap(p.Arm.Stats)["cost.usd_per_month"].Mean, 1e-6, "%v: billed as searched", p.Counts)
	}
	require.Contains(t, res.Table("sw"), "pools' warm spares (the cheapest's: prefill 1, decode 1)")
	require.Contains(t, res.Table("sw"), "pools' spot replicas (prefill 2, decode 1;")
}

// Sizing a disaggregated fleet whose pools are autoscaled: the counts are
// the autoscalers' caps, so the search tries none below a pool's
// min_replicas (a smaller cap is not a valid fleet); a point's $ per
// month prices its caps, and PaidUSDPerMonth is what its runs paid
// (provisioned replicas only), never more.
func TestSizeMixDisaggAutoscaled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~20 fleets")
	}
	res := sizeSplitwise(t, OverrideOverlay("workload.arrival.rate_per_s", "30"), // what the pools' minimums serve: 60 s leaves no time to scale
		OverrideOverlay("autoscale.enabled", "true"), OverrideOverlay("autoscale.metric", `"rate"`), OverrideOverlay("autoscale.target", "15"),
		OverrideOverlay("autoscale.min_replicas", "3"), OverrideOverlay("autoscale.interval_s", "10"),
		OverrideOverlay("disagg.autoscale.enabled", "true"), OverrideOverlay("disagg.autoscale.metric", `"outstanding"`),
		OverrideOverlay("disagg.autoscale.target", "64"), OverrideOverlay("disagg.autoscale.min_replicas", "2"),
		OverrideOverlay("disagg.autoscale.interval_s", "10"))
	require.Equal(t, [2]int{3, 2}, [2]int{res.Axes[0].Min, res.Axes[1].Min})
	for _, p := range res.Evaluated {
		require.GreaterOrEqual(t, p.Counts[0], 3, "%v", p.Counts)
		require.GreaterOrEqual(t, p.Counts[1], 2, "%v", p.Counts)
		paid := report.StatMap(p.Arm.Stats)["cost.usd_per_month"].Mean
		require.InDelta(t, paid, p.PaidUSDPerMonth, 1e-6)
		require.LessOrEqual(t, p.PaidUSDPerMonth, p.USDPerMonth+1e-6, "%v", p.Counts)
	}
	require.Contains(t, res.Table("sw"), "autoscaled")
	t.Log("\n" + res.Table("sw"))
}
