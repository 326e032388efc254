// Package engine is one serving replica: a vLLM-like engine on one TP group
// (or a wider layout, package hw), with its waiting queue and running batch,
// its scheduler, its paged KV allocator and prefix cache, and the KV tiers
// below its HBM as a backend of that cache. It knows nothing of pools,
// routing or the gateway: a fleet (package models/fleet) submits request copies,
// cancels them, fails and recovers the replica, and hears what happens
// through the Observer it gives it.
//
// The replica is split by concern, one job per file:
//
//	replica.go             Replica, its construction, Submit; Copy, Outcome, the
//	                       failure reasons, and the Observer it reports to
//	replica_state.go       ReplicaState, the snapshot a replica keeps up to date
//	                       for routing (and the StateIndex over a pool's snapshots)
//	replica_step.go        the step or decode run under way (stepState): planning, its end, tokens
//	replica_cancel.go      Cancel: a copy the gateway withdraws
//	replica_faults.go      failures, hangs, fail-slow, recovery, probes, OOM crashes (faultState)
//	replica_outbox.go      observer calls held until the event settles, and spare sequences (outbox)
//	replica_seq.go         seq, one request copy inside a replica, and the KV it holds (seqKV)
//	replica_stats.go       ReplicaStats and time-weighted accounting
//	replica_check.go       CheckInvariants, which tests call after every event
//	replica_handoff.go     a replica's side of disaggregated serving: the HandOff a
//	                       prefill replica gives its finished prefills' KV to, a
//	                       decode replica whose admissions find their KV in place
//	replicacfg.go          ReplicaConfig ([cluster.replica]) and the memory plan
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
//	kvtier.go              KV tiers below HBM ([kv_tiers]): host DRAM, SSD and a
//	                       shared store, each an LRU of prefix segments
//
// A replica calls its scheduler, allocator and admission policy through
// interfaces chosen once at construction, and its observer through an
// interface, once per event or per admitted sequence; the loops over the
// batch inside each are concrete code. Its cost per request does not depend
// on output length (DESIGN.md, fixed decision 5): a decode-only stretch is
// one event (hw.StepModel.Decode's closed form).
package engine
