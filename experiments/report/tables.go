package report

import (
	"strings"
)

// A results table is a header and rows of cells, rendered for a terminal
// (TextTable) or for summary.md (MarkdownTable) from the same cells.

// TextTable renders header and rows for a terminal: cells joined by a
// space, each padded to its column's width, widths[i] runes (a negative
// width: left-aligned in -widths[i]); a longer cell is never cut.
func TextTable(header []string, rows [][]string, widths []int) string {
	var b strings.Builder
	for _, cells := range append([][]string{header}, rows...) {
		for i, c := range cells {
			if i > 0 {
				b.WriteByte(' ')
			}
			w := widths[i]
			left := w < 0
			if left {
				w = -w
			}
			pad := strings.Repeat(" ", max(0, w-len([]rune(c))))
			if left {
				b.WriteString(c + pad)
			} else {
				b.WriteString(pad + c)
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// MarkdownTable renders header and rows as a Markdown (GitHub) table: the
// first column left-aligned, the others right-aligned; a '|' in a cell is
// escaped and an empty header cell is a space.
func MarkdownTable(header []string, rows [][]string) string {
	var b strings.Builder
	row := func(cells []string) {
		b.WriteByte('|')
		for _, c := range cells {
			c = strings.ReplaceAll(strings.ReplaceAll(c, "|", `\|`), "\n", " ")
			if c == "" {
				c = " "
			}
			b.WriteString(" " + c + " |")
		}
		b.WriteByte('\n')
	}
	row(header)
	b.WriteByte('|')
	for i := range header {
		if i == 0 {
			b.WriteString("---|")
		} else {
			b.WriteString("---:|")
		}
	}
	b.WriteByte('\n')
	for _, r := range rows {
		row(r)
	}
	return b.String()
}
