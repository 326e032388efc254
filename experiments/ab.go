package experiments

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/sim/quantile"
)

// Arm is one arm of an A/B: a name and its scenario.
type Arm struct {
	Name     string
	Scenario *scenario.Scenario
}

// ArmsFromScenario derives the arms of a scenario's [[arms]] tables: each
// arm is the base scenario with the arm's keys applied over it. A scenario
// without [[arms]] is an error.
func ArmsFromScenario(base *scenario.Scenario) ([]Arm, error) {
	if len(base.Arms) < 2 {
		return nil, fmt.Errorf("%s: an A/B needs at least two [[arms]] tables (found %d), or two scenario files", base.Name, len(base.Arms))
	}
	var arms []Arm
	seen := map[string]bool{}
	for i, raw := range base.Arms {
		name, _ := raw["name"].(string)
		if name == "" {
			return nil, fmt.Errorf("%s: arms.%d: each arm needs a name", base.Name, i)
		}
		if seen[name] {
			return nil, fmt.Errorf("%s: arms.%d: arm name %q used twice", base.Name, i, name)
		}
		seen[name] = true
		rest := map[string]any{}
		for k, v := range raw {
			if k != "name" {
				rest[k] = v
			}
		}
		var buf bytes.Buffer
		if err := toml.NewEncoder(&buf).Encode(rest); err != nil {
			return nil, fmt.Errorf("%s: arms.%d: %w", base.Name, i, err)
		}
		sc, err := base.Derive(scenario.Overlay{Name: "arm " + name, TOML: buf.Bytes(), KeyPrefix: fmt.Sprintf("arms.%d", i)})
		if err != nil {
			return nil, err
		}
		if sc.Seed != base.Seed || sc.Run.Replications != base.Run.Replications {
			return nil, fmt.Errorf("%s: arm %s: arms must share seed and replications (common random numbers)", base.Name, name)
		}
		sc.Name = base.Name
		sc.Arms = nil
		arms = append(arms, Arm{Name: name, Scenario: sc})
	}
	return arms, nil
}

// PairedDiff compares one metric of arm B with the baseline arm A over
// paired replications (the same seeds): d_i = b_i − a_i. The relative change
// is the same estimate scaled by the baseline mean, Rel = mean(d)/mean(a) =
// B/A − 1 with half-width DiffCI/|A|, so a verdict's percentage always
// agrees with its endpoints (A → B) and it is significant exactly when the
// table's difference is (|Diff| > DiffCI). The baseline's own sampling
// error is not propagated into the ratio (with common random numbers it is
// small next to the paired difference's).
//
// Res is the estimator's own relative resolution: a latency quantile read
// from a sketch in bucket mode is within relative error alpha of the exact
// one in each arm, so their ratio is known only to one bucket's width,
// (1+alpha)/(1-alpha) − 1 (2.02% at alpha = 1%), however many
// replications agree (with common random numbers every replication can
// land one bucket apart: a CI of 0 around a difference of one bucket). 0
// for exact figures.
type PairedDiff struct {
	Key          string
	A, B         float64 // means
	Diff, DiffCI float64 // mean of d_i and its 95% CI half-width
	Rel, RelCI   float64 // Diff/A and DiffCI/|A|; NaN when A = 0
	N            int     // pairs (replications); no interval below 2
	Res          float64 // relative resolution of the estimator (see above)
}

// sketchResolution is one bucket's relative width at the recorder's
// sketch accuracy (quantile.DefaultAlpha).
var sketchResolution = (1+quantile.DefaultAlpha)/(1-quantile.DefaultAlpha) - 1

// quantileResolution is the relative resolution of metric key of arm st:
// sketchResolution for a latency quantile (latency_ms.M.pNN) whose sketch
// was in bucket mode in some replication (more than
// quantile.DefaultExactLimit values, or ITL, which the replicas sketch in
// bucket mode from the first gap), else 0 (exact quantiles, means, counts).
func quantileResolution(key string, st map[string]report.Stat) float64 {
	rest, ok := strings.CutPrefix(key, "latency_ms.")
	if !ok {
		return 0
	}
	metric, q, ok := strings.Cut(rest, ".")
	if !ok || len(q) < 2 || q[0] != 'p' {
		return 0
	}
	if metric == "itl" {
		return sketchResolution
	}
	for _, v := range st["latency_ms."+metric+".n"].Values {
		if v > quantile.DefaultExactLimit {
			return sketchResolution
		}
	}
	return 0
}

