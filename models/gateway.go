package models

import (
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// CopyKind says why a copy of a client request was sent.
type CopyKind uint8

// Copy kinds.
const (
	CopyPrimary CopyKind = iota
	CopyHedge
	CopyRetry
)

// Copy is one copy of a client request sent to a replica: the primary, a
// hedge or a retry. A client request completes with its first copy to
// finish, and fails when its last copy fails and no retry follows.
type Copy struct {
	Req     *workloads.Request // the client request (shared by its copies)
	Replica int
	Kind    CopyKind
	SentAt  sim.Time

	cr  *clientReq
	seq *seq   // set while a replica holds the copy
	gen uint32 // bumped when the record is released, so stale callbacks can tell
}

// clientReq is a client request in flight at the gateway.
type clientReq struct {
	req       workloads.Request
	copies    []*Copy // live copies
	attempts  int     // copies sent
	firstSeen bool
	started   bool // tied requests: a copy was admitted into a batch
	last      int  // replica of the last copy that failed (retries avoid it)

	// timers (cancelled when the request ends, so a recycled record is
	// never touched by a stale one)
	timeout, deadline, hedge, retry sim.EventID
}

// GatewayStats counts what the gateway did beyond plain routing.
type GatewayStats struct {
	Copies    int64 // copies sent, all kinds
	Hedges    int64
	Retries   int64
	Cancelled int64 // copies withdrawn (losing hedges, timeouts)
	Timeouts  int64 // client requests failed by the client timeout
	Probes    int64 // health probes run
	// ProbeGPUSeconds is what deep probes cost: their canned inferences'
	// time × the GPUs of the replica.
	ProbeGPUSeconds float64
	Fallbacks       int64 // copies sent to the fallback pool
	Deferred        int64 // admission refusals that held a request at the gateway
	Ejections       int64 // replicas taken out of rotation by probes
	// Isolation is the time from a replica's first fault to its leaving
	// rotation (breaker open or probe ejection), per isolated fault.
	IsolationNs []int64
}

// newClientReq takes a client request record from the pool.
func (f *Fleet) newClientReq(req *workloads.Request) *clientReq {
	var cr *clientReq
	if n := len(f.spareCR); n > 0 {
		cr = f.spareCR[n-1]
		f.spareCR = f.spareCR[:n-1]
	} else {
		cr = &clientReq{}
	}
	cr.req = *req
	return cr
}

func (f *Fleet) releaseClientReq(cr *clientReq) {
	f.eng.Cancel(cr.timeout)
	f.eng.Cancel(cr.deadline)
	f.eng.Cancel(cr.hedge)
	f.eng.Cancel(cr.retry)
	for _, c := range cr.copies {
		f.releaseCopy(c)
	}
	copies := cr.copies[:0]
	*cr = clientReq{copies: copies}
	f.spareCR = append(f.spareCR, cr)
}

func (f *Fleet) newCopy(cr *clientReq, kind CopyKind) *Copy {
	var c *Copy
	if n := len(f.spareCopy); n > 0 {
		c = f.spareCopy[n-1]
		f.spareCopy = f.spareCopy[:n-1]
	} else {
		c = &Copy{}
	}
	*c = Copy{Req: &cr.req, Kind: kind, SentAt: f.eng.Now(), cr: cr, gen: c.gen}
	cr.copies = append(cr.copies, c)
	cr.attempts++
	f.GW.Copies++
	return c
}

func (f *Fleet) releaseCopy(c *Copy) {
	*c = Copy{gen: c.gen + 1}
	f.spareCopy = append(f.spareCopy, c)
}

// dropCopy removes c from its request's live copies (not yet released).
func dropCopy(cr *clientReq, c *Copy) {
	for i, x := range cr.copies {
		if x == c {
			copy(cr.copies[i:], cr.copies[i+1:])
			cr.copies[len(cr.copies)-1] = nil
			cr.copies = cr.copies[:len(cr.copies)-1]
			return
		}
	}
}

// FirstToken implements Observer: the first copy to stream wins; the
// others are withdrawn and their work counted as wasted.
func (f *Fleet) FirstToken(c *Copy, at sim.Time) {
	cr := c.cr
	if cr.firstSeen {
		return
	}
	cr.firstSeen = true
	f.eng.Cancel(cr.hedge)
	f.eng.Cancel(cr.timeout) // the client's deadline is for the first token
	if f.pol.Hedge != nil {
		f.pol.Hedge.Observe(at, (at - cr.req.Arrival).Milliseconds())
	}
	f.withdrawOthers(cr, c)
}

// CopyStarted implements Observer: for tied requests, the first copy
// admitted into a batch withdraws the others.
func (f *Fleet) CopyStarted(c *Copy, at sim.Time) {
	cr := c.cr
	if cr.started || f.pol.Hedge == nil || !f.pol.Hedge.Tied() {
		return
	}
	cr.started = true
	f.withdrawOthers(cr, c)
}

// withdrawOthers cancels every live copy of cr but c.
func (f *Fleet) withdrawOthers(cr *clientReq, c *Copy) {
	for i := 0; i < len(cr.copies); {
		o := cr.copies[i]
		if o == c {
			i++
			continue
		}
		f.replicaAt(o.Replica).Cancel(o)
		f.GW.Cancelled++
		dropCopy(cr, o)
		f.releaseCopy(o)
	}
}

// CopyDone implements Observer: the client request completes.
func (f *Fleet) CopyDone(c *Copy, o *Outcome) {
	now := o.Finished
	if f.ro != nil && f.rolloutOutcome(c.Replica, now, (o.FirstToken-c.SentAt).Milliseconds()) {
		f.CopyFailed(c, now, FailNewVersion)
		return
	}
	// The breaker's latency rule looks at time to first token: end-to-end
	// latency grows with output length, not with the replica's health.
	f.recordBreaker(c.Replica, now, true, (o.FirstToken - c.SentAt).Milliseconds())
	if f.pol.Admit != nil {
		f.pol.Admit.Observe(now, (o.FirstToken - o.Req.Arrival).Milliseconds())
	}
	f.Rec.RequestDone(o)
	f.releaseClientReq(c.cr)
}

// CopyFailed implements Observer: the client request fails when its last
// live copy fails.
func (f *Fleet) CopyFailed(c *Copy, at sim.Time, reason string) {
	cr := c.cr
	if f.ro != nil && reason != FailNewVersion {
		f.rolloutFailed(c.Replica, at)
	}
	f.recordBreaker(c.Replica, at, false, (at - c.SentAt).Milliseconds())
	cr.last = c.Replica
	dropCopy(cr, c)
	f.releaseCopy(c)
	if len(cr.copies) > 0 {
		return
	}
	// A request longer than the model's context window fails the same way
	// everywhere: it is not retried.
	if f.pol.Retry != nil && reason != FailContext {
		if backoff, ok := f.pol.Retry.Retry(cr.attempts, reason, at); ok {
			cr.firstSeen, cr.started = false, false
			f.eng.Cancel(cr.hedge)
			cr.retry = f.eng.Schedule(at+backoff, sim.PriorityNormal, func(now sim.Time) {
				cr.retry = sim.EventID{}
				f.GW.Retries++
				if !f.sendAvoiding(cr, CopyRetry, cr.last) {
					f.Rec.RequestFailed(&cr.req, cr.last, now, reason)
					f.releaseClientReq(cr)
				}
			})
			return
		}
	}
	f.Rec.RequestFailed(&cr.req, c.Replica, at, reason)
	f.releaseClientReq(cr)
}

// send routes a new copy of cr and submits it; false if no replica can
// take it. Replicas whose breaker is half-open take only what their
// breaker admits.
func (f *Fleet) send(cr *clientReq, kind CopyKind) bool {
	return f.sendAvoiding(cr, kind, -1)
}

// sendAvoiding is send that also avoids replica avoid (-1: none) and the
// replicas already holding a copy of cr.
func (f *Fleet) sendAvoiding(cr *clientReq, kind CopyKind, avoid int) bool {
	var hidden [8]int
	masked := hidden[:0]
	hide := func(i int) {
		if i >= 0 && i < len(f.states) && f.states[i].Available { // fallback replicas are not in the snapshot
			f.states[i].Available = false
			masked = append(masked, i)
		}
	}
	defer func() {
		for _, i := range masked {
			f.states[i].Available = true
		}
	}()
	hide(avoid)
	for _, c := range cr.copies {
		hide(c.Replica)
	}
	masked = f.rolloutPool(masked)
	now := f.eng.Now()
	for tries := 0; tries <= len(f.Replicas); tries++ {
		i, ok := f.router.Route(&cr.req, f.states)
		if !ok || i < 0 || i >= len(f.Replicas) {
			return f.sendFallback(cr, kind)
		}
		if f.pol.Breaker != nil && f.brk[i] == BreakerHalfOpen && !f.pol.Breaker.Admit(i, now) {
			hide(i)
			continue
		}
		c := f.newCopy(cr, kind)
		f.Replicas[i].Submit(c)
		return true
	}
	return false
}

// replicaAt is replica i of the fleet: the primary pool's, then the
// fallback pool's.
func (f *Fleet) replicaAt(i int) *Replica {
	if i < len(f.Replicas) {
		return f.Replicas[i]
	}
	return f.Fallback[i-len(f.Replicas)]
}

// sendFallback sends a copy to the fallback pool (a secondary pool, maybe
// a smaller model) when the primary pool has no replica that can take it.
func (f *Fleet) sendFallback(cr *clientReq, kind CopyKind) bool {
	if len(f.Fallback) == 0 {
		return false
	}
	j, ok := f.fbRouter.Route(&cr.req, f.fbStates)
	if !ok || j < 0 || j >= len(f.Fallback) {
		return false
	}
	c := f.newCopy(cr, kind)
	f.GW.Fallbacks++
	f.Fallback[j].Submit(c) // sets c.Replica to len(f.Replicas)+j
	return true
}
