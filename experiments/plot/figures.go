package plot

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// metricInfo names a latency metric in titles and axis labels, says which
// SLO line goes with it and what its values count (a request each, or a
// token each for ITL).
var metricInfo = map[string]struct {
	file, title, axis, slo, of string
}{
	"ttft": {"ttft_cdf", "Time to first token, CDF", "time to first token (ms, log scale)", "TTFT", "requests"},
	"tpot": {"tpot_cdf", "Time per output token, CDF", "time per output token (ms, log scale)", "TPOT", "requests"},
	"itl":  {"itl_cdf", "Inter-token latency, CDF", "gap between consecutive output tokens (ms, log scale)", "", "tokens"},
	"e2e":  {"e2e_cdf", "End-to-end latency, CDF", "end-to-end latency (ms, log scale)", "", "requests"},
}

// CDF draws the latency distribution of metric ("ttft", "tpot", "itl" or "e2e")
// from pts: the fraction of requests (y, 0 to 1) at or below a latency (x,
// ms, log scale), one line per arm in order of first appearance, and a
// vertical dashed line at the TTFT or TPOT SLO of m when it is set. The
// figure is named ttft_cdf, tpot_cdf, itl_cdf or e2e_cdf (ITL's fractions
// are of tokens, not requests). Rows of other metrics are
// ignored; none of metric is an error. Its linear y axis hides the tail:
// CCDF draws that.
func CDF(m Meta, metric string, pts []CDFPoint) (Figure, error) {
	return latencyDist(m, metric, pts, false)
}

// CCDF draws the tail of the latency distribution of metric: the fraction
// of requests (y, log scale, from 1 down to 1e-4 or the smallest recorded
// tail fraction) above a latency (x, ms, log scale), 1 − F, one line per
// arm, with the SLO line of CDF. A p99.9 that one arm cuts is a visible
// gap at y = 0.001 here, where the CDF shows nothing. Quantiles of 1 (no
// tail left) are left out. The figure is named ttft_ccdf, tpot_ccdf,
// itl_ccdf or e2e_ccdf.
func CCDF(m Meta, metric string, pts []CDFPoint) (Figure, error) {
	return latencyDist(m, metric, pts, true)
}

// ccdfFloor is the lowest tail fraction the CCDF's y axis shows at least.
const ccdfFloor = 1e-4

func latencyDist(m Meta, metric string, pts []CDFPoint, tail bool) (Figure, error) {
	info, ok := metricInfo[metric]
	if !ok {
		return Figure{}, fmt.Errorf("plot: unknown latency metric %q (want ttft, tpot, itl or e2e)", metric)
	}
	var sel []CDFPoint
	logX := true
	for _, p := range pts {
		if p.Metric == metric && (!tail || p.Quantile < 1) {
			sel = append(sel, p)
			logX = logX && p.ValueMs > 0
		}
	}
	if len(sel) == 0 {
		return Figure{}, fmt.Errorf("plot: no %s quantiles to draw", metric)
	}
	xlabel := info.axis
	if !logX {
		xlabel = strings.Replace(xlabel, ", log scale", "", 1)
	}
	title, ylabel, file := info.title, "fraction of "+info.of+" ≤ latency", info.file
	if tail {
		title = strings.TrimSuffix(title, "CDF") + "tail (1 − CDF)"
		ylabel = "fraction of " + info.of + " > latency (log scale)"
		file = strings.TrimSuffix(file, "_cdf") + "_ccdf"
	}
	p := newPlot(m, title, xlabel, ylabel)
	sx := scale(logX)
	if logX {
		p.X.Tick.Marker = logTicks{}
	}
	y := func(q float64) float64 { return q }
	ymin, ymax := 0.0, 1.0
	if tail {
		p.Y.Tick.Marker = logTicks{}
		y = func(q float64) float64 { return math.Log10(1 - q) }
		ymin, ymax = math.Log10(ccdfFloor), 0
	}
	arms, byArm := groupBy(sel, func(p CDFPoint) string { return p.Arm })
	for i, arm := range arms {
		g := byArm[arm]
		sort.SliceStable(g, func(a, b int) bool { return g[a].Quantile < g[b].Quantile })
		xys := make(plotter.XYs, len(g))
		for j, q := range g {
			xys[j] = plotter.XY{X: sx.f(q.ValueMs), Y: y(q.Quantile)}
			if tail {
				ymin = math.Min(ymin, math.Floor(xys[j].Y+1e-9)) // 1 − 0.9999 is a hair under 1e-4
			}
		}
		c, d := lineStyle(i)
		l := line(xys, c, d, 1.5)
		p.Add(l)
		p.Legend.Add(armLabel(m, arm), l)
	}
	slo := 0.0
	switch info.slo {
	case "TTFT":
		slo = m.TTFTSLOMs
	case "TPOT":
		slo = m.TPOTSLOMs
	}
	if slo > 0 {
		l := line(plotter.XYs{{X: sx.f(slo), Y: ymin}, {X: sx.f(slo), Y: ymax}}, sloColour, dashed, 1.2)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s SLO %s ms", info.slo, fmtTick(slo)), l)
	}
	p.Y.Min, p.Y.Max = ymin, ymax
	return Figure{Name: file, Plot: p}, nil
}

// KVUtilisation draws, for replication 0 (or the lowest present) of each
// arm, the fraction of KV-cache blocks held by running sequences (solid)
// and held only by the prefix cache (dashed) against simulated time in s.
// The y axis runs from 0 to 10% above the highest fraction drawn (at most
// 1 when no fraction exceeds it), so that a cache that is never more than
// a few per cent full is not a flat line at 0.
// Points whose fraction is NaN (column not recorded) are left out; no
// points at all is an error. With three arms or more each gets only its
// KV-used line. The figure is named kv_utilisation.
func KVUtilisation(m Meta, pts []TimePoint) (Figure, error) {
	p := newPlot(m, "KV-cache utilisation", "simulated time (s)", "fraction of KV-cache blocks")
	n := timeLines(p, m, pts, []timeSeries{
		{"KV used", nil, func(t TimePoint) float64 { return t.KVUsedFrac }},
		{"KV cached only", dashed, func(t TimePoint) float64 { return t.KVCachedFrac }},
	})
	if n == 0 {
		return Figure{}, fmt.Errorf("plot: no KV utilisation in the time series")
	}
	p.Y.Min, p.Y.Max = 0, headroom(p.Y.Max, 1)
	return Figure{Name: "kv_utilisation", Plot: p}, nil
}

