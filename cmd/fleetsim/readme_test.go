package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// readmeDocs are the user's manual: README.md, then docs/*.md in name
// order. Their commands run in that order (README first: docs may use what
// it wrote).
func readmeDocs(t *testing.T) []string {
	t.Helper()
	docs, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	sort.Strings(docs)
	return append([]string{"../../README.md"}, docs...)
}

// readmeCommands returns the commands of the manual's ```sh blocks that run
// fleetsim, in order: lines starting with "fleetsim " or
// "go run ./cmd/fleetsim " (written as "fleetsim "), with "\" continuation
// lines joined and trailing "# ..." comments removed.
func readmeCommands(t *testing.T) []string {
	t.Helper()
	var cmds []string
	for _, doc := range readmeDocs(t) {
		cmds = append(cmds, docCommands(t, doc)...)
	}
	return cmds
}

// docCommands is readmeCommands of one file.
func docCommands(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var cmds []string
	in, cont := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		trim := strings.TrimSpace(line)
		switch {
		case !in && strings.HasPrefix(trim, "```sh"):
			in = true
			continue
		case in && strings.HasPrefix(trim, "```"):
			in, cont = false, false
			continue
		case !in:
			continue
		}
		if cont {
			cmds[len(cmds)-1] += " " + strings.TrimSuffix(trim, `\`)
			cont = strings.HasSuffix(trim, `\`)
			continue
		}
		if rest, ok := strings.CutPrefix(trim, "go run ./cmd/fleetsim "); ok {
			trim = "fleetsim " + rest
		}
		if !strings.HasPrefix(trim, "fleetsim ") {
			continue
		}
		cont = strings.HasSuffix(trim, `\`)
		cmds = append(cmds, strings.TrimSuffix(trim, `\`))
	}
	require.NoError(t, sc.Err())
	for i, c := range cmds {
		if j := strings.Index(c, " #"); j >= 0 {
			c = c[:j]
		}
		cmds[i] = strings.Join(strings.Fields(c), " ")
	}
	return cmds
}

var replicationsFlag = regexp.MustCompile(`--replications \d+`)

// TestReadmeExamples runs every fleetsim command of README.md's ```sh
// blocks in order, in one temporary directory (so that a command can use
// what an earlier one wrote, e.g. mine.toml), through sh -c with the test
// binary first on PATH, and requires exit status 0. To keep it fast,
// commands that simulate get --quiet and one replication (two for size,
// whose confidence bound needs a spread). The sharding examples are
// templates: the test provides study.toml (the default scenario), writes
// /cfg and /results under the temporary directory, runs the Kubernetes
// line as pod 0 and the Slurm line for every array index, as the README
// says to before merging.
func TestReadmeExamples(t *testing.T) {
	cmds := readmeCommands(t)
	require.GreaterOrEqual(t, len(cmds), 8, "README examples: %q", cmds)
	dir := t.TempDir()
	repo, err := filepath.Abs("../..")
	require.NoError(t, err)
	// Examples name files under experiments/ relative to the repository root.
	require.NoError(t, os.Symlink(filepath.Join(repo, "experiments"), filepath.Join(dir, "experiments")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "cfg"), 0o755))
	env := append(os.Environ(), "PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
	sh := func(c string, extra ...string) {
		t.Helper()
		start := time.Now()
		cmd := exec.Command("sh", "-c", c)
		cmd.Dir = dir
		cmd.Env = append(env, extra...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %v:\n%s", c, extra, out)
		t.Logf("%5.1fs  %s %v", time.Since(start).Seconds(), c, extra)
	}
	sh("fleetsim scenarios show default > study.toml && cp study.toml cfg/study.toml")
	for _, c := range cmds {
		args := strings.Fields(c)
		switch args[1] {
		case "run", "ab", "sweep", "size":
			n := "1"
			if args[1] == "size" {
				n = "2"
			}
			if replicationsFlag.MatchString(c) {
				c = replicationsFlag.ReplaceAllString(c, "--replications "+n)
			} else {
				c += " --replications " + n
			}
			c += " --quiet"
		}
		c = strings.ReplaceAll(c, " /cfg/", " cfg/")
		c = strings.ReplaceAll(c, " /results/", " results-k8s/")
		switch {
		case strings.Contains(c, "JOB_COMPLETION_INDEX"):
			sh(c, "JOB_COMPLETION_INDEX=0")
		case strings.Contains(c, "SLURM_ARRAY_TASK_ID"):
			for i := 1; i <= 8; i++ {
				sh(c, "SLURM_ARRAY_TASK_ID="+string(rune('0'+i)))
			}
		default:
			sh(c)
		}
	}
}

// TestReadmeFirstScenario: the scenario the README shows in "Your first
// scenario" is the file its commands run, word for word.
func TestReadmeFirstScenario(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	first, err := os.ReadFile("../../experiments/examples/first.toml")
	require.NoError(t, err)
	require.Contains(t, string(readme), "```toml\n"+string(first)+"```")
}

// TestReadmeLength: the README is the user's manual's front page (issue
// 32: under ~400 lines); the reference, outputs, architecture and history
// live in docs/.
func TestReadmeLength(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	require.Less(t, strings.Count(string(readme), "\n"), 400)
}
