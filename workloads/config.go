package workloads

import (
	"fmt"
	"io/fs"
	"math"
	"slices"
	"strings"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/internal/streams"
	"github.com/fleetsim/fleetsim/sim"
)

// Workload kinds (Config.Kind).
const (
	KindSynthetic = "synthetic"
	KindSessions  = "sessions"
	KindAgentic   = "agentic"
	KindTrace     = "trace"
)

// Arrival process names (ArrivalConfig.Process).
const (
	ProcessPoisson   = "poisson"
	ProcessGamma     = "gamma"
	ProcessDiurnal   = "diurnal"
	ProcessPiecewise = "piecewise"
	// ProcessConstant sends requests evenly spaced, 1/rate_per_s apart
	// (vllm bench serve --burstiness inf; inference-perf's constant-rate
	// load type).
	ProcessConstant = "constant"
	// ProcessClosed makes every request ready at the start and lets the
	// workload's concurrency send them: each of `concurrency` clients sends
	// its next request when its last one returns (and its think time has
	// passed), as vllm bench serve --max-concurrency C with the default
	// infinite request rate, GenAI-Perf/AIPerf --concurrency and
	// inference-perf's concurrency mode do.
	ProcessClosed = "closed"
)

// Length distribution names (DistConfig.Dist).
const (
	DistFixed     = "fixed"
	DistLogNormal = "lognormal"
	DistEmpirical = "empirical"
	DistGeometric = "geometric"
)

// System prompt choices (Config.SystemPromptChoice).
const (
	ChoiceUniform = "uniform"
	ChoiceZipf    = "zipf"
)

var (
	kindNames    = []string{KindAgentic, KindSessions, KindSynthetic, KindTrace}
	processNames = []string{ProcessClosed, ProcessConstant, ProcessDiurnal, ProcessGamma, ProcessPiecewise, ProcessPoisson}
	distNames    = []string{DistEmpirical, DistFixed, DistGeometric, DistLogNormal}
	choiceNames  = []string{ChoiceUniform, ChoiceZipf}
)

// kindParts are the Config keys each kind reads beyond kind, max_requests
// and duration_s: a workload is a tagged union on Kind, and a key outside
// its kind's parts has no effect (a scenario that sets one is refused, see
// IgnoredKeys).
var kindParts = map[string][]string{
	KindSynthetic: {"arrival", "input", "output", "system_prompts", "system_prompt_tokens", "system_prompt_choice", "system_prompt_zipf_s"},
	KindSessions:  {"arrival", "input", "output", "system_prompts", "system_prompt_tokens", "system_prompt_choice", "system_prompt_zipf_s", "sessions"},
	KindAgentic:   {"arrival", "input", "output", "system_prompts", "system_prompt_tokens", "system_prompt_choice", "system_prompt_zipf_s", "sessions"},
	KindTrace:     {"trace"},
}

// allParts is the union of every kind's parts, in a fixed order.
var allParts = []string{"arrival", "input", "output", "system_prompts", "system_prompt_tokens", "system_prompt_choice", "system_prompt_zipf_s", "sessions", "trace"}

// IgnoredKeys lists the workload keys (tables or values, without the
// "workload." prefix) that kind does not read, in a fixed order; nil for an
// unknown kind.
func IgnoredKeys(kind string) []string {
	parts, ok := kindParts[kind]
	if !ok {
		return nil
	}
	var out []string
	for _, k := range allParts {
		if !slices.Contains(parts, k) {
			out = append(out, k)
		}
	}
	return out
}

// maxDurationS is the largest duration sim.Time can hold, seconds (~292 y).
const maxDurationS = float64(math.MaxInt64) / 1e9

