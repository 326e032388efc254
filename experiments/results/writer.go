package results

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
)

// Writer writes one results file as CSV: the header from the schema, then
// rows of exactly the header's width. Fields are quoted as encoding/csv
// does (only when they hold a comma, a quote, a newline or a leading
// space), so plain values are written as they are.
type Writer struct {
	cw     *csv.Writer
	file   string
	header []string
	err    error
}

// NewWriter writes f's header (before, the fixed columns, after) to w.
// Check the error of Flush at the end.
func NewWriter(w io.Writer, f *File, before, after []string) *Writer {
	cw := &Writer{cw: csv.NewWriter(w), file: f.Name, header: f.Header(before, after)}
	cw.err = cw.cw.Write(cw.header)
	return cw
}

// Header is the header written.
func (w *Writer) Header() []string { return w.header }

// Write writes one row. A row whose width is not the header's is refused
// with an error naming the file; the first error sticks.
func (w *Writer) Write(fields ...string) error {
	if w.err != nil {
		return w.err
	}
	if len(fields) != len(w.header) {
		w.err = fmt.Errorf("results: %s: a row of %d fields, the header has %d", w.file, len(fields), len(w.header))
		return w.err
	}
	w.err = w.cw.Write(fields)
	return w.err
}

// Flush writes what is buffered and returns the first error met.
func (w *Writer) Flush() error {
	w.cw.Flush()
	if w.err != nil {
		return w.err
	}
	return w.cw.Error()
}

// Table is a results file built in memory.
type Table struct {
	buf  bytes.Buffer
	w    *Writer
	rows int
}

// NewTable starts f with its header (before, the fixed columns, after).
func NewTable(f *File, before, after []string) *Table {
	t := &Table{}
	t.w = NewWriter(&t.buf, f, before, after)
	return t
}

// Header is the table's header.
func (t *Table) Header() []string { return t.w.Header() }

// Len is the number of rows written so far.
func (t *Table) Len() int { return t.rows }

// Row appends one row. A row of the wrong width is a bug in its writer,
// and panics.
func (t *Table) Row(fields ...string) {
	if err := t.w.Write(fields...); err != nil {
		panic(err)
	}
	t.rows++
}

// Bytes is the file's content.
func (t *Table) Bytes() []byte {
	if err := t.w.Flush(); err != nil {
		panic(err) // a bytes.Buffer does not fail
	}
	return t.buf.Bytes()
}
