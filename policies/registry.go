package policies

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models"
)

// Router names, as written in a scenario's router.name.
const (
	RouterRoundRobin       = "round-robin"
	RouterRandom           = "random"
	RouterLeastOutstanding = "least-outstanding"
	RouterP2C              = "p2c"
	RouterLeastKV          = "least-kv"
	RouterPrefixAffinity   = "prefix-affinity"
)

// RouterConfig selects and parameterises the router (a scenario's [router]
// table). Start from DefaultRouterConfig and override what the scenario sets;
// the prefix-affinity fields are validated whatever the name, so a scenario
// can switch routers by changing the name alone.
type RouterConfig struct {
	// Name is the router to use, one of RouterNames(). Default
	// "least-outstanding".
	Name string `toml:"name"`
	// LoadBound is prefix-affinity's capacity factor c (dimensionless,
	// finite, >= 1): no replica takes a request that would put it above
	// ceil(c × (outstanding requests + 1) / available replicas). 1 is
	// perfect balance (little affinity), larger values favour affinity.
	// Default 1.25.
	LoadBound float64 `toml:"load_bound"`
	// PrefixSegments is the number K of leading prefix segments (each 512
	// tokens in a Mooncake trace) that identify a request's affinity key:
	// prefix-affinity hashes segment K (or the last one, if the request has
	// fewer). Integer >= 1. Default 1.
	PrefixSegments int `toml:"prefix_segments"`
	// VirtualNodes is the number of points per replica on prefix-affinity's
	// hash ring (integer >= 1); more points spread keys more evenly and cost
	// 16 bytes each. Default 100.
	VirtualNodes int `toml:"virtual_nodes"`
}

// DefaultRouterConfig returns the default router configuration:
// least-outstanding, with prefix-affinity's LoadBound 1.25 (the value
// Mirrokni et al. 2018 report as a good trade-off), PrefixSegments 1 and
// VirtualNodes 100.
func DefaultRouterConfig() RouterConfig {
	return RouterConfig{
		Name:           RouterLeastOutstanding,
		LoadBound:      1.25,
		PrefixSegments: 1,
		VirtualNodes:   100,
	}
}

// Validate records in ps every problem with c, each keyed by prefix (the
// dotted path of the router table, e.g. "router"; "" for none) and the field's
// TOML key.
func (c *RouterConfig) Validate(prefix string, ps *config.Problems) {
	ps.OneOf(joinKey(prefix, "name"), c.Name, RouterNames())
	if !(c.LoadBound >= 1) || math.IsInf(c.LoadBound, 0) {
		ps.Add(joinKey(prefix, "load_bound"), "must be a finite number >= 1, found %v", c.LoadBound)
	}
	if c.PrefixSegments < 1 {
		ps.Add(joinKey(prefix, "prefix_segments"), "must be an integer >= 1, found %d", c.PrefixSegments)
	}
	if c.VirtualNodes < 1 {
		ps.Add(joinKey(prefix, "virtual_nodes"), "must be an integer >= 1, found %d", c.VirtualNodes)
	}
}

func joinKey(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// RouterFactory builds a router for a fleet of replicas replicas from a
// validated configuration. rng is the router's own random stream; factories
// of routers that draw return an error when it is nil.
type RouterFactory func(cfg RouterConfig, replicas int, rng *rand.Rand) (models.Router, error)

// routerFactories is the router registry. It is built here, once, and never
// modified: there is no registration from other packages.
var routerFactories = map[string]RouterFactory{
	RouterRoundRobin: func(RouterConfig, int, *rand.Rand) (models.Router, error) {
		return NewRoundRobin(), nil
	},
	RouterRandom: func(_ RouterConfig, _ int, rng *rand.Rand) (models.Router, error) {
		if rng == nil {
			return nil, fmt.Errorf("policies: router %q needs a random stream, got nil", RouterRandom)
		}
		return NewRandom(rng), nil
	},
	RouterLeastOutstanding: func(RouterConfig, int, *rand.Rand) (models.Router, error) {
		return NewLeastOutstanding(), nil
	},
	RouterP2C: func(_ RouterConfig, _ int, rng *rand.Rand) (models.Router, error) {
		if rng == nil {
			return nil, fmt.Errorf("policies: router %q needs a random stream, got nil", RouterP2C)
		}
		return NewPowerOfTwo(rng), nil
	},
	RouterLeastKV: func(RouterConfig, int, *rand.Rand) (models.Router, error) {
		return NewLeastKV(), nil
	},
	RouterPrefixAffinity: func(cfg RouterConfig, replicas int, _ *rand.Rand) (models.Router, error) {
		return NewPrefixAffinity(replicas, cfg.LoadBound, cfg.PrefixSegments, cfg.VirtualNodes)
	},
}

// RouterNames returns the names of the registered routers, sorted.
func RouterNames() []string {
	names := make([]string, 0, len(routerFactories))
	for n := range routerFactories {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// NewRouter builds the router cfg names for a fleet of replicas replicas
// (>= 1), drawing any randomness from rng (the caller's named stream; it may
// be nil for routers that do not draw). It returns an error, never panics,
// when cfg is invalid (an unknown name lists the known ones), replicas < 1,
// or the router needs rng and it is nil.
func NewRouter(cfg RouterConfig, replicas int, rng *rand.Rand) (models.Router, error) {
	var ps config.Problems
	cfg.Validate("router", &ps)
	if err := ps.Err(); err != nil {
		return nil, fmt.Errorf("policies: invalid router config: %w", err)
	}
	if replicas < 1 {
		return nil, fmt.Errorf("policies: router %q: replicas must be >= 1, found %d", cfg.Name, replicas)
	}
	factory, ok := routerFactories[cfg.Name]
	if !ok { // unreachable after Validate; kept so a bad name never panics
		return nil, fmt.Errorf("policies: unknown router %q; valid names: %s", cfg.Name, strings.Join(RouterNames(), ", "))
	}
	return factory(cfg, replicas, rng)
}
