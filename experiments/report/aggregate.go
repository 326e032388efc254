package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/fleetsim/fleetsim/experiments/results"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// Metric is one numeric leaf of a Summary, named by its dotted JSON path
// (e.g. "latency_ms.ttft.p99").
type Metric struct {
	Key   string
	Value float64
}

// Flatten lists the numeric leaves of s in sorted key order.
func Flatten(s *Summary) []Metric {
	b, err := json.Marshal(s)
	if err != nil {
		panic("experiments: summary does not marshal: " + err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		panic("experiments: summary does not unmarshal: " + err.Error())
	}
	var out []Metric
	flattenInto(&out, "", m)
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func flattenInto(out *[]Metric, prefix string, v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			key := k
			if prefix != "" {
				key = prefix + "." + k
			}
			flattenInto(out, key, sub)
		}
	case json.Number:
		f, err := x.Float64()
		if err == nil {
			*out = append(*out, Metric{Key: prefix, Value: f})
		}
	}
}

// Stat is a metric over replications: mean, the half-width of its 95%
// confidence interval (Student t with R−1 degrees of freedom; 0 for R = 1)
// and the per-replication values.
type Stat struct {
	Key    string
	Mean   float64
	CI95   float64
	Values []float64
}

// TQuantile is the Student-t quantile p with nu degrees of freedom.
func TQuantile(p float64, nu int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(nu)}.Quantile(p)
}

// MeanCI returns the mean of xs and the half-width of the two-sided
// confidence interval at level conf (e.g. 0.95).
func MeanCI(xs []float64, conf float64) (mean, half float64) {
	n := len(xs)
	if n == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	return mean, TQuantile(1-(1-conf)/2, n-1) * sd / math.Sqrt(float64(n))
}

// Aggregate computes a Stat for every metric of the replications. A metric
// missing from a replication (a failure reason that did not occur there)
// counts as 0 in it.
//
// An undefined metric (optionalMetrics: absent from a replication's summary
// because it has no value there, e.g. $ per good token when nothing met the
// SLO) is undefined for the aggregate too unless every replication has it:
// counting it as 0 would make the worst configuration look cheapest.
func Aggregate(reps []*RepResult) []Stat {
	vals := map[string][]float64{}
	seen := map[string]int{}
	for i, r := range reps {
		for _, m := range Flatten(r.Summary) {
			v, ok := vals[m.Key]
			if !ok {
				v = make([]float64, len(reps))
				vals[m.Key] = v
			}
			v[i] = m.Value
			seen[m.Key]++
		}
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		if OptionalMetrics[k] && seen[k] < len(reps) {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	stats := make([]Stat, len(keys))
	for i, k := range keys {
		st := Stat{Key: k, Values: vals[k]}
		st.Mean, st.CI95 = MeanCI(st.Values, 0.95)
		stats[i] = st
	}
	return stats
}

// OptionalMetrics are summary keys that are absent when they have no value
// (see Aggregate).
var OptionalMetrics = map[string]bool{
	"goodput.slo_attainment":             true,
	"cost.usd_per_million_output_tokens": true,
}

// StatMap indexes stats by key.
func StatMap(stats []Stat) map[string]Stat {
	m := make(map[string]Stat, len(stats))
	for _, s := range stats {
		m[s.Key] = s
	}
	return m
}

// AggregateJSON is summary.json for several replications: the shape of a
// single run's summary with every number replaced by its mean over
// replications, plus "ci95" (the same shape, holding 95% CI half-widths) and
// "replications" (count and seeds). Strings come from replication 0.
func AggregateJSON(reps []*RepResult, stats []Stat) ([]byte, error) {
	b, err := json.Marshal(reps[0].Summary)
	if err != nil {
		return nil, err
	}
	var mean map[string]any
	if err := json.Unmarshal(b, &mean); err != nil {
		return nil, err
	}
	ci := map[string]any{}
	have := map[string]bool{}
	for _, st := range stats {
		have[st.Key] = true
	}
	for k := range OptionalMetrics {
		if !have[k] {
			deletePath(mean, k)
		}
	}
	for _, st := range stats {
		setPath(mean, st.Key, results.Round6(st.Mean))
		setPath(ci, st.Key, results.Round6(st.CI95))
	}
	seeds := make([]uint64, len(reps))
	for i, r := range reps {
		seeds[i] = r.Seed
	}
	mean["ci95"] = ci
	mean["replications"] = map[string]any{"count": len(reps), "seeds": seeds}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetIndent("", "  ")
	if err := enc.Encode(mean); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func deletePath(m map[string]any, key string) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			return
		}
		m = sub
	}
	delete(m, parts[len(parts)-1])
}

func setPath(m map[string]any, key string, v float64) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	m[parts[len(parts)-1]] = v
}

