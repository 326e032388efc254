package plot

import (
	"fmt"
	"math"
	"slices"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/fleetsim/fleetsim/experiments/results"
)

// CostTimeline draws the fleet's GPU spend rate over simulated time, USD
// per hour: timeseries.csv's usd_per_hour, which the run's price model
// wrote at each sample (every replica paid in its lifecycle phase then, at
// its rate), one line per arm. An arm of a fleet of groups (the per-group
// columns usd_per_hour.GROUP) is drawn split instead: one line per group,
// its spot replicas (spot_usd_per_hour.GROUP) apart where it has some, and
// the total. Arms without the column are left out. GPU prices only: the
// energy that [cost] power adds is not in the column. The figure is named
// usd_per_hour.
func CostTimeline(m Meta, pts []TimePoint) (Figure, error) {
	p := newPlot(m, "Spend rate over time (replicas paid for × their price)", "simulated time (s)", "USD per hour")
	var plain, split []TimePoint
	for _, t := range pts {
		if t.GroupUSD != nil {
			split = append(split, t)
		}
	}
	if len(split) == 0 && !slices.ContainsFunc(pts, func(t TimePoint) bool { return math.IsNaN(t.USDPerHour) }) {
		plain = pts // the usual case, without a copy of a long series
	} else {
		for _, t := range pts {
			if t.GroupUSD == nil && !math.IsNaN(t.USDPerHour) {
				plain = append(plain, t)
			}
		}
	}
	n := timeLines(p, m, plain, []timeSeries{{"$ per hour", nil, func(t TimePoint) float64 { return t.USDPerHour }}})
	if len(split) > 0 {
		arms, byArm := groupBy(split, func(t TimePoint) string { return t.Arm })
		for _, arm := range arms {
			n += timeLinesFrom(p, m, byArm[arm], groupSeries(byArm[arm][0].GroupOrder), len(arms) > 1 || len(plain) > 0 || arm != "", n)
		}
	}
	if n == 0 {
		return Figure{}, fmt.Errorf("plot: no spend rate (usd_per_hour) in the time series")
	}
	p.Y.Min, p.Y.Max = 0, math.Max(1, headroom(p.Y.Max, 1))
	return Figure{Name: "usd_per_hour", Plot: p}, nil
}

// groupSeries are the split lines of one arm's groups (in their columns'
// order): each group's replicas but its spot ones, its spot replicas where
// it has some, and the total.
func groupSeries(groups []string) []timeSeries {
	var out []timeSeries
	dash := []vg.Length{vg.Points(3), vg.Points(2)}
	for _, g := range groups {
		out = append(out, timeSeries{g, dash, func(t TimePoint) float64 {
			v, ok := t.GroupUSD[g]
			if !ok {
				return math.NaN()
			}
			return v - t.SpotUSD[g]
		}})
		out = append(out, timeSeries{g + " (spot)", dash, func(t TimePoint) float64 {
			if v, ok := t.SpotUSD[g]; ok {
				return v
			}
			return math.NaN()
		}})
	}
	return append(out, timeSeries{"total $ per hour", nil, func(t TimePoint) float64 { return t.USDPerHour }})
}

// CostSLOPoint is one arm or grid point of a cost-vs-SLO figure: its fleet
// cost per 720-h month and its SLO attainment (0..1), each a mean over
// replications with its 95% CI half-width (0: none drawn).
type CostSLOPoint struct {
	Label                        string
	USDPerMonth, USDPerMonthCI95 float64
	SLOAttainment, SLOCI95       float64
	// Group, when set (a sizing's candidates: "met the targets",
	// "missed"), puts the point in one legend entry per group, and its
	// Label is written beside it instead.
	Group string
	// Chosen marks the fleet the sizing reports (N), ringed and named in
	// the legend.
	Chosen bool
}

// hasCostSLO reports whether a point has both a cost and an SLO
// attainment (a scenario without [slo] has none: no cost_vs_slo figure).
func hasCostSLO(pts []CostSLOPoint) bool {
	return slices.ContainsFunc(pts, func(q CostSLOPoint) bool { return !math.IsNaN(q.USDPerMonth) && !math.IsNaN(q.SLOAttainment) })
}

