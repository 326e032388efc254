package scenario

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/BurntSushi/toml"
	"path/filepath"
	"strings"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/internal/infile"
	"github.com/fleetsim/fleetsim/internal/tomlx"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/failures"
	"github.com/fleetsim/fleetsim/models/fleet"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/policies"
	"github.com/fleetsim/fleetsim/workloads"
)

// Scenario is one scenario file. Every field documents its unit and
// default; absent keys keep the defaults of DefaultScenario.
type Scenario struct {
	// Name identifies the scenario in outputs. Default: the file's base name.
	Name string `toml:"name"`
	// Description is free text shown by `fleetsim scenarios`.
	Description string `toml:"description"`
	// Seed is the master seed; every random stream derives from it and a
	// stream name. Default 1.
	Seed uint64 `toml:"seed"`
	// Mode is "serving" (default: an inference fleet) or "training" (one
	// synchronous job, [training]).
	Mode string `toml:"mode"`
	// Training is the job of a training scenario.
	Training TrainingScenario `toml:"training"`

	Run     RunConfig             `toml:"run"`
	Cluster fleet.FleetConfig     `toml:"cluster"`
	Router  policies.RouterConfig `toml:"router"`
	// Policies is the gateway's resilience stack: hedging, circuit breaker,
	// retries, admission control, health probes and a client timeout. All
	// off by default.
	Policies policies.ResilienceConfig `toml:"policies"`
	Workload workloads.Config          `toml:"workload"`
	SLO      fleet.SLO                 `toml:"slo"`
	Cost     CostConfig                `toml:"cost"`
	// Faults are injected into replicas at fixed times ([[faults]] tables):
	// fault-injection tests of the resilience stack.
	Faults []failures.Scripted `toml:"faults"`
	// Fallback is a secondary pool (often a smaller model) that takes the
	// requests no primary replica can: [fallback]; off by default.
	Fallback FallbackConfig `toml:"fallback"`
	// Rollout is a blue-green deployment of a new model version with canary
	// steps and automatic rollback ([rollout]); off by default.
	Rollout fleet.RolloutConfig `toml:"rollout"`
	// Failures are stochastic hardware and software failures from a
	// calibrated profile ([failures]); off by default.
	Failures failures.Config `toml:"failures"`
	// Autoscale grows and shrinks the fleet between [autoscale]
	// min_replicas and cluster.replicas as its policy asks, each new
	// replica paying a cold start; off by default.
	Autoscale policies.AutoscaleConfig `toml:"autoscale"`
	// Spot puts the fleet's last replicas on spot instances ([spot]); none
	// by default.
	Spot SpotConfig `toml:"spot"`
	// ColdStart is the shared cold-start model ([cold_start], the keys of
	// [autoscale.cold_start]). Present, failure restarts ([failures]
	// repairs, [[faults]] restarts) take it instead of a fixed
	// cold_start_s, and [autoscale] takes it unless [autoscale.cold_start]
	// is given. Absent (default), restarts keep their cold_start_s.
	ColdStart fleet.ColdStartConfig `toml:"cold_start"`
	// Serve lists the models a fleet of groups serves, each with its share
	// of the requests and its SLO ([[serve]]); empty: cluster.model alone.
	Serve  []ServeConfig `toml:"serve"`
	GPUs   []hw.GPU      `toml:"gpus"`
	Models []hw.LLM      `toml:"models"`

	// Disagg splits the fleet into a prefill pool ([cluster]) and a decode
	// pool joined by KV transfers ([disagg]); off by default.
	Disagg DisaggScenario `toml:"disagg"`
	// KVTiers puts host DRAM, SSD and a shared store below each replica's
	// HBM prefix cache ([kv_tiers]); off by default.
	KVTiers engine.KVTiersConfig `toml:"kv_tiers"`

	// Arms are the arms of an A/B (`fleetsim ab`): each a table with a
	// name and the keys it overrides, e.g. [[arms]] name = "rr" and
	// [arms.router] name = "round-robin".
	Arms []map[string]any `toml:"arms"`
	// Sweep is the grid `fleetsim sweep` runs when no --param is given.
	Sweep SweepConfig `toml:"sweep"`
	// Size is what `fleetsim size` aims for when no --slo is given.
	Size SizeConfig `toml:"size"`
	// Plan is the search space of `fleetsim plan` ([plan], plan.go).
	Plan PlanConfig `toml:"plan"`

	src               []byte // the file, for Derive
	filename, baseDir string
	// has reports whether the file or an overlay sets a key (tomlx.Doc.Has
	// over all of them).
	has func(key string) bool
	// profiles are the engine profile files the scenario names, by the path
	// as written.
	profiles map[string]hw.PerfProfile
	overlays []Overlay // applied over src, in order
	// badModelConfigs are the [[models]] tables whose config could not be
	// read (reported once, under models.N.config).
	badModelConfigs map[int]bool
}

