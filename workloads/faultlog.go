package workloads

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/fleetsim/fleetsim/internal/infile"
	"github.com/fleetsim/fleetsim/sim"
)

// Fault-log event types (the InfiniteHBD trace's event_type).
const (
	FaultStart = "fault_start"
	FaultEnd   = "fault_end"
)

// maxFaultDays bounds event_time (about 100 years).
const maxFaultDays = 36500

// Fault is one fault of a fault log: a node out of service from Start to
// End. Times are in days from the log's origin, as the log writes them.
type Fault struct {
	// NodeID is the log's node identifier.
	NodeID string
	// Level, Class and Desc are the log's fault_type, e.g. "Hardware
	// Failure", "GPU", "GPU DBE(Double Bit ECC) > Threshold".
	Level, Class, Desc string
	StartDays, EndDays float64
	// StartLine and EndLine are the lines where the start and end events
	// begin in the file.
	StartLine, EndLine int
}

// Start is the fault's start as simulated time (nanoseconds from the log's
// origin, rounded).
func (f *Fault) Start() sim.Time { return DaysToTime(f.StartDays) }

// End is the fault's end as simulated time.
func (f *Fault) End() sim.Time { return DaysToTime(f.EndDays) }

// Repair is End − Start: how long the node was out, in simulated time.
func (f *Fault) Repair() sim.Time { return f.End() - f.Start() }

// RepairDays is EndDays − StartDays.
func (f *Fault) RepairDays() float64 { return f.EndDays - f.StartDays }

// DaysToTime converts days to simulated time, rounding to the nanosecond.
func DaysToTime(days float64) sim.Time { return sim.FromSeconds(days * 86400) }

// FaultLogReader streams an InfiniteHBD-format fault log: a JSON array of
// events
//
//	{"node_id": "...", "event_time": 3.8955, "event_type": "fault_start",
//	 "fault_type": {"Level": "...", "Class": "...", "Desc": "..."}}
//
// with event_time in days, in nondecreasing order. It pairs each fault_end
// with the earliest open fault_start of the same node and fault_type (or,
// if none has the same type, the earliest open one of the node) and returns
// faults in start order (ties in file order). It reads the file through a
// json.Decoder one event at a time and holds only the faults that are open
// or waiting for an earlier one to close. Unknown keys are ignored. Errors
// are *TraceError values naming the file and the line (from the decoder's
// byte offset).
//
// Mapping a fault's Class and Desc to the failure taxonomy (component,
// mode, Xid) is failures.Classify in models/failures/faultmap.go, beside
// the taxonomy: that package reads logs through this one, so the table
// cannot live here without an import cycle.
type FaultLogReader struct {
	dec    *json.Decoder
	lines  *lineCounter
	name   string
	closer io.Closer
	// queue holds faults in start order from head; open[node] lists the
	// queue positions of that node's open faults.
	queue   []*pendingFault
	head    int
	open    map[string][]*pendingFault
	started bool
	ended   bool
	lastT   float64
	err     error
}

type pendingFault struct {
	f      Fault
	closed bool
}

// OpenFaultLog opens the fault log at path. The caller must Close it.
func OpenFaultLog(path string) (*FaultLogReader, error) {
	f, err := infile.Open(nil, path, infile.FaultLog)
	if err != nil {
		return nil, fmt.Errorf("workloads: %w", err)
	}
	return NewFaultLogReader(f, path), nil
}

// NewFaultLogReader reads a fault log from r; name is used in errors. If r
// is an io.Closer, Close closes it.
func NewFaultLogReader(r io.Reader, name string) *FaultLogReader {
	lc := &lineCounter{r: skipBOM(r)}
	fr := &FaultLogReader{dec: json.NewDecoder(lc), lines: lc, name: name, open: map[string][]*pendingFault{}, lastT: math.Inf(-1)}
	fr.dec.UseNumber()
	if c, ok := r.(io.Closer); ok {
		fr.closer = c
	}
	return fr
}

// Close closes the underlying file.
func (r *FaultLogReader) Close() error {
	if r.closer == nil {
		return nil
	}
	c := r.closer
	r.closer = nil
	return c.Close()
}

