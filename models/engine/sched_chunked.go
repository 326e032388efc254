package engine

import "github.com/fleetsim/fleetsim/sim"

// chunkedSched is continuous batching with chunked prefill (BatchChunked,
// vLLM V1): each step carries every decoding sequence plus prefill chunks
// up to the token budget, admitting waiting requests while budget and KV
// last.
type chunkedSched struct{ iterSched }

var _ scheduler = chunkedSched{}

func (c chunkedSched) plan(now sim.Time) {
	r := c.r
	decoders, next := c.begin(now)
	var st stepBuild
	budget := r.cfg.MaxBatchedTokens - decoders
	for _, s := range r.prefill {
		if budget <= 0 {
			break
		}
		n := min(int(s.prompt-s.done), budget)
		st.add(s, n)
		budget -= n
	}
	reserve := r.stepReserve(next)
	for budget > 0 && r.head() != nil && r.nRunning() < r.cfg.MaxSeqs {
		s := r.head()
		if !r.admit(s, now, reserve) {
			break
		}
		reserve += r.admAdded(s)
		r.join(s)
		n := min(int(s.prompt-s.done), budget)
		st.add(s, n)
		budget -= n
	}
	c.launch(now, &st, decoders, next)
}
