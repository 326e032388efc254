package hw

import (
	"fmt"
	"math"

	"github.com/fleetsim/fleetsim/internal/config"
)

// Layout is how a replica spreads over its GPUs: tp·dp GPUs, attention
// (and every dense layer) tensor-parallel over tp inside each of dp
// data-parallel ranks, each rank serving its own share of the sequences;
// routed experts sharded over all tp·dp GPUs, either by tensor slices
// (ep = 1: every GPU holds a slice of every expert) or whole experts
// (ep = tp·dp: expert parallelism, tokens dispatched to their experts'
// GPUs and combined back by two all-to-alls per MoE layer). DeepSeek-style
// wide EP is tp = 1, dp = ep = 64 or so.
//
// PP > 1 is pipeline parallelism: pp stages of tp GPUs, each holding
// layers/pp of the model (dp and ep must then be 1). The engine keeps pp
// micro-batches in flight (vLLM's virtual engines), so in steady state
// every stage is busy: a replica step (one token for every sequence)
// takes the latency of one micro-batch through all stages. Per step and
// GPU that is the whole model's weight reads (each stage reads its 1/pp
// pp times), 1/pp of the compute, KV reads and all-reduce traffic, and
// pp−1 activation hops (over the NIC where a stage boundary crosses NVLink
// domains). Stages take whole domains when the pipeline leaves one.
type Layout struct {
	TP, DP, EP, PP int
}

// GPUs is the replica's GPU count, tp·dp·pp.
func (l Layout) GPUs() int { return l.Group() * max(l.PP, 1) }

// Group is the GPUs of one pipeline stage, tp·dp (the whole replica
// without pipeline parallelism).
func (l Layout) Group() int { return l.TP * max(l.DP, 1) }

// norm fills unset degrees with 1.
func (l Layout) Norm() Layout {
	l.DP, l.EP, l.PP = max(l.DP, 1), max(l.EP, 1), max(l.PP, 1)
	return l
}

// CheckDeployment refuses a layout of llm on gpu that no engine can run:
// TP as CheckTP, EP only for an MoE model, equal to tp·dp and dividing its
// experts; a replica wider than one NVLink domain only with expert
// parallelism, on whole domains, over a GPU with a NIC bandwidth.
func CheckDeployment(gpu GPU, llm LLM, l Layout) error {
	for _, d := range []*int{&l.DP, &l.EP, &l.PP} {
		if *d == 0 { // unset: 1
			*d = 1
		}
	}
	if err := CheckTP(llm, l.TP); err != nil {
		return err
	}
	if l.DP < 1 || l.EP < 1 || l.PP < 1 {
		return fmt.Errorf("dp = %d, ep = %d and pp = %d must be >= 1", l.DP, l.EP, l.PP)
	}
	if l.PP > 1 {
		if llm.Layers%l.PP != 0 {
			return fmt.Errorf("pp = %d pipeline stages do not divide %s's %d layers", l.PP, llm.Name, llm.Layers)
		}
		if l.DP > 1 || l.EP > 1 {
			return fmt.Errorf("pp = %d: pipeline parallelism is modelled with tensor parallelism only (dp = ep = 1)", l.PP)
		}
	}
	w := l.Group()
	if l.EP > 1 {
		if !llm.IsMoE() {
			return fmt.Errorf("ep = %d: %s is dense; expert parallelism needs a mixture-of-experts model", l.EP, llm.Name)
		}
		if l.EP != w {
			return fmt.Errorf("ep = %d must equal the replica's tp·dp = %d GPUs (experts spread over all of them)", l.EP, w)
		}
		if llm.Experts%l.EP != 0 {
			return fmt.Errorf("ep = %d does not divide %s's %d experts", l.EP, llm.Name, llm.Experts)
		}
	}
	if w = l.GPUs(); gpu.DomainGPUs > 0 && w > gpu.DomainGPUs {
		if l.EP == 1 && l.PP == 1 {
			return fmt.Errorf("a %d-GPU replica is wider than %s's %d-GPU NVLink domain; only expert parallelism (ep = tp·dp) or pipeline stages (pp) cross domains", w, gpu.Name, gpu.DomainGPUs)
		}
		if w%gpu.DomainGPUs != 0 {
			return fmt.Errorf("a %d-GPU replica wider than one NVLink domain must take whole %d-GPU domains", w, gpu.DomainGPUs)
		}
		if gpu.NICBytesPerS <= 0 {
			return fmt.Errorf("a %d-GPU replica spans %d NVLink domains but %s has no nic_bytes_per_s for the traffic over RDMA", w, w/gpu.DomainGPUs, gpu.Name)
		}
	}
	return nil
}

