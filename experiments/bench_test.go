package experiments

import (
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// azureCode is the Azure 2023 code trace's shape (CALIBRATION.md §4, C).
const azureCode = `
[workload.input]
dist = "lognormal"
mean = 2048
p99 = 7436
max = 32768
[workload.output]
dist = "lognormal"
mean = 28
p99 = 252
max = 4096
`

// benchScenario parses a benchmark's scenario on the legacy engine
// profile: the loads were sized on its speeds (each comment's "~70% load"),
// and the benchmarks measure the simulator on a fixed workload. On the
// default vllm-hopper profile SingleReplica8B's 16 req/s is past the
// replica's capacity, so it would time a growing queue (2x the CPU per
// request, 20x the allocations) instead of the simulator.
func benchScenario(b *testing.B, toml string) *scenario.Scenario {
	if !strings.Contains(toml, "[cluster.replica.perf]") && !strings.Contains(toml, "[[cluster.groups]]") {
		toml += "\n[cluster.replica.perf]\nprofile = \"legacy\"\n"
	}
	if strings.Contains(toml, "[disagg]") && !strings.Contains(toml, "[disagg.decode.replica.perf]") {
		toml += "[disagg.decode.replica.perf]\nprofile = \"legacy\"\n"
	}
	sc, err := scenario.Parse("bench.toml", []byte(toml))
	require.NoError(b, err)
	return sc
}

// cpuSeconds is the CPU time (user + system) this process has used.
func cpuSeconds(b *testing.B) float64 {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

// runBench runs sc b.N times and reports simulated requests and events per
// wall-clock second, simulated requests per CPU-second (user + system time
// of the whole process, garbage collector included: the unit, less
// sensitive to other load on a shared machine than wall time) and CPU
// seconds per run.
func runBench(b *testing.B, sc *scenario.Scenario) { runBenchWith(b, sc, Options{}) }

// runBenchWith is runBench with the run's options, and reports the wall
// time per run too.
func runBenchWith(b *testing.B, sc *scenario.Scenario, opt Options) {
	b.ReportAllocs()
	var reqs, events int64
	cpu0 := cpuSeconds(b)
	for i := 0; i < b.N; i++ {
		res, err := Run(sc, opt)
		require.NoError(b, err)
		require.Zero(b, res.Rec.InFlight())
		reqs += res.Rec.Completed
		events += int64(res.Events)
	}
	cpu := cpuSeconds(b) - cpu0
	b.ReportMetric(float64(reqs)/b.Elapsed().Seconds(), "sim-requests/s")
	b.ReportMetric(float64(reqs)/cpu, "sim-requests/CPU-s")
	b.ReportMetric(cpu/float64(b.N), "CPU-s/op")
	if opt.PrefetchWorkload {
		b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "wall-s/op")
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(reqs)/float64(b.N), "requests/op")
	b.ReportMetric(0, "ns/op")
}

// fleet8x8B is the headline case: 8 Llama-3-8B replicas on H100
// behind round-robin, Poisson 100 req/s (about half their capacity with
// these lengths), input and output lengths log-normal with mean 512
// (assumption: cv 0.5, capped at 4,096, the shape of the "512/512"
// throughput benchmarks, CALIBRATION.md's public-benchmarks rows), for n
// requests.
func fleet8x8B(n int) string {
	return fmt.Sprintf(`
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 8
[router]
name = "round-robin"
[workload]
max_requests = %d
duration_s = 0
[workload.arrival]
rate_per_s = 100
[workload.input]
dist = "lognormal"
mean = 512
cv = 0.5
max = 4096
[workload.output]
dist = "lognormal"
mean = 512
cv = 0.5
max = 4096
`, n)
}

// BenchmarkFleet8x8B is 8x Llama-3-8B, 512/512 lengths, 10^6 requests (10^5
// with -short); compare sim-requests/CPU-s (acceptance: >= 1M):
//
//	go test ./experiments -run '^$' -bench Fleet8x8B -benchtime 1x -count 6
func BenchmarkFleet8x8B(b *testing.B) {
	n := 1_000_000
	if testing.Short() {
		n = 100_000
	}
	runBench(b, benchScenario(b, fleet8x8B(n)))
}

// BenchmarkSingleReplica8B is the case (a): one Llama-3-8B H100
// replica, 10^5 requests with Azure-code-like lengths, at ~80% load.
func BenchmarkSingleReplica8B(b *testing.B) {
	sc := benchScenario(b, `
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 1
[workload]
max_requests = 100000
duration_s = 0
[workload.arrival]
rate_per_s = 16
`+azureCode)
	runBench(b, sc)
}

// BenchmarkFleet70B is the case (b): 128 Llama-3-70B TP=8 replicas
// on 1,024 H100 at about 70% load for one simulated hour (measured capacity
// with these lengths: ~1,466 req/s, so 1,030 req/s).
func BenchmarkFleet70B(b *testing.B) {
	sc := benchScenario(b, `
[cluster]
gpu = "H100"
model = "llama-3-70b"
tp = 8
replicas = 128
[workload]
duration_s = 3600
[workload.arrival]
rate_per_s = 1030
`+azureCode)
	runBench(b, sc)
}

// BenchmarkAutoscaledDay1024 is issue 14's benchmark: at most 128
// Llama-3-70B TP=8 replicas (1,024 H100) autoscaled by target tracking on
// the arrival rate over one simulated day of diurnal load averaging 1,030
// req/s, ~70% of the 128 replicas' ~1,466 req/s (BenchmarkFleet70B's
// measured capacity with these lengths), ±30% (721 to 1,339 req/s), about
// 89M requests. The target, 10.5 req/s per replica, is ~92% of one
// replica's ~11.5 (1,466 / 128), so the peak wants all 128; the fleet
// starts at 72 (the trough's rate over the target) and may shrink to 16.
// Run it once:
//
//	go test ./experiments -run '^$' -bench AutoscaledDay1024 -benchtime 1x
//
// Under -short it runs the day's first six hours (the trough and the climb
// out of it, ~18M requests): bench/pgo.sh profiles that.
func BenchmarkAutoscaledDay1024(b *testing.B) {
	durationS := 86400
	if testing.Short() {
		durationS = 6 * 3600
	}
	runBench(b, benchScenario(b, autoscaled1024(durationS)))
}

// BenchmarkAutoscaledDay1024Prefetch is BenchmarkAutoscaledDay1024 as
// `fleetsim run` runs a single replication on a machine with a spare core:
// the workload drawn ahead on a goroutine of its own
// (Options.PrefetchWorkload). Compare wall-s/op (issue 14: under a
// minute); CPU-s/op counts both goroutines.
//
//	go test ./experiments -run '^$' -bench AutoscaledDay1024Prefetch -benchtime 1x
func BenchmarkAutoscaledDay1024Prefetch(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs two cores (GOMAXPROCS >= 2)")
	}
	durationS := 86400
	if testing.Short() {
		durationS = 6 * 3600
	}
	runBenchWith(b, benchScenario(b, autoscaled1024(durationS)), Options{PrefetchWorkload: true})
}

