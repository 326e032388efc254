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

// TestAutoscaleDiurnal runs the autoscale-diurnal built-in's arms once
// (one replication each) and checks the direction the README states: the
// autoscaled fleet pays measurably fewer GPU-hours than the static fleet
// sized for the peak while SLO attainment stays within 0.5 points, and a
// cold start 10x longer costs p99 TTFT and attainment at the ramps.
func TestAutoscaleDiurnal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three 4-hour fleets (~3 s)")
	}
	sc, err := LoadBuiltin("autoscale-diurnal")
	require.NoError(t, err)
	arms, err := ArmsFromScenario(sc)
	require.NoError(t, err)
	require.Len(t, arms, 3)
	sum := map[string]*report.Summary{}
	for _, a := range arms {
		res, err := Run(a.Scenario, Options{})
		require.NoError(t, err)
		s := report.Summarize(res)
		r := s.Requests
		require.Equal(t, r.Arrived, r.Completed+r.Failed+r.Shed+r.InFlight, a.Name)
		sum[a.Name] = s
	}
	static, auto, slow := sum["static-peak"], sum["autoscaled"], sum["autoscaled-cold-10x"]
	require.Nil(t, static.Autoscale)
	require.NotNil(t, auto.Autoscale)
	require.Less(t, auto.Cost.GPUHours, 0.8*static.Cost.GPUHours, "autoscaling saves at least 20% of GPU-hours")
	require.InDelta(t, auto.Cost.GPUHours, auto.Autoscale.GPUHours, 1e-6)
	require.Less(t, auto.Autoscale.ReplicasMean, 7.0)
	require.Equal(t, 2, auto.Autoscale.ReplicasMin)
	require.Equal(t, 8, auto.Autoscale.ReplicasMax)
	require.InDelta(t, *static.Goodput.SLOAttainment, *auto.Goodput.SLOAttainment, 0.005)
	require.Greater(t, slow.LatencyMs.TTFT.P99, auto.LatencyMs.TTFT.P99, "a 10x slower cold start hurts the tail at the ramps")
	require.Less(t, *slow.Goodput.SLOAttainment, *auto.Goodput.SLOAttainment)
	require.InDelta(t, 10*auto.Autoscale.ColdStartS, slow.Autoscale.ColdStartS, 1e-6, "the slow arm's cold start is 10x")
}

