package workloads

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"

	"github.com/fleetsim/fleetsim/sim"
)

// mooncakeRoot seeds the hash chain of every Mooncake request.
const mooncakeRoot uint64 = 0x6d6f6f6e63616b65 // "mooncake"

const missingInt = math.MinInt64

// mooncakeRow is one parsed line. Missing keys keep the sentinels that
// mooncakeParser.next sets before decoding (NaN, missingInt).
type mooncakeRow struct {
	Timestamp    float64 `json:"timestamp"`
	InputLength  int64   `json:"input_length"`
	OutputLength int64   `json:"output_length"`
	HashIDs      []int64 `json:"hash_ids"`
}

// mooncakeParser parses and checks Mooncake lines one at a time. Unknown
// keys are ignored. The row returned by next is reused by the call after.
type mooncakeParser struct {
	lr  lineReader
	row mooncakeRow
}

// maxTimestampMs is the largest timestamp a trace row may have: sim.Time
// counts int64 nanoseconds.
const maxTimestampMs = float64(sim.Forever) / 1e6

func (p *mooncakeParser) next() (*mooncakeRow, error) {
	line, err := p.lr.next()
	if err != nil {
		return nil, err
	}
	r := &p.row
	r.Timestamp = math.NaN()
	r.InputLength, r.OutputLength = missingInt, missingInt
	r.HashIDs = r.HashIDs[:0]
	if err := json.Unmarshal(line, r); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, p.lr.errorf("%s: expected %s, found %s", te.Field, jsonKind(te.Type), te.Value)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) && strings.Contains(se.Error(), "invalid character") {
			// Not err's text: it quotes a character of the line, and
			// the file may not be a trace at all (/etc/shadow).
			return nil, p.lr.errorf("invalid JSON at byte %d of the line", se.Offset)
		}
		return nil, p.lr.errorf("invalid JSON: %v", err)
	}
	switch {
	case math.IsNaN(r.Timestamp):
		return nil, p.lr.errorf("timestamp: missing")
	case r.Timestamp < 0 || math.IsInf(r.Timestamp, 0):
		return nil, p.lr.errorf("timestamp: expected milliseconds >= 0, found %v", r.Timestamp)
	case r.Timestamp > maxTimestampMs:
		return nil, p.lr.errorf("timestamp: expected milliseconds <= %.4g (the simulated time range, about 292 years), found %v", maxTimestampMs, r.Timestamp)
	}
	for _, f := range [...]struct {
		key string
		v   int64
	}{{"input_length", r.InputLength}, {"output_length", r.OutputLength}} {
		if f.v == missingInt {
			return nil, p.lr.errorf("%s: missing", f.key)
		}
		if f.v < 0 || f.v > maxTokens {
			return nil, p.lr.errorf("%s: expected integer in [0, %d], found %d", f.key, maxTokens, f.v)
		}
	}
	if limit := (r.InputLength + MooncakeBlockTokens - 1) / MooncakeBlockTokens; int64(len(r.HashIDs)) > limit {
		return nil, p.lr.errorf("hash_ids: expected at most %d ids for input_length %d (%d-token blocks), found %d",
			limit, r.InputLength, MooncakeBlockTokens, len(r.HashIDs))
	}
	return r, nil
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Slice:
		return "array of integers"
	}
	return t.String()
}

// MooncakeReader replays a Mooncake JSONL trace (FormatMooncake) as a
// TraceReader. Each hash_id becomes one Prefix segment of 512 tokens (the
// last one covers what is left of input_length, min(512, input_length −
// 512·i)); segment i's Hash is ChainHash(hash of segment i−1, hash_id), so
// requests share a segment exactly when they share every hash_id up to it.
// A row may list fewer ids than ceil(input_length/512) (the rest of the
// prompt is then unique) but not more. Timestamps may be fractional ms.
type MooncakeReader struct {
	p                    mooncakeParser
	mult                 float64
	multErr              error
	maxRequests          int64
	n                    int64
	firstMs, prevMs      float64
	zeroInputs, zeroOuts int64
}

var _ TraceReader = (*MooncakeReader)(nil)

// NewMooncakeReader returns a reader over r; name (usually the file's path)
// is used in error messages. If r is an io.Closer, Close closes it. Invalid
// options make Next return an error.
func NewMooncakeReader(r io.Reader, name string, opts TraceOptions) *MooncakeReader {
	m, err := opts.multiplier()
	return &MooncakeReader{
		p:           mooncakeParser{lr: newLineReader(r, name)},
		mult:        m,
		multErr:     err,
		maxRequests: opts.MaxRequests,
	}
}

// Next implements Source.
func (m *MooncakeReader) Next() (Request, error) {
	if m.multErr != nil {
		return Request{}, m.multErr
	}
	if m.maxRequests > 0 && m.n >= m.maxRequests {
		return Request{}, io.EOF
	}
	row, err := m.p.next()
	if err != nil {
		return Request{}, err
	}
	if m.n == 0 {
		m.firstMs, m.prevMs = row.Timestamp, row.Timestamp
	}
	if row.Timestamp < m.prevMs {
		return Request{}, m.p.lr.errorf("timestamp: expected >= %v (the previous row's), found %v", m.prevMs, row.Timestamp)
	}
	m.prevMs = row.Timestamp
	at, ok := offsetArrival((row.Timestamp-m.firstMs)*1e6, m.mult)
	if !ok {
		return Request{}, m.p.lr.errorf("timestamp: %v ms is beyond the simulated time range", row.Timestamp)
	}
	m.n++
	r := Request{
		ID:           uint64(m.n),
		Arrival:      at,
		InputTokens:  int32(row.InputLength),
		OutputTokens: int32(row.OutputLength),
	}
	if r.InputTokens == 0 {
		r.InputTokens = 1
		m.zeroInputs++
	}
	if r.OutputTokens == 0 {
		r.OutputTokens = 1
		m.zeroOuts++
	}
	if len(row.HashIDs) > 0 {
		r.Prefix = make([]Segment, len(row.HashIDs))
		h := mooncakeRoot
		left := row.InputLength
		for i, id := range row.HashIDs {
			h = ChainHash(h, uint64(id))
			tok := min(left, MooncakeBlockTokens)
			left -= tok
			r.Prefix[i] = Segment{Hash: h, Tokens: int32(tok)}
		}
	}
	return r, nil
}

// ZeroInputs implements TraceReader.
func (m *MooncakeReader) ZeroInputs() int64 { return m.zeroInputs }

// ZeroOutputs implements TraceReader.
func (m *MooncakeReader) ZeroOutputs() int64 { return m.zeroOuts }

// Close closes the underlying reader if it is an io.Closer.
func (m *MooncakeReader) Close() error { return m.p.lr.close() }
