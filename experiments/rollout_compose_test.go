package experiments

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
	"github.com/stretchr/testify/require"
)

// rolloutSrc is a small fleet at rate requests per second with a quick
// rollout of its last new replicas, and extra.
func rolloutSrc(replicas int, rate float64, newReplicas int, extra string) string {
	return fmt.Sprintf(`name = "rollout-compose"
seed = 3
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = %d
[cluster.replica.perf]
profile = "legacy"
[workload]
duration_s = 900
[workload.arrival]
rate_per_s = %v
[cost]
power = false
[rollout]
enabled = true
start_s = 30
new_replicas = %d
load_s = 30
step_s = 60
judge = "mann-whitney"
%s`, replicas, rate, newReplicas, extra)
}

// runRollout is runConserved, with the run's fleet and the summary's
// rollout block (there must be one).
func runRollout(t *testing.T, src string) (*scenario.Scenario, *report.Result, *report.Summary, *fleet.Fleet) {
	t.Helper()
	var fl *fleet.Fleet
	testFleetHook = func(f *fleet.Fleet) { fl = f }
	defer func() { testFleetHook = nil }()
	sc, res, s := runConserved(t, src)
	require.NotNil(t, s.Resilience.Rollout, src)
	return sc, res, s, fl
}

// chaosRollout is a chaos trial's [rollout] table: newReplicas green
// replicas and the rest drawn from rr, within a run of durationS.
func chaosRollout(rr *rand.Rand, newReplicas, durationS int) string {
	return fmt.Sprintf("[rollout]\nenabled = true\nstart_s = %d\nnew_replicas = %d\nload_s = %d\nstep_s = %d\nerror_rate = %v\nslow_factor = %v\njudge = %q\n",
		rr.IntN(durationS/3), newReplicas, rr.IntN(durationS/6), durationS/6, []float64{0, 0.3}[rr.IntN(2)], []float64{1, 2}[rr.IntN(2)], []string{"margin", "mann-whitney"}[rr.IntN(2)])
}

// TestRolloutWithSpares: the green replicas are the last serving ones, not
// the warm spares after them; spares run the current version and stand in
// for blue replicas only (a failed green replica waits for its repair);
// the rollout completes; the run is deterministic.
func TestRolloutWithSpares(t *testing.T) {
	src := rolloutSrc(4, 20, 2, `[failures]
enabled = true
rate_multiplier = 300000
spares = 2
spare_after_s = 0
`)
	sc, res, s, _ := runRollout(t, src)
	require.Equal(t, []int{2, 3}, sc.RolloutGreen())
	swaps := spareSwaps(t, res)
	t.Logf("swaps %v, rollout %+v", swaps, *s.Resilience.Rollout)
	require.NotEmpty(t, swaps)
	for _, sw := range swaps {
		require.NotContains(t, []int{2, 3}, sw.i, "a spare stood in for green replica %d", sw.i)
		require.NotContains(t, []int{2, 3}, sw.j, "green replica %d became a spare", sw.j)
	}
	greenFails := 0
	for _, p := range res.Timeline {
		if p.Event == "fail" && (p.Replica == 2 || p.Replica == 3) {
			greenFails++
		}
	}
	t.Logf("green failures %d", greenFails)
	require.Positive(t, greenFails, "a green replica failed (and waited for its repair)")
	require.Equal(t, "completed", s.Resilience.Rollout.State)
	requireDeterministic(t, sc, src)
}

