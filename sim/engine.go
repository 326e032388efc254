package sim

import (
	"fmt"
	"math"
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
	ev  uint32 // index into Engine.events, plus one
	gen uint64
}

type event struct {
	act       Action
	gen       uint64 // bumped at each reuse, so stale IDs cannot cancel
	cancelled bool
}

const seqBits = 56

// Engine is a discrete-event scheduler. Events fire in (time, priority,
// sequence) order, sequence being the order of scheduling, so runs are
// deterministic. The queue is a radix heap (radix.go): O(1) amortized
// scheduling and popping. Cancellation is O(1) (lazy deletion); cancelled
// entries are dropped when they reach the top or when they outnumber live
// ones.
type Engine struct {
	now       Time
	seq       uint64
	q         radixQueue
	events    []event  // every event record, live or free; slots index it
	free      []uint32 // indices of free records
	cancelled int
	fired     uint64
	lastFired Time
	stopped   bool
}

// NewEngine returns an engine at time 0 with an empty queue.
func NewEngine() *Engine { return &Engine{} }

// Now is the current simulated time.
func (e *Engine) Now() Time { return e.now }

// LastFired is the time of the most recent event fired (0 before any).
// Unlike Now it does not move when Run stops at its until time.
func (e *Engine) LastFired() Time { return e.lastFired }

// Fired is the number of events fired so far.
func (e *Engine) Fired() uint64 { return e.fired }

// Pending is the number of live (not cancelled) events in the queue.
func (e *Engine) Pending() int { return e.q.len() - e.cancelled }

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
	var i uint32
	if n := len(e.free); n > 0 {
		i = e.free[n-1]
		e.free = e.free[:n-1]
	} else {
		if len(e.events) == math.MaxUint32-1 {
			panic("sim: too many pending events")
		}
		i = uint32(len(e.events))
		e.events = append(e.events, event{})
	}
	ev := &e.events[i]
	ev.act = act
	ev.cancelled = false
	e.seq++
	if e.seq >= 1<<seqBits {
		panic("sim: sequence overflow")
	}
	e.q.push(slot{at: at, key: uint64(p)<<seqBits | e.seq, ev: i})
	return EventID{ev: i + 1, gen: ev.gen}
}

// After queues act to fire d after now.
func (e *Engine) After(d Time, p Priority, act Action) EventID {
	return e.Schedule(e.now+d, p, act)
}

// Cancel removes the event if it is still pending and reports whether it was.
// Cancelling a fired, already-cancelled or zero ID does nothing.
func (e *Engine) Cancel(id EventID) bool {
	if id.ev == 0 || int(id.ev) > len(e.events) {
		return false
	}
	ev := &e.events[id.ev-1]
	if ev.gen != id.gen || ev.cancelled {
		return false
	}
	ev.cancelled = true
	ev.act = nil
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
	for e.q.len() > 0 && !e.stopped {
		top := e.q.top()
		if e.events[top.ev].cancelled {
			e.release(e.q.pop().ev)
			e.cancelled--
			continue
		}
		if top.at > until {
			e.now = until
			return
		}
		e.fire(e.q.pop())
	}
	if !e.stopped && until != Forever && e.now < until {
		e.now = until
	}
}

// Step fires the next live event, if any, and reports whether one fired.
func (e *Engine) Step() bool {
	if e.NextTime() == Forever {
		return false
	}
	e.fire(e.q.pop())
	return true
}

// fire runs a popped live event's action at its time.
func (e *Engine) fire(s slot) {
	e.now = s.at
	act := e.events[s.ev].act
	e.release(s.ev)
	e.fired++
	e.lastFired = s.at
	act(s.at)
}

// NextTime is the time of the next live event, or Forever if none.
func (e *Engine) NextTime() Time {
	for e.q.len() > 0 && e.events[e.q.top().ev].cancelled {
		e.release(e.q.pop().ev)
		e.cancelled--
	}
	if e.q.len() == 0 {
		return Forever
	}
	return e.q.top().at
}

func (e *Engine) release(i uint32) {
	ev := &e.events[i]
	ev.gen++
	ev.act = nil
	ev.cancelled = false
	e.free = append(e.free, i)
}

// compact drops cancelled entries.
func (e *Engine) compact() {
	e.q.filter(func(s *slot) bool {
		if e.events[s.ev].cancelled {
			e.release(s.ev)
			return false
		}
		return true
	})
	e.cancelled = 0
}
