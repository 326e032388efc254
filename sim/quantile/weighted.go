package quantile

import (
	"fmt"
	"math"
)

// AddN records v n times: the result n calls of Add(v) would give (the
// same values in exact mode, the same bucket counts in sketch mode, the same
// Count, Min and Max, hence bit-identical quantiles; Sum is n·v, equal up to
// float rounding), at O(1) in sketch mode. The inter-token gaps of many
// sequences that share a step are one AddN. n == 0 records nothing; v must
// be finite and non-negative (Add's contract).
func (s *Sketch) AddN(v float64, n uint64) {
	if n > 1 && s.dense && v >= 0x1p-1022 && v <= math.MaxFloat64 {
		// Sketch mode and v normal, positive and finite (most gaps of a
		// long run): the path below without the checks for exact mode,
		// -0, 0 and subnormals.
		s.count += n
		s.addNonNeg(v * float64(n)) // > 0 (+Inf if it overflows)
		if v < s.min {
			s.min = v
		}
		if v > s.max {
			s.max = v
		}
		k, d := s.tab.split(v) // bucket, inline
		if !(d > s.tab.bound && d < s.tab.boundHi) {
			k = s.tab.logIndex(v)
		}
		s.countIn(k, n)
		return
	}
	s.addN(v, n)
}

// addN is AddN's general path.
func (s *Sketch) addN(v float64, n uint64) {
	if n == 0 {
		return
	}
	if n == 1 {
		s.Add(v)
		return
	}
	if !(v >= 0 && v <= math.MaxFloat64) {
		panic(fmt.Sprintf("quantile: AddN(%v, %d): value must be finite and non-negative", v, n))
	}
	if v == 0 {
		v = 0 // -0 → +0
	}
	s.count += n
	s.addNonNeg(v * float64(n)) // >= 0 (+Inf if it overflows)
	// v is neither NaN nor -0: plain comparisons are min and max.
	if v < s.min {
		s.min = v
	}
	if v > s.max {
		s.max = v
	}
	if !s.dense {
		if uint64(len(s.values))+n <= uint64(s.exactLimit) {
			for range n {
				s.values = append(s.values, v)
			}
			s.sorted = false
			return
		}
		s.toSketch()
	}
	if v == 0 {
		s.zeros += n
		return
	}
	k, d := s.tab.split(v) // bucket, inline
	if !(d > s.tab.bound && d < s.tab.boundHi) || v < 0x1p-1022 {
		k = s.tab.logIndex(v)
	}
	s.countIn(k, n)
}

// AddRampN records the ramp AddRamp(a, b, k) n times: the gaps of n
// sequences that decode through the same run. It gives what n calls of
// AddRamp would (bit-identical quantiles; Sum up to float rounding) at O(1)
// per bucket the ramp spans, whatever k and n. n == 0 or k <= 0 records
// nothing.
func (s *Sketch) AddRampN(a, b float64, k int64, n uint64) {
	if n == 0 || k <= 0 {
		return
	}
	if n == 1 {
		s.AddRamp(a, b, k)
		return
	}
	if k == 1 {
		s.AddN(a, n)
		return
	}
	last := RampValue(a, b, k-1)
	if !(a >= 0 && b >= 0 && last <= math.MaxFloat64) {
		panic(fmt.Sprintf("quantile: AddRampN(%v, %v, %d, %d): values must be finite and non-negative, and not shrink", a, b, k, n))
	}
	if a == 0 {
		a = 0
	}
	s.count += uint64(k) * n
	kf, nf := float64(k), float64(n)
	s.addNonNeg(nf * kf * a) // both >= 0 (+Inf if they overflow)
	s.addNonNeg(nf * b * kf * (kf - 1) / 2)
	s.minTo(a)
	s.maxTo(last)
	if !s.dense {
		if uint64(len(s.values))+uint64(k)*n <= uint64(s.exactLimit) {
			for range n {
				for j := range k {
					s.values = append(s.values, RampValue(a, b, j))
				}
			}
			s.sorted = false
			return
		}
		s.toSketch()
	}
	j := int64(0)
	if a == 0 {
		end := s.lastIn(a, b, 0, k, func(v float64) bool { return v == 0 })
		s.zeros += uint64(end+1) * n
		j = end + 1
	}
	if j == k {
		return // all zeros
	}
	// The last value's bucket, once: a bucket that is also the last one
	// holds the rest of the ramp (the answer lastIn's first check gives),
	// so most ramps, which lie in one bucket, skip lastIn.
	bLast := s.bucket(last)
	for j < k {
		bk := s.bucket(RampValue(a, b, j))
		end := k - 1
		if bk != bLast {
			end = s.lastIn(a, b, j, k, func(v float64) bool { return s.bucket(v) <= bk })
		}
		s.countIn(bk, uint64(end-j+1)*n)
		j = end + 1
	}
}
