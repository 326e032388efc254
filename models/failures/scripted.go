package failures

import "github.com/fleetsim/fleetsim/internal/config"

// Modes of a scripted fault.
const (
	Fail  = "fail"  // fail-stop: the process dies, in-flight requests fail
	OOM   = "oom"   // an out-of-memory crash: the same, reported as OOM
	Hang  = "hang"  // a zombie: NVLink/NCCL timeout, steps never finish, liveness still answers
	Slow  = "slow"  // fail-slow: steps take Factor times as long
	Flap  = "flap"  // link flapping: every PeriodS, in-flight requests error and the group pauses PauseS
	Stall = "stall" // rare long stalls: pauses of PauseS at exponential intervals of mean PeriodS, no errors
	// Maintenance is planned maintenance: the replica is drained (no new
	// traffic, DrainGraceS for what it holds), stopped for DurationS, then
	// cold-started back into rotation.
	Maintenance = "maintenance"
)

// Modes lists the valid modes of a scripted fault.
var ScriptedModes = []string{Fail, Flap, Hang, Maintenance, OOM, Slow, Stall}

// Scripted is one [[faults]] table: a fault injected into one replica at
// a fixed time, as in a fault-injection test.
type Scripted struct {
	// AtS is when the fault starts, seconds from the start.
	AtS float64 `toml:"at_s"`
	// Replica is the replica's index (0-based).
	Replica int `toml:"replica"`
	// Mode is one of Modes: "fail", "oom", "hang", "slow", "flap",
	// "stall" or "maintenance".
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

// DefaultScripted is a scripted fault's defaults.
func DefaultScripted() Scripted {
	return Scripted{Factor: 10, RestartS: 30, ColdStartS: 180, PeriodS: 20, PauseS: 2, DrainGraceS: 60}
}

// Validate records problems under prefix (e.g. "faults.0").
func (c *Scripted) Validate(prefix string, replicas int, ps *config.Problems) {
	ps.NonNegative(config.Key(prefix, "at_s"), c.AtS)
	if c.Replica < 0 || c.Replica >= replicas {
		ps.Add(config.Key(prefix, "replica"), "must be a replica index in 0..%d, found %d", replicas-1, c.Replica)
	}
	ps.OneOf(config.Key(prefix, "mode"), c.Mode, ScriptedModes)
	ps.NonNegative(config.Key(prefix, "duration_s"), c.DurationS)
	if c.Mode == Slow && !(c.Factor > 1) {
		ps.Add(config.Key(prefix, "factor"), "a slow replica's factor must be > 1, found %v", c.Factor)
	}
	ps.NonNegative(config.Key(prefix, "restart_s"), c.RestartS)
	ps.NonNegative(config.Key(prefix, "cold_start_s"), c.ColdStartS)
	ps.NonNegative(config.Key(prefix, "drain_grace_s"), c.DrainGraceS)
	if c.Mode == Flap || c.Mode == Stall {
		ps.Positive(config.Key(prefix, "period_s"), c.PeriodS)
		ps.Positive(config.Key(prefix, "pause_s"), c.PauseS)
		if c.PauseS >= c.PeriodS {
			ps.Add(config.Key(prefix, "pause_s"), "must be shorter than period_s (%g), found %g", c.PeriodS, c.PauseS)
		}
		if c.DurationS <= 0 {
			ps.Add(config.Key(prefix, "duration_s"), "flapping needs a duration > 0")
		}
	}
}
