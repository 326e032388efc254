package quantile_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/sim/quantile"
	"github.com/stretchr/testify/require"
)

// bruteRamp adds the ramp's values one by one, the definition AddRamp must
// match.
func bruteRamp(s *quantile.Sketch, a, b float64, n int64) {
	for j := range n {
		s.Add(quantile.RampValue(a, b, j))
	}
}

// requireSame checks that two sketches hold the same values as far as any
// reader can tell: count, min, max, every quantile bit for bit, and the sum
// up to float rounding.
func requireSame(t *testing.T, want, got *quantile.Sketch, msg string) {
	t.Helper()
	require.Equal(t, want.Count(), got.Count(), msg)
	require.Equal(t, want.IsExact(), got.IsExact(), msg)
	if want.Count() == 0 {
		return
	}
	require.Equal(t, want.Min(), got.Min(), msg)
	require.Equal(t, want.Max(), got.Max(), msg)
	for _, q := range []float64{0, 0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1} {
		require.Equal(t, want.Quantile(q), got.Quantile(q), "%s q=%v", msg, q)
	}
	require.InDelta(t, want.Sum(), got.Sum(), 1e-9*math.Abs(want.Sum())+1e-12, msg)
}

func TestAddRampMatchesAdds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	cases := []struct{ a, b float64 }{
		{0, 0}, {0, 1}, {5, 0}, {12.5, 0.003}, {12.5, 0.5}, {0.01, 7}, {1e-300, 1e-300}, {30, 1e-12},
	}
	for i := 0; i < 40; i++ {
		cases = append(cases, struct{ a, b float64 }{rng.ExpFloat64() * 20, rng.ExpFloat64() * 0.05})
	}
	for _, limit := range []int{0, 16, quantile.DefaultExactLimit} {
		for ci, c := range cases {
			for _, n := range []int64{0, 1, 2, 3, 15, 17, 1000, 5000} {
				want := quantile.New(quantile.WithExactLimit(limit))
				got := quantile.New(quantile.WithExactLimit(limit))
				// Some values before, so the ramp lands in a sketch that
				// already holds others (and sometimes crosses the limit).
				for range ci % 5 {
					v := rng.ExpFloat64() * 30
					want.Add(v)
					got.Add(v)
				}
				bruteRamp(want, c.a, c.b, n)
				got.AddRamp(c.a, c.b, n)
				requireSame(t, want, got, "ramp")
			}
		}
	}
}

// TestAddRampManyRamps builds one sketch from many ramps (as the simulator
// does, one per sequence per decode run) and checks it against per-value
// adds, then checks that merging per-ramp sketches gives the same again.
func TestAddRampManyRamps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	want, got, merged := quantile.New(), quantile.New(), quantile.New()
	for range 300 {
		a, b, n := 5+rng.ExpFloat64()*40, rng.ExpFloat64()*0.02, int64(rng.IntN(400))
		bruteRamp(want, a, b, n)
		got.AddRamp(a, b, n)
		one := quantile.New(quantile.WithExactLimit(8))
		one.AddRamp(a, b, n)
		merged.Merge(one)
	}
	require.False(t, want.IsExact())
	requireSame(t, want, got, "many ramps")
	requireSame(t, want, merged, "merged ramps")
}

// TestAddRampCostIndependentOfLength: a ramp a million times longer costs
// no more than a few bucket look-ups more (it spans only a few buckets).
func TestAddRampCostIndependentOfLength(t *testing.T) {
	s := quantile.New(quantile.WithExactLimit(0))
	allocs := testing.AllocsPerRun(100, func() { s.AddRamp(20, 1e-9, 1_000_000_000) })
	require.Zero(t, allocs)
	// The same ramp value by value would take seconds; this finishes in
	// well under one.
	require.Equal(t, uint64(101_000_000_000), s.Count())
}

func TestAddRampPanicsOnBadInput(t *testing.T) {
	s := quantile.New()
	require.Panics(t, func() { s.AddRamp(-1, 1, 3) })
	require.Panics(t, func() { s.AddRamp(1, -1, 3) })
	require.Panics(t, func() { s.AddRamp(math.NaN(), 1, 3) })
	require.Panics(t, func() { s.AddRamp(1, math.MaxFloat64, 3) })
}