// CostVsSLO draws cost against SLO attainment: one marker per A/B arm or
// sweep point (x: SLO attainment, %; y: USD per month), with 95% CI bars
// on each axis where known, each point in the legend. The cheapest point
// at the highest attainment is the one to read first: down and to the
// right is better. Points with a Group (a sizing's candidates, one per
// fleet size or mix tried) share their group's marker and legend entry and
// are labelled beside the marker. The figure is named cost_vs_slo.
func CostVsSLO(m Meta, pts []CostSLOPoint) (Figure, error) {
	p := newPlot(m, "Cost vs SLO attainment", "SLO attainment (% of requests meeting the SLO)", "cost (USD per 720-h month)")
	n := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	var groups []string
	var lxys plotter.XYs
	var ltext []string
	for i, q := range pts {
		if math.IsNaN(q.USDPerMonth) || math.IsNaN(q.SLOAttainment) {
			continue
		}
		x := 100 * q.SLOAttainment
		k, legend := i, true
		if q.Group != "" {
			k = slices.Index(groups, q.Group)
			if legend = k < 0; legend {
				k = len(groups)
				groups = append(groups, q.Group)
			}
			lxys = append(lxys, plotter.XY{X: x, Y: q.USDPerMonth})
			ltext = append(ltext, q.Label)
		}
		c := colour(k)
		s := scatter(plotter.XYs{{X: x, Y: q.USDPerMonth}}, c, shapes[k%len(shapes)], 4)
		p.Add(s)
		if q.USDPerMonthCI95 > 0 {
			var e errBars
			e.add(linear, x, q.USDPerMonth, q.USDPerMonthCI95)
			e.draw(p, c)
		}
		if q.SLOCI95 > 0 {
			xl, xh := x-100*q.SLOCI95, x+100*q.SLOCI95
			p.Add(line(plotter.XYs{{X: xl, Y: q.USDPerMonth}, {X: xh, Y: q.USDPerMonth}}, c, nil, 1))
			lo, hi = math.Min(lo, xl), math.Max(hi, xh)
		}
		lo, hi = math.Min(lo, x), math.Max(hi, x)
		switch {
		case q.Group == "":
			p.Legend.Add(armLabel(m, q.Label), s)
		case legend:
			p.Legend.Add(q.Group, s)
		}
		if q.Chosen {
			ring := scatter(plotter.XYs{{X: x, Y: q.USDPerMonth}}, colour(6), draw.RingGlyph{}, 8)
			p.Add(ring)
			p.Legend.Add("the size reported: "+q.Label, ring)
		}
		n++
	}
	if n == 0 {
		return Figure{}, fmt.Errorf("plot: no point has both a cost and an SLO attainment")
	}
	if len(lxys) > 0 {
		if lb, err := plotter.NewLabels(plotter.XYLabels{XYs: lxys, Labels: ltext}); err == nil {
			lb.Offset = vg.Point{X: vg.Points(5), Y: vg.Points(2)}
			p.Add(lb)
		}
	}
	p.Y.Min = 0
	p.Y.Max = headroom(p.Y.Max, 1)
	pad := math.Max(1, (hi-lo)*0.1)
	p.X.Min, p.X.Max = math.Max(0, lo-pad), math.Min(100, hi+pad)
	if p.X.Min >= p.X.Max {
		p.X.Min, p.X.Max = math.Max(0, p.X.Max-1), math.Min(100, p.X.Min+1)
	}
	return Figure{Name: "cost_vs_slo", Plot: p}, nil
}

// shapes are the markers of cost-vs-SLO points, cycled.
var shapes = []draw.GlyphDrawer{draw.CircleGlyph{}, draw.SquareGlyph{}, draw.TriangleGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}, draw.RingGlyph{}, draw.BoxGlyph{}, draw.PyramidGlyph{}}

// sweepCostSLO is one cost-vs-SLO point per sweep grid point (the sweep's
// own means; no CI for the cost, which is the same in every replication).
func sweepCostSLO(s Sweep) []CostSLOPoint {
	var out []CostSLOPoint
	for _, r := range s.Rows {
		parts := make([]string, len(s.Params))
		for i, k := range s.Params {
			parts[i] = k + "=" + r.Values[i]
		}
		out = append(out, CostSLOPoint{Label: strings.Join(parts, " "), USDPerMonth: r.USDPerMonth,
			SLOAttainment: r.SLOAttainment, SLOCI95: r.SLOAttainmentCI95})
	}
	return out
}

// Legend groups of a sizing's candidates on the cost-vs-SLO figure. The
// sizing's targets (p99 TTFT, success, …) are not the x axis's per-request
// [slo]: a size can miss them at 99.9% attainment.
const (
	groupMet    = "met the sizing's targets (size.csv; not this axis)"
	groupMissed = "missed the sizing's targets"
)

// sizeCostSLO is one cost-vs-SLO point per fleet size the search tried
// (size_search.csv rows with an slo_attainment), labelled N=replicas
// (with "+failures" for the search with the scenario's failures),
// grouped by whether it met the targets; sizes at the same place in the
// same group share one label ("N=8, N=8+failures"). The size the sizing
// reports as N (size.csv's row "N", rows may be nil) is Chosen.
func sizeCostSLO(search []SearchPoint, rows []SizeRow) []CostSLOPoint {
	chosen, failures := 0, false
	for _, r := range rows {
		if r.Row == "N" {
			chosen, failures = r.Replicas, r.Failures
		}
	}
	var out []CostSLOPoint
	for _, q := range search {
		label := fmt.Sprintf("N=%d", q.Replicas)
		if q.Failures {
			label += "+failures"
		}
		g := groupMissed
		if q.MetSLO {
			g = groupMet
		}
		pt := CostSLOPoint{Label: label, USDPerMonth: q.USDPerMonth, SLOAttainment: q.SLOAttainment,
			SLOCI95: q.SLOAttainmentCI95, Group: g, Chosen: q.Replicas == chosen && q.Failures == failures}
		if k := slices.IndexFunc(out, func(o CostSLOPoint) bool {
			return o.Group == g && o.USDPerMonth == pt.USDPerMonth && o.SLOAttainment == pt.SLOAttainment
		}); k >= 0 {
			out[k].Label += ", " + label
			out[k].Chosen = out[k].Chosen || pt.Chosen
			continue
		}
		out = append(out, pt)
	}
	return out
}

