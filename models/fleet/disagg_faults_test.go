package fleet

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
)

// TestDisaggFailurePlacement: in the failure topology the decode pool's
// GPUs follow the prefill pool's as the link model places them (1P:3D of
// TP=2 shares one 8-GPU server), from the next server for another GPU
// type, and the domains counted hold both pools.
func TestDisaggFailurePlacement(t *testing.T) {
	pre := defaultFleet(1)
	pre.TP = 2
	dc := defaultDisagg(3)
	dc.Decode.TP = 2
	_, f := disaggFleet(t, pre, dc)
	d := f.Disagg
	for j, want := range []int{2, 4, 6} {
		first, n := d.DecodeReplicaGPUs(j)
		require.Equal(t, [2]int{want, 2}, [2]int{first, n}, "decode replica %d", j)
	}
	domains, g := d.FailureDomains()
	require.Equal(t, [2]int{1, 8}, [2]int{domains, g}, "one server holds both pools")

	dc.Decode.GPU = "H200"
	_, f = disaggFleet(t, pre, dc)
	first, _ := f.Disagg.DecodeReplicaGPUs(0)
	require.Equal(t, 8, first, "an H200 decode pool starts on the next server")
	domains, _ = f.Disagg.FailureDomains()
	require.Equal(t, 2, domains)
}

// TestDisaggDecodeDrainAndRotation: a decode replica out of rotation (a
// drain, a probe's ejection) takes no transfers while up; a drain ends
// when it is empty or at its grace, failing what is left, whose KV is
// prefilled again.
func TestDisaggDecodeDrainAndRotation(t *testing.T) {
	eng, f := disaggFleet(t, defaultFleet(1), defaultDisagg(2))
	d := f.Disagg
	d.Decode.Hold(0, HoldMaintenance)
	require.False(t, d.DecodeStates()[0].Available)
	require.True(t, d.Decode.Replicas[0].Up())
	d.Decode.Release(0, HoldMaintenance)
	require.True(t, d.DecodeStates()[0].Available)

	drained := sim.Time(-1)
	d.Decode.Drain(1, HoldMaintenance, 5*sim.Second, func(now sim.Time) { drained = now })
	require.False(t, d.DecodeStates()[1].Available, "a draining decode replica takes nothing new")
	eng.Run(10 * sim.Second)
	require.Equal(t, sim.Second, drained, "empty: the drain ends at its first check")
	require.False(t, d.Decode.Replicas[1].Up(), "a drained replica is stopped")
	require.False(t, d.DecodeStates()[1].Available)
}

// TestDisaggDecodeSpecStepModel: a decode pool with speculative decoding
// runs the step model a co-located replica of the same deployment runs
// (decode steps, their FLOPs, tokens per verify step), and its prefill
// pool's is unchanged.
func TestDisaggDecodeSpecStepModel(t *testing.T) {
	dc := defaultDisagg(2)
	dc.Decode.Replica.Spec = hw.SpecConfig{Enabled: true, Tokens: 4, Acceptance: 0.8, DraftFraction: 0.05}
	pre := defaultFleet(2)
	_, f := disaggFleet(t, pre, dc)
	cat := hw.NewCatalog()
	co := dc.Decode
	co.GPU, co.Model, co.TP = pre.GPU, pre.Model, pre.TP
	want, err := hw.NewDeployedStepModel(cat.GPUs["H100"], cat.LLMs["llama-3-8b"], co.Deployment(), hw.Precision(co.Replica.Weights), hw.Precision(co.Replica.KVDType), cat.Profiles[co.Replica.Perf.Profile])
	require.NoError(t, err)
	got := f.Disagg.Decode.Replicas[0].StepModel()
	require.InDelta(t, want.SpecTokensPerStep(), got.SpecTokensPerStep(), 1e-12)
	require.Greater(t, got.SpecTokensPerStep(), 3.0)
	for _, n := range []int{1, 8, 64} {
		w, g := want.Decode(n, float64(n)*2048), got.Decode(n, float64(n)*2048)
		require.InDelta(t, w.Seconds(100), g.Seconds(100), 1e-12, "n = %d", n)
		require.InDelta(t, w.FLOPs(100), g.FLOPs(100), 1e-3, "n = %d", n)
	}
	require.False(t, f.Replicas[0].StepModel().Speculative(), "the prefill pool does not speculate")
}

// TestDisaggNVLinkDomains: the run header's domains count both pools: a
// decode pool that shares the prefill pool's server adds none, one that
// spills past it adds the servers it reaches, another GPU type adds its
// own servers.
func TestDisaggNVLinkDomains(t *testing.T) {
	cases := []struct {
		name          string
		preN, preTP   int
		decN, decTP   int
		decGPU        string
		want, prefill int
	}{
		{"1P:3D TP=2 on one server", 1, 2, 3, 2, "", 1, 1},
		{"4P:4D TP=1 on one server", 4, 1, 4, 1, "", 1, 1},
		{"4P:5D TP=1 spills to a second server", 4, 1, 5, 1, "", 2, 1},
		{"2P TP=8 : 3D TP=8", 2, 8, 3, 8, "", 5, 2},
		{"3P:2D TP=4, half-server spill", 3, 4, 2, 4, "", 3, 2},
		{"H200 decode on its own servers", 1, 2, 3, 2, "H200", 2, 1},
	}
	for _, c := range cases {
		pre := defaultFleet(c.preN)
		pre.TP = c.preTP
		dc := defaultDisagg(c.decN)
		dc.Decode.TP = c.decTP
		dc.Decode.GPU = c.decGPU
		_, f := disaggFleet(t, pre, dc)
		require.Equal(t, c.prefill, f.Place.Domains, "%s: the prefill pool's own", c.name)
		require.Equal(t, c.want, f.Disagg.NVLinkDomains(), c.name)
	}
}

