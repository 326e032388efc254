package workloads

import (
	"math"
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/sim"
)

// diurnalSegsPerPeriod is how many segments diurnalSegs cuts a period into:
// over 1/1024 of a period the rate moves by at most 2π/1024 ≈ 0.6% of
// Amplitude·MeanRatePerS, so few draws fall between a segment's bounds.
const diurnalSegsPerPeriod = 1024

// diurnalSegs draws Diurnal's arrivals with the bounds of its rate over the
// current segment of the period cached: a candidate whose draw lies at or
// below the segment's least rate is accepted, and one above its greatest
// rejected, without the cosine. The bounds are conservative (below), so
// every decision, and so every arrival, is Diurnal.NextArrival's from the
// same draws (TestDiurnalSegsMatchesDiurnal). A workload's source holds its
// own (the cache is not safe for concurrent use).
type diurnalSegs struct {
	d      Diurnal
	peak   float64 // the thinned process's rate, as Diurnal computes it
	low    float64 // Diurnal's global lower bound
	w      float64 // radians per second, as Diurnal computes it
	segNs  int64   // segment length
	seg    int64   // the segment lo and hi are for; −1 before the first
	lo, hi float64 // bounds of the computed rate over segment seg
}

// newDiurnalSegs returns d's process with segment bounds. It panics where
// d.NextArrival would.
func newDiurnalSegs(d Diurnal) *diurnalSegs {
	d.mustValid()
	s := &diurnalSegs{d: d, peak: d.rateOf(1), low: d.rateOf(-1), w: d.radPerS(), seg: -1}
	// At least 16 mean candidate gaps a segment, so that a short period at
	// a low rate does not recompute the bounds for every candidate (its
	// bounds are then loose, which costs cosines, not correctness).
	segS := max(d.PeriodS/diurnalSegsPerPeriod, 16/s.peak)
	s.segNs = int64(min(math.Ceil(segS*1e9), 1<<62))
	return s
}

// NextArrival implements ArrivalProcess.
func (s *diurnalSegs) NextArrival(rng *rand.Rand, prev sim.Time) sim.Time {
	t := prev
	for {
		t = addSeconds(t, rng.ExpFloat64()/s.peak)
		if t == sim.Forever {
			return t
		}
		u := rng.Float64() * s.peak
		if u <= s.low {
			return t
		}
		if t >= 0 {
			if k := int64(t) / s.segNs; k != s.seg {
				s.bounds(k)
			}
			if u <= s.lo {
				return t
			}
			if u > s.hi {
				continue
			}
		}
		if u <= s.d.rateOf(math.Cos(s.d.phase(s.w, t))) {
			return t
		}
	}
}

// bounds sets lo and hi to bounds of the rate Diurnal computes at any time
// of segment k, [k·segNs, (k+1)·segNs]. Over it the computed phase lies in
// [phase(a), phase(b)] (phase is monotone), where the true cosine's extremes
// are at the ends or at a multiple of π inside; math.Cos is within a few
// 1e-16 of the true cosine, so widening the extremes by 1e-12 bounds every
// computed cosine, and rateOf, monotone, turns them into bounds of every
// computed rate of the segment.
func (s *diurnalSegs) bounds(k int64) {
	s.seg = k
	d := &s.d
	a := sim.Time(k * s.segNs)
	b := sim.Forever
	if a <= sim.Forever-sim.Time(s.segNs) {
		b = a + sim.Time(s.segNs)
	}
	xa, xb := d.phase(s.w, a), d.phase(s.w, b)
	cmin, cmax := -1.0, 1.0
	if xb-xa < math.Pi && math.Abs(xa) < 1<<50 && math.Abs(xb) < 1<<50 {
		ca, cb := math.Cos(xa), math.Cos(xb)
		cmin, cmax = min(ca, cb), max(ca, cb)
		// A multiple jπ within the segment (or within slack of it, which
		// only widens the bounds) is a maximum for even j, a minimum for
		// odd j.
		slack := 1e-9 * (1 + math.Abs(xa) + math.Abs(xb))
		for j := math.Floor((xa - slack) / math.Pi); j*math.Pi <= xb+slack; j++ {
			if j*math.Pi < xa-slack {
				continue
			}
			if int64(j)&1 == 0 {
				cmax = 1
			} else {
				cmin = -1
			}
		}
	}
	s.lo, s.hi = d.rateOf(cmin-1e-12), d.rateOf(cmax+1e-12)
}
