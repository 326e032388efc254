package plot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	gplot "gonum.org/v1/plot"
)

// tickLabels are the labelled ticks the axis's marker gives for its range.
func tickLabels(a gplot.Axis) []string {
	var out []string
	for _, t := range a.Tick.Marker.Ticks(a.Min, a.Max) {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

// TestCCDFShowsTail: the CCDF of tail-at-scale-like quantiles (p99.9 TTFT
// 1900 ms without hedging, 95 ms with) has a log y axis from 1 down to
// 1e-4, where p99.9 is the labelled 0.001 line; the CDF keeps its 0–1
// axis.
func TestCCDFShowsTail(t *testing.T) {
	var pts []CDFPoint
	for _, arm := range []struct {
		name      string
		p99, p999 float64
		p9999     float64
	}{{"no-hedge", 55, 1900, 2000}, {"hedge-p95", 59, 95, 1050}} {
		for _, q := range []struct{ q, v float64 }{{0.5, 9}, {0.9, 20}, {0.99, arm.p99}, {0.999, arm.p999}, {0.9999, arm.p9999}, {1, 3000}} {
			pts = append(pts, CDFPoint{Arm: arm.name, Metric: "ttft", Quantile: q.q, ValueMs: q.v})
		}
	}
	m := Meta{Scenario: "tail-at-scale", TTFTSLOMs: 500}
	f, err := CCDF(m, "ttft", pts)
	require.NoError(t, err)
	require.Equal(t, "ttft_ccdf", f.Name)
	p := f.Plot
	require.Equal(t, -4.0, p.Y.Min)
	require.Equal(t, 0.0, p.Y.Max)
	require.Equal(t, []string{"0.0001", "0.001", "0.01", "0.1", "1"}, tickLabels(p.Y))
	written, err := Write(t.TempDir(), f)
	require.NoError(t, err)
	checkPNG(t, written[0])

	c, err := CDF(m, "ttft", pts)
	require.NoError(t, err)
	require.Equal(t, "ttft_cdf", c.Name)
	require.Equal(t, 0.0, c.Plot.Y.Min)
	require.Equal(t, 1.0, c.Plot.Y.Max)

	// A deeper recorded tail extends the axis below 1e-4.
	f, err = CCDF(m, "ttft", append(pts, CDFPoint{Arm: "no-hedge", Metric: "ttft", Quantile: 0.99999, ValueMs: 2500}))
	require.NoError(t, err)
	require.Equal(t, -5.0, f.Plot.Y.Min)
}

// TestKVUtilisationScalesToData: a KV cache never more than 0.5% full
// fills the axis (0 to 10% above the peak), not a flat line under a fixed
// 0–1 axis; a nearly full cache stops at 1, an empty one shows 0–1.
func TestKVUtilisationScalesToData(t *testing.T) {
	series := func(peak float64) []TimePoint {
		var pts []TimePoint
		for i, v := range []float64{0, peak / 2, peak, peak / 3} {
			pts = append(pts, TimePoint{Arm: "a", TimeS: float64(i), KVUsedFrac: v, KVCachedFrac: 0})
		}
		return pts
	}
	for _, tc := range []struct{ peak, top float64 }{{0.005, 0.0055}, {0.95, 1}, {0, 1}} {
		f, err := KVUtilisation(Meta{}, series(tc.peak))
		require.NoError(t, err)
		require.Equal(t, 0.0, f.Plot.Y.Min)
		require.InDelta(t, tc.top, f.Plot.Y.Max, 1e-12, "peak %v", tc.peak)
	}
}

// TestAvailabilityAndArrivals: timeseries.csv's arrivals_per_s and
// available_replicas are drawn (arrivals_timeseries,
// availability_timeseries), the replicas on an integer axis from 0.
func TestAvailabilityAndArrivals(t *testing.T) {
	pts := []TimePoint{
		{Arm: "a", TimeS: 0, ArrivalsPerS: 30, CompletionsPerS: 29, AvailableReplicas: 4},
		{Arm: "a", TimeS: 10, ArrivalsPerS: 40, CompletionsPerS: 38, AvailableReplicas: 3},
	}
	f, err := Availability(Meta{}, pts)
	require.NoError(t, err)
	require.Equal(t, "availability_timeseries", f.Name)
	require.Equal(t, 0.0, f.Plot.Y.Min)
	require.Equal(t, 5.0, f.Plot.Y.Max)
	require.Equal(t, []string{"0", "1", "2", "3", "4", "5"}, tickLabels(f.Plot.Y))
	f, err = Arrivals(Meta{}, pts)
	require.NoError(t, err)
	require.Equal(t, "arrivals_timeseries", f.Name)
	require.InDelta(t, 44, f.Plot.Y.Max, 1e-9)
}

// TestSweepAxis: a sweep over whole numbers (warm spares 0, 1, 2) has
// integer ticks only, not 0.5 steps, and the axis names the quantity
// before the full key.
func TestSweepAxis(t *testing.T) {
	s := Sweep{Params: []string{"failures.spares"}}
	for i, v := range []string{"0", "1", "2"} {
		s.Rows = append(s.Rows, SweepRow{Values: []string{v}, TTFTP99Ms: 800 - 100*float64(i), TTFTP99MsCI95: 50, GoodputRPS: 28, GoodputRPSCI95: 1, ThroughputRPS: 30})
	}
	for _, build := range []func(Meta, Sweep) (Figure, error){SweepTTFT, SweepGoodput} {
		f, err := build(Meta{}, s)
		require.NoError(t, err)
		require.Equal(t, []string{"0", "1", "2"}, tickLabels(f.Plot.X))
		require.Equal(t, "spares (failures.spares)", f.Plot.X.Label.Text)
	}
	// Fractional values keep round-number ticks.
	s.Rows[1].Values[0] = "0.5"
	f, err := SweepTTFT(Meta{}, s)
	require.NoError(t, err)
	require.Contains(t, tickLabels(f.Plot.X), "0.5")

	for key, want := range map[string]string{
		"workload.arrival.rate_per_s":    "arrival rate, requests/s (workload.arrival.rate_per_s)",
		"cluster.replicas":               "replicas (cluster.replicas)",
		"cluster.tp":                     "tensor parallelism, GPUs per replica (cluster.tp)",
		"training.checkpoint_interval_s": "checkpoint interval, s (training.checkpoint_interval_s)",
		"router.hedge.after_ms":          "hedge after, ms (router.hedge.after_ms)",
		"seed":                           "seed",
	} {
		require.Equal(t, want, paramLabel(key), key)
	}
}

// TestBigTickLabels: size_ttft's log axis up to 10^7 ms reads 1e7, not
// 10000000; values under a million stay plain.
func TestBigTickLabels(t *testing.T) {
	for v, want := range map[float64]string{
		1e7: "1e7", 2.5e6: "2.5e6", 1e6: "1e6", 999999: "999999", 400000: "400000", 1e12: "1e12",
		1e-5: "1e-5", 0.0001: "0.0001", -3e8: "-3e8", 9.999e6: "1e7",
	} {
		require.Equal(t, want, fmtTick(v), "%v", v)
	}
	var labels []string
	for _, tk := range (logTicks{}).Ticks(1, 7) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	require.Equal(t, []string{"10", "100", "1000", "10000", "100000", "1e6", "1e7"}, labels)
}

// TestLegendNames: legends name the arm or "key = value": a single run is
// its scenario, not "run"; a sizing's run at N, named cluster.replicas=8
// in its files, is "replicas = 8", with nothing told about the directory.
func TestLegendNames(t *testing.T) {
	for _, tc := range []struct {
		m         Meta
		arm, want string
	}{
		{Meta{Scenario: "default"}, "", "default"},
		{Meta{}, "", "all requests"},
		{Meta{}, "cluster.replicas=8", "replicas = 8"},
		{Meta{}, "8", "8"},
		{Meta{}, "workload.arrival.rate_per_s=10,cluster.replicas=3", "rate_per_s = 10, replicas = 3"},
		{Meta{}, "workload.arrival.rate_per_s=10 cluster.replicas=3", "rate_per_s = 10, replicas = 3"}, // files before the comma
		{Meta{}, "no-hedge", "no-hedge"},
	} {
		require.Equal(t, tc.want, armLabel(tc.m, tc.arm), "%+v %q", tc.m, tc.arm)
	}
	f, err := CDF(Meta{Scenario: "default"}, "ttft", []CDFPoint{{Metric: "ttft", Quantile: 0.5, ValueMs: 10}, {Metric: "ttft", Quantile: 0.99, ValueMs: 90}})
	require.NoError(t, err)
	written, err := Write(t.TempDir(), f)
	require.NoError(t, err)
	b, err := os.ReadFile(written[1])
	require.NoError(t, err)
	text := svgText(t, b)
	require.True(t, strings.HasPrefix(text, "default\n"), text) // the legend is drawn first
	require.NotContains(t, text, "\nrun\n")

	// A sizing's run at N is named by its replicas in its files.
	dir := fixture(t, "sweep.csv", "failures.csv", "ettr.csv")
	rewrite(t, filepath.Join(dir, "cdf.csv"), func(rec []string) []string {
		if rec[0] == "round-robin" {
			rec[0] = "cluster.replicas=8"
		} else if rec[0] != "arm" {
			return nil
		}
		return rec
	})
	_, err = Dir(dir)
	require.NoError(t, err)
	b, err = os.ReadFile(filepath.Join(dir, "plots", "ttft_cdf.svg"))
	require.NoError(t, err)
	require.Contains(t, svgText(t, b), "replicas = 8")
}

// TestSVGFontFallback: every SVG text names Liberation Serif, then the
// metric-compatible Times New Roman and the generic serif, so a viewer
// without Liberation fonts does not widen the text past the legend.
func TestSVGFontFallback(t *testing.T) {
	f, err := CDF(Meta{Scenario: "s"}, "ttft", []CDFPoint{{Metric: "ttft", Quantile: 0.5, ValueMs: 10}, {Metric: "ttft", Quantile: 0.99, ValueMs: 90}})
	require.NoError(t, err)
	written, err := Write(t.TempDir(), f)
	require.NoError(t, err)
	b, err := os.ReadFile(written[1])
	require.NoError(t, err)
	svg := string(b)
	n := strings.Count(svg, "<text")
	require.Positive(t, n)
	require.Equal(t, n, strings.Count(svg, "font-family:'Liberation Serif','Times New Roman',Times,serif;"))
	require.NotContains(t, svg, "font-family:Liberation Serif;")
	svgText(t, b) // still XML
}
