// Package streams names every random stream of a simulation, in one place.
// A component draws only from its own stream, derived from the master seed by
// name (sim.Streams), never by the order of earlier draws: adding a policy or
// a draw never shifts another component's numbers, so A/B arms share their
// common random numbers (DESIGN.md, fixed decision 3).
package streams

import "strconv"

// Top-level streams, derived from the scenario's master seed.
const (
	Workload = "workload" // the request source; its parts are sub-streams below
	Router   = "router"   // a router's draws (random, p2c)
	Retry    = "retry"    // retry backoff jitter
	Rollout  = "rollout"  // the canary's traffic split
	Failures = "failures" // stochastic hardware failures
	Training = "training" // a training job's own draws
	Lemons   = "lemons"   // which hosts are lemons (failures.Lemons)
	// Speculation draws each request's speculative-decoding acceptance
	// quantile at the gateway's intake (workloads.Request.SpecQuantile).
	Speculation = "speculation"
	Spot        = "spot"   // spot-instance interruptions
	Models      = "models" // which served model each request asks for ([[serve]] shares)
	faults      = "faults" // scripted [[faults]]: one stream per table, Fault(i)

	// DecodeRouter is a disaggregated fleet's decode-pool router's draws.
	DecodeRouter = "decode-router"
	// DecodeSpot is the interruptions of a disaggregated fleet's decode
	// pool's spot replicas (spot.decode_replicas).
	DecodeSpot = "decode-spot"
)

// Sub-streams of Workload.
const (
	Arrival = "arrival" // inter-arrival times
	Input   = "input"   // prompt lengths
	Output  = "output"  // output lengths
	Prompt  = "prompt"  // which system prompt
	Turns   = "turns"   // turns per session
	Think   = "think"   // think time between turns
	Salt    = "salt"    // the salt of generated prefix hashes
	// Resample draws how many times each trace row is replayed
	// (workload.trace.resample = "poisson").
	Resample = "resample"
)

// Serve is the stream of the i-th [[serve]] table's own request lengths
// ([serve.workload]).
func Serve(i int) string { return "serve/" + strconv.Itoa(i) }

// Fault is the stream of the i-th [[faults]] table.
func Fault(i int) string { return faults + "/" + strconv.Itoa(i) }

// GroupFailures is the stochastic failures stream of the replica group
// named group ([[cluster.groups]]): each group's servers fail on their own.
func GroupFailures(group string) string { return Failures + "/" + group }
