package fleet

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/fleetsim/fleetsim/internal/config"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/models/hw"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
	"github.com/stretchr/testify/require"
)

// disaggFleet builds a disaggregated fleet: pre is the prefill pool, dc
// the [disagg] table.
func disaggFleet(t testing.TB, pre FleetConfig, dc DisaggConfig) (*sim.Engine, *Fleet) {
	t.Helper()
	eng, f := testFleet(t, pre)
	require.NoError(t, f.EnableDisagg(hw.NewCatalog(), dc, pre, leastOutstanding{}, "disagg"))
	return eng, f
}

func defaultDisagg(decodes int) DisaggConfig {
	c := DefaultDisaggConfig()
	c.Enabled = true
	c.Decode.Replicas = decodes
	return c
}

// checkDisagg checks after an event: requests are conserved (in flight =
// held by prefill replicas + between the pools + held by decode replicas)
// and every replica's KV adds up, counting what handoffs hold.
func checkDisagg(t *testing.T, f *Fleet, msg string) {
	t.Helper()
	rec := f.Rec
	require.Equal(t, rec.Arrived, rec.Completed+rec.Failed+rec.Shed+rec.InFlight(), msg)
	held := int64(f.Disagg.Between())
	for _, r := range append(append([]*engine.Replica{}, f.Replicas...), f.Disagg.Decode.Replicas...) {
		r.KV().Check()
		require.NoError(t, r.CheckInvariants(), msg)
		held += int64(r.Outstanding())
	}
	require.Equal(t, rec.InFlight(), held, "in flight = prefill + between + decode; %s", msg)
}

// TestDisaggConservationAndKV runs random disaggregated fleets event by
// event, with decode and prefill replicas failing and recovering, and
// checks conservation and the KV accounting after every event; at the end
// everything has drained and no block leaks.
func TestDisaggConservationAndKV(t *testing.T) {
	for trial := 0; trial < 12; trial++ {
		rng := rand.New(rand.NewPCG(uint64(trial), 13))
		pre := defaultFleet(1 + rng.IntN(3))
		pre.Replica.Batching = []string{engine.BatchChunked, engine.BatchContinuous}[trial%2]
		pre.Replica.KVBlocks = int64(400 + rng.IntN(1500))
		pre.Replica.PrefixCaching = rng.IntN(2) == 0
		dc := defaultDisagg(1 + rng.IntN(3))
		dc.Decode.Replica.Batching = []string{engine.BatchChunked, engine.BatchContinuous}[rng.IntN(2)]
		dc.Decode.Replica.KVBlocks = int64(400 + rng.IntN(1500)) // small: backpressure and preemption
		dc.Decode.Replica.MaxSeqs = 4 + rng.IntN(40)
		dc.Decode.Replica.PrefixCaching = rng.IntN(2) == 0
		dc.Link = []string{LinkAuto, LinkRDMA}[rng.IntN(2)]
		dc.Layerwise = trial%3 == 0
		failures := trial >= 4
		t.Run(fmt.Sprintf("%d-%s", trial, pre.Replica.Batching), func(t *testing.T) {
			eng, f := disaggFleet(t, pre, dc)
			reqs := randomWorkload(rng, 300, 15, trial%2 == 0)
			require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
			if failures {
				for k := 0; k < 4; k++ {
					at := sim.FromSeconds(rng.Float64() * 20)
					decode := rng.IntN(3) > 0
					i := rng.IntN(len(f.Replicas))
					r := f.Replicas[i]
					if decode {
						r = f.Disagg.Decode.Replicas[rng.IntN(len(f.Disagg.Decode.Replicas))]
					}
					eng.Schedule(at, sim.PriorityFailure, func(now sim.Time) {
						r.Fail(now, engine.FailCrashed)
						if !decode {
							f.Pool.Refresh(i)
						}
						r.Recover(now, 2*sim.Second, nil)
					})
				}
			}
			n := 0
			for eng.Step() {
				n++
				checkDisagg(t, f, fmt.Sprintf("trial %d event %d at %v", trial, n, eng.Now()))
			}
			require.NoError(t, f.Err())
			require.Zero(t, f.Rec.InFlight(), "everything drains")
			require.EqualValues(t, len(reqs), f.Rec.Completed+f.Rec.Failed+f.Rec.Shed)
			for _, r := range append(append([]*engine.Replica{}, f.Replicas...), f.Disagg.Decode.Replicas...) {
				require.Zero(t, r.KV().Used(), "no blocks leak")
				require.Zero(t, r.State().OutstandingTokens)
			}
			require.Zero(t, f.Disagg.HeldBlocks())
			require.Empty(t, f.Disagg.live)
			if failures {
				t.Logf("re-prefills %d, rerouted %d, backpressured %d", f.Disagg.Stats.RePrefills, f.Disagg.Stats.Rerouted, f.Disagg.Stats.Backpressured)
			}
		})
	}
}

