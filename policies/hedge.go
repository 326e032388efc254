package policies

import (
	"math"
	"sort"

	"github.com/fleetsim/fleetsim/models"
	"github.com/fleetsim/fleetsim/sim"
)

// DelayHedger sends a backup copy of a request that has not streamed its first
// token within a delay: a fixed delay, or adaptive — the running quantile
// (default p95) of recent TTFTs, the rule of Dean & Barroso's "The Tail at
// Scale" (CACM 2013; CALIBRATION.md §5: holding the hedge until the p95
// limits extra load to about 5%). A budget caps hedges as a fraction of
// requests: a token bucket where each request earns Budget hedges and the
// bucket holds up to Budget × 1000 (assumption: enough to ride out the
// burst of a replica going bad, not enough to double a fleet's load). With Tied set, both copies go at once and the loser is withdrawn
// when the winner starts (tied requests).
type DelayHedger struct {
	fixed    sim.Time
	adaptive bool
	q        float64
	window   []float64 // ring of recent TTFTs (ms)
	next     int
	filled   bool
	minN     int
	budget   float64
	credit   float64
	burst    float64
	tied     bool
	sorted   []float64
	dirty    bool
	cached   sim.Time
	// onlyStalled, stall: HedgeConfig.OnlyStalled and StallMs.
	onlyStalled bool
	stall       sim.Time
}

var _ models.StallHedger = (*DelayHedger)(nil)

// StallDelay implements models.StallHedger.
func (h *DelayHedger) StallDelay() (sim.Time, bool) { return h.stall, h.onlyStalled }

// NewDelayHedger builds a hedger from its configuration (validated).
func NewDelayHedger(c HedgeConfig) *DelayHedger {
	h := &DelayHedger{fixed: sim.FromSeconds(c.DelayMs / 1000), adaptive: c.Name == HedgeAdaptive,
		q: c.Quantile, minN: c.MinSamples, budget: c.Budget, burst: math.Max(1, c.Budget*1000),
		tied: c.Name == HedgeTied, onlyStalled: c.OnlyStalled, stall: sim.FromSeconds(c.StallMs / 1000)}
	h.credit = h.burst
	if h.adaptive {
		h.window = make([]float64, c.Window)
	}
	return h
}

// Tied implements models.Hedger.
func (h *DelayHedger) Tied() bool { return h.tied }

// Delay implements models.Hedger: the fixed delay, or the running quantile
// of recent TTFTs once MinSamples are in (the fixed delay before that).
func (h *DelayHedger) Delay(sim.Time) (sim.Time, bool) {
	if !h.adaptive {
		return h.fixed, true
	}
	n := h.next
	if h.filled {
		n = len(h.window)
	}
	if n < h.minN {
		return h.fixed, true
	}
	if h.dirty {
		h.sorted = append(h.sorted[:0], h.window[:n]...)
		sort.Float64s(h.sorted)
		idx := int(math.Ceil(h.q*float64(n))) - 1
		h.cached = sim.FromSeconds(h.sorted[max(0, idx)] / 1000)
		h.dirty = false
	}
	return h.cached, true
}

// Allow implements models.Hedger: spend one hedge of budget.
func (h *DelayHedger) Allow(sim.Time) bool {
	if h.credit < 1 {
		return false
	}
	h.credit--
	return true
}

// Observe implements models.Hedger.
func (h *DelayHedger) Observe(_ sim.Time, ttftMs float64) {
	if ttftMs < 0 {
		h.credit = math.Min(h.burst, h.credit+h.budget)
		return
	}
	if !h.adaptive {
		return
	}
	h.window[h.next] = ttftMs
	h.next++
	if h.next == len(h.window) {
		h.next, h.filled = 0, true
	}
	// Re-sort lazily, at most every 1/8 of the window.
	if h.next%max(1, len(h.window)/8) == 0 {
		h.dirty = true
	}
}
