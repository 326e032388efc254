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
	seq *seq // set while a replica holds the copy
}

// clientReq is a client request in flight at the gateway.
type clientReq struct {
	req       workloads.Request
	copies    []*Copy // live copies
	attempts  int     // copies sent
	firstSeen bool
}

// GatewayStats counts what the gateway did beyond plain routing.
type GatewayStats struct {
	Copies    int64 // copies sent, all kinds
	Hedges    int64
	Retries   int64
	Cancelled int64 // copies withdrawn (losing hedges, timeouts)
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
	*c = Copy{Req: &cr.req, Kind: kind, SentAt: f.eng.Now(), cr: cr}
	cr.copies = append(cr.copies, c)
	cr.attempts++
	f.GW.Copies++
	return c
}

func (f *Fleet) releaseCopy(c *Copy) {
	*c = Copy{}
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
	for i := 0; i < len(cr.copies); {
		o := cr.copies[i]
		if o == c {
			i++
			continue
		}
		f.Replicas[o.Replica].Cancel(o)
		f.GW.Cancelled++
		dropCopy(cr, o)
		f.releaseCopy(o)
	}
}

// CopyDone implements Observer: the client request completes.
func (f *Fleet) CopyDone(c *Copy, o *Outcome) {
	f.Rec.RequestDone(o)
	f.releaseClientReq(c.cr)
}

// CopyFailed implements Observer: the client request fails when its last
// live copy fails.
func (f *Fleet) CopyFailed(c *Copy, at sim.Time, reason string) {
	cr := c.cr
	dropCopy(cr, c)
	f.releaseCopy(c)
	if len(cr.copies) > 0 {
		return
	}
	f.Rec.RequestFailed(&cr.req, c.Replica, at, reason)
	f.releaseClientReq(cr)
}

// send routes a new copy of cr and submits it, or sheds the request when
// no replica can take it and no other copy is live.
func (f *Fleet) send(cr *clientReq, kind CopyKind) bool {
	i, ok := f.router.Route(&cr.req, f.states)
	if !ok || i < 0 || i >= len(f.Replicas) {
		return false
	}
	c := f.newCopy(cr, kind)
	f.Replicas[i].Submit(c)
	return true
}
