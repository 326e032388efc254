package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

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
		{[]string{"run"}, "usage: fleetsim run", []string{"-out", "-seed", "-replications", "-workers", "-quiet", "-json", "-shard", "-requests", "-cpuprofile"}},
		{[]string{"ab"}, "usage: fleetsim ab", []string{"-out", "-seed", "-replications", "-json", "-shard"}},
		{[]string{"sweep"}, "usage: fleetsim sweep", []string{"-param", "-json", "-shard"}},
		{[]string{"size"}, "usage: fleetsim size", []string{"-slo", "-confidence", "-json", "-quiet"}},
		{[]string{"merge"}, "usage: fleetsim merge", []string{"-out", "-json"}},
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
		for _, want := range []string{"--shard i/n", "--json", "--version", "--quiet", "exit status: 0 success"} {
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
		{[]string{"run", "--shard", "1/2", "--json"}, "--json cannot be combined with --shard"},
		{[]string{"ab", "cache-affinity", "--shard", "1/2", "--json"}, "--json cannot be combined with --shard"},
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

// TestJSON: --json prints the results as one JSON document on stdout and
// nothing else, and still writes the run directory.
func TestJSON(t *testing.T) {
	d := t.TempDir()
	decode := func(stdout string, v any) {
		t.Helper()
		dec := json.NewDecoder(strings.NewReader(stdout))
		require.NoError(t, dec.Decode(v), stdout)
		require.False(t, dec.More(), "one document")
		require.NotContains(t, stdout, "wrote")
	}

	t.Run("run", func(t *testing.T) {
		out := filepath.Join(d, "run")
		stdout, stderr, code := fleetsim(t, nil, "run", "--json", "--out", out)
		require.Zero(t, code, stderr)
		var sum struct {
			LatencyMs struct {
				TTFT struct {
					P99 float64 `json:"p99"`
				} `json:"ttft"`
			} `json:"latency_ms"`
		}
		decode(stdout, &sum)
		require.Positive(t, sum.LatencyMs.TTFT.P99)
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		require.NoError(t, err)
		require.Equal(t, string(b), stdout, "stdout is summary.json")
	})

	t.Run("ab", func(t *testing.T) {
		stdout, stderr, code := fleetsim(t, nil, "ab", "cache-affinity", "--replications", "2", "--json", "--out", filepath.Join(d, "ab"))
		require.Zero(t, code, stderr)
		var ab struct {
			Baseline string                    `json:"baseline"`
			ArmNames []string                  `json:"arm_names"`
			Arms     map[string]map[string]any `json:"arms"`
			Diffs    []struct {
				Metric string   `json:"metric"`
				ArmA   string   `json:"arm_a"`
				ArmB   string   `json:"arm_b"`
				Rel    *float64 `json:"rel"`
			} `json:"diffs"`
		}
		decode(stdout, &ab)
		require.Equal(t, "round-robin", ab.Baseline)
		require.Equal(t, []string{"round-robin", "prefix-affinity"}, ab.ArmNames)
		require.Contains(t, ab.Arms["prefix-affinity"], "latency_ms")
		require.Contains(t, ab.Arms["round-robin"], "ci95")
		found := false
		for _, df := range ab.Diffs {
			if df.Metric == "latency_ms.ttft.p99" {
				found = true
				require.Equal(t, "round-robin", df.ArmA)
				require.Equal(t, "prefix-affinity", df.ArmB)
				require.NotNil(t, df.Rel)
			}
		}
		require.True(t, found, "paired difference of the p99 TTFT")
		require.FileExists(t, filepath.Join(d, "ab", "ab.csv"))
	})

	t.Run("sweep", func(t *testing.T) {
		stdout, stderr, code := fleetsim(t, nil, "sweep", "default", "--param", "cluster.replicas=3..4", "--param", "workload.duration_s=60",
			"--json", "--out", filepath.Join(d, "sweep"))
		require.Zero(t, code, stderr)
		var sw struct {
			Scenario string           `json:"scenario"`
			Rows     []map[string]any `json:"rows"`
		}
		decode(stdout, &sw)
		require.Equal(t, "default", sw.Scenario)
		require.Len(t, sw.Rows, 2)
		require.Equal(t, 4.0, sw.Rows[1]["cluster.replicas"])
		require.Positive(t, sw.Rows[1]["ttft_p99_ms"])
		require.FileExists(t, filepath.Join(d, "sweep", "sweep.csv"))
	})

	t.Run("size", func(t *testing.T) {
		stdout, stderr, code := fleetsim(t, nil, "size", tinySize(t), "--replications", "2", "--json", "--out", filepath.Join(d, "size"))
		require.Zero(t, code, stderr)
		var sz struct {
			N      int              `json:"n"`
			Rows   []map[string]any `json:"rows"`
			Search []map[string]any `json:"search"`
		}
		decode(stdout, &sz)
		require.Positive(t, sz.N)
		require.Len(t, sz.Rows, 4)
		require.Equal(t, "N", sz.Rows[1]["row"])
		require.Equal(t, float64(sz.N), sz.Rows[1]["replicas"])
		require.Equal(t, true, sz.Rows[1]["met_slo"])
		require.NotEmpty(t, sz.Search)
		require.FileExists(t, filepath.Join(d, "size", "size.csv"))
		// The run at N says what N is in its own files (plots need no
		// relabelling): its arm is cluster.replicas=N, as a sweep's.
		cdf, err := os.ReadFile(filepath.Join(d, "size", "cdf.csv"))
		require.NoError(t, err)
		lines := strings.SplitN(string(cdf), "\n", 3)
		require.Len(t, lines, 3)
		require.True(t, strings.HasPrefix(lines[1], fmt.Sprintf("cluster.replicas=%d,ttft,", sz.N)), lines[1])
	})

	t.Run("merge", func(t *testing.T) {
		parts := filepath.Join(d, "parts")
		for _, sh := range []string{"1/2", "2/2"} {
			_, stderr, code := fleetsim(t, nil, "run", "--replications", "2", "--shard", sh, "--quiet", "--out", parts)
			require.Zero(t, code, stderr)
		}
		out := filepath.Join(d, "merged")
		stdout, stderr, code := fleetsim(t, nil, "merge", "--json", "--out", out,
			filepath.Join(parts, "part-1-of-2.json"), filepath.Join(parts, "part-2-of-2.json"))
		require.Zero(t, code, stderr)
		var sum map[string]any
		decode(stdout, &sum)
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		require.NoError(t, err)
		require.Equal(t, string(b), stdout)
	})
}

// tinySize writes a sizing scenario that searches in well under a second.
func tinySize(t *testing.T) string {
	t.Helper()
	toml, _, code := fleetsim(t, nil, "scenarios", "show", "n-plus-2")
	require.Zero(t, code)
	toml = strings.Replace(toml, "duration_s = 300", "duration_s = 20", 1)
	toml = strings.Replace(toml, "rate_per_s = 150", "rate_per_s = 40", 1)
	f := filepath.Join(t.TempDir(), "tiny-size.toml")
	require.NoError(t, os.WriteFile(f, []byte(toml), 0o644))
	return f
}

// TestSizeProgress: size reports each size it tries on stderr (a pipe
// here: plain lines, no carriage returns), stdout is unchanged by it, and
// --quiet silences it.
func TestSizeProgress(t *testing.T) {
	f := tinySize(t)
	stdout, stderr, code := fleetsim(t, nil, "size", f, "--replications", "2", "--out", filepath.Join(t.TempDir(), "a"))
	require.Zero(t, code, stderr)
	require.NotContains(t, stderr, "\r")
	require.Regexp(t, `(?m)^fleetsim: size n-plus-2: \d+ replicas? with failures: meets the SLO, \d+ s elapsed$`, stderr)
	require.Regexp(t, `(?m)^fleetsim: size n-plus-2: 1 replica without failures: misses ttft_p99 bound \d+ ms \(limit 800\), \d+ s elapsed$`, stderr)
	require.Regexp(t, `fleetsim: size n-plus-2: done in \d+ s\n$`, stderr)
	quiet, qerr, code := fleetsim(t, nil, "size", f, "--replications", "2", "--quiet", "--out", filepath.Join(t.TempDir(), "b"))
	require.Zero(t, code, qerr)
	require.Empty(t, qerr)
	strip := func(s string) string { return s[:strings.LastIndex(s, "wrote")] }
	require.Equal(t, strip(stdout), strip(quiet), "progress never touches stdout")
}

// fakeClock is a clock that moves only when told.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// TestProgressNotATerminal: on a writer that is not a terminal, progress is
// plain lines, at most one every logEvery, with a final line; no bar frames.
func TestProgressNotATerminal(t *testing.T) {
	var buf bytes.Buffer
	clk := &fakeClock{t: time.Unix(0, 0)}
	p := newProgressAt(&buf, "run default", false, clk.now)
	for done := 1; done <= 8; done++ {
		clk.advance(2 * time.Second)
		p.step(done, 8) // as runMany calls them: the step, then the fraction
		p.set(float64(done) / 8)
	}
	p.finish()
	require.NotContains(t, buf.String(), "\r")
	require.Equal(t, "fleetsim: run default: 38% (3 of 8 replications), 6 s elapsed\n"+
		"fleetsim: run default: 75% (6 of 8 replications), 12 s elapsed\n"+
		"fleetsim: run default: done, 8 replications in 16 s\n", buf.String())

	// A run too short for a line writes nothing at all.
	buf.Reset()
	p = newProgressAt(&buf, "run default", false, clk.now)
	p.set(0.5)
	clk.advance(time.Second)
	p.set(1)
	p.finish()
	require.Empty(t, buf.String())

	// isTerminal: a buffer and a regular file are not terminals.
	require.False(t, isTerminal(&buf))
	f, err := os.Create(filepath.Join(t.TempDir(), "err"))
	require.NoError(t, err)
	defer f.Close()
	require.False(t, isTerminal(f))

	// A nil progress (--quiet) does nothing.
	var quiet *progress
	quiet.set(0.5)
	quiet.step(1, 2)
	quiet.note("x")
	quiet.finish()
	quiet.stop()
}

// TestProgressTerminal: on a terminal, a bar appears once the command has
// run barDelay, and is cleared at the end.
func TestProgressTerminal(t *testing.T) {
	var buf bytes.Buffer
	clk := &fakeClock{t: time.Unix(0, 0)}
	p := newProgressAt(&buf, "run default", true, clk.now)
	p.set(0.1)
	require.Empty(t, buf.String(), "no bar before barDelay")
	clk.advance(2 * time.Second)
	p.set(0.5)
	p.finish()
	require.Contains(t, buf.String(), "\r")
	require.Contains(t, buf.String(), "run default")
}
