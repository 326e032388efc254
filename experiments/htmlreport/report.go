package htmlreport

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/plot"
	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
)

// FileName is the report's name in the run directory when no other output
// is asked for.
const FileName = "report.html"

// ErrBadInput is matched (errors.Is) by every error that comes from the
// directory itself (missing, not a run directory, a malformed summary.json
// or results file) rather than from writing the report; it is
// plot.ErrBadInput, so that the reader's errors match it too.
var ErrBadInput = plot.ErrBadInput

var badInput = plot.BadInput

// Options change what a report holds.
type Options struct {
	// Scenario is the path of a scenario file to show in the report;
	// "" shows DIR/scenario.toml when there is one.
	Scenario string
	// ScenarioTOML, when not nil, is shown instead, as ScenarioSource
	// (a built-in's TOML: "built-in NAME").
	ScenarioTOML   []byte
	ScenarioSource string
	// Exclude are paths (as given) left out of the file list: the
	// report's own output, which may be inside the directory.
	Exclude []string
}

// Summary is one summary.json of a run directory, flattened.
type Summary struct {
	Arm  string // "" for DIR/summary.json, else the arm's directory name
	Path string // relative to the directory: summary.json, arms/NAME/summary.json
	// Values are its leaves by dotted key (arrays indexed: key[0]), as
	// written in the file (numbers as their JSON literals); CI95 are the
	// leaves of its "ci95" object, which Values leaves out.
	Values, CI95 map[string]string
	Keys         []string // Values' keys, sorted
}

// ReadSummaries reads the summaries of dir: DIR/summary.json when there is
// one (a run or size directory), else each arms/NAME/summary.json (an A/B
// or sweep directory), in the order the arms first appear in
// replications.csv, then any others by name. A directory without any is
// an error naming what was looked for.
func ReadSummaries(dir string) ([]Summary, error) {
	top := filepath.Join(dir, "summary.json")
	if _, err := os.Stat(top); err == nil {
		s, err := readSummary(dir, "summary.json", "")
		if err != nil {
			return nil, err
		}
		return []Summary{s}, nil
	}
	ents, err := os.ReadDir(filepath.Join(dir, "arms"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, badInput("%v", err)
	}
	var names []string
	for _, e := range ents {
		if _, err := os.Stat(filepath.Join(dir, "arms", e.Name(), "summary.json")); err == nil && e.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return nil, badInput("%s: not a run directory: no summary.json (nor arms/NAME/summary.json); run fleetsim run, ab, sweep or size first", dir)
	}
	order, err := csvArms(dir)
	if err != nil {
		return nil, err
	}
	rank := map[string]int{}
	for i, a := range order {
		rank[a] = i
	}
	sort.SliceStable(names, func(i, j int) bool {
		ri, oki := rank[names[i]]
		rj, okj := rank[names[j]]
		if oki != okj {
			return oki
		}
		if oki {
			return ri < rj
		}
		return names[i] < names[j]
	})
	out := make([]Summary, 0, len(names))
	for _, n := range names {
		s, err := readSummary(dir, filepath.ToSlash(filepath.Join("arms", n, "summary.json")), n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// csvArms are the arms of replications.csv in the order they first
// appear; nil without the file or its arm column.
func csvArms(dir string) ([]string, error) {
	c, ok, err := plot.ReadCSV(filepath.Join(dir, results.ReplicationsFile.Name))
	if err != nil || !ok {
		return nil, err
	}
	i := slices.Index(c.Header, results.Arm)
	if i < 0 {
		return nil, nil
	}
	var arms []string
	for _, r := range c.Rows {
		if !slices.Contains(arms, r[i]) {
			arms = append(arms, r[i])
		}
	}
	return arms, nil
}

func readSummary(dir, rel, arm string) (Summary, error) {
	path := filepath.Join(dir, filepath.FromSlash(rel))
	b, err := os.ReadFile(path)
	if err != nil {
		return Summary{}, badInput("%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return Summary{}, badInput("%s:%d: %v", path, 1+bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n")), err)
		}
		return Summary{}, badInput("%s: %v (want a JSON object)", path, err)
	}
	s := Summary{Arm: arm, Path: rel, Values: map[string]string{}, CI95: map[string]string{}}
	ci, _ := root["ci95"].(map[string]any)
	delete(root, "ci95")
	flatten("", root, s.Values)
	flatten("", ci, s.CI95)
	for k := range s.Values {
		s.Keys = append(s.Keys, k)
	}
	sort.Strings(s.Keys)
	return s, nil
}

// flatten adds v's leaves to out under dotted keys below prefix.
func flatten(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if prefix != "" {
				k = prefix + "." + k
			}
			flatten(k, c, out)
		}
	case []any:
		for i, c := range x {
			flatten(prefix+"["+strconv.Itoa(i)+"]", c, out)
		}
	case json.Number:
		out[prefix] = x.String()
	case string:
		out[prefix] = x
	case bool:
		out[prefix] = strconv.FormatBool(x)
	case nil:
		if prefix != "" {
			out[prefix] = "null"
		}
	}
}

