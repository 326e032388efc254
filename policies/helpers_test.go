package policies

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/workloads"
)

// fleetB builds a []engine.ReplicaState snapshot: replicas(n) is n available,
// idle replicas; the methods set fields in place and return the builder.
type fleetB []engine.ReplicaState

func replicas(n int) fleetB {
	f := make(fleetB, n)
	for i := range f {
		f[i] = engine.ReplicaState{Index: i, Available: true}
	}
	return f
}

// down marks replicas unavailable.
func (f fleetB) down(idx ...int) fleetB {
	for _, i := range idx {
		f[i].Available = false
	}
	return f
}

// out sets Outstanding of replicas 0, 1, ... in order.
func (f fleetB) out(v ...int) fleetB {
	for i, x := range v {
		f[i].Outstanding = x
	}
	return f
}

// allOut sets every replica's Outstanding to v.
func (f fleetB) allOut(v int) fleetB {
	for i := range f {
		f[i].Outstanding = v
	}
	return f
}

// kv sets KVUtilization of replicas 0, 1, ... in order.
func (f fleetB) kv(v ...float64) fleetB {
	for i, x := range v {
		f[i].KVUtilization = x
	}
	return f
}

func (f fleetB) states() []engine.ReplicaState { return []engine.ReplicaState(f) }

// clone returns an independent copy.
func (f fleetB) clone() fleetB { return append(fleetB(nil), f...) }

// prefixReq returns a request whose Prefix has segments with the given hashes.
func prefixReq(hashes ...uint64) *workloads.Request {
	r := &workloads.Request{ID: 1, InputTokens: 4096, OutputTokens: 128}
	for _, h := range hashes {
		r.Prefix = append(r.Prefix, workloads.Segment{Hash: h, Tokens: 512})
	}
	return r
}

// plainReq is a request without a shared prefix.
var plainReq = &workloads.Request{ID: 1, InputTokens: 100, OutputTokens: 10}

// seeded returns a fixed-seed stream for tests.
func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0xda3e39cb94b95bdb)) }

// newRouter builds a router through the registry from the default config
// with name and the optional edit applied.
func newRouter(t testing.TB, name string, n int, seed uint64, edit ...func(*RouterConfig)) fleet.Router {
	t.Helper()
	cfg := DefaultRouterConfig()
	cfg.Name = name
	for _, e := range edit {
		e(&cfg)
	}
	r, err := NewRouter(cfg, n, seeded(seed))
	require.NoError(t, err)
	return r
}

// chiSquare returns sum (obs-exp)^2/exp over the cells with exp > 0.
func chiSquare(obs []int, exp []float64) float64 {
	var x float64
	for i := range obs {
		if exp[i] > 0 {
			d := float64(obs[i]) - exp[i]
			x += d * d / exp[i]
		}
	}
	return x
}