// Config describes one workload as a scenario file writes it (a TOML table,
// snake_case keys). Which parts are read depends on Kind:
//
//   - "synthetic": Arrival, Input, Output, the system prompt keys; a request
//     arrives at each arrival with InputTokens = system prompt + Input draw.
//   - "sessions": multi-turn conversations. Arrival gives session starts;
//     Input is each turn's new user message, Output each turn's answer;
//     Sessions gives turns and think time; each turn's prompt is the system
//     prompt + the whole history + the new message, and shares the previous
//     turn's prompt + answer as its prefix (see ContinuationSegment).
//   - "agentic": the same mechanism with agent-like defaults (its default
//     distributions and DefaultConfigFor("agentic")): many tool-call turns
//     whose new input is a tool result of 1–3k tokens and whose output is a
//     100–300-token call, so the accumulated context gives an input:output
//     ratio of about 99:1.
//   - "trace": replays Trace.Path; Arrival, Input, Output, Sessions and the
//     system prompt keys are not read.
//
// Defaults depend on the kind in two ways. The distribution tables (Input,
// Output, Sessions.Turns) default to empty, which means the kind's default
// distribution (see Resolved); a table a scenario writes replaces the
// default whole, so keys never mix with a default's (a default p99 with a
// written cv). Scalars take their defaults from DefaultConfigFor(kind); the
// defaults documented per field are DefaultConfig's, i.e. "synthetic".
type Config struct {
	// Kind is the workload kind: "synthetic", "sessions", "agentic" or
	// "trace". Default "synthetic".
	Kind string `toml:"kind"`
	// Arrival is the arrival process of requests (synthetic) or of new
	// sessions (sessions, agentic).
	Arrival ArrivalConfig `toml:"arrival"`
	// Input is the prompt length excluding the system prompt, tokens
	// (synthetic), or the new tokens each turn adds (sessions, agentic).
	// Default empty, meaning for synthetic: lognormal, mean 1024, p99 8192,
	// max 131072; sessions: lognormal, mean 256, cv 1.5, max 8192 (a user
	// message); agentic: lognormal, mean 1800, cv 0.35, max 16384 (a tool
	// result, 1–3k typical).
	Input DistConfig `toml:"input"`
	// Output is the number of tokens to generate per request or turn.
	// Default empty, meaning for synthetic: lognormal, mean 256, p99 2048,
	// max 16384; sessions: lognormal, mean 350, cv 0.8, max 4096 (the
	// Mooncake conversation trace's mean is 343); agentic: lognormal,
	// mean 200, cv 0.3, max 1024 (a tool call, 100–300 typical).
	Output DistConfig `toml:"output"`
	// SystemPrompts is the number of distinct shared system prompts; each
	// request (synthetic) or session picks one and its prompt starts with
	// it, as a one-segment Prefix. 0 means none. Default 0.
	SystemPrompts int `toml:"system_prompts"`
	// SystemPromptTokens is the length of every system prompt, tokens; a
	// multiple of 16 (the KV block size) and > 0 when SystemPrompts > 0.
	// Default 0.
	SystemPromptTokens int `toml:"system_prompt_tokens"`
	// SystemPromptChoice is how a system prompt is picked: "uniform" or
	// "zipf" (prompt i, from 0, with weight 1/(i+1)^SystemPromptZipfS).
	// Default "uniform".
	SystemPromptChoice string `toml:"system_prompt_choice"`
	// SystemPromptZipfS is the Zipf exponent for "zipf", > 0. Default 1.
	SystemPromptZipfS float64 `toml:"system_prompt_zipf_s"`
	// Sessions configures kinds "sessions" and "agentic".
	Sessions SessionsConfig `toml:"sessions"`
	// Trace configures kind "trace".
	Trace TraceConfig `toml:"trace"`
	// MaxRequests stops the workload after this many requests; 0 means no
	// limit. Default 0.
	MaxRequests int64 `toml:"max_requests"`
	// DurationS stops the workload at the first request arriving later than
	// this, seconds from the start; 0 means no limit. Generated kinds need
	// DurationS > 0 or MaxRequests > 0. Under a concurrency cap no request
	// is sent after it. Default 600 (DefaultConfigFor("trace"): 0, the
	// whole trace).
	DurationS float64 `toml:"duration_s"`
	// Concurrency caps the requests the clients have outstanding: a request
	// whose arrival comes while Concurrency requests are unanswered waits at
	// the client until one returns (and ThinkTimeS has passed), and its
	// latency counts from when it is sent, as a benchmark client's does
	// (vllm bench serve --max-concurrency, AIPerf --concurrency). With
	// arrival process "closed" it is the number of clients of a closed
	// loop. 0 means no cap (open loop). Default 0. Any kind may have one.
	Concurrency int `toml:"concurrency"`
	// ThinkTimeS is how long a client waits after a response before it
	// sends its next request, seconds (>= 0; only with Concurrency > 0).
	// Default 0.
	ThinkTimeS float64 `toml:"think_time_s"`
	// FanOut makes every request the workload gives a client request that
	// fans out into this many sub-requests, sent at once with its lengths,
	// each routed, hedged and retried on its own; the client request
	// completes when the last of them does (a search or retrieval fan-out:
	// Dean & Barroso, "The Tail at Scale", CACM 2013). 0 or 1 (default):
	// none. At most MaxFanOut.
	FanOut int `toml:"fanout"`
	// ClientStart is how a closed loop's clients send their first
	// requests: "spread" (the default: evenly over RampUpS, or when that is
	// 0 over one request's estimated time on the fleet's first replica, as
	// fleetsim calibrate starts its closed loops) or "together" (all at
	// t = 0). Identical requests started together stay in waves whose
	// prefills queue behind each other for the whole run, which measured
	// benchmarks do not show (docs/reference.md "[workload]").
	ClientStart string `toml:"client_start"`
	// RampUpS, when > 0, is the time over which a closed loop's clients
	// start, evenly (client k at k·RampUpS/clients). Default 0.
	RampUpS float64 `toml:"ramp_up_s"`
	// PromptPool, when > 0, makes a synthetic workload a benchmark dataset
	// of that many prompts, sent in order and again from the first after
	// the last (vllm bench serve --num-prompts over a dataset, inference-
	// perf's data with fewer prompts than requests): a prompt sent again
	// is the same tokens, so a prefix cache hits on all of it. Each prompt's
	// lengths are drawn once. 0: every request a fresh prompt. Default 0.
	PromptPool int `toml:"prompt_pool"`
	// Stages, when set, run the load in stages back to back (inference-
	// perf's load stages, a concurrency sweep): each stage a duration and
	// either a rate (of the arrival process, "poisson" or "constant") or a
	// concurrency (a closed loop of that many clients). The workload ends
	// after the last stage; duration_s is their sum.
	Stages []StageConfig `toml:"stages"`
}

// StageConfig is one stage of a staged load: DurationS seconds at RatePerS
// requests per second, or with Concurrency clients.
type StageConfig struct {
	DurationS   float64 `toml:"duration_s"`
	RatePerS    float64 `toml:"rate_per_s"`
	Concurrency int     `toml:"concurrency"`
}

// maxConcurrency bounds Config.Concurrency (each client's request waits in
// a queue of at most this many at the gateway's front end).
const maxConcurrency = 10_000_000

