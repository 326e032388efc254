package plot

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/internal/infile"
)

// ErrBadInput is matched (errors.Is) by every error that comes from the
// results themselves rather than from writing the plots: a run directory
// that is missing or holds nothing to plot, or a results file that is
// malformed. `fleetsim plot` answers these with exit status 2.
var ErrBadInput = errors.New("bad input")

// inputError keeps its message and matches ErrBadInput.
type inputError struct{ err error }

func (e inputError) Error() string        { return e.err.Error() }
func (e inputError) Unwrap() error        { return e.err }
func (e inputError) Is(target error) bool { return target == ErrBadInput }

func badInput(format string, args ...any) error {
	return inputError{fmt.Errorf(format, args...)}
}

// Meta is what a figure takes from summary.json: the scenario name for the
// titles and the SLO thresholds for the SLO lines. The zero value is valid:
// no name in titles, no SLO lines.
type Meta struct {
	Scenario  string  // summary.json "scenario"; "" leaves it out of titles
	TTFTSLOMs float64 // goodput.ttft_slo_ms; 0 = no TTFT SLO line
	TPOTSLOMs float64 // goodput.tpot_slo_ms; 0 = no TPOT SLO line
	// HorizonS is sim.simulated_seconds; 0 if unknown. The failure timeline
	// extends its last step to it.
	HorizonS float64
}

// CDFPoint is one row of cdf.csv: the Quantile-quantile of Metric for Arm.
type CDFPoint struct {
	Arm      string  // "" for a single run (legend: the scenario's name)
	Metric   string  // "ttft", "tpot", "itl" or "e2e"
	Quantile float64 // in (0, 1)
	ValueMs  float64 // latency at that quantile, ms
}

// TimePoint is one row of timeseries.csv. A field whose column is absent
// from the file is NaN, and the series that need it are not drawn.
type TimePoint struct {
	Arm               string
	Replication       int
	TimeS             float64 // simulated seconds since the start
	ArrivalsPerS      float64
	CompletionsPerS   float64
	InFlight          float64 // requests admitted and not finished
	Waiting           float64 // requests queued, not yet admitted
	KVUsedFrac        float64 // KV blocks held by running sequences / total
	KVCachedFrac      float64 // KV blocks held only by the prefix cache / total
	AvailableReplicas float64
	// ProvisionedReplicas are the replicas paid for (under [autoscale]:
	// loading, serving or draining).
	ProvisionedReplicas float64
	// USDPerHour is the spend rate (usd_per_hour; NaN when absent).
	USDPerHour float64
	// Groups are a fleet of groups' provisioned replicas per group
	// (provisioned_replicas.GROUP), and Spot the spot replicas among them
	// (provisioned_spot_replicas.GROUP); GroupUSD and SpotUSD their spend
	// rates (usd_per_hour.GROUP, spot_usd_per_hour.GROUP), GroupOrder the
	// groups with a spend column in the file's order. Nil for a fleet of
	// one kind, and no key where a cell is empty.
	Groups, Spot, GroupUSD, SpotUSD map[string]float64
	GroupOrder                      []string
}

// Sweep is sweep.csv: the swept parameters (scenario key paths, in column
// order) and one row per grid point.
type Sweep struct {
	Params []string
	Rows   []SweepRow
}

// SweepRow is one grid point of a sweep. Latencies in ms, rates in
// requests per simulated second; each *CI95 is the half-width of the 95%
// confidence interval (0 = none drawn). A field whose column is absent is
// NaN.
type SweepRow struct {
	Values                     []string // parameter values as written, one per Sweep.Params
	Replications               int
	TTFTP99Ms, TTFTP99MsCI95   float64
	E2EP99Ms, E2EP99MsCI95     float64
	GoodputRPS, GoodputRPSCI95 float64
	ThroughputRPS              float64
	SLOAttainment              float64
	SLOAttainmentCI95          float64
	USDPerMonth                float64
	USDPerMillionOutputTokens  float64
}

// SizeRow is one row of size.csv: a fleet size the sizing reports
// ("N (no failures)", "N", "N+1", "N+2"). A float field whose column is
// absent is NaN.
type SizeRow struct {
	Row                      string
	Replicas, GPUs           int
	Failures                 bool
	USDPerMonth              float64
	Utilization              float64 // fraction
	HeadroomPct              float64 // percent
	TTFTP99Ms, TTFTP99MsCI95 float64
	Success                  float64
	MetSLO                   bool
}

