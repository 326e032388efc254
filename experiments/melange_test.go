package experiments

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// The Mélange direction (issue 14): on melange-mix, size finds that no
// all-L4 fleet meets p99 TTFT (the L4s cannot prefill the long documents in
// time), and that an H100 + L4 mix under the cost-aware router is cheaper
// than the fewest H100s that meet it. The same mix under capacity-weighted
// routing misses the SLO: the saving needs size-aware routing.
func TestMelangeMixCheaperThanPure(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ~20 fleets")
	}
	sc, err := LoadBuiltin("melange-mix")
	require.NoError(t, err)
	targets, err := scenario.ParseSLO("ttft_p99=1000ms")
	require.NoError(t, err)
	res, err := SizeMix(sc, targets, 0.95, RunOptions{})
	require.NoError(t, err)
	require.Nil(t, res.Pure[1], "no all-L4 fleet meets the SLO")
	require.NotNil(t, res.Pure[0])
	best := res.Best
	require.True(t, best.Met)
	require.Positive(t, best.Counts[0])
	require.Positive(t, best.Counts[1], "the cheapest fleet is a mix")
	require.Less(t, best.USDPerMonth, res.Pure[0].USDPerMonth)

	weighted, err := sc.Derive(groupsOverlay(sc.Cluster.Groups, best.Counts[0], best.Counts[1]),
		OverrideOverlay("router.name", `"weighted-least-outstanding"`))
	require.NoError(t, err)
	reps, err := runMany([]*scenario.Scenario{weighted}, RunOptions{})
	require.NoError(t, err)
	met, _ := meets(report.NewArmResult("weighted", reps[0]), targets, 0.95)
	require.False(t, met, "the same mix under capacity-weighted routing misses the SLO")
}
