package hw

import (
	"math"

	"github.com/fleetsim/fleetsim/internal/config"
)

// MoE holds the fields of an LLM that make it a mixture-of-experts model
// or give it multi-head latent attention (MLA). All zero: a dense GQA model
// exactly as before.
//
// Parameter accounting (what the step model uses): one routed expert is a
// SwiGLU FFN of 3 · hidden · expert_intermediate weights; the routed expert
// weights are moe_layers · experts · that; everything else in params
// (attention, embeddings, routers, dense-FFN layers and shared experts) is
// dense and runs for every token. A token runs the dense part and
// experts_per_token experts in each MoE layer, so its GEMM FLOPs are
// 2 · (dense + moe_layers · experts_per_token · expert params).
type MoE struct {
	// Experts is the number of routed experts per MoE layer; 0: dense.
	Experts int `toml:"experts"`
	// ExpertsPerToken is the top-k of the router.
	ExpertsPerToken int `toml:"experts_per_token"`
	// SharedExperts run for every token beside the routed ones (counted in
	// the dense part of params).
	SharedExperts int `toml:"shared_experts"`
	// ExpertIntermediate is one expert's FFN size (moe_intermediate_size).
	ExpertIntermediate int `toml:"expert_intermediate"`
	// DenseLayers is how many layers have a dense FFN instead of experts
	// (DeepSeek-V3's first_k_dense_replace, Llama 4 Maverick's interleaved
	// dense layers).
	DenseLayers int `toml:"dense_layers"`
	// ActiveParams is the model card's parameters per token; 0 derives it.
	// When given it must agree with the expert shape within 25%.
	ActiveParams float64 `toml:"active_params"`
	// KVLoraRank and QKRopeHeadDim, when KVLoraRank > 0, make attention
	// multi-head latent attention: a token's KV per layer is one compressed
	// vector of kv_lora_rank + qk_rope_head_dim elements (DeepSeek-V2/V3),
	// whatever the head count.
	KVLoraRank    int `toml:"kv_lora_rank"`
	QKRopeHeadDim int `toml:"qk_rope_head_dim"`
	// SlidingWindow, when > 0, is the attention window in tokens of the
	// model's SlidingLayers local-attention layers (gpt-oss alternates
	// 128-token sliding windows with full attention; Llama 4 attends in
	// 8,192-token chunks on three layers of four, which fleetsim takes as a
	// window of that size: an upper bound on what they read). A local layer
	// holds and reads at most SlidingWindow tokens of KV per sequence, and a
	// prefill token attends at most that many; the engine's KV manager
	// keeps only the window (vLLM's hybrid allocator).
	SlidingWindow int `toml:"sliding_window"`
	SlidingLayers int `toml:"sliding_layers"`
}

// FullLayers is the number of layers attending the whole context.
func (m *LLM) FullLayers() int { return m.Layers - m.localLayers() }

// localLayers is the number of windowed layers (0 without a window).
func (m *LLM) localLayers() int {
	if m.SlidingWindow <= 0 {
		return 0
	}
	return min(max(m.SlidingLayers, 0), m.Layers)
}

// LocalFraction is the share of layers that attend a window.
func (m *LLM) LocalFraction() float64 {
	if m.Layers <= 0 {
		return 0
	}
	return float64(m.localLayers()) / float64(m.Layers)
}

// IsMoE reports whether the model routes tokens to experts.
func (m *MoE) IsMoE() bool { return m.Experts > 0 }

// IsMLA reports whether attention is multi-head latent attention.
func (m *MoE) IsMLA() bool { return m.KVLoraRank > 0 }

// MoELayers is the number of layers with routed experts.
func (m *LLM) MoELayers() int {
	if !m.IsMoE() {
		return 0
	}
	return m.Layers - m.DenseLayers
}

// ExpertParams is the parameter count of one routed expert (SwiGLU: gate,
// up and down projections).
func (m *LLM) ExpertParams() float64 {
	return 3 * float64(m.Hidden) * float64(m.ExpertIntermediate)
}

// RoutedParams is the parameter count of all routed experts of all layers.
func (m *LLM) RoutedParams() float64 {
	return float64(m.MoELayers()) * float64(m.Experts) * m.ExpertParams()
}

// DenseParams is what runs for every token: params less the routed
// experts.
func (m *LLM) DenseParams() float64 { return m.Params - m.RoutedParams() }

