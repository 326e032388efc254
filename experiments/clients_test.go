package experiments

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/internal/streams"
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
