package config

import (
	"math"
	"testing"
)

func TestChecks(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func(ps *Problems)
		bad  bool
	}{
		{"positive ok", func(ps *Problems) { ps.Positive("a", 1) }, false},
		{"positive zero", func(ps *Problems) { ps.Positive("a", 0) }, true},
		{"positive nan", func(ps *Problems) { ps.Positive("a", math.NaN()) }, true},
		{"nonneg inf", func(ps *Problems) { ps.NonNegative("a", math.Inf(1)) }, true},
		{"duration cap", func(ps *Problems) { ps.NonNegative("run.horizon_s", 1e15) }, true},
		{"duration ms cap", func(ps *Problems) { ps.Positive("hedge.delay_ms", 1e13) }, true},
		{"rate not a duration", func(ps *Problems) { ps.Positive("hbm_bytes_per_s", 1e15) }, false},
		{"fraction", func(ps *Problems) { ps.Fraction("f", 1.5) }, true},
		{"oneof", func(ps *Problems) { ps.OneOf("k", "x", []string{"a", "b"}) }, true},
		{"posint", func(ps *Problems) { ps.PositiveInt("k", 0) }, true},
	} {
		var ps Problems
		tc.fn(&ps)
		if got := len(ps.List) > 0; got != tc.bad {
			t.Errorf("%s: problems %v, want bad=%v", tc.name, ps.List, tc.bad)
		}
	}
	var ps Problems
	if ps.Err() != nil {
		t.Fatal("no problems, no error")
	}
	ps.Add("k", "bad %d", 1)
	ps.Add("j", "worse")
	if got := ps.Err().Error(); got != "k: bad 1\nj: worse" {
		t.Fatalf("Err() = %q", got)
	}
}

func TestKey(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		keys   []string
		want   string
	}{
		{"cluster", []string{"tp"}, "cluster.tp"},
		{"", []string{"tp"}, "tp"},
		{"cluster", []string{"replica", "perf", "profile"}, "cluster.replica.perf.profile"},
		{"faults.3", nil, "faults.3"},
		{"", nil, ""},
		{"", []string{"ttf", "dist"}, "ttf.dist"},
		{"", []string{"", "x"}, "x"},
		{"failures", []string{"repair", "", "x"}, "failures.repair..x"},
		{"failures", []string{"values_hours", "0"}, "failures.values_hours.0"},
	} {
		if got := Key(tc.prefix, tc.keys...); got != tc.want {
			t.Errorf("Key(%q, %q) = %q, want %q", tc.prefix, tc.keys, got, tc.want)
		}
	}
}
