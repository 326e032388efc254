package plot

import (
	"bytes"
	"encoding/xml"
	"flag"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	gplot "gonum.org/v1/plot"
)

var keep = flag.String("keep", "", "copy the plots of TestDir into this directory, to look at them")

// fixture copies testdata/run, less the files in drop, into a fresh
// directory.
func fixture(t *testing.T, drop ...string) string {
	t.Helper()
	dir := t.TempDir()
	ents, err := os.ReadDir("testdata/run")
	require.NoError(t, err)
	for _, e := range ents {
		if contains(drop, e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join("testdata/run", e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644))
	}
	return dir
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func names(dir string, written []string) []string {
	var out []string
	for _, w := range written {
		rel, _ := filepath.Rel(filepath.Join(dir, "plots"), w)
		out = append(out, rel)
	}
	return out
}

func both(figs ...string) []string {
	var out []string
	for _, f := range figs {
		out = append(out, f+".png", f+".svg")
	}
	sort.Strings(out)
	return out
}

// svgText is the text of every <text> element of an SVG, which must parse
// as XML.
func svgText(t *testing.T, b []byte) string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var sb strings.Builder
	inText := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err, "SVG does not parse as XML")
		switch e := tok.(type) {
		case xml.StartElement:
			if e.Name.Local == "text" {
				inText++
			}
		case xml.EndElement:
			if e.Name.Local == "text" {
				inText--
			}
		case xml.CharData:
			if inText > 0 {
				sb.Write(e)
				sb.WriteByte('\n')
			}
		}
	}
	return sb.String()
}

// checkPNG: the file decodes as a PNG and is not a single flat colour.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err, path)
	b := img.Bounds()
	require.Greater(t, b.Dx(), 500, path)
	colours := map[[4]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, bl, a}] = true
		}
	}
	require.Greater(t, len(colours), 3, "%s is (nearly) a single flat colour", path)
}

// want lists, per figure, text its SVG must contain: title, axis labels
// with units, legend entries.
var want = map[string][]string{
	"ttft_cdf":                {"Time to first token, CDF — default", "time to first token (ms, log scale)", "fraction of requests ≤ latency", "round-robin", "least-outstanding", "TTFT SLO 800 ms"},
	"tpot_cdf":                {"Time per output token, CDF — default", "time per output token (ms, log scale)", "round-robin", "TPOT SLO 100 ms"},
	"e2e_cdf":                 {"End-to-end latency, CDF — default", "end-to-end latency (ms, log scale)", "fraction of requests ≤ latency", "least-outstanding"},
	"ttft_ccdf":               {"Time to first token, tail (1 − CDF) — default", "time to first token (ms, log scale)", "fraction of requests > latency (log scale)", "round-robin", "least-outstanding", "TTFT SLO 800 ms", "0.0001"},
	"tpot_ccdf":               {"Time per output token, tail (1 − CDF) — default", "round-robin", "TPOT SLO 100 ms"},
	"e2e_ccdf":                {"End-to-end latency, tail (1 − CDF) — default", "end-to-end latency (ms, log scale)", "least-outstanding"},
	"kv_utilisation":          {"KV-cache utilisation — default", "simulated time (s)", "fraction of KV-cache blocks", "round-robin: KV used", "least-outstanding: KV cached only"},
	"load_timeseries":         {"Requests in the system — default", "simulated time (s)", "requests", "round-robin: in flight", "least-outstanding: waiting"},
	"arrivals_timeseries":     {"Arrivals and completions — default", "simulated time (s)", "requests per second (req/s)", "round-robin: arrivals", "least-outstanding: completions"},
	"availability_timeseries": {"Replicas in service (replication 0) — default", "simulated time (s)", "replicas", "round-robin: in service", "least-outstanding: in service"},
	"sweep_ttft_p99":          {"p99 TTFT across the sweep — default", "arrival rate, requests/s (workload.arrival.rate_per_s)", "p99 time to first token (ms, log scale)", "p99 TTFT, cluster.replicas = 4 (95% CI)", "p99 TTFT, cluster.replicas = 6 (95% CI)", "TTFT SLO 800 ms"},
	"sweep_goodput":           {"Goodput and throughput across the sweep — default", "arrival rate, requests/s (workload.arrival.rate_per_s)", "requests per second (req/s)", "goodput, cluster.replicas = 4 (95% CI)", "throughput, cluster.replicas = 6"},
	"size_cost":               {"Fleet cost by size — default", "serving replicas", "fleet cost (USD per month)", "met the SLO", "missed the SLO", "reported sizes", "search with failures", "search without failures", "N (no failures)", "N+1", "N+2"},
	"size_ttft":               {"p99 TTFT by fleet size — default", "serving replicas", "p99 time to first token (ms, log scale)", "met the SLO", "TTFT SLO 800 ms", "N+2"},
	"failures_timeline":       {"Failures and repairs (replication 0) — default", "simulated time (h)", "available capacity (fraction of GPUs)", "available capacity", "failure (6)", "repair (6)"},
	"cost_vs_slo":             {"Cost vs SLO attainment — default", "SLO attainment (% of requests meeting the SLO)", "cost (USD per 720-h month)", "rate_per_s = 10, replicas = 4"},
	"ettr":                    {"Effective training time ratio by checkpoint interval — default", "checkpoint interval (min, log scale)", "ETTR (productive fraction of time)", "ETTR (95% CI)", "best: 15 min, ETTR 0.935"},
}