// Next returns the next fault in start order, io.EOF after the last, or a
// *TraceError. A fault_start that never ends is an error at its line.
func (r *FaultLogReader) Next() (Fault, error) {
	for {
		if r.err != nil {
			return Fault{}, r.err
		}
		if r.head < len(r.queue) && r.queue[r.head].closed {
			f := r.queue[r.head].f
			r.queue[r.head] = nil
			r.head++
			if r.head > 1024 && r.head*2 > len(r.queue) {
				r.queue = append(r.queue[:0], r.queue[r.head:]...)
				r.head = 0
			}
			return f, nil
		}
		if r.ended {
			if r.head < len(r.queue) {
				p := r.queue[r.head]
				r.err = &TraceError{File: r.name, Line: p.f.StartLine,
					Msg: fmt.Sprintf("fault_start on node %q at day %v never ends (no matching fault_end)", p.f.NodeID, p.f.StartDays)}
				return Fault{}, r.err
			}
			return Fault{}, io.EOF
		}
		if err := r.readEvent(); err != nil {
			r.err = err
		}
	}
}

// ReadFaultLog reads every fault of the log at path, in start order.
func ReadFaultLog(path string) ([]Fault, error) {
	fr, err := OpenFaultLog(path)
	if err != nil {
		return nil, err
	}
	defer fr.Close()
	var out []Fault
	for {
		f, err := fr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
}

func (r *FaultLogReader) errorAt(off int64, format string, args ...any) error {
	return &TraceError{File: r.name, Line: r.lines.lineAt(off), Msg: fmt.Sprintf(format, args...)}
}

// decodeErr turns a decoder error into a *TraceError.
func (r *FaultLogReader) decodeErr(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return r.errorAt(se.Offset, "malformed JSON: %v", se)
	case errors.As(err, &te):
		return r.errorAt(te.Offset, "malformed JSON: %v", te)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return r.errorAt(r.dec.InputOffset(), "unexpected end of file (unterminated JSON array)")
	}
	return r.errorAt(r.dec.InputOffset(), "read: %v", err)
}

// readEvent reads one array element (or the array's ends) and applies it.
func (r *FaultLogReader) readEvent() error {
	if !r.started {
		tok, err := r.dec.Token()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return r.errorAt(r.dec.InputOffset(), "empty file: expected a JSON array of fault events")
			}
			return r.decodeErr(err)
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			return r.errorAt(r.dec.InputOffset(), "expected a JSON array of fault events, found %v", describeToken(tok))
		}
		r.started = true
	}
	if !r.dec.More() {
		if _, err := r.dec.Token(); err != nil { // the closing ']'
			return r.decodeErr(err)
		}
		if _, err := r.dec.Token(); !errors.Is(err, io.EOF) {
			return r.errorAt(r.dec.InputOffset(), "unexpected data after the JSON array")
		}
		r.ended = true
		return nil
	}
	tok, err := r.dec.Token()
	if err != nil {
		return r.decodeErr(err)
	}
	line := r.lines.lineAt(r.dec.InputOffset() - 1)
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return r.errorAt(r.dec.InputOffset(), "expected a fault event object, found %v", describeToken(tok))
	}
	ev, err := r.readObject(line)
	if err != nil {
		return err
	}
	return r.apply(ev)
}

type faultEvent struct {
	node, kind, level, class, desc string
	days                           float64
	line                           int
	has                            map[string]bool
}

// readObject reads the rest of one event object (after its '{').
func (r *FaultLogReader) readObject(line int) (faultEvent, error) {
	ev := faultEvent{line: line, has: map[string]bool{}}
	for r.dec.More() {
		key, err := r.stringToken()
		if err != nil {
			return ev, err
		}
		switch key {
		case "node_id", "event_type":
			s, err := r.stringValue(key)
			if err != nil {
				return ev, err
			}
			if key == "node_id" {
				ev.node = s
			} else {
				ev.kind = s
			}
		case "event_time":
			tok, err := r.dec.Token()
			if err != nil {
				return ev, r.decodeErr(err)
			}
			n, ok := tok.(json.Number)
			if !ok {
				return ev, r.errorAt(r.dec.InputOffset(), "event_time: expected a number of days, found %v", describeToken(tok))
			}
			d, err := n.Float64()
			if err != nil || !(d >= 0) || d > maxFaultDays {
				return ev, r.errorAt(r.dec.InputOffset(), "event_time: expected a number of days between 0 and %d, found %s", maxFaultDays, n)
			}
			ev.days = d
		case "fault_type":
			if err := r.readFaultType(&ev); err != nil {
				return ev, err
			}
		default:
			var skip json.RawMessage
			if err := r.dec.Decode(&skip); err != nil {
				return ev, r.decodeErr(err)
			}
			continue
		}
		ev.has[key] = true
	}
	if _, err := r.dec.Token(); err != nil { // '}'
		return ev, r.decodeErr(err)
	}
	for _, k := range []string{"node_id", "event_time", "event_type", "fault_type"} {
		if !ev.has[k] {
			return ev, &TraceError{File: r.name, Line: line, Msg: fmt.Sprintf("fault event lacks %q", k)}
		}
	}
	return ev, nil
}

