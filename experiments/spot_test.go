package experiments

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// Spot interruptions conserve requests (killed copies are retried or fail,
// never lost), show in failures.csv's timeline, and the bill splits
// between spot and the other slots.
func TestSpotInterruptions(t *testing.T) {
	sc, err := LoadBuiltin("spot-share")
	require.NoError(t, err)
	for _, drain := range []string{"true", "false"} {
		d, err := sc.Derive(OverrideOverlay("spot.interruptions_per_hour", "4"), OverrideOverlay("spot.drain", drain),
			OverrideOverlay("workload.duration_s", "1800"))
		require.NoError(t, err)
		res, err := Run(d, Options{})
		require.NoError(t, err)
		s := report.Summarize(res)
		r := s.Requests
		require.Equal(t, r.Arrived, r.Completed+r.Failed+r.Shed+r.InFlight, "drain %s", drain)
		require.NotNil(t, s.Spot)
		require.Positive(t, s.Spot.Interruptions, "2 spot replicas at 4/h for 0.5 h")
		require.Positive(t, s.Spot.DownReplicaHours)
		events := map[string]int{}
		for _, p := range res.Timeline {
			events[p.Event]++
		}
		require.Equal(t, s.Spot.Interruptions, events["spot-notice"], "drain %s", drain)
		require.LessOrEqual(t, events["spot-kill"], events["spot-notice"])
		require.LessOrEqual(t, events["spot-ready"], events["spot-kill"])
		require.InDelta(t, s.Cost.USD-s.Cost.EnergyUSD*boolF(d.Cost.Power), s.Spot.SpotUSD+s.Spot.OtherUSD, 1e-3)
		require.InDelta(t, 0.35*s.Spot.OtherUSD/2, s.Spot.SpotUSD, 1e-3, "2 of 6 replicas at 35%% of the price")
		if drain == "false" {
			require.Positive(t, s.Resilience.Retries, "killed copies are retried")
		}
	}
}

