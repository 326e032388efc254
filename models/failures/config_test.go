package failures

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/internal/tomlx"
	"github.com/fleetsim/fleetsim/sim"
)

func f64(x float64) *float64 { return &x }
func intp(x int) *int        { return &x }

func problems(c Config) []config.Problem {
	var ps config.Problems
	c.Validate("failures", &ps)
	return ps.List
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Config)
		want []config.Problem
	}{
		{"defaults", func(*Config) {}, nil},
		{"unknown profile", func(c *Config) { c.Profile = "llama4" }, []config.Problem{{Key: "failures.profile",
			Msg: `unknown name "llama4"; valid names: byterobust, llama3, meta-rsc, meta-rsc-2, none`}}},
		{"negative rate", func(c *Config) {
			c.Components = map[string]RowConfig{"hbm": {RatePerGPUHour: f64(-1e-6)}}
		}, []config.Problem{{Key: "failures.components.hbm.rate_per_gpu_hour", Msg: "must be a finite number >= 0, found -1e-06"}}},
		{"NaN rate", func(c *Config) {
			c.Components = map[string]RowConfig{"gpu": {RatePerGPUHour: f64(math.NaN())}}
		}, []config.Problem{{Key: "failures.components.gpu.rate_per_gpu_hour", Msg: "must be a finite number >= 0, found NaN"}}},
		{"weibull shape 0", func(c *Config) { c.TTF = TTFConfig{Dist: TTFWeibull, Shape: 0} },
			[]config.Problem{{Key: "failures.ttf.shape", Msg: "must be a finite number > 0, found 0"}}},
		{"weibull shape negative", func(c *Config) { c.TTF = TTFConfig{Dist: TTFWeibull, Shape: -2} },
			[]config.Problem{{Key: "failures.ttf.shape", Msg: "must be a finite number > 0, found -2"}}},
		{"shape unread by exponential", func(c *Config) { c.TTF.Shape = -2 }, nil},
		{"ttf dist", func(c *Config) { c.TTF.Dist = "gamma" },
			[]config.Problem{{Key: "failures.ttf.dist", Msg: `unknown name "gamma"; valid names: exponential, weibull`}}},
		{"new category needs a component and a rate", func(c *Config) {
			c.Components = map[string]RowConfig{"cosmic-rays": {}}
		}, []config.Problem{
			{Key: "failures.components.cosmic-rays", Msg: `unknown component "cosmic-rays"; valid components: gpu, hbm, sram, gsp, thermal, sdc, nvlink-switch, nic, psu, ssd, cpu, host-memory, chassis, io-board, network, tor, software, dependency, host-maintenance, nccl-watchdog, oom, unknown (or set component for a new category)`},
			{Key: "failures.components.cosmic-rays.rate_per_gpu_hour", Msg: "a new category needs a rate (failures per GPU-hour, >= 0)"},
		}},
		{"new category of a known component", func(c *Config) {
			c.Components = map[string]RowConfig{"nvl-tray": {Component: "nvlink-switch", RatePerGPUHour: f64(1e-6)}}
		}, nil},
		{"bad names and values", func(c *Config) {
			c.Components = map[string]RowConfig{"gpu": {Scope: "planet", Mode: "melt", Action: "pray", Xid: intp(7),
				SpeedFraction: f64(1.5), PrecursorLeadS: f64(-1), PrecursorProbability: f64(2)}}
		}, []config.Problem{
			{Key: "failures.components.gpu.scope", Msg: `unknown name "planet"; valid names: process, gpu, host, domain, rack`},
			{Key: "failures.components.gpu.mode", Msg: `unknown name "melt"; valid names: fail-stop, hang, fail-slow, link-flap, oom`},
			{Key: "failures.components.gpu.action", Msg: `unknown name "pray"; valid names: restart-app, reset-gpu, reboot-node, rma`},
			{Key: "failures.components.gpu.xid", Msg: "unknown Xid 7; known codes: 13, 31, 43, 45, 48, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140 (0: none)"},
			{Key: "failures.components.gpu.speed_fraction", Msg: "must be > 0 and <= 1, found 1.5"},
			{Key: "failures.components.gpu.precursor_lead_s", Msg: "must be a finite number >= 0, found -1"},
			{Key: "failures.components.gpu.precursor_probability", Msg: "must be between 0 and 1, found 2"},
		}},
		{"repair", func(c *Config) {
			c.Repair = map[string]RepairConfig{
				"pray":        {Dist: DistFixed},
				"rma":         {Dist: DistLognormal, MedianHours: 10, MeanHours: 5},
				"reboot-node": {Dist: DistEmpirical, ValuesHours: []float64{1, -2}, Weights: []float64{1}},
				"reset-gpu":   {Dist: "normal"},
			}
		}, []config.Problem{
			{Key: "failures.repair.pray", Msg: `unknown action "pray"; valid actions: restart-app, reset-gpu, reboot-node, rma`},
			{Key: "failures.repair.reboot-node.values_hours.1", Msg: "must be a finite number >= 0, found -2"},
			{Key: "failures.repair.reboot-node.weights", Msg: "must have one weight per value (2), found 1"},
			{Key: "failures.repair.reset-gpu.dist", Msg: `unknown name "normal"; valid names: empirical, fixed, lognormal`},
			{Key: "failures.repair.rma.mean_hours", Msg: "must be >= median_hours (10) for a lognormal, found 5"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.edit(&c)
			assert.Equal(t, tt.want, problems(c))
		})
	}
}

