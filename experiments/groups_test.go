package experiments

import (
	"encoding/json"
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
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// A fleet of one group is the fleet of one kind: the same requests,
// latencies, KV and cost, byte for byte; only the fleet block gains the
// group.
func TestOneGroupIsTheHomogeneousFleet(t *testing.T) {
	def, err := LoadBuiltin("default")
	require.NoError(t, err)
	oneGroupIsTheFleet(t, string(def.Source()))
}

// Under failures too: the one group's servers fail as the fleet's do (the
// first group draws the fleet's failure stream, on the same topology).
func TestOneGroupIsTheHomogeneousFleetUnderFailures(t *testing.T) {
	def, err := LoadBuiltin("default")
	require.NoError(t, err)
	fails := string(def.Source()) + "\n[failures]\nenabled = true\nrate_multiplier = 2000000\ncold_start_s = 30\n"
	failures := oneGroupIsTheFleet(t, fails)
	var fs report.FailureStats
	require.NoError(t, json.Unmarshal(failures, &fs))
	require.Greater(t, fs.Events, 0, "failures struck")
}

// oneGroupIsTheFleet runs src (a fleet of 4 H100 TP=8) as it is and as one
// group, requires the same results, and returns the grouped run's
// failures block.
func oneGroupIsTheFleet(t *testing.T, plainSrc string) json.RawMessage {
	plain, err := scenario.Parse("plain.toml", []byte(plainSrc))
	require.NoError(t, err)
	src := strings.Replace(plainSrc, "gpu = \"H100\"", "", 1)
	src = strings.Replace(src, "tp = 8 ", "# ", 1)
	src = strings.Replace(src, "replicas = 4 ", "# ", 1)
	src = strings.Replace(src, "[router]", "[[cluster.groups]]\ngpu = \"H100\"\ntp = 8\nreplicas = 4\n\n[router]", 1)
	grouped, err := scenario.Parse("grouped.toml", []byte(src))
	require.NoError(t, err, src)
	run := func(sc *scenario.Scenario) map[string]json.RawMessage {
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		js, err := report.Summarize(res).MarshalJSON()
		require.NoError(t, err)
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(js, &m))
		return m
	}
	a, b := run(plain), run(grouped)
	// The grouped fleet's cost also splits the bill by tier; the rest of it
	// is the same.
	var cost map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b["cost"], &cost))
	var plainCost struct {
		USD float64 `json:"usd"`
	}
	require.NoError(t, json.Unmarshal(a["cost"], &plainCost))
	require.JSONEq(t, fmt.Sprintf(`{"on-demand": %v}`, plainCost.USD), string(cost["usd_by_tier"]), "one on-demand group: the whole bill")
	delete(cost, "usd_by_tier")
	bc, err := json.Marshal(cost)
	require.NoError(t, err)
	b["cost"] = bc
	for _, k := range []string{"requests", "latency_ms", "throughput", "goodput", "prefix_cache", "kv", "cost", "resilience", "failures"} {
		if a[k] == nil && b[k] == nil {
			continue // no failures block without failures
		}
		require.JSONEq(t, string(a[k]), string(b[k]), k)
	}
	var fl report.FleetStats
	require.NoError(t, json.Unmarshal(b["fleet"], &fl))
	require.Len(t, fl.Groups, 1)
	require.Equal(t, "h100-0", fl.Groups[0].Name)
	require.Equal(t, 1.0, fl.Groups[0].Capacity)
	return b["failures"]
}