func TestDir(t *testing.T) {
	dir := fixture(t)
	written, err := Dir(dir)
	require.NoError(t, err)
	var figs []string
	for f := range want {
		figs = append(figs, f)
	}
	require.Equal(t, both(figs...), names(dir, written))
	require.True(t, sort.StringsAreSorted(written))
	for _, w := range written {
		st, err := os.Stat(w)
		require.NoError(t, err)
		require.NotZero(t, st.Size(), w)
		if strings.HasSuffix(w, ".png") {
			checkPNG(t, w)
			continue
		}
		b, err := os.ReadFile(w)
		require.NoError(t, err)
		text := svgText(t, b)
		for _, s := range want[strings.TrimSuffix(filepath.Base(w), ".svg")] {
			require.Contains(t, text, s, w)
		}
	}
	// No temporary files are left behind.
	ents, err := os.ReadDir(filepath.Join(dir, "plots"))
	require.NoError(t, err)
	require.Len(t, ents, len(written))
	if *keep != "" {
		require.NoError(t, os.MkdirAll(*keep, 0o755))
		for _, w := range written {
			b, err := os.ReadFile(w)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(*keep, filepath.Base(w)), b, 0o644))
		}
	}
}

// TestDirDeterministic: the same results give byte-identical files.
func TestDirDeterministic(t *testing.T) {
	a, b := fixture(t), fixture(t)
	wa, err := Dir(a)
	require.NoError(t, err)
	wb, err := Dir(b)
	require.NoError(t, err)
	require.Equal(t, names(a, wa), names(b, wb))
	for i := range wa {
		ba, err := os.ReadFile(wa[i])
		require.NoError(t, err)
		bb, err := os.ReadFile(wb[i])
		require.NoError(t, err)
		require.True(t, bytes.Equal(ba, bb), "%s differs between two runs", filepath.Base(wa[i]))
	}
}

