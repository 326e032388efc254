package experiments

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/models"
)

// MixPoint is one mix of group sizes evaluated by SizeMix.
type MixPoint struct {
	Counts      []int // replicas per group, in group order
	GPUs        int
	USDPerMonth float64 // the mix at its groups' prices for HoursPerMonth
	Met         bool
	Bounds      []float64 // per target: the one-sided confidence bound
	Arm         *ArmResult
}

// Label names the mix: "h100=3 b200=2".
func (p *MixPoint) Label(groups []models.GroupConfig) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = g.Name + "=" + strconv.Itoa(p.Counts[i])
	}
	return strings.Join(parts, " ")
}

// MixResult is the answer of SizeMix: the cheapest mix of two groups that
// meets the targets, and each group alone for comparison.
type MixResult struct {
	Targets    []Target
	Confidence float64
	Groups     []models.GroupConfig
	// Pure[i] is the fewest replicas of group i alone that meet the
	// targets (nil when none does up to the search's bound).
	Pure []*MixPoint
	// Best is the cheapest mix that meets them (a pure fleet when no mix
	// is cheaper); ties go to fewer GPUs, then to fewer of the first group.
	Best *MixPoint
	// Frontier is, for each count of the first group, the fewest of the
	// second that meet the targets with it.
	Frontier []*MixPoint
	// Evaluated is every mix run, in the order of first-group count, then
	// second.
	Evaluated []*MixPoint
}

// SizeMix finds the cheapest mix of a two-group fleet ([[cluster.groups]])
// that meets every target at confidence conf (as Size does for one kind):
// it sizes each group alone, then for every count a of the first group
// below its pure size bisects the fewest b of the second that meet the
// targets beside it, assuming, as Size does, that more replicas never make
// the SLO harder to meet. Every mix runs the base scenario's replications
// with the same seeds.
func SizeMix(base *Scenario, targets []Target, conf float64, opt RunOptions) (*MixResult, error) {
	if conf <= 0 || conf >= 1 {
		return nil, fmt.Errorf("confidence must be in (0, 1), found %v", conf)
	}
	groups := base.Cluster.Groups
	if len(groups) != 2 {
		return nil, fmt.Errorf("%s: size searches mixes of two groups; the scenario has %d", base.Name, len(groups))
	}
	res := &MixResult{Targets: targets, Confidence: conf, Groups: groups}
	cache := map[[2]int]*MixPoint{}
	eval := func(a, b int) (*MixPoint, error) {
		key := [2]int{a, b}
		if p, ok := cache[key]; ok {
			return p, nil
		}
		sc, err := base.Derive(groupsOverlay(groups, a, b))
		if err != nil {
			return nil, err
		}
		reps, err := runMany([]*Scenario{sc}, opt)
		if err != nil {
			return nil, err
		}
		p := &MixPoint{Counts: []int{a, b}, Arm: NewArmResult(fmt.Sprintf("%s=%d,%s=%d", groups[0].Name, a, groups[1].Name, b), reps[0])}
		for i, n := range p.Counts {
			g := groups[i]
			gpus := n * g.TP
			p.GPUs += gpus
			p.USDPerMonth += float64(gpus) * base.GroupPrice(g) * HoursPerMonth
		}
		p.Met, p.Bounds = meets(p.Arm, targets, conf)
		cache[key] = p
		res.Evaluated = append(res.Evaluated, p)
		return p, nil
	}
	// Each group alone: double from 1, then bisect.
	pure := func(i int) (*MixPoint, error) {
		at := func(n int) (*MixPoint, error) {
			if i == 0 {
				return eval(n, 0)
			}
			return eval(0, n)
		}
		lo, hi := 0, 1
		for {
			p, err := at(hi)
			if err != nil {
				return nil, err
			}
			if p.Met {
				break
			}
			if hi*2 > maxMixReplicas {
				return nil, nil
			}
			lo, hi = hi, hi*2
		}
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			p, err := at(mid)
			if err != nil {
				return nil, err
			}
			if p.Met {
				hi = mid
			} else {
				lo = mid
			}
		}
		return at(hi)
	}
	for i := range groups {
		p, err := pure(i)
		if err != nil {
			return nil, err
		}
		res.Pure = append(res.Pure, p)
	}
	if res.Pure[0] == nil && res.Pure[1] == nil {
		return nil, fmt.Errorf("%s: neither group alone meets the SLO with up to %d replicas", base.Name, maxMixReplicas)
	}
	// The second group's count that surely suffices with any a > 0.
	bMax := maxMixReplicas
	if res.Pure[1] != nil {
		bMax = res.Pure[1].Counts[1]
	}
	aMax := maxMixReplicas
	if res.Pure[0] != nil {
		aMax = res.Pure[0].Counts[0]
	}
	if res.Pure[1] == nil {
		// Without a pure second-group size there is no bound to bisect
		// below: the first group alone is the answer among what was tried.
		res.Best = res.Pure[0]
		return res, nil
	}
	for a := 1; a < aMax && a <= maxMixSteps; a++ {
		lo, hi := 0, bMax // (a, 0) misses: a is below the pure size
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			p, err := eval(a, mid)
			if err != nil {
				return nil, err
			}
			if p.Met {
				hi = mid
			} else {
				lo = mid
			}
		}
		p, err := eval(a, hi)
		if err != nil {
			return nil, err
		}
		if !p.Met {
			continue // more replicas hurt (noise): not on the frontier
		}
		res.Frontier = append(res.Frontier, p)
		if hi == 1 && lo == 0 {
			// One of the second group already suffices; larger a cannot
			// need fewer (except 0, which is the pure first group).
			break
		}
	}
	cands := append([]*MixPoint{}, res.Frontier...)
	for _, p := range res.Pure {
		if p != nil {
			cands = append(cands, p)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		x, y := cands[i], cands[j]
		if x.USDPerMonth != y.USDPerMonth {
			return x.USDPerMonth < y.USDPerMonth
		}
		if x.GPUs != y.GPUs {
			return x.GPUs < y.GPUs
		}
		return x.Counts[0] < y.Counts[0]
	})
	res.Best = cands[0]
	return res, nil
}

