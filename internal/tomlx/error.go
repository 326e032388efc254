package tomlx

import (
	"sort"
	"strconv"
	"strings"
)

// Item is one problem in a file.
type Item struct {
	Line int    // 1-based line in the file; 0 when unknown
	Key  string // dotted key path (see the package doc); may be empty for syntax errors
	Msg  string // what was expected and what was found
}

// Error lists every problem found in one file. Its Error method writes one
// problem per line, as "FILE:LINE: KEY: message"; ":LINE" is left out when
// the line is unknown and "KEY: " when there is no key.
type Error struct {
	File  string // the file name given to Decode; "<input>" when that was empty
	Items []Item // sorted by Line, then Key
}

// Error implements error.
func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	for i, it := range e.Items {
		if i > 0 {
			b.WriteByte('\n')
		}
		if i == MaxPrinted {
			b.WriteString(strconv.Itoa(len(e.Items)-i) + " more problems not shown (fix the ones above first)")
			break
		}
		b.WriteString(e.File)
		if it.Line > 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(it.Line))
		}
		b.WriteString(": ")
		if it.Key != "" {
			b.WriteString(it.Key)
			b.WriteString(": ")
		}
		b.WriteString(it.Msg)
	}
	return b.String()
}

// Err returns e as an error, or a nil error when e is nil or has no items.
// Use it to avoid returning a typed nil *Error inside a non-nil error.
func (e *Error) Err() error {
	if e == nil || len(e.Items) == 0 {
		return nil
	}
	return e
}

// sortItems sorts items by line, then key, keeping the original order of
// items that tie.
func sortItems(items []Item) {
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].Line != items[j].Line {
			return items[i].Line < items[j].Line
		}
		return items[i].Key < items[j].Key
	})
}