// TestGroupsFailures: a fleet of an HGX H100 group and a GB200 NVL72 group
// under failures. Each group's servers fail on their own: failures.csv
// names the group of every replica that fails, both groups fail, the GPUs
// down are each replica's own (8 per H100 replica, 4 per GB200 one), every
// outage ends in a repair, and the run conserves requests.
func TestGroupsFailures(t *testing.T) {
	src := `name = "gf"
seed = 3
[cluster]
model = "llama-3-70b"
[cluster.replica]
cold_start_s = 20
[[cluster.groups]]
name = "hgx"
gpu = "H100"
tp = 8
replicas = 3
[[cluster.groups]]
name = "nvl"
gpu = "GB200"
tp = 4
replicas = 4
[workload]
duration_s = 600
[workload.arrival]
rate_per_s = 10
[failures]
enabled = true
rate_multiplier = 3000000
cold_start_s = 20
[[faults]]
replica = 4
mode = "fail"
at_s = 100
restart_s = 10
`
	sc, err := scenario.Parse("gf.toml", []byte(src))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	r := s.Requests
	require.Equal(t, r.Arrived, r.Completed+r.Failed+r.Shed+r.InFlight)
	require.NotNil(t, s.Failures)
	require.Greater(t, s.Failures.Events, 1)
	tp := map[string]int{"hgx": 8, "nvl": 4}
	down := map[string]bool{}
	failed := map[string]int{}
	for _, p := range res.Timeline {
		var i int
		var g string
		_, err := fmt.Sscanf(p.Unit, "replica %d (%s", &i, &g)
		require.NoError(t, err, p.Unit)
		g = strings.TrimSuffix(g, ")")
		require.Contains(t, tp, g, p.Unit)
		require.Equal(t, g, map[bool]string{true: "hgx", false: "nvl"}[i < 3], "replica %d is in its own group", i)
		switch p.Event {
		case "fail":
			down[p.Unit] = true
			failed[g]++
		case "repair":
			require.True(t, down[p.Unit], p.Unit)
			delete(down, p.Unit)
		}
		gpus := 0
		for u := range down {
			gpus += tp[strings.TrimSuffix(u[strings.Index(u, "(")+1:], ")")]
		}
		require.Equal(t, gpus, p.GPUsDown, "GPUs down at %v", p.Time)
	}
	require.Greater(t, failed["hgx"], 0, "the H100 servers fail")
	require.Greater(t, failed["nvl"], 0, "the NVL72 rack fails")
	requireDeterministic(t, sc, src)
}

func TestGroupsMixedFleet(t *testing.T) {
	src := fmt.Sprintf(mixedFleet, "")
	sc, err := scenario.Parse("mix.toml", []byte(src))
	require.NoError(t, err)
	require.Equal(t, 4, sc.Cluster.Replicas)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	r := s.Requests
	require.Equal(t, r.Arrived, r.Completed+r.Failed+r.Shed+r.InFlight)
	require.Equal(t, "H100+B200", s.Fleet.GPU)
	require.Equal(t, 32, s.Fleet.GPUs)
	g := s.Fleet.Groups
	require.Len(t, g, 2)
	require.Equal(t, 1.0, g[1].Capacity, "B200 is the faster group")
	require.Less(t, g[0].Capacity, 0.8)
	require.Greater(t, g[1].OutputTokens, g[0].OutputTokens, "the weighted router gives the faster group more")
	require.Greater(t, g[1].BlocksPerReplica, g[0].BlocksPerReplica, "192 GB of HBM holds more KV than 80 GB")
	require.InDelta(t, s.Cost.USD, g[0].USD+g[1].USD, 1e-4, "each group at its own price")
	require.Equal(t, 9.0, g[1].PricePerGPUHour)
}