// maxMixReplicas bounds each group's search; maxMixSteps the counts of the
// first group tried beside the second.
const (
	maxMixReplicas = 256
	maxMixSteps    = 64
)

// groupsOverlay sets the groups' counts to a and b, every other key as
// written.
func groupsOverlay(groups []models.GroupConfig, a, b int) Overlay {
	var sb strings.Builder
	sb.WriteString("[cluster]\ngroups = [")
	for i, g := range groups {
		n := a
		if i == 1 {
			n = b
		}
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "{name = %q, gpu = %q, tp = %d, replicas = %d, price_per_gpu_hour = %s}",
			g.Name, g.GPU, g.TP, n, strconv.FormatFloat(g.PricePerGPUHour, 'g', -1, 64))
	}
	sb.WriteString("]\n")
	return Overlay{Name: fmt.Sprintf("size mix %s=%d %s=%d", groups[0].Name, a, groups[1].Name, b), TOML: []byte(sb.String())}
}

// Table is the sizing answer as text.
func (r *MixResult) Table(name string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "cheapest mix of %s for %s at %.0f%% confidence (one-sided bound of the mean over replications):\n\n",
		name, describeTargets(r.Targets), 100*r.Confidence)
	fmt.Fprintf(&b, "%-24s %6s %14s  %s\n", "fleet", "GPUs", "$ per month", "bounds")
	row := func(label string, p *MixPoint) {
		if p == nil {
			fmt.Fprintf(&b, "%-24s %6s %14s  %s\n", label, "-", "-", "no size up to the search bound meets the SLO")
			return
		}
		fmt.Fprintf(&b, "%-24s %6d %14.0f  %s\n", label, p.GPUs, p.USDPerMonth, boundsText(p, r.Targets))
	}
	for i, g := range r.Groups {
		label := "only " + g.Name
		if p := r.Pure[i]; p != nil {
			label = fmt.Sprintf("only %s ×%d", g.Name, p.Counts[i])
		}
		row(label, r.Pure[i])
	}
	row("cheapest: "+r.Best.Label(r.Groups), r.Best)
	if len(r.Frontier) > 0 {
		b.WriteString("\nfrontier (fewest of the second group for each count of the first):\n")
		for _, p := range r.Frontier {
			row(p.Label(r.Groups), p)
		}
	}
	cheapestPure := math.Inf(1)
	for _, p := range r.Pure {
		if p != nil {
			cheapestPure = math.Min(cheapestPure, p.USDPerMonth)
		}
	}
	if r.Best.USDPerMonth < cheapestPure {
		fmt.Fprintf(&b, "\nthe mix costs %.1f%% less than the cheapest single-GPU fleet\n", 100*(1-r.Best.USDPerMonth/cheapestPure))
	} else {
		b.WriteString("\nno mix is cheaper than the cheapest single-GPU fleet\n")
	}
	return b.String()
}

func describeTargets(ts []Target) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		op, v := "≥", fmt.Sprintf("%g%%", 100*t.Limit)
		if t.Upper {
			op, v = "≤", fmt.Sprintf("%g ms", t.Limit)
		}
		parts[i] = t.Name + " " + op + " " + v
	}
	return strings.Join(parts, ", ")
}

func boundsText(p *MixPoint, ts []Target) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s %.4g", t.Name, p.Bounds[i])
	}
	return strings.Join(parts, ", ")
}

// CSV is size_mix.csv: one row per evaluated mix.
func (r *MixResult) CSV() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%s,%s,gpus,usd_per_month,met", r.Groups[0].Name, r.Groups[1].Name)
	for _, t := range r.Targets {
		fmt.Fprintf(&b, ",%s_bound", t.Name)
	}
	b.WriteString("\n")
	for _, p := range r.Evaluated {
		fmt.Fprintf(&b, "%d,%d,%d,%s,%t", p.Counts[0], p.Counts[1], p.GPUs, strconv.FormatFloat(round6(p.USDPerMonth), 'f', -1, 64), p.Met)
		for _, v := range p.Bounds {
			fmt.Fprintf(&b, ",%s", strconv.FormatFloat(round6(v), 'f', -1, 64))
		}
		b.WriteString("\n")
	}
	return []byte(b.String())
}
