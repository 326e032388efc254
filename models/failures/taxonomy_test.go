package failures

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/sim"
)

func TestNamesRoundTrip(t *testing.T) {
	for i, n := range ScopeNames() {
		s, err := ParseScope(n)
		require.NoError(t, err)
		assert.Equal(t, Scope(i), s)
		assert.Equal(t, n, s.String())
	}
	for i, n := range ModeNames() {
		m, err := ParseMode(n)
		require.NoError(t, err)
		assert.Equal(t, Mode(i), m)
		assert.Equal(t, n, m.String())
	}
	for i, n := range ActionNames() {
		a, err := ParseAction(n)
		require.NoError(t, err)
		assert.Equal(t, Action(i), a)
		assert.Equal(t, n, a.String())
	}
	_, err := ParseScope("galaxy")
	assert.EqualError(t, err, `failures: unknown scope "galaxy"; valid scopes: process, gpu, tray, server, host, nvlink-domain-degraded, domain, rack, row`)
	_, err = ParseMode("slow")
	assert.ErrorContains(t, err, "valid modes: fail-stop, hang, fail-slow, link-flap, oom")
	_, err = ParseAction("pray")
	assert.ErrorContains(t, err, "valid actions: restart-app, reset-gpu, reboot-node, rma")
}

// TestTaxonomy checks the defaults the issue names: blast radius by
// component, Xids with NVIDIA's actions (CALIBRATION.md §2), precursors.
func TestTaxonomy(t *testing.T) {
	tests := []struct {
		c      Component
		scope  Scope
		mode   Mode
		xid    int
		action Action
	}{
		{ComponentGPU, ScopeGPU, ModeFailStop, 79, ActionRebootNode},
		{ComponentHBM, ScopeGPU, ModeFailStop, 48, ActionResetGPU},
		{ComponentSRAM, ScopeGPU, ModeFailStop, 95, ActionResetGPU},
		{ComponentGSP, ScopeGPU, ModeFailStop, 119, ActionResetGPU},
		{ComponentNVLinkSwitch, ScopeDomain, ModeFailStop, 74, ActionRebootNode},
		{ComponentPSU, ScopeHost, ModeFailStop, 0, ActionRMA},
		{ComponentToR, ScopeRack, ModeFailStop, 0, ActionRMA},
		{ComponentSoftware, ScopeProcess, ModeFailStop, 0, ActionRestartApp},
		{ComponentNCCLWatchdog, ScopeProcess, ModeHang, 0, ActionRestartApp},
		{ComponentOOM, ScopeProcess, ModeOOM, 0, ActionRestartApp},
	}
	for _, tt := range tests {
		s, err := SpecOf(tt.c)
		require.NoError(t, err)
		assert.Equal(t, tt.scope, s.Scope, tt.c)
		assert.Equal(t, tt.mode, s.Mode, tt.c)
		assert.Equal(t, tt.xid, s.Xid, tt.c)
		assert.Equal(t, tt.action, s.Action, tt.c)
		if s.Xid != 0 {
			x, ok := LookupXid(s.Xid)
			require.True(t, ok)
			assert.Equal(t, s.Action, x.Action, "component %s: action follows its Xid", tt.c)
		}
	}
	hbm, _ := SpecOf(ComponentHBM)
	assert.Greater(t, hbm.Precursor.DetectProbability, 0.0)
	assert.Contains(t, hbm.Precursor.Signal, "correctable ECC")
	th, _ := SpecOf(ComponentThermal)
	assert.Contains(t, th.Precursor.Signal, "85 °C")
	_, err := SpecOf("flux-capacitor")
	assert.ErrorContains(t, err, `unknown component "flux-capacitor"; valid components: gpu, hbm,`)
	assert.Len(t, Components(), len(componentSpecs))
}

func TestXidTable(t *testing.T) {
	// The codes issue 3 names, with NVIDIA's immediate action.
	want := map[int]Action{48: ActionResetGPU, 63: ActionRestartApp, 64: ActionResetGPU, 74: ActionRebootNode,
		79: ActionRebootNode, 92: ActionRestartApp, 94: ActionRestartApp, 95: ActionResetGPU, 119: ActionResetGPU}
	for code, a := range want {
		x, ok := LookupXid(code)
		require.True(t, ok, code)
		assert.Equal(t, a, x.Action, code)
		assert.NotEmpty(t, x.Meaning)
	}
	_, ok := LookupXid(1)
	assert.False(t, ok)
	assert.Len(t, Xids(), 15)
}

