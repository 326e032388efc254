package fleet

import (
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
	"github.com/stretchr/testify/require"
)

// TestMemoryPlanAddsUp: per GPU, weights + activations + KV = budget, and the
// KV blocks fit in the KV bytes with less than one block left over.
func TestMemoryPlanAddsUp(t *testing.T) {
	cat := hw.NewCatalog()
	for _, tc := range []struct {
		gpu, model string
		tp         int
	}{{"H100", "llama-3-8b", 1}, {"H100", "llama-3-70b", 8}, {"H200", "llama-3-70b", 4}, {"GB200", "llama-3-405b", 8}} {
		cfg := engine.DefaultReplicaConfig()
		var ps problemsT
		p := engine.PlanMemory(cat.GPUs[tc.gpu], cat.LLMs[tc.model], tc.tp, cfg, hw.DefaultPerfProfile(), "cluster.model", &ps.Problems)
		require.Empty(t, ps.List, "%v", tc)
		require.InDelta(t, p.BudgetBytes, p.WeightBytes+p.ActivationBytes+p.RuntimeBytes+p.KVBytes, 1, "%v", tc)
		require.Greater(t, p.RuntimeBytes, hw.DefaultPerfProfile().RuntimeReserveBytes, "runtime reserve plus logits")
		used := float64(p.KVBlocks) * p.KVBytesPerBlock
		require.LessOrEqual(t, used, p.KVBytes)
		require.Greater(t, used+p.KVBytesPerBlock, p.KVBytes)
		// Llama-3-8B BF16: 128 KiB per token (CALIBRATION.md §3).
		if tc.model == "llama-3-8b" {
			require.Equal(t, 16*128*1024.0, p.KVBytesPerBlock)
		}
	}
	// 405B does not fit on 8 H100 in BF16: a clear problem, not a panic.
	var ps problemsT
	engine.PlanMemory(cat.GPUs["H100"], cat.LLMs["llama-3-405b"], 8, engine.DefaultReplicaConfig(), hw.DefaultPerfProfile(), "cluster.model", &ps.Problems)
	require.Len(t, ps.List, 1)
	require.Contains(t, ps.List[0].Msg, "does not fit")
}

// TestCostIndependentOfOutputLength: a decode run is one event however many
// steps it covers, so making every output 20x longer barely changes the
// number of events while the tokens generated grow 20x.
func TestCostIndependentOfOutputLength(t *testing.T) {
	run := func(scale int32) (events, tokens int64) {
		rng := rand.New(rand.NewPCG(3, 3))
		reqs := randomWorkload(rng, 2000, 2, false)
		for i := range reqs {
			reqs[i].OutputTokens *= scale
		}
		eng, f := testFleet(t, defaultFleet(2))
		require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
		eng.Run(sim.Forever)
		require.EqualValues(t, len(reqs), f.Rec.Completed)
		for _, r := range f.Replicas {
			tokens += r.Stats.DecodeTokens
		}
		return int64(eng.Fired()), tokens
	}
	e1, s1 := run(1)
	e20, s20 := run(20)
	t.Logf("events %d → %d, output tokens %d → %d", e1, e20, s1, s20)
	require.Equal(t, 20*s1, s20, "the simulated work grows 20x")
	require.Less(t, float64(e20), 1.5*float64(e1), "the events do not")
}

// TestStaticBatchingHeadOfLineBlocking: with request-level batching, short
// requests wait behind 8,000-token generations; continuous batching with
// chunked prefill does not make them wait (same arrivals).
func TestStaticBatchingHeadOfLineBlocking(t *testing.T) {
	mk := func() []workloads.Request {
		rng := rand.New(rand.NewPCG(5, 5))
		var reqs []workloads.Request
		var at float64
		for i := 0; i < 600; i++ {
			at += rng.ExpFloat64() / 0.5
			out := int32(64 + rng.IntN(192))
			if rng.IntN(100) == 0 {
				out = 8000
			}
			reqs = append(reqs, workloads.Request{ID: uint64(i + 1), Arrival: sim.FromSeconds(at),
				InputTokens: int32(128 + rng.IntN(512)), OutputTokens: out})
		}
		return reqs
	}
	p99 := map[string]float64{}
	for _, mode := range []string{engine.BatchStatic, engine.BatchChunked, engine.BatchContinuous} {
		cfg := defaultFleet(1)
		cfg.Replica.Batching = mode
		cfg.Replica.MaxSeqs = 32
		eng, f := testFleet(t, cfg)
		require.NoError(t, f.Start(&sliceSource{reqs: mk()}))
		eng.Run(sim.Forever)
		require.EqualValues(t, 600, f.Rec.Completed)
		p99[mode] = f.Rec.TTFT.Quantile(0.99)
	}
	t.Logf("p99 TTFT ms: %v", p99)
	require.Greater(t, p99[engine.BatchStatic], 20*p99[engine.BatchChunked])
	require.Greater(t, p99[engine.BatchStatic], 20*p99[engine.BatchContinuous])
}

