package models

import (
	"fmt"
	"math"

	"github.com/fleetsim/fleetsim/internal/config"
)

// PerfConfig holds the efficiency factors of the roofline step model. The
// defaults are calibrated so that Llama-3.1-8B BF16 on one H100 serves a
// ShareGPT-like offline load at about the 12.6k output tokens/s published for
// vLLM (CALIBRATION.md §4, S); TestCalibrationVLLM8BH100 keeps it so.
type PerfConfig struct {
	// ComputeEfficiency is the fraction of dense peak FLOP/s that the GEMMs
	// and attention kernels reach. Default 0.6 (assumption: inference GEMMs at
	// large token counts; Llama 3 training reached 38–43% MFU end to end,
	// CALIBRATION.md §3, P, which bounds it from below).
	ComputeEfficiency float64 `toml:"compute_efficiency"`
	// BandwidthEfficiency is the fraction of peak HBM bandwidth reached when
	// streaming weights and KV. Default 0.8 (assumption: typical achieved
	// HBM bandwidth of memory-bound decode kernels).
	BandwidthEfficiency float64 `toml:"bandwidth_efficiency"`
	// NVLinkEfficiency is the fraction of one-direction NVLink bandwidth an
	// all-reduce reaches. Default 0.7 (assumption).
	NVLinkEfficiency float64 `toml:"nvlink_efficiency"`
	// AllReduceLatencyS is the fixed latency of one all-reduce in seconds;
	// a TP layer does two. Default 8e-6 (assumption: NCCL small-message
	// latency within an NVLink domain).
	AllReduceLatencyS float64 `toml:"allreduce_latency_s"`
	// StepOverheadS is the fixed per-step cost in seconds: scheduling,
	// sampling, input preparation and kernel launches. Default 0.003
	// (assumption, fitted by the calibration test).
	StepOverheadS float64 `toml:"step_overhead_s"`
}

// DefaultPerfConfig returns the calibrated defaults documented on PerfConfig.
func DefaultPerfConfig() PerfConfig {
	return PerfConfig{
		ComputeEfficiency:   0.7,
		BandwidthEfficiency: 0.85,
		NVLinkEfficiency:    0.7,
		AllReduceLatencyS:   8e-6,
		StepOverheadS:       0.001,
	}
}

// Validate reports problems under key prefix.
func (c *PerfConfig) Validate(prefix string, ps *config.Problems) {
	for _, f := range []struct {
		key string
		v   float64
	}{
		{"compute_efficiency", c.ComputeEfficiency},
		{"bandwidth_efficiency", c.BandwidthEfficiency},
		{"nvlink_efficiency", c.NVLinkEfficiency},
	} {
		ps.Positive(prefix+"."+f.key, f.v)
		if f.v > 1 {
			ps.Add(prefix+"."+f.key, "must be at most 1, found %v", f.v)
		}
	}
	ps.NonNegative(prefix+".allreduce_latency_s", c.AllReduceLatencyS)
	ps.NonNegative(prefix+".step_overhead_s", c.StepOverheadS)
}

// Precision is how weights or KV are stored.
type Precision string

// Precisions.
const (
	BF16 Precision = "bf16"
	FP8  Precision = "fp8"
)

// Bytes is the size of one element.
func (p Precision) Bytes() float64 {
	if p == FP8 {
		return 1
	}
	return 2
}

// StepModel gives the duration of one continuous-batching step of a replica:
// a roofline over one GPU of the tensor-parallel group (compute-bound when
// many tokens are processed, bandwidth-bound when weights and KV dominate),
// plus the TP all-reduces over NVLink and a fixed overhead.
//
//	step = max(compute, memory) + allreduce + overhead
//	compute = (2·params·tokens + 4·layers·hidden·attended) / (tp · peak · eff)
//	memory  = (params·wbytes + kvBytesPerToken·kvRead) / (tp · hbmBW · eff)
//	allreduce = 2·layers · (latency + 2(tp-1)/tp · tokens·hidden·2 B / (nvlink/2 · eff))
//
// where tokens is the number of tokens processed in the step (prefill chunk
// tokens plus one per decoding sequence), attended the query-key pairs of
// attention, and kvRead the KV tokens read. All quantities are per GPU.
type StepModel struct {
	linFLOPsPerToken   float64 // 2·params/tp
	attnFLOPsPerPair   float64 // 4·layers·hidden/tp
	weightBytes        float64 // per GPU
	kvBytesPerToken    float64 // per GPU
	flops              float64 // effective FLOP/s
	bw                 float64 // effective bytes/s
	commFixedS         float64 // per step, independent of tokens
	commPerTokenS      float64
	overheadS          float64
	peakFLOPS          float64 // dense peak FLOP/s of one GPU
	WeightBytesPerGPU  float64
	KVBytesPerTokenGPU float64
}

