package experiments

import (
	"fmt"
	"github.com/fleetsim/fleetsim/internal/streams"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
	"github.com/stretchr/testify/require"
)

// TestChaos: random fleets (dense, with or without pipeline stages, or MoE
// with attention DP and expert parallelism; with or without speculative
// decoding) with random batching, allocators, routers,
// policies (late binding among them), fallback pools, rollouts, faults and failures. After every
// event, requests are conserved and every replica's bookkeeping matches
// what it holds; at the end everything has drained; and the runner gives
// identical summaries twice. A property test
// against the model's own invariants (3,200 configurations passed when it
// was written; CI runs 24; FLEETSIM_CHAOS_TRIALS=N runs N). A third of the
// failure trials use the rackscale profile and a third a custom profile of
// rack-scale rows only (rack, row, degraded NVLink domain).
func TestChaos(t *testing.T) {
	checkOutstandingIndex(t)
	trials := 24
	if n, err := strconv.Atoi(os.Getenv("FLEETSIM_CHAOS_TRIALS")); err == nil && n > 0 {
		trials = n
	}
	if testing.Short() {
		trials = 6
	}
	// Disaggregated trials with failures, those where failures hit the
	// decode pool, its hits, and its KV losses re-prefilled.
	var disaggFailTrials, decodeHitTrials, decodeHits, decodeLost, lateTrials, lateQueued, fanTrials int64
	defer func() {
		t.Logf("disaggregated trials with [failures]: %d; with decode-pool hits: %d (%d hits, %d decode KV losses re-prefilled)",
			disaggFailTrials, decodeHitTrials, decodeHits, decodeLost)
		t.Logf("trials whose late-binding gateway queued requests: %d (%d requests); fan-out trials: %d", lateTrials, lateQueued, fanTrials)
	}()
	for trial := 0; trial < trials; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 77))
		pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
		// Disaggregated trials draw from a stream of their own, so the
		// co-located trials stay the configurations they always were.
		drng := rand.New(rand.NewPCG(uint64(trial), 131))
		disagg := drng.IntN(3) == 0
		var b strings.Builder
		replicas := 2 + rng.IntN(4)
		fmt.Fprintf(&b, "name = \"chaos-%d\"\nseed = %d\n", trial, trial+1)
		// MoE, expert parallelism and speculation come from their own
		// stream, so the dense trials draw as they always did.
		xr := rand.New(rand.NewPCG(uint64(trial), 78))
		moe, dp, ep := xr.IntN(3) == 0, []int{1, 2, 4}[xr.IntN(3)], xr.IntN(2) == 0
		spec := ""
		if xr.IntN(3) == 0 {
			spec = fmt.Sprintf("[cluster.replica.speculative]\nenabled = true\ntokens = %d\nacceptance = %v\n", 1+xr.IntN(5), []float64{0, 0.5, 0.9, 1}[xr.IntN(4)])
		}
		pipeline := !moe && xr.IntN(4) == 0
		if spec != "" && xr.IntN(2) == 0 {
			spec += fmt.Sprintf("acceptance_spread = %v\n", []float64{0.1, 0.5}[xr.IntN(2)])
		}
		gpu, tp := pick("H100", "H200", "B200", "GB200"), pick("1", "1", "2", "4", "8")
		model, layout := "llama-3-8b", ""
		if pipeline {
			layout, spec = fmt.Sprintf("pp = %d\n", []int{2, 4}[xr.IntN(2)]), "" // stages across servers when tp·pp > 8
		}
		if moe {
			model = "qwen3-30b-a3b"
			tpN, _ := strconv.Atoi(tp)
			dp = min(dp, 8/tpN)
			layout = fmt.Sprintf("dp = %d\n", dp)
			if ep {
				layout += fmt.Sprintf("ep = %d\n", tpN*dp)
			}
		}
		decodeLayout := ""
		if disagg { // the prefill pool keeps the trial's model and layout; the decode pool may speculate (below)
			spec = ""
			if moe { // and decode wide: attention DP, expert parallel (its own stream)
				lr := rand.New(rand.NewPCG(uint64(trial), 79))
				tpN, _ := strconv.Atoi(tp)
				ddp := min([]int{1, 2, 4}[lr.IntN(3)], 8/tpN)
				decodeLayout = fmt.Sprintf("dp = %d\nep = %d\n", ddp, tpN*ddp)
			}
		}
		fmt.Fprintf(&b, "[cluster]\ngpu = %q\nmodel = %q\ntp = %s\nreplicas = %d\nplacement = %q\n%s",
			gpu, model, tp, replicas, pick("pack", "spread"), layout)
		alloc := pick("paged", "paged", "contiguous")
		batching := pick("chunked", "continuous", "static")
		if disagg { // the paged allocator and iteration-level batching
			alloc = "paged"
			batching = []string{"chunked", "continuous"}[drng.IntN(2)]
		}
		prefixCaching := alloc == "paged" && rng.IntN(2) == 0
		fmt.Fprintf(&b, "[cluster.replica]\nbatching = %q\nallocator = %q\nprefix_caching = %v\nkv_blocks = %d\nmax_seqs = %d\nmax_batched_tokens = %d\ncold_start_s = 5\nrestart_s = 2\n",
			batching, alloc, prefixCaching, 1500+rng.IntN(6000), 4+rng.IntN(40), 512+rng.IntN(4096))
		fmt.Fprintf(&b, "[router]\nname = %q\n", pick("round-robin", "least-outstanding", "p2c", "least-kv", "weighted-least-outstanding", "prefix-affinity", "random"))
		fmt.Fprintf(&b, "[workload]\nkind = %q\nduration_s = 120\n", pick("synthetic", "sessions", "agentic"))
		fmt.Fprintf(&b, "[workload.arrival]\nrate_per_s = %d\n", 2+rng.IntN(20))
		// A fan-out in a quarter of the trials, from a stream of its own.
		if fr := rand.New(rand.NewPCG(uint64(trial), 80)); fr.IntN(4) == 0 {
			src := b.String()
			i := strings.Index(src, "[workload.arrival]")
			b.Reset()
			b.WriteString(src[:i] + fmt.Sprintf("fanout = %d\n", []int{2, 3, 8}[fr.IntN(3)]) + src[i:])
		}
		fmt.Fprintf(&b, "[policies]\ntimeout_s = %d\ntotal_timeout_s = %d\n", rng.IntN(2)*(2+rng.IntN(10)), rng.IntN(2)*(30+rng.IntN(60)))
		fmt.Fprintf(&b, "[policies.hedge]\nname = %q\nmin_samples = 10\nbudget = 0.2\n", pick("none", "fixed", "adaptive", "tied"))
		fmt.Fprintf(&b, "[policies.breaker]\nname = %q\n", pick("none", "sliding-window"))
		fmt.Fprintf(&b, "[policies.retry]\nname = %q\nbudget = 0.3\n", pick("none", "budgeted"))
		fmt.Fprintf(&b, "[policies.admission]\nname = %q\nlimit = 20\naction = %q\ndefer_max = 3\n", pick("none", "queue"), pick("shed", "defer"))
		fmt.Fprintf(&b, "[policies.probe]\nkind = %q\ninterval_s = 3\nrestart_s = 5\ncold_start_s = 5\n", pick("none", "liveness", "deep"))
		// Late binding from a stream of its own (the other draws stay).
		if qr := rand.New(rand.NewPCG(uint64(trial), 79)); qr.IntN(2) == 0 {
			fmt.Fprintf(&b, "[policies.queue]\nbinding = \"late\"\norder = %q\nslots_per_replica = %d\nmax_queued = %d\n",
				[]string{"fifo", "shortest-prompt"}[qr.IntN(2)], qr.IntN(3)*4, qr.IntN(2)*50)
		}
		for f := 0; f < rng.IntN(4); f++ {
			fmt.Fprintf(&b, "[[faults]]\nat_s = %d\nreplica = %d\nmode = %q\nduration_s = 20\nrestart_s = %d\ncold_start_s = 5\nperiod_s = 5\npause_s = 1\n",
				rng.IntN(100), rng.IntN(replicas), pick("fail", "oom", "hang", "slow", "flap", "stall", "maintenance"), rng.IntN(2)*5)
		}
		if rng.IntN(3) == 0 { // with [disagg] too: its decode indices follow the fallback's
			fmt.Fprintf(&b, "[fallback]\nenabled = true\nreplicas = %d\n", 1+rng.IntN(2))
		}
		rollout := rng.IntN(3) == 0 && replicas > 2 && !disagg
		if rollout {
			fmt.Fprintf(&b, "[rollout]\nenabled = true\nstart_s = %d\nnew_replicas = %d\nstep_s = 20\nload_s = 5\nerror_rate = %v\nslow_factor = %v\njudge = %q\n",
				rng.IntN(40), 1+rng.IntN(replicas-1), []float64{0, 0.3}[rng.IntN(2)], []float64{1, 3}[rng.IntN(2)], pick("margin", "mann-whitney"))
		}
		// Most disaggregated trials have failures, which strike both pools
		// (the extra draw comes from their own stream).
		if rng.IntN(2) == 0 || (disagg && drng.IntN(4) != 0) {
			fmt.Fprintf(&b, "[failures]\nenabled = true\nrate_multiplier = 100000\ncold_start_s = 5\ndrain_on_precursor = %v\n", rng.IntN(2) == 0)
			if !rollout {
				fmt.Fprintf(&b, "spares = %d\nspare_after_s = %d\nspare_swap_s = %d\n", rng.IntN(3), rng.IntN(2)*60, trial%3*10) // (the swap delay draws nothing)
			} else if sr := rand.New(rand.NewPCG(uint64(trial), 133)); sr.IntN(3) != 0 {
				// Spares beside the rollout (their own stream: the other
				// trials stay as they were).
				fmt.Fprintf(&b, "spares = %d\nspare_after_s = %d\nspare_swap_s = %d\n", 1+sr.IntN(2), sr.IntN(2)*60, trial%3*10)
			}
			if disagg {
				fmt.Fprintf(&b, "decode_spares = %d\n", drng.IntN(3))
			}
			// Rack-scale faults: the rackscale profile, or a custom one of
			// rack, row and degraded-domain rows only, at rates that hit
			// every trial (the draws come last: earlier trials' configs
			// stay as they were).
			switch rng.IntN(3) {
			case 1:
				fmt.Fprintf(&b, "profile = \"rackscale\"\nracks_per_row = %d\n", 1+rng.IntN(3))
			case 2:
				fmt.Fprintf(&b, "profile = \"none\"\nracks_per_row = %d\n", 1+rng.IntN(3))
				for _, c := range []string{"switch-tray", "coolant", "power-shelf", "row-power", "compute-tray"} {
					fmt.Fprintf(&b, "[[failures.components]]\ncomponent = %q\nrate_per_gpu_hour = %g\n[failures.components.repair]\ndist = \"fixed\"\nhours = %g\n",
						c, 1e-5*float64(1+rng.IntN(5)), 0.002*float64(1+rng.IntN(10)))
				}
			}
			if rng.IntN(2) == 0 { // repair escalation and a spare swap delay
				fmt.Fprintf(&b, "[failures.escalation]\nenabled = true\n[[failures.escalation.stages]]\nname = \"reset\"\nfix_probability = 0.5\n[failures.escalation.stages.repair]\ndist = \"fixed\"\nhours = 0.005\n[[failures.escalation.stages]]\nname = \"reboot\"\nfix_probability = 0.5\n[failures.escalation.stages.repair]\ndist = \"fixed\"\nhours = 0.01\n[[failures.escalation.stages]]\nname = \"hw-swap\"\nfix_probability = 1\n[failures.escalation.stages.repair]\ndist = \"fixed\"\nhours = 0.02\n")
			}
		}
		b.WriteString(spec)
		if disagg {
			link, layerwise, decodes := []string{"auto", "rdma"}[drng.IntN(2)], drng.IntN(2) == 0, 1+drng.IntN(3)
			batching, pc, kvBlocks, maxSeqs := []string{"chunked", "continuous"}[drng.IntN(2)], drng.IntN(2) == 0, 1500+drng.IntN(6000), 4+drng.IntN(40)
			router := []string{"round-robin", "least-outstanding", "p2c", "least-kv", "random", "cache-aware"}[drng.IntN(6)]
			choice := []string{"router", "router", "transfer-aware"}[drng.IntN(3)]
			fmt.Fprintf(&b, "[disagg]\nenabled = true\nlink = %q\nlayerwise = %v\ndecode_choice = %q\n[disagg.decode]\nreplicas = %d\n%s", link, layerwise, choice, decodes, decodeLayout)
			fmt.Fprintf(&b, "[disagg.decode.replica]\nbatching = %q\nprefix_caching = %v\nkv_blocks = %d\nmax_seqs = %d\ncold_start_s = 5\n",
				batching, pc, kvBlocks, maxSeqs)
			fmt.Fprintf(&b, "[disagg.router]\nname = %q\n", router)
			if drng.IntN(3) == 0 { // speculative decoding on the decode pool
				fmt.Fprintf(&b, "[disagg.decode.replica.speculative]\nenabled = true\ntokens = %d\nacceptance = %v\nacceptance_spread = %v\n",
					1+drng.IntN(5), []float64{0, 0.5, 0.9, 1}[drng.IntN(4)], []float64{0, 0.1, 0.5}[drng.IntN(3)])
			}
		}
		if prefixCaching && drng.IntN(2) == 0 {
			// KV tiers small enough to evict, sometimes a shared store.
			fmt.Fprintf(&b, "[kv_tiers]\nenabled = true\nhost_dram_gb_per_gpu = %d\nssd_gb_per_gpu = %d\nstore_gb = %d\nlayerwise = %v\n",
				drng.IntN(3), drng.IntN(2)*drng.IntN(4), drng.IntN(2)*drng.IntN(8), drng.IntN(2) == 0)
		}
		src := b.String()
		if disagg && drng.IntN(2) == 0 {
			// Deep probes, which watch both pools and restart what hangs.
			src = strings.Replace(src, "[policies.probe]\nkind = \"none\"", "[policies.probe]\nkind = \"deep\"", 1)
		}
		if drng.IntN(4) == 0 {
			// The cache-aware router (it reads the replicas' caches and tiers).
			src = strings.Replace(src, "[router]\nname = ", "[router]\nname = \"cache-aware\"\n# was ", 1)
		}
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			sc, err := scenario.Parse("chaos.toml", []byte(src))
			require.NoError(t, err, src)
			eng := sim.NewEngine()
			rec := fleet.NewRecorder(sc.SLO)
			fl, err := newFleet(eng, sc, rec)
			require.NoError(t, err)
			require.NoError(t, startRollout(fl, sc))
			for i, fc := range sc.Faults {
				require.NoError(t, failures.NewApplier(eng, fl).Inject(fc, sim.NewStream(sc.Seed, fmt.Sprintf("faults/%d", i))))
			}
			if sc.Failures.Enabled {
				_, err := startFailures(eng, fl, sc, sc.Seed)
				require.NoError(t, err)
			}
			var decode []*engine.Replica
			if fl.Disagg != nil {
				// Decode replicas crash, hang and lose their in-flight work;
				// their requests' KV is lost and they are prefilled again.
				decode = fl.Disagg.Decode.Replicas
				for k := drng.IntN(5); k > 0; k-- {
					r, at, mode := decode[drng.IntN(len(decode))], sim.FromSeconds(drng.Float64()*100), drng.IntN(3)
					eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) {
						switch mode {
						case 0:
							r.Fail(now, engine.FailCrashed)
							r.Recover(now, 5*sim.Second, nil)
						case 1:
							r.Hang(now)
							eng.Schedule(now+10*sim.Second, sim.PriorityFailure, func(t sim.Time) { r.Recover(t, 5*sim.Second, nil) })
						default:
							r.FailInFlight(now, engine.FailNVLink)
						}
					})
				}
			}
			w, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
			require.NoError(t, err)
			fl.SetSpecStream(sim.NewStream(sc.Seed, streams.Speculation))
			fl.SetFanOut(sc.Workload.FanOutWidth())
			require.NoError(t, fl.Start(w))
			fl.StartSampling(10 * sim.Second)
			fl.DrainLimit = 600 * sim.Second
			n := 0
			for !fl.Truncated && eng.Step() {
				n++
				require.Equal(t, rec.Arrived, rec.Completed+rec.Failed+rec.Shed+rec.InFlight(), "event %d\n%s", n, src)
				for _, r := range fl.Replicas {
					require.NoError(t, r.CheckInvariants(), "event %d at %v\n%s", n, eng.Now(), src)
				}
				decServing := 0
				for j, r := range decode {
					require.NoError(t, r.CheckInvariants(), "decode replica, event %d at %v\n%s", n, eng.Now(), src)
					if fl.Disagg.DecodeStates()[j].Available {
						require.True(t, r.Up(), "decode replica %d available but down\n%s", j, src)
						decServing++
					}
				}
				if decode != nil {
					require.LessOrEqual(t, decServing, sc.Disagg.Decode.Replicas, "more decode replicas serving than disagg.decode.replicas (spares)\n%s", src)
				}
				serving := 0
				for i, r := range fl.Replicas {
					if fl.States()[i].Available {
						require.True(t, r.Up(), "replica %d available but down\n%s", i, src)
						serving++
					}
				}
				require.LessOrEqual(t, serving, sc.Cluster.Replicas, "more replicas serving than cluster.replicas (spares)\n%s", src)
				// Every change of provisioning state went through its pool.
				require.NoError(t, fl.CheckLifecycle(), "event %d at %v\n%s", n, eng.Now(), src)
				if fl.Disagg != nil {
					require.NoError(t, fl.Disagg.Decode.CheckLifecycle(), "decode pool, event %d at %v\n%s", n, eng.Now(), src)
				}
			}
			if fo := rec.FanOut; fo != nil { // every client request counted once
				require.Zero(t, rec.Arrived%int64(fo.K), src)
				require.LessOrEqual(t, fo.Completed+fo.Failed+int64(fo.Open()), rec.Arrived/int64(fo.K), src)
				if !fl.Truncated {
					require.Equal(t, rec.Arrived/int64(fo.K), fo.Completed+fo.Failed, src)
					require.Zero(t, fo.Open(), src)
				}
			}
			if !fl.Truncated {
				require.Zero(t, rec.InFlight(), src)
				if fl.Disagg != nil {
					require.Zero(t, fl.Disagg.Between(), "nothing left between the pools\n%s", src)
					require.Zero(t, fl.Disagg.HeldBlocks(), "no prefill KV left held\n%s", src)
				}
			}
			for _, r := range fl.Fallback.Replicas {
				require.NoError(t, r.CheckInvariants(), src)
			}
			// The same scenario through the runner twice: identical summaries.
			var outs [2]string
			for k := range outs {
				res, err := Run(sc, Options{})
				require.NoError(t, err, src)
				s := report.Summarize(res)
				js, err := s.MarshalJSON()
				require.NoError(t, err)
				outs[k] = string(js)
				if k == 0 && s.FanOut != nil {
					fanTrials++
				}
				if k == 0 && s.Resilience.Queued > 0 {
					lateTrials++
					lateQueued += s.Resilience.Queued
				}
				if k == 0 && s.Disagg != nil && s.Failures != nil {
					disaggFailTrials++
					if d := s.Failures.Decode; d != nil && d.ReplicaHits > 0 {
						decodeHitTrials++
						decodeHits += int64(d.ReplicaHits)
					}
					decodeLost += s.Disagg.DecodeLost
				}
			}
			require.Equal(t, outs[0], outs[1], "determinism\n%s", src)
		})
	}
}