// TestSpotRollout: the green replicas are spot ones, interrupted often,
// during its load and while it serves. Spot and the rollout hold it each
// with its own hold; its replacements run the new version (SetBuild: the
// build's step-time factor survives the new instance); a spot kill is not
// the new version's error, so a good build completes; the green replica
// is paid at the spot fraction for the whole run; the run is
// deterministic.
func TestSpotRollout(t *testing.T) {
	src := rolloutSrc(4, 8, 2, `slow_factor = 1.05
[spot]
replicas = 2
interruptions_per_hour = 40
notice_s = 10
replace_s = 40
`)
	sc, res, s, fl := runRollout(t, src)
	require.Equal(t, []int{2, 3}, sc.RolloutGreen())
	ro := s.Resilience.Rollout
	t.Logf("spot %+v, rollout %+v, failed %d", *s.Spot, *ro, s.Requests.Failed)
	require.Equal(t, "completed", ro.State)
	require.Zero(t, ro.GreenErrors, "spot kills are no build's errors")
	require.Positive(t, s.Requests.Failed, "spot kills failed requests (no retries)")
	readyAfter := 0
	for _, e := range fl.Spot.Events {
		require.Contains(t, []int{2, 3}, e.Replica)
		if e.Event == fleet.SpotReady && e.Time.Seconds() > ro.FirstTrafficS {
			readyAfter++
		}
	}
	require.Positive(t, readyAfter, "a replacement came up after the new version served")
	require.Equal(t, 1.05, fl.Replicas[2].SlowFactor(), "the replacements run the new version")
	require.Equal(t, 1.05, fl.Replicas[3].SlowFactor())
	require.Equal(t, 1.0, fl.Replicas[0].SlowFactor())
	secs := res.EndTime.Seconds()
	require.InDelta(t, 2*secs/3600*sc.Price()*sc.Spot.PriceFraction, s.Spot.SpotUSD, 1e-6, "the green spot replicas at the spot fraction")
	requireDeterministic(t, sc, src)
}

// TestAutoscaleRollout: the autoscaler scales the blue replicas and leaves
// the rollout's green ones alone (never started, drained or parked, out of
// its signal, counted as provisioned). A good build completes, and once
// all traffic is green the blue replicas scale in to min_replicas; a
// broken one is rolled back and its green replicas stay held out (paid,
// as without autoscaling), while blue serves. A min_replicas above the
// blue replicas is refused. Both runs are deterministic.
func TestAutoscaleRollout(t *testing.T) {
	scale := `[autoscale]
enabled = true
min_replicas = 1
initial_replicas = 1
interval_s = 10
scale_up_cooldown_s = 10
scale_down_window_s = 60
drain_grace_s = 30
target = 2
`
	for _, broken := range []bool{false, true} {
		extra := scale
		if broken {
			extra = "error_rate = 0.3\n" + scale
		}
		src := rolloutSrc(6, 8, 2, extra)
		sc, res, s, fl := runRollout(t, src)
		require.Equal(t, []int{4, 5}, sc.RolloutGreen())
		ro := s.Resilience.Rollout
		t.Logf("broken %v: rollout %+v, autoscale %+v", broken, *ro, *s.Autoscale)
		for _, e := range fl.Autoscaler.Events {
			require.Less(t, e.Replica, 4, "the autoscaler touched green replica %d: %+v", e.Replica, e)
		}
		for _, i := range []int{4, 5} {
			require.Zero(t, fl.Pool.Life.PhaseNs(i, fleet.PhaseParked, res.EndTime), "green replica %d parked", i)
			require.False(t, fl.Autoscaler.Parked(i))
			require.False(t, fl.Autoscaler.Serving(i))
		}
		require.LessOrEqual(t, s.Autoscale.ReplicasMax, 6)
		require.Positive(t, s.Autoscale.ScaleUps, "blue took the load")
		parked := 0
		for i := 0; i < 4; i++ {
			if fl.Autoscaler.Parked(i) {
				parked++
			}
		}
		if !broken {
			require.Equal(t, "completed", ro.State)
			require.Equal(t, 3, parked, "all traffic green: blue scaled in to min_replicas")
			require.Equal(t, 3, fl.Autoscaler.Provisioned(), "one blue, two green")
		} else {
			require.Equal(t, "rolled back", ro.State)
			require.Less(t, parked, 4)
			for _, i := range []int{4, 5} {
				require.Equal(t, fleet.PhaseDraining, fl.Pool.Life.Phase(i), "rolled back: held out")
			}
		}
		requireDeterministic(t, sc, src)
	}
	_, err := scenario.Parse("a.toml", []byte(rolloutSrc(6, 20, 2, strings.Replace(scale, "min_replicas = 1", "min_replicas = 5", 1))))
	require.ErrorContains(t, err, "autoscale.min_replicas: must be at most cluster.replicas − the rollout's green replicas = 4 (the blue replicas, which the autoscaler scales), found 5")
}

