package hw

import (
	"embed"
	"fmt"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/internal/infile"
	"github.com/fleetsim/fleetsim/internal/tomlx"
)

// PerfProfile holds the efficiency constants of one serving engine at one
// version: how far from the hardware's peaks its kernels run, how much of the
// tensor-parallel communication it hides, and what a step costs beyond its
// kernels. The step model (StepModel) is the physics; a profile is the
// engine. Profiles are TOML files: the built-ins are embedded from
// models/hw/profiles/, a scenario may name a file of its own, and
// `fleetsim calibrate` fits and writes one.
type PerfProfile struct {
	// Name and Description say what the profile is; FittedOn says what data
	// its constants come from.
	Name        string `toml:"name"`
	Description string `toml:"description"`
	FittedOn    string `toml:"fitted_on"`
	// Domain is what the constants were fitted on (optional; fleetsim
	// calibrate writes it): a replica outside it gets a warning, since a
	// fit carries over to other model sizes, GPUs and kinds only as well as
	// README "Calibrating to your engine" measures.
	Domain ProfileDomain `toml:"domain"`

	// GEMMEfficiencyBF16, FP8 and FP4 are the fractions of the dense peak
	// at each weight precision that large GEMMs reach.
	GEMMEfficiencyBF16 float64 `toml:"gemm_efficiency_bf16"`
	GEMMEfficiencyFP8  float64 `toml:"gemm_efficiency_fp8"`
	GEMMEfficiencyFP4  float64 `toml:"gemm_efficiency_fp4"`
	// GEMMHalfTokens is the step token count at which the GEMM efficiency is
	// half its large-GEMM value (small GEMMs do not fill the tensor cores).
	GEMMHalfTokens float64 `toml:"gemm_half_tokens"`
	// WeightBandwidthEfficiency is the fraction of peak HBM bandwidth
	// reached streaming the weights.
	WeightBandwidthEfficiency float64 `toml:"weight_bandwidth_efficiency"`
	// AttentionEfficiency is the fraction of the dense peak (at the KV
	// precision) prefill attention reaches on long contexts;
	// AttentionHalfContext the attended context at which it is half that.
	AttentionEfficiency  float64 `toml:"attention_efficiency"`
	AttentionHalfContext float64 `toml:"attention_half_context"`
	// KVBandwidthEfficiency is the fraction of peak HBM bandwidth decode
	// attention reaches reading the KV cache.
	KVBandwidthEfficiency float64 `toml:"kv_bandwidth_efficiency"`
	// NVLinkEfficiency is the fraction of one-direction NVLink bandwidth a
	// TP all-reduce reaches; AllReduceLatencyS the fixed cost of each of the
	// two all-reduces per layer; TPOverlap the fraction of all-reduce time
	// hidden under computation (0: none).
	NVLinkEfficiency  float64 `toml:"nvlink_efficiency"`
	AllReduceLatencyS float64 `toml:"allreduce_latency_s"`
	TPOverlap         float64 `toml:"tp_overlap"`
	// StepOverheadS is the fixed cost of one step (scheduling, input
	// preparation, launches); SeqOverheadS what each sequence in the step
	// adds (sampling, detokenisation, CUDA-graph padding, bookkeeping).
	StepOverheadS float64 `toml:"step_overhead_s"`
	SeqOverheadS  float64 `toml:"seq_overhead_s"`
	// LayerOverheadS is what each layer adds to a step with GEMM work
	// beyond its math and bytes: the floor of its ~10 kernels (launch,
	// synchronisation, a kernel's minimum duration), paid in full by small
	// decode batches. Optional (0: none).
	LayerOverheadS float64 `toml:"layer_overhead_s"`
	// OverlapExponent p makes the GEMM phase the smooth maximum
	// (a^p + b^p)^(1/p) of its weight streaming a and its math b: kernels
	// near the crossover overlap the two imperfectly. Optional (0: the hard
	// max, perfect overlap).
	OverlapExponent float64 `toml:"overlap_exponent"`
	// MoEHalfTokens is the tokens per expert at which a grouped (expert)
	// GEMM reaches half its large-GEMM efficiency: experts see a few
	// tokens each where a dense GEMM sees the whole step. Optional (0:
	// the experts' GEMMs run at the dense GEMMs' efficiency).
	MoEHalfTokens float64 `toml:"moe_half_tokens"`
	// MoEBandwidthEfficiency is the fraction of peak HBM bandwidth the
	// expert GEMMs (fused/grouped MoE kernels) reach streaming their
	// weights. Optional (0: weight_bandwidth_efficiency, the dense GEMMs').
	MoEBandwidthEfficiency float64 `toml:"moe_bandwidth_efficiency"`
	// FrontEndS and FrontEndSPerToken are the request's way in before the
	// engine sees it: HTTP handling, validation and the hand-off to the
	// engine, plus tokenisation per prompt token. StreamS is a token's way
	// out: from the end of the step that sampled it to the client (output
	// processing, detokenisation, streaming). TTFT and end-to-end latency
	// include both; inter-token gaps do not. Optional (0: none).
	FrontEndS         float64 `toml:"frontend_s"`
	FrontEndSPerToken float64 `toml:"frontend_s_per_token"`
	StreamS           float64 `toml:"stream_s"`
	// FirstTokenLagSteps is how many steps after the one that sampled it a
	// token reaches the engine's output: an engine that schedules step n+1
	// before processing step n's outputs (asynchronous scheduling, output
	// processing overlapped with the next step) delivers every token about
	// one step late. In TTFT and end-to-end latency, not in ITL. Optional
	// (0: none).
	FirstTokenLagSteps float64 `toml:"first_token_lag_steps"`
	// RuntimeReserveBytes is HBM per GPU the engine holds beyond weights,
	// activations and KV: CUDA graphs, the CUDA context, communication
	// buffers and allocator slack. The sampler's logits (max_seqs × vocab ×
	// 4 B) are added to it by the memory plan.
	RuntimeReserveBytes float64 `toml:"runtime_reserve_bytes"`
}