// TestColdStartPhysics pins the cold start of Llama-3-70B at TP=8 loading
// from each server's NVMe: weight bytes per GPU over the GPU's share of the
// drive, plus the stated constants.
func TestColdStartPhysics(t *testing.T) {
	sc, err := LoadBuiltin("autoscale-diurnal")
	require.NoError(t, err)
	res, err := Run(mustDerive(t, sc, "workload.duration_s", "60"), Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	w := res.Fleet.Memory.WeightBytes
	require.InDelta(t, 70.6e9*2/8, w, 0.02*w, "70B parameters at BF16 over 8 GPUs")
	cs := fleet.DefaultColdStart()
	want := cs.EngineStartS + cs.WarmupS + w/(cs.NVMeBytesPerS/float64(cs.GPUsPerServer))
	require.InDelta(t, want, s.Autoscale.ColdStartS, 1e-6)
	require.InDelta(t, 71.7, want, 0.5, "30 s + 20 s + 17.65 GB at 0.81 GB/s")
	// The shared network store is split between loaders; a peer load needs
	// a serving replica.
	cs.LoadPath = fleet.LoadNetwork
	require.InDelta(t, 20e9/16, cs.LoadBytesPerS(16, 0), 1e-6)
	require.InDelta(t, 20e9, cs.LoadBytesPerS(1, 0), 1e-6, "one loader gets the whole store")
	cs.NetworkBytesPerS = 400e9
	require.InDelta(t, 50e9, cs.LoadBytesPerS(2, 0), 1e-6, "capped by the GPU's NIC")
	cs.NetworkBytesPerS = 20e9
	cs.LoadPath = fleet.LoadPeer
	require.InDelta(t, 50e9, cs.LoadBytesPerS(64, 1), 1e-6)
	require.InDelta(t, 20e9/64, cs.LoadBytesPerS(64, 0), 1e-6, "no peer serving: from the store")
}

func mustDerive(t *testing.T, sc *scenario.Scenario, key, value string) *scenario.Scenario {
	t.Helper()
	d, err := sc.Derive(OverrideOverlay(key, value))
	require.NoError(t, err)
	return d
}

// autoscaleBase is a small autoscaled fleet that cases add keys to.
const autoscaleBase = `name = "x"
[cluster]
replicas = 4
[workload]
duration_s = 60
[autoscale]
enabled = true
`

func TestAutoscaleRefusals(t *testing.T) {
	base := autoscaleBase
	cases := map[string]string{
		"min_replicas = 5":                             "x.toml:8: autoscale.min_replicas: must be an integer in [1, cluster.replicas = 4], found 5",
		"min_replicas = 2\ninitial_replicas = 1":       "autoscale.initial_replicas: must be 0 (min_replicas) or in [min_replicas, cluster.replicas] = [2, 4], found 1",
		"policy = \"magic\"":                           "x.toml:8: autoscale.policy:",
		"metric = \"kv\"\ntarget = 2":                  "autoscale.target: a kv target is a utilisation in (0, 1], found 2",
		"metric = \"busy\"\ntarget = 1.5":              "x.toml:9: autoscale.target: a busy target is a utilisation in (0, 1], found 1.5",
		"metric = \"gpu\"":                             "x.toml:8: autoscale.metric: unknown name \"gpu\"",
		"metric = \"tokens\"":                          "autoscale.target: set it with metric = \"tokens\": outstanding tokens per replica have no default",
		"[autoscale.cold_start]\nload_path = \"tape\"": "autoscale.cold_start.load_path:",
		"[autoscale.cold_start]\nnvme_bytes_per_s = 0": "autoscale.cold_start.nvme_bytes_per_s:",
		"[run]\ndown_replicas = -2":                    "run.down_replicas: must be between 0 and cluster.replicas−1 (3), found -2",
		"[run]\ndown_replicas = 9":                     "run.down_replicas: must be between 0 and cluster.replicas−1 (3), found 9",
	}
	for extra, want := range cases {
		_, err := scenario.Parse("x.toml", []byte(base+extra+"\n"))
		require.ErrorContains(t, err, want, extra)
	}
	trace := `name = "t"
[workload]
kind = "trace"
[workload.trace]
path = "builtin:conversation_trace.jsonl"
[autoscale]
enabled = true
policy = "schedule"
`
	_, err := scenario.Parse("t.toml", []byte(trace))
	require.ErrorContains(t, err, `t.toml:8: autoscale.policy: "schedule" reads the workload's rate profile`)
}

// TestAutoscaleDefaultTarget: a target left unset is 32 for the counts and
// the rate, 0.8 for the utilisations ("kv", "busy": 32 would be refused);
// a target the file sets is kept; an arm that switches to "busy" without a
// target gets 0.8 too.
func TestAutoscaleDefaultTarget(t *testing.T) {
	base := autoscaleBase
	for extra, want := range map[string]float64{
		"":                                   32,
		"metric = \"rate\"":                  32,
		"metric = \"waiting\"":               32,
		"metric = \"kv\"":                    0.8,
		"metric = \"busy\"":                  0.8,
		"metric = \"busy\"\ntarget = 0.6":    0.6,
		"metric = \"tokens\"\ntarget = 9000": 9000,
		"policy = \"schedule\"\nmetric = \"busy\"": 32, // schedule's target is a rate
	} {
		sc, err := scenario.Parse("x.toml", []byte(base+extra+"\n"))
		require.NoError(t, err, extra)
		require.Equal(t, want, sc.Autoscale.Target, extra)
	}
	sc, err := scenario.Parse("x.toml", []byte(base))
	require.NoError(t, err)
	arm := mustDerive(t, sc, "autoscale.metric", `"busy"`)
	require.Equal(t, 0.8, arm.Autoscale.Target)
	res, err := Run(arm, Options{})
	require.NoError(t, err)
	require.Positive(t, res.Rec.Completed)
}

// TestAutoscaleChaos: random autoscaled fleets (policy, metric, interval,
// cold start, routers, batching, gateway policies, a rollout whose green
// replicas the scaler never takes), half of them under calibrated failures
// that strike serving and parked replicas alike, most of those with warm
// spares. After every event requests are conserved, replica bookkeeping
// holds, no parked or loading replica takes traffic, the fleet stays within
// its bounds, the spares stay outside them; at the end everything has
// drained; twice through the runner gives identical
// summaries.
func TestAutoscaleChaos(t *testing.T) {
	checkOutstandingIndex(t)
	trials := 10
	if n, err := strconv.Atoi(os.Getenv("FLEETSIM_CHAOS_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	if testing.Short() {
		trials = 3
	}
	stoodIn := 0 // trials where a spare stood in for a serving replica
	defer func() {
		t.Logf("a spare stood in in %d of %d trials", stoodIn, trials)
		if !testing.Short() && !t.Failed() {
			require.Positive(t, stoodIn, "spares stood in")
		}
	}()
	for trial := 0; trial < trials; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 1414))
		pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
		var b strings.Builder
		replicas := 2 + rng.IntN(5)
		fmt.Fprintf(&b, "name = \"as-chaos-%d\"\nseed = %d\n", trial, trial+1)
		fmt.Fprintf(&b, "[cluster]\ngpu = %q\nmodel = \"llama-3-8b\"\ntp = %s\nreplicas = %d\n", pick("H100", "H200", "B200"), pick("1", "2", "8"), replicas)
		fmt.Fprintf(&b, "[cluster.replica]\nbatching = %q\nkv_blocks = %d\nmax_seqs = %d\ncold_start_s = 5\nrestart_s = 2\n",
			pick("chunked", "continuous", "static"), 1500+rng.IntN(6000), 4+rng.IntN(40))
		fmt.Fprintf(&b, "[router]\nname = %q\n", pick("round-robin", "least-outstanding", "p2c", "least-kv", "weighted-least-outstanding", "prefix-affinity", "random"))
		fmt.Fprintf(&b, "[workload]\nkind = %q\nduration_s = 200\n", pick("synthetic", "sessions", "agentic"))
		if rng.IntN(2) == 0 {
			fmt.Fprintf(&b, "[workload.arrival]\nprocess = \"piecewise\"\npoints = [[0, %d], [100, %d], [200, 1]]\ninterpolation = %q\n",
				1+rng.IntN(5), 5+rng.IntN(15), pick("linear", "step"))
		} else {
			fmt.Fprintf(&b, "[workload.arrival]\nprocess = \"diurnal\"\nrate_per_s = %d\namplitude = 0.8\nperiod_s = 200\n", 3+rng.IntN(10))
		}
		fmt.Fprintf(&b, "[policies]\ntimeout_s = %d\n", rng.IntN(2)*(2+rng.IntN(10)))
		fmt.Fprintf(&b, "[policies.hedge]\nname = %q\nmin_samples = 10\nbudget = 0.2\n", pick("none", "fixed", "tied"))
		fmt.Fprintf(&b, "[policies.retry]\nname = %q\nbudget = 0.3\n", pick("none", "budgeted"))
		fmt.Fprintf(&b, "[policies.probe]\nkind = %q\ninterval_s = 3\nrestart_s = 5\ncold_start_s = 5\n", pick("none", "liveness", "deep"))
		minR := 1 + rng.IntN(replicas)
		metric := pick("outstanding", "waiting", "rate", "kv")
		target := []float64{0.5, 1, 4}[rng.IntN(3)]
		if metric == "kv" {
			target = []float64{0.3, 0.6, 0.9}[rng.IntN(3)]
		}
		// Outstanding tokens and GPU utilisation too, drawn from a stream
		// of their own so the draws above stay what they were.
		switch mrng := rand.New(rand.NewPCG(uint64(trial), 1416)); mrng.IntN(4) {
		case 0:
			metric, target = "tokens", []float64{200, 2000, 20000}[mrng.IntN(3)]
		case 1:
			metric, target = "busy", []float64{0.3, 0.6, 0.9}[mrng.IntN(3)]
		}
		fmt.Fprintf(&b, "[autoscale]\nenabled = true\npolicy = %q\nmetric = %q\ntarget = %v\nmin_replicas = %d\ninterval_s = %d\nscale_up_cooldown_s = %d\nscale_down_window_s = %d\ndrain_grace_s = %d\nlead_s = 20\nttft_p99_ms = 300\n",
			pick("target", "slo", "schedule"), metric, target,
			minR, 1+rng.IntN(10), rng.IntN(20), rng.IntN(60), rng.IntN(30))
		fmt.Fprintf(&b, "[autoscale.cold_start]\nengine_start_s = %d\nwarmup_s = 1\nload_path = %q\n", rng.IntN(20), pick("nvme", "network", "peer"))
		// Failures too, from a stream of their own so the draws above stay
		// what they were: they strike serving and parked replicas alike.
		if frng := rand.New(rand.NewPCG(uint64(trial), 1415)); frng.IntN(2) == 0 {
			fmt.Fprintf(&b, "[failures]\nenabled = true\nrate_multiplier = %d\ncold_start_s = 5\ndrain_on_precursor = %v\n",
				[]int{300000, 1000000}[frng.IntN(2)], frng.IntN(2) == 0)
			// Warm spares beside the autoscaler in most of them (a stream
			// of their own): outside its range, standing in for failed
			// serving replicas, after a swap delay or at once.
			if srng := rand.New(rand.NewPCG(uint64(trial), 1418)); srng.IntN(3) != 0 {
				fmt.Fprintf(&b, "spares = %d\nspare_after_s = %d\nspare_swap_s = %d\n", 1+srng.IntN(2), srng.IntN(120), srng.IntN(2)*srng.IntN(30))
			}
		}
		// Replicas in repair for the whole run (N+k), from a stream of
		// their own too: never one the minimum needs.
		downR := 0
		if drng := rand.New(rand.NewPCG(uint64(trial), 1417)); replicas > minR && drng.IntN(3) == 0 {
			downR = 1 + drng.IntN(replicas-minR)
			fmt.Fprintf(&b, "[run]\ndown_replicas = %d\n", downR)
		}
		// A rollout beside the scaler, from a stream of its own: its green
		// replicas are not the scaler's, which keeps min_replicas blue.
		if rr := rand.New(rand.NewPCG(uint64(trial), 1418)); replicas-downR-minR >= 1 && rr.IntN(2) == 0 {
			b.WriteString(chaosRollout(rr, 1+rr.IntN(replicas-downR-minR), 200))
		}
		src := b.String()
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			sc, err := scenario.Parse("chaos.toml", []byte(src))
			require.NoError(t, err, src)
			eng := sim.NewEngine()
			rec := fleet.NewRecorder(sc.SLO)
			fl, err := newFleet(eng, sc, rec)
			require.NoError(t, err)
			a := fl.Autoscaler
			require.NotNil(t, a)
			ap, err := injectFaults(eng, fl, sc)
			require.NoError(t, err)
			for k := 0; k < sc.Run.DownReplicas; k++ { // as Run does
				ap.Remove(sc.Cluster.Replicas - 1 - k)
			}
			require.NoError(t, startRollout(fl, sc))
			green := map[int]bool{}
			for _, i := range sc.RolloutGreen() {
				green[i] = true
			}
			if sc.Failures.Enabled {
				_, err = startFailures(eng, fl, sc, sc.Seed)
				require.NoError(t, err, src)
			}
			w, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
			require.NoError(t, err)
			require.NoError(t, fl.Start(w))
			fl.DrainLimit = 600 * sim.Second
			swapped := false
			stepChecked(t, eng, fl, rec, src, func(n int) {
				for i := range fl.Replicas {
					swapped = swapped || a.Spare(i) && i < sc.Cluster.Replicas
					if green[i] {
						require.False(t, a.Parked(i) || a.Serving(i), "event %d: the scaler took green replica %d\n%s", n, i, src)
						continue
					}
					if fl.States()[i].Available {
						require.True(t, a.Serving(i), "event %d: replica %d available but parked, loading or draining\n%s", n, i, src)
					}
				}
				require.LessOrEqual(t, a.Provisioned(), sc.Cluster.Replicas)
				require.GreaterOrEqual(t, a.Provisioned(), 1)
				for k := 0; k < downR; k++ {
					require.True(t, a.Parked(sc.Cluster.Replicas-1-k), "event %d: a replica in repair was started\n%s", n, src)
				}
				// As many spares as built, outside the range: never
				// parked, started or drained, never available (a spare
				// that serves is the autoscaler's), and a spare stood in
				// only for a replica the autoscaler had serving.
				requireSparesOutside(t, a, fl.Pool, sc.Failures.Spares, n, src)
			})
			if swapped {
				stoodIn++
			}
			requireDeterministic(t, sc, src)
		})
	}
}

