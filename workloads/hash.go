package workloads

// SegmentTokens is the granularity, in tokens, of the prefix segments the
// generators (synthetic, sessions, agentic) emit: every Segment they control
// has Tokens that are a multiple of it, and the remainder of a prompt is its
// unique tail. It is not the KV block size: a replica caches only the whole
// blocks of its own block_tokens that a shared prefix covers (engine.Replica
// owns that). Trace readers keep the trace's own segments (Mooncake: 512
// tokens, the last one of a request shorter).
const SegmentTokens = 16

// Mix64 is the splitmix64 finalizer: a fixed, bijective 64-bit mix. Hashes
// built from it are the same on every platform and in every run.
func Mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// ChainHash returns the hash of a prefix that extends the prefix hashed by
// prev with a piece of content identified by content. It is order sensitive
// (ChainHash(a, b) != ChainHash(b, a) in general), so two prompts share a
// segment hash only if they share every segment before it too. Use prev = 0
// for the first segment of a chain.
func ChainHash(prev, content uint64) uint64 {
	return Mix64(prev ^ Mix64(content^0x5851f42d4c957f2d))
}

// ContinuationSegment returns the segment that a follow-up turn of r's
// session shares with r beyond r's own Prefix: r's unique prompt tail plus
// its answer, rounded down so that the follow-up's whole prefix ends on a
// SegmentTokens boundary. A prefix cache that keeps the KV of generated tokens
// can insert this segment when r completes; the session generators (kinds
// "sessions" and "agentic") put exactly this segment, with this Hash, after
// r's Prefix in the next turn's Prefix. Tokens is 0 (and Hash meaningless)
// when the rounding leaves nothing to add.
//
// The hash is a function of r's last prefix hash, r.Session, r.InputTokens
// and r.OutputTokens, so it only matches the generator's when those are
// passed on unchanged; it is meaningless for requests without a session.
func ContinuationSegment(r *Request) Segment {
	total := int64(r.InputTokens) + int64(r.OutputTokens)
	if total > maxTokens {
		total = maxTokens
	}
	end := total - total%SegmentTokens
	tokens := end - int64(r.PrefixTokens())
	if tokens <= 0 {
		return Segment{}
	}
	var last uint64
	if n := len(r.Prefix); n > 0 {
		last = r.Prefix[n-1].Hash
	}
	content := Mix64(r.Session) ^ (uint64(uint32(r.InputTokens))<<32 | uint64(uint32(r.OutputTokens)))
	return Segment{Hash: ChainHash(last, content), Tokens: int32(tokens)}
}