// ProfileDomain is the set of deployments a profile was fitted on.
type ProfileDomain struct {
	// Models, GPUs and Compute list the catalog models, GPUs and GEMM
	// precisions of the rows fitted; Kinds "dense" and/or "moe".
	Models  []string `toml:"models"`
	GPUs    []string `toml:"gpus"`
	Compute []string `toml:"compute"`
	Kinds   []string `toml:"kinds"`
	// ActiveParamsB is the range of the fitted models' active parameters,
	// billions ([min, max]).
	ActiveParamsB []float64 `toml:"active_params_b"`
}

// Empty says whether no domain was recorded.
func (d ProfileDomain) Empty() bool {
	return len(d.Models) == 0 && len(d.GPUs) == 0 && len(d.Compute) == 0 && len(d.Kinds) == 0 && len(d.ActiveParamsB) == 0
}

// Outside lists how a replica of llm on gpu computing in compute lies
// outside the domain ("" parts it does not check); nil when inside or when
// no domain was recorded.
func (d ProfileDomain) Outside(gpu GPU, llm LLM, compute Precision) []string {
	var out []string
	has := func(xs []string, x string) bool {
		for _, v := range xs {
			if v == x {
				return true
			}
		}
		return false
	}
	if len(d.GPUs) > 0 && !has(d.GPUs, gpu.Name) {
		out = append(out, fmt.Sprintf("GPU %s (fitted on %s)", gpu.Name, strings.Join(d.GPUs, ", ")))
	}
	if len(d.Compute) > 0 && compute != "" && !has(d.Compute, string(compute)) {
		out = append(out, fmt.Sprintf("%s compute (fitted on %s)", compute, strings.Join(d.Compute, ", ")))
	}
	kind := "dense"
	if llm.IsMoE() {
		kind = "moe"
	}
	if len(d.Kinds) > 0 && !has(d.Kinds, kind) {
		out = append(out, fmt.Sprintf("a %s model (fitted on %s only)", kind, strings.Join(d.Kinds, ", ")))
	}
	if len(d.ActiveParamsB) == 2 {
		b := llm.ActiveParamsDerived() / 1e9
		if b < d.ActiveParamsB[0]/2 || b > d.ActiveParamsB[1]*2 {
			out = append(out, fmt.Sprintf("%.3gB active parameters (fitted on %.3g–%.3gB)", b, d.ActiveParamsB[0], d.ActiveParamsB[1]))
		}
	}
	return out
}

// GEMMEfficiency is the large-GEMM efficiency at compute precision p.
func (pp *PerfProfile) GEMMEfficiency(p Precision) float64 {
	switch p {
	case FP8:
		return pp.GEMMEfficiencyFP8
	case FP4:
		return pp.GEMMEfficiencyFP4
	}
	return pp.GEMMEfficiencyBF16
}

