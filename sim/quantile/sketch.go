package quantile

import (
	"fmt"
	"math"
	"slices"
)

// Defaults for New.
const (
	// DefaultAlpha is the relative accuracy of sketch mode: 0.01 = 1%.
	DefaultAlpha = 0.01
	// DefaultExactLimit is how many values a Sketch keeps verbatim (8 bytes
	// each) before it switches to buckets.
	DefaultExactLimit = 4096
)

// initialBins is how many buckets the first bucketed value allocates (half
// below it, half above); growth past the ends adds at least growMinBins.
const (
	initialBins = 128
	growMinBins = 32
)

// Option configures New.
type Option func(*config)

type config struct {
	alpha      float64
	exactLimit int
}

// WithAlpha sets the relative accuracy of sketch mode, in (0, 1). Memory in
// sketch mode grows as about 1/alpha buckets per factor e of value range.
func WithAlpha(alpha float64) Option { return func(c *config) { c.alpha = alpha } }

// WithExactLimit sets how many values are kept verbatim (quantiles exact)
// before switching to sketch mode; 0 means sketch mode from the first value.
func WithExactLimit(n int) Option { return func(c *config) { c.exactLimit = n } }

// Sketch is a mergeable streaming quantile sketch of non-negative values; see
// the package documentation for its two modes and its accuracy guarantee. The
// zero Sketch is not usable: make one with New. A Sketch is not safe for
// concurrent use, not even for concurrent reads (Quantile sorts in place).
type Sketch struct {
	alpha       float64
	gamma       float64
	logGamma    float64 // ln(gamma)
	invLogGamma float64 // 1/ln(gamma)
	estScale    float64 // 2/(gamma+1): bucket i estimates estScale*gamma^i
	exactLimit  int
	minBucket   int          // buckets of the smallest and largest positive float64:
	maxBucket   int          // growth slack never goes past them
	tab         *bucketTable // shared by every Sketch with this alpha

	// Exact mode: every value, in arrival order until sorted by Quantile.
	values []float64
	sorted bool

	// Sketch mode (dense == true): bins[j] counts bucket offset+j; values
	// equal to 0 are counted in zeros.
	dense  bool
	bins   []uint64
	offset int
	zeros  uint64

	count   uint64
	sum     float64 // Neumaier-compensated: the sum is sum+sumComp
	sumComp float64
	min     float64 // +Inf while empty
	max     float64 // -Inf while empty
}

// New returns an empty Sketch in exact mode with relative accuracy
// DefaultAlpha and exact limit DefaultExactLimit unless options say otherwise.
// It panics if alpha is not in (0, 1) or the exact limit is negative: both
// are program constants or come from validated configuration.
func New(opts ...Option) *Sketch {
	c := config{alpha: DefaultAlpha, exactLimit: DefaultExactLimit}
	for _, o := range opts {
		o(&c)
	}
	if !(c.alpha > 0 && c.alpha < 1) {
		panic(fmt.Sprintf("quantile: alpha %v outside (0, 1)", c.alpha))
	}
	if c.exactLimit < 0 {
		panic(fmt.Sprintf("quantile: negative exact limit %d", c.exactLimit))
	}
	gamma := (1 + c.alpha) / (1 - c.alpha)
	invLogGamma := 1 / math.Log(gamma)
	s := &Sketch{
		alpha:       c.alpha,
		gamma:       gamma,
		logGamma:    math.Log(gamma),
		invLogGamma: invLogGamma,
		estScale:    2 / (gamma + 1),
		exactLimit:  c.exactLimit,
		tab:         tableFor(c.alpha, invLogGamma),
	}
	s.minBucket = s.bucket(math.SmallestNonzeroFloat64)
	s.maxBucket = s.bucket(math.MaxFloat64)
	s.Reset()
	return s
}

// Alpha is the relative accuracy of sketch mode.
func (s *Sketch) Alpha() float64 { return s.alpha }

// ExactLimit is the number of values kept verbatim before sketch mode.
func (s *Sketch) ExactLimit() int { return s.exactLimit }

// IsExact reports whether the sketch still holds every value, so that
// quantiles are exact.
func (s *Sketch) IsExact() bool { return !s.dense }

// NumBuckets is the length of the dense bucket slice (its memory is 8 bytes a
// bucket); 0 in exact mode.
func (s *Sketch) NumBuckets() int { return len(s.bins) }

// Count is the number of values added (including merged ones).
func (s *Sketch) Count() uint64 { return s.count }