// Has reports whether the scenario file or one of its overlays sets key, a
// dotted key path ("absent, keep the default" against "set"); false for a
// scenario built in code.
func (s *Scenario) Has(key string) bool { return s.has != nil && s.has(key) }

// Source is the scenario file as read (nil for a scenario built in code).
func (s *Scenario) Source() []byte { return s.src }

// Overlays are the overlays applied over Source, in order.
func (s *Scenario) Overlays() []Overlay { return s.overlays }

// Profiles are the engine profile files the scenario names, by the path as
// written.
func (s *Scenario) Profiles() map[string]hw.PerfProfile { return s.profiles }

// FallbackConfig is a scenario's [fallback] table: the keys of [cluster]
// for a second pool, plus enabled.
type FallbackConfig struct {
	// Enabled turns the fallback pool on. Default false.
	Enabled bool `toml:"enabled"`
	fleet.FleetConfig
}

// SizeConfig is a scenario's [size] table.
type SizeConfig struct {
	// SLO is the target, as for --slo, e.g. "ttft_p99=800ms,success=99.9%".
	// Default "" (then --slo is required).
	SLO string `toml:"slo"`
	// Confidence is the one-sided confidence level a size must meet the
	// SLO at. Default 0.95.
	Confidence float64 `toml:"confidence"`
}

// SweepConfig is a scenario's [sweep] table.
type SweepConfig struct {
	// Params are grid axes, each "KEY=SPEC" as for --param: SPEC is
	// "LO..HI:STEP" (inclusive) or a comma-separated list of values.
	Params []string `toml:"params"`
}

// RunConfig bounds the simulation.
type RunConfig struct {
	// HorizonS is a hard stop in simulated seconds: requests still in
	// flight then are reported as in flight. 0 (default) runs until the
	// workload ends and every request has finished.
	HorizonS float64 `toml:"horizon_s"`
	// Replications is the number of independent runs (seeds derived from
	// the master seed); every metric then has a mean and a 95% confidence
	// interval. Default 1.
	Replications int `toml:"replications"`
	// SampleIntervalS is the period of the time series (timeseries.csv), in
	// simulated seconds. Default 10.
	SampleIntervalS float64 `toml:"sample_interval_s"`
	// DrainLimitS stops a run this long after its last arrival even if
	// requests are still in flight (stuck on a zombie nothing restarts);
	// they are reported as in flight. 0: no limit. Default 3600.
	DrainLimitS float64 `toml:"drain_limit_s"`
	// DownReplicas is how many replicas are in repair for the whole run
	// (the last ones): N+k sizing asks how many replicas hold the SLO while
	// k are down. Default 0.
	DownReplicas int `toml:"down_replicas"`
	// MaxInFlight stops a run whose arrivals outpace service once more
	// than this many requests are in flight; the summary reports the stop
	// (sim.stopped = "overload ...") and the requests still in flight.
	// Default DefaultMaxInFlight (limits.go).
	MaxInFlight int `toml:"max_in_flight"`
}

// CostConfig prices the fleet.
type CostConfig struct {
	// Tier picks the catalog price: "on-demand" (default; H100 $6.50) or
	// "reserved" (H100 $2.89), CALIBRATION.md §3.
	Tier string `toml:"tier"`
	// PricePerGPUHour in USD overrides the tier's catalog price of the primary
	// pool's GPU when > 0 (a fallback pool pays its own GPU's catalog price).
	// Default 0.
	PricePerGPUHour float64 `toml:"price_per_gpu_hour"`
	// Power adds electricity to the cost (owned hardware; rental prices
	// already include it). Default false.
	Power bool `toml:"power"`
	// WattsPerGPU is the average draw per GPU in W; 0 uses the GPU's TDP.
	WattsPerGPU float64 `toml:"watts_per_gpu"`
	// PUE is the data centre's power usage effectiveness. Default 1.3
	// (assumption: a modern GPU data centre).
	PUE float64 `toml:"pue"`
	// USDPerKWh is the electricity price. Default 0.10 (assumption).
	USDPerKWh float64 `toml:"usd_per_kwh"`
}

// Cost tiers.
const (
	TierOnDemand = "on-demand"
	TierReserved = "reserved"
)

