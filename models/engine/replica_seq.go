package engine

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
	// last is when s produced its latest output token (the replica's
	// inter-token gaps are measured from it).
	last sim.Time
	// lag is how much later than its step's end each token reaches the
	// client beyond the stream's delay: the engine's output lag
	// (first_token_lag_steps of the step after its first token's).
	lag sim.Time

	prompt      int32 // tokens to prefill in this admission (input, or input+generated after preemption)
	done        int32 // prompt tokens whose KV is computed (cache hits included)
	gen         int32 // output tokens produced
	cachedFirst int32 // prompt tokens served by the prefix cache at first admission
	// kvTokens is the context in KV: computed prompt tokens plus decode
	// tokens written since admission.
	kvTokens int64

	seqKV // the KV blocks it holds

	preempts int32
	// chunk is this step's work: > 0 prompt tokens to prefill, else 0 (one
	// decode token if decoding, unless the replica's decoders are paused).
	chunk     int32
	admitted  bool // ever admitted
	finished  bool // static batching: done but still padding the batch
	cancelled bool // the gateway withdrew it; dropped at the next chance
	inBatch   bool // in running (else waiting)

	// Under an iteration-level scheduler a decoding sequence's gen,
	// kvTokens, tailTokens, tailBlocks and last are as of the replica's
	// decode clock dclk (decoders.go; Replica.sync brings them up to date).
	inDec   bool     // decoding under the clock
	dclk    int64    // the clock its decode state is as of
	histKey int32    // its slot in the free-slot histogram, or -1 (in the far heap)
	hidx    [2]int32 // its positions in the decoders' heaps
	joinNo  uint64   // order of joining the batch: running is sorted by it
	runIdx  int32    // its position in running (Replica.batch)
}

// seqKV is the KV a running sequence holds, as its allocator placed it
// (kvalloc_paged.go, kvalloc_contiguous.go); a waiting sequence holds none.
type seqKV struct {
	entries    []*CacheEntry // prefix-cache entries it references (paged)
	hitSegs    int32         // leading prefix segments held through entries
	missBlocks int64         // blocks privately held for prefix segments not yet cached
	tailTokens int64         // private tokens outside prefix segments (unique prompt tail + decode)
	tailBlocks int64         // blocks holding them
	// region is the first block of its contiguous KV region (contiguous
	// allocator only).
	region int64
}

func (s *seq) decoding() bool { return s.done == s.prompt }