// Load draws, for replication 0 (or the lowest present) of each arm, the
// requests in flight (admitted, not finished; solid) and waiting (queued,
// not admitted; dashed) against simulated time in s; with three arms or
// more, only in flight. The figure is named load_timeseries.
func Load(m Meta, pts []TimePoint) (Figure, error) {
	p := newPlot(m, "Requests in the system", "simulated time (s)", "requests")
	n := timeLines(p, m, pts, []timeSeries{
		{"in flight", nil, func(t TimePoint) float64 { return t.InFlight }},
		{"waiting", dashed, func(t TimePoint) float64 { return t.Waiting }},
	})
	if n == 0 {
		return Figure{}, fmt.Errorf("plot: no in-flight or waiting counts in the time series")
	}
	p.Y.Min = 0
	return Figure{Name: "load_timeseries", Plot: p}, nil
}

// headroom is the top of a y axis from 0 whose highest value is hi: 10%
// above it, but no more than limit when hi ≤ limit (a fraction's axis
// stops at 1), and limit when there is nothing above 0 to show.
func headroom(hi, limit float64) float64 {
	if !(hi > 0) || math.IsInf(hi, 0) {
		return limit
	}
	top := hi * 1.1
	if hi <= limit {
		top = math.Min(top, limit)
	}
	return top
}

// Arrivals draws, for replication 0 (or the lowest present) of each arm,
// the arrival rate (solid) and the completion rate (dashed), in requests
// per simulated second since the previous sample, against simulated time
// in s; with three arms or more, only arrivals. The figure is named
// arrivals_timeseries.
func Arrivals(m Meta, pts []TimePoint) (Figure, error) {
	p := newPlot(m, "Arrivals and completions", "simulated time (s)", "requests per second (req/s)")
	n := timeLines(p, m, pts, []timeSeries{
		{"arrivals", nil, func(t TimePoint) float64 { return t.ArrivalsPerS }},
		{"completions", dashed, func(t TimePoint) float64 { return t.CompletionsPerS }},
	})
	if n == 0 {
		return Figure{}, fmt.Errorf("plot: no arrival or completion rates in the time series")
	}
	p.Y.Min, p.Y.Max = 0, headroom(p.Y.Max, 1)
	return Figure{Name: "arrivals_timeseries", Plot: p}, nil
}

// Availability draws, for replication 0 (or the lowest present) of each
// arm, the replicas in service and (dashed) the replicas paid for against
// simulated time in s, on an integer y axis from 0: under autoscaling the
// gap between them is replicas loading or draining. The figure is named
// availability_timeseries.
func Availability(m Meta, pts []TimePoint) (Figure, error) {
	p := newPlot(m, "Replicas in service (replication 0)", "simulated time (s)", "replicas")
	n := timeLines(p, m, pts, []timeSeries{
		{"in service", nil, func(t TimePoint) float64 { return t.AvailableReplicas }},
		{"provisioned (paid)", dashed, func(t TimePoint) float64 { return t.ProvisionedReplicas }},
	})
	if n == 0 {
		return Figure{}, fmt.Errorf("plot: no available replicas in the time series")
	}
	p.Y.Tick.Marker = integerTicks{}
	p.Y.Min, p.Y.Max = 0, math.Max(1, math.Ceil(headroom(p.Y.Max, 1)))
	return Figure{Name: "availability_timeseries", Plot: p}, nil
}

// maxTimeArms is the most arms whose time series are drawn with every
// series; beyond it (an A/B of three arms, a sweep's many points) each arm
// gets one line, its first series (KV used, in flight, arrivals): two
// dashed and solid pairs are read apart, three or more tangle.
const maxTimeArms = 2

type timeSeries struct {
	name   string
	dashes []vg.Length
	value  func(TimePoint) float64
}

// timeLines adds one line per (arm, series) and returns how many it added.
func timeLines(p *gplot.Plot, m Meta, pts []TimePoint, series []timeSeries) int {
	// Indices, not copies: a time series can have a million points.
	idx := make([]int, len(pts))
	for i := range idx {
		idx[i] = i
	}
	arms, byArm := groupBy(idx, func(i int) string { return pts[i].Arm })
	if len(arms) > maxTimeArms {
		// Many arms (a sweep's points): one line each, the first series.
		series = series[:1]
	}
	n := 0
	for i, arm := range arms {
		sel := firstReplicationOf(pts, byArm[arm])
		for _, s := range series {
			xys := make(plotter.XYs, 0, len(sel))
			for _, k := range sel {
				if v := s.value(pts[k]); !math.IsNaN(v) {
					xys = append(xys, plotter.XY{X: pts[k].TimeS, Y: v})
				}
			}
			if len(xys) == 0 {
				continue
			}
			xys = thin(xys, maxLinePoints)
			c, d := lineStyle(i)
			if s.dashes != nil {
				d = s.dashes
			}
			l := line(xys, c, d, 1.2)
			p.Add(l)
			label := s.name
			if len(arms) > 1 || arm != "" {
				label = armLabel(m, arm) + ": " + s.name
			}
			p.Legend.Add(label, l)
			n++
		}
	}
	return n
}

// SweepTTFT draws p99 TTFT in ms against the first swept parameter, with
// 95% confidence-interval bars, one line per value of the other parameters,
// and a horizontal dashed line at the TTFT SLO of m when it is set. The
// figure is named sweep_ttft_p99.
func SweepTTFT(m Meta, s Sweep) (Figure, error) {
	p := newPlot(m, "p99 TTFT across the sweep", "", "p99 time to first token (ms)")
	vals := []float64{}
	if m.TTFTSLOMs > 0 {
		vals = append(vals, m.TTFTSLOMs)
	}
	for _, r := range s.Rows {
		vals = append(vals, r.TTFTP99Ms)
	}
	sy := scale(wideRange(vals, 20))
	if sy {
		setLogY(p)
	}
	n, err := sweepLines(p, s, sy, []sweepSeries{
		{"p99 TTFT", nil, true, func(r SweepRow) (float64, float64) { return r.TTFTP99Ms, r.TTFTP99MsCI95 }},
	})
	if err != nil {
		return Figure{}, err
	}
	if n == 0 {
		return Figure{}, fmt.Errorf("plot: no p99 TTFT in the sweep")
	}
	if m.TTFTSLOMs > 0 {
		l := line(plotter.XYs{{X: p.X.Min, Y: sy.f(m.TTFTSLOMs)}, {X: p.X.Max, Y: sy.f(m.TTFTSLOMs)}}, sloColour, dashed, 1.2)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("TTFT SLO %s ms", fmtTick(m.TTFTSLOMs)), l)
	}
	if !sy {
		p.Y.Min = 0
	}
	return Figure{Name: "sweep_ttft_p99", Plot: p}, nil
}

