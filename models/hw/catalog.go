package hw

import (
	"sort"

	"github.com/fleetsim/fleetsim/internal/config"
)

// GPU describes one accelerator. Figures are dense (non-sparse) peaks.
type GPU struct {
	Name string `toml:"name"`
	// HBMBytes is the device memory capacity in bytes.
	HBMBytes float64 `toml:"hbm_bytes"`
	// HBMBytesPerS is the peak HBM bandwidth in bytes/s.
	HBMBytesPerS float64 `toml:"hbm_bytes_per_s"`
	// BF16FLOPS and FP8FLOPS are dense peak tensor throughput in FLOP/s.
	BF16FLOPS float64 `toml:"bf16_flops"`
	FP8FLOPS  float64 `toml:"fp8_flops"`
	// FP4FLOPS is the dense FP4 peak in FLOP/s; 0 where the GPU has no FP4
	// tensor cores (before Blackwell).
	FP4FLOPS float64 `toml:"fp4_flops"`
	// NVLinkBytesPerS is the total (bidirectional) NVLink bandwidth per GPU
	// in bytes/s; one direction is half of it.
	NVLinkBytesPerS float64 `toml:"nvlink_bytes_per_s"`
	// NICBytesPerS is the scale-out (RDMA) NIC bandwidth per GPU in one
	// direction, bytes/s: what an expert-parallel all-to-all across NVLink
	// domains, and KV moving between servers in disaggregated serving, run
	// over. 0: unknown / no RDMA NIC (such layouts are refused).
	NICBytesPerS float64 `toml:"nic_bytes_per_s"`
	// TDPWatts is the board power in watts.
	TDPWatts float64 `toml:"tdp_watts"`
	// DomainGPUs is the size of the NVLink domain the GPU ships in: 8 for an
	// HGX server, 72 for a GB200 NVL72 rack.
	DomainGPUs int `toml:"domain_gpus"`
	// PricePerGPUHour is the default on-demand price in USD per GPU-hour.
	PricePerGPUHour float64 `toml:"price_per_gpu_hour"`
	// ReservedPricePerGPUHour is the reserved (committed-use) price in USD
	// per GPU-hour.
	ReservedPricePerGPUHour float64 `toml:"reserved_price_per_gpu_hour"`
}

