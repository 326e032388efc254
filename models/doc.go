// Package models is the simulated world: the hardware and LLM catalogs, the
// roofline performance model of one continuous-batching step, the paged KV
// allocator with its prefix cache, the vLLM-like serving replica, and the
// fleet with its gateway.
//
// Decision points are small interfaces declared here with the read-only
// snapshot they see (Router and ReplicaState in router.go); implementations
// live in package policies.
package models
