package plot

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	gplot "gonum.org/v1/plot"
)

// calibrationDir is a fresh directory holding only calibration.csv, with
// testdata/calibration.csv's rows that keep selects (nil: all), header
// included.
func calibrationDir(t *testing.T, keep func(line string) bool) string {
	t.Helper()
	b, err := os.ReadFile("testdata/calibration.csv")
	require.NoError(t, err)
	lines := strings.SplitAfter(string(b), "\n")
	var out strings.Builder
	for i, l := range lines {
		if i == 0 || keep == nil || keep(l) {
			out.WriteString(l)
		}
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "calibration.csv"), []byte(out.String()), 0o644))
	return dir
}

// wantCalibration lists, per calibration figure, text its SVG must contain.
var wantCalibration = map[string][]string{
	"calibration": {"Calibration: measured vs predicted output throughput", "measured output throughput (tok/s, log scale)",
		"predicted output throughput (tok/s, log scale)", "fitted rows (6, median |error| 5.2%)", "held-out rows (2, median |error| 12.3%)",
		"cross-validated (6, median |error| 8.8%)", "predicted = measured", "within ±15%"},
	"calibration_ttft": {"Calibration: measured vs predicted TTFT", "measured time to first token (ms, log scale)",
		"predicted time to first token (ms, log scale)", "fitted rows (6", "held-out rows (2", "cross-validated (6", "predicted = measured", "within ±15%"},
	"calibration_tpot": {"Calibration: measured vs predicted TPOT", "measured time per output token (ms, log scale)",
		"fitted rows (5", "held-out rows (2", "cross-validated (5", "predicted = measured", "within ±15%"},
}

// TestDirCalibration: a `fleetsim calibrate` directory (calibration.csv
// alone, no summary.json) gives one figure per metric present.
func TestDirCalibration(t *testing.T) {
	dir := calibrationDir(t, nil)
	written, err := Dir(dir)
	require.NoError(t, err)
	require.Equal(t, both("calibration", "calibration_ttft", "calibration_tpot"), names(dir, written))
	for _, w := range written {
		if strings.HasSuffix(w, ".png") {
			checkPNG(t, w)
			continue
		}
		b, err := os.ReadFile(w)
		require.NoError(t, err)
		text := svgText(t, b)
		for _, s := range wantCalibration[strings.TrimSuffix(filepath.Base(w), ".svg")] {
			require.Contains(t, text, s, w)
		}
		require.NotContains(t, text, " — ", "no scenario without summary.json")
	}
	if *keep != "" {
		require.NoError(t, os.MkdirAll(*keep, 0o755))
		for _, w := range written {
			b, err := os.ReadFile(w)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(*keep, filepath.Base(w)), b, 0o644))
		}
	}

	// The same results give byte-identical files.
	again := calibrationDir(t, nil)
	w2, err := Dir(again)
	require.NoError(t, err)
	for i := range written {
		a, err := os.ReadFile(written[i])
		require.NoError(t, err)
		b, err := os.ReadFile(w2[i])
		require.NoError(t, err)
		require.True(t, bytes.Equal(a, b), "%s differs between two runs", filepath.Base(written[i]))
	}
}

// TestDirCalibrationOneMetric: only TTFT rows, some without
// cross-validation, give calibration_ttft alone; with no cv_predicted
// there is no cross-validated series.
func TestDirCalibrationOneMetric(t *testing.T) {
	dir := calibrationDir(t, func(l string) bool { return strings.Contains(l, ",ttft_ms,") })
	written, err := Dir(dir)
	require.NoError(t, err)
	require.Equal(t, both("calibration_ttft"), names(dir, written))
	checkPNG(t, filepath.Join(dir, "plots", "calibration_ttft.png"))

	// Held-out rows only, and no cv columns at all.
	dir = t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "calibration.csv"), []byte(
		"where,metric,measured,predicted,role\n\"a, b.csv:2\",ttft_ms,120,131,test\nb.json,ttft_ms,950,880,test\n"), 0o644))
	// A summary.json, when there is one, names the scenario.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"scenario": "h200-8b"}`), 0o644))
	written, err = Dir(dir)
	require.NoError(t, err)
	require.Equal(t, both("calibration_ttft"), names(dir, written))
	b, err := os.ReadFile(filepath.Join(dir, "plots", "calibration_ttft.svg"))
	require.NoError(t, err)
	text := svgText(t, b)
	require.Contains(t, text, "Calibration: measured vs predicted TTFT — h200-8b")
	require.Contains(t, text, "held-out rows (2, median |error| 8.3%)")
	require.NotContains(t, text, "fitted rows")
	require.NotContains(t, text, "cross-validated")
}

