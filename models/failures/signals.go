package failures

import (
	"github.com/fleetsim/fleetsim/internal/heapx"
	"github.com/fleetsim/fleetsim/sim"
)

// Signal is either a failure or the precursor seen before one.
type Signal struct {
	// Time is when the signal is seen: Event.Precursor for a precursor,
	// Event.Time for the failure.
	Time      sim.Time
	Precursor bool
	Event     Event
}

// Signals interleaves a source's failures with their precursors in time
// order, so that a consumer that acts on precursors (a proactive drain
// policy) sees each before the failure it announces. It reads ahead of the
// source by at most maxLead (Profile.MaxPrecursorLead) and holds only the
// events inside that window. At equal times precursors come first, then
// signals in the order their events came from the source.
type Signals struct {
	src     Source
	maxLead sim.Time
	pending signalHeap
	lastT   sim.Time // time of the last event read from src
	srcDone bool
	seq     uint64
}

// NewSignals wraps src; maxLead must be at least the longest precursor lead
// in src's events (a shorter one may emit a precursor late, never early).
func NewSignals(src Source, maxLead sim.Time) *Signals {
	return &Signals{src: src, maxLead: max(maxLead, 0)}
}

// Err is the source's error, if any.
func (s *Signals) Err() error { return s.src.Err() }

// Next returns the next signal, ok=false when the source is exhausted and
// every signal has been returned.
func (s *Signals) Next() (Signal, bool) {
	for {
		if len(s.pending) > 0 {
			top := &s.pending[0].sig
			// A later source event has Time >= lastT, so its signals come
			// at >= bound; one exactly at bound can only be a precursor,
			// which goes after a pending precursor (sequence) and before
			// a pending failure.
			bound := s.lastT - s.maxLead
			if s.srcDone || top.Time < bound || (top.Time == bound && top.Precursor) {
				return s.pending.pop().sig, true
			}
		}
		if s.srcDone {
			return Signal{}, false
		}
		ev, ok := s.src.Next()
		if !ok {
			s.srcDone = true
			continue
		}
		s.lastT = ev.Time
		if ev.HasPrecursor() {
			s.seq++
			s.pending.push(pendingSignal{Signal{Time: ev.Precursor, Precursor: true, Event: ev}, s.seq})
		}
		s.seq++
		s.pending.push(pendingSignal{Signal{Time: ev.Time, Event: ev}, s.seq})
	}
}

type pendingSignal struct {
	sig Signal
	seq uint64
}

func (a *pendingSignal) less(b *pendingSignal) bool {
	if a.sig.Time != b.sig.Time {
		return a.sig.Time < b.sig.Time
	}
	if a.sig.Precursor != b.sig.Precursor {
		return a.sig.Precursor
	}
	return a.seq < b.seq
}

type signalHeap []pendingSignal

func (h *signalHeap) push(e pendingSignal) {
	heapx.Push((*[]pendingSignal)(h), e, (*pendingSignal).less)
}

func (h *signalHeap) pop() pendingSignal {
	return heapx.Pop((*[]pendingSignal)(h), (*pendingSignal).less)
}
