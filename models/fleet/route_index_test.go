package fleet_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/policies"
)

// indexedRouters are policies' routers the gateway answers from its
// routing index: the scans the index must match.
var indexedRouters = []fleet.IndexedRouter{
	policies.NewLeastOutstanding(),
	policies.NewLeastKV(),
	policies.NewWeightedLeastOutstanding(),
}

// kvValues and capacities are the values the random fleets draw from: few,
// so that ties are common, including equal floats reached by different
// fractions (1/3 and 100/300; 0.25 and 25/100), -0 against +0, and values
// no valid fleet holds (negative, infinite; NaN, which the index leaves to
// the router).
var (
	kvValues   = []float64{0, math.Copysign(0, -1), 0.25, 25.0 / 100, 1.0 / 3, 100.0 / 300, 0.5, 0.7, 1, -0.5, math.Inf(1)}
	capacities = []float64{1, 1, 0.5, 0.25, 2, 1.0 / 3, 0.3, 0, -1, math.Inf(1)}
)

// wideFor reports whether the index of n replicas cannot encode s's key
// for router k (the gateway then asks the router): an Outstanding beyond
// 32 bits where the key holds it, a NaN float; for least-outstanding on at
// most 4,096 replicas (bucketed by Outstanding, with at most 2^21 bitmap
// words of levels, ceil(n/64) words each), a negative Outstanding or one
// beyond the levels.
func wideFor(k fleet.RouteKey, n int, s *engine.ReplicaState) bool {
	wideOut := s.Outstanding < math.MinInt32 || s.Outstanding > math.MaxInt32
	if k == fleet.KeyOutstanding && n <= 4096 {
		wideOut = s.Outstanding < 0 || s.Outstanding >= (1<<21)/max(1, (n+63)/64)
	}
	switch k {
	case fleet.KeyKVUtilization:
		return wideOut || math.IsNaN(s.KVUtilization)
	case fleet.KeyWeightedOutstanding:
		c := s.Capacity
		if c <= 0 {
			c = 1
		}
		return math.IsNaN(float64(s.Outstanding+1) / c)
	default:
		return wideOut
	}
}

// TestRouteIndexMatchesScan drives the index of each indexed router
// through 12,000 random event sequences (arrivals, finishes, replicas going
// unavailable and back, KV utilisations and capacities changing among few
// values, resets to zero, values the index cannot encode) on fleets of 0 to
// 130 replicas with many ties, and checks every decision against the
// router's own Route. Least-outstanding's index buckets fleets of up to
// 4,096 replicas by Outstanding and keeps a tree above that: "large" runs
// 150 sequences on 4,090 to 4,200 replicas, across that line.
func TestRouteIndexMatchesScan(t *testing.T) {
	for _, router := range indexedRouters {
		k := router.IndexKey()
		t.Run(fmt.Sprintf("%T", router), func(t *testing.T) { routeIndexVsScan(t, router, k, 12_000, 0, 131, 100_000) })
	}
	t.Run("large", func(t *testing.T) {
		routeIndexVsScan(t, policies.NewLeastOutstanding(), fleet.KeyOutstanding, 150, 4090, 111, 2_000)
	})
}

// routeIndexVsScan is TestRouteIndexMatchesScan for one router: trials
// random fleets of n0 to n0+span-1 replicas; it fails unless at least
// minDecisions decisions were compared.
func routeIndexVsScan(t *testing.T, router fleet.IndexedRouter, k fleet.RouteKey, trials, n0, span, minDecisions int) {
	{
		{
			rng := rand.New(rand.NewPCG(11, uint64(k)+uint64(n0)))
			decisions, wideSeen := 0, 0
			for trial := range trials {
				n := n0 + rng.IntN(span)
				states := make([]engine.ReplicaState, n)
				for i := range states {
					states[i] = engine.ReplicaState{Index: i, Available: rng.IntN(8) != 0, Outstanding: rng.IntN(3),
						KVUtilization: kvValues[rng.IntN(4)], Capacity: capacities[rng.IntN(len(capacities))]}
				}
				if trial%100 == 0 {
					for i := range states {
						states[i].Available = false
					}
				}
				x := fleet.NewRouteIndexForTest(k, states)
				for range 1 + rng.IntN(40) {
					if n > 0 {
						i := rng.IntN(n)
						s := &states[i]
						switch op := rng.IntN(60); {
						case op < 16:
							s.Outstanding++
						case op < 30:
							if s.Outstanding > 0 {
								s.Outstanding--
							}
						case op < 36:
							s.Available = !s.Available
						case op < 39:
							s.Outstanding = 0
						case op < 50:
							s.KVUtilization = kvValues[rng.IntN(len(kvValues))]
						case op < 53:
							// A real replica's utilisation: used/total blocks.
							s.KVUtilization = float64(rng.IntN(301)) / 300
						case op < 57:
							s.Capacity = capacities[rng.IntN(len(capacities))]
						default:
							switch rng.IntN(5) {
							case 0:
								s.Outstanding = math.MaxInt32 + 1
							case 1:
								s.Outstanding = math.MinInt32 - 1
							case 2:
								s.Outstanding = -1 - rng.IntN(2) // encodable: ordered below 0
							case 3:
								s.KVUtilization = math.NaN()
							default:
								s.Capacity = math.NaN()
							}
						}
						x.Fix(i)
					}
					wide := 0
					for i := range states {
						if wideFor(k, n, &states[i]) {
							wide++
						}
					}
					if x.Wide() != wide {
						t.Fatalf("trial %d: index counts %d wide replicas, there are %d", trial, x.Wide(), wide)
					}
					if wide > 0 {
						wideSeen++
						continue
					}
					gi, gok := x.Least()
					wi, wok := router.Route(nil, states)
					decisions++
					if gi != wi || gok != wok {
						t.Fatalf("trial %d, fleet %+v: index gives %d, %v; the router %d, %v", trial, states, gi, gok, wi, wok)
					}
				}
			}
			if decisions < minDecisions || wideSeen == 0 {
				t.Fatalf("only %d decisions compared, %d with wide replicas", decisions, wideSeen)
			}
			t.Logf("%d decisions compared (%d skipped with wide replicas)", decisions, wideSeen)
		}
	}
}