// TestDirOptional: a missing file or optional column skips the figures that
// need it and nothing else.
func TestDirOptional(t *testing.T) {
	for _, tc := range []struct {
		name string
		drop []string
		edit func(t *testing.T, dir string)
		want []string
	}{
		{
			name: "cdf only, no summary",
			drop: []string{"summary.json", "timeseries.csv", "sweep.csv", "size.csv", "size_search.csv", "failures.csv", "ettr.csv"},
			want: []string{"ttft_cdf", "tpot_cdf", "e2e_cdf", "ttft_ccdf", "tpot_ccdf", "e2e_ccdf"},
		},
		{
			name: "no failures or ettr",
			drop: []string{"failures.csv", "ettr.csv", "cdf.csv", "timeseries.csv"},
			want: []string{"sweep_ttft_p99", "sweep_goodput", "cost_vs_slo", "size_cost", "size_ttft"},
		},
		{
			name: "size without its search",
			drop: []string{"size_search.csv", "cdf.csv", "timeseries.csv", "sweep.csv", "failures.csv", "ettr.csv"},
			want: []string{"size_cost", "size_ttft"},
		},
		{
			name: "timeseries without kv columns, cdf without tpot",
			drop: []string{"sweep.csv", "size.csv", "size_search.csv", "failures.csv", "ettr.csv"},
			edit: func(t *testing.T, dir string) {
				rewrite(t, filepath.Join(dir, "timeseries.csv"), func(rec []string) []string { return rec[:7] })
				rewrite(t, filepath.Join(dir, "cdf.csv"), func(rec []string) []string {
					if rec[1] == "tpot" {
						return nil
					}
					return rec
				})
			},
			want: []string{"ttft_cdf", "e2e_cdf", "ttft_ccdf", "e2e_ccdf", "load_timeseries", "arrivals_timeseries"},
		},
		{
			name: "sweep without goodput",
			drop: []string{"cdf.csv", "timeseries.csv", "size.csv", "size_search.csv", "failures.csv", "ettr.csv"},
			edit: func(t *testing.T, dir string) {
				rewrite(t, filepath.Join(dir, "sweep.csv"), func(rec []string) []string { return rec[:7] })
			},
			want: []string{"sweep_ttft_p99"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := fixture(t, tc.drop...)
			if tc.edit != nil {
				tc.edit(t, dir)
			}
			written, err := Dir(dir)
			require.NoError(t, err)
			require.Equal(t, both(tc.want...), names(dir, written))
		})
	}
}

// rewrite applies f to every record of a CSV file (header included); a nil
// result drops the record.
func rewrite(t *testing.T, path string, f func([]string) []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if rec := f(strings.Split(line, ",")); rec != nil {
			out = append(out, strings.Join(rec, ","))
		}
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(out, "\n")+"\n"), 0o644))
}

// TestDirMalformed: a malformed file is an error naming file and line, that
// matches ErrBadInput, and nothing is written.
func TestDirMalformed(t *testing.T) {
	for _, tc := range []struct {
		file, content, want string
	}{
		{"cdf.csv", "arm,metric,quantile,value_ms\nA,ttft,0.5,100\nA,ttft,0.9,abc\n", "cdf.csv:3: column value_ms: \"abc\" is not a finite number"},
		{"cdf.csv", "arm,metric,quantile,value_ms\nA,ttft,1.5,100\n", "cdf.csv:2: column quantile: 1.5 is not in (0, 1)"},
		{"cdf.csv", "arm,metric,quantile\nA,ttft,0.5\n", "cdf.csv:1: no column \"value_ms\""},
		{"cdf.csv", "arm,metric,quantile,value_ms\nA,ttft,0.5\n", "cdf.csv:2: 3 fields, the header has 4"},
		{"cdf.csv", "arm,metric,quantile,value_ms\nA,ttft,0.5,NaN\n", "cdf.csv:2: column value_ms"},
		{"cdf.csv", "arm,metric,quantile,value_ms\n\"A,ttft,0.5,1\n", "cdf.csv:2:"},
		{"cdf.csv", "", "cdf.csv:1: empty file"},
		{"cdf.csv", "arm,arm,quantile,value_ms\n", "cdf.csv:1: column \"arm\" appears twice"},
		{"timeseries.csv", "arm,replication,time_s,in_flight\nA,0,0,1\nA,x,5,2\n", "timeseries.csv:3: column replication: \"x\" is not an integer"},
		{"sweep.csv", "rate,replications,ttft_p99_ms\n10,3,100\n", "sweep.csv:1: no parameter columns"},
		{"sweep.csv", "workload.rate,replications,ttft_p99_ms,ttft_p99_ms_ci95\n10,3,100,-1\n", "sweep.csv:2: column ttft_p99_ms_ci95: -1 is negative"},
		{"size_search.csv", "replicas,failures,ttft_p99_ms,met_slo,usd_per_month\n4,true,100,maybe,1\n", "size_search.csv:2: column met_slo: \"maybe\" is not true or false"},
		{"size.csv", "row,replicas,usd_per_month\n,4,1\n", "size.csv:2: column row: empty label"},
		{"failures.csv", "time_s,event,unit,gpus_down,capacity_frac\n10,explode,n0,8,0.5\n", "failures.csv:2: column event: \"explode\" is not one of fail, repair, spare"},
		{"failures.csv", "time_s,event,unit,gpus_down,capacity_frac\n10,fail,n0,8,0.5\n5,repair,n0,0,1\n", "failures.csv:3: column time_s: 5 is before the previous event"},
		{"ettr.csv", "checkpoint_interval_s,ettr,ettr_ci95\n0,0.9,0.01\n", "ettr.csv:2: column checkpoint_interval_s: 0 is not positive"},
		{"summary.json", "{\n  \"scenario\": \"x\",\n  \"goodput\": {\"ttft_slo_ms\": \"fast\"}\n}\n", "summary.json:3:"},
		{"summary.json", "{\n  \"scenario\": \"x\",\n", "summary.json:"},
	} {
		t.Run(tc.file+"/"+tc.want, func(t *testing.T) {
			dir := fixture(t)
			require.NoError(t, os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.content), 0o644))
			_, err := Dir(dir)
			require.Error(t, err)
			require.ErrorIs(t, err, ErrBadInput)
			require.Contains(t, err.Error(), filepath.Join(dir, tc.want))
			_, err = os.Stat(filepath.Join(dir, "plots"))
			require.ErrorIs(t, err, os.ErrNotExist, "nothing is written")
		})
	}
}

