package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// fleetsimIn runs the binary in dir and returns stdout, stderr and the
// exit status.
func fleetsimIn(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), errb.String(), ee.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), errb.String(), 0
}

// TestEditedBuiltinCopyGetsItsOwnDirectory: an edited copy of a built-in
// keeps name = "default" but writes to fleetsim-out/mine, named after its
// file, never over fleetsim-out/default; a copy whose file is named like a
// built-in too is refused without --out, naming the clash; and two sweeps
// of one scenario over different keys write two directories (issue 32
// item 4: both replaced fleetsim-out/default, fleetsim-out/default-sweep).
func TestEditedBuiltinCopyGetsItsOwnDirectory(t *testing.T) {
	dir := t.TempDir()
	toml, stderr, code := fleetsimIn(t, dir, "scenarios", "show", "default")
	require.Zero(t, code, stderr)
	require.Contains(t, toml, `name = "default"`)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "mine.toml"), []byte(toml), 0o644))
	short := []string{"--set", "workload.duration_s=5", "--replications", "1", "--quiet"}

	stdout, stderr, code := fleetsimIn(t, dir, append([]string{"run", "mine.toml"}, short...)...)
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "wrote "+filepath.Join("fleetsim-out", "mine")+" (")
	require.FileExists(t, filepath.Join(dir, "fleetsim-out", "mine", "summary.json"))
	require.NoDirExists(t, filepath.Join(dir, "fleetsim-out", "default"))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "default.toml"), []byte(toml), 0o644))
	_, stderr, code = fleetsimIn(t, dir, append([]string{"run", "default.toml"}, short...)...)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `its name "default" is a built-in scenario's, and so is its file's`)
	require.NoDirExists(t, filepath.Join(dir, "fleetsim-out", "default"))
	_, stderr, code = fleetsimIn(t, dir, append([]string{"run", "default.toml", "--out", "mine-too"}, short...)...)
	require.Zero(t, code, stderr)

	for _, p := range []string{"cluster.replicas=2", "workload.arrival.rate_per_s=5"} {
		_, stderr, code = fleetsimIn(t, dir, append([]string{"sweep", "default", "--param", p}, short...)...)
		require.Zero(t, code, stderr)
	}
	require.DirExists(t, filepath.Join(dir, "fleetsim-out", "default-sweep-cluster.replicas"))
	require.DirExists(t, filepath.Join(dir, "fleetsim-out", "default-sweep-workload.arrival.rate_per_s"))
}
