package sim

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"
)

// Action is what an event does when it fires. now is the event's time, which
// is also Engine.Now() during the call. Hot paths should store an Action once
// (e.g. a method value kept in a struct field) rather than build a closure per
// event.
type Action func(now Time)

// Priority breaks ties between events at the same time: lower fires first.
// Only the low 8 bits are used.
type Priority uint8

// Common priorities. Failures take effect before anything else at the same
// instant, arrivals before the steps that might admit them.
const (
	PriorityFailure Priority = 10
	PriorityArrival Priority = 50
	PriorityNormal  Priority = 100
	PriorityStep    Priority = 150
	PriorityMetrics Priority = 250
)

// EventID names a scheduled event so that it can be cancelled. The zero
// EventID names no event; cancelling it is a no-op.
type EventID struct {
	ev  uint32 // the event's record index, plus one
	key uint64 // its sort key (priority<<56 | sequence): unique per Schedule
}

const seqBits = 56

// Engine is a discrete-event scheduler. Events fire in (time, priority,
// sequence) order, sequence being the order of scheduling, so runs are
// deterministic. The queue is a radix heap (radix.go): O(1) amortized
// scheduling and popping. Cancellation is O(1) (lazy deletion); cancelled
// entries are dropped when they reach the top or when they outnumber live
// ones.
//
// Firing reads nothing but the queue and one bit. Each pending event holds
// a record; its bit in live says whether it is still to fire (cleared by
// Cancel and when it fires), and the record holds the event's key, which
// Cancel compares with the EventID's to refuse stale IDs, and its action.
// The queued slot carries the action too, as the address of its closure
// (slot.fn, a uintptr: no pointer in the queue, so the garbage collector
// never scans it); the record's copy keeps the closure alive until the slot
// has fired (Go's collector does not move heap objects). The flags are small
// enough to stay in cache (32 KB at 10^5 pending), where reading a record at
// every pop was one cache miss per event; records are only written on the
// hot path, and in index order (Schedule takes the first free one from a
// cursor, allocRecSlow), so that consecutive events share their cache lines.
type Engine struct {
	now       Time
	seq       uint64
	q         radixQueue
	recs      []record  // recs[i]: the event holding record i (valid while used); len a power of two
	bits      []recBits // per 64 records: which are live, which used
	cursor    uint32    // where Schedule looks for a free record first
	recMask   uint32    // len(recs) − 1, kept (computing it in Schedule cost the hold model 6 instructions an event)
	used      int       // records used
	cancelled int
	fired     uint64
	lastFired Time
	stopped   bool
	tm        timers // timer.go
}

// record is a queued event's key and action (see Engine).
type record struct {
	key uint64
	act Action
}

// recBits are the flags of 64 records: bit i of live says that record i's
// event is queued and not cancelled, bit i of used that a queued slot holds
// it (live, or cancelled and not yet dropped). Side by side, so that firing
// clears both in one cache line.
type recBits struct{ live, used uint64 }

// minRecs is the number of records an engine starts with (one word of
// flags).
const minRecs = 64

// funcAddr is the address of act's closure, the one word a func value is.
func funcAddr(act Action) uintptr { return *(*uintptr)(unsafe.Pointer(&act)) }

// funcAt is the func value whose closure is at addr, which a record keeps
// alive (see Engine).
func funcAt(addr uintptr) Action { return *(*Action)(unsafe.Pointer(&addr)) }

// NewEngine returns an engine at time 0 with an empty queue.
func NewEngine() *Engine {
	e := &Engine{recs: make([]record, minRecs), bits: make([]recBits, minRecs/64), recMask: minRecs - 1}
	e.tm.init()
	return e
}

// Now is the current simulated time.
func (e *Engine) Now() Time { return e.now }

// LastFired is the time of the most recent event fired (0 before any).
// Unlike Now it does not move when Run stops at its until time.
func (e *Engine) LastFired() Time { return e.lastFired }

// Fired is the number of events fired so far.
func (e *Engine) Fired() uint64 { return e.fired }

// Pending is the number of live (not cancelled) events in the queue.
func (e *Engine) Pending() int { return e.q.len() - e.cancelled + e.tm.armed }