// Paired computes the paired differences of every metric of b against a.
func Paired(a, b *report.ArmResult) []PairedDiff {
	am, bm := report.StatMap(a.Stats), report.StatMap(b.Stats)
	var out []PairedDiff
	for _, sa := range a.Stats {
		sb, ok := bm[sa.Key]
		if !ok || len(sb.Values) != len(sa.Values) {
			continue
		}
		d := make([]float64, len(sa.Values))
		for i := range d {
			d[i] = sb.Values[i] - sa.Values[i]
		}
		pd := PairedDiff{Key: sa.Key, A: sa.Mean, B: sb.Mean, N: len(d),
			Res: max(quantileResolution(sa.Key, am), quantileResolution(sa.Key, bm))}
		pd.Diff, pd.DiffCI = report.MeanCI(d, 0.95)
		pd.Rel, pd.RelCI = math.NaN(), math.NaN()
		if sa.Mean != 0 {
			pd.Rel, pd.RelCI = pd.Diff/sa.Mean, pd.DiffCI/math.Abs(sa.Mean)
		}
		out = append(out, pd)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// verdictMetrics are the metrics an A/B states a verdict on.
var verdictMetrics = []struct {
	key, label  string
	lowerBetter bool
	points      bool // a fraction: state the change in percentage points
	// quiet: say nothing when the arms do not differ at all (GPU-hours of
	// two static fleets of one size).
	quiet bool
}{
	{"latency_ms.ttft_client.p99", "p99 client TTFT (failures included)", true, false, false},
	{"latency_ms.ttft.p99", "p99 TTFT", true, false, false},
	{"latency_ms.ttft.p999", "p99.9 TTFT", true, false, false},
	{"latency_ms.ttft.p50", "p50 TTFT", true, false, false},
	{"latency_ms.tpot.p99", "p99 TPOT", true, false, false},
	{"latency_ms.e2e.p99", "p99 end-to-end latency", true, false, false},
	{"fanout.latency_ms.p99", "p99 fan-out latency (all sub-requests)", true, false, false},
	{"fanout.latency_ms.p999", "p99.9 fan-out latency (all sub-requests)", true, false, false},
	{"resilience.success_rate", "success rate", false, true, false},
	{"goodput.requests_per_s", "goodput", false, false, false},
	{"goodput.slo_attainment", "SLO attainment", false, true, false},
	{"prefix_cache.hit_rate", "prefix hit rate", false, true, false},
	{"throughput.output_tokens_per_s", "output throughput", false, false, false},
	{"cost.usd_per_million_output_tokens", "$ per 1M good output tokens", true, false, false},
	{"cost.gpu_hours", "GPU-hours", true, false, true},
	{"training.ettr", "ETTR", false, true, false},
	{"training.lost_usd_per_month", "$ lost per month", true, false, false},
}

// Verdicts states, one plain line per headline metric, what arm b does
// compared with arm a, with 95% confidence intervals. A change is stated
// only when it is both outside its interval and larger than what the
// estimator resolves (Res; and what the line prints: a change that rounds
// to 0.0% is "less than 0.05%"). From one replication there is no
// interval, so no verdict: the lines give both arms' figures only.
func Verdicts(aName, bName string, diffs []PairedDiff, reps int) []string {
	m := map[string]PairedDiff{}
	for _, d := range diffs {
		m[d.Key] = d
	}
	var out []string
	for _, v := range verdictMetrics {
		d, ok := m[v.key]
		if !ok || (v.quiet && d.Diff == 0 && d.DiffCI == 0) {
			continue
		}
		if d.Diff == 0 && (d.DiffCI == 0 || d.N < 2) {
			if v.points {
				out = append(out, fmt.Sprintf("%s leaves %s unchanged (%.1f%%)", bName, v.label, 100*d.A))
			} else {
				out = append(out, fmt.Sprintf("%s leaves %s unchanged (%s)", bName, v.label, report.Human(d.A)))
			}
			continue
		}
		if d.N < 2 {
			if v.points {
				out = append(out, fmt.Sprintf("%s: %.1f%% → %.1f%% (one replication: no verdict)", v.label, 100*d.A, 100*d.B))
			} else {
				out = append(out, fmt.Sprintf("%s: %s → %s (one replication: no verdict)", v.label, report.Human(d.A), report.Human(d.B)))
			}
			continue
		}
		if v.points {
			p, ci := 100*d.Diff, 100*d.DiffCI
			switch {
			case math.Abs(p) <= ci:
				out = append(out, fmt.Sprintf("no significant change in %s: %s %+.2f ± %.2f points (95%% CI) vs %s", v.label, bName, p, ci, aName))
			case math.Abs(p) < 0.005:
				out = append(out, fmt.Sprintf("%s changes %s by less than 0.01 points (%.1f%%)", bName, v.label, 100*d.A))
			default:
				verb := "raises"
				if p < 0 {
					verb = "lowers"
				}
				out = append(out, fmt.Sprintf("%s %s %s by %.2f ± %.2f points (95%% CI): %.1f%% → %.1f%%", bName, verb, v.label, math.Abs(p), ci, 100*d.A, 100*d.B))
			}
			continue
		}
		if math.IsNaN(d.Rel) {
			out = append(out, fmt.Sprintf("%s: %s %s vs %s %s (no relative change: the baseline is 0)", v.label, bName, report.Human(d.B), aName, report.Human(d.A)))
			continue
		}
		p, ci, res := 100*d.Rel, 100*d.RelCI, 100*d.Res
		switch {
		case math.Abs(p) <= ci:
			out = append(out, fmt.Sprintf("no significant change in %s: %s %+.1f%% ± %.1f%% (95%% CI) vs %s", v.label, bName, p, ci, aName))
		case math.Abs(p) <= ci+res:
			out = append(out, fmt.Sprintf("no change resolved in %s: %s %+.1f%% ± %.1f%% (95%% CI) vs %s, within the quantile sketch's ±%.1f%% resolution", v.label, bName, p, ci, aName, res))
		case math.Abs(p) < 0.05:
			out = append(out, fmt.Sprintf("%s changes %s by less than 0.05%% (%s)", bName, v.label, report.Human(d.A)))
		default:
			better := (p < 0) == v.lowerBetter
			verb := map[bool]string{true: "raises", false: "cuts"}[p > 0]
			mark := "better"
			if !better {
				mark = "worse"
			}
			out = append(out, fmt.Sprintf("%s %s %s by %.1f%% ± %.1f%% (95%% CI; %s): %s → %s", bName, verb, v.label, math.Abs(p), ci, mark, report.Human(d.A), report.Human(d.B)))
		}
	}
	if reps < 2 {
		out = append(out, "(one replication: no confidence intervals, so no verdicts; run with --replications 5 or more)")
	}
	return out
}

// ABResult is an A/B run: the arms and each arm's comparison with the
// first.
type ABResult struct {
	Arms  []*report.ArmResult
	Diffs [][]PairedDiff // Diffs[k] compares Arms[k+1] with Arms[0]
}

// RunAB runs every arm's replications with the same seeds (common random
// numbers) and compares each arm with the first.
func RunAB(arms []Arm, opt RunOptions) (*ABResult, error) {
	res, err := runMany(ArmScenarios(arms), opt)
	if err != nil {
		return nil, err
	}
	return AssembleAB(ArmNames(arms), res), nil
}

// ArmScenarios and ArmNames list the arms' scenarios and names.
func ArmScenarios(arms []Arm) []*scenario.Scenario {
	out := make([]*scenario.Scenario, len(arms))
	for i, a := range arms {
		out[i] = a.Scenario
	}
	return out
}

// ArmNames lists the arms' names.
func ArmNames(arms []Arm) []string {
	out := make([]string, len(arms))
	for i, a := range arms {
		out[i] = a.Name
	}
	return out
}

// AssembleAB builds an A/B's result from every arm's replications.
func AssembleAB(names []string, results [][]*report.RepResult) *ABResult {
	arms := make([]*report.ArmResult, len(names))
	for i, n := range names {
		arms[i] = report.NewArmResult(n, results[i])
	}
	return NewABResult(arms)
}

// abTableKeys are the rows of the side-by-side table.
// Optional rows are shown only when some arm reports them (a run without
// [failures] has no availability, not 0).
var abTableKeys = []struct {
	key, label string
	optional   bool
}{
	{key: "requests.completed", label: "completed"},
	{key: "requests.failed", label: "failed"},
	{key: "requests.shed", label: "shed"},
	{key: "latency_ms.ttft.p50", label: "TTFT p50 ms"},
	{key: "latency_ms.ttft.p99", label: "TTFT p99 ms"},
	{key: "latency_ms.ttft.p999", label: "TTFT p99.9 ms"},
	{key: "latency_ms.ttft_client.p99", label: "client TTFT p99"},
	{key: "latency_ms.tpot.p99", label: "TPOT p99 ms"},
	{key: "latency_ms.itl.p99", label: "ITL p99 ms"},
	{key: "latency_ms.e2e.p99", label: "e2e p99 ms"},
	{key: "fanout.latency_ms.p99", label: "fan-out p99 ms", optional: true},
	{key: "fanout.latency_ms.p999", label: "fan-out p99.9 ms", optional: true},
	{key: "throughput.output_tokens_per_s", label: "output tok/s"},
	{key: "goodput.requests_per_s", label: "goodput req/s"},
	{key: "goodput.slo_attainment", label: "SLO attainment"},
	{key: "resilience.success_rate", label: "success rate"},
	{key: "resilience.hedge_rate", label: "hedge rate"},
	{key: "resilience.wasted_token_fraction", label: "wasted tokens"},
	{key: "resilience.cancelled_token_fraction", label: "cancelled tokens"},
	{key: "resilience.isolation_ms_max", label: "isolation ms (max)"},
	{key: "resilience.rollout.green_errors", label: "new-version errors"},
	{key: "resilience.rollout.detection_s", label: "rollback after s"},
	{key: "prefix_cache.hit_rate", label: "prefix hit rate"},
	{key: "kv.preemptions", label: "preemptions"},
	{key: "fleet.mfu", label: "MFU"},
	{key: "cost.usd", label: "cost $"},
	{key: "cost.gpu_hours", label: "GPU-h"},
	{key: "autoscale.replicas_mean", label: "replicas (mean)", optional: true},
	{key: "cost.usd_per_million_output_tokens", label: "$ / 1M good tok"},
	{key: "failures.availability", label: "availability", optional: true},
	{key: "failures.decode.availability", label: "decode availability", optional: true},
	{key: "failures.spares_used", label: "spare swaps", optional: true},
	{key: "failures.replica_hits", label: "replicas hit", optional: true},
	{key: "failures.degraded_replicas", label: "replicas degraded", optional: true},
	{key: "failures.min_available_replicas", label: "fewest up", optional: true},
	{key: "failures.time_down_fraction.50%", label: "time ≥50% down", optional: true},
	{key: "training.ettr", label: "ETTR", optional: true},
	{key: "training.interruptions", label: "interruptions", optional: true},
	{key: "training.lost_gpu_hours.waiting_spares", label: "GPU-h waiting spares", optional: true},
	{key: "training.lost_gpu_hours.total", label: "lost GPU-h", optional: true},
	{key: "training.lost_usd_per_month", label: "lost $ per month", optional: true},
}

// anyArmHas reports whether some arm's statistics include key.
func (r *ABResult) anyArmHas(key string) bool {
	for _, a := range r.Arms {
		if _, ok := report.StatMap(a.Stats)[key]; ok {
			return true
		}
	}
	return false
}

// Report writes the side-by-side table and the verdicts.
func (r *ABResult) Report() string {
	header, rows := r.tableRows()
	// Columns are as wide as their labels: arm names are never truncated,
	// so two arms whose names share a long prefix stay apart.
	widths := []int{-18}
	for _, a := range r.Arms {
		widths = append(widths, max(14, runeLen(a.Name)))
	}
	for _, a := range r.Arms[1:] {
		widths = append(widths, max(22, runeLen(a.Name+" − "+r.Arms[0].Name)))
	}
	return r.render(report.TextTable(header, rows, widths), "  ")
}

// Markdown is the A/B report for summary.md: Report's, with a Markdown
// table and the verdicts as lists.
func (r *ABResult) Markdown() string {
	return r.render(report.MarkdownTable(r.tableRows()), "- ")
}

// render is the A/B report around its table, each verdict line starting
// with bullet.
func (r *ABResult) render(table, bullet string) string {
	var b bytes.Buffer
	reps := len(r.Arms[0].Reps)
	fmt.Fprintf(&b, "A/B of %s: %d arms × %s, paired (common random numbers)\n\n", r.Arms[0].Reps[0].Summary.Scenario, len(r.Arms), plural(reps, "replication"))
	b.WriteString(table)
	for k, diffs := range r.Diffs {
		fmt.Fprintf(&b, "\n%s vs %s:\n", r.Arms[k+1].Name, r.Arms[0].Name)
		if bullet != "  " {
			b.WriteByte('\n')
		}
		for _, line := range Verdicts(r.Arms[0].Name, r.Arms[k+1].Name, diffs, reps) {
			fmt.Fprintf(&b, "%s%s\n", bullet, line)
		}
	}
	return b.String()
}

// tableRows are the A/B table's header and rows: each metric's mean in
// every arm, then each arm's paired difference from the first.
func (r *ABResult) tableRows() ([]string, [][]string) {
	header := []string{"metric"}
	for _, a := range r.Arms {
		header = append(header, a.Name)
	}
	for _, a := range r.Arms[1:] {
		header = append(header, a.Name+" − "+r.Arms[0].Name)
	}
	var rows [][]string
	// A training A/B has no requests: only the rows its arms report.
	serving := r.anyArmHas("requests.arrived")
	for _, row := range abTableKeys {
		if (row.optional || !serving) && !r.anyArmHas(row.key) {
			continue
		}
		cells := []string{row.label}
		for _, a := range r.Arms {
			cell := "n/a" // undefined in this arm (see Aggregate)
			if st, ok := report.StatMap(a.Stats)[row.key]; ok {
				cell = report.Human(st.Mean)
			}
			cells = append(cells, cell)
		}
		for _, diffs := range r.Diffs {
			cell := "n/a"
			for _, d := range diffs {
				if d.Key == row.key {
					cell = report.PM(d.Diff, d.DiffCI, d.N)
				}
			}
			cells = append(cells, cell)
		}
		rows = append(rows, cells)
	}
	return header, rows
}

// ABCSV is ab.csv (results.ABFile): one row per metric and compared arm.
func (r *ABResult) ABCSV() []byte {
	t := results.NewTable(results.ABFile, nil, nil)
	for k, diffs := range r.Diffs {
		for _, d := range diffs {
			rel, relCI := "", ""
			if !math.IsNaN(d.Rel) {
				rel, relCI = results.FormatFloat(results.Round6(d.Rel)), results.FormatFloat(results.Round6(d.RelCI))
			}
			diffCI := results.FormatFloat(results.Round6(d.DiffCI))
			if d.N < 2 { // one replication: no interval (not one of width 0)
				diffCI, relCI = "", ""
			}
			t.Row(d.Key, r.Arms[0].Name, r.Arms[k+1].Name,
				results.FormatFloat(results.Round6(d.A)), results.FormatFloat(results.Round6(d.B)), results.FormatFloat(results.Round6(d.Diff)), diffCI, rel, relCI)
		}
	}
	return t.Bytes()
}

// plural is "1 replication" or "n replications".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
