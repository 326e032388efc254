package failures

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/sim"
)

// Overrides are a scenario's changes to a built-in profile: component rows
// added, overridden or scaled ([[failures.components]]), the time-to-failure
// distribution ([failures.ttf]) and repair-time distributions per action
// ([failures.repair.ACTION]). The "none" profile with components is a fully
// custom profile. The zero value changes nothing.
type Overrides struct {
	Components []ComponentConfig
	TTF        TTFConfig
	Repair     map[string]RepairConfig
	Escalation EscalationConfig
}

// ComponentConfig is one [[failures.components]] table: a row of the
// profile, named by its category. A category the base profile has is
// overridden (absent keys keep its values) or scaled; any other adds a row,
// which then needs a component (default: the category) and a rate.
type ComponentConfig struct {
	// Category names the row; default the component.
	Category string `toml:"category"`
	// Component is the taxonomy component (`fleetsim failures components`
	// lists them); for an existing row it resets the row to that
	// component's defaults before the other keys apply.
	Component string `toml:"component"`
	// RatePerGPUHour is the failure rate per GPU-hour, finite, >= 0, <= 1.
	RatePerGPUHour *float64 `toml:"rate_per_gpu_hour"`
	// Scale multiplies the row's rate (after rate_per_gpu_hour), >= 0.
	Scale *float64 `toml:"scale"`
	// Scope is the blast radius: process, gpu, tray or server (the
	// topology's host), host, nvlink-domain-degraded, domain, rack, row.
	Scope string `toml:"scope"`
	// Mode and Action are names from ModeNames and ActionNames.
	Mode   string `toml:"mode"`
	Action string `toml:"action"`
	// Xid is the Xid code (0: none; else a code of the Xid table).
	Xid *int `toml:"xid"`
	// SpeedFraction is a fail-slow unit's speed (and a degraded NVLink
	// domain's training speed), 0 < f <= 1.
	SpeedFraction *float64 `toml:"speed_fraction"`
	// NVLinkBandwidthFraction is the NVLink bandwidth a degraded domain
	// keeps, 0 < f < 1 (scope nvlink-domain-degraded). Default: one switch
	// unit of the topology out (8/9 on NVL72, 3/4 on HGX).
	NVLinkBandwidthFraction *float64 `toml:"nvlink_bandwidth_fraction"`
	// Repair is the row's own repair-time distribution, in place of its
	// action's.
	Repair *RepairConfig `toml:"repair"`
	// PrecursorLeadS is how long before the failure its precursor signal
	// appears, seconds >= 0; PrecursorProbability the chance it is seen.
	PrecursorLeadS       *float64 `toml:"precursor_lead_s"`
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

// DefaultTTFConfig is exponential.
func DefaultTTFConfig() TTFConfig { return TTFConfig{Dist: TTFExponential, Shape: 1} }

// maxPrecursorLeadS bounds a precursor lead (one year).
const maxPrecursorLeadS = 365 * 24 * 3600

func (c *ComponentConfig) key() string {
	if c.Category != "" {
		return c.Category
	}
	return c.Component
}

// Validate records every problem of o against the base profile (nil when
// the profile name is itself invalid) under prefix (e.g. "failures"), each
// with its key: "failures.components.2.scope".
func (o *Overrides) Validate(prefix string, base *Profile, ps *config.Problems) {
	seen := map[string]int{}
	var work *Profile // base with the valid tables so far applied
	if base != nil {
		work = base.Clone()
	}
	for i := range o.Components {
		c := &o.Components[i]
		p := config.Key(prefix, "components", strconv.Itoa(i))
		k := c.key()
		if k == "" {
			ps.Add(config.Key(p, "category"), "each component table needs a category or a component")
			continue
		}
		if j, dup := seen[k]; dup {
			ps.Add(config.Key(p, "category"), "category %q is already set by %s", k, config.Key(prefix, "components", strconv.Itoa(j)))
			continue
		}
		seen[k] = i
		existing := base == nil
		if base != nil {
			_, existing = base.Row(k)
		}
		n := len(ps.List)
		c.validate(p, existing, ps)
		if work != nil && len(ps.List) == n {
			one := Overrides{Components: []ComponentConfig{*c}}
			if w, err := one.Apply(work); err != nil {
				ps.Add(config.Key(p, "mode"), "%v", err)
			} else {
				work = w
			}
		}
	}
	ps.OneOf(config.Key(prefix, "ttf", "dist"), o.TTF.Dist, []string{TTFExponential, TTFWeibull})
	if o.TTF.Dist == TTFWeibull {
		ps.Positive(config.Key(prefix, "ttf", "shape"), o.TTF.Shape)
		ps.NonNegative(config.Key(prefix, "ttf", "initial_age_hours"), o.TTF.InitialAgeHours)
		if o.TTF.InitialAgeHours > maxRepairHours*10 {
			ps.Add(config.Key(prefix, "ttf", "initial_age_hours"), "must be at most %g, found %v", float64(maxRepairHours*10), o.TTF.InitialAgeHours)
		}
	}
	o.Escalation.Validate(config.Key(prefix, "escalation"), ps)
	for _, a := range sortedKeys(o.Repair) {
		key := config.Key(prefix, "repair", a)
		if _, err := ParseAction(a); err != nil {
			ps.Add(key, "unknown action %q; valid actions: %s", a, strings.Join(actionNames[:], ", "))
			continue
		}
		rc := o.Repair[a]
		rc.Validate(key, ps)
	}
}

func (c *ComponentConfig) validate(prefix string, existing bool, ps *config.Problems) {
	if !existing || c.Component != "" {
		comp := c.Component
		if comp == "" {
			comp = c.Category
		}
		if _, err := SpecOf(Component(comp)); err != nil {
			msg := "unknown component %q; valid components: %s"
			if c.Component == "" {
				msg += " (category %q is not a row of the profile: set component for a new row)"
				ps.Add(config.Key(prefix, "category"), msg, comp, strings.Join(componentNames(), ", "), c.Category)
			} else {
				ps.Add(config.Key(prefix, "component"), msg, comp, strings.Join(componentNames(), ", "))
			}
		}
	}
	if c.RatePerGPUHour == nil {
		if !existing {
			ps.Add(config.Key(prefix, "rate_per_gpu_hour"), "a new row needs a rate (failures per GPU-hour, >= 0)")
		}
	} else {
		ps.NonNegative(config.Key(prefix, "rate_per_gpu_hour"), *c.RatePerGPUHour)
		if *c.RatePerGPUHour > 1 {
			ps.Add(config.Key(prefix, "rate_per_gpu_hour"), "must be at most 1 failure per GPU-hour, found %v", *c.RatePerGPUHour)
		}
	}
	if c.Scale != nil {
		ps.NonNegative(config.Key(prefix, "scale"), *c.Scale)
		if *c.Scale > 1e6 {
			ps.Add(config.Key(prefix, "scale"), "must be at most 1e6, found %v", *c.Scale)
		}
	}
	if c.Scope != "" {
		if _, err := ParseScope(c.Scope); err != nil {
			ps.Add(config.Key(prefix, "scope"), "unknown scope %q; valid scopes: %s", c.Scope, strings.Join(ScopeInputNames(), ", "))
		}
	}
	if c.Mode != "" {
		ps.OneOf(config.Key(prefix, "mode"), c.Mode, modeNames[:])
	}
	if c.Action != "" {
		ps.OneOf(config.Key(prefix, "action"), c.Action, actionNames[:])
	}
	if c.Xid != nil && *c.Xid != 0 {
		if _, ok := LookupXid(*c.Xid); !ok {
			codes := make([]string, len(xids))
			for i, x := range xids {
				codes[i] = strconv.Itoa(x.Code)
			}
			ps.Add(config.Key(prefix, "xid"), "unknown Xid %d; known codes: %s (0: none)", *c.Xid, strings.Join(codes, ", "))
		}
	}
	if c.SpeedFraction != nil {
		if f := *c.SpeedFraction; !(f > 0 && f <= 1) {
			ps.Add(config.Key(prefix, "speed_fraction"), "must be > 0 and <= 1, found %v", f)
		}
	}
	if c.NVLinkBandwidthFraction != nil {
		if f := *c.NVLinkBandwidthFraction; !(f > 0 && f < 1) {
			ps.Add(config.Key(prefix, "nvlink_bandwidth_fraction"), "must be > 0 and < 1, found %v", f)
		}
	}
	if c.Repair != nil {
		c.Repair.Validate(config.Key(prefix, "repair"), ps)
	}
	if c.PrecursorLeadS != nil {
		ps.NonNegative(config.Key(prefix, "precursor_lead_s"), *c.PrecursorLeadS)
		if *c.PrecursorLeadS > maxPrecursorLeadS {
			ps.Add(config.Key(prefix, "precursor_lead_s"), "must be at most %d (a year), found %v", maxPrecursorLeadS, *c.PrecursorLeadS)
		}
	}
	if c.PrecursorProbability != nil {
		ps.Fraction(config.Key(prefix, "precursor_probability"), *c.PrecursorProbability)
	}
}

// Empty reports whether o changes nothing.
func (o *Overrides) Empty() bool {
	return len(o.Components) == 0 && len(o.Repair) == 0 && o.TTF.Dist != TTFWeibull && !o.Escalation.Enabled
}

// Apply returns base with o's changes; o must be valid against base. Rows
// whose scope and mode no longer agree (a scope nvlink-domain-degraded
// with another mode, or the reverse) are an error naming the table.
func (o *Overrides) Apply(base *Profile) (*Profile, error) {
	p := base.Clone()
	for ci := range o.Components {
		c := &o.Components[ci]
		k := c.key()
		i := slices.IndexFunc(p.Rows, func(r Row) bool { return r.Category == k })
		if i < 0 {
			comp := c.Component
			if comp == "" {
				comp = k
			}
			p.Rows = append(p.Rows, newRow(k, k, Component(comp), 0, 0, "user"))
			i = len(p.Rows) - 1
		} else if c.Component != "" {
			r := p.Rows[i]
			p.Rows[i] = newRow(r.Category, r.Label, Component(c.Component), r.PerGPUHour, r.Count, r.Confidence)
		}
		c.apply(&p.Rows[i])
		r := &p.Rows[i]
		if (r.Scope == ScopeDomainDegraded) != (r.Mode == ModeNVLinkDegraded) {
			return nil, fmt.Errorf("scope %s goes with mode %s and only with it (row %q would have scope %s, mode %s)",
				ScopeDomainDegraded, ModeNVLinkDegraded, k, r.Scope, r.Mode)
		}
	}
	if o.TTF.Dist == TTFWeibull {
		p.TTF = TTF{Kind: TTFWeibull, Shape: o.TTF.Shape, InitialAgeHours: o.TTF.InitialAgeHours}
	}
	for _, a := range sortedKeys(o.Repair) {
		act, _ := ParseAction(a)
		rc := o.Repair[a]
		p.Repair[act] = rc.dist()
	}
	if e := o.Escalation.Escalation(); e != nil {
		p.Escalation = e
	}
	if len(o.Components) > 0 {
		p.RateConfidence = "user"
	}
	if !o.Empty() {
		p.Notes = append(p.Notes, fmt.Sprintf("user changes applied to the %s profile: %d component table(s), %d repair override(s)%s%s",
			base.Name, len(o.Components), len(o.Repair), map[bool]string{true: ", Weibull time to failure"}[o.TTF.Dist == TTFWeibull],
			map[bool]string{true: ", repair escalation (assumed stages: models/failures/escalation.go)"}[o.Escalation.Enabled]))
	}
	return p, p.Check()
}

func (c *ComponentConfig) apply(r *Row) {
	if c.RatePerGPUHour != nil {
		r.PerGPUHour = *c.RatePerGPUHour
		r.Confidence = "user"
		r.Count = 0
	}
	if c.Scale != nil {
		r.PerGPUHour *= *c.Scale
		r.Confidence = "user"
		r.Count = 0
	}
	if c.Scope != "" {
		r.Scope, _ = ParseScope(c.Scope)
		if r.Scope == ScopeDomainDegraded && c.Mode == "" {
			r.Mode = ModeNVLinkDegraded
		} else if r.Scope != ScopeDomainDegraded && r.Mode == ModeNVLinkDegraded && c.Mode == "" {
			r.Mode = ModeFailStop
		}
	}
	if c.Mode != "" {
		r.Mode, _ = ParseMode(c.Mode)
	}
	if (r.Mode == ModeFailSlow || r.Mode == ModeNVLinkDegraded) && r.SpeedFraction == 1 && c.SpeedFraction == nil {
		r.SpeedFraction = defaultSpeedFraction
		if r.Mode == ModeNVLinkDegraded {
			r.SpeedFraction = degradedTrainingSpeed
		}
	}
	if c.Action != "" {
		r.Action, _ = ParseAction(c.Action)
	}
	if c.Xid != nil {
		r.Xid = *c.Xid
	}
	if c.SpeedFraction != nil {
		r.SpeedFraction = *c.SpeedFraction
	}
	if c.NVLinkBandwidthFraction != nil {
		r.NVLinkFraction = *c.NVLinkBandwidthFraction
	}
	if c.Repair != nil {
		d := c.Repair.dist()
		r.Repair = &d
	}
	if c.PrecursorLeadS != nil {
		r.Precursor.Lead = sim.FromSeconds(*c.PrecursorLeadS)
	}
	if c.PrecursorProbability != nil {
		r.Precursor.DetectProbability = *c.PrecursorProbability
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