// ArrivalConfig is an arrival process (see Poisson, Gamma, Diurnal,
// Piecewise).
type ArrivalConfig struct {
	// Process is "poisson", "gamma", "diurnal", "piecewise", "constant"
	// (evenly spaced) or "closed" (every request ready at once, sent by the
	// workload's concurrency clients). Default "poisson".
	Process string `toml:"process"`
	// RatePerS is the mean arrival rate, per second (> 0). For "diurnal" it
	// is the mean over a period; "piecewise" does not read it (its rates
	// are the profile's times Scale), nor does "closed". Default 10.
	RatePerS float64 `toml:"rate_per_s"`
	// CV is the coefficient of variation of interarrival times for "gamma"
	// (> 0; 1 is Poisson, > 1 bursty). Default 1.
	CV float64 `toml:"cv"`
	// Amplitude is the relative swing of the rate for "diurnal", in [0, 1]:
	// the rate moves between (1−Amplitude) and (1+Amplitude) times RatePerS.
	// Default 0.5.
	Amplitude float64 `toml:"amplitude"`
	// PeriodS is the period of the "diurnal" cycle, seconds (> 0). Default
	// 86400 (a day).
	PeriodS float64 `toml:"period_s"`
	// PhaseS is when the "diurnal" rate first peaks, seconds from the start
	// (any finite value). Default 0 (the run starts at the peak).
	PhaseS float64 `toml:"phase_s"`
	// Points is a "piecewise" rate profile written inline: [t_s, rate_per_s]
	// pairs, the first at t_s = 0, times increasing, rates >= 0. Give
	// either Points or ProfileFile.
	Points [][]float64 `toml:"points"`
	// ProfileFile is a "piecewise" rate profile as a CSV file with the
	// header t_s,rate_per_s (a measured day of traffic, say), relative to
	// the scenario file's folder.
	ProfileFile string `toml:"profile_file"`
	// Interpolation is how a "piecewise" rate moves between points:
	// "linear" or "step" (held until the next point). Default "linear".
	Interpolation string `toml:"interpolation"`
	// Scale multiplies every rate of a "piecewise" profile (> 0), so one
	// profile's shape can be swept over load levels. Default 1.
	Scale float64 `toml:"scale"`
	// RepeatS makes a "piecewise" profile a cycle of this many seconds
	// (>= the last point's time); 0 holds the last rate after the last
	// point. Default 0.
	RepeatS float64 `toml:"repeat_s"`
	// FS, when set by the program (never by a scenario file), is the file
	// system ProfileFile is read from; nil means the OS's.
	FS fs.FS `toml:"-"`
	// profile is ProfileFile's points once read (CheckProfile).
	profile []RatePoint
}

// DistConfig is a distribution of token counts (or of turns), clamped to
// [Min, Max]. The zero value (no key set) stands for the default of the
// field that holds it; see Config.Resolved.
type DistConfig struct {
	// Dist is "fixed", "lognormal", "empirical" or "geometric"; required
	// when any other key of the table is set.
	Dist string `toml:"dist"`
	// Mean is the mean before clamping, tokens. "fixed": the value itself
	// (an integer >= 1). "lognormal": > 0. "geometric": >= 1 (the
	// distribution on 1, 2, 3, ... with this mean). Not read by "empirical".
	Mean float64 `toml:"mean"`
	// P99 is the 99th percentile of a "lognormal" before clamping, tokens:
	// mean < p99 <= 14.97·mean. Give either P99 or CV (the other 0).
	P99 float64 `toml:"p99"`
	// CV is the coefficient of variation of a "lognormal" (> 0), as an
	// alternative to P99.
	CV float64 `toml:"cv"`
	// Min is the smallest value, tokens (>= 1); 0 means 1. Default 1.
	Min int `toml:"min"`
	// Max is the largest value, tokens (>= Min, <= 2147483647); 0 means no
	// bound. Default 0.
	Max int `toml:"max"`
	// Values are the values of an "empirical" distribution, tokens (>= 1).
	Values []int `toml:"values"`
	// Weights are the relative weights of Values (>= 0, not all 0); empty
	// means equal weights.
	Weights []float64 `toml:"weights"`
}

// SessionsConfig configures multi-turn sessions (kinds "sessions" and
// "agentic").
type SessionsConfig struct {
	// Turns is the number of turns per session (requests per conversation
	// or tool calls per agent run). Default empty, meaning geometric,
	// mean 5, max 100 (agentic: mean 9, max 200).
	Turns DistConfig `toml:"turns"`
	// ThinkTimeSMean is the mean time between a turn's arrival and the next
	// turn's, seconds (exponential; >= 0, 0 sends turns back to back). The
	// workload is open loop, so this includes the time the answer takes.
	// Default 60 (agentic: 10).
	ThinkTimeSMean float64 `toml:"think_time_s_mean"`
	// RequestRatePerS, when > 0, sets the sessions' aggregate request rate
	// instead of their start rate: sessions start at RequestRatePerS over
	// the mean turns per session (an open-loop load of multi-turn users
	// whose contexts grow turn by turn, at a request rate a benchmark
	// states). Default 0: workload.arrival.rate_per_s starts sessions.
	RequestRatePerS float64 `toml:"request_rate_per_s"`
	// MaxInputTokens ends a session before a turn whose prompt would exceed
	// it (a first turn is cut to it instead), tokens; 0 means no limit but
	// 2147483647. Must exceed SystemPromptTokens. Default 131072 (agentic:
	// 200000).
	MaxInputTokens int `toml:"max_input_tokens"`
}

