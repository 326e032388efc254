package policies

import "github.com/fleetsim/fleetsim/models"

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

var _ models.RolloutJudge = MarginJudge{}

// Rollback implements models.RolloutJudge.
func (j MarginJudge) Rollback(green, blue models.PoolStats) bool {
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
