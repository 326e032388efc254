package experiments

import (
	"bytes"
	"fmt"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/internal/streams"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"

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

func itoa(i int) string { return results.FormatFloat(float64(i)) }

func mean(a *report.ArmResult, key string) float64 { return report.StatMap(a.Stats)[key].Mean }

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
	require.Positive(t, mean(b, "cost.wasted.discarded_usd"), "losing hedges and lost work are priced")
	require.Less(t, mean(b, "cost.wasted.discarded_usd"), mean(b, "cost.usd"))
	require.Positive(t, mean(b, "resilience.ejections"))
	require.Positive(t, mean(b, "resilience.isolated"))
	// The seed's latency columns beside fleetsim's (docs/builtins.md
	// explains each difference): p50 480 -> 320 ms, p99 12.4 -> 2.15 s,
	// isolation 1.2 s. Here the median is a healthy prefill in both arms
	// (3 of 4 replicas never fault, at 25% load), the p99 counting what
	// failed requests waited falls from the client timeout to a healthy
	// tail, and isolation takes the probes' interval.
	p50a, p50b := mean(a, "latency_ms.ttft.p50"), mean(b, "latency_ms.ttft.p50")
	t.Logf("p50 TTFT %.0f -> %.0f ms (seed 480 -> 320); p99 client TTFT %.0f -> %.0f ms (seed 12,400 -> 2,150); isolation max %.0f ms (seed 1,200)",
		p50a, p50b, mean(a, "latency_ms.ttft_client.p99"), mean(b, "latency_ms.ttft_client.p99"), mean(b, "resilience.isolation_ms_max"))
	require.InEpsilon(t, p50a, p50b, 0.05, "the median does not move here")
	require.Less(t, mean(a, "latency_ms.ttft_client.p99"), 16000.0, "A's tail is the 15 s client timeout")
	require.Greater(t, mean(a, "latency_ms.ttft_client.p99"), 10000.0)
	require.LessOrEqual(t, mean(b, "resilience.isolation_ms_max"), 10000.0, "isolated within two 5 s probe intervals")
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

// TestHedgingDoesNotHurtTypicalTTFT pins issue 12's acceptance on the
// tail-at-scale built-in (least-outstanding routing), paired over 10
// replications: neither the default hedge (adaptive at the p95, per prompt
// length) nor hedging stalled replicas only worsens p50, p90 or p99 TTFT
// beyond noise (paired 95% CI), and both cut the p99 and p99.9. Before the
// p95 was taken per prompt length, the p95 of all TTFTs mostly hedged long
// prompts, slow by nature, and their duplicated prefills cost p90 +5.3% ±
// 0.8% (per_prompt_length = false still does: checked here too); before
// withdrawn copies stayed counted in Outstanding, p90 +19%.
func TestHedgingDoesNotHurtTypicalTTFT(t *testing.T) {
	if testing.Short() {
		t.Skip("3 arms x 10 replications")
	}
	res := runBuiltinAB(t, "tail-at-scale", 10)
	require.Equal(t, []string{"no-hedge", "hedge-p95", "hedge-stalled"}, []string{res.Arms[0].Name, res.Arms[1].Name, res.Arms[2].Name})
	diff := func(res *ABResult, k int, key string) PairedDiff {
		for _, d := range res.Diffs[k-1] { // arm k against arm 0
			if d.Key == key {
				t.Logf("%-14s %-24s %9.3f -> %9.3f  %+7.2f%% ± %.2f%%", res.Arms[k].Name, key, d.A, d.B, 100*d.Rel, 100*d.RelCI)
				return d
			}
		}
		t.Fatalf("no %s", key)
		return PairedDiff{}
	}
	for k := 1; k <= 2; k++ {
		for _, q := range []string{"p50", "p90", "p99"} {
			d := diff(res, k, "latency_ms.ttft."+q)
			require.LessOrEqual(t, d.Diff, d.DiffCI, "%s does not worsen %s TTFT beyond noise", res.Arms[k].Name, q)
		}
		d := diff(res, k, "latency_ms.ttft.p99")
		require.Less(t, d.Diff, -d.DiffCI, "%s improves the p99", res.Arms[k].Name)
		require.Less(t, diff(res, k, "latency_ms.ttft.p999").Rel, -0.5)
	}
	require.Less(t, mean(res.Arms[1], "resilience.hedge_rate"), 0.08)
	require.Less(t, mean(res.Arms[2], "resilience.hedge_rate"), 0.02, "only the requests on stalled replicas are hedged")

	// The p95 of all TTFTs (per_prompt_length = false) hedges long prompts
	// for being long: p90 worse beyond noise.
	sc, err := LoadBuiltin("tail-at-scale")
	require.NoError(t, err)
	sc, err = sc.Derive(OverrideOverlay("run.replications", "10"))
	require.NoError(t, err)
	arms, err := ArmsFromScenario(sc)
	require.NoError(t, err)
	blind, err := arms[1].Scenario.Derive(OverrideOverlay("policies.hedge.per_prompt_length", "false"))
	require.NoError(t, err)
	arms = []Arm{arms[0], {Name: "hedge-p95-all", Scenario: blind}}
	old, err := RunAB(arms, RunOptions{})
	require.NoError(t, err)
	d := diff(old, 1, "latency_ms.ttft.p90")
	require.Greater(t, d.Diff, d.DiffCI, "a p95 over all prompt lengths costs the p90")
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
	run := func(kind string) *report.Summary {
		sc, err := base.Derive(OverrideOverlay("policies.probe.kind", `"`+kind+`"`))
		require.NoError(t, err)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		return report.Summarize(res)
	}
	live, deep := run("liveness"), run("deep")
	t.Logf("liveness: timeouts %d, ejections %d; deep: timeouts %d, ejections %d, isolated after %.0f ms",
		live.Resilience.Timeouts, live.Resilience.Ejections, deep.Resilience.Timeouts, deep.Resilience.Ejections, deep.Resilience.IsolationMsMax)
	require.Zero(t, live.Resilience.Ejections, "liveness probes pass a zombie")
	require.Greater(t, live.Resilience.Timeouts, int64(200), "it keeps receiving a quarter of the traffic, which times out")
	require.EqualValues(t, 1, deep.Resilience.Ejections)
	require.Positive(t, deep.Resilience.ProbeGPUSecs, "deep probes cost GPU time")
	require.Zero(t, live.Resilience.ProbeGPUSecs, "liveness pings do not")
	require.LessOrEqual(t, deep.Resilience.IsolationMsMax, 5000.0, "out of rotation within one probe interval")
	require.Less(t, deep.Resilience.Timeouts, live.Resilience.Timeouts/10)
}

// allPolicies enables every policy on a small faulty fleet.
const allPolicies = `
name = "all-policies"
seed = 3
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 4
[cluster.replica]
kv_blocks = 3000       # tight: preemptions too
[workload]
duration_s = 240
[workload.arrival]
rate_per_s = 25
[workload.input]
dist = "lognormal"
mean = 800
p99 = 4000
[workload.output]
dist = "lognormal"
mean = 150
p99 = 900
[policies]
timeout_s = 3
total_timeout_s = 60
[policies.hedge]
name = "adaptive"
min_samples = 20
budget = 0.2
[policies.breaker]
name = "sliding-window"
[policies.retry]
name = "budgeted"
budget = 0.3
[policies.admission]
name = "queue"
limit = 30
[policies.probe]
kind = "deep"
interval_s = 2
[[faults]]
at_s = 30
replica = 0
mode = "hang"
[[faults]]
at_s = 60
replica = 1
mode = "flap"
duration_s = 60
period_s = 7
pause_s = 1
[[faults]]
at_s = 90
replica = 2
mode = "oom"
restart_s = 5
cold_start_s = 20
[[faults]]
at_s = 100
replica = 3
mode = "slow"
factor = 4
duration_s = 50
[[faults]]
at_s = 150
replica = 1
mode = "stall"
duration_s = 60
period_s = 5
pause_s = 1
`

// TestConservationWithEveryPolicy: with hedges, retries, cancellations,
// timeouts, breakers, probes, admission and every fault mode at once,
// client requests are conserved after every event, copies never leak
// (a replica holds only live copies), and the KV accounting adds up.
func TestConservationWithEveryPolicy(t *testing.T) {
	sc := mustParse(t, allPolicies)
	eng := sim.NewEngine()
	rec := fleet.NewRecorder(sc.SLO)
	fl, err := newFleet(eng, sc, rec)
	require.NoError(t, err)
	for i, fc := range sc.Faults {
		require.NoError(t, failures.NewApplier(eng, fl).Inject(fc, sim.NewStream(sc.Seed, fmt.Sprintf("faults/%d", i))))
	}
	src, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
	require.NoError(t, err)
	require.NoError(t, fl.Start(src))
	fl.StartSampling(10 * sim.Second)
	steps := 0
	for eng.Step() {
		steps++
		require.Equal(t, rec.Arrived, rec.Completed+rec.Failed+rec.Shed+rec.InFlight(), "after event %d", steps)
		require.GreaterOrEqual(t, rec.InFlight(), int64(0))
		held := 0
		for i, r := range fl.Replicas {
			require.NoError(t, r.CheckInvariants(), "after event %d", steps)
			require.GreaterOrEqual(t, r.Outstanding(), 0)
			require.GreaterOrEqual(t, fl.States()[i].OutstandingTokens, int64(0), "replica %d after event %d", i, steps)
			require.GreaterOrEqual(t, fl.States()[i].Waiting, 0, "replica %d after event %d", i, steps)
			require.LessOrEqual(t, fl.States()[i].Waiting, r.Outstanding())
			held += r.Outstanding()
			kv := r.KV()
			require.Equal(t, kv.Total(), kv.Used()+kv.Cached()+kv.Free())
		}
		require.LessOrEqual(t, int64(held), rec.InFlight()+fl.GW.Hedges, "replicas hold live copies only")
	}
	require.Zero(t, rec.InFlight(), "everything ends")
	for i, r := range fl.Replicas {
		require.Zero(t, r.Outstanding())
		require.Zero(t, fl.States()[i].OutstandingTokens, "replica %d", i)
		require.Zero(t, fl.States()[i].Waiting, "replica %d", i)
	}
	gw := fl.GW
	t.Logf("arrived %d completed %d failed %d shed %d; hedges %d retries %d timeouts %d cancelled %d ejections %d",
		rec.Arrived, rec.Completed, rec.Failed, rec.Shed, gw.Hedges, gw.Retries, gw.Timeouts, gw.Cancelled, gw.Ejections)
	require.Positive(t, gw.Hedges)
	require.Positive(t, gw.Retries)
	require.Positive(t, gw.Timeouts)
	require.Positive(t, gw.Cancelled)
	require.Positive(t, gw.Ejections)
}

// TestDeterminismWithEveryPolicy: two runs with every policy and fault
// give identical summaries.
func TestDeterminismWithEveryPolicy(t *testing.T) {
	sc := mustParse(t, allPolicies)
	var outs []string
	for i := 0; i < 2; i++ {
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, report.Summarize(res).WriteJSON(&b))
		outs = append(outs, b.String())
	}
	require.Equal(t, outs[0], outs[1])
}