// TestDisaggTransferPhysics: the bytes moved are the sum over transferred
// requests of wire bytes per token × prompt tokens; no transfer is faster
// than its link; the transfers on one end of a link never overlap (a
// queue); every TTFT splits exactly into its stages.
func TestDisaggTransferPhysics(t *testing.T) {
	pre := defaultFleet(2)
	pre.TP = 2
	dc := defaultDisagg(2)
	dc.Decode.TP = 2
	eng, f := disaggFleet(t, pre, dc)
	var recs []TransferRecord
	f.Disagg.OnTransfer = func(tr TransferRecord) { recs = append(recs, tr) }
	byID := map[uint64]int32{}
	rng := rand.New(rand.NewPCG(7, 7))
	reqs := randomWorkload(rng, 500, 40, false)
	for _, r := range reqs {
		byID[r.ID] = r.InputTokens
	}
	var wantBytes float64
	wire := f.Disagg.wirePerTok
	f.Rec.OnDone = func(o *engine.Outcome) { wantBytes += wire * float64(o.Req.InputTokens) }
	require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
	eng.Run(sim.Forever)
	require.EqualValues(t, len(reqs), f.Rec.Completed)
	st := f.Disagg.Stats
	require.EqualValues(t, len(reqs), st.Transfers, "one transfer per request (no failures)")
	require.InEpsilon(t, wantBytes, st.BytesMoved, 1e-12)
	var sum float64
	for k := range st.BytesByLink {
		sum += st.BytesByLink[k]
	}
	require.InEpsilon(t, st.BytesMoved, sum, 1e-12)
	// Llama-3-8B BF16 at TP=2: 128 KiB per token on the wire.
	require.Equal(t, 128*1024.0, wire)
	// TP=2 replicas pack one 8-GPU server: 2 prefill + 2 decode, all NVLink.
	require.EqualValues(t, len(reqs), st.TransfersByLink[linkNVLink])
	for _, r := range recs {
		require.Equal(t, 2*450e9, r.BytesPerS, "2 lanes × 450 GB/s (H100 NVLink one way)")
	}
	checkTransfers(t, recs, 0)
	sp := f.Disagg.Split
	total := sp.PrefillQueue.Mean() + sp.Prefill.Mean() + sp.DecodeWait.Mean() + sp.Transfer.Mean() + sp.DecodeFirst.Mean() + sp.ToClient.Mean()
	require.InDelta(t, f.Rec.TTFT.Mean(), total, 1e-6*f.Rec.TTFT.Mean(), "stages add up to the TTFT")
	require.Greater(t, sp.Transfer.Mean(), 0.0)
}