// SweepGoodput draws goodput (requests meeting the SLO per second, solid,
// with 95% confidence-interval bars) and throughput (all completed
// requests per second, dashed) against the first swept parameter, one
// colour per value of the other parameters. The figure is named
// sweep_goodput.
func SweepGoodput(m Meta, s Sweep) (Figure, error) {
	p := newPlot(m, "Goodput and throughput across the sweep", "", "requests per second (req/s)")
	n, err := sweepLines(p, s, linear, []sweepSeries{
		{"goodput", nil, true, func(r SweepRow) (float64, float64) { return r.GoodputRPS, r.GoodputRPSCI95 }},
		{"throughput", dashed, false, func(r SweepRow) (float64, float64) { return r.ThroughputRPS, 0 }},
	})
	if err != nil {
		return Figure{}, err
	}
	if n == 0 {
		return Figure{}, fmt.Errorf("plot: no goodput or throughput in the sweep")
	}
	p.Y.Min = 0
	return Figure{Name: "sweep_goodput", Plot: p}, nil
}

type sweepSeries struct {
	name    string
	dashes  []vg.Length
	markers bool
	value   func(SweepRow) (v, ci95 float64)
}

// sweepLines draws series over the sweep's rows with gridLines.
func sweepLines(p *gplot.Plot, s Sweep, sy scale, series []sweepSeries) (int, error) {
	values := make([][]string, len(s.Rows))
	for i, r := range s.Rows {
		values[i] = r.Values
	}
	gs := make([]gridSeries, len(series))
	for k, se := range series {
		gs[k] = gridSeries{se.name, se.dashes, se.markers, func(i int) (float64, float64) { return se.value(s.Rows[i]) }}
	}
	return gridLines(p, s.Params, values, sy, gs)
}

// gridSeries is one quantity drawn over a grid's rows, by row index.
type gridSeries struct {
	name    string
	dashes  []vg.Length
	markers bool
	value   func(row int) (v, ci95 float64)
}

// gridLines sets the x axis from the first parameter (numeric when every
// value is a number, else one nominal tick per value) and adds one line per
// (series, value of the other parameters). values holds each row's
// parameter values, one per params. It returns how many lines. sy maps the
// values to the y axis.
func gridLines(p *gplot.Plot, params []string, values [][]string, sy scale, series []gridSeries) (int, error) {
	if len(params) == 0 {
		return 0, fmt.Errorf("plot: the sweep has no parameters")
	}
	for i, v := range values {
		if len(v) != len(params) {
			return 0, fmt.Errorf("plot: sweep row %d has %d parameter values for %d parameters", i, len(v), len(params))
		}
	}
	p.X.Label.Text = paramLabel(params[0])
	xs := make([]float64, len(values))
	numeric := true
	for i, v := range values {
		x, err := strconv.ParseFloat(v[0], 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			numeric = false
			break
		}
		xs[i] = x
	}
	if !numeric {
		names, _ := groupBy(values, func(v []string) string { return v[0] })
		pos := map[string]float64{}
		for i, n := range names {
			pos[n] = float64(i)
		}
		for i, v := range values {
			xs[i] = pos[v[0]]
		}
		p.NominalX(names...)
	} else if integers(xs) {
		p.X.Tick.Marker = integerTicks{}
	}
	type pt struct {
		x float64
		i int
	}
	all := make([]pt, len(values))
	for i := range values {
		all[i] = pt{xs[i], i}
	}
	keys, groups := groupBy(all, func(q pt) string {
		var parts []string
		for k, v := range values[q.i][1:] {
			parts = append(parts, params[k+1]+" = "+v)
		}
		return strings.Join(parts, ", ")
	})
	// Groups are dodged sideways by 0.8% of the x range each, so that their
	// error bars do not hide one another.
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
	}
	dodge := 0.008 * math.Max(xmax-xmin, 1)
	n := 0
	for _, se := range series {
		for gi, key := range keys {
			g := groups[key]
			off := (float64(gi) - float64(len(keys)-1)/2) * dodge
			sort.SliceStable(g, func(a, b int) bool { return g[a].x < g[b].x })
			var xys plotter.XYs
			var eb errBars
			for _, q := range g {
				v, ci := se.value(q.i)
				if math.IsNaN(v) {
					continue
				}
				xys = append(xys, plotter.XY{X: q.x + off, Y: sy.f(v)})
				eb.add(sy, q.x+off, v, ci)
			}
			if len(xys) == 0 {
				continue
			}
			c, _ := lineStyle(gi)
			l := line(xys, c, se.dashes, 1.5)
			p.Add(l)
			thumbs := []gplot.Thumbnailer{l}
			if se.markers {
				sc := scatter(xys, c, draw.CircleGlyph{}, 2.5)
				p.Add(sc)
				thumbs = append(thumbs, sc)
			}
			eb.draw(p, c)
			label := se.name
			if key != "" {
				label += ", " + key
			}
			if len(eb.xys) > 0 {
				label += " (95% CI)"
			}
			p.Legend.Add(label, thumbs...)
			n++
		}
	}
	return n, nil
}

// integers reports whether every x is a whole number (replica or spare
// counts), whose axis then has no fractional ticks.
func integers(xs []float64) bool {
	for _, x := range xs {
		if x != math.Trunc(x) {
			return false
		}
	}
	return true
}

// SizeCost draws $ per month against replicas: the sizes the search
// evaluated (filled circles where they met the SLO, crosses where they did
// not) and a dotted vertical line, labelled, at each size the sizing
// reports (N without failures, N, N+1, N+2). Either slice may be empty, not
// both; without search points the reported sizes are the points. The
// figure is named size_cost.
func SizeCost(m Meta, rows []SizeRow, search []SearchPoint) (Figure, error) {
	p := newPlot(m, "Fleet cost by size", "serving replicas", "fleet cost (USD per month)")
	n := sizePlot(p, rows, search, false, 0,
		func(r SizeRow) (float64, float64) { return r.USDPerMonth, 0 },
		func(s SearchPoint) (float64, float64) { return s.USDPerMonth, 0 })
	if n == 0 {
		return Figure{}, fmt.Errorf("plot: no costs in the sizing results")
	}
	return Figure{Name: "size_cost", Plot: p}, nil
}

// SizeTTFT draws p99 TTFT in ms against replicas, with 95%
// confidence-interval bars, marked like SizeCost, and a horizontal dashed
// line at the TTFT SLO of m when it is set. The y axis is logarithmic when
// the values span 20x or more. The figure is named size_ttft.
func SizeTTFT(m Meta, rows []SizeRow, search []SearchPoint) (Figure, error) {
	p := newPlot(m, "p99 TTFT by fleet size", "serving replicas", "p99 time to first token (ms)")
	n := sizePlot(p, rows, search, true, m.TTFTSLOMs,
		func(r SizeRow) (float64, float64) { return r.TTFTP99Ms, r.TTFTP99MsCI95 },
		func(s SearchPoint) (float64, float64) { return s.TTFTP99Ms, s.TTFTP99MsCI95 })
	if n == 0 {
		return Figure{}, fmt.Errorf("plot: no p99 TTFT in the sizing results")
	}
	return Figure{Name: "size_ttft", Plot: p}, nil
}

