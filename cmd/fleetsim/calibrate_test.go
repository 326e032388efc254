package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const calData = "../../experiments/calibrate/testdata/"

// A small calibration: eight rows of the shipped sweep, fitted with 2-fold
// cross-validation; the profile it writes is a valid profile a scenario can
// name, and the run is deterministic.
func TestCalibrateCommand(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(calData + "public-benchmarks.csv")
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	csvPath := filepath.Join(dir, "bench.csv")
	require.NoError(t, os.WriteFile(csvPath, []byte(strings.Join(append(lines[:1], lines[1:9]...), "\n")+"\n"), 0o644))
	var outs []string
	for i := 0; i < 2; i++ {
		out := filepath.Join(dir, "cal", string(rune('a'+i)))
		stdout, stderr, code := fleetsim(t, nil, "calibrate", csvPath, "--holdout", "2", "--out", out, "--name", "mine")
		require.Zero(t, code, stderr)
		require.Contains(t, stdout, "2-fold cross-validated: median error")
		require.Contains(t, stdout, "bench.csv:2")
		for _, f := range []string{"profile.toml", "calibration.csv", "plots/calibration.png", "plots/calibration.svg"} {
			require.FileExists(t, filepath.Join(out, f))
		}
		b, err := os.ReadFile(filepath.Join(out, "profile.toml"))
		require.NoError(t, err)
		outs = append(outs, string(b))
	}
	require.Equal(t, outs[0], outs[1], "same input, same profile")
	require.Contains(t, outs[0], `name = "mine"`)

	// A scenario runs with the written profile.
	sc := filepath.Join(dir, "sc.toml")
	require.NoError(t, os.WriteFile(sc, []byte(`name = "withprofile"
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 1
[cluster.replica]
weights = "fp8"
kv_dtype = "fp8"
[cluster.replica.perf]
profile = "cal/a/profile.toml"
[workload]
duration_s = 5
[workload.arrival]
rate_per_s = 5
`), 0o644))
	_, stderr, code := fleetsim(t, nil, "validate", sc)
	require.Zero(t, code, stderr)
	// And a broken profile file is reported at the key that names it.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cal/a/profile.toml"), []byte("name = \"x\"\ngemm_efficiency_fp8 = 7\n"), 0o644))
	_, stderr, code = fleetsim(t, nil, "validate", sc)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "cluster.replica.perf.profile")
	require.Contains(t, stderr, "gemm_efficiency_fp8: must be between")
}

// vLLM benchmark_serving.py result files are accepted, with the replica
// described by flags.
func TestCalibrateVLLMJSON(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cal")
	stdout, stderr, code := fleetsim(t, nil, "calibrate", calData+"vllm-offline.json", "--gpu", "H100", "--model", "llama-3-8b",
		"--kv-admission", "prompt", "--eval-only", "--out", out)
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "vllm-offline.json")
	require.Contains(t, stdout, "profile vllm-hopper on")
	require.FileExists(t, filepath.Join(out, "calibration.csv"))
	require.NoFileExists(t, filepath.Join(out, "profile.toml"), "--eval-only writes no profile")
}

// Bad input: exit 2, FILE:LINE: column: message, and nothing written.
func TestCalibrateBadInput(t *testing.T) {
	dir := t.TempDir()
	header := "model,gpu,tp,weights,kv_dtype,batching,isl,osl,num_requests,max_seqs,output_tokens_per_s,ttft_ms,source\n"
	for _, tc := range []struct {
		name, csv, want string
		args            []string
	}{
		{"missing column", strings.Replace(header, "isl,", "", 1) + "llama-3-8b,H100,1,fp8,fp8,inflight,128,100,,1000,,x\n", "bad.csv:1: isl: missing column", nil},
		{"non-numeric", header + "llama-3-8b,H100,two,fp8,fp8,inflight,128,128,100,,1000,,x\n", `bad.csv:2: tp: not an integer: "two"`, nil},
		{"unknown model", header + "llama-9-1t,H100,1,fp8,fp8,inflight,128,128,100,,1000,,x\n", `bad.csv:2: model: unknown model "llama-9-1t"`, nil},
		{"unknown gpu", header + "llama-3-8b,A100,1,fp8,fp8,inflight,128,128,100,,1000,,x\n", `bad.csv:2: gpu: unknown GPU "A100"`, nil},
		{"impossible tp", header + "llama-3-8b,H100,3,fp8,fp8,inflight,128,128,100,,1000,,x\n", "bad.csv:2: tp: TP=3 does not divide", nil},
		{"does not fit", header + "llama-3-405b,H100,1,bf16,bf16,inflight,128,128,100,,1000,,x\n", "bad.csv:2: ", nil},
		{"fp4 kv", header + "llama-3-8b,H100,1,fp4,fp4,inflight,128,128,100,,1000,,x\n", `bad.csv:2: kv_dtype: must be bf16 or fp8, got "fp4"`, nil},
		{"over context", header + "llama-3-8b,H100,1,fp8,fp8,inflight,131072,128,10,,1000,,x\n", "bad.csv:2: isl:", nil},
		{"bad holdout", header + "llama-3-8b,H100,1,fp8,fp8,inflight,128,128,100,,1000,,x\n", "--holdout", []string{"--holdout", "1"}},
		{"bad train", header + "llama-3-8b,H100,1,fp8,fp8,inflight,128,128,100,,1000,,x\n", "--train", []string{"--train", "colour=red"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, "bad.csv")
			require.NoError(t, os.WriteFile(p, []byte(tc.csv), 0o644))
			out := filepath.Join(dir, "out-"+strings.ReplaceAll(tc.name, " ", "-"))
			args := append([]string{"calibrate", p, "--out", out}, tc.args...)
			_, stderr, code := fleetsim(t, nil, args...)
			require.Equal(t, 2, code, stderr)
			require.Contains(t, stderr, tc.want)
			require.NoDirExists(t, out, "nothing written")
		})
	}
}

func TestCalibrateHelp(t *testing.T) {
	for _, h := range []string{"--help", "-h"} {
		stdout, _, code := fleetsim(t, nil, "calibrate", h)
		require.Zero(t, code)
		require.Contains(t, stdout, "usage: fleetsim calibrate")
		require.Contains(t, stdout, "-holdout")
		require.Contains(t, stdout, "-kv-admission")
	}
}
