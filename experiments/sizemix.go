package experiments

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/report"
	"github.com/fleetsim/fleetsim/experiments/results"
	"github.com/fleetsim/fleetsim/experiments/scenario"
	"github.com/fleetsim/fleetsim/models/fleet"
)

// MixAxis is one of the two pool sizes a two-axis sizing searches: a GPU
// group of a heterogeneous fleet, or a disaggregated fleet's prefill or
// decode pool.
type MixAxis struct {
	Name            string // "h100", "prefill"
	Pool            string // what the axis counts: "group h100", "prefill pool", "decode pool"
	GPU             string // the GPU type of its replicas: "H100"
	GPUsPer         int    // GPUs per replica
	PricePerGPUHour float64
	// Min is the fewest replicas the axis may have: 0 when the other axis
	// can serve alone (GPU groups), 1 when both pools are needed (prefill
	// and decode), more for an autoscaled pool (its count is the
	// autoscaler's cap, which holds its min_replicas and initial_replicas,
	// beside the replicas in repair).
	Min int
	// Down is how many of the axis's replicas are in repair at every size
	// (a group's down_replicas): counts up to it serve nothing, and are
	// not tried.
	Down int
	// Spares is the axis's warm spares in the base scenario (a group's
	// spares, or failures.spares and failures.decode_spares, with
	// [failures]); each point pays those of its own scenario
	// (MixPoint.Spares): at every size that has the group, none at 0.
	Spares int
	// Spot is how many of the axis's replicas are on spot (a group's
	// spot_replicas, [spot] replicas of the group it names, or, with
	// [disagg], [spot] replicas and decode_replicas), at
	// SpotFraction of the price: as many as a size has beside its Down.
	Spot         int
	SpotFraction float64
}

// spotAt is how many of n replicas of the axis are on spot: Spot, at most
// the ones not in repair.
func (a MixAxis) spotAt(n int) int { return scenario.SpotFit(a.Spot, n, a.Down) }

// MixPoint is one pair of pool sizes evaluated by SizeMix.
type MixPoint struct {
	Counts      []int // replicas per axis
	Spares      []int // warm spares per axis, beside Counts (paid, not serving)
	GPUs        int
	USDPerMonth float64 // at the axes' prices for HoursPerMonth
	// PaidUSDPerMonth is what its runs paid (the mean of their
	// cost.usd_per_month): USDPerMonth, or less where an autoscaler
	// provisioned fewer than the counts (its caps).
	PaidUSDPerMonth float64
	Met             bool
	Bounds          []float64 // per target: the one-sided confidence bound
	Arm             *report.ArmResult
}

// Label names the point: "h100=3 b200=2".
func (p *MixPoint) Label(axes [2]MixAxis) string {
	return fmt.Sprintf("%s=%d %s=%d", axes[0].Name, p.Counts[0], axes[1].Name, p.Counts[1])
}

// MixResult is the answer of SizeMix: the cheapest pair of pool sizes that
// meets the targets, and, where an axis can serve alone, that axis alone.
type MixResult struct {
	Targets    []scenario.Target
	Confidence float64
	Axes       [2]MixAxis
	// Autoscaled: a pool is autoscaled, so its count is a cap, priced in
	// USDPerMonth at every replica (the search's order) and paid less
	// (PaidUSDPerMonth).
	Autoscaled bool
	// Pure[i] is the fewest replicas of axis i alone that meet the
	// targets; nil when the axis cannot serve alone (Min > 0) or none did
	// up to the search's bound.
	Pure [2]*MixPoint
	// Best is the cheapest point that meets them; ties go to fewer GPUs,
	// then to fewer of the first axis.
	Best *MixPoint
	// Frontier is, for each count of the first axis tried, the fewest of
	// the second that meet the targets with it.
	Frontier []*MixPoint
	// Evaluated is every point run, in order.
	Evaluated []*MixPoint
}

