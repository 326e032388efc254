package experiments

import (
	"testing"

	"github.com/stretchr/testify/require"

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
