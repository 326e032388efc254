package fleet

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
)

// GroupConfig is one replica group of a heterogeneous fleet ([[cluster.groups]]):
// its own GPU type, TP degree, replica count and price, optionally its own
// model and engine settings (batching, memory, precision, engine profile;
// the rest of [cluster.replica] is the fleet's). The memory plan (and so the
// KV blocks) and the step model are the group's own.
type GroupConfig struct {
	// Name identifies the group in outputs (letters, digits, -_.). Default
	// the GPU name in lower case with the group's position ("h100-0").
	Name string `toml:"name"`
	// GPU names a catalog GPU.
	GPU string `toml:"gpu"`
	// TP is the group's tensor parallelism (GPUs per replica).
	TP int `toml:"tp"`
	// Replicas is the group's replica count (>= 0: a group of 0 is allowed,
	// so a sweep or sizing can remove it).
	Replicas int `toml:"replicas"`
	// PricePerGPUHour overrides the GPU's catalog price (at the scenario's
	// [cost] tier), USD; 0 means the catalog's.
	PricePerGPUHour float64 `toml:"price_per_gpu_hour"`
	// Tier is how the group's GPUs are bought: "on-demand" or "reserved"
	// (committed use, paid whether used or not; the catalog's reserved
	// price); empty means the scenario's [cost] tier.
	Tier string `toml:"tier"`
	// Model is the model the group serves; empty means cluster.model. A
	// fleet whose groups serve several models needs [[serve]] traffic for
	// each.
	Model string `toml:"model"`
	// DownReplicas is how many of the group's replicas are in repair for
	// the whole run (its last ones), in [0, Replicas]: N+k sizing of a
	// mixed fleet names the group whose servers are down (run.down_replicas
	// is the homogeneous fleet's). Default 0.
	DownReplicas int `toml:"down_replicas"`
	// SpotReplicas is how many of the group's replicas (its last ones)
	// run on spot instances, at [spot] price_fraction of the group's price
	// and interrupted at [spot]'s rates, in [0, Replicas − DownReplicas].
	// Default 0. (A fleet of one kind, or one group, may say it with
	// [spot] replicas and group instead.)
	SpotReplicas int `toml:"spot_replicas"`
	// Spares is how many warm spare replicas of the group stand beside its
	// Replicas ([failures] spares, per group): held out of service until
	// one of the group's replicas fails with a long repair
	// (failures.spare_after_s), then put in its place, as failures.spares
	// does for a fleet of one kind. A spare of one group never stands in
	// for another's replica (its GPU type, model and engine differ). Only
	// with [failures] enabled; default 0.
	Spares int `toml:"spares"`
	// SparesFor is set on the groups WithSpareGroups builds: the name of
	// the group whose spares they are ("" for a group of the scenario).
	SparesFor string `toml:"-"`
	// Replica is the group's engine settings; nil means the fleet's
	// ([cluster.replica]). In a scenario file a [cluster.groups.replica]
	// table names only what differs (the keys of GroupReplicaKeys):
	// ResolveGroupEngines puts them over [cluster.replica] and sets Replica
	// to the result.
	Replica *engine.ReplicaConfig `toml:"replica"`
	// own lists the [cluster.groups.replica] keys the group set
	// (ResolveGroupEngines), so that their problems are reported there.
	own []string
}

// GroupReplicaKeys are the [cluster.replica] keys a group may set for
// itself: how it batches, how it spends its HBM, its precisions and its
// engine profile. The others (block size, allocator, prefix caching,
// restarts, MoE routing, speculative decoding) are the fleet's: the
// gateway's prefix-aware routing and the fleet's outputs take one value
// of each.
var GroupReplicaKeys = []string{"batching", "max_batched_tokens", "max_seqs", "gpu_memory_utilization",
	"activation_bytes_per_gpu", "watermark_fraction", "kv_blocks", "kv_admission", "weights", "kv_dtype", "compute", "perf.profile"}

// fleetReplicaKeys are the [cluster.replica] keys (and tables) a group may
// not set (see GroupReplicaKeys).
var fleetReplicaKeys = []string{"block_tokens", "allocator", "prefix_caching", "restart_s", "cold_start_s", "moe", "speculative"}

