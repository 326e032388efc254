package sim

import "fmt"

// Timer names one of the engine's timers (see NewTimer). The zero Timer
// names none.
type Timer struct{ i uint32 } // the timer's number, from 1: its leaf is nodes[size+i−1] (timers.leaf)

// tnode is a node of the timers' winner tree: the event that is least by
// (at, key) in its subtree, and its leaf. Unarmed, at is Forever and key the
// largest, so that it loses every comparison.
type tnode struct {
	at   Time
	key  uint64
	leaf uint32
}

const unarmedKey = ^uint64(0)

// timers are event slots for processes that have at most one event pending
// at a time and move it often: a replica's next step end, the workload's
// next arrival. Each is a leaf of a winner tree (a tournament: node k holds
// a copy of the least event by (at, key) in its subtree, the root node 1),
// so setting or stopping one costs a climb of log2(leaves) comparisons,
// each with the sibling's copy, where the queue costs a push, later a sort
// into its front and a pop, and a cancelled event besides stays queued
// until it is popped. A timer's event takes its key (priority and
// sequence) from the same counter as Schedule's, and Run fires the lesser
// of the queue's minimum and the tree's root, so events fire in exactly
// the order they would have had they all been queued.
//
// One timer, the stream timer (NewStreamTimer), is kept beside the tree
// rather than in it: top is the lesser of the tree's root and it, so
// setting it costs one comparison, not a climb. It is for the process that
// sets its timer most often, the workload's arrivals (a third of a fleet's
// events).
type timers struct {
	top     tnode  // the lesser of treeTop and stream: Run reads it at every event
	tree    tnode  // the tree's root (nodes[1] is not used)
	stream  tnode  // the stream timer's event (leaf streamLeaf)
	strAct  Action // its action
	strMade bool

	nodes  []tnode  // nodes[k], k >= 2: see timers; timer j's leaf at leaf(j), unarmed leaves past the last
	acts   []Action // acts[j]: leaf j's action while armed (and its last one after: kept, not cleared, to spare write barriers)
	size   int      // a power of two >= the timers: the leaves (128 replicas' timers make a tree of 7 levels)
	armed  int
	firing uint32 // the timer whose event is firing (0: none): its leaf's climb waits until the action returns
}

var unarmed = tnode{at: Forever, key: unarmedKey}

// streamLeaf is the stream timer's leaf number (and Timer.i): no tree has
// that many leaves.
const streamLeaf = ^uint32(0)

// setTop makes top the lesser of the tree's root and the stream timer.
func (t *timers) setTop() {
	c, s := t.tree, t.stream
	if s.before(c.at, c.key) { // (conditional moves, as in climb)
		c = s
	}
	t.top = c
}

// climb brings the copies on leaf j's path to the root up to date.
func (t *timers) climb(j uint32) {
	nodes := t.nodes
	k := t.leaf(j)
	c := nodes[k&(len(nodes)-1)]
	for k > 1 {
		s := nodes[(k^1)&(len(nodes)-1)]
		if s.before(c.at, c.key) { // (conditional moves: no branch to mispredict)
			c = s
		}
		k >>= 1
		nodes[k&(len(nodes)-1)] = c
	}
	t.tree = c
	t.setTop()
}

// climbMoved is climb for a tree whose every copy is up to date but leaf
// j's (no climb waits: firing is 0): it stops where the copy it would
// write is the one there, since nothing above can change. (A timer moved
// while it is not the least, e.g. a decode run cut short for a newcomer,
// stops within a few levels.) It repeats climb's loop on purpose: one
// loop with the stop test cost the 70B fleet 1.4% (inlining under the
// profile).
func (t *timers) climbMoved(j uint32) {
	nodes := t.nodes
	k := t.leaf(j)
	c := nodes[k&(len(nodes)-1)]
	for k > 1 {
		s := nodes[(k^1)&(len(nodes)-1)]
		if s.before(c.at, c.key) {
			c = s
		}
		k >>= 1
		n := &nodes[k&(len(nodes)-1)]
		if k > 1 && n.key == c.key && n.at == c.at && n.leaf == c.leaf {
			return
		}
		*n = c
	}
	t.tree = c
	t.setTop()
}

// before reports whether n is ordered before an event at at with key key,
// by (at, key), without a branch (lessBorrow): the branches of the
// spelled-out comparison, mispredicted at about every other level, cost
// the climb more than its loads.
func (n *tnode) before(at Time, key uint64) bool { return lessBorrow(n.at, n.key, at, key) != 0 }

// root is the earliest timer event (unarmed when none is).
func (t *timers) root() *tnode { return &t.top }

// leaf is the node of timer j's leaf. Timers are numbered from 1, so that
// the zero Timer names none, and timer j's leaf is the tree's j-th: no
// leaf is spent on the zero Timer (a sentinel leaf made the 128 timers of
// a 128-replica fleet a tree of 256 leaves, a level more to every climb).
func (t *timers) leaf(j uint32) int { return t.size + int(j) - 1 }

// init makes an empty tree of one leaf, unarmed, for timer 1.
func (t *timers) init() {
	t.size = 1
	t.nodes = []tnode{unarmed, unarmed}
	t.top, t.tree, t.stream = unarmed, unarmed, unarmed
	t.stream.leaf = streamLeaf
	t.acts = []Action{nil}
}

