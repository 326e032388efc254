package failures

import (
	"fmt"
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/sim"
)

// Applier applies faults to the replicas of one serving fleet. It is the
// one place that says what a fault does to a replica (strike), for scripted
// [[faults]] (Inject) and stochastic failures (Start) alike; both speak the
// failure taxonomy's modes.
type Applier struct {
	eng   *sim.Engine
	fleet *fleet.Fleet
	// coldStart, when set, is the cold start of a scripted fault's restart
	// (SetColdStart); nil: the fault's cold_start_s.
	coldStart func(i int) sim.Time
}

// SetColdStart makes the restarts of the faults injected from now on take
// fn(replica) (the cold-start model) instead of their cold_start_s; nil
// restores cold_start_s.
func (a *Applier) SetColdStart(fn func(i int) sim.Time) { a.coldStart = fn }

// NewApplier returns the applier of fleet's faults.
func NewApplier(eng *sim.Engine, fl *fleet.Fleet) *Applier {
	return &Applier{eng: eng, fleet: fl}
}

// strike is what a fault of mode does to replica r at now: fail-stop and
// OOM kill the process (what it holds fails with reason; it stays down
// until recovered), a hang makes it a zombie, fail-slow multiplies its step
// times by slow, a link flap errors what it holds but keeps the process.
func strike(r *engine.Replica, now sim.Time, mode Mode, reason string, slow float64) {
	switch mode {
	case ModeFailSlow:
		r.SetSlow(slow)
	case ModeHang:
		r.Hang(now)
	case ModeLinkFlap:
		r.FailInFlight(now, engine.FailNVLink)
	default:
		r.Fail(now, reason)
	}
}

// crashReason is why a failure event's crash fails requests.
func crashReason(ev *Event) string {
	if ev.Mode == ModeOOM {
		return engine.FailOOM
	}
	return fmt.Sprintf("%s (%s)", engine.FailCrashed, ev.Category)
}

// Remove takes replica i out of service for the whole run, from time 0
// (run.down_replicas: capacity already lost when the run starts).
func (a *Applier) Remove(i int) {
	a.fleet.Replicas[i].Retire(0)
	a.fleet.Refresh(i)
}

// pause hangs r at now for d, then resumes it (if still hung).
func (a *Applier) pause(r *engine.Replica, now, d sim.Time) {
	strike(r, now, ModeHang, "", 0)
	a.eng.Schedule(now+d, sim.PriorityFailure, func(t sim.Time) {
		if r.Hung() {
			r.Unhang(t)
		}
	})
}

// Inject schedules a scripted fault; rng draws a stall's intervals. The
// replica's first fault time is recorded for the time-to-isolate
// statistic.
func (a *Applier) Inject(fc Scripted, rng *rand.Rand) error {
	f, eng := a.fleet, a.eng
	if fc.Replica < 0 || fc.Replica >= len(f.Replicas) {
		return fmt.Errorf("faults: fault on replica %d of %d", fc.Replica, len(f.Replicas))
	}
	i := fc.Replica
	r := f.Replicas[i]
	at := sim.FromSeconds(fc.AtS)
	fixed, model := sim.FromSeconds(fc.ColdStartS), a.coldStart
	cold := func() sim.Time {
		if model != nil {
			return model(i)
		}
		return fixed
	}
	restart := func(now sim.Time) {
		r.Recover(now, cold(), func() { f.Refresh(i) })
		f.Refresh(i)
	}
	crash := func(now sim.Time, mode Mode, reason string) {
		if !r.Up() {
			return
		}
		f.MarkFault(i, now)
		strike(r, now, mode, reason, 0)
		f.Refresh(i)
		if fc.RestartS > 0 {
			eng.Schedule(now+sim.FromSeconds(fc.RestartS), sim.PriorityFailure, func(t sim.Time) {
				if !r.Up() && !r.Recovering() {
					restart(t)
				}
			})
		}
	}
	switch fc.Mode {
	case Fail:
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) { crash(now, ModeFailStop, engine.FailCrashed) })
	case OOM:
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) { crash(now, ModeOOM, engine.FailOOM) })
	case Hang:
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) {
			f.MarkFault(i, now)
			strike(r, now, ModeHang, "", 0)
		})
		if fc.DurationS > 0 {
			eng.Schedule(at+sim.FromSeconds(fc.DurationS), sim.PriorityFailure, func(now sim.Time) {
				if r.Hung() {
					r.Unhang(now)
				}
			})
		}
	case Slow:
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) {
			f.MarkFault(i, now)
			strike(r, now, ModeFailSlow, "", fc.Factor)
		})
		if fc.DurationS > 0 {
			eng.Schedule(at+sim.FromSeconds(fc.DurationS), sim.PriorityFailure, func(sim.Time) { r.SetSlow(1) })
		}
	case Flap:
		end := at + sim.FromSeconds(fc.DurationS)
		period, pause := sim.FromSeconds(fc.PeriodS), sim.FromSeconds(fc.PauseS)
		var flap sim.Action
		flap = func(now sim.Time) {
			if r.Up() && !r.Hung() {
				f.MarkFault(i, now)
				strike(r, now, ModeLinkFlap, "", 0)
				a.pause(r, now, pause)
			}
			if now+period < end {
				eng.Schedule(now+period, sim.PriorityFailure, flap)
			}
		}
		eng.Schedule(at, sim.PriorityFailure, flap)
	case Maintenance:
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) {
			f.Drain(i, fleet.HoldMaintenance, sim.FromSeconds(fc.DrainGraceS), func(t sim.Time) {
				eng.Schedule(t+sim.FromSeconds(fc.DurationS), sim.PriorityFailure, func(t sim.Time) {
					r.Recover(t, cold(), func() { f.Release(i, fleet.HoldMaintenance) })
				})
			})
		})
	case Stall:
		end := at + sim.FromSeconds(fc.DurationS)
		pause := sim.FromSeconds(fc.PauseS)
		next := func(now sim.Time) sim.Time { return now + sim.FromSeconds(rng.ExpFloat64()*fc.PeriodS) }
		var stall sim.Action
		stall = func(now sim.Time) {
			if r.Up() && !r.Hung() {
				a.pause(r, now, pause)
			}
			if t := next(now); t < end {
				eng.Schedule(t, sim.PriorityFailure, stall)
			}
		}
		if t := next(at); t < end {
			eng.Schedule(t, sim.PriorityFailure, stall)
		}
	default:
		return fmt.Errorf("faults: unknown fault mode %q", fc.Mode)
	}
	return nil
}
