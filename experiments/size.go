package experiments

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
)

// SizePoint is one fleet size evaluated during the search.
type SizePoint struct {
	Replicas int
	Failures bool
	Arm      *report.ArmResult
	Met      bool
	Bounds   []float64 // per target: the one-sided confidence bound compared with the limit
}

// SizeRow is one line of the sizing answer.
type SizeRow struct {
	Label string
	Point *SizePoint
}

// SizeResult is the answer of a sizing search.
type SizeResult struct {
	Targets    []scenario.Target
	Confidence float64
	Search     []*SizePoint // every size evaluated, in order of replicas
	Rows       []SizeRow    // N (no failures), N, N+1, N+2
	N          int
	HasFailure bool // the scenario models failures (otherwise N = N without failures)
	GPUsPer    int
	PriceHour  float64
	// Spot is [spot] replicas (the last ones but those in repair, as many
	// as a size has), priced at SpotFraction; Down is run.down_replicas.
	Spot, Down   int
	SpotFraction float64
	// Autoscaled: the size is the autoscaler's cap (cluster.replicas), and
	// a size's $ per month is its runs' (provisioned replicas only).
	Autoscaled bool
}

// spotAt is how many of n replicas are on spot: [spot] replicas, at most
// the ones not in repair.
func (r *SizeResult) spotAt(n int) int { return scenario.SpotFit(r.Spot, n, r.Down) }

// maxSizeReplicas bounds the search.
const maxSizeReplicas = 1 << 14

// Size finds the fewest replicas that meet every target, where "meet" means
// the one-sided confidence bound at level conf of the metric's mean over
// replications is within the limit (an upper bound for latencies, a lower
// bound for rates). The search doubles from 1 until a size meets the
// targets, then bisects; every size runs the base scenario's replications
// with the same seeds. It assumes, as capacity does, that more replicas
// never make the SLO harder to meet.
func Size(base *scenario.Scenario, targets []scenario.Target, conf float64, opt RunOptions) (*SizeResult, error) {
	if conf <= 0 || conf >= 1 {
		return nil, fmt.Errorf("confidence must be in (0, 1), found %v", conf)
	}
	if base.Disagg.Enabled {
		// Its cost and its search have two axes; size has one (disagg.go).
		return nil, errDisaggSize
	}
	hasFailure := base.Failures.Enabled || base.Run.DownReplicas > 0
	res := &SizeResult{Targets: targets, Confidence: conf, GPUsPer: base.Cluster.GPUsPerReplica(), HasFailure: hasFailure}
	res.PriceHour = base.Price()
	res.Spot, res.Down, res.SpotFraction = max(base.Spot.Replicas, 0), base.RunDown(), base.Spot.PriceFraction
	res.Autoscaled = base.Autoscale.Enabled
	// The smallest size to try: an autoscaled fleet's cap holds its
	// min_replicas and initial_replicas beside the replicas in repair.
	floor := base.RunDown() + 1
	if base.Autoscale.Enabled {
		floor = max(floor, base.RunDown()+max(base.Autoscale.MinReplicas, base.Autoscale.InitialReplicas, 1))
	}
	with, err := search(base, targets, conf, opt, hasFailure, res.spotAt, floor, maxSizeReplicas, true)
	if err != nil {
		return nil, err
	}
	without := with
	if hasFailure {
		off, err := base.Derive(OverrideOverlay("failures.enabled", "false"), OverrideOverlay("run.down_replicas", "0"))
		if err != nil {
			return nil, err
		}
		if without, err = search(off, targets, conf, opt, false, res.spotAt, floor-base.RunDown(), maxSizeReplicas, true); err != nil {
			return nil, err
		}
	}
	res.N = with.n
	res.Search = append(res.Search, with.points()...)
	if hasFailure {
		res.Search = append(res.Search, without.points()...)
	}
	sort.SliceStable(res.Search, func(i, j int) bool {
		if res.Search[i].Failures != res.Search[j].Failures {
			return !res.Search[i].Failures
		}
		return res.Search[i].Replicas < res.Search[j].Replicas
	})
	n := with.n
	res.Rows = []SizeRow{{"N (no failures)", without.cache[without.n]}, {"N", with.cache[n]},
		{"N+1", with.cache[n+1]}, {"N+2", with.cache[n+2]}}
	return res, nil
}

