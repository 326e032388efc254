package models

import (
	"fmt"
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/sim"
)

// Fault modes a scenario can inject into a replica.
const (
	FaultFail  = "fail"  // fail-stop: the process dies, in-flight requests fail
	FaultOOM   = "oom"   // an out-of-memory crash: the same, reported as OOM
	FaultHang  = "hang"  // a zombie: NVLink/NCCL timeout, steps never finish, liveness still answers
	FaultSlow  = "slow"  // fail-slow: steps take Factor times as long
	FaultFlap  = "flap"  // link flapping: every PeriodS, in-flight requests error and the group pauses PauseS
	FaultStall = "stall" // rare long stalls: pauses of PauseS at exponential intervals of mean PeriodS, no errors
	// FaultMaintenance is planned maintenance: the replica is drained
	// (no new traffic, DrainGraceS for what it holds), stopped for
	// DurationS, then cold-started back into rotation.
	FaultMaintenance = "maintenance"
)

// FaultModes lists the valid modes.
var FaultModes = []string{FaultFail, FaultFlap, FaultHang, FaultMaintenance, FaultOOM, FaultSlow, FaultStall}

// Failure reasons of injected faults.
const (
	FailOOM     = "OOM crash"
	FailNVLink  = "NVLink error (Xid 74)"
	FailCrashed = "replica crashed"
)

// FaultConfig is one [[faults]] table: a fault injected into one replica at
// a fixed time, as in a fault-injection test.
type FaultConfig struct {
	// AtS is when the fault starts, seconds from the start.
	AtS float64 `toml:"at_s"`
	// Replica is the replica's index (0-based).
	Replica int `toml:"replica"`
	// Mode: "fail", "oom", "hang", "slow" or "flap".
	Mode string `toml:"mode"`
	// DurationS: how long a slow or flapping replica stays so; for a hang,
	// when it clears by itself (0: it lasts until a probe ejects it).
	DurationS float64 `toml:"duration_s"`
	// Factor is a slow replica's step-time factor (> 1). Default 10.
	Factor float64 `toml:"factor"`
	// RestartS: a failed (or crashed) replica restarts by itself this long
	// after the fault (a supervisor restarting the pod), then loads its
	// weights for ColdStartS. 0: only a probe's ejection restarts it.
	// Default 30.
	RestartS float64 `toml:"restart_s"`
	// ColdStartS is the weight loading after a restart. Default 180 (the
	// seeds' 2–4 min, CALIBRATION.md §4).
	ColdStartS float64 `toml:"cold_start_s"`
	// PeriodS and PauseS shape flapping (every PeriodS the link errors, the
	// in-flight requests fail, and the group pauses PauseS) and stalls
	// (pauses of PauseS at exponential intervals of mean PeriodS, nothing
	// fails). Defaults 20 and 2.
	PeriodS float64 `toml:"period_s"`
	PauseS  float64 `toml:"pause_s"`
	// DrainGraceS is how long maintenance lets the replica finish what it
	// holds. Default 60 (the seed's drain grace, CALIBRATION.md §6).
	DrainGraceS float64 `toml:"drain_grace_s"`
}

// DefaultFaultConfig is a fault's defaults.
func DefaultFaultConfig() FaultConfig {
	return FaultConfig{Factor: 10, RestartS: 30, ColdStartS: 180, PeriodS: 20, PauseS: 2, DrainGraceS: 60}
}

// Validate records problems under prefix (e.g. "faults.0").
func (c *FaultConfig) Validate(prefix string, replicas int, ps *config.Problems) {
	ps.NonNegative(prefix+".at_s", c.AtS)
	if c.Replica < 0 || c.Replica >= replicas {
		ps.Add(prefix+".replica", "must be a replica index in 0..%d, found %d", replicas-1, c.Replica)
	}
	ps.OneOf(prefix+".mode", c.Mode, FaultModes)
	ps.NonNegative(prefix+".duration_s", c.DurationS)
	if c.Mode == FaultSlow && !(c.Factor > 1) {
		ps.Add(prefix+".factor", "a slow replica's factor must be > 1, found %v", c.Factor)
	}
	ps.NonNegative(prefix+".restart_s", c.RestartS)
	ps.NonNegative(prefix+".cold_start_s", c.ColdStartS)
	ps.NonNegative(prefix+".drain_grace_s", c.DrainGraceS)
	if c.Mode == FaultFlap || c.Mode == FaultStall {
		ps.Positive(prefix+".period_s", c.PeriodS)
		ps.Positive(prefix+".pause_s", c.PauseS)
		if c.PauseS >= c.PeriodS {
			ps.Add(prefix+".pause_s", "must be shorter than period_s (%g), found %g", c.PeriodS, c.PauseS)
		}
		if c.DurationS <= 0 {
			ps.Add(prefix+".duration_s", "flapping needs a duration > 0")
		}
	}
}

