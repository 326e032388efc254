package workloads

import (
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"

	"github.com/fleetsim/fleetsim/internal/infile"
)

// Stats summarises a trace file (see TraceStats).
type Stats struct {
	Format   string  // FormatMooncake or FormatAzure
	Rows     int64   // requests (data rows)
	SpanS    float64 // last timestamp − first timestamp, seconds
	RatePerS float64 // Rows / SpanS, requests per second (0 when SpanS is 0)
	Input    LengthStats
	Output   LengthStats
	// InputOutputRatio is sum of input tokens / sum of output tokens (+Inf
	// when every output is 0).
	InputOutputRatio float64
	ZeroInputs       int64 // rows with input length 0 (a reader reads them as 1)
	ZeroOutputs      int64 // rows with output length 0 (a reader reads them as 1)

	// HasPrefix reports whether the format records prefix blocks (Mooncake).
	// The reuse figures below are 0 when it is false.
	HasPrefix bool
	// PrefixReuseTokens is the fraction of input tokens that an unbounded
	// prefix cache would serve: walking each request's hash_ids in order, a
	// block counts as reused while its id appeared in an earlier request and
	// every block before it in this request was reused too (prefix
	// semantics); then all of the request's ids become seen. Token-weighted:
	// each block weighs its tokens (512, the last one what is left).
	PrefixReuseTokens float64
	// PrefixReuseBlocks is the same fraction counted in blocks.
	PrefixReuseBlocks float64
}

// LengthStats summarises a column of token counts. Percentiles are exact
// nearest-rank values (the smallest value with at least p of the rows at or
// below it), computed from a count per distinct value.
type LengthStats struct {
	Mean     float64 // tokens
	P50, P99 int64   // tokens
	Min, Max int64   // tokens
	Sum      int64   // tokens
}

// TraceStats reads the trace at path in one streamed pass and summarises it.
// format is FormatMooncake, FormatAzure, or "" to detect it from the
// extension (DetectFormat). The rate multiplier does not apply: figures are
// as recorded, with lengths of 0 counted as 0.
//
// Memory is bounded by the number of distinct lengths (percentiles are
// exact, from a histogram of distinct values; token counts are bounded by
// the context length, so this stays small however many rows there are) and,
// for Mooncake, by the number of distinct hash_ids (the unbounded cache of
// the reuse figure).
func TraceStats(path, format string) (Stats, error) { return TraceStatsFS(nil, path, format) }

// TraceStatsFS is TraceStats reading path from fsys (nil: the OS file
// system), as OpenTraceFS does: the traces shipped in the binary.
func TraceStatsFS(fsys fs.FS, path, format string) (Stats, error) {
	f, err := DetectFormat(path, format)
	if err != nil {
		return Stats{}, err
	}
	file, err := infile.Open(fsys, path, infile.Trace)
	if err != nil {
		return Stats{}, fmt.Errorf("workloads: %w", err)
	}
	defer file.Close()
	st := Stats{Format: f}
	in, out := newHistogram(), newHistogram()
	var firstNs, lastNs float64
	switch f {
	case FormatMooncake:
		st.HasPrefix = true
		p := mooncakeParser{lr: newLineReader(file, path)}
		seen := make(map[int64]struct{})
		var tokens, reusedTokens, blocks, reusedBlocks int64
		var prevMs float64
		for {
			row, err := p.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return Stats{}, err
			}
			if st.Rows == 0 {
				firstNs, prevMs = row.Timestamp*1e6, row.Timestamp
			}
			if row.Timestamp < prevMs {
				return Stats{}, p.lr.errorf("timestamp: expected >= %v (the previous row's), found %v", prevMs, row.Timestamp)
			}
			prevMs = row.Timestamp
			lastNs = row.Timestamp * 1e6
			st.Rows++
			in.add(row.InputLength)
			out.add(row.OutputLength)
			left, reusing := row.InputLength, true
			for _, id := range row.HashIDs {
				tok := min(left, MooncakeBlockTokens)
				left -= tok
				tokens += tok
				blocks++
				if _, ok := seen[id]; reusing && ok {
					reusedTokens += tok
					reusedBlocks++
				} else {
					reusing = false
				}
			}
			tokens += left // prompt tokens past the listed blocks: never reused
			for _, id := range row.HashIDs {
				seen[id] = struct{}{}
			}
		}
		if tokens > 0 {
			st.PrefixReuseTokens = float64(reusedTokens) / float64(tokens)
		}
		if blocks > 0 {
			st.PrefixReuseBlocks = float64(reusedBlocks) / float64(blocks)
		}
	case FormatAzure:
		p := azureParser{lr: newLineReader(file, path)}
		for {
			row, err := p.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return Stats{}, err
			}
			lastNs = float64(row.offsetNs)
			st.Rows++
			in.add(row.context)
			out.add(row.output)
		}
	}
	st.SpanS = (lastNs - firstNs) / 1e9
	if st.SpanS > 0 {
		st.RatePerS = float64(st.Rows) / st.SpanS
	}
	st.Input, st.Output = in.stats(), out.stats()
	st.ZeroInputs, st.ZeroOutputs = in.counts[0], out.counts[0]
	st.InputOutputRatio = math.Inf(1)
	if st.Output.Sum > 0 {
		st.InputOutputRatio = float64(st.Input.Sum) / float64(st.Output.Sum)
	}
	if st.Rows == 0 {
		return Stats{}, fmt.Errorf("%s: the trace has no rows", path)
	}
	return st, nil
}

// histogram counts occurrences of each distinct value.
type histogram struct {
	counts map[int64]int64
	n, sum int64
}

func newHistogram() *histogram { return &histogram{counts: make(map[int64]int64)} }

func (h *histogram) add(v int64) {
	h.counts[v]++
	h.n++
	h.sum += v
}

func (h *histogram) stats() LengthStats {
	if h.n == 0 {
		return LengthStats{}
	}
	keys := make([]int64, 0, len(h.counts))
	for k := range h.counts {
		keys = append(keys, k)
	}
	slices.Sort(keys) // map order must not leak
	s := LengthStats{Mean: float64(h.sum) / float64(h.n), Min: keys[0], Max: keys[len(keys)-1], Sum: h.sum}
	s.P50, s.P99 = h.quantile(keys, 0.50), h.quantile(keys, 0.99)
	return s
}

// quantile returns the nearest-rank p-quantile: the smallest value whose
// cumulative count reaches ceil(p·n).
func (h *histogram) quantile(keys []int64, p float64) int64 {
	rank := int64(math.Ceil(p * float64(h.n)))
	rank = max(rank, 1)
	var c int64
	for _, k := range keys {
		c += h.counts[k]
		if c >= rank {
			return k
		}
	}
	return keys[len(keys)-1]
}