// Built-in GPUs. CALIBRATION.md §3 (hardware table, S; dense = half of
// NVIDIA's sparse figures). NICs: one 400 Gb/s ConnectX-7 per GPU = 50e9
// bytes/s each way (NVIDIA DGX H100/H200 and DGX B200 datasheets: "8x
// single-port ConnectX-7 VPI, 400 Gb/s"; GB200 NVL72 compute trays: one
// 400 Gb/s ConnectX-7 per GPU; no CALIBRATION.md row yet). Prices: CALIBRATION.md §3 "Price per GPU-hour"
// (S, 2026): on-demand at the top of each quoted range, reserved at its
// bottom (H100 $2.89–6.50, H200 $2.50–7.00); B200 and GB200 have no row and
// are assumptions scaled from H100. NIC: one 400 Gb/s ConnectX-7 (50 GB/s
// each way) per GPU, as in NVIDIA's DGX H100/H200/B200 and GB200 NVL72
// compute-tray reference designs (assumption for cloud instances, which
// match it on the main ones: 3.2 Tb/s per 8 GPUs).
var builtinGPUs = []GPU{
	// H100 SXM: 80 GB, 3.35 TB/s, 989 TF BF16, 1,979 TF FP8, 900 GB/s, 700 W.
	// Price: $6.50, the seed's figure and the top of the $2.89–6.50 range.
	{Name: "H100", HBMBytes: 80e9, HBMBytesPerS: 3.35e12, BF16FLOPS: 989e12, FP8FLOPS: 1979e12,
		NVLinkBytesPerS: 900e9, NICBytesPerS: 50e9, TDPWatts: 700, DomainGPUs: 8, PricePerGPUHour: 6.50, ReservedPricePerGPUHour: 2.89},
	// H200 SXM: 141 GB, 4.8 TB/s. Price: $7.00, top of the $2.50–7.00 range
	// (assumption: same tier choice as H100).
	{Name: "H200", HBMBytes: 141e9, HBMBytesPerS: 4.8e12, BF16FLOPS: 989e12, FP8FLOPS: 1979e12,
		NVLinkBytesPerS: 900e9, NICBytesPerS: 50e9, TDPWatts: 700, DomainGPUs: 8, PricePerGPUHour: 7.00, ReservedPricePerGPUHour: 2.50},
	// B200: 180 GB, 7.7 TB/s, 2,250 / 4,500 TF, 1.8 TB/s, 1,000 W. FP4 dense
	// 9,000 TF (assumption: twice FP8, as NVIDIA's Blackwell datasheets give
	// 18 PF sparse FP4 per B200).
	// Price: assumption, $9.00 (no CALIBRATION.md row; ~1.4x H100).
	{Name: "B200", HBMBytes: 180e9, HBMBytesPerS: 7.7e12, BF16FLOPS: 2250e12, FP8FLOPS: 4500e12, FP4FLOPS: 9000e12,
		NVLinkBytesPerS: 1.8e12, NICBytesPerS: 50e9, TDPWatts: 1000, DomainGPUs: 8, PricePerGPUHour: 9.00, ReservedPricePerGPUHour: 4.00},
	// GB200 per GPU in an NVL72 rack: 186 GB, 8 TB/s, 2,500 / 5,000 TF,
	// 1.8 TB/s, 1,200 W. FP4 dense 10,000 TF (assumption: twice FP8).
	// Price: assumption, $10.50 (no CALIBRATION.md row).
	{Name: "GB200", HBMBytes: 186e9, HBMBytesPerS: 8e12, BF16FLOPS: 2500e12, FP8FLOPS: 5000e12, FP4FLOPS: 10000e12,
		NVLinkBytesPerS: 1.8e12, NICBytesPerS: 50e9, TDPWatts: 1200, DomainGPUs: 72, PricePerGPUHour: 10.50, ReservedPricePerGPUHour: 4.67},
}

// LLM describes a decoder-only transformer: dense, or mixture-of-experts
// when its MoE fields are set (moe.go).
type LLM struct {
	Name         string  `toml:"name"`
	Layers       int     `toml:"layers"`
	Hidden       int     `toml:"hidden"`
	Heads        int     `toml:"heads"`
	KVHeads      int     `toml:"kv_heads"`
	HeadDim      int     `toml:"head_dim"`
	Intermediate int     `toml:"intermediate"`
	Vocab        int     `toml:"vocab"`
	Params       float64 `toml:"params"` // total parameters
	// ContextTokens is the context window (prompt + output) in tokens; a
	// longer request is refused. 0 means no limit is known.
	ContextTokens int `toml:"context_tokens"`

	// Mixture-of-experts and attention-variant fields (moe.go); all zero
	// for a dense GQA model.
	MoE
}

// Built-in models: Llama 3 (arXiv 2407.21783, Table 3: layers, model
// dimension, FFN dimension, attention heads, key/value heads, vocabulary;
// the 3.1 releases' 128K context window, §3.4.2 and the model cards'
// max_position_embeddings = 131072).
var builtinLLMs = []LLM{
	{Name: "llama-3-8b", Layers: 32, Hidden: 4096, Heads: 32, KVHeads: 8, HeadDim: 128,
		Intermediate: 14336, Vocab: 128256, Params: 8.03e9, ContextTokens: 131072},
	{Name: "llama-3-70b", Layers: 80, Hidden: 8192, Heads: 64, KVHeads: 8, HeadDim: 128,
		Intermediate: 28672, Vocab: 128256, Params: 70.6e9, ContextTokens: 131072},
	{Name: "llama-3-405b", Layers: 126, Hidden: 16384, Heads: 128, KVHeads: 8, HeadDim: 128,
		Intermediate: 53248, Vocab: 128256, Params: 405.9e9, ContextTokens: 131072},
	// huggingface.co/Qwen/Qwen3-32B/blob/main/config.json: hidden_size
	// 5120, num_hidden_layers 64, num_attention_heads 64,
	// num_key_value_heads 8, head_dim 128, intermediate_size 25600,
	// vocab_size 151936, max_position_embeddings 40960, untied embeddings.
	// Model card: 32.8B parameters (the shapes give 32.76B).
	{Name: "qwen3-32b", Layers: 64, Hidden: 5120, Heads: 64, KVHeads: 8, HeadDim: 128,
		Intermediate: 25600, Vocab: 151936, Params: 32.8e9, ContextTokens: 40960},
}

