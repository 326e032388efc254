package htmlreport

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeDir makes a run directory holding files.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	return dir
}

const cdf = "arm,metric,quantile,value_ms\n,ttft,0.5,100\n,ttft,0.9,300\n,ttft,0.99,900\n"

// TestBuild: the report shows summary.json's values as written (mean ±
// CI), escapes what it shows, inlines the figures without their XML
// prologue, holds no script, and is the same for the same directory.
func TestBuild(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"summary.json": `{"scenario": "<script>alert(1)</script>", "mode": "serving",
  "latency_ms": {"ttft": {"p99": 912.5}}, "goodput": {"ttft_slo_ms": 800},
  "replications": {"count": 2, "seeds": [1, 18446744073709551615]},
  "sim": {"seed": 18446744073709551615},
  "ci95": {"latency_ms": {"ttft": {"p99": 31.25}}}}`,
		"cdf.csv":    cdf,
		"summary.md": "# fleetsim: <i>x</i>\n",
		"sweep.csv": "workload.arrival.rate_per_s,replications,ttft_p99_ms\n" +
			"\"<b>10</b>\",2,900\n",
	})
	b, err := Build(dir, Options{})
	require.NoError(t, err)
	s := string(b)
	require.NotContains(t, s, "<script")
	require.NotContains(t, s, "<b>10</b>")
	require.Contains(t, s, "&lt;script&gt;alert(1)&lt;/script&gt;")
	require.Contains(t, s, `data-key="latency_ms.ttft.p99">912.5 ± 31.25</td>`)
	require.Contains(t, s, "18446744073709551615", "integers beyond float64 kept as written")
	require.Contains(t, s, `<figure id="figure-ttft_cdf">`)
	require.NotContains(t, s, "<?xml")
	require.Equal(t, 3, strings.Count(s, "<svg "), "ttft_cdf, ttft_ccdf, sweep_ttft_p99")
	require.Contains(t, s, `data-file="sweep.csv"`)
	require.Contains(t, s, "default-src 'none'")
	require.Contains(t, s, "<pre># fleetsim: &lt;i&gt;x&lt;/i&gt;\n</pre>")

	again, err := Build(dir, Options{})
	require.NoError(t, err)
	require.Equal(t, b, again)

	// Written into the directory, the report leaves itself out of the
	// file list, so writing it again gives the same bytes.
	path, err := Write(dir, "", Options{})
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, FileName), path)
	first, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = Write(dir, "", Options{})
	require.NoError(t, err)
	second, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, first, second)
	require.NotContains(t, string(first), "<code>report.html</code>")
}

// TestArmsOrder: an A/B or sweep directory's arms come in the order of
// replications.csv, each a column; the scenario file given is shown.
func TestArmsOrder(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"arms/b-second/summary.json": `{"scenario": "x", "latency_ms": {"ttft": {"p99": 2}}}`,
		"arms/a-third/summary.json":  `{"scenario": "x", "latency_ms": {"ttft": {"p99": 3}}}`,
		"arms/z-first/summary.json":  `{"scenario": "x", "latency_ms": {"ttft": {"p99": 1}}}`,
		"replications.csv":           "arm,replication,seed\nz-first,0,1\nb-second,0,1\n",
		"cdf.csv":                    "arm,metric,quantile,value_ms\nz-first,ttft,0.5,1\nb-second,ttft,0.5,2\n",
		"ab.csv": "metric,arm_a,arm_b,a_mean,b_mean,diff,diff_ci95,rel,rel_ci95\n" +
			"cost.usd,z-first,b-second,1,1,0,,0,\n" +
			"latency_ms.ttft.p99,z-first,b-second,1,2,1,,1,\n" +
			"latency_ms.ttft.p50,z-first,b-second,1,2,1,,1,\n",
	})
	sums, err := ReadSummaries(dir)
	require.NoError(t, err)
	var arms []string
	for _, s := range sums {
		arms = append(arms, s.Arm)
	}
	require.Equal(t, []string{"z-first", "b-second", "a-third"}, arms)

	scen := filepath.Join(t.TempDir(), "mine.toml")
	require.NoError(t, os.WriteFile(scen, []byte("name = \"x\"\n[workload]\n"), 0o644))
	b, err := Build(dir, Options{Scenario: scen})
	require.NoError(t, err)
	require.Contains(t, string(b), "<pre>name = &#34;x&#34;\n[workload]\n</pre>")
	require.Regexp(t, `<th>z-first</th><th>b-second</th><th>a-third</th>`, string(b))
	// ab.csv's headline rows, in Headline's order, then the whole file.
	require.Contains(t, string(b), `data-file="ab.csv" data-rows="2,1">`)
	require.Contains(t, string(b), `<table class="csv" data-file="ab.csv">`)
}

// TestBadInput: a directory that is missing, is not a run directory, or
// holds a malformed summary.json or results file is an error naming the
// file (and line), matching ErrBadInput, and nothing is written.
func TestBadInput(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	for _, tc := range []struct {
		dir  string
		want string
	}{
		{missing, "nope: no such file"},
		{writeDir(t, map[string]string{"notes.txt": "hi"}), "not a run directory: no summary.json"},
		{writeDir(t, map[string]string{"summary.json": "{\n  \"scenario\": \"x\",\n  oops\n}", "cdf.csv": cdf}), "summary.json:3:"},
		{writeDir(t, map[string]string{"summary.json": `[1, 2]`, "cdf.csv": cdf}), "summary.json: json: cannot unmarshal"},
		{writeDir(t, map[string]string{"summary.json": `{"scenario": "x"}`, "cdf.csv": cdf, "ab.csv": "metric,arm_a\nx\n"}), "ab.csv:2: 1 fields, the header has 2"},
		{writeDir(t, map[string]string{"summary.json": `{"scenario": "x"}`, "cdf.csv": "arm,metric,quantile,value_ms\nA,ttft,0.5,fast\n"}), "cdf.csv:2"},
	} {
		_, err := Write(tc.dir, "", Options{})
		require.Error(t, err, tc.dir)
		require.True(t, errors.Is(err, ErrBadInput), "%v", err)
		require.Contains(t, err.Error(), tc.want)
		_, statErr := os.Stat(filepath.Join(tc.dir, FileName))
		require.True(t, os.IsNotExist(statErr), "nothing written into %s", tc.dir)
	}
	dir := writeDir(t, map[string]string{"summary.json": `{"scenario": "x"}`, "cdf.csv": cdf})
	_, err := Build(dir, Options{Scenario: filepath.Join(dir, "missing.toml")})
	require.ErrorIs(t, err, ErrBadInput)
	require.Contains(t, err.Error(), "missing.toml")
}

// TestOddSummaries: summary.json files of unexpected shapes give a report
// or an error, never a panic.
func TestOddSummaries(t *testing.T) {
	for _, js := range []string{`null`, `{}`, `{"ci95": 5}`, `{"scenario": {"a": [1, {"b": null}]}}`,
		`{"replications": {"seeds": "x"}}`, `{"latency_ms": {"ttft": {"p99": "fast"}}, "ci95": {"latency_ms": 1}}`,
		`{"a": 1} trailing`, `{"goodput": {"ttft_slo_ms": -1}}`, `{"sim": {"simulated_seconds": "x"}}`} {
		dir := writeDir(t, map[string]string{"summary.json": js, "cdf.csv": cdf})
		b, err := Build(dir, Options{})
		if err != nil {
			require.ErrorIs(t, err, ErrBadInput, js)
			require.Contains(t, err.Error(), "summary.json", js)
			continue
		}
		require.Contains(t, string(b), "</html>", js)
	}
}
