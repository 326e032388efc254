package experiments

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/stretchr/testify/require"
)

// small is a fast scenario for tests of the experiment machinery.
const small = `
name = "small"
seed = 7
[run]
replications = 4
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 2
[workload]
duration_s = 60
[workload.arrival]
rate_per_s = 20
[workload.input]
dist = "lognormal"
mean = 600
p99 = 3000
[workload.output]
dist = "lognormal"
mean = 120
p99 = 800
[slo]
ttft_ms = 800
tpot_ms = 100
# The mechanism tests were sized on the legacy step constants; pinned so
# that refitting the default profile does not move their operating point.
[cluster.replica.perf]
profile = "legacy"
`

func mustParse(t testing.TB, src string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse("test.toml", []byte(src))
	require.NoError(t, err)
	return sc
}

// TestReplicationsIndependentOfWorkers: 1 and 2 workers give identical
// results, byte for byte.
func TestReplicationsIndependentOfWorkers(t *testing.T) {
	sc := mustParse(t, small)
	var outs [][]byte
	for _, w := range []int{1, 2, 3} {
		reps, err := RunReplications(sc, RunOptions{Workers: w})
		require.NoError(t, err)
		a := report.NewArmResult("", reps)
		js, err := a.SummaryJSON()
		require.NoError(t, err)
		cdf := results.NewTable(results.CDFFile, nil, nil)
		a.CDFRows(cdf)
		keys := report.ReplicationKeys([]*report.ArmResult{a})
		rt := results.NewTable(results.ReplicationsFile, nil, keys)
		a.ReplicationRows(rt, keys)
		outs = append(outs, append(append(js, cdf.Bytes()...), rt.Bytes()...))
	}
	require.Equal(t, string(outs[0]), string(outs[1]))
	require.Equal(t, string(outs[0]), string(outs[2]))
}

// TestReplicationZeroIsThePlainRun: one replication equals a plain run.
func TestReplicationZeroIsThePlainRun(t *testing.T) {
	sc := mustParse(t, small)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	reps, err := RunReplications(sc, RunOptions{})
	require.NoError(t, err)
	require.Equal(t, *report.Summarize(res), *reps[0].Summary)
}

// TestConfidenceIntervalsShrink: the CI half-width of mean p99 TTFT shrinks
// roughly as 1/√R (from 4 to 16 replications: about half, allowing for the
// t quantile's change and sampling noise).
func TestConfidenceIntervalsShrink(t *testing.T) {
	ci := func(r int) float64 {
		sc := mustParse(t, small)
		sc.Run.Replications = r
		reps, err := RunReplications(sc, RunOptions{})
		require.NoError(t, err)
		return report.StatMap(report.Aggregate(reps))["latency_ms.e2e.mean"].CI95
	}
	c4, c16 := ci(4), ci(16)
	// Expected ratio √(16/4)·t(0.975,3)/t(0.975,15) = 2·3.182/2.131 ≈ 2.99.
	t.Logf("CI half-width: R=4 %.3f, R=16 %.3f, ratio %.2f (expected about 3)", c4, c16, c4/c16)
	require.Greater(t, c4/c16, 1.5)
	require.Less(t, c4/c16, 6.0)
}

// TestIdenticalArmsDifferByZero: an A/B of two identical arms gives paired
// differences of exactly 0 (common random numbers).
func TestIdenticalArmsDifferByZero(t *testing.T) {
	sc := mustParse(t, small+`
[[arms]]
name = "A"
[arms.router]
name = "least-outstanding"
[[arms]]
name = "B"
[arms.router]
name = "least-outstanding"
`)
	arms, err := ArmsFromScenario(sc)
	require.NoError(t, err)
	res, err := RunAB(arms, RunOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, res.Diffs[0])
	for _, d := range res.Diffs[0] {
		require.Zero(t, d.Diff, d.Key)
		require.Zero(t, d.DiffCI, d.Key)
	}
	require.Contains(t, res.Report(), "B leaves p99 TTFT unchanged")
}

