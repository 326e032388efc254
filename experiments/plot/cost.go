package plot

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/fleetsim/fleetsim/experiments/results"
)

// CostTimeline draws the fleet's spend rate over simulated time, USD per
// hour: the replicas paid for at each sample (timeseries.csv
// provisioned_replicas) × the arm's dollars per provisioned replica-hour
// (rates, from its summary.json: cost.usd × fleet.gpus / (fleet.replicas ×
// cost.gpu_hours), which blends a fleet's groups, pricing tiers and power
// into one rate), one line per arm; an arm that pays its replicas whether
// provisioned or not (m.FlatReplicas: reserved, one kind) is flat at all
// of them. Arms without a rate are left out. The figure is named
// usd_per_hour.
//
// An arm of a fleet of groups (m.GroupPrices, and the per-group columns
// provisioned_replicas.GROUP in pts) is drawn split instead: one line per
// group and tier — a reserved group flat at all its replicas (paid whether
// provisioned or not), an on-demand group at its provisioned replicas, the
// [spot] group's spot replicas (provisioned_spot_replicas.GROUP) apart at
// the spot fraction of its price — and their total. GPU prices only: the
// energy that [cost] power adds to the blended rate is not split.
func CostTimeline(m Meta, pts []TimePoint, rates map[string]float64) (Figure, error) {
	p := newPlot(m, "Spend rate over time (replicas paid for × their price)", "simulated time (s)", "USD per hour")
	var plain, split []TimePoint
	splitSeries := map[string][]timeSeries{}
	for _, t := range pts {
		if gs := m.GroupPrices[t.Arm]; len(gs) > 0 && t.Groups != nil {
			split = append(split, t)
			if _, ok := splitSeries[t.Arm]; !ok {
				splitSeries[t.Arm] = groupSeries(gs)
			}
			continue
		}
		plain = append(plain, t)
	}
	n := timeLines(p, m, plain, []timeSeries{
		{"$ per hour", nil, func(t TimePoint) float64 {
			r, ok := rates[t.Arm]
			if !ok {
				return math.NaN()
			}
			if n, ok := m.FlatReplicas[t.Arm]; ok {
				return n * r // reserved: paid whether provisioned or not
			}
			return t.ProvisionedReplicas * r
		}},
	})
	if len(split) > 0 {
		arms, byArm := groupBy(split, func(t TimePoint) string { return t.Arm })
		for _, arm := range arms {
			n += timeLinesFrom(p, m, byArm[arm], splitSeries[arm], len(arms) > 1 || len(plain) > 0 || arm != "", n)
		}
	}
	if n == 0 {
		return Figure{}, fmt.Errorf("plot: no provisioned replicas with a known price in the time series")
	}
	p.Y.Min, p.Y.Max = 0, math.Max(1, headroom(p.Y.Max, 1))
	return Figure{Name: "usd_per_hour", Plot: p}, nil
}

// spotGroupRef is a group in summary.json's spot.groups (spot replicas in
// several groups).
type spotGroupRef struct {
	Name string `json:"name"`
}

// groupUSDPerHour is one group's spend rate at a sample, split: the group's
// replicas at its own price (all of them if reserved; the provisioned ones
// less its spot replicas otherwise), and its spot replicas at the spot
// fraction. NaN where the sample lacks the group's column.
func groupUSDPerHour(g GroupPrice, t TimePoint) (own, spot float64) {
	prov, ok := t.Groups[g.Name]
	if !ok {
		return math.NaN(), math.NaN()
	}
	s := t.Spot[g.Name] // 0 without spot
	if g.Reserved {
		prov = float64(g.Replicas)
	}
	return (prov - s) * g.USDPerH, s * g.USDPerH * g.SpotFrac
}