// TestDirArmsMeta: an A/B or sweep directory has no summary.json at the
// top; the titles and SLO lines come from the first arm's.
func TestDirArmsMeta(t *testing.T) {
	dir := fixture(t, "summary.json", "timeseries.csv", "sweep.csv", "size.csv", "size_search.csv", "failures.csv", "ettr.csv")
	for _, arm := range []string{"round-robin", "least-outstanding"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "arms", arm), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "arms", arm, "summary.json"),
			[]byte(`{"scenario": "ab-`+arm+`", "goodput": {"ttft_slo_ms": 650}}`), 0o644))
	}
	written, err := Dir(dir)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(dir, "plots", "ttft_cdf.svg"))
	require.NoError(t, err)
	text := svgText(t, b)
	require.Contains(t, text, "Time to first token, CDF — ab-least-outstanding")
	require.Contains(t, text, "TTFT SLO 650 ms")
	require.Len(t, written, 12) // three CDFs and their CCDFs
}

func TestDirEmpty(t *testing.T) {
	dir := t.TempDir()
	_, err := Dir(dir)
	require.ErrorIs(t, err, ErrBadInput)
	require.ErrorContains(t, err, "no results to plot in "+dir+": expected summary.json, cdf.csv")

	_, err = Dir(filepath.Join(dir, "absent"))
	require.ErrorIs(t, err, ErrBadInput)

	// A summary alone, or header-only files, leave nothing to draw.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.json"), []byte(`{"scenario":"x"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cdf.csv"), []byte("arm,metric,quantile,value_ms\n"), 0o644))
	_, err = Dir(dir)
	require.ErrorIs(t, err, ErrBadInput)
	require.ErrorContains(t, err, "nothing to plot in "+dir)
}

