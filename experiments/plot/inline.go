package plot

import (
	"bytes"
	"fmt"
	"path/filepath"
)

// SVG is one figure of a run directory rendered in memory as SVG.
type SVG struct {
	Name string // as Figure.Name: "ttft_cdf"
	Data []byte // the SVG document, as Dir would write NAME.svg
}

// SVGs renders, in memory, every figure Dir would draw for dir, in Dir's
// order, as SVG documents identical to the NAME.svg files Dir writes; it
// writes nothing. Its errors are Dir's: a directory holding nothing to
// draw, or a malformed results file, matches ErrBadInput.
func SVGs(dir string) ([]SVG, error) {
	figs, err := dirFigures(dir)
	if err != nil {
		return nil, err
	}
	out := make([]SVG, 0, len(figs))
	for _, f := range figs {
		b, err := render(f, "svg")
		if err != nil {
			return nil, fmt.Errorf("plot %s.svg: %w", f.Name, err)
		}
		out = append(out, SVG{Name: f.Name, Data: b})
	}
	return out, nil
}

// InlineSVG is doc, an SVG document from SVGs, made fit to be placed in an
// HTML page: the XML declaration and comments before the <svg> element are
// dropped. An SVG without an <svg> element is returned unchanged.
func InlineSVG(doc []byte) []byte {
	if i := bytes.Index(doc, []byte("<svg")); i >= 0 {
		return doc[i:]
	}
	return doc
}

// CSV is a results file read whole by the reader fleetsim plot uses: its
// header (names trimmed) and rows, each as wide as the header.
type CSV struct {
	Header []string
	Rows   [][]string
}

// ReadCSV reads the results file at path. ok is false when it does not
// exist. A file without a header, a header naming a column twice or a row
// of the wrong width is an error naming the file and line, matching
// ErrBadInput.
func ReadCSV(path string) (c CSV, ok bool, err error) {
	t, ok, err := readTable(filepath.Dir(path), filepath.Base(path))
	if err != nil || !ok {
		return CSV{}, ok, err
	}
	rows := make([][]string, t.len())
	for i := range rows {
		rows[i] = make([]string, len(t.names))
		for j := range rows[i] {
			rows[i][j] = t.field(i, j)
		}
	}
	return CSV{Header: t.names, Rows: rows}, true, nil
}

// BadInput is an error with the message format makes, matching
// ErrBadInput: for readers of a run directory beside this package's.
func BadInput(format string, args ...any) error {
	return badInput(format, args...)
}
