package experiments

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// Point is one grid point of a sweep.
type Point struct {
	Values []string // one per axis
	Arm    *report.ArmResult
}

// SweepResult is a whole sweep.
type SweepResult struct {
	Axes   []scenario.Axis
	Points []Point
}

// OverrideOverlay makes the overlay that sets key = value.
func OverrideOverlay(key, value string) scenario.Overlay {
	return scenario.Overlay{Name: "--param " + key + "=" + strings.Trim(value, "\""), TOML: []byte(key + " = " + value + "\n")}
}

// overrideOverlay is OverrideOverlay for a key of s. A key through an
// element of an array of tables (cluster.groups.1.replica.max_seqs) is
// written as the whole array: the other elements as empty tables, which
// keep what they hold (an element decodes over the one at its index; see
// package tomlx), the named one with the key.
//
// flag names the overlay's origin in messages ("--param", "--set").
func overrideOverlay(s *scenario.Scenario, flag, key, value string) (scenario.Overlay, error) {
	segs := strings.Split(key, ".")
	for i := 1; i < len(segs); i++ {
		k, err := strconv.Atoi(segs[i])
		if err != nil {
			continue
		}
		arr, rest := strings.Join(segs[:i], "."), strings.Join(segs[i+1:], ".")
		n := 0
		for s.Has(arr + "." + strconv.Itoa(n)) {
			n++
		}
		switch {
		case k < 0 || k >= n:
			return scenario.Overlay{}, fmt.Errorf("%s %s: %s has %d elements in %s (numbered from 0)", flag, key, arr, n, s.Name)
		case rest == "":
			return scenario.Overlay{}, fmt.Errorf("%s %s: name a key of %s's element %d (e.g. %s.%d.replicas)", flag, key, arr, k, arr, k)
		}
		for _, r := range segs[i+1:] {
			if _, err := strconv.Atoi(r); err == nil {
				return scenario.Overlay{}, fmt.Errorf("%s %s: a key inside two arrays cannot be set from the command line; write an arm per value", flag, key)
			}
		}
		var b strings.Builder
		for j := 0; j < n; j++ {
			fmt.Fprintf(&b, "[[%s]]\n", arr)
			if j == k {
				fmt.Fprintf(&b, "%s = %s\n", rest, value)
			}
		}
		return scenario.Overlay{Name: flag + " " + key + "=" + strings.Trim(value, "\""), TOML: []byte(b.String())}, nil
	}
	ov := OverrideOverlay(key, value)
	ov.Name = flag + " " + key + "=" + strings.Trim(value, "\"")
	return ov, nil
}