// TestABDirection: on the same arrivals, round-robin vs least-outstanding
// gives a paired difference, and the arms really differ in their routers.
func TestABArmsApplyOverrides(t *testing.T) {
	sc := mustParse(t, small+`
[[arms]]
name = "few"
[arms.cluster]
replicas = 1
[[arms]]
name = "many"
[arms.cluster]
replicas = 4
`)
	arms, err := ArmsFromScenario(sc)
	require.NoError(t, err)
	require.Equal(t, 1, arms[0].Scenario.Cluster.Replicas)
	require.Equal(t, 4, arms[1].Scenario.Cluster.Replicas)
	require.Equal(t, "H100", arms[1].Scenario.Cluster.GPU, "keys an arm does not set keep the base's values")
	res, err := RunAB(arms, RunOptions{})
	require.NoError(t, err)
	var ttft PairedDiff
	for _, d := range res.Diffs[0] {
		if d.Key == "latency_ms.ttft.p99" {
			ttft = d
		}
	}
	require.Less(t, ttft.Diff+ttft.DiffCI, 0.0, "4 replicas cut p99 TTFT significantly")
	require.Equal(t, report.StatMap(res.Arms[0].Stats)["requests.arrived"].Values, report.StatMap(res.Arms[1].Stats)["requests.arrived"].Values,
		"both arms see the same arrivals")
}

func TestArmErrorsNameTheLine(t *testing.T) {
	sc := mustParse(t, small+`
[[arms]]
name = "A"
[[arms]]
name = "B"
[arms.router]
nmae = "round-robin"
`)
	_, err := ArmsFromScenario(sc)
	require.Error(t, err)
	line := strings.Count(small, "\n") + 7 // the line of nmae in the appended text
	require.Contains(t, err.Error(), fmt.Sprintf("test.toml:%d: arms.1.router.nmae", line))
	require.Contains(t, err.Error(), `did you mean "name"`)
}

func TestParseAxis(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []string
		err  bool
	}{
		{"cluster.replicas=4..16:4", []string{"4", "8", "12", "16"}, false},
		{"workload.arrival.rate_per_s=0.5..1.5:0.5", []string{"0.5", "1", "1.5"}, false},
		{"router.name=round-robin,p2c", []string{`"round-robin"`, `"p2c"`}, false},
		{"cluster.replicas=3", []string{"3"}, false},
		{"cluster.replicas", nil, true},
		{"cluster.replicas=8..4", nil, true},
		{"cluster.replicas=1..5:0", nil, true},
		{"cluster.replicas=1..1000000:1", nil, true},
	} {
		ax, err := scenario.ParseAxis(tc.spec)
		if tc.err {
			require.Error(t, err, tc.spec)
			continue
		}
		require.NoError(t, err, tc.spec)
		require.Equal(t, tc.want, ax.Values, tc.spec)
	}
}

func TestSweepSharesSeedsAndReportsEveryPoint(t *testing.T) {
	sc, err := mustParse(t, small).Derive(OverrideOverlay("run.replications", "2"))
	require.NoError(t, err)
	ax, err := scenario.ParseAxis("cluster.replicas=1..3")
	require.NoError(t, err)
	res, err := RunSweep(sc, []scenario.Axis{ax}, RunOptions{})
	require.NoError(t, err)
	require.Len(t, res.Points, 3)
	require.Len(t, res.Points[0].Arm.Reps, 2)
	csv := string(res.CSV())
	require.Contains(t, csv, "cluster.replicas,replications,ttft_p99_ms,ttft_p99_ms_ci95")
	var prev = math.Inf(1)
	for _, p := range res.Points {
		m := report.StatMap(p.Arm.Stats)
		require.Equal(t, report.StatMap(res.Points[0].Arm.Stats)["requests.arrived"].Values, m["requests.arrived"].Values)
		p99 := m["latency_ms.ttft.p99"].Mean
		require.LessOrEqual(t, p99, prev*1.05, "more replicas, no worse TTFT")
		prev = p99
	}
	_, err = RunSweep(sc, []scenario.Axis{{Key: "cluster.replicaz", Values: []string{"2"}}}, RunOptions{})
	require.ErrorContains(t, err, "cluster.replicaz")
}

