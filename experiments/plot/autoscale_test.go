package plot

import (
	"math"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// Under autoscaling the replicas paid for (loading, serving, draining) are
// drawn beside those in service; a file without the column draws only the
// replicas in service.
func TestAvailabilityShowsProvisioned(t *testing.T) {
	pts := []TimePoint{
		{Arm: "a", TimeS: 0, AvailableReplicas: 2, ProvisionedReplicas: 2},
		{Arm: "a", TimeS: 10, AvailableReplicas: 2, ProvisionedReplicas: 6},
		{Arm: "a", TimeS: 20, AvailableReplicas: 6, ProvisionedReplicas: 6},
	}
	f, err := Availability(Meta{}, pts)
	require.NoError(t, err)
	require.Equal(t, 7.0, f.Plot.Y.Max, "the axis fits the provisioned line (6 · 1.1, rounded up)")
	require.Contains(t, legendText(t, f), "provisioned (paid)")
	for i := range pts {
		pts[i].ProvisionedReplicas = math.NaN()
	}
	f, err = Availability(Meta{}, pts)
	require.NoError(t, err)
	text := legendText(t, f)
	require.Contains(t, text, "in service")
	require.NotContains(t, text, "provisioned")
}

func legendText(t *testing.T, f Figure) string {
	t.Helper()
	written, err := Write(t.TempDir(), f)
	require.NoError(t, err)
	b, err := os.ReadFile(written[1])
	require.NoError(t, err)
	return svgText(t, b)
}

// Arms with the same failure timeline (common random numbers) are drawn as
// one line labelled with both, and their marks are counted once; an arm
// whose timeline differs keeps its own line.
func TestFailuresTimelineSameArmsDrawnOnce(t *testing.T) {
	evs := func(arm string, frac float64) []FailureEvent {
		return []FailureEvent{
			{Arm: arm, TimeS: 100, Event: "fail", Unit: "replica 1", GPUsDown: 8, CapacityFrac: frac},
			{Arm: arm, TimeS: 900, Event: "repair", Unit: "replica 1", CapacityFrac: 1},
		}
	}
	m := Meta{Scenario: "x", HorizonS: 3600}
	f, err := FailuresTimeline(m, append(evs("nvl72", 0.9), evs("hgx", 0.9)...))
	require.NoError(t, err)
	text := legendText(t, f)
	require.Contains(t, text, "nvl72, hgx: available capacity (the same)")
	require.Contains(t, text, "failure (1)")
	require.Contains(t, text, "repair (1)")

	f, err = FailuresTimeline(m, append(evs("nvl72", 0.9), evs("hgx", 0.5)...))
	require.NoError(t, err)
	text = legendText(t, f)
	require.Contains(t, text, "nvl72: available capacity")
	require.Contains(t, text, "hgx: available capacity")
	require.NotContains(t, text, "the same")
	require.Contains(t, text, "failure (2)")
}
