package hw

import (
	"fmt"
	"math"
)

// Precision is how weights or KV are stored, or what the tensor cores
// compute in.
type Precision string

// Precisions. FP4 compute (NVFP4/MXFP4) needs Blackwell tensor cores (a GPU
// with fp4_flops > 0); FP4 and INT4 weights on other GPUs run as 4-bit
// weights with 16-bit compute (W4A16: Marlin-style kernels that
// dequantise in registers), as vLLM and SGLang run MXFP4 gpt-oss and int4
// checkpoints on Hopper.
const (
	BF16 Precision = "bf16"
	FP8  Precision = "fp8"
	FP4  Precision = "fp4"
	INT4 Precision = "int4" // weight-only (AWQ/GPTQ-style), never compute
)

// WeightPrecisions, ComputePrecisions and KVPrecisions list what each may
// be.
var (
	WeightPrecisions  = []string{string(BF16), string(FP4), string(FP8), string(INT4)}
	ComputePrecisions = []string{string(BF16), string(FP4), string(FP8)}
	KVPrecisions      = []string{string(BF16), string(FP8)}
)

// Bytes is the stored size of one element, scales included: FP4 is NVFP4
// (two values a byte and one FP8 scale per 16 values: 0.5 + 1/16 B; MXFP4's
// E8M0 scale per 32 would be 0.53 B); INT4 has a 16-bit scale and zero per
// group of 128 (0.5 + 4/128 B, the common AWQ/GPTQ group size).
func (p Precision) Bytes() float64 {
	switch p {
	case FP8:
		return 1
	case FP4:
		return 0.5 + 1.0/16
	case INT4:
		return 0.5 + 4.0/128
	}
	return 2
}

// Bits is the precision's nominal width (4, 8 or 16).
func (p Precision) Bits() int {
	switch p {
	case FP8:
		return 8
	case FP4, INT4:
		return 4
	}
	return 16
}

// DefaultCompute is the GEMM precision of weights stored at w on gpu: the
// weights' own where the tensor cores have it, else 16-bit (W4A16; INT4
// is always dequantised to BF16).
func DefaultCompute(gpu GPU, w Precision) Precision {
	switch {
	case w == FP8 && gpu.FP8FLOPS > 0, w == FP4 && gpu.FP4FLOPS > 0:
		return w
	}
	return BF16
}

// PeakFLOPS is gpu's dense tensor peak at precision p.
func (p Precision) PeakFLOPS(gpu GPU) float64 {
	switch p {
	case FP8:
		return gpu.FP8FLOPS
	case FP4:
		return gpu.FP4FLOPS
	}
	return gpu.BF16FLOPS
}

// StepShape is what one engine step does: the prompt tokens it prefills (in
// PrefillSeqs sequences, attending PrefillPairs query–key pairs in all) and
// the sequences that decode one token each, reading DecodeCtx tokens of KV
// in all.
type StepShape struct {
	PrefillTokens float64
	PrefillPairs  float64
	PrefillSeqs   float64
	DecodeSeqs    float64
	DecodeCtx     float64
	// DecodeTau, when > 0, is the decoding sequences' expected tokens per
	// speculative verify step, summed (per-request acceptance, spec.go);
	// 0: the engine's constant.
	DecodeTau float64
}

// Tokens is the number of tokens the step's GEMMs process.
func (s StepShape) Tokens() float64 { return s.PrefillTokens + s.DecodeSeqs }

