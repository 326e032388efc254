package failures

import (
	"errors"
	"fmt"
	"github.com/fleetsim/fleetsim/internal/heapx"
	"math"
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/sim"
)

// maxGeneratedHours stops a generator after about 200 years of simulated
// time, well inside sim.Time's range.
const maxGeneratedHours = 200 * 365 * 24

// Generator produces a profile's failures on a topology, in time order, at
// O(1) (exponential) or O(log failures) (Weibull) cost per failure: never a
// per-GPU or per-unit tick.
//
// Exponential: every row is a Poisson process of rate PerGPUHour·GPUs, so
// the whole fleet is one Poisson process of rate RatePerGPUHour·GPUs
// (superposition). Each failure draws its row with probability proportional
// to the row's rate and a GPU uniformly; the failed unit is the row's unit
// (scope) holding that GPU, so larger units fail proportionally more often.
//
// Weibull: every unit of every row is a renewal process whose lifetimes are
// Weibull(shape k) with mean 1/(its rate); a failed unit is replaced at once
// (age 0). The units that have never failed are one cohort per row and unit
// size: given m survivors at age s, the next of them fails at age
// λ·((s/λ)^k + E/m)^(1/k) with E ~ Exp(1), which one is uniform among the
// survivors (a sparse Fisher-Yates shuffle), so the cohort costs O(1) per
// failure and O(failures) memory. Replaced units each hold one entry of a
// min-heap. Both are exact.
//
// Rates run per unit position: a failed unit is taken to be replaced at
// once (by a spare, or by the unit itself after repair), so the fleet's
// failure rate does not fall while units are in repair, and a later event
// may hit a position whose earlier repair has not finished. Consumers that
// track hardware decide what that means (a training job's spare pool; the
// Tally counts each GPU down once).
//
// Draws per failure, all from the one stream given: the time (Exp), the row
// (Float64, exponential only), the GPU or unit (IntN), the repair time
// (nothing for a fixed repair time) and the precursor (Float64, only for rows
// that may have one).
type Generator struct {
	rows  []Row
	rates []float64    // per GPU-hour, rows with rate > 0 only
	rep   []RepairDist // per row
	esc   []bool       // per row: repaired through the escalation pipeline
	pipe  *Escalation
	topo  Topology
	rng   *rand.Rand
	gpus  int
	// exponential
	weib    bool
	cumRate []float64
	total   float64 // per hour, whole fleet
	nowH    float64
	// Weibull
	shape, invShape float64
	age0            float64
	heap            entryHeap
	cohorts         []cohort
	done            bool
}

// NewGenerator returns a generator of p's failures on topo drawing from rng
// (the caller's named stream, e.g. sim.NewStream(seed, "failures")). It
// returns an error if p or topo is invalid or rng is nil.
func NewGenerator(p *Profile, topo Topology, rng *rand.Rand) (*Generator, error) {
	if p == nil || rng == nil {
		return nil, errors.New("failures: NewGenerator needs a profile and a random stream")
	}
	if err := p.Check(); err != nil {
		return nil, err
	}
	if err := topo.Check(); err != nil {
		return nil, err
	}
	g := &Generator{topo: topo, rng: rng, gpus: topo.GPUs(), pipe: p.Escalation}
	for _, r := range p.Rows {
		if r.PerGPUHour > 0 {
			g.rows = append(g.rows, r)
			g.rates = append(g.rates, r.PerGPUHour)
			g.rep = append(g.rep, p.RepairOf(&r))
			g.esc = append(g.esc, p.Escalation != nil && r.Repair == nil && r.Action != ActionRestartApp &&
				r.Mode != ModeFailSlow && r.Mode != ModeNVLinkDegraded)
		}
	}
	if len(g.rows) == 0 {
		g.done = true
		return g, nil
	}
	if p.TTF.weibull() {
		g.initWeibull(p.TTF)
		return g, nil
	}
	sum := 0.0
	for _, r := range g.rates {
		sum += r
		g.cumRate = append(g.cumRate, sum)
	}
	g.total = sum * float64(g.gpus)
	return g, nil
}

// Err is always nil: generators do not fail.
func (g *Generator) Err() error { return nil }

// Next returns the next failure. It returns ok=false only when no row has
// a positive rate or after about 200 simulated years.
func (g *Generator) Next() (Event, bool) {
	if g.done {
		return Event{}, false
	}
	if g.weib {
		return g.nextWeibull()
	}
	g.nowH += g.rng.ExpFloat64() / g.total
	if g.nowH > maxGeneratedHours {
		g.done = true
		return Event{}, false
	}
	u := g.rng.Float64() * g.cumRate[len(g.cumRate)-1]
	i := 0
	for i < len(g.cumRate)-1 && g.cumRate[i] <= u {
		i++
	}
	gpu := g.rng.IntN(g.gpus)
	r := &g.rows[i]
	return g.event(i, g.topo.UnitOf(r.Scope, gpu), g.nowH), true
}