// sizeSearch is one search's evaluated sizes.
type sizeSearch struct {
	n     int
	cache map[int]*SizePoint
}

func (s *sizeSearch) points() []*SizePoint {
	var out []*SizePoint
	for _, p := range s.cache {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Replicas < out[j].Replicas })
	return out
}

// search doubles then bisects to the fewest replicas meeting the targets,
// and with extras evaluates N+1 and N+2 too, trying no size below floor
// nor above ceiling. spotAt(n) is how many of n replicas are on spot
// ([spot] replicas as many as fit).
func search(base *scenario.Scenario, targets []scenario.Target, conf float64, opt RunOptions, failures bool, spotAt func(n int) int, floor, ceiling int, extras bool) (*sizeSearch, error) {
	ss := &sizeSearch{cache: map[int]*SizePoint{}}
	eval := func(n int) (*SizePoint, error) {
		if p, ok := ss.cache[n]; ok {
			return p, nil
		}
		ovs := []scenario.Overlay{OverrideOverlay("cluster.replicas", strconv.Itoa(n))}
		if base.Spot.Replicas > 0 {
			ovs = append(ovs, OverrideOverlay("spot.replicas", strconv.Itoa(spotAt(n))))
		}
		sc, err := base.Derive(ovs...)
		if err != nil {
			return nil, err
		}
		reps, err := runMany([]*scenario.Scenario{sc}, opt)
		if err != nil {
			return nil, err
		}
		p := &SizePoint{Replicas: n, Failures: failures, Arm: report.NewArmResult(sizeArm(n), reps[0])}
		p.Met, p.Bounds = meets(p.Arm, targets, conf)
		ss.cache[n] = p
		return p, nil
	}
	lo, hi := floor-1, floor
	var prev *SizePoint
	stalled := 0
	for {
		p, err := eval(hi)
		if err != nil {
			return nil, err
		}
		if p.Met {
			break
		}
		// Doubling that moves no failing target by 1% twice running means
		// replicas are not the bottleneck (failures that fail requests
		// whatever the size, say): stop and say so.
		if prev != nil && !improved(prev, p, targets) {
			stalled++
		} else {
			stalled = 0
		}
		if stalled >= 2 || hi >= ceiling {
			return nil, &noSizeError{fmt.Errorf("%s: no fleet size meets the SLO; at %d replicas %s%s", base.Name, hi, describeBounds(p, targets),
				map[bool]string{true: ", and doubling the fleet no longer helps", false: ""}[stalled >= 2]), p, len(ss.cache)}
		}
		prev = p
		lo = hi
		hi = min(hi*2, ceiling)
	}
	hi, err := bisectMet(lo, hi, func(n int) (bool, error) {
		p, err := eval(n)
		return err == nil && p.Met, err
	})
	if err != nil {
		return nil, err
	}
	ss.n = hi
	if !extras {
		return ss, nil
	}
	for _, k := range []int{1, 2} {
		if _, err := eval(hi + k); err != nil {
			return nil, err
		}
	}
	return ss, nil
}

// meets checks every target against its one-sided confidence bound.
func meets(a *report.ArmResult, targets []scenario.Target, conf float64) (bool, []float64) {
	m := report.StatMap(a.Stats)
	ok := true
	bounds := make([]float64, len(targets))
	for i, t := range targets {
		mean, half := oneSided(targetValues(a, m, t), conf)
		if t.Upper {
			bounds[i] = mean + half
			ok = ok && bounds[i] <= t.Limit
		} else {
			bounds[i] = mean - half
			ok = ok && bounds[i] >= t.Limit
		}
	}
	return ok, bounds
}

// targetValues are the per-replication values of t's metric in a (m is
// a's stats by key).
func targetValues(a *report.ArmResult, m map[string]report.Stat, t scenario.Target) []float64 {
	if t.Key != "success" {
		return m[t.Key].Values
	}
	var xs []float64
	for _, r := range a.Reps {
		xs = append(xs, report.Ratio(float64(r.Summary.Requests.Completed), float64(r.Summary.Requests.Arrived)))
	}
	return xs
}

