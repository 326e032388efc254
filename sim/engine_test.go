package sim

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This file tests the engine against a reference queue that keeps every event
// in a slice and fires the minimum by (time, priority, seq) each time: the
// specification of the order, with no heap and no lazy deletion.

// The only two places these tests look inside the engine.

// engQueueLen is the number of queue entries, cancelled ones included.
func engQueueLen(e *Engine) int { return e.q.len() }

// engSameEvent reports whether two IDs name the same (recycled) event record.
func engSameEvent(a, b EventID) bool { return a.ev == b.ev }

// engTestQueue is what the randomized scenario drives: the real engine or the
// reference. Events are named by labels 0, 1, 2, ... in scheduling order.
type engTestQueue interface {
	now() Time
	schedule(at Time, p Priority, label int)
	cancel(label int) bool
	run(until Time)
	step() bool
	stop()
	pending() int
	// Timers (timer.go), named 0, 1, ... in creation order; an event a
	// timer is set to gets a label like any other.
	newTimer()
	setTimer(tmr int, at Time, p Priority, label int)
	stopTimer(tmr int) bool
}

// engAdapter drives the real Engine.
type engAdapter struct {
	t           *testing.T
	e           *Engine
	ids         []EventID
	onFire      func(label int, now Time)
	compactions int
	timers      []Timer
	timerLabel  []int       // the label each timer was last set to (-1: never)
	labelTimer  map[int]int // the timer a timer's label belongs to
}

func (a *engAdapter) now() Time { return a.e.Now() }
func (a *engAdapter) schedule(at Time, p Priority, label int) {
	require.Equal(a.t, len(a.ids), label)
	a.ids = append(a.ids, a.e.Schedule(at, p, func(now Time) {
		if now != a.e.Now() {
			a.t.Fatalf("action now %v != engine Now() %v", now, a.e.Now())
		}
		a.onFire(label, now)
	}))
}
func (a *engAdapter) cancel(label int) bool {
	if tmr, ok := a.labelTimer[label]; ok { // pending while it is the timer's armed label
		if a.timerLabel[tmr] == label && a.e.TimerArmed(a.timers[tmr]) {
			return a.e.StopTimer(a.timers[tmr])
		}
		return false
	}
	before := engQueueLen(a.e)
	ok := a.e.Cancel(a.ids[label])
	if engQueueLen(a.e) < before {
		a.compactions++
	}
	return ok
}
func (a *engAdapter) run(until Time) { a.e.Run(until) }
func (a *engAdapter) step() bool     { return a.e.Step() }
func (a *engAdapter) stop()          { a.e.Stop() }
func (a *engAdapter) pending() int   { return a.e.Pending() }
func (a *engAdapter) newTimer() {
	if len(a.timers) == 0 { // the first, the stream timer (beside the tree); the rest in the tree
		a.timers = append(a.timers, a.e.NewStreamTimer())
		a.timerLabel = append(a.timerLabel, -1)
		return
	}
	a.timers = append(a.timers, a.e.NewTimer())
	a.timerLabel = append(a.timerLabel, -1)
}
func (a *engAdapter) setTimer(tmr int, at Time, p Priority, label int) {
	require.Equal(a.t, len(a.ids), label)
	a.ids = append(a.ids, EventID{})
	if a.labelTimer == nil {
		a.labelTimer = map[int]int{}
	}
	a.labelTimer[label] = tmr
	a.timerLabel[tmr] = label
	a.e.SetTimer(a.timers[tmr], at, p, func(now Time) {
		if now != a.e.Now() {
			a.t.Fatalf("timer action now %v != engine Now() %v", now, a.e.Now())
		}
		a.onFire(label, now)
	})
}
func (a *engAdapter) stopTimer(tmr int) bool { return a.e.StopTimer(a.timers[tmr]) }

// engRef is the reference queue.
type engRef struct {
	clock      Time
	seq        uint64
	events     []*engRefEvent // by label
	stopped    bool
	onFire     func(label int, now Time)
	timerLabel []int
}

type engRefEvent struct {
	at    Time
	p     Priority
	seq   uint64
	label int
	state int // 0 pending, 1 fired, 2 cancelled
}

