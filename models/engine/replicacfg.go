package engine

import (
	"math"
	"strings"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/hw"
)

// Batching modes of a replica.
const (
	// BatchStatic is request-level batching: a batch is formed when the
	// replica is idle and runs until its longest request finishes; arrivals
	// wait for the whole batch (head-of-line blocking).
	BatchStatic = "static"
	// BatchContinuous is iteration-level batching without chunking: waiting
	// requests join at any step, their whole prompts prefilled in a
	// prefill-only step that pauses decoding (vLLM V0 default).
	BatchContinuous = "continuous"
	// BatchChunked is continuous batching with chunked prefill: each step
	// carries every decoding sequence plus prefill chunks up to the token
	// budget (vLLM V1 default).
	BatchChunked = "chunked"
)

// KV allocators.
const (
	AllocPaged      = "paged"
	AllocContiguous = "contiguous"
)

// KV admission policies of continuous and chunked batching.
const (
	// KVAdmitPrompt admits a request when its prompt's blocks fit; a full
	// cache later preempts the newest sequence (vLLM).
	KVAdmitPrompt = "prompt"
	// KVAdmitFull admits a request only when its whole length (prompt and
	// output) fits beside what the running sequences will still take, so
	// nothing is preempted (TensorRT-LLM's GUARANTEED_NO_EVICT).
	KVAdmitFull = "full"
)

// BatchingModes lists the valid batching modes.
var BatchingModes = []string{BatchChunked, BatchContinuous, BatchStatic}

// ReplicaConfig configures one serving replica (a vLLM-like engine on a TP
// group). Defaults follow vLLM's engine arguments where one exists.
type ReplicaConfig struct {
	// Batching is the batching mode: "chunked" (default), "continuous" or
	// "static".
	Batching string `toml:"batching"`
	// MaxBatchedTokens is the token budget of one step. Default 8192
	// (vLLM max_num_batched_tokens for chunked prefill on online serving).
	MaxBatchedTokens int `toml:"max_batched_tokens"`
	// MaxSeqs caps the running sequences. Default 256 (vLLM max_num_seqs).
	MaxSeqs int `toml:"max_seqs"`
	// BlockTokens is the KV block size in tokens. Default 16 (vLLM block_size).
	BlockTokens int `toml:"block_tokens"`
	// GPUMemoryUtilization is the fraction of HBM the engine may use for
	// weights, activations and KV. Default 0.9 (vLLM gpu_memory_utilization).
	GPUMemoryUtilization float64 `toml:"gpu_memory_utilization"`
	// ActivationBytesPerGPU is the activation workspace reserved per GPU in
	// bytes; 0 derives it: max_batched_tokens × (hidden + intermediate/tp) ×
	// 2 B × 4 live buffers + 1 GiB for CUDA graphs and the allocator
	// (assumption, the shape of vLLM's profiling run).
	ActivationBytesPerGPU float64 `toml:"activation_bytes_per_gpu"`
	// WatermarkFraction of KV blocks is kept free when admitting requests.
	// Default 0.01 (vLLM watermark).
	WatermarkFraction float64 `toml:"watermark_fraction"`
	// PrefixCaching enables the prefix cache. Default true (vLLM V1).
	PrefixCaching bool `toml:"prefix_caching"`
	// KVBlocks overrides the derived number of KV blocks (0 = derive from
	// HBM). A huge value models an unbounded cache.
	KVBlocks int64 `toml:"kv_blocks"`
	// Allocator is how KV memory is handed out: "paged" (default: blocks
	// of BlockTokens anywhere, vLLM's PagedAttention) or "contiguous" (one
	// first-fit region per request for its whole length, as before paging:
	// free space fragments, and a long request that finds no region large
	// enough crashes the worker out of memory). The prefix cache needs the
	// paged allocator.
	Allocator string `toml:"allocator"`
	// RestartS and ColdStartS: after an out-of-memory crash the worker's
	// supervisor restarts it after RestartS and it reloads its weights for
	// ColdStartS. Defaults 30 (assumption) and 180 (CALIBRATION.md §4).
	RestartS   float64 `toml:"restart_s"`
	ColdStartS float64 `toml:"cold_start_s"`
	// Weights precision: "bf16" (default), "fp8", "fp4" (NVFP4/MXFP4) or
	// "int4" (weight-only); KV precision: "bf16" (default) or "fp8".
	Weights string `toml:"weights"`
	KVDType string `toml:"kv_dtype"`
	// Compute is the GEMMs' precision: "bf16", "fp8" or "fp4" (Blackwell),
	// never narrower than the weights (W4A16 is weights = "fp4" or "int4"
	// with compute = "bf16"; W4A8 with "fp8"). Default "": the weights' own
	// where the GPU's tensor cores have it, else bf16 (4-bit weights on
	// Hopper run as W4A16, as vLLM and SGLang run gpt-oss's MXFP4 experts).
	Compute string `toml:"compute"`
	// KVAdmission is how continuous and chunked batching admit requests
	// into the KV cache: "prompt" (default, vLLM: the prompt's blocks; a full
	// cache preempts) or "full" (TensorRT-LLM's GUARANTEED_NO_EVICT: the
	// whole length is reserved; never preempts). Static batching and the
	// contiguous allocator always reserve the whole length.
	KVAdmission string `toml:"kv_admission"`
	// Perf names the engine profile of the step model ([cluster.replica.perf]
	// profile = "default", a built-in, or the path of a profile file).
	Perf hw.PerfSpec `toml:"perf"`
	// MoE is the routing of a mixture-of-experts model's experts
	// ([cluster.replica.moe], layout.go); Spec is speculative decoding
	// ([cluster.replica.speculative], spec.go; off by default).
	MoE  hw.MoEConfig  `toml:"moe"`
	Spec hw.SpecConfig `toml:"speculative"`
}