func TestTopology(t *testing.T) {
	h := HGX(10, 4)
	require.NoError(t, h.Check())
	assert.Equal(t, 80, h.GPUs())
	assert.Equal(t, 10, h.Hosts())
	assert.Equal(t, 3, h.Racks())
	assert.Equal(t, 3, h.Units(ScopeRack))
	first, n := h.UnitGPUs(ScopeRack, 2) // the partial last rack: 2 servers
	assert.Equal(t, []int{64, 16}, []int{first, n})
	assert.Equal(t, 2, h.UnitOf(ScopeRack, 79))
	assert.Equal(t, 9, h.UnitOf(ScopeHost, 79))
	assert.Equal(t, 9, h.UnitOf(ScopeDomain, 79))

	v := NVL72(8)
	require.NoError(t, v.Check())
	assert.Equal(t, 576, v.GPUs())
	assert.Equal(t, 144, v.Hosts(), "18 trays of 4 per rack")
	first, n = v.UnitGPUs(ScopeHost, 19)
	assert.Equal(t, []int{76, 4}, []int{first, n})
	first, n = v.UnitGPUs(ScopeDomain, 1)
	assert.Equal(t, []int{72, 72}, []int{first, n})
	assert.Equal(t, 8, v.Units(ScopeRack))

	assert.Error(t, Topology{HostGPUs: 3, DomainGPUs: 8, Domains: 1, DomainsPerRack: 1}.Check())
	assert.Error(t, HGX(0, 4).Check())
}

func TestTopologyConfig(t *testing.T) {
	tests := []struct {
		name string
		c    TopologyConfig
		want []config.Problem
	}{
		{"default", DefaultTopologyConfig(), nil},
		{"nvl72", TopologyConfig{Kind: KindNVL72, Racks: 8}, nil},
		{"kind", TopologyConfig{Kind: "dgx"}, []config.Problem{{Key: "cluster.topology.kind", Msg: `unknown name "dgx"; valid names: hgx, nvl72`}}},
		{"hgx sizes", TopologyConfig{Kind: KindHGX}, []config.Problem{
			{Key: "cluster.topology.servers", Msg: "must be an integer > 0, found 0"},
			{Key: "cluster.topology.servers_per_rack", Msg: "must be an integer > 0, found 0"}}},
		{"nvl72 racks", TopologyConfig{Kind: KindNVL72, Racks: -1}, []config.Problem{
			{Key: "cluster.topology.racks", Msg: "must be an integer > 0, found -1"}}},
	}
	for _, tt := range tests {
		var ps config.Problems
		tt.c.Validate("cluster.topology", &ps)
		assert.Equal(t, tt.want, ps.List, tt.name)
	}
	c := TopologyConfig{Kind: KindNVL72, Racks: 8}
	assert.Equal(t, NVL72(8), c.Topology())
	d := DefaultTopologyConfig()
	assert.Equal(t, 16384, d.Topology().GPUs())
}

// TestWeibullPartialUnits: Weibull cohorts handle a partial last rack and a
// topology whose only rack is partial.
func TestWeibullPartialUnits(t *testing.T) {
	for _, topo := range []Topology{HGX(10, 4), HGX(2, 4)} {
		p := mustProfile(t, ProfileNone)
		p.Rows = []Row{newRow("tor", "ToR", ComponentToR, 1e-4, 0, "user")}
		p.TTF = TTF{Kind: TTFWeibull, Shape: 2}
		evs := generate(t, p, topo, 1, 20000*sim.Hour)
		require.NotEmpty(t, evs)
		for i, ev := range evs {
			require.Less(t, ev.Unit, topo.Racks())
			first, n := topo.UnitGPUs(ScopeRack, ev.Unit)
			require.Equal(t, []int{first, n}, []int{ev.FirstGPU, ev.GPUs})
			if i > 0 {
				require.GreaterOrEqual(t, ev.Time, evs[i-1].Time)
			}
		}
		// Long-run renewal rate: GPUs × rate per hour.
		want := float64(topo.GPUs()) * 1e-4 * 20000
		assert.InDelta(t, want, float64(len(evs)), 5*math.Sqrt(want)+5, topo.Kind)
	}
}