// stepBreaker is a test breaker: it opens on any failure for cooldown,
// turns half-open when that ends, admits one request at a time then and
// closes on a success. It logs what it hears.
type stepBreaker struct {
	cooldown sim.Time
	st       []BreakerState
	till     []sim.Time
	admitted []int
	oks      []int // successes per replica
	errs     []int // failures per replica
	lats     []float64
}

func newStepBreaker(n int, cooldown sim.Time) *stepBreaker {
	return &stepBreaker{cooldown: cooldown, st: make([]BreakerState, n), till: make([]sim.Time, n), admitted: make([]int, n),
		oks: make([]int, n), errs: make([]int, n)}
}

func (b *stepBreaker) Record(i int, now sim.Time, ok bool, latencyMs float64) {
	b.State(i, now)
	b.lats = append(b.lats, latencyMs)
	if ok {
		b.oks[i]++
		if b.st[i] == BreakerHalfOpen {
			b.st[i] = BreakerClosed
		}
		return
	}
	b.errs[i]++
	if b.st[i] != BreakerOpen {
		b.st[i], b.till[i] = BreakerOpen, now+b.cooldown
	}
}

func (b *stepBreaker) State(i int, now sim.Time) (BreakerState, sim.Time) {
	if b.st[i] == BreakerOpen && now >= b.till[i] {
		b.st[i], b.admitted[i] = BreakerHalfOpen, 0
	}
	if b.st[i] == BreakerOpen {
		return BreakerOpen, b.till[i]
	}
	return b.st[i], 0
}

func (b *stepBreaker) Admit(i int, now sim.Time) bool {
	if st, _ := b.State(i, now); st != BreakerHalfOpen {
		return st == BreakerClosed
	}
	if b.admitted[i] >= 1 {
		return false
	}
	b.admitted[i]++
	return true
}

// TestDisaggDecodeBreaker: the breaker watches the decode pool. A decode
// replica that fails loses its requests' KV: each is an error on its own
// breaker (the clients see none: the requests are prefilled again), which
// opens and keeps the replica out of the decode choice after it is back
// up, until the cooldown ends; half-open, it takes one request, which
// succeeds and closes it. Every completed request is a success on its
// decode replica, with the decode replica's share of the TTFT as latency;
// the prefill pool's breaker hears no decode replica.
func TestDisaggDecodeBreaker(t *testing.T) {
	eng, f := disaggFleet(t, defaultFleet(1), defaultDisagg(2))
	d := f.Disagg
	pre, dec := newStepBreaker(1, 20*sim.Second), newStepBreaker(2, 20*sim.Second)
	require.PanicsWithValue(t, "models: SetPolicies: a disaggregated fleet with a breaker needs Policies.DecodeBreaker",
		func() { f.SetPolicies(Policies{Breaker: pre}) }, "a breaker that would leave the decode pool unwatched is refused")
	f.SetPolicies(Policies{Breaker: pre, DecodeBreaker: dec})
	reqs := randomWorkload(rand.New(rand.NewPCG(7, 8)), 500, 10, false)
	for i := range reqs {
		reqs[i].OutputTokens = 300 // long decodes: the failure finds requests decoding
	}
	var to0 []sim.Time // when decode replica 0 was chosen for a transfer
	d.OnTransfer = func(r TransferRecord) {
		if r.Decode == 0 {
			to0 = append(to0, r.Ready)
		}
	}
	require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
	r0 := d.Decode.Replicas[0]
	var lost int
	eng.Schedule(5*sim.Second, sim.PriorityFailure, func(now sim.Time) {
		lost = r0.Outstanding()
		require.Positive(t, lost)
		r0.Fail(now, engine.FailCrashed)
		r0.Recover(now, sim.Second, nil)
	})
	eng.Schedule(10*sim.Second, sim.PriorityMetrics, func(sim.Time) {
		require.True(t, r0.Up(), "back up after its restart")
		require.Equal(t, BreakerOpen, d.Decode.BreakerState(0))
		require.False(t, d.DecodeStates()[0].Available, "an open breaker keeps it out of the decode choice")
		require.True(t, d.DecodeStates()[1].Available)
	})
	eng.Run(sim.Forever)
	require.EqualValues(t, len(reqs), f.Rec.Completed, "every request completes after its re-prefill")
	require.Equal(t, lost, dec.errs[0], "each request decode replica 0 lost is an error on its breaker")
	require.EqualValues(t, lost, d.Stats.DecodeLost)
	require.Zero(t, dec.errs[1])
	require.EqualValues(t, 1, d.Decode.BreakerOpens)
	require.Equal(t, len(reqs), dec.oks[0]+dec.oks[1], "every completion is a success on its decode replica")
	require.Positive(t, dec.oks[0], "it serves again once its breaker lets it")
	for _, l := range dec.lats {
		require.GreaterOrEqual(t, l, 0.0)
	}
	require.Equal(t, BreakerClosed, d.Decode.BreakerState(0), "half-open, its request succeeded")
	for _, at := range to0 {
		require.False(t, at > 5*sim.Second && at < 25*sim.Second, "decode replica 0 chosen at %v, while its breaker was open", at)
	}
	require.GreaterOrEqual(t, to0[len(to0)-1], 25*sim.Second, "chosen again after the cooldown")
	require.Len(t, pre.oks, 1, "the prefill breaker's replicas are the prefill pool's")
	require.Zero(t, pre.errs[0])
	require.Equal(t, len(reqs)+int(d.Stats.RePrefills), pre.oks[0], "each prefill is a success on its prefill replica's breaker")
	require.Len(t, d.ProbeStats.IsolationNs, 0, "no fault was marked, so no time to isolate")
}