// TraceConfig configures kind "trace".
type TraceConfig struct {
	// Path is the trace file (required). It is opened by New.
	Path string `toml:"path"`
	// Format is "mooncake" (JSONL) or "azure" (CSV); empty detects it from
	// the extension (.jsonl, .csv). Default "".
	Format string `toml:"format"`
	// RateMultiplier speeds the replay up (> 0): 2 replays twice as fast.
	// Default 1.
	RateMultiplier float64 `toml:"rate_multiplier"`
	// Resample is "none" (default: every replication replays the trace as
	// recorded, so replications are identical) or "poisson": each row is
	// replayed k ~ Poisson(1) times, drawn afresh for every replication
	// (PoissonBootstrap), so that replications vary as bootstrap resamples
	// of the trace and their confidence intervals mean something.
	Resample string `toml:"resample"`
	// FS, when set by the program (never by a scenario file), is the file
	// system Path is read from; nil means the OS's.
	FS fs.FS `toml:"-"`
}

// MaxFanOut bounds Config.FanOut: Dean & Barroso's widest fan-out is
// 1,000 sub-requests; ten times that is past any read path.
const MaxFanOut = 10_000

// FanOutWidth is the sub-requests per client request: FanOut, or 1.
func (c *Config) FanOutWidth() int { return max(c.FanOut, 1) }

// DefaultConfig returns the defaults of a "synthetic" workload: Poisson
// arrivals at 10 req/s for 600 s, lognormal input (mean 1024, p99 8192) and
// output (mean 256, p99 2048) once resolved, no system prompts.
func DefaultConfig() Config {
	return Config{
		Kind: KindSynthetic,
		Arrival: ArrivalConfig{
			Process: ProcessPoisson, RatePerS: 10, CV: 1, Scale: 1, Interpolation: InterpLinear,
			Amplitude: 0.5, PeriodS: 86400,
		},
		SystemPromptChoice: ChoiceUniform,
		SystemPromptZipfS:  1,
		Sessions: SessionsConfig{
			ThinkTimeSMean: 60,
			MaxInputTokens: 131072,
		},
		Trace:     TraceConfig{RateMultiplier: 1, Resample: ResampleNone},
		DurationS: 600,
	}
}

// defaultDists returns kind's default input, output and turns
// distributions (documented on Config.Input, Config.Output and
// SessionsConfig.Turns).
func defaultDists(kind string) (input, output, turns DistConfig) {
	switch kind {
	case KindSessions:
		return DistConfig{Dist: DistLogNormal, Mean: 256, CV: 1.5, Min: 1, Max: 8192},
			DistConfig{Dist: DistLogNormal, Mean: 350, CV: 0.8, Min: 1, Max: 4096},
			DistConfig{Dist: DistGeometric, Mean: 5, Min: 1, Max: 100}
	case KindAgentic:
		return DistConfig{Dist: DistLogNormal, Mean: 1800, CV: 0.35, Min: 1, Max: 16384},
			DistConfig{Dist: DistLogNormal, Mean: 200, CV: 0.3, Min: 1, Max: 1024},
			DistConfig{Dist: DistGeometric, Mean: 9, Min: 1, Max: 200}
	}
	return DistConfig{Dist: DistLogNormal, Mean: 1024, P99: 8192, Min: 1, Max: 131072},
		DistConfig{Dist: DistLogNormal, Mean: 256, P99: 2048, Min: 1, Max: 16384},
		DistConfig{Dist: DistGeometric, Mean: 5, Min: 1, Max: 100}
}

// IsZero reports whether no key of d is set (d then stands for a default).
func (d *DistConfig) IsZero() bool {
	return d.Dist == "" && d.Mean == 0 && d.P99 == 0 && d.CV == 0 && d.Min == 0 && d.Max == 0 &&
		len(d.Values) == 0 && len(d.Weights) == 0
}

// Resolved returns c with every empty distribution table (Input, Output,
// Sessions.Turns) replaced by c.Kind's default, and Min 0 read as 1: the
// configuration New actually runs. It is what to print as the effective
// configuration.
func (c Config) Resolved() Config {
	in, out, turns := defaultDists(c.Kind)
	for _, f := range []struct {
		d   *DistConfig
		def DistConfig
	}{{&c.Input, in}, {&c.Output, out}, {&c.Sessions.Turns, turns}} {
		if f.d.IsZero() {
			*f.d = f.def
		}
		if f.d.Min == 0 {
			f.d.Min = 1
		}
	}
	return c
}

// DefaultConfigFor returns the defaults for kind: DefaultConfig with Kind
// set and, for
//
//   - "sessions": 1 new session/s.
//   - "agentic": 0.5 new agent runs/s; 4 system prompts (tool definitions)
//     of 2048 tokens; 10 s between turns; contexts up to 200000 tokens.
//     With the agentic default distributions (a 1800-token tool result and
//     a 200-token call per turn, 9 turns on average) the input:output token
//     ratio is about (S+u)/o + (u+o)(m−1)/o = 99 for system prompt S, new
//     tokens u, output o and mean turns m (CALIBRATION.md §6: ~99:1).
//   - "trace": DurationS 0 (replay the whole trace).
//
// An unknown kind gets DefaultConfig with that Kind (Validate reports it).
func DefaultConfigFor(kind string) Config {
	c := DefaultConfig()
	c.Kind = kind
	switch kind {
	case KindSessions:
		c.Arrival.RatePerS = 1
	case KindAgentic:
		c.Arrival.RatePerS = 0.5
		c.SystemPrompts, c.SystemPromptTokens = 4, 2048
		c.Sessions.ThinkTimeSMean = 10
		c.Sessions.MaxInputTokens = 200000
	case KindTrace:
		c.DurationS = 0
	}
	return c
}

