package experiments

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// clientsScenario is a closed loop (or, with rate > 0, a Poisson stream
// under a concurrency cap) of c clients on replicas of llama-3-8b.
func clientsScenario(seed, replicas, c int, thinkS, rate float64, n int, extra string) string {
	return clientsScenarioCV(seed, replicas, c, thinkS, rate, n, 1, extra)
}

// clientsScenarioCV is clientsScenario with lengths of coefficient of
// variation cv.
func clientsScenarioCV(seed, replicas, c int, thinkS, rate float64, n int, cv float64, extra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name = \"clients\"\nseed = %d\n", seed)
	fmt.Fprintf(&b, "[cluster]\ngpu = \"H100\"\nmodel = \"llama-3-8b\"\ntp = 1\nreplicas = %d\n", replicas)
	fmt.Fprintf(&b, "[workload]\nconcurrency = %d\nthink_time_s = %v\nmax_requests = %d\nduration_s = 0\n", c, thinkS, n)
	if rate > 0 {
		fmt.Fprintf(&b, "[workload.arrival]\nprocess = \"poisson\"\nrate_per_s = %v\n", rate)
	} else {
		b.WriteString("[workload.arrival]\nprocess = \"closed\"\n")
	}
	fmt.Fprintf(&b, "[workload.input]\ndist = \"lognormal\"\nmean = 1500\ncv = %v\nmax = 16000\n", cv)
	fmt.Fprintf(&b, "[workload.output]\ndist = \"lognormal\"\nmean = 200\ncv = %v\nmax = 4000\n", cv)
	b.WriteString(extra)
	return b.String()
}

// TestClientsNeverExceedConcurrency runs closed loops and capped Poisson
// streams under failures and checks after every event that no more than
// the clients' concurrency is in flight, with the usual conservation and
// replica invariants, and that every request ends.
func TestClientsNeverExceedConcurrency(t *testing.T) {
	trials := 12
	if testing.Short() {
		trials = 4
	}
	for trial := 0; trial < trials; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 41))
		c := []int{1, 3, 16, 64}[rng.IntN(4)]
		think := []float64{0, 0, 0.05, 1}[rng.IntN(4)]
		rate := []float64{0, 0, 5, 50}[rng.IntN(4)]
		extra := ""
		if rng.IntN(2) == 0 {
			extra = "[[faults]]\nat_s = 5\nreplica = 0\nmode = \"fail\"\nduration_s = 20\n"
		}
		src := clientsScenario(trial+1, 1+rng.IntN(3), c, think, rate, 400, extra)
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			sc, err := scenario.Parse("clients.toml", []byte(src))
			require.NoError(t, err, src)
			eng := sim.NewEngine()
			rec := fleet.NewRecorder(sc.SLO)
			fleet, err := newFleet(eng, sc, rec)
			require.NoError(t, err)
			if _, err := injectFaults(eng, fleet, sc); err != nil {
				require.NoError(t, err)
			}
			w, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
			require.NoError(t, err)
			require.NoError(t, fleet.Start(w))
			var peak int64
			stepChecked(t, eng, fleet, rec, src, func(n int) {
				peak = max(peak, rec.InFlight())
				require.LessOrEqual(t, rec.InFlight(), int64(c), "event %d at %v: in flight\n%s", n, eng.Now(), src)
			})
			require.Equal(t, int64(400), rec.Arrived, src)
			require.Positive(t, peak)
			if rate == 0 {
				require.Equal(t, int64(min(c, 400)), peak, "a closed loop keeps all its clients busy\n%s", src)
			}
		})
	}
}