// MoEConfig is how a replica's routed experts behave at run time
// ([cluster.replica.moe]); ignored for a dense model.
type MoEConfig struct {
	// RoutingSkew skews the router: 0 (default) routes uniformly; s > 0
	// sends a share 0.2 + 0.8·s of the routing to the hottest 20% of the
	// experts (a two-class popularity: an assumption, standing in for the
	// measured skew of real routers), so a step touches fewer distinct
	// experts. Below 1.
	RoutingSkew float64 `toml:"routing_skew"`
	// LoadImbalance is how much more routed work the busiest expert-parallel
	// GPU gets than the mean (the step waits for it); >= 1. 0 derives it:
	// 1 without EP, 1.2 with (assumption: DeepSeek's expert-parallel load
	// balancer, EPLB, with redundant experts keeps ranks within about 20%).
	LoadImbalance float64 `toml:"load_imbalance"`
	// AllToAllOverlap is the fraction of the dispatch/combine time hidden
	// under computation (two-micro-batch overlap); default 0 (assumption:
	// nothing hidden), at most 0.95.
	AllToAllOverlap float64 `toml:"all_to_all_overlap"`
}

// hotExpertFraction is the share of experts RoutingSkew makes hot.
const hotExpertFraction = 0.2

// rdmaLatencyS is the fixed cost of one all-to-all over RDMA (assumption:
// 15 µs, a few network round trips of a GPU-initiated transfer; DeepEP's
// low-latency kernels report about 100–200 µs for a 128-token dispatch at
// EP 8–256, mostly bandwidth).
const rdmaLatencyS = 15e-6

// Validate reports problems under prefix.
func (c *MoEConfig) Validate(prefix string, ps *config.Problems) {
	if math.IsNaN(c.RoutingSkew) || c.RoutingSkew < 0 || c.RoutingSkew >= 1 {
		ps.Add(config.Key(prefix, "routing_skew"), "must be in [0, 1), found %v", c.RoutingSkew)
	}
	if c.LoadImbalance != 0 && !(c.LoadImbalance >= 1 && c.LoadImbalance <= 100) {
		ps.Add(config.Key(prefix, "load_imbalance"), "must be between 1 and 100 (0 derives it), found %v", c.LoadImbalance)
	}
	if math.IsNaN(c.AllToAllOverlap) || c.AllToAllOverlap < 0 || c.AllToAllOverlap > 0.95 {
		ps.Add(config.Key(prefix, "all_to_all_overlap"), "must be between 0 and 0.95, found %v", c.AllToAllOverlap)
	}
}

// Deployment is everything beyond the model, GPU and precisions that sets
// a replica's step time: its layout, its experts' routing and speculative
// decoding.
type Deployment struct {
	Layout Layout
	MoE    MoEConfig
	Spec   SpecConfig
	// Compute is the GEMMs' precision; "" derives it from the weights
	// (DefaultCompute).
	Compute Precision
}

// moeStep is the mixture-of-experts part of a step model. Per replica
// token (the replica's T tokens spread evenly over its dp ranks):
//
//	weights read = dense/tp + routed/(tp·dp) · touched(T)
//	touched(T)   = min(1, imbalance·D(T)/E)     (ep > 1: the busiest GPU's experts)
//	             = D(T)/E                        (ep = 1: a slice of each touched expert)
//	D(T)         = E·(1 − (1 − k/E)^T)           expected distinct experts, uniform routing
//	flops/token  = 2·dense/tp/dp + 2·routed_active/(tp·dp)·imbalance
//
// D(T) is not linear in T, but a decode run keeps its batch (and so T)
// fixed, so it is a constant of the run: DecodeRun's a + b·j form holds.
type moeStep struct {
	experts, topK    float64
	hotN, coldN      float64 // expert counts of the two popularity classes
	hotQ, coldQ      float64 // probability a token picks a given expert of each class
	skewed           bool
	denseBytes       float64 // per GPU, always read
	routedBytes      float64 // per GPU, all local expert weights
	ep               bool
	imbalance        float64
	denseFLOPs       float64 // per replica token, per GPU
	routedFLOPs      float64 // per replica token, per GPU, balanced
	flopsPerTokenMax float64 // what the busiest GPU does per replica token
	// routedHalf, when > 0, is the grouped expert GEMMs' half point in
	// replica tokens: moe_half_tokens tokens per expert is
	// moe_half_tokens·E/k replica tokens (each token visits k of E).
	routedHalf float64
	// routedBW, when > 0, is the HBM bandwidth the expert GEMMs stream
	// their weights at (moe_bandwidth_efficiency); 0: the dense GEMMs'.
	routedBW float64
}

