package experiments

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fleetsim/fleetsim/experiments/plot"
	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/workloads"
	"github.com/stretchr/testify/require"
)

// schemaReps are two short replications of the small scenario, run once.
var schemaReps = sync.OnceValues(func() ([]*report.RepResult, error) {
	src := strings.Replace(strings.Replace(small, "replications = 4", "replications = 2", 1), "duration_s = 60", "duration_s = 10", 1)
	sc, err := scenario.Parse("test.toml", []byte(src))
	if err != nil {
		return nil, err
	}
	return RunReplications(sc, RunOptions{})
})

// armNamed is an arm over the shared replications, with its own name and
// a copy of their statistics.
func armNamed(t *testing.T, name string) *report.ArmResult {
	t.Helper()
	reps, err := schemaReps()
	require.NoError(t, err)
	return report.NewArmResult(name, reps)
}

// readCSV reads a whole CSV file strictly: every row as wide as the header.
func readCSV(t *testing.T, data []byte) [][]string {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	require.NoError(t, err)
	require.NotEmpty(t, recs)
	return recs
}

func readFile(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return readCSV(t, b)
}

// trainingArm is an arm of a training run with the statistics ETTRCSV and
// Table read.
func trainingArm(name string, ettr float64) *report.ArmResult {
	rep := &report.RepResult{Summary: &report.Summary{Scenario: "llama3-pretrain", Mode: scenario.ModeTraining}}
	return &report.ArmResult{Name: name, Reps: []*report.RepResult{rep}, Stats: []report.Stat{
		{Key: "training.checkpoint_interval_s", Mean: 3600, Values: []float64{3600}},
		{Key: "training.ettr", Mean: ettr, CI95: 0.01, Values: []float64{ettr}},
		{Key: "training.interruptions", Mean: 3, Values: []float64{3}},
		{Key: "training.lost_gpu_hours.total", Mean: 100, Values: []float64{100}},
	}}
}

// trainingSweep sweeps training.spare_servers (and more axes) over
// training arms.
func trainingSweep(axes ...scenario.Axis) *SweepResult {
	res := &SweepResult{Axes: axes}
	var grid func(prefix []string, k int)
	grid = func(prefix []string, k int) {
		if k == len(axes) {
			vals := append([]string(nil), prefix...)
			res.Points = append(res.Points, Point{Values: vals, Arm: trainingArm(pointName(axes, vals), 0.9+0.001*float64(len(res.Points)))})
			return
		}
		for _, v := range axes[k].Values {
			grid(append(prefix, v), k+1)
		}
	}
	grid(nil, 0)
	return res
}