// autoscaleGroupsSrc is TestAutoscaleGroups' fleet: two groups of the
// same GPU at different prices, the dear one first in index order.
const autoscaleGroupsSrc = `name = "asg"
seed = 2
[cluster]
model = "llama-3-8b"
[cluster.replica.perf]
profile = "legacy" # sized on the legacy step constants
[[cluster.groups]]
name = "dear"
gpu = "H100"
tp = 1
replicas = 3
price_per_gpu_hour = 10
[[cluster.groups]]
name = "cheap"
gpu = "H100"
tp = 1
replicas = 3
price_per_gpu_hour = 2
[cost]
power = false
[workload]
duration_s = 600
[workload.arrival]
process = "piecewise"
points = [[0, 2], [200, 60], [400, 60], [600, 1]]
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
`

// TestAutoscaleGroupDownReplicas: a group's down_replicas under
// autoscaling. The cheap group of TestAutoscaleGroups' fleet at 3 replicas
// with 1 in repair runs exactly as at 2; with all 3 in repair the initial
// replica is a dear one, no cheap one ever starts, and none is paid.
func TestAutoscaleGroupDownReplicas(t *testing.T) {
	run := func(cheap string) (*report.Result, *report.Summary) {
		// cheap: the cheap group's replicas line, and what follows it
		src := strings.Replace(autoscaleGroupsSrc, "replicas = 3\nprice_per_gpu_hour = 2", "replicas = "+cheap+"\nprice_per_gpu_hour = 2", 1)
		sc, err := scenario.Parse("asg.toml", []byte(src))
		require.NoError(t, err, cheap)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		return res, report.Summarize(res)
	}
	_, two := run("2")
	_, down := run("3\ndown_replicas = 1")
	require.Equal(t, two.Requests, down.Requests)
	require.Equal(t, two.LatencyMs, down.LatencyMs)
	require.Equal(t, two.Autoscale, down.Autoscale)
	require.Equal(t, two.Cost.USD, down.Cost.USD)
	require.Zero(t, down.Cost.Wasted.DownUSD)

	res, all := run("3\ndown_replicas = 3")
	a := res.Fleet.Autoscaler
	require.Equal(t, "start", a.Events[0].Event)
	for _, e := range a.Events {
		require.Less(t, e.Replica, 3, "%+v: a cheap replica, all in repair, was started", e)
	}
	require.Zero(t, all.Fleet.Groups[1].USD)
	require.Positive(t, all.Requests.Completed)
}