// Inject schedules a fault. The replica's first fault time is recorded
// for the time-to-isolate statistic.
func (f *Fleet) Inject(fc FaultConfig, rng *rand.Rand) error {
	if fc.Replica < 0 || fc.Replica >= len(f.Replicas) {
		return fmt.Errorf("models: fault on replica %d of %d", fc.Replica, len(f.Replicas))
	}
	i := fc.Replica
	r := f.Replicas[i]
	eng := f.Pool.eng
	at := sim.FromSeconds(fc.AtS)
	cold := sim.FromSeconds(fc.ColdStartS)
	restart := func(now sim.Time) {
		r.Recover(now, cold, func() { f.refresh(i) })
		f.refresh(i)
	}
	crash := func(now sim.Time, reason string) {
		if !r.Up() {
			return
		}
		f.MarkFault(i, now)
		r.Fail(now, reason)
		f.refresh(i)
		if fc.RestartS > 0 {
			eng.Schedule(now+sim.FromSeconds(fc.RestartS), sim.PriorityFailure, func(t sim.Time) {
				if !r.Up() && !r.recovering {
					restart(t)
				}
			})
		}
	}
	switch fc.Mode {
	case FaultFail:
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) { crash(now, FailCrashed) })
	case FaultOOM:
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) { crash(now, FailOOM) })
	case FaultHang:
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) {
			f.MarkFault(i, now)
			r.Hang(now)
		})
		if fc.DurationS > 0 {
			eng.Schedule(at+sim.FromSeconds(fc.DurationS), sim.PriorityFailure, func(now sim.Time) {
				if r.Hung() {
					r.Unhang(now)
				}
			})
		}
	case FaultSlow:
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) {
			f.MarkFault(i, now)
			r.SetSlow(fc.Factor)
		})
		if fc.DurationS > 0 {
			eng.Schedule(at+sim.FromSeconds(fc.DurationS), sim.PriorityFailure, func(sim.Time) { r.SetSlow(1) })
		}
	case FaultFlap:
		end := at + sim.FromSeconds(fc.DurationS)
		period, pause := sim.FromSeconds(fc.PeriodS), sim.FromSeconds(fc.PauseS)
		var flap sim.Action
		flap = func(now sim.Time) {
			if r.Up() && !r.Hung() {
				f.MarkFault(i, now)
				r.FailInFlight(now, FailNVLink)
				r.Hang(now)
				eng.Schedule(now+pause, sim.PriorityFailure, func(t sim.Time) {
					if r.Hung() {
						r.Unhang(t)
					}
				})
			}
			if now+period < end {
				eng.Schedule(now+period, sim.PriorityFailure, flap)
			}
		}
		eng.Schedule(at, sim.PriorityFailure, flap)
	case FaultMaintenance:
		eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) {
			f.Drain(i, sim.FromSeconds(fc.DrainGraceS), func(t sim.Time) {
				eng.Schedule(t+sim.FromSeconds(fc.DurationS), sim.PriorityFailure, func(t sim.Time) {
					r.Recover(t, cold, func() { f.SetInRotation(i, true) })
				})
			})
		})
	case FaultStall:
		end := at + sim.FromSeconds(fc.DurationS)
		pause := sim.FromSeconds(fc.PauseS)
		next := func(now sim.Time) sim.Time { return now + sim.FromSeconds(rng.ExpFloat64()*fc.PeriodS) }
		var stall sim.Action
		stall = func(now sim.Time) {
			if r.Up() && !r.Hung() {
				r.Hang(now)
				eng.Schedule(now+pause, sim.PriorityFailure, func(t sim.Time) {
					if r.Hung() {
						r.Unhang(t)
					}
				})
			}
			if t := next(now); t < end {
				eng.Schedule(t, sim.PriorityFailure, stall)
			}
		}
		if t := next(at); t < end {
			eng.Schedule(t, sim.PriorityFailure, stall)
		}
	default:
		return fmt.Errorf("models: unknown fault mode %q", fc.Mode)
	}
	return nil
}