// Validate records in ps every problem with c, each under its dotted key
// prefix + "." + key (just key when prefix is empty), e.g.
// "workload.arrival.rate_per_s". Only the parts that c.Kind reads are
// checked, after Resolved. It does not open the trace file (New does).
func (c *Config) Validate(prefix string, ps *config.Problems) {
	rc := c.Resolved()
	c = &rc
	k := func(key string) string { return config.Key(prefix, key) }
	ps.OneOf(k("kind"), c.Kind, kindNames)
	if c.MaxRequests < 0 {
		ps.Add(k("max_requests"), "must be an integer >= 0 (0: no limit), found %d", c.MaxRequests)
	}
	ps.NonNegative(k("duration_s"), c.DurationS)
	if c.DurationS > maxDurationS {
		ps.Add(k("duration_s"), "must be at most %.4g (the range of simulated time), found %v", maxDurationS, c.DurationS)
	}
	c.validateClients(k, ps)
	if c.FanOut < 0 || c.FanOut > MaxFanOut {
		ps.Add(k("fanout"), "must be between 0 (none) and %d, found %d", MaxFanOut, c.FanOut)
	}
	switch c.Kind {
	case KindSynthetic, KindSessions, KindAgentic:
		if c.MaxRequests == 0 && c.DurationS == 0 {
			ps.Add(k("duration_s"), "a %s workload never ends by itself: set duration_s > 0 or max_requests > 0", c.Kind)
		}
		c.Arrival.validate(k("arrival"), ps)
		c.Input.validate(k("input"), ps)
		c.Output.validate(k("output"), ps)
		c.validatePrompts(k, ps)
		if c.Kind != KindSynthetic {
			c.Sessions.validate(k("sessions"), c.SystemPromptTokens, ps)
		}
	case KindTrace:
		c.Trace.validate(k("trace"), ps)
	}
}

// validateClients checks the concurrency cap and think time, and that a
// closed loop has clients.
func (c *Config) validateClients(k func(string) string, ps *config.Problems) {
	if c.Concurrency < 0 || c.Concurrency > maxConcurrency {
		ps.Add(k("concurrency"), "must be an integer in [0, %d] (0: no cap), found %d", maxConcurrency, c.Concurrency)
	}
	if math.IsNaN(c.ThinkTimeS) || c.ThinkTimeS < 0 || c.ThinkTimeS > maxDurationS {
		ps.Add(k("think_time_s"), "must be a number of seconds in [0, %.4g], found %v", maxDurationS, c.ThinkTimeS)
	} else if c.ThinkTimeS > 0 && c.Concurrency == 0 && !(len(c.Stages) > 0 && c.Stages[0].Concurrency > 0) {
		ps.Add(k("think_time_s"), "a think time needs clients: set concurrency > 0 (without a cap requests arrive by the arrival process alone)")
	}
	switch c.ClientStart {
	case "", ClientStartSpread, ClientStartTogether:
	default:
		ps.Add(k("client_start"), "must be %q or %q, found %q", ClientStartSpread, ClientStartTogether, c.ClientStart)
	}
	if math.IsNaN(c.RampUpS) || c.RampUpS < 0 || c.RampUpS > maxDurationS {
		ps.Add(k("ramp_up_s"), "must be a number of seconds in [0, %.4g], found %v", maxDurationS, c.RampUpS)
	} else if (c.RampUpS > 0 || c.ClientStart != "") && !c.ClosedLoop() {
		key := "ramp_up_s"
		if c.RampUpS == 0 {
			key = "client_start"
		}
		ps.Add(k(key), "the clients' start is for a closed loop (arrival process %q with concurrency, or stages of concurrencies)", ProcessClosed)
	} else if c.RampUpS > 0 && c.ClientStart == ClientStartTogether {
		ps.Add(k("ramp_up_s"), "client_start = %q starts every client at t = 0: leave ramp_up_s out or use %q", ClientStartTogether, ClientStartSpread)
	}
	if c.Kind != KindTrace && c.Arrival.Process == ProcessClosed && c.Concurrency == 0 && len(c.Stages) == 0 {
		ps.Add(k("concurrency"), "arrival process %q needs the number of clients: set concurrency > 0", ProcessClosed)
	}
	if c.PromptPool < 0 || c.PromptPool > maxPromptPool {
		ps.Add(k("prompt_pool"), "must be an integer in [0, %d] (0: a fresh prompt per request), found %d", maxPromptPool, c.PromptPool)
	} else if c.PromptPool > 0 && c.Kind != KindSynthetic {
		ps.Add(k("prompt_pool"), "a pool of prompts is for kind %q (sessions and traces carry their own prompts), found kind %q", KindSynthetic, c.Kind)
	}
	c.validateStages(k, ps)
}

// maxPromptPool bounds Config.PromptPool (the pool is held in memory).
const maxPromptPool = 1_000_000

// maxStages bounds len(Config.Stages).
const maxStages = 10_000

