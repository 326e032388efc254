package tomlx

import (
	"strconv"
	"strings"

	"github.com/fleetsim/fleetsim/internal/config"
)

// Doc records where each key of one decoded file is. A Doc is read-only after
// Decode returns it and safe for concurrent reads. A nil *Doc knows no keys.
type Doc struct {
	file  string
	lines map[string]int // key path → 1-based line
}

// newDoc scans data for key positions. It never fails: on malformed input the
// positions are a best effort.
func newDoc(filename string, data []byte) *Doc {
	if filename == "" {
		filename = "<input>"
	}
	return &Doc{file: filename, lines: scanLines(string(data))}
}

// File returns the file name used in messages.
func (d *Doc) File() string {
	if d == nil {
		return "<input>"
	}
	return d.file
}

// Has reports whether key (a dotted path, see the package doc) was present in
// the file, as a value, a table or an array element. A table that is only
// implied by a longer key ([a.b] implies a) counts as present.
func (d *Doc) Has(key string) bool {
	if d == nil {
		return false
	}
	_, ok := d.lines[key]
	return ok
}

// Line returns the 1-based line of key. For a key absent from the file it
// returns the line of its nearest present parent (typically the [table]
// header that would hold it), and 0 when no parent is present either.
func (d *Doc) Line(key string) int {
	if d == nil {
		return 0
	}
	for k := key; k != ""; k = parentKey(k) {
		if l, ok := d.lines[k]; ok {
			return l
		}
	}
	return 0
}

// Problems converts validation problems (config.Problems.List) into an
// *Error for this file, each placed at Line(p.Key) and sorted by line, then
// key. It returns nil when ps is empty; since a nil *Error stored in an error
// is not a nil error, return d.Problems(ps).Err() from functions that return
// error.
func (d *Doc) Problems(ps []config.Problem) *Error {
	if len(ps) == 0 {
		return nil
	}
	e := &Error{File: d.File(), Items: make([]Item, 0, len(ps))}
	for _, p := range ps {
		e.Items = append(e.Items, Item{Line: d.Line(p.Key), Key: p.Key, Msg: p.Msg})
	}
	sortItems(e.Items)
	return e
}

// joinPath writes segments as a dotted key path, quoting any segment that is
// not a bare TOML key.
func joinPath(segs []string) string {
	var b strings.Builder
	for i, s := range segs {
		if i > 0 {
			b.WriteByte('.')
		}
		if isBareKey(s) {
			b.WriteString(s)
		} else {
			b.WriteString(strconv.Quote(s))
		}
	}
	return b.String()
}

// isBareKey reports whether s can be written unquoted as a TOML key.
func isBareKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isBareKeyByte(s[i]) {
			return false
		}
	}
	return true
}

func isBareKeyByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// parentKey drops the last segment of a dotted key path, honouring
// double-quoted segments; it returns "" for a one-segment path.
func parentKey(key string) string {
	last := -1
	inQuote := false
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"':
			inQuote = !inQuote
		case !inQuote && c == '.':
			last = i
		}
	}
	if last < 0 {
		return ""
	}
	return key[:last]
}
