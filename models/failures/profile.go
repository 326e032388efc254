package failures

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/sim"
)

// Row is one failure category of a profile: a component with its rate and
// behaviour. Each row is its own category in counts and reports.
type Row struct {
	// Category names the row, unique within its profile (for the built-in
	// profiles, the component name or the source's category).
	Category string
	// Label is how the source names the row, e.g. "Faulty GPU".
	Label string
	// Spec is the component and how it fails.
	Spec
	// PerGPUHour is the row's failure rate per GPU-hour: a fleet of N GPUs
	// sees N·PerGPUHour failures of this row per hour. A unit of g GPUs
	// fails at g·PerGPUHour.
	PerGPUHour float64
	// Count is the source's count behind the rate, if it gave one.
	Count int
	// Confidence is CALIBRATION.md's mark for the figure: "P" (primary),
	// "S" (secondary), "C" (computed from primary data), "U" (unconfirmed).
	Confidence string
	// NVLinkFraction is, for scope nvlink-domain-degraded, the NVLink
	// bandwidth the domain keeps; 0: the topology's (one switch unit out,
	// Topology.DegradedNVLinkFraction).
	NVLinkFraction float64
	// Repair, when set, is the row's own repair-time distribution in place
	// of its action's (Profile.Repair).
	Repair *RepairDist
	// JobCapGPUs, when > 0, caps the row's rate for one job: a job of more
	// GPUs sees the row as often as a job of JobCapGPUs GPUs does. For
	// per-job causes (a job's code, its user, its collectives' settings),
	// which do not come more often because the job has more GPUs (see
	// metaRSCJobProfile). Profile.ForJob and JobMTTFs apply it; a fleet
	// (serving) sees the row per GPU, uncapped.
	JobCapGPUs int
}

// RepairOf is row r's repair-time distribution in profile p.
func (p *Profile) RepairOf(r *Row) RepairDist {
	if r.Repair != nil {
		return *r.Repair
	}
	return p.Repair[r.Action]
}

// Profile is a set of failure processes calibrated from one source, with
// the repair-time distribution of each repair action.
type Profile struct {
	Name        string
	Description string
	// Source cites where the rates come from.
	Source string
	// RateConfidence is CALIBRATION.md's mark for the total rate (see
	// Row.Confidence): "U" flags a total that rests on an unconfirmed figure.
	RateConfidence string
	Rows           []Row
	TTF            TTF
	// Repair is the repair-time distribution of each Action.
	Repair [numActions]RepairDist
	// Escalation, when set, replaces Repair for the rows it covers by a
	// repair pipeline (reset → reboot → reimage → hardware swap → RMA).
	Escalation *Escalation
	// Notes are caveats printed with the profile; unconfirmed figures are
	// flagged here as CALIBRATION.md flags them.
	Notes []string
}

// RatePerGPUHour is the total failure rate per GPU-hour.
func (p *Profile) RatePerGPUHour() float64 {
	s := 0.0
	for _, r := range p.Rows {
		s += r.PerGPUHour
	}
	return s
}

// MTBFHours is the mean time between failures, in hours, of a job or fleet
// of gpus GPUs: 1 / (gpus · RatePerGPUHour). +Inf when nothing fails.
func (p *Profile) MTBFHours(gpus int) float64 {
	return 1 / (float64(gpus) * p.RatePerGPUHour())
}

// MTBF is MTBFHours as a simulated duration (sim.Forever when nothing
// fails or it is out of range).
func (p *Profile) MTBF(gpus int) sim.Time {
	h := p.MTBFHours(gpus)
	if !(h*3600 < float64(sim.Forever)/1e9/2) {
		return sim.Forever
	}
	return sim.FromSeconds(h * 3600)
}

