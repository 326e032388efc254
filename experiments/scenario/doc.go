// Package scenario is a scenario file: its schema (Scenario, every field
// with its unit and default), strict loading with file:line errors
// (Load, Parse), overlays (A/B arms, sweep points, command-line overrides:
// Derive), the resolution of derived settings (cold starts, spares,
// groups, traces, engine profiles) and validation that reports every
// problem at once. It runs nothing: package experiments builds and runs
// what a scenario describes, and reports it.
//
// Read scenario.go first (the schema, Load, Parse, Derive, Validate), then
// a section's own file:
//
//	disagg.go    [disagg]: DisaggScenario, its defaults and validation
//	spot.go      [spot]: SpotConfig; the spot parts of a fleet (SpotParts)
//	             and the replicas run.down_replicas keeps in repair
//	serve.go     [[serve]]: the models a fleet of groups serves
//	rollout.go   [rollout]: its green replicas (RolloutGreen) and validation
//	kvtier.go    [kv_tiers] validation
//	failures.go  [failures] warm spares resolved from spare_coverage
//	training.go  mode = "training" and [training]
//	size.go      [size] and --slo targets (ParseSLO)
//	sweep.go     [sweep] and --param axes (ParseAxis)
//	run.go       the replicas in repair for the whole run (DownIndexes)
//	limits.go    the bounds that keep a run's memory and time sane
//	names.go     scenario and point names, and trace paths, checked
//	traces.go    the traces shipped in the binary ("builtin:" paths)
//
// The built-in scenarios themselves live in experiments/scenarios/ (package
// experiments embeds them).
package scenario