// sizePlot adds the search points (or, without any, the sizing rows' own
// values), the labelled sizing rows and, when slo > 0, a TTFT SLO line. It
// returns how many points it drew.
// sizeSearchOffset is how far (in replicas) the markers of the search
// with failures and of the one without sit right and left of their size.
const sizeSearchOffset = 0.12

// searchX is where a size the search evaluated is drawn: at its replicas,
// or, when both searches ran (both), a little left of them without
// failures and right with.
func searchX(replicas int, failures, both bool) float64 {
	x := float64(replicas)
	switch {
	case !both:
		return x
	case failures:
		return x + sizeSearchOffset
	}
	return x - sizeSearchOffset
}

func sizePlot(p *gplot.Plot, rows []SizeRow, search []SearchPoint, allowLog bool, slo float64,
	rowVal func(SizeRow) (float64, float64), searchVal func(SearchPoint) (float64, float64)) int {
	p.X.Tick.Marker = integerTicks{}
	type point struct {
		x             int
		v, ci         float64
		met, failures bool
	}
	var pts []point
	for _, s := range search {
		if v, ci := searchVal(s); !math.IsNaN(v) {
			pts = append(pts, point{s.Replicas, v, ci, s.MetSLO, s.Failures})
		}
	}
	if len(pts) == 0 {
		for _, r := range rows {
			if v, ci := rowVal(r); !math.IsNaN(v) {
				pts = append(pts, point{r.Replicas, v, ci, r.MetSLO, r.Failures})
			}
		}
	}
	if len(pts) == 0 {
		return 0
	}
	sort.SliceStable(pts, func(a, b int) bool { return pts[a].x < pts[b].x })
	vals := []float64{slo}
	if slo <= 0 {
		vals = nil
	}
	for _, q := range pts {
		vals = append(vals, q.v)
	}
	sy := scale(allowLog && wideRange(vals, 20))
	if sy {
		setLogY(p)
	}
	var met, missed, all plotter.XYs
	var withF, withoutF plotter.XYs // the search path with and without failures
	var eb errBars
	lo, hi := math.Inf(1), math.Inf(-1)
	// Both searches try the same sizes: their markers sit a little apart
	// (without failures left, with them right), not on top of each other.
	both := slices.ContainsFunc(pts, func(q point) bool { return q.failures }) &&
		slices.ContainsFunc(pts, func(q point) bool { return !q.failures })
	for _, q := range pts {
		xy := plotter.XY{X: float64(q.x), Y: sy.f(q.v)}
		xy.X = searchX(q.x, q.failures, both)
		all = append(all, xy)
		if q.failures {
			withF = append(withF, xy)
		} else {
			withoutF = append(withoutF, xy)
		}
		if q.met {
			met = append(met, xy)
		} else {
			missed = append(missed, xy)
		}
		eb.add(sy, xy.X, q.v, q.ci)
		lo, hi = math.Min(lo, xy.Y), math.Max(hi, xy.Y)
	}
	for i, xy := range eb.xys {
		lo, hi = math.Min(lo, xy.Y-eb.lo[i]), math.Max(hi, xy.Y+eb.hi[i])
	}
	if slo > 0 {
		lo, hi = math.Min(lo, sy.f(slo)), math.Max(hi, sy.f(slo))
	}
	if !sy {
		lo = math.Min(lo, 0)
	}
	if hi <= lo {
		hi = lo + 1
	}
	// The axis runs from lo to 40% of the range above the data: the labels
	// of the sizing rows go there.
	top := lo + (hi-lo)*1.4
	p.Y.Min, p.Y.Max = lo, top
	// One thin grey line joins the sizes the search evaluated; when it ran
	// both with and without failures, the second is blue and dashed, and
	// both are labelled.
	// Lines go under the markers; the legend lists the markers first.
	var paths []*plotter.Line
	var pathNames []string
	for _, g := range []struct {
		xys    plotter.XYs
		dashes []vg.Length
		name   string
		colour color.Color
	}{{withF, nil, "search with failures", markColour}, {withoutF, dashed, "search without failures", palette[5]}} {
		if len(g.xys) == 0 {
			continue
		}
		if len(withF) == 0 {
			g.colour, g.dashes = markColour, nil
		}
		l := line(g.xys, g.colour, g.dashes, 0.8)
		p.Add(l)
		paths, pathNames = append(paths, l), append(pathNames, g.name)
	}
	eb.draw(p, markColour)
	if len(met) > 0 {
		sc := scatter(met, palette[2], draw.CircleGlyph{}, 3.5)
		p.Add(sc)
		p.Legend.Add("met the SLO", sc)
	}
	if len(missed) > 0 {
		sc := scatter(missed, palette[1], draw.CrossGlyph{}, 4)
		p.Add(sc)
		p.Legend.Add("missed the SLO", sc)
	}
	if len(paths) == 2 {
		for i, l := range paths {
			p.Legend.Add(pathNames[i], l)
		}
	}
	// The sizing rows, one line per replica count: "N (no failures) / N"
	// when they coincide. Labels run up the right of each line and end at
	// its top.
	var xs []int
	labels := map[int][]string{}
	for _, r := range rows {
		if _, ok := labels[r.Replicas]; !ok {
			xs = append(xs, r.Replicas)
		}
		labels[r.Replicas] = append(labels[r.Replicas], r.Row)
	}
	sort.Ints(xs)
	var lxys plotter.XYs
	var ltext []string
	for i, x := range xs {
		l := line(plotter.XYs{{X: float64(x), Y: lo}, {X: float64(x), Y: top}}, markColour, dotted, 1)
		p.Add(l)
		if i == 0 {
			p.Legend.Add("reported sizes", l)
		}
		lxys = append(lxys, plotter.XY{X: float64(x), Y: top})
		ltext = append(ltext, strings.Join(labels[x], " / "))
	}
	if len(xs) > 0 {
		if lb, err := plotter.NewLabels(plotter.XYLabels{XYs: lxys, Labels: ltext}); err == nil {
			for i := range lb.TextStyle {
				lb.TextStyle[i].Rotation = math.Pi / 2
				lb.TextStyle[i].XAlign = draw.XRight
				lb.TextStyle[i].YAlign = draw.YTop
			}
			lb.Offset = vg.Point{X: vg.Points(2), Y: -vg.Points(2)}
			p.Add(lb)
		}
	}
	xmin, xmax := all[0].X, all[len(all)-1].X
	if len(xs) > 0 {
		xmin, xmax = math.Min(xmin, float64(xs[0])), math.Max(xmax, float64(xs[len(xs)-1]))
	}
	p.X.Min, p.X.Max = xmin-0.5, xmax+0.5
	if slo > 0 {
		l := line(plotter.XYs{{X: p.X.Min, Y: sy.f(slo)}, {X: p.X.Max, Y: sy.f(slo)}}, sloColour, dashed, 1.2)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("TTFT SLO %s ms", fmtTick(slo)), l)
	}
	return len(all)
}