// TestAutoscaleGroups: a fleet of two groups of the same GPU at different
// prices, the dear one first in index order. The scaler starts the
// cheapest replica per capacity first and drains the dearest first: no
// dear replica starts while a cheap one is parked and up, and no cheap
// replica drains while a dear one serves. Each group pays for its
// provisioned time only, at its own price, and the bill adds up.
func TestAutoscaleGroups(t *testing.T) {
	src := autoscaleGroupsSrc
	sc, err := scenario.Parse("asg.toml", []byte(src))
	require.NoError(t, err)
	eng := sim.NewEngine()
	rec := fleet.NewRecorder(sc.SLO)
	fl, err := newFleet(eng, sc, rec)
	require.NoError(t, err)
	a := fl.Autoscaler
	require.False(t, a.Parked(3), "the cheap group's first replica is the initial one")
	require.True(t, a.Parked(0))
	w, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
	require.NoError(t, err)
	require.NoError(t, fl.Start(w))
	seen, dearStarts, cheapDrains := 0, 0, 0
	stepChecked(t, eng, fl, rec, src, func(n int) {
		for ; seen < len(a.Events); seen++ {
			e := a.Events[seen]
			switch {
			case e.Event == "start" && e.Replica < 3:
				dearStarts++
				for i := 3; i < 6; i++ {
					require.False(t, a.Parked(i) && fl.Replicas[i].Up(), "event %d: dear replica %d started while cheap %d is parked", n, e.Replica, i)
				}
			case e.Event == "drain" && e.Replica >= 3:
				cheapDrains++
				for i := 0; i < 3; i++ {
					require.False(t, a.Serving(i), "event %d: cheap replica %d drained while dear %d serves", n, e.Replica, i)
				}
			}
		}
	})
	require.Greater(t, dearStarts, 0, "the peak needs the dear group too")
	require.Greater(t, cheapDrains, 0, "the trough drains the cheap group too")

	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	g := s.Fleet.Groups
	require.Len(t, g, 2)
	require.Less(t, g[0].USD/10, g[1].USD/2, "the dear group is provisioned for less time")
	require.InDelta(t, s.Cost.USD, g[0].USD+g[1].USD, 1e-4, "the bill is the groups' provisioned time at their prices")
	require.InDelta(t, s.Cost.GPUHours, g[0].USD/10+g[1].USD/2, 1e-4)
	require.InDelta(t, s.Cost.GPUHours, s.Autoscale.GPUHours, 1e-6)
	require.Less(t, s.Cost.GPUHours, 6*res.EndTime.Seconds()/3600, "parked replicas cost nothing")
}

