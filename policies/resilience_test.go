package policies

import (
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/stretchr/testify/require"
)

func TestHedgerFixedAdaptiveBudget(t *testing.T) {
	c := DefaultResilienceConfig().Hedge
	c.Name = HedgeFixed
	h := NewDelayHedger(c)
	d, ok := h.Delay(0)
	require.True(t, ok)
	require.Equal(t, 800*sim.Millisecond, d)

	c.Name, c.MinSamples, c.Window = HedgeAdaptive, 10, 100
	h = NewDelayHedger(c)
	for i := 1; i <= 100; i++ {
		h.Observe(0, float64(i)) // TTFTs 1..100 ms
	}
	d, _ = h.Delay(0)
	require.Equal(t, 95*sim.Millisecond, d, "the running p95")

	// Budget 5%: after the initial bucket, one hedge per 20 requests.
	c.Budget = 0.05
	h = NewDelayHedger(c)
	n := 0
	for i := 0; i < 10000; i++ {
		h.Observe(0, -1)
		if h.Allow(0) {
			n++
		}
	}
	require.InDelta(t, 500+50, n, 2, "5%% of requests plus the initial bucket of 50")
}

// TestHedgerPerPromptLength: the adaptive delay is the p95 of the
// request's prompt-length bucket once that bucket has MinSamples, so a
// long prompt is not hedged at the short prompts' p95 (nor a short one at
// the long prompts'); a thin bucket falls back to the p95 of all.
func TestHedgerPerPromptLength(t *testing.T) {
	require.Equal(t, 0, promptBucket(1))
	require.Equal(t, 0, promptBucket(64))
	require.Equal(t, 1, promptBucket(65))
	require.Equal(t, 1, promptBucket(128))
	require.Equal(t, promptBuckets-1, promptBucket(1<<20))

	c := DefaultResilienceConfig().Hedge
	c.Name, c.MinSamples, c.Window = HedgeAdaptive, 10, 100
	require.True(t, c.PerPromptLength, "the default")
	h := NewDelayHedger(c)
	for i := 1; i <= 90; i++ {
		h.ObserveFor(0, 100, float64(i)) // short prompts: 1..90 ms
	}
	for i := 1; i <= 10; i++ {
		h.ObserveFor(0, 2000, float64(1000+100*i)) // long prompts: 1.1..2 s
	}
	short, _ := h.DelayFor(0, 100)
	long, _ := h.DelayFor(0, 2000)
	all, _ := h.Delay(0)
	mid, _ := h.DelayFor(0, 500) // no samples of its own
	tiny, _ := h.DelayFor(0, 10) // none of its own, nor shorter
	require.Equal(t, 86*sim.Millisecond, short, "p95 of 1..90")
	require.Equal(t, 2000*sim.Millisecond, long, "p95 of the long prompts' 10")
	require.Equal(t, 1500*sim.Millisecond, all, "p95 of all 100: a long prompt's TTFT")
	require.Equal(t, 4*86*sim.Millisecond, mid, "two buckets above the short prompts': their p95 doubled twice")
	require.Equal(t, all, tiny)

	c.PerPromptLength = false
	h = NewDelayHedger(c)
	for i := 1; i <= 90; i++ {
		h.ObserveFor(0, 100, float64(i))
	}
	for i := 1; i <= 10; i++ {
		h.ObserveFor(0, 2000, float64(1000+100*i))
	}
	d, _ := h.DelayFor(0, 100)
	require.Equal(t, all, d, "one p95 for every prompt")
}

func TestBreakerTripsCoolsAndCloses(t *testing.T) {
	c := DefaultResilienceConfig().Breaker
	c.Name = BreakerWindow
	b := NewWindowBreaker(c, 2)
	now := sim.Time(0)
	// 19 failures are not enough samples; the 20th trips (100% errors).
	for i := 0; i < 19; i++ {
		now += 100 * sim.Millisecond
		b.Record(0, now, false, 50)
		st, _ := b.State(0, now)
		require.Equal(t, fleet.BreakerClosed, st)
	}
	now += 100 * sim.Millisecond
	b.Record(0, now, false, 50)
	st, until := b.State(0, now)
	require.Equal(t, fleet.BreakerOpen, st)
	require.Equal(t, now+5*sim.Second, until)
	require.False(t, b.Admit(0, now))
	st, _ = b.State(1, now)
	require.Equal(t, fleet.BreakerClosed, st, "breakers are per replica")
	// After the cooldown: half-open, a few probes, closes on success.
	now = until
	st, _ = b.State(0, now)
	require.Equal(t, fleet.BreakerHalfOpen, st)
	for i := 0; i < 5; i++ {
		require.True(t, b.Admit(0, now))
	}
	require.False(t, b.Admit(0, now), "at most 5 probes in flight")
	for i := 0; i < 5; i++ {
		b.Record(0, now, true, 50)
	}
	st, _ = b.State(0, now)
	require.Equal(t, fleet.BreakerClosed, st)
	// The latency rule: p99 >= 3.5 s with 20 samples trips it too.
	for i := 0; i < 20; i++ {
		now += 10 * sim.Millisecond
		b.Record(1, now, true, 4000)
	}
	st, _ = b.State(1, now)
	require.Equal(t, fleet.BreakerOpen, st)
	// Old outcomes leave the window: 19 errors spread over a minute never trip.
	b2 := NewWindowBreaker(c, 1)
	for i := 0; i < 40; i++ {
		b2.Record(0, sim.Time(i)*3*sim.Second, i%2 == 0, 10)
		st, _ := b2.State(0, sim.Time(i)*3*sim.Second)
		require.Equal(t, fleet.BreakerClosed, st, "only 4 samples fit in 10 s")
	}
}

