package fleet

import (
	"fmt"

	"github.com/fleetsim/fleetsim/models/engine"
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// clientReq is a client request in flight at the gateway.
type clientReq struct {
	req       workloads.Request
	copies    []*engine.Copy // live copies
	attempts  int            // copies sent
	firstSeen bool
	started   bool // tied requests: a copy was admitted into a batch
	last      int  // replica of the last copy that failed (retries avoid it)

	// timers (cancelled when the request ends, so a recycled record is
	// never touched by a stale one); armed is set once any was scheduled
	// (most requests arm none: then nothing is checked)
	timeout, deadline, hedge, retry sim.EventID
	armed                           bool

	// queued: waiting in the gateway's late-binding queue; gen counts the
	// record's reuses (a queue entry of an earlier use is stale).
	queued bool
	gen    uint64
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
	Queued          int64 // requests that waited in the late-binding queue (QueuePolicy)
	Ejections       int64 // replicas taken out of rotation by probes
	// Isolation is the time from a replica's first fault to its leaving
	// rotation (breaker open or probe ejection), per isolated fault.
	IsolationNs []int64
}

// Gateway is the fleet's front door: it routes each client request to a
// replica of the pool and applies the request policies (admission, client
// timeouts, hedges and tied requests, retries, circuit breakers, the
// fallback pool, a rollout's traffic split). It is the replicas' Observer:
// it hears every copy start, stream, finish or fail, and reports finished
// client requests to the Recorder. Its records (client requests, copies)
// are pooled, so steady-state routing allocates nothing.
type Gateway struct {
	eng    *sim.Engine
	pool   *Pool
	router Router
	rec    *Recorder
	ro     *rollout // nil without a rollout
	pol    Policies
	onTTFT func(ms float64) // sees each completed request's TTFT (the autoscaler)

	// riChecked is set once route has checked whether router is an
	// IndexedRouter (and started the pool's index if so); ri is then the
	// pool's index, nil if route asks the router.
	riChecked bool
	ri        *routeIndex

	// GW counts copies, hedges, retries and cancellations.
	GW GatewayStats

	// Fallback is a secondary pool that takes what the primary cannot
	// (Fleet.AddFallback; empty without), routed by fbRouter.
	Fallback *Pool
	fbRouter Router
	// pools are the fleet's pools in the order of their replicas' fleet
	// indices (Pool.Base): the primary, the fallback, a disaggregated
	// fleet's decode pool.
	pools  []*Pool
	disagg *Disagg // a disaggregated fleet's handoff; nil when co-located

	spareCR   []*clientReq
	spareCopy []*engine.Copy

	q gatewayQueue // late binding's queue (Policies.Queue)

	fanK int // sub-requests per client request (fanout.go); 0: no fan-out
}

var _ engine.Observer = (*Gateway)(nil)

// route chooses the replica for req in the pool's snapshot: by the router,
// or for an IndexedRouter from the pool's index (the same decision,
// without the O(replicas) scan).
func (g *Gateway) route(req *workloads.Request) (int, bool) {
	p := g.pool
	if !g.riChecked {
		g.riChecked = true
		if ir, ok := g.router.(IndexedRouter); ok && p.indexRoutes(ir.IndexKey()) {
			g.ri = p.ri
		}
	}
	if g.ri != nil && g.ri.wide == 0 {
		if c := g.ri.cnt; c != nil && !CheckOutstandingIndex {
			return c.first() // least(), inline
		}
		i, ok := g.ri.least()
		if CheckOutstandingIndex {
			if wi, wok := g.router.Route(req, p.states); wi != i || wok != ok {
				panic(fmt.Sprintf("models: %v routing index chose %d, %v; the router %d, %v", g.ri.key, i, ok, wi, wok))
			}
		}
		return i, ok
	}
	return g.router.Route(req, p.states)
}

// CheckOutstandingIndex makes every decision the gateway takes from its
// routing index (least-outstanding, least-kv, weighted-least-outstanding:
// IndexedRouter) also ask the router, and panic if they differ. For tests
// only (it puts the O(replicas) scan back).
var CheckOutstandingIndex = false

func newGateway(eng *sim.Engine, pool *Pool, router Router, rec *Recorder) *Gateway {
	fb := newPool(eng, 0)
	return &Gateway{eng: eng, pool: pool, router: router, rec: rec, Fallback: fb, pools: []*Pool{pool, fb}}
}

// accept takes a new client request arriving now: it is counted, then
// admitted (or deferred, or shed) and sent; a fan-out's sub-requests each
// (acceptFanOut).
func (g *Gateway) accept(req *workloads.Request, now sim.Time) {
	if g.fanK > 1 {
		g.acceptFanOut(req, now)
		return
	}
	g.acceptOne(req, now)
}

func (g *Gateway) acceptOne(req *workloads.Request, now sim.Time) {
	g.rec.arrive(req, now)
	if g.pol.Retry != nil {
		g.pol.Retry.Observe(now)
	}
	cr := g.newClientReq(req)
	g.admit(cr, now, 0)
}

// newClientReq takes a client request record from the pool.
func (g *Gateway) newClientReq(req *workloads.Request) *clientReq {
	var cr *clientReq
	if n := len(g.spareCR); n > 0 {
		cr = g.spareCR[n-1]
		g.spareCR = g.spareCR[:n-1]
	} else {
		cr = &clientReq{}
	}
	cr.req = *req
	return cr
}

func (g *Gateway) releaseClientReq(cr *clientReq) {
	g.unqueue(cr)
	cr.gen++
	if cr.armed {
		cancelTimer(g.eng, cr.timeout)
		cancelTimer(g.eng, cr.deadline)
		cancelTimer(g.eng, cr.hedge)
		cancelTimer(g.eng, cr.retry)
		cr.timeout, cr.deadline, cr.hedge, cr.retry = sim.EventID{}, sim.EventID{}, sim.EventID{}, sim.EventID{}
		cr.armed = false
	}
	for _, c := range cr.copies {
		g.releaseCopy(c)
	}
	// Every field as a zero record's but req, which newClientReq
	// overwrites (zeroing its 64 bytes here too was a bulk write per
	// request; until then it holds a finished request that nothing reads).
	// The timers are zero unless armed (above).
	cr.copies = cr.copies[:0]
	cr.attempts, cr.last = 0, 0
	cr.firstSeen, cr.started = false, false
	g.spareCR = append(g.spareCR, cr)
}

func (g *Gateway) newCopy(cr *clientReq, kind engine.CopyKind) *engine.Copy {
	var c *engine.Copy
	if n := len(g.spareCopy); n > 0 {
		c = g.spareCopy[n-1]
		g.spareCopy = g.spareCopy[:n-1]
	} else {
		c = &engine.Copy{}
	}
	*c = engine.Copy{Req: &cr.req, Kind: kind, SentAt: g.eng.Now(), Client: cr, Gen: c.Gen}
	cr.copies = append(cr.copies, c)
	cr.attempts++
	g.GW.Copies++
	return c
}

// cancelTimer cancels a request's timer if one is armed (most requests
// arm none: without timeouts, hedges or retries the call is skipped).
func cancelTimer(eng *sim.Engine, id sim.EventID) {
	if id != (sim.EventID{}) {
		eng.Cancel(id)
	}
}

func (g *Gateway) releaseCopy(c *engine.Copy) {
	*c = engine.Copy{Gen: c.Gen + 1}
	g.spareCopy = append(g.spareCopy, c)
}

// clientOf is the client request c is a copy of (nil once released).
func clientOf(c *engine.Copy) *clientReq {
	cr, _ := c.Client.(*clientReq)
	return cr
}

// dropCopy removes c from its request's live copies (not yet released).
func dropCopy(cr *clientReq, c *engine.Copy) {
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
func (g *Gateway) FirstToken(c *engine.Copy, at sim.Time) {
	cr := clientOf(c)
	if cr.firstSeen {
		return
	}
	cr.firstSeen = true
	if cr.armed || len(cr.copies) > 1 || g.pol.Hedge != nil {
		g.firstToken(c, at)
	} // else nothing to cancel, observe or withdraw (most requests): FirstToken inlines
}

// firstToken is FirstToken's work for a request with a timer armed, a
// hedging policy or more than one copy.
func (g *Gateway) firstToken(c *engine.Copy, at sim.Time) {
	cr := clientOf(c)
	if cr.armed {
		cancelTimer(g.eng, cr.hedge)
		cancelTimer(g.eng, cr.timeout) // the client's deadline is for the first token
	}
	if g.pol.Hedge != nil {
		if ph, ok := g.pol.Hedge.(PromptHedger); ok {
			ph.ObserveFor(at, cr.req.InputTokens, (at - c.SentAt).Milliseconds())
		} else {
			g.pol.Hedge.Observe(at, (at - cr.req.Arrival).Milliseconds())
		}
	}
	if len(cr.copies) > 1 { // else c is the only copy: none to withdraw
		g.withdrawOthers(cr, c)
	}
}

// CopyStarted implements Observer: for tied requests, the first copy
// admitted into a batch withdraws the others.
func (g *Gateway) CopyStarted(c *engine.Copy, at sim.Time) {
	if g.pol.Hedge != nil { // else nothing to do (most fleets): CopyStarted inlines
		g.copyStarted(c)
	}
}

// copyStarted is CopyStarted under a hedging policy.
func (g *Gateway) copyStarted(c *engine.Copy) {
	cr := clientOf(c)
	if cr.started || !g.pol.Hedge.Tied() {
		return
	}
	cr.started = true
	g.withdrawOthers(cr, c)
}

// withdrawOthers cancels every live copy of cr but c.
func (g *Gateway) withdrawOthers(cr *clientReq, c *engine.Copy) {
	for i := 0; i < len(cr.copies); {
		o := cr.copies[i]
		if o == c {
			i++
			continue
		}
		g.replicaAt(o.Replica).Cancel(o)
		g.GW.Cancelled++
		dropCopy(cr, o)
		g.releaseCopy(o)
	}
	g.wake(g.eng.Now()) // the withdrawn copies' slots are free
}

// CopyDone implements Observer: the client request completes.
func (g *Gateway) CopyDone(c *engine.Copy, o *engine.Outcome) {
	now := o.Finished
	g.wake(now)
	if g.ro != nil && g.ro.outcome(c.Replica, now, (o.FirstToken-c.SentAt).Milliseconds()) {
		g.CopyFailed(c, now, FailNewVersion)
		return
	}
	// The breaker's latency rule looks at time to first token: end-to-end
	// latency grows with output length, not with the replica's health.
	if g.pol.Breaker != nil {
		g.recordBreaker(c.Replica, now, true, (o.FirstToken - c.SentAt).Milliseconds())
	}
	if g.pol.Admit != nil {
		g.pol.Admit.Observe(now, (o.FirstToken - o.Req.Arrival).Milliseconds())
	}
	if g.onTTFT != nil {
		g.onTTFT((o.FirstToken - o.Req.Arrival).Milliseconds())
	}
	g.rec.RequestDone(o)
	g.releaseClientReq(clientOf(c))
}

// CopyFailed implements Observer: the client request fails when its last
// live copy fails.
func (g *Gateway) CopyFailed(c *engine.Copy, at sim.Time, reason string) {
	cr := clientOf(c)
	g.wake(at)
	if g.ro != nil && reason != FailNewVersion && reason != FailSpot {
		// (The provider taking a spot instance back is no build's fault:
		// the judge does not count it against either version.)
		g.ro.failed(c.Replica, at)
	}
	g.recordBreaker(c.Replica, at, false, (at - c.SentAt).Milliseconds())
	cr.last = c.Replica
	dropCopy(cr, c)
	g.releaseCopy(c)
	if len(cr.copies) > 0 {
		return
	}
	// A request longer than the model's context window fails the same way
	// everywhere: it is not retried.
	if g.pol.Retry != nil && reason != engine.FailContext {
		if backoff, ok := g.pol.Retry.Retry(cr.attempts, reason, at); ok {
			cr.firstSeen, cr.started = false, false
			g.eng.Cancel(cr.hedge)
			cr.armed = true
			cr.retry = g.eng.Schedule(at+backoff, sim.PriorityNormal, func(now sim.Time) {
				cr.retry = sim.EventID{}
				g.GW.Retries++
				if !g.sendOrQueue(cr, engine.CopyRetry, cr.last, now) {
					g.rec.RequestFailed(&cr.req, cr.last, now, reason)
					g.releaseClientReq(cr)
				}
			})
			return
		}
	}
	g.rec.RequestFailed(&cr.req, c.Replica, at, reason)
	g.releaseClientReq(cr)
}

// send routes a new copy of cr and submits it; false if no replica can
// take it. Replicas whose breaker is half-open take only what their
// breaker admits.
func (g *Gateway) send(cr *clientReq, kind engine.CopyKind) bool {
	return g.sendAvoiding(cr, kind, -1)
}

// sendAvoiding is send that also avoids replica avoid (-1: none) and the
// replicas already holding a copy of cr.
func (g *Gateway) sendAvoiding(cr *clientReq, kind engine.CopyKind, avoid int) bool {
	p := g.pool
	if avoid < 0 && len(cr.copies) == 0 && p.model == nil && g.ro == nil && g.pol.Breaker == nil && !g.pol.Queue.Late {
		// Nothing to hide and no breaker to ask (a first copy without
		// rollout, breakers or a model mix): the loop below would route
		// once and send; do that without its bookkeeping.
		i, ok := g.route(&cr.req)
		if !ok || i < 0 || i >= len(p.Replicas) {
			return g.sendFallback(cr, kind)
		}
		p.Replicas[i].Submit(g.newCopy(cr, kind))
		return true
	}
	var hidden [8]int
	masked := hidden[:0]
	hide := func(i int) {
		if i >= 0 && i < len(p.states) && p.states[i].Available { // fallback replicas are not in the snapshot
			p.states[i].Available = false
			p.fixIndex(i)
			masked = append(masked, i)
		}
	}
	defer func() {
		for _, i := range masked {
			p.states[i].Available = true
			p.fixIndex(i)
		}
	}()
	hide(avoid)
	for _, c := range cr.copies {
		hide(c.Replica)
	}
	if g.pol.Queue.Late {
		// Late binding: only replicas with a free slot (O(replicas)).
		for i := range p.Replicas {
			if !g.hasSlot(i) {
				hide(i)
			}
		}
	}
	if p.model != nil {
		// A fleet of several models: only the request's model's replicas.
		for i, m := range p.model {
			if m != cr.req.Model {
				hide(i)
			}
		}
	}
	masked = g.ro.split(masked)
	now := g.eng.Now()
	for tries := 0; tries <= len(p.Replicas); tries++ {
		i, ok := g.route(&cr.req)
		if !ok || i < 0 || i >= len(p.Replicas) {
			return g.sendFallback(cr, kind)
		}
		if p.breakerRefuses(i, now) {
			hide(i)
			continue
		}
		c := g.newCopy(cr, kind)
		p.Replicas[i].Submit(c)
		return true
	}
	return false
}

// replicaAt is replica i of the fleet, in the pool whose fleet indices
// hold it. The pools follow each other: the primary pool's, then the
// fallback pool's.
func (g *Gateway) replicaAt(i int) *engine.Replica {
	for _, p := range g.pools {
		if j := i - p.Base; j < len(p.Replicas) {
			return p.Replicas[j]
		}
	}
	panic(fmt.Sprintf("models: replica %d is in no pool of the fleet", i))
}

// sendFallback sends a copy to the fallback pool (a secondary pool, maybe
// a smaller model) when the primary pool has no replica that can take it.
func (g *Gateway) sendFallback(cr *clientReq, kind engine.CopyKind) bool {
	fb := g.Fallback
	if len(fb.Replicas) == 0 {
		return false
	}
	j, ok := g.fbRouter.Route(&cr.req, fb.states)
	if !ok || j < 0 || j >= len(fb.Replicas) {
		return false
	}
	c := g.newCopy(cr, kind)
	g.GW.Fallbacks++
	fb.Replicas[j].Submit(c) // sets c.Replica to fb.Base+j
	return true
}