// TestCacheAffinity: on the same agentic arrivals, prefix-affinity routing
// raises the prefix hit rate and cuts p99 TTFT against round-robin.
func TestCacheAffinity(t *testing.T) {
	res := runBuiltinAB(t, "cache-affinity", 2)
	a, b := res.Arms[0], res.Arms[1]
	require.Greater(t, mean(b, "prefix_cache.hit_rate"), mean(a, "prefix_cache.hit_rate")+0.15)
	require.Less(t, mean(b, "latency_ms.ttft.p99"), mean(a, "latency_ms.ttft.p99"))
	require.Less(t, mean(b, "fleet.mfu"), mean(a, "fleet.mfu"), "less prefill work for the same output")
}

// TestCanaryRollout: a healthy build goes through every step; a broken one
// (30% errors) is rolled back during its 5% canary step, so few clients see
// its errors.
func TestCanaryRollout(t *testing.T) {
	base, err := LoadBuiltin("canary-rollout")
	require.NoError(t, err)
	base, err = base.Derive(OverrideOverlay("run.replications", "1"))
	require.NoError(t, err)
	arms, err := ArmsFromScenario(base)
	require.NoError(t, err)
	for _, arm := range arms {
		res, err := Run(arm.Scenario, Options{})
		require.NoError(t, err)
		s := report.Summarize(res)
		ro := s.Resilience.Rollout
		require.NotNil(t, ro)
		t.Logf("%s: %+v, failed %d of %d", arm.Name, *ro, s.Requests.Failed, s.Requests.Arrived)
		switch arm.Name {
		case "good-build":
			require.Equal(t, "completed", ro.State)
			require.Zero(t, s.Requests.Failed)
		case "broken-build":
			require.Equal(t, "rolled back", ro.State)
			require.Less(t, ro.DetectionS, 30.0)
			require.Less(t, float64(s.Requests.Failed), 0.001*float64(s.Requests.Arrived))
		}
	}
}