// TestGroupsRollout: in a fleet of groups the green pool is each group's
// last serving replicas (a group's down ones and its spares are never
// green), each runs the new build; the split and the judge work over the
// groups' replicas; a good build completes and a broken one is rolled
// back; a group too small to keep a blue replica is refused by name; the
// runs are deterministic.
func TestGroupsRollout(t *testing.T) {
	src := func(extra string) string {
		return `name = "groups-rollout"
seed = 5
[cluster]
model = "llama-3-8b"
[cluster.replica.perf]
profile = "legacy"
[[cluster.groups]]
name = "h100"
gpu = "H100"
tp = 1
replicas = 4
down_replicas = 1
[[cluster.groups]]
name = "b200"
gpu = "B200"
tp = 1
replicas = 3
[workload]
duration_s = 600
[workload.arrival]
rate_per_s = 12
[cost]
power = false
[rollout]
enabled = true
start_s = 30
new_replicas = 1
load_s = 30
step_s = 60
judge = "mann-whitney"
slow_factor = 1.02
` + extra
	}
	for _, broken := range []bool{false, true} {
		extra := ""
		if broken {
			extra = "error_rate = 0.3\n"
		}
		sc, _, s, fl := runRollout(t, src(extra))
		// h100: 0-3, 3 in repair; b200: 4-6.
		require.Equal(t, []int{2, 6}, sc.RolloutGreen())
		ro := s.Resilience.Rollout
		t.Logf("broken %v: %+v", broken, *ro)
		for i, r := range fl.Replicas {
			want := 1.0
			if (i == 2 || i == 6) && ro.FirstTrafficS > 0 {
				want = 1.02
			}
			require.Equal(t, want, r.SlowFactor(), "replica %d", i)
		}
		require.Positive(t, ro.GreenRequests)
		if broken {
			require.Equal(t, "rolled back", ro.State)
		} else {
			require.Equal(t, "completed", ro.State)
			require.Zero(t, ro.GreenErrors)
		}
		requireDeterministic(t, sc, src(extra))
	}
	_, err := scenario.Parse("g.toml", []byte(strings.Replace(src(""), "new_replicas = 1", "new_replicas = 3", 1)))
	require.ErrorContains(t, err, `rollout.new_replicas: is the green replicas of each group and must be below each group's serving replicas (group "h100" has 3), found 3`)
}