func engRefOrder(a, b *engRefEvent) int {
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.p, b.p), cmp.Compare(a.seq, b.seq))
}

func (r *engRef) now() Time { return r.clock }
func (r *engRef) schedule(at Time, p Priority, label int) {
	r.seq++
	r.events = append(r.events, &engRefEvent{at: at, p: p, seq: r.seq, label: label})
}
func (r *engRef) cancel(label int) bool {
	if ev := r.events[label]; ev.state == 0 {
		ev.state = 2
		return true
	}
	return false
}
func (r *engRef) next() *engRefEvent {
	var live []*engRefEvent
	for _, ev := range r.events {
		if ev.state == 0 {
			live = append(live, ev)
		}
	}
	if len(live) == 0 {
		return nil
	}
	return slices.MinFunc(live, engRefOrder)
}
func (r *engRef) fire(ev *engRefEvent) {
	ev.state = 1
	r.clock = ev.at
	r.onFire(ev.label, ev.at)
}

// run is the documented contract of Engine.Run: fire every event at or before
// until in order unless stopped; then Now() is until if until is finite and
// the clock has not passed it, else the time of the last event fired.
func (r *engRef) run(until Time) {
	r.stopped = false
	for !r.stopped {
		ev := r.next()
		if ev == nil || ev.at > until {
			break
		}
		r.fire(ev)
	}
	if !r.stopped && until != Forever && r.clock < until {
		r.clock = until
	}
}
func (r *engRef) step() bool {
	ev := r.next()
	if ev == nil {
		return false
	}
	r.fire(ev)
	return true
}
func (r *engRef) stop() { r.stopped = true }

// A timer in the reference is what it stands for: setting it cancels the
// event it last had and schedules the new one.
func (r *engRef) newTimer() { r.timerLabel = append(r.timerLabel, -1) }
func (r *engRef) setTimer(tmr int, at Time, p Priority, label int) {
	if l := r.timerLabel[tmr]; l >= 0 {
		r.cancel(l)
	}
	r.timerLabel[tmr] = label
	r.schedule(at, p, label)
}
func (r *engRef) stopTimer(tmr int) bool {
	if l := r.timerLabel[tmr]; l >= 0 {
		return r.cancel(l)
	}
	return false
}
func (r *engRef) pending() int {
	n := 0
	for _, ev := range r.events {
		if ev.state == 0 {
			n++
		}
	}
	return n
}

// engScenario is a random program of schedules, cancellations, runs, steps
// and stops, some issued from inside actions. Its choices come from its own
// stream in execution order, so the engine and the reference make the same
// choices exactly as long as they fire the same events in the same order; the
// logs are then compared entry by entry.
type engScenario struct {
	r         *rand.Rand
	q         engTestQueue
	log       []string
	labels    int
	maxLabels int
	cancelPct int // chance in % that an action cancels
	burst     int // most cancellations in one top-level op
	spread    int // initial events lie in [0, spread) µs
	timerPct  int // chance in % that an action or op also sets or stops a timer (0: no timers)
	timers    int // timers made so far
	timerOf   map[int]int
}

// timerRandom sets a random timer (sometimes a new one) within spread µs,
// or stops one.
func (s *engScenario) timerRandom(now Time) {
	if s.timers == 0 || s.r.IntN(4) == 0 && s.timers < 64 {
		s.q.newTimer()
		s.timers++
		s.logf("new timer %d", s.timers-1)
	}
	tmr := s.r.IntN(s.timers)
	if s.r.IntN(4) == 0 {
		s.logf("stop timer %d -> %v", tmr, s.q.stopTimer(tmr))
		return
	}
	if s.labels >= s.maxLabels {
		return
	}
	at := now + Time(s.r.IntN(8))*Microsecond
	if s.r.IntN(10) == 0 {
		at = now + Time(s.r.IntN(1000))*Microsecond
	}
	p := engTestPriorities[s.r.IntN(len(engTestPriorities))]
	label := s.labels
	s.labels++
	if s.timerOf == nil {
		s.timerOf = map[int]int{}
	}
	s.timerOf[label] = tmr
	s.logf("set timer %d to %d at %v", tmr, label, at)
	s.q.setTimer(tmr, at, p, label)
}

