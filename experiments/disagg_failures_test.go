package experiments

import (
	"fmt"
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

// pdFailuresSrc is a disaggregated fleet on two HGX H100 servers (two TP=4
// prefill replicas on the first, two TP=4 decode replicas on the second)
// under stochastic GPU failures only ([failures], nothing scripted), at a
// rate that hits both servers in two minutes, with an 18 s repair.
const pdFailuresSrc = `name = "pd-failures"
seed = 3
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 4
replicas = 2
[workload]
kind = "synthetic"
duration_s = 120
[workload.arrival]
rate_per_s = 8
[workload.input]
dist = "lognormal"
mean = 2048
p99 = 6000
[workload.output]
dist = "lognormal"
mean = 400
p99 = 1200
[failures]
enabled = true
profile = "none"
rate_multiplier = 40
cold_start_s = 5
[[failures.components]]
component = "gpu"
rate_per_gpu_hour = 0.5
[failures.components.repair]
dist = "fixed"
hours = 0.005
[disagg]
enabled = true
[disagg.decode]
replicas = 2
`

// runStepChecked builds sc's fleet as the runner does, with its failures,
// and steps it event by event: requests conserved, every replica of both
// pools consistent with what it holds, no down replica available, after
// every event; nothing left between the pools at the end. It returns the
// fleet and the failures' report.
func runStepChecked(t *testing.T, sc *scenario.Scenario, src string) (*fleet.Fleet, *report.FailureStats) {
	t.Helper()
	eng := sim.NewEngine()
	rec := fleet.NewRecorder(sc.SLO)
	fl, err := newFleet(eng, sc, rec)
	require.NoError(t, err)
	_, err = injectFaults(eng, fl, sc) // its [[faults]], if any
	require.NoError(t, err)
	fi, err := startFailures(eng, fl, sc, sc.Seed)
	require.NoError(t, err)
	w, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
	require.NoError(t, err)
	require.NoError(t, fl.Start(w))
	fl.DrainLimit = 600 * sim.Second
	d := fl.Disagg
	stepChecked(t, eng, fl, rec, src, func(n int) {
		serving := 0
		for j, r := range d.Decode.Replicas {
			require.NoError(t, r.CheckInvariants(), "decode replica %d, event %d at %v\n%s", j, n, eng.Now(), src)
			if d.DecodeStates()[j].Available {
				require.True(t, r.Up(), "decode replica %d available but down, event %d\n%s", j, n, src)
				serving++
			}
		}
		require.LessOrEqual(t, serving, sc.Disagg.Decode.Replicas, "more decode replicas serving than disagg.decode.replicas (spares)")
	})
	require.False(t, fl.Truncated)
	require.Zero(t, d.Between(), "nothing left between the pools")
	require.Zero(t, d.HeldBlocks(), "no prefill KV left held")
	end := rec.LastEvent()
	fl.Finish(end)
	return fl, report.FailureStatsOf(fi.Report(end), end, sc.Cluster.Replicas)
}

// TestDisaggFailuresStrikeDecodePool: [failures] strikes the decode pool's
// GPUs as it does the prefill pool's (nothing is scripted here). A decode
// replica that fails loses its requests' KV: they are prefilled again and
// counted (disagg.decode_lost, within disagg.reprefills). The decode
// pool's availability is its own block, failures.csv names each row's
// pool, and the run is deterministic.
func TestDisaggFailuresStrikeDecodePool(t *testing.T) {
	sc, err := scenario.Parse("pd.toml", []byte(pdFailuresSrc))
	require.NoError(t, err)
	fl, fs := runStepChecked(t, sc, pdFailuresSrc)
	st := fl.Disagg.Stats
	t.Logf("events %d, replica hits %d (decode %d), decode down %.1f s, reprefills %d (decode lost %d), completed %d of %d",
		fs.Events, fs.ReplicaHits, fs.Decode.ReplicaHits, fs.Decode.ReplicaDownS, st.RePrefills, st.DecodeLost, fl.Rec.Completed, fl.Rec.Arrived)
	require.NotNil(t, fs.Decode, "a disaggregated fleet reports its decode pool")
	require.Positive(t, fs.Decode.ReplicaHits, "failures hit the decode pool")
	require.Less(t, fs.Decode.ReplicaHits, fs.ReplicaHits, "and the prefill pool")
	require.Positive(t, fs.Decode.ReplicaDownS, "a decode replica was out")
	require.Less(t, fs.Decode.Availability, 1.0)
	require.Positive(t, st.DecodeLost, "a decode failure lost KV")
	require.GreaterOrEqual(t, st.RePrefills, st.DecodeLost, "decode losses are re-prefills")
	require.GreaterOrEqual(t, st.Transfers, fl.Rec.Completed+st.DecodeLost, "a request whose decode replica failed transferred again")
	var waste int64
	for _, r := range fl.Disagg.Decode.Replicas {
		waste += r.Stats.WastedDecodeTokens
	}
	require.Positive(t, waste, "the lost decodes are wasted tokens")

	res, err := Run(sc, Options{})
	require.NoError(t, err)
	var pre, dec int
	for _, p := range res.Timeline {
		switch {
		case strings.HasPrefix(p.Unit, "prefill replica "):
			pre++
		case strings.HasPrefix(p.Unit, "decode replica "):
			dec++
		default:
			t.Fatalf("failures.csv row without its pool: %+v", p)
		}
	}
	require.Positive(t, pre)
	require.Positive(t, dec)
	s := report.Summarize(res)
	require.Equal(t, fl.Disagg.Stats.DecodeLost, s.Disagg.DecodeLost, "the runner and the stepped run agree")
	require.Equal(t, fs.Decode.ReplicaHits, s.Failures.Decode.ReplicaHits)
	require.Positive(t, s.Cost.Wasted.DiscardedUSD, "the decodes lost are priced")
	var tbl strings.Builder
	require.NoError(t, s.WriteTable(&tbl))
	require.Contains(t, tbl.String(), fmt.Sprintf("decode pool: %d replica hits", fs.Decode.ReplicaHits))
	requireDeterministic(t, sc, pdFailuresSrc)
}

// TestDisaggProbesWatchDecodePool: a decode replica that hangs for good
// (a scripted hang with no end) is found by the deep probes, ejected and
// restarted as a prefill replica would be; the requests it held lose their
// KV and are prefilled again, and every request completes. Without deep
// probes nothing would end the hang: the scenario is refused at its line.
func TestDisaggProbesWatchDecodePool(t *testing.T) {
	src := `name = "pd-probes"
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 2
[workload]
kind = "synthetic"
duration_s = 60
[workload.arrival]
rate_per_s = 10
[workload.input]
dist = "lognormal"
mean = 2048
p99 = 6000
[workload.output]
dist = "lognormal"
mean = 400
p99 = 1200
[policies.probe]
kind = "%KIND%"
interval_s = 2
restart_s = 5
cold_start_s = 10
[disagg]
enabled = true
[disagg.decode]
replicas = 2
[[disagg.faults]]
at_s = 20
replica = 1
mode = "hang"
`
	deep := strings.Replace(src, "%KIND%", "deep", 1)
	sc, err := scenario.Parse("pd.toml", []byte(deep))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	t.Logf("decode probes %d, ejections %d (isolated after %.0f ms), reprefills %d (decode lost %d), completed %d of %d",
		s.Disagg.DecodeProbes, s.Disagg.DecodeEjections, s.Disagg.DecodeIsolationMsMax, s.Disagg.RePrefills, s.Disagg.DecodeLost, s.Requests.Completed, s.Requests.Arrived)
	require.Positive(t, s.Disagg.DecodeProbes, "probes watch the decode pool")
	require.Equal(t, int64(1), s.Disagg.DecodeEjections, "the hung decode replica is ejected once")
	// Probes every 2 s, two failures to eject: found within 4 s of the hang.
	require.Positive(t, s.Disagg.DecodeIsolationMsMax)
	require.LessOrEqual(t, s.Disagg.DecodeIsolationMsMax, 4000.0)
	require.Zero(t, s.Resilience.Ejections, "no prefill replica is")
	require.Positive(t, s.Disagg.DecodeLost, "its requests lost their KV")
	require.Equal(t, s.Disagg.RePrefills, s.Disagg.DecodeLost, "only the decode pool lost KV")
	require.Equal(t, s.Requests.Arrived, s.Requests.Completed, "every request completes")
	// The decode pool's deep probes cost GPU time too, and
	// resilience.probe_gpu_seconds counts it with the prefill pool's.
	d := res.Fleet.Disagg
	require.Positive(t, d.ProbeStats.ProbeGPUSeconds, "the decode pool's deep probes cost GPU time")
	require.Positive(t, res.Fleet.GW.ProbeGPUSeconds, "the prefill pool's too")
	require.InDelta(t, res.Fleet.GW.ProbeGPUSeconds+d.ProbeStats.ProbeGPUSeconds, s.Resilience.ProbeGPUSecs, 2e-6,
		"probe_gpu_seconds is both pools'")
	requireDeterministic(t, sc, deep)

	_, err = scenario.Parse("pd.toml", []byte(strings.Replace(src, "%KIND%", "liveness", 1)))
	require.ErrorContains(t, err, `pd.toml:29: disagg.faults.0.duration_s: a decode replica's hang needs a duration > 0 unless deep probes`)
}

// TestDisaggFailuresNeedOneDomainSize: stochastic failures fall on one
// topology holding both pools, so pools whose GPUs have NVLink domains of
// different sizes (an HGX prefill pool, an NVL72 decode pool) are refused
// at the decode pool's gpu.
func TestDisaggFailuresNeedOneDomainSize(t *testing.T) {
	src := strings.Replace(pdFailuresSrc, "[disagg.decode]\nreplicas = 2\n", "[disagg.decode]\nreplicas = 2\ngpu = \"GB200\"\n", 1)
	require.Equal(t, "gpu = \"GB200\"", strings.Split(src, "\n")[36-1])
	_, err := scenario.Parse("pd.toml", []byte(src))
	require.ErrorContains(t, err, `pd.toml:36: disagg.decode.gpu: [failures] on a disaggregated fleet needs both pools' GPUs in NVLink domains of one size`)
}

// TestDisaggDecodeSpares: [failures] decode_spares builds warm spare decode
// replicas beyond disagg.decode.replicas, held out of the decode choice
// until a decode replica fails with a long repair; then one takes its place
// (failures.csv: "spare", "decode replica 2 for 0"), and the repaired
// replica becomes a spare. Never more decode replicas serve than
// disagg.decode.replicas; the spares are paid for; the run is
// deterministic. decode_spares without [disagg] is refused at its line.
func TestDisaggDecodeSpares(t *testing.T) {
	src := strings.Replace(pdFailuresSrc, "cold_start_s = 5\n", "cold_start_s = 5\ndecode_spares = 1\nspare_after_s = 0\n", 1)
	src = strings.Replace(src, "seed = 3\n", "seed = 2\n", 1)
	sc, err := scenario.Parse("pd.toml", []byte(src))
	require.NoError(t, err)
	fl, fs := runStepChecked(t, sc, src)
	require.Len(t, fl.Disagg.Decode.Replicas, 3, "two serving decode replicas and a spare")
	t.Logf("decode: %d hits, %d spares used, availability %.3f, idle spare %.1f s, repaired under a spare %.1f s",
		fs.Decode.ReplicaHits, fs.Decode.SparesUsed, fs.Decode.Availability, fs.Decode.IdleSpareS, fs.Decode.SpareRepairS)
	require.Equal(t, 1, fs.Decode.Spares)
	require.Positive(t, fs.Decode.SparesUsed, "a spare took a failed decode replica's place")
	require.Positive(t, fs.Decode.IdleSpareS)
	require.Zero(t, fs.Spares, "the prefill pool has none")

	res, err := Run(sc, Options{})
	require.NoError(t, err)
	swaps := 0
	for _, p := range res.Timeline {
		if p.Event == "spare" {
			require.True(t, strings.HasPrefix(p.Unit, "decode replica "), "%+v", p)
			swaps++
		}
	}
	require.Equal(t, fs.Decode.SparesUsed, swaps)
	s := report.Summarize(res)
	require.Equal(t, 2, s.Disagg.DecodeReplicas)
	require.Equal(t, 12, s.Disagg.DecodeGPUs, "the spare's GPUs are paid for")
	require.Positive(t, s.Cost.Wasted.IdleSparesUSD)
	requireDeterministic(t, sc, src)

	_, err = scenario.Parse("pd.toml", []byte(strings.Replace(src, "[disagg]\nenabled = true\n", "[disagg]\nenabled = false\n", 1)))
	require.ErrorContains(t, err, "pd.toml:26: failures.decode_spares: needs a disaggregated fleet")
}

// TestDisaggFailureRateCountsDecodeGPUs: the runaway-rate guard counts
// both pools' GPUs, since failures strike both: a multiplier the prefill
// pool's 8 GPUs alone would take (~670k expected failures) is refused at
// load time for the 16 of the disaggregated fleet (~1.3M, above
// faults.MaxEvents).
func TestDisaggFailureRateCountsDecodeGPUs(t *testing.T) {
	src := strings.Replace(pdFailuresSrc, "rate_multiplier = 40\n", "rate_multiplier = 5000000\n", 1)
	_, err := scenario.Parse("pd.toml", []byte(src))
	require.ErrorContains(t, err, "failures.rate_multiplier: 5e+06 gives about 1.33e+06 failures on 16 GPUs")
	_, err = scenario.Parse("pd.toml", []byte(strings.Replace(src, "[disagg]\nenabled = true\n", "[disagg]\nenabled = false\n", 1)))
	require.NoError(t, err, "co-located, 8 GPUs")
}

// TestDisaggHeaderCountsBothPools: fleet.nvlink_domains and the run
// header's domains count the decode pool's servers with the prefill
// pool's (one TP=8 prefill replica, two TP=8 decode replicas: three 8-GPU
// servers), as fleet.gpus counts its GPUs.
func TestDisaggHeaderCountsBothPools(t *testing.T) {
	src := `name = "pd-domains"
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 8
replicas = 1
[workload]
kind = "synthetic"
duration_s = 5
[workload.arrival]
rate_per_s = 5
[disagg]
enabled = true
[disagg.decode]
replicas = 2
`
	sc, err := scenario.Parse("pd.toml", []byte(src))
	require.NoError(t, err)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	s := report.Summarize(res)
	require.Equal(t, 24, s.Fleet.GPUs)
	require.Equal(t, 3, s.Fleet.Domains, "both pools' servers")
	var tbl strings.Builder
	require.NoError(t, s.WriteTable(&tbl))
	require.Contains(t, tbl.String(), "prefill 1× llama-3-8b TP=8 on 8 H100, decode 2× on 16 H100 (3 NVLink domains)", "each pool on its own GPUs")
}

// TestDisaggBreakerWatchesDecodePool: a decode replica that hangs for
// 40 s holds the requests whose KV lands on it until their clients time
// out. Each timeout counts against that decode replica's breaker, which
// opens and takes it out of the decode choice: far fewer requests time
// out than with no breaker, where round-robin keeps sending it half the
// decodes.
func TestDisaggBreakerWatchesDecodePool(t *testing.T) {
	src := `name = "pd-breaker"
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 2
[workload]
kind = "synthetic"
duration_s = 60
[workload.arrival]
rate_per_s = 10
[workload.input]
dist = "lognormal"
mean = 2048
p99 = 6000
[workload.output]
dist = "lognormal"
mean = 200
p99 = 600
[policies]
timeout_s = 3
[policies.breaker]
name = "%NAME%"
[disagg]
enabled = true
[disagg.router]
name = "round-robin"
[disagg.decode]
replicas = 2
[[disagg.faults]]
at_s = 10
replica = 1
mode = "hang"
duration_s = 40
`
	run := func(name string) *report.Summary {
		text := strings.Replace(src, "%NAME%", name, 1)
		sc, err := scenario.Parse("pd.toml", []byte(text))
		require.NoError(t, err)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		if name != "none" {
			requireDeterministic(t, sc, text)
		}
		return report.Summarize(res)
	}
	off, on := run("none"), run("sliding-window")
	t.Logf("timeouts: no breaker %d, breaker %d (opened %d times, isolated after %.0f ms); completed %d vs %d of %d",
		off.Resilience.Timeouts, on.Resilience.Timeouts, on.Disagg.DecodeBreakerOpens, on.Disagg.DecodeIsolationMsMax,
		off.Requests.Completed, on.Requests.Completed, on.Requests.Arrived)
	require.Zero(t, off.Disagg.DecodeBreakerOpens)
	require.Zero(t, off.Disagg.DecodeIsolationMsMax, "nothing takes the hung decode replica out without a breaker")
	require.Positive(t, on.Disagg.DecodeBreakerOpens, "the hung decode replica's breaker opens")
	require.Positive(t, on.Disagg.DecodeIsolationMsMax)
	require.Less(t, on.Disagg.DecodeIsolationMsMax, 10000.0, "within the breaker's 10 s window of the hang")
	require.Less(t, 2*on.Resilience.Timeouts, off.Resilience.Timeouts, "the breaker spares most of the timeouts")
	require.Greater(t, on.Requests.Completed, off.Requests.Completed)
}
