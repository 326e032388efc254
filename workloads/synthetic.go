package workloads

import (
	"math"
	"math/rand/v2"

	"github.com/fleetsim/fleetsim/sim"
)

// systemPrompts is a set of shared system prompts, each a one-segment
// Prefix of the same length, chosen per request (or per session) uniformly
// or by a Zipf law over prompt ranks.
type systemPrompts struct {
	prefixes [][]Segment // prefixes[i] = []Segment{{hash of prompt i, tokens}}; cap == len
	tokens   int32
	zipf     *categorical // nil: uniform
}

// newSystemPrompts returns n prompts of tokens tokens each (tokens a multiple
// of SegmentTokens), hashed under salt. zipfS > 0 chooses prompt i (0-based)
// with weight 1/(i+1)^zipfS; zipfS == 0 chooses uniformly. n == 0 returns nil.
func newSystemPrompts(n int, tokens int32, zipfS float64, salt uint64) *systemPrompts {
	if n <= 0 {
		return nil
	}
	sp := &systemPrompts{prefixes: make([][]Segment, n), tokens: tokens}
	for i := range sp.prefixes {
		sp.prefixes[i] = []Segment{{Hash: ChainHash(salt, uint64(i)), Tokens: tokens}}
	}
	if zipfS > 0 {
		w := make([]float64, n)
		for i := range w {
			w[i] = 1 / math.Pow(float64(i+1), zipfS)
		}
		c, err := newCategorical(w)
		if err != nil {
			panic("workloads: zipf weights: " + err.Error())
		}
		sp.zipf = c
	}
	return sp
}

// choose returns a prompt's Prefix (shared, read-only, cap == len).
func (sp *systemPrompts) choose(rng *rand.Rand) []Segment {
	if sp.zipf != nil {
		return sp.prefixes[sp.zipf.sample(rng)]
	}
	return sp.prefixes[rng.IntN(len(sp.prefixes))]
}

// synthetic emits independent requests: arrivals from an ArrivalProcess,
// InputTokens = system prompt (if any) + a draw from input, OutputTokens a
// draw from output. It never ends by itself; wrap it in Limit.
type synthetic struct {
	arrival              ArrivalProcess
	input, output        LengthDist
	prompts              *systemPrompts
	arrivalRng, inputRng *rand.Rand
	outputRng, promptRng *rand.Rand
	now                  sim.Time
	nextID               uint64
	// pool, when its size is > 0, is a fixed set of prompts cycled in
	// order (Config.PromptPool).
	pool promptPool
}

// promptPool is a benchmark's fixed set of prompts, sent in order and
// again from the first after the last (a dataset of n prompts replayed for
// more requests than it has). Prompt i is drawn the first time it is used
// (lengths, system prompt), so the draws are those of the first n requests
// of the same workload without a pool; a reuse sends the same tokens, so
// its whole prompt but a partial last segment is a shared prefix that a
// prefix cache can hit.
type promptPool struct {
	n     int
	salt  uint64
	items []Request // drawn so far: InputTokens, OutputTokens, Prefix
}

// pooled writes prompt k's lengths and prefix into r, drawing it with
// draw the first time.
func (p *promptPool) pooled(k uint64, r *Request, draw func(r *Request)) {
	i := int(k % uint64(p.n))
	if i == len(p.items) {
		var q Request
		draw(&q)
		// The whole prompt, in segments of SegmentTokens, is shared with
		// its next uses: its prefix extended by the rest of its tokens.
		var last uint64
		if n := len(q.Prefix); n > 0 {
			last = q.Prefix[n-1].Hash
		}
		rest := int64(q.InputTokens) - int64(q.PrefixTokens())
		rest -= rest % SegmentTokens
		if rest > 0 {
			q.Prefix = append(append(make([]Segment, 0, len(q.Prefix)+1), q.Prefix...),
				Segment{Hash: ChainHash(last, ChainHash(p.salt, uint64(i))), Tokens: int32(rest)})
		}
		p.items = append(p.items, q)
	}
	q := &p.items[i]
	r.InputTokens, r.OutputTokens, r.Prefix = q.InputTokens, q.OutputTokens, q.Prefix
}

func (s *synthetic) Next() (Request, error) {
	var r Request
	err := s.NextInto(&r)
	return r, err
}

// NextInto implements IntoSource: Next, written into *r.
func (s *synthetic) NextInto(r *Request) error {
	s.now = s.arrival.NextArrival(s.arrivalRng, s.now)
	s.nextID++
	*r = Request{ID: s.nextID, Arrival: s.now}
	if s.pool.n > 0 {
		s.pool.pooled(s.nextID-1, r, s.draw)
		return nil
	}
	s.draw(r)
	return nil
}

// draw writes a fresh prompt's lengths and system prompt into r.
func (s *synthetic) draw(r *Request) {
	in := int64(s.input.Sample(s.inputRng))
	if s.prompts != nil {
		r.Prefix = s.prompts.choose(s.promptRng)
		in += int64(s.prompts.tokens)
	}
	r.InputTokens = int32(min(in, maxTokens))
	r.OutputTokens = s.output.Sample(s.outputRng)
}

func (s *synthetic) Close() error { return nil }
