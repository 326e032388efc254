package engine

import "github.com/fleetsim/fleetsim/sim"

// continuousSched is iteration-level batching without chunking
// (BatchContinuous, vLLM V0): waiting requests join at any step, their
// whole prompts prefilled in a prefill-only step that pauses decoding.
type continuousSched struct{ iterSched }

var _ scheduler = continuousSched{}

// plan: a prefill step runs whole prompts (at least one, even past the
// token budget) while decoding pauses; a prefill cut short (by a hang) is
// finished first. With nothing to prefill, the batch decodes.
func (c continuousSched) plan(now sim.Time) {
	r := c.r
	decoders, next := c.begin(now)
	var st stepBuild
	budget := r.cfg.MaxBatchedTokens
	for _, s := range r.prefill {
		n := int(s.prompt - s.done)
		st.add(s, n)
		budget -= n
	}
	reserve := r.adm.pausedReserve(r)
	for c.canAdmit(reserve) && r.head() != nil && r.nRunning() < r.cfg.MaxSeqs {
		s := r.head()
		if st.chunks > 0 && int(s.prompt) > budget {
			break
		}
		if !r.admit(s, now, reserve) {
			break
		}
		reserve += r.admAdded(s)
		r.join(s)
		n := int(s.prompt - s.done)
		st.add(s, n)
		budget -= n
	}
	if st.chunks > 0 {
		r.dec.paused = true // decoders wait for this step
		decoders = 0
	}
	c.launch(now, &st, decoders, next)
}

// canAdmit reports whether the head of the queue could be admitted now.
func (c continuousSched) canAdmit(reserve int64) bool {
	r := c.r
	s := r.head()
	if s == nil || r.nRunning() >= r.cfg.MaxSeqs {
		return false
	}
	return r.alloc.fits(s, reserve+r.admOwn(s))
}
