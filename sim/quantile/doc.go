// Package quantile holds Sketch, a mergeable streaming quantile sketch for
// non-negative float64 values such as latencies (the unit is the caller's;
// name it in the variable, e.g. ttftMs).
//
// A Sketch has two modes, and Sketch.IsExact says which one it is in:
//
//   - Exact. While Count() <= the exact limit (DefaultExactLimit values unless
//     WithExactLimit says otherwise) the sketch keeps every value, and
//     Quantile(q) is exact under the rule used by numpy's default 'linear'
//     method (Hyndman and Fan type 7): with the n values sorted as
//     x[0] <= ... <= x[n-1], h = q*(n-1), l = floor(h),
//     Quantile(q) = x[l] + (h-l)*(x[l+1]-x[l]) (just x[l] when h is whole).
//
//   - Sketch. When a value arrives past the limit, the sketch moves every
//     value into log-spaced buckets, as DDSketch does (Masson, Rim and Lee,
//     VLDB 2019), and keeps only bucket counts from then on. With relative
//     accuracy alpha (DefaultAlpha = 0.01 unless WithAlpha says otherwise),
//     gamma = (1+alpha)/(1-alpha); a value v > 0 goes to bucket
//     i = ceil(log_gamma(v)), which covers (gamma^(i-1), gamma^i], and a
//     bucket stands for the estimate 2*gamma^i/(gamma+1), which lies within
//     relative error alpha of every value in the bucket. Zeros are counted
//     apart and estimated as exactly 0.
//
// The guarantee in sketch mode: the value of rank r (0-based, in sorted
// order) is estimated within relative error alpha, and the smallest and
// largest values (ranks 0 and n-1) are exact. Quantile(q) applies the same
// type-7 rule to those estimates, so it lies within relative error alpha of
// the exact type-7 quantile (a convex combination of two estimates that are
// each within alpha of their values is within alpha of the same combination
// of the values). This is DDSketch's guarantee (the returned value is within
// alpha of a value whose rank is the requested rank), extended to the
// interpolation; it holds whatever the distribution, up to float64 rounding.
//
// Memory in sketch mode is one uint64 per bucket between the smallest and the
// largest non-zero value, i.e. about ln(max/min)/ln(gamma) buckets plus at
// most a quarter more of growth slack: 1,037 for values spanning 1e-3..1e6 at
// alpha = 0.01, and never more than about 73,000 (the whole float64 range).
// Buckets live in a dense slice with an offset, not a map, so adding is O(1)
// amortized and iteration order is fixed.
//
// Merging is exact on counts: merging sketches in any grouping yields the
// same buckets, Count, Min, Max and quantiles (bit for bit) as adding all the
// values to one sketch, and two exact sketches stay exact when the total fits
// the limit. Sum and Mean are float sums: the same merge order gives identical
// results, other orders agree up to float rounding.
//
// AddRamp records a linear ramp of n values a, a+b, …, a+b·(n−1) (the
// inter-token gaps of a closed-form decode run) as n Adds would, at a cost
// of O(1) per bucket the ramp spans whatever n.
//
// Values are not validated as user input: Add panics (with a "quantile:"
// prefix) on NaN, negative or infinite values, which are bugs in the caller.
// A Sketch is not safe for concurrent use.
package quantile