// autoscaled1024 is BenchmarkAutoscaledDay1024's scenario for the first
// durationS simulated seconds of its day.
func autoscaled1024(durationS int) string {
	return fmt.Sprintf(`
[cluster]
gpu = "H100"
model = "llama-3-70b"
tp = 8
replicas = 128
[workload]
duration_s = %d
[workload.arrival]
process = "diurnal"
rate_per_s = 1030
amplitude = 0.3
period_s = 86400
phase_s = 43200
[autoscale]
enabled = true
policy = "target"
metric = "rate"
target = 10.5
min_replicas = 16
initial_replicas = 72
`, durationS) + azureCode
}

// BenchmarkPeakRSS10M runs 10^7 requests through 64 Llama-3-8B replicas (about
// 75% load) and
// reports the process's peak resident set (Linux ru_maxrss). Run it alone:
//
//	go test ./experiments -run '^$' -bench PeakRSS10M -benchtime 1x
func BenchmarkPeakRSS10M(b *testing.B) {
	sc := benchScenario(b, `
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 64
[workload]
max_requests = 10000000
duration_s = 0
[workload.arrival]
rate_per_s = 1000
`+azureCode)
	runBench(b, sc)
	reportPeakRSS(b)
}

// disaggBench is 10^5 Azure-code-like requests on one H100 server of
// Llama-3-8B: 8 co-located replicas, or 4 prefill : 4 decode with the
// disaggregated tail appended. Compare sim-requests/s of the two:
//
//	go test ./experiments -run '^$' -bench 'Colocated8x8B|Disagg4P4D' -benchtime 3x
func disaggBench(extra string) string {
	return `
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 8
[workload]
max_requests = 100000
duration_s = 0
[workload.arrival]
rate_per_s = 60
` + azureCode + extra
}

// BenchmarkColocated8x8B is disaggBench's co-located baseline.
func BenchmarkColocated8x8B(b *testing.B) { runBench(b, benchScenario(b, disaggBench(""))) }

// BenchmarkDisagg4P4D is disaggBench split 4 prefill : 4 decode.
func BenchmarkDisagg4P4D(b *testing.B) {
	src := strings.Replace(disaggBench(`
[disagg]
enabled = true
[disagg.decode]
replicas = 4
`), "replicas = 8", "replicas = 4", 1)
	runBench(b, benchScenario(b, src))
}

// BenchmarkPeakRSS10MDisagg is BenchmarkPeakRSS10M on a disaggregated
// fleet (48 prefill : 16 decode, about the prefill load of BenchmarkPeakRSS10M's 64 co-located). Run it alone:
//
//	go test ./experiments -run '^$' -bench PeakRSS10MDisagg -benchtime 1x
func BenchmarkPeakRSS10MDisagg(b *testing.B) {
	sc := benchScenario(b, `
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 48
[disagg]
enabled = true
[disagg.decode]
replicas = 16
[workload]
max_requests = 10000000
duration_s = 0
[workload.arrival]
rate_per_s = 1000
`+azureCode)
	runBench(b, sc)
	reportPeakRSS(b)
}

// reportPeakRSS reports the process's peak resident set size so far.
func reportPeakRSS(b *testing.B) {
	var ru syscall.Rusage
	require.NoError(b, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
}