// TestCanaryJudges: over ten seeds of the canary-rollout built-in, the
// margin judge's windowed-p99 rule rolls a good build back now and then,
// while the Mann–Whitney judge never does, and still catches a build 1.5×
// slower every time.
func TestCanaryJudges(t *testing.T) {
	base, err := LoadBuiltin("canary-rollout")
	require.NoError(t, err)
	rollbacks := func(judge, slow string) (n int) {
		for seed := 1; seed <= 10; seed++ {
			sc, err := base.Derive(OverrideOverlay("seed", fmt.Sprint(seed)), OverrideOverlay("rollout.judge", fmt.Sprintf("%q", judge)),
				OverrideOverlay("rollout.slow_factor", slow))
			require.NoError(t, err)
			res, err := Run(sc, Options{})
			require.NoError(t, err)
			if report.Summarize(res).Resilience.Rollout.State == "rolled back" {
				n++
			}
		}
		return n
	}
	goodMargin, goodMW := rollbacks("margin", "1"), rollbacks("mann-whitney", "1")
	slowMW := rollbacks("mann-whitney", "1.5")
	t.Logf("good build rolled back: margin %d/10, mann-whitney %d/10; 1.5x slower build: mann-whitney %d/10",
		goodMargin, goodMW, slowMW)
	require.Zero(t, goodMW, "false rollbacks")
	require.Equal(t, 10, slowMW, "missed regressions")
	require.Greater(t, goodMargin, 0, "the margin rule's false rollbacks this test documents are gone: update the README")
}

