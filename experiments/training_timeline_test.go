package experiments

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/stretchr/testify/require"
)

// TestTrainingTimelineFile: a training run directory has
// training_timeline.csv, replication 0's events from start to end, one
// failure row per failure that hit the job (fail-slow ones apart), and
// compute that never exceeds wall-clock time.
func TestTrainingTimelineFile(t *testing.T) {
	sc, err := LoadBuiltin("llama3-pretrain")
	require.NoError(t, err)
	sc, err = sc.Derive(OverrideOverlay("run.replications", "2"))
	require.NoError(t, err)
	reps, err := RunReplications(sc, RunOptions{Workers: 1})
	require.NoError(t, err)
	require.Empty(t, reps[1].TrainingTrace, "replication 0 only")
	dir := t.TempDir()
	require.NoError(t, report.WriteRunDir(dir, []*report.ArmResult{report.NewArmResult("", reps)}, ""))
	f, err := os.Open(filepath.Join(dir, results.TrainingTimelineFile.Name))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Equal(t, results.TrainingTimelineFile.Header(nil, nil), rows[0])
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	num := func(r []string, c string) float64 {
		v, err := strconv.ParseFloat(r[col[c]], 64)
		require.NoError(t, err)
		return v
	}
	body := rows[1:]
	require.Equal(t, "start", body[0][col[results.Event]])
	require.Equal(t, "end", body[len(body)-1][col[results.Event]])
	fails := 0
	for _, r := range body {
		if r[col[results.Event]] == "failure" {
			fails++
		}
		require.LessOrEqual(t, num(r, results.WorkH), num(r, results.TimeH)+1e-6)
	}
	tr := reps[0].Summary.Training
	require.Equal(t, tr.Failures-tr.FailSlow, fails)
	require.InDelta(t, tr.WallHours, num(body[len(body)-1], results.TimeH), 1e-6)
}