// groupSeries are the split lines of one arm's groups: each group's own
// replicas (labelled with its tier), its spot replicas where it has
// spot, and the total.
func groupSeries(gs []GroupPrice) []timeSeries {
	var out []timeSeries
	dash := []vg.Length{vg.Points(3), vg.Points(2)}
	for _, g := range gs {
		tier := "on-demand"
		if g.Reserved {
			tier = "reserved, flat"
		}
		out = append(out, timeSeries{g.Name + " (" + tier + ")", dash, func(t TimePoint) float64 {
			own, _ := groupUSDPerHour(g, t)
			return own
		}})
		if g.SpotFrac > 0 {
			out = append(out, timeSeries{fmt.Sprintf("%s (spot at %.2g×)", g.Name, g.SpotFrac), dash, func(t TimePoint) float64 {
				_, spot := groupUSDPerHour(g, t)
				return spot
			}})
		}
	}
	return append(out, timeSeries{"total $ per hour", nil, func(t TimePoint) float64 {
		sum := 0.0
		for _, g := range gs {
			own, spot := groupUSDPerHour(g, t)
			sum += own + spot
		}
		return sum
	}})
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

// Legend groups of a sizing's candidates on the cost-vs-SLO figure.
const (
	groupMet    = "met the targets"
	groupMissed = "missed the targets"
)

// sizeCostSLO is one cost-vs-SLO point per fleet size the search tried
// (size_search.csv rows with an slo_attainment), labelled N=replicas
// (with "+failures" for the search with the scenario's failures),
// grouped by whether it met the targets.
func sizeCostSLO(search []SearchPoint) []CostSLOPoint {
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
		out = append(out, CostSLOPoint{Label: label, USDPerMonth: q.USDPerMonth, SLOAttainment: q.SLOAttainment,
			SLOCI95: q.SLOAttainmentCI95, Group: g})
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
	for i := range t.rows {
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
	for i := range t.rows {
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

// readRates reads each arm's dollars per provisioned replica-hour (see
// CostTimeline) from dir/summary.json (arm "") and
// dir/arms/NAME/summary.json (arm NAME); an arm whose summary has no cost
// or no GPU-hours has none. A malformed summary is an error naming it.
func readRates(dir string) (map[string]float64, error) {
	rates, _, _, err := readPrices(dir)
	return rates, err
}

// readPrices is readRates, each arm's replica groups with their prices
// (Meta.GroupPrices) where its summary has fleet.groups, and the replicas
// paid flat (Meta.FlatReplicas) where it is a fleet of one kind at the
// reserved tier without spot.
func readPrices(dir string) (map[string]float64, map[string][]GroupPrice, map[string]float64, error) {
	rates := map[string]float64{}
	groups := map[string][]GroupPrice{}
	flat := map[string]float64{}
	read := func(arm, path string) error {
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return badInput("%v", err)
		}
		var s struct {
			Fleet struct {
				Replicas float64 `json:"replicas"`
				GPUs     float64 `json:"gpus"`
				Groups   []struct {
					Name            string  `json:"name"`
					TP              int     `json:"tp"`
					Replicas        int     `json:"replicas"`
					Tier            string  `json:"tier"`
					PricePerGPUHour float64 `json:"price_per_gpu_hour"`
				} `json:"groups"`
			} `json:"fleet"`
			Cost struct {
				USD      float64 `json:"usd"`
				GPUHours float64 `json:"gpu_hours"`
				Tier     string  `json:"tier"`
			} `json:"cost"`
			Spot *struct {
				Group         string         `json:"group"`
				PriceFraction float64        `json:"price_fraction"`
				Groups        []spotGroupRef `json:"groups"`
			} `json:"spot"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			return badInput("%s: %v", path, err)
		}
		if s.Fleet.Replicas > 0 && s.Cost.GPUHours > 0 && s.Cost.USD >= 0 {
			rates[arm] = s.Cost.USD * s.Fleet.GPUs / (s.Fleet.Replicas * s.Cost.GPUHours)
			if s.Cost.Tier == "reserved" && len(s.Fleet.Groups) == 0 && s.Spot == nil {
				flat[arm] = s.Fleet.Replicas
			}
		}
		for _, g := range s.Fleet.Groups {
			if g.TP < 1 || g.Replicas < 0 || !(g.PricePerGPUHour >= 0) {
				return badInput("%s: fleet.groups %q: tp %d, replicas %d, price_per_gpu_hour %v", path, g.Name, g.TP, g.Replicas, g.PricePerGPUHour)
			}
			gp := GroupPrice{Name: g.Name, Replicas: g.Replicas, Reserved: g.Tier == "reserved", USDPerH: float64(g.TP) * g.PricePerGPUHour}
			if s.Spot != nil && (s.Spot.Group == g.Name || slices.Contains(s.Spot.Groups, spotGroupRef{g.Name})) {
				if !(s.Spot.PriceFraction > 0 && s.Spot.PriceFraction <= 1) {
					return badInput("%s: spot.price_fraction %v: must be in (0, 1]", path, s.Spot.PriceFraction)
				}
				gp.SpotFrac = s.Spot.PriceFraction
			}
			groups[arm] = append(groups[arm], gp)
		}
		return nil
	}
	if err := read("", filepath.Join(dir, "summary.json")); err != nil {
		return nil, nil, nil, err
	}
	ents, err := os.ReadDir(filepath.Join(dir, "arms"))
	if err != nil {
		return rates, groups, flat, nil // no arms
	}
	for _, e := range ents {
		if e.IsDir() {
			if err := read(e.Name(), filepath.Join(dir, "arms", e.Name(), "summary.json")); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return rates, groups, flat, nil
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
