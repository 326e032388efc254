package experiments

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// TestBuiltinsParseAndRun runs every built-in, with and without the
// workload prefetched (the same summary, byte for byte).
func TestBuiltinsParseAndRun(t *testing.T) {
	for _, name := range BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			sc, err := LoadBuiltin(name)
			require.NoError(t, err)
			if testing.Short() {
				return
			}
			res, err := Run(sc, Options{})
			require.NoError(t, err)
			s := report.Summarize(res)
			// Drawing the workload ahead on a goroutine of its own changes
			// nothing in the results.
			pres, err := Run(sc, Options{PrefetchWorkload: true})
			require.NoError(t, err)
			var a, b bytes.Buffer
			require.NoError(t, s.WriteJSON(&a))
			require.NoError(t, report.Summarize(pres).WriteJSON(&b))
			require.Equal(t, a.String(), b.String(), "the same summary with the workload prefetched")
			if s.Mode == scenario.ModeTraining {
				require.Positive(t, s.Training.WallHours)
				require.Greater(t, s.Training.ETTR, 0.5)
				return
			}
			r := s.Requests
			require.Positive(t, r.Arrived)
			require.Equal(t, r.Arrived, r.Completed+r.Failed+r.Shed+r.InFlight)
			var buf bytes.Buffer
			require.NoError(t, s.WriteTable(&buf))
			t.Log("\n" + buf.String())
		})
	}
}
