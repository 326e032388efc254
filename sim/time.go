package sim

import (
	"fmt"
	"math"
)

// Time is simulated time in integer nanoseconds since the start of a run.
// It is also used for durations. No float time enters the event order
// (DESIGN.md, fixed decision 1).
type Time int64

// Convenient durations.
const (
	Nanosecond  Time = 1
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
	Minute      Time = 60 * Second
	Hour        Time = 60 * Minute
	// Forever is later than any event a run schedules.
	Forever Time = math.MaxInt64
)

// Seconds returns t in seconds.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// Milliseconds returns t in milliseconds as a float.
func (t Time) Milliseconds() float64 { return float64(t) / float64(Millisecond) }

// FromSeconds converts seconds to Time, rounding to the nearest nanosecond.
// It panics on NaN or on values outside the representable range (about
// ±292 years); callers validate user input before converting.
func FromSeconds(s float64) Time {
	ns := math.Round(s * 1e9)
	if math.IsNaN(ns) || ns >= math.MaxInt64 || ns <= math.MinInt64 {
		panic(fmt.Sprintf("sim: FromSeconds(%v) out of range", s))
	}
	return Time(ns)
}

// String formats t as seconds with nanosecond precision, e.g. "1.500000000s".
func (t Time) String() string {
	sign := ""
	if t < 0 {
		sign = "-"
		t = -t
	}
	return fmt.Sprintf("%s%d.%09ds", sign, int64(t/Second), int64(t%Second))
}