// ProfileParam is one fittable constant of a profile with the bounds that
// keep it physical.
type ProfileParam struct {
	Key    string
	Lo, Hi float64
	// Log says the constant spans orders of magnitude (fit it on a log
	// scale); such a constant's lower bound is positive.
	Log bool
	ptr func(*PerfProfile) *float64
}

// Get and Set read and write the constant of pp.
func (p ProfileParam) Get(pp *PerfProfile) float64    { return *p.ptr(pp) }
func (p ProfileParam) Set(pp *PerfProfile, v float64) { *p.ptr(pp) = v }

// ProfileParams lists the constants, their bounds and scales. Bounds
// (assumptions that keep a fit physical): kernel efficiencies at most 90% of
// the dense tensor peak (the best cuBLAS/CUTLASS GEMMs on Hopper reach about
// 75–85%) and 95% of the HBM or NVLink bandwidth (no kernel streams
// faster; H100 HBM3 copies measure about 90%); the GEMMs' half point at
// most 64 tokens (Hopper's and Blackwell's tensor-core instructions work on
// tiles of 64 rows, so a GEMM of one tile's tokens is past its ramp: a
// larger half point would make small decode batches compute-bound, which
// they are not), attention's below 64k; overheads below 50 ms per
// step and 1 ms per sequence; overlap below 95%.
var ProfileParams = []ProfileParam{
	{"gemm_efficiency_bf16", 0.05, 0.9, false, func(p *PerfProfile) *float64 { return &p.GEMMEfficiencyBF16 }},
	{"gemm_efficiency_fp8", 0.05, 0.9, false, func(p *PerfProfile) *float64 { return &p.GEMMEfficiencyFP8 }},
	{"gemm_efficiency_fp4", 0.05, 0.9, false, func(p *PerfProfile) *float64 { return &p.GEMMEfficiencyFP4 }},
	{"gemm_half_tokens", 1, 64, true, func(p *PerfProfile) *float64 { return &p.GEMMHalfTokens }},
	{"weight_bandwidth_efficiency", 0.2, 0.95, false, func(p *PerfProfile) *float64 { return &p.WeightBandwidthEfficiency }},
	{"attention_efficiency", 0.02, 0.9, false, func(p *PerfProfile) *float64 { return &p.AttentionEfficiency }},
	{"attention_half_context", 1, 65536, true, func(p *PerfProfile) *float64 { return &p.AttentionHalfContext }},
	{"kv_bandwidth_efficiency", 0.1, 0.95, false, func(p *PerfProfile) *float64 { return &p.KVBandwidthEfficiency }},
	{"nvlink_efficiency", 0.05, 0.95, false, func(p *PerfProfile) *float64 { return &p.NVLinkEfficiency }},
	{"allreduce_latency_s", 1e-7, 1e-3, true, func(p *PerfProfile) *float64 { return &p.AllReduceLatencyS }},
	{"tp_overlap", 0, 0.95, false, func(p *PerfProfile) *float64 { return &p.TPOverlap }},
	{"step_overhead_s", 1e-6, 0.05, true, func(p *PerfProfile) *float64 { return &p.StepOverheadS }},
	{"seq_overhead_s", 1e-9, 1e-3, true, func(p *PerfProfile) *float64 { return &p.SeqOverheadS }},
	// Optional constants (optionalParams): each may be 0, meaning the
	// mechanism is off. Bounds: a layer's kernel floor below 1 ms; the
	// smooth-max exponent from 1 (the sum: no overlap at all) to 64 (the
	// max to within 1%); the experts' half point below 64k tokens; the front
	// end and the stream below a second, tokenisation below 100 µs a token.
	{"layer_overhead_s", 1e-7, 1e-3, true, func(p *PerfProfile) *float64 { return &p.LayerOverheadS }},
	{"overlap_exponent", 1, 64, true, func(p *PerfProfile) *float64 { return &p.OverlapExponent }},
	{"moe_half_tokens", 1, 65536, true, func(p *PerfProfile) *float64 { return &p.MoEHalfTokens }},
	{"moe_bandwidth_efficiency", 0.1, 0.95, true, func(p *PerfProfile) *float64 { return &p.MoEBandwidthEfficiency }},
	{"frontend_s", 1e-5, 1, true, func(p *PerfProfile) *float64 { return &p.FrontEndS }},
	{"frontend_s_per_token", 1e-9, 1e-4, true, func(p *PerfProfile) *float64 { return &p.FrontEndSPerToken }},
	{"stream_s", 1e-5, 1, true, func(p *PerfProfile) *float64 { return &p.StreamS }},
	{"first_token_lag_steps", 0.01, 1, true, func(p *PerfProfile) *float64 { return &p.FirstTokenLagSteps }},
}