// SizeMix sizes a fleet with two pool sizes, at confidence conf as Size
// does for one: the two groups of a heterogeneous fleet ([[cluster.groups]],
// the cheapest mix, each group alone for comparison), or the prefill and
// decode pools of a disaggregated one ([disagg]). It assumes, as Size does,
// that more replicas never make the SLO harder to meet. Every point runs
// the base scenario's replications with the same seeds.
func SizeMix(base *scenario.Scenario, targets []scenario.Target, conf float64, opt RunOptions) (*MixResult, error) {
	if conf <= 0 || conf >= 1 {
		return nil, fmt.Errorf("confidence must be in (0, 1), found %v", conf)
	}
	switch {
	case base.Disagg.Enabled:
		d := base.Disagg.DisaggConfig
		d.ResolveDefaults(base.Cluster)
		// Each pool at its own GPU's price, as the runs bill it.
		axes := [2]MixAxis{
			{Name: "prefill", Pool: "prefill pool", GPU: base.Cluster.GPU, GPUsPer: base.Cluster.GPUsPerReplica(), PricePerGPUHour: base.Price(), Min: 1,
				Down: max(base.Run.DownReplicas, 0), Spot: max(base.Spot.Replicas, 0), SpotFraction: base.Spot.PriceFraction},
			{Name: "decode", Pool: "decode pool", GPU: d.Decode.GPU, GPUsPer: d.Decode.GPUsPerReplica(), PricePerGPUHour: base.DecodePrice(), Min: 1,
				Spot: max(base.Spot.DecodeReplicas, 0), SpotFraction: base.Spot.PriceFraction},
		}
		if base.Failures.Enabled {
			axes[0].Spares, axes[1].Spares = max(base.Failures.Spares, 0), max(base.Failures.DecodeSpares, 0)
		}
		// An autoscaled pool's count is its autoscaler's cap: never below
		// what it starts with (as Size's floor).
		if a := base.Autoscale; a.Enabled {
			axes[0].Min = axes[0].Down + max(a.MinReplicas, a.InitialReplicas, 1)
		}
		if a := base.Disagg.Autoscale; a.Enabled {
			axes[1].Min = max(a.MinReplicas, a.InitialReplicas, 1)
		}
		return sizeTwo(base, axes, func(a, b int) []scenario.Overlay {
			ovs := []scenario.Overlay{OverrideOverlay("cluster.replicas", strconv.Itoa(a)), OverrideOverlay("disagg.decode.replicas", strconv.Itoa(b))}
			// [spot] replicas of each pool: as many as fit beside those in repair.
			if axes[0].Spot > 0 {
				ovs = append(ovs, OverrideOverlay("spot.replicas", strconv.Itoa(axes[0].spotAt(a))))
			}
			if axes[1].Spot > 0 {
				ovs = append(ovs, OverrideOverlay("spot.decode_replicas", strconv.Itoa(axes[1].spotAt(b))))
			}
			return ovs
		}, func(sc *scenario.Scenario) [2]int {
			if !sc.Failures.Enabled {
				return [2]int{}
			}
			// (failures.spare_coverage sizes them for each pool's count.)
			return [2]int{max(sc.Failures.Spares, 0), max(sc.Failures.DecodeSpares, 0)}
		}, targets, conf, opt)
	case len(base.Cluster.Groups) == 2:
		groups := base.Cluster.Groups
		var axes [2]MixAxis
		for i, g := range groups {
			axes[i] = MixAxis{Name: g.Name, Pool: "group " + g.Name, GPU: g.GPU, GPUsPer: g.TP, PricePerGPUHour: base.GroupPrice(g), Down: max(g.DownReplicas, 0),
				Spot: max(g.SpotReplicas, 0), SpotFraction: base.Spot.PriceFraction}
			if base.Failures.Enabled {
				axes[i].Spares = max(g.Spares, 0)
			}
			if base.Spot.Group != "" && base.Spot.Group == g.Name {
				axes[i].Spot = max(base.Spot.Replicas, 0)
			}
		}
		return sizeTwo(base, axes, func(a, b int) []scenario.Overlay {
			ovs := []scenario.Overlay{mixOverlay(groups, a, b, base.Failures.Enabled && base.Failures.SpareCoverage != 0)}
			for i, n := range [2]int{a, b} {
				if base.Spot.Group != "" && base.Spot.Group == groups[i].Name {
					// [spot] replicas of the group it names: as many as fit.
					ovs = append(ovs, OverrideOverlay("spot.replicas", strconv.Itoa(axes[i].spotAt(n))))
				}
			}
			return ovs
		}, func(sc *scenario.Scenario) [2]int {
			var n [2]int
			if sc.Failures.Enabled {
				for i, g := range sc.Cluster.Groups[:2] {
					n[i] = max(g.Spares, 0) // none at a count of 0 (groupsOverlay)
				}
			}
			return n
		}, targets, conf, opt)
	}
	return nil, fmt.Errorf("%s: size searches two pool sizes for a fleet of two [[cluster.groups]] or a [disagg] fleet; the scenario has %d groups", base.Name, len(base.Cluster.Groups))
}