// TestBuilders: the per-figure functions on in-memory rows, including the
// edge cases Dir never passes them.
func TestBuilders(t *testing.T) {
	m := Meta{Scenario: "s", TTFTSLOMs: 500}
	_, err := CDF(m, "queue", nil)
	require.ErrorContains(t, err, "unknown latency metric")
	_, err = CDF(m, "ttft", []CDFPoint{{Metric: "e2e", Quantile: 0.5, ValueMs: 1}})
	require.Error(t, err)
	// A zero latency turns the log axis off rather than failing.
	f, err := CDF(m, "ttft", []CDFPoint{{Metric: "ttft", Quantile: 0.5, ValueMs: 0}, {Metric: "ttft", Quantile: 0.9, ValueMs: 10}})
	require.NoError(t, err)
	require.Equal(t, "time to first token (ms)", f.Plot.X.Label.Text)

	// Non-finite values handed in directly are skipped, not fatal.
	f, err = CDF(m, "e2e", []CDFPoint{{Metric: "e2e", Quantile: 0.5, ValueMs: math.NaN()}, {Metric: "e2e", Quantile: 0.9, ValueMs: 10}, {Metric: "e2e", Quantile: 0.99, ValueMs: 40}})
	require.NoError(t, err)
	_, err = Write(t.TempDir(), f)
	require.NoError(t, err)

	// A nominal sweep parameter and a third parameter.
	s := Sweep{Params: []string{"cluster.router", "cluster.replicas", "seed.x"}}
	for i, r := range []string{"round-robin", "p2c", "round-robin", "p2c"} {
		s.Rows = append(s.Rows, SweepRow{Values: []string{r, "4", []string{"1", "2"}[i/2]}, TTFTP99Ms: 100 + float64(i), TTFTP99MsCI95: math.NaN(), GoodputRPS: 3, ThroughputRPS: math.NaN()})
	}
	f, err = SweepTTFT(m, s)
	require.NoError(t, err)
	dir := t.TempDir()
	written, err := Write(dir, f)
	require.NoError(t, err)
	b, err := os.ReadFile(written[1])
	require.NoError(t, err)
	text := svgText(t, b)
	for _, w := range []string{"round-robin", "p2c", "router (cluster.router)", "p99 TTFT, cluster.replicas = 4, seed.x = 2"} {
		require.Contains(t, text, w)
	}
	_, err = SweepGoodput(m, Sweep{Params: []string{"a.b"}, Rows: []SweepRow{{Values: []string{"1", "2"}}}})
	require.ErrorContains(t, err, "2 parameter values for 1 parameters")

	_, err = SizeCost(m, nil, nil)
	require.Error(t, err)
	_, err = FailuresTimeline(m, nil)
	require.Error(t, err)
	_, err = ETTR(m, ETTRSweep{})
	require.Error(t, err)

	// Write of nothing writes nothing.
	written, err = Write(t.TempDir())
	require.NoError(t, err)
	require.Empty(t, written)
}

func TestTicks(t *testing.T) {
	labels := func(ts []gplot.Tick) []string {
		var out []string
		for _, t := range ts {
			if t.Label != "" {
				out = append(out, t.Label)
			}
		}
		return out
	}
	require.Equal(t, []string{"0", "0.2", "0.4", "0.6", "0.8", "1"}, labels(numTicks{}.Ticks(0, 1)))
	require.Equal(t, []string{"1", "2", "3", "4", "5", "6", "7", "8"}, labels(integerTicks{}.Ticks(0.5, 8.5)))
	require.Equal(t, []string{"0", "100000", "200000", "300000", "400000"}, labels(numTicks{}.Ticks(0, 420000)))
	require.Equal(t, []string{"50", "100", "200", "500", "1000"}, labels(logTicks{}.Ticks(math.Log10(35), math.Log10(1800))))
	require.Equal(t, []string{"1", "10", "100", "1000", "10000"}, labels(logTicks{}.Ticks(0, 4.2)))
	require.Equal(t, "0.3", fmtTick(0.1+0.2))
}

// TestPlanFrontier: a plan directory's plan.csv gives plan_frontier: the
// configurations sized (met and missed), the frontier and the chosen one
// named; rows not simulated are skipped.
func TestPlanFrontier(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile("testdata/run/summary.json")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "summary.json"), b, 0o644))
	plan := "config,gpu,tp,ep,max_batched_tokens,max_seqs,gpus_per_replica,roofline_rps_per_replica,replicas,gpus,usd_per_month,ttft_p99_ms,output_tokens_per_s_per_gpu,sizes_simulated,met_slo,frontier,status,reason\n" +
		"H100 tp=1 mbt=8192 seqs=256,H100,1,1,8192,256,1,,,,,,,0,,,does not fit,x\n" +
		"H100 tp=2 mbt=8192 seqs=256,H100,2,1,8192,256,2,3.5,8,16,74880,900,400,4,true,true,chosen,the cheapest\n" +
		"H100 tp=4 mbt=8192 seqs=256,H100,4,1,8192,256,4,8,5,20,93600,500,330,3,true,true,dearer than the chosen one,y\n" +
		"H100 tp=4 mbt=1024 seqs=256,H100,4,1,1024,256,4,8,6,24,112320,700,270,3,true,false,dearer than the chosen one,z\n" +
		"H200 tp=1 mbt=8192 seqs=256,H200,1,1,8192,256,1,2,64,64,322560,5000,90,6,false,false,misses the SLO at any size,w\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plan.csv"), []byte(plan), 0o644))
	written, err := Dir(dir)
	require.NoError(t, err)
	require.Equal(t, both("plan_frontier"), names(dir, written))
	svg, err := os.ReadFile(filepath.Join(dir, "plots", "plan_frontier.svg"))
	require.NoError(t, err)
	for _, s := range []string{"Deployments searched: cost vs p99 TTFT", "fleet cost (USD per 720-h month)", "p99 time to first token (ms)",
		"met the SLO (3)", "missed it at its largest size (1)", "Pareto frontier (2", "chosen: H100 tp=2 mbt=8192 seqs=256", "TTFT SLO"} {
		require.Contains(t, string(svg), s)
	}
}

