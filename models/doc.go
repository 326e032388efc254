// Package models is the simulated serving world: the paged KV allocator with
// its prefix cache, the vLLM-like serving replica, and the fleet with its
// gateway. The hardware and model catalog, layouts and the step-time model
// of one engine step (with its engine profiles) are package models/hw.
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
//	route_index.go       the routing index: IndexedRouter's decision (least
//	                     outstanding, least KV, weighted) in O(log n) per change
//	gateway_policies.go  Policies; admission, timeouts, hedges, breakers
//	health.go            Health: probes, ejection, time to isolate a fault
//	sampling.go          Sampler: the time series and the drain limit
//	intake.go            the workload, pulled one request at a time
//	rollout.go           a blue-green rollout: traffic split and judge
//	autoscale.go         Autoscaler: parks, starts (cold start) and drains
//	                     replicas as a ScalePolicy asks; provisioned time
//	coldstart.go         ColdStartConfig: provisioning + engine start +
//	                     weight load over its path + warm-up
//	metrics.go           Recorder: outcome counts and latency sketches
//
// The serving replica is split by concern, one job per file:
//
//	replica.go             Replica, its construction, Submit, and the Observer it reports to
//	replica_step.go        the step or decode run under way (stepState): planning, its end, tokens
//	replica_cancel.go      Cancel: a copy the gateway withdraws
//	replica_faults.go      failures, hangs, fail-slow, recovery, probes, OOM crashes (faultState)
//	replica_outbox.go      observer calls held until the event settles, and spare sequences (outbox)
//	replica_seq.go         seq, one request copy inside a replica, and the KV it holds (seqKV)
//	replica_stats.go       ReplicaStats and time-weighted accounting
//	replica_check.go       CheckInvariants, which tests call after every event
//	sched.go               the scheduler interface (one per batching mode) and what all share:
//	                       the queue head, admission of a sequence, its KV growth
//	sched_static.go        static (request-level) batching
//	sched_iteration.go     what continuous and chunked batching share: decode runs, preemption
//	decoders.go            the decode clock: the decoding sequences advanced together, as sums planning reads
//	sched_continuous.go    continuous batching: whole-prompt prefill steps that pause decoding
//	sched_chunked.go       chunked prefill beside decoding, under the token budget
//	kvalloc.go             the kvAllocator interface (one per allocator mode)
//	kvalloc_paged.go       the paged allocator and the prefix cache's use of it
//	kvalloc_contiguous.go  the contiguous allocator: first-fit regions, fragmentation, OOM
//	kvadmission.go         KV admission: "prompt" (vLLM) or "full" (no preemption)
//	kvcache.go             KVCache, the block store with its prefix-cache entries and regions
//	fleet_layout.go        the fleet's layout (hw.Layout) and its validation
//
// A replica calls its scheduler, allocator and admission policy through
// interfaces once per event or per admitted sequence; the loops over the
// batch inside each are concrete code.
package models