func boolF(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func TestSpotRefusals(t *testing.T) {
	base := "name = \"s\"\n[cluster]\nreplicas = 4\n[workload]\nduration_s = 10\n[spot]\n%s\n"
	for extra, want := range map[string]string{
		"replicas = 5":                             "s.toml:7: spot.replicas: must be an integer in [0, cluster.replicas = 4], found 5",
		"replicas = 1\nprice_fraction = 1.5":       "spot.price_fraction: must be in (0, 1], found 1.5",
		"replicas = 1\ninterruptions_per_hour = 0": "spot.interruptions_per_hour:",
	} {
		_, err := scenario.Parse("s.toml", []byte(fmt.Sprintf(base, extra)))
		require.ErrorContains(t, err, want, extra)
	}
}

// TestSpotChaos: random fleets with spot replicas at high interruption
// rates, random notice/drain/replacement, routers, batching and gateway
// policies, failures (with precursor drains and warm spares), scripted
// faults and a rollout:
// conservation, replica bookkeeping and lifecycle after every event, no
// interrupted replica in rotation, everything drains, determinism.
func TestSpotChaos(t *testing.T) {
	checkOutstandingIndex(t)
	trials := 8
	if n, err := strconv.Atoi(os.Getenv("FLEETSIM_CHAOS_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	if testing.Short() {
		trials = 3
	}
	for trial := 0; trial < trials; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 3141))
		pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
		replicas := 1 + rng.IntN(5)
		var b strings.Builder
		fmt.Fprintf(&b, "name = \"spot-chaos-%d\"\nseed = %d\n[cluster]\ngpu = %q\nmodel = \"llama-3-8b\"\ntp = %s\nreplicas = %d\n",
			trial, trial+1, pick("H100", "B200"), pick("1", "2"), replicas)
		fmt.Fprintf(&b, "[cluster.replica]\nbatching = %q\nmax_seqs = %d\n", pick("chunked", "continuous", "static"), 4+rng.IntN(40))
		fmt.Fprintf(&b, "[router]\nname = %q\n", pick("least-outstanding", "p2c", "least-kv", "weighted-least-outstanding", "round-robin", "prefix-affinity"))
		fmt.Fprintf(&b, "[workload]\nkind = %q\nduration_s = 200\n[workload.arrival]\nrate_per_s = %d\n", pick("synthetic", "sessions"), 2+rng.IntN(20))
		fmt.Fprintf(&b, "[policies.retry]\nname = %q\nbudget = 0.5\n", pick("none", "budgeted"))
		fmt.Fprintf(&b, "[policies.hedge]\nname = %q\nmin_samples = 10\nbudget = 0.2\n", pick("none", "fixed", "tied"))
		fmt.Fprintf(&b, "[policies.probe]\nkind = %q\ninterval_s = 3\nrestart_s = 5\ncold_start_s = 5\n", pick("none", "liveness", "deep"))
		fmt.Fprintf(&b, "[spot]\nreplicas = %d\ninterruptions_per_hour = %d\nnotice_s = %d\ndrain = %v\nreplace_s = %d\n",
			1+rng.IntN(replicas), 20+rng.IntN(200), rng.IntN(30), rng.IntN(2) == 0, rng.IntN(60))
		// Failures too in half the trials, from a stream of their own so the
		// draws above stay what they were: they strike spot and other
		// replicas alike, during notices and replacements too.
		failing := false
		if frng := rand.New(rand.NewPCG(uint64(trial), 3142)); frng.IntN(2) == 0 {
			failing = true
			fmt.Fprintf(&b, "[failures]\nenabled = true\nrate_multiplier = %d\ncold_start_s = %d\n",
				[]int{100000, 300000, 1000000}[frng.IntN(3)], 1+frng.IntN(30))
		}
		// The mechanisms that once could not be combined with spot, from a
		// stream of their own: precursor drains, and scripted faults
		// (maintenance drains, crashes, hangs) on spot and other replicas.
		xrng := rand.New(rand.NewPCG(uint64(trial), 3143))
		if failing && xrng.IntN(2) == 0 {
			b.WriteString("drain_on_precursor = true\n")
		}
		if failing && xrng.IntN(2) == 0 { // warm spares, on demand, beside the spot replicas
			fmt.Fprintf(&b, "spares = %d\nspare_after_s = %d\nspare_swap_s = %d\n", 1+xrng.IntN(2), xrng.IntN(2)*60, xrng.IntN(2)*10)
		}
		for k, n := 0, xrng.IntN(4); k < n; k++ {
			fmt.Fprintf(&b, "[[faults]]\nreplica = %d\nmode = %q\nat_s = %d\nduration_s = %d\nrestart_s = %d\ndrain_grace_s = %d\ncold_start_s = 5\nperiod_s = 5\npause_s = 1\n",
				xrng.IntN(replicas), []string{"fail", "oom", "hang", "slow", "flap", "stall", "maintenance"}[xrng.IntN(7)], xrng.IntN(200), 1+xrng.IntN(60), xrng.IntN(20), xrng.IntN(20))
		}
		// A rollout in half the trials (its own stream), whose green
		// replicas are the spot ones or beside them.
		if rr := rand.New(rand.NewPCG(uint64(trial), 3144)); replicas > 1 && rr.IntN(2) == 0 {
			b.WriteString(chaosRollout(rr, 1+rr.IntN(replicas-1), 200))
		}
		src := b.String()
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			sc, err := scenario.Parse("chaos.toml", []byte(src))
			require.NoError(t, err, src)
			eng := sim.NewEngine()
			rec := fleet.NewRecorder(sc.SLO)
			fl, err := newFleet(eng, sc, rec)
			require.NoError(t, err, src)
			_, err = injectFaults(eng, fl, sc)
			require.NoError(t, err, src)
			require.NoError(t, startRollout(fl, sc), src)
			fl.StartSpot(sc.SpotParams(), sim.NewStream(sc.Seed, streams.Spot))
			if failing {
				_, err = startFailures(eng, fl, sc, sc.Seed)
				require.NoError(t, err, src)
			}
			w, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
			require.NoError(t, err)
			require.NoError(t, fl.Start(w))
			fl.DrainLimit = 600 * sim.Second
			stepChecked(t, eng, fl, rec, src, nil)
			requireDeterministic(t, sc, src)
			if failing {
				// One failures.csv for both causes, in time order; a row's
				// GPUs down are whole replicas of the fleet.
				res, err := Run(sc, Options{})
				require.NoError(t, err)
				for k, p := range res.Timeline {
					if k > 0 {
						require.GreaterOrEqual(t, p.Time, res.Timeline[k-1].Time, src)
					}
					require.Zero(t, p.GPUsDown%sc.Cluster.GPUsPerReplica(), src)
					require.InDelta(t, 1-float64(p.GPUsDown/sc.Cluster.GPUsPerReplica())/float64(sc.Cluster.Replicas), p.Capacity, 1e-9, src)
				}
			}
		})
	}
}

