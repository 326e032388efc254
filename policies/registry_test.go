package policies

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/fleet"
)

func TestRouterNames(t *testing.T) {
	assert.Equal(t, []string{"cache-aware", "cost-aware", "least-kv", "least-outstanding", "p2c", "prefix-affinity", "random", "round-robin", "weighted-least-outstanding"},
		RouterNames())
}

func TestDefaultRouterConfig(t *testing.T) {
	c := DefaultRouterConfig()
	assert.Equal(t, RouterConfig{Name: "least-outstanding", LoadBound: 1.25, PrefixSegments: 1, VirtualNodes: 100}, c)
	var ps config.Problems
	c.Validate("router", &ps)
	assert.NoError(t, ps.Err())
}

func TestRouterConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		prefix string
		edit   func(*RouterConfig)
		want   []config.Problem
	}{
		{"unknown name", "router", func(c *RouterConfig) { c.Name = "best" }, []config.Problem{{
			Key: "router.name",
			Msg: `unknown name "best"; valid names: cache-aware, cost-aware, least-kv, least-outstanding, p2c, prefix-affinity, random, round-robin, weighted-least-outstanding`,
		}}},
		{"empty name", "fleet.router", func(c *RouterConfig) { c.Name = "" }, []config.Problem{{
			Key: "fleet.router.name",
			Msg: `unknown name ""; valid names: cache-aware, cost-aware, least-kv, least-outstanding, p2c, prefix-affinity, random, round-robin, weighted-least-outstanding`,
		}}},
		{"load_bound below 1", "router", func(c *RouterConfig) { c.LoadBound = 0.99 }, []config.Problem{{
			Key: "router.load_bound", Msg: "must be a finite number >= 1, found 0.99",
		}}},
		{"load_bound NaN", "router", func(c *RouterConfig) { c.LoadBound = math.NaN() }, []config.Problem{{
			Key: "router.load_bound", Msg: "must be a finite number >= 1, found NaN",
		}}},
		{"load_bound Inf", "router", func(c *RouterConfig) { c.LoadBound = math.Inf(1) }, []config.Problem{{
			Key: "router.load_bound", Msg: "must be a finite number >= 1, found +Inf",
		}}},
		{"load_bound exactly 1", "router", func(c *RouterConfig) { c.LoadBound = 1 }, nil},
		{"prefix_segments 0", "router", func(c *RouterConfig) { c.PrefixSegments = 0 }, []config.Problem{{
			Key: "router.prefix_segments", Msg: "must be an integer >= 1, found 0",
		}}},
		{"virtual_nodes negative", "router", func(c *RouterConfig) { c.VirtualNodes = -3 }, []config.Problem{{
			Key: "router.virtual_nodes", Msg: "must be an integer >= 1, found -3",
		}}},
		{"no prefix", "", func(c *RouterConfig) { c.VirtualNodes = 0 }, []config.Problem{{
			Key: "virtual_nodes", Msg: "must be an integer >= 1, found 0",
		}}},
		{"all collected", "r", func(c *RouterConfig) { *c = RouterConfig{Name: "x"} }, []config.Problem{
			{Key: "r.name", Msg: `unknown name "x"; valid names: cache-aware, cost-aware, least-kv, least-outstanding, p2c, prefix-affinity, random, round-robin, weighted-least-outstanding`},
			{Key: "r.load_bound", Msg: "must be a finite number >= 1, found 0"},
			{Key: "r.prefix_segments", Msg: "must be an integer >= 1, found 0"},
			{Key: "r.virtual_nodes", Msg: "must be an integer >= 1, found 0"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultRouterConfig()
			tc.edit(&c)
			var ps config.Problems
			c.Validate(tc.prefix, &ps)
			assert.Equal(t, tc.want, ps.List)
		})
	}
}

func TestNewRouterEveryName(t *testing.T) {
	for _, name := range RouterNames() {
		cfg := DefaultRouterConfig()
		cfg.Name = name
		r, err := NewRouter(cfg, 8, seeded(1))
		require.NoError(t, err, name)
		require.NotNil(t, r, name)
		i, ok := r.Route(prefixReq(1), replicas(8).states())
		assert.True(t, ok, name)
		assert.True(t, i >= 0 && i < 8, name)
	}
}

func TestNewRouterTypes(t *testing.T) {
	want := map[string]any{
		RouterRoundRobin:       &RoundRobin{},
		RouterRandom:           &Random{},
		RouterLeastOutstanding: &LeastOutstanding{},
		RouterP2C:              &PowerOfTwo{},
		RouterLeastKV:          &LeastKV{},
		RouterPrefixAffinity:   &PrefixAffinity{},
		RouterWeighted:         &WeightedLeastOutstanding{},
		RouterCacheAware:       &CacheAware{},
		RouterCostAware:        &CostAware{},
	}
	require.Len(t, want, len(RouterNames()))
	for name, w := range want {
		r := newRouter(t, name, 4, 1)
		assert.IsType(t, w, r, name)
	}
}