// setOwnTimer sets again the timer whose event label is firing (a
// replica's step end setting the next), or does nothing if label is not a
// timer's.
func (s *engScenario) setOwnTimer(now Time, label int) {
	tmr, ok := s.timerOf[label]
	if !ok || s.labels >= s.maxLabels {
		return
	}
	at := now + Time(s.r.IntN(8))*Microsecond
	p := engTestPriorities[s.r.IntN(len(engTestPriorities))]
	next := s.labels
	s.labels++
	s.timerOf[next] = tmr
	s.logf("set own timer %d to %d at %v", tmr, next, at)
	s.q.setTimer(tmr, at, p, next)
}

var engTestPriorities = []Priority{0, PriorityFailure, PriorityArrival, PriorityNormal, PriorityNormal, 255}

func (s *engScenario) logf(format string, args ...any) {
	s.log = append(s.log, fmt.Sprintf(format, args...))
}

func (s *engScenario) scheduleRandom(now Time) {
	s.scheduleWithin(now, 8)
}

// scheduleWithin schedules a new event within spread µs of now (delay 0
// schedules at now), or within 1000 µs one time in ten.
func (s *engScenario) scheduleWithin(now Time, spread int) {
	if s.labels >= s.maxLabels {
		return
	}
	// Few distinct times and priorities, so that ties are common and the
	// sequence number decides often.
	at := now + Time(s.r.IntN(spread))*Microsecond
	if s.r.IntN(10) == 0 {
		at = now + Time(s.r.IntN(1000))*Microsecond
	}
	p := engTestPriorities[s.r.IntN(len(engTestPriorities))]
	label := s.labels
	s.labels++
	s.q.schedule(at, p, label)
}

func (s *engScenario) cancelRandom() {
	if s.labels == 0 {
		return
	}
	// Any label ever scheduled: pending, fired or cancelled; old labels'
	// events have usually been recycled, so stale IDs are exercised.
	label := s.r.IntN(s.labels)
	s.logf("cancel %d -> %v", label, s.q.cancel(label))
}

func (s *engScenario) onFire(label int, now Time) {
	s.logf("fire %d at %v (pending %d)", label, now, s.q.pending())
	switch x := s.r.IntN(10); {
	case x < 3: // 0.7 children on average: the run ends
		s.scheduleRandom(now)
	case x < 5:
		s.scheduleRandom(now)
		s.scheduleRandom(now)
	}
	if s.r.IntN(100) < s.cancelPct {
		s.cancelRandom()
	}
	if s.timerPct > 0 {
		if s.r.IntN(3) > 0 {
			s.setOwnTimer(now, label)
		}
		if s.r.IntN(100) < s.timerPct {
			s.timerRandom(now)
		}
	}
	if s.r.IntN(300) == 0 {
		s.logf("stop")
		s.q.stop()
	}
}

func (s *engScenario) play(initial int) {
	for range initial {
		s.scheduleWithin(s.q.now(), s.spread)
	}
	for op := 0; ; op++ {
		switch x := s.r.IntN(10); {
		case x < 4:
			until := s.q.now() + Time(s.r.IntN(20))*Microsecond
			s.q.run(until)
			s.logf("run(%v) now %v", until, s.q.now())
		case x < 6:
			s.logf("step %v now %v", s.q.step(), s.q.now())
		case x < 8:
			for range 1 + s.r.IntN(s.burst) {
				s.cancelRandom()
			}
		default:
			s.scheduleRandom(s.q.now())
		}
		if s.timerPct > 0 && s.r.IntN(100) < s.timerPct {
			s.timerRandom(s.q.now())
		}
		s.logf("pending %d", s.q.pending())
		if s.q.pending() == 0 && op > 10 {
			break
		}
		if op > 200 { // drain
			s.q.run(Forever)
			s.logf("run(Forever) now %v pending %d", s.q.now(), s.q.pending())
			if s.q.pending() == 0 {
				break
			}
		}
	}
}