// Price is the USD price per GPU-hour the scenario pays.
// GroupPrice is a group's USD per GPU-hour: its own price_per_gpu_hour,
// else its GPU's catalog price at its tier (the [cost] tier by default).
func (s *Scenario) GroupPrice(g fleet.GroupConfig) float64 {
	if g.PricePerGPUHour > 0 {
		return g.PricePerGPUHour
	}
	c := s.Catalog().GPUs[g.GPU]
	if s.GroupTier(g) == TierReserved {
		return c.ReservedPricePerGPUHour
	}
	return c.PricePerGPUHour
}

// GroupTier is a group's pricing tier: its own, else the [cost] tier.
func (s *Scenario) GroupTier(g fleet.GroupConfig) string {
	if g.Tier != "" {
		return g.Tier
	}
	return s.Cost.Tier
}

func (s *Scenario) Price() float64 {
	if s.Cost.PricePerGPUHour > 0 {
		return s.Cost.PricePerGPUHour
	}
	g := s.Catalog().GPUs[s.Cluster.GPU]
	if s.Cost.Tier == TierReserved {
		return g.ReservedPricePerGPUHour
	}
	return g.PricePerGPUHour
}

// DefaultScenario returns a scenario with every default filled in. Cluster
// defaults: H100 (CALIBRATION.md §3), Llama-3-70B at TP=8 (one HGX server per
// replica), 4 replicas (the seed's 32-GPU setting, CALIBRATION.md §6).
func DefaultScenario() Scenario {
	return Scenario{
		Seed:     1,
		Mode:     ModeServing,
		Training: DefaultTrainingScenario(),
		Run:      RunConfig{Replications: 1, SampleIntervalS: 10, DrainLimitS: 3600, MaxInFlight: DefaultMaxInFlight},
		Size:     SizeConfig{Confidence: 0.95},
		Plan:     PlanConfig{MaxReplicas: DefaultPlanMaxReplicas},
		Cost:     CostConfig{Tier: TierOnDemand, PUE: 1.3, USDPerKWh: 0.10},
		Failures: failures.DefaultConfig(),
		Rollout:  fleet.DefaultRolloutConfig(),
		Fallback: FallbackConfig{FleetConfig: fleet.FleetConfig{GPU: "H100", Model: "llama-3-8b", TP: 1, Replicas: 2,
			Replica: engine.DefaultReplicaConfig()}},
		Cluster: fleet.FleetConfig{GPU: "H100", Model: "llama-3-70b", TP: 8, Replicas: 4,
			Replica: engine.DefaultReplicaConfig()},
		Router:    policies.DefaultRouterConfig(),
		Policies:  policies.DefaultResilienceConfig(),
		Autoscale: policies.DefaultAutoscaleConfig(),
		Spot:      DefaultSpot(),
		ColdStart: fleet.DefaultColdStart(),
		Workload:  workloads.DefaultConfig(),
		Disagg:    DefaultDisaggScenario(),
		KVTiers:   engine.DefaultKVTiersConfig(),
	}
}

// Load reads and validates a scenario file. A relative trace path in it is
// taken relative to the scenario file's folder.
func Load(path string) (*Scenario, error) {
	data, err := infile.ReadFile(nil, path, infile.Scenario)
	if err != nil {
		return nil, fmt.Errorf("cannot read scenario: %w", err)
	}
	return parse(path, data, filepath.Dir(path), nil)
}

// Parse decodes and validates scenario TOML; filename is used in messages.
// Every problem is reported at once, each with file, line and key.
func Parse(filename string, data []byte) (*Scenario, error) {
	return parse(filename, data, "", nil)
}

// Overlay is a TOML fragment applied over a scenario: an A/B arm, a sweep
// point or a command-line override. Its keys are scenario keys.
type Overlay struct {
	// Name says where the overlay comes from, for messages ("arm B",
	// "--param cluster.replicas=8").
	Name string
	TOML []byte
	// KeyPrefix is where the overlay's keys stand in the scenario file
	// ("arms.1" for the second [[arms]] table), so problems can name a
	// line there; "" when the overlay is not in the file.
	KeyPrefix string
}

// Derive returns the scenario re-read from its source with its own
// overlays and then these applied in order, validated. The receiver is not
// changed (nothing is shared with it). Changes made to a Scenario's fields
// in code are not carried over: express them as overlays.
func (s *Scenario) Derive(overlays ...Overlay) (*Scenario, error) {
	if s.src == nil {
		return nil, fmt.Errorf("scenario %s: no source to derive from", s.Name)
	}
	all := append(append([]Overlay(nil), s.overlays...), overlays...)
	return parse(s.filename, s.src, s.baseDir, all)
}