// streamTime is the time one GPU takes to stream the weights a step of T
// tokens reads: the dense part at bw, the touched experts' at their own
// bandwidth when the profile gives one.
func (e *moeStep) streamTime(t, bw float64) float64 {
	if t <= 0 {
		return 0
	}
	if e.routedBW <= 0 {
		return e.weightsRead(t) / bw
	}
	return e.denseBytes/bw + e.routedBytes*e.touched(t)/e.routedBW
}

// distinct is the expected number of distinct experts T tokens touch in
// one MoE layer.
func (e *moeStep) distinct(t float64) float64 {
	if t <= 0 {
		return 0
	}
	if !e.skewed {
		return e.experts * (1 - math.Pow(1-e.topK/e.experts, t))
	}
	return e.hotN*(1-math.Pow(1-e.hotQ, t)) + e.coldN*(1-math.Pow(1-e.coldQ, t))
}

// touched is the fraction of a GPU's routed expert weights a step of T
// tokens reads.
func (e *moeStep) touched(t float64) float64 {
	f := e.distinct(t) / e.experts
	if e.ep {
		f *= e.imbalance
	}
	return min(f, 1)
}

// weightsRead is the weight bytes one GPU streams in a step of T tokens.
func (e *moeStep) weightsRead(t float64) float64 {
	if t <= 0 {
		return 0
	}
	return e.denseBytes + e.routedBytes*e.touched(t)
}

// NewDeployedStepModel builds the step model of llm on gpu under layout,
// routing and speculation d. With d's zero value but TP it is exactly
// NewStepModel.
func NewDeployedStepModel(gpu GPU, llm LLM, d Deployment, weights, kv Precision, pp PerfProfile) (*StepModel, error) {
	l := d.Layout.Norm()
	if err := CheckDeployment(gpu, llm, l); err != nil {
		return nil, err
	}
	m, err := newStepModel(gpu, llm, l.TP, weights, d.Compute, kv, pp)
	if err != nil {
		return nil, err
	}
	if l.DP > 1 {
		// Each rank serves 1/dp of the sequences: attention, its KV reads,
		// its all-reduces and per-sequence costs divide; the GEMM
		// efficiency follows a rank's token count.
		dp := float64(l.DP)
		m.attnFLOPsPerPair /= dp
		m.kvBytesPerToken /= dp
		m.kvWinPerToken /= dp
		m.commPerTokenS /= dp
		m.seqOverheadS /= dp
		m.gemmFLOPsPerToken /= dp
		m.gemmHalf *= dp
	}
	if llm.IsMoE() {
		m.setMoE(gpu, llm, l, d.MoE, weights, pp)
	}
	if l.PP > 1 {
		if d.Spec.On() {
			return nil, fmt.Errorf("speculative decoding with pipeline stages (pp = %d) is not modelled", l.PP)
		}
		m.setPipeline(gpu, llm, l, pp)
	}
	m.WeightBytesPerGPU = WeightBytesPerGPU(llm, l, weights)
	if d.Spec.On() {
		m.spec = newSpecStep(d.Spec)
	}
	return m, nil
}

// WeightBytesPerGPU is one GPU's share of llm's weights under layout l:
// dense weights over tp, routed experts over tp·dp.
func WeightBytesPerGPU(llm LLM, l Layout, weights Precision) float64 {
	l = l.Norm()
	b := weights.Bytes()
	if !llm.IsMoE() && l.DP == 1 && l.PP == 1 {
		return llm.Params * b / float64(l.TP)
	}
	return (llm.DenseParams()*b/float64(l.TP) + llm.RoutedParams()*b/float64(l.Group())) / float64(l.PP)
}

// pipeStep is the pipeline-parallel part of a step model (see Layout).
// The engine splits a step's sequences into m = min(sequences, pp)
// micro-batches; one micro-batch passes through all pp stages in turn while
// the others fill the other stages, so a step (a token for every
// sequence) lasts the TP-only step of 1/m of the work plus pp−1
// activation hops, and each GPU does 1/pp of the step's FLOPs.
type pipeStep struct {
	stages                float64
	hopFixedS, hopPerTokS float64 // pp−1 hops of one micro-batch
}

