package workloads

import (
	"math"
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/sim"
)

// ArrivalProcess generates arrival times one after another.
//
// NextArrival returns the first arrival after one at prev (prev is 0 for
// the first arrival of a run, which then falls at the first gap, not at 0).
// The result is >= prev; it is sim.Forever when the next arrival lies beyond
// the range of sim.Time. Implementations are immutable values: all
// randomness comes from rng, and the same rng state gives the same result.
type ArrivalProcess interface {
	NextArrival(rng *rand.Rand, prev sim.Time) sim.Time
}

var (
	_ ArrivalProcess = Constant{}
	_ ArrivalProcess = Closed{}
	_ ArrivalProcess = Poisson{}
	_ ArrivalProcess = Gamma{}
	_ ArrivalProcess = Diurnal{}
)

// Poisson is a homogeneous Poisson process: exponential interarrival times
// with mean 1/RatePerS seconds. RatePerS must be a finite number > 0
// (NextArrival panics otherwise; Config.Validate checks it first).
type Poisson struct {
	RatePerS float64 // mean arrival rate, requests per second
}

// NextArrival implements ArrivalProcess.
func (p Poisson) NextArrival(rng *rand.Rand, prev sim.Time) sim.Time {
	mustPositive("Poisson.RatePerS", p.RatePerS)
	return addSeconds(prev, rng.ExpFloat64()/p.RatePerS)
}

// Constant sends requests evenly spaced, 1/RatePerS seconds apart (the
// first at 1/RatePerS). RatePerS must be a finite number > 0 (NextArrival
// panics otherwise).
type Constant struct {
	RatePerS float64 // requests per second
}

// NextArrival implements ArrivalProcess.
func (c Constant) NextArrival(_ *rand.Rand, prev sim.Time) sim.Time {
	mustPositive("Constant.RatePerS", c.RatePerS)
	return addSeconds(prev, 1/c.RatePerS)
}

// Staged is a load in stages: stage i runs until Ends[i] at Rates[i]
// requests per second, as a Poisson process or, with Constant, evenly
// spaced (a stage's first arrival 1/rate after its start). Past the last
// stage nothing arrives (sim.Forever). Rates are > 0, Ends increasing.
type Staged struct {
	Constant bool
	Ends     []sim.Time
	Rates    []float64
}

// NextArrival implements ArrivalProcess. A Poisson stage's draw that
// lands past its end restarts at the end with the next stage's rate: the
// process is memoryless, so that is exact.
func (s Staged) NextArrival(rng *rand.Rand, prev sim.Time) sim.Time {
	t := prev
	for i, end := range s.Ends {
		if end <= t {
			continue
		}
		var gap float64
		if s.Constant {
			gap = 1 / s.Rates[i]
		} else {
			gap = rng.ExpFloat64() / s.Rates[i]
		}
		if next := addSeconds(t, gap); next <= end {
			return next
		}
		t = end
	}
	return sim.Forever
}

// Closed makes every request ready at time 0: a closed loop's clients
// (Config.Concurrency) decide when each is sent. It draws nothing.
type Closed struct{}

// NextArrival implements ArrivalProcess: always prev.
func (Closed) NextArrival(_ *rand.Rand, prev sim.Time) sim.Time { return prev }

// Gamma is a renewal process with gamma-distributed interarrival times of
// mean 1/RatePerS seconds and coefficient of variation CV (standard
// deviation / mean). CV = 1 is a Poisson process, CV < 1 is smoother, CV > 1
// is burstier (the shape is 1/CV²). Both fields must be finite and > 0
// (NextArrival panics otherwise). Very large CVs (> 10) give many
// zero-length gaps after rounding to nanoseconds; the mean rate still holds.
type Gamma struct {
	RatePerS float64 // mean arrival rate, requests per second
	CV       float64 // coefficient of variation of the interarrival time
}

// NextArrival implements ArrivalProcess.
func (g Gamma) NextArrival(rng *rand.Rand, prev sim.Time) sim.Time {
	mustPositive("Gamma.RatePerS", g.RatePerS)
	mustPositive("Gamma.CV", g.CV)
	shape := 1 / (g.CV * g.CV)
	// Mean of Gamma(shape, scale) is shape*scale = 1/rate.
	return addSeconds(prev, sampleGamma(rng, shape)/(shape*g.RatePerS))
}

