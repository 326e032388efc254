package failures

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/sim"
)

// Config selects and adjusts a failure profile: a base profile with
// per-category overrides, a time-to-failure distribution and repair-time
// distributions. Scenarios do not read it: a scenario's [failures] table
// is faults.Config, which names a built-in profile and a rate multiplier;
// Config is for building custom profiles in code and tests (Build). Start
// from DefaultConfig; absent keys keep the base profile's values.
type Config struct {
	// Profile is the base profile, one of ProfileNames(). Default "llama3";
	// "none" starts empty.
	Profile string `toml:"profile"`
	// Components overrides or adds rows, keyed by category. A key that is
	// not a row of the base profile adds a row; it must then name a
	// component (or set component) and give rate_per_gpu_hour.
	Components map[string]RowConfig `toml:"components"`
	// TTF is the time-to-failure distribution of every row.
	TTF TTFConfig `toml:"ttf"`
	// Repair overrides repair-time distributions, keyed by action name
	// (restart-app, reset-gpu, reboot-node, rma).
	Repair map[string]RepairConfig `toml:"repair"`
}

// RowConfig overrides one row. Absent (nil or empty) fields keep the base
// row's value, or the component's taxonomy default for a new row.
type RowConfig struct {
	// Component is the taxonomy component of a new row. Default: the key.
	Component string `toml:"component"`
	// RatePerGPUHour is the failure rate per GPU-hour, finite and >= 0.
	RatePerGPUHour *float64 `toml:"rate_per_gpu_hour"`
	// Scope, Mode and Action are names from ScopeNames, ModeNames and
	// ActionNames.
	Scope  string `toml:"scope"`
	Mode   string `toml:"mode"`
	Action string `toml:"action"`
	// Xid is the Xid code (0: none; else a code of the Xid table).
	Xid *int `toml:"xid"`
	// SpeedFraction is a fail-slow unit's speed, 0 < f <= 1. Default 0.9
	// (CALIBRATION.md §6: one bad GPU at 10% throughput loss).
	SpeedFraction *float64 `toml:"speed_fraction"`
	// PrecursorLeadS is how long before the failure its precursor signal
	// appears, seconds >= 0.
	PrecursorLeadS *float64 `toml:"precursor_lead_s"`
	// PrecursorProbability is the chance the precursor is seen, 0..1 (0:
	// none).
	PrecursorProbability *float64 `toml:"precursor_probability"`
}

// TTFConfig is the time-to-failure distribution ([failures.ttf]).
type TTFConfig struct {
	// Dist is "exponential" (default) or "weibull".
	Dist string `toml:"dist"`
	// Shape is the Weibull shape k, finite and > 0 (1 is exponential).
	// Default 1.
	Shape float64 `toml:"shape"`
	// InitialAgeHours is every unit's age at time 0 (Weibull), >= 0.
	// Default 0 (a new fleet).
	InitialAgeHours float64 `toml:"initial_age_hours"`
}

// DefaultConfig is the llama3 profile, exponential, default repair times.
func DefaultConfig() Config {
	return Config{Profile: ProfileLlama3, TTF: TTFConfig{Dist: TTFExponential, Shape: 1}}
}

// maxPrecursorLeadS bounds a precursor lead (one year).
const maxPrecursorLeadS = 365 * 24 * 3600

// Validate records every problem of c under prefix (e.g. "failures"), each
// with its dotted key: "failures.components.hbm.rate_per_gpu_hour".
func (c *Config) Validate(prefix string, ps *config.Problems) {
	ps.OneOf(config.Key(prefix, "profile"), c.Profile, ProfileNames())
	var base *Profile
	if p, err := LookupProfile(c.Profile); err == nil {
		base = p
	}
	for _, cat := range sortedKeys(c.Components) {
		rc := c.Components[cat]
		existing := false
		if base != nil {
			_, existing = base.Row(cat)
		}
		rc.validate(config.Key(prefix, "components", cat), cat, existing || base == nil, ps)
	}
	ps.OneOf(config.Key(prefix, "ttf", "dist"), c.TTF.Dist, []string{TTFExponential, TTFWeibull})
	if c.TTF.Dist == TTFWeibull {
		ps.Positive(config.Key(prefix, "ttf", "shape"), c.TTF.Shape)
		ps.NonNegative(config.Key(prefix, "ttf", "initial_age_hours"), c.TTF.InitialAgeHours)
		if c.TTF.InitialAgeHours > maxRepairHours*10 {
			ps.Add(config.Key(prefix, "ttf", "initial_age_hours"), "must be at most %g, found %v", float64(maxRepairHours*10), c.TTF.InitialAgeHours)
		}
	}
	for _, a := range sortedKeys(c.Repair) {
		key := config.Key(prefix, "repair", a)
		if _, err := ParseAction(a); err != nil {
			ps.Add(key, "unknown action %q; valid actions: %s", a, strings.Join(actionNames[:], ", "))
			continue
		}
		rc := c.Repair[a]
		rc.Validate(key, ps)
	}
}

