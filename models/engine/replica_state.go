package engine

// ReplicaState is the read-only snapshot of one serving replica that routing
// decisions see. Index is the replica's position in the fleet (stable for the
// whole run).
type ReplicaState struct {
	Index int
	// Available is false when the replica must not receive new requests
	// (down, starting, draining, or ejected by a policy).
	Available bool
	// Outstanding is the number of requests routed to the replica and not yet
	// finished (waiting + running).
	Outstanding int
	// Waiting is the number of requests queued and not yet admitted.
	Waiting int
	// OutstandingTokens is the sum over outstanding requests of prompt tokens
	// not yet prefilled plus output tokens not yet generated.
	OutstandingTokens int64
	// KVUtilization is the fraction of KV blocks in use by running sequences
	// (0..1); blocks held only by the prefix cache do not count.
	KVUtilization float64
	// Capacity is the replica's relative serving capacity: 1 in a fleet of
	// one kind; in a fleet of groups, the group's decode throughput over the
	// fastest group's (Group.Capacity).
	Capacity float64
}

// StateIndex is an index over a pool's routing snapshot that its replicas
// keep exact (the pool's routing index): a replica calls Fix with its index
// right after its entry's Outstanding (or, when it watches KV utilisation,
// KVUtilization) changed; CheckInvariants asks Check.
type StateIndex interface {
	Fix(i int)
	Check(i int) error
}