func TestGroupsRefusals(t *testing.T) {
	base := `name = "g"
[cluster]
model = "llama-3-70b"
%s
[[cluster.groups]]
gpu = "H100"
tp = 8
replicas = 1
[[cluster.groups]]
%s
[workload]
duration_s = 10
%s
`
	cases := []struct{ top, group, tail, want string }{
		{"gpu = \"H100\"", "gpu = \"B200\"\ntp = 8\nreplicas = 1", "", "g.toml:4: cluster.gpu: is set per group"},
		{"", "gpu = \"X9\"\ntp = 8\nreplicas = 1", "", "g.toml:10: cluster.groups.1.gpu:"},
		{"", "gpu = \"H100\"\ntp = 3\nreplicas = 1", "", "g.toml:11: cluster.groups.1.tp:"},
		{"", "gpu = \"H100\"\ntp = 1\nreplicas = 1", "", "cluster.groups.1.model: llama-3-70b (141 GB weights per GPU at TP=1) does not fit"},
		{"", "name = \"h100-0\"\ngpu = \"B200\"\ntp = 8\nreplicas = 1", "", `cluster.groups.1.name: "h100-0" names two groups`},
		{"", "name = \"../x\"\ngpu = \"B200\"\ntp = 8\nreplicas = 1", "", `cluster.groups.1.name: "../x"`},
		{"", "gpu = \"B200\"\ntp = 8\nreplicas = -1", "", "cluster.groups.1.replicas: must be an integer >= 0"},
		{"", "gpu = \"B200\"\ntp = 8\nreplicas = 1", "[failures]\nenabled = true\nspares = 1", "failures.spares: a fleet of groups keeps warm spares per group"},
		{"", "gpu = \"B200\"\ntp = 8\nreplicas = 1", "[cost]\nprice_per_gpu_hour = 3", "cost.price_per_gpu_hour: set price_per_gpu_hour per group"},
	}
	for _, c := range cases {
		_, err := scenario.Parse("g.toml", []byte(fmt.Sprintf(base, c.top, c.group, c.tail)))
		require.ErrorContains(t, err, c.want, c.group+c.tail)
	}
}

