package workloads

import (
	"errors"
	"github.com/fleetsim/fleetsim/sim"
	"math"
	"slices"
	"testing"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func problemKeys(c Config) []string {
	var ps config.Problems
	c.Validate("workload", &ps)
	var keys []string
	for _, p := range ps.List {
		keys = append(keys, p.Key)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

func TestDefaultsValidate(t *testing.T) {
	for _, kind := range kindNames {
		c := DefaultConfigFor(kind)
		if kind == KindTrace {
			c.Trace.Path = "trace.jsonl"
		}
		assert.Empty(t, problemKeys(c), kind)
	}
	assert.Equal(t, DefaultConfigFor(KindSynthetic), DefaultConfig())
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		kind  string
		edit  func(*Config)
		wantK []string // keys under "workload."
	}{
		{"unknown kind", KindSynthetic, func(c *Config) { c.Kind = "batch" }, []string{"kind"}},
		{"no limit", KindSynthetic, func(c *Config) { c.DurationS = 0 }, []string{"duration_s"}},
		{"max requests is a limit", KindSessions, func(c *Config) { c.DurationS, c.MaxRequests = 0, 10 }, nil},
		{"negative limits", KindSynthetic, func(c *Config) { c.DurationS, c.MaxRequests = -1, -1 },
			[]string{"duration_s", "max_requests"}},
		{"infinite duration", KindSynthetic, func(c *Config) { c.DurationS = math.Inf(1) }, []string{"duration_s"}},
		{"arrival", KindSynthetic, func(c *Config) { c.Arrival.Process, c.Arrival.RatePerS = "uniform", math.NaN() },
			[]string{"arrival.process", "arrival.rate_per_s"}},
		{"gamma cv", KindSynthetic, func(c *Config) { c.Arrival.Process, c.Arrival.CV = ProcessGamma, 0 },
			[]string{"arrival.cv"}},
		{"cv not read by poisson", KindSynthetic, func(c *Config) { c.Arrival.CV = -1 }, nil},
		{"diurnal", KindSynthetic, func(c *Config) {
			c.Arrival.Process, c.Arrival.Amplitude, c.Arrival.PeriodS, c.Arrival.PhaseS = ProcessDiurnal, 1.5, 0, math.NaN()
		}, []string{"arrival.amplitude", "arrival.period_s", "arrival.phase_s"}},
		{"dist name", KindSynthetic, func(c *Config) { c.Input.Dist = "normal" }, []string{"input.dist"}},
		{"bounds", KindSynthetic, func(c *Config) { c.Output.Min, c.Output.Max = -1, -5 }, []string{"output.max", "output.min"}},
		{"max below min", KindSynthetic, func(c *Config) { c.Output.Min, c.Output.Max = 10, 5 }, []string{"output.max"}},
		{"lognormal p99 and cv", KindSynthetic, func(c *Config) { c.Input.CV = 1 }, []string{"input.p99"}},
		{"lognormal neither", KindSynthetic, func(c *Config) { c.Input.P99 = 0 }, []string{"input.p99"}},
		{"lognormal p99 too large", KindSynthetic, func(c *Config) { c.Input.P99 = 20 * c.Input.Mean }, []string{"input.p99"}},
		{"lognormal p99 below mean", KindSynthetic, func(c *Config) { c.Input.P99 = c.Input.Mean / 2 }, []string{"input.p99"}},
		{"lognormal mean", KindSynthetic, func(c *Config) { c.Input.Mean = -3 }, []string{"input.mean"}},
		{"lognormal cv", KindSynthetic, func(c *Config) { c.Input.P99, c.Input.CV = 0, math.Inf(1) }, []string{"input.cv"}},
		{"fixed not integer", KindSynthetic, func(c *Config) { c.Output.Dist, c.Output.Mean = DistFixed, 2.5 }, []string{"output.mean"}},
		{"fixed ok", KindSynthetic, func(c *Config) { c.Output.Dist, c.Output.Mean = DistFixed, 128 }, nil},
		{"empirical", KindSynthetic, func(c *Config) {
			c.Input.Dist, c.Input.Values, c.Input.Weights = DistEmpirical, []int{5, 0}, []float64{1, -1, 2}
		}, []string{"input.values[1]", "input.weights", "input.weights[1]"}},
		{"empirical empty", KindSynthetic, func(c *Config) { c.Input.Dist = DistEmpirical }, []string{"input.values"}},
		{"empirical zero weights", KindSynthetic, func(c *Config) {
			c.Input.Dist, c.Input.Values, c.Input.Weights = DistEmpirical, []int{5}, []float64{0}
		}, []string{"input.weights"}},
		{"geometric", KindSessions, func(c *Config) { c.Sessions.Turns.Mean = 0.5 }, []string{"sessions.turns.mean"}},
		{"system prompts", KindSynthetic, func(c *Config) {
			c.SystemPrompts, c.SystemPromptTokens, c.SystemPromptChoice = 3, 100, "random"
		}, []string{"system_prompt_choice", "system_prompt_tokens"}},
		{"zipf", KindSynthetic, func(c *Config) {
			c.SystemPrompts, c.SystemPromptTokens, c.SystemPromptChoice, c.SystemPromptZipfS = 3, 64, ChoiceZipf, 0
		}, []string{"system_prompt_zipf_s"}},
		{"negative prompts", KindSynthetic, func(c *Config) { c.SystemPrompts = -1 }, []string{"system_prompts"}},
		{"sessions", KindSessions, func(c *Config) {
			c.Sessions.ThinkTimeSMean, c.Sessions.MaxInputTokens, c.Sessions.Turns.Dist = -1, -1, ""
		}, []string{"sessions.max_input_tokens", "sessions.think_time_s_mean", "sessions.turns.dist"}},
		{"context below system prompt", KindAgentic, func(c *Config) { c.Sessions.MaxInputTokens = 1024 },
			[]string{"sessions.max_input_tokens"}},
		{"sessions not read by synthetic", KindSynthetic, func(c *Config) { c.Sessions.ThinkTimeSMean = -1 }, nil},
		{"trace", KindTrace, func(c *Config) { c.Trace.RateMultiplier = 0 }, []string{"trace.path", "trace.rate_multiplier"}},
		{"trace format", KindTrace, func(c *Config) { c.Trace.Path, c.Trace.Format = "t.csv", "parquet" }, []string{"trace.format"}},
		{"trace extension", KindTrace, func(c *Config) { c.Trace.Path = "t.txt" }, []string{"trace.format"}},
		{"trace explicit format", KindTrace, func(c *Config) { c.Trace.Path, c.Trace.Format = "t.txt", FormatAzure }, nil},
		{"client start name", KindSynthetic, func(c *Config) {
			c.Concurrency, c.Arrival.Process, c.ClientStart = 8, ProcessClosed, "staggered"
		}, []string{"client_start"}},
		{"ramp on an open loop", KindSynthetic, func(c *Config) { c.Concurrency, c.RampUpS = 8, 10 }, []string{"ramp_up_s"}},
		{"client start on an open loop", KindSynthetic, func(c *Config) { c.ClientStart = ClientStartTogether }, []string{"client_start"}},
		{"ramp together", KindSynthetic, func(c *Config) {
			c.Concurrency, c.Arrival.Process, c.ClientStart, c.RampUpS = 8, ProcessClosed, ClientStartTogether, 5
		}, []string{"ramp_up_s"}},
		{"ramp negative", KindSynthetic, func(c *Config) { c.Concurrency, c.Arrival.Process, c.RampUpS = 8, ProcessClosed, -1 }, []string{"ramp_up_s"}},
		{"ramp closed", KindSynthetic, func(c *Config) { c.Concurrency, c.Arrival.Process, c.RampUpS = 8, ProcessClosed, 30 }, nil},
		{"trace ignores arrival", KindTrace, func(c *Config) { c.Trace.Path, c.Arrival.RatePerS = "t.csv", -1 }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfigFor(tt.kind).Resolved() // distribution tables written out
			tt.edit(&c)
			var want []string
			for _, k := range tt.wantK {
				want = append(want, "workload."+k)
			}
			assert.Equal(t, want, problemKeys(c))
		})
	}
}

func TestValidateCollectsAll(t *testing.T) {
	c := DefaultConfig()
	c.Kind = KindSessions
	c.Arrival.RatePerS = 0
	c.Input.Dist = "pareto"
	c.Output.Mean = math.NaN() // a table with a key set but no dist
	c.Sessions.Turns = DistConfig{Dist: DistGeometric}
	c.MaxRequests, c.DurationS = 0, 0
	assert.Equal(t, []string{
		"workload.arrival.rate_per_s", "workload.duration_s", "workload.input.dist",
		"workload.output.dist", "workload.sessions.turns.mean",
	}, problemKeys(c))

	var ps config.Problems
	c.Validate("", &ps)
	require.NotEmpty(t, ps.List)
	assert.Equal(t, "duration_s", ps.List[0].Key, "no prefix: bare keys")
	msgs := ps.Err().Error()
	assert.Contains(t, msgs, `input.dist: unknown name "pareto"; valid names: empirical, fixed, geometric, lognormal`)
}

// TestDistTables checks that a written distribution table replaces the
// kind's default whole instead of mixing keys with it.
func TestDistTables(t *testing.T) {
	c := DefaultConfigFor(KindAgentic)
	assert.True(t, c.Input.IsZero())
	r := c.Resolved()
	assert.Equal(t, DistConfig{Dist: DistLogNormal, Mean: 1800, CV: 0.35, Min: 1, Max: 16384}, r.Input)
	assert.Equal(t, DistGeometric, r.Sessions.Turns.Dist)
	assert.Equal(t, 1024.0, DefaultConfig().Resolved().Input.Mean, "synthetic default")

	// As a scenario would write it over the defaults: no p99 inherited,
	// min 0 read as 1.
	c = DefaultConfig()
	c.Input = DistConfig{Dist: DistLogNormal, Mean: 20000, CV: 1}
	assert.Empty(t, problemKeys(c))
	assert.Equal(t, 1, c.Resolved().Input.Min)
	rs := drain(t, mustNew(t, c, 1), 1000)
	assert.Len(t, rs, 1000)

	c.Output = DistConfig{Mean: 5}
	assert.Equal(t, []string{"workload.output.dist"}, problemKeys(c), "a table without dist")
}

func TestNewRejectsInvalid(t *testing.T) {
	c := DefaultConfig()
	c.Arrival.RatePerS = -1
	_, err := New(c, sim.NewStreams(1))
	var pe config.ProblemsError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, "arrival.rate_per_s", pe[0].Key)

	c = DefaultConfigFor(KindTrace)
	c.Trace.Path = "testdata/does-not-exist.jsonl"
	_, err = New(c, sim.Streams{})
	assert.Error(t, err)
	assert.False(t, errors.As(err, &pe))
}

func TestDistConfigBuild(t *testing.T) {
	d := DistConfig{Dist: DistFixed, Mean: 300, Min: 1, Max: 200}
	ld, err := d.Build()
	require.NoError(t, err)
	assert.Equal(t, Fixed{Tokens: 200}, ld, "fixed value clamped to max")
	d = DistConfig{Dist: DistLogNormal, Mean: 100, CV: 1, Min: 1}
	ld, err = d.Build()
	require.NoError(t, err)
	assert.Equal(t, int32(maxTokens), ld.(LogNormal).Max, "max 0 is no bound")
	_, err = (&DistConfig{Dist: DistGeometric}).Build()
	assert.Error(t, err)
}