// TestWritersFollowSchema: every writer's header is its file's schema:
// the declared dynamic columns around the fixed ones, in order.
func TestWritersFollowSchema(t *testing.T) {
	a, b := armNamed(t, "a"), armNamed(t, "b")
	a.Reps = append([]*report.RepResult(nil), a.Reps...)
	r0 := *a.Reps[0]
	r0.Timeline = []failures.TimelinePoint{{Time: 0, Event: "fail", Unit: "r0", GPUsDown: 1, Capacity: 0.5}}
	a.Reps[0] = &r0
	dir := t.TempDir()
	ab := NewABResult([]*report.ArmResult{a, b})
	require.NoError(t, FinishAB(dir, ab, &bytes.Buffer{}))

	header := func(name string) []string { return readFile(t, filepath.Join(dir, name))[0] }
	require.Equal(t, results.CDFFile.Names(), header("cdf.csv"))
	require.Equal(t, results.TimeseriesFile.Names(), header("timeseries.csv"))
	require.Equal(t, results.FailuresFile.Header(nil, nil), header("failures.csv"))
	require.Equal(t, results.ABFile.Names(), header("ab.csv"))
	require.Equal(t, results.ReplicationsFile.Header(nil, report.ReplicationKeys([]*report.ArmResult{a, b})), header("replications.csv"))

	serving := &SweepResult{Axes: []scenario.Axis{{Key: "cluster.replicas", Values: []string{"1"}}}, Points: []Point{{Values: []string{"1"}, Arm: a}}}
	require.Equal(t, results.SweepFile.Header([]string{"cluster.replicas"}, nil), readCSV(t, serving.CSV())[0])

	ax := scenario.Axis{Key: "training.spare_servers", Values: []string{"4", "7"}}
	require.Equal(t, results.ETTRFile.Header([]string{ax.Key}, nil), readCSV(t, trainingSweep(ax).ETTRCSV())[0])

	p := &SizePoint{Replicas: 2, Arm: a, Bounds: []float64{1}}
	size := &SizeResult{Rows: []SizeRow{{Label: "N", Point: p}}, Search: []*SizePoint{p}, GPUsPer: 1, PriceHour: 2}
	require.Equal(t, results.SizeFile.Names(), readCSV(t, size.CSV())[0])
	require.Equal(t, results.SizeSearchFile.Names(), readCSV(t, size.SearchCSV())[0])

	var req bytes.Buffer
	rw := report.NewRequestWriter(&req)
	rw.Write(&engine.Outcome{Req: &workloads.Request{ID: 1, InputTokens: 10, OutputTokens: 5}})
	require.NoError(t, rw.Flush())
	recs := readCSV(t, req.Bytes())
	require.Equal(t, results.RequestsFile.Names(), recs[0])
	require.Len(t, recs[1], len(recs[0]))
}

// TestSweepCSVWithFailuresFollowsSchema: a sweep with [failures] appends
// the schema's optional columns.
func TestSweepCSVWithFailuresFollowsSchema(t *testing.T) {
	a := armNamed(t, "x")
	a.Stats = append(append([]report.Stat(nil), a.Stats...), report.Stat{Key: "failures.availability", Values: []float64{1, 1}})
	res := &SweepResult{Axes: []scenario.Axis{{Key: "cluster.replicas", Values: []string{"1"}}}, Points: []Point{{Values: []string{"1"}, Arm: a}}}
	var opt []string
	for _, c := range results.SweepFile.Optional {
		opt = append(opt, c.Name)
	}
	require.Equal(t, results.SweepFile.Header([]string{"cluster.replicas"}, opt), readCSV(t, res.CSV())[0])
}

// TestArmNameWithCommaQuotesAndNewline: an arm name holding a comma, a
// quote and a newline comes back whole from ab.csv, cdf.csv, timeseries.csv
// and replications.csv (issue 16: CSVs were never quoted).
func TestArmNameWithCommaQuotesAndNewline(t *testing.T) {
	name := "big, \"fast\"\nv2"
	base, odd := armNamed(t, "base"), armNamed(t, name)
	dir := t.TempDir()
	require.NoError(t, FinishAB(dir, NewABResult([]*report.ArmResult{base, odd}), &bytes.Buffer{}))
	for _, f := range []string{"cdf.csv", "timeseries.csv", "replications.csv"} {
		recs := readFile(t, filepath.Join(dir, f))
		arms := map[string]bool{}
		for _, r := range recs[1:] {
			arms[r[0]] = true
		}
		require.Equal(t, map[string]bool{"base": true, name: true}, arms, f)
	}
	recs := readFile(t, filepath.Join(dir, "ab.csv"))
	require.Greater(t, len(recs), 1)
	for _, r := range recs[1:] {
		require.Equal(t, []string{"base", name}, r[1:3])
	}
}