// checkTransfers: no transfer is faster than its link; one end of a link
// carries one transfer at a time (FIFO queues); a transfer starts once
// both ends are reserved, or (layer-wise, layers > 0) once its prefill
// began, and ends no earlier than its last layer's share after that.
func checkTransfers(t *testing.T, recs []TransferRecord, layers int) {
	t.Helper()
	type iv struct{ a, b sim.Time }
	ends := map[string][]iv{}
	for _, r := range recs {
		wire := sim.Time(math.Ceil(r.Bytes / r.BytesPerS * 1e9))
		start := max(r.SendStart, r.RecvStart)
		require.GreaterOrEqual(t, r.End-start, wire, "no transfer faster than its link")
		if r.Layerwise {
			require.Positive(t, layers)
			require.GreaterOrEqual(t, min(r.SendStart, r.RecvStart), r.PrefillStart)
			require.GreaterOrEqual(t, r.End, r.Ready+sim.Time(math.Ceil(float64(wire)/float64(layers))))
		} else {
			require.GreaterOrEqual(t, min(r.SendStart, r.RecvStart), r.Ready)
			require.GreaterOrEqual(t, r.End-r.Ready, wire, "no transfer faster than its link")
		}
		ends[fmt.Sprint("send", r.Link, r.Prefill)] = append(ends[fmt.Sprint("send", r.Link, r.Prefill)], iv{r.SendStart, r.SendStart + wire})
		ends[fmt.Sprint("recv", r.Link, r.Decode)] = append(ends[fmt.Sprint("recv", r.Link, r.Decode)], iv{r.RecvStart, r.RecvStart + wire})
	}
	for k, l := range ends {
		sort.Slice(l, func(i, j int) bool { return l[i].a < l[j].a })
		for i := 1; i < len(l); i++ {
			require.GreaterOrEqual(t, l[i].a, l[i-1].b, "%s: transfers overlap", k)
		}
	}
}

// TestDisaggLayerwise: streaming the KV layer by layer over RDMA hides most
// of the transfer behind the prefill, with the same bytes and the same
// link physics.
func TestDisaggLayerwise(t *testing.T) {
	run := func(layerwise bool) (*Disagg, []TransferRecord) {
		pre := defaultFleet(2)
		dc := defaultDisagg(2)
		dc.Link = LinkRDMA
		dc.Layerwise = layerwise
		eng, f := disaggFleet(t, pre, dc)
		var recs []TransferRecord
		f.Disagg.OnTransfer = func(tr TransferRecord) { recs = append(recs, tr) }
		reqs := randomWorkload(rand.New(rand.NewPCG(11, 12)), 400, 20, false)
		require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
		for eng.Step() {
			checkDisagg(t, f, "layerwise")
		}
		require.EqualValues(t, len(reqs), f.Rec.Completed)
		return f.Disagg, recs
	}
	plain, pr := run(false)
	lw, lr := run(true)
	checkTransfers(t, pr, 0)
	checkTransfers(t, lr, 32)
	n := 0
	for _, r := range lr {
		if r.Layerwise {
			n++
		}
	}
	require.Positive(t, n)
	require.Equal(t, plain.Stats.BytesMoved, lw.Stats.BytesMoved)
	t.Logf("transfer stage mean: %.3f ms → %.3f ms layer-wise (%d of %d streamed)", plain.Split.Transfer.Mean(), lw.Split.Transfer.Mean(), n, len(lr))
	require.Less(t, lw.Split.Transfer.Mean(), 0.5*plain.Split.Transfer.Mean())
}

// TestDisaggRDMASlowerThanNVLink: the same fleet over RDMA moves the same
// bytes, more slowly (50 GB/s NICs vs 450 GB/s NVLink per GPU).
func TestDisaggRDMASlowerThanNVLink(t *testing.T) {
	run := func(link string) *Disagg {
		pre := defaultFleet(1)
		dc := defaultDisagg(1)
		dc.Link = link
		eng, f := disaggFleet(t, pre, dc)
		reqs := randomWorkload(rand.New(rand.NewPCG(1, 2)), 200, 5, false)
		require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
		eng.Run(sim.Forever)
		require.EqualValues(t, len(reqs), f.Rec.Completed)
		return f.Disagg
	}
	nv, rd := run(LinkAuto), run(LinkRDMA)
	require.Equal(t, nv.Stats.BytesMoved, rd.Stats.BytesMoved)
	require.EqualValues(t, 200, rd.Stats.TransfersByLink[linkRDMA])
	require.InEpsilon(t, 9, rd.Split.Transfer.Mean()/nv.Split.Transfer.Mean(), 0.2, "transfer time scales with 1/bandwidth")
}

