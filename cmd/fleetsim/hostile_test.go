package main

import (
	"bufio"
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hostileCorpus is the corpus of hostile and corrupt input (issue 10).
var hostileCorpus = filepath.Join("..", "..", "testdata", "hostile")

// sandbox copies the corpus into ROOT/a/b/work (so that a path escaping
// the work directory by up to three levels still lands inside ROOT, where
// the test sees it) and returns ROOT and the work directory.
func sandbox(t *testing.T) (root, work string) {
	t.Helper()
	root = t.TempDir()
	work = filepath.Join(root, "a", "b", "work")
	require.NoError(t, os.MkdirAll(work, 0o755))
	require.NoError(t, os.CopyFS(work, os.DirFS(hostileCorpus)))
	setupSpecial(t, work)
	return root, work
}

// setupSpecial makes in work the files of testdata/hostile/special.txt,
// which git and os.CopyFS cannot carry (or should not: large files), as
// that file describes.
func setupSpecial(t *testing.T, work string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hostileCorpus, "special.txt"))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		path := filepath.Join(work, filepath.FromSlash(f[1]))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		switch {
		case f[0] == "symlink" && len(f) == 3:
			require.NoError(t, os.Symlink(f[2], path))
		case f[0] == "fifo" && len(f) == 2:
			require.NoError(t, syscall.Mkfifo(path, 0o644))
		case f[0] == "sparse" && len(f) == 3:
			n, err := strconv.ParseInt(f[2], 10, 64)
			require.NoError(t, err)
			fl, err := os.Create(path)
			require.NoError(t, err)
			require.NoError(t, fl.Truncate(n))
			require.NoError(t, fl.Close())
		default:
			t.Fatalf("special.txt: %q", line)
		}
	}
}

// tree lists every path under root (relative, directories with a
// trailing slash).
func tree(t *testing.T, root string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			rel += "/"
		}
		out[rel] = true
		return nil
	}))
	return out
}

// runIn runs the binary in dir.
func runIn(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return out.String(), code
}

// checkClean fails when output holds a Go stack trace, or root holds a
// temporary file, or a path that before did not hold, or lacks one that it
// held, that is not under allowed (a prefix relative to root; "" allows
// nothing).
func checkClean(t *testing.T, output string, root string, before map[string]bool, allowed string) {
	t.Helper()
	for _, s := range []string{"goroutine ", "panic:", "runtime/debug", ".go:"} {
		require.NotContains(t, output, s, "a Go stack trace or panic in the output")
	}
	var added, removed []string
	after := tree(t, root)
	for p := range after {
		require.NotContains(t, filepath.Base(strings.TrimSuffix(p, "/")), ".tmp", "a temporary file was left: %s", p)
		if !before[p] && (allowed == "" || !strings.HasPrefix(p, allowed)) {
			added = append(added, p)
		}
	}
	for p := range before {
		if !after[p] && (allowed == "" || !strings.HasPrefix(p, allowed)) {
			removed = append(removed, p)
		}
	}
	sort.Strings(added)
	sort.Strings(removed)
	require.Empty(t, added, "written outside the run directory (or anything at all on failure)")
	require.Empty(t, removed, "removed outside the run directory (or anything at all on failure)")
}

// TestHostileCorpus runs every case of testdata/hostile/cases.txt: each
// exits with its documented status and message, prints no Go stack trace,
// writes nothing outside its run directory (nothing at all when it fails)
// and leaves no temporary file.
func TestHostileCorpus(t *testing.T) {
	f, err := os.Open(filepath.Join(hostileCorpus, "cases.txt"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "|")
		require.Len(t, fields, 4, "cases.txt: %q", line)
		name, want, args := strings.TrimSpace(fields[0]), strings.TrimSpace(fields[2]), strings.Fields(fields[3])
		code, err := strconv.Atoi(strings.TrimSpace(fields[1]))
		require.NoError(t, err)
		n++
		t.Run(name, func(t *testing.T) {
			root, work := sandbox(t)
			before := tree(t, root)
			out, got := runIn(t, work, args...)
			require.Equal(t, code, got, "exit status of fleetsim %s:\n%s", strings.Join(args, " "), out)
			require.Contains(t, out, want)
			require.NotContains(t, out, "SECRET", "a line of a file echoed (secret.txt)")
			allowed := ""
			if code == 0 {
				allowed = "a/b/work/out/"
			}
			checkClean(t, out, root, before, allowed)
		})
	}
	require.NoError(t, sc.Err())
	require.Greater(t, n, 30)
}