// DefaultReplicaConfig returns the documented defaults.
func DefaultReplicaConfig() ReplicaConfig {
	return ReplicaConfig{
		Batching:             BatchChunked,
		MaxBatchedTokens:     8192,
		MaxSeqs:              256,
		BlockTokens:          16,
		GPUMemoryUtilization: 0.9,
		WatermarkFraction:    0.01,
		PrefixCaching:        true,
		Weights:              string(hw.BF16),
		KVDType:              string(hw.BF16),
		Allocator:            AllocPaged,
		RestartS:             30,
		ColdStartS:           180,
		KVAdmission:          KVAdmitPrompt,
		Perf:                 hw.PerfSpec{Profile: hw.DefaultProfile},
		Spec:                 hw.DefaultSpecConfig(),
	}
}

// Validate reports problems under key prefix.
func (c *ReplicaConfig) Validate(prefix string, ps *config.Problems) {
	ps.OneOf(config.Key(prefix, "batching"), c.Batching, BatchingModes)
	ps.PositiveInt(config.Key(prefix, "max_batched_tokens"), c.MaxBatchedTokens)
	ps.PositiveInt(config.Key(prefix, "max_seqs"), c.MaxSeqs)
	ps.PositiveInt(config.Key(prefix, "block_tokens"), c.BlockTokens)
	ps.Positive(config.Key(prefix, "gpu_memory_utilization"), c.GPUMemoryUtilization)
	if c.GPUMemoryUtilization > 1 {
		ps.Add(config.Key(prefix, "gpu_memory_utilization"), "must be at most 1, found %v", c.GPUMemoryUtilization)
	}
	ps.NonNegative(config.Key(prefix, "activation_bytes_per_gpu"), c.ActivationBytesPerGPU)
	ps.Fraction(config.Key(prefix, "watermark_fraction"), c.WatermarkFraction)
	if c.KVBlocks < 0 {
		ps.Add(config.Key(prefix, "kv_blocks"), "must be >= 0 (0 derives it from HBM), found %d", c.KVBlocks)
	}
	ps.OneOf(config.Key(prefix, "allocator"), c.Allocator, []string{AllocContiguous, AllocPaged})
	if c.Allocator == AllocContiguous && c.PrefixCaching {
		ps.Add(config.Key(prefix, "prefix_caching"), "the prefix cache needs the paged allocator: set prefix_caching = false with allocator = \"contiguous\"")
	}
	ps.NonNegative(config.Key(prefix, "restart_s"), c.RestartS)
	ps.NonNegative(config.Key(prefix, "cold_start_s"), c.ColdStartS)
	ps.OneOf(config.Key(prefix, "weights"), c.Weights, hw.WeightPrecisions)
	ps.OneOf(config.Key(prefix, "kv_dtype"), c.KVDType, hw.KVPrecisions)
	if c.Compute != "" {
		ps.OneOf(config.Key(prefix, "compute"), c.Compute, hw.ComputePrecisions)
	}
	ps.OneOf(config.Key(prefix, "kv_admission"), c.KVAdmission, []string{KVAdmitFull, KVAdmitPrompt})
	if c.Perf.Profile == "" {
		ps.Add(config.Key(prefix, "perf", "profile"), "must name a built-in profile (%s) or a profile file", strings.Join(hw.BuiltinProfileNames(), ", "))
	}
	c.MoE.Validate(config.Key(prefix, "moe"), ps)
	c.Spec.Validate(config.Key(prefix, "speculative"), ps)
}

