// Package faults is the serving fleet's failure model: what faults do to
// the replicas of a models.Fleet, and what that costs in availability. It
// sits between models (the fleet it acts on) and models/failures (the
// taxonomy, profiles and generators it draws from); experiments wires it
// from a scenario and reports its Report.
//
// Read it in this order:
//
//	config.go        Config, a scenario's [failures] table, and the
//	                 runaway-rate guard (CheckRate)
//	scripted.go      Scripted, a [[faults]] table: one fault at a fixed time
//	applier.go       Applier, the one fault applier: strike says what each
//	                 failure mode does to a replica; Inject schedules a
//	                 scripted fault; Remove takes a replica out for a run
//	injector.go      Injector (Applier.Start): stochastic failures from a
//	                 profile on the fleet's placement (both pools of a
//	                 disaggregated fleet: the decode pool's GPUs after the
//	                 prefill pool's), precursor drains, repairs and cold
//	                 starts; Report (and PoolReport, the decode pool's)
//	spares.go        SparePool: warm spares swapped in for long repairs,
//	                 one per pool
//	availability.go  Availability: slots down over time, the timeline, and
//	                 the time with at least x% of slots down (failures.Tally),
//	                 one per pool, sharing the timeline
//
// Everything runs on the fleet's engine, draws only from the streams it is
// given, and never reads the clock.
package faults