// engPlay runs scenario sc (its r and q unset) on the engine and on the
// reference, with seed.
func engPlay(t *testing.T, seed uint64, initial int, sc engScenario) (got, want []string, compactions int) {
	eng := &engAdapter{t: t, e: NewEngine()}
	se := sc
	se.r, se.q = rand.New(rand.NewPCG(seed, 1)), eng
	eng.onFire = se.onFire
	se.play(initial)

	ref := &engRef{}
	sr := sc
	sr.r, sr.q = rand.New(rand.NewPCG(seed, 1)), ref
	ref.onFire = sr.onFire
	sr.play(initial)
	return se.log, sr.log, eng.compactions
}

func engRequireSameLog(t *testing.T, seed uint64, got, want []string) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			lo := max(0, i-5)
			t.Fatalf("seed %d: engine and reference diverge at log entry %d:\nengine:    %q\nreference: %q\ncontext (reference):\n%s",
				seed, i, got[i], want[i], strings.Join(want[lo:i], "\n"))
		}
	}
	require.Equal(t, len(want), len(got), "seed %d: log lengths", seed)
}

// TestEngineTimersMatchReferenceRandom adds timers to the random programs:
// set (often from the action of the timer's own event, as a replica's step
// end sets the next), stopped, made mid-run (the tree grows past powers of
// two, and past treeTimers, whose events go to the queue), among cancellations and stale IDs, against the reference, where a
// timer is a schedule that cancels the event the timer last had.
func TestEngineTimersMatchReferenceRandom(t *testing.T) {
	trials := 3000
	if testing.Short() {
		trials = 300
	}
	fired, timerFired := 0, 0
	for seed := range uint64(trials) {
		got, want, _ := engPlay(t, seed, 1+int(seed%37),
			engScenario{maxLabels: 400, cancelPct: 20, burst: 10, spread: 8, timerPct: 20 + int(seed%4)*25})
		engRequireSameLog(t, seed, got, want)
		timerLabels := map[string]bool{}
		for _, l := range want {
			var tmr, label int
			var at string
			if n, _ := fmt.Sscanf(l, "set timer %d to %d at %s", &tmr, &label, &at); n == 3 {
				timerLabels[fmt.Sprint(label)] = true
			}
			if n, _ := fmt.Sscanf(l, "set own timer %d to %d at %s", &tmr, &label, &at); n == 3 {
				timerLabels[fmt.Sprint(label)] = true
			}
			if strings.HasPrefix(l, "fire") {
				fired++
				if f := strings.Fields(l); timerLabels[f[1]] {
					timerFired++
				}
			}
		}
	}
	t.Logf("%d scenarios, %d events fired, %d of them timers'", trials, fired, timerFired)
	assert.Greater(t, fired, 50*trials, "scenarios are not trivial")
	assert.Greater(t, timerFired, 10*trials, "timers fire")
}

func TestEngineMatchesReferenceRandom(t *testing.T) {
	trials := 3000
	if testing.Short() {
		trials = 300
	}
	fired := 0
	for seed := range uint64(trials) {
		got, want, _ := engPlay(t, seed, 1+int(seed%97),
			engScenario{maxLabels: 400, cancelPct: 30, burst: 20, spread: 8})
		engRequireSameLog(t, seed, got, want)
		for _, l := range want {
			if strings.HasPrefix(l, "fire") {
				fired++
			}
		}
	}
	t.Logf("%d scenarios, %d events fired", trials, fired)
	assert.Greater(t, fired, 50*trials, "scenarios are not trivial")
}

// TestEngineMatchesReferenceCompaction uses scenarios with thousands of
// events and heavy cancellation, so that the engine compacts its heap (more
// than 1024 cancelled entries outnumbering live ones) in the middle of runs
// and of actions.
func TestEngineMatchesReferenceCompaction(t *testing.T) {
	compactions := 0
	for seed := range uint64(8) {
		got, want, c := engPlay(t, 1_000_000+seed, 3000,
			engScenario{maxLabels: 6000, cancelPct: 50, burst: 400, spread: 100_000})
		engRequireSameLog(t, 1_000_000+seed, got, want)
		compactions += c
	}
	t.Logf("%d compactions", compactions)
	assert.Positive(t, compactions, "the scenarios must trigger compaction")
}

// engRecorder schedules labelled events on e and records the order they fire.
type engRecorder struct {
	e     *Engine
	fired []string
	times []Time
}