// Cell is how the report shows a value of summary.json and its 95% CI
// half-width: the value as summary.json writes it, then " ± CI" when
// there is one (several replications).
func Cell(value, ci string) string {
	if ci == "" {
		return value
	}
	return value + " ± " + ci
}

// Metric is a headline metric of the results table.
type Metric struct {
	Key, Label, Unit string
}

// Headline are the metrics of the results table, in order; those absent
// from every summary (a training run has no latencies) are left out.
var Headline = []Metric{
	{"requests.arrived", "requests arrived", "requests"},
	{"requests.completed", "requests completed", "requests"},
	{"requests.failed", "requests failed", "requests"},
	{"latency_ms.ttft.p50", "TTFT p50", "ms"},
	{"latency_ms.ttft.p99", "TTFT p99", "ms"},
	{"latency_ms.tpot.p50", "TPOT p50", "ms"},
	{"latency_ms.tpot.p99", "TPOT p99", "ms"},
	{"latency_ms.itl.p99", "ITL p99", "ms"},
	{"latency_ms.e2e.p99", "end-to-end p99", "ms"},
	{"throughput.requests_per_s", "throughput", "req/s"},
	{"throughput.output_tokens_per_s", "output throughput", "tok/s"},
	{"goodput.requests_per_s", "goodput", "req/s"},
	{"goodput.slo_attainment", "SLO attainment", "fraction"},
	{"prefix_cache.hit_rate", "prefix cache hit rate", "fraction"},
	{"fleet.mfu", "MFU", "fraction"},
	{"cost.usd_per_million_output_tokens", "cost per 1M good output tokens", "USD"},
	{"cost.usd_per_month", "cost per month", "USD/month"},
	{"training.ettr", "ETTR", "fraction"},
	{"training.failures", "failures", "count"},
	{"training.interruptions", "interruptions", "count"},
	{"training.lost_gpu_hours.total", "lost GPU-hours", "GPU-h"},
	{"training.lost_usd_per_month", "lost USD per month", "USD/month"},
	{"training.cost_usd", "job cost", "USD"},
}

// provenanceKeys are the summary.json keys the provenance table shows.
var provenanceKeys = []Metric{
	{"scenario", "scenario", ""}, {"mode", "mode", ""},
	{"fleet.model", "model", ""}, {"fleet.gpu", "GPU", ""}, {"fleet.tp", "tensor parallelism", "GPUs"},
	{"fleet.replicas", "replicas", ""}, {"fleet.gpus", "GPUs", ""}, {"fleet.router", "router", ""},
	{"fleet.batching", "batching", ""}, {"fleet.engine_profile", "engine profile", ""},
	{"training.gpus", "training GPUs", ""},
	{"replications.count", "replications", ""},
	{"sim.seed", "seed of replication 0", ""}, {"sim.simulated_seconds", "simulated time", "s"},
}

// tableFiles are the comparison tables shown, in order.
var tableFiles = []string{results.ABFile.Name, results.SweepFile.Name, results.ETTRFile.Name,
	results.SizeFile.Name, results.SizeSearchFile.Name, "size_mix.csv"}

// openRows is the most rows a table is shown with unfolded.
const openRows = 40

type page struct {
	Title, Kind, Dir string
	Arms             []string // column heads, one per summary: "" is shown as "value"
	Provenance       []row
	Results          []row
	Files            []fileRow
	Tables           []csvTable
	Figures          []figure
	Summaries        []summaryTable
	Scenario         *scenarioText
	SummaryMD        string // DIR/summary.md
	AB               bool   // an A/B directory (ab.csv)
}

type row struct {
	Label, Unit, Key string
	Cells            []cell
}

