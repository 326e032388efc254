package hw

import (
	"math"

	"github.com/fleetsim/fleetsim/internal/config"
)

// SpecConfig is speculative decoding ([cluster.replica.speculative]): a
// draft (a small model, or EAGLE/multi-token-prediction heads) proposes
// Tokens tokens, and the target model verifies them and one more in a
// single forward pass, keeping each in turn with probability Acceptance.
type SpecConfig struct {
	// Enabled turns speculation on (default off).
	Enabled bool `toml:"enabled"`
	// Tokens is k, the speculative tokens per step; >= 1. Default 3
	// (assumption: vLLM's and SGLang's EAGLE examples use 3–5).
	Tokens int `toml:"tokens"`
	// Acceptance is α, the probability the target keeps each drafted
	// token given the ones before were kept, in [0, 1]. Default 0.7
	// (assumption: EAGLE-style heads on chat data accept about 0.6–0.8).
	Acceptance float64 `toml:"acceptance"`
	// DraftFraction is the time of one draft forward pass as a fraction of
	// a target decode step of the same batch. Default 0.05 (assumption: a
	// one-layer EAGLE head plus the LM head on a 32–80-layer target).
	DraftFraction float64 `toml:"draft_fraction"`
	// AcceptanceSpread, when > 0, gives each request its own acceptance,
	// uniform on [acceptance − spread, acceptance + spread] (clipped to
	// [0, 1]), placed by the request's quantile from the "speculation"
	// stream. A step then emits the mean of its decoding sequences'
	// expected tokens per verify step (all of them share its duration).
	// Default 0: every request has acceptance.
	AcceptanceSpread float64 `toml:"acceptance_spread"`
}

// DefaultSpecConfig is the documented defaults, off.
func DefaultSpecConfig() SpecConfig {
	return SpecConfig{Tokens: 3, Acceptance: 0.7, DraftFraction: 0.05}
}

// On reports whether speculation is on.
func (c SpecConfig) On() bool { return c.Enabled && c.Tokens >= 1 }

// TokensPerStep is the expected tokens a sequence emits per verify step:
// (1 − α^(k+1)) / (1 − α), k + 1 at α = 1, 1 at α = 0.
func (c SpecConfig) TokensPerStep() float64 {
	k, a := float64(c.Tokens), c.Acceptance
	if a >= 1 {
		return k + 1
	}
	return (1 - math.Pow(a, k+1)) / (1 - a)
}

// Validate reports problems under prefix.
func (c *SpecConfig) Validate(prefix string, ps *config.Problems) {
	if c.Enabled && c.Tokens < 1 {
		ps.Add(config.Key(prefix, "tokens"), "must be >= 1 speculative token, found %d", c.Tokens)
	}
	if c.Tokens > 64 {
		ps.Add(config.Key(prefix, "tokens"), "at most 64, found %d", c.Tokens)
	}
	ps.Fraction(config.Key(prefix, "acceptance"), c.Acceptance)
	if math.IsNaN(c.AcceptanceSpread) || c.AcceptanceSpread < 0 || c.AcceptanceSpread > 0.5 {
		ps.Add(config.Key(prefix, "acceptance_spread"), "must be between 0 and 0.5, found %v", c.AcceptanceSpread)
	}
	if math.IsNaN(c.DraftFraction) || c.DraftFraction < 0 || c.DraftFraction > 10 {
		ps.Add(config.Key(prefix, "draft_fraction"), "must be between 0 and 10, found %v", c.DraftFraction)
	}
}

// specStep is the speculative part of a step model.
type specStep struct {
	k     float64 // speculative tokens
	tau   float64 // expected tokens per verify step
	draft float64 // draft passes' cost, in target decode steps: k·draft_fraction
	// perRequest: acceptance ranges over [lo, hi] by request quantile.
	perRequest bool
	lo, hi     float64
	cfg        SpecConfig
}

func newSpecStep(c SpecConfig) *specStep {
	sp := &specStep{k: float64(c.Tokens), tau: c.TokensPerStep(), draft: float64(c.Tokens) * c.DraftFraction, cfg: c}
	if c.AcceptanceSpread > 0 {
		sp.perRequest = true
		sp.lo, sp.hi = max(0, c.Acceptance-c.AcceptanceSpread), min(1, c.Acceptance+c.AcceptanceSpread)
	}
	return sp
}

// tauFor is the expected tokens per verify step of a request at quantile
// u of the acceptance range.
func (sp *specStep) tauFor(u float32) float64 {
	// 1 + α + … + α^k by products: this runs for every decoding sequence
	// at every plan, where math.Pow would cost more than the plan.
	a := sp.lo + float64(u)*(sp.hi-sp.lo)
	tau, p := 1.0, 1.0
	for i := 0; i < sp.cfg.Tokens; i++ {
		p *= a
		tau += p
	}
	return tau
}