// MaxPrecursorLead is the longest precursor lead time of any row that may
// emit one (0 if none).
func (p *Profile) MaxPrecursorLead() sim.Time {
	var m sim.Time
	for _, r := range p.Rows {
		if r.Precursor.DetectProbability > 0 && r.PerGPUHour > 0 {
			m = max(m, r.Precursor.Lead)
		}
	}
	return m
}

// Scaled returns a copy of p with every rate multiplied by mult: a stress
// test's rate multiplier (see in hours what a fleet sees in months); 0
// fails nothing.
func (p *Profile) Scaled(mult float64) *Profile {
	q := p.Clone()
	for i := range q.Rows {
		q.Rows[i].PerGPUHour *= mult
	}
	return q
}

// ForJob returns p as one job of gpus GPUs sees it: a copy in which each
// row with a job cap (Row.JobCapGPUs) below gpus has its per-GPU rate
// scaled by cap/gpus, so that the job sees it as often as a job of cap
// GPUs. p itself when no row is capped below gpus.
func (p *Profile) ForJob(gpus int) *Profile {
	var q *Profile
	for i, r := range p.Rows {
		if r.JobCapGPUs > 0 && gpus > r.JobCapGPUs {
			if q == nil {
				q = p.Clone()
			}
			q.Rows[i].PerGPUHour = r.PerGPUHour * float64(r.JobCapGPUs) / float64(gpus)
		}
	}
	if q == nil {
		return p
	}
	return q
}

// Row returns the row with the given category.
func (p *Profile) Row(category string) (Row, bool) {
	for _, r := range p.Rows {
		if r.Category == category {
			return r, true
		}
	}
	return Row{}, false
}

// Clone returns a deep copy.
func (p *Profile) Clone() *Profile {
	q := *p
	q.Rows = slices.Clone(p.Rows) // (a row's Repair is never modified in place)
	q.Notes = slices.Clone(p.Notes)
	return &q
}

// Check reports a profile the generator cannot run: a negative or
// non-finite rate, a bad shape, a duplicate category.
func (p *Profile) Check() error {
	seen := map[string]bool{}
	for _, r := range p.Rows {
		switch {
		case seen[r.Category]:
			return fmt.Errorf("failures: profile %q: duplicate category %q", p.Name, r.Category)
		case math.IsNaN(r.PerGPUHour) || math.IsInf(r.PerGPUHour, 0) || r.PerGPUHour < 0:
			return fmt.Errorf("failures: profile %q: category %q: rate must be a finite number >= 0, found %v", p.Name, r.Category, r.PerGPUHour)
		case r.Scope >= numScopes || r.Mode >= numModes || r.Action >= numActions:
			return fmt.Errorf("failures: profile %q: category %q: bad scope, mode or action", p.Name, r.Category)
		case !(r.SpeedFraction > 0 && r.SpeedFraction <= 1):
			return fmt.Errorf("failures: profile %q: category %q: speed fraction must be in (0, 1], found %v", p.Name, r.Category, r.SpeedFraction)
		case r.Precursor.Lead < 0 || !(r.Precursor.DetectProbability >= 0 && r.Precursor.DetectProbability <= 1):
			return fmt.Errorf("failures: profile %q: category %q: bad precursor %+v", p.Name, r.Category, r.Precursor)
		case (r.Scope == ScopeDomainDegraded) != (r.Mode == ModeNVLinkDegraded):
			return fmt.Errorf("failures: profile %q: category %q: scope %s goes with mode %s and only with it, found scope %s, mode %s",
				p.Name, r.Category, ScopeDomainDegraded, ModeNVLinkDegraded, r.Scope, r.Mode)
		case r.JobCapGPUs < 0:
			return fmt.Errorf("failures: profile %q: category %q: job cap must be an integer >= 0 GPUs, found %d", p.Name, r.Category, r.JobCapGPUs)
		case !(r.NVLinkFraction >= 0 && r.NVLinkFraction < 1):
			return fmt.Errorf("failures: profile %q: category %q: NVLink bandwidth fraction must be in [0, 1), found %v", p.Name, r.Category, r.NVLinkFraction)
		}
		seen[r.Category] = true
	}
	switch p.TTF.Kind {
	case TTFExponential:
	case TTFWeibull:
		if !(p.TTF.Shape > 0) || math.IsInf(p.TTF.Shape, 0) {
			return fmt.Errorf("failures: profile %q: Weibull shape must be a finite number > 0, found %v", p.Name, p.TTF.Shape)
		}
		if !(p.TTF.InitialAgeHours >= 0) || math.IsInf(p.TTF.InitialAgeHours, 0) {
			return fmt.Errorf("failures: profile %q: initial age must be a finite number >= 0, found %v", p.Name, p.TTF.InitialAgeHours)
		}
	default:
		return fmt.Errorf("failures: profile %q: unknown time-to-failure distribution %q; valid: %s, %s", p.Name, p.TTF.Kind, TTFExponential, TTFWeibull)
	}
	return nil
}