// TestReplicationsHeaderIsTheUnionOfArms: arms reporting different metrics
// (a canary rollout's arms) give one header with every arm's columns,
// sorted, and empty cells where an arm lacks one (issue 16: the header came
// from the first arm, and later rows were wider).
func TestReplicationsHeaderIsTheUnionOfArms(t *testing.T) {
	a, b := armNamed(t, "blue"), armNamed(t, "canary")
	b.Stats = append(append([]report.Stat(nil), b.Stats...), report.Stat{Key: "resilience.rollout.green_errors", Mean: 3, Values: []float64{2, 4}})
	dir := t.TempDir()
	require.NoError(t, report.WriteRunDir(dir, []*report.ArmResult{a, b}, ""))
	recs := readFile(t, filepath.Join(dir, "replications.csv")) // strict: equal widths
	h := recs[0]
	col := -1
	for j, n := range h {
		if n == "resilience.rollout.green_errors" {
			col = j
		}
	}
	require.GreaterOrEqual(t, col, 0, "header lacks the second arm's column")
	require.True(t, sortedStrings(h[3:]), "metric columns are sorted")
	for _, r := range recs[1:] {
		switch r[0] {
		case "blue":
			require.Equal(t, "", r[col])
		case "canary":
			require.Contains(t, []string{"2", "4"}, r[col])
		}
	}
}

func sortedStrings(xs []string) bool {
	for i := 1; i < len(xs); i++ {
		if xs[i] < xs[i-1] {
			return false
		}
	}
	return true
}

// TestETTRCSVHasEverySweptKey: a training sweep over something other than
// the checkpoint interval keeps the swept column (issue 16: every point sat
// at the same checkpoint interval and the key was dropped).
func TestETTRCSVHasEverySweptKey(t *testing.T) {
	spares := scenario.Axis{Key: "training.spare_servers", Values: []string{"4", "7", "10", "14"}}
	policy := scenario.Axis{Key: "training.restart", Values: []string{`"fast"`, `"slow"`}}
	recs := readCSV(t, trainingSweep(spares, policy).ETTRCSV())
	require.Equal(t, []string{spares.Key, policy.Key}, recs[0][:2])
	require.Len(t, recs, 1+8)
	seen := map[string]bool{}
	for _, r := range recs[1:] {
		seen[r[0]+"/"+r[1]] = true
		require.Equal(t, "3600", r[2])
	}
	require.Len(t, seen, 8)
	require.True(t, seen["14/slow"], "TOML quotes are removed: %v", seen)
}

// TestSweepTableLabelsAreUnique: axis headings of a sweep's table are
// neither truncated nor duplicated (issue 16: "training.checkp…" twice).
func TestSweepTableLabelsAreUnique(t *testing.T) {
	res := trainingSweep(scenario.Axis{Key: "training.checkpoint_interval_s", Values: []string{"600"}},
		scenario.Axis{Key: "training.checkpoint_write_s", Values: []string{"30"}})
	head := strings.SplitN(res.Table(), "\n", 2)[0]
	require.NotContains(t, head, "…")
	require.Contains(t, head, "checkpoint_interval_s")
	require.Contains(t, head, "checkpoint_write_s")

	require.Equal(t, []string{"cluster.spare_servers", "training.spare_servers", "workload.arrival.rate_per_s", "x (1)", "x (2)"},
		columnLabels([]string{"cluster.spare_servers", "training.spare_servers", "workload.arrival.rate_per_s", "x", "x"}))
}

// TestSweepTableHeadsWithTheWholeKey: a sweep of spot.replicas is headed
// spot.replicas, as sweep.csv's column is (issue 32 item 7: "replicas",
// which cluster.replicas could be as well).
func TestSweepTableHeadsWithTheWholeKey(t *testing.T) {
	ax := scenario.Axis{Key: "spot.replicas", Values: []string{"2"}}
	res := &SweepResult{Axes: []scenario.Axis{ax}, Points: []Point{{Values: []string{"2"}, Arm: armNamed(t, "spot.replicas=2")}}}
	head := strings.SplitN(res.Table(), "\n", 2)[0]
	require.True(t, strings.HasPrefix(head, "spot.replicas "), head)
}

