package experiments

import (
	"fmt"
	"math"
	"sort"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/stretchr/testify/require"
)

// mmcTOML is c one-slot replicas (max_seqs 1) behind a gateway of the
// given binding: short prompts and geometric outputs of mean 500 tokens,
// so that a request's service (its decode steps at batch 1) is close to
// exponential; Poisson arrivals at rate for durationS.
func mmcTOML(c int, rate, durationS float64, binding string, seed int) string {
	return fmt.Sprintf(`name = "mmc"
seed = %d
[cluster]
model = "llama-3-8b"
gpu = "H100"
tp = 1
replicas = %d
[cluster.replica]
max_seqs = 1
[cluster.replica.perf]
profile = "legacy"
[router]
name = "least-outstanding"
[workload]
duration_s = %v
[workload.arrival]
rate_per_s = %v
[workload.input]
dist = "fixed"
mean = 16
[workload.output]
dist = "geometric"
mean = 500
[policies.queue]
binding = %q
[run]
sample_interval_s = 1000
`, seed, c, durationS, rate, binding)
}

// mmcRun is one replication's means: the wait before service (arrival at
// the gateway to first scheduled), the service (scheduled to finished),
// its squared coefficient of variation, and the arrival rate.
type mmcRun struct{ waitS, serviceS, scv, rate float64 }

func runMMC(t *testing.T, c int, rate, durationS float64, binding string, seed int) mmcRun {
	t.Helper()
	sc, err := scenario.Parse("mmc.toml", []byte(mmcTOML(c, rate, durationS, binding, seed)))
	require.NoError(t, err)
	var n, wait, svc, svc2 float64
	res, err := Run(sc, Options{OnDone: func(o *engine.Outcome) {
		s := (o.Finished - o.Scheduled).Seconds()
		n++
		wait += (o.Scheduled - o.Req.Arrival).Seconds()
		svc += s
		svc2 += s * s
	}})
	require.NoError(t, err)
	require.Empty(t, res.Stopped)
	mean := svc / n
	return mmcRun{waitS: wait / n, serviceS: mean, scv: (svc2/n - mean*mean) / (mean * mean), rate: n / durationS}
}

// erlangCWaitS is the M/M/c mean wait in queue: C(c, a)·S/(c − a), a = λS.
func erlangCWaitS(c int, rate, serviceS float64) float64 {
	a := rate * serviceS
	term, sum := 1.0, 0.0
	for k := 0; k < c; k++ {
		sum += term
		term *= a / float64(k+1)
	}
	top := term * float64(c) / (float64(c) - a) // a^c/c! · 1/(1 − ρ)
	return top / (sum + top) * serviceS / (float64(c) - a)
}

// TestLateBindingIsErlangC: with late binding, c one-slot replicas and
// (nearly) exponential service form the M/M/c queue, so the mean wait is
// Erlang C's, within 5% at utilisations 0.5, 0.7 and 0.9 (issue 34), with
// a 95% confidence interval over the replications narrower than that.
// Early binding (least-outstanding: each request joins a replica's own
// queue on arrival) waits longer, by the margin the issue measured (+80%
// at 0.5, +41% at 0.7; measured here +76%, +40%, and +11% at 0.9).
func TestLateBindingIsErlangC(t *testing.T) {
	if testing.Short() {
		t.Skip("about a million simulated requests")
	}
	const c = 4
	probe := runMMC(t, c, 0.5, 20000, "late", 1)
	require.Greater(t, probe.scv, 0.95, "service not close to exponential")
	for _, tc := range []struct {
		rho  float64
		reps int
		dur  float64
	}{{0.5, 12, 80000}, {0.7, 12, 100000}, {0.9, 12, 300000}} {
		rate := tc.rho * c / probe.serviceS
		var ws, theory []float64
		var early float64
		for r := 0; r < tc.reps; r++ {
			m := runMMC(t, c, rate, tc.dur, "late", 100+r)
			ws = append(ws, m.waitS)
			theory = append(theory, erlangCWaitS(c, m.rate, m.serviceS))
		}
		mean, half := meanCI(ws)
		want, _ := meanCI(theory)
		t.Logf("ρ %.1f: late-binding wait %.4f ± %.4f s, Erlang C %.4f s (%+.1f%%)", tc.rho, mean, half, want, 100*(mean/want-1))
		require.Less(t, half/want, 0.04, "ρ %.1f: not enough replications to tell 5%%", tc.rho)
		require.InEpsilon(t, want, mean, 0.05, "ρ %.1f", tc.rho)
		e := runMMC(t, c, rate, tc.dur, "early", 100)
		early = e.waitS
		t.Logf("ρ %.1f: early binding waits %.4f s (%+.0f%% over Erlang C)", tc.rho, early, 100*(early/want-1))
		if tc.rho < 0.8 { // (at 0.9 one replication's noise is as large as the gap, +11%)
			require.Greater(t, early, mean*1.2, "ρ %.1f: early binding should wait longer", tc.rho)
		}
	}
}

// meanCI is the mean of xs and the half-width of its 95% confidence
// interval (Student t, n − 1 degrees of freedom; n ≤ 21 here).
func meanCI(xs []float64) (mean, half float64) {
	n := float64(len(xs))
	for _, x := range xs {
		mean += x
	}
	mean /= n
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	tq := []float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
		2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086}
	k := min(len(xs)-1, len(tq)-1)
	return mean, tq[k] * math.Sqrt(ss/(n-1)/n)
}

