package engine

import "github.com/fleetsim/fleetsim/sim"

// outbox holds what a replica owes its observer until its state is
// settled for the event (flush): the observer calls, and the sequences to
// recycle once those calls no longer name them; and the recycled ones.
type outbox struct {
	notes   []note   // held observer calls, in order
	reasons []string // the reasons of the noteFailed notes, in order (kept apart: notes stay 24 bytes)
	later   []*seq   // sequences to recycle after the notes are delivered
	spare   []*seq   // recycled sequences: no allocation per request
	out     Outcome  // the Outcome of the CopyDone call under way
}

// note is a deferred observer call. A noteFailed note's reason is the
// next of outbox.reasons (failNote).
type note struct {
	kind uint8 // noteStarted, noteFirst, noteDone, noteDoneInBatch, noteFailed
	s    *seq
	at   sim.Time
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
		if u := float64(r.kv.Used()) / float64(t); u != r.state.KVUtilization {
			r.state.KVUtilization = u
			if r.riKV {
				r.ri.Fix(r.idx) // least-kv's index (the others' keys do not read it)
			}
		}
	}
	failed := 0                         // noteFailed notes delivered
	for i := 0; i < len(r.notes); i++ { // the observer may add notes
		n := &r.notes[i] // (not copied; should the observer's notes grow the list, n still reads the old array, unchanged)
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
			s, o := n.s, &r.out
			// The last token lags behind the step planned after the one
			// that sampled it, as the first did behind its own.
			s.outcome(o, r.idx, n.at, r.clientDelay+s.lag, r.clientDelay+r.lagNow(n.at))
			s.cp.seq = nil
			kind := n.kind
			r.obs.CopyDone(s.cp, o)
			if kind == noteDone {
				// Its last note, delivered: nothing names s once CopyDone
				// has returned (the Outcome is read during the call), so
				// it goes back to the spares now, not through later.
				r.reuse(s)
			}
		case noteFailed:
			s, reason := n.s, r.reasons[failed]
			failed++
			s.cp.seq = nil
			r.obs.CopyFailed(s.cp, n.at, reason)
			r.recycle(s)
		}
	}
	// The delivered notes and recycled sequences are not cleared: every
	// sequence they name is kept for reuse (spare) or still running, so
	// clearing would free nothing and cost a bulk write-barrier call per
	// event.
	r.notes = r.notes[:0]
	if failed > 0 {
		clear(r.reasons) // (strings: let them go)
		r.reasons = r.reasons[:0]
	}
	if len(r.later) > 0 {
		for _, s := range r.later {
			r.reuse(s)
		}
		r.later = r.later[:0]
	}
}

// outcome writes s's Outcome, finished at at on replica idx whose tokens
// reach the client delay after their step, into o: every field, in place (a
// composite literal is built on the stack, then copied with a bulk write
// barrier check).
func (s *seq) outcome(o *Outcome, idx int, at, delay, finishDelay sim.Time) {
	o.Copy, o.Req, o.Replica = s.cp, &s.req, idx
	o.Enqueued, o.Scheduled, o.FirstToken, o.Finished = s.enqueued, s.sched, s.first, at
	// A stream's tokens reach the client in order: a run's mean step (the
	// first token's lag) can exceed the step that then sampled the last.
	// A one-token stream's last token is its first.
	if finishDelay = max(finishDelay, s.first+delay-at); s.first == at {
		finishDelay = delay
	}
	o.CachedTokens, o.Preemptions, o.ClientDelay, o.FinishDelay = s.cachedFirst, s.preempts, delay, finishDelay
}

// failNote holds the observer's CopyFailed call for s.
func (o *outbox) failNote(s *seq, at sim.Time, reason string) {
	o.notes = append(o.notes, note{kind: noteFailed, s: s, at: at})
	o.reasons = append(o.reasons, reason)
}

// newSeq takes a sequence from the spares, or allocates one.
func (o *outbox) newSeq() *seq {
	if n := len(o.spare); n > 0 {
		s := o.spare[n-1]
		o.spare = o.spare[:n-1]
		return s
	}
	return &seq{}
}

// recycle keeps a finished sequence (holding no KV) for reuse, once the
// held observer calls that may still name it are delivered (flush).
func (o *outbox) recycle(s *seq) {
	o.later = append(o.later, s)
}

// reuse puts a sequence back among the spares.
func (o *outbox) reuse(s *seq) {
	entries := s.entries[:0]
	*s = seq{seqKV: seqKV{entries: entries}}
	o.spare = append(o.spare, s)
}
