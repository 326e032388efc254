package fleet

import (
	"github.com/fleetsim/fleetsim/internal/heapx"
	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/sim"
)

// QueuePolicy is how the gateway binds requests to replicas.
//
// Early binding (the zero value) routes every request to a replica when it
// arrives; it waits in that replica's queue. Late binding holds requests at
// the gateway while no replica has a free slot, in one queue of its own
// order, and sends the next one when a slot frees: the flow control of the
// Kubernetes inference gateway, llm-d and Dynamo. A replica has a free slot
// when it is available, no request waits in its own queue, and fewer than
// Slots (default: its max_seqs) are outstanding on it. With c replicas of
// one slot and exponential service it is the M/M/c queue (Erlang C).
type QueuePolicy struct {
	Late bool
	// ShortestFirst orders the queue by prompt length (shortest first,
	// then arrival); otherwise first come, first served.
	ShortestFirst bool
	// Slots per replica; 0: the replica's max_seqs.
	Slots int
	// MaxQueued sheds a request that arrives to find this many waiting;
	// 0: no cap (run.max_in_flight bounds the run).
	MaxQueued int
	// RecheckNs is how often a non-empty queue is re-checked when no
	// request ends (replicas down, starting or scaled up free slots
	// without a completion).
	RecheckNs sim.Time
}

// queued is a client request waiting at the gateway; gen is its record's
// generation when it was queued (a record released meanwhile, by a client
// timeout, is skipped).
type queued struct {
	cr  *clientReq
	gen uint64
	seq uint64
	in  int32
}

// gatewayQueue is the late-binding queue: a heap in the policy's order.
type gatewayQueue struct {
	h       []queued
	seq     uint64
	live    int  // requests waiting (h may also hold stale entries)
	pending bool // a drain is scheduled
	recheck bool // a recheck timer is armed
}

func (q *gatewayQueue) less(shortest bool) func(a, b *queued) bool {
	if shortest {
		return func(a, b *queued) bool {
			if a.in != b.in {
				return a.in < b.in
			}
			return a.seq < b.seq
		}
	}
	return func(a, b *queued) bool { return a.seq < b.seq }
}

// hasSlot says whether primary replica i can take one more request under
// late binding.
func (g *Gateway) hasSlot(i int) bool {
	st := &g.pool.states[i]
	if !st.Available || st.Waiting > 0 {
		return false
	}
	slots := g.pol.Queue.Slots
	if slots <= 0 {
		slots = g.pool.Replicas[i].Config().MaxSeqs
	}
	return st.Outstanding < slots
}

// sendOrQueue sends a copy of cr (avoiding replica avoid, -1: none), or,
// under late binding when no replica has a free slot, queues it at the
// gateway; false when it can be neither (the queue is full, or early
// binding found no replica).
func (g *Gateway) sendOrQueue(cr *clientReq, kind engine.CopyKind, avoid int, now sim.Time) bool {
	if !g.pol.Queue.Late {
		return g.sendAvoiding(cr, kind, avoid)
	}
	return g.sendOrQueueLate(cr, kind, avoid, now)
}

// sendOrQueueLate is sendOrQueue under late binding.
func (g *Gateway) sendOrQueueLate(cr *clientReq, kind engine.CopyKind, avoid int, now sim.Time) bool {
	q := &g.q
	if q.live == 0 && g.sendAvoiding(cr, kind, avoid) {
		return true
	}
	if m := g.pol.Queue.MaxQueued; m > 0 && q.live >= m {
		return false
	}
	q.seq++
	cr.queued = true
	heapx.Push(&q.h, queued{cr: cr, gen: cr.gen, seq: q.seq, in: cr.req.InputTokens}, q.less(g.pol.Queue.ShortestFirst))
	q.live++
	g.GW.Queued++
	g.armRecheck(now)
	return true
}

// unqueue takes cr out of the queue's count when it leaves other than by
// being sent (a client timeout); its heap entry goes stale.
func (g *Gateway) unqueue(cr *clientReq) {
	if cr.queued {
		cr.queued = false
		g.q.live--
	}
}

// wake schedules a drain of the queue at now, after the event that freed a
// slot has finished its bookkeeping; one at a time. (Inlined where a
// request ends: a no-op without a queue.)
func (g *Gateway) wake(now sim.Time) {
	if g.q.live > 0 && !g.q.pending {
		g.scheduleDrain(now)
	}
}

func (g *Gateway) scheduleDrain(now sim.Time) {
	q := &g.q
	q.pending = true
	g.eng.Schedule(now, sim.PriorityNormal, func(at sim.Time) {
		q.pending = false
		g.drain(at)
	})
}

// armRecheck re-checks a non-empty queue every RecheckNs while it is.
func (g *Gateway) armRecheck(now sim.Time) {
	q := &g.q
	if q.recheck || g.pol.Queue.RecheckNs <= 0 {
		return
	}
	q.recheck = true
	g.eng.Schedule(now+g.pol.Queue.RecheckNs, sim.PriorityNormal, func(at sim.Time) {
		q.recheck = false
		g.drain(at)
		if q.live > 0 {
			g.armRecheck(at)
		}
	})
}

// drain sends queued requests, in the queue's order, while replicas have
// free slots. The head waits when none has (head-of-line: a fleet of
// several models queues them together).
func (g *Gateway) drain(now sim.Time) {
	q := &g.q
	less := q.less(g.pol.Queue.ShortestFirst)
	for len(q.h) > 0 {
		top := q.h[0]
		if top.cr.gen != top.gen || !top.cr.queued {
			heapx.Pop(&q.h, less) // released or sent meanwhile
			continue
		}
		cr := top.cr
		kind := engine.CopyPrimary
		if cr.attempts > 0 {
			kind = engine.CopyRetry
		}
		if !g.sendAvoiding(cr, kind, -1) {
			return
		}
		heapx.Pop(&q.h, less)
		cr.queued = false
		q.live--
		if kind == engine.CopyPrimary {
			g.startHedge(cr, now)
		}
	}
}
