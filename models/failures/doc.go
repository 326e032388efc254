// Package failures models how GPU fleets fail: a taxonomy of components
// with their failure unit (blast radius), mode, NVIDIA Xid code,
// recommended repair action and precursor signals; failure profiles
// calibrated from public data; streaming generators of failure events; a
// replay source for real fault logs; and a report of what failed and how
// much capacity was lost.
//
// Read it in this order:
//
//	taxonomy.go   Component, Scope (process, GPU, host = NVL72 tray or HGX
//	              server, NVLink domain, NVLink domain degraded, rack, row),
//	              Mode (fail-stop, hang, fail-slow, link-flap, OOM,
//	              nvlink-degraded), Action
//	              (restart-app, reset-gpu, reboot-node, rma), the Xid table
//	              (CALIBRATION.md §2) and each component's defaults (Spec)
//	topology.go   Topology: HGX servers of 8 GPUs or GB200 NVL72 racks of 72
//	              (18 trays of 4, 9 switch trays) behind ToR switches, racks
//	              in rows; the GPUs of each unit
//	profile.go    Profile (rows of per-GPU-hour rates; Scaled, the rate
//	              multiplier), the registry of
//	builtin.go    built-in profiles: llama3, byterobust, meta-rsc, meta-rsc-2,
//	              none; default repair times
//	rackscale.go  rack-scale parts (NVLink switch trays, power shelves, liquid
//	              cooling): their assumed rates and repair paths, and the
//	              rackscale profile
//	escalation.go repair escalation: reset → reboot → reimage → hardware
//	              swap → RMA, stages with repair times and fix probabilities
//	jobs.go       job-level interruptions: causes (hardware, software,
//	              collective, infra, user), job MTTF by size, published
//	              job-level figures, the meta-rsc-job profile
//	config.go     Overrides: a scenario's [[failures.components]] tables
//	              (add, override or scale a row), [failures.ttf] and
//	              [failures.repair.ACTION], with Validate and Apply
//	dist.go       repair-time distributions (fixed, lognormal, empirical), TTF
//	event.go      Event and the Source interface consumers pull from
//	generator.go  Generator: superposed Poisson processes, or exact Weibull
//	              renewal with a cohort and a heap; O(failures), never a tick
//	signals.go    Signals: failures interleaved with their precursors
//	faultmap.go   Classify: InfiniteHBD fault-log classes → the taxonomy
//	replay.go     Replay: a fault log (workloads.FaultLogReader) as a Source
//	report.go     Tally and Report: counts by category, Xid and mode, GPUs lost
//	              per incident, repair times, time with ≥ x% of GPUs down
//	              (exact sweep line), capacity over time
//
// Rates are incidents per GPU-hour: a fleet of N GPUs sees N times the rate
// whatever its topology, and a unit of g GPUs fails g times as often as one
// GPU. Two topologies of the same GPUs with the same profile therefore have
// as many incidents; the one with bigger units (an NVL72 rack against an
// HGX server) loses more GPUs per incident and more GPU-hours. Every
// random draw comes from the *rand.Rand the caller passes (a named stream);
// nothing reads the clock or starts a goroutine.
package failures
