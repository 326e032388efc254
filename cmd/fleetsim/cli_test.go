package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHelp: every command's --help and -h print its usage line and every
// flag with a one-line description to stdout, and exit 0.
func TestHelp(t *testing.T) {
	for _, tc := range []struct {
		cmd   []string
		usage string
		flags []string
	}{
		{[]string{"run"}, "usage: fleetsim run", []string{"-out", "-seed", "-replications", "-workers", "-quiet", "-shard", "-requests"}},
		{[]string{"ab"}, "usage: fleetsim ab", []string{"-out", "-seed", "-replications", "-shard"}},
		{[]string{"sweep"}, "usage: fleetsim sweep", []string{"-param", "-shard"}},
		{[]string{"size"}, "usage: fleetsim size", []string{"-slo", "-confidence", "-quiet"}},
		{[]string{"merge"}, "usage: fleetsim merge", []string{"-out"}},
		{[]string{"validate"}, "usage: fleetsim validate", nil},
		{[]string{"scenarios"}, "usage: fleetsim scenarios", nil},
		{[]string{"trace"}, "usage: fleetsim trace stats", []string{"-format", "-json"}},
		{[]string{"trace", "stats"}, "usage: fleetsim trace stats", []string{"-format", "-json"}},
		{[]string{"failures"}, "fleetsim failures show", nil},
		{[]string{"failures", "show"}, "usage: fleetsim failures show", []string{"-gpus", "-json"}},
		{[]string{"failures", "replay"}, "usage: fleetsim failures replay", []string{"-servers", "-json"}},
		{[]string{"plot"}, "usage: fleetsim plot", nil},
		{[]string{"calibrate"}, "usage: fleetsim calibrate", []string{"-holdout", "-kv-admission"}},
		{[]string{"version"}, "usage: fleetsim version", nil},
	} {
		for _, h := range []string{"--help", "-h"} {
			args := append(append([]string{}, tc.cmd...), h)
			stdout, stderr, code := fleetsim(t, nil, args...)
			require.Zero(t, code, "%v: %s", args, stderr)
			require.Empty(t, stderr, "%v", args)
			require.Contains(t, stdout, tc.usage, "%v", args)
			for _, f := range tc.flags {
				require.Regexp(t, `(?m)^  `+f+`( \w+)?\n    \t\S`, stdout, "%v: flag %s and its description", args, f)
			}
			// Every flag listed has a description.
			require.NotRegexp(t, `(?m)^  -\S+( \w+)?\n(  -|\z)`, stdout, "%v", args)
		}
	}
	// fleetsim help CMD is CMD --help.
	stdout, _, code := fleetsim(t, nil, "help", "size")
	require.Zero(t, code)
	require.Contains(t, stdout, "usage: fleetsim size")
	// The top-level usage names the flags common to several commands.
	for _, h := range []string{"help", "--help", "-h"} {
		stdout, _, code := fleetsim(t, nil, h)
		require.Zero(t, code)
		for _, want := range []string{"--shard i/n", "--version", "--quiet", "exit status: 0 success"} {
			require.Contains(t, stdout, want)
		}
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		stdout, stderr, code := fleetsim(t, nil, args...)
		require.Zero(t, code, stderr)
		require.Regexp(t, `^fleetsim \S+ \S+ go\S+\n$`, stdout)
	}
	_, _, code := fleetsim(t, nil, "version", "extra")
	require.Equal(t, 2, code)

	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/fleetsim/fleetsim", Version: "v0.4.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}}}
	assert.Equal(t, "fleetsim v0.4.0 0123abcd-dirty go1.26.8", versionText(bi, true))
	bi.Settings[1].Value = "false"
	assert.Equal(t, "fleetsim v0.4.0 0123abcd go1.26.8", versionText(bi, true))
	// go run and go test: no version, no VCS stamp, or no build info at all.
	assert.Equal(t, "fleetsim (devel) unknown go1.26.8", versionText(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, true))
	assert.Equal(t, "fleetsim (devel) unknown unknown", versionText(nil, false))
}

// TestRefusedFlags: a flag a command or mode does not support is refused
// with exit status 2, a message that says why, and nothing written.
func TestRefusedFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"size", "n-plus-2", "--shard", "1/2"}, "size does not take --shard: a sizing search"},
		{[]string{"size", "n-plus-2", "--shard=1/2"}, "size does not take --shard"},
		{[]string{"run", "--shard", "1/2", "--requests"}, "--requests cannot be combined with --shard"},
		{[]string{"run", "--bogus"}, "run: flag provided but not defined: -bogus (see fleetsim run --help)"},
	} {
		out := filepath.Join(dir, "out")
		stdout, stderr, code := fleetsim(t, nil, append(tc.args, "--out", out)...)
		require.Equal(t, 2, code, "%v: %s", tc.args, stderr)
		require.Empty(t, stdout)
		require.Contains(t, stderr, tc.want)
		require.NotContains(t, stderr, "panic")
		require.NoDirExists(t, out, "nothing written")
	}
}

// TestSeedZero: --seed 0 is a seed like any other: it differs from the
// scenario's seed 1, and gives the same result twice.
func TestSeedZero(t *testing.T) {
	summary := func(args ...string) map[string]any {
		t.Helper()
		out := t.TempDir()
		_, stderr, code := fleetsim(t, nil, append([]string{"run", "default", "--quiet", "--out", out}, args...)...)
		require.Zero(t, code, stderr)
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(b, &m))
		return m
	}
	seed := func(m map[string]any) float64 { return m["sim"].(map[string]any)["seed"].(float64) }
	one, zero, again := summary(), summary("--seed", "0"), summary("--seed", "0")
	require.Equal(t, 1.0, seed(one), "the default scenario's seed")
	require.Equal(t, 0.0, seed(zero))
	require.Equal(t, zero, again, "same seed, same result")
	delete(one["sim"].(map[string]any), "seed")
	delete(zero["sim"].(map[string]any), "seed")
	require.NotEqual(t, one["requests"], zero["requests"], "seed 0 is not seed 1")
	require.NotEqual(t, one["latency_ms"], zero["latency_ms"])
}
