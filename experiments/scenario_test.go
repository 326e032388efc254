package experiments

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

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
