// Package failures models how GPU fleets fail and what failures do to a
// serving fleet. Its first half is what fails and how often: a taxonomy of
// components with their failure unit (blast radius), mode, NVIDIA Xid code,
// recommended repair action and precursor signals; failure profiles
// calibrated from public data; streaming generators of failure events; a
// replay source for real fault logs; and a report of what failed and how
// much capacity was lost. Its second half applies failures to a serving
// fleet (package models/fleet): scripted faults, stochastic failures on the
// fleet's placement, repairs and cold starts, warm spares and availability.
// Training jobs (package models/training) use the first half only.
//
// What fails, in this order:
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
// What failures do to a serving fleet:
//
//	serving.go       Config, a scenario's [failures] table, and the
//	                 runaway-rate guard (CheckRate)
//	scripted.go      Scripted, a [[faults]] table: one fault at a fixed time
//	                 (ScriptedModes: fail, oom, hang, slow, flap, stall,
//	                 maintenance)
//	applier.go       Applier, the one fault applier: strike says what each
//	                 failure mode does to a replica; Inject schedules a
//	                 scripted fault; Remove takes a replica out for a run
//	injector.go      Injector (Applier.Start): stochastic failures from a
//	                 profile on the fleet's placement (both pools of a
//	                 disaggregated fleet: the decode pool's GPUs after the
//	                 prefill pool's), precursor drains, repairs and cold
//	                 starts; FleetReport (and PoolReport, the decode pool's)
//	sparepool.go     SparePool: warm spares swapped in for long repairs,
//	                 one per pool
//	availability.go  Availability: slots down over time, the timeline, and
//	                 the time with at least x% of slots down (Tally), one per
//	                 pool, sharing the timeline
//
// Rates are incidents per GPU-hour: a fleet of N GPUs sees N times the rate
// whatever its topology, and a unit of g GPUs fails g times as often as one
// GPU. Two topologies of the same GPUs with the same profile therefore have
// as many incidents; the one with bigger units (an NVL72 rack against an
// HGX server) loses more GPUs per incident and more GPU-hours. Every
// random draw comes from the *rand.Rand the caller passes (a named stream);
// nothing reads the clock or starts a goroutine.
package failures