// validateStages checks a staged load: every stage a positive duration and
// either a rate or a concurrency, all stages of one kind, and no stage
// keys beside the workload's own rate or concurrency.
func (c *Config) validateStages(k func(string) string, ps *config.Problems) {
	if len(c.Stages) == 0 {
		return
	}
	if len(c.Stages) > maxStages {
		ps.Add(k("stages"), "at most %d stages, found %d", maxStages, len(c.Stages))
		return
	}
	if c.Kind == KindTrace {
		ps.Add(k("stages"), "a trace replays its own arrivals; stages are for generated kinds")
		return
	}
	if c.Concurrency > 0 {
		ps.Add(k("concurrency"), "with stages each stage gives its concurrency (or rate); leave workload.concurrency unset")
	}
	closed := c.Stages[0].Concurrency > 0
	for i, st := range c.Stages {
		sk := func(key string) string { return fmt.Sprintf("%s.%d.%s", k("stages"), i, key) }
		if !(st.DurationS > 0) || st.DurationS > maxDurationS {
			ps.Add(sk("duration_s"), "must be a number of seconds in (0, %.4g], found %v", maxDurationS, st.DurationS)
		}
		switch {
		case st.Concurrency < 0 || st.Concurrency > maxConcurrency:
			ps.Add(sk("concurrency"), "must be an integer in [0, %d], found %d", maxConcurrency, st.Concurrency)
		case math.IsNaN(st.RatePerS) || st.RatePerS < 0 || math.IsInf(st.RatePerS, 0):
			ps.Add(sk("rate_per_s"), "must be a finite number >= 0, found %v", st.RatePerS)
		case (st.Concurrency > 0) == (st.RatePerS > 0):
			ps.Add(sk("rate_per_s"), "a stage gives either rate_per_s (open loop) or concurrency (clients), not both nor neither")
		case (st.Concurrency > 0) != closed:
			ps.Add(sk("concurrency"), "every stage gives a concurrency or every stage a rate: stage 0 gives a %s", map[bool]string{true: "concurrency", false: "rate"}[closed])
		}
	}
	if !closed && c.Arrival.Process != ProcessPoisson && c.Arrival.Process != ProcessConstant {
		ps.Add(k("arrival.process"), "stages of rates run a %q or %q process, found %q", ProcessPoisson, ProcessConstant, c.Arrival.Process)
	}
}

// The closed loop's clients' start (Config.ClientStart).
const (
	ClientStartSpread   = "spread"
	ClientStartTogether = "together"
)

// ClosedLoop says whether the workload is a closed loop of clients: the
// arrival process "closed" with a concurrency, or stages of concurrencies.
func (c *Config) ClosedLoop() bool {
	if len(c.Stages) > 0 {
		return c.Stages[0].Concurrency > 0
	}
	return c.Kind != KindTrace && c.Arrival.Process == ProcessClosed && c.Concurrency > 0
}

// ClientStages is a staged closed loop's schedule: stage i's concurrency
// and end, in simulated time; nil unless the stages give concurrencies.
func (c *Config) ClientStages() (ends []sim.Time, concurrency []int) {
	if len(c.Stages) == 0 || c.Stages[0].Concurrency <= 0 {
		return nil, nil
	}
	var t float64
	for _, st := range c.Stages {
		t += st.DurationS
		ends, concurrency = append(ends, sim.FromSeconds(t)), append(concurrency, st.Concurrency)
	}
	return ends, concurrency
}

// StagesDurationS is the staged load's total duration (0 without stages).
func (c *Config) StagesDurationS() float64 {
	var d float64
	for _, st := range c.Stages {
		d += st.DurationS
	}
	return d
}

func (c *Config) validatePrompts(k func(string) string, ps *config.Problems) {
	if c.SystemPrompts < 0 {
		ps.Add(k("system_prompts"), "must be an integer >= 0 (0: none), found %d", c.SystemPrompts)
	}
	if c.SystemPrompts <= 0 {
		return
	}
	if c.SystemPromptTokens <= 0 || c.SystemPromptTokens%SegmentTokens != 0 || c.SystemPromptTokens > maxTokens {
		ps.Add(k("system_prompt_tokens"), "must be a positive multiple of %d (the KV block size) when system_prompts > 0, found %d",
			SegmentTokens, c.SystemPromptTokens)
	}
	ps.OneOf(k("system_prompt_choice"), c.SystemPromptChoice, choiceNames)
	if c.SystemPromptChoice == ChoiceZipf {
		ps.Positive(k("system_prompt_zipf_s"), c.SystemPromptZipfS)
	}
}

func (a *ArrivalConfig) validate(prefix string, ps *config.Problems) {
	k := func(key string) string { return config.Key(prefix, key) }
	ps.OneOf(k("process"), a.Process, processNames)
	if a.Process != ProcessClosed {
		ps.Positive(k("rate_per_s"), a.RatePerS)
	}
	switch a.Process {
	case ProcessGamma:
		ps.Positive(k("cv"), a.CV)
	case ProcessDiurnal:
		ps.Fraction(k("amplitude"), a.Amplitude)
		ps.Positive(k("period_s"), a.PeriodS)
		if math.IsNaN(a.PhaseS) || math.IsInf(a.PhaseS, 0) {
			ps.Add(k("phase_s"), "must be a finite number, found %v", a.PhaseS)
		}
	case ProcessPiecewise:
		a.validatePiecewise(prefix, ps)
	}
}

// Validate records d's problems under prefix (the dotted path of its
// table); d must not be empty (IsZero).
func (d *DistConfig) Validate(prefix string, ps *config.Problems) { d.validate(prefix, ps) }