// SetKeys is s with every "KEY=VALUE" of specs applied in order (fleetsim's
// --set): one value each, written as a sweep's value is (numbers and
// booleans as they are, [arrays] and "quoted" text verbatim, other text
// quoted), through an element of an array of tables as --param is.
func SetKeys(s *scenario.Scenario, specs []string) (*scenario.Scenario, error) {
	if len(specs) == 0 {
		return s, nil
	}
	ovs := make([]scenario.Overlay, 0, len(specs))
	for _, spec := range specs {
		key, val, ok := strings.Cut(spec, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok || key == "" || val == "" {
			return nil, fmt.Errorf("--set %q: expected KEY=VALUE, e.g. --set workload.arrival.rate_per_s=40", spec)
		}
		ov, err := overrideOverlay(s, "--set", key, scenario.TOMLValue(val))
		if err != nil {
			return nil, err
		}
		ovs = append(ovs, ov)
	}
	return s.Derive(ovs...)
}

// RunSweep runs every point of the grid (the last axis varying fastest),
// all with the base scenario's seeds (common random numbers across points).
func RunSweep(base *scenario.Scenario, axes []scenario.Axis, opt RunOptions) (*SweepResult, error) {
	scs, values, err := SweepScenarios(base, axes)
	if err != nil {
		return nil, err
	}
	res, err := RunScenarios(scs, opt)
	if err != nil {
		return nil, err
	}
	return AssembleSweep(axes, values, res), nil
}

// SweepScenarios derives one scenario per grid point (the last axis
// varying fastest) and returns them with each point's values.
func SweepScenarios(base *scenario.Scenario, axes []scenario.Axis) ([]*scenario.Scenario, [][]string, error) {
	if len(axes) == 0 {
		return nil, nil, fmt.Errorf("%s: nothing to sweep: give --param KEY=SPEC or a [sweep] params list", base.Name)
	}
	seen := map[string]bool{}
	for _, ax := range axes {
		if seen[ax.Key] {
			return nil, nil, fmt.Errorf("%s: %s is swept twice: give each key one --param (a list of values: KEY=V1,V2,...)", base.Name, ax.Key)
		}
		seen[ax.Key] = true
		for _, v := range ax.Values {
			if err := scenario.CheckPointName(pointName([]scenario.Axis{ax}, []string{v})); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", base.Name, err)
			}
		}
	}
	n := 1
	for _, ax := range axes {
		n *= len(ax.Values)
		if n > scenario.MaxSweepPoints {
			return nil, nil, fmt.Errorf("%s: the sweep has more than %d points", base.Name, scenario.MaxSweepPoints)
		}
	}
	var scs []*scenario.Scenario
	var values [][]string
	idx := make([]int, len(axes))
	for p := 0; p < n; p++ {
		var ovs []scenario.Overlay
		vals := make([]string, len(axes))
		for a, ax := range axes {
			vals[a] = ax.Values[idx[a]]
			o, err := overrideOverlay(base, "--param", ax.Key, vals[a])
			if err != nil {
				return nil, nil, err
			}
			ovs = append(ovs, o)
		}
		sc, err := base.Derive(ovs...)
		if err != nil {
			return nil, nil, err
		}
		scs = append(scs, sc)
		values = append(values, vals)
		for a := len(axes) - 1; a >= 0; a-- {
			idx[a]++
			if idx[a] < len(axes[a].Values) {
				break
			}
			idx[a] = 0
		}
	}
	return scs, values, nil
}

// AssembleSweep builds the sweep's result from every point's replications.
func AssembleSweep(axes []scenario.Axis, values [][]string, results [][]*report.RepResult) *SweepResult {
	points := make([]Point, len(values))
	for i := range points {
		points[i] = Point{Values: values[i], Arm: report.NewArmResult(pointName(axes, values[i]), results[i])}
	}
	return &SweepResult{Axes: axes, Points: points}
}

// SweepDirName is the default directory name of a sweep of scenario name
// over axes: NAME-sweep-KEYS, KEYS the swept keys joined by '+'
// (default-sweep-cluster.replicas+workload.arrival.rate_per_s), so that
// sweeps of one scenario over different keys never share a directory; a
// name longer than 200 bytes keeps the first key and counts the others
// (NAME-sweep-KEY+3-more).
func SweepDirName(name string, axes []scenario.Axis) string {
	keys := make([]string, len(axes))
	for i, ax := range axes {
		keys[i] = ax.Key
	}
	out := name + "-sweep-" + strings.Join(keys, "+")
	if len(out) > 200 && len(keys) > 1 {
		out = fmt.Sprintf("%s-sweep-%s+%d-more", name, keys[0], len(keys)-1)
	}
	return out
}

// PointNames names the points of a sweep.
func PointNames(axes []scenario.Axis, values [][]string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = pointName(axes, v)
	}
	return out
}

func pointName(axes []scenario.Axis, vals []string) string {
	parts := make([]string, len(axes))
	for i, ax := range axes {
		parts[i] = ax.Key + "=" + strings.Trim(vals[i], "\"")
	}
	return strings.Join(parts, ",") // the arms/ directory's name too (results.ArmDir)
}