// llmAliases are other names of built-in models with the same architecture:
// the Llama 3.1 and 3.3 releases are Llama 3's shapes (the built-ins
// already have 3.1's 128K context); DeepSeek-R1 (and V3.1) is DeepSeek-V3's
// architecture; Kimi-K2.5's language model is Kimi-K2's.
var llmAliases = map[string]string{
	"llama-3.1-8b":   "llama-3-8b",
	"llama-3.1-70b":  "llama-3-70b",
	"llama-3.3-70b":  "llama-3-70b",
	"llama-3.1-405b": "llama-3-405b",
	"deepseek-r1":    "deepseek-v3",
	"deepseek-v3.1":  "deepseek-v3",
	"kimi-k2.5":      "kimi-k2",
	"minimax-m2.5":   "minimax-m2",
}

// KVBytesPerToken is the KV-cache size of one token across the whole model:
// 2 (K and V) · layers · kv_heads · head_dim · bytesPerElem. CALIBRATION.md §3:
// Llama-3-8B 128 KiB, 70B 320 KiB, 405B 504 KiB in BF16.
func (m *LLM) KVBytesPerToken(bytesPerElem float64) float64 {
	if m.IsMLA() {
		return m.mlaKVBytesPerToken(bytesPerElem)
	}
	return 2 * float64(m.Layers) * float64(m.KVHeads) * float64(m.HeadDim) * bytesPerElem
}

// KVBytesPerTokenGPU is one GPU's share of a token's KV at tensor
// parallelism tp in the layers that attend the whole context (a windowed
// layer's KV is bounded per sequence: WindowKVBytesPerSeqGPU): its
// kv_heads/tp heads, but never less than one whole head (past tp =
// kv_heads each KV head is replicated, so capacity stops growing).
func (m *LLM) KVBytesPerTokenGPU(bytesPerElem float64, tp int) float64 {
	return m.kvBytesPerTokenGPUAll(bytesPerElem, tp) * (1 - m.LocalFraction())
}

// WindowKVBytesPerTokenGPU is one GPU's share of a token's KV in the
// windowed layers (0 without a window).
func (m *LLM) WindowKVBytesPerTokenGPU(bytesPerElem float64, tp int) float64 {
	return m.kvBytesPerTokenGPUAll(bytesPerElem, tp) * m.LocalFraction()
}

// WindowKVBytesPerSeqGPU is what one sequence holds at most in the
// windowed layers of one GPU: the window's tokens.
func (m *LLM) WindowKVBytesPerSeqGPU(bytesPerElem float64, tp int) float64 {
	return m.WindowKVBytesPerTokenGPU(bytesPerElem, tp) * float64(max(m.SlidingWindow, 0))
}

// kvBytesPerTokenGPUAll is a token's KV on one GPU over every layer.
func (m *LLM) kvBytesPerTokenGPUAll(bytesPerElem float64, tp int) float64 {
	if m.IsMLA() {
		// The latent KV is one vector per token and layer, replicated on
		// every GPU of the TP group (vLLM, SGLang).
		return m.mlaKVBytesPerToken(bytesPerElem)
	}
	heads := float64(m.KVHeads) / float64(tp)
	if heads < 1 {
		heads = 1
	}
	return 2 * float64(m.Layers) * heads * float64(m.HeadDim) * bytesPerElem
}