// Autoscaling a fleet of several models keeps a serving replica per model,
// so min_replicas below the model count is refused at its line.
func TestAutoscaleModelsMin(t *testing.T) {
	_, err := scenario.Parse("mm.toml", []byte(twoModels+"[autoscale]\nenabled = true\nmin_replicas = 1\n"))
	require.ErrorContains(t, err, "mm.toml:31: autoscale.min_replicas: must be at least the 2 served models")
}

// Reserved capacity under autoscaling: paid for the whole run whether
// provisioned or not, so provisioning it costs nothing more and the
// scaler starts it first.
func TestAutoscaleGroupsReserved(t *testing.T) {
	src := `name = "asr"
[cluster]
model = "llama-3-8b"
[[cluster.groups]]
name = "on-demand"
gpu = "H100"
tp = 1
replicas = 2
price_per_gpu_hour = 2
[[cluster.groups]]
name = "reserved"
gpu = "H100"
tp = 1
replicas = 2
price_per_gpu_hour = 10
tier = "reserved"
[cost]
power = false
[workload]
duration_s = 300
[workload.arrival]
rate_per_s = 1
[autoscale]
enabled = true
min_replicas = 1
`
	sc, err := scenario.Parse("asr.toml", []byte(src))
	require.NoError(t, err)
	fl, err := newFleet(sim.NewEngine(), sc, fleet.NewRecorder(sc.SLO))
	require.NoError(t, err)
	require.False(t, fl.Autoscaler.Parked(2), "the reserved replica starts first though its price is higher")
	require.True(t, fl.Autoscaler.Parked(0))
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	secs := res.EndTime.Seconds()
	require.InDelta(t, 2*10*secs/3600, s.Fleet.Groups[1].USD, 1e-4, "both reserved GPUs paid for the whole run")
	require.InDelta(t, s.Cost.USD, s.Fleet.Groups[0].USD+s.Fleet.Groups[1].USD, 1e-4)
	require.InDelta(t, s.Cost.GPUHours, s.Fleet.Groups[0].USD/2+s.Fleet.Groups[1].USD/10, 1e-4)
}

