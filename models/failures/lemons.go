package failures

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Lemon nodes. Fleet studies find a few repeat-offender hosts behind a
// large share of failures, and removing them helps large jobs most: Meta
// RSC's lemon-node detection cut the failure rate of 512+-GPU jobs from
// 14% to 4% (Kokolis et al., HPCA'25; CALIBRATION.md §1 Meta RSC, S). A
// profile's rates are fleet averages; Lemons redistributes its hardware
// failures over the hosts so that a fraction of them fail at a multiple
// of the others' rate, keeping the fleet's total (and so the calibration)
// unchanged.

// LemonConfig is the heterogeneity of per-host failure propensity.
type LemonConfig struct {
	// Fraction of hosts that are lemons, in [0, 1).
	Fraction float64
	// Multiplier is a lemon's failure rate over a healthy host's, >= 1.
	Multiplier float64
}

// Check reports a configuration Lemons cannot use, naming the key.
func (c LemonConfig) Check() error {
	switch {
	case !(c.Fraction >= 0 && c.Fraction < 1):
		return fmt.Errorf("failures: lemon fraction must be in [0, 1), found %v", c.Fraction)
	case !(c.Multiplier >= 1) || c.Multiplier > 1e6:
		return fmt.Errorf("failures: lemon multiplier must be in [1, 1e6], found %v", c.Multiplier)
	}
	return nil
}

// Lemons wraps a failure source: each hardware failure confined to one
// host (scope gpu or host, of a hardware cause: CauseOf) is moved to a
// host drawn with weight Multiplier for a lemon and 1 otherwise, so a
// lemon fails Multiplier times as often as a healthy host and, at the
// start, the fleet's count is the source's. A host's propensity belongs
// to its slot: a repaired server returns as it was (a lemon stays a lemon
// across every repair); only Replace — a server retired and another put
// in its place — draws it anew, and the fleet's hardware failures then
// come at the hosts' new total weight over the starting one (the source's
// failures thinned by that ratio; capped at 1, should replacements bring
// in more lemons than were retired). Other failures pass unchanged.
type Lemons struct {
	src      Source
	topo     Topology
	rng      *rand.Rand
	cfg      LemonConfig
	lemon    []bool
	cum      []float64 // cumulative weights by host
	w0       float64   // the hosts' total weight at the start
	replaced int
}

// NewLemons wraps src on topo; rng (its own stream) draws which hosts are
// lemons and where each failure goes.
func NewLemons(src Source, topo Topology, cfg LemonConfig, rng *rand.Rand) (*Lemons, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if err := topo.Check(); err != nil {
		return nil, err
	}
	l := &Lemons{src: src, topo: topo, rng: rng, cfg: cfg, lemon: make([]bool, topo.Hosts())}
	for h := range l.lemon {
		l.lemon[h] = rng.Float64() < cfg.Fraction
	}
	l.reweigh()
	if len(l.cum) > 0 {
		l.w0 = l.cum[len(l.cum)-1]
	}
	return l, nil
}

func (l *Lemons) reweigh() {
	l.cum = l.cum[:0]
	s := 0.0
	for _, b := range l.lemon {
		s += l.weight(b)
		l.cum = append(l.cum, s)
	}
}

func (l *Lemons) weight(lemon bool) float64 {
	if lemon {
		return l.cfg.Multiplier
	}
	return 1
}

// IsLemon reports whether host h's server is a lemon.
func (l *Lemons) IsLemon(h int) bool { return h >= 0 && h < len(l.lemon) && l.lemon[h] }

// LemonHosts are the hosts whose servers are lemons now.
func (l *Lemons) LemonHosts() []int {
	var hs []int
	for h, b := range l.lemon {
		if b {
			hs = append(hs, h)
		}
	}
	return hs
}

// Replace retires host h's server and puts another in its slot, drawn
// from the same population (a lemon with probability Fraction).
func (l *Lemons) Replace(h int) {
	if h < 0 || h >= len(l.lemon) {
		return
	}
	l.replaced++
	l.lemon[h] = l.rng.Float64() < l.cfg.Fraction
	l.reweigh()
}

// Next is the source's next failure, moved to its host as above.
func (l *Lemons) Next() (Event, bool) {
	var ev Event
	for {
		var ok bool
		ev, ok = l.src.Next()
		if !ok || ev.Scope < ScopeGPU || ev.Scope > ScopeHost || CauseOf(ev.Component) != CauseHardware || len(l.cum) == 0 {
			return ev, ok
		}
		if l.replaced == 0 || l.rng.Float64() < l.cum[len(l.cum)-1]/l.w0 {
			break
		}
	}
	hg := l.topo.HostGPUs
	from := ev.FirstGPU / hg
	u := l.rng.Float64() * l.cum[len(l.cum)-1]
	to, _ := slices.BinarySearch(l.cum, u)
	to = min(to, len(l.cum)-1)
	if u == l.cum[to] && to < len(l.cum)-1 {
		to++
	}
	off := (to - from) * hg
	ev.FirstGPU += off
	ev.Unit = l.topo.UnitOf(ev.Scope, ev.FirstGPU)
	if ev.DownGPUs > 0 {
		ev.DownFirstGPU += off
	}
	return ev, true
}

// Err is the source's error.
func (l *Lemons) Err() error { return l.src.Err() }