func parse(filename string, data []byte, baseDir string, overlays []Overlay) (*Scenario, error) {
	if err := tomlx.CheckShape(filename, data); err != nil {
		return nil, err // before any decoder sees it
	}
	sc := DefaultScenario()
	// Workload defaults depend on its kind: peek at it first (errors are
	// left to the strict decode below).
	var peek struct {
		Workload struct {
			Kind string `toml:"kind"`
		} `toml:"workload"`
	}
	if _, err := toml.Decode(string(data), &peek); err == nil && peek.Workload.Kind != "" {
		sc.Workload = workloads.DefaultConfigFor(peek.Workload.Kind)
	}
	doc, err := tomlx.Decode(filename, data, &sc)
	var terr *tomlx.Error
	if err != nil {
		if !errors.As(err, &terr) || doc == nil {
			return nil, err
		}
		// Unknown keys and non-finite numbers still let the rest decode:
		// decode leniently and validate too, so that every problem is
		// reported at once. Syntax and type errors stop here.
		sc = DefaultScenario()
		if peek.Workload.Kind != "" {
			sc.Workload = workloads.DefaultConfigFor(peek.Workload.Kind)
		}
		if _, lerr := toml.Decode(string(data), &sc); lerr != nil {
			return nil, err
		}
	}
	docs := []*tomlx.Doc{doc}
	if len(overlays) > 0 {
		kind := sc.Workload.Kind
		for _, o := range overlays {
			od, err := tomlx.Decode(o.Name, o.TOML, &sc)
			if err != nil {
				return nil, overlayError(doc, o, err)
			}
			docs = append(docs, od)
		}
		if sc.Workload.Kind != kind {
			return nil, fmt.Errorf("%s: workload.kind cannot be overridden (its defaults differ); write a scenario per kind", overlays[len(overlays)-1].Name)
		}
	}
	if sc.Name == "" {
		sc.Name = NameFromFile(filename)
	}
	sc.has = func(key string) bool {
		for _, d := range docs {
			if d != nil && d.Has(key) {
				return true
			}
		}
		return false
	}
	sc.resolveColdStart()
	if !sc.has("autoscale.target") {
		sc.Autoscale.DefaultTarget()
	}
	if !sc.has("disagg.autoscale.target") {
		sc.Disagg.Autoscale.DefaultTarget()
	}
	applyFaultDefaults(&sc, doc)
	applyDisaggFaultDefaults(&sc, doc)
	sc.src, sc.filename, sc.baseDir, sc.overlays = data, filename, baseDir, overlays
	resolveTrace(&sc.Workload.Trace, baseDir)
	resolveProfile(&sc.Workload.Arrival, baseDir)
	var ps config.Problems
	if sc.Mode == ModeTraining {
		sc.Training.resolveSpares(&sc.Failures, sc.has, &ps)
	} else {
		sc.resolveServingSpares(sc.has, &ps)
	}
	sc.resolveGroups(doc, &ps)
	sc.loadModelConfigs(&ps)
	sc.loadProfiles(&ps)
	for _, k := range workloads.IgnoredKeys(sc.Workload.Kind) {
		if doc.Has("workload." + k) {
			ps.Add("workload."+k, "has no effect with workload.kind = %q; remove it", sc.Workload.Kind)
		}
	}
	sc.Validate(&ps)
	sc.checkTrace(&ps)
	sc.checkRateProfile(&ps)
	if terr == nil && len(ps.List) == 0 {
		return &sc, nil
	}
	all := &tomlx.Error{File: doc.File()}
	seen := map[string]bool{}
	if terr != nil {
		for _, it := range terr.Items {
			seen[it.Key] = true
			all.Items = append(all.Items, it)
		}
	}
	if len(ps.List) > 0 {
		for _, it := range doc.Problems(ps.List).Items {
			if !seen[it.Key] {
				all.Items = append(all.Items, it)
			}
		}
	}
	sort.SliceStable(all.Items, func(i, j int) bool {
		a, b := all.Items[i], all.Items[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Key < b.Key
	})
	if len(overlays) > 0 {
		names := make([]string, len(overlays))
		for i, o := range overlays {
			names[i] = o.Name
		}
		return nil, fmt.Errorf("with %s:\n%w", strings.Join(names, ", "), all)
	}
	return nil, all
}

// overlayError restates an overlay's decoding problems at the overlay's
// place in the scenario file when it has one.
func overlayError(doc *tomlx.Doc, o Overlay, err error) error {
	var terr *tomlx.Error
	if !errors.As(err, &terr) {
		return err
	}
	if o.KeyPrefix == "" {
		// From the command line (--param, --set): one line with no file,
		// so no ":1" after the name, which reads as part of the value.
		out := &tomlx.Error{File: terr.File}
		for _, it := range terr.Items {
			it.Line = 0
			out.Items = append(out.Items, it)
		}
		return out
	}
	out := &tomlx.Error{File: doc.File()}
	for _, it := range terr.Items {
		key := o.KeyPrefix
		if it.Key != "" {
			key += "." + it.Key
		}
		out.Items = append(out.Items, tomlx.Item{Line: doc.Line(key), Key: key, Msg: it.Msg})
	}
	return out
}

// Catalog returns the built-in catalog extended by the scenario's [[gpus]]
// and [[models]].
func (s *Scenario) Catalog() *hw.Catalog {
	cat := hw.NewCatalog()
	for _, g := range s.GPUs {
		cat.GPUs[g.Name] = g
	}
	for _, m := range s.Models {
		cat.LLMs[m.Name] = m
	}
	for k, p := range s.profiles {
		cat.Profiles[k] = p
	}
	return cat
}

// loadModelConfigs reads the Hugging Face config.json of each [[models]]
// table that names one (config, relative to the scenario's folder) into
// the table: the file's shapes, then the table's own keys over them.
func (s *Scenario) loadModelConfigs(ps *config.Problems) {
	for i, m := range s.Models {
		if m.Config == "" {
			continue
		}
		key := fmt.Sprintf("models.%d", i)
		path := m.Config
		if s.baseDir != "" && !filepath.IsAbs(path) {
			path = filepath.Join(s.baseDir, path)
		}
		imp, err := hw.ReadHFConfig(path)
		if err != nil {
			ps.Add(key+".config", "cannot use model config:\n%v", err)
			if s.badModelConfigs == nil {
				s.badModelConfigs = map[int]bool{}
			}
			s.badModelConfigs[i] = true // its other problems follow from this one
			continue
		}
		s.Models[i] = imp.WithOverrides(m.Name, m, func(k string) bool { return s.has(key + "." + k) })
	}
}

// loadProfiles reads the engine profile files the cluster and the fallback
// pool name (relative to the scenario's folder), reporting a file that
// cannot be read or is invalid under the key that names it.
func (s *Scenario) loadProfiles(ps *config.Problems) {
	type spec struct {
		key  string
		spec hw.PerfSpec
	}
	specs := []spec{
		{"cluster.replica.perf.profile", s.Cluster.Replica.Perf},
		{"fallback.replica.perf.profile", s.Fallback.Replica.Perf},
		{"disagg.decode.replica.perf.profile", s.Disagg.Decode.Replica.Perf},
	}
	for i, g := range s.Cluster.Groups {
		if g.Replica != nil {
			specs = append(specs, spec{fmt.Sprintf("cluster.groups.%d.replica.perf.profile", i), g.Replica.Perf})
		}
	}
	for _, c := range specs {
		if !c.spec.IsPath() {
			continue
		}
		if _, ok := s.profiles[c.spec.Profile]; ok {
			continue
		}
		path := c.spec.Profile
		if s.baseDir != "" && !filepath.IsAbs(path) {
			path = filepath.Join(s.baseDir, path)
		}
		pp, err := hw.ReadProfile(path)
		if err != nil {
			ps.Add(c.key, "cannot use profile file:\n%v", err)
			continue
		}
		if s.profiles == nil {
			s.profiles = map[string]hw.PerfProfile{}
		}
		s.profiles[c.spec.Profile] = pp
	}
}

// checkTrace opens a kind "trace" workload's file and reads its header and
// first rows (workloads.CheckRows), reporting a missing file or a
// malformed line under workload.trace.path, so that bad input is refused
// before anything runs. It is skipped when the trace keys already have
// problems.
func (s *Scenario) checkTrace(ps *config.Problems) {
	if s.Workload.Kind != workloads.KindTrace {
		return
	}
	for _, p := range ps.List {
		if strings.HasPrefix(p.Key, "workload.trace.") {
			return
		}
	}
	if err := s.Workload.Trace.Check(workloads.CheckRows); err != nil {
		ps.Add("workload.trace.path", "%v", err)
		return
	}
	s.checkTraceSpan(ps)
}

// failureGPUs is the GPUs [failures] strikes, as the runner builds the
// fleet: the cluster's replicas and warm spares (each group's own TP and
// spare group), and a disaggregated fleet's decode pool, in whole NVLink
// domains (fleet.FleetConfig.FailureGPUs: the placement the failure
// injector draws on, so that validation and the run's guard count alike).
func (s *Scenario) failureGPUs() int {
	cat := s.Catalog()
	if s.Disagg.Enabled {
		cluster := s.disaggCluster()
		d := s.Disagg
		d.ResolveDefaults(cluster)
		dv := d.DisaggConfig
		dv.Decode.Replicas = s.DecodeReplicas()
		return dv.FailureGPUs(cat, cluster)
	}
	cluster := s.Cluster
	if s.Failures.Enabled {
		cluster.Replicas += max(s.Failures.Spares, 0)
	}
	if s.GroupSpares() > 0 {
		cluster = cluster.WithSpareGroups()
	}
	return cluster.FailureGPUs(cat)
}

// MaxSamples bounds the time series (timeseries.csv) of one run.
const MaxSamples = 1_000_000

// Validate records every problem of the scenario.
func (s *Scenario) Validate(ps *config.Problems) {
	if err := CheckName(s.Name); err != nil {
		ps.Add("name", "%v", err)
	}
	for i, a := range s.Arms {
		if n, ok := a["name"].(string); ok && n != "" {
			if err := CheckName(n); err != nil {
				ps.Add(fmt.Sprintf("arms.%d.name", i), "%v", err)
			}
		}
	}
	ps.NonNegative("run.horizon_s", s.Run.HorizonS)
	ps.PositiveInt("run.replications", s.Run.Replications)
	if s.Run.Replications > 10000 {
		ps.Add("run.replications", "at most 10000, found %d", s.Run.Replications)
	}
	ps.Positive("run.sample_interval_s", s.Run.SampleIntervalS)
	ps.NonNegative("run.drain_limit_s", s.Run.DrainLimitS)
	if s.Run.DownReplicas < 0 || (s.Cluster.Replicas > 0 && s.Run.DownReplicas >= s.Cluster.Replicas) {
		ps.Add("run.down_replicas", "must be between 0 and cluster.replicas−1 (%d), found %d", s.Cluster.Replicas-1, s.Run.DownReplicas)
	}
	s.checkLimits(ps)
	for i := range s.GPUs {
		s.GPUs[i].Validate(fmt.Sprintf("gpus.%d", i), ps)
	}
	for i := range s.Models {
		if s.badModelConfigs[i] {
			continue
		}
		s.Models[i].Validate(fmt.Sprintf("models.%d", i), ps)
	}
	s.Cluster.Validate(s.Catalog(), "cluster", ps)
	ps.OneOf("mode", s.Mode, []string{ModeServing, ModeTraining})
	if s.Mode == ModeTraining {
		s.Training.Validate("training", ps)
	}
	for i := range s.Faults {
		s.Faults[i].Validate(fmt.Sprintf("faults.%d", i), s.Cluster.Replicas, ps)
	}
	s.Router.Validate("router", ps)
	s.Policies.Validate("policies", ps)
	s.Failures.Validate("failures", ps)
	if f := s.Failures; f.Enabled && f.RateMultiplier > 0 && s.Workload.DurationS > 0 && !ps.HasPrefix("failures") {
		if prof, err := f.BuildProfile(); err == nil {
			if err := f.CheckRate(prof, s.failureGPUs(), s.Workload.DurationS); err != nil {
				ps.Add("failures.rate_multiplier", "%v", err)
			}
		}
	}
	if s.Fallback.Enabled {
		s.Fallback.FleetConfig.Validate(s.Catalog(), "fallback", ps)
	}
	s.validateDisagg(ps)
	s.validateKVTiers(ps)
	if s.Rollout.Enabled {
		s.validateRollout(ps)
	}
	if s.Autoscale.Enabled {
		s.validateAutoscale(ps)
	}
	s.validateSpot(ps)
	s.checkRules(ps)
	s.validateServe(ps)
	s.ColdStart.Validate("cold_start", ps)
	s.Workload.Validate("workload", ps)
	ps.NonNegative("slo.ttft_ms", s.SLO.TTFTMs)
	ps.NonNegative("slo.tpot_ms", s.SLO.TPOTMs)
	ps.NonNegative("slo.e2e_ms", s.SLO.E2EMs)
	ps.NonNegative("cost.price_per_gpu_hour", s.Cost.PricePerGPUHour)
	ps.OneOf("cost.tier", s.Cost.Tier, []string{TierOnDemand, TierReserved})
	ps.NonNegative("cost.watts_per_gpu", s.Cost.WattsPerGPU)
	ps.NonNegative("cost.usd_per_kwh", s.Cost.USDPerKWh)
	if math.IsNaN(s.Cost.PUE) || s.Cost.PUE < 1 || math.IsInf(s.Cost.PUE, 0) {
		ps.Add("cost.pue", "must be a finite number >= 1, found %v", s.Cost.PUE)
	}
	if s.Size.Confidence <= 0 || s.Size.Confidence >= 1 {
		ps.Add("size.confidence", "must be between 0 and 1 (exclusive), found %v", s.Size.Confidence)
	}
	if s.Size.SLO != "" {
		if _, err := ParseSLO(s.Size.SLO); err != nil {
			ps.Add("size.slo", "%v", err)
		}
	}
	s.validatePlan(ps)
	for i, p := range s.Sweep.Params {
		if _, err := ParseAxis(p); err != nil {
			ps.Add(fmt.Sprintf("sweep.params.%d", i), "%v", err)
		}
	}
}

func baseName(path string) string {
	b := path
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '/' || b[i] == '\\' {
			b = b[i+1:]
			break
		}
	}
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '.' {
			return b[:i]
		}
	}
	return b
}