// MemoryPlan is how one GPU of a replica's TP group spends its HBM.
type MemoryPlan struct {
	HBMBytes        float64 // capacity per GPU
	BudgetBytes     float64 // capacity × gpu_memory_utilization
	WeightBytes     float64 // model weights per GPU
	ActivationBytes float64 // activation workspace per GPU
	RuntimeBytes    float64 // the engine's runtime reserve plus the sampler's logits, per GPU
	KVBytes         float64 // left for KV per GPU
	KVBytesPerBlock float64 // one block per GPU
	KVBlocks        int64   // blocks of the replica (each spans the TP group)
}

// PlanMemory derives the KV budget per GPU of the TP group: budget = HBM ×
// utilisation; KV = budget − weights − activations − runtime, where runtime
// is the profile's reserve (CUDA graphs, context, communication buffers)
// plus the sampler's fp32 logits for max_seqs sequences over the vocabulary.
// A GPU holds kv_heads/tp KV heads, at least one (KV heads are replicated
// past tp = kv_heads). It reports a problem (under prefix) if the weights and
// workspace do not fit.
func PlanMemory(gpu hw.GPU, llm hw.LLM, tp int, c ReplicaConfig, pp hw.PerfProfile, prefix string, ps *config.Problems) MemoryPlan {
	return PlanMemoryLayout(gpu, llm, hw.Layout{TP: tp}, c, pp, prefix, ps)
}

// PlanMemoryLayout is PlanMemory for a replica of layout l: a GPU holds
// its share of the weights (WeightBytesPerGPU), each of the dp ranks its
// own sequences' KV (the replica's blocks are dp times a GPU's; the ranks
// are taken to be balanced), and with speculation every running sequence
// holds k more tokens of KV for the tokens being verified. A GPU of one of
// dp attention-data-parallel ranks works on that rank's share of a step:
// its activation workspace is sized for max_batched_tokens/dp tokens and
// its sampler's logits for max_seqs/dp sequences (each rank is an engine of
// its own, as vLLM's and SGLang's data-parallel attention run them).
func PlanMemoryLayout(gpu hw.GPU, llm hw.LLM, l hw.Layout, c ReplicaConfig, pp hw.PerfProfile, prefix string, ps *config.Problems) MemoryPlan {
	l = l.Norm()
	tp := l.TP
	t := float64(tp)
	p := MemoryPlan{HBMBytes: gpu.HBMBytes}
	p.BudgetBytes = gpu.HBMBytes * c.GPUMemoryUtilization
	p.WeightBytes = hw.WeightBytesPerGPU(llm, l, hw.Precision(c.Weights))
	dp := float64(l.DP)
	rankTokens := math.Ceil(float64(c.MaxBatchedTokens) / dp)
	rankSeqs := math.Ceil(float64(c.MaxSeqs) / dp)
	p.ActivationBytes = c.ActivationBytesPerGPU
	if p.ActivationBytes == 0 {
		p.ActivationBytes = rankTokens*(float64(llm.Hidden)+float64(llm.Intermediate)/t)*2*4 + (1 << 30)
	}
	p.RuntimeBytes = pp.RuntimeReserveBytes + rankSeqs*float64(llm.Vocab)*4/t
	p.KVBytes = p.BudgetBytes - p.WeightBytes - p.ActivationBytes - p.RuntimeBytes
	kvTok := llm.KVBytesPerTokenGPU(hw.Precision(c.KVDType).Bytes(), tp) / float64(l.PP) // a stage holds its layers' KV
	// Windowed layers hold at most their window per running sequence.
	p.KVBytes -= rankSeqs * llm.WindowKVBytesPerSeqGPU(hw.Precision(c.KVDType).Bytes(), tp) / float64(l.PP)
	if k := c.Spec.SpecExtraKVTokens(); k > 0 {
		p.KVBytes -= float64(c.MaxSeqs) / float64(l.DP) * float64(k) * kvTok
	}
	p.KVBytesPerBlock = kvTok * float64(c.BlockTokens)
	if c.KVBlocks > 0 {
		p.KVBlocks = c.KVBlocks
		return p
	}
	if p.KVBytes <= 0 {
		ps.Add(prefix, "%s (%.0f GB weights per GPU at %s) does not fit in %s's %.0f GB × %.2f utilisation with %.1f GB of activations and %.1f GB of runtime reserve; raise tensor parallelism or use a larger GPU",
			llm.Name, p.WeightBytes/1e9, l, gpu.Name, gpu.HBMBytes/1e9, c.GPUMemoryUtilization, p.ActivationBytes/1e9, p.RuntimeBytes/1e9)
		return p
	}
	p.KVBlocks = int64(p.KVBytes/p.KVBytesPerBlock) * int64(l.DP)
	return p
}