func (r *engRecorder) at(t Time, p Priority, name string) EventID {
	return r.e.Schedule(t, p, func(now Time) {
		r.fired = append(r.fired, name)
		r.times = append(r.times, now)
	})
}

func TestEngineTieOrder(t *testing.T) {
	r := &engRecorder{e: NewEngine()}
	r.at(20, PriorityNormal, "t20")
	r.at(10, PriorityMetrics, "t10-metrics")
	r.at(10, PriorityNormal, "t10-normal-1")
	r.at(10, PriorityFailure, "t10-failure")
	r.at(10, PriorityNormal, "t10-normal-2")
	r.at(10, PriorityArrival, "t10-arrival")
	r.at(0, 255, "t0-255")
	r.at(0, 0, "t0-0")
	r.e.Run(Forever)
	assert.Equal(t, []string{
		"t0-0", "t0-255",
		"t10-failure", "t10-arrival", "t10-normal-1", "t10-normal-2", "t10-metrics",
		"t20",
	}, r.fired)
	assert.Equal(t, uint64(8), r.e.Fired())
	assert.Equal(t, Time(20), r.e.Now(), "Run(Forever) leaves Now() at the last event")
}

func TestEngineScheduleFromAction(t *testing.T) {
	e := NewEngine()
	var order []string
	e.Schedule(5, PriorityNormal, func(now Time) {
		order = append(order, "a")
		// Same time, higher priority than the one firing: still fires next,
		// before later events and before equal-priority events queued earlier.
		e.Schedule(now, PriorityFailure, func(Time) { order = append(order, "a-child-failure") })
		e.Schedule(now, PriorityNormal, func(Time) { order = append(order, "a-child-normal") })
		e.After(0, PriorityMetrics, func(Time) { order = append(order, "a-child-metrics") })
	})
	e.Schedule(5, PriorityNormal, func(Time) { order = append(order, "b") })
	e.Schedule(6, 0, func(Time) { order = append(order, "c") })
	e.Run(Forever)
	assert.Equal(t, []string{"a", "a-child-failure", "b", "a-child-normal", "a-child-metrics", "c"}, order)
}

func TestEngineCancel(t *testing.T) {
	r := &engRecorder{e: NewEngine()}
	e := r.e
	a := r.at(10, PriorityNormal, "a")
	b := r.at(20, PriorityNormal, "b")
	c := r.at(30, PriorityNormal, "c")
	assert.Equal(t, 3, e.Pending())

	assert.True(t, e.Cancel(b))
	assert.False(t, e.Cancel(b), "cancelling twice")
	assert.Equal(t, 2, e.Pending())
	assert.False(t, e.Cancel(EventID{}), "the zero EventID names no event")

	assert.True(t, e.Step())
	assert.Equal(t, []string{"a"}, r.fired)
	assert.False(t, e.Cancel(a), "cancelling after firing")
	assert.Equal(t, 1, e.Pending())

	// Cancel from inside an action: the event that is firing cannot be
	// cancelled any more; a pending one can.
	var selfCancel, otherCancel bool
	var self EventID
	self = e.Schedule(25, PriorityNormal, func(Time) {
		selfCancel = e.Cancel(self)
		otherCancel = e.Cancel(c)
	})
	e.Run(Forever)
	assert.False(t, selfCancel)
	assert.True(t, otherCancel)
	assert.Equal(t, []string{"a"}, r.fired, "cancelled events never fire")
	assert.Equal(t, 0, e.Pending())
	assert.Equal(t, Time(25), e.Now())
}

// engRecycle schedules events at t until one takes the record of old, now
// free (records are taken in index order, wrapping around), each other one
// cancelled and dropped at once, and returns that event's ID.
func engRecycle(t *testing.T, r *engRecorder, old EventID, at Time) EventID {
	for range 2 * minRecs {
		fresh := r.at(at, PriorityNormal, "new")
		if engSameEvent(old, fresh) {
			return fresh
		}
		require.True(t, r.e.Cancel(fresh))
		require.Equal(t, Forever, r.e.NextTime(), "NextTime drops and frees the cancelled entry")
	}
	t.Fatal("the freed record is never taken again")
	return EventID{}
}

