package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fleetsim-test")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "fleetsim")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic("build failed: " + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fleetsim runs the binary and returns stdout, stderr and the exit status.
func fleetsim(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return out.String(), errb.String(), code
}

// TestDeterminism: the same scenario run twice, and under GOMAXPROCS=1 and
// 2, gives byte-identical summary.json and stdout.
func TestDeterminism(t *testing.T) {
	dir := t.TempDir()
	var sums [][]byte
	var outs []string
	for i, procs := range []string{"1", "2", "2"} {
		d := filepath.Join(dir, procs+"-"+string(rune('a'+i)))
		stdout, stderr, code := fleetsim(t, []string{"GOMAXPROCS=" + procs}, "run", "chat-sessions", "--out", d, "--quiet")
		require.Zero(t, code, stderr)
		b, err := os.ReadFile(filepath.Join(d, "summary.json"))
		require.NoError(t, err)
		sums = append(sums, b)
		outs = append(outs, stdout[:bytes.LastIndex([]byte(stdout), []byte("wrote"))])
	}
	require.Equal(t, string(sums[0]), string(sums[1]))
	require.Equal(t, string(sums[1]), string(sums[2]))
	require.Equal(t, outs[0], outs[1])
	// A different seed gives a different run.
	d := filepath.Join(dir, "seed2")
	_, stderr, code := fleetsim(t, nil, "run", "chat-sessions", "--out", d, "--seed", "2", "--quiet")
	require.Zero(t, code, stderr)
	b, err := os.ReadFile(filepath.Join(d, "summary.json"))
	require.NoError(t, err)
	require.NotEqual(t, string(sums[0]), string(b))
}

func TestSummaryKeys(t *testing.T) {
	d := t.TempDir()
	_, stderr, code := fleetsim(t, nil, "run", "--out", d, "--quiet")
	require.Zero(t, code, stderr)
	b, err := os.ReadFile(filepath.Join(d, "summary.json"))
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, jsonUnmarshal(b, &m))
	for _, path := range [][]string{
		{"requests", "arrived"}, {"requests", "completed"}, {"requests", "failed"}, {"requests", "shed"},
		{"throughput", "requests_per_s"}, {"throughput", "output_tokens_per_s"},
		{"goodput", "requests_per_s"}, {"goodput", "slo_attainment"},
		{"prefix_cache", "hit_rate"}, {"kv", "utilization_mean"},
		{"cost", "usd"}, {"cost", "usd_per_million_output_tokens"},
		{"sim", "events"}, {"sim", "simulated_seconds"}, {"sim", "seed"},
	} {
		requireKey(t, m, path...)
	}
	for _, lat := range []string{"ttft", "tpot", "e2e"} {
		for _, q := range []string{"mean", "p50", "p90", "p99", "p999"} {
			requireKey(t, m, "latency_ms", lat, q)
		}
	}
}