// benchRouting is one request's routing work on 128 replicas holding
// 60-100 requests each: a decision, the chosen replica's Outstanding+1,
// and another request finishing (Outstanding-1 at a replica drawn from a
// fixed sequence); with kv, each change also moves that replica's KV
// utilisation (move); with
// groups, the replicas have four capacities. "scan" asks router.Route,
// "index" the routing index.
func benchRouting(b *testing.B, router fleet.IndexedRouter, kv, groups bool) {
	rng := rand.New(rand.NewPCG(7, 8))
	fresh := func() []engine.ReplicaState {
		rs := make([]engine.ReplicaState, 128)
		for i := range rs {
			o := 60 + rng.IntN(40)
			rs[i] = engine.ReplicaState{Index: i, Available: true, Outstanding: o, Capacity: 1}
			if kv {
				rs[i].KVUtilization = float64(10*o) / benchBlocks
			}
			if groups {
				rs[i].Capacity = []float64{1, 0.5, 0.37, 0.2}[i%4]
			}
		}
		return rs
	}
	done := make([]int, 4096)
	for i := range done {
		done[i] = rng.IntN(128)
	}
	b.Run("scan", func(b *testing.B) {
		rs := fresh()
		k := 0
		for b.Loop() {
			i, _ := router.Route(nil, rs)
			move(&rs[i], 1, kv)
			if j := done[k&4095]; rs[j].Outstanding > 0 {
				move(&rs[j], -1, kv)
			}
			k++
		}
	})
	b.Run("index", func(b *testing.B) {
		rs := fresh()
		x := fleet.NewRouteIndexForTest(router.IndexKey(), rs)
		k := 0
		for b.Loop() {
			i, _ := x.Least()
			move(&rs[i], 1, kv)
			x.Fix(i)
			if j := done[k&4095]; rs[j].Outstanding > 0 {
				move(&rs[j], -1, kv)
				x.Fix(j)
			}
			k++
		}
	})
}

// benchBlocks is the KV blocks of a replica in benchRouting.
const benchBlocks = 2000

// move adds d to r's outstanding requests, and with kv moves its KV
// utilisation with them (10 blocks a request).
func move(r *engine.ReplicaState, d int, kv bool) {
	r.Outstanding += d
	if kv {
		r.KVUtilization = float64(10*r.Outstanding) / benchBlocks
	}
}

// BenchmarkLeastOutstanding128 is least-outstanding's routing work on 128
// replicas (benchRouting).
func BenchmarkLeastOutstanding128(b *testing.B) {
	benchRouting(b, policies.NewLeastOutstanding(), false, false)
}

// BenchmarkLeastKV128 is least-kv's routing work on 128 replicas whose KV
// utilisation follows their outstanding requests (benchRouting).
func BenchmarkLeastKV128(b *testing.B) {
	benchRouting(b, policies.NewLeastKV(), true, false)
}

// BenchmarkWeightedLeastOutstanding128 is weighted-least-outstanding's
// routing work on 128 replicas in four groups of different capacity
// (benchRouting).
func BenchmarkWeightedLeastOutstanding128(b *testing.B) {
	benchRouting(b, policies.NewWeightedLeastOutstanding(), false, true)
}
