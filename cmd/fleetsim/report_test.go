package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReportCommand: fleetsim report writes DIR/report.html or --out FILE
// (and nothing else), says what it wrote, answers bad usage and bad
// directories with exit status 2, and a run directory holding a report is
// still replaced by a later run.
func TestReportCommand(t *testing.T) {
	for _, h := range []string{"--help", "-h"} {
		stdout, stderr, code := fleetsim(t, nil, "report", h)
		require.Zero(t, code, stderr)
		require.Contains(t, stdout, "usage: fleetsim report DIR")
		require.Regexp(t, `(?m)^  -out FILE\n    \t\S`, stdout)
		require.Regexp(t, `(?m)^  -scenario FILE\n    \t\S`, stdout)
	}
	root := t.TempDir()
	dir := filepath.Join(root, "run")
	args := []string{"run", "default", "--replications", "1", "--set", "workload.duration_s=30", "--quiet", "--out", dir}
	_, stderr, code := fleetsim(t, nil, args...)
	require.Zero(t, code, stderr)

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "want one run directory, got 0"},
		{[]string{"report", dir, dir}, "want one run directory, got 2"},
		{[]string{"report", filepath.Join(root, "missing")}, "missing: no such file or directory"},
		{[]string{"report", root}, "not a run directory"},
		{[]string{"report", "--bogus", dir}, "bogus"},
		{[]string{"report", dir, "--scenario", "defualt"}, `did you mean "default"`},
		{[]string{"report", dir, "--scenario", filepath.Join(root, "none.toml")}, "none.toml: no such file"},
	} {
		stdout, stderr, code := fleetsim(t, nil, tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		require.Empty(t, stdout)
		require.Contains(t, stderr, tc.want, "%v", tc.args)
	}
	_, err := os.Stat(filepath.Join(dir, "report.html"))
	require.True(t, os.IsNotExist(err))

	out := filepath.Join(root, "review", "default.html")
	stdout, stderr, code := fleetsim(t, nil, "report", dir, "--out", out)
	require.Zero(t, code, stderr)
	require.Equal(t, "wrote "+out+"\n", stdout)
	_, err = os.Stat(filepath.Join(dir, "report.html"))
	require.True(t, os.IsNotExist(err), "--out writes nothing into DIR")
	elsewhere, err := os.ReadFile(out)
	require.NoError(t, err)

	stdout, stderr, code = fleetsim(t, nil, "report", dir)
	require.Zero(t, code, stderr)
	require.Equal(t, "wrote "+filepath.Join(dir, "report.html")+"\n", stdout)
	inside, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	require.Equal(t, elsewhere, inside, "the same directory gives the same report")

	_, stderr, code = fleetsim(t, nil, args...)
	require.Zero(t, code, "a later run replaces a directory holding report.html: %s", stderr)
	_, err = os.Stat(filepath.Join(dir, "report.html"))
	require.True(t, os.IsNotExist(err), "the old report went with the old run")
}