// oneSided is the mean and the one-sided confidence margin at level conf.
func oneSided(xs []float64, conf float64) (float64, float64) {
	mean, _ := report.MeanCI(xs, 0.95)
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(len(xs)-1))
	return mean, report.TQuantile(conf, len(xs)-1) * sd / math.Sqrt(float64(len(xs)))
}

func (r *SizeResult) usdPerMonth(replicas int) float64 {
	k := r.spotAt(replicas) // at the spot fraction of the price
	return (float64((replicas-k)*r.GPUsPer) + float64(k*r.GPUsPer)*r.SpotFraction) * r.PriceHour * report.HoursPerMonth
}

// pointUSD is size p's $ per month: its GPUs at the price, or, autoscaled,
// what its runs paid (the mean of their cost.usd_per_month: provisioned
// replicas only).
func (r *SizeResult) pointUSD(p *SizePoint) float64 {
	if r.Autoscaled {
		return report.StatMap(p.Arm.Stats)["cost.usd_per_month"].Mean
	}
	return r.usdPerMonth(p.Replicas)
}

// CSV is size.csv (results.SizeFile), with one column (and its CI) per
// target after the fixed ones (targetColumn).
func (r *SizeResult) CSV() []byte {
	var after []string
	for _, tg := range r.Targets {
		after = append(after, targetColumn(tg), targetColumn(tg)+"_ci95")
	}
	t := results.NewTable(results.SizeFile, nil, after)
	for _, row := range r.Rows {
		p := row.Point
		m := report.StatMap(p.Arm.Stats)
		mfu := results.FormatFloat(results.Round6(m["fleet.mfu"].Mean))
		cells := []string{row.Label, strconv.Itoa(p.Replicas), strconv.Itoa(p.Replicas * r.GPUsPer),
			strconv.FormatBool(p.Failures), results.FormatFloat(results.Round6(r.pointUSD(p))),
			mfu, results.FormatFloat(results.Round6(r.headroom(p.Replicas))),
			results.FormatFloat(results.Round6(m["latency_ms.ttft.p99"].Mean)), m["latency_ms.ttft.p99"].CICell(),
			results.FormatFloat(results.Round6(successMean(p.Arm))), strconv.FormatBool(p.Met), sloAttainment(m), sloAttainmentCI95(m), mfu}
		for _, tg := range r.Targets {
			st := targetStat(p.Arm, m, tg)
			cells = append(cells, results.FormatFloat(results.Round6(st.Mean)), st.CICell())
		}
		t.Row(cells...)
	}
	return t.Bytes()
}

// targetColumn is size.csv's column of a --slo target: "target_", its
// name, and its unit (ttft_p999 → target_ttft_p999_ms, success →
// target_success_frac), apart from the fixed columns of the same metric.
func targetColumn(t scenario.Target) string {
	if t.Upper {
		return "target_" + t.Name + "_ms"
	}
	return "target_" + t.Name + "_frac"
}

// targetStat is the mean and 95% CI of t's metric over a's replications.
func targetStat(a *report.ArmResult, m map[string]report.Stat, t scenario.Target) report.Stat {
	xs := targetValues(a, m, t)
	if len(xs) == 0 {
		return report.Stat{Key: t.Key}
	}
	mean, half := report.MeanCI(xs, 0.95)
	return report.Stat{Key: t.Key, Mean: mean, CI95: half, Values: xs}
}

// sloAttainmentKey is the summary key of the share of requests meeting
// the [slo]: the per-candidate attainment that size.csv, size_search.csv
// and size_mix.csv report (whatever targets the search itself checked).
const sloAttainmentKey = "goodput.slo_attainment"

// sloAttainment and sloAttainmentCI95 are a candidate's mean SLO
// attainment over its replications and the 95% CI half-width, as CSV
// fields; empty when the runs did not report it.
func sloAttainment(m map[string]report.Stat) string {
	st, ok := m[sloAttainmentKey]
	if !ok {
		return ""
	}
	return results.FormatFloat(results.Round6(st.Mean))
}

func sloAttainmentCI95(m map[string]report.Stat) string {
	st, ok := m[sloAttainmentKey]
	if !ok {
		return ""
	}
	return st.CICell()
}

