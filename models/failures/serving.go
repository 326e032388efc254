package failures

import (
	"fmt"

	"github.com/fleetsim/fleetsim/internal/config"
)

// Config is a scenario's [failures] table: stochastic hardware and software
// failures of the serving fleet, drawn from a built-in profile
// (models/failures; `fleetsim failures show PROFILE` prints its rates),
// with warm spares and drains on precursors.
type Config struct {
	// Enabled turns failures on. Default false.
	Enabled bool `toml:"enabled"`
	// Profile: "llama3" (default; Llama 3 Table 5 counts), "byterobust",
	// "meta-rsc", ... (see `fleetsim failures list`).
	Profile string `toml:"profile"`
	// RateMultiplier scales every rate, to see in hours what a fleet sees
	// in months (a stress test, not a forecast). Default 1.
	RateMultiplier float64 `toml:"rate_multiplier"`
	// ServersPerRack groups HGX servers behind a ToR switch. Default 4
	// (assumption).
	ServersPerRack int `toml:"servers_per_rack"`
	// ColdStartS is the weight loading of a serving replica after its
	// repair. Default 180 (the seeds' 2–4 min, CALIBRATION.md §4).
	ColdStartS float64 `toml:"cold_start_s"`
	// DrainOnPrecursor drains a replica gracefully when a precursor of its
	// failure is seen (policies.PrecursorDrain), so the failure finds it
	// empty. Default false.
	DrainOnPrecursor bool `toml:"drain_on_precursor"`
	// DrainGraceS is how long a drained replica may finish what it holds.
	// Default 60 (the seed's drain grace, CALIBRATION.md §6).
	DrainGraceS float64 `toml:"drain_grace_s"`
	// Spares is the number of warm spare replicas (the k of N+k), built
	// beyond cluster.replicas and paid for. When a replica fails with a
	// repair longer than SpareAfterS, an idle spare takes its place at once
	// (warm standby, ByteRobust, CALIBRATION.md §1); the repaired replica
	// becomes a spare. Default 0.
	Spares int `toml:"spares"`
	// SpareCoverage, in (0, 1), sets Spares from the profile and the
	// fleet's placement instead (the scenario resolves it): the fewest
	// spare replicas that cover the replicas in repair with this
	// probability (Profile.UnitSparesAt: a server fault takes
	// every replica packed on it). Default 0: Spares as given.
	SpareCoverage float64 `toml:"spare_coverage"`
	// DecodeSpares is the same for a disaggregated fleet's decode pool:
	// warm spare decode replicas beyond disagg.decode.replicas, built and
	// paid for. Spares are the prefill pool's. Default 0.
	DecodeSpares int `toml:"decode_spares"`
	// SpareAfterS: repairs shorter than this are waited out. Default 600.
	SpareAfterS float64 `toml:"spare_after_s"`
	// SpareSwapS is the reconfiguration delay of a warm-spare swap: the
	// spare serves only after it, and the failed replica's slot is down
	// until then. Default 0 (at once; ByteRobust's warm standby).
	SpareSwapS float64 `toml:"spare_swap_s"`
	// Escalation is the repair pipeline ([failures.escalation]): reset →
	// reboot → reimage → hardware swap → RMA with probabilities and
	// durations (DefaultEscalation). Default off.
	Escalation EscalationConfig `toml:"escalation"`
	// RacksPerRow groups racks into rows (blast scope "row"). Default 8
	// (assumption, DefaultRacksPerRow).
	RacksPerRow int `toml:"racks_per_row"`
	// Components add, override or scale rows of the profile
	// ([[failures.components]]; ComponentConfig): "none" plus
	// components is a fully custom profile.
	Components []ComponentConfig `toml:"components"`
	// TTF is the time-to-failure distribution ([failures.ttf]). Default
	// exponential.
	TTF TTFConfig `toml:"ttf"`
	// Repair overrides the repair-time distribution of an action
	// ([failures.repair.ACTION]: restart-app, reset-gpu, reboot-node, rma).
	Repair map[string]RepairConfig `toml:"repair"`
}