// StepModel gives the duration of one engine step of a replica, per GPU of
// its tensor-parallel group, with the structure of a real engine step: the
// phases run one after another, not overlapped as a single roofline would
// have them.
//
//	step      = gemm + attention + (1 − tp_overlap)·allreduce + overhead
//	gemm      = smax(weights / (hbm·weight_bw_eff),
//	                 2·params/tp · (tokens + gemm_half_tokens) / (peak_c · gemm_eff_c))
//	attention = 4·layers·heads·head_dim/tp · (pairs + attention_half_context·prefill_tokens)
//	                / (peak_kv · attention_eff)
//	          + kv_bytes_per_token/tp · decode_ctx / (hbm · kv_bw_eff)
//	allreduce = 2·layers · (latency + tokens·hidden·2 B · fabric(tp) / (nvlink/2 · nvlink_eff))
//	overhead  = step_overhead + seq_overhead · sequences
//	          + layers · layer_overhead         (steps with GEMM work)
//
// fabric(tp) is 1 on an NVSwitch domain (NVLS) and GPU.AllReduceFactor
// on a mesh (AMD Infinity Fabric) or over PCIe.
//
// smax(a, b) = (a^p + b^p)^(1/p) with p = overlap_exponent, a smooth
// maximum: kernels near the compute/bandwidth crossover overlap their
// weight reads and their math imperfectly, so a step there takes longer
// than either alone (p = 0 in a profile means the hard max, perfect
// overlap). layer_overhead is the floor every layer's kernels cost however
// small the step (launch, synchronisation, the minimum duration of a
// kernel: about ten per layer, a few microseconds each): a decode step of a
// small batch pays it in full, which is why decode steps of deep models
// take milliseconds more than their weight reads.
//
// The GEMM efficiency saturates with the step's token count
// (eff(T) = gemm_eff·T/(T+gemm_half_tokens): small GEMMs do not fill the
// tensor cores), and prefill attention's with the context each query attends
// (eff(c) = attention_eff·c/(c+attention_half_context)); both are written in
// the linear form above. peak_w is the dense peak at the weights' precision,
// peak_kv at the KV cache's (attention runs in FP8 when the KV is FP8).
// Every term is linear in the step's shape, so a decode-only run of k steps
// has a closed form (DecodeRun), O(1) whatever k.
//
// NewDeployedStepModel extends it beyond TP (layout.go): mixture-of-experts
// GEMMs over the touched experts (their count is a function of the step's
// tokens, fixed within a decode run), attention data parallelism, expert
// parallelism's all-to-all, pipeline stages; and speculative decoding
// (spec.go).
type StepModel struct {
	gemmFLOPsPerToken float64 // 2·params/tp
	attnFLOPsPerPair  float64 // 4·layers·heads·head_dim/tp
	weightBytes       float64 // per GPU
	kvBytesPerToken   float64 // per GPU, KV heads replicated past kv_heads; full-attention layers
	kvWinPerToken     float64 // per GPU, the windowed layers' share of a token (0 without)
	window            float64 // their window, tokens
	localFrac         float64 // their share of the layers
	gemmFLOPS         float64 // peak_w · gemm efficiency
	gemmHalf          float64
	weightBW          float64
	attnFLOPS         float64
	attnHalf          float64
	kvBW              float64
	commFixedS        float64 // per step, after overlap
	commPerTokenS     float64 // after overlap
	overheadS         float64
	seqOverheadS      float64
	layerFixedS       float64 // layers · layer_overhead, per step with GEMM work
	overlapP          float64 // smooth-max exponent; 0: max
	peakFLOPS         float64 // dense peak FLOP/s at the GEMMs' compute precision
	// WeightBytesPerGPU and KVBytesPerTokenGPU are the per-GPU weight and
	// KV-per-token sizes the model (and the memory plan) use.
	WeightBytesPerGPU  float64
	KVBytesPerTokenGPU float64
	// ContextTokens is the model's context window (0: no known limit).
	ContextTokens int
	// Compute is the GEMMs' precision.
	Compute Precision
	// FrontEndS and FrontEndSPerToken are the profile's request handling
	// before the engine (HTTP, tokenisation: frontend_s,
	// frontend_s_per_token); StreamS the time from a token's step to the
	// client (stream_s). The fleet applies them around the replicas.
	FrontEndS, FrontEndSPerToken, StreamS float64
	// FirstTokenLagSteps is the profile's first_token_lag_steps.
	FirstTokenLagSteps float64

	// moe, when set, replaces the GEMM phase by the mixture-of-experts one
	// (layout.go); a2a*S are the expert-parallel all-to-all's share of the
	// comm terms; spec, when set, makes decode speculative (spec.go).
	moe                     *moeStep
	a2aFixedS, a2aPerTokenS float64
	spec                    *specStep
	pipe                    *pipeStep // pipeline stages (layout.go)

	decodeCache []decodeBase // decodeRun's, by sequence count
}

