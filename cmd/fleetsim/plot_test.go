package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/fleetsim/fleetsim/experiments/plot"
	"github.com/stretchr/testify/require"
)

// TestPlot: `fleetsim plot DIR` draws what the directory holds, one line
// per file in sorted order, and answers bad directories with exit status 2.
func TestPlot(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"summary.json": `{"scenario": "tiny", "goodput": {"ttft_slo_ms": 800, "tpot_slo_ms": 0}}`,
		"cdf.csv":      "arm,metric,quantile,value_ms\n,ttft,0.5,100\n,ttft,0.9,300\n,ttft,0.99,900\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	stdout, stderr, code := fleetsim(t, nil, "plot", dir)
	require.Zero(t, code, stderr)
	p := filepath.Join(dir, "plots")
	require.Equal(t, "wrote "+filepath.Join(p, "ttft_ccdf.png")+"\nwrote "+filepath.Join(p, "ttft_ccdf.svg")+"\n"+
		"wrote "+filepath.Join(p, "ttft_cdf.png")+"\nwrote "+filepath.Join(p, "ttft_cdf.svg")+"\n", stdout)
	svg, err := os.ReadFile(filepath.Join(p, "ttft_cdf.svg"))
	require.NoError(t, err)
	require.Contains(t, string(svg), "TTFT SLO 800 ms")
	again, _, code := fleetsim(t, nil, "plot", dir)
	require.Zero(t, code)
	require.Equal(t, stdout, again)

	bad := filepath.Join(t.TempDir(), "bad")
	require.NoError(t, os.MkdirAll(bad, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bad, "cdf.csv"), []byte("arm,metric,quantile,value_ms\nA,ttft,0.5,fast\n"), 0o644))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plot"}, "want one run directory"},
		{[]string{"plot", dir, dir}, "want one run directory"},
		{[]string{"plot", "--bogus", dir}, "flag provided but not defined"},
		{[]string{"plot", t.TempDir()}, "no results to plot in"},
		{[]string{"plot", filepath.Join(dir, "absent")}, "no such file or directory"},
		{[]string{"plot", bad}, filepath.Join(bad, "cdf.csv") + ":2: column value_ms"},
	} {
		stdout, stderr, code := fleetsim(t, nil, tc.args...)
		require.Equal(t, 2, code, strings.Join(tc.args, " "))
		require.Empty(t, stdout)
		require.Contains(t, stderr, tc.want)
	}
}

// runAndPlot runs the built-in name once into a fresh directory, requires
// its results file csv to contain csvWant, plots the directory, and
// requires the figure svg to contain each of svgWants.
func runAndPlot(t *testing.T, name, csv, csvWant, svg string, svgWants ...string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	_, stderr, code := fleetsim(t, nil, "run", name, "--out", out, "--quiet")
	require.Zero(t, code, stderr)
	b, err := os.ReadFile(filepath.Join(out, csv))
	require.NoError(t, err)
	require.Contains(t, string(b), csvWant)
	_, stderr, code = fleetsim(t, nil, "plot", out)
	require.Zero(t, code, stderr)
	b, err = os.ReadFile(filepath.Join(out, "plots", svg))
	require.NoError(t, err)
	for _, w := range svgWants {
		require.Contains(t, string(b), w)
	}
}

// TestPlotSpot: a run with [spot] (the spot-share built-in, run once) has
// spot events in failures.csv, and fleetsim plot draws them on the
// failures timeline (it refused the whole directory before).
func TestPlotSpot(t *testing.T) {
	runAndPlot(t, "spot-share", "failures.csv", ",spot-notice,replica ", "failures_timeline.svg",
		"spot interruption notice (", "spot replacement serving (")
}

// TestPlotEvictions: a training run that evicts stragglers (the
// byterobust built-in) has "evicted" rows in training_timeline.csv, and
// fleetsim plot draws them (it refused the directory before); its
// thousands of failures and restarts are counted in the legend, not
// marked.
func TestPlotEvictions(t *testing.T) {
	runAndPlot(t, "byterobust", "training_timeline.csv", ",evicted,", "training_timeline.svg",
		"straggler evicted (", "), not marked")
}

// TestEveryBuiltinPlots: every built-in scenario, run once as `fleetsim
// run NAME` runs it, writes a directory that `fleetsim plot` accepts (its
// inputs read and its figures built, not drawn: plot.Check). Two defects
// of this kind reached users: [spot]'s and byterobust's events.
func TestEveryBuiltinPlots(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every built-in")
	}
	for _, name := range experiments.BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, stderr, code := fleetsim(t, nil, "run", name, "--replications", "1", "--out", out, "--quiet")
			require.Zero(t, code, stderr)
			figs, err := plot.Check(out)
			require.NoError(t, err)
			require.NotEmpty(t, figs)
		})
	}
}

// TestPlotSweepWithoutSLO: a sweep of a scenario without [slo] has no SLO
// attainment, so no cost_vs_slo figure; fleetsim plot draws the rest
// (it refused the whole directory before: "no point has both a cost and
// an SLO attainment").
func TestPlotSweepWithoutSLO(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "noslo.toml")
	require.NoError(t, os.WriteFile(f, []byte("name = \"noslo\"\n[cluster]\nmodel = \"llama-3-8b\"\ngpu = \"H100\"\ntp = 1\nreplicas = 2\n[workload]\nduration_s = 30\n"), 0o644))
	out := filepath.Join(dir, "out")
	_, stderr, code := fleetsim(t, nil, "sweep", f, "--param", "workload.arrival.rate_per_s=5,10", "--replications", "1", "--out", out, "--quiet")
	require.Zero(t, code, stderr)
	stdout, stderr, code := fleetsim(t, nil, "plot", out)
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "sweep_ttft_p99.svg")
	require.NotContains(t, stdout, "cost_vs_slo")
}