// ActiveParamsDerived is the parameters one token runs: the dense part and
// experts_per_token experts in each MoE layer. For a dense model, params.
func (m *LLM) ActiveParamsDerived() float64 {
	return m.DenseParams() + float64(m.MoELayers())*float64(m.ExpertsPerToken)*m.ExpertParams()
}

// mlaKVBytesPerToken is a token's latent KV across all layers:
// layers · (kv_lora_rank + qk_rope_head_dim) · bytesPerElem.
func (m *LLM) mlaKVBytesPerToken(bytesPerElem float64) float64 {
	return float64(m.Layers) * float64(m.KVLoraRank+m.QKRopeHeadDim) * bytesPerElem
}

// validateMoE checks the MoE and MLA fields under prefix.
func (m *LLM) validateMoE(prefix string, ps *config.Problems) {
	for _, f := range []struct {
		key string
		v   int
	}{
		{"experts", m.Experts}, {"experts_per_token", m.ExpertsPerToken}, {"shared_experts", m.SharedExperts},
		{"expert_intermediate", m.ExpertIntermediate}, {"dense_layers", m.DenseLayers},
		{"kv_lora_rank", m.KVLoraRank}, {"qk_rope_head_dim", m.QKRopeHeadDim},
		{"sliding_window", m.SlidingWindow}, {"sliding_layers", m.SlidingLayers},
	} {
		if f.v < 0 {
			ps.Add(config.Key(prefix, f.key), "must be >= 0, found %d", f.v)
		}
	}
	ps.NonNegative(config.Key(prefix, "active_params"), m.ActiveParams)
	if m.SlidingLayers > 0 && m.SlidingWindow <= 0 {
		ps.Add(config.Key(prefix, "sliding_window"), "must be > 0 when sliding_layers is set")
	}
	if m.SlidingWindow > 0 && (m.SlidingLayers <= 0 || m.SlidingLayers > m.Layers) {
		ps.Add(config.Key(prefix, "sliding_layers"), "must be between 1 and layers (%d) when sliding_window is set, found %d", m.Layers, m.SlidingLayers)
	}
	if m.KVLoraRank == 0 && m.QKRopeHeadDim > 0 {
		ps.Add(config.Key(prefix, "qk_rope_head_dim"), "is for multi-head latent attention; set kv_lora_rank too")
	}
	if m.Experts <= 0 {
		if m.ExpertsPerToken > 0 || m.ExpertIntermediate > 0 || m.SharedExperts > 0 || m.DenseLayers > 0 {
			ps.Add(config.Key(prefix, "experts"), "must be > 0 when experts_per_token, expert_intermediate, shared_experts or dense_layers is set (a dense model sets none of them)")
		}
		return
	}
	if m.ExpertsPerToken < 1 || m.ExpertsPerToken > m.Experts {
		ps.Add(config.Key(prefix, "experts_per_token"), "must be between 1 and experts (%d), found %d", m.Experts, m.ExpertsPerToken)
	}
	ps.PositiveInt(config.Key(prefix, "expert_intermediate"), m.ExpertIntermediate)
	if m.Layers > 0 && (m.DenseLayers < 0 || m.DenseLayers >= m.Layers) {
		ps.Add(config.Key(prefix, "dense_layers"), "must be between 0 and layers−1 (%d), found %d", m.Layers-1, m.DenseLayers)
	}
	if ps.Has(config.Key(prefix, "params")) || m.Hidden <= 0 || m.ExpertIntermediate <= 0 || m.DenseLayers >= m.Layers {
		return
	}
	if d := m.DenseParams(); d <= 0 {
		ps.Add(config.Key(prefix, "params"), "%.4g is not more than the routed experts' %.4g (moe layers %d × experts %d × 3·hidden·expert_intermediate)",
			m.Params, m.RoutedParams(), m.MoELayers(), m.Experts)
		return
	}
	if m.ActiveParams > 0 && m.ExpertsPerToken >= 1 && m.ExpertsPerToken <= m.Experts {
		if d := m.ActiveParamsDerived(); math.Abs(d-m.ActiveParams) > 0.25*m.ActiveParams {
			ps.Add(config.Key(prefix, "active_params"), "%.4g disagrees with the %.4g the expert shape gives (params − routed experts + moe layers × experts_per_token × 3·hidden·expert_intermediate) by more than 25%%",
				m.ActiveParams, d)
		}
	}
}