// NewStepModel builds the step model for llm on gpu with tensor parallelism
// tp, weights and KV at the given precisions, under engine profile pp. It
// refuses physically impossible layouts (CheckLayout).
func NewStepModel(gpu GPU, llm LLM, tp int, weights, kv Precision, pp PerfProfile) (*StepModel, error) {
	return newStepModel(gpu, llm, tp, weights, "", kv, pp)
}

// newStepModel is NewStepModel with the GEMMs' compute precision ("":
// DefaultCompute).
func newStepModel(gpu GPU, llm LLM, tp int, weights, compute, kv Precision, pp PerfProfile) (*StepModel, error) {
	if err := CheckLayout(gpu, llm, tp, weights, kv); err != nil {
		return nil, err
	}
	if compute == "" {
		compute = DefaultCompute(gpu, weights)
	}
	if err := CheckCompute(gpu, weights, compute); err != nil {
		return nil, err
	}
	t := float64(tp)
	peakW := compute.PeakFLOPS(gpu)
	peakKV := kv.PeakFLOPS(gpu)
	if peakKV <= 0 {
		// An FP8 KV cache on a GPU without FP8 tensor cores (A100): the
		// attention kernels dequantise it and run in BF16, as vLLM's do.
		peakKV = gpu.BF16FLOPS
	}
	m := &StepModel{
		gemmFLOPsPerToken:  2 * llm.Params / t,
		attnFLOPsPerPair:   4 * float64(llm.Layers) * float64(llm.Heads*llm.HeadDim) / t,
		weightBytes:        llm.Params * weights.Bytes() / t,
		kvBytesPerToken:    llm.KVBytesPerTokenGPU(kv.Bytes(), tp),
		kvWinPerToken:      llm.WindowKVBytesPerTokenGPU(kv.Bytes(), tp),
		window:             float64(llm.SlidingWindow),
		localFrac:          llm.LocalFraction(),
		gemmFLOPS:          peakW * pp.GEMMEfficiency(compute),
		gemmHalf:           pp.GEMMHalfTokens,
		weightBW:           gpu.HBMBytesPerS * pp.WeightBandwidthEfficiency,
		attnFLOPS:          peakKV * pp.AttentionEfficiency,
		attnHalf:           pp.AttentionHalfContext,
		kvBW:               gpu.HBMBytesPerS * pp.KVBandwidthEfficiency,
		overheadS:          pp.StepOverheadS,
		seqOverheadS:       pp.SeqOverheadS,
		layerFixedS:        float64(llm.Layers) * pp.LayerOverheadS,
		overlapP:           pp.OverlapExponent,
		peakFLOPS:          peakW,
		Compute:            compute,
		FrontEndS:          pp.FrontEndS,
		FrontEndSPerToken:  pp.FrontEndSPerToken,
		StreamS:            pp.StreamS,
		FirstTokenLagSteps: pp.FirstTokenLagSteps,
	}
	if tp > 1 {
		nAR := 2 * float64(llm.Layers)
		oneDir := gpu.NVLinkBytesPerS / 2 * pp.NVLinkEfficiency
		exposed := 1 - pp.TPOverlap
		m.commFixedS = exposed * nAR * pp.AllReduceLatencyS
		// NVLink SHARP: on an NVSwitch domain (every GPU of the catalog's)
		// NCCL's NVLS all-reduce sends each GPU's partial sums to the switch
		// once and receives the reduction once, so a token's activations
		// cross a GPU's links once each way, whatever tp (a ring would move
		// 2(tp−1)/tp of them, twice the time at tp 8).
		m.commPerTokenS = exposed * nAR * float64(llm.Hidden) * 2 / oneDir
		if gpu.Fabric != "" && gpu.Fabric != FabricNVSwitch {
			// No in-switch reduction: a ring over PCIe, or RCCL's direct
			// all-reduce over an Infinity Fabric mesh (GPU.AllReduceFactor).
			m.commPerTokenS *= gpu.AllReduceFactor(tp)
		}
	}
	m.WeightBytesPerGPU = m.weightBytes
	m.KVBytesPerTokenGPU = m.kvBytesPerToken
	m.ContextTokens = llm.ContextTokens
	return m, nil
}