func TestNewRouterErrors(t *testing.T) {
	withName := func(name string) RouterConfig {
		c := DefaultRouterConfig()
		c.Name = name
		return c
	}
	tests := []struct {
		name     string
		cfg      RouterConfig
		replicas int
		nilRNG   bool
		contains []string
	}{
		{"unknown name lists names", withName("fastest"), 4, false,
			[]string{`router.name: unknown name "fastest"`, "least-kv, least-outstanding, p2c, prefix-affinity, random, round-robin, weighted-least-outstanding"}},
		{"bad field", func() RouterConfig { c := withName("p2c"); c.LoadBound = 0.5; return c }(), 4, false,
			[]string{"router.load_bound: must be a finite number >= 1, found 0.5"}},
		{"zero replicas", withName("round-robin"), 0, false, []string{"replicas must be >= 1, found 0"}},
		{"negative replicas", withName("prefix-affinity"), -2, false, []string{"replicas must be >= 1, found -2"}},
		{"random without rng", withName("random"), 4, true, []string{`router "random" needs a random stream`}},
		{"p2c without rng", withName("p2c"), 4, true, []string{`router "p2c" needs a random stream`}},
		{"ring too large", func() RouterConfig { c := withName("prefix-affinity"); c.VirtualNodes = 1 << 20; return c }(), 8, false,
			[]string{"exceeds the ring limit"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := seeded(1)
			if tc.nilRNG {
				rng = nil
			}
			var r any
			var err error
			require.NotPanics(t, func() { r, err = NewRouter(tc.cfg, tc.replicas, rng) })
			require.Error(t, err)
			assert.Nil(t, r)
			for _, s := range tc.contains {
				assert.ErrorContains(t, err, s)
			}
		})
	}
}

// TestNewRouterNilRNGAllowed: routers that never draw accept a nil stream.
func TestNewRouterNilRNGAllowed(t *testing.T) {
	for _, name := range []string{RouterRoundRobin, RouterLeastOutstanding, RouterLeastKV, RouterPrefixAffinity} {
		cfg := DefaultRouterConfig()
		cfg.Name = name
		_, err := NewRouter(cfg, 4, nil)
		assert.NoError(t, err, name)
	}
}

func TestConstructorsPanicOnNilRNG(t *testing.T) {
	assert.PanicsWithValue(t, "policies: NewRandom: nil rng", func() { NewRandom(nil) })
	assert.PanicsWithValue(t, "policies: NewPowerOfTwo: nil rng", func() { NewPowerOfTwo(nil) })
}

func TestNewPrefixAffinityErrors(t *testing.T) {
	tests := []struct {
		name                string
		replicas, k, vnodes int
		bound               float64
		contains            string
	}{
		{"replicas", 0, 1, 100, 1.25, "replicas must be >= 1"},
		{"bound", 4, 1, 100, 0.9, "load_bound must be a finite number >= 1"},
		{"bound nan", 4, 1, 100, math.NaN(), "load_bound must be a finite number >= 1"},
		{"segments", 4, 0, 100, 1.25, "prefix_segments must be >= 1"},
		{"vnodes", 4, 1, 0, 1.25, "virtual_nodes must be >= 1"},
		{"too large", 1 << 20, 1, 100, 1.25, "exceeds the ring limit"},
	}
	for _, tc := range tests {
		_, err := NewPrefixAffinity(tc.replicas, tc.bound, tc.k, tc.vnodes)
		assert.ErrorContains(t, err, tc.contains, tc.name)
	}
}

// Every registered name of every kind builds a policy (and "none" builds
// none); an unknown name is an error naming the kind and the valid names.
func TestRegistriesBuildEveryName(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	env := Env{Replicas: 4, RNG: rng}
	def := DefaultResilienceConfig()
	check := func(kind string, names []string, build func(string) (any, error)) {
		t.Helper()
		require.NotEmpty(t, names, kind)
		for _, n := range names {
			p, err := build(n)
			require.NoError(t, err, "%s %s", kind, n)
			if n == None {
				require.Nil(t, p, "%s none builds nothing", kind)
			} else {
				require.NotNil(t, p, "%s %s", kind, n)
			}
		}
		_, err := build("no-such-policy")
		require.ErrorContains(t, err, "unknown "+kind+` "no-such-policy"; valid names: `+strings.Join(names, ", "))
	}
	check("router", Routers.Names(), func(n string) (any, error) {
		c := DefaultRouterConfig()
		c.Name = n
		p, err := Routers.Build(n, c, env)
		return nilIfZero(p), err
	})
	check("hedger", Hedgers.Names(), func(n string) (any, error) {
		p, err := Hedgers.Build(n, def.Hedge, env)
		return nilIfZero(p), err
	})
	check("breaker", Breakers.Names(), func(n string) (any, error) {
		p, err := Breakers.Build(n, def.Breaker, env)
		return nilIfZero(p), err
	})
	check("retrier", Retriers.Names(), func(n string) (any, error) {
		p, err := Retriers.Build(n, def.Retry, env)
		return nilIfZero(p), err
	})
	check("admitter", Admitters.Names(), func(n string) (any, error) {
		c := def.Admission
		c.Limit = 1
		p, err := Admitters.Build(n, c, env)
		return nilIfZero(p), err
	})
	check("rollout judge", RolloutJudges.Names(), func(n string) (any, error) {
		p, err := RolloutJudges.Build(n, fleet.DefaultRolloutConfig(), env)
		return nilIfZero(p), err
	})
	// A policy that draws refuses a nil stream.
	_, err := Retriers.Build(RetryBudgeted, def.Retry, Env{Replicas: 1})
	require.ErrorContains(t, err, "needs a random stream")
}

// nilIfZero turns a nil interface of any policy type into an untyped nil.
func nilIfZero[T any](p T) any {
	if any(p) == nil {
		return nil
	}
	return p
}