// SearchCSV is size_search.csv (results.SizeSearchFile): every size
// evaluated.
func (r *SizeResult) SearchCSV() []byte {
	t := results.NewTable(results.SizeSearchFile, nil, nil)
	for _, p := range r.Search {
		m := report.StatMap(p.Arm.Stats)
		t.Row(strconv.Itoa(p.Replicas), strconv.FormatBool(p.Failures),
			results.FormatFloat(results.Round6(m["latency_ms.ttft.p99"].Mean)), m["latency_ms.ttft.p99"].CICell(),
			results.FormatFloat(results.Round6(successMean(p.Arm))), strconv.FormatBool(p.Met), results.FormatFloat(results.Round6(r.pointUSD(p))),
			sloAttainment(m), sloAttainmentCI95(m))
	}
	return t.Bytes()
}

// headroom is the share of replicas beyond the minimum that meets the SLO
// without failures, in percent.
func (r *SizeResult) headroom(replicas int) float64 {
	n0 := r.Rows[0].Point.Replicas
	return 100 * float64(replicas-n0) / float64(replicas)
}

func successMean(a *report.ArmResult) float64 {
	var s float64
	for _, r := range a.Reps {
		s += report.Ratio(float64(r.Summary.Requests.Completed), float64(r.Summary.Requests.Arrived))
	}
	return s / float64(len(a.Reps))
}

// Table is the sizing answer for a terminal.
func (r *SizeResult) Table(name string) string {
	header, rows := r.tableRows()
	widths := []int{-16, 8, 6, 14, 8, 9}
	for _, h := range header[len(widths) : len(header)-1] {
		widths = append(widths, max(18, runeLen(h)))
	}
	return r.render(name, report.TextTable(header, rows, append(widths, 5)))
}

// Markdown is the sizing answer for summary.md: Table's, with a Markdown
// table.
func (r *SizeResult) Markdown(name string) string {
	return r.render(name, report.MarkdownTable(r.tableRows()))
}

// render is the sizing answer around its table.
func (r *SizeResult) render(name, table string) string {
	var b bytes.Buffer
	terms := make([]string, len(r.Targets))
	for i, t := range r.Targets {
		op, v := "≥", fmt.Sprintf("%g%%", 100*t.Limit)
		if t.Upper {
			op, v = "≤", fmt.Sprintf("%g ms", t.Limit)
		}
		terms[i] = t.Name + " " + op + " " + v
	}
	reps := len(r.Rows[0].Point.Arm.Reps)
	switch {
	case reps < 2:
		fmt.Fprintf(&b, "sizing %s for %s\n(1 replication per size: no confidence bound; a size meets the SLO when its one run does — use --replications 5 or more for a bound)\n\n",
			name, strings.Join(terms, ", "))
	case r.identicalReplications():
		fmt.Fprintf(&b, "sizing %s for %s\n(%d replications per size, all identical: nothing in this scenario varies with the seed, e.g. a trace replay without failures, so there is no confidence bound; the sizes rest on one run)\n\n",
			name, strings.Join(terms, ", "), reps)
	default:
		fmt.Fprintf(&b, "sizing %s for %s\n(%d replications per size; a size meets the SLO when the one-sided %.0f%% confidence bound does)\n\n",
			name, strings.Join(terms, ", "), reps, 100*r.Confidence)
	}
	b.WriteString(table)
	b.WriteString("\n" + HeadroomNote + "\n")
	if r.Autoscaled {
		b.WriteString("\nAutoscaled: replicas is the autoscaler's cap (cluster.replicas), and $ / month what the runs paid\n(provisioned replicas only), not the cap's full price.\n")
	}
	if !r.HasFailure {
		extra := "N+1 and N+2 show the cost of spares"
		if r.Autoscaled {
			extra = "N+1 and N+2 show larger caps"
		}
		fmt.Fprintf(&b, "\nThe scenario models no stochastic failures ([failures] enabled = false), so N equals N without\nfailures; %s.\n", extra)
	}
	for _, fail := range []bool{false, true} {
		if fail && !r.HasFailure {
			break
		}
		label := "searched sizes:"
		if r.HasFailure {
			label = map[bool]string{false: "searched without failures:", true: "\nsearched with failures:   "}[fail]
		}
		b.WriteString(label)
		for _, p := range r.Search {
			if p.Failures != fail {
				continue
			}
			mark := "✗"
			if p.Met {
				mark = "✓"
			}
			fmt.Fprintf(&b, " %d%s", p.Replicas, mark)
		}
	}
	b.WriteByte('\n')
	return b.String()
}