// event builds the failure of unit of row ri at nowH hours, drawing its
// repair time and precursor.
func (g *Generator) event(ri int, unit int, nowH float64) Event {
	r := &g.rows[ri]
	t := sim.FromSeconds(nowH * 3600)
	first, n := g.topo.UnitGPUs(r.Scope, unit)
	ev := Event{
		Time: t, Category: r.Category, Label: r.Label, Component: r.Component, Mode: r.Mode,
		Scope: r.Scope, Unit: unit, FirstGPU: first, GPUs: n, Xid: r.Xid, Action: r.Action,
		SpeedFraction: 1, NVLinkFraction: 1, Precursor: NoPrecursor,
	}
	if g.esc[ri] {
		ev.Repair, ev.RepairPath = g.pipe.draw(r.Action, g.rng, func(d RepairDist) sim.Time { return d.Draw(g.rng) })
	} else {
		ev.Repair = g.rep[ri].Draw(g.rng)
	}
	switch {
	case r.Mode == ModeFailSlow:
		ev.SpeedFraction = r.SpeedFraction
	case r.Mode == ModeNVLinkDegraded:
		// Degraded, not down: the domain runs on until the part is replaced.
		ev.SpeedFraction = r.SpeedFraction
		ev.NVLinkFraction = r.NVLinkFraction
		if ev.NVLinkFraction == 0 {
			ev.NVLinkFraction = g.topo.DegradedNVLinkFraction()
		}
	case r.Action == ActionRestartApp:
	case (r.Action == ActionRebootNode || r.Action == ActionRMA) && r.Scope < ScopeHost:
		ev.DownFirstGPU, ev.DownGPUs = g.topo.UnitGPUs(ScopeHost, g.topo.UnitOf(ScopeHost, first))
	default:
		ev.DownFirstGPU, ev.DownGPUs = first, n
	}
	if p := r.Precursor.DetectProbability; p > 0 {
		if g.rng.Float64() < p {
			ev.Precursor = max(0, t-r.Precursor.Lead)
		}
	}
	return ev
}

// cohort is the never-failed units of one row and unit size.
type cohort struct {
	row    int
	lo     int         // first unit index
	n      int         // units
	m      int         // survivors
	perm   map[int]int // sparse Fisher-Yates: position → unit offset, when moved
	lambda float64     // Weibull scale, hours
	ageH   float64     // survivors' age at the last failure among them
}

// entry is one pending failure: a cohort's next (unit < 0) or a replaced
// unit's.
type entry struct {
	atH    float64
	row    int
	unit   int // -1: cohort
	cohort int
	lambda float64
}

func (a *entry) less(b *entry) bool {
	if a.atH != b.atH {
		return a.atH < b.atH
	}
	if a.row != b.row {
		return a.row < b.row
	}
	return a.unit < b.unit
}

type entryHeap []entry

func (h *entryHeap) push(e entry) { heapx.Push((*[]entry)(h), e, (*entry).less) }

func (h *entryHeap) pop() entry { return heapx.Pop((*[]entry)(h), (*entry).less) }

func (g *Generator) initWeibull(t TTF) {
	g.weib = true
	g.shape, g.invShape, g.age0 = t.Shape, 1/t.Shape, t.InitialAgeHours
	gamma := math.Gamma(1 + g.invShape)
	for i, r := range g.rows {
		units := g.topo.Units(r.Scope)
		full := g.topo.unitGPUsNominal(r.Scope)
		// Full-size units form one cohort; a partial last unit its own.
		groups := [][2]int{{0, units}}
		if _, n := g.topo.UnitGPUs(r.Scope, units-1); n != full {
			groups = [][2]int{{0, units - 1}, {units - 1, 1}}
			if units == 1 {
				groups = groups[1:]
			}
		}
		for _, gr := range groups {
			if gr[1] == 0 {
				continue
			}
			_, size := g.topo.UnitGPUs(r.Scope, gr[0])
			meanH := 1 / (r.PerGPUHour * float64(size))
			c := cohort{row: i, lo: gr[0], n: gr[1], m: gr[1], perm: map[int]int{}, lambda: meanH / gamma, ageH: g.age0}
			g.cohorts = append(g.cohorts, c)
			g.scheduleCohort(len(g.cohorts) - 1)
		}
	}
}

// scheduleCohort queues the next failure among cohort ci's survivors.
func (g *Generator) scheduleCohort(ci int) {
	c := &g.cohorts[ci]
	if c.m == 0 {
		return
	}
	x := math.Pow(c.ageH/c.lambda, g.shape) + g.rng.ExpFloat64()/float64(c.m)
	next := c.lambda * math.Pow(x, g.invShape)
	g.heap.push(entry{atH: next - g.age0, row: c.row, unit: -1, cohort: ci, lambda: c.lambda})
}

func (g *Generator) nextWeibull() (Event, bool) {
	if len(g.heap) == 0 {
		g.done = true
		return Event{}, false
	}
	e := g.heap.pop()
	if e.atH > maxGeneratedHours {
		g.done = true
		return Event{}, false
	}
	unit := e.unit
	if unit < 0 {
		c := &g.cohorts[e.cohort]
		c.ageH = e.atH + g.age0
		j := g.rng.IntN(c.m)
		last := c.m - 1
		pick, ok := c.perm[j]
		if !ok {
			pick = j
		}
		moved, ok := c.perm[last]
		if !ok {
			moved = last
		}
		c.perm[j] = moved
		delete(c.perm, last)
		c.m--
		unit = c.lo + pick
		g.scheduleCohort(e.cohort)
	}
	ev := g.event(e.row, unit, e.atH)
	// The replacement starts at age 0.
	life := e.lambda * math.Pow(g.rng.ExpFloat64(), g.invShape)
	g.heap.push(entry{atH: e.atH + life, row: e.row, unit: unit, cohort: -1, lambda: e.lambda})
	return ev, true
}

// String describes the generator.
func (g *Generator) String() string {
	return fmt.Sprintf("failures.Generator(%d rows on %d GPUs)", len(g.rows), g.gpus)
}
