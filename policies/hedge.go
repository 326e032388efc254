package policies

import (
	"math"
	"math/bits"
	"sort"

	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
)

// DelayHedger sends a backup copy of a request that has not streamed its first
// token within a delay: a fixed delay, or adaptive — the running quantile
// (default p95) of recent TTFTs, the rule of Dean & Barroso's "The Tail at
// Scale" (CACM 2013; CALIBRATION.md §5: holding the hedge until the p95
// limits extra load to about 5%). By default (HedgeConfig.PerPromptLength)
// the adaptive quantile is taken over the recent TTFTs of prompts of about
// the same length (power-of-two buckets of prompt tokens), so that a long
// prompt, slow by nature, is hedged only when it is slow for its length —
// not for being long, which duplicated the longest prefills and cost the
// typical request (issue 12). A budget caps hedges as a fraction of requests: a token bucket where each request earns Budget hedges and the
// bucket holds up to Budget × 1000 (assumption: enough to ride out the
// burst of a replica going bad, not enough to double a fleet's load). With Tied set, both copies go at once and the loser is withdrawn
// when the winner starts (tied requests).
type DelayHedger struct {
	fixed    sim.Time
	adaptive bool
	q        float64
	minN     int
	size     int
	all      quantileWindow // every TTFT
	// buckets[i]: TTFTs of prompts in bucket i (promptBucket); nil when
	// not per prompt length, each allocated at its first TTFT.
	buckets []*quantileWindow
	budget  float64
	credit  float64
	burst   float64
	tied    bool
	// onlyStalled, stall: HedgeConfig.OnlyStalled and StallMs.
	onlyStalled bool
	stall       sim.Time
}

// Prompt-length buckets: prompts of up to 2^promptBucketMinLog2 tokens
// share the first, those over 2^promptBucketMaxLog2 the last, and each
// power of two between has its own (assumption: within a factor of two
// the prefill time, hence TTFT, of a prompt is about the same).
const (
	promptBucketMinLog2 = 6
	promptBucketMaxLog2 = 14
	promptBuckets       = promptBucketMaxLog2 - promptBucketMinLog2 + 1
)

// promptBucket is the bucket of a prompt of tokens tokens.
func promptBucket(tokens int32) int {
	b := bits.Len32(uint32(max(tokens, 1) - 1))
	return min(max(b, promptBucketMinLog2), promptBucketMaxLog2) - promptBucketMinLog2
}

// quantileWindow is a ring of recent TTFTs (ms) and its quantile, re-sorted
// lazily, at most every 1/8 of the window.
type quantileWindow struct {
	window []float64
	next   int
	filled bool
	sorted []float64
	dirty  bool
	cached sim.Time
}

func (w *quantileWindow) n() int {
	if w.filled {
		return len(w.window)
	}
	return w.next
}

func (w *quantileWindow) add(ttftMs float64) {
	w.window[w.next] = ttftMs
	w.next++
	if w.next == len(w.window) {
		w.next, w.filled = 0, true
	}
	if w.next%max(1, len(w.window)/8) == 0 {
		w.dirty = true
	}
}

// quantile is the window's q quantile (call with n() > 0); the first call
// sorts whatever the window holds.
func (w *quantileWindow) quantile(q float64) sim.Time {
	if w.dirty || len(w.sorted) == 0 {
		n := w.n()
		w.sorted = append(w.sorted[:0], w.window[:n]...)
		sort.Float64s(w.sorted)
		idx := int(math.Ceil(q*float64(n))) - 1
		w.cached = sim.FromSeconds(w.sorted[max(0, idx)] / 1000)
		w.dirty = false
	}
	return w.cached
}

var (
	_ fleet.StallHedger  = (*DelayHedger)(nil)
	_ fleet.PromptHedger = (*DelayHedger)(nil)
)

// StallDelay implements fleet.StallHedger.
func (h *DelayHedger) StallDelay() (sim.Time, bool) { return h.stall, h.onlyStalled }

// NewDelayHedger builds a hedger from its configuration (validated).
func NewDelayHedger(c HedgeConfig) *DelayHedger {
	h := &DelayHedger{fixed: sim.FromSeconds(c.DelayMs / 1000), adaptive: c.Name == HedgeAdaptive,
		q: c.Quantile, minN: c.MinSamples, size: c.Window, budget: c.Budget, burst: math.Max(1, c.Budget*1000),
		tied: c.Name == HedgeTied, onlyStalled: c.OnlyStalled, stall: sim.FromSeconds(c.StallMs / 1000)}
	h.credit = h.burst
	if h.adaptive {
		h.all.window = make([]float64, c.Window)
		if c.PerPromptLength {
			h.buckets = make([]*quantileWindow, promptBuckets)
		}
	}
	return h
}

// Tied implements fleet.Hedger.
func (h *DelayHedger) Tied() bool { return h.tied }

// Delay implements fleet.Hedger: the fixed delay, or the running quantile
// of recent TTFTs once MinSamples are in (the fixed delay before that).
func (h *DelayHedger) Delay(sim.Time) (sim.Time, bool) {
	if !h.adaptive || h.all.n() < h.minN {
		return h.fixed, true
	}
	return h.all.quantile(h.q), true
}

// DelayFor implements fleet.PromptHedger: per prompt length, the running
// quantile of the TTFTs of the prompt's bucket once it holds MinSamples.
// A thinner bucket takes the nearest shorter bucket's quantile that has
// them, doubled for each bucket between (a prefill's time grows about in
// proportion to the prompt when it is long, less when it is short, so this
// errs towards hedging later); with none, Delay's. Without it, the rare
// long prompts of a thin bucket would all be hedged at a short prompt's
// delay and drain the budget that an incident needs.
func (h *DelayHedger) DelayFor(now sim.Time, promptTokens int32) (sim.Time, bool) {
	if h.buckets != nil {
		b := promptBucket(promptTokens)
		for k := b; k >= 0; k-- {
			if w := h.buckets[k]; w != nil && w.n() >= h.minN {
				return w.quantile(h.q) << (b - k), true
			}
		}
	}
	return h.Delay(now)
}

// Allow implements fleet.Hedger: spend one hedge of budget.
func (h *DelayHedger) Allow(sim.Time) bool {
	if h.credit < 1 {
		return false
	}
	h.credit--
	return true
}

// Observe implements fleet.Hedger.
func (h *DelayHedger) Observe(_ sim.Time, ttftMs float64) {
	if ttftMs < 0 {
		h.credit = math.Min(h.burst, h.credit+h.budget)
		return
	}
	if h.adaptive {
		h.all.add(ttftMs)
	}
}

// ObserveFor implements fleet.PromptHedger.
func (h *DelayHedger) ObserveFor(now sim.Time, promptTokens int32, ttftMs float64) {
	h.Observe(now, ttftMs)
	if ttftMs < 0 || h.buckets == nil {
		return
	}
	b := promptBucket(promptTokens)
	if h.buckets[b] == nil {
		h.buckets[b] = &quantileWindow{window: make([]float64, h.size)}
	}
	h.buckets[b].add(ttftMs)
}