// NewStepModel builds the step model for llm on gpu with tensor parallelism
// tp, weights and KV at the given precisions.
func NewStepModel(gpu GPU, llm LLM, tp int, weights, kv Precision, pc PerfConfig) (*StepModel, error) {
	if tp < 1 {
		return nil, fmt.Errorf("models: tensor parallelism %d < 1", tp)
	}
	peak := gpu.BF16FLOPS
	if weights == FP8 {
		peak = gpu.FP8FLOPS
	}
	t := float64(tp)
	m := &StepModel{
		linFLOPsPerToken: 2 * llm.Params / t,
		attnFLOPsPerPair: 4 * float64(llm.Layers) * float64(llm.Hidden) / t,
		weightBytes:      llm.Params * weights.Bytes() / t,
		kvBytesPerToken:  llm.KVBytesPerToken(kv.Bytes()) / t,
		flops:            peak * pc.ComputeEfficiency,
		bw:               gpu.HBMBytesPerS * pc.BandwidthEfficiency,
		overheadS:        pc.StepOverheadS,
		peakFLOPS:        peak,
	}
	if tp > 1 {
		nAR := 2 * float64(llm.Layers)
		oneDir := gpu.NVLinkBytesPerS / 2 * pc.NVLinkEfficiency
		m.commFixedS = nAR * pc.AllReduceLatencyS
		m.commPerTokenS = nAR * 2 * (t - 1) / t * float64(llm.Hidden) * 2 / oneDir
	}
	m.WeightBytesPerGPU = m.weightBytes
	m.KVBytesPerTokenGPU = m.kvBytesPerToken
	return m, nil
}

// Step returns the duration in seconds of one step that processes tokens
// tokens in all (prefill chunk tokens plus decoding sequences), computes
// attended query-key pairs of attention and reads kvRead tokens of KV.
func (m *StepModel) Step(tokens, attended, kvRead float64) float64 {
	c := (m.linFLOPsPerToken*tokens + m.attnFLOPsPerPair*attended) / m.flops
	mem := (m.weightBytes + m.kvBytesPerToken*kvRead) / m.bw
	return math.Max(c, mem) + m.commFixedS + m.commPerTokenS*tokens + m.overheadS
}

// FLOPs is the model FLOPs one GPU of the group does in a step with these
// tokens and attended pairs (what MFU counts).
func (m *StepModel) FLOPs(tokens, attended float64) float64 {
	return m.linFLOPsPerToken*tokens + m.attnFLOPsPerPair*attended
}

// PeakFLOPS is one GPU's dense peak FLOP/s at the weights' precision.
func (m *StepModel) PeakFLOPS() float64 { return m.peakFLOPS }

// DecodeRun describes k consecutive decode-only steps of n sequences whose
// contexts sum to ctx0 tokens at the first step; each step adds n tokens to
// the sum. Its duration has a closed form, so a run costs O(1) to simulate
// whatever its length (DESIGN.md, fixed decision 5).
type DecodeRun struct {
	ac, bc, am, bm float64 // compute and memory time of step j: a + b·j
	rest           float64 // per-step constant (comm + overhead)
	fa, fb         float64 // FLOPs of step j: fa + fb·j
}

// Decode returns the run of n sequences starting from total context ctx0.
func (m *StepModel) Decode(n int, ctx0 float64) DecodeRun {
	nf := float64(n)
	return DecodeRun{
		ac:   (m.linFLOPsPerToken*nf + m.attnFLOPsPerPair*ctx0) / m.flops,
		bc:   m.attnFLOPsPerPair * nf / m.flops,
		am:   (m.weightBytes + m.kvBytesPerToken*ctx0) / m.bw,
		bm:   m.kvBytesPerToken * nf / m.bw,
		rest: m.commFixedS + m.commPerTokenS*nf + m.overheadS,
		fa:   m.linFLOPsPerToken*nf + m.attnFLOPsPerPair*ctx0,
		fb:   m.attnFLOPsPerPair * nf,
	}
}

// FLOPs is the model FLOPs one GPU does in the first k steps of the run.
func (r DecodeRun) FLOPs(k int64) float64 { return linSum(r.fa, r.fb, 0, float64(k)) }

// Seconds is the duration of the first k steps of the run: the sum over
// j < k of max(ac+bc·j, am+bm·j) + rest, in closed form.
func (r DecodeRun) Seconds(k int64) float64 {
	if k <= 0 {
		return 0
	}
	kf := float64(k)
	total := kf * r.rest
	// Where does compute overtake memory (or the reverse)? f(j) = c(j)-m(j).
	da, db := r.ac-r.am, r.bc-r.bm
	compAt := func(j float64) bool { return da+db*j >= 0 }
	if compAt(0) == compAt(kf-1) {
		if compAt(0) {
			return total + linSum(r.ac, r.bc, 0, kf)
		}
		return total + linSum(r.am, r.bm, 0, kf)
	}
	// One crossover inside [0, k-1]: split at the first integer step on the
	// other side.
	x := math.Ceil(-da / db)
	if compAt(0) {
		return total + linSum(r.ac, r.bc, 0, x) + linSum(r.am, r.bm, x, kf)
	}
	return total + linSum(r.am, r.bm, 0, x) + linSum(r.ac, r.bc, x, kf)
}

// linSum is the sum of a+b·j for integer j in [lo, hi).
func linSum(a, b, lo, hi float64) float64 {
	n := hi - lo
	if n <= 0 {
		return 0
	}
	return n*a + b*n*(lo+hi-1)/2
}
