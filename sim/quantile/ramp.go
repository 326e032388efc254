package quantile

import (
	"fmt"
	"math"
)

// RampValue is the j-th value of the ramp AddRamp(a, b, n) records:
// a + b·j, computed in float64 exactly this way.
func RampValue(a, b float64, j int64) float64 { return a + b*float64(j) }

// AddRamp records the n values RampValue(a, b, j) for j = 0..n−1, i.e.
// a, a+b, …, a+b·(n−1): the inter-token gaps of a decode run whose step time
// grows linearly. The result is the one n calls of Add would give (the same
// values in exact mode, the same bucket counts in sketch mode, the same
// Count, Min and Max, hence bit-identical quantiles; Sum is the closed form
// n·a + b·n(n−1)/2, equal up to float rounding). Its cost does not grow with
// n: in sketch mode it is O(1) per bucket the ramp spans (a bucket's first
// and last index come from the closed form, checked against the bucket of
// the value itself), and in exact mode it copies at most the exact limit's
// worth of values before switching to buckets. a and b must be finite and
// non-negative (the gaps of a run do not shrink), and the last value finite;
// anything else is a bug in the caller, and AddRamp panics. n <= 0 records
// nothing.
func (s *Sketch) AddRamp(a, b float64, n int64) {
	if n <= 0 {
		return
	}
	last := RampValue(a, b, n-1)
	if !(a >= 0 && b >= 0 && last <= math.MaxFloat64) {
		panic(fmt.Sprintf("quantile: AddRamp(%v, %v, %d): values must be finite and non-negative, and not shrink", a, b, n))
	}
	if n == 1 {
		s.Add(a)
		return
	}
	if a == 0 {
		a = 0 // -0 → +0
	}
	s.count += uint64(n)
	nf := float64(n)
	s.addNonNeg(nf * a) // both >= 0 (+Inf if they overflow)
	s.addNonNeg(b * nf * (nf - 1) / 2)
	s.minTo(a)
	s.maxTo(last)
	if !s.dense {
		if int64(len(s.values))+n <= int64(s.exactLimit) {
			for j := range n {
				s.values = append(s.values, RampValue(a, b, j))
			}
			s.sorted = false
			return
		}
		s.toSketch()
	}
	s.rampBuckets(a, b, n)
}

// rampBuckets counts the ramp's values in their buckets (sketch mode). The
// values are non-decreasing in j, and so are their buckets, so each bucket
// holds one run of consecutive j; lastIn finds where each run ends.
func (s *Sketch) rampBuckets(a, b float64, n int64) {
	j := int64(0)
	if a == 0 {
		// Zeros: j = 0, and any j with b·j rounding to 0 (b is tiny).
		end := s.lastIn(a, b, 0, n, func(v float64) bool { return v == 0 })
		s.zeros += uint64(end + 1)
		j = end + 1
	}
	for j < n {
		k := s.bucket(RampValue(a, b, j))
		end := s.lastIn(a, b, j, n, func(v float64) bool { return s.bucket(v) <= k })
		s.countIn(k, uint64(end-j+1))
		j = end + 1
	}
}

// lastIn returns the largest index e in [j, n) with in(RampValue(a, b, e)),
// given that in holds at j and that in is monotone (true then false) along
// the ramp. It starts from the closed-form guess — the index where a + b·e
// reaches the bucket's upper edge — and corrects it by a few steps, falling
// back to bisection should the guess be far off.
func (s *Sketch) lastIn(a, b float64, j, n int64, in func(float64) bool) int64 {
	if b == 0 || in(RampValue(a, b, n-1)) {
		return n - 1 // every value equals a, or the whole rest is in
	}
	guess := n - 1
	if v := RampValue(a, b, j); v > 0 {
		upper := math.Exp(float64(s.bucket(v)) * s.logGamma) // bucket's upper edge gamma^k
		if g := math.Floor((upper - a) / b); g < float64(n-1) {
			guess = max(j, int64(g))
		}
	} else {
		guess = j
	}
	ok := func(e int64) bool { return in(RampValue(a, b, e)) }
	for range 4 {
		switch {
		case !ok(guess):
			guess--
		case guess+1 < n && ok(guess+1):
			guess++
		default:
			return guess
		}
	}
	// Bisect: in holds at lo, fails at hi (or hi == n).
	lo, hi := j, n
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if ok(mid) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