func TestConfigBuild(t *testing.T) {
	c := DefaultConfig()
	c.Components = map[string]RowConfig{
		"hbm":      {RatePerGPUHour: f64(2e-6), PrecursorLeadS: f64(3600), PrecursorProbability: f64(1)},
		"nvl-tray": {Component: "nvlink-switch", RatePerGPUHour: f64(1e-6)},
		"gsp":      {Mode: "fail-slow"},
	}
	c.TTF = TTFConfig{Dist: TTFWeibull, Shape: 0.7}
	c.Repair = map[string]RepairConfig{"rma": {Dist: DistFixed, Hours: 48}}
	p, err := c.Build()
	require.NoError(t, err)
	hbm, _ := p.Row("hbm")
	assert.Equal(t, 2e-6, hbm.PerGPUHour)
	assert.Equal(t, "user", hbm.Confidence)
	assert.Equal(t, sim.Hour, hbm.Precursor.Lead)
	assert.Equal(t, 1.0, hbm.Precursor.DetectProbability)
	tray, ok := p.Row("nvl-tray")
	require.True(t, ok)
	assert.Equal(t, ScopeDomain, tray.Scope)
	assert.Equal(t, 74, tray.Xid)
	gsp, _ := p.Row("gsp")
	assert.Equal(t, ModeFailSlow, gsp.Mode)
	assert.Equal(t, 0.9, gsp.SpeedFraction, "CALIBRATION.md §6 default")
	assert.Equal(t, TTF{Kind: TTFWeibull, Shape: 0.7}, p.TTF)
	assert.Equal(t, 48.0, p.Repair[ActionRMA].MeanHours())
	assert.Len(t, p.Rows, 19)

	bad := DefaultConfig()
	bad.Profile = "nope"
	_, err = bad.Build()
	assert.ErrorContains(t, err, `failures.profile: unknown name "nope"; valid names: byterobust, llama3`)
}

// TestConfigTOML decodes a [failures] table strictly: unknown keys are
// reported with their line, then Validate keys problems the same way.
func TestConfigTOML(t *testing.T) {
	src := `
profile = "none"
[components.gpu]
rate_per_gpu_hour = 1e-5
[components.tray]
component = "nvlink-switch"
rate_per_gpu_hour = -3e-6
[ttf]
dist = "weibull"
shape = 0.8
[repair.rma]
dist = "empirical"
values_hours = [4.0, 24.0, 240.0]
weights = [0.5, 0.3, 0.2]
`
	c := DefaultConfig()
	doc, err := tomlx.Decode("f.toml", []byte(src), &c)
	require.NoError(t, err)
	var ps config.Problems
	c.Validate("", &ps)
	perr := doc.Problems(ps.List)
	require.NotNil(t, perr)
	assert.EqualError(t, perr, "f.toml:7: components.tray.rate_per_gpu_hour: must be a finite number >= 0, found -3e-06")

	c = DefaultConfig()
	_, err = tomlx.Decode("f.toml", []byte("[ttf]\nshape_k = 2\n"), &c)
	assert.ErrorContains(t, err, `f.toml:2: ttf.shape_k: unknown key`)
}

func TestRepairDists(t *testing.T) {
	rng := sim.NewStream(3, "repair")
	e := EmpiricalRepair([]float64{1, 2, 3}, []float64{0, 1, 0})
	for range 100 {
		assert.Equal(t, 2*sim.Hour, e.Draw(rng))
	}
	assert.Equal(t, 2.0, e.MeanHours())
	u := EmpiricalRepair([]float64{1, 3}, nil)
	assert.Equal(t, 2.0, u.MeanHours())
	assert.Equal(t, sim.Time(0), RepairDist{}.Draw(rng))
	assert.Equal(t, "fixed 0.5 h", FixedRepair(0.5).String())
	assert.Equal(t, "lognormal median 20.4 h, mean 132 h", LognormalRepair(20.4, 132).String())
}
