package quantile

import (
	"fmt"
	"math"
	"slices"
)

// check reports why a sketch rebuilt from a serialised state (a part file
// written elsewhere, possibly corrupt or hostile) is inconsistent, or nil.
// A sketch that passes can be merged and queried without panicking or
// allocating more than its buckets: every count adds up, the bucket range
// lies within the buckets of positive float64 values, and the exact values
// are finite, non-negative and within [min, max].
func (s *Sketch) check() error {
	if !s.dense {
		if len(s.values) > s.exactLimit {
			return fmt.Errorf("%d exact values, more than the exact limit %d", len(s.values), s.exactLimit)
		}
		if len(s.bins) > 0 || s.zeros != 0 || s.offset != 0 {
			return fmt.Errorf("buckets in exact mode")
		}
		if uint64(len(s.values)) != s.count {
			return fmt.Errorf("count %d but %d values", s.count, len(s.values))
		}
		for _, v := range s.values {
			if !(v >= 0 && v <= math.MaxFloat64) || s.count > 0 && (v < s.min || v > s.max) {
				return fmt.Errorf("value %v is negative, not finite or outside [min, max]", v)
			}
		}
		if s.sorted && !slices.IsSorted(s.values) {
			return fmt.Errorf("values marked sorted are not")
		}
	} else {
		if len(s.values) > 0 {
			return fmt.Errorf("exact values in sketch mode")
		}
		if len(s.bins) > 0 {
			if s.offset < s.minBucket || s.offset > s.maxBucket || len(s.bins) > s.maxBucket-s.offset+1 {
				return fmt.Errorf("buckets %d..%d+%d outside %d..%d", s.offset, s.offset, len(s.bins), s.minBucket, s.maxBucket)
			}
		}
		total := s.zeros
		for _, c := range s.bins {
			if total+c < total {
				return fmt.Errorf("bucket counts overflow")
			}
			total += c
		}
		if total != s.count {
			return fmt.Errorf("count %d but buckets hold %d", s.count, total)
		}
	}
	if s.count > 0 {
		if !(s.min >= 0 && s.min <= s.max && s.max <= math.MaxFloat64) {
			return fmt.Errorf("min %v and max %v: expected 0 <= min <= max, finite", s.min, s.max)
		}
	} else if !math.IsInf(s.min, 1) || !math.IsInf(s.max, -1) {
		return fmt.Errorf("an empty sketch with a min or max")
	}
	if math.IsNaN(s.sum) || math.IsInf(s.sum, 0) || math.IsNaN(s.sumComp) || math.IsInf(s.sumComp, 0) || s.sum < 0 {
		return fmt.Errorf("sum %v (+%v): expected a finite non-negative number", s.sum, s.sumComp)
	}
	return nil
}
