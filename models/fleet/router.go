package fleet

import (
	"github.com/fleetsim/fleetsim/workloads"

	"github.com/fleetsim/fleetsim/models/engine"
)

// Router chooses the replica for a new request. It reads the snapshot and
// returns a decision; it never mutates fleet state. replicas has one entry per
// replica, in index order. Route returns ok=false when no available replica
// can take the request (the request is then shed and counted).
type Router interface {
	Route(req *workloads.Request, replicas []engine.ReplicaState) (index int, ok bool)
}