// FailuresTimeline draws, for each arm in events (failures.csv holds
// replication 0 of every arm with failures), the available capacity
// fraction as a step line against time in hours, starting from 1 at time
// 0 and holding the last value to m.HorizonS when that is later than the
// arm's last event, labelled with the arm when there are several (or one
// named); with a cross at each failure (a ring around it when its repair
// escalated past the first stage), a triangle at each repair, a circle at
// each warm spare swapped in and a square where a swapped spare starts
// serving (after the swap delay), a plus at each spot interruption notice
// and a pyramid where a spot replacement serves, on its arm's line. The
// title says it is replication 0. The figure is named failures_timeline.
func FailuresTimeline(m Meta, events []FailureEvent) (Figure, error) {
	if len(events) == 0 {
		return Figure{}, fmt.Errorf("plot: no failure events to draw")
	}
	p := newPlot(m, "Failures and repairs (replication 0)", "simulated time (h)", "available capacity (fraction of GPUs)")
	var fails, repairs, swaps, ins, escalated, notices, readies plotter.XYs
	arms, byArm := groupBy(events, func(e FailureEvent) string { return e.Arm })
	// Arms whose timelines are the same (common random numbers often give
	// two arms the same failures) are drawn once, labelled with every arm,
	// so one line does not hide another and no mark is counted twice.
	var drawn []string
	same := map[string][]string{}
	for _, arm := range arms {
		key := timelineKey(byArm[arm])
		if _, ok := same[key]; !ok {
			drawn = append(drawn, arm)
		}
		same[key] = append(same[key], arm)
	}
	for i, arm := range drawn {
		evs := byArm[arm]
		steps := plotter.XYs{{X: 0, Y: 1}}
		for _, e := range evs {
			xy := plotter.XY{X: e.TimeS / 3600, Y: e.CapacityFrac}
			steps = append(steps, xy)
			switch e.Event {
			case "fail":
				fails = append(fails, xy)
				if e.Escalated() {
					escalated = append(escalated, xy)
				}
			case "spare-in":
				ins = append(ins, xy)
			case "repair":
				repairs = append(repairs, xy)
			case "spare":
				swaps = append(swaps, xy)
			case "spot-notice":
				notices = append(notices, xy)
			case "spot-ready":
				readies = append(readies, xy)
			}
		}
		last := evs[len(evs)-1]
		end := math.Max(m.HorizonS, last.TimeS) / 3600
		steps = append(steps, plotter.XY{X: end, Y: last.CapacityFrac})
		c, d := palette[0], []vg.Length(nil)
		if len(drawn) > 1 {
			c, d = lineStyle(i)
		}
		l := line(steps, c, d, 1.5)
		l.StepStyle = plotter.PostStep
		p.Add(l)
		label := "available capacity"
		if len(arms) > 1 || arm != "" {
			names := slices.Clone(same[timelineKey(evs)])
			for k, a := range names {
				names[k] = armLabel(m, a)
			}
			label = strings.Join(names, ", ") + ": " + label
			if len(names) > 1 {
				label += " (the same)"
			}
		}
		p.Legend.Add(label, l)
	}
	addMarks(p, fails, palette[1], draw.CrossGlyph{}, 3, "failure", 0)
	addMarks(p, escalated, palette[1], draw.RingGlyph{}, 5, "repair escalated", 0)
	addMarks(p, repairs, palette[2], draw.TriangleGlyph{}, 3, "repair", 0)
	addMarks(p, swaps, palette[3], draw.CircleGlyph{}, 3, "spare swapped in", 0)
	addMarks(p, ins, palette[3], draw.SquareGlyph{}, 3, "spare serving after the swap", 0)
	addMarks(p, notices, palette[4], draw.PlusGlyph{}, 3, "spot interruption notice", 0)
	addMarks(p, readies, palette[4], draw.PyramidGlyph{}, 3, "spot replacement serving", 0)
	p.Y.Min = math.Min(p.Y.Min, 0)
	p.Y.Max = 1.02
	p.X.Min = 0
	return Figure{Name: "failures_timeline", Plot: p}, nil
}

// timelineKey is an arm's failure timeline without its arm's name: arms
// with equal keys draw the same line.
func timelineKey(evs []FailureEvent) string {
	var b strings.Builder
	for _, e := range evs {
		e.Arm = ""
		fmt.Fprint(&b, e, ";")
	}
	return b.String()
}

// checkpointKey is the scenario key of the checkpoint interval.
const checkpointKey = "training.checkpoint_interval_s"

// ETTR draws the effective training time ratio of a training sweep
// against its first swept key, one line per value of the other keys, as
// the sweep figures do (with 95% confidence-interval bars). When the sweep
// swept only the checkpoint interval, or ettr.csv has no swept columns
// (an older file), it draws ETTR against the checkpoint interval in
// minutes (log scale when the intervals span 20x or more) and marks the
// interval with the highest ETTR (the shortest of equals). The figure is
// named ettr.
func ETTR(m Meta, s ETTRSweep) (Figure, error) {
	pts := s.Points
	if len(pts) == 0 {
		return Figure{}, fmt.Errorf("plot: no ETTR points to draw")
	}
	if len(s.Params) > 0 && !(len(s.Params) == 1 && s.Params[0] == checkpointKey) {
		p := newPlot(m, "Effective training time ratio across the sweep", "", "ETTR (productive fraction of time)")
		values := make([][]string, len(pts))
		for i, q := range pts {
			values[i] = q.Values
		}
		n, err := gridLines(p, s.Params, values, linear, []gridSeries{
			{"ETTR", nil, true, func(i int) (float64, float64) { return pts[i].ETTR, pts[i].ETTRCI95 }},
		})
		if err != nil {
			return Figure{}, err
		}
		if n == 0 {
			return Figure{}, fmt.Errorf("plot: no ETTR in the sweep")
		}
		return Figure{Name: "ettr", Plot: p}, nil
	}
	sorted := append([]ETTRPoint(nil), pts...)
	sort.SliceStable(sorted, func(a, b int) bool { return sorted[a].CheckpointIntervalS < sorted[b].CheckpointIntervalS })
	logX := sorted[0].CheckpointIntervalS > 0 && sorted[len(sorted)-1].CheckpointIntervalS >= 20*sorted[0].CheckpointIntervalS
	xlabel := "checkpoint interval (min)"
	if logX {
		xlabel = "checkpoint interval (min, log scale)"
	}
	p := newPlot(m, "Effective training time ratio by checkpoint interval", xlabel, "ETTR (productive fraction of time)")
	sx := scale(logX)
	if logX {
		p.X.Tick.Marker = logTicks{}
	}
	var xys plotter.XYs
	var eb errBars
	best := 0
	for i, q := range sorted {
		xy := plotter.XY{X: sx.f(q.CheckpointIntervalS / 60), Y: q.ETTR}
		xys = append(xys, xy)
		eb.add(linear, xy.X, q.ETTR, q.ETTRCI95)
		if q.ETTR > sorted[best].ETTR {
			best = i
		}
	}
	l := line(xys, palette[0], nil, 1.5)
	sc := scatter(xys, palette[0], draw.CircleGlyph{}, 2.5)
	p.Add(l, sc)
	label := "ETTR"
	if len(eb.xys) > 0 {
		eb.draw(p, palette[0])
		label += " (95% CI)"
	}
	p.Legend.Add(label, l, sc)
	b := plotter.XYs{xys[best]}
	bs := scatter(b, palette[1], draw.RingGlyph{}, 7)
	bs.GlyphStyle.Color = palette[1]
	p.Add(bs)
	p.Legend.Add(fmt.Sprintf("best: %s min, ETTR %.3f", fmtTick(math.Round(sorted[best].CheckpointIntervalS/60*100)/100), xys[best].Y), bs)
	return Figure{Name: "ettr", Plot: p}, nil
}