// grow adds a leaf, unarmed, and rebuilds the tree when it is full.
func (t *timers) grow() uint32 {
	j := uint32(len(t.acts))
	t.acts = append(t.acts, nil)
	if int(j) <= t.size {
		t.nodes[t.leaf(j)].leaf = j // unarmed, as it was: no copy above changes
		return j
	}
	old := t.nodes[t.size : 2*t.size]
	t.size *= 2
	nodes := make([]tnode, 2*t.size) // a power of two: climb masks its indices
	for k := range nodes {
		nodes[k] = unarmed
	}
	copy(nodes[t.size:], old)
	nodes[t.leaf(j)].leaf = j
	for k := t.size - 1; k >= 1; k-- {
		a, b := nodes[2*k], nodes[2*k+1]
		if b.before(a.at, a.key) {
			a = b
		}
		nodes[k] = a
	}
	t.nodes = nodes
	t.tree = nodes[1]
	t.setTop()
	return j
}

// NewTimer returns a new timer, unarmed. A timer is for a process that has
// at most one event pending at a time (see SetTimer); it is never freed, so
// make one per long-lived process, not per event.
func (e *Engine) NewTimer() Timer {
	if len(e.tm.acts) >= 1<<30 {
		panic("sim: too many timers")
	}
	return Timer{i: e.tm.grow()}
}

// NewStreamTimer returns the engine's stream timer, unarmed: a timer like
// NewTimer's, kept beside the tree, so that setting it costs a comparison
// rather than a climb; for the one process that sets its timer most often
// (the workload's next arrival). After the first call it returns NewTimer's.
func (e *Engine) NewStreamTimer() Timer {
	if e.tm.strMade {
		return e.NewTimer()
	}
	e.tm.strMade = true
	return Timer{i: streamLeaf}
}

// SetTimer arms t to fire act at time at with priority p, replacing the
// event it had pending, if any. The event is ordered as an event Scheduled
// now would be (at, then p, then the order of scheduling).
func (e *Engine) SetTimer(t Timer, at Time, p Priority, act Action) {
	if at < e.now {
		panic(fmt.Sprintf("sim: timer set at %v before now %v", at, e.now))
	}
	if act == nil {
		panic("sim: timer set with nil action")
	}
	if at == Forever {
		panic("sim: timer set at Forever")
	}
	if t.i == 0 {
		panic("sim: set the zero Timer (make timers with NewTimer)")
	}
	e.seq++
	if e.seq >= 1<<seqBits {
		panic("sim: sequence overflow")
	}
	j := t.i
	if j == streamLeaf {
		tm := &e.tm
		if tm.stream.key == unarmedKey {
			tm.armed++
		}
		tm.stream.at, tm.stream.key = at, uint64(p)<<seqBits|e.seq
		if funcAddr(tm.strAct) != funcAddr(act) {
			tm.strAct = act
		}
		tm.setTop()
		return
	}
	l := &e.tm.nodes[e.tm.leaf(j)]
	if l.key == unarmedKey {
		e.tm.armed++
	}
	*l = tnode{at: at, key: uint64(p)<<seqBits | e.seq, leaf: j}
	if a := &e.tm.acts[j]; funcAddr(*a) != funcAddr(act) { // (most often the same: no write barrier)
		*a = act
	}
	switch e.tm.firing {
	case 0:
		e.tm.climbMoved(j)
	case j: // the timer firing, set again: its climb, which waited, now
		e.tm.firing = 0
		e.tm.climb(j)
	default: // copies of the firing leaf are stale: the whole path
		e.tm.climb(j)
	}
}

// StopTimer disarms t and reports whether it had an event pending.
func (e *Engine) StopTimer(t Timer) bool {
	j := t.i
	if j == 0 {
		return false // the zero Timer names none
	}
	if j == streamLeaf {
		tm := &e.tm
		if tm.stream.key == unarmedKey {
			return false
		}
		tm.stream.at, tm.stream.key = Forever, unarmedKey
		tm.armed--
		tm.setTop()
		return true
	}
	l := &e.tm.nodes[e.tm.leaf(j)]
	if l.key == unarmedKey {
		return false
	}
	l.at, l.key = Forever, unarmedKey
	e.tm.armed--
	if e.tm.firing == t.i {
		e.tm.firing = 0
	}
	e.tm.climb(j)
	return true
}

// TimerArmed reports whether t has an event pending.
func (e *Engine) TimerArmed(t Timer) bool {
	if t.i == streamLeaf {
		return e.tm.stream.key != unarmedKey
	}
	return t.i != 0 && e.tm.nodes[e.tm.leaf(t.i)].key != unarmedKey
}

// fireTimer fires the root timer's event, which precedes the queue's
// minimum. The leaf is disarmed before the action runs; the climb that
// disarming needs is left to the action, which most often sets the timer
// again (a replica's step end schedules the next), and done after it
// otherwise.
func (e *Engine) fireTimer() {
	j := e.tm.top.leaf
	if j == streamLeaf {
		tm := &e.tm
		at, act := tm.stream.at, tm.strAct
		tm.stream.at, tm.stream.key = Forever, unarmedKey
		tm.armed--
		tm.setTop()
		e.now = at
		e.fired++
		e.lastFired = at
		act(at)
		return
	}
	l := &e.tm.nodes[e.tm.leaf(j)]
	at, act := l.at, e.tm.acts[j]
	l.at, l.key = Forever, unarmedKey
	e.tm.armed--
	e.tm.firing = j
	e.now = at
	e.fired++
	e.lastFired = at
	act(at)
	e.tm.settle()
}

// settle does the climb a fired timer's leaf waits for, if its action has
// not set it again (fireTimer).
func (t *timers) settle() {
	if j := t.firing; j != 0 {
		t.firing = 0
		t.climb(j)
	}
}
