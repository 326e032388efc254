package experiments

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// TestElasticHeterogeneousChaos is issue 14's combined chaos test:
// autoscaling a fleet of GPU groups of two or three types serving two
// models ([[serve]]), under calibrated failures (with warm spares in some
// groups in most trials) and, in half the trials,
// spot interruptions of part of one group (else scripted [[faults]]), with a random router, batching,
// gateway policies and shared cold-start model. After every event requests
// are conserved, fleet-wide and per model; every replica's KV bookkeeping
// holds; no parked, loading or draining replica is available and no down
// one either; every model keeps a provisioned replica; no parked replica
// is interrupted; the groups' spares stay outside the autoscaler's range
// (as many as built, never held by it nor available); at the end
// everything has drained; twice through the
// runner gives byte-identical summaries.
func TestElasticHeterogeneousChaos(t *testing.T) {
	checkOutstandingIndex(t)
	trials := 10
	if n, err := strconv.Atoi(os.Getenv("FLEETSIM_CHAOS_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	if testing.Short() {
		trials = 3
	}
	stoodIn := 0 // trials where a group's spare stood in
	defer func() {
		t.Logf("a group's spare stood in in %d of %d trials", stoodIn, trials)
		if !testing.Short() && !t.Failed() {
			require.Positive(t, stoodIn, "group spares stood in")
		}
	}()
	for trial := 0; trial < trials; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 1414213))
		erng := rand.New(rand.NewPCG(uint64(trial), 1732050))
		drng := rand.New(rand.NewPCG(uint64(trial), 2236067))
		srng := rand.New(rand.NewPCG(uint64(trial), 2645751)) // spot in several groups (its own stream)
		downs := 0
		pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
		var b strings.Builder
		fmt.Fprintf(&b, "name = \"elastic-chaos-%d\"\nseed = %d\n[cluster]\nmodel = \"llama-3-8b\"\n", trial, trial+1)
		fmt.Fprintf(&b, "[cluster.replica]\nbatching = %q\nkv_blocks = %d\nmax_seqs = %d\ncold_start_s = 5\nrestart_s = 2\n",
			pick("chunked", "continuous", "static"), 1500+rng.IntN(6000), 4+rng.IntN(40))
		// Two GPU types at least: the 8B model on one or two groups, the
		// 70B on another, each group of its own GPU.
		gpus := []string{"H100", "H200", "B200", "GB200"}
		rng.Shuffle(len(gpus), func(i, j int) { gpus[i], gpus[j] = gpus[j], gpus[i] })
		total := 0
		groups := 2 + rng.IntN(2)
		sizes := make([]int, groups)
		for g := 0; g < groups; g++ {
			model, tp := "llama-3-8b", pick("1", "2")
			if g == 1 {
				model, tp = "llama-3-70b", "8"
				if gpus[g] != "H100" && gpus[g] != "H200" {
					tp = pick("4", "8")
				}
			}
			n := 1 + rng.IntN(3)
			total += n
			sizes[g] = n
			fmt.Fprintf(&b, "[[cluster.groups]]\nname = \"g%d\"\ngpu = %q\ntp = %s\nreplicas = %d\nmodel = %q\n", g, gpus[g], tp, n, model)
			if n >= 2 && drng.IntN(3) == 0 { // one in repair (its own stream; the group keeps one)
				fmt.Fprintf(&b, "down_replicas = 1\n")
				downs++
			}
			if rng.IntN(3) == 0 {
				fmt.Fprintf(&b, "tier = \"reserved\"\n")
			}
			if erng.IntN(2) == 0 { // the group's own engine settings (their own stream: the fleets above are as before)
				fmt.Fprintf(&b, "[cluster.groups.replica]\nbatching = %q\nmax_seqs = %d\nkv_admission = %q\n",
					[]string{"chunked", "continuous", "static"}[erng.IntN(3)], 4+erng.IntN(40), []string{"prompt", "full"}[erng.IntN(2)])
			}
		}
		fmt.Fprintf(&b, "[[serve]]\nmodel = \"llama-3-8b\"\nshare = %d\n[[serve]]\nmodel = \"llama-3-70b\"\nshare = 1\nttft_ms = 800\n", 1+rng.IntN(3))
		fmt.Fprintf(&b, "[router]\nname = %q\n", pick("weighted-least-outstanding", "least-outstanding", "p2c", "least-kv", "round-robin", "prefix-affinity", "random"))
		fmt.Fprintf(&b, "[workload]\nkind = %q\nduration_s = 200\n", pick("synthetic", "sessions", "agentic"))
		if rng.IntN(2) == 0 {
			fmt.Fprintf(&b, "[workload.arrival]\nprocess = \"piecewise\"\npoints = [[0, %d], [100, %d], [200, 1]]\ninterpolation = %q\n",
				1+rng.IntN(2), 3+rng.IntN(6), pick("linear", "step"))
		} else {
			fmt.Fprintf(&b, "[workload.arrival]\nprocess = \"diurnal\"\nrate_per_s = %d\namplitude = 0.8\nperiod_s = 200\n", 1+rng.IntN(5))
		}
		fmt.Fprintf(&b, "[policies]\ntimeout_s = %d\n", rng.IntN(2)*(2+rng.IntN(10)))
		fmt.Fprintf(&b, "[policies.hedge]\nname = %q\nmin_samples = 10\nbudget = 0.2\n", pick("none", "fixed", "tied"))
		fmt.Fprintf(&b, "[policies.retry]\nname = %q\nbudget = 0.3\n", pick("none", "budgeted"))
		fmt.Fprintf(&b, "[policies.probe]\nkind = %q\ninterval_s = 3\nrestart_s = 5\ncold_start_s = 5\n", pick("none", "liveness", "deep"))
		minR := 2 + rng.IntN(max(total-2, 1)) // room to scale
		minR = min(minR, total-downs)         // (never one in repair)
		metric := pick("outstanding", "waiting", "rate", "kv")
		target := []float64{0.5, 1, 4}[rng.IntN(3)]
		if metric == "kv" {
			target = []float64{0.3, 0.6, 0.9}[rng.IntN(3)]
		}
		fmt.Fprintf(&b, "[autoscale]\nenabled = true\npolicy = %q\nmetric = %q\ntarget = %v\nmin_replicas = %d\ninterval_s = %d\nscale_up_cooldown_s = %d\nscale_down_window_s = %d\ndrain_grace_s = %d\nlead_s = 20\nttft_p99_ms = 300\n",
			pick("target", "slo", "schedule"), metric, target, minR, 1+rng.IntN(10), rng.IntN(20), rng.IntN(60), rng.IntN(30))
		// The cold-start model, shared by scale-ups and failure restarts.
		fmt.Fprintf(&b, "[cold_start]\nengine_start_s = %d\nwarmup_s = 1\nload_path = %q\n", rng.IntN(20), pick("nvme", "network", "peer"))
		// Spot in half the trials: part of one group, interrupted often
		// (precursor drains are for fleets without spot).
		spot := rng.IntN(2) == 0
		fmt.Fprintf(&b, "[failures]\nenabled = true\nrate_multiplier = %d\ndrain_on_precursor = %v\n",
			[]int{10000, 30000, 100000, 300000}[rng.IntN(4)], !spot && rng.IntN(2) == 0)
		if !spot {
			// Scripted faults on random replicas, parked or not ([spot]
			// refuses them).
			for k, n := 0, rng.IntN(3); k < n; k++ {
				fmt.Fprintf(&b, "[[faults]]\nreplica = %d\nmode = %q\nat_s = %d\nduration_s = %d\nrestart_s = %d\ndrain_grace_s = %d\n",
					rng.IntN(total), pick("fail", "oom", "hang", "slow", "flap", "stall", "maintenance"), rng.IntN(200), 1+rng.IntN(60), rng.IntN(20), rng.IntN(20))
			}
		}
		if spot {
			g := rng.IntN(groups)
			fmt.Fprintf(&b, "[spot]\ngroup = \"g%d\"\nreplicas = %d\ninterruptions_per_hour = %d\nnotice_s = %d\ndrain = %v\nreplace_s = %d\n",
				g, 1+rng.IntN(sizes[g]), 20+rng.IntN(200), rng.IntN(30), rng.IntN(2) == 0, rng.IntN(60))
		}
		src := b.String()
		if spot { // ([spot] refuses down replicas)
			src = strings.ReplaceAll(src, "down_replicas = 1\n", "")
			if srng.IntN(2) == 0 {
				// Spot replicas in every group instead (spot_replicas),
				// at [spot]'s rates.
				src = regexp.MustCompile(`group = "g\d+"\nreplicas = \d+\n`).ReplaceAllString(src, "")
				for g := 0; g < groups; g++ {
					src = strings.Replace(src, fmt.Sprintf("name = \"g%d\"\n", g), fmt.Sprintf("name = \"g%d\"\nspot_replicas = %d\n", g, 1+srng.IntN(sizes[g])), 1)
				}
			}
		}
		// Warm spares in some groups in most trials (a stream of their
		// own: the fleets above are as they were), outside the
		// autoscaler's range.
		if grng := rand.New(rand.NewPCG(uint64(trial), 3162277)); grng.IntN(3) != 0 {
			for g := 0; g < groups; g++ {
				if k := grng.IntN(3); k > 0 {
					src = strings.Replace(src, fmt.Sprintf("name = \"g%d\"\n", g), fmt.Sprintf("name = \"g%d\"\nspares = %d\n", g, k), 1)
				}
			}
			src = strings.Replace(src, "[failures]\n", fmt.Sprintf("[failures]\nspare_after_s = %d\nspare_swap_s = %d\n", grng.IntN(120), grng.IntN(2)*grng.IntN(30)), 1)
		}
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			sc, err := scenario.Parse("chaos.toml", []byte(src))
			require.NoError(t, err, src)
			eng := sim.NewEngine()
			rec := fleet.NewRecorder(sc.SLO)
			perModelRecorders(sc, rec)
			fl, err := newFleet(eng, sc, rec)
			require.NoError(t, err, src)
			a := fl.Autoscaler
			require.NotNil(t, a)
			fl.SetModelMix(sim.NewStream(sc.Seed, streams.Models), []float64{sc.Serve[0].Share, sc.Serve[1].Share})
			ap, err := injectFaults(eng, fl, sc)
			require.NoError(t, err, src)
			down := sc.DownIndexes()
			for _, i := range down { // as Run does
				ap.Remove(i)
			}
			var sp *fleet.Spot
			if spot {
				sp = fl.StartSpot(sc.SpotParams(), sim.NewStream(sc.Seed, streams.Spot))
			}
			_, err = startFailures(eng, fl, sc, sc.Seed)
			require.NoError(t, err, src)
			seen, swapped := 0, false
			w, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
			require.NoError(t, err)
			require.NoError(t, fl.Start(w))
			fl.DrainLimit = 600 * sim.Second
			model := func(i int) string { return fl.GroupOf(i).Model }
			stepChecked(t, eng, fl, rec, src, func(n int) {
				for _, m := range rec.PerModel {
					require.Equal(t, m.Arrived, m.Completed+m.Failed+m.Shed+m.InFlight(), "event %d, per model\n%s", n, src)
				}
				provisioned := map[string]int{}
				for i := range fl.Replicas {
					if fl.States()[i].Available {
						require.True(t, a.Serving(i), "event %d: replica %d available but parked, loading or draining\n%s", n, i, src)
						require.Equal(t, fleet.PhaseServing, fl.Life.Phase(i), "event %d: replica %d available\n%s", n, i, src)
					}
					require.Equal(t, a.Parked(i), fl.Life.Phase(i) == fleet.PhaseParked, "event %d: replica %d's phase %v\n%s", n, i, fl.Life.Phase(i), src)
					if !a.Parked(i) {
						provisioned[model(i)]++
					}
				}
				require.GreaterOrEqual(t, provisioned["llama-3-8b"], 1, "event %d\n%s", n, src)
				require.GreaterOrEqual(t, provisioned["llama-3-70b"], 1, "event %d\n%s", n, src)
				require.LessOrEqual(t, a.Provisioned(), sc.Cluster.Replicas)
				for _, i := range down {
					require.True(t, a.Parked(i), "event %d: replica %d, in repair, was started\n%s", n, i, src)
				}
				requireSparesOutside(t, a, fl.Pool, sc.GroupSpares(), n, src)
				for i := range sc.Cluster.Replicas {
					swapped = swapped || a.Spare(i)
				}
				for ; sp != nil && seen < len(sp.Events); seen++ {
					if e := sp.Events[seen]; e.Event == "spot-notice" {
						require.False(t, a.Parked(e.Replica), "event %d: parked replica %d interrupted\n%s", n, e.Replica, src)
					}
				}
			})
			// The lifecycle's provisioned time, replica by replica, is what
			// the autoscaler's actions say: from each start to its stop, and
			// from 0 for the replicas it began with.
			end := eng.Now()
			for i := range fl.Replicas {
				var evs []fleet.ScaleEvent
				for _, e := range a.Events {
					if e.Replica == i {
						evs = append(evs, e)
					}
				}
				open, prov := sim.Time(-1), sim.Time(0)
				if len(evs) > 0 && evs[0].Event != "start" || len(evs) == 0 && !a.Parked(i) {
					open = 0
				}
				for _, e := range evs {
					switch e.Event {
					case "start":
						open = e.Time
					case "stopped":
						prov, open = prov+e.Time-open, -1
					}
				}
				if open >= 0 {
					prov += end - open
				}
				require.Equal(t, prov, fl.Life.ProvisionedNs(i, end), "replica %d\n%s", i, src)
			}
			if swapped {
				stoodIn++
			}
			requireDeterministic(t, sc, src)
		})
	}
}
