// Package calibrate fits an engine profile (hw.PerfProfile: the step
// model's efficiency constants) to measured serving results, the way a
// capacity planner uses fleetsim: benchmark a few configurations on the
// hardware at hand, fit, then simulate fleets that are not at hand.
//
// rows.go reads the inputs (a CSV in the layout of public-benchmarks.csv, or
// vLLM benchmark_serving.py result files) with every problem reported as
// FILE:LINE: column: message. fit.go runs each row once on one replica with
// the real scheduler, batching and KV admission, records its steps, and
// replays them under candidate profiles as weighted sums (hw.StepTally),
// so a fit of ~100 rows takes about a second; Nelder–Mead minimises the
// squared log errors within each constant's physical bounds. report.go
// compares, summarises and writes calibration.csv for `fleetsim plot`.
package calibrate
