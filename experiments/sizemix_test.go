package experiments

import (
	"testing"

	"github.com/stretchr/testify/require"
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
	targets, err := ParseSLO("ttft_p99=500ms")
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
	require.Contains(t, string(res.CSV()), "h100,b200,gpus,usd_per_month,met,ttft_p99_bound\n")
}

func TestSizeMixNeedsTwoGroups(t *testing.T) {
	sc, err := LoadBuiltin("default")
	require.NoError(t, err)
	targets, _ := ParseSLO("ttft_p99=500ms")
	_, err = SizeMix(sc, targets, 0.95, RunOptions{})
	require.ErrorContains(t, err, "two groups")
}