// TestSweepCSVHasMediansTPOTAndHitRate: sweep.csv has p50 TTFT, p50 and
// p99 TPOT and the prefix cache hit rate, each the mean of its
// summary.json key (issue 32 item 7: only p99 TTFT and e2e).
func TestSweepCSVHasMediansTPOTAndHitRate(t *testing.T) {
	a := armNamed(t, "cluster.replicas=1")
	res := &SweepResult{Axes: []scenario.Axis{{Key: "cluster.replicas", Values: []string{"1"}}}, Points: []Point{{Values: []string{"1"}, Arm: a}}}
	recs := readCSV(t, res.CSV())
	m := report.StatMap(a.Stats)
	for col, key := range map[string]string{results.TTFTP50Ms: "latency_ms.ttft.p50", results.TPOTP50Ms: "latency_ms.tpot.p50",
		results.TPOTP99Ms: "latency_ms.tpot.p99", results.PrefixHitRate: "prefix_cache.hit_rate"} {
		j := slices.Index(recs[0], col)
		require.GreaterOrEqual(t, j, 0, col)
		require.Equal(t, results.FormatFloat(results.Round6(m[key].Mean)), recs[1][j], col)
		require.NotEmpty(t, recs[1][j+1], col+"_ci95")
	}
}

// TestABReportLabelsAreUnique: arms whose names share a long prefix keep
// their whole names in the A/B table's headings.
func TestABReportLabelsAreUnique(t *testing.T) {
	n1, n2 := "--param training.checkpoint_interval_s=600", "--param training.checkpoint_interval_s=1800"
	a, b := armNamed(t, n1), armNamed(t, n2)
	head := strings.SplitN(strings.SplitN(NewABResult([]*report.ArmResult{a, b}).Report(), "\n\n", 2)[1], "\n", 2)[0]
	require.NotContains(t, head, "…")
	require.Contains(t, head, " "+n1)
	require.Contains(t, head, " "+n2+" − "+n1)
}

// TestFailuresCSVHasEveryArm: an A/B whose arms both had failures writes
// both arms' timelines (replication 0) to failures.csv, each row naming
// its arm and replication, and the failures timeline draws one labelled
// line per arm, titled with the replication it shows (issue 32 item 5:
// only the first arm's, with no arm column).
func TestFailuresCSVHasEveryArm(t *testing.T) {
	withTimeline := func(name string, capacity float64) *report.ArmResult {
		a := armNamed(t, name)
		a.Reps = append([]*report.RepResult(nil), a.Reps...)
		r0 := *a.Reps[0]
		r0.Timeline = []failures.TimelinePoint{{Time: 5e9, Event: "fail", Unit: "replica 0", GPUsDown: 1, Capacity: capacity}}
		a.Reps[0] = &r0
		return a
	}
	dir := t.TempDir()
	ab := NewABResult([]*report.ArmResult{withTimeline("blue", 0.5), withTimeline("green", 0.75)})
	require.NoError(t, FinishAB(dir, ab, &bytes.Buffer{}))
	recs := readFile(t, filepath.Join(dir, "failures.csv"))
	h := recs[0]
	arm, rep, capCol := slices.Index(h, results.Arm), slices.Index(h, results.Replication), slices.Index(h, results.CapacityFrac)
	require.GreaterOrEqual(t, arm, 0, "failures.csv has no arm column")
	require.GreaterOrEqual(t, rep, 0, "failures.csv has no replication column")
	var got [][3]string
	for _, r := range recs[1:] {
		got = append(got, [3]string{r[arm], r[rep], r[capCol]})
	}
	require.Equal(t, [][3]string{{"blue", "0", "0.5"}, {"green", "0", "0.75"}}, got)

	figs, err := plot.Dir(dir)
	require.NoError(t, err)
	require.Contains(t, figs, filepath.Join(dir, "plots", "failures_timeline.svg"))
	svg, err := os.ReadFile(filepath.Join(dir, "plots", "failures_timeline.svg"))
	require.NoError(t, err)
	for _, s := range []string{"blue: available capacity", "green: available capacity", "replication 0"} {
		require.Contains(t, string(svg), s)
	}
	svg, err = os.ReadFile(filepath.Join(dir, "plots", "availability_timeseries.svg"))
	require.NoError(t, err)
	require.Contains(t, string(svg), "replication 0")
}

