package workloads

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"time"
)

// Azure column names (matched case-insensitively).
const (
	azureTimestamp = "TIMESTAMP"
	azureContext   = "ContextTokens"
	azureGenerated = "GeneratedTokens"
)

// azureLayouts are the timestamp forms accepted, tried in order: the 2023
// traces' "2023-11-16 18:17:03.9799600", the 2024 traces' form with a zone
// offset, and RFC 3339. Times without a zone are read as UTC.
var azureLayouts = [...]string{
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	time.RFC3339Nano,
}

// azureRow is one parsed data row; offsetNs is relative to the first row.
type azureRow struct {
	offsetNs        int64
	context, output int64
}

// azureParser parses an Azure CSV one line at a time: a header naming the
// columns, then one request per line. Fields may be quoted with '"' but may
// not contain commas.
type azureParser struct {
	lr                   lineReader
	header               bool
	colTS, colIn, colOut int
	ncols                int
	fields               [][]byte
	first, prev          time.Time
	rows                 int64
	row                  azureRow
}

func (p *azureParser) readHeader() error {
	line, err := p.lr.next()
	if err == io.EOF {
		p.lr.line = max(p.lr.line, 1)
		return p.lr.errorf("empty file: expected a header %s,%s,%s", azureTimestamp, azureContext, azureGenerated)
	}
	if err != nil {
		return err
	}
	p.fields = splitCSV(p.fields[:0], line)
	p.colTS, p.colIn, p.colOut = -1, -1, -1
	for i, f := range p.fields {
		switch name := string(f); {
		case strings.EqualFold(name, azureTimestamp):
			p.colTS = i
		case strings.EqualFold(name, azureContext):
			p.colIn = i
		case strings.EqualFold(name, azureGenerated):
			p.colOut = i
		}
	}
	for _, c := range [...]struct {
		name string
		i    int
	}{{azureTimestamp, p.colTS}, {azureContext, p.colIn}, {azureGenerated, p.colOut}} {
		if c.i < 0 {
			// Not the line itself: the file may not be a trace at all
			// (/etc/shadow).
			return p.lr.errorf("header: missing column %s (none of the header's %d fields is named so)", c.name, len(p.fields))
		}
	}
	p.ncols = max(p.colTS, p.colIn, p.colOut) + 1
	p.header = true
	return nil
}

func (p *azureParser) next() (*azureRow, error) {
	if !p.header {
		if err := p.readHeader(); err != nil {
			return nil, err
		}
	}
	line, err := p.lr.next()
	if err != nil {
		return nil, err
	}
	p.fields = splitCSV(p.fields[:0], line)
	if len(p.fields) < p.ncols {
		return nil, p.lr.errorf("expected at least %d fields, found %d", p.ncols, len(p.fields))
	}
	ts, err := parseAzureTime(string(p.fields[p.colTS]))
	if err != nil {
		return nil, p.lr.errorf("%s: expected a time like 2023-11-16 18:17:03.9799600, found %q", azureTimestamp, p.fields[p.colTS])
	}
	if p.rows == 0 {
		p.first, p.prev = ts, ts
	}
	if ts.Before(p.prev) {
		return nil, p.lr.errorf("%s: expected >= %s (the previous row's), found %s", azureTimestamp,
			p.prev.Format(azureLayouts[0]), ts.Format(azureLayouts[0]))
	}
	p.prev = ts
	r := &p.row
	r.offsetNs = int64(ts.Sub(p.first))
	if r.context, err = p.length(p.colIn, azureContext); err != nil {
		return nil, err
	}
	if r.output, err = p.length(p.colOut, azureGenerated); err != nil {
		return nil, err
	}
	p.rows++
	return r, nil
}

func (p *azureParser) length(col int, name string) (int64, error) {
	v, err := strconv.ParseInt(string(p.fields[col]), 10, 64)
	if err != nil || v < 0 || v > maxTokens {
		return 0, p.lr.errorf("%s: expected integer in [0, %d], found %q", name, maxTokens, p.fields[col])
	}
	return v, nil
}

func parseAzureTime(s string) (time.Time, error) {
	var err error
	for _, layout := range azureLayouts {
		var t time.Time
		if t, err = time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}

// splitCSV appends line's comma-separated fields to dst, trimming spaces and
// one level of double quotes. The fields alias line.
func splitCSV(dst [][]byte, line []byte) [][]byte {
	for {
		i := bytes.IndexByte(line, ',')
		f := line
		if i >= 0 {
			f = line[:i]
		}
		f = bytes.TrimSpace(f)
		if len(f) >= 2 && f[0] == '"' && f[len(f)-1] == '"' {
			f = f[1 : len(f)-1]
		}
		dst = append(dst, f)
		if i < 0 {
			return dst
		}
		line = line[i+1:]
	}
}

// AzureReader replays an Azure LLM inference trace CSV (FormatAzure) as a
// TraceReader. Requests have no Prefix (the trace records none).
type AzureReader struct {
	p                    azureParser
	mult                 float64
	multErr              error
	maxRequests          int64
	n                    int64
	zeroInputs, zeroOuts int64
}

var _ TraceReader = (*AzureReader)(nil)

// NewAzureReader returns a reader over r; name (usually the file's path) is
// used in error messages. If r is an io.Closer, Close closes it. Invalid
// options make Next return an error.
func NewAzureReader(r io.Reader, name string, opts TraceOptions) *AzureReader {
	m, err := opts.multiplier()
	return &AzureReader{
		p:           azureParser{lr: newLineReader(r, name)},
		mult:        m,
		multErr:     err,
		maxRequests: opts.MaxRequests,
	}
}

// Next implements Source.
func (a *AzureReader) Next() (Request, error) {
	if a.multErr != nil {
		return Request{}, a.multErr
	}
	if a.maxRequests > 0 && a.n >= a.maxRequests {
		return Request{}, io.EOF
	}
	row, err := a.p.next()
	if err != nil {
		return Request{}, err
	}
	at, ok := offsetArrival(float64(row.offsetNs), a.mult)
	if !ok {
		return Request{}, a.p.lr.errorf("%s: beyond the simulated time range", azureTimestamp)
	}
	a.n++
	r := Request{ID: uint64(a.n), Arrival: at, InputTokens: int32(row.context), OutputTokens: int32(row.output)}
	if r.InputTokens == 0 {
		r.InputTokens = 1
		a.zeroInputs++
	}
	if r.OutputTokens == 0 {
		r.OutputTokens = 1
		a.zeroOuts++
	}
	return r, nil
}

// ZeroInputs implements TraceReader.
func (a *AzureReader) ZeroInputs() int64 { return a.zeroInputs }

// ZeroOutputs implements TraceReader.
func (a *AzureReader) ZeroOutputs() int64 { return a.zeroOuts }

// Close closes the underlying reader if it is an io.Closer.
func (a *AzureReader) Close() error { return a.p.lr.close() }
