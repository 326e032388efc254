package experiments

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
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
			s := Summarize(res)
			// Drawing the workload ahead on a goroutine of its own changes
			// nothing in the results.
			pres, err := Run(sc, Options{PrefetchWorkload: true})
			require.NoError(t, err)
			var a, b bytes.Buffer
			require.NoError(t, s.WriteJSON(&a))
			require.NoError(t, Summarize(pres).WriteJSON(&b))
			require.Equal(t, a.String(), b.String(), "the same summary with the workload prefetched")
			if s.Mode == ModeTraining {
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

// A workload is a tagged union on its kind: a key the kind does not read is
// refused at its line, not silently ignored.
func TestWorkloadKeysWithoutEffectRefused(t *testing.T) {
	src := `name = "x"
[workload]
kind = "trace"
[workload.trace]
path = "builtin:conversation_trace.jsonl"
[workload.arrival]
rate_per_s = 50
[workload.output]
dist = "fixed"
mean = 10
`
	_, err := Parse("x.toml", []byte(src))
	require.Error(t, err)
	require.Contains(t, err.Error(), `x.toml:6: workload.arrival: has no effect with workload.kind = "trace"; remove it`)
	require.Contains(t, err.Error(), `x.toml:8: workload.output: has no effect with workload.kind = "trace"`)

	src = `name = "y"
[workload]
kind = "synthetic"
duration_s = 10
[workload.sessions]
think_time_s_mean = 5
`
	_, err = Parse("y.toml", []byte(src))
	require.ErrorContains(t, err, `y.toml:5: workload.sessions: has no effect with workload.kind = "synthetic"`)
}