// headline lists the metrics shown with confidence intervals in tables.
var headline = []struct{ key, label, unit string }{
	{"requests.completed", "completed", "req"},
	{"latency_ms.ttft.p50", "TTFT p50", "ms"},
	{"latency_ms.ttft.p99", "TTFT p99", "ms"},
	{"latency_ms.tpot.p99", "TPOT p99", "ms"},
	{"latency_ms.itl.p99", "ITL p99", "ms"},
	{"latency_ms.e2e.p99", "end-to-end p99", "ms"},
	{"fanout.latency_ms.p99", "fan-out p99", "ms"},
	{"fanout.latency_ms.p999", "fan-out p99.9", "ms"},
	{"throughput.output_tokens_per_s", "output throughput", "tok/s"},
	{"goodput.requests_per_s", "goodput", "req/s"},
	{"goodput.slo_attainment", "SLO attainment", ""},
	{"prefix_cache.hit_rate", "prefix hit rate", ""},
	{"fleet.mfu", "MFU", ""},
	{"cost.usd_per_million_output_tokens", "$ per 1M good tokens", "$"},
	{"failures.availability", "replica availability", ""},
	{"failures.decode.availability", "decode replica availability", ""},
	{"failures.spares_used", "spare swaps", ""},
	{"training.ettr", "ETTR", ""},
	{"training.interruptions", "interruptions", ""},
	{"training.lost_gpu_hours.total", "lost GPU-hours", "GPU-h"},
	{"training.lost_usd_per_month", "lost $ per month", "$"},
	{"training.slowdown_usd_per_month", "straggler $ per month", "$"},
}

// PM is the stat as "mean ± 95% CI half-width", or "mean ± n/a" from one
// replication, which has no interval (MeanCI's 0 there is not a width).
func (st Stat) PM() string { return PM(st.Mean, st.CI95, len(st.Values)) }

// CICell is the stat's 95% CI half-width as a CSV cell, rounded as every
// figure is (results.Round6); empty from one replication, which has none.
func (st Stat) CICell() string {
	if len(st.Values) < 2 {
		return ""
	}
	return results.FormatFloat(results.Round6(st.CI95))
}

// PM is "mean ± half", or "mean ± n/a" when n < 2 values made them.
func PM(mean, half float64, n int) string {
	if n < 2 {
		return Human(mean) + " ± n/a"
	}
	return Human(mean) + " ± " + Human(half)
}

// WriteStatsTable writes the headline metrics as mean ± 95% CI.
func WriteStatsTable(w *bytes.Buffer, stats []Stat, reps int) {
	m := StatMap(stats)
	if reps > 1 && IdenticalReplications(stats) {
		fmt.Fprintf(w, "%d replications, all identical: nothing in this scenario varies with the seed (a trace replay without failures draws nothing; workload.trace.resample = \"poisson\" makes its replications bootstrap resamples), so there are no confidence intervals\n", reps)
	} else {
		fmt.Fprintf(w, "%d replications (mean ± 95%% CI, Student t)\n", reps)
	}
	for _, h := range headline {
		st, ok := m[h.key]
		if !ok {
			continue
		}
		ci := Human(st.CI95)
		if len(st.Values) < 2 {
			ci = "n/a"
		}
		fmt.Fprintf(w, "  %-22s %12s ± %-10s %s\n", h.label, Human(st.Mean), ci, h.unit)
	}
	// A mean hides how bad a run can be: the ETTR's spread across runs.
	if st, ok := m["training.ettr"]; ok && len(st.Values) >= 20 {
		v := slices.Clone(st.Values)
		slices.Sort(v)
		fmt.Fprintf(w, "  %-22s median %.4f, p5 %.4f, p95 %.4f, worst %.4f (over %d runs)\n", "ETTR spread",
			nearestRank(v, 0.5), nearestRank(v, 0.05), nearestRank(v, 0.95), v[0], len(v))
	}
}

// nearestRank is the nearest-rank q-quantile of sorted values.
func nearestRank(sorted []float64, q float64) float64 {
	k := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

// IdenticalReplications reports whether every replication gave the same value of
// every metric but the simulator's own counters and seeds.
func IdenticalReplications(stats []Stat) bool {
	for _, st := range stats {
		if strings.HasPrefix(st.Key, "sim.") {
			continue
		}
		for _, v := range st.Values {
			if v != st.Values[0] {
				return false
			}
		}
	}
	return true
}

// Human formats x with a precision that suits its size.
func Human(x float64) string {
	a := math.Abs(x)
	switch {
	case x == 0:
		return "0"
	case a >= 1000:
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	case a >= 1:
		return fmt.Sprintf("%.2f", x)
	default:
		return fmt.Sprintf("%.4f", x)
	}
}
