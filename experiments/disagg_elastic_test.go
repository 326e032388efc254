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

// disaggElasticSrc is a disaggregated fleet whose two pools are autoscaled
// on their own signals (the prefill pool on its queue, the decode pool on
// its KV use) under a load that rises and falls, with spot replicas in
// both pools.
const disaggElasticSrc = `name = "pd-elastic"
seed = 4
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 6
[workload]
duration_s = 1200
[workload.arrival]
process = "piecewise"
points = [[0, 2], [400, 40], [800, 40], [1200, 1]]
[workload.input]
dist = "lognormal"
mean = 2000
p99 = 6000
max = 8000
[workload.output]
dist = "lognormal"
mean = 300
p99 = 1200
max = 2000
[cost]
power = false
[autoscale]
enabled = true
metric = "waiting"
target = 2
min_replicas = 1
interval_s = 10
scale_up_cooldown_s = 10
scale_down_window_s = 60
[disagg]
enabled = true
[disagg.decode]
replicas = 6
[disagg.decode.replica]
kv_blocks = 3000
[disagg.autoscale]
enabled = true
metric = "kv"
target = 0.5
min_replicas = 1
interval_s = 10
scale_up_cooldown_s = 10
scale_down_window_s = 60
[spot]
replicas = 2
decode_replicas = 3
interruptions_per_hour = 6
notice_s = 30
replace_s = 120
[policies.retry]
name = "budgeted"
`

// TestDisaggElastic: each pool of a disaggregated fleet scales on its own
// signal, within its own bounds; the decode pool's spot replicas are
// interrupted and billed at the spot fraction; the bill is the prefill
// pool's plus the decode pool's, each from its replicas' lifecycles; after
// every event requests are conserved, every replica's phase is recorded
// and no parked decode replica is available; the runner is deterministic.
func TestDisaggElastic(t *testing.T) {
	sc, err := scenario.Parse("pd.toml", []byte(disaggElasticSrc))
	require.NoError(t, err)
	eng := sim.NewEngine()
	rec := fleet.NewRecorder(sc.SLO)
	fl, err := newFleet(eng, sc, rec)
	require.NoError(t, err)
	d := fl.Disagg
	require.NotNil(t, fl.Autoscaler)
	require.NotNil(t, d.Autoscaler)
	fl.StartSpot(sc.SpotParams(), sim.NewStream(sc.Seed, streams.Spot))
	sp := fl.StartDecodeSpot(sc.DecodeSpotParams(), sim.NewStream(sc.Seed, streams.DecodeSpot))
	w, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
	require.NoError(t, err)
	require.NoError(t, fl.Start(w))
	fl.DrainLimit = 600 * sim.Second
	stepChecked(t, eng, fl, rec, disaggElasticSrc, func(n int) {
		for j := range d.Decode.Replicas {
			if d.DecodeStates()[j].Available {
				require.Equal(t, fleet.PhaseServing, d.Decode.Life.Phase(j), "event %d: decode replica %d", n, j)
				require.False(t, d.Autoscaler.Parked(j))
			}
		}
	})
	for _, a := range []*fleet.Autoscaler{fl.Autoscaler, d.Autoscaler} {
		require.Greater(t, a.MaxSeen, a.MinSeen, "each pool scales")
		require.Positive(t, a.ScaleDowns)
	}
	for _, e := range sp.Events {
		require.True(t, e.Replica >= 3 && e.Replica < 6, "the decode pool's last three are spot: %+v", e)
	}

	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	require.NotNil(t, s.Autoscale)
	require.NotNil(t, s.Disagg.Autoscale)
	require.NotNil(t, s.Disagg.Spot)
	require.Positive(t, s.Disagg.Spot.Interruptions)
	// The decode pool is paid while provisioned, its spot replicas at the
	// spot fraction.
	price, end := sc.Price(), res.EndTime
	var spotH, otherH float64
	for j := range res.Fleet.Disagg.Decode.Replicas {
		h := res.Fleet.Disagg.Decode.Life.ProvisionedNs(j, end).Seconds() / 3600
		if j >= 3 {
			spotH += h
		} else {
			otherH += h
		}
	}
	require.Less(t, spotH+otherH, 6*end.Seconds()/3600, "the decode pool was not provisioned whole all run")
	require.InDelta(t, spotH*price*sc.Spot.PriceFraction, s.Disagg.Spot.SpotUSD, 1e-5)
	require.InDelta(t, otherH*price, s.Disagg.Spot.OtherUSD, 1e-5)
	require.InDelta(t, spotH+otherH, s.Disagg.Autoscale.GPUHours, 1e-5)
	require.InDelta(t, s.Spot.SpotUSD+s.Spot.OtherUSD+s.Disagg.Spot.SpotUSD+s.Disagg.Spot.OtherUSD, s.Cost.USD, 1e-4, "the bill is both pools'")
	// failures.csv: the decode pool's interruptions, capacity its own.
	decodeRows := 0
	for _, p := range res.Timeline {
		require.True(t, p.Capacity >= 0 && p.Capacity <= 1, "%+v", p)
		if strings.HasPrefix(p.Unit, "decode replica") {
			decodeRows++
		}
	}
	require.Positive(t, decodeRows)
	requireDeterministic(t, sc, disaggElasticSrc)
}

