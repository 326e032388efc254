package quantile_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/sim/quantile"
	"github.com/stretchr/testify/require"
)

func TestJSONRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 10, 5000, 100000} {
		a := quantile.New()
		for i := 0; i < n; i++ {
			a.Add(rng.ExpFloat64() * 100)
		}
		b, err := json.Marshal(a)
		require.NoError(t, err)
		var c quantile.Sketch
		require.NoError(t, json.Unmarshal(b, &c))
		require.Equal(t, a.Count(), c.Count())
		if n == 0 {
			continue
		}
		for _, q := range []float64{0, 0.5, 0.99, 0.999, 1} {
			require.Equal(t, a.Quantile(q), c.Quantile(q), "n=%d q=%v", n, q)
		}
		require.Equal(t, a.Sum(), c.Sum())
		// Merging the copy gives what merging the original gives.
		m1, m2 := quantile.New(), quantile.New()
		m1.Merge(a)
		m2.Merge(&c)
		require.Equal(t, m1.Quantile(0.99), m2.Quantile(0.99))
	}
}
