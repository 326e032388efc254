package scenario

import (
	"strings"
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

// failures.spare_coverage sizes both pools of a disaggregated fleet (was
// refused): each pool's spares as a fleet of its own GPUs, so a decode
// pool of twice the replicas of the same width needs at least as many;
// failures.decode_spares beside it is refused, as failures.spares is.
func TestSpareCoverageSizesBothPools(t *testing.T) {
	src := `[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 8
replicas = 8
[workload]
duration_s = 60
[failures]
enabled = true
rate_multiplier = 20
spare_coverage = 0.99
[disagg]
enabled = true
[disagg.decode]
replicas = 16
`
	sc, err := Parse("cov.toml", []byte(src))
	require.NoError(t, err)
	t.Logf("spares: prefill %d, decode %d", sc.Failures.Spares, sc.Failures.DecodeSpares)
	require.Positive(t, sc.Failures.Spares)
	require.GreaterOrEqual(t, sc.Failures.DecodeSpares, sc.Failures.Spares)
	co, err := Parse("co.toml", []byte(strings.Replace(src, "[disagg]\nenabled = true\n", "[disagg]\nenabled = false\n", 1)))
	require.NoError(t, err)
	require.Equal(t, co.Failures.Spares, sc.Failures.Spares, "the prefill pool is sized as the co-located fleet")
	require.Zero(t, co.Failures.DecodeSpares)
	_, err = Parse("both.toml", []byte(strings.Replace(src, "spare_coverage = 0.99\n", "spare_coverage = 0.99\ndecode_spares = 1\n", 1)))
	require.ErrorContains(t, err, "failures.spare_coverage: sizes the decode pool's spares too: remove failures.decode_spares (1) or this key")
}

// An overlay from the command line has no lines: its problems are named by
// the overlay and key alone (before, "--param workload.arrival.rate=10:1"
// read as if the value were "10:1").
func TestCommandLineOverlayErrorHasNoLine(t *testing.T) {
	sc, err := Parse("x.toml", []byte("name = \"x\"\n"))
	require.NoError(t, err)
	_, err = sc.Derive(Overlay{Name: "--param workload.arrival.rate=10", TOML: []byte("workload.arrival.rate = 10\n")})
	require.EqualError(t, err, `--param workload.arrival.rate=10: workload.arrival.rate: unknown key; did you mean "rate_per_s"?`)
}
