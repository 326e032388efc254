package fleet

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
	"github.com/stretchr/testify/require"
)

type roundRobin struct{ next int }

func (rr *roundRobin) Route(_ *workloads.Request, rs []engine.ReplicaState) (int, bool) {
	for k := 0; k < len(rs); k++ {
		i := (rr.next + k) % len(rs)
		if rs[i].Available {
			rr.next = i + 1
			return i, true
		}
	}
	return -1, false
}

// conversations is a workload of multi-turn conversations whose turns
// re-send the conversation so far (each turn's prompt = the previous
// prompt's segments + a new one), interleaved so that a small HBM cache
// evicts a conversation between its turns.
func conversations(rng *rand.Rand, convs, turns int, rate float64) []workloads.Request {
	var reqs []workloads.Request
	var at float64
	prefixes := make([][]workloads.Segment, convs)
	for turn := 0; turn < turns; turn++ {
		for c := 0; c < convs; c++ {
			at += rng.ExpFloat64() / rate
			prefixes[c] = append(prefixes[c], workloads.Segment{Hash: uint64(c+1)*1000 + uint64(turn), Tokens: 512})
			segs := append([]workloads.Segment(nil), prefixes[c]...)
			var tot int32
			for _, s := range segs {
				tot += s.Tokens
			}
			reqs = append(reqs, workloads.Request{ID: uint64(len(reqs) + 1), Arrival: sim.FromSeconds(at),
				InputTokens: tot + 100, OutputTokens: 50, Prefix: segs})
		}
	}
	return reqs
}

// runConversations runs f on 41 conversations of 6 turns at 4 per second
// (conversations), checking every replica's KV bookkeeping after every
// event, until all complete.
func runConversations(t *testing.T, eng *sim.Engine, f *Fleet, rng *rand.Rand) {
	t.Helper()
	reqs := conversations(rng, 41, 6, 4)
	require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
	for eng.Step() {
		for _, r := range f.Replicas {
			r.KV().Check()
			require.NoError(t, r.CheckInvariants())
		}
	}
	require.EqualValues(t, len(reqs), f.Rec.Completed)
}

// TestKVTiersHitRate: on conversations that a small HBM cache cannot keep,
// host DRAM brings prefix hits back (loaded, not recomputed), and a shared
// store also catches the turns round-robin sends to another replica; the
// KV bookkeeping holds after every event, and loads cost step time.
func TestKVTiersHitRate(t *testing.T) {
	run := func(cfg engine.KVTiersConfig) (hit float64, k *engine.KVTiers, ttft float64) {
		pre := defaultFleet(4)
		pre.Replica.KVBlocks = 1500 // 24k tokens: a few conversations
		eng := sim.NewEngine()
		f, err := NewFleet(eng, hw.NewCatalog(), pre, &roundRobin{}, NewRecorder(SLO{}), "cluster")
		require.NoError(t, err)
		if cfg.Enabled {
			k = f.EnableKVTiers(cfg, hw.NewCatalog().GPUs, "H100")
		}
		runConversations(t, eng, f, rand.New(rand.NewPCG(1, 2))) // 41: round-robin moves each conversation to another replica every turn
		var prompt, cached int64
		for _, r := range f.Replicas {
			prompt += r.Stats.PromptTokens
			cached += r.Stats.CachedTokens
			require.Zero(t, r.KV().Used())
		}
		return float64(cached) / float64(prompt), k, f.Rec.TTFT.Mean()
	}
	none, _, _ := run(engine.KVTiersConfig{})
	host := engine.DefaultKVTiersConfig()
	host.Enabled, host.HostDRAMGBPerGPU = true, 64
	hostHit, hk, hostTTFT := run(host)
	store := engine.DefaultKVTiersConfig()
	store.Enabled, store.StoreGB = true, 1000
	storeHit, sk, _ := run(store)
	t.Logf("prefix hit rate: HBM only %.3f, + host DRAM %.3f, + shared store %.3f", none, hostHit, storeHit)
	require.Greater(t, hostHit, none+0.05)
	require.Greater(t, storeHit, hostHit+0.05, "round-robin: only the shared store sees other replicas' turns")
	st := hk.Stats()
	require.Len(t, st, 1)
	require.Positive(t, st[0].Hits)
	require.Positive(t, st[0].LoadNs)
	require.Positive(t, st[0].BytesWritten)
	require.InDelta(t, float64(st[0].HitTokens)*128*1024, st[0].BytesRead, 1, "8B BF16: 128 KiB per token loaded")
	require.Equal(t, "store", sk.Stats()[0].Name)
	// Layer-wise loading overlaps the loads with compute: TTFT no worse.
	host.Layerwise = true
	_, _, lwTTFT := run(host)
	require.LessOrEqual(t, lwTTFT, hostTTFT)
	// Determinism.
	a, _, at := run(store)
	b, _, bt := run(store)
	require.Equal(t, fmt.Sprint(a, at), fmt.Sprint(b, bt))
}