// TestDisaggElasticChaos: random disaggregated fleets with either pool or
// both autoscaled on a random signal, spot replicas in either pool or
// both, failures striking both pools (precursor drains, spares on either
// pool, autoscaled or not) and scripted faults: after every event
// requests are conserved, every replica's bookkeeping and phase hold in
// both pools, no parked replica is available, an autoscaled pool's spares
// stay outside its range; everything drains; the runner is deterministic.
func TestDisaggElasticChaos(t *testing.T) {
	stoodIn := 0 // decode replicas a spare stood in for, summed over the events
	defer func() {
		t.Logf("decode spares standing in: %d replica-events", stoodIn)
		if !testing.Short() && !t.Failed() {
			require.Positive(t, stoodIn, "decode spares stood in")
		}
	}()
	checkOutstandingIndex(t)
	trials := 8
	if n, err := strconv.Atoi(os.Getenv("FLEETSIM_CHAOS_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	if testing.Short() {
		trials = 3
	}
	for trial := 0; trial < trials; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 2718281))
		pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
		pre, dec := 1+rng.IntN(4), 1+rng.IntN(4)
		var b strings.Builder
		fmt.Fprintf(&b, "name = \"pd-chaos-%d\"\nseed = %d\n[cluster]\ngpu = %q\nmodel = \"llama-3-8b\"\ntp = %s\nreplicas = %d\n",
			trial, trial+1, pick("H100", "H200"), pick("1", "2"), pre)
		fmt.Fprintf(&b, "[cluster.replica]\nbatching = %q\nkv_blocks = %d\nmax_seqs = %d\ncold_start_s = 5\nrestart_s = 2\n",
			pick("chunked", "continuous"), 1500+rng.IntN(6000), 4+rng.IntN(40))
		fmt.Fprintf(&b, "[router]\nname = %q\n", pick("least-outstanding", "p2c", "least-kv", "round-robin", "random"))
		fmt.Fprintf(&b, "[workload]\nkind = %q\nduration_s = 200\n", pick("synthetic", "sessions"))
		fmt.Fprintf(&b, "[workload.arrival]\nprocess = \"piecewise\"\npoints = [[0, %d], [100, %d], [200, 1]]\n", 1+rng.IntN(3), 4+rng.IntN(20))
		fmt.Fprintf(&b, "[policies]\ntimeout_s = %d\n", rng.IntN(2)*(2+rng.IntN(10)))
		fmt.Fprintf(&b, "[policies.retry]\nname = %q\nbudget = 0.3\n", pick("none", "budgeted"))
		fmt.Fprintf(&b, "[policies.probe]\nkind = %q\ninterval_s = 3\nrestart_s = 5\ncold_start_s = 5\n", pick("none", "liveness", "deep"))
		scale := func(table string, n int) {
			metric := pick("outstanding", "waiting", "kv", "busy")
			target := []float64{0.5, 2, 8}[rng.IntN(3)]
			if metric == "kv" || metric == "busy" {
				target = []float64{0.3, 0.6, 0.9}[rng.IntN(3)]
			}
			fmt.Fprintf(&b, "[%s]\nenabled = true\nmetric = %q\ntarget = %v\nmin_replicas = %d\ninterval_s = %d\nscale_up_cooldown_s = %d\nscale_down_window_s = %d\ndrain_grace_s = %d\n[%s.cold_start]\nengine_start_s = %d\nwarmup_s = 1\n",
				table, metric, target, 1+rng.IntN(n), 1+rng.IntN(10), rng.IntN(20), rng.IntN(60), rng.IntN(30), table, rng.IntN(20))
		}
		which := rng.IntN(3) // 0: prefill, 1: decode, 2: both
		if which != 1 {
			scale("autoscale", pre)
		}
		fmt.Fprintf(&b, "[disagg]\nenabled = true\nlayerwise = %v\n[disagg.decode]\nreplicas = %d\n[disagg.decode.replica]\nkv_blocks = %d\nmax_seqs = %d\ncold_start_s = 5\n",
			rng.IntN(2) == 0, dec, 1500+rng.IntN(6000), 4+rng.IntN(40))
		if which != 0 {
			scale("disagg.autoscale", dec)
		}
		spotPre, spotDec := rng.IntN(pre+1), rng.IntN(dec+1)
		fmt.Fprintf(&b, "[spot]\nreplicas = %d\ndecode_replicas = %d\ninterruptions_per_hour = %d\nnotice_s = %d\ndrain = %v\nreplace_s = %d\n",
			spotPre, spotDec, 20+rng.IntN(200), rng.IntN(30), rng.IntN(2) == 0, rng.IntN(60))
		if rng.IntN(2) == 0 {
			fmt.Fprintf(&b, "[failures]\nenabled = true\nrate_multiplier = %d\ncold_start_s = 5\ndrain_on_precursor = %v\n",
				[]int{30000, 100000, 300000}[rng.IntN(3)], rng.IntN(2) == 0)
			if which == 1 && rng.IntN(2) == 0 { // spares on the prefill pool (not autoscaled)
				fmt.Fprintf(&b, "spares = %d\n", 1+rng.IntN(2))
			}
			// Spares beside an autoscaled pool too (a stream of their
			// own: the fleets above are as they were).
			srng := rand.New(rand.NewPCG(uint64(trial), 2718282))
			if which != 1 && srng.IntN(2) == 0 {
				fmt.Fprintf(&b, "spares = %d\n", 1+srng.IntN(2))
			}
			if which != 0 && srng.IntN(2) == 0 {
				fmt.Fprintf(&b, "decode_spares = %d\n", 1+srng.IntN(2))
			}
			fmt.Fprintf(&b, "spare_after_s = %d\nspare_swap_s = %d\n", srng.IntN(120), srng.IntN(2)*srng.IntN(30))
		}
		for k, n := 0, rng.IntN(3); k < n; k++ {
			fmt.Fprintf(&b, "[[faults]]\nreplica = %d\nmode = %q\nat_s = %d\nduration_s = %d\nrestart_s = %d\ndrain_grace_s = %d\ncold_start_s = 5\n",
				rng.IntN(pre), pick("fail", "oom", "hang", "slow", "maintenance"), rng.IntN(200), 1+rng.IntN(60), rng.IntN(20), rng.IntN(20))
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
			if sc.SpotReplicas() > 0 {
				fl.StartSpot(sc.SpotParams(), sim.NewStream(sc.Seed, streams.Spot))
			}
			if sc.DecodeSpotReplicas() > 0 {
				fl.StartDecodeSpot(sc.DecodeSpotParams(), sim.NewStream(sc.Seed, streams.DecodeSpot))
			}
			if sc.Failures.Enabled {
				_, err = startFailures(eng, fl, sc, sc.Seed)
				require.NoError(t, err, src)
			}
			w, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
			require.NoError(t, err)
			require.NoError(t, fl.Start(w))
			fl.DrainLimit = 600 * sim.Second
			d := fl.Disagg
			stepChecked(t, eng, fl, rec, src, func(n int) {
				for j, r := range d.Decode.Replicas {
					require.NoError(t, r.CheckInvariants(), "decode replica %d, event %d\n%s", j, n, src)
					if d.DecodeStates()[j].Available {
						require.True(t, r.Up(), "decode replica %d available but down\n%s", j, src)
						require.Equal(t, fleet.PhaseServing, d.Decode.Life.Phase(j), "event %d: decode replica %d\n%s", n, j, src)
					}
				}
				if a := d.Autoscaler; a != nil {
					require.LessOrEqual(t, a.Provisioned(), sc.Disagg.Decode.Replicas, src)
					requireSparesOutside(t, a, d.Decode, sc.Failures.DecodeSpares, n, src)
					for j := range sc.Disagg.Decode.Replicas {
						if a.Spare(j) {
							stoodIn++
						}
					}
				}
				if a := fl.Autoscaler; a != nil {
					requireSparesOutside(t, a, fl.Pool, sc.Failures.Spares, n, src)
				}
			})
			if !fl.Truncated {
				require.Zero(t, d.Between(), "nothing left between the pools\n%s", src)
				require.Zero(t, d.HeldBlocks(), "no prefill KV left held\n%s", src)
			}
			requireDeterministic(t, sc, src)
		})
	}
}

// requireSparesOutside requires that pool p's autoscaler a keeps the
// pool's warm spares outside its range at event n: as many as built
// (want), never held by the autoscaler, never available.
func requireSparesOutside(t *testing.T, a *fleet.Autoscaler, p *fleet.Pool, want, n int, src string) {
	t.Helper()
	spares := 0
	for i := range p.Replicas {
		if a.Spare(i) {
			spares++
			require.False(t, p.Held(i, fleet.AutoscaleHolds), "event %d: spare %d held by the autoscaler\n%s", n, i, src)
			require.False(t, p.States()[i].Available, "event %d: spare %d available\n%s", n, i, src)
		}
	}
	require.Equal(t, want, spares, "event %d\n%s", n, src)
}
