package calibrate

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/models/hw"
)

// Filter selects rows by column values: every key's value must be one of
// its list (FilterKeys).
type Filter map[string][]string

// FilterKeys are the row columns a Filter (and a grouped cross-validation)
// may name: kind is "dense" or "moe".
var FilterKeys = []string{"model", "gpu", "tp", "weights", "kv_dtype", "batching", "backend", "kind"}

// Key is row r's value of a FilterKeys column ("" for an unknown key).
func (r Row) Key(k string) string {
	switch k {
	case "model":
		return r.Model
	case "gpu":
		return r.GPU
	case "tp":
		return strconv.Itoa(r.TP)
	case "weights":
		return r.Weights
	case "kv_dtype":
		return r.KVDType
	case "batching":
		return r.Batching
	case "backend":
		return r.Backend
	}
	return ""
}

// Kind is "moe" for a mixture-of-experts model, else "dense".
func (c *Case) Kind() string { return c.key("kind") }

// key is Row.Key, and kind: the case's model is dense or moe.
func (c *Case) key(k string) string {
	if k == "kind" {
		if c.llm.IsMoE() {
			return "moe"
		}
		return "dense"
	}
	return c.Row.Key(k)
}

// ParseFilter reads KEY=V1,V2 terms (several terms are all required).
func ParseFilter(terms []string) (Filter, error) {
	f := Filter{}
	for _, t := range terms {
		k, v, ok := strings.Cut(t, "=")
		if !ok || v == "" {
			return nil, fmt.Errorf("%q: want KEY=V1,V2,... with KEY one of %s", t, strings.Join(FilterKeys, ", "))
		}
		if !slices.Contains(FilterKeys, k) {
			return nil, fmt.Errorf("%q: unknown key %q (%s)", t, k, strings.Join(FilterKeys, ", "))
		}
		f[k] = append(f[k], strings.Split(v, ",")...)
	}
	return f, nil
}

// Match says whether c's row passes the filter (an empty filter passes all).
func (f Filter) Match(c *Case) bool {
	for k, vs := range f {
		v := c.key(k)
		found := false
		for _, w := range vs {
			found = found || w == v
		}
		if !found {
			return false
		}
	}
	return true
}

// Line is one measured metric of one row against its prediction.
type Line struct {
	Case      *Case
	Metric    string // output_tokens_per_s, ttft_ms, tpot_ms, itl_ms or e2e_ms
	Measured  float64
	Predicted float64
	Error     float64 // predicted/measured − 1
	Fit       bool    // the row was fitted (else held out)
	// CVPredicted and CVError come from the fit that did not see the row
	// (NaN without cross-validation).
	CVPredicted, CVError float64
}

// Lines compares every measured metric of every case under pp; fit marks
// the fitted cases; cv (nil, or one entry per case) adds cross-validated
// predictions.
func Lines(cases []*Case, fit []bool, pp hw.PerfProfile, cv []Errors) ([]Line, error) {
	var out []Line
	es := make([]Errors, len(cases))
	errs := make([]error, len(cases))
	parallel(len(cases), runtime.GOMAXPROCS(0), func(i int) { es[i], errs[i] = Compare(cases[i], pp) })
	for i, c := range cases {
		e, err := es[i], errs[i]
		if err != nil {
			return nil, fmt.Errorf("%s: %v", c.Row.Where(), err)
		}
		r := c.Row
		for _, m := range []struct {
			name           string
			meas, pred, er float64
			cvPred, cvErr  func(Errors) float64
		}{
			{"output_tokens_per_s", r.OutputTokensPerS, e.Pred.OutputTokensPerS, e.Throughput,
				func(x Errors) float64 { return x.Pred.OutputTokensPerS }, func(x Errors) float64 { return x.Throughput }},
			{"ttft_ms", r.TTFTMs, e.Pred.TTFTMs, e.TTFT,
				func(x Errors) float64 { return x.Pred.TTFTMs }, func(x Errors) float64 { return x.TTFT }},
			{"tpot_ms", r.MeanTPOTMs, e.Pred.TPOTMs, e.TPOT,
				func(x Errors) float64 { return x.Pred.TPOTMs }, func(x Errors) float64 { return x.TPOT }},
			{"itl_ms", r.MeanITLMs, e.Pred.ITLMs, e.ITL,
				func(x Errors) float64 { return x.Pred.ITLMs }, func(x Errors) float64 { return x.ITL }},
			{"e2e_ms", r.MeanE2EMs, e.Pred.E2EMs, e.E2E,
				func(x Errors) float64 { return x.Pred.E2EMs }, func(x Errors) float64 { return x.E2E }},
		} {
			if m.meas <= 0 {
				continue
			}
			l := Line{Case: c, Metric: m.name, Measured: m.meas, Predicted: m.pred, Error: m.er, Fit: fit[i],
				CVPredicted: math.NaN(), CVError: math.NaN()}
			if cv != nil {
				l.CVPredicted, l.CVError = m.cvPred(cv[i]), m.cvErr(cv[i])
			}
			out = append(out, l)
		}
	}
	return out, nil
}

