// Package training simulates a synchronous training job on a failing
// cluster and reports its effective training time ratio (ETTR), its
// interruptions and where the lost GPU-hours went.
//
//	config.go    Config (a scenario's [training] table) with its cited
//	             defaults and Validate; the CheckpointPolicy interface,
//	             implemented in package policies (fixed, young, daly)
//	job.go       Job: the state machine (running → detecting → waiting for
//	             spares → restarting → running) driven by a sim.Engine and
//	             a failures.Source; with EvictStragglers a straggler's host
//	             is evicted once seen and a spare takes its place, and
//	             OverEvictHosts healthy neighbours go with a suspect one
//	             (ByteRobust's eviction and over-eviction)
//	parts.go     what a Job owns, each part with its methods: the
//	             checkpoint cycle (closed-form progress), the stragglers
//	             in progress, the host pool (hosts out for repair, spares),
//	             the loss accounts by cause and the failure tally
//	result.go    Result and LostGPUHours
//	simulate.go  Simulate: one replication of a Spec (profile and rate
//	             multiplier, stragglers, checkpoint policy, seed); the one
//	             path of the runner and the tests
//
// The job schedules an event per failure, detection, restart, repair and
// straggler, never per step or checkpoint: progress between events is a
// closed form (compute intervals of fixed work, each followed by a blocking
// write). A run of 54 days on 16,384 GPUs is about 2,000 events. Every
// random draw comes from named streams ("failures" for the failure
// generator, "training" for detection, restart and straggler-detection
// times, the last drawn only with EvictStragglers), so two runs with
// different checkpoint policies see the same failures.
package training
