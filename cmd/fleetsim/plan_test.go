package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// planScenario is a small planning problem: Llama-3-8B on H100 or B200.
const planScenario = `
name = "plan-cli"
[run]
replications = 2
down_replicas = 1
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 4
[workload]
duration_s = 30
[workload.arrival]
rate_per_s = 60
[plan]
gpus = ["H100", "B200"]
tp = [1, 2]
max_replicas = 8
[cluster.replica.perf]
profile = "legacy"
`

// TestPlanCLI: plan writes plan.csv and best.toml and prints the vLLM
// flags; a second plan replaces its run directory; --json gives the
// choice; best.toml runs; an SLO nothing meets and --shard exit 2 with
// nothing written.
func TestPlanCLI(t *testing.T) {
	dir := t.TempDir()
	sc := filepath.Join(dir, "plan-cli.toml")
	require.NoError(t, os.WriteFile(sc, []byte(planScenario), 0o644))
	out := filepath.Join(dir, "out")
	stdout, stderr, code := fleetsim(t, nil, "plan", sc, "--slo", "ttft_p99=500ms,tpot_p99=30ms", "--out", out, "--quiet")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "chosen: ")
	require.Contains(t, stdout, "vllm serve llama-3-8b --tensor-parallel-size ")
	for _, f := range []string{"plan.csv", "best.toml", "summary.json"} {
		require.FileExists(t, filepath.Join(out, f))
	}
	csv, err := os.ReadFile(filepath.Join(out, "plan.csv"))
	require.NoError(t, err)
	require.Equal(t, 1+4, strings.Count(string(csv), "\n"), "a row per configuration")
	require.Equal(t, 1, strings.Count(string(csv), ",chosen,"))

	stdout, stderr, code = fleetsim(t, nil, "plan", sc, "--slo", "ttft_p99=500ms,tpot_p99=30ms", "--out", out, "--json", "--quiet")
	require.Equal(t, 0, code, stderr)
	var js planJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &js))
	require.NotEmpty(t, js.Chosen)
	require.Len(t, js.Candidates, 4)

	_, stderr, code = fleetsim(t, nil, "run", filepath.Join(out, "best.toml"), "--out", filepath.Join(dir, "best"), "--quiet")
	require.Equal(t, 0, code, stderr)

	for _, args := range [][]string{
		{"plan", sc, "--slo", "ttft_p99=1ms"},
		{"plan", sc, "--slo", "ttft_p99=1s", "--shard", "1/2"},
		{"plan", sc},
		{"plan", sc, "--slo", "ttft_p99=1s", "--set", "workload.arrival.rate_per_s=100000"},
	} {
		none := filepath.Join(dir, "none")
		stdout, stderr, code := fleetsim(t, nil, append(args, "--out", none, "--quiet")...)
		require.Equal(t, 2, code, "%v: %s", args, stderr)
		require.Empty(t, stdout)
		require.NoDirExists(t, none, "nothing written")
	}
	_, stderr, _ = fleetsim(t, nil, "plan", sc, "--slo", "ttft_p99=1ms", "--out", filepath.Join(dir, "none"), "--quiet")
	require.Contains(t, stderr, "no configuration of the space meets ttft_p99=1ms")
	require.Contains(t, stderr, "the closest is ")
	_, stderr, _ = fleetsim(t, nil, "plan", sc, "--slo", "ttft_p99=1s", "--set", "workload.arrival.rate_per_s=100000", "--out", filepath.Join(dir, "none"), "--quiet")
	require.Contains(t, stderr, "by its roofline bound every configuration that fits needs more replicas")
}
