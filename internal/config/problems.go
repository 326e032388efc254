package config

import (
	"fmt"
	"math"
	"strings"
)

// Problem is one thing wrong with a configuration.
type Problem struct {
	Key string // dotted path of the offending key, e.g. "cluster.replicas"
	Msg string // what was expected and what was found
}

func (p Problem) Error() string { return p.Key + ": " + p.Msg }

// Key is the dotted path of key under prefix ("cluster" + "tp" →
// "cluster.tp"; just key when prefix is empty): the one way every
// validator names a field in its messages.
func Key(prefix string, key ...string) string {
	out := prefix
	for _, k := range key {
		if out == "" {
			out = k
		} else {
			out += "." + k
		}
	}
	return out
}

// Problems collects Problem values. The zero value is ready to use.
type Problems struct {
	List []Problem
}

// Has reports whether a problem was recorded under key.
func (ps *Problems) Has(key string) bool {
	for _, p := range ps.List {
		if p.Key == key {
			return true
		}
	}
	return false
}

// HasPrefix reports whether a problem was recorded under key or a key
// below it ("failures" covers "failures.components.0.scope").
func (ps *Problems) HasPrefix(key string) bool {
	for _, p := range ps.List {
		if p.Key == key || strings.HasPrefix(p.Key, key+".") {
			return true
		}
	}
	return false
}

// Add records a problem at key.
func (ps *Problems) Add(key, format string, args ...any) {
	ps.List = append(ps.List, Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// Err returns nil if there are no problems, else an error listing them all,
// one per line.
func (ps *Problems) Err() error {
	if len(ps.List) == 0 {
		return nil
	}
	return ProblemsError(ps.List)
}

// Positive records a problem unless v is a finite number > 0 (and, for a
// duration key, at most MaxSeconds).
func (ps *Problems) Positive(key string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		ps.Add(key, "must be a finite number > 0, found %v", v)
		return
	}
	ps.durationCap(key, v)
}

// NonNegative records a problem unless v is a finite number >= 0 (and, for
// a duration key, at most MaxSeconds).
func (ps *Problems) NonNegative(key string, v float64) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		ps.Add(key, "must be a finite number >= 0, found %v", v)
		return
	}
	ps.durationCap(key, v)
}

// MaxSeconds bounds every duration a scenario gives (about 31 years), so
// that sums of simulated times stay far inside int64 nanoseconds.
const MaxSeconds = 1e9

// durationCap checks a duration key — one whose name ends in "_s" or
// "_ms" (not a rate, "_per_s") — against MaxSeconds.
func (ps *Problems) durationCap(key string, v float64) {
	switch {
	case strings.HasSuffix(key, "_per_s"):
	case strings.HasSuffix(key, "_ms") && v > MaxSeconds*1000:
		ps.Add(key, "must be at most %g ms, found %v", MaxSeconds*1000, v)
	case strings.HasSuffix(key, "_s") && v > MaxSeconds:
		ps.Add(key, "must be at most %g s (about 31 years), found %v", MaxSeconds, v)
	}
}

// Fraction records a problem unless 0 <= v <= 1.
func (ps *Problems) Fraction(key string, v float64) {
	if math.IsNaN(v) || v < 0 || v > 1 {
		ps.Add(key, "must be between 0 and 1, found %v", v)
	}
}

// PositiveInt records a problem unless v > 0.
func (ps *Problems) PositiveInt(key string, v int) {
	if v <= 0 {
		ps.Add(key, "must be an integer > 0, found %d", v)
	}
}

// OneOf records a problem unless v is one of names, listing the valid names.
func (ps *Problems) OneOf(key, v string, names []string) {
	for _, n := range names {
		if n == v {
			return
		}
	}
	ps.Add(key, "unknown name %q; valid names: %s", v, strings.Join(names, ", "))
}

// ProblemsError is an error made of several problems.
type ProblemsError []Problem

func (e ProblemsError) Error() string {
	var b strings.Builder
	for i, p := range e {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Error())
	}
	return b.String()
}