// TestKVTiersWithDisagg: a disaggregated fleet whose prefill pool has a
// shared store (Mooncake's layout): prefills write through and load from
// the store, hold their KV for the transfer, and the accounting holds
// after every event.
func TestKVTiersWithDisagg(t *testing.T) {
	run := func(store bool) (float64, *Fleet) {
		pre := defaultFleet(3)
		pre.Replica.KVBlocks = 1500
		eng, f := disaggFleet(t, pre, defaultDisagg(2))
		if store {
			cfg := engine.DefaultKVTiersConfig()
			cfg.Enabled, cfg.StoreGB, cfg.HostDRAMGBPerGPU = true, 1000, 2
			f.EnableKVTiers(cfg, hw.NewCatalog().GPUs, "H100")
		}
		reqs := conversations(rand.New(rand.NewPCG(3, 4)), 41, 5, 4)
		require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
		n := 0
		for eng.Step() {
			n++
			checkDisagg(t, f, fmt.Sprint("event ", n))
		}
		require.EqualValues(t, len(reqs), f.Rec.Completed)
		require.Zero(t, f.Disagg.HeldBlocks())
		var prompt, cached int64
		for _, r := range f.Replicas {
			prompt += r.Stats.PromptTokens
			cached += r.Stats.CachedTokens
		}
		return float64(cached) / float64(prompt), f
	}
	none, _ := run(false)
	hit, f := run(true)
	t.Logf("prefill pool prefix hit rate: %.3f without tiers, %.3f with a shared store", none, hit)
	require.Greater(t, hit, none+0.2)
	st := f.KVTiers.Stats()
	require.Equal(t, "store", st[len(st)-1].Name)
	require.Positive(t, st[len(st)-1].Hits)
	require.Equal(t, f.Rec.Completed, f.Disagg.Stats.Transfers, "one transfer per request")
}

// TestKVTiersGroups: KV tiers in a fleet of groups. Each replica's host
// DRAM is sized per GPU of its own group (64 GB per GPU: one H100 of the
// TP=1 group, two of the TP=2 group, in its own KV blocks); the shared
// store is one capacity for the fleet. A group whose KV blocks differ (fp8
// KV) is a format of its own in the store: it finds only its own
// segments, so round-robin across the groups hits the store less than
// across groups of one format. The KV bookkeeping holds after every event,
// and a run is deterministic.
func TestKVTiersGroups(t *testing.T) {
	fp8 := engine.DefaultReplicaConfig()
	fp8.KVDType = "fp8"
	run := func(bKV *engine.ReplicaConfig) (*Fleet, []engine.TierStats, string) {
		cfg := FleetConfig{Model: "llama-3-8b", Replica: engine.DefaultReplicaConfig(), Groups: []GroupConfig{
			{Name: "a", GPU: "H100", TP: 1, Replicas: 2},
			{Name: "b", GPU: "H100", TP: 2, Replicas: 2, Replica: bKV},
		}}
		cfg.Replica.KVBlocks = 1500
		if bKV != nil {
			bKV.KVBlocks = 1500
		}
		eng := sim.NewEngine()
		f, err := NewFleet(eng, hw.NewCatalog(), cfg, &roundRobin{}, NewRecorder(SLO{}), "cluster")
		require.NoError(t, err)
		tc := engine.DefaultKVTiersConfig()
		tc.Enabled, tc.HostDRAMGBPerGPU, tc.StoreGB = true, 64, 1000
		k := f.EnableKVTiers(tc, hw.NewCatalog().GPUs, "")
		runConversations(t, eng, f, rand.New(rand.NewPCG(5, 6)))
		for i, ts := range k.PerReplica {
			g := f.GroupOf(i)
			bpb := g.Memory.KVBytesPerBlock * float64(g.TP)
			require.Equal(t, "host_dram", ts[0].Stats.Name)
			require.InDelta(t, 64e9*float64(g.TP), ts[0].Stats.CapacityBytes, bpb, "replica %d: 64 GB per GPU of its group", i)
			require.Same(t, k.Store, ts[1], "one store")
		}
		return f, k.Stats(), fmt.Sprint(f.Rec.Completed, f.Rec.TTFT.Mean(), k.Stats())
	}
	same, sameStats, _ := run(nil)
	require.Equal(t, same.Groups[0].Memory.KVBytesPerBlock, 2*same.Groups[1].Memory.KVBytesPerBlock, "TP=2 holds half a block per GPU: one format")
	split, splitStats, a := run(&fp8)
	require.Equal(t, split.Groups[0].Memory.KVBytesPerBlock, 4*split.Groups[1].Memory.KVBytesPerBlock, "fp8 KV over TP=2: another format")
	store := func(st []engine.TierStats) engine.TierStats { return st[len(st)-1] }
	require.Positive(t, store(splitStats).Hits)
	require.Less(t, store(splitStats).Hits, store(sameStats).Hits, "each format finds only its own segments")
	_, _, b := run(&fp8)
	require.Equal(t, a, b, "deterministic")
}