// Spot per group: the named group's last replicas are spot at the spot
// fraction of that group's price; only they are interrupted (failures.csv
// names the group and counts their own GPUs), requests are conserved, and
// the bill adds up per group and between spot and the rest.
func TestSpotGroup(t *testing.T) {
	src := `name = "sg"
seed = 4
[cluster]
model = "llama-3-8b"
[[cluster.groups]]
name = "base"
gpu = "H100"
tp = 1
replicas = 3
tier = "reserved"
[[cluster.groups]]
name = "burst"
gpu = "B200"
tp = 2
replicas = 3
[workload]
duration_s = 1800
[workload.arrival]
rate_per_s = 20
[cost]
power = false
[spot]
group = "burst"
replicas = 2
interruptions_per_hour = 4
notice_s = 30
replace_s = 120
[policies.retry]
name = "budgeted"
`
	sc, err := scenario.Parse("sg.toml", []byte(src))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	r := s.Requests
	require.Equal(t, r.Arrived, r.Completed+r.Failed+r.Shed+r.InFlight)
	require.NotNil(t, s.Spot)
	require.Positive(t, s.Spot.Interruptions, "2 spot replicas at 4/h for 0.5 h")
	for _, p := range res.Timeline {
		var i int
		_, err := fmt.Sscanf(p.Unit, "replica %d (burst)", &i)
		require.NoError(t, err, p.Unit)
		require.Contains(t, []int{4, 5}, i, "only the burst group's last two replicas are spot")
		require.Zero(t, p.GPUsDown%2, "B200 TP=2 replicas: 2 GPUs each")
	}
	g := s.Fleet.Groups
	secs := res.EndTime.Seconds()
	b200 := sc.Catalog().GPUs["B200"].PricePerGPUHour
	require.InDelta(t, (1+2*0.35)*2*b200*secs/3600, g[1].USD, 1e-3, "one on-demand and two spot replicas of 2 GPUs")
	require.InDelta(t, 2*2*b200*0.35*secs/3600, s.Spot.SpotUSD, 1e-3)
	require.InDelta(t, s.Cost.USD, g[0].USD+g[1].USD, 1e-3)
	require.InDelta(t, s.Cost.USD, s.Spot.SpotUSD+s.Spot.OtherUSD, 1e-3)
	requireDeterministic(t, sc, src)

	for extra, want := range map[string]string{
		"":                               "spot.group: name the group whose replicas are on spot",
		"group = \"x\"":                  `spot.group: "x" is not a group`,
		"group = \"base\"\nreplicas = 4": "spot.replicas: must be an integer in [0, the group's replicas = 3], found 4",
	} {
		bad := strings.Replace(src, "group = \"burst\"\nreplicas = 2", extra, 1)
		if !strings.Contains(extra, "replicas") {
			bad = strings.Replace(bad, "[spot]\n", "[spot]\nreplicas = 1\n", 1)
		}
		_, err := scenario.Parse("sg.toml", []byte(bad))
		require.ErrorContains(t, err, want, extra)
	}
	_, err = scenario.Parse("s.toml", []byte("name = \"s\"\n[cluster]\nreplicas = 4\n[workload]\nduration_s = 10\n[spot]\nreplicas = 1\ngroup = \"a\"\n"))
	require.ErrorContains(t, err, "spot.group: names a group of [[cluster.groups]]; this fleet has none")
}

