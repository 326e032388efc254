package engine

// Cancel withdraws a copy the gateway no longer wants (a hedge that lost,
// a timed-out request). On a stalled (hung) replica the copy keeps counting
// in Outstanding until the replica resumes (heldOut). Work already done on it is counted as wasted. It
// is O(1) for a waiting copy (dropped lazily) and ends a decode run at its
// next step boundary for a running one, so the batch shrinks promptly.
func (r *Replica) Cancel(c *Copy) {
	if r.handoff != nil {
		r.handoff.Withdrawn(c) // a copy between pools, or its record (replica_handoff.go)
	}
	s := c.seq
	if s == nil || s.cancelled {
		return
	}
	c.seq = nil
	r.sync(s)
	s.cancelled = true
	r.Stats.Cancelled++
	if r.hung {
		// Stalled: the replica has not let go of it yet (Unhang does).
		r.heldOut++
	} else {
		r.state.Outstanding--
		r.outstandingChanged()
	}
	r.state.OutstandingTokens -= int64(s.prompt-s.done) + int64(s.req.OutputTokens-s.gen)
	if !s.inBatch {
		r.state.Waiting--
		return // head() drops it
	}
	r.sched.cancel(s)
}

// drop removes a cancelled running sequence at a step boundary.
func (r *Replica) drop(s *seq) {
	r.Stats.WastedPrefillTokens += int64(s.done)
	r.Stats.WastedDecodeTokens += int64(s.gen)
	r.Stats.CancelledTokens += int64(s.done) + int64(s.gen)
	r.alloc.release(s)
	r.recycle(s)
}

// removeRunning takes s out of the batch now (the replica is not stepping).
func (r *Replica) removeRunning(s *seq) {
	r.unrun(s)
	r.drop(s)
}