func requireKey(t *testing.T, m map[string]any, path ...string) {
	t.Helper()
	var cur any = m
	for _, k := range path {
		mm, ok := cur.(map[string]any)
		require.True(t, ok, "%v: not an object at %q", path, k)
		cur, ok = mm[k]
		require.True(t, ok, "summary.json lacks %v", path)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.toml")
	require.NoError(t, os.WriteFile(bad, []byte(`name = "bad"
[cluster]
gpu = "H900"
tp = 16
replicas = -1
[router]
name = "fastest"
[workload.arrival]
rate_per_s = nan
[slo]
ttft_msec = 800
`), 0o644))
	out := filepath.Join(dir, "out")
	for _, cmd := range [][]string{{"validate", bad}, {"run", bad, "--out", out}} {
		stdout, stderr, code := fleetsim(t, nil, cmd...)
		require.Equal(t, 2, code, stderr)
		require.Empty(t, stdout)
		for _, want := range []string{"bad.toml:3: cluster.gpu", "H100", "bad.toml:7: router.name", "round-robin",
			"bad.toml:9: workload.arrival.rate_per_s", "bad.toml:11: slo.ttft_msec", "cluster.replicas"} {
			require.Contains(t, stderr, want)
		}
	}
	_, err := os.Stat(out)
	require.True(t, os.IsNotExist(err), "nothing written on bad input")

	for _, args := range [][]string{{}, {"frobnicate"}, {"run", "--bogus"}, {"run", "a.toml", "b.toml"},
		{"validate"}, {"scenarios", "show", "nope"}, {"trace"}, {"trace", "stats", filepath.Join(dir, "missing.jsonl")}} {
		_, stderr, code := fleetsim(t, nil, args...)
		require.Equal(t, 2, code, "%v: %s", args, stderr)
		require.NotEmpty(t, stderr)
	}
}

// TestRunawayInputIsRefused: valid-looking numbers that would make a run
// effectively endless (a billion failures, a sample every microsecond) are
// refused up front with the key and line, and nothing is written.
func TestRunawayInputIsRefused(t *testing.T) {
	dir := t.TempDir()
	base, _, code := fleetsim(t, nil, "scenarios", "show", "default")
	require.Zero(t, code)
	for _, c := range []struct{ extra, want string }{
		{"[failures]\nenabled = true\nrate_multiplier = 1e12\n", "failures.rate_multiplier: 1e+12 gives about"},
		{"[run]\nsample_interval_s = 1e-6\n", "run.sample_interval_s: must be at least 0.001 s"},
		{"[run]\nsample_interval_s = 0.001\n", "run.sample_interval_s: 0.001 s gives 4.2e+06 events"},
		{"[disagg]\nenabled = true\n[rollout]\nenabled = true\n", "disagg.enabled: cannot be combined with [rollout]"},
	} {
		f := filepath.Join(dir, "s.toml")
		require.NoError(t, os.WriteFile(f, []byte(base+c.extra), 0o644))
		out := filepath.Join(dir, "out")
		_, stderr, code := fleetsim(t, nil, "run", f, "--out", out, "--quiet")
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, "s.toml:")
		require.Contains(t, stderr, c.want)
		_, err := os.Stat(out)
		require.True(t, os.IsNotExist(err), "nothing written on bad input")
	}
}

func TestScenariosShowRoundTrips(t *testing.T) {
	list, _, code := fleetsim(t, nil, "scenarios")
	require.Zero(t, code)
	require.Contains(t, list, "default")
	toml, _, code := fleetsim(t, nil, "scenarios", "show", "default")
	require.Zero(t, code)
	f := filepath.Join(t.TempDir(), "mine.toml")
	require.NoError(t, os.WriteFile(f, []byte(toml), 0o644))
	out, stderr, code := fleetsim(t, nil, "validate", f)
	require.Zero(t, code, stderr)
	require.Contains(t, out, "ok")
}
func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// TestRequestsCSV: --requests streams one row per completed request, and
// the rows agree with summary.json.
func TestRequestsCSV(t *testing.T) {
	d := t.TempDir()
	_, stderr, code := fleetsim(t, nil, "run", "static-batching", "--out", d, "--quiet", "--requests")
	require.Zero(t, code, stderr)
	var sum struct {
		Requests struct {
			Completed int `json:"completed"`
		} `json:"requests"`
		LatencyMs struct {
			TTFT struct {
				Mean float64 `json:"mean"`
			} `json:"ttft"`
		} `json:"latency_ms"`
	}
	b, err := os.ReadFile(filepath.Join(d, "summary.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &sum))
	f, err := os.Open(filepath.Join(d, "requests.csv"))
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	require.Equal(t, "ttft_ms", rows[0][8])
	require.Len(t, rows, sum.Requests.Completed+1)
	var ttft float64
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[8], 64)
		require.NoError(t, err)
		ttft += v
	}
	require.InEpsilon(t, sum.LatencyMs.TTFT.Mean, ttft/float64(len(rows)-1), 1e-4)
}

