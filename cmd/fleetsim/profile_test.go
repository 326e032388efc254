package main

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCPUProfile: --cpuprofile writes a profile (gzipped protocol buffer,
// the format go tool pprof reads) when the command succeeds, and nothing (no temporary file either) when it fails.
func TestCPUProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.prof")
	_, stderr, code := fleetsim(t, nil, "run", "default", "--quiet", "--replications", "1",
		"--out", filepath.Join(dir, "out"), "--cpuprofile", prof)
	require.Zero(t, code, stderr)
	f, err := os.Open(prof)
	require.NoError(t, err)
	defer f.Close()
	z, err := gzip.NewReader(f)
	require.NoError(t, err)
	raw, err := io.ReadAll(z)
	require.NoError(t, err)
	require.NotEmpty(t, raw)

	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.Mkdir(bad, 0o755))
	_, stderr, code = fleetsim(t, nil, "run", filepath.Join(dir, "missing.toml"), "--cpuprofile", filepath.Join(bad, "cpu.prof"))
	require.Equal(t, 2, code, stderr)
	left, err := os.ReadDir(bad)
	require.NoError(t, err)
	require.Empty(t, left, "a failed command leaves no profile")

	_, stderr, code = fleetsim(t, nil, "run", "default", "--cpuprofile", filepath.Join(dir, "no", "such", "cpu.prof"))
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "--cpuprofile")
}
