package failures

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/sim"
)

// Escalation is a repair pipeline: real fleets do not repair with one
// action of one duration, they escalate (reset → reboot → reimage →
// hardware swap → RMA) until a stage fixes the unit. A failure enters at
// the stage of its action (reset-gpu: reset; reboot-node: reboot; rma:
// hardware swap), each stage takes its repair time and fixes the unit with
// its probability, else the next stage follows; the last always fixes it.
// The repair time is the sum of the stages tried, and the event records
// its path ("reset>reboot>reimage"). Restart-app failures, fail-slow and
// degraded rows, and rows with their own repair path do not escalate.
type Escalation struct {
	Stages []Stage
}

// Stage is one step of an escalation.
type Stage struct {
	Name string
	// FixProbability is the chance the stage fixes the unit, 0..1 (the last
	// stage's is taken as 1).
	FixProbability float64
	Repair         RepairDist
}

// Stage names of the default pipeline.
const (
	StageReset    = "reset"
	StageReboot   = "reboot"
	StageReimage  = "reimage"
	StageSwap     = "hw-swap"
	StageRMA      = "rma"
	entryResetIdx = 0
)

// DefaultEscalation is the default pipeline. Assumptions: no public source
// gives per-stage success rates or durations (CALIBRATION.md has none; the
// Xid catalog, §2, gives only the order: reset, reboot, then RMA "past
// threshold" or "repeated"). Reset 10 min and reboot 30 min are the
// package's action defaults (DefaultRepair); a reimage takes 2 h; an
// on-site hardware swap from local spares 8 h; an RMA keeps the
// InfiniteHBD trace's repair times (lognormal, median 0.85 d, mean 5.5 d,
// CALIBRATION.md §1 "Others", C). Fix probabilities 0.5, 0.6, 0.5, 0.9,
// 1: each a parameter ([[failures.escalation.stages]]).
func DefaultEscalation() *Escalation {
	return &Escalation{Stages: []Stage{
		{StageReset, 0.5, FixedRepair(10.0 / 60)},
		{StageReboot, 0.6, FixedRepair(0.5)},
		{StageReimage, 0.5, FixedRepair(2)},
		{StageSwap, 0.9, FixedRepair(8)},
		{StageRMA, 1, LognormalRepair(0.85*24, 5.5*24)},
	}}
}

// entry is the stage a failure with action a enters at: the first stage
// named for it (reset, reboot, hw-swap), else the nearest one by position
// (0, 1, 3) in a custom pipeline; -1 for restart-app.
func (e *Escalation) entry(a Action) int {
	want, pos := "", 0
	switch a {
	case ActionResetGPU:
		want, pos = StageReset, 0
	case ActionRebootNode:
		want, pos = StageReboot, 1
	case ActionRMA:
		want, pos = StageSwap, 3
	default:
		return -1
	}
	for i, s := range e.Stages {
		if s.Name == want {
			return i
		}
	}
	return min(pos, len(e.Stages)-1)
}

// draw runs a failure of action a through the pipeline: its total repair
// time and its path. Draws: one repair time and one Float64 per stage tried
// (none after the last).
func (e *Escalation) draw(a Action, rng interface {
	Float64() float64
}, drawRepair func(RepairDist) sim.Time) (sim.Time, string) {
	k := e.entry(a)
	if k < 0 {
		return 0, ""
	}
	var total sim.Time
	var path []string
	for ; ; k++ {
		s := &e.Stages[k]
		total += drawRepair(s.Repair)
		path = append(path, s.Name)
		if k == len(e.Stages)-1 || rng.Float64() < s.FixProbability {
			break
		}
	}
	return total, strings.Join(path, ">")
}

// MeanHours is the mean repair time of a failure entering with action a.
func (e *Escalation) MeanHours(a Action) float64 {
	k := e.entry(a)
	if k < 0 {
		return 0
	}
	m, reach := 0.0, 1.0
	for ; k < len(e.Stages); k++ {
		m += reach * e.Stages[k].Repair.MeanHours()
		if k < len(e.Stages)-1 {
			reach *= 1 - e.Stages[k].FixProbability
		}
	}
	return m
}

// String describes the pipeline.
func (e *Escalation) String() string {
	parts := make([]string, len(e.Stages))
	for i, s := range e.Stages {
		parts[i] = fmt.Sprintf("%s (%s, fixes %.0f%%)", s.Name, s.Repair, 100*s.FixProbability)
	}
	return strings.Join(parts, " → ")
}

// EscalationConfig is [failures.escalation].
type EscalationConfig struct {
	// Enabled turns repair escalation on. Default false: one repair time
	// per action.
	Enabled bool `toml:"enabled"`
	// Stages replace the default pipeline (DefaultEscalation) when given.
	Stages []StageConfig `toml:"stages"`
}

// StageConfig is one [[failures.escalation.stages]] table.
type StageConfig struct {
	Name           string       `toml:"name"`
	FixProbability *float64     `toml:"fix_probability"`
	Repair         RepairConfig `toml:"repair"`
}

// Validate records problems under prefix.
func (c *EscalationConfig) Validate(prefix string, ps *config.Problems) {
	if len(c.Stages) > 16 {
		ps.Add(config.Key(prefix, "stages"), "at most 16 stages, found %d", len(c.Stages))
	}
	seen := map[string]bool{}
	for i := range c.Stages {
		s := &c.Stages[i]
		p := config.Key(prefix, "stages", strconv.Itoa(i))
		if s.Name == "" {
			ps.Add(config.Key(p, "name"), "each stage needs a name")
		} else if seen[s.Name] {
			ps.Add(config.Key(p, "name"), "stage %q is named twice", s.Name)
		}
		seen[s.Name] = true
		if s.FixProbability == nil {
			ps.Add(config.Key(p, "fix_probability"), "each stage needs a probability of fixing the unit (0..1)")
		} else {
			ps.Fraction(config.Key(p, "fix_probability"), *s.FixProbability)
		}
		s.Repair.Validate(config.Key(p, "repair"), ps)
	}
}

// Escalation builds the pipeline c describes (nil when off); c must be
// valid.
func (c *EscalationConfig) Escalation() *Escalation {
	if !c.Enabled {
		return nil
	}
	if len(c.Stages) == 0 {
		return DefaultEscalation()
	}
	e := &Escalation{}
	for _, s := range c.Stages {
		e.Stages = append(e.Stages, Stage{Name: s.Name, FixProbability: *s.FixProbability, Repair: s.Repair.dist()})
	}
	return e
}
