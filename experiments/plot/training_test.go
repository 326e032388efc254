package plot

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

const timelineCSV = `arm,time_h,event,category,state,work_h,committed_h,lost_h,checkpoints,spares_available,hosts_out
a b,0,start,,running,0,0,0,0,1,0
a b,2.5,failure,gpu,detecting,2,2,0.466667,2,1,1
a b,2.666667,detected,,restarting,2,2,0,2,0,1
a b,2.7,failure,gpu,detecting,2,2,0,2,0,2
a b,2.866667,detected,,waiting-spares,2,2,0,2,0,2
a b,5.5,repaired,,restarting,2,2,0,2,0,1
a b,5.583333,restarted,,running,2,2,0,2,0,1
a b,10,end,,running,6.3,6,0,6,1,0
`

// TestTrainingTimelinePlot: training_timeline.csv draws one timeline per
// arm, named after the arm; a state the simulator never writes is an error
// naming the file, and nothing is drawn.
func TestTrainingTimelinePlot(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "training_timeline.csv"), []byte(timelineCSV), 0o644))
	written, err := Dir(dir)
	require.NoError(t, err)
	require.Equal(t, []string{filepath.Join(dir, "plots", "training_timeline_a_b.png"), filepath.Join(dir, "plots", "training_timeline_a_b.svg")}, written)
	checkPNG(t, written[0])
	svg, err := os.ReadFile(written[1])
	require.NoError(t, err)
	for _, want := range []string{"failure stopping the job (2)", "restart (1)", "waiting for spare hosts (2.6 h)", "6 checkpoints written", "ETTR 63.0% at the end"} {
		require.Contains(t, string(svg), want)
	}

	bad := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bad, "training_timeline.csv"),
		[]byte(timelineCSV[:len(timelineCSV)-1]+"\na b,11,end,,sleeping,6.3,6,0,6,1,0\n"), 0o644))
	_, err = Dir(bad)
	require.ErrorIs(t, err, ErrBadInput)
	require.ErrorContains(t, err, "training_timeline.csv")
	require.NoDirExists(t, filepath.Join(bad, "plots"))
}

// TestTrainingTimelineDenseMarks: past maxTrainingMarks failures the
// timeline does not draw them (they merged into a band over the line) and
// its legend gives their count; fewer are marked.
func TestTrainingTimelineDenseMarks(t *testing.T) {
	timeline := func(n int) []TrainingPoint {
		var pts []TrainingPoint
		work := 0.0
		for i := range n {
			h := float64(i + 1)
			pts = append(pts, TrainingPoint{TimeH: h - 0.5, Event: "checkpoint", State: "running", WorkH: work + 0.5},
				TrainingPoint{TimeH: h, Event: "failure", State: "restarting", WorkH: work + 0.5, LostH: 0.2})
			work += 0.5
		}
		return pts
	}
	f, err := TrainingTimeline(Meta{}, "", timeline(maxTrainingMarks+50))
	require.NoError(t, err)
	require.Contains(t, legendText(t, f), fmt.Sprintf("failure stopping the job (%d), not marked", maxTrainingMarks+50))
	f, err = TrainingTimeline(Meta{}, "", timeline(40))
	require.NoError(t, err)
	text := legendText(t, f)
	require.Contains(t, text, "failure stopping the job (40)")
	require.NotContains(t, text, "not marked")
}
