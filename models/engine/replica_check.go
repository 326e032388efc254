package engine

import (
	"fmt"
	"math"
	"slices"

	"github.com/fleetsim/fleetsim/sim"
)

// CheckInvariants recomputes the replica's bookkeeping from its sequences
// and reports the first mismatch: the routing snapshot's counts, and KV
// blocks used = blocks held by running sequences + blocks of referenced
// cache entries; and the planning summary of the batch, when valid, equals
// one rebuilt from the sequences; the pool's routing index, if any, holds
// the replica's key as its snapshot entry gives it. Tests call it after
// every event.
func (r *Replica) CheckInvariants() error {
	if r.ri != nil {
		if err := r.ri.Check(r.idx); err != nil {
			return fmt.Errorf("replica %d: %w", r.idx, err)
		}
	}
	running, err := r.checkHoles()
	if err != nil {
		return err
	}
	live, waiting := 0, 0
	var held int64
	entries := map[*CacheEntry]bool{}
	for _, s := range running {
		c := *s
		r.sync(&c) // (its blocks as the replica counts them)
		held += c.missBlocks + c.tailBlocks
		for _, e := range s.entries {
			entries[e] = true
		}
		if !s.cancelled && !s.finished {
			live++
		}
	}
	for i := 0; i < r.waiting.len(); i++ {
		s := r.waiting.buf[(r.waiting.head+i)%len(r.waiting.buf)]
		if !s.cancelled {
			waiting++
			live++
		}
		if s.missBlocks+s.tailBlocks != 0 || len(s.entries) != 0 {
			return fmt.Errorf("replica %d: a waiting sequence holds KV", r.idx)
		}
	}
	if r.handoff != nil {
		held += r.handoff.HeldOn(r, entries) // KV kept for, or reserved by, transfers (replica_handoff.go)
	}
	for e := range entries {
		if e.refs <= 0 {
			return fmt.Errorf("replica %d: a running sequence holds an unreferenced cache entry", r.idx)
		}
		held += e.blocks
	}
	switch {
	case r.heldOut != 0 && !r.hung:
		return fmt.Errorf("replica %d: %d withdrawn copies held while not stalled", r.idx, r.heldOut)
	case r.state.Outstanding != live+r.heldOut:
		return fmt.Errorf("replica %d: snapshot says %d outstanding, it holds %d and %d withdrawn while stalled", r.idx, r.state.Outstanding, live, r.heldOut)
	case r.state.Waiting != waiting:
		return fmt.Errorf("replica %d: snapshot says %d waiting, it holds %d", r.idx, r.state.Waiting, waiting)
	case !r.down && held != r.kv.Used():
		return fmt.Errorf("replica %d: %d KV blocks used, sequences hold %d", r.idx, r.kv.Used(), held)
	case r.kv.Used()+r.kv.Cached()+r.kv.Free() != r.kv.Total():
		return fmt.Errorf("replica %d: KV blocks do not add up", r.idx)
	}
	if r.iter {
		return r.checkDecoders()
	}
	return nil
}

// checkHoles checks running's holes (Replica.leaveRunning): as many as
// runHoles, none last, at most half of it (beyond one), every sequence at
// its runIdx; and returns the sequences in order (a new list: the check
// does not compact).
func (r *Replica) checkHoles() ([]*seq, error) {
	var live []*seq
	holes := 0
	for i, s := range r.running {
		if s == nil {
			holes++
			continue
		}
		if int(s.runIdx) != i {
			return nil, fmt.Errorf("replica %d: a running sequence at %d says it is at %d", r.idx, i, s.runIdx)
		}
		live = append(live, s)
	}
	n := len(r.running)
	switch {
	case holes != r.runHoles:
		return nil, fmt.Errorf("replica %d: running has %d holes, the replica counts %d", r.idx, holes, r.runHoles)
	case n > 0 && r.running[n-1] == nil:
		return nil, fmt.Errorf("replica %d: running ends in a hole", r.idx)
	case 2*holes > n:
		return nil, fmt.Errorf("replica %d: running has %d holes in %d entries", r.idx, holes, n)
	}
	return live, nil
}