// Schedule queues act to fire at time at with priority p and returns its ID.
// Scheduling into the past is a bug in the caller: it panics.
func (e *Engine) Schedule(at Time, p Priority, act Action) EventID {
	if at < e.now {
		panic(fmt.Sprintf("sim: schedule at %v before now %v", at, e.now))
	}
	if act == nil {
		panic("sim: schedule nil action")
	}
	if at == Forever {
		panic("sim: schedule at Forever")
	}
	// A free record: the first at or after the cursor (allocRecSlow).
	i := e.cursor
	bw := &e.bits[i>>6]
	if m := ^bw.used >> (i & 63); m != 0 {
		i += uint32(bits.TrailingZeros64(m))
	} else {
		i = e.allocRecSlow()
		bw = &e.bits[i>>6]
	}
	e.cursor = (i + 1) & e.recMask
	e.used++
	e.seq++
	if e.seq >= 1<<seqBits {
		panic("sim: sequence overflow")
	}
	key := uint64(p)<<seqBits | e.seq
	e.recs[i] = record{key: key, act: act}
	bit := uint64(1) << (i & 63)
	bw.used |= bit
	bw.live |= bit
	e.q.push(slot{at: at, key: key, fn: funcAddr(act), ev: i})
	return EventID{ev: i + 1, key: key}
}

// After queues act to fire d after now.
func (e *Engine) After(d Time, p Priority, act Action) EventID {
	return e.Schedule(e.now+d, p, act)
}

// allocRecSlow returns a free record for Schedule when the cursor's word
// has none at or after it: the first of the next word that has one, after
// doubling the records when at least 7/8 of them are used (so that one is
// near: a word then has 8 free on average). Schedule takes records in
// index order from the cursor, wrapping around, rather than the one freed
// last first: that one is most often the event firing now, whose record
// was written when it was scheduled, long since out of the cache at 10^5
// pending, where writing it cost a cache miss per event (a third of the
// hold model's time); in index order, consecutive events share the
// records' cache lines.
func (e *Engine) allocRecSlow() uint32 {
	n := len(e.recs)
	if 8*e.used >= 7*n {
		if n >= math.MaxUint32/2 {
			panic("sim: too many pending events")
		}
		e.recs = append(e.recs, make([]record, n)...)
		e.bits = append(e.bits, make([]recBits, n/64)...)
		e.recMask = uint32(2*n - 1)
		return uint32(n)
	}
	w := int(e.cursor >> 6)
	for {
		w = (w + 1) & (len(e.bits) - 1)
		if m := ^e.bits[w].used; m != 0 {
			return uint32(w<<6 + bits.TrailingZeros64(m))
		}
	}
}

// freeRec frees record i, no longer live.
func (e *Engine) freeRec(i uint32) {
	e.bits[i>>6].used &^= 1 << (i & 63)
	e.used--
}

// isLive reports whether record i's event is queued and not cancelled.
func (e *Engine) isLive(i uint32) bool { return e.bits[i>>6].live&(1<<(i&63)) != 0 }

// Cancel removes the event if it is still pending and reports whether it was.
// Cancelling a fired, already-cancelled or zero ID does nothing.
func (e *Engine) Cancel(id EventID) bool {
	if id.ev == 0 || int(id.ev) > len(e.recs) {
		return false
	}
	i := id.ev - 1
	if e.recs[i].key != id.key || !e.isLive(i) {
		return false
	}
	e.bits[i>>6].live &^= 1 << (i & 63)
	e.cancelled++
	if e.cancelled > 1024 && e.cancelled > e.q.len()/2 {
		e.compact()
	}
	return true
}

// Stop makes Run return after the event now firing.
func (e *Engine) Stop() { e.stopped = true }