// TestHostileCorpusLimits: the corpus's limit cases still sit exactly at
// the limits the code states (a limit changed without its corpus file
// would make at-limit and past-limit cases test nothing).
func TestHostileCorpusLimits(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(hostileCorpus, name))
		require.NoError(t, err)
		return string(b)
	}
	require.Contains(t, read("replicas-100k.toml"), "replicas = 100000\n")
	require.Contains(t, read("replicas-100001.toml"), "replicas = 100001\n")
	require.Equal(t, strings.Count(read("deep-32.toml"), "["), 32)
	require.Equal(t, strings.Count(read("deep-33.toml"), "["), 33)
}

// TestMergeMismatchedParts: parts of runs with different seeds, or of a
// scenario with the same name and different contents, are refused naming
// what differs; nothing is written.
func TestMergeMismatchedParts(t *testing.T) {
	root, work := sandbox(t)
	for _, c := range [][]string{
		{"run", "tiny.toml", "--shard", "1/2", "--quiet", "--out", "out/a"},
		{"run", "tiny.toml", "--shard", "2/2", "--seed", "9", "--quiet", "--out", "out/seed"},
		{"run", "tiny-rate7.toml", "--shard", "2/2", "--quiet", "--out", "out/rate"},
	} {
		out, code := runIn(t, work, c...)
		require.Zero(t, code, out)
	}
	before := tree(t, root)
	for _, c := range []struct{ other, want string }{
		{"out/seed/part-2-of-2.json", "differ in flags ([] vs [--seed=9])"},
		{"out/rate/part-2-of-2.json", "differ in scenario (sha256"},
	} {
		out, code := runIn(t, work, "merge", "out/a/part-1-of-2.json", c.other, "--out", "out/merged")
		require.Equal(t, 2, code, out)
		require.Contains(t, out, c.want)
		checkClean(t, out, root, before, "")
	}
}

// TestNoStaleFiles: a run into an earlier run's directory replaces it
// whole: a failures.csv the new run does not write is gone.
func TestNoStaleFiles(t *testing.T) {
	root, work := sandbox(t)
	stale := filepath.Join(work, "out", "r")
	require.NoError(t, os.MkdirAll(filepath.Join(stale, "plots"), 0o755))
	for _, f := range []string{"failures.csv", "summary.json", "plots/failures_timeline.png"} {
		require.NoError(t, os.WriteFile(filepath.Join(stale, f), []byte("stale"), 0o644))
	}
	before := tree(t, root)
	out, code := runIn(t, work, "run", "tiny.toml", "--quiet", "--out", "out/r")
	require.Zero(t, code, out)
	checkClean(t, out, root, before, "a/b/work/out/r/")
	require.NoFileExists(t, filepath.Join(stale, "failures.csv"))
	require.NoDirExists(t, filepath.Join(stale, "plots"))
	b, err := os.ReadFile(filepath.Join(stale, "summary.json"))
	require.NoError(t, err)
	require.Contains(t, string(b), `"scenario": "tiny"`)
}

// TestInterruptCleansUp: SIGINT or SIGTERM during a --requests run stops
// it with status 130, leaving no temporary file and no run directory.
func TestInterruptCleansUp(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a simulation for a second")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			root, work := sandbox(t)
			before := tree(t, root)
			// Long enough to be interrupted: 2 h of arrivals at 20 req/s.
			scn := "name = \"long\"\n[cluster]\nmodel = \"llama-3-8b\"\ntp = 1\nreplicas = 4\n[workload]\nduration_s = 7200\n[workload.arrival]\nrate_per_s = 20\n"
			require.NoError(t, os.WriteFile(filepath.Join(work, "long.toml"), []byte(scn), 0o644))
			before["a/b/work/long.toml"] = true
			cmd := exec.Command(binary, "run", "long.toml", "--requests", "--quiet", "--out", "out/long")
			cmd.Dir = work
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			require.NoError(t, cmd.Start())
			// Wait until requests.csv is being streamed into the temporary
			// directory.
			deadline := time.Now().Add(20 * time.Second)
			for {
				m, _ := filepath.Glob(filepath.Join(work, "out", ".long.tmp-*", "requests.csv"))
				if len(m) > 0 || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond)
			require.NoError(t, cmd.Process.Signal(sig))
			err := cmd.Wait()
			ee, ok := err.(*exec.ExitError)
			require.True(t, ok, "the run finished before the signal: %v\n%s", err, out.String())
			require.Equal(t, 130, ee.ExitCode(), out.String())
			checkClean(t, out.String(), root, before, "") // not even an empty out/
			require.NoDirExists(t, filepath.Join(work, "out"))
		})
	}
}