// HeadroomNote defines the size table's headroom and MFU.
const HeadroomNote = "headroom: the share of a size that is spare, (replicas − N without failures) / replicas; MFU: model FLOPs / (GPUs × dense peak × time)."

// tableRows are the size table's header and rows: the size, its GPUs,
// cost, MFU and headroom, then one column per --slo target (its mean ± CI
// over replications: the metric targeted, ttft_p999 for --slo
// ttft_p999=…), then whether it meets them.
func (r *SizeResult) tableRows() ([]string, [][]string) {
	header := []string{"", "replicas", "GPUs", "$ / month", "MFU", "headroom"}
	for _, tg := range r.Targets {
		if tg.Upper {
			header = append(header, tg.Name+" ms")
		} else {
			header = append(header, tg.Name)
		}
	}
	header = append(header, "meets")
	var rows [][]string
	for _, row := range r.Rows {
		p := row.Point
		m := report.StatMap(p.Arm.Stats)
		cells := []string{row.Label, strconv.Itoa(p.Replicas), strconv.Itoa(p.Replicas * r.GPUsPer),
			"$" + report.Human(r.pointUSD(p)), fmt.Sprintf("%.1f%%", 100*m["fleet.mfu"].Mean), fmt.Sprintf("%.1f%%", r.headroom(p.Replicas))}
		for _, tg := range r.Targets {
			st := targetStat(p.Arm, m, tg)
			if tg.Upper {
				cells = append(cells, st.PM())
			} else {
				cells = append(cells, report.PM(100*st.Mean, 100*st.CI95, len(st.Values))+"%")
			}
		}
		rows = append(rows, append(cells, strconv.FormatBool(p.Met)))
	}
	return header, rows
}

// improved reports whether some target that q misses moved by more than 1%
// from p to q, towards its limit.
func improved(p, q *SizePoint, targets []scenario.Target) bool {
	return boundsImproved(p.Bounds, q.Bounds, targets)
}

// boundsImproved reports whether bounds q improve on p by 1% in some
// target that q still misses.
func boundsImproved(p, q []float64, targets []scenario.Target) bool {
	for i, t := range targets {
		a, b := p[i], q[i]
		missed := (t.Upper && b > t.Limit) || (!t.Upper && b < t.Limit)
		if !missed {
			continue
		}
		if t.Upper && b < a*0.99 || !t.Upper && b > a+0.01*math.Abs(a) {
			return true
		}
	}
	return false
}

// describeBounds says where a size stands against each target.
func describeBounds(p *SizePoint, targets []scenario.Target) string {
	parts := make([]string, len(targets))
	for i, t := range targets {
		if t.Upper {
			parts[i] = fmt.Sprintf("%s bound %.0f ms (limit %g)", t.Name, p.Bounds[i], t.Limit)
		} else {
			parts[i] = fmt.Sprintf("%s bound %.3f%% (limit %g%%)", t.Name, 100*p.Bounds[i], 100*t.Limit)
		}
	}
	return strings.Join(parts, ", ")
}

// identicalReplications reports whether every size searched gave the same
// results in every replication: the seed changed nothing, so a confidence
// bound would only pretend.
func (r *SizeResult) identicalReplications() bool {
	for _, p := range r.Search {
		if !report.IdenticalReplications(p.Arm.Stats) {
			return false
		}
	}
	return true
}

// sizeArm names a sizing's run at n replicas in its output files as a
// sweep names its points ("cluster.replicas=8"), so that cdf.csv and the
// other files say what the number is, and plots label it "replicas = 8"
// without knowing the directory came from size.
func sizeArm(n int) string { return "cluster.replicas=" + strconv.Itoa(n) }

// bisectMet narrows (lo, hi] to the fewest n that met accepts, given that
// lo fails and hi passes (more replicas never make an SLO harder to meet).
func bisectMet(lo, hi int, met func(n int) (bool, error)) (int, error) {
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := met(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}