// TestExperimentCommands: ab, sweep and size run on built-ins and answer bad
// flags with exit status 2.
func TestExperimentCommands(t *testing.T) {
	d := t.TempDir()
	out, stderr, code := fleetsim(t, nil, "ab", "cache-affinity", "--replications", "2", "--out", filepath.Join(d, "ab"), "--quiet")
	require.Zero(t, code, stderr)
	require.Contains(t, out, "prefix-affinity vs round-robin:")
	for _, f := range []string{"ab.csv", "arms/round-robin/summary.json", "arms/prefix-affinity/summary.json", "cdf.csv", "summary.md"} {
		_, err := os.Stat(filepath.Join(d, "ab", f))
		require.NoError(t, err, f)
	}
	out, stderr, code = fleetsim(t, nil, "sweep", "default", "--param", "cluster.replicas=3..4", "--param", "workload.duration_s=60",
		"--out", filepath.Join(d, "sweep"), "--quiet")
	require.Zero(t, code, stderr)
	require.Contains(t, out, "2 points")
	b, err := os.ReadFile(filepath.Join(d, "sweep", "sweep.csv"))
	require.NoError(t, err)
	require.Contains(t, string(b), "cluster.replicas,workload.duration_s,replications,ttft_p99_ms")

	for _, args := range [][]string{
		{"ab"}, {"ab", "default"}, {"ab", "cache-affinity", "--replications", "-1"}, {"ab", "--nope", "cache-affinity"},
		{"sweep", "default"}, {"sweep", "default", "--param", "cluster.replicas=9..1"}, {"sweep", "default", "--param", "cluster.nope=1"},
		{"size", "default"}, {"size", "default", "--slo", "ttft_p99=fast"}, {"size", "n-plus-2", "--confidence", "2"},
		{"run", "--replications", "-2"}, {"plot"},
	} {
		_, stderr, code := fleetsim(t, nil, args...)
		require.Equal(t, 2, code, "%v: %s", args, stderr)
		require.NotEmpty(t, stderr)
	}
}

// TestBadPolicyConfig: bad policy, rollout, failure and placement settings
// are each reported with file, line and key, all at once, exit status 2.
func TestBadPolicyConfig(t *testing.T) {
	f := filepath.Join(t.TempDir(), "bad.toml")
	require.NoError(t, os.WriteFile(f, []byte(`[cluster]
gpu = "H100"
tp = 16
[policies.hedge]
name = "sometimes"
budget = 1.5
[policies.breaker]
name = "sliding-window"
window_s = 2
cooldown_s = 5
[rollout]
enabled = true
steps = ["90:5", "0:100"]
[failures]
enabled = true
profile = "llama4"
rate_multiplier = -1
`), 0o644))
	_, stderr, code := fleetsim(t, nil, "validate", f)
	require.Equal(t, 2, code)
	for _, want := range []string{
		"bad.toml:3: cluster.tp", "TP must divide 8",
		"bad.toml:5: policies.hedge.name", "adaptive",
		"bad.toml:6: policies.hedge.budget",
		"bad.toml:9: policies.breaker.window_s", "shorter than the cooldown",
		"bad.toml:13: rollout.steps", "sum to 100",
		"bad.toml:16: failures.profile", "llama3",
		"bad.toml:17: failures.rate_multiplier",
	} {
		require.Contains(t, stderr, want)
	}
}

