package quantile

import (
	"encoding/json"
	"fmt"
	"math"
)

// state is a Sketch's serialised form: enough to rebuild it exactly (the
// same quantiles, and the same results when merged further). Sharded runs
// write sketches to disk and merge them elsewhere.
type state struct {
	Alpha      float64   `json:"alpha"`
	ExactLimit int       `json:"exact_limit"`
	Values     []float64 `json:"values,omitempty"`
	Sorted     bool      `json:"sorted,omitempty"`
	Dense      bool      `json:"dense,omitempty"`
	Bins       []uint64  `json:"bins,omitempty"`
	Offset     int       `json:"offset,omitempty"`
	Zeros      uint64    `json:"zeros,omitempty"`
	Count      uint64    `json:"count"`
	Sum        float64   `json:"sum"`
	SumComp    float64   `json:"sum_comp"`
	Min        *float64  `json:"min,omitempty"` // absent while empty (±Inf)
	Max        *float64  `json:"max,omitempty"`
}

// MarshalJSON writes the sketch's full state.
func (s *Sketch) MarshalJSON() ([]byte, error) {
	st := state{Alpha: s.alpha, ExactLimit: s.exactLimit, Values: s.values, Sorted: s.sorted, Dense: s.dense,
		Bins: s.bins, Offset: s.offset, Zeros: s.zeros, Count: s.count, Sum: s.sum, SumComp: s.sumComp}
	if s.count > 0 {
		mn, mx := s.min, s.max
		st.Min, st.Max = &mn, &mx
	}
	return json.Marshal(st)
}

// UnmarshalJSON rebuilds a sketch written by MarshalJSON.
func (s *Sketch) UnmarshalJSON(b []byte) error {
	var st state
	if err := json.Unmarshal(b, &st); err != nil {
		return err
	}
	if !(st.Alpha > 0 && st.Alpha < 1) || st.ExactLimit < 0 || st.ExactLimit > 1<<30 {
		return fmt.Errorf("quantile: bad sketch state (alpha %v, exact limit %d)", st.Alpha, st.ExactLimit)
	}
	*s = *New(WithAlpha(st.Alpha), WithExactLimit(st.ExactLimit))
	s.values, s.sorted, s.dense = st.Values, st.Sorted, st.Dense
	s.bins, s.offset, s.zeros = st.Bins, st.Offset, st.Zeros
	s.count, s.sum, s.sumComp = st.Count, st.Sum, st.SumComp
	s.min, s.max = math.Inf(1), math.Inf(-1)
	if st.Min != nil && st.Max != nil {
		s.min, s.max = *st.Min, *st.Max
	}
	if err := s.check(); err != nil {
		return fmt.Errorf("quantile: bad sketch state: %w", err)
	}
	return nil
}
