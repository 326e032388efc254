package workloads

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"strings"

	"github.com/fleetsim/fleetsim/internal/infile"
	"github.com/fleetsim/fleetsim/sim"
)

// Trace formats understood by OpenTrace and TraceStats.
const (
	// FormatMooncake is Mooncake's JSONL: one object per line with
	// "timestamp" (ms from the start), "input_length", "output_length" and
	// "hash_ids" (one id per 512-token prefix block). Extension .jsonl.
	FormatMooncake = "mooncake"
	// FormatAzure is the Azure LLM inference trace CSV with the header
	// TIMESTAMP,ContextTokens,GeneratedTokens (columns in any order, other
	// columns ignored). Extension .csv.
	FormatAzure = "azure"
)

// TraceFormats returns the known trace format names, sorted.
func TraceFormats() []string { return []string{FormatAzure, FormatMooncake} }

// MooncakeBlockTokens is the number of prompt tokens a Mooncake hash_id
// stands for.
const MooncakeBlockTokens = 512

// maxLineBytes bounds one trace line; longer lines are an error.
const maxLineBytes = 64 << 20

// TraceOptions tune a trace replay.
type TraceOptions struct {
	// RateMultiplier speeds the replay up: a request recorded at offset d
	// from the first row arrives at d / RateMultiplier. 2 replays twice as
	// fast. 0 means 1; otherwise it must be finite and > 0.
	RateMultiplier float64
	// MaxRequests stops the replay after this many requests; 0 reads all.
	MaxRequests int64
}

func (o TraceOptions) multiplier() (float64, error) {
	m := o.RateMultiplier
	if m == 0 {
		return 1, nil
	}
	if !(m > 0) || math.IsInf(m, 0) {
		return 0, fmt.Errorf("workloads: trace rate multiplier must be a finite number > 0, found %v", m)
	}
	return m, nil
}

// TraceReader is a Source that replays a trace file. Readers stream: they
// hold one line at a time, never the whole file. Arrivals are offsets from
// the first row's timestamp divided by the rate multiplier, so the first
// request arrives at 0. Rows whose timestamp is earlier than the previous
// row's are an error (Sources are in arrival order). A recorded length of 0
// tokens is read as 1 and counted (ZeroInputs, ZeroOutputs): real traces
// have such rows, and a Request needs >= 1; negative lengths are errors.
// Errors are *TraceError values naming the file and line.
type TraceReader interface {
	Source
	io.Closer
	// ZeroInputs is the number of rows so far whose input length was 0.
	ZeroInputs() int64
	// ZeroOutputs is the number of rows so far whose output length was 0.
	ZeroOutputs() int64
}

// TraceError is a problem with one line of a trace file.
type TraceError struct {
	File string // the name the reader was given, usually the path
	Line int    // 1-based line number
	Msg  string // what was expected and what was found
}

func (e *TraceError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// DetectFormat returns format if it is not empty (it must then be a known
// format), else the format implied by path's extension: .jsonl → mooncake,
// .csv → azure (case-insensitive).
func DetectFormat(path, format string) (string, error) {
	if format != "" {
		if format != FormatMooncake && format != FormatAzure {
			return "", fmt.Errorf("workloads: unknown trace format %q; valid formats: %s", format, strings.Join(TraceFormats(), ", "))
		}
		return format, nil
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl":
		return FormatMooncake, nil
	case ".csv":
		return FormatAzure, nil
	}
	return "", fmt.Errorf("workloads: cannot tell the trace format of %q from its extension (.jsonl: mooncake, .csv: azure); give the format", path)
}

// OpenTrace opens the trace at path in the given format ("" detects it from
// the extension, see DetectFormat) and returns a reader over it. The caller
// must Close the reader. Errors name path as given.
func OpenTrace(path, format string, opts TraceOptions) (TraceReader, error) {
	return OpenTraceFS(nil, path, format, opts)
}

// OpenTraceFS is OpenTrace reading path from fsys (nil: the OS file
// system). Built-in scenarios replay traces embedded in the binary this way.
func OpenTraceFS(fsys fs.FS, path, format string, opts TraceOptions) (TraceReader, error) {
	f, err := DetectFormat(path, format)
	if err != nil {
		return nil, err
	}
	if _, err := opts.multiplier(); err != nil {
		return nil, err
	}
	file, err := infile.Open(fsys, path, infile.Trace)
	if err != nil {
		return nil, fmt.Errorf("workloads: %w", err)
	}
	if f == FormatMooncake {
		return NewMooncakeReader(file, path, opts), nil
	}
	return NewAzureReader(file, path, opts), nil
}

// lineReader yields the non-blank lines of a stream with their numbers.
type lineReader struct {
	sc     *bufio.Scanner
	name   string
	line   int
	closer io.Closer
}

func newLineReader(r io.Reader, name string) lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLineBytes)
	lr := lineReader{sc: sc, name: name}
	if c, ok := r.(io.Closer); ok {
		lr.closer = c
	}
	return lr
}

// next returns the next non-blank line (valid until the following call), or
// io.EOF, or a *TraceError.
func (l *lineReader) next() ([]byte, error) {
	for l.sc.Scan() {
		l.line++
		b := l.sc.Bytes()
		if l.line == 1 {
			b = bytes.TrimPrefix(b, utf8BOM) // as the scenario reader
		}
		if b = bytes.TrimSpace(b); len(b) > 0 {
			return b, nil
		}
	}
	if err := l.sc.Err(); err != nil {
		l.line++ // the line being read
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, l.errorf("line longer than %d bytes", maxLineBytes)
		}
		return nil, l.errorf("read: %v", err)
	}
	return nil, io.EOF
}

// utf8BOM is the byte order mark a trace may start with.
var utf8BOM = []byte("\ufeff")

// skipBOM returns r without a leading UTF-8 byte order mark.
func skipBOM(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if b, err := br.Peek(len(utf8BOM)); err == nil && bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	return br
}

func (l *lineReader) errorf(format string, args ...any) error {
	return &TraceError{File: l.name, Line: l.line, Msg: fmt.Sprintf(format, args...)}
}

func (l *lineReader) close() error {
	if l.closer == nil {
		return nil
	}
	c := l.closer
	l.closer = nil
	return c.Close()
}

// offsetArrival converts an offset from the first row, in nanoseconds, into
// an arrival time under multiplier mult; ok is false beyond sim.Time's range.
func offsetArrival(offsetNs, mult float64) (sim.Time, bool) {
	ns := math.Round(offsetNs / mult)
	if ns >= float64(sim.Forever) {
		return 0, false
	}
	return sim.Time(ns), true
}

// CheckRows is how many rows Check reads after the header.
const CheckRows = 100

// Check opens the trace t names and reads its header and first rows rows,
// so that a missing file, a bad header or a malformed row near the top is
// found before a run starts. It returns the first problem, naming the file
// (and, for a bad line, the line: a *TraceError); a trace with no rows is
// one too. Rows past the first rows are read by the replay itself.
func (t TraceConfig) Check(rows int) error {
	tr, err := OpenTraceFS(t.FS, t.Path, t.Format, TraceOptions{RateMultiplier: t.RateMultiplier, MaxRequests: int64(rows)})
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "workloads: "))
	}
	defer tr.Close()
	n := 0
	for {
		_, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("%s: the trace has no rows", t.Path)
	}
	return nil
}