// calibrationInfo names the figure of each calibration metric, the
// quantity in its title and the quantity and unit on its axes.
var calibrationInfo = map[string]struct{ file, title, axis string }{
	"output_tokens_per_s": {"calibration", "output throughput", "output throughput (tok/s, log scale)"},
	"ttft_ms":             {"calibration_ttft", "TTFT", "time to first token (ms, log scale)"},
	"tpot_ms":             {"calibration_tpot", "TPOT", "time per output token (ms, log scale)"},
	"itl_ms":              {"calibration_itl", "ITL", "inter-token latency (ms, log scale)"},
	"e2e_ms":              {"calibration_e2e", "end-to-end latency", "end-to-end latency (ms, log scale)"},
}

// calibrationBand is the relative error inside which a prediction is
// counted good: the figures shade predicted = measured × (1 ± band).
const calibrationBand = 0.15

// Calibration draws, for one metric of calibration.csv ("output_tokens_per_s",
// "ttft_ms", "tpot_ms", "itl_ms" or "e2e_ms"), the predicted value (y) against the measured one
// (x), both on the same log scale: fitted rows as circles, held-out rows
// as triangles and, where there was cross-validation, the prediction of
// the fit that did not see the row as crosses, each labelled with its
// count and median absolute error; the line predicted = measured, and the
// band within ±15% of it shaded between dashed edges. The figure is named
// calibration (output throughput), calibration_ttft, calibration_tpot,
// calibration_itl or calibration_e2e.
// Rows of other metrics, and values that are not positive and finite, are
// ignored; none left is an error.
func Calibration(m Meta, metric string, pts []CalibrationPoint) (Figure, error) {
	info, ok := calibrationInfo[metric]
	if !ok {
		return Figure{}, fmt.Errorf("plot: unknown calibration metric %q (want %s)", metric, strings.Join(CalibrationMetrics, ", "))
	}
	good := func(v float64) bool { return v > 0 && !math.IsInf(v, 0) }
	type series struct {
		xys  plotter.XYs
		errs []float64
	}
	var fit, test, cv series
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, q := range pts {
		if q.Metric != metric || !good(q.Measured) || !good(q.Predicted) {
			continue
		}
		s := &test
		if q.Fit {
			s = &fit
		}
		s.xys = append(s.xys, plotter.XY{X: math.Log10(q.Measured), Y: math.Log10(q.Predicted)})
		s.errs = append(s.errs, math.Abs(q.Predicted/q.Measured-1))
		lo, hi = math.Min(lo, math.Min(q.Measured, q.Predicted)), math.Max(hi, math.Max(q.Measured, q.Predicted))
		if good(q.CVPredicted) {
			cv.xys = append(cv.xys, plotter.XY{X: math.Log10(q.Measured), Y: math.Log10(q.CVPredicted)})
			cv.errs = append(cv.errs, math.Abs(q.CVPredicted/q.Measured-1))
			lo, hi = math.Min(lo, q.CVPredicted), math.Max(hi, q.CVPredicted)
		}
	}
	if len(fit.xys)+len(test.xys) == 0 {
		return Figure{}, fmt.Errorf("plot: no %s rows to draw", metric)
	}
	// Both axes cover every value with a margin of 25% (past the band), so
	// that predicted = measured is the diagonal of the axes.
	lmin, lmax := math.Log10(lo/1.25), math.Log10(hi*1.25)
	p := newPlot(m, "Calibration: measured vs predicted "+info.title, "measured "+info.axis, "predicted "+info.axis)
	p.X.Tick.Marker, p.Y.Tick.Marker = calibrationTicks{}, calibrationTicks{}

	under, over := math.Log10(1-calibrationBand), math.Log10(1+calibrationBand)
	band, err := plotter.NewPolygon(plotter.XYs{{X: lmin, Y: lmin + under}, {X: lmax, Y: lmax + under}, {X: lmax, Y: lmax + over}, {X: lmin, Y: lmin + over}})
	if err != nil {
		panic("plot: " + err.Error()) // finite points cannot fail
	}
	band.Color = color.RGBA{0xE4, 0xE4, 0xE4, 0xff}
	band.LineStyle.Width = 0
	edgeLo := line(plotter.XYs{{X: lmin, Y: lmin + under}, {X: lmax, Y: lmax + under}}, markColour, dashed, 0.8)
	edgeHi := line(plotter.XYs{{X: lmin, Y: lmin + over}, {X: lmax, Y: lmax + over}}, markColour, dashed, 0.8)
	diag := line(plotter.XYs{{X: lmin, Y: lmin}, {X: lmax, Y: lmax}}, palette[6], nil, 1)
	p.Add(band, edgeLo, edgeHi, diag)

	label := func(name string, s series) string {
		return fmt.Sprintf("%s (%d, median |error| %.1f%%)", name, len(s.xys), median(s.errs)*100)
	}
	for _, g := range []struct {
		s      series
		name   string
		colour color.Color
		glyph  draw.GlyphDrawer
		radius float64
	}{
		{fit, "fitted rows", palette[0], draw.CircleGlyph{}, 3},
		{test, "held-out rows", palette[1], draw.PyramidGlyph{}, 3.5},
		{cv, "cross-validated", palette[2], thickCross{}, 3.5},
	} {
		if len(g.s.xys) == 0 {
			continue
		}
		sc := scatter(g.s.xys, g.colour, g.glyph, g.radius)
		p.Add(sc)
		p.Legend.Add(label(g.name, g.s), sc)
	}
	p.Legend.Add("predicted = measured", diag)
	p.Legend.Add(fmt.Sprintf("within ±%s%%", fmtTick(calibrationBand*100)), band, edgeHi)
	p.X.Min, p.X.Max = lmin, lmax
	p.Y.Min, p.Y.Max = lmin, lmax
	return Figure{Name: info.file, Plot: p}, nil
}