// Profile names.
const (
	ProfileLlama3     = "llama3"
	ProfileByteRobust = "byterobust"
	ProfileMetaRSC    = "meta-rsc"
	ProfileMetaRSC2   = "meta-rsc-2"
	// ProfileNone has no rows: a starting point for user-defined profiles.
	ProfileNone = "none"
)

// profileFactories is the profile registry, built once here and never
// modified.
var profileFactories = map[string]func() *Profile{
	ProfileLlama3:     llama3Profile,
	ProfileByteRobust: byteRobustProfile,
	ProfileMetaRSC:    func() *Profile { return metaRSCProfile(1) },
	ProfileMetaRSC2:   func() *Profile { return metaRSCProfile(2) },
	ProfileNone:       noneProfile,
	ProfileRackScale:  rackScaleProfile,
	ProfileMetaRSCJob: metaRSCJobProfile,
}

// ProfileNames returns the built-in profile names, sorted.
func ProfileNames() []string {
	names := make([]string, 0, len(profileFactories))
	for n := range profileFactories {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// LookupProfile returns a fresh copy of the built-in profile name, or an
// error listing the valid names.
func LookupProfile(name string) (*Profile, error) {
	f, ok := profileFactories[name]
	if !ok {
		return nil, fmt.Errorf("failures: unknown profile %q; valid profiles: %s", name, strings.Join(ProfileNames(), ", "))
	}
	return f(), nil
}

// DefaultRepair returns the default repair-time distribution of each
// action:
//   - restart-app: 0 (no hardware is out; the job or replica pays its own
//     restart or cold start);
//   - reset-gpu: fixed 10 min, reboot-node: fixed 30 min. Assumption: issue 3
//     §6 says an auto-reboot takes minutes; CALIBRATION.md has no figure;
//   - rma: lognormal with median 0.85 d and mean 5.5 d, the InfiniteHBD
//     fault trace's repair times (CALIBRATION.md §1 "Others", C); its p99 is
//     then 76 d against the trace's 85 d.
func DefaultRepair() [numActions]RepairDist {
	var r [numActions]RepairDist
	r[ActionRestartApp] = FixedRepair(0)
	r[ActionResetGPU] = FixedRepair(10.0 / 60)
	r[ActionRebootNode] = FixedRepair(0.5)
	r[ActionRMA] = LognormalRepair(0.85*24, 5.5*24)
	return r
}

// newRow builds a row from the taxonomy defaults of c.
func newRow(category, label string, c Component, perGPUHour float64, count int, confidence string) Row {
	s := mustSpec(c)
	r := Row{Category: category, Label: label, Spec: s, PerGPUHour: perGPUHour, Count: count, Confidence: confidence}
	if d, ok := componentRepair[c]; ok {
		r.Repair = &d
	}
	return r
}

func noneProfile() *Profile {
	return &Profile{Name: ProfileNone, Description: "no failures; add rows with [[failures.components]] tables",
		TTF: Exponential(), Repair: DefaultRepair()}
}