func TestParseSLO(t *testing.T) {
	ts, err := scenario.ParseSLO("ttft_p99=800ms,success=99.9%,e2e_p50=2s,slo_attainment=0.95")
	require.NoError(t, err)
	require.InDelta(t, 0.999, ts[1].Limit, 1e-12)
	ts[1].Limit = 0.999
	require.Equal(t, []scenario.Target{
		{Name: "ttft_p99", Key: "latency_ms.ttft.p99", Limit: 800, Upper: true},
		{Name: "success", Key: "success", Limit: 0.999},
		{Name: "e2e_p50", Key: "latency_ms.e2e.p50", Limit: 2000, Upper: true},
		{Name: "slo_attainment", Key: "goodput.slo_attainment", Limit: 0.95},
	}, ts)
	for _, bad := range []string{"", "ttft=800ms", "ttft_p99=fast", "success=120%", "ttft_p99=-1ms", "foo_p99=1ms"} {
		_, err := scenario.ParseSLO(bad)
		require.Error(t, err, bad)
	}
}

// TestSizingMonotoneAndHolds: more load never needs fewer replicas, and the
// size found meets the SLO when run again with fresh seeds.
func TestSizingMonotoneAndHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("several searches")
	}
	targets, err := scenario.ParseSLO("ttft_p99=800ms,success=99.9%")
	require.NoError(t, err)
	prevN := 0
	for _, rate := range []int{40, 120, 240} {
		sc, err := mustParse(t, small).Derive(OverrideOverlay("workload.arrival.rate_per_s", fmt.Sprint(rate)), OverrideOverlay("run.replications", "3"))
		require.NoError(t, err)
		res, err := Size(sc, targets, 0.95, RunOptions{})
		require.NoError(t, err)
		t.Logf("rate %d req/s → N = %d", rate, res.N)
		require.GreaterOrEqual(t, res.N, prevN, "more load, no fewer replicas")
		prevN = res.N
		require.True(t, res.Rows[1].Point.Met)
		if res.N > 1 {
			require.False(t, func() bool {
				for _, p := range res.Search {
					if p.Replicas == res.N-1 {
						return p.Met
					}
				}
				return false
			}(), "N-1 does not meet the SLO")
		}
		fresh, err := sc.Derive(OverrideOverlay("cluster.replicas", fmt.Sprint(res.N)), OverrideOverlay("seed", "9001"))
		require.NoError(t, err)
		reps, err := RunReplications(fresh, RunOptions{})
		require.NoError(t, err)
		m := report.StatMap(report.Aggregate(reps))
		require.LessOrEqual(t, m["latency_ms.ttft.p99"].Mean, 800.0, "fresh seeds at N meet the p99 target")
	}
}

// BenchmarkReplicationsParallel measures replications on 1 and 2 workers:
//
//	go test ./experiments -run '^$' -bench ReplicationsParallel -benchtime 3x
func BenchmarkReplicationsParallel(b *testing.B) {
	sc, err := LoadBuiltin("default")
	require.NoError(b, err)
	sc.Run.Replications = 8
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_, err := RunReplications(sc, RunOptions{Workers: w})
				require.NoError(b, err)
			}
		})
	}
}