// setPipeline installs pp stages: 2-byte activations, a TP rank sending
// its 1/tp share, over NVLink inside a domain and the NIC across one.
func (m *StepModel) setPipeline(gpu GPU, llm LLM, l Layout, pp PerfProfile) {
	hops := l.PP - 1
	nicHops := 0
	if w := l.GPUs(); gpu.DomainGPUs > 0 && w > gpu.DomainGPUs {
		nicHops = w/gpu.DomainGPUs - 1
	}
	nvlHops := hops - nicHops
	act := float64(llm.Hidden) * 2 / float64(l.TP) // bytes per token and hop, per GPU
	p := &pipeStep{stages: float64(l.PP)}
	p.hopFixedS = float64(nvlHops)*pp.AllReduceLatencyS + float64(nicHops)*rdmaLatencyS
	p.hopPerTokS = float64(nvlHops) * act / (gpu.NVLinkBytesPerS / 2 * pp.NVLinkEfficiency)
	if nicHops > 0 {
		p.hopPerTokS += float64(nicHops) * act / (gpu.NICBytesPerS * pp.NVLinkEfficiency)
	}
	m.pipe = p
}

// microBatches is m = min(sequences, pp), at least 1.
func (p *pipeStep) microBatches(s StepShape) float64 {
	return max(1, min(s.PrefillSeqs+s.DecodeSeqs, p.stages))
}

// pipeStepTime is a pipelined step: the TP-only step of one micro-batch
// (the shape over m) plus the hops.
func (m *StepModel) pipeStepTime(s StepShape) float64 {
	p := m.pipe
	mb := p.microBatches(s)
	sub := StepShape{PrefillTokens: s.PrefillTokens / mb, PrefillPairs: s.PrefillPairs / mb, PrefillSeqs: s.PrefillSeqs / mb,
		DecodeSeqs: s.DecodeSeqs / mb, DecodeCtx: s.DecodeCtx / mb}
	d := m.stageStep(sub)
	if sub.Tokens() > 0 {
		d += p.hopFixedS + p.hopPerTokS*sub.Tokens()
	}
	return d
}

// pipeDecode is Decode with pipeline stages: n sequences in m
// micro-batches, each step's KV read growing n/m tokens per step.
func (m *StepModel) pipeDecode(n int, ctx0 float64) DecodeRun {
	nf := float64(n)
	s := StepShape{DecodeSeqs: nf, DecodeCtx: ctx0}
	mb := m.pipe.microBatches(s)
	return DecodeRun{
		a:  m.pipeStepTime(s),
		b:  m.kvBytesPerToken * nf / mb / m.kvBW,
		fa: m.FLOPs(s),
		fb: m.attnFLOPsPerPair * nf / m.pipe.stages,
	}
}

// pipeRoofline is RooflineBound for one GPU of a pipeline: 1/pp of the
// FLOPs, its stage's weights once per micro-batch and its layers' KV.
func (m *StepModel) pipeRoofline(gpu GPU, s StepShape) float64 {
	p := m.pipe
	peak := max(gpu.BF16FLOPS, gpu.FP8FLOPS, gpu.FP4FLOPS)
	bytes := m.kvRead(s.DecodeCtx, s.DecodeSeqs) / p.stages
	if s.Tokens() > 0 {
		mb := p.microBatches(s)
		bytes += mb * m.minWeightsRead(s.Tokens()/mb) / p.stages
	}
	return max(m.FLOPs(s)/peak, bytes/gpu.HBMBytesPerS)
}