// checkDecoders checks the decode clock's aggregates (decoders.go) against
// the running sequences brought up to date on copies, and the orders the
// reaping relies on: running sorted by joinNo, the decoders before the
// prefilling sequences, and their last tokens' times non-decreasing (so
// that gaps recorded by group come in the order a per-sequence pass gave).
func (r *Replica) checkDecoders() error {
	d := &r.dec
	n, cancelled, cancelRun := 0, 0, 0
	var ctx int64
	minRem := int64(math.MaxInt32)
	var prefill []*seq
	groups := map[sim.Time]int{}
	var lastSeen sim.Time
	seenPrefill := false
	running, err := r.checkHoles()
	if err != nil {
		return err
	}
	for i, s := range running {
		if i > 0 && running[i-1].joinNo >= s.joinNo {
			return fmt.Errorf("replica %d: running is not in joining order", r.idx)
		}
		if s.cancelled {
			cancelRun++
		}
		if s.inDec != s.decoding() {
			return fmt.Errorf("replica %d: a sequence decoding=%v is inDec=%v", r.idx, s.decoding(), s.inDec)
		}
		if !s.inDec {
			prefill = append(prefill, s)
			seenPrefill = true
			continue
		}
		c := *s
		r.sync(&c)
		if seenPrefill {
			return fmt.Errorf("replica %d: a decoder follows a prefilling sequence in the batch", r.idx)
		}
		if c.last < lastSeen {
			return fmt.Errorf("replica %d: decoders' last tokens are not in batch order", r.idx)
		}
		lastSeen = c.last
		n++
		if s.cancelled {
			cancelled++
		}
		ctx += c.kvTokens
		minRem = min(minRem, int64(c.req.OutputTokens-c.gen))
		groups[c.last]++
	}
	switch {
	case n != d.n || cancelled != d.cancelled || cancelRun != r.cancelRun:
		return fmt.Errorf("replica %d: decode clock counts %d decoders (%d withdrawn) and %d withdrawn running, the batch %d (%d) and %d",
			r.idx, d.n, d.cancelled, r.cancelRun, n, cancelled, cancelRun)
	case ctx != d.ctx():
		return fmt.Errorf("replica %d: decode clock context %d, the batch %d", r.idx, d.ctx(), ctx)
	case minRem != d.minRem():
		return fmt.Errorf("replica %d: decode clock least remaining %d, the batch %d", r.idx, d.minRem(), minRem)
	case !slices.Equal(prefill, r.prefill):
		return fmt.Errorf("replica %d: %d prefilling sequences listed, the batch has %d", r.idx, len(r.prefill), len(prefill))
	case len(groups) != len(d.groups):
		return fmt.Errorf("replica %d: %d last-token groups, the batch has %d", r.idx, len(d.groups), len(groups))
	}
	for i, g := range d.groups {
		if groups[g.at] != g.n || (i > 0 && d.groups[i-1].at >= g.at) {
			return fmt.Errorf("replica %d: last-token groups %v do not match the batch", r.idx, d.groups)
		}
	}
	for j := int64(1); j <= 3*r.blockTokens && j <= 64; j++ {
		var want int64
		for _, s := range running {
			if s.inDec {
				c := *s
				r.sync(&c)
				want += max(0, r.blocksFor(c.tailTokens+j)-c.tailBlocks)
			}
		}
		if got, ok := r.demand1(); j == 1 && ok && got != want {
			return fmt.Errorf("replica %d: decode clock block demand for one step (demand1) %d, the batch %d", r.idx, got, want)
		}
		if got := r.demand(j); got != want {
			return fmt.Errorf("replica %d: decode clock block demand for %d steps %d, the batch %d", r.idx, j, got, want)
		}
	}
	return nil
}