// sweepColumn is one of sweep.csv's metric columns: a column of
// results.SweepFile and the summary key it is the mean of.
type sweepColumn struct {
	col, key string // column name, summary key
	ci       bool   // followed by a _ci95 column
}

// failureColumns are added when the sweep's runs had [failures]
// (results.SweepFile.Optional).
var failureColumns = []sweepColumn{
	{results.Availability, "failures.availability", true},
	{results.SuccessRate, "resilience.success_rate", true},
}

// columns are this sweep's metric columns.
func (r *SweepResult) columns() []sweepColumn {
	cols := sweepColumns
	if r.hasFailures() {
		cols = append(slices.Clip(cols), failureColumns...)
	}
	return cols
}

// hasFailures reports whether the sweep's runs had [failures].
func (r *SweepResult) hasFailures() bool {
	if len(r.Points) == 0 {
		return false
	}
	_, ok := report.StatMap(r.Points[0].Arm.Stats)["failures.availability"]
	return ok
}

// sweepColumns are sweep.csv's metric columns for every sweep, after
// results.Replications.
var sweepColumns = []sweepColumn{
	{results.TTFTP99Ms, "latency_ms.ttft.p99", true},
	{results.E2EP99Ms, "latency_ms.e2e.p99", true},
	{results.GoodputRPS, "goodput.requests_per_s", true},
	{results.ThroughputRPS, "throughput.requests_per_s", false},
	{results.SLOAttainment, "goodput.slo_attainment", true},
	{results.USDPerMonth, "cost.usd_per_month", false},
	{results.USDPerMillionOutputTokens, "cost.usd_per_million_output_tokens", false},
	{results.TTFTP50Ms, "latency_ms.ttft.p50", true},
	{results.TPOTP50Ms, "latency_ms.tpot.p50", true},
	{results.TPOTP99Ms, "latency_ms.tpot.p99", true},
	{results.PrefixHitRate, "prefix_cache.hit_rate", true},
}

// names are the columns' names, each followed by its _ci95 column.
func columnNames(cols []sweepColumn) []string {
	var out []string
	for _, c := range cols {
		out = append(out, c.col)
		if c.ci {
			out = append(out, c.col+"_ci95")
		}
	}
	return out
}

// axisKeys are the swept keys: the leading columns of sweep.csv and
// ettr.csv.
func (r *SweepResult) axisKeys() []string {
	keys := make([]string, len(r.Axes))
	for i, ax := range r.Axes {
		keys[i] = ax.Key
	}
	return keys
}

// axisValues are a point's values as written in sweep.csv and ettr.csv.
func axisValues(p Point) []string {
	out := make([]string, len(p.Values))
	for i, v := range p.Values {
		out[i] = strings.Trim(v, "\"")
	}
	return out
}

// CSV is sweep.csv (results.SweepFile): the axes' keys, then replications
// and the metrics.
func (r *SweepResult) CSV() []byte {
	cols := r.columns()
	var after []string
	if r.hasFailures() {
		after = columnNames(failureColumns)
	}
	t := results.NewTable(results.SweepFile, r.axisKeys(), after)
	for _, p := range r.Points {
		m := report.StatMap(p.Arm.Stats)
		row := append(axisValues(p), strconv.Itoa(len(p.Arm.Reps)))
		for _, c := range cols {
			st, ok := m[c.key]
			mean, ci := results.FormatFloat(results.Round6(st.Mean)), st.CICell()
			if !ok && report.OptionalMetrics[c.key] {
				mean, ci = "", "" // undefined at this point (see Aggregate)
			}
			row = append(row, mean)
			if c.ci {
				row = append(row, ci)
			}
		}
		t.Row(row...)
	}
	return t.Bytes()
}

// Training reports whether the sweep is of a training scenario.
func (r *SweepResult) Training() bool {
	return len(r.Points) > 0 && r.Points[0].Arm.Reps[0].Summary.Mode == scenario.ModeTraining
}

