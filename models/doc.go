// Package models is the simulated world. Its code lives in the packages
// below it, each with a doc.go that says how to read it:
//
//	models/hw        what a replica runs on and what it runs: the GPU and
//	                 model catalog, precisions, layouts (TP, DP, EP, PP), the
//	                 step-time model and engine profiles
//	models/engine    one serving replica: queue and batch, schedulers, the
//	                 paged KV allocator and prefix cache, KV tiers below HBM
//	models/fleet     the serving fleet: pools, the gateway and its routing
//	                 index, health, rollouts, autoscaling, spot capacity,
//	                 disaggregation's hand-off between pools
//	models/failures  how GPU fleets fail (the taxonomy, rates, topology,
//	                 generators and replay of failure events) and what
//	                 failures do to a serving fleet (scripted faults,
//	                 calibrated failures injected on its placement, repairs,
//	                 warm spares, availability)
//	models/training  a synchronous training job on a failing cluster
//
// Dependencies point down: fleet imports engine, engine imports hw;
// failures imports fleet to act on it; training imports failures; nothing
// here imports experiments or policies.
package models