// TestMaintenanceDrainsGracefully: planned maintenance drains a replica
// (no new traffic, a grace period for what it holds): no request fails,
// and the replica comes back after the work and a cold start.
func TestMaintenanceDrainsGracefully(t *testing.T) {
	sc := mustParse(t, small+`
[[faults]]
at_s = 20
replica = 0
mode = "maintenance"
duration_s = 10
cold_start_s = 5
drain_grace_s = 60
`)
	sc, err := sc.Derive(OverrideOverlay("run.replications", "1"))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	require.Zero(t, s.Requests.Failed, "a graceful drain fails nothing")
	require.Zero(t, s.Requests.Shed)
	minUp, back := 2, false
	for _, sm := range res.Fleet.Samples {
		minUp = min(minUp, sm.AvailableReplicas)
		if sm.Time > 30*sim.Second && sm.AvailableReplicas == 2 {
			back = true
		}
	}
	require.Equal(t, 1, minUp, "out of rotation during maintenance")
	require.True(t, back, "back in rotation afterwards")
}

// TestFallbackPool: when the primary pool is down, a fallback pool (a
// smaller model) serves instead of shedding.
func TestFallbackPool(t *testing.T) {
	sc := mustParse(t, small+`
[[faults]]
at_s = 20
replica = 0
mode = "fail"
restart_s = 0
[[faults]]
at_s = 20
replica = 1
mode = "fail"
restart_s = 0
`)
	sc, err := sc.Derive(OverrideOverlay("run.replications", "1"))
	require.NoError(t, err)
	run := func(fallback bool) *report.Summary {
		d, err := sc.Derive(OverrideOverlay("fallback.enabled", fmt.Sprint(fallback)))
		require.NoError(t, err)
		res, err := Run(d, Options{})
		require.NoError(t, err)
		return report.Summarize(res)
	}
	without, with := run(false), run(true)
	t.Logf("without: shed %d failed %d; with: shed %d failed %d fallbacks %d", without.Requests.Shed, without.Requests.Failed,
		with.Requests.Shed, with.Requests.Failed, with.Resilience.Fallbacks)
	require.Positive(t, without.Requests.Shed, "nothing left to serve after both replicas die")
	require.Zero(t, with.Requests.Shed)
	require.Positive(t, with.Resilience.Fallbacks)
	require.Greater(t, with.Resilience.SuccessRate, without.Resilience.SuccessRate)
	require.Greater(t, with.Cost.USDPerMonth, without.Cost.USDPerMonth, "the fallback pool is paid for")
}

