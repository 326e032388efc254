package failures

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/sim"
)

// Repair-time distribution kinds.
const (
	DistFixed     = "fixed"
	DistLognormal = "lognormal"
	DistEmpirical = "empirical"
)

var repairDistNames = []string{DistEmpirical, DistFixed, DistLognormal}

// maxRepairHours caps a drawn repair time (about 11 years) so that a heavy
// lognormal tail cannot overflow simulated time.
const maxRepairHours = 1e5

// RepairConfig is a repair-time distribution in hours (a scenario's
// [failures.repair.ACTION] table).
type RepairConfig struct {
	// Dist is "fixed", "lognormal" or "empirical".
	Dist string `toml:"dist"`
	// Hours is the fixed repair time (dist "fixed"), >= 0.
	Hours float64 `toml:"hours"`
	// MedianHours and MeanHours define a lognormal (dist "lognormal"):
	// 0 < median <= mean; sigma = sqrt(2 ln(mean/median)).
	MedianHours float64 `toml:"median_hours"`
	MeanHours   float64 `toml:"mean_hours"`
	// ValuesHours and Weights define an empirical distribution (dist
	// "empirical"): values >= 0, weights >= 0 with a positive sum (empty:
	// all equal).
	ValuesHours []float64 `toml:"values_hours"`
	Weights     []float64 `toml:"weights"`
}

// Validate records every problem of c under prefix.
func (c *RepairConfig) Validate(prefix string, ps *config.Problems) {
	ps.OneOf(config.Key(prefix, "dist"), c.Dist, repairDistNames)
	switch c.Dist {
	case DistFixed:
		ps.NonNegative(config.Key(prefix, "hours"), c.Hours)
		if c.Hours > maxRepairHours {
			ps.Add(config.Key(prefix, "hours"), "must be at most %g, found %v", float64(maxRepairHours), c.Hours)
		}
	case DistLognormal:
		ps.Positive(config.Key(prefix, "median_hours"), c.MedianHours)
		ps.Positive(config.Key(prefix, "mean_hours"), c.MeanHours)
		if c.MeanHours < c.MedianHours {
			ps.Add(config.Key(prefix, "mean_hours"), "must be >= median_hours (%v) for a lognormal, found %v", c.MedianHours, c.MeanHours)
		}
		if c.MedianHours > maxRepairHours {
			ps.Add(config.Key(prefix, "median_hours"), "must be at most %g, found %v", float64(maxRepairHours), c.MedianHours)
		}
	case DistEmpirical:
		if len(c.ValuesHours) == 0 {
			ps.Add(config.Key(prefix, "values_hours"), "must list at least one repair time")
		}
		for i, v := range c.ValuesHours {
			ps.NonNegative(config.Key(prefix, "values_hours", strconv.Itoa(i)), v)
			if v > maxRepairHours {
				ps.Add(config.Key(prefix, "values_hours", strconv.Itoa(i)), "must be at most %g, found %v", float64(maxRepairHours), v)
			}
		}
		if len(c.Weights) > 0 {
			if len(c.Weights) != len(c.ValuesHours) {
				ps.Add(config.Key(prefix, "weights"), "must have one weight per value (%d), found %d", len(c.ValuesHours), len(c.Weights))
			}
			sum := 0.0
			for i, w := range c.Weights {
				ps.NonNegative(config.Key(prefix, "weights", strconv.Itoa(i)), w)
				sum += w
			}
			if !(sum > 0) {
				ps.Add(config.Key(prefix, "weights"), "must have a positive sum")
			}
		}
	}
}

// Dist builds the distribution; c must be valid.
func (c *RepairConfig) dist() RepairDist {
	switch c.Dist {
	case DistLognormal:
		return LognormalRepair(c.MedianHours, c.MeanHours)
	case DistEmpirical:
		return EmpiricalRepair(c.ValuesHours, c.Weights)
	}
	return FixedRepair(c.Hours)
}