// calibrationTicks labels a log axis (drawn over log10 of the data, see
// scale) like logTicks when it spans a decade or more, and with round
// values (numTicks) when it spans less, where logTicks would label one
// value or none.
type calibrationTicks struct{}

func (calibrationTicks) Ticks(lmin, lmax float64) []gplot.Tick {
	if !(lmax-lmin < 1) {
		return logTicks{}.Ticks(lmin, lmax)
	}
	var ts []gplot.Tick
	for _, t := range niceTicks(math.Pow(10, lmin), math.Pow(10, lmax), 5, false) {
		if t.Value > 0 {
			t.Value = math.Log10(t.Value)
			ts = append(ts, t)
		}
	}
	return ts
}

// thickCross is an X glyph drawn with 1.2 pt strokes: draw.CrossGlyph's
// hairlines vanish among filled markers.
type thickCross struct{}

func (thickCross) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	ls := draw.LineStyle{Color: sty.Color, Width: vg.Points(1.2)}
	r := sty.Radius * 0.8
	c.StrokeLine2(ls, pt.X-r, pt.Y-r, pt.X+r, pt.Y+r)
	c.StrokeLine2(ls, pt.X-r, pt.Y+r, pt.X+r, pt.Y-r)
}

// median of xs (not modified); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// scale maps values to axis units: log10 for a log axis, else the value.
// Log axes are drawn as linear gonum axes over log10 of the data, labelled
// by logTicks: gonum's LogScale panics on values ≤ 0 and, centring the
// axis label on the arithmetic mean of the range, shrinks the plot.
type scale bool

const linear scale = false

func (s scale) f(v float64) float64 {
	if s {
		return math.Log10(v)
	}
	return v
}

// bar is the lower and upper length, in axis units, of the error bar
// v ± ci; on a log axis the lower bar stops at v/2 where it would reach
// below it (zero or less cannot be drawn), and cut says it did.
func (s scale) bar(v, ci float64) (lo, hi float64, cut bool) {
	if !s {
		return ci, ci, false
	}
	return s.f(v) - s.f(math.Max(v-ci, v/2)), s.f(v+ci) - s.f(v), v-ci < v/2
}

// errBars collects y error bars in axis units; cut are the lower ends of
// the bars a log axis cut short (drawn with a down-pointing mark).
type errBars struct {
	xys    plotter.XYs
	lo, hi []float64
	cut    plotter.XYs
}

// add records the bar v ± ci at x; a ci that is 0 or NaN draws none.
func (e *errBars) add(s scale, x, v, ci float64) {
	if !(ci > 0) || math.IsInf(ci, 0) || math.IsNaN(x) || math.IsNaN(v) || math.IsInf(x, 0) || math.IsInf(v, 0) {
		return
	}
	lo, hi, cut := s.bar(v, ci)
	e.xys = append(e.xys, plotter.XY{X: x, Y: s.f(v)})
	e.lo, e.hi = append(e.lo, lo), append(e.hi, hi)
	if cut {
		e.cut = append(e.cut, plotter.XY{X: x, Y: s.f(v) - lo})
	}
}

// cutNote is the legend entry of the marks of error bars a log scale cut
// short (once per plot: cutNoted).
const cutNote = "lower 95% bound below half the value: bar cut"

// cutNoted holds the plots whose legend has cutNote.
var cutNoted sync.Map

// downGlyph is a triangle pointing down: a whisker that goes on below.
type downGlyph struct{}

func (downGlyph) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(0.5)})
	r := sty.Radius
	var p vg.Path
	p.Move(vg.Point{X: pt.X - r, Y: pt.Y + r/2})
	p.Line(vg.Point{X: pt.X + r, Y: pt.Y + r/2})
	p.Line(vg.Point{X: pt.X, Y: pt.Y - r})
	p.Close()
	c.Fill(p)
}

func (e errBars) Len() int                        { return len(e.xys) }
func (e errBars) XY(i int) (float64, float64)     { return e.xys[i].X, e.xys[i].Y }
func (e errBars) YError(i int) (float64, float64) { return e.lo[i], e.hi[i] }

func (e errBars) draw(p *gplot.Plot, c color.Color) {
	if len(e.xys) == 0 {
		return
	}
	b, err := plotter.NewYErrorBars(e)
	if err != nil {
		panic("plot: " + err.Error()) // add keeps only finite bars
	}
	b.Color = c
	b.Width = vg.Points(1)
	p.Add(b)
	if len(e.cut) > 0 {
		marks := scatter(e.cut, c, downGlyph{}, 3)
		p.Add(marks)
		if _, noted := cutNoted.LoadOrStore(p, true); !noted {
			p.Legend.Add(cutNote, marks)
		}
	}
}

// wideRange reports whether positive values span ratio or more, so a log
// axis shows them better; a non-positive value rules the log axis out.
func wideRange(vals []float64, ratio float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if math.IsNaN(v) {
			continue
		}
		if v <= 0 {
			return false
		}
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	return hi >= ratio*lo
}

// setLogY puts the y axis on a log scale and says so in its label.
func setLogY(p *gplot.Plot) {
	p.Y.Tick.Marker = logTicks{}
	p.Y.Label.Text = strings.TrimSuffix(p.Y.Label.Text, ")") + ", log scale)"
}

// finite is xys without the points that have a NaN or infinite
// coordinate (rows handed to the builders directly may hold them).
func finite(xys plotter.XYs) plotter.XYs {
	out := make(plotter.XYs, 0, len(xys))
	for _, xy := range xys {
		if !math.IsNaN(xy.X) && !math.IsNaN(xy.Y) && !math.IsInf(xy.X, 0) && !math.IsInf(xy.Y, 0) {
			out = append(out, xy)
		}
	}
	return out
}

func line(xys plotter.XYs, c color.Color, dashes []vg.Length, width float64) *plotter.Line {
	l, err := plotter.NewLine(finite(xys))
	if err != nil {
		panic("plot: " + err.Error()) // finite points cannot fail
	}
	l.Color = c
	l.Width = vg.Points(width)
	l.Dashes = dashes
	return l
}