// TestDisaggBackpressure: a decode pool too small for the load makes
// prefilled requests wait holding their KV; all still complete.
func TestDisaggBackpressure(t *testing.T) {
	pre := defaultFleet(2)
	dc := defaultDisagg(1)
	dc.Decode.Replica.KVBlocks = 600
	eng, f := disaggFleet(t, pre, dc)
	reqs := randomWorkload(rand.New(rand.NewPCG(3, 4)), 300, 30, false)
	require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
	maxHeld := int64(0)
	for eng.Step() {
		maxHeld = max(maxHeld, f.Disagg.HeldBlocks())
	}
	require.EqualValues(t, len(reqs), f.Rec.Completed)
	st := f.Disagg.Stats
	require.Greater(t, st.Backpressured, int64(0))
	require.Greater(t, st.WaitingPeak, 1)
	require.Greater(t, st.HeldBlockNs, 0.0)
	require.Greater(t, maxHeld, int64(0))
	require.Greater(t, f.Disagg.Split.DecodeWait.Quantile(0.99), 0.0)
}

// TestDisaggDecodeFailureRePrefills: a decode replica that fails loses its
// requests' KV; they are prefilled again (waste) and complete.
func TestDisaggDecodeFailureRePrefills(t *testing.T) {
	pre := defaultFleet(1)
	dc := defaultDisagg(2)
	eng, f := disaggFleet(t, pre, dc)
	reqs := randomWorkload(rand.New(rand.NewPCG(5, 6)), 200, 10, false)
	for i := range reqs {
		reqs[i].OutputTokens = 300 // long decodes: the failure finds requests decoding
	}
	require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
	dec := f.Disagg.Decode.Replicas[0]
	eng.Schedule(5*sim.Second, sim.PriorityFailure, func(now sim.Time) {
		require.Greater(t, dec.Outstanding(), 0)
		dec.Fail(now, engine.FailCrashed)
		dec.Recover(now, 3*sim.Second, nil)
	})
	eng.Run(sim.Forever)
	require.EqualValues(t, len(reqs), f.Rec.Completed, "every request completes after its re-prefill")
	st := f.Disagg.Stats
	require.Greater(t, st.RePrefills, int64(0))
	require.Greater(t, st.RePrefillTokens, int64(0))
	require.Greater(t, st.Transfers, int64(len(reqs)), "re-prefilled requests transfer twice")
	require.Greater(t, dec.Stats.WastedDecodeTokens, int64(0))
}

// TestDisaggDeterminism: the same inputs give the same results.
func TestDisaggDeterminism(t *testing.T) {
	run := func() string {
		pre := defaultFleet(2)
		dc := defaultDisagg(3)
		dc.Decode.Replica.KVBlocks = 800
		eng, f := disaggFleet(t, pre, dc)
		reqs := randomWorkload(rand.New(rand.NewPCG(8, 9)), 400, 25, true)
		require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
		eng.Schedule(4*sim.Second, sim.PriorityFailure, func(now sim.Time) {
			f.Disagg.Decode.Replicas[1].Fail(now, engine.FailCrashed)
			f.Disagg.Decode.Replicas[1].Recover(now, sim.Second, nil)
		})
		eng.Run(sim.Forever)
		return fmt.Sprintf("%+v %v %v %v %d", f.Disagg.Stats, f.Rec.TTFT.Quantile(0.99), f.Rec.TPOT.Mean(), f.Disagg.Split.DecodeWait.Mean(), eng.Fired())
	}
	require.Equal(t, run(), run())
}

