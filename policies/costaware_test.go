package policies

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/workloads"
)

// costGroups is a two-group fleet for the cost-aware router: nBig H100
// replicas then nSmall replicas of a small, slow, cheap 24 GB GPU (L4-like),
// Llama-3-8B in FP8, with the KV capacity each GPU leaves.
func costGroups(t *testing.T, nBig, nSmall int) []fleet.GroupView {
	t.Helper()
	cat := hw.NewCatalog()
	small := hw.GPU{Name: "small", HBMBytes: 24e9, HBMBytesPerS: 300e9, BF16FLOPS: 121e12, FP8FLOPS: 242e12,
		NVLinkBytesPerS: 64e9, DomainGPUs: 8, PricePerGPUHour: 0.8}
	llm := cat.LLMs["llama-3-8b"]
	view := func(gpu hw.GPU, first, n int, kvTokens float64) fleet.GroupView {
		perf, err := hw.NewStepModel(gpu, llm, 1, hw.FP8, hw.FP8, cat.Profiles["default"])
		require.NoError(t, err)
		return fleet.GroupView{Name: gpu.Name, First: first, Replicas: n, USDPerReplicaHour: gpu.PricePerGPUHour,
			Perf: perf, KVTokens: kvTokens, MaxSeqs: 256}
	}
	return []fleet.GroupView{view(cat.GPUs["H100"], 0, nBig, 900e3), view(small, nBig, nSmall, 130e3)}
}

func req(prompt, output int32) *workloads.Request {
	return &workloads.Request{ID: 1, InputTokens: prompt, OutputTokens: output}
}

func TestCostAwareEstimates(t *testing.T) {
	r := NewCostAware(1.25, 1000)
	r.SetGroups(costGroups(t, 1, 1))
	// Dollars grow with the request on both groups; a request over the TTFT
	// budget on the slow group is infeasible there, and one larger than a
	// replica's KV is infeasible everywhere.
	for k := range 2 {
		short, _, ok1 := r.Estimate(k, 200, 100)
		long, _, ok2 := r.Estimate(k, 4000, 100)
		require.True(t, ok1 && ok2)
		assert.Greater(t, long, short)
	}
	_, _, ok := r.Estimate(0, 16000, 200)
	assert.True(t, ok, "the H100 prefills 16k tokens well within 1 s")
	_, _, ok = r.Estimate(1, 16000, 200)
	assert.False(t, ok, "the small GPU takes over 1 s to prefill 16k tokens")
	_, _, ok = r.Estimate(0, 1_000_000, 1)
	assert.False(t, ok, "larger than the KV capacity")
	// The batch a replica runs shrinks with the request's size once KV,
	// not max_seqs, bounds it.
	_, sShort, _ := r.Estimate(1, 200, 100)
	_, sLong, _ := r.Estimate(1, 4000, 100)
	assert.Equal(t, 256.0, sShort)
	assert.Less(t, sLong, 256.0)
}

func TestCostAwareRoutes(t *testing.T) {
	r := NewCostAware(1.25, 1000)
	r.SetGroups(costGroups(t, 2, 3))
	cheaper := func(p, o int32) int {
		a, _, _ := r.Estimate(0, p, o)
		b, _, _ := r.Estimate(1, p, o)
		if a <= b {
			return 0
		}
		return 1
	}
	inGroup := func(i, k int) bool { g := r.groups[k]; return i >= g.First && i < g.First+g.Replicas }

	// Idle fleet: a short request goes to the cheaper group's first
	// replica; a long one only the H100s can prefill in time goes there.
	i, ok := r.Route(req(200, 100), replicas(5).states())
	require.True(t, ok)
	assert.True(t, inGroup(i, cheaper(200, 100)), "replica %d", i)
	i, _ = r.Route(req(16000, 200), replicas(5).states())
	assert.True(t, inGroup(i, 0), "replica %d", i)

	// Within the cheaper group, the least loaded replica.
	k := cheaper(200, 100)
	f := replicas(5)
	g := r.groups[k]
	f[g.First].Outstanding = 10
	i, _ = r.Route(req(200, 100), f.states())
	assert.Equal(t, g.First+1, i)

	// The cheaper group full (load_bound × batch outstanding on each):
	// the request spills to the other group.
	_, slots, _ := r.Estimate(k, 200, 100)
	f = replicas(5)
	for j := g.First; j < g.First+g.Replicas; j++ {
		f[j].Outstanding = int(1.25*slots) + 1
	}
	i, _ = r.Route(req(200, 100), f.states())
	assert.True(t, inGroup(i, 1-k), "spilled to the other group, got %d", i)

	// Every feasible replica full: the least full one (by its batch).
	i, _ = r.Route(req(16000, 200), replicas(5).allOut(1000).out(1000, 900).states())
	assert.Equal(t, 1, i)

	// No feasible replica available (the H100s down): the long request
	// still goes somewhere, to the least outstanding small replica.
	i, ok = r.Route(req(16000, 200), replicas(5).down(0, 1).out(0, 0, 4, 2, 3).states())
	require.True(t, ok)
	assert.Equal(t, 3, i)

	// Nothing available: shed.
	_, ok = r.Route(req(200, 100), replicas(5).down(0, 1, 2, 3, 4).states())
	assert.False(t, ok)
}

// Without groups (a fleet of one kind) it routes as weighted least
// outstanding.
func TestCostAwareOneKind(t *testing.T) {
	r := NewCostAware(1.25, 0)
	f := replicas(4).out(3, 1, 1, 2)
	i, ok := r.Route(req(100, 10), f.states())
	j, _ := WeightedLeastOutstanding{}.Route(req(100, 10), f.states())
	require.True(t, ok)
	assert.Equal(t, j, i)
}
