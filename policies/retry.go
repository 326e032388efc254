package policies

import (
	"math"
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
)

// BudgetRetrier retries failed requests on another replica with exponential
// backoff and full jitter (a delay drawn uniformly from [0, min(max,
// base·2^(attempt−1))], from its own seeded stream), at most MaxAttempts
// copies per request, under a retry budget: retries may not exceed Budget
// times the requests seen (a token bucket holding up to Budget × 1000
// retries, as for hedges), so a failing fleet is not flooded with retries.
type BudgetRetrier struct {
	cfg    RetryConfig
	rng    *rand.Rand
	credit float64
	burst  float64
}

var _ fleet.Retrier = (*BudgetRetrier)(nil)

// NewBudgetRetrier builds a retrier drawing jitter from rng.
func NewBudgetRetrier(c RetryConfig, rng *rand.Rand) *BudgetRetrier {
	b := math.Max(1, c.Budget*1000)
	return &BudgetRetrier{cfg: c, rng: rng, credit: b, burst: b}
}

// Observe implements fleet.Retrier.
func (r *BudgetRetrier) Observe(sim.Time) {
	r.credit = math.Min(r.burst, r.credit+r.cfg.Budget)
}

// Retry implements fleet.Retrier.
func (r *BudgetRetrier) Retry(attempts int, _ string, _ sim.Time) (sim.Time, bool) {
	if attempts >= r.cfg.MaxAttempts || r.credit < 1 {
		return 0, false
	}
	r.credit--
	cap := math.Min(r.cfg.BackoffMaxMs, r.cfg.BackoffBaseMs*math.Pow(2, float64(attempts-1)))
	return sim.FromSeconds(r.rng.Float64() * cap / 1000), true
}
