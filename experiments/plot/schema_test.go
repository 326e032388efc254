package plot

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/stretchr/testify/require"
)

const tinyScenario = `
name = "tiny"
seed = 7
[run]
replications = 2
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 2
[workload]
duration_s = 10
[workload.arrival]
rate_per_s = 20
[workload.input]
dist = "lognormal"
mean = 600
p99 = 3000
[workload.output]
dist = "lognormal"
mean = 120
p99 = 800
[slo]
ttft_ms = 800
tpot_ms = 100
`

// TestArmNameRoundTrip: an arm name holding a comma, quotes and a newline
// goes through the run directory's writers and comes back whole from the
// plot readers, and the directory plots.
func TestArmNameRoundTrip(t *testing.T) {
	sc, err := scenario.Parse("tiny.toml", []byte(tinyScenario))
	require.NoError(t, err)
	reps, err := experiments.RunReplications(sc, experiments.RunOptions{})
	require.NoError(t, err)
	name := "big, \"fast\"\nv2"
	ab := experiments.NewABResult([]*report.ArmResult{report.NewArmResult("base", reps), report.NewArmResult(name, reps)})
	dir := t.TempDir()
	require.NoError(t, experiments.FinishAB(dir, ab, &bytes.Buffer{}))

	tab, ok, err := readTable(dir, results.CDFFile.Name)
	require.NoError(t, err)
	require.True(t, ok)
	pts, err := readCDF(tab)
	require.NoError(t, err)
	arms := map[string]bool{}
	for _, p := range pts {
		arms[p.Arm] = true
	}
	require.Equal(t, map[string]bool{"base": true, name: true}, arms)

	tab, _, err = readTable(dir, results.TimeseriesFile.Name)
	require.NoError(t, err)
	ts, err := readTimeseries(tab)
	require.NoError(t, err)
	require.Equal(t, name, ts[len(ts)-1].Arm)

	for _, f := range []string{results.ReplicationsFile.Name, results.ABFile.Name} {
		_, _, err := readTable(dir, f) // every row as wide as the header
		require.NoError(t, err, f)
	}
	out, err := Dir(dir)
	require.NoError(t, err)
	require.NotEmpty(t, out)
}

// TestETTRAgainstTheSweptKey: ettr.csv of a sweep over spare servers plots
// ETTR against training.spare_servers, one line per value of the other
// swept key (issue 16: the x was always the checkpoint interval, so every
// point sat at one x).
func TestETTRAgainstTheSweptKey(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(strings.Join(results.ETTRFile.Header([]string{"training.spare_servers", "training.restart"}, nil), ",") + "\n")
	for i, n := range []string{"4", "7", "10", "14"} {
		for _, r := range []string{"fast", "slow"} {
			b.WriteString(n + "," + r + ",3600,0.9" + string(rune('0'+i)) + ",0.01,100\n")
		}
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ettr.csv"), []byte(b.String()), 0o644))
	tab, _, err := readTable(dir, "ettr.csv")
	require.NoError(t, err)
	s, err := readETTR(tab)
	require.NoError(t, err)
	require.Equal(t, []string{"training.spare_servers", "training.restart"}, s.Params)
	require.Len(t, s.Points, 8)
	require.Equal(t, []string{"14", "slow"}, s.Points[7].Values)

	f, err := ETTR(Meta{}, s)
	require.NoError(t, err)
	require.Equal(t, "ettr", f.Name)
	require.Equal(t, "spare servers (training.spare_servers)", f.Plot.X.Label.Text)
	require.InDelta(t, 4, f.Plot.X.Min, 0.5)
	require.InDelta(t, 14, f.Plot.X.Max, 0.5)
	written, err := Dir(dir)
	require.NoError(t, err)
	require.Contains(t, written, filepath.Join(dir, "plots", "ettr.svg"))
	svg, err := os.ReadFile(filepath.Join(dir, "plots", "ettr.svg"))
	require.NoError(t, err)
	text := svgText(t, svg)
	for _, want := range []string{"training.spare_servers", "ETTR, training.restart = fast (95% CI)", "ETTR, training.restart = slow (95% CI)"} {
		require.Contains(t, text, want)
	}
	require.NotContains(t, text, "checkpoint interval")

	// Only the checkpoint interval swept: ETTR against it, in minutes.
	one := ETTRSweep{Params: []string{"training.checkpoint_interval_s"}, Points: []ETTRPoint{
		{Values: []string{"600"}, CheckpointIntervalS: 600, ETTR: 0.9},
		{Values: []string{"1800"}, CheckpointIntervalS: 1800, ETTR: 0.92},
	}}
	f, err = ETTR(Meta{}, one)
	require.NoError(t, err)
	require.Equal(t, "checkpoint interval (min)", f.Plot.X.Label.Text)
}
