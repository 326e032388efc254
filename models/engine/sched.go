package engine

import (
	"github.com/fleetsim/fleetsim/sim"

	"github.com/fleetsim/fleetsim/models/hw"
)

// scheduler is a batching mode (ReplicaConfig.Batching): how the replica
// builds each step from its queue and batch, and what the end of a decode
// run does to the batch. There is one per mode: staticSched,
// continuousSched and chunkedSched (the last two share iterSched).
// The replica calls it once per event (cancel: once per withdrawn
// sequence), never inside a loop over the batch.
type scheduler interface {
	// plan chooses the next step or decode run at now and schedules its
	// end (Replica.startStep, startRun), or leaves the replica idle.
	plan(now sim.Time)
	// finishRun applies the decode run of r.runSteps steps that ended at
	// now to the batch, then reaps it.
	finishRun(now sim.Time)
	// reap takes finished and withdrawn sequences out of the batch.
	reap(now sim.Time)
	// canJoin reports whether a newcomer may join the running batch at the
	// next step boundary (an arrival then ends a decode run under way).
	canJoin() bool
	// cancel withdraws running s, whose copy the gateway let go (already
	// counted by Replica.Cancel).
	cancel(s *seq)
}

// newScheduler returns the scheduler of r's batching mode.
func newScheduler(r *Replica) scheduler {
	switch r.cfg.Batching {
	case BatchStatic:
		return staticSched{r: r}
	case BatchChunked:
		return chunkedSched{iterSched{r: r}}
	default:
		return continuousSched{iterSched{r: r}}
	}
}

// stepBuild accumulates the prefill part of a step being planned.
type stepBuild struct {
	sh     hw.StepShape
	chunks int // sequences prefilling in the step
}

// add makes c prompt tokens of s part of the step.
func (b *stepBuild) add(s *seq, c int) {
	s.chunk = int32(c)
	b.chunks++
	b.sh.PrefillTokens += float64(c)
	b.sh.PrefillPairs += float64(c)*float64(s.kvTokens) + float64(c)*float64(c+1)/2
	b.sh.PrefillSeqs++
}

// head is the first live sequence of the queue, dropping cancelled ones
// (lazy deletion: Cancel is O(1)), or nil. It is called in every planning
// loop and kept small enough to inline.
func (r *Replica) head() *seq {
	for r.waiting.size > 0 {
		s := r.waiting.front()
		if !s.cancelled {
			return s
		}
		r.waiting.popFront()
		r.recycle(s)
	}
	return nil
}

// join moves s, the head of the queue, into the running batch.
func (r *Replica) join(s *seq) {
	r.waiting.popFront()
	r.state.Waiting--
	s.inBatch = true
	s.joinNo = r.joins
	r.joins++
	s.runIdx = int32(len(r.running))
	r.running = append(r.running, s)
	if r.iter {
		r.prefill = append(r.prefill, s) // admitted, so prefilling
	}
}

// unrun takes running s out of the batch (and out of the prefilling
// sequences or the decoders), its decode state brought up to date.
func (r *Replica) unrun(s *seq) {
	r.sync(s)
	if s.inDec {
		r.stopDecoding(s)
	} else if r.iter {
		r.prefill = removeSeq(r.prefill, s)
	}
	if s.cancelled {
		r.cancelRun--
	}
	r.leaveRunning(s)
	s.inBatch = false
}

// leaveRunning takes s out of running: a hole at its place, O(1) (a
// removal by shifting cost a search and a copy of the later entries);
// holes at the end go at once, and the list is compacted when half of it
// is holes, so that it stays within twice the batch.
func (r *Replica) leaveRunning(s *seq) {
	run := r.running
	i := int(s.runIdx)
	if uint(i) >= uint(len(run)) || run[i] != s {
		panic("models: a sequence is missing from its batch list")
	}
	run[i] = nil
	n := len(run)
	if i == n-1 { // the last: it goes, and the holes before it
		n--
		for n > 0 && run[n-1] == nil {
			n--
			r.runHoles--
		}
		r.running = run[:n]
	} else {
		r.runHoles++
	}
	if 2*r.runHoles > n {
		r.compactRunning()
	}
}

// compactRunning closes running's holes, keeping the order.
func (r *Replica) compactRunning() {
	w := 0
	for _, s := range r.running {
		if s != nil {
			s.runIdx = int32(w)
			r.running[w] = s
			w++
		}
	}
	for i := w; i < len(r.running); i++ { // (a short tail: cheaper than clear's call)
		r.running[i] = nil
	}
	r.running = r.running[:w]
	r.runHoles = 0
}

// batch is the running batch in joining order, without holes (compacted
// first if it has any): for the passes over the whole batch.
func (r *Replica) batch() []*seq {
	if r.runHoles > 0 {
		r.compactRunning()
	}
	return r.running
}

// nRunning is the number of running sequences.
func (r *Replica) nRunning() int { return len(r.running) - r.runHoles }

// removeSeq removes s from list, which is in batch order (by joinNo).
func removeSeq(list []*seq, s *seq) []*seq {
	lo, hi := 0, len(list)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if list[mid].joinNo < s.joinNo {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(list) || list[lo] != s {
		panic("models: a sequence is missing from its batch list")
	}
	if last := len(list) - 1; last-lo <= 8 {
		for i := lo; i < last; i++ { // (a short shift: cheaper than copy's call)
			list[i] = list[i+1]
		}
	} else {
		copy(list[lo:], list[lo+1:])
	}
	list[len(list)-1] = nil
	return list[:len(list)-1]
}

// admit places waiting s's KV if memory allows, keeping reserve blocks free
// besides the watermark and the blocks of s's own output that the admission
// policy reserves, and reports whether it did. Tokens served by the prefix
// cache count as computed.
func (r *Replica) admit(s *seq, now sim.Time, reserve int64) bool {
	done, ok := r.alloc.place(s, reserve+r.admOwn(s))
	if !ok {
		return false
	}
	s.done = done
	s.kvTokens = int64(s.done)
	r.state.OutstandingTokens -= int64(s.done)
	if !s.admitted {
		r.started(s, now)
		s.cachedFirst = s.done
		r.Stats.CachedTokens += int64(s.done)
	}
	return true
}

// started records s's first admission into a batch.
func (r *Replica) started(s *seq, now sim.Time) {
	s.admitted, s.sched = true, now
	r.notes = append(r.notes, note{kind: noteStarted, s: s, at: now})
	r.Stats.PromptTokens += int64(s.req.InputTokens)
}

// growth is the blocks an admitted sequence will still take to finish its
// output.
func (r *Replica) growth(s *seq) int64 {
	rem := int64(s.req.OutputTokens - s.gen)
	return max(0, r.blocksFor(s.tailTokens+rem)-s.tailBlocks)
}

// finishRun is r.sched.finishRun, called directly for the iteration-level
// modes (both finish runs as iterSched): no interface call per run.
func (r *Replica) finishRun(now sim.Time) {
	if r.iter {
		iterSched{r}.finishRun(now)
		return
	}
	r.sched.finishRun(now)
}

// canJoin is r.sched.canJoin, answered inline for the iteration-level
// modes (iterSched.canJoin).
func (r *Replica) canJoin() bool {
	if r.iter {
		return r.nRunning() < r.cfg.MaxSeqs
	}
	return r.sched.canJoin()
}
