package experiments

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/stretchr/testify/require"
)

// armDirs are the names under dir/arms.
func armDirs(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "arms"))
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestSweepLayoutIsTheSameForOnePoint: a sweep of one point writes its
// summary under arms/ as a sweep of many does (issue 32 item 6: one point
// wrote summary.json at the top and no arms/), and a point of two keys
// names its directory without spaces.
func TestSweepLayoutIsTheSameForOnePoint(t *testing.T) {
	one := armNamed(t, "cluster.replicas=2")
	dir := t.TempDir()
	res := &SweepResult{Axes: []scenario.Axis{{Key: "cluster.replicas", Values: []string{"2"}}}, Points: []Point{{Values: []string{"2"}, Arm: one}}}
	var out bytes.Buffer
	require.NoError(t, FinishSweep(dir, "small", 2, res, &out))
	require.NoFileExists(t, filepath.Join(dir, "summary.json"))
	require.Equal(t, []string{"cluster.replicas=2"}, armDirs(t, dir))
	require.FileExists(t, filepath.Join(dir, "arms", "cluster.replicas=2", "summary.json"))
	require.Contains(t, out.String(), "arms/*/summary.json")

	axes := []scenario.Axis{{Key: "cluster.replicas", Values: []string{"2"}}, {Key: "workload.arrival.rate_per_s", Values: []string{"10", "20"}}}
	dir = t.TempDir()
	res = &SweepResult{Axes: axes}
	for _, v := range [][]string{{"2", "10"}, {"2", "20"}} {
		res.Points = append(res.Points, Point{Values: v, Arm: armNamed(t, pointName(axes, v))})
	}
	require.NoError(t, FinishSweep(dir, "small", 2, res, &bytes.Buffer{}))
	got := armDirs(t, dir)
	require.Equal(t, []string{"cluster.replicas=2,workload.arrival.rate_per_s=10", "cluster.replicas=2,workload.arrival.rate_per_s=20"}, got)
	for _, d := range got {
		require.NotContains(t, d, " ")
	}
	// The arm column keeps the point's name; a second sweep replaces the
	// first (its directories are the run's own).
	require.Contains(t, string(mustRead(t, filepath.Join(dir, "cdf.csv"))), "\n\"cluster.replicas=2,workload.arrival.rate_per_s=10\",")
	rd, err := report.NewRunDir(dir)
	require.NoError(t, err)
	rd.Abort()
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestTrainingRunWritesNoEmptyFiles: a training run has no latencies and
// no serving time series, so it writes no cdf.csv or timeseries.csv (issue
// 32 item 6: header-only files, listed as written).
func TestTrainingRunWritesNoEmptyFiles(t *testing.T) {
	sc, err := LoadBuiltin("bad-gpu-cost")
	require.NoError(t, err)
	sc, err = sc.Derive(OverrideOverlay("run.replications", "1"))
	require.NoError(t, err)
	reps, err := RunReplications(sc, RunOptions{})
	require.NoError(t, err)
	dir := t.TempDir()
	var out bytes.Buffer
	require.NoError(t, FinishRun(dir, report.NewArmResult("", reps), &out, ""))
	for _, f := range []string{"cdf.csv", "timeseries.csv"} {
		require.NoFileExists(t, filepath.Join(dir, f))
		require.NotContains(t, out.String(), f)
	}
	wrote := out.String()[strings.LastIndex(out.String(), "wrote "):]
	require.Contains(t, wrote, "summary.json, summary.md, replications.csv, training_timeline.csv)")
}
