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

// TestZombieLivenessVsDeepProbe: a hung TP=8 replica passes liveness
// probes and keeps receiving traffic until requests time out; a deep probe
// takes it out of rotation within one probe interval.
func TestZombieLivenessVsDeepProbe(t *testing.T) {
	base := mustParse(t, `
name = "zombie"
[cluster]
gpu = "H100"
model = "llama-3-70b"
tp = 8
replicas = 4
[router]
name = "round-robin"
[workload]
duration_s = 300
[workload.arrival]
rate_per_s = 8
[workload.input]
dist = "lognormal"
mean = 800
p99 = 3000
[workload.output]
dist = "lognormal"
mean = 100
p99 = 600
[policies]
timeout_s = 10
total_timeout_s = 120
[policies.probe]
interval_s = 5
failures_to_eject = 1
[[faults]]
at_s = 60
replica = 2
mode = "hang"
`)
	run := func(kind string) *Summary {
		sc, err := base.Derive(OverrideOverlay("policies.probe.kind", `"`+kind+`"`))
		require.NoError(t, err)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		return Summarize(res)
	}
	live, deep := run("liveness"), run("deep")
	t.Logf("liveness: timeouts %d, ejections %d; deep: timeouts %d, ejections %d, isolated after %.0f ms",
		live.Resilience.Timeouts, live.Resilience.Ejections, deep.Resilience.Timeouts, deep.Resilience.Ejections, deep.Resilience.IsolationMsMax)
	require.Zero(t, live.Resilience.Ejections, "liveness probes pass a zombie")
	require.Greater(t, live.Resilience.Timeouts, int64(200), "it keeps receiving a quarter of the traffic, which times out")
	require.EqualValues(t, 1, deep.Resilience.Ejections)
	require.LessOrEqual(t, deep.Resilience.IsolationMsMax, 5000.0, "out of rotation within one probe interval")
	require.Less(t, deep.Resilience.Timeouts, live.Resilience.Timeouts/10)
}