func TestEngineCancelStaleGeneration(t *testing.T) {
	t.Run("after firing", func(t *testing.T) {
		r := &engRecorder{e: NewEngine()}
		old := r.at(1, PriorityNormal, "old")
		require.True(t, r.e.Step())
		fresh := engRecycle(t, r, old, 2)
		assert.False(t, r.e.Cancel(old), "a stale ID must not cancel the new event")
		assert.Equal(t, 1, r.e.Pending())
		r.e.Run(Forever)
		assert.Equal(t, []string{"old", "new"}, r.fired)
		assert.False(t, r.e.Cancel(fresh))
	})
	t.Run("after cancelling", func(t *testing.T) {
		r := &engRecorder{e: NewEngine()}
		old := r.at(1, PriorityNormal, "old")
		require.True(t, r.e.Cancel(old))
		require.Equal(t, Forever, r.e.NextTime(), "NextTime drops and frees the cancelled entry")
		engRecycle(t, r, old, 2)
		assert.False(t, r.e.Cancel(old))
		r.e.Run(Forever)
		assert.Equal(t, []string{"new"}, r.fired)
	})
}

func TestEngineSchedulePanics(t *testing.T) {
	e := NewEngine()
	e.Schedule(100, PriorityNormal, func(Time) {})
	e.Run(Forever)
	require.Equal(t, Time(100), e.Now())
	tests := []struct {
		name string
		f    func()
	}{
		{"in the past", func() { e.Schedule(99, PriorityNormal, func(Time) {}) }},
		{"negative delay", func() { e.After(-1, PriorityNormal, func(Time) {}) }},
		{"nil action", func() { e.Schedule(200, PriorityNormal, nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				require.NotNil(t, r, "no panic")
				assert.True(t, strings.HasPrefix(fmt.Sprint(r), "sim: "), "panic %q lacks the sim: prefix", r)
			}()
			tt.f()
		})
	}
	assert.Equal(t, 0, e.Pending(), "nothing was queued")
	assert.NotPanics(t, func() { e.Schedule(100, PriorityNormal, func(Time) {}) }, "scheduling at now is fine")
}

func TestEngineRunUntil(t *testing.T) {
	r := &engRecorder{e: NewEngine()}
	e := r.e
	r.at(10, PriorityNormal, "10")
	r.at(20, PriorityMetrics, "20-late")
	r.at(20, PriorityNormal, "20")
	r.at(30, PriorityNormal, "30")

	e.Run(20)
	assert.Equal(t, []string{"10", "20", "20-late"}, r.fired, "events at exactly until fire")
	assert.Equal(t, Time(20), e.Now())
	assert.Equal(t, 1, e.Pending(), "later events stay queued")

	e.Run(25)
	assert.Len(t, r.fired, 3)
	assert.Equal(t, Time(25), e.Now(), "Now() advances to until even with nothing to fire")
	assert.Equal(t, Time(30), e.NextTime())

	e.Run(50)
	assert.Equal(t, []string{"10", "20", "20-late", "30"}, r.fired)
	assert.Equal(t, Time(50), e.Now(), "an empty queue still advances Now() to a finite until")
	assert.Equal(t, 0, e.Pending())

	e.Run(Forever)
	assert.Equal(t, Time(50), e.Now(), "Run(Forever) on an empty queue leaves the clock alone")

	// A cancelled event before until does not stop the clock from reaching it.
	x := r.at(60, PriorityNormal, "60")
	r.at(70, PriorityNormal, "70")
	e.Cancel(x)
	e.Run(65)
	assert.Equal(t, Time(65), e.Now())
	assert.Len(t, r.fired, 4)
}

func TestEngineStop(t *testing.T) {
	e := NewEngine()
	var fired []Time
	for _, at := range []Time{1, 2, 3, 4} {
		e.Schedule(at, PriorityNormal, func(now Time) {
			fired = append(fired, now)
			if now == 2 {
				e.Stop()
			}
		})
	}
	e.Run(Forever)
	assert.Equal(t, []Time{1, 2}, fired)
	assert.Equal(t, Time(2), e.Now(), "Stop leaves Now() at the stopping event")
	assert.Equal(t, 2, e.Pending())
	e.Run(10)
	assert.Equal(t, []Time{1, 2, 3, 4}, fired, "Run resumes after Stop")
	assert.Equal(t, Time(10), e.Now())
}