// TestClosedLoopLittlesLaw: in a closed loop of C clients, throughput is
// C / (mean end-to-end latency + think time) (Little's law over the
// clients), up to the ramp at the start and the drain at the end.
func TestClosedLoopLittlesLaw(t *testing.T) {
	for _, tc := range []struct {
		c      int
		thinkS float64
	}{{8, 0}, {32, 0.5}, {64, 2}} {
		n := 100 * tc.c
		src := clientsScenarioCV(7, 1, tc.c, tc.thinkS, 0, n, 0.3, "")
		sc, err := scenario.Parse("clients.toml", []byte(src))
		require.NoError(t, err, src)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		rec := res.Rec
		require.Equal(t, int64(n), rec.Completed)
		spanS := rec.LastFinish.Seconds()
		thr := float64(rec.Completed) / spanS
		want := float64(tc.c) / (rec.E2E.Mean()/1000 + tc.thinkS)
		// The last round drains with fewer than C clients busy, and the
		// first starts all at once: about a percent at 100 rounds.
		t.Logf("C=%d think=%v: %d requests, throughput %.3f/s, C/(E2E+think) %.3f/s", tc.c, tc.thinkS, n, thr, want)
		require.InEpsilon(t, want, thr, 0.02, "C=%d think=%v: throughput %.3f/s, C/(E2E+think) %.3f/s", tc.c, tc.thinkS, thr, want)
	}
}

// A staged closed loop keeps at most each stage's concurrency in flight,
// after every event, and sends nothing after its last stage; a staged
// open loop's arrivals follow each stage's rate.
func TestStagedLoads(t *testing.T) {
	src := `name = "stages"
seed = 3
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 2
[workload]
[workload.arrival]
process = "closed"
[[workload.stages]]
duration_s = 20
concurrency = 4
[[workload.stages]]
duration_s = 20
concurrency = 32
[[workload.stages]]
duration_s = 20
concurrency = 8
[workload.input]
dist = "lognormal"
mean = 1000
cv = 0.5
[workload.output]
dist = "lognormal"
mean = 150
cv = 0.5
`
	sc, err := scenario.Parse("stages.toml", []byte(src))
	require.NoError(t, err)
	eng := sim.NewEngine()
	rec := fleet.NewRecorder(sc.SLO)
	fl, err := newFleet(eng, sc, rec)
	require.NoError(t, err)
	w, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
	require.NoError(t, err)
	require.NoError(t, fl.Start(w))
	peak := map[int]int64{}
	stepChecked(t, eng, fl, rec, src, func(n int) {
		now := eng.Now().Seconds()
		stage := min(int(now/20), 2)
		// A request in flight when its stage ends may outlive it, in the
		// next stage (by less than a request's time).
		limit := []int64{4, 32, 8}[stage]
		if stage > 0 {
			limit = max(limit, []int64{4, 32, 8}[stage-1])
		}
		if math.Mod(now, 20) > 15 || stage == 0 {
			limit = []int64{4, 32, 8}[stage]
		}
		require.LessOrEqual(t, rec.InFlight(), limit, "event %d at %.3f s", n, now)
		peak[stage] = max(peak[stage], rec.InFlight())
	})
	require.Equal(t, int64(4), peak[0])
	require.Equal(t, int64(32), peak[1])
	require.Positive(t, rec.Completed)

	// Open loop: Poisson stages of 5, 50 and 10 requests/s for 100 s each.
	open := `name = "rates"
seed = 4
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 8
[workload]
[[workload.stages]]
duration_s = 100
rate_per_s = 5
[[workload.stages]]
duration_s = 100
rate_per_s = 50
[[workload.stages]]
duration_s = 100
rate_per_s = 10
[workload.output]
dist = "fixed"
mean = 20
`
	sc, err = scenario.Parse("rates.toml", []byte(open))
	require.NoError(t, err)
	w, err = workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
	require.NoError(t, err)
	counts := make([]float64, 3)
	for {
		r, err := w.Next()
		if err != nil {
			break
		}
		counts[min(int(r.Arrival.Seconds()/100), 2)]++
	}
	for i, want := range []float64{500, 5000, 1000} {
		require.InDelta(t, want, counts[i], 4*math.Sqrt(want), "stage %d: Poisson count within 4σ", i)
	}
}