// sizeMixFile is written by `fleetsim size` on a scenario with two pool
// sizes: the two axes' replica counts (one column each, named after the
// axis), gpus, usd_per_month, met, one TARGET_bound per target, then
// slo_attainment and slo_attainment_ci95.
const sizeMixFile = "size_mix.csv"

// readSizeMix is one cost-vs-SLO point per mix size_mix.csv tried,
// labelled "AXIS=n AXIS=m"; nil when the file lacks the attainment
// column (written before it existed).
func readSizeMix(t *table) ([]CostSLOPoint, error) {
	const met = "met"
	if !t.has(results.SLOAttainment) {
		return nil, nil
	}
	if err := t.require(results.GPUs, results.USDPerMonth, met); err != nil {
		return nil, err
	}
	axes := t.names[:t.col[results.GPUs]]
	if len(axes) == 0 {
		return nil, badInput("%s: no axis columns before %s", t.path, results.GPUs)
	}
	var out []CostSLOPoint
	for i := range t.len() {
		c := cursor{t: t, i: i}
		parts := make([]string, len(axes))
		for k, a := range axes {
			parts[k] = fmt.Sprintf("%s=%d", a, c.integer(a))
		}
		q := CostSLOPoint{Label: strings.Join(parts, " "), USDPerMonth: c.num(results.USDPerMonth),
			SLOAttainment: c.optNum(results.SLOAttainment), SLOCI95: c.ci(results.SLOAttainmentCI95), Group: groupMissed}
		if c.boolean(met) {
			q.Group = groupMet
		}
		if c.err == nil && (q.USDPerMonth < 0 || q.SLOAttainment < 0 || q.SLOAttainment > 1) {
			c.fail(results.SLOAttainment, "cost %v or attainment %v out of range", q.USDPerMonth, q.SLOAttainment)
		}
		if c.err != nil {
			return nil, c.err
		}
		out = append(out, q)
	}
	return out, nil
}

// Columns of replications.csv the cost-vs-SLO figure reads (dotted paths
// of summary.json).
const (
	repUSDPerMonth   = "cost.usd_per_month"
	repSLOAttainment = "goodput.slo_attainment"
)

// readCostSLO is one cost-vs-SLO point per arm of replications.csv (means
// over its replications, with 95% CIs); nil when the file lacks either
// column.
func readCostSLO(t *table) ([]CostSLOPoint, error) {
	if !t.has(repUSDPerMonth, repSLOAttainment) {
		return nil, nil
	}
	if err := t.require(results.Arm); err != nil {
		return nil, err
	}
	var arms []string
	cost, slo := map[string][]float64{}, map[string][]float64{}
	for i := range t.len() {
		c := cursor{t: t, i: i}
		arm := c.str(results.Arm)
		u, a := c.optNum(repUSDPerMonth), c.optNum(repSLOAttainment)
		if c.err == nil && (u < 0 || a < 0 || a > 1) {
			c.fail(repSLOAttainment, "cost %v or attainment %v out of range", u, a)
		}
		if c.err != nil {
			return nil, c.err
		}
		if math.IsNaN(u) || math.IsNaN(a) {
			continue
		}
		if _, ok := cost[arm]; !ok {
			arms = append(arms, arm)
		}
		cost[arm] = append(cost[arm], u)
		slo[arm] = append(slo[arm], a)
	}
	var out []CostSLOPoint
	for _, arm := range arms {
		u, uci := meanCI95(cost[arm])
		a, aci := meanCI95(slo[arm])
		out = append(out, CostSLOPoint{Label: arm, USDPerMonth: u, USDPerMonthCI95: uci, SLOAttainment: a, SLOCI95: aci})
	}
	return out, nil
}

// timeLinesFrom adds one line per series of one arm's points (its
// lowest-numbered replication), each in its own colour from colour(first),
// with the arm's name in the legend when withArm; it returns how many it
// added.
func timeLinesFrom(p *gplot.Plot, m Meta, pts []TimePoint, series []timeSeries, withArm bool, first int) int {
	if len(pts) == 0 {
		return 0
	}
	sel := firstReplication(pts)
	n := 0
	for _, s := range series {
		var xys plotter.XYs
		for _, t := range sel {
			if v := s.value(t); !math.IsNaN(v) {
				xys = append(xys, plotter.XY{X: t.TimeS, Y: v})
			}
		}
		if len(xys) == 0 {
			continue
		}
		xys = thin(xys, maxLinePoints)
		l := line(xys, colour(first+n), s.dashes, 1.2)
		p.Add(l)
		label := s.name
		if withArm {
			label = armLabel(m, sel[0].Arm) + ": " + s.name
		}
		p.Legend.Add(label, l)
		n++
	}
	return n
}
