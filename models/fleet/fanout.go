package fleet

import (
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/sim/quantile"
	"github.com/fleetsim/fleetsim/workloads"
)

// Fan-out: a client request that is K sub-requests sent at once, complete
// when the last of them is (a search or retrieval fan-out; Dean & Barroso,
// "The Tail at Scale", CACM 2013). The gateway sends each sub-request as
// a request of its own (routed, hedged, retried, counted in every request
// metric); the recorder's FanOutStats follows the client requests. A
// sub-request's ID is its client request's ID × K + j (j < K), so the
// client request is ID / K and nothing maps one to the other.

// FanOutStats are the client requests of a fan-out (Recorder.FanOut).
type FanOutStats struct {
	K int
	// Completed client requests (every sub-request completed) and Failed
	// ones (some sub-request failed or was shed; it ends when its last
	// sub-request does).
	Completed, Failed int64
	// Latency is a completed client request's time from its arrival to
	// its last sub-request's last token at the client, ms.
	Latency *quantile.Sketch
	open    map[uint64]*fanParent
}

type fanParent struct {
	left   int
	failed bool
	last   sim.Time
}

// NewFanOutStats follows client requests of k sub-requests.
func NewFanOutStats(k int) *FanOutStats {
	return &FanOutStats{K: k, Latency: quantile.New(), open: map[uint64]*fanParent{}}
}

// Open is the client requests some, not all, of whose sub-requests have
// ended (those none of whose have are not followed yet).
func (f *FanOutStats) Open() int { return len(f.open) }

// end records sub-request req's end at the client at time at (ok: it
// completed), and says whether that ended its client request, and when.
func (f *FanOutStats) end(req *workloads.Request, at sim.Time, ok bool) (ended bool, when sim.Time) {
	id := req.ID / uint64(f.K)
	p := f.open[id]
	if p == nil {
		p = &fanParent{left: f.K}
		f.open[id] = p
	}
	p.left--
	p.failed = p.failed || !ok
	p.last = max(p.last, at)
	if p.left > 0 {
		return false, 0
	}
	delete(f.open, id)
	if p.failed {
		f.Failed++
		return true, p.last
	}
	f.Completed++
	f.Latency.Add((p.last - req.Arrival).Milliseconds())
	return true, p.last
}

// clientEnds passes a sub-request's end at at to the recorder's client
// hook (a client's concurrency cap): every end without a fan-out, its
// client request's last one with.
func (m *Recorder) clientEnds(req *workloads.Request, at sim.Time, ok bool) {
	if m.FanOut != nil {
		ended, when := m.FanOut.end(req, at, ok)
		if !ended {
			return
		}
		at = when
	}
	if m.clientEnd != nil {
		m.clientEnd(at)
	}
}

// SetFanOut makes every request the fleet is given a client request of k
// sub-requests (k ≤ 1: none), and its recorder follow them
// (Recorder.FanOut). Call before Start. The requests must have IDs below
// 2^64 / k.
func (f *Fleet) SetFanOut(k int) {
	if k <= 1 {
		return
	}
	f.Gateway.fanK = k
	f.Rec.FanOut = NewFanOutStats(k)
}

// acceptFanOut sends req's k sub-requests (fanout.go).
func (g *Gateway) acceptFanOut(req *workloads.Request, now sim.Time) {
	k := uint64(g.fanK)
	sub := *req
	for j := range k {
		sub.ID = req.ID*k + j
		g.acceptOne(&sub, now)
	}
}