// TestRolloutComposedChaos: a rollout beside every mechanism it composes
// with at once: a fleet of groups (one with a replica in repair), the
// autoscaler, spot replicas in a group, calibrated failures, and probes,
// at random settings. After every event requests are conserved, replica
// bookkeeping and the lifecycle hold, the autoscaler never takes a green
// replica, and no interrupted or parked replica serves; everything
// drains; the runs are deterministic.
func TestRolloutComposedChaos(t *testing.T) {
	checkOutstandingIndex(t)
	trials := 6
	if testing.Short() {
		trials = 2
	}
	for trial := 0; trial < trials; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 4242))
		var b strings.Builder
		fmt.Fprintf(&b, "name = \"rollout-composed-%d\"\nseed = %d\n[cluster]\nmodel = \"llama-3-8b\"\n", trial, trial+1)
		fmt.Fprintf(&b, "[cluster.replica]\nbatching = %q\nmax_seqs = %d\ncold_start_s = 5\nrestart_s = 2\n",
			[]string{"chunked", "continuous"}[rng.IntN(2)], 8+rng.IntN(32))
		fmt.Fprintf(&b, "[[cluster.groups]]\nname = \"a\"\ngpu = \"H100\"\ntp = 1\nreplicas = %d\ndown_replicas = 1\n", 4+rng.IntN(2))
		fmt.Fprintf(&b, "[[cluster.groups]]\nname = \"b\"\ngpu = \"B200\"\ntp = 1\nreplicas = %d\n", 3+rng.IntN(2))
		fmt.Fprintf(&b, "[router]\nname = %q\n", []string{"least-outstanding", "p2c", "round-robin", "weighted-least-outstanding"}[rng.IntN(4)])
		fmt.Fprintf(&b, "[workload]\nduration_s = 200\n[workload.arrival]\nrate_per_s = %d\n", 4+rng.IntN(16))
		fmt.Fprintf(&b, "[policies.retry]\nname = %q\nbudget = 0.5\n", []string{"none", "budgeted"}[rng.IntN(2)])
		fmt.Fprintf(&b, "[policies.probe]\nkind = %q\ninterval_s = 3\nrestart_s = 5\ncold_start_s = 5\n", []string{"none", "liveness", "deep"}[rng.IntN(3)])
		fmt.Fprintf(&b, "[autoscale]\nenabled = true\nmin_replicas = %d\ninterval_s = %d\nscale_up_cooldown_s = %d\nscale_down_window_s = %d\ndrain_grace_s = %d\ntarget = %v\n",
			1+rng.IntN(2), 1+rng.IntN(10), rng.IntN(20), rng.IntN(60), rng.IntN(30), []float64{1, 4}[rng.IntN(2)])
		fmt.Fprintf(&b, "[spot]\ngroup = \"b\"\nreplicas = %d\ninterruptions_per_hour = %d\nnotice_s = %d\ndrain = %v\nreplace_s = %d\n",
			1+rng.IntN(2), 20+rng.IntN(200), rng.IntN(30), rng.IntN(2) == 0, rng.IntN(60))
		fmt.Fprintf(&b, "[failures]\nenabled = true\nrate_multiplier = %d\ncold_start_s = 5\n", []int{30000, 300000}[rng.IntN(2)])
		b.WriteString(chaosRollout(rng, 1+rng.IntN(2), 200))
		src := b.String()
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			sc, err := scenario.Parse("chaos.toml", []byte(src))
			require.NoError(t, err, src)
			eng := sim.NewEngine()
			rec := fleet.NewRecorder(sc.SLO)
			fl, err := newFleet(eng, sc, rec)
			require.NoError(t, err, src)
			ap, err := injectFaults(eng, fl, sc)
			require.NoError(t, err, src)
			for _, i := range sc.DownIndexes() { // as Run does
				ap.Remove(i)
			}
			require.NoError(t, startRollout(fl, sc), src)
			fl.StartSpot(sc.SpotParams(), sim.NewStream(sc.Seed, streams.Spot))
			_, err = startFailures(eng, fl, sc, sc.Seed)
			require.NoError(t, err, src)
			green := sc.RolloutGreen()
			require.NotEmpty(t, green)
			w, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
			require.NoError(t, err)
			require.NoError(t, fl.Start(w))
			fl.DrainLimit = 600 * sim.Second
			a := fl.Autoscaler
			stepChecked(t, eng, fl, rec, src, func(n int) {
				for _, i := range green {
					require.False(t, a.Parked(i) || a.Serving(i), "event %d: the scaler took green replica %d\n%s", n, i, src)
				}
				for i := range fl.Replicas {
					if fl.States()[i].Available {
						require.NotEqual(t, fleet.PhaseInterrupted, fl.Life.Phase(i), "event %d\n%s", n, src)
					}
				}
			})
			requireDeterministic(t, sc, src)
		})
	}
}
