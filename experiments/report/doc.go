// Package report is what a run says: the summary of one run
// (Summarize(Result) -> Summary, written as summary.json and as a terminal
// table), statistics over replications (Aggregate, Stat: mean and 95%
// confidence interval of every flattened summary key), and the run
// directory every command writes (WriteRunDir: summary.json, cdf.csv,
// timeseries.csv, replications.csv, failures.csv, requests.csv, report.md),
// built in a staging directory and committed at once (staging.go), with
// temporary files removed if the command is stopped (temps.go).
//
// Read summary.go first (Summary and its blocks, Summarize), then a
// section's own block:
//
//	disagg.go    DisaggSummary and the TTFT split by stage
//	failures.go  FailureStats: what [failures] did (availability, outages)
//	kvtier.go    TierSummary: each KV tier's hits and bytes
//	serve.go     ModelStats: each served model's latencies and goodput
//	spot.go      the timeseries columns of a fleet of groups and spot parts
//	training.go  TrainingStats (ETTR and its losses)
//	result.go    Result, one run's raw outcome (the runner fills it), and
//	             RepResult, one replication's
//	aggregate.go flattening summaries to keys, statistics, the stats table
//	rundir.go    the run directory's files; their columns are declared in
//	             experiments/results, which plots read through
//	records.go   requests.csv, streamed as requests finish
//
// It never runs a simulation: package experiments does, and hands it the
// Result.
package report
