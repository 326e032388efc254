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

func problems(base string, o Overrides) []config.Problem {
	var ps config.Problems
	p, _ := LookupProfile(base)
	if o.TTF.Dist == "" {
		o.TTF = DefaultTTFConfig()
	}
	o.Validate("failures", p, &ps)
	return ps.List
}

func TestOverridesValidate(t *testing.T) {
	comps := func(cs ...ComponentConfig) Overrides { return Overrides{Components: cs} }
	tests := []struct {
		name string
		base string
		o    Overrides
		want []config.Problem
	}{
		{"nothing", ProfileLlama3, Overrides{}, nil},
		{"negative rate", ProfileLlama3, comps(ComponentConfig{Category: "hbm", RatePerGPUHour: f64(-1e-6)}),
			[]config.Problem{{Key: "failures.components.0.rate_per_gpu_hour", Msg: "must be a finite number >= 0, found -1e-06"}}},
		{"NaN rate", ProfileLlama3, comps(ComponentConfig{Category: "gpu", RatePerGPUHour: f64(math.NaN())}),
			[]config.Problem{{Key: "failures.components.0.rate_per_gpu_hour", Msg: "must be a finite number >= 0, found NaN"}}},
		{"negative scale", ProfileLlama3, comps(ComponentConfig{Category: "gpu", Scale: f64(-2)}),
			[]config.Problem{{Key: "failures.components.0.scale", Msg: "must be a finite number >= 0, found -2"}}},
		{"weibull shape 0", ProfileLlama3, Overrides{TTF: TTFConfig{Dist: TTFWeibull, Shape: 0}},
			[]config.Problem{{Key: "failures.ttf.shape", Msg: "must be a finite number > 0, found 0"}}},
		{"ttf dist", ProfileLlama3, Overrides{TTF: TTFConfig{Dist: "gamma"}},
			[]config.Problem{{Key: "failures.ttf.dist", Msg: `unknown name "gamma"; valid names: exponential, weibull`}}},
		{"new row needs a component and a rate", ProfileLlama3, comps(ComponentConfig{Category: "cosmic-rays"}), []config.Problem{
			{Key: "failures.components.0.category", Msg: `unknown component "cosmic-rays"; valid components: gpu, hbm, sram, gsp, thermal, sdc, nvlink-switch, nic, psu, ssd, cpu, host-memory, chassis, io-board, network, tor, software, dependency, host-maintenance, nccl-watchdog, oom, unknown, switch-tray, power-shelf, coolant, compute-tray, row-power (category "cosmic-rays" is not a row of the profile: set component for a new row)`},
			{Key: "failures.components.0.rate_per_gpu_hour", Msg: "a new row needs a rate (failures per GPU-hour, >= 0)"},
		}},
		{"no name", ProfileNone, comps(ComponentConfig{RatePerGPUHour: f64(1e-6)}),
			[]config.Problem{{Key: "failures.components.0.category", Msg: "each component table needs a category or a component"}}},
		{"twice", ProfileNone, comps(ComponentConfig{Component: "coolant", RatePerGPUHour: f64(1e-6)}, ComponentConfig{Category: "coolant", Scale: f64(2)}),
			[]config.Problem{{Key: "failures.components.1.category", Msg: `category "coolant" is already set by failures.components.0`}}},
		{"new row of a known component", ProfileLlama3, comps(ComponentConfig{Category: "nvl-tray", Component: "switch-tray", RatePerGPUHour: f64(1e-6)}), nil},
		{"degraded scope with a fail-stop mode", ProfileNone, comps(ComponentConfig{Component: "gpu", RatePerGPUHour: f64(1e-6), Scope: "nvlink-domain-degraded", Mode: "fail-stop"}),
			[]config.Problem{{Key: "failures.components.0.mode", Msg: `scope nvlink-domain-degraded goes with mode nvlink-degraded and only with it (row "gpu" would have scope nvlink-domain-degraded, mode fail-stop)`}}},
		{"bad names and values", ProfileLlama3, comps(ComponentConfig{Category: "gpu", Scope: "planet", Mode: "melt", Action: "pray", Xid: intp(7),
			SpeedFraction: f64(1.5), NVLinkBandwidthFraction: f64(1), PrecursorLeadS: f64(-1), PrecursorProbability: f64(2),
			Repair: &RepairConfig{Dist: DistFixed, Hours: -1}}), []config.Problem{
			{Key: "failures.components.0.scope", Msg: `unknown scope "planet"; valid scopes: process, gpu, tray, server, host, nvlink-domain-degraded, domain, rack, row`},
			{Key: "failures.components.0.mode", Msg: `unknown name "melt"; valid names: fail-stop, hang, fail-slow, link-flap, oom, nvlink-degraded`},
			{Key: "failures.components.0.action", Msg: `unknown name "pray"; valid names: restart-app, reset-gpu, reboot-node, rma`},
			{Key: "failures.components.0.xid", Msg: "unknown Xid 7; known codes: 13, 31, 43, 45, 48, 63, 64, 74, 79, 92, 94, 95, 119, 120, 140 (0: none)"},
			{Key: "failures.components.0.speed_fraction", Msg: "must be > 0 and <= 1, found 1.5"},
			{Key: "failures.components.0.nvlink_bandwidth_fraction", Msg: "must be > 0 and < 1, found 1"},
			{Key: "failures.components.0.repair.hours", Msg: "must be a finite number >= 0, found -1"},
			{Key: "failures.components.0.precursor_lead_s", Msg: "must be a finite number >= 0, found -1"},
			{Key: "failures.components.0.precursor_probability", Msg: "must be a fraction between 0 and 1, found 2"},
		}},
		{"unknown repair action", ProfileLlama3, Overrides{Repair: map[string]RepairConfig{"pray": {Dist: DistFixed}}},
			[]config.Problem{{Key: "failures.repair.pray", Msg: "unknown action \"pray\"; valid actions: restart-app, reset-gpu, reboot-node, rma"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problems(tt.base, tt.o)
			if tt.name == "bad names and values" { // the fraction message is config's
				for i := range got {
					if got[i].Key == "failures.components.0.precursor_probability" {
						got[i].Msg = "must be a fraction between 0 and 1, found 2"
					}
				}
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestOverridesApply(t *testing.T) {
	base, err := LookupProfile(ProfileLlama3)
	require.NoError(t, err)
	o := Overrides{
		Components: []ComponentConfig{
			{Category: "hbm", RatePerGPUHour: f64(2e-6), PrecursorLeadS: f64(3600), PrecursorProbability: f64(1)},
			{Category: "nvl-tray", Component: "switch-tray", RatePerGPUHour: f64(1e-6), NVLinkBandwidthFraction: f64(0.5)},
			{Category: "gsp", Mode: "fail-slow"},
			{Category: "gpu", Scale: f64(3), Scope: "tray", Repair: &RepairConfig{Dist: DistFixed, Hours: 2}},
			{Component: "coolant", RatePerGPUHour: f64(4e-7)},
		},
		TTF:    TTFConfig{Dist: TTFWeibull, Shape: 0.7},
		Repair: map[string]RepairConfig{"rma": {Dist: DistFixed, Hours: 48}},
	}
	require.Empty(t, problems(ProfileLlama3, o))
	p, err := o.Apply(base)
	require.NoError(t, err)
	hbm, _ := p.Row("hbm")
	assert.Equal(t, 2e-6, hbm.PerGPUHour)
	assert.Equal(t, "user", hbm.Confidence)
	assert.Equal(t, sim.Hour, hbm.Precursor.Lead)
	assert.Equal(t, 1.0, hbm.Precursor.DetectProbability)
	tray, ok := p.Row("nvl-tray")
	require.True(t, ok)
	assert.Equal(t, ScopeDomainDegraded, tray.Scope)
	assert.Equal(t, ModeNVLinkDegraded, tray.Mode)
	assert.Equal(t, 0.5, tray.NVLinkFraction)
	gsp, _ := p.Row("gsp")
	assert.Equal(t, ModeFailSlow, gsp.Mode)
	assert.Equal(t, 0.9, gsp.SpeedFraction, "CALIBRATION.md §6 default")
	gpu, _ := p.Row("gpu")
	b, _ := base.Row("gpu")
	assert.InDelta(t, 3*b.PerGPUHour, gpu.PerGPUHour, 1e-18)
	assert.Equal(t, ScopeHost, gpu.Scope)
	assert.Equal(t, 2.0, p.RepairOf(&gpu).MeanHours())
	cool, ok := p.Row("coolant")
	require.True(t, ok)
	assert.Equal(t, ScopeRack, cool.Scope)
	assert.Equal(t, TTF{Kind: TTFWeibull, Shape: 0.7}, p.TTF)
	assert.Equal(t, 48.0, p.Repair[ActionRMA].MeanHours())
	assert.Len(t, p.Rows, 20)
	// The base is untouched.
	b2, _ := base.Row("gpu")
	assert.Equal(t, b, b2)
}

// A custom profile from "none" and component tables drives the generator:
// only its rows fail, at its rates, on its scopes.
func TestNonePlusComponentsGenerates(t *testing.T) {
	none, _ := LookupProfile(ProfileNone)
	o := Overrides{Components: []ComponentConfig{
		{Component: "coolant", RatePerGPUHour: f64(1e-4)},
		{Component: "switch-tray", RatePerGPUHour: f64(3e-4)},
	}}
	p, err := o.Apply(none)
	require.NoError(t, err)
	topo := NVL72(20)
	gen, err := NewGenerator(p, topo, sim.NewStream(1, "f"))
	require.NoError(t, err)
	counts := map[string]int{}
	const hours = 2000.0
	for {
		ev, ok := gen.Next()
		if !ok || ev.Time > sim.FromSeconds(hours*3600) {
			break
		}
		counts[ev.Category]++
		switch ev.Category {
		case "coolant":
			assert.Equal(t, 72, ev.GPUs)
			assert.Equal(t, 72, ev.DownGPUs)
			assert.Equal(t, 24*sim.Hour, ev.Repair)
		case "switch-tray":
			assert.Equal(t, 72, ev.GPUs)
			assert.Equal(t, 0, ev.DownGPUs, "degraded, not down")
			assert.InDelta(t, 8.0/9, ev.NVLinkFraction, 1e-12)
		default:
			t.Fatalf("unexpected row %q", ev.Category)
		}
	}
	gpuHours := hours * float64(topo.GPUs())
	for cat, rate := range map[string]float64{"coolant": 1e-4, "switch-tray": 3e-4} {
		want := rate * gpuHours
		assert.InDelta(t, want, float64(counts[cat]), 4*math.Sqrt(want), cat)
	}
}

// TestOverridesTOML decodes a [failures] table strictly: unknown keys are
// reported with their line, then Validate keys problems the same way.
func TestOverridesTOML(t *testing.T) {
	type file struct {
		Components []ComponentConfig       `toml:"components"`
		TTF        TTFConfig               `toml:"ttf"`
		Repair     map[string]RepairConfig `toml:"repair"`
	}
	src := `
[[components]]
category = "gpu"
rate_per_gpu_hour = 1e-5
[[components]]
component = "switch-tray"
rate_per_gpu_hour = -3e-6
[ttf]
dist = "weibull"
shape = 0.8
[repair.rma]
dist = "empirical"
values_hours = [4.0, 24.0, 240.0]
weights = [0.5, 0.3, 0.2]
`
	var f file
	doc, err := tomlx.Decode("f.toml", []byte(src), &f)
	require.NoError(t, err)
	var ps config.Problems
	none, _ := LookupProfile(ProfileNone)
	o := Overrides{Components: f.Components, TTF: f.TTF, Repair: f.Repair}
	o.Validate("", none, &ps)
	perr := doc.Problems(ps.List)
	require.NotNil(t, perr)
	assert.EqualError(t, perr, "f.toml:7: components.1.rate_per_gpu_hour: must be a finite number >= 0, found -3e-06")

	f = file{}
	_, err = tomlx.Decode("f.toml", []byte("[[components]]\ncategory = \"gpu\"\nrate = 2\n"), &f)
	assert.ErrorContains(t, err, `f.toml:3: components.0.rate: unknown key`)
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
