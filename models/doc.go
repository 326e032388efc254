// Package models is the simulated world: the hardware and LLM catalogs, the
// roofline performance model of one continuous-batching step, the paged KV
// allocator with its prefix cache, the vLLM-like serving replica, and the
// fleet with its gateway.
//
// Decision points are small interfaces declared here with the read-only
// snapshot they see (Router and ReplicaState in router.go, the gateway's
// policies in policy.go); implementations live in package policies.
//
// The fleet is wired from parts with one job each (NewFleet in fleet.go
// connects them; Fleet embeds them, so their methods are the fleet's). What
// faults do to the fleet (scripted and stochastic, spares, availability)
// is package models/faults.
//
//	fleet.go             FleetConfig and placement; Fleet and its constructor
//	pool.go              Pool: the replicas, their routing snapshot and the
//	                     availability flags (rotation, breaker, warm spare);
//	                     drains; the failure reasons of faults
//	gateway.go           Gateway: client requests and their copies, the
//	                     replicas' Observer, routing and the fallback pool
//	gateway_policies.go  Policies; admission, timeouts, hedges, breakers
//	health.go            Health: probes, ejection, time to isolate a fault
//	sampling.go          Sampler: the time series and the drain limit
//	intake.go            the workload, pulled one request at a time
//	rollout.go           a blue-green rollout: traffic split and judge
//	metrics.go           Recorder: outcome counts and latency sketches
package models