// Autoscaling several models: scale-ups go to the model whose requests
// pile up per unit of provisioned capacity, not to the cheapest replica
// of any model (at 4 req/s, 90% to the 70B model, the first start and
// most starts are 70B replicas).
func TestAutoscaleModelsDirection(t *testing.T) {
	src := `name = "asm"
seed = 3
[cluster]
model = "llama-3-8b"
[[cluster.groups]]
name = "small"
gpu = "H100"
tp = 1
replicas = 4
model = "llama-3-8b"
[[cluster.groups]]
name = "big"
gpu = "H100"
tp = 4
replicas = 4
model = "llama-3-70b"
[[serve]]
model = "llama-3-8b"
share = 1
[[serve]]
model = "llama-3-70b"
share = 9
[workload]
duration_s = 600
[workload.arrival]
rate_per_s = 4
[autoscale]
enabled = true
metric = "outstanding"
target = 8
min_replicas = 2
interval_s = 10
scale_up_cooldown_s = 10
[autoscale.cold_start]
engine_start_s = 5
warmup_s = 1
`
	sc, err := scenario.Parse("asm.toml", []byte(src))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	starts := map[string]int{}
	var order []string
	for _, e := range res.Fleet.Autoscaler.Events {
		if e.Event == "start" {
			m := res.Fleet.GroupOf(e.Replica).Model
			starts[m]++
			order = append(order, m)
		}
	}
	// The 8B replicas are the cheaper per capacity (1 GPU against 4), but
	// the 70B model's requests are the ones piling up.
	require.NotEmpty(t, order)
	require.Equal(t, "llama-3-70b", order[0], "%v", order)
	require.Greater(t, starts["llama-3-70b"], starts["llama-3-8b"], "%v", starts)
	s := report.Summarize(res)
	r := s.Requests
	require.Equal(t, r.Arrived, r.Completed+r.Failed+r.Shed+r.InFlight)
}