// Sum is the sum of the values, compensated for rounding (Neumaier); 0 when
// empty.
func (s *Sketch) Sum() float64 { return s.sum + s.sumComp }

// Mean is Sum()/Count(), or NaN when empty.
func (s *Sketch) Mean() float64 {
	if s.count == 0 {
		return math.NaN()
	}
	return s.Sum() / float64(s.count)
}

// Min is the smallest value added, exactly, or NaN when empty.
func (s *Sketch) Min() float64 {
	if s.count == 0 {
		return math.NaN()
	}
	return s.min
}

// Max is the largest value added, exactly, or NaN when empty.
func (s *Sketch) Max() float64 {
	if s.count == 0 {
		return math.NaN()
	}
	return s.max
}

// Reset empties the sketch and returns it to exact mode, keeping its options
// and, where it can, its allocated memory.
func (s *Sketch) Reset() {
	s.values = s.values[:0]
	s.sorted = true
	s.dense = false
	s.bins = s.bins[:0]
	s.offset = 0
	s.zeros = 0
	s.count = 0
	s.sum, s.sumComp = 0, 0
	s.min = math.Inf(1)
	s.max = math.Inf(-1)
}

// Clone returns a deep copy of s.
func (s *Sketch) Clone() *Sketch {
	c := *s
	c.values = slices.Clone(s.values)
	c.bins = slices.Clone(s.bins)
	return &c
}

// Add records v. It panics if v is NaN, negative or +Inf (a bug in the
// caller: latencies are finite and non-negative). -0 is recorded as 0.
func (s *Sketch) Add(v float64) {
	if s.dense && v >= 0x1p-1022 && v <= math.MaxFloat64 {
		// Sketch mode and v normal, positive and finite (most values of
		// a long run): add's path without the checks for exact mode, -0,
		// 0 and subnormals (those take add). It is addCounted written
		// out: a call to it (it does not inline) cost 0.35% more
		// instructions on the 70B fleet.
		k, d := s.tab.split(v) // normalIndex, inline
		if !(d > s.tab.bound && d < s.tab.boundHi) {
			k = s.tab.logIndex(v)
		}
		s.count++
		s.addNonNeg(v)
		if v < s.min {
			s.min = v
		}
		if v > s.max {
			s.max = v
		}
		if i := uint(k - s.offset); i < uint(len(s.bins)) { // countIn(k, 1), one bounds check
			s.bins[i]++
		} else {
			s.growOne(k)
		}
		return
	}
	s.add(v)
}

// add is Add's general path.
func (s *Sketch) add(v float64) {
	if !(v >= 0 && v <= math.MaxFloat64) {
		panic(fmt.Sprintf("quantile: Add(%v): value must be finite and non-negative", v))
	}
	if v == 0 {
		v = 0 // -0 → +0
	}
	s.count++
	s.addNonNeg(v)
	if v < s.min {
		s.min = v
	}
	if v > s.max {
		s.max = v
	}
	if !s.dense {
		if len(s.values) < s.exactLimit {
			s.values = append(s.values, v)
			s.sorted = false
			return
		}
		s.toSketch()
	}
	// addValue, with bucket's fast path, inline (two calls fewer per value).
	if v == 0 {
		s.zeros++
		return
	}
	k, d := s.tab.split(v) // bucket, inline
	if !(d > s.tab.bound && d < s.tab.boundHi) || v < 0x1p-1022 {
		k = s.tab.logIndex(v)
	}
	s.countIn(k, 1)
}

// AddTwo records v in s and in t: what s.Add(v) and t.Add(v) would, with
// v's bucket computed once when both sketches are in sketch mode and share
// their bucket table (one alpha). A completed request's TTFT goes to two
// sketches (TTFT and the client's TTFT).
func AddTwo(s, t *Sketch, v float64) {
	if !(s.dense && t.dense && s.tab == t.tab && v >= 0x1p-1022 && v <= math.MaxFloat64) {
		s.Add(v)
		t.Add(v)
		return
	}
	k, d := s.tab.split(v) // bucket, inline (v is normal)
	if !(d > s.tab.bound && d < s.tab.boundHi) {
		k = s.tab.logIndex(v)
	}
	s.addCounted(v, k)
	t.addCounted(v, k)
}

// addCounted is Add's work for v > 0, finite, in sketch mode, whose bucket
// k the caller computed.
func (s *Sketch) addCounted(v float64, k int) {
	s.count++
	s.addNonNeg(v)
	if v < s.min {
		s.min = v
	}
	if v > s.max {
		s.max = v
	}
	if i := uint(k - s.offset); i < uint(len(s.bins)) { // countIn(k, 1), one bounds check
		s.bins[i]++
	} else {
		s.growOne(k)
	}
}