func TestEngineStepAndNextTime(t *testing.T) {
	e := NewEngine()
	assert.False(t, e.Step())
	assert.Equal(t, Forever, e.NextTime())
	a := e.Schedule(5, PriorityNormal, func(Time) {})
	e.Schedule(7, PriorityNormal, func(Time) {})
	assert.Equal(t, Time(5), e.NextTime())
	e.Cancel(a)
	assert.Equal(t, Time(7), e.NextTime(), "NextTime skips cancelled events")
	assert.True(t, e.Step())
	assert.Equal(t, Time(7), e.Now())
	assert.False(t, e.Step())
	assert.Equal(t, uint64(1), e.Fired())
}

func TestEngineCompaction(t *testing.T) {
	const n = 10_000
	e := NewEngine()
	r := rand.New(rand.NewPCG(5, 6))
	type sched struct {
		at    Time
		p     Priority
		seq   int
		id    EventID
		label int
	}
	var all []sched
	var fired []int
	for i := range n {
		s := sched{at: Time(r.IntN(1000)), p: Priority(r.IntN(3)), seq: i, label: i}
		s.id = e.Schedule(s.at, s.p, func(Time) { fired = append(fired, i) })
		all = append(all, s)
	}
	// Cancel 90% in random order; compaction must run and keep the heap.
	var live []sched
	for _, i := range r.Perm(n) {
		if i%10 != 0 {
			require.True(t, e.Cancel(all[i].id))
		}
	}
	for _, s := range all {
		if s.label%10 == 0 {
			live = append(live, s)
		}
	}
	assert.Equal(t, n/10, e.Pending())
	assert.Less(t, engQueueLen(e), n/2, "cancelled entries were compacted away")
	for _, s := range all {
		if s.label%10 != 0 {
			assert.False(t, e.Cancel(s.id), "cancelled or compacted IDs stay dead")
		}
	}
	slices.SortFunc(live, func(a, b sched) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.p, b.p), cmp.Compare(a.seq, b.seq))
	})
	want := make([]int, len(live))
	for i, s := range live {
		want[i] = s.label
	}
	e.Run(Forever)
	assert.Equal(t, want, fired)
}

// TestScheduleAfterEarlyStop: Run(until) may look at the next event without
// firing it; an event scheduled afterwards, earlier than that one, must still
// fire first (the radix queue rebases).
func TestScheduleAfterEarlyStop(t *testing.T) {
	e := NewEngine()
	var order []string
	e.Schedule(100, PriorityNormal, func(Time) { order = append(order, "late") })
	e.Schedule(10, PriorityNormal, func(Time) { order = append(order, "first") })
	e.Run(50)
	if e.Now() != 50 {
		t.Fatalf("now %v, want 50", e.Now())
	}
	e.Schedule(60, PriorityNormal, func(Time) { order = append(order, "middle") })
	e.Schedule(60, PriorityFailure, func(Time) { order = append(order, "middle-first") })
	e.Run(Forever)
	want := []string{"first", "middle-first", "middle", "late"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("order %v, want %v", order, want)
	}
}

var (
	sink  []int
	sinkC *[8]uintptr
)

// TestEngineActionsSurviveGC checks that queued actions stay alive while
// only the engine references them: the queue holds their closures'
// addresses as plain integers (slot.fn), and the records keep the closures
// reachable. Each closure owns a heap buffer with a known pattern; after
// several collections (and fresh garbage that would reuse freed memory)
// every action must still see its own pattern, and each must fire once
// (a closure the engine did not keep could also have been left on the
// caller's stack and reused by the next one).
func TestEngineActionsSurviveGC(t *testing.T) {
	e := NewEngine()
	const n = 5000
	fired := 0
	seen := make([]int, n) // each action must fire once, as itself
	for i := range n {
		buf := make([]int, 64)
		for j := range buf {
			buf[j] = i*1000 + j
		}
		e.Schedule(Time(n-i), PriorityNormal, func(Time) {
			for j, v := range buf {
				if v != i*1000+j {
					t.Fatalf("action %d: its buffer changed at %d: %d", i, j, v)
				}
			}
			seen[i]++
			fired++
		})
	}
	for range 4 {
		runtime.GC()
		// Garbage of the buffers' and the closures' sizes, filled, so
		// that a freed buffer or closure would be overwritten.
		for range 4 * n {
			b := make([]int, 64)
			for j := range b {
				b[j] = -1
			}
			c := new([8]uintptr)
			for j := range c {
				c[j] = 1
			}
			sink = b
			sinkC = c
		}
	}
	e.Run(Forever)
	if fired != n {
		t.Fatalf("fired %d of %d", fired, n)
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("action %d fired %d times", i, c)
		}
	}
}