// SearchPoint is one row of size_search.csv: a fleet size the search
// evaluated. A float field whose column is absent is NaN.
type SearchPoint struct {
	Replicas                 int
	Failures                 bool
	TTFTP99Ms, TTFTP99MsCI95 float64
	Success                  float64
	MetSLO                   bool
	USDPerMonth              float64
	// SLOAttainment is the candidate's share of requests meeting the
	// [slo], with its 95% CI half-width (0: none).
	SLOAttainment, SLOAttainmentCI95 float64
}

// FailureEvent is one row of failures.csv: after Event at TimeS, GPUsDown
// GPUs are down and CapacityFrac of the fleet is available.
type FailureEvent struct {
	TimeS        float64
	Event        string // one of results.FailureEvents
	Unit         string
	GPUsDown     int
	CapacityFrac float64 // in [0, 1]
	// Detail is the failure's category and repair path ("gpu:
	// reset>reboot, 0.67 h"), a swap's delay; "" in older files.
	Detail string
	// Arm is the arm whose timeline this is ("" for a plain run, and in
	// files written before failures.csv had every arm's).
	Arm string
}

// Escalated reports whether a failure's repair went past its first stage.
func (e FailureEvent) Escalated() bool { return strings.Contains(e.Detail, ">") }

// ETTRSweep is ettr.csv: the swept parameters (scenario key paths, in
// column order; none in a file written before they were recorded) and one
// point per grid point.
type ETTRSweep struct {
	Params []string
	Points []ETTRPoint
}

// ETTRPoint is one row of ettr.csv.
type ETTRPoint struct {
	Values              []string // parameter values as written, one per ETTRSweep.Params
	CheckpointIntervalS float64
	ETTR, ETTRCI95      float64 // effective training time ratio, in [0, 1]
	LostGPUHours        float64
}

// CalibrationPoint is one row of calibration.csv, which `fleetsim
// calibrate` writes: one measured metric of one benchmark row against the
// calibrated profile's prediction.
type CalibrationPoint struct {
	Where     string  // FILE:LINE of the benchmark row
	Metric    string  // one of CalibrationMetrics
	Measured  float64 // > 0: tokens/s or ms, as Metric says
	Predicted float64 // > 0, in the same unit
	Fit       bool    // role "fit": the row was fitted; role "test": held out
	// CVPredicted is the prediction for the row by a fit that did not see
	// it; NaN without cross-validation (an empty field or no column).
	CVPredicted float64
}

// CalibrationMetrics are the metrics of calibration.csv, in figure order:
// output tokens per second, mean time to first token and mean time per
// output token in ms.
var CalibrationMetrics = []string{"output_tokens_per_s", "ttft_ms", "tpot_ms", "itl_ms", "e2e_ms"}