// resolveTrace points a "builtin:NAME" trace at the traces embedded in the
// binary, and a relative path at baseDir.
// resolveProfile takes a relative rate profile path relative to the
// scenario file's folder.
func resolveProfile(a *workloads.ArrivalConfig, baseDir string) {
	if a.ProfileFile != "" && baseDir != "" && !filepath.IsAbs(a.ProfileFile) {
		a.ProfileFile = filepath.Join(baseDir, a.ProfileFile)
	}
}

// checkRateProfile reads a piecewise arrival's profile file, reporting a
// missing file or a bad line (file:line) under
// workload.arrival.profile_file before anything runs. It is skipped when
// the arrival keys already have problems.
func (s *Scenario) checkRateProfile(ps *config.Problems) {
	for _, p := range ps.List {
		if strings.HasPrefix(p.Key, "workload.arrival.") {
			return
		}
	}
	if err := s.Workload.Arrival.CheckProfile(); err != nil {
		ps.Add("workload.arrival.profile_file", "%v", err)
	} else if s.Workload.Arrival.Process == workloads.ProcessPiecewise && s.Workload.Arrival.ProfileFile != "" {
		s.checkRequests(ps) // the profile's points are known now
	}
}

func resolveTrace(tc *workloads.TraceConfig, baseDir string) {
	if fsys, inner, ok := BuiltinTrace(tc.Path); ok {
		tc.Path, tc.FS = inner, fsys
		return
	}
	switch {
	case tc.Path != "" && baseDir != "" && !filepath.IsAbs(tc.Path):
		tc.Path = filepath.Join(baseDir, tc.Path)
	}
}