func (r *FaultLogReader) readFaultType(ev *faultEvent) error {
	tok, err := r.dec.Token()
	if err != nil {
		return r.decodeErr(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return r.errorAt(r.dec.InputOffset(), "fault_type: expected an object with Level, Class and Desc, found %v", describeToken(tok))
	}
	for r.dec.More() {
		key, err := r.stringToken()
		if err != nil {
			return err
		}
		switch key {
		case "Level", "Class", "Desc":
			s, err := r.stringValue("fault_type." + key)
			if err != nil {
				return err
			}
			switch key {
			case "Level":
				ev.level = s
			case "Class":
				ev.class = s
			default:
				ev.desc = s
			}
		default:
			var skip json.RawMessage
			if err := r.dec.Decode(&skip); err != nil {
				return r.decodeErr(err)
			}
		}
	}
	if _, err := r.dec.Token(); err != nil {
		return r.decodeErr(err)
	}
	return nil
}

func (r *FaultLogReader) stringToken() (string, error) {
	tok, err := r.dec.Token()
	if err != nil {
		return "", r.decodeErr(err)
	}
	s, ok := tok.(string)
	if !ok {
		return "", r.errorAt(r.dec.InputOffset(), "expected a key, found %v", describeToken(tok))
	}
	return s, nil
}

func (r *FaultLogReader) stringValue(key string) (string, error) {
	tok, err := r.dec.Token()
	if err != nil {
		return "", r.decodeErr(err)
	}
	s, ok := tok.(string)
	if !ok {
		return "", r.errorAt(r.dec.InputOffset(), "%s: expected a string, found %v", key, describeToken(tok))
	}
	return s, nil
}

// apply pairs one event with the open faults.
func (r *FaultLogReader) apply(ev faultEvent) error {
	if ev.days < r.lastT {
		return &TraceError{File: r.name, Line: ev.line,
			Msg: fmt.Sprintf("event_time %v is earlier than the previous event's %v (events must be in time order)", ev.days, r.lastT)}
	}
	r.lastT = ev.days
	switch ev.kind {
	case FaultStart:
		p := &pendingFault{f: Fault{NodeID: ev.node, Level: ev.level, Class: ev.class, Desc: ev.desc,
			StartDays: ev.days, StartLine: ev.line}}
		r.queue = append(r.queue, p)
		r.open[ev.node] = append(r.open[ev.node], p)
	case FaultEnd:
		open := r.open[ev.node]
		i := -1
		for j, p := range open {
			if p.f.Level == ev.level && p.f.Class == ev.class && p.f.Desc == ev.desc {
				i = j
				break
			}
		}
		if i < 0 && len(open) > 0 {
			i = 0
		}
		if i < 0 {
			return &TraceError{File: r.name, Line: ev.line, Msg: fmt.Sprintf("fault_end on node %q at day %v has no open fault_start", ev.node, ev.days)}
		}
		p := open[i]
		p.f.EndDays, p.f.EndLine, p.closed = ev.days, ev.line, true
		open = append(open[:i], open[i+1:]...)
		if len(open) == 0 {
			delete(r.open, ev.node)
		} else {
			r.open[ev.node] = open
		}
	default:
		return &TraceError{File: r.name, Line: ev.line,
			Msg: fmt.Sprintf("event_type: expected %q or %q, found %q", FaultStart, FaultEnd, ev.kind)}
	}
	return nil
}

func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", string(t))
	case string:
		return fmt.Sprintf("string %q", t)
	case json.Number:
		return "number " + string(t)
	case bool:
		return fmt.Sprintf("boolean %v", t)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", tok)
}

// lineCounter passes reads through and remembers where lines start, so that
// a decoder byte offset can be turned into a line number. Offsets are asked
// in nondecreasing order; it keeps only the newlines past the last offset
// asked (the decoder's read-ahead), not the whole file's.
type lineCounter struct {
	r        io.Reader
	read     int64   // bytes read so far
	newlines []int64 // offsets of newlines at or after the last query
	before   int     // newlines before them
}

func (l *lineCounter) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	for i := 0; i < n; {
		j := bytes.IndexByte(p[i:n], '\n')
		if j < 0 {
			break
		}
		l.newlines = append(l.newlines, l.read+int64(i+j))
		i += j + 1
	}
	l.read += int64(n)
	return n, err
}

// lineAt returns the 1-based line holding byte offset off.
func (l *lineCounter) lineAt(off int64) int {
	k := 0
	for k < len(l.newlines) && l.newlines[k] < off {
		k++
	}
	l.before += k
	l.newlines = l.newlines[k:]
	if len(l.newlines) == 0 {
		l.newlines = nil
	}
	return l.before + 1
}