func (d *DistConfig) validate(prefix string, ps *config.Problems) {
	k := func(key string) string { return config.Key(prefix, key) }
	if d.Dist == "" {
		ps.Add(k("dist"), "required when other keys of the table are set; valid names: %s", strings.Join(distNames, ", "))
	} else {
		ps.OneOf(k("dist"), d.Dist, distNames)
	}
	if d.Min < 0 || d.Min > maxTokens {
		ps.Add(k("min"), "must be an integer in [1, %d] (0: 1), found %d", maxTokens, d.Min)
	}
	if d.Max != 0 && (d.Max < max(d.Min, 1) || d.Max > maxTokens) {
		ps.Add(k("max"), "must be 0 (no bound) or an integer in [min, %d] = [%d, %d], found %d", maxTokens, d.Min, maxTokens, d.Max)
	}
	switch d.Dist {
	case DistFixed:
		if !(d.Mean >= 1 && d.Mean <= maxTokens) || d.Mean != math.Trunc(d.Mean) {
			ps.Add(k("mean"), "a fixed distribution's value must be an integer in [1, %d], found %v", maxTokens, d.Mean)
		}
	case DistLogNormal:
		ps.Positive(k("mean"), d.Mean)
		switch {
		case d.P99 != 0 && d.CV != 0:
			ps.Add(k("p99"), "give either p99 or cv for a lognormal, not both (found p99 %v, cv %v)", d.P99, d.CV)
		case d.P99 != 0:
			if d.Mean > 0 && !math.IsInf(d.Mean, 0) {
				if _, err := NewLogNormalMeanP99(d.Mean, d.P99, 1, 1); err != nil {
					ps.Add(k("p99"), "%s", strings.TrimPrefix(err.Error(), "workloads: lognormal "))
				}
			}
		case d.CV != 0:
			ps.Positive(k("cv"), d.CV)
		default:
			ps.Add(k("p99"), "a lognormal needs p99 > 0 or cv > 0, found neither")
		}
	case DistGeometric:
		if !(d.Mean >= 1) || math.IsInf(d.Mean, 0) {
			ps.Add(k("mean"), "a geometric distribution's mean must be a finite number >= 1, found %v", d.Mean)
		}
	case DistEmpirical:
		if len(d.Values) == 0 {
			ps.Add(k("values"), "an empirical distribution needs at least one value")
		}
		for i, v := range d.Values {
			if v < 1 || v > maxTokens {
				ps.Add(fmt.Sprintf("%s[%d]", k("values"), i), "must be an integer in [1, %d], found %d", maxTokens, v)
			}
		}
		if len(d.Weights) != 0 {
			if len(d.Weights) != len(d.Values) {
				ps.Add(k("weights"), "must be empty or have one weight per value (%d), found %d", len(d.Values), len(d.Weights))
			}
			var sum float64
			for i, w := range d.Weights {
				ps.NonNegative(fmt.Sprintf("%s[%d]", k("weights"), i), w)
				sum += w
			}
			if !(sum > 0) && !math.IsNaN(sum) {
				ps.Add(k("weights"), "must not all be 0")
			}
		}
	}
}

func (s *SessionsConfig) validate(prefix string, systemPromptTokens int, ps *config.Problems) {
	k := func(key string) string { return config.Key(prefix, key) }
	s.Turns.validate(k("turns"), ps)
	ps.NonNegative(k("think_time_s_mean"), s.ThinkTimeSMean)
	ps.NonNegative(k("request_rate_per_s"), s.RequestRatePerS)
	if s.MaxInputTokens < 0 || s.MaxInputTokens > maxTokens {
		ps.Add(k("max_input_tokens"), "must be an integer in [0, %d] (0: no limit), found %d", maxTokens, s.MaxInputTokens)
	} else if s.MaxInputTokens > 0 && s.MaxInputTokens <= systemPromptTokens {
		ps.Add(k("max_input_tokens"), "must exceed system_prompt_tokens (%d), found %d", systemPromptTokens, s.MaxInputTokens)
	}
}

func (t *TraceConfig) validate(prefix string, ps *config.Problems) {
	k := func(key string) string { return config.Key(prefix, key) }
	if t.Path == "" {
		ps.Add(k("path"), "required: the trace file to replay")
	}
	switch {
	case t.Format != "":
		ps.OneOf(k("format"), t.Format, TraceFormats())
	case t.Path != "":
		if _, err := DetectFormat(t.Path, ""); err != nil {
			ps.Add(k("format"), "cannot tell the format of %q from its extension (.jsonl: mooncake, .csv: azure); set format to one of: %s",
				t.Path, strings.Join(TraceFormats(), ", "))
		}
	}
	ps.Positive(k("rate_multiplier"), t.RateMultiplier)
	if t.Resample != "" {
		ps.OneOf(k("resample"), t.Resample, []string{ResampleNone, ResamplePoisson})
	}
}