// ETTRCSV is ettr.csv (results.ETTRFile) for a training sweep: the axes'
// keys, then the checkpoint interval each point ran with, ETTR and the
// GPU-hours lost.
func (r *SweepResult) ETTRCSV() []byte {
	t := results.NewTable(results.ETTRFile, r.axisKeys(), nil)
	for _, p := range r.Points {
		m := report.StatMap(p.Arm.Stats)
		t.Row(append(axisValues(p), results.FormatFloat(results.Round6(m["training.checkpoint_interval_s"].Mean)),
			results.FormatFloat(results.Round6(m["training.ettr"].Mean)), m["training.ettr"].CICell(),
			results.FormatFloat(results.Round6(m["training.lost_gpu_hours.total"].Mean)))...)
	}
	return t.Bytes()
}

// Table is the sweep as a terminal table. Each axis column is headed by
// its whole key (columnLabels), and is as wide as its label.
func (r *SweepResult) Table() string {
	header, rows := r.tableRows()
	widths := make([]int, len(header))
	for i := range r.Axes {
		w := max(16, runeLen(header[i]))
		for _, row := range rows {
			w = max(w, runeLen(row[i]))
		}
		widths[i] = -w
	}
	metric := []int{20, 20, 10, 12, 10}
	if r.Training() {
		metric = []int{20, 14, 16}
	}
	copy(widths[len(r.Axes):], metric)
	return report.TextTable(header, rows, widths)
}

// Markdown is the sweep's table for summary.md.
func (r *SweepResult) Markdown() string {
	return report.MarkdownTable(r.tableRows())
}

// tableRows are the sweep table's header and rows: the swept keys, then
// ETTR, interruptions and lost GPU-hours (training), or p99 TTFT,
// goodput, SLO attainment, $ / month and, with [failures], availability.
func (r *SweepResult) tableRows() ([]string, [][]string) {
	header := columnLabels(r.axisKeys())
	var rows [][]string
	if r.Training() {
		header = append(header, "ETTR", "interruptions", "lost GPU-h")
		for _, p := range r.Points {
			m := report.StatMap(p.Arm.Stats)
			e := m["training.ettr"]
			rows = append(rows, append(axisValues(p), report.PM(100*e.Mean, 100*e.CI95, len(e.Values))+"%",
				report.Human(m["training.interruptions"].Mean), report.Human(m["training.lost_gpu_hours.total"].Mean)))
		}
		return header, rows
	}
	fails := r.hasFailures()
	header = append(header, "TTFT p99 ms", "goodput req/s", "SLO att.", "$ / month")
	if fails {
		header = append(header, "avail.")
	}
	for _, p := range r.Points {
		m := report.StatMap(p.Arm.Stats)
		t, g := m["latency_ms.ttft.p99"], m["goodput.requests_per_s"]
		att := "n/a"
		if a, ok := m["goodput.slo_attainment"]; ok {
			att = fmt.Sprintf("%.2f%%", 100*a.Mean)
		}
		row := append(axisValues(p), t.PM(), g.PM(), att, report.Human(m["cost.usd_per_month"].Mean))
		if fails {
			row = append(row, fmt.Sprintf("%.2f%%", 100*m["failures.availability"].Mean))
		}
		rows = append(rows, row)
	}
	return header, rows
}

func runeLen(s string) int { return len([]rune(s)) }

// columnLabels are the table headings of the swept keys: each key whole,
// as sweep.csv names its column (spot.replicas, never replicas, which
// cluster.replicas could be too), equal keys numbered.
func columnLabels(keys []string) []string {
	out := slices.Clone(keys)
	count := map[string]int{}
	for _, l := range out {
		count[l]++
	}
	seen := map[string]int{}
	for i, l := range out {
		if count[l] > 1 {
			seen[l]++
			out[i] = fmt.Sprintf("%s (%d)", l, seen[l])
		}
	}
	return out
}