// Speculative reports whether m decodes speculatively.
func (m *StepModel) Speculative() bool { return m.spec != nil }

// SpecPerRequest reports whether m speculates with per-request acceptance
// (acceptance_spread > 0): a step's tokens per verify step are then the
// decoding sequences' SpecTauFor, summed into StepShape.DecodeTau.
func (m *StepModel) SpecPerRequest() bool { return m.spec != nil && m.spec.perRequest }

// SpecTauFor is the expected tokens per verify step of a request at
// quantile u of the acceptance range (SpecPerRequest must hold).
func (m *StepModel) SpecTauFor(u float32) float64 { return m.spec.tauFor(u) }

// stepTau is the mean tokens per verify step of the shape's decoding
// sequences.
func (sp *specStep) stepTau(s StepShape) float64 {
	if s.DecodeTau > 0 && s.DecodeSeqs > 0 {
		return s.DecodeTau / s.DecodeSeqs
	}
	return sp.tau
}

// The simulator emits one token per decoding sequence per step; with
// speculation a real step emits τ on average. A simulated step therefore
// lasts the real step's decode cost divided by τ, so that tokens come at
// the real rate (TPOT is the mean; the burstiness of accepted runs is not
// modelled):
//
//	real(s)  = verify(s) + k·draft_fraction·decode(s)
//	verify   = the step with k more GEMM tokens per decoding sequence
//	step(s)  = prefill(s) + (real(s) − prefill(s)) / τ
//
// where prefill(s) is the step without its decoding sequences (0 for a
// decode-only step). At α = 0 (τ = 1) a step is never shorter than without
// speculation; as α → 1 a decode step tends to real/(k+1).
func (m *StepModel) specStep(s StepShape) float64 {
	sp := m.spec
	real := m.verifyStep(s) + sp.draft*m.plainStep(StepShape{DecodeSeqs: s.DecodeSeqs, DecodeCtx: s.DecodeCtx})
	base := 0.0
	if s.PrefillTokens > 0 || s.PrefillSeqs > 0 {
		base = m.plainStep(StepShape{PrefillTokens: s.PrefillTokens, PrefillPairs: s.PrefillPairs, PrefillSeqs: s.PrefillSeqs})
	}
	return base + (real-base)/sp.stepTau(s)
}

// verifyStep is the target's verify pass: every decoding sequence runs k+1
// tokens through the GEMMs (the rejected ones' work included) and reads its
// KV once.
func (m *StepModel) verifyStep(s StepShape) float64 {
	tokens := s.Tokens() + s.DecodeSeqs*m.spec.k
	d := m.overheadS + m.seqOverheadS*(s.PrefillSeqs+s.DecodeSeqs)
	d += m.gemm(tokens) + m.layerFixedS + m.commFixedS + m.commPerTokenS*tokens
	d += m.attnFLOPsPerPair * (m.pairsAttended(s.PrefillPairs, s.PrefillTokens) + m.attnHalf*s.PrefillTokens) / m.attnFLOPS
	d += m.kvRead(s.DecodeCtx, s.DecodeSeqs) / m.kvBW
	return d
}

// specDecode is Decode under speculation: step j lasts a + b·j, with the
// KV read growing n tokens per simulated step in the verify and the draft
// passes, divided by τ.
func (m *StepModel) specDecode(n int, ctx0, tauSum float64) DecodeRun {
	sp := m.spec
	nf := float64(n)
	s := StepShape{DecodeSeqs: nf, DecodeCtx: ctx0, DecodeTau: tauSum}
	tau := sp.stepTau(s)
	flops := m.FLOPs(s) + m.gemmFLOPsPerToken*nf*sp.k
	return DecodeRun{
		a:  m.specStep(s),
		b:  m.kvBytesPerToken * nf / m.kvBW * (1 + sp.draft) / tau,
		fa: flops * (1 + sp.draft) / tau,
		fb: m.attnFLOPsPerPair * nf * (1 + sp.draft) / tau,
	}
}

// decodeTau is Decode with the decoding sequences' summed tokens per
// verify step (0: the engine's constant).
func (m *StepModel) DecodeTau(n int, ctx0, tauSum float64) DecodeRun {
	if m.spec != nil && tauSum > 0 {
		return m.specDecode(n, ctx0, tauSum)
	}
	return m.Decode(n, ctx0)
}

// SpecTokensPerStep is the expected tokens per verify step, 1 without
// speculation.
func (m *StepModel) SpecTokensPerStep() float64 {
	if m.spec == nil {
		return 1
	}
	return m.spec.tau
}

// SpecExtraKVTokens is the KV positions each running sequence holds beyond
// its context for tokens being verified (the rejected ones' KV is written,
// then freed): k, 0 without speculation.
func (c SpecConfig) SpecExtraKVTokens() int {
	if !c.On() {
		return 0
	}
	return c.Tokens
}
