// Package experiments turns scenarios (package experiments/scenario) into
// runs and results: the built-in scenarios embedded in the binary, the
// runner that wires models, policies and workloads together, replications
// on a worker pool, A/B comparisons, sweeps, sizing searches, sharding, and
// the summary written as JSON and as a terminal table.
//
// Read run.go for how a run is assembled and summary.go for what a run
// reports. The models are wired, not written, here: failures.go starts the
// serving failures of models/failures (spares, availability) and reports
// its block; training.go calls training.Simulate.
package experiments
