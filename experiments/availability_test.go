package experiments

import (
	"bytes"
	"fmt"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/internal/streams"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// TestAvailabilityFollowsHealth: under failures, precursor drains, repairs
// and cold starts, the router never sees a down replica as available.
func TestAvailabilityFollowsHealth(t *testing.T) {
	sc := mustParse(t, small+`
[failures]
enabled = true
rate_multiplier = 200000
cold_start_s = 60
drain_on_precursor = true
`)
	sc, _ = sc.Derive(OverrideOverlay("run.replications", "1"), OverrideOverlay("workload.duration_s", "1200"),
		OverrideOverlay("cluster.replicas", "8"), OverrideOverlay("workload.arrival.rate_per_s", "40"))
	eng := sim.NewEngine()
	fl, err := newFleet(eng, sc, fleet.NewRecorder(sc.SLO))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := startFailures(eng, fl, sc, sc.Seed); err != nil {
		t.Fatal(err)
	}
	src, _ := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
	fl.Start(src)
	fl.StartSampling(10 * sim.Second)
	for eng.Step() {
		for i, r := range fl.Replicas {
			if fl.States()[i].Available && !r.Up() {
				t.Fatalf("t=%v replica %d available but down", eng.Now(), i)
			}
		}
	}
}

// oneSpareFleet is three 70B TP=8 replicas and one warm spare
// (spare_after_s 600, cold starts of 60 s) under failures too rare to
// strike by themselves, for two hours at 5 req/s, started: tests apply
// their own failures through fi.
func oneSpareFleet(t *testing.T) (*sim.Engine, *fleet.Fleet, *failures.Injector) {
	t.Helper()
	sc := mustParse(t, small+`
[failures]
enabled = true
rate_multiplier = 1e-9
cold_start_s = 60
spares = 1
spare_after_s = 600
`)
	sc, err := sc.Derive(OverrideOverlay("cluster.tp", "8"), OverrideOverlay("cluster.replicas", "3"),
		OverrideOverlay("workload.duration_s", "7200"), OverrideOverlay("workload.arrival.rate_per_s", "5"))
	require.NoError(t, err)
	eng := sim.NewEngine()
	fl, err := newFleet(eng, sc, fleet.NewRecorder(sc.SLO)) // three serving, one spare
	require.NoError(t, err)
	fi, err := startFailures(eng, fl, sc, sc.Seed)
	require.NoError(t, err)
	src, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
	require.NoError(t, err)
	require.NoError(t, fl.Start(src))
	return eng, fl, fi
}

// available4 is which of oneSpareFleet's four replicas are available.
func available4(fl *fleet.Fleet) (v [4]bool) {
	for i, st := range fl.States() {
		v[i] = st.Available
	}
	return v
}

// hostFailure is a fail-stop of replica i's 8-GPU server for repair.
func hostFailure(i int, repair sim.Time) failures.Event {
	return failures.Event{Category: "gpu", Mode: failures.ModeFailStop, FirstGPU: 8 * i, GPUs: 8,
		DownFirstGPU: 8 * i, DownGPUs: 8, Repair: repair}
}

// TestSparesSwapIn drives the injector with hand-made failures: a long
// repair is covered by a spare at once (no capacity lost), the repaired
// replica becomes the spare, and a short repair is waited out.
func TestSparesSwapIn(t *testing.T) {
	eng, fl, fi := oneSpareFleet(t)
	avail := func() [4]bool { return available4(fl) }
	host := hostFailure
	type check struct {
		at   sim.Time
		want [4]bool
	}
	var checks []check
	at := func(s float64, want [4]bool) { checks = append(checks, check{sim.FromSeconds(s), want}) }
	eng.Schedule(sim.FromSeconds(100), sim.PriorityFailure, func(now sim.Time) { fi.Apply(host(0, 3600*sim.Second), now) })
	at(50, [4]bool{true, true, true, false})          // the spare waits
	at(101, [4]bool{false, true, true, true})         // spare 3 took 0's place
	at(3600+100+61, [4]bool{false, true, true, true}) // 0 repaired and warm: now the spare
	eng.Schedule(sim.FromSeconds(4000), sim.PriorityFailure, func(now sim.Time) { fi.Apply(host(1, 300*sim.Second), now) })
	at(4001, [4]bool{false, false, true, true}) // short repair: waited out
	at(4000+300+61, [4]bool{false, true, true, true})
	for _, c := range checks {
		c := c
		eng.Schedule(c.at, sim.PriorityMetrics, func(sim.Time) {
			if got := avail(); got != c.want {
				t.Errorf("t=%vs: available %v, want %v", c.at.Seconds(), got, c.want)
			}
		})
	}
	for eng.Step() {
	}
	st := report.FailureStatsOf(fi.Report(sim.FromSeconds(7200)), sim.FromSeconds(7200), 3)
	if st.SparesUsed != 1 || st.MinAvailableR != 2 {
		t.Errorf("spares used %d, min available %d; want 1 and 2", st.SparesUsed, st.MinAvailableR)
	}
	// Only the short repair (300 s + 60 s cold start) cost capacity.
	if want := 360.0; st.ReplicaDownS < want-1 || st.ReplicaDownS > want+1 {
		t.Errorf("replica down %v s, want %v", st.ReplicaDownS, want)
	}
	// Replica 0 was repaired off the books from its failure to its return.
	if got, want := results.Round6(fi.Report(sim.FromSeconds(7200)).SpareRepairNs.Seconds()), 3761-100.0; got < want-1 || got > want+1 {
		t.Errorf("spare-held repair %v s, want %v", got, want)
	}
	// The spare idled 100 s, then replica 0 from its return to the end.
	if got, want := results.Round6(fi.Report(sim.FromSeconds(7200)).IdleSpareNs.Seconds()), 100+7200-3761.0; got < want-1 || got > want+1 {
		t.Errorf("idle spare %v s, want %v", got, want)
	}
}

// TestSparesCoverWaiting: a spare that is repaired while a replica waits
// for a long repair takes its place then (not only at the replica's next
// failure); a replica whose repair is nearly done is left to finish it.
func TestSparesCoverWaiting(t *testing.T) {
	eng, fl, fi := oneSpareFleet(t)
	fail := func(s float64, i int, repairS float64) {
		eng.Schedule(sim.FromSeconds(s), sim.PriorityFailure, func(now sim.Time) { fi.Apply(hostFailure(i, sim.FromSeconds(repairS)), now) })
	}
	want := map[float64][4]bool{}
	fail(100, 0, 3600) // the spare takes 0's place
	want[101] = [4]bool{false, true, true, true}
	fail(200, 1, 7200) // no spare left: 1 waits
	fail(3000, 2, 800) // and so does 2
	want[3001] = [4]bool{false, false, false, true}
	// 0 is repaired and warm at 3,760 s: the spare now; 1 has 3,640 s of
	// repair left, 2 only 40: 0 takes 1's place.
	want[3761] = [4]bool{true, false, false, true}
	want[3861] = [4]bool{true, false, true, true} // 2 back from its own repair
	want[7461] = [4]bool{true, false, true, true} // 1 back: the spare now
	for at, w := range want {
		eng.Schedule(sim.FromSeconds(at), sim.PriorityMetrics, func(sim.Time) {
			require.Equal(t, w, available4(fl), "t=%v s", at)
		})
	}
	for eng.Step() {
	}
	rep := fi.Report(sim.FromSeconds(7200))
	st := report.FailureStatsOf(rep, sim.FromSeconds(7200), 3)
	require.Equal(t, 2, st.SparesUsed)
	// Down: 1 from 200 s to 3,760 s, 2 from 3,000 s to 3,860 s.
	require.InDelta(t, (3760-200)+(3860-3000), st.ReplicaDownS, 1)
}

// TestSparesOnPrecursor: with drain_on_precursor and a warm spare, the
// spare takes the replica's place when the precursor is seen, the replica
// drains and is repaired off the books, and no capacity is lost.
func TestSparesOnPrecursor(t *testing.T) {
	sc := mustParse(t, small+`
[failures]
enabled = true
rate_multiplier = 1e-9
cold_start_s = 60
drain_on_precursor = true
drain_grace_s = 30
spares = 1
spare_after_s = 600
`)
	sc, _ = sc.Derive(OverrideOverlay("cluster.tp", "8"), OverrideOverlay("cluster.replicas", "3"),
		OverrideOverlay("workload.duration_s", "7200"), OverrideOverlay("workload.arrival.rate_per_s", "5"))
	eng := sim.NewEngine()
	fl, err := newFleet(eng, sc, fleet.NewRecorder(sc.SLO)) // three serving, one spare
	require.NoError(t, err)
	fi, err := startFailures(eng, fl, sc, sc.Seed)
	require.NoError(t, err)
	src, _ := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
	require.NoError(t, fl.Start(src))
	ev := failures.Event{Category: "hbm", Component: failures.Component("hbm"), Mode: failures.ModeFailStop,
		FirstGPU: 0, GPUs: 8, DownFirstGPU: 0, DownGPUs: 8, Repair: 3600 * sim.Second}
	avail := func() (v [4]bool) {
		for i, st := range fl.States() {
			v[i] = st.Available
		}
		return v
	}
	var got [][4]bool
	eng.Schedule(sim.FromSeconds(100), sim.PriorityFailure, func(now sim.Time) { fi.Precursor(ev, now) })
	for _, at := range []float64{101, 100 + 30 + 3600 + 61, 7000} {
		eng.Schedule(sim.FromSeconds(at), sim.PriorityMetrics, func(sim.Time) { got = append(got, avail()) })
	}
	for eng.Step() {
	}
	require.Equal(t, [][4]bool{
		{false, true, true, true}, // the spare serves at once; 0 drains
		{false, true, true, true}, // 0 repaired, now the spare
		{false, true, true, true},
	}, got)
	st := report.FailureStatsOf(fi.Report(sim.FromSeconds(7200)), sim.FromSeconds(7200), 3)
	require.Equal(t, 1, st.SparesUsed)
	require.Equal(t, 1, st.Drained)
	require.Zero(t, st.ReplicaDownS, "no capacity lost")
	require.Equal(t, 3, st.MinAvailableR)
}

// TestSparesRaiseAvailability: across seeds, two warm spares on an
// eight-server fleet keep more of it serving under the same failure rates.
func TestSparesRaiseAvailability(t *testing.T) {
	base := mustParse(t, small+`
[failures]
enabled = true
rate_multiplier = 3000
cold_start_s = 60
spare_after_s = 0
`)
	base, _ = base.Derive(OverrideOverlay("workload.duration_s", "1800"), OverrideOverlay("cluster.tp", "8"),
		OverrideOverlay("cluster.replicas", "8"), OverrideOverlay("workload.arrival.rate_per_s", "20"))
	mean := func(spares string) (avail, used float64) {
		for seed := 1; seed <= 12; seed++ {
			sc, err := base.Derive(OverrideOverlay("failures.spares", spares), OverrideOverlay("seed", fmt.Sprint(seed)))
			require.NoError(t, err)
			res, err := Run(sc, Options{})
			require.NoError(t, err)
			avail += res.Failures.Availability / 12
			used += float64(res.Failures.SparesUsed)
		}
		return avail, used
	}
	a0, _ := mean("0")
	a2, used := mean("2")
	t.Logf("mean availability %.4f -> %.4f with 2 spares (%v swaps)", a0, a2, used)
	if used == 0 {
		t.Fatal("no spare was ever used: the test is vacuous")
	}
	if a2 <= a0 {
		t.Errorf("spares did not raise availability: %v vs %v", a2, a0)
	}
}

// TestSparesNeverOverServe: with spares, no more than cluster.replicas
// replicas ever serve, and spares are paid for.
func TestSparesNeverOverServe(t *testing.T) {
	sc := mustParse(t, small+`
[failures]
enabled = true
rate_multiplier = 30000
cold_start_s = 60
spares = 2
spare_after_s = 0
`)
	sc, _ = sc.Derive(OverrideOverlay("workload.duration_s", "1200"), OverrideOverlay("cluster.tp", "8"),
		OverrideOverlay("cluster.replicas", "8"), OverrideOverlay("workload.arrival.rate_per_s", "20"))
	most := 0
	var fl *fleet.Fleet
	testFleetHook = func(f *fleet.Fleet) { fl = f }
	defer func() { testFleetHook = nil }()
	res, err := Run(sc, Options{OnDone: func(*engine.Outcome) {
		n := 0
		for _, st := range fl.States() {
			if st.Available {
				n++
			}
		}
		most = max(most, n)
	}})
	require.NoError(t, err)
	if most > 8 || most == 0 {
		t.Errorf("%d replicas served at once; cluster.replicas is 8", most)
	}
	if len(res.Fleet.Replicas) != 10 {
		t.Fatalf("fleet has %d replicas, want 8 + 2 spares", len(res.Fleet.Replicas))
	}
	if s := report.Summarize(res); s.Cost.Wasted.IdleSparesUSD <= 0 || s.Fleet.GPUs != 80 {
		t.Errorf("spares should be paid for: idle $%v, %d GPUs", s.Cost.Wasted.IdleSparesUSD, s.Fleet.GPUs)
	}
}

// TestWarmSparesBuiltin: the warm-spares built-in shows what its README row
// says: two spares raise SLO attainment and cost more.
func TestWarmSparesBuiltin(t *testing.T) {
	base, err := LoadBuiltin("warm-spares")
	require.NoError(t, err)
	attain := func(spares string) (slo, usd float64) {
		for seed := 1; seed <= 4; seed++ {
			sc, err := base.Derive(OverrideOverlay("failures.spares", spares), OverrideOverlay("seed", fmt.Sprint(seed)))
			require.NoError(t, err)
			res, err := Run(sc, Options{})
			require.NoError(t, err)
			s := report.Summarize(res)
			slo += *s.Goodput.SLOAttainment / 4
			usd = s.Cost.USDPerMonth
		}
		return slo, usd
	}
	slo0, usd0 := attain("0")
	slo2, usd2 := attain("2")
	t.Logf("SLO attainment %.4f -> %.4f, $/month %.0f -> %.0f", slo0, slo2, usd0, usd2)
	require.Greater(t, slo2, slo0+0.02)
	require.InDelta(t, usd0*6/4, usd2, 1, "two spare servers on four: 1.5x the bill")
}

// TestSparesDeterministic: the same seed gives byte-identical summaries
// with spares swapping in and out.
func TestSparesDeterministic(t *testing.T) {
	sc := mustParse(t, small+`
[failures]
enabled = true
rate_multiplier = 30000
cold_start_s = 60
spares = 2
spare_after_s = 0
drain_on_precursor = true
`)
	sc, _ = sc.Derive(OverrideOverlay("workload.duration_s", "1200"), OverrideOverlay("cluster.tp", "8"),
		OverrideOverlay("cluster.replicas", "8"), OverrideOverlay("workload.arrival.rate_per_s", "20"))
	var outs []string
	for range 2 {
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		require.Positive(t, res.Failures.SparesUsed)
		var b bytes.Buffer
		require.NoError(t, report.Summarize(res).WriteJSON(&b))
		outs = append(outs, b.String())
	}
	require.Equal(t, outs[0], outs[1])
}

// TestSweepReportsAvailability: a sweep of runs with failures adds
// availability and success-rate columns to sweep.csv and the table; one
// without does not.
func TestSweepReportsAvailability(t *testing.T) {
	base, err := LoadBuiltin("warm-spares")
	require.NoError(t, err)
	base, err = base.Derive(OverrideOverlay("run.replications", "2"), OverrideOverlay("workload.duration_s", "600"))
	require.NoError(t, err)
	ax, err := scenario.ParseAxis("failures.spares=0,2")
	require.NoError(t, err)
	res, err := RunSweep(base, []scenario.Axis{ax}, RunOptions{})
	require.NoError(t, err)
	header := strings.SplitN(string(res.CSV()), "\n", 2)[0]
	require.Contains(t, header, ",availability,availability_ci95,success_rate,success_rate_ci95")
	require.Contains(t, res.Table(), "avail.")

	off, err := base.Derive(OverrideOverlay("failures.enabled", "false"))
	require.NoError(t, err)
	res, err = RunSweep(off, []scenario.Axis{ax}, RunOptions{})
	require.NoError(t, err)
	require.NotContains(t, string(res.CSV()), "availability")
}

// TestABReportsAvailability: the A/B table has availability and spare
// rows when the arms ran with [failures], and none when they did not.
func TestABReportsAvailability(t *testing.T) {
	base, err := LoadBuiltin("warm-spares")
	require.NoError(t, err)
	base, err = base.Derive(OverrideOverlay("run.replications", "2"), OverrideOverlay("workload.duration_s", "600"))
	require.NoError(t, err)
	report := func(sc *scenario.Scenario) string {
		two, err := sc.Derive(OverrideOverlay("failures.spares", "2"))
		require.NoError(t, err)
		res, err := RunAB([]Arm{{Name: "none", Scenario: sc}, {Name: "two", Scenario: two}}, RunOptions{})
		require.NoError(t, err)
		return res.Report()
	}
	on := report(base)
	require.Regexp(t, `(?m)^availability\s`, on)
	require.Regexp(t, `(?m)^spare swaps\s`, on)
	off, err := base.Derive(OverrideOverlay("failures.enabled", "false"))
	require.NoError(t, err)
	require.NotContains(t, report(off), "availability")
}

// TestServingSpareCoverage: failures.spare_coverage sets failures.spares to
// the replicas in repair at that coverage for replicas packed on the
// cluster's servers: for TP=8 replicas on 8-GPU servers, the servers that
// `failures show --topology hgx` counts; for TP=1 more, a server fault
// taking 8 replicas at once. It is refused with spares, and with groups.
func TestServingSpareCoverage(t *testing.T) {
	llama, err := failures.LookupProfile(failures.ProfileLlama3)
	require.NoError(t, err)
	scaled := llama.Scaled(20)
	parse := func(tp, replicas int, extra string) (*scenario.Scenario, error) {
		return scenario.Parse("cov.toml", []byte(fmt.Sprintf("name = \"cov\"\n[cluster]\ngpu = \"H100\"\nmodel = \"llama-3-8b\"\ntp = %d\nreplicas = %d\n"+
			"[failures]\nenabled = true\nrate_multiplier = 20\n%s", tp, replicas, extra)))
	}
	sc, err := parse(8, 64, "spare_coverage = 0.99\n")
	require.NoError(t, err)
	want := scaled.HostSparesFor(failures.HGX(64, 4), 512).Hosts99
	require.Positive(t, want)
	require.Equal(t, want, sc.Failures.Spares)
	sc, err = parse(8, 64, "spare_coverage = 0.999\n")
	require.NoError(t, err)
	require.Equal(t, scaled.HostSparesFor(failures.HGX(64, 4), 512).Hosts999, sc.Failures.Spares)

	sc, err = parse(1, 512, "spare_coverage = 0.99\n")
	require.NoError(t, err)
	require.Greater(t, sc.Failures.Spares, 2*want, "a server fault takes 8 TP=1 replicas")
	require.Equal(t, scaled.UnitSparesAt(failures.HGX(64, 4), 512, 1, 0.99), sc.Failures.Spares)

	sc, err = scenario.Parse("cov.toml", []byte("name = \"cov\"\n[failures]\nspare_coverage = 0.99\n"))
	require.NoError(t, err)
	require.Zero(t, sc.Failures.Spares, "failures off: no spares")

	_, err = parse(8, 64, "spares = 3\nspare_coverage = 0.99\n")
	require.ErrorContains(t, err, "cov.toml:11: failures.spare_coverage: sizes the spares: remove failures.spares (3) or this key")
	_, err = parse(8, 64, "spare_coverage = -0.5\n")
	require.ErrorContains(t, err, "cov.toml:10: failures.spare_coverage: must be 0 (off) or between 0 and 1 (exclusive), found -0.5")
}

// TestServingSpareCoverageBound: a sizing past the fleet's own size is
// refused (the M/G/∞ count assumes few replicas out at once).
func TestServingSpareCoverageBound(t *testing.T) {
	_, err := scenario.Parse("cov.toml", []byte("name = \"cov\"\n[cluster]\ngpu = \"H100\"\nmodel = \"llama-3-70b\"\ntp = 8\nreplicas = 8\n"+
		"[failures]\nenabled = true\nrate_multiplier = 2000\nspare_coverage = 0.99\n"))
	require.ErrorContains(t, err, "cov.toml:10: failures.spare_coverage: would hold")
	require.ErrorContains(t, err, "more than cluster.replicas (8)")
}
