package plot

import (
	"fmt"
	"math"
	"sort"

	"github.com/fleetsim/fleetsim/experiments/results"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// PlanRow is one row of plan.csv that was sized (configurations pruned
// before simulating have no size and are not read).
type PlanRow struct {
	Config      string
	USDPerMonth float64
	TTFTP99Ms   float64
	MetSLO      bool
	Frontier    bool
	Chosen      bool
}

// readPlan reads plan.csv's sized rows.
func readPlan(t *table) ([]PlanRow, error) {
	if err := t.require("config", results.USDPerMonth, results.TTFTP99Ms, results.MetSLO, "status"); err != nil {
		return nil, err
	}
	var out []PlanRow
	for i := range t.len() {
		c := cursor{t: t, i: i}
		if c.str(results.USDPerMonth) == "" {
			continue // not simulated
		}
		r := PlanRow{Config: c.str("config"), USDPerMonth: c.num(results.USDPerMonth), TTFTP99Ms: c.num(results.TTFTP99Ms),
			MetSLO: c.boolean(results.MetSLO), Chosen: c.str("status") == "chosen"}
		if s, ok := c.raw("frontier"); ok && s != "" {
			r.Frontier = c.boolean("frontier")
		}
		if c.err == nil && (r.USDPerMonth < 0 || r.TTFTP99Ms < 0) {
			c.fail(results.USDPerMonth, "a negative cost or TTFT")
		}
		if c.err != nil {
			return nil, c.err
		}
		out = append(out, r)
	}
	return out, nil
}

// PlanFrontier draws fleetsim plan's search: p99 TTFT against $/month for
// every configuration sized, at the size reported (grey circles where it
// met the SLO, crosses where it missed at its largest size), the Pareto
// frontier of those that met it as a staircase, the chosen fleet as a
// labelled star, and the TTFT SLO as a dashed line. Tokens/s per GPU, the
// frontier's third axis, is in plan.csv. The figure is named
// plan_frontier.
func PlanFrontier(m Meta, rows []PlanRow) (Figure, error) {
	p := newPlot(m, "Deployments searched: cost vs p99 TTFT", "fleet cost (USD per 720-h month)", "p99 time to first token (ms)")
	var met, missed, front plotter.XYs
	var chosen *PlanRow
	for i := range rows {
		r := &rows[i]
		xy := plotter.XY{X: r.USDPerMonth, Y: r.TTFTP99Ms}
		switch {
		case !r.MetSLO:
			missed = append(missed, xy)
		default:
			met = append(met, xy)
		}
		if r.Frontier {
			front = append(front, xy)
		}
		if r.Chosen {
			chosen = r
		}
	}
	if len(met)+len(missed) == 0 {
		return Figure{}, fmt.Errorf("plot: plan.csv has no configuration that was sized")
	}
	addMarks(p, met, markColour, draw.CircleGlyph{}, 2.5, "met the SLO", 0)
	addMarks(p, missed, colour(1), draw.CrossGlyph{}, 3, "missed it at its largest size", 0)
	if len(front) > 0 {
		sort.Slice(front, func(i, j int) bool {
			if front[i].X != front[j].X {
				return front[i].X < front[j].X
			}
			return front[i].Y > front[j].Y
		})
		// The staircase: from each point, the best TTFT so far holds
		// until the next dearer point lowers it.
		var stair plotter.XYs
		for i, q := range front {
			if i > 0 {
				stair = append(stair, plotter.XY{X: q.X, Y: stair[len(stair)-1].Y})
			}
			stair = append(stair, q)
		}
		l := line(stair, colour(0), nil, 1.5)
		s := scatter(front, colour(0), draw.CircleGlyph{}, 3.5)
		p.Add(l, s)
		p.Legend.Add(fmt.Sprintf("Pareto frontier (%d; with tokens/s per GPU)", len(front)), l, s)
	}
	if chosen != nil {
		xy := plotter.XYs{{X: chosen.USDPerMonth, Y: chosen.TTFTP99Ms}}
		s := scatter(xy, colour(2), draw.PyramidGlyph{}, 6)
		p.Add(s)
		p.Legend.Add("chosen: "+chosen.Config, s)
		if lb, err := plotter.NewLabels(plotter.XYLabels{XYs: xy, Labels: []string{chosen.Config}}); err == nil {
			lb.Offset = vg.Point{X: vg.Points(8), Y: vg.Points(4)}
			p.Add(lb)
		}
	}
	p.X.Min, p.Y.Min = 0, 0
	p.Y.Max = headroom(math.Max(p.Y.Max, m.TTFTSLOMs), 1)
	p.X.Max = headroom(p.X.Max, 1)
	if m.TTFTSLOMs > 0 {
		l := line(plotter.XYs{{X: p.X.Min, Y: m.TTFTSLOMs}, {X: p.X.Max, Y: m.TTFTSLOMs}}, sloColour, dashed, 1.2)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("TTFT SLO %s ms", fmtTick(m.TTFTSLOMs)), l)
	}
	return Figure{Name: "plan_frontier", Plot: p}, nil
}