// RepairDist is a repair-time distribution. The zero value is a fixed 0.
type RepairDist struct {
	kind       string
	hours      float64   // fixed
	mu, sigma  float64   // lognormal of hours
	values     []float64 // empirical, hours
	cumWeights []float64 // empirical, cumulative, last = total
}

// FixedRepair always takes hours.
func FixedRepair(hours float64) RepairDist { return RepairDist{kind: DistFixed, hours: hours} }

// LognormalRepair has the given median and mean (hours, 0 < median <=
// mean).
func LognormalRepair(medianHours, meanHours float64) RepairDist {
	return RepairDist{kind: DistLognormal, mu: math.Log(medianHours), sigma: math.Sqrt(2 * math.Log(meanHours/medianHours))}
}

// EmpiricalRepair draws one of values (hours) with the given weights (nil:
// equal).
func EmpiricalRepair(valuesHours, weights []float64) RepairDist {
	d := RepairDist{kind: DistEmpirical, values: slices.Clone(valuesHours), cumWeights: make([]float64, len(valuesHours))}
	sum := 0.0
	for i := range valuesHours {
		w := 1.0
		if len(weights) > 0 {
			w = weights[i]
		}
		sum += w
		d.cumWeights[i] = sum
	}
	return d
}

// Kind is "fixed", "lognormal" or "empirical".
func (d RepairDist) Kind() string {
	if d.kind == "" {
		return DistFixed
	}
	return d.kind
}

// Draw returns one repair time. Fixed distributions draw nothing from rng.
func (d RepairDist) Draw(rng *rand.Rand) sim.Time {
	var h float64
	switch d.kind {
	case DistLognormal:
		h = math.Exp(d.mu + d.sigma*rng.NormFloat64())
	case DistEmpirical:
		u := rng.Float64() * d.cumWeights[len(d.cumWeights)-1]
		i, _ := slices.BinarySearch(d.cumWeights, u)
		for i < len(d.values)-1 && d.cumWeights[i] <= u {
			i++
		}
		h = d.values[i]
	default:
		h = d.hours
	}
	return sim.FromSeconds(min(h, maxRepairHours) * 3600)
}

// MeanHours is the distribution's mean in hours.
func (d RepairDist) MeanHours() float64 {
	switch d.kind {
	case DistLognormal:
		return math.Exp(d.mu + d.sigma*d.sigma/2)
	case DistEmpirical:
		s, prev := 0.0, 0.0
		for i, v := range d.values {
			s += v * (d.cumWeights[i] - prev)
			prev = d.cumWeights[i]
		}
		return s / prev
	}
	return d.hours
}

// String describes the distribution, e.g. "lognormal median 20.4 h, mean 132 h".
func (d RepairDist) String() string {
	switch d.kind {
	case DistLognormal:
		return fmt.Sprintf("lognormal median %.3g h, mean %.3g h", math.Exp(d.mu), d.MeanHours())
	case DistEmpirical:
		return fmt.Sprintf("empirical %d values, mean %.3g h", len(d.values), d.MeanHours())
	}
	return fmt.Sprintf("fixed %.3g h", d.hours)
}

// Time-to-failure distribution kinds.
const (
	TTFExponential = "exponential"
	TTFWeibull     = "weibull"
)

// TTF is the time to failure of one unit. Every unit's mean time to failure
// is 1 / (its rate); the shape sets the hazard: Weibull shape < 1 is infant
// mortality, > 1 wear-out, 1 is the exponential.
type TTF struct {
	// Kind is "exponential" or "weibull".
	Kind string
	// Shape is the Weibull shape k > 0 (ignored for exponential).
	Shape float64
	// InitialAgeHours is the age of every unit at time 0 (Weibull only):
	// a fleet that has been running for a while has left its infant
	// mortality behind. Units replaced after a failure start at age 0.
	InitialAgeHours float64
}

// Exponential is the memoryless default: every component's failures form a
// Poisson process.
func Exponential() TTF { return TTF{Kind: TTFExponential, Shape: 1} }

func (t TTF) weibull() bool { return t.Kind == TTFWeibull && t.Shape != 1 }
