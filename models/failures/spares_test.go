package failures

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/sim"
)

func TestSparesFor(t *testing.T) {
	// Poisson(0.5): P(<=2) = 0.98561, P(<=3) = 0.99825, P(<=4) = 0.99983.
	require.Equal(t, 3, SparesFor(0.5, 0.99))
	require.Equal(t, 4, SparesFor(0.5, 0.999))
	require.Equal(t, 0, SparesFor(0, 0.999))
	require.Equal(t, 0, SparesFor(0.001, 0.99))
}

// TestMeanInRepairMatchesSimulation: the time-average number of failures
// in repair over a long generated history matches the M/G/∞ mean. (RMA
// repairs are fixed at their mean here: the default lognormal's tail is so
// heavy that years of history still leave a ±20% sampling error.)
func TestMeanInRepairMatchesSimulation(t *testing.T) {
	p := mustProfile(t, ProfileLlama3).Clone()
	p.Repair[ActionRMA] = FixedRepair(p.Repair[ActionRMA].MeanHours())
	const servers = 2048
	topo := HGX(servers, 4)
	horizon := 10 * 365 * 24 * sim.Hour
	var inRepair sim.Time
	for _, ev := range generate(t, p, topo, 11, horizon) {
		if ev.Mode == ModeFailSlow {
			continue
		}
		inRepair += min(ev.Repair, horizon-ev.Time)
	}
	got := inRepair.Seconds() / horizon.Seconds()
	want := p.MeanInRepair(topo.GPUs())
	t.Logf("mean in repair on %d GPUs: simulated %.3f, M/G/inf %.3f", topo.GPUs(), got, want)
	require.InEpsilon(t, want, got, 0.05)
}

// HostSparesFor: with only single-host failures it is SparesFor's Poisson;
// the same GPUs as NVL72 racks need more spare hosts than as HGX servers
// once rack faults are in, because a rack takes 18 trays at once.
func TestHostSparesFor(t *testing.T) {
	l := mustProfile(t, ProfileLlama3)
	hgx := l.HostSparesFor(HGX(2048, 4), 16384)
	assert.InDelta(t, l.MeanInRepair(16384), hgx.MeanHosts, 1e-9)
	assert.Equal(t, SparesFor(hgx.MeanHosts, 0.99), hgx.Hosts99)
	assert.Equal(t, SparesFor(hgx.MeanHosts, 0.999), hgx.Hosts999)

	r := mustProfile(t, ProfileRackScale)
	h := r.HostSparesFor(HGX(2052, 4), 16416)
	n := r.HostSparesFor(NVL72(228), 16416)
	t.Logf("rackscale on 16,416 GPUs: HGX %.2f servers in repair, 99%% %d, 99.9%% %d; NVL72 %.2f trays, 99%% %d, 99.9%% %d",
		h.MeanHosts, h.Hosts99, h.Hosts999, n.MeanHosts, n.Hosts99, n.Hosts999)
	assert.Greater(t, n.Hosts999*4, h.Hosts999*8, "in GPUs, NVL72 needs more spares at 99.9%")
	assert.Greater(t, n.Hosts999-n.Hosts99, h.Hosts999-h.Hosts99, "a heavier tail")
}