// ResolveGroupEngines gives each group that has a [cluster.groups.replica]
// table (prefix.groups.i.replica; has says which keys a file set) its
// engine settings: the fleet's Replica with the group's keys put over it.
// A key a group may not set is a problem. A group without the table keeps
// Replica nil (the fleet's settings).
func (c *FleetConfig) ResolveGroupEngines(prefix string, has func(key string) bool, ps *config.Problems) {
	for i := range c.Groups {
		g := &c.Groups[i]
		tk := config.Key(prefix, "groups", fmt.Sprint(i), "replica")
		if g.Replica == nil || !has(tk) {
			g.Replica, g.own = nil, nil
			continue
		}
		for _, k := range fleetReplicaKeys {
			if has(tk + "." + k) {
				ps.Add(tk+"."+k, "is the fleet's, not a group's: set it in [cluster.replica] (a group may set %s)", strings.Join(GroupReplicaKeys, ", "))
			}
		}
		eff := c.Replica
		g.own = nil
		for _, k := range GroupReplicaKeys {
			if has(tk + "." + k) {
				g.own = append(g.own, k)
				tomlField(&eff, k).Set(tomlField(g.Replica, k))
			}
		}
		g.Replica = &eff
	}
}

// tomlField is the field of *c at key path (dotted toml names, e.g.
// "perf.profile"). It panics on a path ReplicaConfig does not have: the
// paths are this package's (GroupReplicaKeys).
func tomlField(c *engine.ReplicaConfig, path string) reflect.Value {
	v := reflect.ValueOf(c).Elem()
next:
	for _, name := range strings.Split(path, ".") {
		for i := range v.NumField() {
			if v.Type().Field(i).Tag.Get("toml") == name {
				v = v.Field(i)
				continue next
			}
		}
		panic("models: ReplicaConfig has no key " + path)
	}
	return v
}

// GroupReplica is group i's engine settings: its own, or else the fleet's.
func (c *FleetConfig) GroupReplica(i int) engine.ReplicaConfig {
	if r := c.Groups[i].Replica; r != nil {
		return *r
	}
	return c.Replica
}