// maxMixReplicas bounds each axis's search; maxMixSteps the counts of the
// first axis tried beside the second.
const (
	maxMixReplicas = 256
	maxMixSteps    = 64
)

// sizeTwo is SizeMix's search over two axes. An axis that can serve alone
// (Min 0) is first sized alone (doubling, then bisecting). Then, for each
// count a of the first axis from its minimum — below its pure size when it
// has one — the fewest b of the second that meet the targets beside it is
// bisected (doubled first while no bound is known). b never needs to grow
// as a does, so each bisection is bounded by the last; the walk stops when
// b reaches its minimum or a alone costs more than the best found.
//
// spares is the warm spares of each axis in a point's scenario, which its
// GPUs and price count beside its replicas.
func sizeTwo(base *scenario.Scenario, axes [2]MixAxis, overlay func(a, b int) []scenario.Overlay, spares func(*scenario.Scenario) [2]int,
	targets []scenario.Target, conf float64, opt RunOptions) (*MixResult, error) {
	res := &MixResult{Targets: targets, Confidence: conf, Axes: axes, Autoscaled: base.Autoscale.Enabled || base.Disagg.Autoscale.Enabled}
	cache := map[[2]int]*MixPoint{}
	eval := func(a, b int) (*MixPoint, error) {
		key := [2]int{a, b}
		if p, ok := cache[key]; ok {
			return p, nil
		}
		sc, err := base.Derive(overlay(a, b)...)
		if err != nil {
			return nil, err
		}
		reps, err := runMany([]*scenario.Scenario{sc}, opt)
		if err != nil {
			return nil, err
		}
		sp := spares(sc)
		p := &MixPoint{Counts: []int{a, b}, Spares: sp[:], Arm: report.NewArmResult(fmt.Sprintf("%s=%d,%s=%d", axes[0].Name, a, axes[1].Name, b), reps[0])}
		for i, n := range p.Counts {
			ax := axes[i]
			gpus := n * ax.GPUsPer
			if n > 0 { // its spares too
				gpus += p.Spares[i] * ax.GPUsPer
			}
			p.GPUs += gpus
			// Its spot replicas at the spot fraction of the price.
			spotGPUs := ax.spotAt(n) * ax.GPUsPer
			p.USDPerMonth += (float64(gpus-spotGPUs) + float64(spotGPUs)*ax.SpotFraction) * ax.PricePerGPUHour * report.HoursPerMonth
		}
		p.PaidUSDPerMonth = report.StatMap(p.Arm.Stats)["cost.usd_per_month"].Mean
		p.Met, p.Bounds = meets(p.Arm, targets, conf)
		cache[key] = p
		res.Evaluated = append(res.Evaluated, p)
		return p, nil
	}
	// fewest finds the fewest n in (lo, maxMixReplicas] with at(n) met,
	// given that at(lo) misses (or is not allowed) and, when hi > 0, at(hi)
	// meets; nil when none does, or when doubling n twice running moved no
	// missed target by 1% (this axis is not what limits the fleet).
	fewest := func(lo, hi int, at func(int) (*MixPoint, error)) (*MixPoint, error) {
		if hi == 0 {
			hi = lo + 1
			var prev *MixPoint
			stalled := 0
			for {
				p, err := at(hi)
				if err != nil {
					return nil, err
				}
				if p.Met {
					break
				}
				if prev != nil && !boundsImproved(prev.Bounds, p.Bounds, targets) {
					stalled++
				} else {
					stalled = 0
				}
				if stalled >= 2 || hi*2 > maxMixReplicas {
					return nil, nil
				}
				prev, lo, hi = p, hi, hi*2
			}
		}
		hi, err := bisectMet(lo, hi, func(n int) (bool, error) {
			p, err := at(n)
			return err == nil && p.Met, err
		})
		if err != nil {
			return nil, err
		}
		p, err := at(hi)
		if err != nil || !p.Met {
			return nil, err
		}
		return p, nil
	}
	var err error
	if axes[0].Min == 0 && axes[1].Min == 0 {
		if res.Pure[0], err = fewest(axes[0].Down, 0, func(n int) (*MixPoint, error) { return eval(n, 0) }); err != nil {
			return nil, err
		}
		if res.Pure[1], err = fewest(axes[1].Down, 0, func(n int) (*MixPoint, error) { return eval(0, n) }); err != nil {
			return nil, err
		}
	}
	aMax := maxMixSteps
	if res.Pure[0] != nil {
		aMax = res.Pure[0].Counts[0] - 1 // a alone suffices from there on
	}
	bHi := 0 // a count of the second axis known to suffice (0: none yet)
	if res.Pure[1] != nil {
		bHi = res.Pure[1].Counts[1]
	}
	best := math.Inf(1)
	for _, p := range res.Pure {
		if p != nil {
			best = math.Min(best, p.USDPerMonth)
		}
	}
	bMin := axes[1].Min
	// (A count up to an axis's Down serves nothing: such a mix costs more
	// than the other axis alone, which is sized above.)
	for a := max(axes[0].Min, 1, axes[0].Down+1); a <= aMax; a++ {
		floor := float64(a*axes[0].GPUsPer)*axes[0].PricePerGPUHour*report.HoursPerMonth +
			float64(bMin*axes[1].GPUsPer)*axes[1].PricePerGPUHour*report.HoursPerMonth
		if floor >= best {
			break // every point from here on costs more than the best found
		}
		// (a, 0) misses or is not allowed: a is below the first axis's
		// pure size, or the second axis is a pool that must exist.
		p, err := fewest(max(axes[1].Down, bMin-1), bHi, func(n int) (*MixPoint, error) { return eval(a, n) })
		if err != nil {
			return nil, err
		}
		if p == nil {
			continue // a is too few for any b up to the bound
		}
		res.Frontier = append(res.Frontier, p)
		best = math.Min(best, p.USDPerMonth)
		bHi = p.Counts[1]
		if bHi <= max(bMin, 1, axes[1].Down+1) {
			break // more of the first axis cannot need fewer of the second
		}
	}
	var cands []*MixPoint
	cands = append(cands, res.Frontier...)
	for _, p := range res.Pure {
		if p != nil {
			cands = append(cands, p)
		}
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("%s: no pair of pool sizes up to %d meets the SLO", base.Name, maxMixReplicas)
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

// groupsOverlay sets the groups' counts to a and b, their down_replicas
// to at most that, their spot_replicas to at most what is left and their
// spares to none at a count of 0, every other key as written.
func groupsOverlay(groups []fleet.GroupConfig, a, b int) scenario.Overlay {
	return mixOverlay(groups, a, b, false)
}

// mixOverlay is groupsOverlay; with coverage (failures.spare_coverage
// sizes the groups' spares) it sets no spares, which the coverage sizes
// for each group's count.
func mixOverlay(groups []fleet.GroupConfig, a, b int, coverage bool) scenario.Overlay {
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
		// A group's down_replicas hold at every size (at most all of it:
		// the search may try fewer), and its spares at every size that
		// has the group.
		spares := max(g.Spares, 0)
		if n == 0 {
			spares = 0
		}
		down := min(max(g.DownReplicas, 0), n)
		spot := scenario.SpotFit(g.SpotReplicas, n, down) // as many as fit beside those in repair
		sparesKey := fmt.Sprintf(", spares = %d", spares)
		if coverage {
			sparesKey = ""
		}
		fmt.Fprintf(&sb, "{name = %q, gpu = %q, tp = %d, replicas = %d, price_per_gpu_hour = %s, model = %q, down_replicas = %d%s, spot_replicas = %d}",
			g.Name, g.GPU, g.TP, n, strconv.FormatFloat(g.PricePerGPUHour, 'g', -1, 64), g.Model, down, sparesKey, spot)
	}
	sb.WriteString("]\n")
	return scenario.Overlay{Name: fmt.Sprintf("size mix %s=%d %s=%d", groups[0].Name, a, groups[1].Name, b), TOML: []byte(sb.String())}
}

// mixRow is one fleet of the answer: its label, GPUs, $ per month and
// bounds (nil p: none met the SLO).
type mixRow struct {
	label string
	p     *MixPoint
}

// mixParts are the sizing answer's parts, rendered by Table and Markdown:
// its headline, the axes, the fleets (the pure ones, then the cheapest),
// the frontier and the notes.
func (r *MixResult) mixParts(name string) (head string, axes []string, rows, frontier []mixRow, notes []string) {
	head = fmt.Sprintf("cheapest %s=N %s=M of %s for %s at %.0f%% confidence (one-sided bound of the mean over replications)",
		r.Axes[0].Name, r.Axes[1].Name, name, describeTargets(r.Targets), 100*r.Confidence)
	for _, ax := range r.Axes {
		axes = append(axes, fmt.Sprintf("%s = replicas of the %s: %d× %s each at $%.2f per GPU-hour", ax.Name, ax.Pool, ax.GPUsPer, ax.GPU, ax.PricePerGPUHour))
	}
	for i, ax := range r.Axes {
		if ax.Min > 0 {
			continue // cannot serve alone
		}
		label := "only " + ax.Name
		if p := r.Pure[i]; p != nil {
			label = fmt.Sprintf("only %s ×%d", ax.Name, p.Counts[i])
		}
		rows = append(rows, mixRow{label, r.Pure[i]})
	}
	rows = append(rows, mixRow{"cheapest: " + r.Best.Label(r.Axes), r.Best})
	for _, p := range r.Frontier {
		frontier = append(frontier, mixRow{p.Label(r.Axes), p})
	}
	cheapestPure := math.Inf(1)
	for _, p := range r.Pure {
		if p != nil {
			cheapestPure = math.Min(cheapestPure, p.USDPerMonth)
		}
	}
	switch {
	case math.IsInf(cheapestPure, 1):
	case r.Best.USDPerMonth < cheapestPure:
		notes = append(notes, fmt.Sprintf("the mix costs %.1f%% less than the cheapest single-GPU fleet", 100*(1-r.Best.USDPerMonth/cheapestPure)))
	default:
		notes = append(notes, "no mix is cheaper than the cheapest single-GPU fleet")
	}
	if r.Autoscaled {
		notes = append(notes, fmt.Sprintf("autoscaled: each count is the autoscaler's cap (at least %s %d, %s %d) and $ per month prices every replica of it;\nthe cheapest's runs paid $%.0f per month (provisioned replicas only)",
			r.Axes[0].Name, r.Axes[0].Min, r.Axes[1].Name, r.Axes[1].Min, r.Best.PaidUSDPerMonth))
	}
	var spares []string
	for i, ax := range r.Axes {
		if n := r.Best.Spares[i]; n > 0 {
			spares = append(spares, fmt.Sprintf("%s %d", ax.Name, n))
		}
	}
	if len(spares) > 0 {
		notes = append(notes, fmt.Sprintf("GPUs and $ count the %s warm spares (the cheapest's: %s), kept at every count but 0", r.whose(), strings.Join(spares, ", ")))
	}
	var spot []string
	for _, ax := range r.Axes {
		if ax.Spot > 0 {
			spot = append(spot, fmt.Sprintf("%s %d", ax.Name, ax.Spot))
		}
	}
	if len(spot) > 0 {
		notes = append(notes, fmt.Sprintf("$ prices the %s spot replicas (%s; fewer where a count has fewer) at %g of the price", r.whose(), strings.Join(spot, ", "), r.Axes[0].SpotFraction))
	}
	return head, axes, rows, frontier, notes
}

// mixHeader heads the fleets' columns of a sizing answer.
var mixHeader = []string{"fleet", "GPUs", "$ per month", "bounds"}

// mixCells is a fleet's row of the answer, as Table and Markdown show it.
func (r *MixResult) mixCells(q mixRow) []string {
	if q.p == nil {
		return []string{q.label, "-", "-", "no size up to the search bound meets the SLO"}
	}
	return []string{q.label, strconv.Itoa(q.p.GPUs), fmt.Sprintf("%.0f", q.p.USDPerMonth), boundsText(q.p, r.Targets)}
}

// mixFrontierHead introduces the frontier of a sizing answer.
func (r *MixResult) mixFrontierHead() string {
	return fmt.Sprintf("frontier (fewest %s for each %s count tried)", r.Axes[1].Name, r.Axes[0].Name)
}

// Table is the sizing answer as text.
func (r *MixResult) Table(name string) string {
	var b strings.Builder
	head, axes, rows, frontier, notes := r.mixParts(name)
	fmt.Fprintf(&b, "%s:\n\n", head)
	for _, a := range axes {
		fmt.Fprintf(&b, "  %s\n", a)
	}
	b.WriteString("\n")
	row := func(c []string) { fmt.Fprintf(&b, "%-28s %6s %14s  %s\n", c[0], c[1], c[2], c[3]) }
	row(mixHeader)
	for _, q := range rows {
		row(r.mixCells(q))
	}
	if len(frontier) > 0 {
		fmt.Fprintf(&b, "\n%s:\n", r.mixFrontierHead())
		for _, q := range frontier {
			row(r.mixCells(q))
		}
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "\n%s\n", n)
	}
	return b.String()
}