// Overrides are c's changes to its built-in profile.
func (c *Config) Overrides() Overrides {
	return Overrides{Components: c.Components, TTF: c.TTF, Repair: c.Repair, Escalation: c.Escalation}
}

// BuildProfile is the profile c names with its overrides applied (not
// scaled by RateMultiplier). c must be valid.
func (c *Config) BuildProfile() (*Profile, error) {
	base, err := LookupProfile(c.Profile)
	if err != nil {
		return nil, err
	}
	o := c.Overrides()
	if o.Empty() {
		return base, nil
	}
	return o.Apply(base)
}

// DefaultConfig is off, with the llama3 profile ready.
func DefaultConfig() Config {
	return Config{Profile: ProfileLlama3, RateMultiplier: 1, ServersPerRack: 4, ColdStartS: 180, DrainGraceS: 60,
		SpareAfterS: 600, RacksPerRow: DefaultRacksPerRow, TTF: DefaultTTFConfig()}
}

// Validate records problems under prefix.
func (c *Config) Validate(prefix string, ps *config.Problems) {
	ps.OneOf(config.Key(prefix, "profile"), c.Profile, ProfileNames())
	ps.Positive(config.Key(prefix, "rate_multiplier"), c.RateMultiplier)
	ps.PositiveInt(config.Key(prefix, "servers_per_rack"), c.ServersPerRack)
	ps.NonNegative(config.Key(prefix, "cold_start_s"), c.ColdStartS)
	ps.NonNegative(config.Key(prefix, "drain_grace_s"), c.DrainGraceS)
	if c.Spares < 0 || c.Spares > 10000 {
		ps.Add(config.Key(prefix, "spares"), "must be between 0 and 10000, found %d", c.Spares)
	}
	if c.SpareCoverage != 0 && !(c.SpareCoverage > 0 && c.SpareCoverage < 1) {
		ps.Add(config.Key(prefix, "spare_coverage"), "must be 0 (off) or between 0 and 1 (exclusive), found %v", c.SpareCoverage)
	}
	if c.DecodeSpares < 0 || c.DecodeSpares > 10000 {
		ps.Add(config.Key(prefix, "decode_spares"), "must be between 0 and 10000, found %d", c.DecodeSpares)
	}
	ps.NonNegative(config.Key(prefix, "spare_after_s"), c.SpareAfterS)
	ps.PositiveInt(config.Key(prefix, "racks_per_row"), c.RacksPerRow)
	ps.NonNegative(config.Key(prefix, "spare_swap_s"), c.SpareSwapS)
	base, _ := LookupProfile(c.Profile)
	o := c.Overrides()
	o.Validate(prefix, base, ps)
}

// MaxEvents bounds the failures one serving run may draw: a multiplier that
// would draw more while the workload arrives is a mistake, not a study.
const MaxEvents = 1e6

// CheckRate is the runaway-rate guard: an error (without a key; it belongs
// to failures.rate_multiplier) when prof's rates × RateMultiplier draw more
// than MaxEvents failures on gpus GPUs in durationS seconds plus the
// profile's longest precursor lead: the injector reads the failures that
// far ahead (Signals) to give each its precursor on time, and holds them.
func (c *Config) CheckRate(prof *Profile, gpus int, durationS float64) error {
	lead := prof.MaxPrecursorLead().Seconds()
	if expect := prof.RatePerGPUHour() * c.RateMultiplier * float64(gpus) * (durationS + lead) / 3600; expect > MaxEvents {
		ahead := ""
		if lead > 0 {
			ahead = fmt.Sprintf(" (and the %g s its precursors are read ahead)", lead)
		}
		return fmt.Errorf("%g gives about %.3g failures on %d GPUs in %g s of arrivals%s; at most %g (lower the multiplier)",
			c.RateMultiplier, expect, gpus, durationS, ahead, float64(MaxEvents))
	}
	return nil
}
