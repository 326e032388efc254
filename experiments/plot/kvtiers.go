package plot

import (
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/fleetsim/fleetsim/experiments/results"
)

// KVTierNames are the tiers of the kv_tiers figure, bottom to top, with the
// replications.csv column of each (HBM's is the rest of
// prefix_cache.hit_rate).
var KVTierNames = []struct{ Label, Column string }{
	{"HBM", ""},
	{"host DRAM", "kv_tiers.host_dram.hit_rate"},
	{"SSD", "kv_tiers.ssd.hit_rate"},
	{"shared store", "kv_tiers.store.hit_rate"},
}

// KVTierShare is the share of an arm's prompt tokens served from one tier
// instead of recomputed, the mean over its replications.
type KVTierShare struct {
	Arm   string
	Tier  string // a KVTierNames label
	Share float64
}

// readKVTiers reads replications.csv: for each arm in order of first
// appearance, the mean share per tier. Nothing when the run had no
// [kv_tiers] (no kv_tiers.* column).
func readKVTiers(t *table) ([]KVTierShare, error) {
	found := false
	for _, k := range KVTierNames[1:] {
		found = found || t.has(k.Column)
	}
	if !found || !t.has(results.Arm, "prefix_cache.hit_rate") {
		return nil, nil
	}
	sums := map[string][]float64{}
	counts := map[string]int{}
	var arms []string
	for i := range t.len() {
		c := cursor{t: t, i: i}
		arm := c.str(results.Arm)
		if _, ok := sums[arm]; !ok {
			arms = append(arms, arm)
			sums[arm] = make([]float64, len(KVTierNames))
		}
		total := c.optNum("prefix_cache.hit_rate")
		if math.IsNaN(total) {
			continue
		}
		counts[arm]++
		rest := total
		for j, k := range KVTierNames[1:] {
			if !t.has(k.Column) {
				continue
			}
			v := c.optNum(k.Column)
			if math.IsNaN(v) {
				continue
			}
			sums[arm][j+1] += v
			rest -= v
		}
		sums[arm][0] += math.Max(0, rest)
		if c.err != nil {
			return nil, c.err
		}
	}
	var out []KVTierShare
	for _, arm := range arms {
		if counts[arm] == 0 {
			continue
		}
		for j, k := range KVTierNames {
			if j == 0 || t.has(k.Column) {
				out = append(out, KVTierShare{Arm: arm, Tier: k.Label, Share: sums[arm][j] / float64(counts[arm])})
			}
		}
	}
	return out, nil
}

// KVTiersFigure draws where each arm's (or sweep point's) prompt tokens
// came from without being recomputed: stacked bars of the HBM prefix
// cache and each KV tier, as fractions of all prompt tokens, in arm order.
// The figure is named kv_tiers.
func KVTiersFigure(m Meta, s []KVTierShare) (Figure, error) {
	arms, byArm := groupBy(s, func(x KVTierShare) string { return x.Arm })
	if len(arms) == 0 {
		return Figure{}, fmt.Errorf("plot: no KV tier shares for the kv_tiers figure")
	}
	labels, xlabel := kvTierLabels(m, arms)
	p := newPlot(m, "Prompt tokens served from cache, by tier (mean over replications)", xlabel, "share of prompt tokens")
	width := vg.Points(math.Min(40, 320/float64(len(arms))))
	var below *plotter.BarChart
	top := 0.0
	for j, k := range KVTierNames {
		if _, ok := tierIn(s, k.Label); !ok {
			continue
		}
		h := make(plotter.Values, len(arms))
		for i, arm := range arms {
			for _, x := range byArm[arm] {
				if x.Tier == k.Label {
					h[i] = x.Share
				}
			}
		}
		b, err := plotter.NewBarChart(h, width)
		if err != nil {
			return Figure{}, fmt.Errorf("plot: %w", err)
		}
		b.Color = colour(j)
		b.LineStyle.Width = 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(k.Label, b)
	}
	for _, arm := range arms {
		var sum float64
		for _, x := range byArm[arm] {
			sum += x.Share
		}
		top = math.Max(top, sum)
	}
	p.NominalX(labels...)
	p.X.Min, p.X.Max = -0.5, float64(len(arms))-0.5
	p.Y.Min, p.Y.Max = 0, math.Max(0.05, math.Min(1, top*1.15))
	return Figure{Name: "kv_tiers", Plot: p}, nil
}

// tierIn reports whether s has shares of tier.
func tierIn(s []KVTierShare, tier string) (int, bool) {
	for i, x := range s {
		if x.Tier == tier {
			return i, true
		}
	}
	return -1, false
}

// kvTierLabels names the bars: a sweep over one key shows its values, the
// key (its last part) on the x axis; otherwise each arm's legend label.
func kvTierLabels(m Meta, arms []string) ([]string, string) {
	labels := make([]string, len(arms))
	key := ""
	for i, arm := range arms {
		k, v, ok := strings.Cut(arm, "=")
		if !ok || strings.Contains(v, " ") || (key != "" && k != key) {
			for j, a := range arms {
				labels[j] = armLabel(m, a)
			}
			return labels, ""
		}
		key, labels[i] = k, v
	}
	return labels, key[strings.LastIndex(key, ".")+1:]
}