// CheckLayout refuses a configuration no engine can run (CheckTP, then
// CheckPrecision).
func CheckLayout(gpu GPU, llm LLM, tp int, weights, kv Precision) error {
	if err := CheckTP(llm, tp); err != nil {
		return err
	}
	return CheckPrecision(gpu, weights, kv)
}

// CheckTP refuses a tensor parallelism no engine can shard llm over: it
// must divide the attention heads, and past the KV-head count be a multiple
// of it (each KV head is then replicated tp/kv_heads times, as vLLM and
// TensorRT-LLM do); below it, divide it.
func CheckTP(llm LLM, tp int) error {
	if tp < 1 {
		return fmt.Errorf("tensor parallelism %d < 1", tp)
	}
	if llm.Heads > 0 && llm.Heads%tp != 0 {
		return fmt.Errorf("TP=%d does not divide %s's %d attention heads", tp, llm.Name, llm.Heads)
	}
	if llm.KVHeads > 0 && tp > llm.KVHeads && tp%llm.KVHeads != 0 {
		return fmt.Errorf("TP=%d is above %s's %d KV heads but not a multiple of them (each KV head must be replicated a whole number of times)", tp, llm.Name, llm.KVHeads)
	}
	if llm.KVHeads > 0 && tp < llm.KVHeads && llm.KVHeads%tp != 0 {
		return fmt.Errorf("TP=%d does not divide %s's %d KV heads", tp, llm.Name, llm.KVHeads)
	}
	return nil
}

// CheckPrecision refuses a KV cache of 4 bits. (FP4 weights on a GPU
// without FP4 tensor cores run as W4A16: DefaultCompute.)
func CheckPrecision(gpu GPU, weights, kv Precision) error {
	if kv == FP4 || kv == INT4 {
		return fmt.Errorf("a %s KV cache is not supported; use bf16 or fp8", kv)
	}
	return nil
}

// CheckCompute refuses a GEMM precision the GPU lacks, one narrower than
// the weights (an engine does not requantise stored weights down), and
// INT4 compute.
func CheckCompute(gpu GPU, weights, compute Precision) error {
	switch {
	case compute == INT4:
		return fmt.Errorf("int4 is a weight format; compute in bf16, fp8 or fp4")
	case compute == FP4 && gpu.FP4FLOPS <= 0:
		return fmt.Errorf("fp4 compute needs FP4 tensor cores (Blackwell); %s has none (fp4_flops = 0): 4-bit weights run with bf16 compute there", gpu.Name)
	case compute == FP8 && gpu.FP8FLOPS <= 0:
		return fmt.Errorf("fp8 compute needs FP8 tensor cores; %s has none (fp8_flops = 0)", gpu.Name)
	case compute.Bits() < weights.Bits():
		return fmt.Errorf("compute %s is narrower than the %s weights", compute, weights)
	}
	return nil
}

// Step returns the duration in seconds of one step of shape s.
func (m *StepModel) Step(s StepShape) float64 {
	if m.spec != nil && s.DecodeSeqs > 0 {
		return m.specStep(s)
	}
	if m.pipe == nil && m.moe == nil {
		return m.denseStep(&s) // (the common case, without the calls)
	}
	return m.plainStep(s)
}

// denseStep is stageStep of a model without mixture-of-experts GEMMs, the
// same operations in the same order (so the same value), written for the
// per-step path: no shape copies, gemm inlined, the builtin max (math.Max
// is an assembly call; both give +0 over −0 and NaN over anything).
func (m *StepModel) denseStep(s *StepShape) float64 {
	return m.denseFixed(s) + m.kvRead(s.DecodeCtx, s.DecodeSeqs)/m.kvBW
}

