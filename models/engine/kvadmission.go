package engine

// kvAdmission is how continuous and chunked batching admit requests into
// the KV cache (ReplicaConfig.KVAdmission): the blocks an admission must
// leave free for what the running sequences, and the admitted one, will
// still take. promptAdmission (vLLM) reserves only the next decode step, so
// a full cache later preempts; fullAdmission (TensorRT-LLM's
// GUARANTEED_NO_EVICT) reserves every block until the sequences finish, so
// nothing is ever preempted. Static batching does not ask it; the
// contiguous allocator reserves a request's whole length anyway and
// ignores the reserve.
type kvAdmission interface {
	// stepReserve is the reserve for the running batch when its decoders
	// step beside the admitted prompts (chunked prefill); next is the
	// blocks their next decode token takes.
	stepReserve(r *Replica, next int64) int64
	// pausedReserve is the reserve for the running batch when decoding
	// pauses for a prefill step (continuous batching without chunking).
	pausedReserve(r *Replica) int64
	// added is what admitting running s adds to the reserve for the next
	// admissions of the same step.
	added(r *Replica, s *seq) int64
	// own is the blocks waiting s's output will take beyond its prompt,
	// reserved when it is admitted.
	own(r *Replica, s *seq) int64
}

// newKVAdmission returns the admission policy cfg names.
func newKVAdmission(cfg ReplicaConfig) kvAdmission {
	if cfg.KVAdmission == KVAdmitFull {
		return fullAdmission{}
	}
	return promptAdmission{}
}

// promptAdmission admits a request when its prompt's blocks fit beside the
// blocks of the running batch's next decode step.
type promptAdmission struct{}

var _ kvAdmission = promptAdmission{}

func (promptAdmission) stepReserve(_ *Replica, next int64) int64 { return next }
func (promptAdmission) pausedReserve(*Replica) int64             { return 0 }
func (promptAdmission) added(*Replica, *seq) int64               { return 0 }
func (promptAdmission) own(*Replica, *seq) int64                 { return 0 }

// fullAdmission admits a request only when its whole length fits beside
// every block the running sequences will take until they finish.
type fullAdmission struct{}

var _ kvAdmission = fullAdmission{}

func (fullAdmission) stepReserve(r *Replica, _ int64) int64 {
	var g int64
	for _, s := range r.batch() {
		r.sync(s)
		g += r.growth(s)
	}
	return g
}

func (a fullAdmission) pausedReserve(r *Replica) int64 { return a.stepReserve(r, 0) }

func (fullAdmission) added(r *Replica, s *seq) int64 { return r.growth(s) }

func (fullAdmission) own(r *Replica, s *seq) int64 {
	p := int64(s.prompt)
	return r.blocksFor(p+int64(s.req.OutputTokens-s.gen)) - r.blocksFor(p)
}

// The replica asks its admission policy through these, which answer
// promptAdmission's constant replies inline (an itab comparison instead of
// an interface call per step and per admission).

// stepReserve is r.adm.stepReserve(r, next).
func (r *Replica) stepReserve(next int64) int64 {
	if _, ok := r.adm.(promptAdmission); ok {
		return next
	}
	return r.adm.stepReserve(r, next)
}

// admAdded is r.adm.added(r, s).
func (r *Replica) admAdded(s *seq) int64 {
	if _, ok := r.adm.(promptAdmission); ok {
		return 0
	}
	return r.adm.added(r, s)
}

// admOwn is r.adm.own(r, s).
func (r *Replica) admOwn(s *seq) int64 {
	if _, ok := r.adm.(promptAdmission); ok {
		return 0
	}
	return r.adm.own(r, s)
}