// TestSizeShowsTheTargetedMetric: sizing for ttft_p999 shows p99.9 TTFT
// in its table and size.csv, not p99 alone; size.csv names MFU mfu, and
// the table defines headroom (issue 32 item 7).
func TestSizeShowsTheTargetedMetric(t *testing.T) {
	a := armNamed(t, "cluster.replicas=2")
	tg, err := scenario.ParseSLO("ttft_p999=800ms")
	require.NoError(t, err)
	p := &SizePoint{Replicas: 2, Arm: a, Bounds: []float64{1}}
	size := &SizeResult{Rows: []SizeRow{{Label: "N", Point: p}}, Search: []*SizePoint{p}, GPUsPer: 1, PriceHour: 2, Targets: tg}
	table := size.Table("small")
	require.Contains(t, table, "ttft_p999 ms")
	require.NotContains(t, table, "TTFT p99 ms")
	require.Contains(t, table, "headroom: the share of a size that is spare")
	want := report.StatMap(a.Stats)["latency_ms.ttft.p999"]
	require.Contains(t, table, want.PM())

	recs := readCSV(t, size.CSV())
	require.Equal(t, results.SizeFile.Header(nil, []string{"target_ttft_p999_ms", "target_ttft_p999_ms_ci95"}), recs[0])
	j := slices.Index(recs[0], "target_ttft_p999_ms")
	require.Equal(t, results.FormatFloat(results.Round6(want.Mean)), recs[1][j])
	require.Equal(t, recs[1][slices.Index(recs[0], results.Utilization)], recs[1][slices.Index(recs[0], results.MFU)])
}

// TestSummaryMDHasMarkdownTables: summary.md of an A/B and of a sweep
// gives its results as Markdown tables; only the terminal report, folded
// under "Full report", stays preformatted (issue 32 item 7: every table
// was a fenced code block).
func TestSummaryMDHasMarkdownTables(t *testing.T) {
	outside := func(md string) string {
		var b strings.Builder
		for {
			i := strings.Index(md, "<details>")
			if i < 0 {
				return b.String() + md
			}
			b.WriteString(md[:i])
			j := strings.Index(md, "</details>")
			require.Greater(t, j, i)
			md = md[j+len("</details>"):]
		}
	}
	dir := t.TempDir()
	require.NoError(t, FinishAB(dir, NewABResult([]*report.ArmResult{armNamed(t, "a"), armNamed(t, "b")}), &bytes.Buffer{}))
	md := string(mustRead(t, filepath.Join(dir, "summary.md")))
	require.NotContains(t, outside(md), "```")
	require.Contains(t, md, "| metric | a | b | b − a |\n|---|---:|---:|---:|\n")
	require.Contains(t, md, "| latency (ms) | mean | p50 | p90 | p95 | p99 | p99.9 |\n")
	require.Contains(t, md, "| TTFT p99 | ")

	dir = t.TempDir()
	ax := scenario.Axis{Key: "spot.replicas", Values: []string{"2"}}
	res := &SweepResult{Axes: []scenario.Axis{ax}, Points: []Point{{Values: []string{"2"}, Arm: armNamed(t, "spot.replicas=2")}}}
	require.NoError(t, FinishSweep(dir, "small", 2, res, &bytes.Buffer{}))
	md = string(mustRead(t, filepath.Join(dir, "summary.md")))
	require.NotContains(t, outside(md), "```")
	require.Contains(t, md, "| spot.replicas | TTFT p99 ms | goodput req/s | SLO att. | $ / month |\n")
}