func TestRetrierBudgetAndBackoff(t *testing.T) {
	c := DefaultResilienceConfig().Retry
	r := NewBudgetRetrier(c, rand.New(rand.NewPCG(1, 1)))
	d, ok := r.Retry(1, "x", 0)
	require.True(t, ok)
	require.LessOrEqual(t, d, 50*sim.Millisecond, "first backoff within the base")
	d, ok = r.Retry(2, "x", 0)
	require.True(t, ok)
	require.LessOrEqual(t, d, 100*sim.Millisecond)
	_, ok = r.Retry(3, "x", 0)
	require.False(t, ok, "three attempts at most")
	// Drain the bucket, then one retry per 10 requests.
	for r.credit >= 1 {
		r.Retry(1, "x", 0)
	}
	n := 0
	for i := 0; i < 1000; i++ {
		r.Observe(0)
		if _, ok := r.Retry(1, "x", 0); ok {
			n++
		}
	}
	require.InDelta(t, 100, n, 1)
}

func TestAdmitters(t *testing.T) {
	rs := []engine.ReplicaState{
		{Index: 0, Available: true, Waiting: 10, OutstandingTokens: 5000, KVUtilization: 0.9},
		{Index: 1, Available: true, Waiting: 2, OutstandingTokens: 1000, KVUtilization: 0.5},
		{Index: 2, Available: false, Waiting: 100, OutstandingTokens: 1e6, KVUtilization: 1},
	}
	require.True(t, (&QueueAdmitter{max: 7}).Admit(nil, rs, 0), "6 waiting per available replica")
	require.False(t, (&QueueAdmitter{max: 6}).Admit(nil, rs, 0))
	require.True(t, (&TokenAdmitter{max: 3001}).Admit(nil, rs, 0))
	require.False(t, (&TokenAdmitter{max: 3000}).Admit(nil, rs, 0))
	require.True(t, (&KVAdmitter{max: 0.71}).Admit(nil, rs, 0))
	require.False(t, (&KVAdmitter{max: 0.7}).Admit(nil, rs, 0))
	la := &LatencyAdmitter{maxMs: 1000, window: 10 * sim.Second}
	for i := 0; i < 30; i++ {
		la.Observe(sim.Time(i)*sim.Millisecond, 100)
	}
	require.True(t, la.Admit(nil, rs, sim.Second))
	for i := 0; i < 5; i++ {
		la.Observe(sim.Second, 5000)
	}
	require.False(t, la.Admit(nil, rs, sim.Second), "p99 over the limit: shed")
	require.True(t, la.Admit(nil, rs, 12*sim.Second), "the slow ones left the window")
	require.False(t, (&QueueAdmitter{max: 7}).Admit(nil, rs[2:], 0), "no available replica")
}

func TestResilienceConfigValidation(t *testing.T) {
	c := DefaultResilienceConfig()
	c.Hedge.Name = "sometimes"
	c.Hedge.Budget = 1.5
	c.Breaker.WindowS = 2 // shorter than the 5 s cooldown
	c.Retry.MaxAttempts = 0
	c.Admission.Name = AdmitKV
	c.Admission.Limit = 2
	var ps config.Problems
	c.Validate("policies", &ps)
	keys := map[string]bool{}
	for _, p := range ps.List {
		keys[p.Key] = true
	}
	for _, k := range []string{"policies.hedge.name", "policies.hedge.budget", "policies.breaker.window_s",
		"policies.retry.max_attempts", "policies.admission.limit"} {
		require.True(t, keys[k], k)
	}
	ok := DefaultResilienceConfig()
	var ps2 config.Problems
	ok.Validate("policies", &ps2)
	require.Empty(t, ps2.List)
}

func TestMarginJudge(t *testing.T) {
	j := MarginJudge{MinSamples: 20, ErrorMargin: 0.05, P99Ratio: 1.5}
	blue := fleet.PoolStats{Requests: 200, Errors: 2, P99TTFTMs: 300}
	require.False(t, j.Rollback(fleet.PoolStats{Requests: 10, Errors: 10}, blue), "too few samples")
	require.False(t, j.Rollback(fleet.PoolStats{Requests: 40, Errors: 2, P99TTFTMs: 400}, blue))
	require.True(t, j.Rollback(fleet.PoolStats{Requests: 40, Errors: 4, P99TTFTMs: 300}, blue), "10% vs 1% errors")
	require.False(t, j.Rollback(fleet.PoolStats{Requests: 40, P99TTFTMs: 500}, blue), "too few samples for a p99")
	require.True(t, j.Rollback(fleet.PoolStats{Requests: 100, P99TTFTMs: 500}, blue), "p99 500 vs 300 ms")
}
