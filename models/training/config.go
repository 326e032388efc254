package training

import (
	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/sim"
)

// CheckpointPolicy decides how often a job checkpoints. Implementations live
// in package policies ("fixed", "young", "daly").
type CheckpointPolicy interface {
	// CheckpointInterval returns the compute time between the end of one
	// checkpoint and the start of the next (> 0) for a job whose mean time
	// between failures is mtbf and whose checkpoint write takes writeTime.
	CheckpointInterval(mtbf, writeTime sim.Time) sim.Time
}

// Config is a synchronous training job (a scenario's [training] table).
// Every duration is in seconds or hours as its name says.
type Config struct {
	// GPUs is the job size; a multiple of the topology's GPUs per host.
	// Default 16,384 (Llama 3, CALIBRATION.md §1).
	GPUs int `toml:"gpus"`
	// HorizonHours is the wall-clock time simulated. Default 1,296 (the
	// 54 days of the Llama 3 snapshot, CALIBRATION.md §1).
	HorizonHours float64 `toml:"horizon_hours"`
	// SpareServers is the spare pool, in hosts (HGX servers or NVL72
	// trays). A failed host goes to repair and, repaired, joins the pool.
	// Default 10: ByteRobust sizes its standby pool to the P99 of
	// simultaneous machine failures (CALIBRATION.md §1, S); for the llama3
	// profile on 2,048 servers the time-P99 of servers out for repair is 10
	// (TestSparePoolP99).
	SpareServers int `toml:"spare_servers"`
	// DetectionMinS and DetectionMaxS bound the time from a failure to its
	// detection, uniform. Default 600–1,800 s: an NCCL watchdog timeout of
	// 10–30 min (CALIBRATION.md §1, ByteRobust, S). ByteRobust's fast
	// detection is 10–30 s (FastDetection).
	DetectionMinS float64 `toml:"detection_min_s"`
	DetectionMaxS float64 `toml:"detection_max_s"`
	// RestartMinS and RestartMaxS bound the restart overhead u0 (reschedule,
	// load the checkpoint, warm up), uniform. Default 300–1,200 s: Meta's
	// u0 of 5–20 min (CALIBRATION.md §1, Meta RSC, S).
	RestartMinS float64 `toml:"restart_min_s"`
	RestartMaxS float64 `toml:"restart_max_s"`
	// CheckpointWriteS is the blocking checkpoint write time w_cp; training
	// stops while it runs. Default 6.77 s: Megatron's blocking save as
	// ByteRobust measured it (CALIBRATION.md §1 "Restart/recovery", S).
	CheckpointWriteS float64 `toml:"checkpoint_write_s"`
	// PricePerGPUHour in USD. Default 6.50, the H100 catalog price
	// (CALIBRATION.md §3).
	PricePerGPUHour float64 `toml:"price_per_gpu_hour"`

	// EvictStragglers: a fail-slow GPU is evicted once detected instead of
	// setting the job's pace until its repair (ByteRobust's machine
	// eviction and warm-standby swap, CALIBRATION.md §1, S: eviction is
	// 32.52% of its resolutions on >= 9,600-GPU jobs). The straggler is
	// seen StragglerDetectionMinS..MaxS (uniform) after it begins; then
	// the job stops (losing the work since its last checkpoint), its
	// host goes to repair for what is left of the repair time, a spare
	// takes its place and the job restarts (RestartMinS..MaxS). Default
	// false: the job runs at the straggler's pace until the repair.
	EvictStragglers bool `toml:"evict_stragglers"`
	// StragglerDetectionMinS and StragglerDetectionMaxS bound the time from
	// a straggler's start to its eviction. Default 600–1,800 s: U, an
	// assumption (one 10–30 min throughput-monitoring window, as slow as
	// an NCCL timeout); no published figure for MFU-decline detection
	// was found.
	StragglerDetectionMinS float64 `toml:"straggler_detection_min_s"`
	StragglerDetectionMaxS float64 `toml:"straggler_detection_max_s"`
	// OverEvictHosts: an implicit failure (a hang, or a straggler being
	// evicted) evicts this many healthy hosts next to the suspect one as
	// well, because localisation is not exact (ByteRobust's over-eviction,
	// CALIBRATION.md §1, S: "~6–7 false-positive machines"); each takes a
	// spare and returns to the pool after OverEvictReturnS. Default 0.
	OverEvictHosts int `toml:"over_evict_hosts"`
	// OverEvictReturnS is how long a falsely evicted host is away (its
	// checks) before it rejoins the spares. Default 3,600 s: U, an
	// assumption; no published figure.
	OverEvictReturnS float64 `toml:"over_evict_return_s"`
	// PlannedEveryHours, when > 0, stops the job for planned maintenance
	// (firmware upgrades, configuration or dataset updates) every this
	// many hours of wall-clock time from its start: the job saves a
	// checkpoint (nothing is lost; the write is booked with the restart)
	// and restarts after RestartMinS..MaxS, with no detection and no host
	// taken out. A planned stop that finds the job already stopped is
	// done within that stop and costs nothing. Default 0 (none). Llama 3
	// had 47 planned interruptions in its 54-day snapshot besides the 419
	// unexpected ones (CALIBRATION.md §1, P): one every 27.6 h.
	PlannedEveryHours float64 `toml:"planned_every_hours"`

	// LemonFraction and LemonMultiplier make hosts' failure propensity
	// uneven (failures.Lemons): this fraction of the hosts fail at this
	// multiple of the others' rate, the fleet's total unchanged, and a
	// lemon stays one across repairs. Default 0 and 1 (every host alike;
	// a multiplier of 0 is taken as 1).
	// No public figure gives either: a scenario that sets them states its
	// assumption (lemon-removal's are in its header).
	LemonFraction   float64 `toml:"lemon_fraction"`
	LemonMultiplier float64 `toml:"lemon_multiplier"`
	// RetireAfterFailures, when > 0, is the detection policy: a host slot
	// that has had this many hardware failures that took it out within
	// RetireWindowHours has its server retired (quarantined for good: the
	// server never rejoins the spares, so each retirement costs the pool
	// a host for the rest of the run) and another put in the slot
	// (failures.Lemons.Replace). Meta RSC's lemon-node detection flags
	// repeat offenders this way (CALIBRATION.md §1 Meta RSC, S; the
	// threshold and window it used were not found). Default 0 (never).
	RetireAfterFailures int     `toml:"retire_after_failures"`
	RetireWindowHours   float64 `toml:"retire_window_hours"`
}

