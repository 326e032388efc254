package plot

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestITLDistribution: cdf.csv's itl rows draw itl_cdf and itl_ccdf, whose
// fractions are of tokens (one gap per token), not of requests.
func TestITLDistribution(t *testing.T) {
	var pts []CDFPoint
	for _, q := range []struct{ q, v float64 }{{0.5, 7}, {0.9, 25}, {0.99, 180}, {0.999, 320}, {1, 350}} {
		pts = append(pts, CDFPoint{Arm: "a", Metric: "itl", Quantile: q.q, ValueMs: q.v})
	}
	m := Meta{Scenario: "default", TPOTSLOMs: 100}
	c, err := CDF(m, "itl", pts)
	require.NoError(t, err)
	require.Equal(t, "itl_cdf", c.Name)
	require.Equal(t, "fraction of tokens ≤ latency", c.Plot.Y.Label.Text)
	f, err := CCDF(m, "itl", pts)
	require.NoError(t, err)
	require.Equal(t, "itl_ccdf", f.Name)
	require.Equal(t, "fraction of tokens > latency (log scale)", f.Plot.Y.Label.Text)
	written, err := Write(t.TempDir(), f)
	require.NoError(t, err)
	checkPNG(t, written[0])
}