// Markdown is the sizing answer for summary.md: Table's parts, with the
// fleets and the frontier as Markdown tables.
func (r *MixResult) Markdown(name string) string {
	var b strings.Builder
	head, axes, rows, frontier, notes := r.mixParts(name)
	fmt.Fprintf(&b, "The %s.\n\n", head)
	for _, a := range axes {
		fmt.Fprintf(&b, "- %s\n", a)
	}
	b.WriteString("\n")
	cells := func(qs []mixRow) [][]string {
		var out [][]string
		for _, q := range qs {
			out = append(out, r.mixCells(q))
		}
		return out
	}
	b.WriteString(report.MarkdownTable(mixHeader, cells(rows)))
	if len(frontier) > 0 {
		fmt.Fprintf(&b, "\nThe %s:\n\n%s", r.mixFrontierHead(), report.MarkdownTable(mixHeader, cells(frontier)))
	}
	for _, n := range notes {
		fmt.Fprintf(&b, "\n%s.\n", strings.ReplaceAll(n, "\n", " "))
	}
	return b.String()
}

// whose is what the axes are, for the notes: "groups'" or "pools'".
func (r *MixResult) whose() string {
	if r.Axes[0].Min > 0 {
		return "pools'"
	}
	return "groups'"
}

func describeTargets(ts []scenario.Target) string {
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

func boundsText(p *MixPoint, ts []scenario.Target) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s %.4g", t.Name, p.Bounds[i])
	}
	return strings.Join(parts, ", ")
}

// CSV is size_mix.csv: one row per evaluated point.
func (r *MixResult) CSV() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "%s,%s,gpus,usd_per_month,met", r.Axes[0].Name, r.Axes[1].Name)
	for _, t := range r.Targets {
		fmt.Fprintf(&b, ",%s_bound", t.Name)
	}
	fmt.Fprintf(&b, ",%s,%s", results.SLOAttainment, results.SLOAttainmentCI95)
	b.WriteString("\n")
	for _, p := range r.Evaluated {
		fmt.Fprintf(&b, "%d,%d,%d,%s,%t", p.Counts[0], p.Counts[1], p.GPUs, strconv.FormatFloat(results.Round6(p.USDPerMonth), 'f', -1, 64), p.Met)
		for _, v := range p.Bounds {
			fmt.Fprintf(&b, ",%s", strconv.FormatFloat(results.Round6(v), 'f', -1, 64))
		}
		var m map[string]report.Stat
		if p.Arm != nil {
			m = report.StatMap(p.Arm.Stats)
		}
		fmt.Fprintf(&b, ",%s,%s", sloAttainment(m), sloAttainmentCI95(m))
		b.WriteString("\n")
	}
	return []byte(b.String())
}