// New builds the Source that cfg describes. cfg is validated first (keys
// without a prefix); an invalid cfg returns a config.ProblemsError.
//
// Randomness: each part draws from its own stream of st, by name
// (internal/streams: arrivals, input lengths, output lengths, system prompt
// choice, turns, think times, and a salt for prefix hashes), so changing,
// say, the output distribution or adding a draw does not move any arrival.
// Kind "trace" draws nothing.
//
// The Source stops at cfg.MaxRequests requests or at the first arrival
// after cfg.DurationS, whichever comes first. It implements io.Closer; for
// kind "trace" New opens the file and Close closes it, so always Close.
// Prefix slices of emitted requests may be shared between requests and must
// not be modified.
func New(cfg Config, st sim.Streams) (Source, error) {
	var ps config.Problems
	cfg.Validate("", &ps)
	if err := ps.Err(); err != nil {
		return nil, err
	}
	cfg = cfg.Resolved()
	var until sim.Time
	if cfg.DurationS > 0 {
		until = sim.FromSeconds(cfg.DurationS)
	}
	if len(cfg.Stages) > 0 {
		until = sim.FromSeconds(cfg.StagesDurationS())
	}
	if cfg.Kind == KindTrace {
		tr, err := OpenTraceFS(cfg.Trace.FS, cfg.Trace.Path, cfg.Trace.Format, TraceOptions{RateMultiplier: cfg.Trace.RateMultiplier})
		if err != nil {
			return nil, err
		}
		var src Source = tr
		if cfg.Trace.Resample == ResamplePoisson {
			src = PoissonBootstrap(tr, st.Stream(streams.Resample))
		}
		return Limit(src, cfg.MaxRequests, until), nil
	}
	arrivalRng, inputRng, outputRng := st.Stream(streams.Arrival), st.Stream(streams.Input), st.Stream(streams.Output)
	promptRng, turnsRng, thinkRng := st.Stream(streams.Prompt), st.Stream(streams.Turns), st.Stream(streams.Think)
	salt := st.Stream(streams.Salt).Uint64()

	arrival, err := cfg.Arrival.build()
	if err != nil {
		return nil, err
	}
	if st := cfg.Stages; len(st) > 0 {
		if st[0].Concurrency > 0 {
			arrival = Closed{} // the clients' stages send them (ClientStages)
		} else {
			sp := Staged{Constant: cfg.Arrival.Process == ProcessConstant}
			var t float64
			for _, x := range st {
				t += x.DurationS
				sp.Ends, sp.Rates = append(sp.Ends, sim.FromSeconds(t)), append(sp.Rates, x.RatePerS)
			}
			arrival = sp
		}
	}
	input, err := cfg.Input.Build()
	if err != nil {
		return nil, err
	}
	output, err := cfg.Output.Build()
	if err != nil {
		return nil, err
	}
	zipfS := 0.0
	if cfg.SystemPromptChoice == ChoiceZipf {
		zipfS = cfg.SystemPromptZipfS
	}
	prompts := newSystemPrompts(cfg.SystemPrompts, int32(cfg.SystemPromptTokens), zipfS, salt)
	var src Source
	if cfg.Kind == KindSynthetic {
		src = &synthetic{
			arrival: arrival, input: input, output: output, prompts: prompts,
			arrivalRng: arrivalRng, inputRng: inputRng, outputRng: outputRng, promptRng: promptRng,
			pool: promptPool{n: cfg.PromptPool, salt: Mix64(salt ^ 0x706f6f6c)}, // ("pool": no stream moves)
		}
	} else {
		turns, err := cfg.Sessions.Turns.Build()
		if err != nil {
			return nil, err
		}
		maxInput := int64(cfg.Sessions.MaxInputTokens)
		if maxInput == 0 {
			maxInput = maxTokens
		}
		if r := cfg.Sessions.RequestRatePerS; r > 0 {
			// Sessions start at the request rate over the mean turns per
			// session (as drawn: sessions cut short by max_input_tokens
			// send fewer).
			a := cfg.Arrival
			a.RatePerS = r / MeanOf(turns)
			if arrival, err = a.build(); err != nil {
				return nil, err
			}
		}
		src = &sessionSource{
			arrival: arrival, input: input, output: output, turns: turns,
			thinkMeanS: cfg.Sessions.ThinkTimeSMean, maxInput: maxInput, prompts: prompts,
			arrivalRng: arrivalRng, inputRng: inputRng, outputRng: outputRng,
			promptRng: promptRng, turnsRng: turnsRng, thinkRng: thinkRng,
		}
	}
	return Limit(src, cfg.MaxRequests, until), nil
}

func (a *ArrivalConfig) build() (ArrivalProcess, error) {
	switch a.Process {
	case ProcessGamma:
		return Gamma{RatePerS: a.RatePerS, CV: a.CV}, nil
	case ProcessDiurnal:
		return newDiurnalSegs(Diurnal{MeanRatePerS: a.RatePerS, Amplitude: a.Amplitude, PeriodS: a.PeriodS, PhaseS: a.PhaseS}), nil
	case ProcessPiecewise:
		return a.Piecewise()
	case ProcessConstant:
		return Constant{RatePerS: a.RatePerS}, nil
	case ProcessClosed:
		return Closed{}, nil
	}
	return Poisson{RatePerS: a.RatePerS}, nil
}

// Build returns the LengthDist that d describes. d must not be empty (see
// Config.Resolved). It returns the problems as an error if d is invalid.
func (d *DistConfig) Build() (LengthDist, error) {
	var ps config.Problems
	d.validate("", &ps)
	if err := ps.Err(); err != nil {
		return nil, err
	}
	lo, hi := int32(max(d.Min, 1)), int32(maxTokens)
	if d.Max != 0 {
		hi = int32(d.Max)
	}
	switch d.Dist {
	case DistFixed:
		return Fixed{Tokens: clampTokens(d.Mean, lo, hi)}, nil
	case DistLogNormal:
		if d.P99 != 0 {
			return NewLogNormalMeanP99(d.Mean, d.P99, lo, hi)
		}
		return NewLogNormalMeanCV(d.Mean, d.CV, lo, hi)
	case DistGeometric:
		return Geometric{Mean: d.Mean, Min: lo, Max: hi}, nil
	}
	values := make([]int32, len(d.Values))
	for i, v := range d.Values {
		values[i] = int32(v)
	}
	return NewEmpirical(values, d.Weights, lo, hi)
}