// addMarks scatters xy on p (colour c, glyph g of radius r) with the
// legend entry "label (n)"; nothing when xy is empty. Past maxMarks marks
// (0: no limit) the legend gives the count alone: thousands of marks
// bury the lines beneath.
func addMarks(p *gplot.Plot, xy plotter.XYs, c color.Color, g draw.GlyphDrawer, r float64, label string, maxMarks int) {
	if len(xy) == 0 {
		return
	}
	label = fmt.Sprintf("%s (%d)", label, len(xy))
	if maxMarks > 0 && len(xy) > maxMarks {
		p.Legend.Add(label + ", not marked")
		return
	}
	sc := scatter(xy, c, g, r)
	p.Add(sc)
	p.Legend.Add(label, sc)
}

func scatter(xys plotter.XYs, c color.Color, shape draw.GlyphDrawer, radius float64) *plotter.Scatter {
	s, err := plotter.NewScatter(finite(xys))
	if err != nil {
		panic("plot: " + err.Error()) // finite points cannot fail
	}
	s.GlyphStyle.Color = c
	s.GlyphStyle.Shape = shape
	s.GlyphStyle.Radius = vg.Points(radius)
	return s
}

// armLabel is an arm's name in a legend: a single run's "" is its
// scenario's name ("all requests" without one); a sweep point's
// "workload.arrival.rate_per_s=10 cluster.replicas=3" is shortened to
// "rate_per_s = 10, replicas = 3" (a sizing's run at N is named
// "cluster.replicas=N" at the source, so it reads "replicas = N").
func armLabel(m Meta, arm string) string {
	if arm == "" {
		if m.Scenario != "" {
			return m.Scenario
		}
		return "all requests"
	}
	// A sweep point's KEY=VALUE pairs, joined by commas (by spaces in
	// files written before the arms/ directory names and the arm column
	// agreed).
	fields := strings.FieldsFunc(arm, func(r rune) bool { return r == ',' || r == ' ' })
	for i, f := range fields {
		k, v, ok := strings.Cut(f, "=")
		if !ok || !strings.Contains(k, ".") {
			return arm
		}
		fields[i] = k[strings.LastIndex(k, ".")+1:] + " = " + v
	}
	return strings.Join(fields, ", ")
}

// paramLabel is a swept scenario key as an axis label: the quantity its
// last segment names (the one before too when that alone is one short
// word such as "rate"), with its unit read from the key's suffix, and the full
// key in parentheses: "arrival rate, requests/s
// (workload.arrival.rate_per_s)", "spares (failures.spares)".
func paramLabel(key string) string {
	segs := strings.Split(key, ".")
	last := segs[len(segs)-1]
	stem, unit := last, ""
	cut := func(suffix, u string) bool {
		if strings.HasSuffix(last, suffix) && len(last) > len(suffix) {
			stem, unit = strings.TrimSuffix(last, suffix), u
			return true
		}
		return false
	}
	switch {
	case cut("_per_s", "") && stem == "rate":
		unit = "requests/s"
	case strings.HasSuffix(last, "_per_s"):
		stem, unit = last, "" // "tokens_per_s" reads as "tokens per s"
	case cut("_ms", "ms"), cut("_us", "µs"), cut("_s", "s"), cut("_h", "h"), cut("_pct", "%"),
		cut("_frac", "fraction"), cut("_fraction", "fraction"):
	case strings.HasSuffix(last, "_tokens"):
		unit = "tokens"
	case strings.HasSuffix(last, "utilization"):
		unit = "fraction"
	case last == "tp":
		stem, unit = "tensor parallelism", "GPUs per replica"
	case last == "max_seqs":
		unit = "sequences"
	}
	name := strings.ReplaceAll(stem, "_", " ")
	if len(segs) > 1 && len(name) <= 5 && !strings.Contains(name, " ") {
		name = strings.ReplaceAll(segs[len(segs)-2], "_", " ") + " " + name
	}
	label := name
	if unit != "" {
		label += ", " + unit
	}
	if label == key {
		return key
	}
	return label + " (" + key + ")"
}

// groupBy groups xs by key, keys in order of first appearance.
func groupBy[T any](xs []T, key func(T) string) ([]string, map[string][]T) {
	var keys []string
	groups := map[string][]T{}
	for _, x := range xs {
		k := key(x)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], x)
	}
	return keys, groups
}

// firstReplicationOf is the indices, among idx (not empty), of the points
// of pts' lowest-numbered replication there, in time order.
func firstReplicationOf(pts []TimePoint, idx []int) []int {
	rep := pts[idx[0]].Replication
	for _, k := range idx {
		rep = min(rep, pts[k].Replication)
	}
	var sel []int
	for _, k := range idx {
		if pts[k].Replication == rep {
			sel = append(sel, k)
		}
	}
	sort.SliceStable(sel, func(a, b int) bool { return pts[sel[a]].TimeS < pts[sel[b]].TimeS })
	return sel
}

// maxLinePoints is the most points a time series line is drawn with
// (thin): more than a figure's pixels across.
const maxLinePoints = 4000

// thin returns xys (in x order) drawn with at most about most points: the
// first and last, and in each of most/2 equal runs of points the lowest and
// highest, in order, so that a spike still shows. Shorter lines are kept
// whole.
func thin(xys plotter.XYs, most int) plotter.XYs {
	if len(xys) <= most {
		return xys
	}
	buckets := most / 2
	out := make(plotter.XYs, 0, most+2)
	out = append(out, xys[0])
	inner := xys[1 : len(xys)-1]
	for b := range buckets {
		run := inner[b*len(inner)/buckets : (b+1)*len(inner)/buckets]
		if len(run) == 0 {
			continue
		}
		lo, hi := 0, 0
		for i, p := range run {
			if p.Y < run[lo].Y {
				lo = i
			}
			if p.Y > run[hi].Y {
				hi = i
			}
		}
		out = append(out, run[min(lo, hi)])
		if lo != hi {
			out = append(out, run[max(lo, hi)])
		}
	}
	return append(out, xys[len(xys)-1])
}

// firstReplication is the points of pts' lowest-numbered replication, in
// time order (pts is not empty): a time series figure draws one run.
func firstReplication(pts []TimePoint) []TimePoint {
	rep := pts[0].Replication
	for _, t := range pts {
		rep = min(rep, t.Replication)
	}
	var sel []TimePoint
	for _, t := range pts {
		if t.Replication == rep {
			sel = append(sel, t)
		}
	}
	sort.SliceStable(sel, func(a, b int) bool { return sel[a].TimeS < sel[b].TimeS })
	return sel
}
