package models

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/sim"
)

// TestDisaggFailurePlacement: in the failure topology the decode pool's
// GPUs follow the prefill pool's as the link model places them (1P:3D of
// TP=2 shares one 8-GPU server), from the next server for another GPU
// type, and the domains counted hold both pools.
func TestDisaggFailurePlacement(t *testing.T) {
	pre := defaultFleet(1)
	pre.TP = 2
	dc := defaultDisagg(3)
	dc.Decode.TP = 2
	_, f := disaggFleet(t, pre, dc)
	d := f.Disagg
	for j, want := range []int{2, 4, 6} {
		first, n := d.DecodeReplicaGPUs(j)
		require.Equal(t, [2]int{want, 2}, [2]int{first, n}, "decode replica %d", j)
	}
	domains, g := d.FailureDomains()
	require.Equal(t, [2]int{1, 8}, [2]int{domains, g}, "one server holds both pools")

	dc.Decode.GPU = "H200"
	_, f = disaggFleet(t, pre, dc)
	first, _ := f.Disagg.DecodeReplicaGPUs(0)
	require.Equal(t, 8, first, "an H200 decode pool starts on the next server")
	domains, _ = f.Disagg.FailureDomains()
	require.Equal(t, 2, domains)
}

// TestDisaggDecodeDrainAndRotation: a decode replica out of rotation (a
// drain, a probe's ejection) takes no transfers while up; a drain ends
// when it is empty or at its grace, failing what is left, whose KV is
// prefilled again.
func TestDisaggDecodeDrainAndRotation(t *testing.T) {
	eng, f := disaggFleet(t, defaultFleet(1), defaultDisagg(2))
	d := f.Disagg
	d.DecodeSetInRotation(0, false)
	require.False(t, d.DecodeStates()[0].Available)
	require.True(t, d.Decode[0].Up())
	d.DecodeSetInRotation(0, true)
	require.True(t, d.DecodeStates()[0].Available)

	drained := sim.Time(-1)
	d.DecodeDrain(1, 5*sim.Second, func(now sim.Time) { drained = now })
	require.False(t, d.DecodeStates()[1].Available, "a draining decode replica takes nothing new")
	eng.Run(10 * sim.Second)
	require.Equal(t, sim.Second, drained, "empty: the drain ends at its first check")
	require.False(t, d.Decode[1].Up(), "a drained replica is stopped")
	require.False(t, d.DecodeStates()[1].Available)
}

// TestDisaggDecodeSpecStepModel: a decode pool with speculative decoding
// runs the step model a co-located replica of the same deployment runs
// (decode steps, their FLOPs, tokens per verify step), and its prefill
// pool's is unchanged.
func TestDisaggDecodeSpecStepModel(t *testing.T) {
	dc := defaultDisagg(2)
	dc.Decode.Replica.Spec = SpecConfig{Enabled: true, Tokens: 4, Acceptance: 0.8, DraftFraction: 0.05}
	pre := defaultFleet(2)
	_, f := disaggFleet(t, pre, dc)
	cat := NewCatalog()
	co := dc.Decode
	co.GPU, co.Model, co.TP = pre.GPU, pre.Model, pre.TP
	want, err := NewDeployedStepModel(cat.GPUs["H100"], cat.LLMs["llama-3-8b"], co.Deployment(), Precision(co.Replica.Weights), Precision(co.Replica.KVDType), cat.Profiles[co.Replica.Perf.Profile])
	require.NoError(t, err)
	got := f.Disagg.Decode[0].perf
	require.InDelta(t, want.SpecTokensPerStep(), got.SpecTokensPerStep(), 1e-12)
	require.Greater(t, got.SpecTokensPerStep(), 3.0)
	for _, n := range []int{1, 8, 64} {
		w, g := want.Decode(n, float64(n)*2048), got.Decode(n, float64(n)*2048)
		require.InDelta(t, w.Seconds(100), g.Seconds(100), 1e-12, "n = %d", n)
		require.InDelta(t, w.FLOPs(100), g.FLOPs(100), 1e-3, "n = %d", n)
	}
	require.Nil(t, f.Replicas[0].perf.spec, "the prefill pool does not speculate")
}

// TestDisaggNVLinkDomains: the run header's domains count both pools: a
// decode pool that shares the prefill pool's server adds none, one that
// spills past it adds the servers it reaches, another GPU type adds its
// own servers.
func TestDisaggNVLinkDomains(t *testing.T) {
	cases := []struct {
		name          string
		preN, preTP   int
		decN, decTP   int
		decGPU        string
		want, prefill int
	}{
		{"1P:3D TP=2 on one server", 1, 2, 3, 2, "", 1, 1},
		{"4P:4D TP=1 on one server", 4, 1, 4, 1, "", 1, 1},
		{"4P:5D TP=1 spills to a second server", 4, 1, 5, 1, "", 2, 1},
		{"2P TP=8 : 3D TP=8", 2, 8, 3, 8, "", 5, 2},
		{"3P:2D TP=4, half-server spill", 3, 4, 2, 4, "", 3, 2},
		{"H200 decode on its own servers", 1, 2, 3, 2, "H200", 2, 1},
	}
	for _, c := range cases {
		pre := defaultFleet(c.preN)
		pre.TP = c.preTP
		dc := defaultDisagg(c.decN)
		dc.Decode.TP = c.decTP
		dc.Decode.GPU = c.decGPU
		_, f := disaggFleet(t, pre, dc)
		require.Equal(t, c.prefill, f.Place.Domains, "%s: the prefill pool's own", c.name)
		require.Equal(t, c.want, f.Disagg.NVLinkDomains(), c.name)
	}
}