// TestPreemptionUnderKVPressure: a replica with little KV preempts by
// recompute, and every request still completes with the right token count.
func TestPreemptionUnderKVPressure(t *testing.T) {
	cfg := defaultFleet(1)
	cfg.Replica.KVBlocks = 600
	eng, f := testFleet(t, cfg)
	var reqs []workloads.Request
	for i := 0; i < 64; i++ {
		reqs = append(reqs, workloads.Request{ID: uint64(i + 1), Arrival: sim.Time(i) * sim.Millisecond,
			InputTokens: 400, OutputTokens: 600})
	}
	require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
	eng.Run(sim.Forever)
	r := f.Replicas[0]
	require.EqualValues(t, 64, f.Rec.Completed)
	require.Positive(t, r.Stats.Preemptions)
	require.EqualValues(t, 64*600, r.Stats.DecodeTokens, "every output token produced exactly once")
	require.Greater(t, r.Stats.PrefillTokens, int64(64*400), "recompute costs prefill")
	require.Zero(t, r.KV().Used())
}

// TestPrefixCacheHitsAndEviction: a repeated prefix is served from cache;
// with a tiny cache it is evicted and recomputed.
func TestPrefixCacheHitsAndEviction(t *testing.T) {
	mk := func(n int) []workloads.Request {
		var reqs []workloads.Request
		for i := 0; i < n; i++ {
			reqs = append(reqs, workloads.Request{ID: uint64(i + 1), Arrival: sim.Time(i) * sim.Second,
				InputTokens: 1024 + 100, OutputTokens: 10,
				Prefix: []workloads.Segment{{Hash: uint64(1 + i%2), Tokens: 1024}}})
		}
		return reqs
	}
	eng, f := testFleet(t, defaultFleet(1))
	require.NoError(t, f.Start(&sliceSource{reqs: mk(20)}))
	eng.Run(sim.Forever)
	r := f.Replicas[0]
	// Two distinct prefixes: the first use of each misses, the other 18 hit.
	require.EqualValues(t, 18*1024, r.Stats.CachedTokens)

	cfg := defaultFleet(1)
	cfg.Replica.KVBlocks = 100 // one 64-block prefix + one request's tail, not both prefixes
	eng, f = testFleet(t, cfg)
	require.NoError(t, f.Start(&sliceSource{reqs: mk(20)}))
	eng.Run(sim.Forever)
	r = f.Replicas[0]
	require.Zero(t, r.Stats.CachedTokens, "alternating prefixes evict each other")
	require.Positive(t, r.KV().Evictions())
}

// TestSessionContinuationIsCached: a finished turn's prompt tail and answer
// stay cached as the segment the next turn names, so the next turn hits its
// whole history.
func TestSessionContinuationIsCached(t *testing.T) {
	sys := workloads.Segment{Hash: 11, Tokens: 512}
	t1 := workloads.Request{ID: 1, Arrival: 0, InputTokens: 512 + 300, OutputTokens: 200, Session: 7,
		Prefix: []workloads.Segment{sys}}
	cont := workloads.ContinuationSegment(&t1)
	require.Positive(t, cont.Tokens)
	t2 := workloads.Request{ID: 2, Arrival: 30 * sim.Second, InputTokens: 512 + cont.Tokens + 100, OutputTokens: 50,
		Session: 7, Prefix: []workloads.Segment{sys, cont}}
	for _, caching := range []bool{true, false} {
		cfg := defaultFleet(1)
		cfg.Replica.PrefixCaching = caching
		eng, f := testFleet(t, cfg)
		require.NoError(t, f.Start(&sliceSource{reqs: []workloads.Request{t1, t2}}))
		eng.Run(sim.Forever)
		require.EqualValues(t, 2, f.Rec.Completed)
		want := int64(0)
		if caching {
			want = int64(512 + cont.Tokens)
		}
		require.Equal(t, want, f.Replicas[0].Stats.CachedTokens, "caching=%v", caching)
		f.Replicas[0].KV().Check()
	}
}

