package plot

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/fleetsim/fleetsim/experiments/results"
)

// ABQuantiles are the TTFT quantiles the ab_quantiles figure groups its
// bars by, in order: the label on the x axis and the replications.csv
// column (a summary.json key) it comes from.
var ABQuantiles = []struct{ Label, Column string }{
	{"p50", "latency_ms.ttft.p50"},
	{"p90", "latency_ms.ttft.p90"},
	{"p99", "latency_ms.ttft.p99"},
	{"p99.9", "latency_ms.ttft.p999"},
}

// ArmQuantile is one arm's TTFT quantile over the replications of
// replications.csv: the mean and the half-width of its Student-t 95%
// confidence interval (0 with one replication).
type ArmQuantile struct {
	Arm          string
	Quantile     string // a label of ABQuantiles: "p50", "p90", "p99", "p99.9"
	MeanMs       float64
	CI95Ms       float64
	Replications int
}

// readABQuantiles reads replications.csv and returns, for every arm in order
// of first appearance and every ABQuantiles column present, the mean and
// 95% CI of that column over the arm's rows. An empty cell (an arm that
// lacks the metric) is left out; a value that is not a finite number ≥ 0
// is an error naming the file and line.
func readABQuantiles(t *table) ([]ArmQuantile, error) {
	if err := t.require(results.Arm); err != nil {
		return nil, err
	}
	type key struct{ arm, q string }
	vals := map[key][]float64{}
	var arms []string
	seen := map[string]bool{}
	for i := range t.len() {
		c := cursor{t: t, i: i}
		arm := c.str(results.Arm)
		if !seen[arm] {
			seen[arm] = true
			arms = append(arms, arm)
		}
		for _, q := range ABQuantiles {
			if !t.has(q.Column) {
				continue
			}
			v := c.optNum(q.Column)
			if c.err == nil && v < 0 {
				c.fail(q.Column, "%v is negative", v)
			}
			if c.err != nil {
				return nil, c.err
			}
			if !math.IsNaN(v) {
				vals[key{arm, q.Label}] = append(vals[key{arm, q.Label}], v)
			}
		}
	}
	var out []ArmQuantile
	for _, arm := range arms {
		for _, q := range ABQuantiles {
			xs := vals[key{arm, q.Label}]
			if len(xs) == 0 {
				continue
			}
			mean, ci := meanCI95(xs)
			out = append(out, ArmQuantile{Arm: arm, Quantile: q.Label, MeanMs: mean, CI95Ms: ci, Replications: len(xs)})
		}
	}
	return out, nil
}

// meanCI95 is the mean of xs and the half-width of its two-sided Student-t
// 95% confidence interval, as experiments.MeanCI computes it; 0 for fewer
// than two values.
func meanCI95(xs []float64) (mean, half float64) {
	for _, x := range xs {
		mean += x
	}
	n := float64(len(xs))
	mean /= n
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(0.975)
	return mean, t * math.Sqrt(ss/(n-1)) / math.Sqrt(n)
}

// ABQuantilesFigure draws the TTFT quantiles of an A/B run: for each of
// p50, p90, p99 and p99.9 (x, categorical) one bar per arm, side by side
// in arm order, at the mean over the replications, with an error bar for
// the 95% confidence interval (none with one replication). y is in ms, on
// a log scale when the values span 20× or more. The legend names the arms.
// The figure is named ab_quantiles. No quantiles at all is an error.
func ABQuantilesFigure(m Meta, qs []ArmQuantile) (Figure, error) {
	arms, byArm := groupBy(qs, func(q ArmQuantile) string { return q.Arm })
	var labels []string
	for _, q := range ABQuantiles {
		for _, x := range qs {
			if x.Quantile == q.Label {
				labels = append(labels, q.Label)
				break
			}
		}
	}
	if len(labels) == 0 {
		return Figure{}, fmt.Errorf("plot: no TTFT quantiles for the A/B figure")
	}
	minN, maxN := math.MaxInt, 0
	var vals []float64
	for _, q := range qs {
		minN, maxN = min(minN, q.Replications), max(maxN, q.Replications)
		vals = append(vals, q.MeanMs)
	}
	title := "TTFT quantiles per arm, mean of "
	if minN == maxN {
		title += fmt.Sprintf("%d replications", maxN)
	} else {
		title += fmt.Sprintf("%d–%d replications", minN, maxN)
	}
	if maxN > 1 {
		title += " ± 95% CI"
	}
	p := newPlot(m, title, "TTFT quantile", "time to first token (ms)")
	sy := scale(wideRange(vals, 20))
	base := 0.0
	if sy {
		setLogY(p)
		lo := math.Inf(1)
		for _, q := range qs {
			if q.MeanMs > 0 {
				lo = math.Min(lo, math.Max(q.MeanMs-q.CI95Ms, q.MeanMs/2))
			}
		}
		base = math.Floor(math.Log10(lo))
	}
	var baseBars *plotter.BarChart
	if sy {
		b := make(plotter.Values, len(labels))
		for i := range b {
			b[i] = base
		}
		baseBars = &plotter.BarChart{Values: b}
	}
	n := len(arms)
	width := vg.Points(math.Min(24, 64/float64(n)))
	for i, arm := range arms {
		heights := make(plotter.Values, len(labels))
		var bars errBars
		for _, q := range byArm[arm] {
			x := -1
			for j, l := range labels {
				if l == q.Quantile {
					x = j
				}
			}
			if q.MeanMs > 0 {
				heights[x] = sy.f(q.MeanMs) - base
			}
			bars.add(sy, float64(x), q.MeanMs, q.CI95Ms)
		}
		b, err := plotter.NewBarChart(heights, width)
		if err != nil {
			return Figure{}, fmt.Errorf("plot: %w", err)
		}
		if baseBars != nil {
			b.StackOn(baseBars)
		}
		b.Color = colour(i)
		b.LineStyle.Width = 0
		b.Offset = width * vg.Length(float64(i)-float64(n-1)/2)
		p.Add(b)
		if len(bars.xys) > 0 {
			eb, err := plotter.NewYErrorBars(bars)
			if err != nil {
				return Figure{}, fmt.Errorf("plot: %w", err)
			}
			eb.Color = markColour
			eb.Width = vg.Points(1)
			eb.CapWidth = width / 2
			p.Add(offsetPlotter{eb, b.Offset})
		}
		p.Legend.Add(armLabel(m, arm), b)
	}
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.5, float64(len(labels))-0.5
	p.Y.Min = base
	return Figure{Name: "ab_quantiles", Plot: p}, nil
}

// offsetPlotter draws its plotter shifted right by dx, as BarChart.Offset
// shifts a bar, so error bars sit on their bars.
type offsetPlotter struct {
	*plotter.YErrorBars
	dx vg.Length
}

func (o offsetPlotter) Plot(c draw.Canvas, p *gplot.Plot) {
	c.Push()
	defer c.Pop()
	c.Translate(vg.Point{X: o.dx})
	o.YErrorBars.Plot(c, p)
}