// optionalParams are the constants a profile file may leave out (0: the
// mechanism is off), so that files written before they existed still read.
var optionalParams = map[string]bool{
	"layer_overhead_s": true, "overlap_exponent": true, "moe_half_tokens": true, "moe_bandwidth_efficiency": true,
	"frontend_s": true, "frontend_s_per_token": true, "stream_s": true, "first_token_lag_steps": true,
}

// Optional says whether a profile file may leave the constant out.
func (p ProfileParam) Optional() bool { return optionalParams[p.Key] }

// LookupProfileParam finds a constant by key.
func LookupProfileParam(key string) (ProfileParam, bool) {
	for _, p := range ProfileParams {
		if p.Key == key {
			return p, true
		}
	}
	return ProfileParam{}, false
}

// Validate reports every constant outside its bounds under key prefix
// ("" for a profile file of its own). The half points and the log-scaled
// constants may also be 0.
func (pp *PerfProfile) Validate(prefix string, ps *config.Problems) {
	for _, p := range ProfileParams {
		v := p.Get(pp)
		lo := p.Lo
		if p.Log {
			lo = 0
		}
		if math.IsNaN(v) || v < lo || v > p.Hi || (!p.Log && p.Lo > 0 && v <= 0) {
			ps.Add(config.Key(prefix, p.Key), "must be between %g and %g, found %v", lo, p.Hi, v)
		}
	}
	if math.IsNaN(pp.RuntimeReserveBytes) || pp.RuntimeReserveBytes < 0 || pp.RuntimeReserveBytes > 64e9 {
		ps.Add(config.Key(prefix, "runtime_reserve_bytes"), "must be between 0 and 64e9, found %v", pp.RuntimeReserveBytes)
	}
}

// MarshalTOML writes the profile as a TOML file that ParseProfile reads
// back to the same values.
func (pp *PerfProfile) MarshalTOML() []byte {
	var b strings.Builder
	q := func(s string) string { return fmt.Sprintf("%q", s) }
	fmt.Fprintf(&b, "# fleetsim engine profile: the efficiency constants of the step model\n")
	fmt.Fprintf(&b, "# (models/hw/perf.go). Keys and bounds: README, \"Engine profiles\".\n")
	fmt.Fprintf(&b, "name = %s\n", q(pp.Name))
	fmt.Fprintf(&b, "description = %s\n", q(pp.Description))
	fmt.Fprintf(&b, "fitted_on = %s\n\n", q(pp.FittedOn))
	for _, p := range ProfileParams {
		fmt.Fprintf(&b, "%s = %s\n", p.Key, fmtFloat(p.Get(pp)))
	}
	fmt.Fprintf(&b, "runtime_reserve_bytes = %s\n", fmtFloat(pp.RuntimeReserveBytes))
	if d := pp.Domain; !d.Empty() {
		list := func(xs []string) string {
			qs := make([]string, len(xs))
			for i, x := range xs {
				qs[i] = q(x)
			}
			return "[" + strings.Join(qs, ", ") + "]"
		}
		fmt.Fprintf(&b, "\n# What the constants were fitted on: a replica outside it gets a warning.\n[domain]\n")
		fmt.Fprintf(&b, "models = %s\ngpus = %s\ncompute = %s\nkinds = %s\n", list(d.Models), list(d.GPUs), list(d.Compute), list(d.Kinds))
		if len(d.ActiveParamsB) == 2 {
			fmt.Fprintf(&b, "active_params_b = [%s, %s]\n", fmtFloat(d.ActiveParamsB[0]), fmtFloat(d.ActiveParamsB[1]))
		}
	}
	return []byte(b.String())
}

func fmtFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") { // keep it a TOML float
		s += ".0"
	}
	return s
}