// A pool of prompts cycles: request k sends prompt k mod n, with the same
// lengths, and with prefix caching a prompt sent again is served from the
// cache, whole segments of it.
func TestPromptPoolCyclesAndHitsTheCache(t *testing.T) {
	src := `name = "pool"
seed = 5
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 1
[workload]
prompt_pool = 7
max_requests = 70
duration_s = 0
[workload.arrival]
rate_per_s = 2
`
	sc, err := scenario.Parse("pool.toml", []byte(src))
	require.NoError(t, err)
	w, err := workloads.New(sc.Workload, sim.NewStreams(sc.Seed).Sub(streams.Workload))
	require.NoError(t, err)
	var reqs []workloads.Request
	for {
		r, err := w.Next()
		if err != nil {
			break
		}
		reqs = append(reqs, r)
	}
	require.Len(t, reqs, 70)
	for k := 7; k < 70; k++ {
		require.Equal(t, reqs[k%7].InputTokens, reqs[k].InputTokens)
		require.Equal(t, reqs[k%7].OutputTokens, reqs[k].OutputTokens)
		require.Equal(t, reqs[k%7].Prefix, reqs[k].Prefix)
	}
	require.NotEqual(t, reqs[0].Prefix[len(reqs[0].Prefix)-1].Hash, reqs[1].Prefix[len(reqs[1].Prefix)-1].Hash)
	res, err := Run(sc, Options{})
	require.NoError(t, err)
	var inPool int64
	for _, r := range reqs[7:] {
		inPool += int64(r.PrefixTokens())
	}
	// Every reuse hits its whole shared prefix but what was evicted (none:
	// seven prompts fit easily) and the block the last token sits in.
	require.Greater(t, res.Rec.CachedTokens, inPool*9/10, "cached %d of %d pooled prefix tokens", res.Rec.CachedTokens, inPool)
}

// A closed loop's clients start as workload.client_start says: with
// ramp_up_s, client k sends its first request at k·ramp/C; spread (the
// default) over one request's estimated time, so that identical requests
// do not queue behind each other in waves: the TTFT of a loop of 32
// clients of fixed lengths stays near a lone request's, where clients
// started together wait for a wave of prefills, for the whole run.
func TestClosedLoopClientStart(t *testing.T) {
	fixed := func(c int, start string) string {
		return fmt.Sprintf(`name = "start"
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 1
[workload]
concurrency = %d
max_requests = %d
duration_s = 0
%s
[workload.arrival]
process = "closed"
[workload.input]
dist = "fixed"
mean = 2048
[workload.output]
dist = "fixed"
mean = 512
`, c, 20*c, start)
	}
	// The ramp: first sends at k·ramp/C.
	sc, err := scenario.Parse("start.toml", []byte(fixed(8, "ramp_up_s = 4")))
	require.NoError(t, err)
	var sends []float64
	_, err = Run(sc, Options{OnDone: func(o *engine.Outcome) {
		if o.Req.ID <= 8 {
			sends = append(sends, o.Req.Arrival.Seconds())
		}
	}})
	require.NoError(t, err)
	sort.Float64s(sends)
	require.Len(t, sends, 8)
	for k, at := range sends {
		require.InDelta(t, 0.5*float64(k), at, 1e-9, "client %d's first request", k)
	}

	ttft := func(c int, start string) float64 {
		sc, err := scenario.Parse("start.toml", []byte(fixed(c, start)))
		require.NoError(t, err)
		res, err := Run(sc, Options{})
		require.NoError(t, err)
		return res.Rec.TTFT.Mean()
	}
	alone, spread, together := ttft(1, ""), ttft(32, ""), ttft(32, `client_start = "together"`)
	t.Logf("TTFT ms: one client %.1f, 32 spread %.1f, 32 together %.1f", alone, spread, together)
	require.Less(t, spread, 1.5*alone, "spread clients: about a lone request's TTFT")
	require.Greater(t, together, 3*spread, "clients started together queue in waves")
}
