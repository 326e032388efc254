package fleet

import (
	"fmt"

	"github.com/fleetsim/fleetsim/sim"
)

// Hold is one mechanism's reason to keep a replica out of service. Every
// mechanism that takes replicas in and out of service (health probes,
// scripted maintenance, drains ahead of a failure, rollouts, spot
// interruptions, the autoscaler, warm spares) holds a replica with its own
// Hold and releases only its own (Pool.Hold, Pool.Release): a replica
// serves while it is up, no mechanism holds it, and its breaker is not open.
// So two mechanisms never undo each other: a spot replacement that comes
// up does not put back in rotation a replica the autoscaler is draining,
// and a probe's restart does not return a warm spare to service.
//
// A Hold is a bit: holding twice is holding once, and one release ends it.
type Hold uint16

// The holds, one per mechanism.
const (
	// HoldProbe: health probes ejected the replica; released when its
	// restart is ready (Health).
	HoldProbe Hold = 1 << iota
	// HoldMaintenance: a scripted maintenance ([[faults]] mode
	// "maintenance") drained it; released when it is back (failures).
	HoldMaintenance
	// HoldRepair: drained ahead of a predicted failure (a precursor),
	// released when repaired (failures).
	HoldRepair
	// HoldRollout: a green replica before its new version is loaded, or
	// after a rollback (rollout).
	HoldRollout
	// HoldSpot: a spot instance from the provider's notice until its
	// replacement serves (Spot).
	HoldSpot
	// HoldScaleIn: the autoscaler drains it before parking it.
	HoldScaleIn
	// HoldParked: the autoscaler has not provisioned it (no instance, no
	// engine, no cost).
	HoldParked
	// HoldStarting: the autoscaler provisioned it and its engine is
	// loading: no serving instance yet (spot has nothing to take back).
	HoldStarting
	// HoldSpare: a warm spare waiting, or a failed replica whose place a
	// spare took (failures' spare pool).
	HoldSpare
)

// AutoscaleHolds are the autoscaler's holds: a replica it has out of
// service (parked, starting, or draining to park). A warm spare stands in
// for none of them: it stands in for a failed replica that serves.
const AutoscaleHolds = HoldScaleIn | HoldParked | HoldStarting

// rotationHolds are the holds that take a replica out of rotation: health
// probes skip such a replica. A parked replica is idle hardware and a warm
// spare a replica kept ready; both are probed.
const rotationHolds = HoldProbe | HoldMaintenance | HoldRepair | HoldRollout | HoldSpot | HoldScaleIn

// Hold takes replica i out of service for mechanism h (a no-op if h holds
// it already). A warm spare held out of service isolates a fault it had
// (for the time to isolate).
func (p *Pool) Hold(i int, h Hold) {
	if h&HoldSpare != 0 {
		p.health.noteIsolated(i, p.eng.Now())
	}
	p.holds[i] |= h
	p.refresh(i)
}

// Release ends mechanism h's hold on replica i (a no-op if h does not hold
// it); it serves again if nothing else holds it and it is up.
func (p *Pool) Release(i int, h Hold) {
	p.holds[i] &^= h
	p.refresh(i)
}

// Held reports whether mechanism h holds replica i.
func (p *Pool) Held(i int, h Hold) bool { return p.holds[i]&h != 0 }

// inRotation reports whether no mechanism holds replica i out of rotation
// (rotationHolds): health probes check it.
func (p *Pool) inRotation(i int) bool { return p.holds[i]&rotationHolds == 0 }

// Phase is what a replica is, for the bill and the reports: one at a time,
// from the holds on it and its engine's state (phaseOf).
type Phase uint8

// The phases.
const (
	// PhaseServing: up, and no mechanism holds it (an open breaker is a
	// routing decision, not a provisioning one: still serving).
	PhaseServing Phase = iota
	// PhaseDraining: up, but held out of service (scale-in, maintenance,
	// a drain ahead of a repair, a rollout's green replica waiting or
	// rolled back, a probe's ejection before its restart).
	PhaseDraining
	// PhaseLoading: its engine is starting (a scale-up, a restart after a
	// repair or an ejection): provisioned, serving nothing.
	PhaseLoading
	// PhaseDown: failed, in repair, or in repair for the whole run.
	PhaseDown
	// PhaseSpare: a warm spare, up, waiting or swapping in.
	PhaseSpare
	// PhaseInterrupted: a spot instance from the provider's notice until
	// its replacement serves.
	PhaseInterrupted
	// PhaseParked: not provisioned (the autoscaler's): costs nothing.
	PhaseParked
	// NumPhases counts the phases.
	NumPhases
)

var phaseNames = [NumPhases]string{"serving", "draining", "loading", "down", "spare", "interrupted", "parked"}

// String is the phase's name, as outputs write it.
func (ph Phase) String() string { return phaseNames[ph] }

