package workloads

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// maxTokens is the largest token count a Request can carry.
const maxTokens = math.MaxInt32

// z99 is the standard normal 99th percentile.
const z99 = 2.3263478740408408

// LengthDist is a distribution of token counts.
//
// Sample returns a count in the distribution's [Min, Max] range (always
// >= 1), drawing only from rng. Implementations are immutable values safe to
// share; Sample does not allocate.
type LengthDist interface {
	Sample(rng *rand.Rand) int32
}

var (
	_ LengthDist = Fixed{}
	_ LengthDist = LogNormal{}
	_ LengthDist = Geometric{}
	_ LengthDist = (*Empirical)(nil)
)

// Fixed always returns Tokens (which must be >= 1).
type Fixed struct {
	Tokens int32
}

// Sample implements LengthDist.
func (f Fixed) Sample(*rand.Rand) int32 { return f.Tokens }

// LogNormal is a log-normal distribution of token counts: exp(N(Mu, Sigma²))
// rounded to the nearest integer and clamped to [Min, Max]. Build one from a
// mean and a p99, or a mean and a CV, with NewLogNormalMeanP99 and
// NewLogNormalMeanCV. Clamping moves the mean when the bounds cut into the
// distribution's mass; choose bounds well outside [p1, p99.9] to keep it.
type LogNormal struct {
	Mu, Sigma float64 // parameters of the underlying normal (log tokens)
	Min, Max  int32   // clamp bounds, tokens; 1 <= Min <= Max
}

// NewLogNormalMeanP99 returns the log-normal with the given mean and 99th
// percentile (both in tokens, before clamping). It needs
// mean < p99 <= mean·e^(z²/2) ≈ 14.97·mean (z = 2.326, the normal p99):
// beyond that no log-normal has both. Of the two log-normals that match, it
// returns the one with the smaller sigma (the other has a larger sigma and a
// median far below the mean).
func NewLogNormalMeanP99(mean, p99 float64, minTokens, maxTokens int32) (LogNormal, error) {
	if !(mean > 0) || math.IsInf(mean, 0) {
		return LogNormal{}, fmt.Errorf("workloads: lognormal mean must be a finite number > 0, found %v", mean)
	}
	r := math.Log(p99 / mean)
	if !(r > 0) || r > z99*z99/2 || math.IsInf(p99, 0) {
		return LogNormal{}, fmt.Errorf("workloads: lognormal p99 must be in (mean, %.4g·mean] = (%v, %.6g], found %v",
			math.Exp(z99*z99/2), mean, mean*math.Exp(z99*z99/2), p99)
	}
	// ln p99 - ln mean = z·σ - σ²/2  →  σ = z - sqrt(z² - 2r).
	sigma := z99 - math.Sqrt(z99*z99-2*r)
	return newLogNormal(math.Log(mean)-sigma*sigma/2, sigma, minTokens, maxTokens)
}

// NewLogNormalMeanCV returns the log-normal with the given mean (tokens,
// before clamping) and coefficient of variation (standard deviation / mean).
func NewLogNormalMeanCV(mean, cv float64, minTokens, maxTokens int32) (LogNormal, error) {
	if !(mean > 0) || math.IsInf(mean, 0) || !(cv > 0) || math.IsInf(cv, 0) {
		return LogNormal{}, fmt.Errorf("workloads: lognormal mean and cv must be finite numbers > 0, found %v and %v", mean, cv)
	}
	s2 := math.Log1p(cv * cv)
	return newLogNormal(math.Log(mean)-s2/2, math.Sqrt(s2), minTokens, maxTokens)
}

func newLogNormal(mu, sigma float64, lo, hi int32) (LogNormal, error) {
	if err := checkBounds(lo, hi); err != nil {
		return LogNormal{}, err
	}
	return LogNormal{Mu: mu, Sigma: sigma, Min: lo, Max: hi}, nil
}

// Mean returns the mean of the unclamped distribution, tokens.
func (l LogNormal) Mean() float64 { return math.Exp(l.Mu + l.Sigma*l.Sigma/2) }

// Quantile returns the p-quantile of the unclamped distribution, tokens.
func (l LogNormal) Quantile(p float64) float64 {
	return math.Exp(l.Mu + l.Sigma*math.Sqrt2*math.Erfinv(2*p-1))
}

// Sample implements LengthDist.
func (l LogNormal) Sample(rng *rand.Rand) int32 {
	return roundTokens(math.Exp(l.Mu+l.Sigma*rng.NormFloat64()), l.Min, l.Max)
}

