package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/sim/quantile"
)

// CDFQuantiles is the grid of quantiles written to cdf.csv: dense in the
// tail, where SLOs live.
var CDFQuantiles = func() []float64 {
	var qs []float64
	for i := 1; i < 100; i++ {
		qs = append(qs, float64(i)/100)
	}
	qs = append(qs, 0.991, 0.992, 0.993, 0.994, 0.995, 0.996, 0.997, 0.998, 0.999, 0.9995, 0.9999)
	return qs
}()

// ArmResult is one arm of a run: its replications and their aggregate.
type ArmResult struct {
	Name  string // "" for a plain run
	Reps  []*RepResult
	Stats []Stat
}

// NewArmResult aggregates an arm's replications.
func NewArmResult(name string, reps []*RepResult) *ArmResult {
	return &ArmResult{Name: name, Reps: reps, Stats: Aggregate(reps)}
}

// SummaryJSON is the arm's summary.json: the single run's summary, or the
// aggregate over replications.
func (a *ArmResult) SummaryJSON() ([]byte, error) {
	if len(a.Reps) == 1 {
		var b bytes.Buffer
		err := a.Reps[0].Summary.WriteJSON(&b)
		return b.Bytes(), err
	}
	return AggregateJSON(a.Reps, a.Stats)
}

// Table is the arm's results table for a terminal or summary.md.
func (a *ArmResult) Table() string {
	var b bytes.Buffer
	_ = a.Reps[0].Summary.WriteTable(&b)
	if len(a.Reps) > 1 {
		b.WriteString("\n(the table above is replication 0)\n")
		WriteStatsTable(&b, a.Stats, len(a.Reps))
	}
	return b.String()
}

// Markdown is the arm's results for summary.md: its latency quantiles
// and headline metrics as Markdown tables (means over replications, with
// their 95% CIs), then the terminal report whole.
func (a *ArmResult) Markdown() string {
	var b strings.Builder
	m := StatMap(a.Stats)
	n := len(a.Reps)
	if n > 1 {
		fmt.Fprintf(&b, "Means over %d replications; ± is the 95%% confidence interval's half-width (Student t).\n\n", n)
	}
	qs := []struct{ key, label string }{{"mean", "mean"}, {"p50", "p50"}, {"p90", "p90"}, {"p95", "p95"}, {"p99", "p99"}, {"p999", "p99.9"}}
	var lat [][]string
	for _, d := range []struct{ key, label string }{{"ttft", "TTFT"}, {"tpot", "TPOT"}, {"itl", "ITL"}, {"e2e", "end-to-end"}, {"queue", "queueing"}} {
		if _, ok := m["latency_ms."+d.key+".p50"]; !ok {
			continue
		}
		row := []string{d.label}
		for _, q := range qs {
			row = append(row, fmt.Sprintf("%.1f", m["latency_ms."+d.key+"."+q.key].Mean))
		}
		lat = append(lat, row)
	}
	if len(lat) > 0 {
		header := []string{"latency (ms)"}
		for _, q := range qs {
			header = append(header, q.label)
		}
		b.WriteString(MarkdownTable(header, lat) + "\n")
	}
	var rows [][]string
	for _, h := range headline {
		st, ok := m[h.key]
		if !ok {
			continue
		}
		ci := "n/a"
		if len(st.Values) >= 2 {
			ci = Human(st.CI95)
		}
		rows = append(rows, []string{h.label, Human(st.Mean), ci, h.unit})
	}
	if len(rows) > 0 {
		b.WriteString(MarkdownTable([]string{"metric", "mean", "± 95% CI", "unit"}, rows) + "\n")
	}
	fmt.Fprintf(&b, "<details><summary>Full report</summary>\n\n```\n%s```\n\n</details>\n\n", a.Table())
	return b.String()
}

// pooled merges the replications' sketches of one metric, in index order.
func (a *ArmResult) pooled(get func(*RepResult) *quantile.Sketch) *quantile.Sketch {
	s := quantile.New()
	for _, r := range a.Reps {
		if x := get(r); x != nil {
			s.Merge(x)
		}
	}
	return s
}