// kvRead is the KV bytes one GPU reads for n decoding sequences whose
// contexts sum to ctx: every token in the full-attention layers, at most
// the window per sequence in the windowed ones.
func (m *StepModel) kvRead(ctx, n float64) float64 {
	b := m.kvBytesPerToken * ctx
	if m.kvWinPerToken > 0 {
		b += m.kvWinPerToken * min(ctx, n*m.window)
	}
	return b
}

// decodeAttended is the context tokens n decoding sequences of total
// context ctx attend, as a share of the layers (windows bound theirs).
func (m *StepModel) decodeAttended(ctx, n float64) float64 {
	if m.localFrac <= 0 {
		return ctx
	}
	return (1-m.localFrac)*ctx + m.localFrac*min(ctx, n*m.window)
}

// pairsAttended is the query–key pairs prefill attention computes for
// pairs pairs over tokens prompt tokens: all of them in the full-attention
// layers, at most the window per token in the windowed ones (as a share of
// the layers).
func (m *StepModel) pairsAttended(pairs, tokens float64) float64 {
	if m.localFrac <= 0 {
		return pairs
	}
	return (1-m.localFrac)*pairs + m.localFrac*min(pairs, tokens*m.window)
}

// denseFixed is denseStep but its last term, the decoders' KV read: all
// that does not depend on DecodeCtx.
func (m *StepModel) denseFixed(s *StepShape) float64 {
	tokens := s.PrefillTokens + s.DecodeSeqs
	d := m.overheadS + m.seqOverheadS*(s.PrefillSeqs+s.DecodeSeqs)
	if tokens > 0 {
		d += m.smax(m.weightBytes/m.weightBW, m.gemmFLOPsPerToken*(tokens+m.gemmHalf)/m.gemmFLOPS) + m.layerFixedS + m.commFixedS + m.commPerTokenS*tokens
	}
	d += m.attnFLOPsPerPair * (m.pairsAttended(s.PrefillPairs, s.PrefillTokens) + m.attnHalf*s.PrefillTokens) / m.attnFLOPS
	return d
}

// decodeBase is what a dense decode run's closed form (Decode) takes from
// its sequence count n alone: a = a0 + kv_bytes·ctx/kv_bw, fa = fa0 +
// attn·(ctx + n), and b and fb whole.
type decodeBase struct {
	a0, b, fa0, fb float64
	set            bool
}

// maxDecodeCache bounds decodeRun's cache (sequence counts beyond it are
// computed each time).
const maxDecodeCache = 1 << 14

// decodeRun is Decode(n, ctx0), for a dense model (no speculation,
// pipeline stages or mixture of experts) from a cache of decodeBase by n:
// the same operations on the same values, so the same run, with only the
// context's terms computed per run. The cache belongs to m, so m must not
// be shared between goroutines (a fleet's replicas share it on its one
// engine).
func (m *StepModel) DecodeCached(n int, ctx0 float64) DecodeRun {
	if m.spec != nil || m.pipe != nil || m.moe != nil || n < 0 || n >= maxDecodeCache {
		return m.Decode(n, ctx0)
	}
	if n >= len(m.decodeCache) {
		m.decodeCache = append(m.decodeCache, make([]decodeBase, n+1-len(m.decodeCache))...)
	}
	e := &m.decodeCache[n]
	nf := float64(n)
	if !e.set {
		*e = decodeBase{a0: m.denseFixed(&StepShape{DecodeSeqs: nf}), b: m.kvBytesPerToken * nf / m.kvBW,
			fa0: m.gemmFLOPsPerToken * nf, fb: m.attnFLOPsPerPair * nf, set: true}
	}
	return DecodeRun{a: e.a0 + m.kvRead(ctx0, nf)/m.kvBW, b: e.b, fa: e.fa0 + m.attnFLOPsPerPair*(m.decodeAttended(ctx0, nf)+nf), fb: e.fb}
}