// roundTokens is clampTokens(math.Round(x), lo, hi) for x >= 0 (or NaN),
// without Round where x < hi: there x − t is exact, so t = trunc(x) plus
// one at a fraction of 1/2 or more is Round(x) (halves away from zero),
// and t <= hi.
func roundTokens(x float64, lo, hi int32) int32 {
	if x >= 0 && x < float64(hi) {
		t := int32(x)
		if x-float64(t) >= 0.5 {
			t++
		}
		return max(t, lo)
	}
	return clampTokens(math.Round(x), lo, hi)
}

// Geometric is a geometric distribution on 1, 2, 3, ... with the given mean
// (>= 1), clamped to [Min, Max]: the count of trials up to and including the
// first success when each succeeds with probability 1/Mean. It suits counts
// with a constant chance of stopping, such as turns in a conversation.
type Geometric struct {
	Mean     float64 // mean before clamping, >= 1
	Min, Max int32   // clamp bounds; 1 <= Min <= Max
}

// Sample implements LengthDist.
func (g Geometric) Sample(rng *rand.Rand) int32 {
	if g.Mean <= 1 {
		return clampTokens(1, g.Min, g.Max)
	}
	// Inverse CDF: 1 + floor(ln U / ln(1-p)), U in (0, 1].
	k := 1 + math.Floor(math.Log(1-rng.Float64())/math.Log1p(-1/g.Mean))
	return clampTokens(k, g.Min, g.Max)
}

// Empirical draws from a finite list of values with given weights. Build it
// with NewEmpirical.
type Empirical struct {
	values []int32
	cum    *categorical
}

// NewEmpirical returns the distribution that draws values[i] with probability
// weights[i]/sum(weights); nil or empty weights mean equal weights. Values
// are clamped to [minTokens, maxTokens] first. values must be non-empty;
// weights, when given, must have the same length, be finite and >= 0, and
// not all 0. The slices are copied.
func NewEmpirical(values []int32, weights []float64, minTokens, maxTokens int32) (*Empirical, error) {
	if err := checkBounds(minTokens, maxTokens); err != nil {
		return nil, err
	}
	if len(values) == 0 {
		return nil, errors.New("workloads: empirical distribution needs at least one value")
	}
	if len(weights) != 0 && len(weights) != len(values) {
		return nil, fmt.Errorf("workloads: empirical distribution has %d values but %d weights", len(values), len(weights))
	}
	e := &Empirical{values: make([]int32, len(values))}
	for i, v := range values {
		e.values[i] = clampTokens(float64(v), minTokens, maxTokens)
	}
	if len(weights) != 0 {
		c, err := newCategorical(weights)
		if err != nil {
			return nil, err
		}
		e.cum = c
	}
	return e, nil
}

// Sample implements LengthDist.
func (e *Empirical) Sample(rng *rand.Rand) int32 {
	if e.cum == nil {
		return e.values[rng.IntN(len(e.values))]
	}
	return e.values[e.cum.sample(rng)]
}

// categorical draws index i with probability w[i]/sum(w), by binary search
// over cumulative weights (O(log n), no allocation).
type categorical struct {
	cum []float64
}

func newCategorical(w []float64) (*categorical, error) {
	c := &categorical{cum: make([]float64, len(w))}
	var sum float64
	for i, x := range w {
		if !(x >= 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("workloads: weight %d must be a finite number >= 0, found %v", i, x)
		}
		sum += x
		c.cum[i] = sum
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return nil, fmt.Errorf("workloads: weights must have a finite sum > 0, found %v", sum)
	}
	return c, nil
}

func (c *categorical) sample(rng *rand.Rand) int {
	u := rng.Float64() * c.cum[len(c.cum)-1]
	// First index whose cumulative weight exceeds u: zero weights never win.
	lo, hi := 0, len(c.cum)-1 // the last index always qualifies (u < sum)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if c.cum[mid] > u {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func checkBounds(lo, hi int32) error {
	if lo < 1 || hi < lo {
		return fmt.Errorf("workloads: token bounds must satisfy 1 <= min <= max, found min %d, max %d", lo, hi)
	}
	return nil
}

// clampTokens converts an integral x to a token count in [lo, hi]; ±Inf
// clamp to the nearer bound and NaN to lo. It does not round.
func clampTokens(x float64, lo, hi int32) int32 {
	switch {
	case x >= float64(hi):
		return hi
	case x >= float64(lo):
		return int32(x)
	default:
		return lo
	}
}

// MeanOf is d's mean, estimated from 200,000 draws of a fixed seed (the
// same estimate every time; within about 0.5% for the distributions here,
// exact for Fixed).
func MeanOf(d LengthDist) float64 {
	if f, ok := d.(Fixed); ok {
		return float64(f.Tokens)
	}
	rng := rand.New(rand.NewPCG(0x6d65616e, 1))
	const n = 200_000
	var sum float64
	for i := 0; i < n; i++ {
		sum += float64(d.Sample(rng))
	}
	return sum / n
}
