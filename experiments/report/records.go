package report

import (
	"bufio"
	"io"
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/experiments/results"

	"github.com/fleetsim/fleetsim/models/engine"
)

// RequestsHeader is the header of requests.csv, from results.RequestsFile.
var RequestsHeader = strings.Join(results.RequestsFile.Names(), ",") + "\n"

// RequestWriter streams one CSV row per completed request (requests.csv),
// so per-request records never accumulate in memory. Rows come in
// completion order. Call Flush at the end and check its error. Every field
// is a number (or empty), so rows are appended directly, without
// encoding/csv's per-field work; TestRequestsCSVSchema checks them against
// results.RequestsFile.
type RequestWriter struct {
	w   *bufio.Writer
	buf []byte
	err error
}

// NewRequestWriter writes the header to w and returns the writer.
func NewRequestWriter(w io.Writer) *RequestWriter {
	rw := &RequestWriter{w: bufio.NewWriterSize(w, 1<<16)}
	_, rw.err = rw.w.WriteString(RequestsHeader)
	return rw
}

// Write records one outcome; it has the signature of Options.OnDone.
func (rw *RequestWriter) Write(o *engine.Outcome) {
	if rw.err != nil {
		return
	}
	r := o.Req
	b := rw.buf[:0]
	b = strconv.AppendUint(b, r.ID, 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, r.Session, 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(o.Replica), 10)
	b = append(b, ',')
	b = strconv.AppendFloat(b, r.Arrival.Seconds(), 'f', 6, 64)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.InputTokens), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.OutputTokens), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(o.CachedTokens), 10)
	b = append(b, ',')
	b = strconv.AppendFloat(b, (o.Scheduled - r.Arrival).Milliseconds(), 'f', 3, 64)
	b = append(b, ',')
	b = strconv.AppendFloat(b, (o.FirstToken + o.ClientDelay - r.Arrival).Milliseconds(), 'f', 3, 64) // as the client sees it
	b = append(b, ',')
	if r.OutputTokens > 1 {
		b = strconv.AppendFloat(b, (o.Finished+o.FinishDelay-o.FirstToken-o.ClientDelay).Milliseconds()/float64(r.OutputTokens-1), 'f', 3, 64)
	}
	b = append(b, ',')
	b = strconv.AppendFloat(b, (o.Finished + o.FinishDelay - r.Arrival).Milliseconds(), 'f', 3, 64)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(o.Preemptions), 10)
	b = append(b, '\n')
	rw.buf = b
	_, rw.err = rw.w.Write(b)
}

// Flush writes what is buffered and returns the first error met.
func (rw *RequestWriter) Flush() error {
	if rw.err != nil {
		return rw.err
	}
	return rw.w.Flush()
}