// TestContiguousAllocatorFragmentsAndCrashes: a burst of 32K-token prompts
// among short requests. The paged allocator queues or preempts and never
// crashes; a contiguous allocator fragments its free space, and a long
// request that finds no region large enough kills the worker.
func TestContiguousAllocatorFragmentsAndCrashes(t *testing.T) {
	mk := func() []workloads.Request {
		rng := rand.New(rand.NewPCG(8, 8))
		var reqs []workloads.Request
		var at float64
		for i := 0; i < 3000; i++ {
			at += rng.ExpFloat64() / 20
			in, out := int32(200+rng.IntN(1500)), int32(50+rng.IntN(400))
			if i%150 == 149 { // a burst of long contexts now and then
				in = 32000 + int32(rng.IntN(8000))
			}
			reqs = append(reqs, workloads.Request{ID: uint64(i + 1), Arrival: sim.FromSeconds(at), InputTokens: in, OutputTokens: out})
		}
		return reqs
	}
	for _, alloc := range []string{engine.AllocPaged, engine.AllocContiguous} {
		cfg := defaultFleet(1)
		cfg.Replica.Allocator = alloc
		cfg.Replica.PrefixCaching = false
		cfg.Replica.KVBlocks = 8000 // 128k tokens: room for a few long contexts
		cfg.Replica.ColdStartS = 30
		eng, f := testFleet(t, cfg)
		require.NoError(t, f.Start(&sliceSource{reqs: mk()}))
		r := f.Replicas[0]
		for eng.Step() {
			r.KV().Check()
			require.NoError(t, r.CheckInvariants())
			require.Equal(t, f.Rec.Arrived, f.Rec.Completed+f.Rec.Failed+f.Rec.Shed+f.Rec.InFlight())
		}
		f.Finish(eng.Now())
		frag := r.Stats.FragNs / float64(eng.Now())
		t.Logf("%s: arrived %d completed %d failed %d shed %d, OOM crashes %d, mean fragmentation %.4f (at OOM %.2f), up %v", alloc, f.Rec.Arrived, f.Rec.Completed, f.Rec.Failed, f.Rec.Shed, r.Stats.OOMCrashes, frag, r.Stats.FragAtOOM, r.Up())
		if alloc == engine.AllocPaged {
			require.Zero(t, r.Stats.OOMCrashes)
			require.Zero(t, f.Rec.Failed)
			require.Zero(t, frag)
		} else {
			require.Positive(t, r.Stats.OOMCrashes)
			require.Positive(t, f.Rec.Failed)
			require.Positive(t, frag)
			require.Greater(t, r.Stats.FragAtOOM, 0.2, "free space was there, just scattered")
		}
	}
}

func TestRegionAllocatorMerges(t *testing.T) {
	c := engine.NewKVCache(100)
	c.EnableContiguous()
	a, ok, _ := c.AllocRegion(30)
	require.True(t, ok)
	b, _, _ := c.AllocRegion(30)
	d, _, _ := c.AllocRegion(30)
	require.Equal(t, []int64{0, 30, 60}, []int64{a, b, d})
	c.FreeRegion(b, 30) // free: [30,60) and [90,100)
	require.InDelta(t, 1-30.0/40, c.Fragmentation(), 1e-12)
	_, ok, frag := c.AllocRegion(35)
	require.False(t, ok)
	require.True(t, frag, "40 blocks free, none 35 long")
	c.FreeRegion(a, 30)
	c.FreeRegion(d, 30)
	require.Zero(t, c.Fragmentation(), "everything merged back")
	require.Equal(t, int64(100), c.Free())
	c.Check()
}