// Spot with failures: both strike (failures also hit spot replicas during
// notices and replacements); failures.csv is one timeline of both causes
// in time order, requests are conserved.
func TestSpotWithFailures(t *testing.T) {
	sc, err := LoadBuiltin("spot-share")
	require.NoError(t, err)
	d, err := sc.Derive(OverrideOverlay("spot.interruptions_per_hour", "4"), OverrideOverlay("workload.duration_s", "1800"),
		scenario.Overlay{Name: "failures", TOML: []byte("[failures]\nenabled = true\nrate_multiplier = 300000\ncold_start_s = 60\n")})
	require.NoError(t, err)
	res, err := Run(d, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	r := s.Requests
	require.Equal(t, r.Arrived, r.Completed+r.Failed+r.Shed+r.InFlight)
	require.NotNil(t, s.Spot)
	require.NotNil(t, s.Failures)
	events := map[string]int{}
	for k, p := range res.Timeline {
		events[p.Event]++
		if k > 0 {
			require.GreaterOrEqual(t, p.Time, res.Timeline[k-1].Time)
		}
	}
	require.Equal(t, s.Spot.Interruptions, events["spot-notice"])
	require.Positive(t, events["fail"], "failures struck")
	require.Positive(t, events["spot-notice"], "spot interrupted")
	requireDeterministic(t, d, "spot-share with failures")
}

// Spot with autoscaling: only provisioned, serving spot replicas are
// interrupted (a parked one has no instance; a loading one is let be), the
// fleet stays conserved, and the bill prices each spot replica's
// provisioned time at the spot price.
func TestSpotAutoscale(t *testing.T) {
	src := `name = "sa"
seed = 5
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 6
[workload]
duration_s = 900
[workload.arrival]
process = "piecewise"
points = [[0, 2], [300, 40], [600, 40], [900, 1]]
[cost]
power = false
[autoscale]
enabled = true
metric = "outstanding"
target = 8
min_replicas = 1
interval_s = 10
scale_up_cooldown_s = 10
scale_down_window_s = 30
[autoscale.cold_start]
engine_start_s = 5
warmup_s = 1
[spot]
replicas = 3
interruptions_per_hour = 20
notice_s = 10
replace_s = 30
[policies.retry]
name = "budgeted"
`
	sc, err := scenario.Parse("sa.toml", []byte(src))
	require.NoError(t, err)
	eng := sim.NewEngine()
	rec := fleet.NewRecorder(sc.SLO)
	fl, err := newFleet(eng, sc, rec)
	require.NoError(t, err)
	a := fl.Autoscaler
	sp := fl.StartSpot(sc.SpotParams(), sim.NewStream(sc.Seed, streams.Spot))
	w, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
	require.NoError(t, err)
	require.NoError(t, fl.Start(w))
	seen := 0
	stepChecked(t, eng, fl, rec, src, func(n int) {
		for i := range fl.Replicas {
			if fl.States()[i].Available {
				require.True(t, a.Serving(i), "event %d: replica %d available but parked, loading or draining", n, i)
			}
		}
		for ; seen < len(sp.Events); seen++ {
			if e := sp.Events[seen]; e.Event == "spot-notice" {
				require.GreaterOrEqual(t, e.Replica, 3, "only the last three are spot")
				require.False(t, a.Parked(e.Replica), "event %d: parked replica %d interrupted", n, e.Replica)
				require.True(t, fl.Replicas[e.Replica].Up(), "event %d: loading replica %d interrupted", n, e.Replica)
			}
		}
	})
	require.Positive(t, sp.Interruptions)

	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	require.NotNil(t, s.Spot)
	require.NotNil(t, s.Autoscale)
	require.InDelta(t, s.Cost.USD, s.Spot.SpotUSD+s.Spot.OtherUSD, 1e-3, "the bill is spot plus the rest")
	price := sc.Price()
	var spotH, otherH float64
	for i := range res.Fleet.Replicas {
		h := res.Fleet.Life.ProvisionedNs(i, res.EndTime).Seconds() / 3600
		if i >= 3 {
			spotH += h
		} else {
			otherH += h
		}
	}
	require.Positive(t, spotH, "the peak provisions spot replicas")
	require.InDelta(t, spotH*price*0.35, s.Spot.SpotUSD, 1e-3)
	require.InDelta(t, otherH*price, s.Spot.OtherUSD, 1e-3)
	require.InDelta(t, spotH+otherH, s.Cost.GPUHours, 1e-4)
	requireDeterministic(t, sc, src)
}

// Under autoscaling a fleet of groups starts its cheapest replica per unit
// of capacity first; a spot replica costs its price fraction, so it starts
// before its group's (and an equal group's) on-demand replicas.
func TestSpotAutoscaleStartsSpotFirst(t *testing.T) {
	src := `name = "ssf"
[cluster]
model = "llama-3-8b"
[[cluster.groups]]
name = "a"
gpu = "H100"
tp = 1
replicas = 2
price_per_gpu_hour = 10
[[cluster.groups]]
name = "b"
gpu = "H100"
tp = 1
replicas = 2
price_per_gpu_hour = 10
[workload]
duration_s = 60
[workload.arrival]
rate_per_s = 1
[autoscale]
enabled = true
min_replicas = 1
initial_replicas = 1
[spot]
group = "b"
replicas = 1
`
	sc, err := scenario.Parse("ssf.toml", []byte(src))
	require.NoError(t, err)
	fl, err := newFleet(sim.NewEngine(), sc, fleet.NewRecorder(sc.SLO))
	require.NoError(t, err)
	a := fl.Autoscaler
	require.False(t, a.Parked(3), "the spot replica (b's last) starts first")
	for i := range 3 {
		require.True(t, a.Parked(i), "on-demand replica %d waits", i)
	}
}

// Warm spares beside spot replicas: spares stand in for failed replicas,
// not for interrupted ones, so with no failures they wait the whole run
// while the spot replicas are interrupted; they are paid on demand, the
// spot replicas at the spot fraction.
func TestSpotWithSpares(t *testing.T) {
	src := `name = "spot-spares"
seed = 2
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 4
[workload]
duration_s = 1800
[workload.arrival]
rate_per_s = 20
[cost]
power = false
[spot]
replicas = 2
interruptions_per_hour = 6
notice_s = 30
replace_s = 120
[failures]
enabled = true
rate_multiplier = 0.000001
spares = 2
`
	sc, res, s := runConserved(t, src)
	require.Positive(t, s.Spot.Interruptions)
	require.Zero(t, s.Failures.SparesUsed, "no failure: the spares never stood in")
	secs := res.EndTime.Seconds()
	require.InDelta(t, 2*secs, res.IdleSpareS, 1e-6, "both spares waited the whole run")
	price := sc.Price()
	require.InDelta(t, 2*secs/3600*price*0.35, s.Spot.SpotUSD, 1e-6, "the spot replicas at the spot fraction")
	require.InDelta(t, 4*secs/3600*price, s.Spot.OtherUSD, 1e-6, "two on-demand slots and two spares")
	require.InDelta(t, s.Spot.SpotUSD+s.Spot.OtherUSD, s.Cost.USD, 1e-5)
	for _, p := range res.Timeline {
		require.True(t, p.Capacity >= 0 && p.Capacity <= 1, "%+v", p)
	}
	requireDeterministic(t, sc, src)
}
