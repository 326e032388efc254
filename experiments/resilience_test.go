package experiments

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func runBuiltinAB(t *testing.T, name string, reps int) *ABResult {
	t.Helper()
	base, err := LoadBuiltin(name)
	require.NoError(t, err)
	if reps > 0 {
		base, err = base.Derive(OverrideOverlay("run.replications", itoa(reps)))
		require.NoError(t, err)
	}
	arms, err := ArmsFromScenario(base)
	require.NoError(t, err)
	res, err := RunAB(arms, RunOptions{})
	require.NoError(t, err)
	t.Log("\n" + res.Report())
	return res
}

func itoa(i int) string { return fmtF(float64(i)) }

func mean(a *ArmResult, key string) float64 { return StatMap(a.Stats)[key].Mean }

// TestResilience4Layer: with a zombie and an OOM crash, the 4-layer stack
// (breaker, hedging, deep probe, retries) raises success and cuts p99 on
// the same arrivals and faults; hedging costs a few percent of extra work.
func TestResilience4Layer(t *testing.T) {
	res := runBuiltinAB(t, "resilience-4layer", 2)
	a, b := res.Arms[0], res.Arms[1]
	require.Equal(t, mean(a, "requests.arrived"), mean(b, "requests.arrived"))
	require.Greater(t, mean(b, "resilience.success_rate"), mean(a, "resilience.success_rate")+0.05)
	require.Greater(t, mean(b, "resilience.success_rate"), 0.99)
	require.Less(t, 5*mean(b, "latency_ms.ttft_client.p99"), mean(a, "latency_ms.ttft_client.p99"),
		"counting what failed requests waited, B's p99 is far lower")
	require.InDelta(t, 0.05, mean(b, "resilience.hedge_rate"), 0.03, "hedging costs about 5% extra requests")
	require.Positive(t, mean(b, "resilience.ejections"))
	require.Positive(t, mean(b, "resilience.isolated"))
}

// TestTailAtScale: hedging at the p95 TTFT cuts the p99.9 TTFT sharply for
// about 5% extra requests (Dean & Barroso).
func TestTailAtScale(t *testing.T) {
	res := runBuiltinAB(t, "tail-at-scale", 2)
	a, b := res.Arms[0], res.Arms[1]
	require.Less(t, mean(b, "latency_ms.ttft.p999"), 0.5*mean(a, "latency_ms.ttft.p999"))
	require.InDelta(t, mean(a, "latency_ms.ttft.p50"), mean(b, "latency_ms.ttft.p50"), 0.2*mean(a, "latency_ms.ttft.p50"),
		"the median barely moves")
	require.Less(t, mean(b, "resilience.hedge_rate"), 0.08)
	require.Positive(t, mean(b, "resilience.hedge_rate"))
}
