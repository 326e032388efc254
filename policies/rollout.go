package policies

import (
	"math"

	"github.com/fleetsim/fleetsim/models/fleet"
)

// MarginJudge rolls a new version back when, with enough of its outcomes
// in the window, its error rate exceeds the old version's by a margin or
// its p99 TTFT exceeds the old one's by a ratio (the seed's canary rule:
// roll back when the canary's error rate or p99 exceeds the baseline's by a
// margin, CALIBRATION.md §6). The latency rule needs 5 × MinSamples
// outcomes in each pool: the p99 of a few dozen requests is mostly noise.
type MarginJudge struct {
	MinSamples  int
	ErrorMargin float64 // absolute, in error-rate points (0.05 = 5 points)
	P99Ratio    float64 // green p99 / blue p99 above this rolls back
}

var _ fleet.RolloutJudge = MarginJudge{}

// Rollback implements fleet.RolloutJudge.
func (j MarginJudge) Rollback(green, blue fleet.PoolStats) bool {
	if green.Requests < j.MinSamples {
		return false
	}
	gr := float64(green.Errors) / float64(green.Requests)
	br := 0.0
	if blue.Requests > 0 {
		br = float64(blue.Errors) / float64(blue.Requests)
	}
	if gr > br+j.ErrorMargin {
		return true
	}
	// A p99 needs more samples than an error rate to mean anything: the
	// latency rule waits for 5 × MinSamples of each pool.
	if green.Requests < 5*j.MinSamples || blue.Requests < 5*j.MinSamples {
		return false
	}
	return blue.P99TTFTMs > 0 && green.P99TTFTMs > j.P99Ratio*blue.P99TTFTMs
}

// NewRolloutJudge builds the judge a validated [rollout] table names (see
// RolloutJudges).
func NewRolloutJudge(c fleet.RolloutConfig) (fleet.RolloutJudge, error) {
	return RolloutJudges.Build(c.Judge, c, Env{})
}

// MannWhitneyJudge rolls a new version back only on a regression that is
// both statistically significant at level Alpha (one-sided) and large
// enough to matter, in the manner of Kayenta's canary judge (Netflix and
// Google's automated canary analysis, which ranks canary against baseline
// metrics with a Mann–Whitney U test):
//   - errors: green's error rate exceeds blue's by at least ErrorMargin and
//     a one-sided two-proportion z-test rejects "green's rate ≤ blue's";
//   - latency: green's median TTFT exceeds blue's × MedianRatio and a
//     one-sided Mann–Whitney U test rejects "green's TTFTs are not
//     stochastically larger".
//
// Both need MinSamples outcomes in each pool. Unlike MarginJudge it does
// not look at a window's p99, whose sampling noise with a few hundred
// requests often exceeds the regressions one wants to catch.
type MannWhitneyJudge struct {
	MinSamples  int
	ErrorMargin float64
	Alpha       float64
	MedianRatio float64
}

var _ fleet.RolloutJudge = MannWhitneyJudge{}

// Rollback implements fleet.RolloutJudge.
func (j MannWhitneyJudge) Rollback(green, blue fleet.PoolStats) bool {
	if green.Requests < j.MinSamples || blue.Requests < j.MinSamples {
		return false
	}
	gr := float64(green.Errors) / float64(green.Requests)
	br := float64(blue.Errors) / float64(blue.Requests)
	if gr-br >= j.ErrorMargin && TwoProportionP(green.Errors, green.Requests, blue.Errors, blue.Requests) < j.Alpha {
		return true
	}
	g, b := green.TTFTMs, blue.TTFTMs
	if len(g) < j.MinSamples || len(b) < j.MinSamples {
		return false
	}
	return median(g) > j.MedianRatio*median(b) && MannWhitneyP(g, b) < j.Alpha
}

// median of sorted xs (not empty).
func median(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// upperTail is P(Z > z) for a standard normal Z.
func upperTail(z float64) float64 { return 0.5 * math.Erfc(z/math.Sqrt2) }

// TwoProportionP is the one-sided p-value of the pooled two-proportion
// z-test of "rate 1 ≤ rate 2" given x1 of n1 and x2 of n2 (1 when there is
// no variance: both pools all-success or all-failure).
func TwoProportionP(x1, n1, x2, n2 int) float64 {
	p1, p2 := float64(x1)/float64(n1), float64(x2)/float64(n2)
	p := float64(x1+x2) / float64(n1+n2)
	se := math.Sqrt(p * (1 - p) * (1/float64(n1) + 1/float64(n2)))
	if se == 0 {
		return 1
	}
	return upperTail((p1 - p2) / se)
}

// MannWhitneyP is the one-sided p-value of the Mann–Whitney U test of "xs
// are not stochastically larger than ys", by the normal approximation with
// tie and continuity corrections (fine from about ten samples each). Both
// slices must be sorted ascending. O(len(xs) + len(ys)).
func MannWhitneyP(xs, ys []float64) float64 {
	n1, n2 := float64(len(xs)), float64(len(ys))
	if n1 == 0 || n2 == 0 {
		return 1
	}
	// Merge, giving tied values their mean rank; sum xs' ranks.
	var rankSum, tieTerm float64
	i, k, rank := 0, 0, 1.0
	for i < len(xs) || k < len(ys) {
		var v float64
		switch {
		case k == len(ys) || (i < len(xs) && xs[i] <= ys[k]):
			v = xs[i]
		default:
			v = ys[k]
		}
		cx, cy := 0, 0
		for i < len(xs) && xs[i] == v {
			i++
			cx++
		}
		for k < len(ys) && ys[k] == v {
			k++
			cy++
		}
		t := float64(cx + cy)
		rankSum += float64(cx) * (rank + (t-1)/2)
		tieTerm += t*t*t - t
		rank += t
	}
	u := rankSum - n1*(n1+1)/2
	n := n1 + n2
	sigma := math.Sqrt(n1 * n2 / 12 * ((n + 1) - tieTerm/(n*(n-1))))
	if sigma == 0 {
		return 1
	}
	return upperTail((u - n1*n2/2 - 0.5) / sigma)
}
