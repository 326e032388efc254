package models

import (
	"github.com/fleetsim/fleetsim/sim"
	"github.com/fleetsim/fleetsim/workloads"
)

// seq is one request copy inside a replica.
type seq struct {
	cp       *Copy
	req      workloads.Request
	enqueued sim.Time
	sched    sim.Time
	first    sim.Time

	prompt int32 // tokens to prefill in this admission (input, or input+generated after preemption)
	done   int32 // prompt tokens whose KV is computed (cache hits included)
	// kvTokens is the context in KV: computed prompt tokens plus decode
	// tokens written since admission.
	kvTokens int64
	gen      int32 // output tokens produced

	hitSegs     int32 // leading prefix segments held through cache entries
	entries     []*cacheEntry
	missBlocks  int64 // blocks privately held for prefix segments not yet cached
	tailTokens  int64 // private tokens outside prefix segments (unique prompt tail + decode)
	tailBlocks  int64
	cachedFirst int32
	preempts    int32
	admitted    bool // ever admitted
	finished    bool // static batching: done but still padding the batch
	cancelled   bool // the gateway withdrew it; dropped at the next chance
	inBatch     bool // in running (else waiting)
	// chunk is this step's work: > 0 prompt tokens to prefill, 0 one decode
	// token (if decoding), -1 paused (non-chunked prefill step).
	chunk int32
	// region is the first block of its contiguous KV region (contiguous
	// allocator only).
	region int64
}

func (s *seq) decoding() bool { return s.done == s.prompt }

// newSeq takes a sequence from the spares, or allocates one.
func (r *Replica) newSeq() *seq {
	if n := len(r.spare); n > 0 {
		s := r.spare[n-1]
		r.spare = r.spare[:n-1]
		return s
	}
	return &seq{}
}

// recycle keeps a finished sequence (holding no KV) for reuse, once the
// held observer calls that may still name it are delivered (flush).
func (r *Replica) recycle(s *seq) {
	r.later = append(r.later, s)
}

// reuse puts a sequence back among the spares.
func (r *Replica) reuse(s *seq) {
	entries := s.entries[:0]
	*s = seq{entries: entries}
	r.spare = append(r.spare, s)
}