// phaseOf is a replica's phase under holds h, up (its engine serves or
// could) and starting (its engine is loading). The precedence between the
// mechanisms is this order, and only this:
//
//  1. parked: an instance the autoscaler has not provisioned is nothing
//     else (a failure can strike the idle hardware; nobody pays for it);
//  2. interrupted: a spot slot from the notice to its replacement, whatever
//     else happens to the instance meanwhile (it is going, or gone);
//  3. down, then loading: a failed engine, then a starting one, whoever
//     holds it (a spare in repair is down, not a spare);
//  4. spare: a warm spare, up;
//  5. draining: up and held by anything else;
//  6. serving.
func phaseOf(h Hold, up, starting bool) Phase {
	switch {
	case h&HoldParked != 0:
		return PhaseParked
	case h&HoldSpot != 0:
		return PhaseInterrupted
	case starting:
		return PhaseLoading
	case !up:
		return PhaseDown
	case h&HoldSpare != 0:
		return PhaseSpare
	case h != 0:
		return PhaseDraining
	}
	return PhaseServing
}

// Lifecycle is a pool's record of each replica's phase over time: the
// intervals of each replica's phases, from 0, one more at every change (a
// hold taken or released, the engine going down, starting or up:
// Pool.refresh calls note). The bill and the reports read it, up to a run's
// end: what happened after it (a repair that ends, a drain that stops
// after the last request) is not counted.
type Lifecycle struct {
	phase []Phase
	holds []Hold
	// log[i] are replica i's changes after time 0 (it begins serving,
	// unheld).
	log [][]phaseChange
}

// phaseChange is a replica entering a phase, or a set of holds, at a time.
type phaseChange struct {
	at    sim.Time
	ph    Phase
	holds Hold
}

func newLifecycle(n int) Lifecycle {
	return Lifecycle{phase: make([]Phase, n), holds: make([]Hold, n), log: make([][]phaseChange, n)}
}

// note records replica i's phase ph and holds h from now on.
func (l *Lifecycle) note(i int, ph Phase, h Hold, now sim.Time) {
	if ph == l.phase[i] && h == l.holds[i] {
		return
	}
	l.phase[i], l.holds[i] = ph, h
	l.log[i] = append(l.log[i], phaseChange{now, ph, h})
}

// HeldAt reports whether mechanism h held replica i at t (from t on, when
// it changed at t).
func (l *Lifecycle) HeldAt(i int, t sim.Time, h Hold) bool {
	var held Hold
	for _, c := range l.log[i] {
		if c.at > t {
			break
		}
		held = c.holds
	}
	return held&h != 0
}

// Phase is replica i's phase now.
func (l *Lifecycle) Phase(i int) Phase { return l.phase[i] }

// PhaseAt is replica i's phase at t (its phase from t on, when it changed
// at t).
func (l *Lifecycle) PhaseAt(i int, t sim.Time) Phase {
	ph := PhaseServing
	for _, c := range l.log[i] {
		if c.at > t {
			break
		}
		ph = c.ph
	}
	return ph
}

// Phases calls fn(k, phase) with replica i's phase at each of times
// (ascending), in one pass over its changes.
func (l *Lifecycle) Phases(i int, times []sim.Time, fn func(k int, ph Phase)) {
	log, c, ph := l.log[i], 0, PhaseServing
	for k, t := range times {
		for c < len(log) && log[c].at <= t {
			ph = log[c].ph
			c++
		}
		fn(k, ph)
	}
}

// PhaseNs is the time replica i spent in phase ph within [0, end).
func (l *Lifecycle) PhaseNs(i int, ph Phase, end sim.Time) sim.Time {
	var t sim.Time
	from, cur := sim.Time(0), PhaseServing
	for _, c := range l.log[i] {
		if c.at >= end {
			break
		}
		if cur == ph {
			t += c.at - from
		}
		from, cur = c.at, c.ph
	}
	if cur == ph && end > from {
		t += end - from
	}
	return t
}

// ProvisionedNs is the time replica i was provisioned (in any phase but
// parked) within [0, end).
func (l *Lifecycle) ProvisionedNs(i int, end sim.Time) sim.Time {
	return max(end, 0) - l.PhaseNs(i, PhaseParked, end)
}

// TotalNs is PhaseNs summed over the pool's replicas.
func (l *Lifecycle) TotalNs(ph Phase, end sim.Time) sim.Time {
	var t sim.Time
	for i := range l.phase {
		t += l.PhaseNs(i, ph, end)
	}
	return t
}

// Count is the number of replicas in phase ph now.
func (l *Lifecycle) Count(ph Phase) int {
	n := 0
	for _, x := range l.phase {
		if x == ph {
			n++
		}
	}
	return n
}

// CheckLifecycle reports the first replica whose recorded phase is not the
// one its holds and engine give now: a change that did not go through the
// pool (Hold, Release, the replica's change hook). For tests, after every
// event.
func (p *Pool) CheckLifecycle() error {
	for i, r := range p.Replicas {
		if want := phaseOf(p.holds[i], r.Up(), r.Recovering()); p.Life.phase[i] != want {
			return fmt.Errorf("fleet: replica %d's phase is %v, recorded %v (holds %b)", i, want, p.Life.phase[i], p.holds[i])
		}
	}
	return nil
}