func (rc *RowConfig) validate(prefix, cat string, existing bool, ps *config.Problems) {
	if !existing || rc.Component != "" {
		comp := rc.Component
		key := config.Key(prefix, "component")
		if comp == "" {
			comp, key = cat, prefix
		}
		if _, err := SpecOf(Component(comp)); err != nil {
			ps.Add(key, "unknown component %q; valid components: %s (or set component for a new category)",
				comp, strings.Join(componentNames(), ", "))
		}
	}
	if rc.RatePerGPUHour == nil {
		if !existing {
			ps.Add(config.Key(prefix, "rate_per_gpu_hour"), "a new category needs a rate (failures per GPU-hour, >= 0)")
		}
	} else {
		ps.NonNegative(config.Key(prefix, "rate_per_gpu_hour"), *rc.RatePerGPUHour)
		if *rc.RatePerGPUHour > 1 {
			ps.Add(config.Key(prefix, "rate_per_gpu_hour"), "must be at most 1 failure per GPU-hour, found %v", *rc.RatePerGPUHour)
		}
	}
	if rc.Scope != "" {
		ps.OneOf(config.Key(prefix, "scope"), rc.Scope, scopeNames[:])
	}
	if rc.Mode != "" {
		ps.OneOf(config.Key(prefix, "mode"), rc.Mode, modeNames[:])
	}
	if rc.Action != "" {
		ps.OneOf(config.Key(prefix, "action"), rc.Action, actionNames[:])
	}
	if rc.Xid != nil && *rc.Xid != 0 {
		if _, ok := LookupXid(*rc.Xid); !ok {
			codes := make([]string, len(xids))
			for i, x := range xids {
				codes[i] = strconv.Itoa(x.Code)
			}
			ps.Add(config.Key(prefix, "xid"), "unknown Xid %d; known codes: %s (0: none)", *rc.Xid, strings.Join(codes, ", "))
		}
	}
	if rc.SpeedFraction != nil {
		if f := *rc.SpeedFraction; !(f > 0 && f <= 1) {
			ps.Add(config.Key(prefix, "speed_fraction"), "must be > 0 and <= 1, found %v", f)
		}
	}
	if rc.PrecursorLeadS != nil {
		ps.NonNegative(config.Key(prefix, "precursor_lead_s"), *rc.PrecursorLeadS)
		if *rc.PrecursorLeadS > maxPrecursorLeadS {
			ps.Add(config.Key(prefix, "precursor_lead_s"), "must be at most %d (a year), found %v", maxPrecursorLeadS, *rc.PrecursorLeadS)
		}
	}
	if rc.PrecursorProbability != nil {
		ps.Fraction(config.Key(prefix, "precursor_probability"), *rc.PrecursorProbability)
	}
}

// Build returns the profile c describes: the base profile with c's
// overrides. It validates c first and returns every problem at once, keyed
// under "failures".
func (c *Config) Build() (*Profile, error) {
	var ps config.Problems
	c.Validate("failures", &ps)
	if err := ps.Err(); err != nil {
		return nil, fmt.Errorf("failures: invalid configuration:\n%w", err)
	}
	p, _ := LookupProfile(c.Profile)
	for _, cat := range sortedKeys(c.Components) {
		rc := c.Components[cat]
		i := slices.IndexFunc(p.Rows, func(r Row) bool { return r.Category == cat })
		if i < 0 {
			comp := rc.Component
			if comp == "" {
				comp = cat
			}
			p.Rows = append(p.Rows, newRow(cat, cat, Component(comp), 0, 0, "user"))
			i = len(p.Rows) - 1
		} else if rc.Component != "" {
			r := p.Rows[i]
			nr := newRow(r.Category, r.Label, Component(rc.Component), r.PerGPUHour, r.Count, r.Confidence)
			p.Rows[i] = nr
		}
		rc.apply(&p.Rows[i])
	}
	p.TTF = TTF{Kind: c.TTF.Dist, Shape: c.TTF.Shape, InitialAgeHours: c.TTF.InitialAgeHours}
	if p.TTF.Kind == TTFExponential {
		p.TTF.Shape = 1
	}
	for _, a := range sortedKeys(c.Repair) {
		act, _ := ParseAction(a)
		rc := c.Repair[a]
		p.Repair[act] = rc.dist()
	}
	if len(c.Components) > 0 {
		p.RateConfidence = "user"
	}
	if len(c.Components) > 0 || len(c.Repair) > 0 || c.TTF.Dist == TTFWeibull {
		p.Notes = append(p.Notes, "user overrides applied to the "+c.Profile+" profile")
	}
	return p, p.Check()
}

func (rc *RowConfig) apply(r *Row) {
	if rc.RatePerGPUHour != nil {
		r.PerGPUHour = *rc.RatePerGPUHour
		r.Confidence = "user"
		r.Count = 0
	}
	if rc.Scope != "" {
		r.Scope, _ = ParseScope(rc.Scope)
	}
	if rc.Mode != "" {
		r.Mode, _ = ParseMode(rc.Mode)
		if r.Mode == ModeFailSlow && r.SpeedFraction == 1 {
			r.SpeedFraction = defaultSpeedFraction
		}
	}
	if rc.Action != "" {
		r.Action, _ = ParseAction(rc.Action)
	}
	if rc.Xid != nil {
		r.Xid = *rc.Xid
	}
	if rc.SpeedFraction != nil {
		r.SpeedFraction = *rc.SpeedFraction
	}
	if rc.PrecursorLeadS != nil {
		r.Precursor.Lead = sim.FromSeconds(*rc.PrecursorLeadS)
	}
	if rc.PrecursorProbability != nil {
		r.Precursor.DetectProbability = *rc.PrecursorProbability
		if r.Precursor.Signal == "" {
			r.Precursor.Signal = "precursor"
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