// Diurnal is a non-homogeneous Poisson process whose rate follows a sinusoid:
//
//	rate(t) = MeanRatePerS · (1 + Amplitude · cos(2π (t − PhaseS) / PeriodS))
//
// with t in seconds from the start of the run, so the rate peaks at
// (1+Amplitude)·MeanRatePerS at t = PhaseS (and every PeriodS after) and
// bottoms out at (1−Amplitude)·MeanRatePerS half a period later. Over whole
// periods the mean rate is MeanRatePerS. It is sampled exactly by thinning
// a Poisson process of rate (1+Amplitude)·MeanRatePerS.
// MeanRatePerS and PeriodS must be finite and > 0, Amplitude in [0, 1],
// PhaseS finite (NextArrival panics otherwise).
type Diurnal struct {
	MeanRatePerS float64 // mean arrival rate over a period, requests per second
	Amplitude    float64 // relative swing of the rate, 0 (flat) .. 1 (down to zero)
	PeriodS      float64 // period of the cycle, seconds (86400 for a day)
	PhaseS       float64 // time of the first peak, seconds from the start
}

// NextArrival implements ArrivalProcess.
func (d Diurnal) NextArrival(rng *rand.Rand, prev sim.Time) sim.Time {
	d.mustValid()
	peak := d.rateOf(1)
	// low is the least rate the loop can compute, the rate at cos = −1
	// with the same operations: math.Cos lies in [−1, 1] and rateOf is
	// monotone in its argument. A candidate whose draw is at most low is
	// accepted without the cosine (the draws, and so the arrivals, are the
	// same).
	low := d.rateOf(-1)
	w := d.radPerS()
	t := prev
	for {
		t = addSeconds(t, rng.ExpFloat64()/peak)
		if t == sim.Forever {
			return t
		}
		u := rng.Float64() * peak
		if u <= low {
			return t
		}
		if u <= d.rateOf(math.Cos(d.phase(w, t))) {
			return t
		}
	}
}

// mustValid panics unless d's fields are in their ranges (see Diurnal).
func (d *Diurnal) mustValid() {
	mustPositive("Diurnal.MeanRatePerS", d.MeanRatePerS)
	mustPositive("Diurnal.PeriodS", d.PeriodS)
	if !(d.Amplitude >= 0 && d.Amplitude <= 1) || math.IsNaN(d.PhaseS) || math.IsInf(d.PhaseS, 0) {
		panic("workloads: Diurnal with amplitude outside [0, 1] or non-finite phase")
	}
}

// rateOf is the rate, per second, where the cosine of the phase is c:
// MeanRatePerS·(1 + Amplitude·c). Every rate a diurnal process compares a
// draw with is computed by it, and it is monotone in c (Amplitude >= 0,
// MeanRatePerS > 0, and rounding is monotone), so rates at bounds of c
// bound the rates it computes (Diurnal's low, diurnalSegs' segments).
func (d *Diurnal) rateOf(c float64) float64 { return d.MeanRatePerS * (1 + d.Amplitude*c) }

// radPerS is the phase's speed, radians per second.
func (d *Diurnal) radPerS() float64 { return 2 * math.Pi / d.PeriodS }

// phase is the phase at t, radians from a peak, for w = radPerS(); it is
// monotone in t (each operation rounds monotonically).
func (d *Diurnal) phase(w float64, t sim.Time) float64 { return w * (t.Seconds() - d.PhaseS) }

// addSeconds returns t + s seconds rounded to the nanosecond, saturating at
// sim.Forever instead of overflowing.
func addSeconds(t sim.Time, s float64) sim.Time {
	ns := roundNonNeg(s * 1e9)
	if ns >= float64(sim.Forever-t) {
		return sim.Forever
	}
	return t + sim.Time(ns)
}

// roundNonNeg is math.Round(x), without Round for 0 < x < 2^62 (an
// interarrival time in ns): there x − n is exact (n = x for x >= 2^53,
// where x is an integer), so n = trunc(x) plus one at a fraction of 1/2 or
// more is Round(x) (halves away from zero).
func roundNonNeg(x float64) float64 {
	if x > 0 && x < 1<<62 {
		n := int64(x)
		if x-float64(n) >= 0.5 {
			n++
		}
		return float64(n)
	}
	return math.Round(x)
}

func mustPositive(name string, v float64) {
	if !(v > 0) || math.IsInf(v, 0) {
		panic("workloads: " + name + " must be a finite number > 0")
	}
}

// sampleGamma draws from Gamma(shape, 1) by Marsaglia and Tsang (2000), with
// the U^(1/shape) boost for shape < 1. It draws only from rng and does not
// allocate.
func sampleGamma(rng *rand.Rand, shape float64) float64 {
	if shape == 1 {
		return rng.ExpFloat64()
	}
	boost := 1.0
	if shape < 1 {
		// Gamma(a) = Gamma(a+1) · U^(1/a); in log space to delay underflow.
		boost = math.Exp(math.Log(1-rng.Float64()) / shape)
		shape++
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		x2 := x * x
		if u < 1-0.0331*x2*x2 || math.Log(u) < 0.5*x2+d*(1-v+math.Log(v)) {
			return boost * d * v
		}
	}
}