// Run fires events in order until the queue is empty, Stop is called, or the
// next event lies after until; events at exactly until fire. On return Now()
// is until when until is finite and Run was not stopped (so time-weighted
// statistics can close there), else the time of the last event fired. until
// before Now() is a bug in the caller: it panics.
func (e *Engine) Run(until Time) {
	if until < e.now {
		panic(fmt.Sprintf("sim: run until %v before now %v", until, e.now))
	}
	e.stopped = false
	q := &e.q
	for !e.stopped {
		if q.n == 0 {
			if e.tm.armed == 0 {
				break
			}
			if e.tm.root().at > until {
				e.now = until
				return
			}
			e.fireTimer()
			continue
		}
		// The common case by hand (the compiler inlines neither top nor
		// popTop): the minimum is cur's last slot.
		n := len(q.cur)
		if n == 0 || len(q.side) > 0 {
			top := q.topSlow()
			if !e.isLive(top.ev) {
				e.freeRec(q.popTop().ev)
				e.cancelled--
				continue
			}
			if t := e.tm.root(); t.at < top.at || t.at == top.at && t.key < top.key {
				if t.at > until {
					e.now = until
					return
				}
				e.fireTimer()
				continue
			}
			if top.at > until {
				e.now = until
				return
			}
			e.fire(q.popTop())
			continue
		}
		s := q.cur[n-1]
		if e.cancelled != 0 && !e.isLive(s.ev) { // (with none cancelled, every slot is live)
			q.cur = q.cur[:n-1]
			q.n--
			e.freeRec(s.ev)
			e.cancelled--
			continue
		}
		// A timer's event first? (An unarmed tree's root is at Forever.)
		if t := e.tm.root(); t.at < s.at || t.at == s.at && t.key < s.key {
			if t.at > until {
				e.now = until
				return
			}
			e.fireTimer()
			continue
		}
		if s.at > until {
			e.now = until
			return
		}
		q.cur = q.cur[:n-1]
		q.n--
		// e.fire(s), by hand: fire does not inline, and the call cost the
		// hold model 11 of its 375 instructions per event. Keep the two alike.
		e.now = s.at
		act := funcAt(s.fn)
		w := &e.bits[s.ev>>6]
		m := ^(uint64(1) << (s.ev & 63))
		w.live &= m
		w.used &= m
		e.used--
		e.fired++
		e.lastFired = s.at
		act(s.at)
	}
	if !e.stopped && until != Forever && e.now < until {
		e.now = until
	}
}

// Step fires the next live event, if any, and reports whether one fired.
func (e *Engine) Step() bool {
	switch t := e.NextTime(); {
	case t == Forever:
		return false
	case e.timerNext():
		e.fireTimer()
	default:
		e.fire(e.q.pop())
	}
	return true
}

// timerNext reports whether the next event is a timer's; the queue's top
// must be live (after NextTime) or the queue empty.
func (e *Engine) timerNext() bool {
	r := e.tm.root()
	if r.key == unarmedKey {
		return false
	}
	if e.q.len() == 0 {
		return true
	}
	s := e.q.top()
	return r.at < s.at || r.at == s.at && r.key < s.key
}

// fire runs a popped live event's action at its time. Its record is freed
// first (the action may schedule into it): the action, held here from then
// on, stays alive. (Run's common case repeats it by hand.)
func (e *Engine) fire(s slot) {
	e.now = s.at
	act := funcAt(s.fn)
	m := ^(uint64(1) << (s.ev & 63))
	w := &e.bits[s.ev>>6]
	w.live &= m
	w.used &= m
	e.used--
	e.fired++
	e.lastFired = s.at
	act(s.at)
}

// NextTime is the time of the next live event, or Forever if none.
func (e *Engine) NextTime() Time {
	for e.q.len() > 0 && !e.isLive(e.q.top().ev) {
		e.freeRec(e.q.pop().ev)
		e.cancelled--
	}
	next := Forever
	if e.q.len() > 0 {
		next = e.q.top().at
	}
	e.tm.settle() // (from inside a timer's action: its fired event is not next)
	if e.tm.armed > 0 {
		next = min(next, e.tm.root().at)
	}
	return next
}

// compact drops cancelled entries.
func (e *Engine) compact() {
	e.q.filter(func(s *slot) bool {
		if !e.isLive(s.ev) {
			e.freeRec(s.ev)
			return false
		}
		return true
	})
	e.cancelled = 0
}