// TestDisaggValidation: a link the topology does not have, a GPU without
// NICs, a decode pool that cannot hold the model, a model mismatch.
func TestDisaggValidation(t *testing.T) {
	cat := hw.NewCatalog()
	noNIC := cat.GPUs["H100"]
	noNIC.Name, noNIC.NICBytesPerS = "H100-nonic", 0
	cat.GPUs[noNIC.Name] = noNIC
	for _, tc := range []struct {
		name string
		pre  func(*FleetConfig)
		dc   func(*DisaggConfig)
		key  string
		msg  string
	}{
		{"nvlink across servers", func(c *FleetConfig) { c.TP = 8 }, func(d *DisaggConfig) { d.Link = LinkNVLink },
			"disagg.link", "do not share an NVLink domain"},
		{"no NIC", func(c *FleetConfig) { c.GPU = noNIC.Name; c.TP = 8 }, func(d *DisaggConfig) { d.Decode.GPU = noNIC.Name },
			"disagg.link", "no NIC bandwidth"},
		{"decode cannot hold the model", func(c *FleetConfig) { c.Model = "llama-3-70b"; c.TP = 8 }, func(d *DisaggConfig) { d.Decode.TP = 1 },
			"disagg.decode.model", "does not fit"},
		{"model mismatch", nil, func(d *DisaggConfig) { d.Decode.Model = "llama-3-70b"; d.Decode.TP = 8 },
			"disagg.decode.model", "must be the prefill pool's model"},
		{"bad link", nil, func(d *DisaggConfig) { d.Link = "carrier-pigeon" }, "disagg.link", "carrier-pigeon"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pre := defaultFleet(2)
			if tc.pre != nil {
				tc.pre(&pre)
			}
			dc := defaultDisagg(2)
			if tc.dc != nil {
				tc.dc(&dc)
			}
			dc.ResolveDefaults(pre)
			var ps config.Problems
			dc.Validate(cat, pre, "disagg", &ps)
			require.Error(t, ps.Err())
			found := false
			for _, p := range ps.List {
				if p.Key == tc.key {
					require.Contains(t, p.Msg, tc.msg)
					found = true
				}
			}
			require.True(t, found, "%v", ps.List)
		})
	}
	// Sound configurations pass: TP=2 pools on one server over NVLink.
	pre := defaultFleet(2)
	pre.TP = 2
	dc := defaultDisagg(2)
	dc.Link = LinkNVLink
	dc.ResolveDefaults(pre)
	var ps config.Problems
	dc.Validate(cat, pre, "disagg", &ps)
	require.NoError(t, ps.Err())
}

var _ = workloads.Request{}

// TestDisaggTransferAwareDecodeChoice: with TP=2 pools on 8-GPU servers,
// two decode replicas share the prefill pool's server (NVLink) and two sit
// on the next one (RDMA). Choosing where the KV lands first sends more
// transfers over NVLink than least-outstanding routing does, and shortens
// the transfer stage.
func TestDisaggTransferAwareDecodeChoice(t *testing.T) {
	run := func(choice string) *Disagg {
		pre := defaultFleet(2)
		pre.TP = 2
		dc := defaultDisagg(4)
		dc.DecodeChoice = choice
		eng, f := disaggFleet(t, pre, dc)
		var recs []TransferRecord
		f.Disagg.OnTransfer = func(tr TransferRecord) { recs = append(recs, tr) }
		reqs := randomWorkload(rand.New(rand.NewPCG(21, 22)), 400, 20, false)
		require.NoError(t, f.Start(&sliceSource{reqs: reqs}))
		for eng.Step() {
			checkDisagg(t, f, choice)
		}
		require.EqualValues(t, len(reqs), f.Rec.Completed)
		checkTransfers(t, recs, 0)
		return f.Disagg
	}
	rt, ta := run(DecodeRouter), run(DecodeTransferAware)
	share := func(d *Disagg) float64 {
		return float64(d.Stats.TransfersByLink[linkNVLink]) / float64(d.Stats.Transfers)
	}
	t.Logf("NVLink share %.2f → %.2f, transfer stage %.3f → %.3f ms", share(rt), share(ta), rt.Split.Transfer.Mean(), ta.Split.Transfer.Mean())
	require.Positive(t, rt.Stats.TransfersByLink[linkRDMA], "the topology has both links")
	require.Greater(t, share(ta), share(rt)+0.2)
	require.Less(t, ta.Split.Transfer.Mean(), rt.Split.Transfer.Mean())
}
