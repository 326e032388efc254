package scenario

import (
	"testing"

	"github.com/stretchr/testify/require"
)

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
