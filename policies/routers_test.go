package policies

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/workloads"
)

// TestRoutersHandMade checks each router's choices, in order, when asked
// repeatedly about one fixed snapshot.
func TestRoutersHandMade(t *testing.T) {
	tests := []struct {
		name   string
		router string
		fleet  fleetB
		req    *workloads.Request
		want   []int // successive choices; nil means ok=false
	}{
		{"rr cycles in index order", RouterRoundRobin, replicas(3), plainReq, []int{0, 1, 2, 0, 1}},
		{"rr skips unavailable", RouterRoundRobin, replicas(4).down(1), plainReq, []int{0, 2, 3, 0, 2}},
		{"rr single available", RouterRoundRobin, replicas(4).down(0, 1, 3), plainReq, []int{2, 2, 2}},
		{"lor fewest outstanding", RouterLeastOutstanding, replicas(3).out(3, 1, 2), plainReq, []int{1, 1}},
		{"lor tie lowest index", RouterLeastOutstanding, replicas(4).out(2, 1, 5, 1), plainReq, []int{1}},
		{"lor skips unavailable best", RouterLeastOutstanding, replicas(3).out(3, 1, 2).down(1), plainReq, []int{2}},
		{"lor all idle", RouterLeastOutstanding, replicas(3), plainReq, []int{0}},
		{"kv lowest utilisation", RouterLeastKV, replicas(3).kv(0.5, 0.2, 0.7).out(0, 9, 0), plainReq, []int{1}},
		{"kv tie fewer outstanding", RouterLeastKV, replicas(3).kv(0.2, 0.2, 0.2).out(3, 1, 1), plainReq, []int{1}},
		{"kv full tie lowest index", RouterLeastKV, replicas(3).kv(0.3, 0.3, 0.3).out(2, 2, 2), plainReq, []int{0}},
		{"kv skips unavailable best", RouterLeastKV, replicas(3).kv(0.5, 0.1, 0.7).down(1), plainReq, []int{0}},
		{"p2c two available picks less loaded", RouterP2C, replicas(4).out(0, 5, 0, 3).down(0, 2), plainReq,
			[]int{3, 3, 3, 3, 3, 3, 3, 3, 3, 3}},
		{"p2c single available", RouterP2C, replicas(5).down(0, 1, 3, 4), plainReq, []int{2, 2, 2}},
		{"random single available", RouterRandom, replicas(5).down(0, 2, 3, 4), plainReq, []int{1, 1, 1}},
		{"prefix no prefix falls back to lor", RouterPrefixAffinity, replicas(3).out(3, 1, 2), plainReq, []int{1}},
		{"prefix nil request falls back to lor", RouterPrefixAffinity, replicas(3).out(3, 1, 2), nil, []int{1}},
		{"prefix single available", RouterPrefixAffinity, replicas(3).down(0, 2).out(0, 50, 0), prefixReq(7), []int{1}},
	}
	for _, name := range RouterNames() {
		tests = append(tests,
			struct {
				name   string
				router string
				fleet  fleetB
				req    *workloads.Request
				want   []int
			}{name + " all unavailable", name, replicas(4).down(0, 1, 2, 3), prefixReq(7), nil},
		)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRouter(t, tc.router, len(tc.fleet), 1)
			if tc.want == nil {
				_, ok := r.Route(tc.req, tc.fleet.states())
				assert.False(t, ok)
				return
			}
			var got []int
			for range tc.want {
				i, ok := r.Route(tc.req, tc.fleet.states())
				require.True(t, ok)
				got = append(got, i)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestRoutersEmptyFleet: routers that are not tied to a fleet size return
// ok=false on an empty snapshot.
func TestRoutersEmptyFleet(t *testing.T) {
	for _, name := range RouterNames() {
		if name == RouterPrefixAffinity {
			continue // its ring is built for a fixed size >= 1
		}
		r := newRouter(t, name, 1, 1)
		_, ok := r.Route(plainReq, nil)
		assert.False(t, ok, name)
	}
}

// TestRoutersNeverChooseUnavailable routes over many random snapshots (fixed
// seed) and checks that the choice is always available, and that ok=false
// exactly when nothing is.
func TestRoutersNeverChooseUnavailable(t *testing.T) {
	const n = 24
	for _, name := range RouterNames() {
		t.Run(name, func(t *testing.T) {
			r := newRouter(t, name, n, 2)
			rng := seeded(3)
			f := replicas(n)
			for it := 0; it < 2000; it++ {
				// Availability from all-down to all-up.
				pUp := float64(it%11) / 10
				anyUp := false
				for i := range f {
					f[i].Available = rng.Float64() < pUp
					f[i].Outstanding = rng.IntN(20)
					f[i].KVUtilization = float64(rng.IntN(5)) / 4
					anyUp = anyUp || f[i].Available
				}
				req := prefixReq(rng.Uint64(), rng.Uint64())
				if it%3 == 0 {
					req = plainReq
				}
				i, ok := r.Route(req, f.states())
				require.Equal(t, anyUp, ok, "iteration %d", it)
				if ok {
					require.True(t, f[i].Available, "iteration %d chose unavailable replica %d", it, i)
				}
			}
		})
	}
}

// TestRoutersDoNotMutateSnapshot: routers read the snapshot only.
func TestRoutersDoNotMutateSnapshot(t *testing.T) {
	for _, name := range RouterNames() {
		f := replicas(6).out(3, 1, 4, 1, 5, 9).kv(0.2, 0.7, 0.1, 0.8, 0.2, 0.8).down(2)
		before := f.clone()
		r := newRouter(t, name, 6, 1)
		for k := 0; k < 20; k++ {
			r.Route(prefixReq(uint64(k)), f.states())
		}
		assert.Equal(t, before, f, name)
	}
}

// TestRandomRoutersDeterministic: the same seed gives the same choices, a
// different seed different ones.
func TestRandomRoutersDeterministic(t *testing.T) {
	f := replicas(64).down(3, 9, 10, 40)
	for i := range f {
		f[i].Outstanding = (i * 7) % 5
	}
	run := func(name string, seed uint64) []int {
		r := newRouter(t, name, len(f), seed)
		got := make([]int, 500)
		for k := range got {
			got[k], _ = r.Route(plainReq, f.states())
		}
		return got
	}
	for _, name := range []string{RouterRandom, RouterP2C} {
		assert.Equal(t, run(name, 42), run(name, 42), name)
		assert.NotEqual(t, run(name, 42), run(name, 43), name)
	}
}

// TestRandomRoutersUniform: random, and p2c when every load is equal (the
// first draw wins), are uniform over the available replicas. Tolerance:
// chi-square below the 0.999 quantile for the degrees of freedom (fixed seed,
// so the test is deterministic; the bound says how far from uniform we accept).
func TestRandomRoutersUniform(t *testing.T) {
	// chi2999 is the 0.999 quantile of chi-square with df degrees of freedom.
	chi2999 := map[int]float64{1: 10.83, 6: 22.46}
	tests := []struct {
		name  string
		fleet fleetB
	}{
		// 7 of 10 available: the rejection-sampling path.
		{"mostly available", replicas(10).down(2, 5, 7).allOut(3)},
		// 2 of 100 available: mostly the counting fallback.
		{"sparse", replicas(100).down(seq(0, 100, 17, 60)...).allOut(3)},
	}
	for _, router := range []string{RouterRandom, RouterP2C} {
		for _, tc := range tests {
			t.Run(fmt.Sprintf("%s/%s", router, tc.name), func(t *testing.T) {
				const draws = 70000
				r := newRouter(t, router, len(tc.fleet), 7)
				counts := make([]int, len(tc.fleet))
				for k := 0; k < draws; k++ {
					i, ok := r.Route(plainReq, tc.fleet.states())
					require.True(t, ok)
					counts[i]++
				}
				exp := make([]float64, len(tc.fleet))
				avail := 0
				for _, s := range tc.fleet {
					if s.Available {
						avail++
					}
				}
				for i, s := range tc.fleet {
					if s.Available {
						exp[i] = float64(draws) / float64(avail)
					} else {
						require.Zero(t, counts[i])
					}
				}
				assert.Less(t, chiSquare(counts, exp), chi2999[avail-1], "counts %v", counts)
			})
		}
	}
}

// seq returns [lo, hi) without the listed exceptions.
func seq(lo, hi int, except ...int) []int {
	var out []int
	for i := lo; i < hi; i++ {
		skip := false
		for _, e := range except {
			skip = skip || e == i
		}
		if !skip {
			out = append(out, i)
		}
	}
	return out
}

// TestP2CDistribution: with loads 2, 1, 0 the most loaded replica is never
// chosen (the two draws are distinct), the least loaded wins every pair it is
// in (probability 2/3), the middle one 1/3. Tolerance 0.01 absolute on
// 30,000 draws (standard error 0.003).
func TestP2CDistribution(t *testing.T) {
	const draws = 30000
	f := replicas(3).out(2, 1, 0)
	r := newRouter(t, RouterP2C, 3, 11)
	counts := make([]int, 3)
	for k := 0; k < draws; k++ {
		i, _ := r.Route(plainReq, f.states())
		counts[i]++
	}
	assert.Zero(t, counts[0])
	assert.InDelta(t, 1.0/3, float64(counts[1])/draws, 0.01)
	assert.InDelta(t, 2.0/3, float64(counts[2])/draws, 0.01)
}

// TestP2CTieFirstDrawn: with equal loads over two replicas, each wins about
// half the time (the first drawn, itself uniform). Tolerance 0.015 on 20,000.
func TestP2CTieFirstDrawn(t *testing.T) {
	const draws = 20000
	f := replicas(2).allOut(4)
	r := newRouter(t, RouterP2C, 2, 5)
	zero := 0
	for k := 0; k < draws; k++ {
		if i, _ := r.Route(plainReq, f.states()); i == 0 {
			zero++
		}
	}
	assert.InDelta(t, 0.5, float64(zero)/draws, 0.015)
}

// TestRoutersAllocationFree: Route allocates nothing on a 128-replica fleet.
func TestRoutersAllocationFree(t *testing.T) {
	f := benchFleet(128)
	reqs := benchRequests(64)
	for _, name := range RouterNames() {
		r := newRouter(t, name, len(f), 1)
		k := 0
		allocs := testing.AllocsPerRun(200, func() {
			r.Route(reqs[k%len(reqs)], f)
			k++
		})
		assert.Zero(t, allocs, name)
	}
}

// TestLeastOutstandingMatchesScan checks the two-loop leastOutstanding
// against the plain one-pass definition (fewest outstanding among
// available replicas, ties to the lowest index) on random fleets with many
// ties and unavailable replicas, empty and all-unavailable ones included.
func TestLeastOutstandingMatchesScan(t *testing.T) {
	ref := func(rs []engine.ReplicaState) (int, bool) {
		best, found := 0, false
		for i := range rs {
			if rs[i].Available && (!found || rs[i].Outstanding < rs[best].Outstanding) {
				best, found = i, true
			}
		}
		return best, found
	}
	rng := seeded(11)
	for trial := range 20_000 {
		f := replicas(rng.IntN(20)).states()
		for i := range f {
			f[i].Available = rng.IntN(4) != 0
			f[i].Outstanding = rng.IntN(4)
		}
		if trial%100 == 0 {
			for i := range f {
				f[i].Available = false
			}
		}
		gi, gok := leastOutstanding(f)
		wi, wok := ref(f)
		if gi != wi || gok != wok {
			t.Fatalf("fleet %+v: leastOutstanding = %d, %v; the scan gives %d, %v", f, gi, gok, wi, wok)
		}
	}
}