// resolveColdStart: a shared [cold_start] is the autoscaler's unless
// [autoscale.cold_start] is given.
func (s *Scenario) resolveColdStart() {
	if s.has("cold_start") && !s.has("autoscale.cold_start") {
		s.Autoscale.ColdStart = s.ColdStart
	}
	if s.has("cold_start") && !s.has("disagg.autoscale.cold_start") {
		s.Disagg.Autoscale.ColdStart = s.ColdStart
	}
}

// RestartColdStart is the cold-start model failure restarts take: the
// shared [cold_start], else an autoscaled fleet's [autoscale.cold_start]
// when given; nil (fixed cold_start_s) when neither is.
func (s *Scenario) RestartColdStart() *fleet.ColdStartConfig {
	switch {
	case s.has == nil:
	case s.has("cold_start"):
		return &s.ColdStart
	case s.Autoscale.Enabled && s.has("autoscale.cold_start"):
		return &s.Autoscale.ColdStart
	}
	return nil
}

// applyFaultDefaults gives each [[faults]] table the defaults of the keys
// it does not set (array elements have no defaults of their own when
// decoded).
func applyFaultDefaults(sc *Scenario, doc *tomlx.Doc) {
	def := failures.DefaultScripted()
	for i := range sc.Faults {
		f := &sc.Faults[i]
		has := func(k string) bool { return doc != nil && doc.Has(fmt.Sprintf("faults.%d.%s", i, k)) }
		if !has("factor") {
			f.Factor = def.Factor
		}
		if !has("restart_s") {
			f.RestartS = def.RestartS
		}
		if !has("cold_start_s") {
			f.ColdStartS = def.ColdStartS
		}
		if !has("period_s") {
			f.PeriodS = def.PeriodS
		}
		if !has("pause_s") {
			f.PauseS = def.PauseS
		}
		if !has("drain_grace_s") {
			f.DrainGraceS = def.DrainGraceS
		}
	}
}

