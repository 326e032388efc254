package workloads

import (
	"github.com/fleetsim/fleetsim/internal/heapx"
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/sim"
)

// sessionSource emits multi-turn sessions (kinds "sessions" and "agentic").
//
// Sessions start at the arrivals of an ArrivalProcess. A session has T turns
// (drawn once from turns); turn 1 arrives when the session starts, turn k+1
// arrives a think time (exponential, mean thinkMean) after turn k arrived.
// The workload is open loop: the think time includes the time the serving
// side takes to answer. Turn k's prompt is
//
//	system prompt + (u_1 + o_1) + ... + (u_{k-1} + o_{k-1}) + u_k
//
// where u_j (the new user message or tool result) is drawn from input and
// o_j (the answer) from output. Its Prefix is turn k-1's Prefix followed by
// ContinuationSegment(turn k-1), so the prefix ends at the last SegmentTokens
// boundary of turn k-1's prompt + answer and the rest is the unique tail. A
// session ends after T turns or, earlier, when the next prompt would exceed
// maxInput tokens (the first turn is cut to maxInput instead).
//
// Pending turns wait in a min-heap ordered by (arrival, sequence), so
// requests come out in non-decreasing arrival order however many sessions
// interleave; at equal times pending turns go before a new session's first
// turn. Memory is O(live sessions · turns) segments; turns of a session share
// one Prefix backing array (each request's slice has cap == len).
type sessionSource struct {
	arrival                        ArrivalProcess
	input, output, turns           LengthDist
	thinkMeanS                     float64
	maxInput                       int64
	prompts                        *systemPrompts
	arrivalRng, inputRng           *rand.Rand
	outputRng, promptRng, turnsRng *rand.Rand
	thinkRng                       *rand.Rand

	nextStart   sim.Time // arrival of the next new session
	started     bool
	nextID      uint64
	nextSession uint64
	seq         uint64
	pending     turnHeap
}

// pendingTurn is the next turn of a live session.
type pendingTurn struct {
	at        sim.Time
	seq       uint64 // tie-break: order of scheduling
	session   uint64
	turn      int32     // 1-based turn number
	turnsLeft int32     // including this one, >= 1
	context   int64     // tokens before the new message: system prompt + history
	prefix    []Segment // this turn's Prefix (len == cap not required; sliced on emit)
}

func (s *sessionSource) Next() (Request, error) {
	if !s.started {
		s.started = true
		s.nextStart = s.arrival.NextArrival(s.arrivalRng, 0)
	}
	for {
		var t pendingTurn
		if len(s.pending) > 0 && s.pending[0].at <= s.nextStart {
			t = s.pending.pop()
		} else {
			t = s.startSession()
		}
		if r, ok := s.emit(t); ok {
			return r, nil
		}
	}
}

// startSession returns the first turn of a session starting at s.nextStart
// and draws the start of the one after.
func (s *sessionSource) startSession() pendingTurn {
	s.nextSession++
	t := pendingTurn{
		at:        s.nextStart,
		session:   s.nextSession,
		turn:      1,
		turnsLeft: s.turns.Sample(s.turnsRng),
	}
	if s.prompts != nil {
		t.prefix = s.prompts.choose(s.promptRng) // cap == len: appends copy
		t.context = int64(s.prompts.tokens)
	}
	s.nextStart = s.arrival.NextArrival(s.arrivalRng, s.nextStart)
	return t
}

// emit turns t into a request and schedules the session's next turn. It
// returns false (emitting nothing) when the session's context is full.
func (s *sessionSource) emit(t pendingTurn) (Request, bool) {
	in := t.context + int64(s.input.Sample(s.inputRng))
	out := s.output.Sample(s.outputRng)
	if in > s.maxInput {
		if t.turn > 1 {
			return Request{}, false
		}
		in = s.maxInput
	}
	n := len(t.prefix)
	s.nextID++
	r := Request{
		ID:           s.nextID,
		Arrival:      t.at,
		InputTokens:  int32(in),
		OutputTokens: out,
		Prefix:       t.prefix[:n:n],
		Session:      t.session,
	}
	if n == 0 {
		r.Prefix = nil
	}
	if t.turnsLeft > 1 {
		next := t
		next.turn++
		next.turnsLeft--
		next.context = in + int64(out)
		if c := ContinuationSegment(&r); c.Tokens > 0 {
			next.prefix = append(t.prefix, c)
		}
		next.at = addSeconds(t.at, s.thinkMeanS*s.thinkRng.ExpFloat64())
		s.seq++
		next.seq = s.seq
		s.pending.push(next)
	}
	return r, true
}

func (s *sessionSource) Close() error { return nil }

// turnHeap is a binary min-heap of pending turns by (at, seq)
// (internal/heapx: no boxing per push; popped slots are zeroed, dropping
// their prefix references).
type turnHeap []pendingTurn

func turnLess(a, b *pendingTurn) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (h *turnHeap) push(t pendingTurn) { heapx.Push((*[]pendingTurn)(h), t, turnLess) }

func (h *turnHeap) pop() pendingTurn { return heapx.Pop((*[]pendingTurn)(h), turnLess) }