func TestCostTiersPowerAndRecompute(t *testing.T) {
	base := mustParse(t, small)
	run := func(ovs ...scenario.Overlay) *report.Summary {
		sc, err := base.Derive(append(ovs, OverrideOverlay("run.replications", "1"))...)
		require.NoError(t, err)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		return report.Summarize(res)
	}
	od := run()
	require.Equal(t, 6.50, od.Cost.PricePerGPUHour)
	require.InEpsilon(t, od.Cost.GPUHours*6.50, od.Cost.USD, 1e-5, "summary values are rounded")
	require.InDelta(t, 2*6.50*720, od.Cost.USDPerMonth, 1e-9, "2 H100 for 720 h")
	res := run(OverrideOverlay("cost.tier", `"reserved"`))
	require.Equal(t, 2.89, res.Cost.PricePerGPUHour)
	pw := run(OverrideOverlay("cost.power", "true"))
	// 700 W × PUE 1.3 per GPU-hour = 0.91 kWh, at $0.10.
	require.InDelta(t, pw.Cost.GPUHours*0.91, pw.Cost.EnergyKWh, 1e-6)
	require.InDelta(t, od.Cost.USD+pw.Cost.EnergyUSD, pw.Cost.USD, 1e-6)
	require.Zero(t, od.Cost.Wasted.RecomputeTokens, "no preemption, no recompute")
	tight := run(OverrideOverlay("cluster.replica.kv_blocks", "400"))
	require.Positive(t, tight.KV.Preemptions)
	require.Positive(t, tight.Cost.Wasted.RecomputeTokens)
	require.Positive(t, tight.Cost.Wasted.RecomputeUSD)
	require.Less(t, tight.Cost.Wasted.RecomputeUSD, tight.Cost.USD)
}

// TestSizingWithTwoDown: sizing with two replicas in repair needs more
// replicas than without, and N+1, N+2 follow N.
func TestSizingWithTwoDown(t *testing.T) {
	if testing.Short() {
		t.Skip("two searches")
	}
	sc, err := LoadBuiltin("n-plus-2")
	require.NoError(t, err)
	sc, err = sc.Derive(OverrideOverlay("run.replications", "2"), OverrideOverlay("workload.duration_s", "120"))
	require.NoError(t, err)
	targets, err := scenario.ParseSLO(sc.Size.SLO)
	require.NoError(t, err)
	res, err := Size(sc, targets, 0.95, RunOptions{})
	require.NoError(t, err)
	n0, n := res.Rows[0].Point.Replicas, res.Rows[1].Point.Replicas
	t.Logf("N without failures %d, with two down %d", n0, n)
	require.True(t, res.HasFailure)
	require.GreaterOrEqual(t, n, n0+2, "two replicas down need at least two more")
	require.Equal(t, n+1, res.Rows[2].Point.Replicas)
	require.Equal(t, n+2, res.Rows[3].Point.Replicas)
	require.False(t, res.Rows[0].Point.Failures)
	require.Positive(t, report.StatMap(res.Rows[1].Point.Arm.Stats)["cost.wasted.down_usd"].Mean, "the two replicas in repair are paid for")
	require.True(t, res.Rows[1].Point.Failures)
	csv := string(res.CSV())
	require.Contains(t, csv, "N (no failures),")
}