// TestGroupsChaos: random fleets of GPU groups (types, TP, sizes, some
// empty; some with their own batching, batch size, KV admission and weight
// precision; KV tiers in half the trials) under random routers, batching
// and gateway policies: requests are
// conserved and replica bookkeeping holds after every event, everything
// drains, and the runner is deterministic.
func TestGroupsChaos(t *testing.T) {
	checkOutstandingIndex(t)
	trials := 8
	if n, err := strconv.Atoi(os.Getenv("FLEETSIM_CHAOS_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	if testing.Short() {
		trials = 3
	}
	var tierHits int64 // segments loaded from a KV tier, over the trials
	defer func() {
		t.Logf("KV tier hits: %d", tierHits)
		if !testing.Short() && !t.Failed() {
			require.Positive(t, tierHits, "the groups' KV tiers were read")
		}
	}()
	for trial := 0; trial < trials; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 2718))
		erng := rand.New(rand.NewPCG(uint64(trial), 31415))
		drng := rand.New(rand.NewPCG(uint64(trial), 1618))
		pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
		var b strings.Builder
		fmt.Fprintf(&b, "name = \"groups-chaos-%d\"\nseed = %d\n[cluster]\nmodel = \"llama-3-8b\"\n", trial, trial+1)
		fmt.Fprintf(&b, "[cluster.replica]\nbatching = %q\nmax_seqs = %d\ncold_start_s = 5\nrestart_s = 2\n", pick("chunked", "continuous", "static"), 4+rng.IntN(40))
		twoModels := rng.IntN(2) == 0
		minServing := 1 << 30 // the fewest serving replicas of a group
		for g, n := 0, 1+rng.IntN(3); g < n || (twoModels && g < 2); g++ {
			model, tp := "llama-3-8b", pick("1", "2", "8")
			if twoModels && g%2 == 1 {
				model, tp = "llama-3-70b", "8"
			}
			gpu := pick("H100", "H200", "B200", "GB200")
			replicas := rng.IntN(4) + map[bool]int{true: 1}[g < 2]
			fmt.Fprintf(&b, "[[cluster.groups]]\ngpu = %q\ntp = %s\nreplicas = %d\nmodel = %q\n", gpu, tp, replicas, model)
			serving := replicas
			if replicas >= 2 && drng.IntN(3) == 0 { // one in repair (its own stream too; the group keeps one serving)
				down := 1 + drng.IntN(replicas-1)
				fmt.Fprintf(&b, "down_replicas = %d\n", down)
				serving -= down
			}
			minServing = min(minServing, serving)
			if erng.IntN(2) == 0 { // the group's own engine settings (their own stream: the fleets above are as before)
				precisions := []string{"bf16", "fp8"}
				if gpu == "B200" || gpu == "GB200" {
					precisions = append(precisions, "fp4") // Blackwell only
				}
				weights := precisions[erng.IntN(len(precisions))]
				fmt.Fprintf(&b, "[cluster.groups.replica]\nbatching = %q\nmax_seqs = %d\nkv_admission = %q\nweights = %q\n",
					[]string{"chunked", "continuous", "static"}[erng.IntN(3)], 4+erng.IntN(40), []string{"prompt", "full"}[erng.IntN(2)], weights)
			}
		}
		if twoModels {
			fmt.Fprintf(&b, "[[serve]]\nmodel = \"llama-3-8b\"\nshare = %d\n[[serve]]\nmodel = \"llama-3-70b\"\nshare = 1\nttft_ms = 500\n", 1+rng.IntN(3))
		}
		fmt.Fprintf(&b, "[router]\nname = %q\n", pick("weighted-least-outstanding", "least-outstanding", "p2c", "least-kv", "round-robin", "prefix-affinity"))
		fmt.Fprintf(&b, "[workload]\nkind = %q\nduration_s = 100\n[workload.arrival]\nrate_per_s = %d\n", pick("synthetic", "sessions"), 2+rng.IntN(20))
		fmt.Fprintf(&b, "[policies.hedge]\nname = %q\nmin_samples = 10\nbudget = 0.2\n", pick("none", "fixed", "tied"))
		fmt.Fprintf(&b, "[policies.probe]\nkind = %q\ninterval_s = 3\nrestart_s = 5\ncold_start_s = 5\n", pick("none", "liveness", "deep"))
		if krng := rand.New(rand.NewPCG(uint64(trial), 2719)); krng.IntN(2) == 0 {
			// KV tiers in half the trials (a stream of their own: the
			// fleets above are as they were), small enough to evict, sized
			// per GPU of each group; sometimes a shared store, which two
			// models (or KV formats) share as formats apart.
			fmt.Fprintf(&b, "[kv_tiers]\nenabled = true\nhost_dram_gb_per_gpu = %d\nssd_gb_per_gpu = %d\nstore_gb = %d\nlayerwise = %v\n",
				krng.IntN(3), krng.IntN(2)*krng.IntN(4), krng.IntN(2)*krng.IntN(8), krng.IntN(2) == 0)
		}
		// A rollout of each group's last serving replicas, in the trials
		// where every group has two (its draws from a stream of its own).
		if rr := rand.New(rand.NewPCG(uint64(trial), 2741)); minServing >= 2 {
			b.WriteString(chaosRollout(rr, 1+rr.IntN(minServing-1), 100))
		}
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
			for _, i := range sc.Cluster.DownIndexes() { // as Run does
				ap.Remove(i)
			}
			require.NoError(t, startRollout(fl, sc), src)
			w, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
			require.NoError(t, err)
			require.NoError(t, fl.Start(w))
			fl.DrainLimit = 600 * sim.Second
			perModelRecorders(sc, rec)
			if len(sc.Serve) > 1 {
				fl.SetModelMix(sim.NewStream(sc.Seed, streams.Models), []float64{sc.Serve[0].Share, sc.Serve[1].Share})
			}
			stepChecked(t, eng, fl, rec, src, func(n int) {
				for _, m := range rec.PerModel {
					require.Equal(t, m.Arrived, m.Completed+m.Failed+m.Shed+m.InFlight(), "event %d, per model\n%s", n, src)
				}
			})
			if k := fl.KVTiers; k != nil {
				for _, st := range k.Stats() {
					tierHits += st.Hits
				}
			}
			requireDeterministic(t, sc, src)
		})
	}
}