// Stats are the median and worst absolute relative errors of some lines.
type Stats struct {
	N             int
	Median, Worst float64
}

// Summarise gives the stats of the errors pick returns for the lines keep
// selects (NaN errors are skipped).
func Summarise(lines []Line, keep func(Line) bool, pick func(Line) float64) Stats {
	var errs []float64
	for _, l := range lines {
		if keep(l) {
			if e := pick(l); !math.IsNaN(e) {
				errs = append(errs, math.Abs(e))
			}
		}
	}
	if len(errs) == 0 {
		return Stats{}
	}
	sort.Float64s(errs)
	med := errs[len(errs)/2]
	if len(errs)%2 == 0 {
		med = (errs[len(errs)/2-1] + errs[len(errs)/2]) / 2
	}
	return Stats{N: len(errs), Median: med, Worst: errs[len(errs)-1]}
}

// CSV renders the lines as calibration.csv (results.CalibrationFile; what
// `fleetsim plot` reads).
func CSV(lines []Line) []byte {
	t := results.NewTable(results.CalibrationFile, nil, nil)
	f := func(v float64) string {
		if math.IsNaN(v) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 7, 64)
	}
	for _, l := range lines {
		r := l.Case.Row
		role := "test"
		if l.Fit {
			role = "fit"
		}
		t.Row(r.Where(), r.Model, r.GPU, strconv.Itoa(r.TP), r.Weights, r.KVDType, r.Batching,
			strconv.Itoa(r.ISL), strconv.Itoa(r.OSL), strconv.Itoa(r.MaxSeqs), l.Metric, f(l.Measured), f(l.Predicted),
			f(l.Error), role, f(l.CVPredicted), f(l.CVError))
	}
	return t.Bytes()
}

// Domain is what a profile fitted on cases was fitted on: their models,
// GPUs, compute precisions and kinds (sorted), and the range of their
// models' active parameters.
func Domain(cases []*Case) hw.ProfileDomain {
	var d hw.ProfileDomain
	add := func(xs *[]string, x string) {
		if !slices.Contains(*xs, x) {
			*xs = append(*xs, x)
		}
	}
	lo, hi := math.Inf(1), 0.0
	for _, c := range cases {
		add(&d.Models, c.Row.Model)
		add(&d.GPUs, c.Row.GPU)
		comp := c.Row.Compute
		if comp == "" {
			comp = string(hw.DefaultCompute(c.gpu, hw.Precision(c.Row.Weights)))
		}
		add(&d.Compute, comp)
		add(&d.Kinds, c.Kind())
		b := c.llm.ActiveParamsDerived() / 1e9
		lo, hi = min(lo, b), max(hi, b)
	}
	for _, xs := range [][]string{d.Models, d.GPUs, d.Compute, d.Kinds} {
		sort.Strings(xs)
	}
	if hi > 0 {
		d.ActiveParamsB = []float64{math.Round(lo*10) / 10, math.Round(hi*10) / 10}
	}
	return d
}