// Merge adds every value recorded in other to s; other is not changed (it may
// be s itself). Both must have the same alpha, or Merge panics. The result
// stays exact if both are exact and the total count is within s's exact
// limit. With equal options, merging in any grouping gives the same buckets,
// Count, Min, Max and quantiles as adding all values to one sketch; Sum is a
// float sum (see the package documentation).
func (s *Sketch) Merge(other *Sketch) {
	if other == nil || other.count == 0 {
		return
	}
	if other.alpha != s.alpha {
		panic(fmt.Sprintf("quantile: Merge of sketches with different alpha (%v, %v)", s.alpha, other.alpha))
	}
	if other == s {
		other = s.Clone()
	}
	s.count += other.count
	s.addSum(other.sum)
	s.sumComp += other.sumComp
	s.min = math.Min(s.min, other.min)
	s.max = math.Max(s.max, other.max)

	if !s.dense && !other.dense && len(s.values)+len(other.values) <= s.exactLimit {
		s.values = append(s.values, other.values...)
		s.sorted = false
		return
	}
	if !s.dense {
		s.toSketch()
	}
	if !other.dense {
		for _, v := range other.values {
			s.addValue(v)
		}
		return
	}
	s.zeros += other.zeros
	lo, hi := 0, len(other.bins)-1
	for lo <= hi && other.bins[lo] == 0 {
		lo++
	}
	for hi >= lo && other.bins[hi] == 0 {
		hi--
	}
	if lo > hi {
		return
	}
	s.cover(other.offset+lo, other.offset+hi)
	d := other.offset - s.offset
	for j := lo; j <= hi; j++ {
		s.bins[j+d] += other.bins[j]
	}
}

// Quantile returns the q-quantile of the values added, q in [0, 1] (0.99 for
// p99), by the type-7 rule described in the package documentation: exact in
// exact mode, within relative error alpha in sketch mode. It returns NaN when
// the sketch is empty and panics if q is outside [0, 1].
func (s *Sketch) Quantile(q float64) float64 {
	if !(q >= 0 && q <= 1) {
		panic(fmt.Sprintf("quantile: Quantile(%v): q outside [0, 1]", q))
	}
	n := s.count
	if n == 0 {
		return math.NaN()
	}
	h := q * float64(n-1)
	l := math.Floor(h)
	frac := h - l
	r := uint64(l)
	if r >= n-1 { // q == 1, or rounding at the top
		r, frac = n-1, 0
	}
	r2 := r
	if frac > 0 {
		r2 = r + 1
	}

	var a, b float64
	if !s.dense {
		if !s.sorted {
			slices.Sort(s.values)
			s.sorted = true
		}
		a, b = s.values[r], s.values[r2]
	} else {
		a, b = s.rankValues(r, r2)
	}
	if frac == 0 {
		return a
	}
	v := a + frac*(b-a)
	return math.Min(math.Max(v, a), b) // keep rounding from leaving [a, b]
}

// rankValues returns the estimates of the values of 0-based ranks r1 <= r2 in
// sketch mode. Ranks 0 and count-1 are the exact Min and Max; the others are
// bucket estimates clamped to [Min, Max], which only moves them closer.
func (s *Sketch) rankValues(r1, r2 uint64) (v1, v2 float64) {
	cum := s.zeros
	found1 := r1 < cum // v1 = 0
	if r2 >= cum {
		for j, c := range s.bins {
			if c == 0 {
				continue
			}
			cum += c
			if !found1 && r1 < cum {
				v1 = s.estimate(s.offset + j)
				found1 = true
			}
			if r2 < cum {
				v2 = s.estimate(s.offset + j)
				break
			}
		}
	}
	return s.fixRank(r1, v1), s.fixRank(r2, v2)
}

func (s *Sketch) fixRank(r uint64, v float64) float64 {
	switch {
	case r == 0:
		return s.min
	case r == s.count-1:
		return s.max
	}
	return math.Min(math.Max(v, s.min), s.max)
}

// estimate is the value bucket k stands for: 2*gamma^k/(gamma+1).
func (s *Sketch) estimate(k int) float64 {
	return s.estScale * math.Exp(float64(k)*s.logGamma)
}