// A group bought reserved pays the catalog's reserved price, and the bill
// splits by tier.
func TestGroupsTier(t *testing.T) {
	src := `name = "tiers"
[cluster]
model = "llama-3-8b"
[[cluster.groups]]
name = "base"
gpu = "H100"
tp = 1
replicas = 2
tier = "reserved"
[[cluster.groups]]
name = "burst"
gpu = "H100"
tp = 1
replicas = 1
[workload]
duration_s = 60
[workload.arrival]
rate_per_s = 5
`
	sc, err := scenario.Parse("t.toml", []byte(src))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	g := s.Fleet.Groups
	cat := sc.Catalog().GPUs["H100"]
	require.Equal(t, "reserved", g[0].Tier)
	require.Equal(t, cat.ReservedPricePerGPUHour, g[0].PricePerGPUHour)
	require.Equal(t, "on-demand", g[1].Tier)
	require.Equal(t, cat.PricePerGPUHour, g[1].PricePerGPUHour)
	require.InDelta(t, g[0].USD, s.Cost.USDByTier["reserved"], 1e-6)
	require.InDelta(t, g[1].USD, s.Cost.USDByTier["on-demand"], 1e-6)
	require.InDelta(t, s.Cost.USD, g[0].USD+g[1].USD, 1e-4)

	_, err = scenario.Parse("t.toml", []byte(strings.Replace(src, `tier = "reserved"`, `tier = "spot"`, 1)))
	require.ErrorContains(t, err, "t.toml:9: cluster.groups.0.tier:")
}

// TestRestartColdStart: a scripted crash's restart takes the cold-start
// model when [cold_start] is given (each replica its own group's weight
// bytes over the NVMe share, plus engine start and warm-up), the fault's
// own cold_start_s when it sets one, and the old fixed default when no
// model is configured.
func TestRestartColdStart(t *testing.T) {
	base := `name = "rc"
[cluster]
model = "llama-3-70b"
[[cluster.groups]]
gpu = "H100"
tp = 8
replicas = 2
[[cluster.groups]]
gpu = "B200"
tp = 4
replicas = 2
[workload]
duration_s = 200
[workload.arrival]
rate_per_s = 2
[[faults]]
replica = 2
mode = "fail"
at_s = 50
restart_s = 10
%s
%s
`
	const model = "[cold_start]\nengine_start_s = 30\nwarmup_s = 20\n"
	backAt := func(faultKey, table string) float64 {
		sc, err := scenario.Parse("rc.toml", []byte(fmt.Sprintf(base, faultKey, table)))
		require.NoError(t, err)
		eng := sim.NewEngine()
		rec := fleet.NewRecorder(sc.SLO)
		fl, err := newFleet(eng, sc, rec)
		require.NoError(t, err)
		_, err = injectFaults(eng, fl, sc)
		require.NoError(t, err)
		w, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
		require.NoError(t, err)
		require.NoError(t, fl.Start(w))
		r := fl.Replicas[2]
		wasDown := false
		for eng.Step() {
			if !r.Up() || r.Recovering() {
				wasDown = true
			} else if wasDown {
				return eng.Now().Seconds()
			}
		}
		t.Fatal("replica 2 never came back")
		return 0
	}
	sc, err := scenario.Parse("rc.toml", []byte(fmt.Sprintf(base, "", model)))
	require.NoError(t, err)
	fl, err := newFleet(sim.NewEngine(), sc, fleet.NewRecorder(sc.SLO))
	require.NoError(t, err)
	b200 := fl.Groups[1]
	require.Equal(t, 2, b200.First)
	// B200 TP=4: 141 GB of weights over 4 GPUs, each reading 6.5 GB/s / 8.
	load := b200.Memory.WeightBytes / (6.5e9 / 8)
	require.InDelta(t, 141e9/4, b200.Memory.WeightBytes, 2e9)
	require.InDelta(t, 50+10+30+load+20, backAt("", model), 1e-6, "the cold-start model")
	require.InDelta(t, 50+10+7, backAt("cold_start_s = 7", model), 1e-6, "the fault's own cold_start_s is kept")
	def := failures.DefaultScripted().ColdStartS
	require.InDelta(t, 50+10+def, backAt("", ""), 1e-6, "no model: the old default")
}
