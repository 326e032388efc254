// Package experiments turns scenario files into runs and results: the TOML
// schema (Scenario, with documented defaults), strict loading with file:line
// errors, the built-in scenarios embedded in the binary, the runner that
// wires models, policies and workloads together, and the summary written as
// JSON and as a terminal table.
//
// Read scenario.go for the schema, run.go for how a run is assembled, and
// summary.go for what a run reports. The models are wired, not written,
// here: failures.go starts models/faults (serving failures, spares,
// availability) and reports its block; training.go calls
// training.Simulate.
package experiments