// DefaultConfig is a Llama-3-sized job with NCCL-watchdog detection and
// Meta's restart overhead.
func DefaultConfig() Config {
	return Config{
		GPUs: 16384, HorizonHours: 54 * 24, SpareServers: 10,
		DetectionMinS: 600, DetectionMaxS: 1800,
		RestartMinS: 300, RestartMaxS: 1200,
		CheckpointWriteS: 6.77, PricePerGPUHour: 6.50,
		StragglerDetectionMinS: 600, StragglerDetectionMaxS: 1800, OverEvictReturnS: 3600,
	}
}

// FastDetection sets ByteRobust's 10–30 s detection (CALIBRATION.md §1,
// ByteRobust, S: "detection 10–30 s vs 10–30 min timeout baselines").
func (c *Config) FastDetection() { c.DetectionMinS, c.DetectionMaxS = 10, 30 }

// Llama3PretrainConfig is the llama3-pretrain setup: 16,384 H100 in 2,048
// servers for 54 days, with a job tuned for restarts as Llama 3's was (it
// reports > 90% effective training time with 419 interruptions,
// CALIBRATION.md §1): fast detection, 10–30 s (ByteRobust, S), and a
// restart overhead of 5–15 min (Meta's 5–20 min range cut at MegaScale's
// "back to progress within 15 min", S). Checkpoints every Daly interval of
// the 6.77 s write (policies "daly"), 10 spare servers.
func Llama3PretrainConfig() Config {
	c := DefaultConfig()
	c.FastDetection()
	c.RestartMinS, c.RestartMaxS = 300, 900
	return c
}