// TestShardAndMerge: a sweep, an A/B and a run split into shards and
// merged write byte-identical files to the unsharded command.
func TestShardAndMerge(t *testing.T) {
	d := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"sweep", []string{"sweep", "static-batching", "--param", "cluster.replica.max_seqs=8,16,32", "--replications", "2"}},
		{"ab", []string{"ab", "cache-affinity", "--replications", "3"}},
		{"run", []string{"run", "chat-sessions", "--replications", "3"}},
		// A training sweep: its training_timeline.csv travels in the parts.
		{"training", []string{"sweep", "llama3-pretrain", "--param", "training.spare_servers=0,2", "--replications", "2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole := filepath.Join(d, tc.name, "whole")
			_, stderr, code := fleetsim(t, nil, append(tc.args, "--out", whole, "--quiet")...)
			require.Zero(t, code, stderr)
			parts := filepath.Join(d, tc.name, "parts")
			var files []string
			for i := 1; i <= 3; i++ {
				out, stderr, code := fleetsim(t, nil, append(tc.args, "--out", parts, "--quiet", "--shard", fmt.Sprintf("%d/3", i))...)
				require.Zero(t, code, stderr)
				require.Contains(t, out, "part-")
				files = append(files, filepath.Join(parts, fmt.Sprintf("part-%d-of-3.json", i)))
			}
			merged := filepath.Join(d, tc.name, "merged")
			_, stderr, code = fleetsim(t, nil, append([]string{"merge", "--out", merged}, files...)...)
			require.Zero(t, code, stderr)
			want := readTree(t, whole)
			got := readTree(t, merged)
			if tc.name == "training" {
				require.Contains(t, want, "training_timeline.csv")
			}
			require.Equal(t, len(want), len(got))
			for name, b := range want {
				require.Equal(t, string(b), string(got[name]), name)
			}
			// A missing shard is an error, not a partial result.
			_, stderr, code = fleetsim(t, nil, "merge", "--out", filepath.Join(d, tc.name, "bad"), files[0], files[2])
			require.Equal(t, 2, code)
			require.Contains(t, stderr, "2/3 are missing")
		})
	}
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return nil
	}))
	return out
}

// TestSparesPlot: a run with warm spares writes their swaps to failures.csv
// and fleetsim plot draws them on the failures timeline.
func TestSparesPlot(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "spares.toml")
	require.NoError(t, os.WriteFile(f, []byte(`name = "spares"
seed = 3
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 8
replicas = 8
[workload]
duration_s = 1200
[workload.arrival]
rate_per_s = 20
[failures]
enabled = true
rate_multiplier = 30000
cold_start_s = 60
spares = 2
spare_after_s = 0
`), 0o644))
	out := filepath.Join(dir, "out")
	_, stderr, code := fleetsim(t, nil, "run", f, "--out", out, "--quiet")
	require.Zero(t, code, stderr)
	csv, err := os.ReadFile(filepath.Join(out, "failures.csv"))
	require.NoError(t, err)
	require.Contains(t, string(csv), ",spare,replica ", "a spare was swapped in")
	_, stderr, code = fleetsim(t, nil, "plot", out)
	require.Zero(t, code, stderr)
	svg, err := os.ReadFile(filepath.Join(out, "plots", "failures_timeline.svg"))
	require.NoError(t, err)
	require.Contains(t, string(svg), "spare swapped in (")
}