// TestAdmissionShedVersusDefer: under an overload burst, shedding on a
// leading indicator refuses requests at once; deferring holds them at the
// gateway and admits most once the queue drains, at the cost of latency.
func TestAdmissionShedVersusDefer(t *testing.T) {
	sc := mustParse(t, small+`
[policies.admission]
name = "queue"
limit = 4
`)
	run := func(action string) *report.Summary {
		d, err := sc.Derive(OverrideOverlay("run.replications", "1"), OverrideOverlay("workload.arrival.rate_per_s", "250"),
			OverrideOverlay("policies.admission.action", `"`+action+`"`))
		require.NoError(t, err)
		res, err := Run(d, Options{})
		require.NoError(t, err)
		s := report.Summarize(res)
		require.Equal(t, s.Requests.Arrived, s.Requests.Completed+s.Requests.Failed+s.Requests.Shed+s.Requests.InFlight)
		return s
	}
	shed, deferred := run("shed"), run("defer")
	t.Logf("shed: %d shed, p99 TTFT %.0f ms; defer: %d shed, %d deferrals, p99 TTFT %.0f ms",
		shed.Requests.Shed, shed.LatencyMs.TTFT.P99, deferred.Requests.Shed, deferred.Resilience.Deferred, deferred.LatencyMs.TTFT.P99)
	require.Positive(t, shed.Requests.Shed)
	require.Less(t, deferred.Requests.Shed, shed.Requests.Shed)
	require.Positive(t, deferred.Resilience.Deferred)
	require.Greater(t, deferred.LatencyMs.TTFT.P99, shed.LatencyMs.TTFT.P99, "waiting at the gateway shows in TTFT")
}

// TestCacheSaturation: the cache-saturation built-in (2 replications), the
// seeds' cache claim at saturation: a shared KV store raises the prefix
// hit rate from round-robin's ~24% to the workload's ceiling (~87%) and
// the fleet's throughput by more than half (measured 1.79x with 3
// replications); prefix-affinity alone gains less.
func TestCacheSaturation(t *testing.T) {
	res := runBuiltinAB(t, "cache-saturation", 2)
	rr, aff, store, both := res.Arms[0], res.Arms[1], res.Arms[2], res.Arms[3]
	require.Equal(t, "affinity-and-store", both.Name)
	hit := func(a *report.ArmResult) float64 { return mean(a, "prefix_cache.hit_rate") }
	tput := func(a *report.ArmResult) float64 { return mean(a, "throughput.output_tokens_per_s") }
	require.Less(t, hit(rr), 0.35)
	require.Greater(t, hit(store), 0.8)
	require.Greater(t, hit(aff), hit(rr))
	require.Greater(t, tput(store), 1.5*tput(rr))
	require.Greater(t, tput(aff), tput(rr))
	require.Less(t, tput(aff), tput(store))
	require.GreaterOrEqual(t, hit(both), hit(store)-0.01)
}