// A fleet of one kind at the reserved tier under autoscaling pays for every
// replica for the whole run, parked or not (as a reserved group does); at
// the on-demand tier only provisioned time is paid. With [spot], the spot
// replicas are paid while provisioned at the spot fraction either way.
func TestAutoscaleReservedOneKind(t *testing.T) {
	src := `name = "aro"
[cluster]
model = "llama-3-8b"
gpu = "H100"
tp = 1
replicas = 4
[cost]
power = false
tier = "reserved"
[workload]
duration_s = 300
[workload.arrival]
rate_per_s = 1
[autoscale]
enabled = true
min_replicas = 1
`
	run := func(src string) (*report.Summary, float64) {
		sc, err := scenario.Parse("aro.toml", []byte(src))
		require.NoError(t, err)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		return report.Summarize(res), res.EndTime.Seconds()
	}
	s, secs := run(src)
	require.InDelta(t, 4*secs/3600, s.Cost.GPUHours, 1e-6, "all 4 reserved GPUs for the whole run")
	require.InDelta(t, 2.89*4*secs/3600, s.Cost.USD, 1e-4, "H100 reserved catalog price")
	require.Less(t, s.Autoscale.ReplicasMean, 3.0, "the scaler parked replicas: they are paid anyway")

	od, odSecs := run(strings.Replace(src, `tier = "reserved"`, `tier = "on-demand"`, 1))
	require.Less(t, od.Cost.GPUHours, 4*odSecs/3600-0.01, "on demand, parked replicas cost nothing")

	sp, spSecs := run(src + "[spot]\nreplicas = 2\nprice_fraction = 0.5\ninterruptions_per_hour = 0.001\n")
	require.NotNil(t, sp.Spot)
	spotH := sp.Spot.SpotUSD / (2.89 * 0.5)
	require.Less(t, spotH, 2*spSecs/3600, "spot replicas are paid while provisioned")
	require.InDelta(t, 2*spSecs/3600+spotH, sp.Cost.GPUHours, 1e-6, "the two reserved replicas for the whole run, the spot ones while provisioned")
	require.InDelta(t, 2.89*2*spSecs/3600, sp.Spot.OtherUSD, 1e-4)
	require.InDelta(t, sp.Spot.SpotUSD+sp.Spot.OtherUSD, sp.Cost.USD, 1e-3)
}

// TestAutoscaleDownReplicas: N+k with autoscaling. An autoscaled fleet of
// 10 whose last 2 replicas are in repair serves exactly as one of 8: the
// same requests and latencies, the same scale-ups (it never asks for a
// replica it cannot start), the same bill (a replica in repair stays
// parked: not provisioned, not paid) and no down_usd (bought reserved, they
// are paid and in down_usd); and a minimum or an
// initial size that needs a replica in repair is refused.
func TestAutoscaleDownReplicas(t *testing.T) {
	base, err := LoadBuiltin("autoscale-diurnal")
	require.NoError(t, err)
	base, err = base.Derive(OverrideOverlay("run.replications", "1"))
	require.NoError(t, err)
	down, err := base.Derive(OverrideOverlay("cluster.replicas", "10"), OverrideOverlay("run.down_replicas", "2"))
	require.NoError(t, err)
	rd, err := Run(down, Options{})
	require.NoError(t, err)
	rb, err := Run(base, Options{})
	require.NoError(t, err)
	sd, sb := report.Summarize(rd), report.Summarize(rb)
	require.Equal(t, sb.Requests, sd.Requests)
	require.Equal(t, sb.LatencyMs, sd.LatencyMs)
	require.Equal(t, sb.Autoscale, sd.Autoscale)
	require.Equal(t, sb.Cost.USD, sd.Cost.USD)
	require.Zero(t, sd.Cost.Wasted.DownUSD)
	require.Equal(t, 8, sb.Autoscale.ReplicasMax, "the peak needs all 8 (so the cap binds)")

	// Bought reserved, the fleet is paid whole, parked or not: the 2 in
	// repair are paid for nothing, and down_usd says so.
	reserved, err := down.Derive(OverrideOverlay("cost.tier", `"reserved"`))
	require.NoError(t, err)
	rr, err := Run(reserved, Options{})
	require.NoError(t, err)
	sr := report.Summarize(rr)
	tp := float64(reserved.Cluster.GPUsPerReplica())
	require.InDelta(t, 2*tp*rr.EndTime.Seconds()/3600*sr.Cost.PricePerGPUHour, sr.Cost.Wasted.DownUSD, 1e-3)
	require.InDelta(t, 10*tp*rr.EndTime.Seconds()/3600*sr.Cost.PricePerGPUHour, sr.Cost.USD, 1e-3, "all 10 paid")

	for extra, want := range map[string]string{
		"min_replicas = 9":                       "autoscale.min_replicas: must be at most cluster.replicas − run.down_replicas = 8 (the replicas not in repair), found 9",
		"min_replicas = 2\ninitial_replicas = 9": "autoscale.initial_replicas: must be at most cluster.replicas − run.down_replicas = 8",
	} {
		_, err := scenario.Parse("x.toml", []byte("name = \"x\"\n[cluster]\nreplicas = 10\n[run]\ndown_replicas = 2\n[workload]\nduration_s = 60\n[autoscale]\nenabled = true\n"+extra+"\n"))
		require.ErrorContains(t, err, want, extra)
	}
}