// burstQueueTOML sends n requests at once (10^6 per s) to one replica of
// one slot behind a late-binding gateway, with prompts of a lognormal
// length (so their order by length differs from their arrival order).
func burstQueueTOML(n int, extra string) string {
	return fmt.Sprintf(`name = "burst-queue"
[cluster]
model = "llama-3-8b"
tp = 1
replicas = 1
[cluster.replica]
max_seqs = 1
[cluster.replica.perf]
profile = "legacy"
[workload]
max_requests = %d
duration_s = 0
[workload.arrival]
rate_per_s = 1e6
[workload.output]
dist = "fixed"
mean = 20
[policies.queue]
binding = "late"
%s`, n, extra)
}

// TestLateBindingQueueRules: the queue's order (first come or shortest
// prompt first), its cap (max_queued sheds the rest) and client timeouts
// of requests still waiting at the gateway, each with requests conserved.
func TestLateBindingQueueRules(t *testing.T) {
	type served struct {
		id       uint64
		in       int32
		schedule sim.Time
	}
	run := func(extra string, pol string) ([]served, *report.Summary) {
		sc, err := scenario.Parse("q.toml", []byte(burstQueueTOML(40, extra)+pol))
		require.NoError(t, err)
		var outs []served
		res, err := Run(sc, Options{OnDone: func(o *engine.Outcome) {
			outs = append(outs, served{o.Req.ID, o.Req.InputTokens, o.Scheduled})
		}})
		require.NoError(t, err)
		s := report.Summarize(res)
		r := s.Requests
		require.Equal(t, r.Arrived, r.Completed+r.Failed+r.Shed+r.InFlight)
		sort.Slice(outs, func(i, j int) bool { return outs[i].schedule < outs[j].schedule })
		return outs, s
	}
	// First come, first served: served in arrival (ID) order.
	outs, s := run("", "")
	require.Len(t, outs, 40)
	require.EqualValues(t, 39, s.Resilience.Queued) // all but the first waited
	for i := 1; i < len(outs); i++ {
		require.Greater(t, outs[i].id, outs[i-1].id)
	}
	// Shortest prompt first: after the first (sent at once), the waiting
	// ones by prompt length.
	outs, _ = run("order = \"shortest-prompt\"\n", "")
	require.Len(t, outs, 40)
	sorted := true
	for i := 2; i < len(outs); i++ {
		require.LessOrEqual(t, outs[i-1].in, outs[i].in)
		sorted = sorted && outs[i].id > outs[i-1].id
	}
	require.False(t, sorted, "the lengths' order should differ from arrival order")
	// A cap of 10 waiting: one on the replica, ten queued, 29 shed.
	_, s = run("max_queued = 10\n", "")
	require.EqualValues(t, 11, s.Requests.Completed)
	require.EqualValues(t, 29, s.Requests.Shed)
	// A client timeout fails requests still waiting at the gateway (they
	// leave the queue), and the others are served.
	_, s = run("", "[policies]\ntimeout_s = 0.5\n")
	require.Positive(t, s.Resilience.Timeouts)
	require.EqualValues(t, 40, s.Requests.Completed+s.Requests.Failed)
	require.EqualValues(t, s.Resilience.Timeouts, s.Requests.Failed)
}

// TestLateBindingBuiltin: the late-binding built-in's A/B (all 10
// replications; a second or so). Round-robin early binding misses the SLO
// for about a quarter of requests near saturation; least-outstanding
// routing meets it; late binding cuts p99 TTFT further, by more than the
// replications' noise, at the same throughput.
func TestLateBindingBuiltin(t *testing.T) {
	if testing.Short() {
		t.Skip("all 10 replications of 3 arms (the CI race run is -short)")
	}
	res := runBuiltinAB(t, "late-binding", 0)
	lo, rr, late := res.Arms[0], res.Arms[1], res.Arms[2]
	require.Equal(t, "late", late.Name)
	require.Less(t, mean(rr, "goodput.slo_attainment"), 0.9)
	require.Greater(t, mean(lo, "goodput.slo_attainment"), 0.99)
	st := report.StatMap(late.Stats)["latency_ms.ttft.p99"]
	base := mean(lo, "latency_ms.ttft.p99")
	require.Less(t, st.Mean, base*0.95, "late binding should cut p99 TTFT by more than 5%%")
	require.Positive(t, mean(late, "resilience.queued"))
	require.InEpsilon(t, mean(lo, "throughput.output_tokens_per_s"), mean(late, "throughput.output_tokens_per_s"), 0.01)
}

// TestFanoutHedging: the fanout-hedging built-in (2 replications):
// hedging each sub-request after a fixed 10 ms cuts the fan-out's p99.9 by
// more than ten times (a stall no longer holds the client request) for
// under 3% more requests, with its p99 within 5%; the client requests are
// conserved (a hundred sub-requests each).
func TestFanoutHedging(t *testing.T) {
	reps := 2
	if testing.Short() {
		reps = 1 // 1.2 million sub-requests an arm
	}
	res := runBuiltinAB(t, "fanout-hedging", reps)
	none, hedged := res.Arms[0], res.Arms[1]
	require.Equal(t, "hedge-fixed", hedged.Name)
	p999 := func(a *report.ArmResult) float64 { return mean(a, "fanout.latency_ms.p999") }
	require.Greater(t, p999(none), 500.0, "without hedging a 1 s stall holds the tail")
	require.Less(t, p999(hedged), p999(none)/10)
	require.Less(t, mean(hedged, "resilience.hedge_rate"), 0.03)
	require.Positive(t, mean(hedged, "resilience.hedge_rate"))
	require.InEpsilon(t, mean(none, "fanout.latency_ms.p99"), mean(hedged, "fanout.latency_ms.p99"), 0.05)
	for _, a := range res.Arms {
		require.InDelta(t, mean(a, "requests.arrived")/100, mean(a, "fanout.completed")+mean(a, "fanout.failed")+mean(a, "fanout.in_flight"), 1e-9)
	}
}