// readMeta reads summary.json, name in the run directory dir (not through
// a symbolic link). ok is false when the file does not exist.
func readMeta(dir, name string) (m Meta, ok bool, err error) {
	path := filepath.Join(dir, name)
	b, err := infile.ReadFileIn(dir, name, infile.Summary)
	if errors.Is(err, fs.ErrNotExist) {
		return Meta{}, false, nil
	}
	if err != nil {
		return Meta{}, false, badInput("%v", err)
	}
	var s struct {
		Scenario string `json:"scenario"`
		Goodput  struct {
			TTFTSLOMs float64 `json:"ttft_slo_ms"`
			TPOTSLOMs float64 `json:"tpot_slo_ms"`
		} `json:"goodput"`
		Sim struct {
			SimulatedSeconds float64 `json:"simulated_seconds"`
		} `json:"sim"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		var off int64 = -1
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			off = se.Offset
		case errors.As(err, &te):
			off = te.Offset
		}
		if off >= 0 {
			return Meta{}, true, badInput("%s:%d: %v", path, 1+bytes.Count(b[:min(int(off), len(b))], []byte("\n")), err)
		}
		return Meta{}, true, badInput("%s: %v", path, err)
	}
	m = Meta{Scenario: s.Scenario, TTFTSLOMs: s.Goodput.TTFTSLOMs, TPOTSLOMs: s.Goodput.TPOTSLOMs, HorizonS: s.Sim.SimulatedSeconds}
	for _, v := range []struct {
		key string
		x   float64
	}{{"goodput.ttft_slo_ms", m.TTFTSLOMs}, {"goodput.tpot_slo_ms", m.TPOTSLOMs}, {"sim.simulated_seconds", m.HorizonS}} {
		if v.x < 0 {
			return Meta{}, true, badInput("%s: %s is %v, want ≥ 0", path, v.key, v.x)
		}
	}
	return m, true, nil
}

// table is a CSV file with a header row, read whole into one buffer: its
// fields back to back in data, each ending at its ends entry (a string per
// field would take several times the file's size for a long time series).
type table struct {
	path  string
	col   map[string]int
	names []string
	data  []byte
	ends  []uint32 // end in data of each field, row after row (a file is at most infile.ResultsCSV.Max < 4 GiB)
	lines []int    // line of each row in the file
}

// len is the number of rows.
func (t *table) len() int { return len(t.lines) }

// field is row i's field j.
func (t *table) field(i, j int) string {
	k := i*len(t.names) + j
	var start uint32
	if k > 0 {
		start = t.ends[k-1]
	}
	return string(t.data[start:t.ends[k]])
}

// row is row i's fields.
func (t *table) row(i int) []string {
	rec := make([]string, len(t.names))
	for j := range rec {
		rec[j] = t.field(i, j)
	}
	return rec
}

// readTable reads a CSV results file, name in the run directory dir (not
// through a symbolic link). ok is false when it does not exist. A header
// naming a column twice, a row with the wrong number of fields or a file
// without a header is an error naming the file and line.
func readTable(dir, name string) (t *table, ok bool, err error) {
	path := filepath.Join(dir, name)
	f, err := infile.OpenIn(dir, name, infile.ResultsCSV)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, badInput("%v", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	header, err := r.Read()
	if err == io.EOF {
		return nil, true, badInput("%s:1: empty file, want a header row", path)
	}
	if err != nil {
		return nil, true, csvErr(path, err)
	}
	t = &table{path: path, col: map[string]int{}, names: slices.Clone(header)}
	for i, h := range header {
		h = strings.TrimSpace(h)
		if h == "" {
			return nil, true, badInput("%s:1: column %d has no name", path, i+1)
		}
		if _, dup := t.col[h]; dup {
			return nil, true, badInput("%s:1: column %q appears twice", path, h)
		}
		t.col[h] = i
		t.names[i] = h
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, true, csvErr(path, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(header) {
			return nil, true, badInput("%s:%d: %d fields, the header has %d", path, line, len(rec), len(header))
		}
		for _, f := range rec {
			t.data = append(t.data, f...)
			t.ends = append(t.ends, uint32(len(t.data)))
		}
		t.lines = append(t.lines, line)
	}
	return t, true, nil
}

func csvErr(path string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return badInput("%s:%d: %v", path, pe.Line, pe.Err)
	}
	return badInput("%s: %v", path, err)
}

// has reports whether every named column is present.
func (t *table) has(names ...string) bool {
	for _, n := range names {
		if _, ok := t.col[n]; !ok {
			return false
		}
	}
	return true
}

// require is an error naming the first missing column.
func (t *table) require(names ...string) error {
	for _, n := range names {
		if _, ok := t.col[n]; !ok {
			return badInput("%s:1: no column %q (columns: %s)", t.path, n, strings.Join(t.names, ","))
		}
	}
	return nil
}

// cursor reads the fields of one row; the first problem sticks in err.
type cursor struct {
	t   *table
	i   int
	err error
}

func (c *cursor) fail(name, format string, args ...any) {
	if c.err == nil {
		c.err = badInput("%s:%d: column %s: %s", c.t.path, c.t.lines[c.i], name, fmt.Sprintf(format, args...))
	}
}

// raw is the field of column name, and whether the column exists.
func (c *cursor) raw(name string) (string, bool) {
	j, ok := c.t.col[name]
	if !ok {
		return "", false
	}
	return strings.TrimSpace(c.t.field(c.i, j)), true
}

func (c *cursor) str(name string) string {
	s, _ := c.raw(name)
	return s
}

// num is a finite number; NaN when the column is absent.
func (c *cursor) num(name string) float64 {
	s, ok := c.raw(name)
	if !ok {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		c.fail(name, "%q is not a finite number", s)
		return math.NaN()
	}
	return v
}

// ci is a confidence-interval half-width: ≥ 0; an empty field or NaN (one
// replication has none) reads as 0, an absent column as NaN.
// optNum is num for a metric that may be undefined (an empty cell: no SLO
// set, no good output token), which reads as NaN and is not drawn.
func (c *cursor) optNum(name string) float64 {
	if s, ok := c.raw(name); ok && strings.TrimSpace(s) == "" {
		return math.NaN()
	}
	return c.num(name)
}

func (c *cursor) ci(name string) float64 {
	s, ok := c.raw(name)
	if !ok {
		return math.NaN()
	}
	if s == "" || strings.EqualFold(s, "nan") {
		return 0
	}
	v := c.num(name)
	if v < 0 {
		c.fail(name, "%v is negative", v)
	}
	return v
}

// positive is a finite number > 0; NaN when the column is absent.
func (c *cursor) positive(name string) float64 {
	v := c.num(name)
	if c.err == nil && !(v > 0) && !math.IsNaN(v) {
		c.fail(name, "%v is not positive", v)
	}
	return v
}

func (c *cursor) integer(name string) int {
	s, ok := c.raw(name)
	if !ok {
		return 0
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		c.fail(name, "%q is not an integer", s)
	}
	return v
}

func (c *cursor) boolean(name string) bool {
	s, ok := c.raw(name)
	if !ok {
		return false
	}
	switch strings.ToLower(s) {
	case "true":
		return true
	case "false":
		return false
	}
	c.fail(name, "%q is not true or false", s)
	return false
}

// readCDF reads cdf.csv. Rows of metrics other than ttft, tpot, itl and e2e
// are skipped.
func readCDF(t *table) ([]CDFPoint, error) {
	if err := t.require(results.Arm, results.Metric, results.Quantile, results.ValueMs); err != nil {
		return nil, err
	}
	var out []CDFPoint
	for i := range t.len() {
		c := cursor{t: t, i: i}
		p := CDFPoint{Arm: c.str(results.Arm), Metric: c.str(results.Metric), Quantile: c.num(results.Quantile), ValueMs: c.num(results.ValueMs)}
		if c.err == nil && !(p.Quantile > 0 && p.Quantile < 1) {
			c.fail(results.Quantile, "%v is not in (0, 1)", p.Quantile)
		}
		if c.err == nil && p.ValueMs < 0 {
			c.fail(results.ValueMs, "%v is negative", p.ValueMs)
		}
		if c.err != nil {
			return nil, c.err
		}
		switch p.Metric {
		case "ttft", "tpot", "itl", "e2e":
			out = append(out, p)
		}
	}
	return out, nil
}

func readTimeseries(t *table) ([]TimePoint, error) {
	if err := t.require(results.Arm, results.Replication, results.TimeS); err != nil {
		return nil, err
	}
	out := make([]TimePoint, 0, t.len())
	for i := range t.len() {
		c := cursor{t: t, i: i}
		out = append(out, TimePoint{
			Arm: c.str(results.Arm), Replication: c.integer(results.Replication), TimeS: c.num(results.TimeS),
			ArrivalsPerS: c.num(results.ArrivalsPerS), CompletionsPerS: c.num(results.CompletionsPerS),
			InFlight: c.num(results.InFlight), Waiting: c.num(results.Waiting),
			KVUsedFrac: c.num(results.KVUsedFrac), KVCachedFrac: c.num(results.KVCachedFrac),
			AvailableReplicas: c.num(results.AvailableReplicas), ProvisionedReplicas: c.num(results.ProvisionedReplicas),
			USDPerHour: c.num(results.USDPerHour),
		})
		for _, name := range t.names {
			for _, pm := range []struct {
				prefix string
				m      *map[string]float64
			}{{results.ProvisionedReplicas + ".", &out[i].Groups}, {results.ProvisionedSpotReplicas + ".", &out[i].Spot},
				{results.USDPerHour + ".", &out[i].GroupUSD}, {results.SpotUSDPerHour + ".", &out[i].SpotUSD}} {
				g, ok := strings.CutPrefix(name, pm.prefix)
				m := pm.m
				if !ok {
					continue
				}
				if v := c.optNum(name); !math.IsNaN(v) {
					if v < 0 {
						c.fail(name, "%v is negative", v)
					}
					if *m == nil {
						*m = map[string]float64{}
					}
					(*m)[g] = v
					if pm.m == &out[i].GroupUSD {
						out[i].GroupOrder = append(out[i].GroupOrder, g)
					}
				}
			}
		}
		if c.err != nil {
			return nil, c.err
		}
	}
	return out, nil
}

// readSweep reads sweep.csv: every column before results.Replications
// whose name contains a '.' is a swept parameter.
func readSweep(t *table) (Sweep, error) {
	if err := t.require(results.Replications); err != nil {
		return Sweep{}, err
	}
	var s Sweep
	var idx []int
	s.Params, idx = params(t, results.SweepFile)
	if len(s.Params) == 0 {
		return Sweep{}, badInput("%s:1: no parameter columns (scenario key paths such as workload.arrival.rate_per_s) before %q", t.path, results.Replications)
	}
	for i := range t.len() {
		rec := t.row(i)
		c := cursor{t: t, i: i}
		r := SweepRow{
			Replications: c.integer(results.Replications),
			TTFTP99Ms:    c.num(results.TTFTP99Ms), TTFTP99MsCI95: c.ci(results.TTFTP99MsCI95),
			E2EP99Ms: c.num(results.E2EP99Ms), E2EP99MsCI95: c.ci(results.E2EP99MsCI95),
			GoodputRPS: c.num(results.GoodputRPS), GoodputRPSCI95: c.ci(results.GoodputRPSCI95),
			ThroughputRPS: c.num(results.ThroughputRPS),
			SLOAttainment: c.optNum(results.SLOAttainment), SLOAttainmentCI95: c.ci(results.SLOAttainmentCI95),
			USDPerMonth: c.num(results.USDPerMonth), USDPerMillionOutputTokens: c.optNum(results.USDPerMillionOutputTokens),
		}
		for k, j := range idx {
			v := strings.TrimSpace(rec[j])
			if v == "" {
				c.fail(s.Params[k], "empty parameter value")
			}
			r.Values = append(r.Values, v)
		}
		if c.err != nil {
			return Sweep{}, c.err
		}
		s.Rows = append(s.Rows, r)
	}
	return s, nil
}

func readSize(t *table) ([]SizeRow, error) {
	if err := t.require(results.Row, results.Replicas); err != nil {
		return nil, err
	}
	var out []SizeRow
	for i := range t.len() {
		c := cursor{t: t, i: i}
		r := SizeRow{
			Row: c.str(results.Row), Replicas: c.integer(results.Replicas), GPUs: c.integer(results.GPUs),
			Failures: c.boolean(results.Failures), USDPerMonth: c.num(results.USDPerMonth),
			Utilization: c.num(results.Utilization), HeadroomPct: c.num(results.HeadroomPct),
			TTFTP99Ms: c.num(results.TTFTP99Ms), TTFTP99MsCI95: c.ci(results.TTFTP99MsCI95),
			Success: c.num(results.Success), MetSLO: c.boolean(results.MetSLO),
		}
		if c.err == nil && r.Row == "" {
			c.fail(results.Row, "empty label")
		}
		if c.err != nil {
			return nil, c.err
		}
		out = append(out, r)
	}
	return out, nil
}

func readSearch(t *table) ([]SearchPoint, error) {
	if err := t.require(results.Replicas); err != nil {
		return nil, err
	}
	var out []SearchPoint
	for i := range t.len() {
		c := cursor{t: t, i: i}
		out = append(out, SearchPoint{
			Replicas: c.integer(results.Replicas), Failures: c.boolean(results.Failures),
			TTFTP99Ms: c.num(results.TTFTP99Ms), TTFTP99MsCI95: c.ci(results.TTFTP99MsCI95),
			Success: c.num(results.Success), MetSLO: c.boolean(results.MetSLO), USDPerMonth: c.num(results.USDPerMonth),
			SLOAttainment: c.optNum(results.SLOAttainment), SLOAttainmentCI95: c.ci(results.SLOAttainmentCI95),
		})
		if a := out[len(out)-1].SLOAttainment; c.err == nil && (a < 0 || a > 1) {
			c.fail(results.SLOAttainment, "%v is not in [0, 1]", a)
		}
		if c.err != nil {
			return nil, c.err
		}
	}
	return out, nil
}

func readFailures(t *table) ([]FailureEvent, error) {
	if err := t.require(results.TimeS, results.Event, results.CapacityFrac); err != nil {
		return nil, err
	}
	var out []FailureEvent
	for i := range t.len() {
		c := cursor{t: t, i: i}
		e := FailureEvent{TimeS: c.num(results.TimeS), Event: c.str(results.Event), Unit: c.str(results.Unit),
			GPUsDown: c.integer(results.GPUsDown), CapacityFrac: c.num(results.CapacityFrac), Detail: c.str(results.Detail), Arm: c.str(results.Arm)}
		if c.err == nil && !slices.Contains(results.FailureEvents, e.Event) {
			c.fail(results.Event, "%q is not one of %s", e.Event, strings.Join(results.FailureEvents, ", "))
		}
		if c.err == nil && !(e.CapacityFrac >= 0 && e.CapacityFrac <= 1) {
			c.fail(results.CapacityFrac, "%v is not in [0, 1]", e.CapacityFrac)
		}
		if c.err == nil && e.TimeS < 0 {
			c.fail(results.TimeS, "%v is negative", e.TimeS)
		}
		if c.err == nil && len(out) > 0 && e.Arm == out[len(out)-1].Arm && e.TimeS < out[len(out)-1].TimeS {
			c.fail(results.TimeS, "%v is before the previous event (%v): an arm's events must be in time order", e.TimeS, out[len(out)-1].TimeS)
		}
		if c.err != nil {
			return nil, c.err
		}
		out = append(out, e)
	}
	return out, nil
}

// params are the swept parameters of a sweep.csv or ettr.csv: the
// leading columns before f's first fixed column whose names contain a '.'
// (scenario key paths), and their indexes.
func params(t *table, f *results.File) ([]string, []int) {
	var names []string
	var idx []int
	for j, n := range f.Leading(t.names) {
		if strings.Contains(n, ".") {
			names = append(names, n)
			idx = append(idx, j)
		}
	}
	return names, idx
}

// readETTR reads ettr.csv: its leading columns with a '.' in their names
// are the swept parameters (none in files written before they were).
func readETTR(t *table) (ETTRSweep, error) {
	if err := t.require(results.CheckpointIntervalS, results.ETTR); err != nil {
		return ETTRSweep{}, err
	}
	var s ETTRSweep
	var idx []int
	s.Params, idx = params(t, results.ETTRFile)
	for i := range t.len() {
		rec := t.row(i)
		c := cursor{t: t, i: i}
		p := ETTRPoint{CheckpointIntervalS: c.num(results.CheckpointIntervalS), ETTR: c.num(results.ETTR),
			ETTRCI95: c.ci(results.ETTRCI95), LostGPUHours: c.num(results.LostGPUHours)}
		if c.err == nil && p.CheckpointIntervalS <= 0 {
			c.fail(results.CheckpointIntervalS, "%v is not positive", p.CheckpointIntervalS)
		}
		for k, j := range idx {
			v := strings.TrimSpace(rec[j])
			if v == "" {
				c.fail(s.Params[k], "empty parameter value")
			}
			p.Values = append(p.Values, v)
		}
		if c.err != nil {
			return ETTRSweep{}, c.err
		}
		s.Points = append(s.Points, p)
	}
	return s, nil
}

// readCalibration reads calibration.csv. Every row must have a known
// metric and role and positive measured and predicted values (they are
// drawn on log axes); cv_predicted, when the column is there, is empty (no
// cross-validation) or positive.
func readCalibration(t *table) ([]CalibrationPoint, error) {
	if err := t.require(results.Metric, results.Measured, results.Predicted, results.Role); err != nil {
		return nil, err
	}
	var out []CalibrationPoint
	for i := range t.len() {
		c := cursor{t: t, i: i}
		p := CalibrationPoint{Where: c.str(results.Where), Metric: c.str(results.Metric), CVPredicted: math.NaN()}
		if !slices.Contains(CalibrationMetrics, p.Metric) {
			c.fail(results.Metric, "%q is not one of %s", p.Metric, strings.Join(CalibrationMetrics, ", "))
		}
		p.Measured = c.positive(results.Measured)
		p.Predicted = c.positive(results.Predicted)
		switch role := c.str(results.Role); role {
		case "fit":
			p.Fit = true
		case "test":
		default:
			c.fail(results.Role, "%q is not fit or test", role)
		}
		if s, _ := c.raw(results.CVPredicted); s != "" && !strings.EqualFold(s, "nan") {
			p.CVPredicted = c.positive(results.CVPredicted)
		}
		if c.err != nil {
			return nil, c.err
		}
		out = append(out, p)
	}
	return out, nil
}