// validateAutoscale checks [autoscale] against the replicas it may scale:
// not those in repair for the run, nor a rollout's green ones (it scales
// the blue ones). (Failures and scripted faults strike parked and
// provisioned replicas alike; a draining replica stays held out whatever
// else puts it back in rotation.)
func (s *Scenario) validateAutoscale(ps *config.Problems) {
	s.Autoscale.Validate("autoscale", s.Cluster.Replicas, ps)
	if k, g := len(s.DownIndexes()), len(s.RolloutGreen()); k+g > 0 && k+g < s.Cluster.Replicas {
		// k replicas are in repair and g are a rollout's green pool (not
		// the autoscaler's): it can start at most the others.
		n, what, why := s.Cluster.Replicas-k-g, "cluster.replicas", "the replicas not in repair"
		if len(s.Cluster.Groups) > 0 {
			what = "the groups' replicas"
		}
		if k > 0 {
			what += " − run.down_replicas"
			if len(s.Cluster.Groups) > 0 {
				what = "the groups' replicas − their down_replicas"
			}
		}
		if g > 0 {
			what += " − the rollout's green replicas"
			why = "the blue replicas, which the autoscaler scales"
			if k > 0 {
				why += ", not in repair"
			}
		}
		if s.Autoscale.MinReplicas > n && s.Autoscale.MinReplicas <= s.Cluster.Replicas {
			ps.Add("autoscale.min_replicas", "must be at most %s = %d (%s), found %d", what, n, why, s.Autoscale.MinReplicas)
		}
		if s.Autoscale.InitialReplicas > n && s.Autoscale.InitialReplicas <= s.Cluster.Replicas {
			ps.Add("autoscale.initial_replicas", "must be at most %s = %d (%s), found %d", what, n, why, s.Autoscale.InitialReplicas)
		}
	}
	if s.Autoscale.Policy == policies.ScaleSchedule && s.Workload.Kind == workloads.KindTrace {
		ps.Add("autoscale.policy", "%q reads the workload's rate profile; a trace has none (use \"target\" or \"slo\")", policies.ScaleSchedule)
	}
	if s.Mode == ModeTraining {
		ps.Add("autoscale.enabled", "autoscaling is for serving fleets, not mode = \"training\"")
	}
	if n := len(s.Serve); len(s.Cluster.Groups) > 0 && n > 1 && s.Autoscale.MinReplicas < n {
		// Each model keeps a serving replica (its traffic has nowhere else
		// to go).
		ps.Add("autoscale.min_replicas", "must be at least the %d served models (each keeps a serving replica), found %d", n, s.Autoscale.MinReplicas)
	}
}

