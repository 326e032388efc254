package plot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// copyFiles copies the named files (paths relative to testdata/) into a
// fresh directory, under their base names.
func copyFiles(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join("testdata", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644))
	}
	return dir
}

// TestABQuantiles: an A/B directory's replications.csv (two arms, three
// replications) gives ab_quantiles, grouped p50…p99.9 bars on a log axis
// with Student-t 95% CIs; a plain run's (one arm, "") does not.
func TestABQuantiles(t *testing.T) {
	dir := copyFiles(t, "ab/replications.csv")
	written, err := Dir(dir)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "plots", "ab_quantiles.png"), filepath.Join(dir, "plots", "ab_quantiles.svg")}, written)
	checkPNG(t, written[0])

	tb, ok, err := readTable(dir, "replications.csv")
	require.NoError(t, err)
	require.True(t, ok)
	qs, err := readABQuantiles(tb)
	require.NoError(t, err)
	require.Len(t, qs, 8)
	require.Equal(t, ArmQuantile{Arm: "no-hedge", Quantile: "p50", MeanMs: 9.1, CI95Ms: qs[0].CI95Ms, Replications: 3}, qs[0])
	// sd 0.1, n 3: t(0.975, 2) = 4.3027 → 4.3027 × 0.1 / √3.
	require.InDelta(t, 0.24841, qs[0].CI95Ms, 1e-4)
	require.Equal(t, "hedge-p95", qs[7].Arm)
	require.Equal(t, "p99.9", qs[7].Quantile)

	f, err := ABQuantilesFigure(Meta{Scenario: "tail-at-scale"}, qs)
	require.NoError(t, err)
	require.Equal(t, "ab_quantiles", f.Name)
	require.Equal(t, []string{"1", "10", "100", "1000"}, tickLabels(f.Plot.Y)) // 9 to 1920 ms: log
	b, err := os.ReadFile(written[1])
	require.NoError(t, err)
	text := svgText(t, b)
	require.True(t, strings.HasPrefix(text, "no-hedge\nhedge-p95\n"), text) // the legend names the arms
	for _, q := range []string{"p50", "p90", "p99", "p99.9"} {
		require.Contains(t, text, "\n"+q+"\n")
	}

	// One replication: bars without error bars; still drawn.
	one := []ArmQuantile{{Arm: "a", Quantile: "p50", MeanMs: 10, Replications: 1}, {Arm: "b", Quantile: "p50", MeanMs: 12, Replications: 1}}
	f, err = ABQuantilesFigure(Meta{}, one)
	require.NoError(t, err)
	require.Equal(t, 0.0, f.Plot.Y.Min) // narrow range: linear from 0
	_, err = Write(t.TempDir(), f)
	require.NoError(t, err)

	// A plain run: no ab_quantiles, the other figures as before.
	dir = copyFiles(t, "abplain/replications.csv", "run/cdf.csv")
	written, err = Dir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, written)
	for _, w := range written {
		require.NotContains(t, w, "ab_quantiles")
	}
	// Only a plain replications.csv: nothing to plot.
	_, err = Dir(copyFiles(t, "abplain/replications.csv"))
	require.ErrorIs(t, err, ErrBadInput)

	// A bad value names the file and line.
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "replications.csv"),
		[]byte("arm,replication,latency_ms.ttft.p50\na,0,1\nb,0,-3\n"), 0o644))
	_, err = Dir(dir)
	require.ErrorIs(t, err, ErrBadInput)
	require.ErrorContains(t, err, "replications.csv:3: column latency_ms.ttft.p50")
}