// CDFRows appends the arm's cdf.csv rows (arm,metric,quantile,value_ms),
// pooled over replications.
func (a *ArmResult) CDFRows(t *results.Table) {
	for _, m := range []struct {
		name string
		get  func(*RepResult) *quantile.Sketch
	}{
		{"ttft", func(r *RepResult) *quantile.Sketch { return r.TTFT }},
		{"tpot", func(r *RepResult) *quantile.Sketch { return r.TPOT }},
		{"itl", func(r *RepResult) *quantile.Sketch { return r.ITL }},
		{"e2e", func(r *RepResult) *quantile.Sketch { return r.E2E }},
	} {
		a.cdfRows(t, m.name, m.get)
	}
	// A disaggregated fleet's TTFT stages (disagg.go).
	for _, st := range TTFTStages {
		a.cdfRows(t, "ttft_"+st, func(r *RepResult) *quantile.Sketch { return r.TTFTSplit[st] })
	}
}

// cdfRows appends the rows of one metric, if any replication has samples.
func (a *ArmResult) cdfRows(t *results.Table, name string, get func(*RepResult) *quantile.Sketch) {
	s := a.pooled(get)
	if s.Count() == 0 {
		return
	}
	for _, q := range CDFQuantiles {
		t.Row(a.Name, name, results.FormatFloat(q), results.FormatFloat(results.Round6(s.Quantile(q))))
	}
}

// TimeseriesColumns are the arm's per-group columns of timeseries.csv
// (results.TimeseriesFile.After; groupColumns), named from replication
// 0's summary: none for a fleet of one kind.
func (a *ArmResult) TimeseriesColumns() []string {
	s := a.Reps[0].Summary
	if s == nil || len(s.Fleet.Groups) == 0 {
		return nil
	}
	var cols []string
	for _, g := range s.Fleet.Groups {
		cols = append(cols, results.ProvisionedReplicas+"."+g.Name)
	}
	if s.Spot != nil && s.Spot.Group != "" {
		cols = append(cols, results.ProvisionedSpotReplicas+"."+s.Spot.Group)
	}
	if s.Spot != nil {
		for _, g := range s.Spot.Groups {
			cols = append(cols, results.ProvisionedSpotReplicas+"."+g.Name)
		}
	}
	// Then each column's spend rate, in the same order.
	for _, c := range slices.Clone(cols) {
		if g, ok := strings.CutPrefix(c, results.ProvisionedSpotReplicas+"."); ok {
			cols = append(cols, results.SpotUSDPerHour+"."+g)
		} else {
			cols = append(cols, results.USDPerHour+"."+strings.TrimPrefix(c, results.ProvisionedReplicas+"."))
		}
	}
	return cols
}