// resolveGroups: with [[cluster.groups]] the fleet's size and GPUs are the
// groups', so cluster.gpu, cluster.tp and cluster.replicas are refused, and
// set from the groups (replicas the total, gpu and tp the first group's)
// for the code that reads them. The combinations not modelled yet for a
// fleet of groups are refused.
func (s *Scenario) resolveGroups(doc *tomlx.Doc, ps *config.Problems) {
	if len(s.Cluster.Groups) == 0 {
		return
	}
	for _, k := range []string{"gpu", "tp", "replicas"} {
		if doc != nil && doc.Has("cluster."+k) {
			ps.Add("cluster."+k, "is set per group with [[cluster.groups]]; remove it here")
		}
	}
	total := 0
	for _, g := range s.Cluster.Groups {
		total += max(g.Replicas, 0)
	}
	g0 := s.Cluster.Groups[0]
	s.Cluster.Replicas, s.Cluster.GPU, s.Cluster.TP = total, g0.GPU, g0.TP
	s.Cluster.ResolveGroupEngines("cluster", s.has, ps)
	s.Cluster.ServeModels = s.serveModels()
	if s.Cost.PricePerGPUHour > 0 {
		ps.Add("cost.price_per_gpu_hour", "set price_per_gpu_hour per group with [[cluster.groups]] (the GPUs differ)")
	}
	if s.Run.DownReplicas > 0 {
		ps.Add("run.down_replicas", "a fleet of groups takes replicas down per group: set down_replicas in the [[cluster.groups]] whose replicas are in repair")
	}
	if s.Failures.Enabled && s.Failures.Spares > 0 {
		// Failures strike each group's own servers: a spare stands in for
		// a replica of its own GPU type, model and engine.
		ps.Add("failures.spares", "a fleet of groups keeps warm spares per group: set spares in the [[cluster.groups]] tables whose replicas they stand in for (and failures.spares = 0)")
	}
	if key := s.groupSparesKey(); key != "" && !s.Failures.Enabled {
		ps.Add(key, "warm spares stand in for failed replicas: they need [failures] enabled = true (or set spares = 0)")
	}
}

// groupSparesKey is the key of the first group with warm spares
// (cluster.groups.I.spares), or "" when none has.
func (s *Scenario) groupSparesKey() string {
	for i, g := range s.Cluster.Groups {
		if g.Spares > 0 {
			return fmt.Sprintf("cluster.groups.%d.spares", i)
		}
	}
	return ""
}