// plainStep is Step without speculation.
func (m *StepModel) plainStep(s StepShape) float64 {
	if m.pipe != nil {
		return m.pipeStepTime(s)
	}
	return m.stageStep(s)
}

// stageStep is a step of the TP group without pipeline stages.
func (m *StepModel) stageStep(s StepShape) float64 {
	tokens := s.Tokens()
	d := m.overheadS + m.seqOverheadS*(s.PrefillSeqs+s.DecodeSeqs)
	if tokens > 0 {
		d += m.gemm(tokens) + m.layerFixedS + m.commFixedS + m.commPerTokenS*tokens
	}
	d += m.attnFLOPsPerPair * (m.pairsAttended(s.PrefillPairs, s.PrefillTokens) + m.attnHalf*s.PrefillTokens) / m.attnFLOPS
	d += m.kvRead(s.DecodeCtx, s.DecodeSeqs) / m.kvBW
	return d
}

// gemm is the GEMM phase of a step of tokens tokens: the weights are
// streamed once, and the FLOPs run at an efficiency that grows with tokens.
func (m *StepModel) gemm(tokens float64) float64 {
	if m.moe != nil {
		return m.gemmMoE(tokens)
	}
	return m.smax(m.weightBytes/m.weightBW, m.gemmFLOPsPerToken*(tokens+m.gemmHalf)/m.gemmFLOPS)
}

// smax is the smooth maximum (a^p + b^p)^(1/p) of two non-negative times
// (p = overlap_exponent; the hard max when p is 0). It is never less than
// max(a, b), and at most 2^(1/p) times it.
func (m *StepModel) smax(a, b float64) float64 {
	hi, lo := max(a, b), min(a, b)
	if m.overlapP <= 0 || hi <= 0 {
		return hi
	}
	return hi * math.Pow(1+math.Pow(lo/hi, m.overlapP), 1/m.overlapP)
}

// FLOPs is the model FLOPs one GPU of the group does in a step of shape s
// (what MFU counts: a decoding sequence attends its context and itself).
func (m *StepModel) FLOPs(s StepShape) float64 {
	if m.pipe != nil {
		return (m.gemmFLOPsPerToken*s.Tokens() + m.attnFLOPsPerPair*(m.pairsAttended(s.PrefillPairs, s.PrefillTokens)+m.decodeAttended(s.DecodeCtx, s.DecodeSeqs)+s.DecodeSeqs)) / m.pipe.stages
	}
	return m.gemmFLOPsPerToken*s.Tokens() + m.attnFLOPsPerPair*(m.pairsAttended(s.PrefillPairs, s.PrefillTokens)+m.decodeAttended(s.DecodeCtx, s.DecodeSeqs)+s.DecodeSeqs)
}

// PeakFLOPS is one GPU's dense peak FLOP/s at the weights' precision.
func (m *StepModel) PeakFLOPS() float64 { return m.peakFLOPS }

// RooflineBound is the least time any engine could take for a step of
// shape s on this GPU: its FLOPs at the GPU's highest dense peak, or its
// bytes (weights once, KV read) at peak bandwidth, whichever is larger.
// Step never returns less (a physics check the tests make).
func (m *StepModel) RooflineBound(gpu GPU, s StepShape) float64 {
	if m.pipe != nil {
		return m.pipeRoofline(gpu, s)
	}
	peak := max(gpu.BF16FLOPS, gpu.FP8FLOPS, gpu.FP4FLOPS)
	bytes := m.kvRead(s.DecodeCtx, s.DecodeSeqs)
	if s.Tokens() > 0 {
		bytes += m.minWeightsRead(s.Tokens())
	}
	return max(m.FLOPs(s)/peak, bytes/gpu.HBMBytesPerS)
}

// DecodeRun describes k consecutive decode-only steps of n sequences whose
// contexts sum to ctx0 tokens at the first step; each step adds n tokens to
// the sum. Step j lasts a + b·j, so the run has a closed form and costs O(1)
// to simulate whatever its length (DESIGN.md, fixed decision 5).
type DecodeRun struct {
	a, b   float64 // duration of step j: a + b·j
	fa, fb float64 // FLOPs of step j: fa + fb·j
}