func TestTimerBasics(t *testing.T) {
	e := NewEngine()
	assert.PanicsWithValue(t, "sim: set the zero Timer (make timers with NewTimer)", func() {
		e.SetTimer(Timer{}, 1, PriorityNormal, func(Time) {})
	})
	assert.False(t, e.StopTimer(Timer{}))
	assert.False(t, e.TimerArmed(Timer{}))
	var fired []string
	a, b := e.NewTimer(), e.NewTimer()
	e.Schedule(5, PriorityNormal, func(Time) { fired = append(fired, "q5") })
	e.SetTimer(a, 5, PriorityNormal, func(Time) { fired = append(fired, "a5") }) // after q5: scheduled later
	e.SetTimer(b, 3, PriorityNormal, func(Time) { fired = append(fired, "b3") })
	e.SetTimer(b, 7, PriorityNormal, func(Time) { fired = append(fired, "b7") }) // replaces b3
	assert.Equal(t, 3, e.Pending())
	assert.Equal(t, Time(5), e.NextTime())
	assert.True(t, e.TimerArmed(b))
	e.Run(Forever)
	assert.Equal(t, []string{"q5", "a5", "b7"}, fired)
	assert.Equal(t, 0, e.Pending())
	assert.False(t, e.TimerArmed(a))
	assert.Equal(t, uint64(3), e.Fired())

	// NextTime from inside a timer's action: not the event firing.
	var next []Time
	e.Schedule(12, PriorityNormal, func(Time) {})
	e.SetTimer(b, 20, PriorityNormal, func(Time) {})
	e.SetTimer(a, 10, PriorityNormal, func(Time) {
		next = append(next, e.NextTime())
		e.SetTimer(a, 11, PriorityNormal, func(Time) { next = append(next, e.NextTime()) })
		next = append(next, e.NextTime())
	})
	e.Run(Forever)
	assert.Equal(t, []Time{12, 11, 12}, next)
}

// TestEngineRecordsStayBounded runs a hold model of 1,000
// pending events, each firing one also cancelling a pending timeout and
// scheduling another, and checks that the records, taken in index order
// from a cursor that wraps around, stay at the least power of two of
// which the peak of records in use (pending events plus cancelled ones not
// yet dropped) is less than 7/8, and that every event fired exactly once
// in order.
func TestEngineRecordsStayBounded(t *testing.T) {
	e := NewEngine()
	r := rand.New(rand.NewPCG(5, 6))
	var fired, want int
	var last Time
	var timeout EventID
	var act Action
	act = func(now Time) {
		require.GreaterOrEqual(t, now, last)
		last = now
		fired++
		e.Cancel(timeout)
		timeout = e.Schedule(now+Second, PriorityNormal, func(Time) { t.Fatal("a cancelled timeout fired") })
		if fired+1000 <= 200_000 {
			e.Schedule(now+Time(r.Int64N(int64(Millisecond))), PriorityNormal, act)
			want++
		}
	}
	for range 1000 {
		e.Schedule(Time(r.Int64N(int64(Millisecond))), PriorityNormal, act)
		want++
	}
	peak := 0
	for e.Step() {
		peak = max(peak, e.used)
		if fired == want {
			break
		}
	}
	require.Equal(t, want, fired)
	n := minRecs
	for 8*peak >= 7*n {
		n *= 2
	}
	require.LessOrEqual(t, len(e.recs), n, "records for a peak of %d in use", peak)
	require.Equal(t, len(e.recs)/64, len(e.bits))
}