// TestLogWhiskerCut: on a log axis a lower 95% bound below half the value
// cannot be drawn to scale; the bar stops at half the value with a
// down-pointing mark, and the legend says so (it was cut silently).
// Bars that fit are not marked.
func TestLogWhiskerCut(t *testing.T) {
	rows := []SizeRow{
		{Row: "N", Replicas: 4, TTFTP99Ms: 10, TTFTP99MsCI95: 1, MetSLO: true},
		{Row: "N+1", Replicas: 5, TTFTP99Ms: 500, TTFTP99MsCI95: 400, MetSLO: false},
	}
	f, err := SizeTTFT(Meta{}, rows, nil)
	require.NoError(t, err)
	require.Contains(t, f.Plot.Y.Label.Text, "log scale")
	require.Equal(t, 1, strings.Count(legendText(t, f), cutNote))
	rows[1].TTFTP99MsCI95 = 100 // 500 − 100 > 250: drawn to scale
	f, err = SizeTTFT(Meta{}, rows, nil)
	require.NoError(t, err)
	require.NotContains(t, legendText(t, f), cutNote)
	lo, _, cut := scale(true).bar(500, 400)
	require.True(t, cut)
	require.InDelta(t, math.Log10(2), lo, 1e-12)
}

// TestLoadThreeArms: with three arms the load figure draws one line per
// arm (in flight), not six solid and dashed lines that tangle; with two,
// both series of each.
func TestLoadThreeArms(t *testing.T) {
	var pts []TimePoint
	for _, arm := range []string{"a", "b", "c"} {
		for i := range 5 {
			pts = append(pts, TimePoint{Arm: arm, TimeS: float64(i), InFlight: float64(i), Waiting: 1,
				KVUsedFrac: math.NaN(), KVCachedFrac: math.NaN(), ArrivalsPerS: math.NaN(), CompletionsPerS: math.NaN()})
		}
	}
	f, err := Load(Meta{}, pts)
	require.NoError(t, err)
	text := legendText(t, f)
	require.Contains(t, text, "c: in flight")
	require.NotContains(t, text, "waiting")
	f, err = Load(Meta{}, pts[:10])
	require.NoError(t, err)
	require.Contains(t, legendText(t, f), "b: waiting")
}

// TestSizeSearchMarkersApart: when the sizing searched both with and
// without failures, a size both tried is drawn twice, a little apart (the
// met circle hid the missed cross at the same place); a single search
// draws at the size itself.
func TestSizeSearchMarkersApart(t *testing.T) {
	require.Less(t, searchX(6, false, true), searchX(6, true, true))
	require.Equal(t, 6.0, searchX(6, true, false))
	require.Equal(t, 6.0, searchX(6, false, false))
	require.InDelta(t, 6.0, searchX(6, false, true), 0.2)
	search := []SearchPoint{{Replicas: 6, USDPerMonth: 100, MetSLO: true}, {Replicas: 6, Failures: true, USDPerMonth: 100}}
	f, err := SizeCost(Meta{}, nil, search)
	require.NoError(t, err)
	require.Contains(t, legendText(t, f), "search with failures")
}