type cell struct {
	Arm, Key, Text string
}

type fileRow struct {
	Name   string
	Size   int64
	SHA256 string
}

type csvTable struct {
	ID, Name, Meaning string
	Head              []header
	Rows              [][]string
	Open              bool
	// Index, for a table of some of the file's rows, lists their
	// indices in the file (0: the first after the header), comma-separated.
	Index string
}

// headlineDiffs is the rows of ab.csv t whose metric is a headline metric,
// in Headline's order.
func headlineDiffs(t csvTable) csvTable {
	out := t
	out.ID, out.Open, out.Rows = "table-ab-headline", true, nil
	out.Meaning = "the rows of ab.csv for the headline metrics: paired mean difference of each arm against the first, with its 95% CI half-width (empty from one replication)"
	col := slices.IndexFunc(t.Head, func(h header) bool { return h.Name == results.Metric })
	if col < 0 {
		return out
	}
	var idx []string
	for _, m := range Headline {
		for i, r := range t.Rows {
			if r[col] == m.Key {
				out.Rows = append(out.Rows, r)
				idx = append(idx, strconv.Itoa(i))
			}
		}
	}
	out.Index = strings.Join(idx, ",")
	return out
}

type header struct{ Name, Unit, Meaning string }

type figure struct {
	Name string
	SVG  template.HTML
}

type summaryTable struct {
	Arm, Path string
	Rows      []cell // Text: value; Key
	CI        []string
}

type scenarioText struct {
	Source, Text string
	Given        bool // given to fleetsim report, not found in the directory
}