// TestDirCalibrationMalformed: a malformed calibration.csv is an error
// naming file and line, that matches ErrBadInput, and nothing is written.
func TestDirCalibrationMalformed(t *testing.T) {
	const h = "where,metric,measured,predicted,role,cv_predicted\n"
	for _, tc := range []struct{ content, want string }{
		{"where,metric,measured,role\nx,ttft_ms,1,fit\n", "calibration.csv:1: no column \"predicted\""},
		{h + "x,ttft_ms,100,110,fit,\nx,ttft_ms,abc,110,fit,\n", "calibration.csv:3: column measured: \"abc\" is not a finite number"},
		{h + "x,ttft_ms,100,,fit,\n", "calibration.csv:2: column predicted: \"\" is not a finite number"},
		{h + "x,ttft_ms,0,110,fit,\n", "calibration.csv:2: column measured: 0 is not positive"},
		{h + "x,ttft_ms,100,-3,fit,\n", "calibration.csv:2: column predicted: -3 is not positive"},
		{h + "x,ttft_ms,100,110,fit,Inf\n", "calibration.csv:2: column cv_predicted: \"Inf\" is not a finite number"},
		{h + "x,ttft_ms,100,110,fit,0\n", "calibration.csv:2: column cv_predicted: 0 is not positive"},
		{h + "x,ttft_ms,100,110,fit,\n\"x, y\",queue_ms,100,110,fit,\n", "calibration.csv:3: column metric: \"queue_ms\" is not one of output_tokens_per_s, ttft_ms, tpot_ms"},
		{h + "x,ttft_ms,100,110,train,\n", "calibration.csv:2: column role: \"train\" is not fit or test"},
		{h + "x,ttft_ms,100,110,fit\n", "calibration.csv:2: 5 fields, the header has 6"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			dir := fixture(t) // with the run's other results, which must not be drawn either
			require.NoError(t, os.WriteFile(filepath.Join(dir, "calibration.csv"), []byte(tc.content), 0o644))
			_, err := Dir(dir)
			require.Error(t, err)
			require.ErrorIs(t, err, ErrBadInput)
			require.Contains(t, err.Error(), filepath.Join(dir, tc.want))
			_, err = os.Stat(filepath.Join(dir, "plots"))
			require.ErrorIs(t, err, os.ErrNotExist, "nothing is written")
		})
	}
}

// TestDirCalibrationEmpty: a header-only calibration.csv leaves nothing
// to draw, and the messages list calibration.csv among the inputs.
func TestDirCalibrationEmpty(t *testing.T) {
	dir := t.TempDir()
	_, err := Dir(dir)
	require.ErrorIs(t, err, ErrBadInput)
	require.ErrorContains(t, err, ", calibration.csv")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "calibration.csv"), []byte("where,metric,measured,predicted,role,cv_predicted\n"), 0o644))
	_, err = Dir(dir)
	require.ErrorIs(t, err, ErrBadInput)
	require.ErrorContains(t, err, "nothing to plot in "+dir+": calibration.csv hold no series")
	require.ErrorContains(t, err, "ettr.csv, calibration.csv, replications.csv, size_mix.csv, plan.csv)")
	_, err = os.Stat(filepath.Join(dir, "plots"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestCalibrationBuilder: the builder on in-memory rows.
func TestCalibrationBuilder(t *testing.T) {
	_, err := Calibration(Meta{}, "queue_ms", nil)
	require.ErrorContains(t, err, "unknown calibration metric")
	_, err = Calibration(Meta{}, "tpot_ms", []CalibrationPoint{{Metric: "ttft_ms", Measured: 1, Predicted: 1, CVPredicted: math.NaN()}})
	require.ErrorContains(t, err, "no tpot_ms rows")
	// Values that cannot go on a log axis are skipped, not fatal.
	f, err := Calibration(Meta{}, "tpot_ms", []CalibrationPoint{
		{Metric: "tpot_ms", Measured: 0, Predicted: 3, CVPredicted: math.NaN()},
		{Metric: "tpot_ms", Measured: 10, Predicted: 11, Fit: true, CVPredicted: math.Inf(1)},
	})
	require.NoError(t, err)
	require.Equal(t, "calibration_tpot", f.Name)
	// Both axes span the same range, 25% past the values.
	require.Equal(t, f.Plot.X.Min, f.Plot.Y.Min)
	require.Equal(t, f.Plot.X.Max, f.Plot.Y.Max)
	require.InDelta(t, math.Log10(8), f.Plot.X.Min, 1e-12)
	require.InDelta(t, math.Log10(13.75), f.Plot.X.Max, 1e-12)
	_, err = Write(t.TempDir(), f)
	require.NoError(t, err)
}

func TestCalibrationTicks(t *testing.T) {
	labels := func(ts []gplot.Tick) []string {
		var out []string
		for _, t := range ts {
			if t.Label != "" {
				out = append(out, t.Label)
			}
		}
		return out
	}
	// Less than a decade: round values, where logTicks would label none.
	require.Equal(t, []string{"8", "10", "12"}, labels(calibrationTicks{}.Ticks(math.Log10(8), math.Log10(13.75))))
	require.Empty(t, labels(logTicks{}.Ticks(math.Log10(1.05), math.Log10(1.9))))
	require.NotEmpty(t, labels(calibrationTicks{}.Ticks(math.Log10(1.05), math.Log10(1.9))))
	// A decade or more: as logTicks.
	require.Equal(t, labels(logTicks{}.Ticks(math.Log10(35), math.Log10(1800))), labels(calibrationTicks{}.Ticks(math.Log10(35), math.Log10(1800))))
}