var groupName = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9_.-]*$`)

// Group is a built replica group: replicas [First, First+Replicas) of the
// pool.
type Group struct {
	GroupConfig
	First     int
	Memory    engine.MemoryPlan
	Place     Placement
	PeakFLOPS float64 // one GPU's dense peak at the weights' precision
	// ParamsPerGPU is the model's parameters over the TP degree.
	ParamsPerGPU float64
	// Capacity is the replica's relative serving capacity, 1 for the
	// fleet's fastest group: decode tokens per second at a reference batch
	// (64 sequences of 2,048 tokens of context, or max_seqs if fewer) over
	// the fastest group's. Capacity-weighted routers divide load by it.
	Capacity float64
}

// resolveGroups fills group defaults (names) and returns the fleet's total
// replicas.
func (c *FleetConfig) resolveGroups() int {
	n := 0
	for i := range c.Groups {
		g := &c.Groups[i]
		if g.Name == "" {
			g.Name = fmt.Sprintf("%s-%d", lower(g.GPU), i)
		}
		if g.Model == "" {
			g.Model = c.Model
		}
		n += g.Replicas
	}
	return n
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// validateGroups records the groups' problems under prefix and returns
// each group's memory plan (zero where it has problems).
func (c *FleetConfig) validateGroups(cat *hw.Catalog, prefix string, ps *config.Problems) []engine.MemoryPlan {
	plans := make([]engine.MemoryPlan, len(c.Groups))
	total := c.resolveGroups()
	if total < 1 {
		ps.Add(config.Key(prefix, "groups"), "the groups have %d replicas in all; at least one is needed", total)
	}
	seen := map[string]bool{}
	down := 0
	for i, g := range c.Groups {
		gk := func(key string) string { return config.Key(prefix, "groups", fmt.Sprint(i), key) }
		if !groupName.MatchString(g.Name) {
			ps.Add(gk("name"), "%q: use letters, digits, '-', '_' and '.' (not first)", g.Name)
		} else if seen[g.Name] {
			ps.Add(gk("name"), "%q names two groups", g.Name)
		}
		seen[g.Name] = true
		if g.Replicas < 0 {
			ps.Add(gk("replicas"), "must be an integer >= 0, found %d", g.Replicas)
		}
		if g.Spares < 0 {
			ps.Add(gk("spares"), "must be an integer >= 0, found %d", g.Spares)
		}
		if g.Spares > 0 && g.SparesFor == "" && otherNamed(c.Groups, SpareGroupName(g.Name), g.Name) {
			ps.Add(gk("spares"), "the group's spares are named %q, the name of another group: rename that group", SpareGroupName(g.Name))
		}
		if g.DownReplicas < 0 || g.DownReplicas > max(g.Replicas, 0) {
			ps.Add(gk("down_replicas"), "must be between 0 and the group's replicas (%d), found %d", max(g.Replicas, 0), g.DownReplicas)
		}
		down += g.Down()
		ps.NonNegative(gk("price_per_gpu_hour"), g.PricePerGPUHour)
		if g.Tier != "" {
			ps.OneOf(gk("tier"), g.Tier, []string{"on-demand", "reserved"})
		}
		sub := *c
		sub.Groups = nil
		sub.GPU, sub.TP, sub.Replicas, sub.Model = g.GPU, g.TP, max(g.Replicas, 1), g.Model
		sub.Replica = c.GroupReplica(i)
		var gps config.Problems
		mem := sub.Validate(cat, prefix, &gps)
		for _, p := range gps.List {
			// The group's own keys are reported at the group's table.
			switch k := p.Key; {
			case k == config.Key(prefix, "gpu"), k == config.Key(prefix, "tp"), k == config.Key(prefix, "replicas"), k == config.Key(prefix, "domains"), k == config.Key(prefix, "model"):
				ps.Add(gk(k[len(prefix)+1:]), "%s", p.Msg)
			case g.ownsKey(prefix, k):
				if !ps.Has(gk(k[len(prefix)+1:])) { // (a profile file the loader could not read is reported there, once)
					ps.Add(gk(k[len(prefix)+1:]), "%s", p.Msg)
				}
			default:
				ps.Add(k, "group %q: %s", g.Name, p.Msg)
			}
		}
		if len(gps.List) == 0 {
			plans[i] = mem
		}
	}
	if total >= 1 && down >= total {
		ps.Add(config.Key(prefix, "groups"), "down_replicas take all %d replicas out of service; at least one must serve", total)
	}
	return plans
}

// Down is how many of the group's replicas are in repair for the whole run:
// DownReplicas, within [0, Replicas] (counts outside it are refused by
// validation).
func (g *GroupConfig) Down() int { return min(max(g.DownReplicas, 0), max(g.Replicas, 0)) }

// SpareGroupName is the name of group name's spares in outputs.
func SpareGroupName(name string) string { return name + "-spares" }

// otherNamed reports whether a group of gs other than group of's spares
// (WithSpareGroups) is named name.
func otherNamed(gs []GroupConfig, name, of string) bool {
	return slices.ContainsFunc(gs, func(g GroupConfig) bool { return g.Name == name && g.SparesFor != of })
}

// WithSpareGroups returns c with each group's warm spares (Spares) built
// as a group of their own after all the groups: SpareGroupName(name), the
// group's GPU, TP, model, price, tier and engine, no down replicas. The
// groups' replicas keep their indexes (spares come after every serving
// replica, as a fleet of one kind's do), and Replicas counts the spares
// too. c is not modified.
func (c FleetConfig) WithSpareGroups() FleetConfig {
	c.Groups = slices.Clone(c.Groups)
	c.resolveGroups() // (the default names)
	groups := c.Groups
	for _, g := range c.Groups {
		if g.Spares <= 0 {
			continue
		}
		sg := g
		sg.Name, sg.Replicas, sg.Spares, sg.DownReplicas, sg.SpotReplicas, sg.SparesFor = SpareGroupName(g.Name), g.Spares, 0, 0, 0, g.Name
		groups = append(groups, sg)
		c.Replicas += g.Spares
	}
	c.Groups = groups
	return c
}

// SpareKinds returns, for a fleet built from WithSpareGroups, each
// replica's kind: the index of the scenario's group it belongs to, or
// whose spare it is. A spare stands in only for a replica of its kind.
func (p *Pool) SpareKinds() []int {
	kinds := make([]int, len(p.Replicas))
	for k, g := range p.Groups {
		kind := k
		if g.SparesFor != "" {
			kind = slices.IndexFunc(p.Groups, func(h Group) bool { return h.Name == g.SparesFor })
		}
		for i := g.First; i < g.First+g.Replicas; i++ {
			kinds[i] = kind
		}
	}
	return kinds
}

// DownIndexes returns the pool indexes of the replicas the groups'
// DownReplicas take out of service: each group's last ones, in group order.
func (c *FleetConfig) DownIndexes() []int {
	var out []int
	first := 0
	for _, g := range c.Groups {
		n := max(g.Replicas, 0)
		for k := 0; k < g.Down(); k++ {
			out = append(out, first+n-1-k)
		}
		first += n
	}
	return out
}

// ownsKey reports whether key (a [cluster.replica] key under prefix) is one
// the group set for itself.
func (g *GroupConfig) ownsKey(prefix, key string) bool {
	for _, k := range g.own {
		if key == config.Key(prefix, "replica", k) {
			return true
		}
	}
	return false
}

// newGroupFleet builds a heterogeneous fleet: each group's replicas with
// the group's step model and memory plan, in group order.
func newGroupFleet(eng *sim.Engine, cat *hw.Catalog, cfg FleetConfig, plans []engine.MemoryPlan, router Router, rec *Recorder) (*Fleet, error) {
	total := cfg.resolveGroups()
	f := newFleet(eng, router, rec, total)
	p := f.Pool
	type built struct {
		perf *hw.StepModel
		tput float64
	}
	bs := make([]built, len(cfg.Groups))
	best := map[string]float64{} // the fastest group's throughput, per model
	for i, g := range cfg.Groups {
		gpu, llm := cat.GPUs[g.GPU], cat.LLMs[g.Model]
		rc := cfg.GroupReplica(i)
		// Deployed as a fleet of one kind is (TP-only: groups refuse
		// dp/ep/pp), so an MoE model keeps its expert terms.
		dep := hw.Deployment{Layout: hw.Layout{TP: g.TP}, MoE: rc.MoE, Spec: rc.Spec, Compute: hw.Precision(rc.Compute)}
		perf, err := hw.NewDeployedStepModel(gpu, llm, dep, hw.Precision(rc.Weights), hw.Precision(rc.KVDType), cat.Profiles[rc.Perf.Profile])
		if err != nil {
			return nil, err
		}
		batch := min(64, rc.MaxSeqs)
		if batch < 1 {
			batch = 64
		}
		step := perf.Step(hw.StepShape{DecodeSeqs: float64(batch), DecodeCtx: float64(batch) * 2048})
		bs[i] = built{perf, float64(batch) / step}
		best[g.Model] = max(best[g.Model], bs[i].tput)
	}
	if len(cfg.ServeModels) > 1 {
		p.model = make([]int16, total)
	}
	first := 0
	for i, g := range cfg.Groups {
		gpu, llm := cat.GPUs[g.GPU], cat.LLMs[g.Model]
		sub := cfg
		sub.Groups = nil
		sub.GPU, sub.TP, sub.Replicas = g.GPU, g.TP, g.Replicas
		rc := cfg.GroupReplica(i)
		grp := Group{GroupConfig: g, First: first, Memory: plans[i], Place: placement(sub, gpu.DomainGPUs),
			PeakFLOPS: bs[i].perf.PeakFLOPS(), ParamsPerGPU: llm.Params / float64(g.TP), Capacity: bs[i].tput / best[g.Model]}
		mi := int16(slices.Index(cfg.ServeModels, g.Model))
		for j := 0; j < g.Replicas; j++ {
			idx := first + j
			p.Replicas = append(p.Replicas, engine.NewReplica(idx, eng, rc, bs[i].perf, plans[i].KVBlocks, f.Gateway, &p.states[idx]))
			p.states[idx].Capacity = grp.Capacity
			if p.model != nil {
				p.model[idx] = mi
			}
		}
		p.Groups = append(p.Groups, grp)
		p.Place.GPUs += grp.Place.GPUs
		p.Place.Domains += grp.Place.Domains
		first += g.Replicas
	}
	// The fleet-wide fields describe the first group (a fleet of one kind
	// reads them; a fleet of groups reads Groups).
	g0 := p.Groups[0]
	p.Memory, p.PeakFLOPS, p.ParamsPerGPU, p.tp = g0.Memory, g0.PeakFLOPS, g0.ParamsPerGPU, g0.TP
	p.Place.DomainGPUs, p.Place.TP = g0.Place.DomainGPUs, g0.TP
	p.watch()
	return f, nil
}

// GroupOf returns the group replica i belongs to (nil in a fleet of one
// kind).
func (p *Pool) GroupOf(i int) *Group {
	for k := range p.Groups {
		g := &p.Groups[k]
		if i >= g.First && i < g.First+g.Replicas {
			return g
		}
	}
	return nil
}

// ReplicaTP is replica i's TP degree.
func (p *Pool) ReplicaTP(i int) int {
	if g := p.GroupOf(i); g != nil {
		return g.TP
	}
	return p.tp
}