// TestServingFailures: stochastic failures from the llama3 profile (rates
// multiplied to show in minutes) take replicas down, fail what they hold,
// and bring them back after repair and cold start; requests are conserved.
func TestServingFailures(t *testing.T) {
	sc := mustParse(t, small+`
[failures]
enabled = true
rate_multiplier = 20000
cold_start_s = 60
`)
	sc, err := sc.Derive(OverrideOverlay("run.replications", "1"), OverrideOverlay("workload.duration_s", "600"))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	require.NotNil(t, s.Failures)
	t.Logf("failures %+v; failed requests %d of %d", *s.Failures, s.Requests.Failed, s.Requests.Arrived)
	require.Positive(t, s.Failures.Events)
	require.Less(t, s.Failures.Availability, 1.0)
	td := s.Failures.TimeDownFraction
	require.GreaterOrEqual(t, td["any"], td["10%"])
	require.GreaterOrEqual(t, td["10%"], td["25%"])
	require.GreaterOrEqual(t, td["25%"], td["50%"])
	// The replica-seconds lost lie between (time any is down) and
	// (time any is down × replicas).
	down := 1 - s.Failures.Availability
	require.LessOrEqual(t, down, td["any"]+1e-9)
	require.GreaterOrEqual(t, down, td["any"]/2-1e-9)
	require.Equal(t, s.Requests.Arrived, s.Requests.Completed+s.Requests.Failed+s.Requests.Shed+s.Requests.InFlight)
	off, err := sc.Derive(OverrideOverlay("failures.enabled", "false"))
	require.NoError(t, err)
	res0, err := Run(off, Options{})
	require.NoError(t, err)
	require.Equal(t, s.Requests.Arrived, report.Summarize(res0).Requests.Arrived, "failures do not move the arrivals")
}

// TestPrecursorDrain: draining on precursors (rising correctable ECC before
// HBM double-bit errors) heads failures off: the drained replicas are
// repaired before the failure, which then hits nothing.
func TestPrecursorDrain(t *testing.T) {
	sc := mustParse(t, small+`
[failures]
enabled = true
rate_multiplier = 200000
cold_start_s = 60
`)
	sc, err := sc.Derive(OverrideOverlay("run.replications", "1"), OverrideOverlay("workload.duration_s", "1200"),
		OverrideOverlay("cluster.replicas", "8"), OverrideOverlay("workload.arrival.rate_per_s", "40"))
	require.NoError(t, err)
	run := func(drain bool) *report.Summary {
		d, err := sc.Derive(OverrideOverlay("failures.drain_on_precursor", fmt.Sprint(drain)))
		require.NoError(t, err)
		res, err := Run(d, Options{})
		require.NoError(t, err)
		return report.Summarize(res)
	}
	off, on := run(false), run(true)
	t.Logf("no drain: %d failed, %+v", off.Requests.Failed, *off.Failures)
	t.Logf("drain:    %d failed (%v), shed %d, %+v", on.Requests.Failed, on.Failed, on.Requests.Shed, *on.Failures)
	require.Positive(t, on.Failures.Drained)
	require.Positive(t, on.Failures.Averted)
	require.LessOrEqual(t, on.Requests.Failed, off.Requests.Failed, "an averted failure fails nothing")
	require.Less(t, on.Failures.Events, off.Failures.Events)
}

// TestPlacementBlastRadius: 8 TP=1 replicas packed on one HGX server all
// fall with it; spread over 8 servers, a server failure takes one.
func TestPlacementBlastRadius(t *testing.T) {
	sc := mustParse(t, small+`
[failures]
enabled = true
rate_multiplier = 50000
cold_start_s = 60
`)
	hitsPerEvent := func(placement string) float64 {
		d, err := sc.Derive(OverrideOverlay("run.replications", "1"), OverrideOverlay("cluster.replicas", "8"),
			OverrideOverlay("cluster.placement", `"`+placement+`"`), OverrideOverlay("workload.duration_s", "1800"))
		require.NoError(t, err)
		res, err := Run(d, Options{})
		require.NoError(t, err)
		s := report.Summarize(res)
		require.Positive(t, s.Failures.Events)
		t.Logf("%s: %d domains, %d events hit %d replicas, availability %.3f", placement, s.Fleet.Domains,
			s.Failures.Events, s.Failures.ReplicaHits, s.Failures.Availability)
		return float64(s.Failures.ReplicaHits) / float64(s.Failures.Events)
	}
	pack, spread := hitsPerEvent("pack"), hitsPerEvent("spread")
	require.Greater(t, pack, 4*spread)
	require.LessOrEqual(t, spread, 1.0)
	_, err := sc.Derive(OverrideOverlay("cluster.placement", `"scatter"`))
	require.ErrorContains(t, err, "cluster.placement")
}