// Catalog holds the GPUs and models a scenario may name: the built-ins plus
// any the scenario adds or overrides.
type Catalog struct {
	GPUs map[string]GPU
	LLMs map[string]LLM
	// Profiles are the engine profiles, by built-in name or by the path a
	// scenario named.
	Profiles map[string]PerfProfile
}

// NewCatalog returns the built-in catalog.
func NewCatalog() *Catalog {
	c := &Catalog{GPUs: map[string]GPU{}, LLMs: map[string]LLM{}, Profiles: map[string]PerfProfile{}}
	for name, p := range builtinProfiles {
		c.Profiles[name] = p
	}
	for _, g := range builtinGPUs {
		c.GPUs[g.Name] = g
	}
	for _, m := range builtinLLMs {
		c.LLMs[m.Name] = m
	}
	for _, m := range builtinMoELLMs {
		c.LLMs[m.Name] = m
	}
	for alias, name := range llmAliases {
		m := c.LLMs[name]
		m.Name = alias
		c.LLMs[alias] = m
	}
	return c
}

// GPUNames lists the GPU names, sorted.
func (c *Catalog) GPUNames() []string { return sortedKeys(c.GPUs) }

// LLMNames lists the model names, sorted.
func (c *Catalog) LLMNames() []string { return sortedKeys(c.LLMs) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Validate checks a GPU definition, reporting under key prefix.
func (g *GPU) Validate(prefix string, ps *config.Problems) {
	if g.Name == "" {
		ps.Add(config.Key(prefix, "name"), "must not be empty")
	}
	ps.Positive(config.Key(prefix, "hbm_bytes"), g.HBMBytes)
	ps.Positive(config.Key(prefix, "hbm_bytes_per_s"), g.HBMBytesPerS)
	ps.Positive(config.Key(prefix, "bf16_flops"), g.BF16FLOPS)
	ps.Positive(config.Key(prefix, "fp8_flops"), g.FP8FLOPS)
	ps.NonNegative(config.Key(prefix, "fp4_flops"), g.FP4FLOPS)
	ps.Positive(config.Key(prefix, "nvlink_bytes_per_s"), g.NVLinkBytesPerS)
	ps.NonNegative(config.Key(prefix, "nic_bytes_per_s"), g.NICBytesPerS)
	ps.NonNegative(config.Key(prefix, "tdp_watts"), g.TDPWatts)
	ps.PositiveInt(config.Key(prefix, "domain_gpus"), g.DomainGPUs)
	ps.NonNegative(config.Key(prefix, "price_per_gpu_hour"), g.PricePerGPUHour)
	ps.NonNegative(config.Key(prefix, "reserved_price_per_gpu_hour"), g.ReservedPricePerGPUHour)
}

// Validate checks a model definition, reporting under key prefix.
func (m *LLM) Validate(prefix string, ps *config.Problems) {
	if m.Name == "" {
		ps.Add(config.Key(prefix, "name"), "must not be empty")
	}
	ps.PositiveInt(config.Key(prefix, "layers"), m.Layers)
	ps.PositiveInt(config.Key(prefix, "hidden"), m.Hidden)
	ps.PositiveInt(config.Key(prefix, "heads"), m.Heads)
	ps.PositiveInt(config.Key(prefix, "kv_heads"), m.KVHeads)
	ps.PositiveInt(config.Key(prefix, "head_dim"), m.HeadDim)
	ps.PositiveInt(config.Key(prefix, "intermediate"), m.Intermediate)
	ps.PositiveInt(config.Key(prefix, "vocab"), m.Vocab)
	ps.Positive(config.Key(prefix, "params"), m.Params)
	if m.ContextTokens < 0 {
		ps.Add(config.Key(prefix, "context_tokens"), "must be >= 0 (0: no known limit), found %d", m.ContextTokens)
	}
	if m.KVHeads > 0 && m.Heads > 0 && m.Heads%m.KVHeads != 0 {
		ps.Add(config.Key(prefix, "kv_heads"), "must divide heads (%d), found %d", m.Heads, m.KVHeads)
	}
	m.validateMoE(prefix, ps)
}
