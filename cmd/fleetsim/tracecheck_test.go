package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBadTraceIsBadInput: a kind = "trace" workload whose file is missing,
// has a bad header or a malformed row near the top is refused by validate
// and run with exit status 2, at workload.trace.path's line, and run
// writes nothing.
func TestBadTraceIsBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
		return p
	}
	write("bad-header.csv", "TIMESTAMP,Tokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n")
	write("bad-row.jsonl", `{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [1]}
{"timestamp": 5, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}
{"timestamp": 9, "input_length": "ten", "output_length": 5}
{"timestamp": 12, "input_length": 10, "output_length": 5}
`)
	write("good.jsonl", `{"timestamp": 0, "input_length": 10, "output_length": 5, "hash_ids": [1]}
{"timestamp": 5, "input_length": 600, "output_length": 5, "hash_ids": [1, 2]}
`)
	scenario := func(path string) string {
		return write("s.toml", `name = "s"
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 1
replicas = 1
[workload]
kind = "trace"
[workload.trace]
path = "`+path+`"
`)
	}
	for _, c := range []struct{ path, want string }{
		{"missing.jsonl", "missing.jsonl: no such file"},
		{"bad-header.csv", "bad-header.csv:1: header: missing column ContextTokens"},
		{"bad-row.jsonl", "bad-row.jsonl:3: input_length"},
	} {
		f := scenario(c.path)
		stdout, stderr, code := fleetsim(t, nil, "validate", f)
		require.Equal(t, 2, code, "validate %s: %s%s", c.path, stdout, stderr)
		require.Contains(t, stderr, "s.toml:10: workload.trace.path: ")
		require.Contains(t, stderr, c.want)

		out := filepath.Join(dir, "out")
		_, stderr, code = fleetsim(t, nil, "run", f, "--out", out, "--quiet")
		require.Equal(t, 2, code, "run %s: %s", c.path, stderr)
		require.Contains(t, stderr, c.want)
		_, err := os.Stat(out)
		require.True(t, os.IsNotExist(err), "nothing written on bad input")
	}
	f := scenario("good.jsonl")
	stdout, stderr, code := fleetsim(t, nil, "validate", f)
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "ok")
}