// setMoE installs the MoE terms: weight streaming from the touched experts,
// active-parameter FLOPs and, with EP, the all-to-all dispatch and combine.
func (m *StepModel) setMoE(gpu GPU, llm LLM, l Layout, c MoEConfig, weights Precision, pp PerfProfile) {
	tp, dp, w := float64(l.TP), float64(l.DP), float64(l.Group())
	b := weights.Bytes()
	e := &moeStep{
		experts:     float64(llm.Experts),
		topK:        float64(llm.ExpertsPerToken),
		denseBytes:  llm.DenseParams() * b / tp,
		routedBytes: llm.RoutedParams() * b / w,
		ep:          l.EP > 1,
		imbalance:   1,
		denseFLOPs:  2 * llm.DenseParams() / tp / dp,
		routedFLOPs: 2 * (llm.ActiveParamsDerived() - llm.DenseParams()) / w,
	}
	if e.ep {
		e.imbalance = c.LoadImbalance
		if e.imbalance == 0 {
			e.imbalance = 1.2
		}
	}
	if c.RoutingSkew > 0 {
		e.skewed = true
		e.hotN = math.Max(1, math.Round(hotExpertFraction*e.experts))
		e.coldN = e.experts - e.hotN
		share := e.hotN/e.experts + (1-e.hotN/e.experts)*c.RoutingSkew
		e.hotQ = min(1, e.topK*share/e.hotN)
		if e.coldN > 0 {
			e.coldQ = min(1, e.topK*(1-share)/e.coldN)
		}
	}
	e.flopsPerTokenMax = e.denseFLOPs + e.routedFLOPs*e.imbalance
	if pp.MoEHalfTokens > 0 && e.topK > 0 {
		e.routedHalf = pp.MoEHalfTokens * e.experts / e.topK
	}
	if pp.MoEBandwidthEfficiency > 0 {
		e.routedBW = gpu.HBMBytesPerS * pp.MoEBandwidthEfficiency
	}
	m.moe = e
	m.gemmFLOPsPerToken = e.denseFLOPs + e.routedFLOPs
	m.weightBytes = e.denseBytes + e.routedBytes
	if !e.ep {
		return
	}
	// Two all-to-alls per MoE layer: each token goes to top-k experts
	// (dispatch, FP8 when the weights are 8-bit or less, as DeepEP does;
	// else BF16) and comes back (combine, BF16). A GPU sends its 1/(tp·dp)
	// share of the tokens; (w−1)/w of the copies leave it, those to the own
	// NVLink domain over NVLink, the rest over the GPU's NIC; the two run
	// at once, so the slower sets the time.
	disp := 2.0
	if m.Compute != BF16 {
		disp = 1
	}
	perToken := float64(llm.MoELayers()) * e.topK * float64(llm.Hidden) * (disp + 2) / w // bytes one GPU sends per replica token
	dom := float64(gpu.DomainGPUs)
	if dom <= 0 || dom > w {
		dom = w
	}
	nvlBytes := perToken * (dom - 1) / w
	nicBytes := perToken * (w - dom) / w
	t := nvlBytes / (gpu.NVLinkBytesPerS / 2 * pp.NVLinkEfficiency)
	lat := pp.AllReduceLatencyS
	if nicBytes > 0 {
		t = math.Max(t, nicBytes/(gpu.NICBytesPerS*pp.NVLinkEfficiency))
		lat = rdmaLatencyS
	}
	exposed := 1 - c.AllToAllOverlap
	m.a2aPerTokenS = exposed * t
	m.a2aFixedS = exposed * 2 * float64(llm.MoELayers()) * lat
	m.commPerTokenS += m.a2aPerTokenS
	m.commFixedS += m.a2aFixedS
}

// gemmMoE is the GEMM phase of an MoE step of T tokens: the touched
// experts' weights streamed once, or the busiest GPU's FLOPs at an
// efficiency set by a rank's token count, whichever is longer.
//
// With moe_half_tokens the routed experts' GEMMs have a half point of
// their own, in tokens per expert: their efficiency is
// eff·τ/(τ + moe_half_tokens) at τ = T·k/E tokens per expert, which in the
// linear form is routed_flops·(T + moe_half_tokens·E/k); the dense layers'
// GEMMs keep gemm_half_tokens.
func (m *StepModel) gemmMoE(t float64) float64 {
	e := m.moe
	if e.routedHalf <= 0 {
		return m.smax(e.streamTime(t, m.weightBW), e.flopsPerTokenMax*(t+m.gemmHalf)/m.gemmFLOPS)
	}
	flops := e.denseFLOPs*(t+m.gemmHalf) + e.routedFLOPs*e.imbalance*(t+e.routedHalf)
	return m.smax(e.streamTime(t, m.weightBW), flops/m.gemmFLOPS)
}

// minWeightsRead is the least weight bytes one GPU can stream in a step of
// T tokens: every touched expert's weights once, evenly spread (no load
// imbalance). The roofline bound uses it.
func (m *StepModel) minWeightsRead(t float64) float64 {
	if m.moe != nil {
		e := m.moe
		return e.denseBytes + e.routedBytes*min(1, e.distinct(t)/e.experts)
	}
	return m.weightBytes
}

// String is "TP=8", "TP=1 DP=64 EP=64" with data or expert parallelism,
// "TP=8 PP=2" with pipeline stages.
func (l Layout) String() string {
	l = l.Norm()
	switch {
	case l.PP > 1 && l.DP == 1 && l.EP == 1:
		return fmt.Sprintf("TP=%d PP=%d", l.TP, l.PP)
	case l.PP > 1:
		return fmt.Sprintf("TP=%d DP=%d EP=%d PP=%d", l.TP, l.DP, l.EP, l.PP)
	case l.DP == 1 && l.EP == 1:
		return fmt.Sprintf("TP=%d", l.TP)
	}
	return fmt.Sprintf("TP=%d DP=%d EP=%d", l.TP, l.DP, l.EP)
}
