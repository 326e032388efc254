package quantile

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// AddN and AddRampN give the sketch n separate Adds or AddRamps would:
// the same count, min, max, buckets and quantiles, in exact and sketch
// mode, and across the switch between them.
func TestWeightedAddsEqualRepeats(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	qs := []float64{0, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 1}
	for trial := 0; trial < 300; trial++ {
		limit := []int{0, 16, 4096}[trial%3]
		w, r := New(WithExactLimit(limit)), New(WithExactLimit(limit))
		for op := 0; op < 1+rng.IntN(20); op++ {
			n := uint64(rng.IntN(40))
			if rng.IntN(2) == 0 {
				v := []float64{0, rng.Float64() * 100, rng.ExpFloat64() * 1e4}[rng.IntN(3)]
				w.AddN(v, n)
				for range n {
					r.Add(v)
				}
			} else {
				a, b, k := rng.Float64()*30, []float64{0, rng.Float64(), rng.Float64() * 50}[rng.IntN(3)], int64(rng.IntN(200))
				if rng.IntN(5) == 0 {
					a = 0
				}
				w.AddRampN(a, b, k, n)
				for range n {
					r.AddRamp(a, b, k)
				}
			}
		}
		require.Equal(t, r.Count(), w.Count(), "trial %d", trial)
		if r.Count() == 0 {
			continue
		}
		require.Equal(t, r.Min(), w.Min())
		require.Equal(t, r.Max(), w.Max())
		require.Equal(t, r.IsExact(), w.IsExact(), "trial %d", trial)
		require.InDelta(t, r.Sum(), w.Sum(), 1e-9*r.Sum()+1e-9)
		for _, q := range qs {
			require.Equal(t, r.Quantile(q), w.Quantile(q), "trial %d q %v", trial, q)
		}
	}
}