// TestEscalationAndSwapDelayPlot: with repair escalation and a spare swap
// delay, failures.csv gives each failure's repair path and each swap's
// delay, the spare serves only after it (a spare-in row, spare_swap_s
// later), and fleetsim plot draws both on the failures timeline.
func TestEscalationAndSwapDelayPlot(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "esc.toml")
	require.NoError(t, os.WriteFile(f, []byte(`name = "esc"
seed = 5
[cluster]
gpu = "H100"
model = "llama-3-8b"
tp = 8
replicas = 8
[workload]
duration_s = 1200
[workload.arrival]
rate_per_s = 20
[failures]
enabled = true
rate_multiplier = 30000
cold_start_s = 60
spares = 2
spare_after_s = 0
spare_swap_s = 120
[failures.escalation]
enabled = true
`), 0o644))
	out := filepath.Join(dir, "out")
	_, stderr, code := fleetsim(t, nil, "run", f, "--out", out, "--quiet")
	require.Zero(t, code, stderr)
	data, err := os.ReadFile(filepath.Join(out, "failures.csv"))
	require.NoError(t, err)
	csv := string(data)
	require.True(t, strings.HasPrefix(csv, "time_s,event,unit,gpus_down,capacity_frac,detail,arm,replication\n"), csv[:80])
	require.Regexp(t, `,spare,replica \d+ for \d+,\d+,[0-9.]+,serves after a 120 s swap,,0\n`, csv)
	require.Regexp(t, `,fail,replica \d+,\d+,[0-9.]+,"?[a-z-]+: [a-z>-]+, [0-9.]+ h; spare swap 120 s"?,,0\n`, csv)
	require.Regexp(t, `,fail,replica \d+,\d+,[0-9.]+,"[a-z-]+: (reset|reboot|hw-swap)>[a-z>-]+, [0-9.]+ h[^"]*",,0\n`, csv, "an escalated repair")
	// Every swap is followed, 120 s later, by its spare serving.
	var swaps, ins []float64
	for _, line := range strings.Split(strings.TrimSpace(csv), "\n")[1:] {
		fields := strings.Split(line, ",")
		ts, err := strconv.ParseFloat(fields[0], 64)
		require.NoError(t, err)
		switch fields[1] {
		case "spare":
			swaps = append(swaps, ts)
		case "spare-in":
			ins = append(ins, ts)
		}
	}
	require.NotEmpty(t, swaps)
	for k, in := range ins {
		require.InDelta(t, swaps[k]+120, in, 1e-6)
	}
	_, stderr, code = fleetsim(t, nil, "plot", out)
	require.Zero(t, code, stderr)
	svg, err := os.ReadFile(filepath.Join(out, "plots", "failures_timeline.svg"))
	require.NoError(t, err)
	require.Contains(t, string(svg), "repair escalated (")
	require.Contains(t, string(svg), "spare serving after the swap (")
}

// --set changes one scenario key for a command (no TOML edit for "what if
// 15 req/s"), refuses a bad key or spec with the flag named, and a mistyped
// built-in name gets a suggestion.
func TestSetFlagAndBuiltinSuggestion(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := fleetsim(t, nil, "run", "default", "--set", "workload.arrival.rate_per_s=5", "--set", "workload.duration_s=60",
		"--json", "--out", filepath.Join(dir, "a"))
	require.Zero(t, code, stderr)
	var s struct {
		Throughput struct {
			RequestsPerS float64 `json:"requests_per_s"`
		} `json:"throughput"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &s))
	require.InDelta(t, 5, s.Throughput.RequestsPerS, 1.5, "the default's 20 req/s set to 5")

	_, stderr, code = fleetsim(t, nil, "run", "default", "--set", "workload.arrival.rate=5", "--out", filepath.Join(dir, "b"))
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `--set workload.arrival.rate=5: workload.arrival.rate: unknown key; did you mean "rate_per_s"?`)
	_, stderr, code = fleetsim(t, nil, "ab", "tail-at-scale", "--set", "nokey", "--out", filepath.Join(dir, "c"))
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `--set "nokey": expected KEY=VALUE`)

	_, stderr, code = fleetsim(t, nil, "run", "defualt")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `no built-in scenario "defualt"; did you mean "default"?`)
}

// trace stats reads the traces shipped in the binary by the name a
// scenario gives them (builtin:NAME), and names the built-ins when one is
// not there.
func TestTraceStatsBuiltin(t *testing.T) {
	stdout, stderr, code := fleetsim(t, nil, "trace", "stats", "builtin:conversation_trace.jsonl")
	require.Zero(t, code, stderr)
	require.Contains(t, stdout, "rows         12031")
	_, stderr, code = fleetsim(t, nil, "trace", "stats", "builtin:nope.jsonl")
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `no built-in trace "builtin:nope.jsonl"; built-ins: builtin:AzureLLMInferenceTrace_code.csv, builtin:conversation_trace.jsonl`)
}
