package hw

import (
	"testing"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/stretchr/testify/require"
)

// Every built-in MoE model validates (so its active params agree with its
// expert shape within 25%), and the derived active params sit within 15%
// of the model card's.
func TestMoECatalog(t *testing.T) {
	cat := NewCatalog()
	for _, want := range []string{"mixtral-8x7b", "qwen3-30b-a3b", "qwen3-235b-a22b", "llama-4-scout",
		"llama-4-maverick", "deepseek-v3", "gpt-oss-120b"} {
		m, ok := cat.LLMs[want]
		require.True(t, ok, want)
		require.True(t, m.IsMoE(), want)
		var ps config.Problems
		m.Validate("models.0", &ps)
		require.NoError(t, ps.Err(), want)
		d := m.ActiveParamsDerived()
		require.InEpsilon(t, m.ActiveParams, d, 0.15, "%s: derived active %.4g vs card %.4g", want, d, m.ActiveParams)
		require.Less(t, d, m.Params, want)
		require.Greater(t, m.DenseParams(), 0.0, want)
	}
	// Dense models are unchanged: their derived active params are all.
	l := cat.LLMs["llama-3-70b"]
	require.False(t, l.IsMoE())
	require.Equal(t, l.Params, l.ActiveParamsDerived())
}

// MLA's KV per token is layers · (kv_lora_rank + rope) elements, the same
// on every GPU of a TP group; GQA's is unchanged.
func TestMLAKVBytes(t *testing.T) {
	cat := NewCatalog()
	ds := cat.LLMs["deepseek-v3"]
	want := float64(ds.Layers) * (512 + 64) * 2 // BF16
	require.Equal(t, want, ds.KVBytesPerToken(2))
	require.Equal(t, 70272.0, ds.KVBytesPerToken(2)) // 61 · 576 · 2 B
	for _, tp := range []int{1, 2, 8} {
		require.Equal(t, want/2, ds.KVBytesPerTokenGPU(1, tp), "tp %d", tp)
	}
	l := cat.LLMs["llama-3-8b"]
	require.Equal(t, 131072.0, l.KVBytesPerToken(2)) // 128 KiB, CALIBRATION.md §3
	require.Equal(t, 2*float64(l.Layers)*4*128*2, l.KVBytesPerTokenGPU(2, 2))
}

func TestMoEValidate(t *testing.T) {
	base := NewCatalog().LLMs["mixtral-8x7b"]
	for _, c := range []struct {
		edit func(*LLM)
		key  string
	}{
		{func(m *LLM) { m.ExpertsPerToken = 9 }, "models.3.experts_per_token"},
		{func(m *LLM) { m.ExpertsPerToken = 0 }, "models.3.experts_per_token"},
		{func(m *LLM) { m.ExpertIntermediate = 0 }, "models.3.expert_intermediate"},
		{func(m *LLM) { m.DenseLayers = 32 }, "models.3.dense_layers"},
		{func(m *LLM) { m.ActiveParams = 30e9 }, "models.3.active_params"},
		{func(m *LLM) { m.Params = 40e9 }, "models.3.params"},
		{func(m *LLM) { m.Experts = 0 }, "models.3.experts"},
		{func(m *LLM) { m.Experts = -1 }, "models.3.experts"},
		{func(m *LLM) { m.QKRopeHeadDim = 64 }, "models.3.qk_rope_head_dim"},
	} {
		m := base
		c.edit(&m)
		var ps config.Problems
		m.Validate("models.3", &ps)
		require.True(t, ps.Has(c.key), "%s: %v", c.key, ps.Err())
	}
}