// Built-in mixture-of-experts models. Shapes are the Hugging Face
// config.json of each release (URLs below; file as of 2025); params and
// active params the model cards'. Sliding-window and chunked attention
// layers (gpt-oss, Llama 4) are windows (MoE.SlidingWindow). Vision encoders
// of Llama 4 are not served here.
var builtinMoELLMs = []LLM{
	// huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json:
	// hidden_size 4096, intermediate_size 14336, num_hidden_layers 32,
	// num_attention_heads 32, num_key_value_heads 8, vocab_size 32000,
	// num_local_experts 8, num_experts_per_tok 2, max_position_embeddings
	// 32768. Params 46.7B total, 12.9B active (mistral.ai/news/mixtral-of-experts).
	{Name: "mixtral-8x7b", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		Intermediate: 14336, Vocab: 32000, Params: 46.7e9, ContextTokens: 32768,
		MoE: MoE{Experts: 8, ExpertsPerToken: 2, ExpertIntermediate: 14336, ActiveParams: 12.9e9}},
	// huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json: hidden_size
	// 2048, num_hidden_layers 48, num_attention_heads 32,
	// num_key_value_heads 4, head_dim 128, intermediate_size 6144,
	// moe_intermediate_size 768, num_experts 128, num_experts_per_tok 8,
	// decoder_sparse_step 1 and mlp_only_layers [] (every layer MoE),
	// vocab_size 151936, max_position_embeddings 40960. Model card: 30.5B
	// total, 3.3B activated, no shared experts.
	{Name: "qwen3-30b-a3b", Layers: 48, Hidden: 2048, Heads: 32, KVHeads: 4, HeadDim: 128,
		Intermediate: 6144, Vocab: 151936, Params: 30.5e9, ContextTokens: 40960,
		MoE: MoE{Experts: 128, ExpertsPerToken: 8, ExpertIntermediate: 768, ActiveParams: 3.3e9}},
	// huggingface.co/Qwen/Qwen3-235B-A22B/blob/main/config.json:
	// hidden_size 4096, num_hidden_layers 94, num_attention_heads 64,
	// num_key_value_heads 4, head_dim 128, intermediate_size 12288,
	// moe_intermediate_size 1536, num_experts 128, num_experts_per_tok 8,
	// vocab_size 151936, max_position_embeddings 40960. Model card: 235B
	// total, 22B activated.
	{Name: "qwen3-235b-a22b", Layers: 94, Hidden: 4096, Heads: 64, KVHeads: 4, HeadDim: 128,
		Intermediate: 12288, Vocab: 151936, Params: 235e9, ContextTokens: 40960,
		MoE: MoE{Experts: 128, ExpertsPerToken: 8, ExpertIntermediate: 1536, ActiveParams: 22e9}},
	// huggingface.co/meta-llama/Llama-4-Scout-17B-16E-Instruct config.json
	// text_config: hidden_size 5120, num_hidden_layers 48,
	// num_attention_heads 40, num_key_value_heads 8, head_dim 128,
	// intermediate_size 8192 (expert), intermediate_size_mlp 16384,
	// num_local_experts 16, num_experts_per_tok 1, one shared expert,
	// interleave_moe_layer_step 1 (every layer MoE), vocab_size 202048,
	// max_position_embeddings 10485760. Model card: 109B total (with the
	// vision encoder), 17B active.
	// attention_chunk_size 8192 and no_rope_layers: every fourth layer
	// attends the whole context, the other 36 within their 8,192-token
	// chunk (taken as a window of 8,192).
	{Name: "llama-4-scout", Layers: 48, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128,
		Intermediate: 16384, Vocab: 202048, Params: 109e9, ContextTokens: 10485760,
		MoE: MoE{Experts: 16, ExpertsPerToken: 1, SharedExperts: 1, ExpertIntermediate: 8192, ActiveParams: 17e9,
			SlidingWindow: 8192, SlidingLayers: 36}},
	// huggingface.co/meta-llama/Llama-4-Maverick-17B-128E-Instruct
	// config.json text_config: as Scout but num_local_experts 128 and
	// interleave_moe_layer_step 2 (24 MoE layers, 24 dense with
	// intermediate_size_mlp 16384), max_position_embeddings 1048576. Model
	// card: 400B total, 17B active.
	{Name: "llama-4-maverick", Layers: 48, Hidden: 5120, Heads: 40, KVHeads: 8, HeadDim: 128,
		Intermediate: 16384, Vocab: 202048, Params: 400e9, ContextTokens: 1048576,
		MoE: MoE{Experts: 128, ExpertsPerToken: 1, SharedExperts: 1, ExpertIntermediate: 8192, DenseLayers: 24, ActiveParams: 17e9,
			SlidingWindow: 8192, SlidingLayers: 36}},
	// huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json:
	// hidden_size 7168, num_hidden_layers 61, num_attention_heads 128,
	// kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128,
	// v_head_dim 128, intermediate_size 18432, moe_intermediate_size 2048,
	// n_routed_experts 256, n_shared_experts 1, num_experts_per_tok 8,
	// first_k_dense_replace 3, vocab_size 129280. Context 128K (arXiv
	// 2412.19437 §4.3). Params 671B total, 37B activated (paper abstract;
	// the 14B multi-token-prediction module is not counted). head_dim is
	// qk_nope + qk_rope = 192 (the query–key width prefill attention runs
	// at); kv_heads = heads (MLA decompresses to full multi-head attention
	// in prefill). KV: 61 · (512 + 64) elements per token.
	{Name: "deepseek-v3", Layers: 61, Hidden: 7168, Heads: 128, KVHeads: 128, HeadDim: 192,
		Intermediate: 18432, Vocab: 129280, Params: 671e9, ContextTokens: 131072,
		MoE: MoE{Experts: 256, ExpertsPerToken: 8, SharedExperts: 1, ExpertIntermediate: 2048, DenseLayers: 3,
			ActiveParams: 37e9, KVLoraRank: 512, QKRopeHeadDim: 64}},
	// huggingface.co/openai/gpt-oss-120b/blob/main/config.json: hidden_size
	// 2880, num_hidden_layers 36, num_attention_heads 64,
	// num_key_value_heads 8, head_dim 64, intermediate_size 2880,
	// num_local_experts 128, num_experts_per_tok 4, vocab_size 201088,
	// max_position_embeddings 131072. Model card (arXiv 2508.10925, Table
	// 1): 116.8B total, 5.1B active.
	// layer_types alternate "sliding_attention" and "full_attention",
	// sliding_window 128: 18 of the 36 layers attend a 128-token window.
	{Name: "gpt-oss-120b", Layers: 36, Hidden: 2880, Heads: 64, KVHeads: 8, HeadDim: 64,
		Intermediate: 2880, Vocab: 201088, Params: 116.8e9, ContextTokens: 131072,
		MoE: MoE{Experts: 128, ExpertsPerToken: 4, ExpertIntermediate: 2880, ActiveParams: 5.1e9,
			SlidingWindow: 128, SlidingLayers: 18}},
	// huggingface.co/MiniMaxAI/MiniMax-M2.5/blob/main/config.json:
	// hidden_size 3072, num_hidden_layers 62, num_attention_heads 48,
	// num_key_value_heads 8, head_dim 128, intermediate_size 1536 (each
	// expert's), num_local_experts 256, num_experts_per_tok 8, no shared
	// experts, vocab_size 200064, max_position_embeddings 196608. Model
	// card: 230B total, 10B activated (the shapes give 229B and 11.4B).
	{Name: "minimax-m2", Layers: 62, Hidden: 3072, Heads: 48, KVHeads: 8, HeadDim: 128,
		Intermediate: 1536, Vocab: 200064, Params: 229e9, ContextTokens: 196608,
		MoE: MoE{Experts: 256, ExpertsPerToken: 8, ExpertIntermediate: 1536, ActiveParams: 10e9}},
	// huggingface.co/moonshotai/Kimi-K2.5/blob/main/config.json
	// (text_config; Kimi-K2-Instruct's is the same language model):
	// DeepSeek-V3's architecture with hidden_size 7168, num_hidden_layers
	// 61, num_attention_heads 64, kv_lora_rank 512, qk_rope_head_dim 64,
	// qk_nope_head_dim 128, intermediate_size 18432, moe_intermediate_size
	// 2048, n_routed_experts 384, n_shared_experts 1, num_experts_per_tok 8,
	// first_k_dense_replace 1, vocab_size 163840, max_position_embeddings
	// 262144. Model card: 1T total, 32B activated (the shapes give 1.026T
	// and 32.6B). head_dim and KV as deepseek-v3's (MLA).
	{Name: "kimi-k2", Layers: 61, Hidden: 7168, Heads: 64, KVHeads: 64, HeadDim: 192,
		Intermediate: 18432, Vocab: 163840, Params: 1.026e12, ContextTokens: 262144,
		MoE: MoE{Experts: 384, ExpertsPerToken: 8, SharedExperts: 1, ExpertIntermediate: 2048, DenseLayers: 1,
			ActiveParams: 32e9, KVLoraRank: 512, QKRopeHeadDim: 64}},
}
