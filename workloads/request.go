package workloads

import "github.com/fleetsim/fleetsim/sim"

// Segment is one shared piece of a prompt's prefix. Hash identifies the whole
// prompt prefix up to and including this segment (it is chained: two requests
// share a segment's KV only if they share every segment before it too).
// A Mooncake trace's hash_ids are such segments of 512 tokens (the last one of
// a request may be shorter).
type Segment struct {
	Hash   uint64
	Tokens int32
}

// Request is one inference request as the workload emits it.
type Request struct {
	ID           uint64   // unique within a run, increasing in arrival order from 1
	Arrival      sim.Time // arrival time at the gateway
	InputTokens  int32    // prompt length in tokens, >= 1
	OutputTokens int32    // tokens to generate, >= 1
	// Prefix lists the prompt's shareable segments in prompt order; their
	// Tokens sum to at most InputTokens, the rest of the prompt is unique to
	// this request. Nil when the workload has no prefix sharing.
	Prefix  []Segment
	Session uint64 // session (conversation, agent run) id, 0 if none
	// SpecQuantile in [0, 1) places the request in its engine's range of
	// speculative-decoding acceptance rates (acceptance ± acceptance_spread):
	// how draftable its text is. Drawn at the gateway from the
	// "speculation" stream, not by the workload, so no workload draw moves.
	SpecQuantile float32
	// Model is the index of the model the request asks for in the
	// scenario's [[serve]] list, drawn at the gateway by the models' shares
	// (stream "models"); 0 in a fleet that serves one model.
	Model int16
}

// PrefixTokens is the number of prompt tokens covered by r.Prefix.
func (r *Request) PrefixTokens() int32 {
	var n int32
	for _, s := range r.Prefix {
		n += s.Tokens
	}
	return n
}

// Source produces requests in non-decreasing arrival order. Next returns
// io.EOF when the workload is exhausted; any other error is a bad input
// (e.g. a malformed trace line) and names where it is.
type Source interface {
	Next() (Request, error)
}

// IntoSource is a Source that can also write its next request into the
// caller's record: NextInto(r) leaves in *r the request Next would return,
// and returns Next's error (*r is then unspecified). The two draw the same
// requests from the same state, so a caller may use either for any call.
// It saves copying a Request through each layer of a chain of sources
// (Limit passes it on).
type IntoSource interface {
	Source
	NextInto(r *Request) error
}