// Autoscaling with a [fallback] pool (was refused): the fallback pool is
// its own, always provisioned; the scaler owns the primary replicas only.
// When every primary replica is down (four scripted failures at once) the
// fallback serves; the GPU-hours are the scaler's plus the fallback's for
// the whole run.
func TestAutoscaleWithFallback(t *testing.T) {
	src := `name = "af"
seed = 3
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 4
[workload]
duration_s = 1200
[workload.arrival]
process = "diurnal"
rate_per_s = 20
amplitude = 0.7
period_s = 1200
[cost]
power = false
[autoscale]
enabled = true
policy = "target"
metric = "rate"
target = 8
min_replicas = 1
[[faults]]
replica = 0
mode = "fail"
at_s = 60
restart_s = 120
[[faults]]
replica = 1
mode = "fail"
at_s = 60
restart_s = 120
[[faults]]
replica = 2
mode = "fail"
at_s = 60
restart_s = 120
[[faults]]
replica = 3
mode = "fail"
at_s = 60
restart_s = 120
[fallback]
enabled = true
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 1
`
	_, res, s := runConserved(t, src)
	require.Positive(t, s.Resilience.Fallbacks)
	require.NotNil(t, s.Autoscale)
	require.InDelta(t, s.Autoscale.GPUHours+res.EndTime.Seconds()/3600, s.Cost.GPUHours, 1e-5, "the scaler's GPU-hours and one fallback H100 for the run")
	requireDeterministic(t, res.Scenario, src)
}

// fleetsim size on an autoscaled fleet sizes the autoscaler's cap
// (cluster.replicas): it tries no cap below min_replicas (it stopped at
// once on "min_replicas must be in [1, cluster.replicas = 1]" before), and
// a cap's $ per month is what its runs paid, below the cap's full price.
func TestSizeAutoscaled(t *testing.T) {
	base, err := LoadBuiltin("autoscale-diurnal")
	require.NoError(t, err)
	base, err = base.Derive(OverrideOverlay("run.replications", "1"), OverrideOverlay("workload.duration_s", "3600"))
	require.NoError(t, err)
	targets, err := scenario.ParseSLO("ttft_p99=800ms")
	require.NoError(t, err)
	res, err := Size(base, targets, 0.95, RunOptions{})
	require.NoError(t, err)
	require.True(t, res.Autoscaled)
	for _, p := range res.Search {
		require.GreaterOrEqual(t, p.Replicas, base.Autoscale.MinReplicas)
		paid := report.StatMap(p.Arm.Stats)["cost.usd_per_month"].Mean
		require.Equal(t, paid, res.pointUSD(p))
		require.Less(t, paid, res.usdPerMonth(p.Replicas)+1e-6, "at most the cap's full price")
	}
	table := res.Table("autoscale-diurnal")
	require.Contains(t, table, "Autoscaled: replicas is the autoscaler's cap")
	require.Contains(t, table, "N+1 and N+2 show larger caps.")
}