// maxHorizonHours keeps a run inside sim.Time's range (about 100 years).
const maxHorizonHours = 100 * 365 * 24

// Validate records every problem of c under prefix.
func (c *Config) Validate(prefix string, ps *config.Problems) {
	ps.PositiveInt(config.Key(prefix, "gpus"), c.GPUs)
	ps.Positive(config.Key(prefix, "horizon_hours"), c.HorizonHours)
	if c.HorizonHours > maxHorizonHours {
		ps.Add(config.Key(prefix, "horizon_hours"), "must be at most %d (100 years), found %v", maxHorizonHours, c.HorizonHours)
	}
	if c.SpareServers < 0 {
		ps.Add(config.Key(prefix, "spare_servers"), "must be an integer >= 0, found %d", c.SpareServers)
	}
	pair := func(lo, hi string, a, b float64) {
		ps.NonNegative(config.Key(prefix, lo), a)
		ps.NonNegative(config.Key(prefix, hi), b)
		if b < a {
			ps.Add(config.Key(prefix, hi), "must be >= %s (%v), found %v", lo, a, b)
		}
		if b > maxHorizonHours*3600 {
			ps.Add(config.Key(prefix, hi), "must be at most %d, found %v", maxHorizonHours*3600, b)
		}
	}
	pair("detection_min_s", "detection_max_s", c.DetectionMinS, c.DetectionMaxS)
	pair("restart_min_s", "restart_max_s", c.RestartMinS, c.RestartMaxS)
	pair("straggler_detection_min_s", "straggler_detection_max_s", c.StragglerDetectionMinS, c.StragglerDetectionMaxS)
	if c.OverEvictHosts < 0 {
		ps.Add(config.Key(prefix, "over_evict_hosts"), "must be an integer >= 0, found %d", c.OverEvictHosts)
	}
	pair("over_evict_return_s", "over_evict_return_s", c.OverEvictReturnS, c.OverEvictReturnS)
	ps.NonNegative(config.Key(prefix, "planned_every_hours"), c.PlannedEveryHours)
	if c.PlannedEveryHours > maxHorizonHours {
		ps.Add(config.Key(prefix, "planned_every_hours"), "must be at most %d (100 years), found %v", maxHorizonHours, c.PlannedEveryHours)
	}
	if !(c.LemonFraction >= 0 && c.LemonFraction < 1) {
		ps.Add(config.Key(prefix, "lemon_fraction"), "must be in [0, 1), found %v", c.LemonFraction)
	}
	if c.LemonMultiplier != 0 && !(c.LemonMultiplier >= 1 && c.LemonMultiplier <= 1e6) {
		ps.Add(config.Key(prefix, "lemon_multiplier"), "must be 0 (off) or in [1, 1e6], found %v", c.LemonMultiplier)
	}
	if c.RetireAfterFailures < 0 {
		ps.Add(config.Key(prefix, "retire_after_failures"), "must be an integer >= 0, found %d", c.RetireAfterFailures)
	}
	ps.NonNegative(config.Key(prefix, "retire_window_hours"), c.RetireWindowHours)
	if c.RetireAfterFailures > 0 && !(c.RetireWindowHours > 0) {
		ps.Add(config.Key(prefix, "retire_window_hours"), "must be > 0 with retire_after_failures, found %v", c.RetireWindowHours)
	}
	ps.NonNegative(config.Key(prefix, "checkpoint_write_s"), c.CheckpointWriteS)
	if c.CheckpointWriteS > 30*24*3600 {
		ps.Add(config.Key(prefix, "checkpoint_write_s"), "must be at most 30 days, found %v", c.CheckpointWriteS)
	}
	ps.NonNegative(config.Key(prefix, "price_per_gpu_hour"), c.PricePerGPUHour)
}