// Build is the report of dir.
func Build(dir string, opt Options) ([]byte, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, badInput("%v", err)
	}
	if !st.IsDir() {
		return nil, badInput("%s is not a directory", dir)
	}
	sums, err := ReadSummaries(dir)
	if err != nil {
		return nil, err
	}
	base := filepath.Clean(dir)
	if abs, err := filepath.Abs(dir); err == nil {
		base = abs // names "fleetsim report ." by its directory
	}
	p := page{Dir: filepath.Base(base)}
	name := sums[0].Values["scenario"]
	p.Title = "fleetsim report: " + name
	if name == "" {
		p.Title = "fleetsim report: " + p.Dir
	}
	for _, s := range sums {
		p.Arms = append(p.Arms, s.Arm)
	}
	if len(sums) == 1 && sums[0].Arm == "" {
		// A size directory's summary.json is the run at N, which its CSV
		// files name as an arm (cluster.replicas=N): head its column so.
		arms, err := csvArms(dir)
		if err != nil {
			return nil, err
		}
		if len(arms) == 1 && arms[0] != "" {
			p.Arms[0] = arms[0]
		}
	}
	p.Provenance = rows(sums, provenanceKeys, false)
	seeds := row{Label: "seeds", Key: "replications.seeds"}
	for _, s := range sums {
		var list []string
		for i := 0; ; i++ {
			v, ok := s.Values["replications.seeds["+strconv.Itoa(i)+"]"]
			if !ok {
				break
			}
			list = append(list, v)
		}
		seeds.Cells = append(seeds.Cells, cell{Arm: s.Arm, Key: "replications.seeds", Text: strings.Join(list, ", ")})
	}
	if seeds.Cells[0].Text != "" {
		p.Provenance = append(p.Provenance, seeds)
	}
	p.Results = rows(sums, Headline, true)
	if b, err := os.ReadFile(filepath.Join(dir, "summary.md")); err == nil {
		p.SummaryMD = string(b)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, badInput("%v", err)
	}

	have := map[string]bool{}
	for _, name := range tableFiles {
		c, ok, err := plot.ReadCSV(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		have[name] = true
		t := csvTable{ID: "table-" + name, Name: name, Rows: c.Rows, Open: len(c.Rows) <= openRows}
		f, known := results.Lookup(name)
		if known {
			t.Meaning = f.Meaning
		}
		for _, h := range c.Header {
			hd := header{Name: h}
			if known {
				for _, col := range slices.Concat(f.Columns, f.Optional) {
					if col.Name == h {
						hd.Unit, hd.Meaning = col.Unit, col.Meaning
					}
				}
			}
			t.Head = append(t.Head, hd)
		}
		if name == results.ABFile.Name {
			p.Tables = append(p.Tables, headlineDiffs(t))
		}
		p.Tables = append(p.Tables, t)
	}
	switch {
	case have[results.ABFile.Name]:
		p.Kind, p.AB = "A/B comparison", true
	case have[results.SweepFile.Name] || have[results.ETTRFile.Name]:
		p.Kind = "sweep"
	case have[results.SizeFile.Name] || have["size_mix.csv"]:
		p.Kind = "sizing"
	case len(sums) > 1:
		p.Kind = "comparison of arms"
	default:
		p.Kind = "run"
	}
	if m := sums[0].Values["mode"]; m != "" && m != "serving" {
		p.Kind += " (" + m + ")"
	}

	svgs, err := plot.SVGs(dir)
	if err != nil {
		return nil, err
	}
	for _, s := range svgs {
		// Drawn by gonum/plot, whose SVG writer escapes every text.
		p.Figures = append(p.Figures, figure{Name: s.Name, SVG: template.HTML(plot.InlineSVG(s.Data))})
	}

	for _, s := range sums {
		t := summaryTable{Arm: s.Arm, Path: s.Path}
		for _, k := range s.Keys {
			t.Rows = append(t.Rows, cell{Arm: s.Arm, Key: k, Text: s.Values[k]})
			t.CI = append(t.CI, s.CI95[k])
		}
		p.Summaries = append(p.Summaries, t)
	}

	if p.Files, err = listFiles(dir, opt.Exclude); err != nil {
		return nil, err
	}

	src, given := opt.Scenario, opt.Scenario != ""
	if src == "" {
		if _, err := os.Stat(filepath.Join(dir, "scenario.toml")); err == nil {
			src = filepath.Join(dir, "scenario.toml")
		}
	}
	switch {
	case opt.ScenarioTOML != nil:
		p.Scenario = &scenarioText{Source: opt.ScenarioSource, Text: string(opt.ScenarioTOML), Given: true}
	case src != "":
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, badInput("scenario: %v", err)
		}
		p.Scenario = &scenarioText{Source: filepath.Base(src), Text: string(b), Given: given}
	}

	var buf bytes.Buffer
	if err := pageTemplate.Execute(&buf, p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// rows is one row per metric present in any summary, one cell per summary;
// withCI adds the metric's 95% CI half-width.
func rows(sums []Summary, ms []Metric, withCI bool) []row {
	var out []row
	for _, m := range ms {
		r := row{Label: m.Label, Unit: m.Unit, Key: m.Key}
		present := false
		for _, s := range sums {
			v, ok := s.Values[m.Key]
			present = present || ok
			ci := ""
			if withCI {
				ci = s.CI95[m.Key]
			}
			if !ok {
				v, ci = "n/a", ""
			}
			r.Cells = append(r.Cells, cell{Arm: s.Arm, Key: m.Key, Text: Cell(v, ci)})
		}
		if present {
			out = append(out, r)
		}
	}
	return out
}

// listFiles lists the files under dir, but for plots/, hidden files and
// the report itself, with their sizes and SHA-256.
func listFiles(dir string, exclude []string) ([]fileRow, error) {
	skip := map[string]bool{filepath.Join(filepath.Clean(dir), FileName): true}
	for _, e := range exclude {
		if a, err := filepath.Abs(e); err == nil {
			skip[a] = true
		}
		skip[filepath.Clean(e)] = true
	}
	var out []fileRow
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") || (d.IsDir() && rel == "plots") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		abs, _ := filepath.Abs(path)
		if d.IsDir() || !d.Type().IsRegular() || skip[path] || skip[abs] {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		n, err := io.Copy(h, f) // requests.csv can be large: streamed
		if err != nil {
			return err
		}
		out = append(out, fileRow{Name: filepath.ToSlash(rel), Size: n, SHA256: hex.EncodeToString(h.Sum(nil))})
		return nil
	})
	if err != nil {
		return nil, badInput("%v", err)
	}
	return out, nil
}

// Write builds the report of dir and writes it to out, or to
// DIR/report.html when out is "", through a temporary file and a rename;
// it returns the path written.
func Write(dir, out string, opt Options) (string, error) {
	if out == "" {
		out = filepath.Join(dir, FileName)
	}
	opt.Exclude = append(opt.Exclude, out)
	b, err := Build(dir, opt)
	if err != nil {
		return "", err
	}
	if err := report.WriteFileAtomic(out, b); err != nil {
		return "", err
	}
	return out, nil
}
