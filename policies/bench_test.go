package policies

import (
	"testing"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/workloads"
)

// benchFleet is a fleet of n replicas with varied loads, one in eight
// unavailable.
func benchFleet(n int) []engine.ReplicaState {
	rng := seeded(99)
	f := replicas(n)
	for i := range f {
		f[i].Available = i%8 != 5
		f[i].Outstanding = rng.IntN(32)
		f[i].Waiting = f[i].Outstanding / 4
		f[i].KVUtilization = rng.Float64()
	}
	return f.states()
}

// benchRequests returns n requests, each with its own three-segment prefix.
func benchRequests(n int) []*workloads.Request {
	rng := seeded(98)
	reqs := make([]*workloads.Request, n)
	for i := range reqs {
		reqs[i] = prefixReq(rng.Uint64(), rng.Uint64(), rng.Uint64())
	}
	return reqs
}

// BenchmarkRoute measures one routing decision over 128 replicas.
func BenchmarkRoute(b *testing.B) {
	f := benchFleet(128)
	reqs := benchRequests(1024)
	for _, name := range RouterNames() {
		b.Run(name, func(b *testing.B) {
			r := newRouter(b, name, len(f), 1)
			b.ReportAllocs()
			k := 0
			for b.Loop() {
				r.Route(reqs[k&1023], f)
				k++
			}
		})
	}
}