// timeseriesColumns are the union of the arms' TimeseriesColumns, in
// first-seen order.
func timeseriesColumns(arms []*ArmResult) []string {
	var cols []string
	for _, a := range arms {
		for _, c := range a.TimeseriesColumns() {
			if !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	return cols
}

// TimeseriesRows appends the arm's timeseries.csv rows (replication 0),
// with the per-group columns cols (timeseriesColumns; empty where the arm
// lacks one).
func (a *ArmResult) TimeseriesRows(t *results.Table, cols []string) {
	samples := a.Reps[0].Samples
	own := a.TimeseriesColumns()
	for i, s := range samples {
		var arr, comp float64
		if i > 0 {
			dt := (s.Time - samples[i-1].Time).Seconds()
			if dt > 0 {
				arr = float64(s.Arrived-samples[i-1].Arrived) / dt
				comp = float64(s.Completed-samples[i-1].Completed) / dt
			}
		}
		row := []string{a.Name, "0", results.FormatFloat(results.Round6(s.Time.Seconds())),
			results.FormatFloat(results.Round6(arr)), results.FormatFloat(results.Round6(comp)), strconv.FormatInt(s.InFlight, 10), strconv.FormatInt(s.Waiting, 10),
			results.FormatFloat(results.Round6(s.KVUsedFrac)), results.FormatFloat(results.Round6(s.KVCachedFrac)), strconv.Itoa(s.AvailableReplicas), strconv.Itoa(s.ProvisionedReplicas),
			results.FormatFloat(results.Round6(s.USDPerHour))}
		for _, c := range cols {
			v := ""
			k := slices.Index(own, c)
			switch n := len(own) / 2; {
			case k < 0:
			case k < n && k < len(s.Columns):
				v = strconv.Itoa(s.Columns[k])
			case k >= n && k-n < len(s.ColumnsUSD):
				v = results.FormatFloat(results.Round6(s.ColumnsUSD[k-n]))
			}
			row = append(row, v)
		}
		t.Row(row...)
	}
}

// ReplicationRows appends replications.csv rows: one per replication, one
// column per metric key of keys (ReplicationKeys), empty where the arm
// has no such metric.
func (a *ArmResult) ReplicationRows(t *results.Table, keys []string) {
	m := StatMap(a.Stats)
	for i, r := range a.Reps {
		row := make([]string, 0, 3+len(keys))
		row = append(row, a.Name, strconv.Itoa(i), strconv.FormatUint(r.Seed, 10))
		for _, k := range keys {
			if st, ok := m[k]; ok {
				row = append(row, results.FormatFloat(st.Values[i]))
			} else {
				row = append(row, "")
			}
		}
		t.Row(row...)
	}
}

// ReplicationKeys are replications.csv's metric columns: every arm's
// metric keys, sorted (arms of an A/B or sweep can report different
// metrics, e.g. only one has a rollout).
func ReplicationKeys(arms []*ArmResult) []string {
	seen := map[string]bool{}
	var keys []string
	for _, a := range arms {
		for _, st := range a.Stats {
			if !seen[st.Key] {
				seen[st.Key] = true
				keys = append(keys, st.Key)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// WriteRunDir writes a run directory for one or more arms: summary.json
// (the first arm's; each arm's under arms/DIR/ when there are several,
// DIR its results.ArmDir), summary.md, replications.csv, cdf.csv and
// timeseries.csv (each when it has rows: a training run has none of the
// last two), and failures.csv (every arm's replication 0 that had a
// failure timeline), and training_timeline.csv (every arm's replication
// 0) for training scenarios.
// The CSV files follow package results. Each file is written whole or not
// at all.
func WriteRunDir(dir string, arms []*ArmResult, extraMD string) error {
	_, err := WriteRunDirFiles(dir, arms, extraMD, len(arms) > 1)
	return err
}

// WriteRunDirFiles is WriteRunDir, with every arm's summary.json under
// arms/ when perArm (a sweep's, even of one point) and none at the top;
// it returns what it wrote, as ListWritten names it.
func WriteRunDirFiles(dir string, arms []*ArmResult, extraMD string, perArm bool) ([]string, error) {
	files := map[string][]byte{}
	var md bytes.Buffer
	keys := ReplicationKeys(arms)
	cdf := results.NewTable(results.CDFFile, nil, nil)
	tsCols := timeseriesColumns(arms)
	ts := results.NewTable(results.TimeseriesFile, nil, tsCols)
	reps := results.NewTable(results.ReplicationsFile, nil, keys)
	var trace *results.Table
	for _, a := range arms {
		js, err := a.SummaryJSON()
		if err != nil {
			return nil, err
		}
		if !perArm {
			files["summary.json"] = js
		} else {
			files[filepath.Join(results.ArmsDir, results.ArmDir(a.Name), "summary.json")] = js
			fmt.Fprintf(&md, "## Arm %s\n\n", a.Name)
		}
		md.WriteString(a.Markdown())
		a.CDFRows(cdf)
		a.TimeseriesRows(ts, tsCols)
		a.ReplicationRows(reps, keys)
		if tr := a.Reps[0].TrainingTrace; len(tr) > 0 {
			if trace == nil {
				trace = results.NewTable(results.TrainingTimelineFile, nil, nil)
			}
			const sPerH = 3600
			for _, p := range tr {
				trace.Row(a.Name, results.FormatFloat(results.Round6(p.Time.Seconds()/sPerH)), p.Event, p.Category, p.State,
					results.FormatFloat(results.Round6(p.WorkS/sPerH)), results.FormatFloat(results.Round6(p.CommittedS/sPerH)), results.FormatFloat(results.Round6(p.LostS/sPerH)), strconv.FormatInt(p.Checkpoints, 10),
					strconv.Itoa(p.SparesAvailable), strconv.Itoa(p.HostsOut))
			}
		}
	}
	if trace != nil {
		files[results.TrainingTimelineFile.Name] = trace.Bytes()
	}
	if extraMD != "" {
		md.WriteString(extraMD)
	}
	title := arms[0].Reps[0].Summary.Scenario
	files["summary.md"] = append([]byte("# fleetsim: "+title+"\n\n"), md.Bytes()...)
	if cdf.Len() > 0 {
		files[results.CDFFile.Name] = cdf.Bytes()
	}
	if ts.Len() > 0 {
		files[results.TimeseriesFile.Name] = ts.Bytes()
	}
	files[results.ReplicationsFile.Name] = reps.Bytes()
	var fails *results.Table
	for _, a := range arms {
		tl := a.Reps[0].Timeline
		if len(tl) == 0 {
			continue
		}
		if fails == nil {
			fails = results.NewTable(results.FailuresFile, nil, nil)
		}
		for _, p := range tl {
			fails.Row(results.FormatFloat(results.Round6(p.Time.Seconds())), p.Event, p.Unit, strconv.Itoa(p.GPUsDown), results.FormatFloat(results.Round6(p.Capacity)), p.Detail, a.Name, "0")
		}
	}
	if fails != nil {
		files[results.FailuresFile.Name] = fails.Bytes()
	}
	return ListWritten(files), WriteFiles(dir, files)
}

// ListWritten names the files of a run directory for a "wrote" line:
// summary.json, arms/*/summary.json, summary.md, replications.csv, then
// the other CSV files in results.Files order, then any others, sorted.
func ListWritten(files map[string][]byte) []string {
	rank := func(n string) int {
		switch {
		case n == "summary.json":
			return 0
		case strings.HasPrefix(n, results.ArmsDir+string(filepath.Separator)):
			return 1
		case n == "summary.md":
			return 2
		case n == results.ReplicationsFile.Name:
			return 3
		}
		for i, f := range results.Files {
			if f.Name == n {
				return 4 + i
			}
		}
		return 4 + len(results.Files)
	}
	var out []string
	arms := false
	for n := range files {
		if strings.HasPrefix(n, results.ArmsDir+string(filepath.Separator)) {
			arms = true
			continue
		}
		out = append(out, n)
	}
	if arms {
		out = append(out, results.ArmsDir+"/*/summary.json")
	}
	sort.Slice(out, func(i, j int) bool {
		if ri, rj := rank(out[i]), rank(out[j]); ri != rj {
			return ri < rj
		}
		return out[i] < out[j]
	})
	return out
}

// WriteFiles writes each file under dir atomically (a temporary file, then a
// rename), in sorted order.
func WriteFiles(dir string, files map[string][]byte) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := scenario.LocalPath(n); err != nil {
			return err
		}
	}
	for _, n := range names {
		if err := WriteFileAtomic(filepath.Join(dir, n), files[n]); err != nil {
			return err
		}
	}
	return nil
}

// WriteFileAtomic writes data to path through a temporary file and a
// rename, so a failure never leaves a half-written file.
func WriteFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path))
	if err != nil {
		return err
	}
	AddTemp(tmp.Name())
	defer DoneTemp(tmp.Name())
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}
