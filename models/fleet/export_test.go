package fleet

import "github.com/fleetsim/fleetsim/models/engine"

// RouteIndexForTest exposes the routing index to package models_test,
// whose tests and benchmarks compare it with package policies' routers
// (which package fleet cannot import).
type RouteIndexForTest struct{ x *routeIndex }

// NewRouteIndexForTest indexes states by k.
func NewRouteIndexForTest(k RouteKey, states []engine.ReplicaState) RouteIndexForTest {
	return RouteIndexForTest{newRouteIndex(k, states)}
}

// Fix re-reads replica i's entry after any of its fields changed.
func (t RouteIndexForTest) Fix(i int) { t.x.fix(i) }

// Least is the index's decision (valid while Wide is 0).
func (t RouteIndexForTest) Least() (int, bool) { return t.x.least() }

// Wide is the number of replicas whose key the index cannot encode.
func (t RouteIndexForTest) Wide() int { return t.x.wide }
