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
