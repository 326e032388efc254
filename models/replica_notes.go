package models

import "github.com/fleetsim/fleetsim/sim"

// note is a deferred observer call.
type note struct {
	kind   uint8 // noteFirst, noteDone, noteFailed
	s      *seq
	at     sim.Time
	reason string
}

const (
	noteFirst uint8 = iota
	noteDone
	noteFailed
	noteStarted
	// noteDoneInBatch is noteDone for a sequence that stays in its static
	// batch as padding: the batch recycles it when it ends.
	noteDoneInBatch
)

// flush delivers the held observer calls, then recycles finished
// sequences.
func (r *Replica) flush() {
	if t := r.kv.Total(); t > 0 {
		r.state.KVUtilization = float64(r.kv.Used()) / float64(t)
	}
	for i := 0; i < len(r.notes); i++ { // the observer may add notes
		n := r.notes[i]
		switch n.kind {
		case noteFirst:
			if !n.s.cancelled {
				r.obs.FirstToken(n.s.cp, n.at)
			}
		case noteStarted:
			if !n.s.cancelled {
				r.obs.CopyStarted(n.s.cp, n.at)
			}
		case noteDone, noteDoneInBatch:
			o := Outcome{Copy: n.s.cp, Req: &n.s.req, Replica: r.idx, Enqueued: n.s.enqueued, Scheduled: n.s.sched,
				FirstToken: n.s.first, Finished: n.at, CachedTokens: n.s.cachedFirst, Preemptions: n.s.preempts}
			r.out = o
			n.s.cp.seq = nil
			r.obs.CopyDone(n.s.cp, &r.out)
			if n.kind == noteDone {
				r.recycle(n.s)
			}
		case noteFailed:
			n.s.cp.seq = nil
			r.obs.CopyFailed(n.s.cp, n.at, n.reason)
			r.recycle(n.s)
		}
	}
	clear(r.notes)
	r.notes = r.notes[:0]
	for _, s := range r.later {
		r.reuse(s)
	}
	clear(r.later)
	r.later = r.later[:0]
}