// bucket is the index of the bucket holding v > 0: ceil(log_gamma(v)),
// defined as ceil(Log(v)·invLogGamma) and computed from v's bits by the
// shared table: bucketTable.index, inline (the same index for every v).
//
// (A one-bucket memo, which skipped the logarithm for a value in the
// previous value's bucket, no longer pays: with it, Fleet8x8B -short ran
// the same instructions within the runs' ±0.3% noise.)
func (s *Sketch) bucket(v float64) int {
	k, d := s.tab.split(v)
	if !(d > s.tab.bound && d < s.tab.boundHi) || v < 0x1p-1022 { // near an edge, or subnormal: index's slow path
		k = s.tab.logIndex(v)
	}
	return k
}

// addNonNeg is addSum for v >= 0 (±0 and +Inf included; not NaN): |v| is
// v, and |sum| >= v exactly when sum >= v or sum <= −v (both false for a
// NaN sum, as |NaN| >= v is), so the same branch and the same operations
// without two absolute values.
func (s *Sketch) addNonNeg(v float64) {
	sum := s.sum
	t := sum + v
	if sum >= v || sum <= -v {
		s.sumComp += (sum - t) + v
	} else {
		s.sumComp += (v - t) + sum
	}
	s.sum = t
}

// minTo is s.min = min(s.min, v), with one comparison where v > s.min
// (then the builtin min is s.min itself; equal values, such as ±0, and
// NaNs take the builtin).
func (s *Sketch) minTo(v float64) {
	if !(v > s.min) {
		s.min = min(s.min, v)
	}
}

// maxTo is s.max = max(s.max, v), with one comparison where v < s.max.
func (s *Sketch) maxTo(v float64) {
	if !(v < s.max) {
		s.max = max(s.max, v)
	}
}

func (s *Sketch) addSum(v float64) {
	t := s.sum + v
	if math.Abs(s.sum) >= math.Abs(v) {
		s.sumComp += (s.sum - t) + v
	} else {
		s.sumComp += (v - t) + s.sum
	}
	s.sum = t
}

// toSketch switches from exact mode to sketch mode, moving the values into
// buckets and releasing them.
func (s *Sketch) toSketch() {
	s.dense = true
	for _, v := range s.values {
		s.addValue(v)
	}
	s.values = nil
	s.sorted = true
}

// addValue counts v in its bucket (sketch mode); Count, Sum, Min and Max are
// the caller's.
func (s *Sketch) addValue(v float64) {
	if v == 0 {
		s.zeros++
		return
	}
	s.countIn(s.bucket(v), 1)
}

// countIn adds n to bucket k's count, growing the bins to cover k if need
// be.
func (s *Sketch) countIn(k int, n uint64) {
	if uint(k-s.offset) >= uint(len(s.bins)) { // k < offset wraps round
		s.coverOne(k)
	}
	s.bins[k-s.offset] += n
}

// coverOne is cover(k, k), out of line so that countIn is inlined.
//
//go:noinline
func (s *Sketch) coverOne(k int) { s.cover(k, k) }

// growOne is countIn(k, 1) for a bucket the bins do not cover yet. Add's
// fast path and addCounted count a value with one bounds check, in line:
// the index is checked once, and growing, which has to index again, is
// here. (countIn itself written so would no longer be inlined without a
// profile: cost 83 of 80.)
//
//go:noinline
func (s *Sketch) growOne(k int) {
	s.cover(k, k)
	s.bins[k-s.offset]++
}

// cover grows bins so that buckets lo..hi (lo <= hi) have slots, adding slack
// on the side that grows so that a drifting range reallocates rarely.
func (s *Sketch) cover(lo, hi int) {
	if len(s.bins) == 0 {
		n := max(initialBins, hi-lo+1+initialBins)
		if cap(s.bins) >= n {
			s.bins = s.bins[:n]
			clear(s.bins)
		} else {
			s.bins = make([]uint64, n)
		}
		s.offset = max(s.minBucket, lo-(n-(hi-lo+1))/2)
		return
	}
	curLo, curHi := s.offset, s.offset+len(s.bins)-1
	if lo >= curLo && hi <= curHi {
		return
	}
	slack := max(growMinBins, len(s.bins)/4)
	newLo, newHi := curLo, curHi
	if lo < curLo {
		newLo = max(s.minBucket, lo-slack)
	}
	if hi > curHi {
		newHi = min(s.maxBucket, hi+slack)
	}
	bins := make([]uint64, newHi-newLo+1)
	copy(bins[curLo-newLo:], s.bins)
	s.bins = bins
	s.offset = newLo
}