// TestSizingUnreachableSLO: when more replicas cannot help (a crash fails
// requests whatever the fleet size), the search stops and says why.
func TestSizingUnreachableSLO(t *testing.T) {
	sc := mustParse(t, small+`
[[faults]]
at_s = 30
replica = 0
mode = "fail"
`)
	sc, err := sc.Derive(OverrideOverlay("run.replications", "2"))
	require.NoError(t, err)
	targets, err := scenario.ParseSLO("success=100%")
	require.NoError(t, err)
	_, err = Size(sc, targets, 0.95, RunOptions{})
	require.ErrorContains(t, err, "doubling the fleet no longer helps")
	require.ErrorContains(t, err, "success bound")
}

// TestServingBlastRadiusHGXvsNVL72: the built-in A/B nvl72-vs-hgx, 144
// GB200 GPUs as 2 NVL72 racks or 18 8-GPU servers, the same per-GPU rates
// (rackscale profile) and so the same failure stream. The differences follow
// from the component table: an NVL72 rack fault takes 9 replicas (4 on
// HGX), a switch tray degrades 9 (1 on HGX). Paired over 20 replications,
// the NVL72 arm hits more replicas, degrades more, has fewer up at worst,
// spends more time with half the fleet down and has lower availability,
// each with a 95% CI that excludes no difference.
func TestServingBlastRadiusHGXvsNVL72(t *testing.T) {
	if testing.Short() {
		t.Skip("an A/B of 2 x 20 replications")
	}
	base, err := LoadBuiltin("nvl72-vs-hgx")
	require.NoError(t, err)
	arms, err := ArmsFromScenario(base)
	require.NoError(t, err)
	require.Equal(t, []string{"nvl72", "hgx"}, ArmNames(arms))
	ab, err := RunAB(arms, RunOptions{})
	require.NoError(t, err)
	nvl, hgx := ab.Arms[0], ab.Arms[1]
	for k := range nvl.Reps {
		sn, sh := nvl.Reps[k].Summary, hgx.Reps[k].Summary
		require.Equal(t, 2, sn.Fleet.Domains)
		require.Equal(t, 18, sh.Fleet.Domains)
		// The same failures on both topologies: only their units differ.
		require.Equal(t, sn.Failures.Events, sh.Failures.Events, "replication %d", k)
		require.Equal(t, sn.Failures.ByCategory, sh.Failures.ByCategory, "replication %d", k)
		require.GreaterOrEqual(t, sn.Failures.ReplicaHits, sh.Failures.ReplicaHits, "replication %d", k)
		for _, s := range []*report.Summary{sn, sh} {
			require.Equal(t, s.Requests.Arrived, s.Requests.Completed+s.Requests.Failed+s.Requests.Shed+s.Requests.InFlight)
		}
	}
	diffs := map[string]PairedDiff{}
	for _, d := range ab.Diffs[0] {
		diffs[d.Key] = d
	}
	// d = hgx − nvl72; each must be significant with the expected sign.
	for key, sign := range map[string]float64{
		"failures.availability":           +1,
		"failures.replica_hits":           -1,
		"failures.degraded_replicas":      -1,
		"failures.min_available_replicas": +1,
		"failures.time_down_fraction.50%": -1,
	} {
		d, ok := diffs[key]
		require.True(t, ok, key)
		t.Logf("%-34s nvl72 %10.4f  hgx %10.4f  diff %+.4f ± %.4f", key, d.A, d.B, d.Diff, d.DiffCI)
		require.Greater(t, sign*d.Diff, d.DiffCI, "%s: hgx − nvl72 = %v ± %v", key, d.Diff, d.DiffCI)
	}
	require.Equal(t, 0.0, diffs["failures.events"].Diff, "same failure stream")
}