// ParseProfile decodes a profile file (filename is used in messages) and
// validates it: every problem as FILE:LINE: KEY: message. Keys it does not
// set are an error (a profile states every constant), but for the optional
// ones, which default to 0.
func ParseProfile(filename string, data []byte) (PerfProfile, error) {
	var pp PerfProfile
	for _, p := range ProfileParams {
		if !p.Optional() {
			p.Set(&pp, math.NaN()) // detect missing keys
		}
	}
	pp.RuntimeReserveBytes = math.NaN()
	doc, err := tomlx.Decode(filename, data, &pp)
	if err != nil {
		return PerfProfile{}, err
	}
	var ps config.Problems
	for _, p := range ProfileParams {
		if math.IsNaN(p.Get(&pp)) {
			ps.Add(p.Key, "missing: a profile sets every constant")
		}
	}
	if math.IsNaN(pp.RuntimeReserveBytes) {
		ps.Add("runtime_reserve_bytes", "missing: a profile sets every constant")
	}
	var bounds config.Problems
	pp.Validate("", &bounds)
	for _, b := range bounds.List {
		if !strings.Contains(b.Msg, "NaN") { // a missing key is reported above
			ps.List = append(ps.List, b)
		}
	}
	if pp.Name == "" {
		ps.Add("name", "must not be empty")
	}
	if len(ps.List) > 0 {
		return PerfProfile{}, doc.Problems(ps.List)
	}
	return pp, nil
}

// ReadProfile reads and parses a profile file (ParseProfile).
func ReadProfile(path string) (PerfProfile, error) {
	data, err := infile.ReadFile(nil, path, infile.EngineProfile)
	if err != nil {
		return PerfProfile{}, err
	}
	return ParseProfile(path, data)
}

//go:embed profiles/*.toml
var profileFS embed.FS

// DefaultProfile names the built-in profile a replica uses unless its
// [cluster.replica.perf] names another: "default", another name of
// DefaultIs.
const DefaultProfile = "default"

// DefaultIs is the fitted profile DefaultProfile stands for: vLLM on
// Hopper, the engine and GPUs most serving fleets (and the measurements
// fleetsim is judged on) run. README "Calibrating to your engine" says how well it
// and the others fit, by model size, precision and dense/MoE.
const DefaultIs = "vllm-hopper"

var builtinProfiles = func() map[string]PerfProfile {
	out := map[string]PerfProfile{}
	ents, err := profileFS.ReadDir("profiles")
	if err != nil {
		panic(err)
	}
	for _, e := range ents {
		name := "profiles/" + e.Name()
		data, err := profileFS.ReadFile(name)
		if err != nil {
			panic(err)
		}
		pp, err := ParseProfile(name, data)
		if err != nil {
			panic(fmt.Sprintf("models: built-in profile %s: %v", name, err))
		}
		if want := strings.TrimSuffix(path.Base(name), ".toml"); pp.Name != want {
			panic(fmt.Sprintf("models: built-in profile %s is named %q", name, pp.Name))
		}
		out[pp.Name] = pp
	}
	if pp, ok := out[DefaultIs]; ok {
		out[DefaultProfile] = pp
	}
	return out
}()

// BuiltinProfile returns a built-in profile by name.
func BuiltinProfile(name string) (PerfProfile, bool) {
	pp, ok := builtinProfiles[name]
	return pp, ok
}

// BuiltinProfileNames lists the built-in profiles, sorted.
func BuiltinProfileNames() []string {
	out := make([]string, 0, len(builtinProfiles))
	for k := range builtinProfiles {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// BuiltinProfileTOML is the embedded file of a built-in profile.
func BuiltinProfileTOML(name string) ([]byte, bool) {
	if name == DefaultProfile {
		name = DefaultIs
	}
	data, err := profileFS.ReadFile("profiles/" + name + ".toml")
	return data, err == nil
}

// ProfileLabel is how outputs name the profile a scenario gives: the
// default with the fitted profile it stands for.
func ProfileLabel(spec string) string {
	if spec == DefaultProfile {
		return DefaultProfile + " (" + DefaultIs + ")"
	}
	return spec
}

// DefaultPerfProfile is the built-in default profile.
func DefaultPerfProfile() PerfProfile { return builtinProfiles[DefaultProfile] }

// PerfSpec is a replica's [cluster.replica.perf] table: which engine
// profile its step model uses, by built-in name or by the path of a
// profile file (relative to the scenario's folder).
type PerfSpec struct {
	Profile string `toml:"profile"`
}

// IsPath says whether the spec names a file rather than a built-in.
func (s PerfSpec) IsPath() bool {
	return strings.HasSuffix(s.Profile, ".toml") || strings.ContainsAny(s.Profile, `/\`)
}
