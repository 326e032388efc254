package models

import "github.com/fleetsim/fleetsim/workloads"

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

// Router chooses the replica for a new request. It reads the snapshot and
// returns a decision; it never mutates fleet state. replicas has one entry per
// replica, in index order. Route returns ok=false when no available replica
// can take the request (the request is then shed and counted).
type Router interface {
	Route(req *workloads.Request, replicas []ReplicaState) (index int, ok bool)
}