// TestTrainingBlastRadiusHGXvsNVL72: the built-in nvl72-vs-hgx-train, a
// 16,384-GPU job on 16,416 GPUs as NVL72 racks or HGX servers with the same
// per-GPU rates and 80 spare GPUs each: a rack fault takes 18 NVL72 trays,
// more than the pool holds, so the NVL72 job waits for spares far longer
// and its ETTR is lower, with paired 95% CIs over 20 replications; a
// switch tray slows the NVL72 job instead of interrupting it.
func TestTrainingBlastRadiusHGXvsNVL72(t *testing.T) {
	base, err := LoadBuiltin("nvl72-vs-hgx-train")
	require.NoError(t, err)
	arms, err := ArmsFromScenario(base)
	require.NoError(t, err)
	ab, err := RunAB(arms, RunOptions{})
	require.NoError(t, err)
	diffs := map[string]PairedDiff{}
	for _, d := range ab.Diffs[0] {
		diffs[d.Key] = d
	}
	for key, sign := range map[string]float64{
		"training.ettr":                          +1,
		"training.lost_gpu_hours.waiting_spares": -1,
		"training.lost_usd_per_month":            -1,
	} {
		d := diffs[key]
		t.Logf("%-40s nvl72 %12.4f  hgx %12.4f  diff %+.4f ± %.4f", key, d.A, d.B, d.Diff, d.DiffCI)
		require.Greater(t, sign*d.Diff, d.DiffCI, key)
	}
	nvl := ab.Arms[0].Reps[0].Summary.Training
	require.Positive(t, nvl.FailSlow, "switch trays slow the NVL72 job")
}

// size says when its confidence bound is not one: with one replication, and
// when every replication is identical (a trace replay draws nothing).
func TestSizeSaysWhenThereIsNoBound(t *testing.T) {
	targets, err := scenario.ParseSLO("ttft_p99=800ms")
	require.NoError(t, err)
	sc, err := mustParse(t, small).Derive(OverrideOverlay("run.replications", "1"))
	require.NoError(t, err)
	res, err := Size(sc, targets, 0.95, RunOptions{})
	require.NoError(t, err)
	require.Contains(t, res.Table(sc.Name), "1 replication per size: no confidence bound")

	tr, err := scenario.Parse("tr.toml", []byte(`name = "tr"
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 1
[workload]
kind = "trace"
max_requests = 500
[workload.trace]
path = "builtin:AzureLLMInferenceTrace_code.csv"
[run]
replications = 3
`))
	require.NoError(t, err)
	res, err = Size(tr, targets, 0.95, RunOptions{})
	require.NoError(t, err)
	require.Contains(t, res.Table(tr.Name), "3 replications per size, all identical")
	sc, err = mustParse(t, small).Derive(OverrideOverlay("run.replications", "3"))
	require.NoError(t, err)
	res, err = Size(sc, targets, 0.95, RunOptions{})
	require.NoError(t, err)
	require.Contains(t, res.Table(sc.Name), "a size meets the SLO when the one-sided 95% confidence bound does")
}

// From one replication a sweep has no intervals: its CSV leaves every
// _ci95 cell empty (not 0) and its table prints "± n/a".
func TestSweepOneReplicationHasNoInterval(t *testing.T) {
	sc, err := mustParse(t, small).Derive(OverrideOverlay("run.replications", "1"))
	require.NoError(t, err)
	ax, err := scenario.ParseAxis("cluster.replicas=1,2")
	require.NoError(t, err)
	res, err := RunSweep(sc, []scenario.Axis{ax}, RunOptions{})
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(res.CSV())), "\n")
	head := strings.Split(lines[0], ",")
	for _, row := range lines[1:] {
		cells := strings.Split(row, ",")
		for i, h := range head {
			if strings.HasSuffix(h, "_ci95") {
				require.Empty(t, cells[i], "%s from one replication", h)
			}
		}
	}
	require.Contains(t, res.Table(), "± n/a")
	require.NotContains(t, res.Table(), "± 0 ")
}