// Decode returns the run of n sequences starting from total context ctx0.
func (m *StepModel) Decode(n int, ctx0 float64) DecodeRun {
	if m.spec != nil {
		return m.specDecode(n, ctx0, 0)
	}
	if m.pipe != nil {
		return m.pipeDecode(n, ctx0)
	}
	nf := float64(n)
	s := StepShape{DecodeSeqs: nf, DecodeCtx: ctx0}
	var a float64
	if m.moe == nil {
		a = m.denseStep(&s)
	} else {
		a = m.stageStep(s)
	}
	return DecodeRun{
		a:  a,
		b:  m.kvBytesPerToken * nf / m.kvBW,
		fa: m.FLOPs(s),
		fb: m.attnFLOPsPerPair * nf,
	}
}

// LinearRun is a run whose step j lasts a + b·j seconds and does no FLOPs
// (for checks of the code that reads runs, with coefficients of their own).
func LinearRun(a, b float64) DecodeRun { return DecodeRun{a: a, b: b} }

// ConstantStepModel is a step model whose every step, of any shape, lasts
// stepS seconds (for checks against queueing theory).
func ConstantStepModel(stepS float64) *StepModel {
	return &StepModel{overheadS: stepS, gemmFLOPS: 1, weightBW: 1, attnFLOPS: 1, kvBW: 1}
}

// FirstStepSeconds is the duration of the run's first step, a.
func (r DecodeRun) FirstStepSeconds() float64 { return r.a }

// StepSeconds is the duration of step j (0-based) of the run: a + b·j.
func (r DecodeRun) StepSeconds(j int64) float64 { return r.a + r.b*float64(j) }

// StepGrowthSeconds is how much longer each step is than the one before
// (b: every sequence's context grows by one token a step).
func (r DecodeRun) StepGrowthSeconds() float64 { return r.b }

// FLOPs is the model FLOPs one GPU does in the first k steps of the run.
func (r DecodeRun) FLOPs(k int64) float64 { return linSum(r.fa, r.fb, 0, float64(k)) }

// Seconds is the duration of the first k steps of the run.
func (r DecodeRun) Seconds(k int64) float64 { return linSum(r.a, r.b, 0, float64(k)) }

// linSum is the sum of a+b·j for integer j in [lo, hi).
func linSum(a, b, lo, hi float64) float64 {
	n := hi - lo
	if n <= 0 {
		return 0
	}
	return n*a + b*n*(lo+hi-1)/2
}

// WithNVLinkFraction returns a copy of m whose NVLink runs at fraction f of
// its bandwidth, 0 < f <= 1 (an NVLink switch tray of the domain is out):
// the all-reduce's bandwidth term grows by 1/f, its latency term stays, and
// every other term is unchanged. f = 1 (or a TP of 1, which has no
// all-reduce) returns m itself.
func (m *StepModel) WithNVLinkFraction(f float64) *StepModel {
	if f >= 1 || !(f > 0) || m.commPerTokenS == 0 {
		return m
	}
	q := *m
	q.commPerTokenS = m.commPerTokenS / f
	q.decodeCache = nil // (m's terms hold m's bandwidth)
	return &q
}

// ClosedLoopRequestS estimates one request's time in a closed loop of n
// clients sending isl-token prompts for osl-token outputs: its prefill
// alone plus osl decode steps of n sequences at the mean context. The
// clients' first requests are spread over it (fleetsim calibrate's closed
// loops, a scenario's client_start = "spread").
func (m *StepModel) ClosedLoopRequestS(isl, osl, n float64) float64 {
	prefill := m.Step(StepShape{PrefillTokens: isl, PrefillPairs: isl * (isl + 1) / 2, PrefillSeqs: 1})
	decode := m.Step(StepShape{DecodeSeqs: n, DecodeCtx: n * (isl + osl/2)})
	return prefill + osl*decode
}
