package tomlx

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// scanner finds the line of every key in a TOML document. It follows
// [table] and [[array]] headers, dotted keys, inline tables and arrays, and
// skips strings (including multi-line ones) and comments, so that line
// numbers stay right after multi-line values. It is written for valid TOML
// (Decode only trusts it after the parser accepted the file) but must never
// panic or loop on arbitrary input: every loop either consumes input or
// stops.
type scanner struct {
	src      string
	pos      int            // byte offset of the next unread byte
	newlines []int          // byte offsets of every '\n' in src, ascending
	lines    map[string]int // key path → line
	arrays   map[string]int // key path of an array of tables → elements seen
	table    []string       // path of the current [table] or [[array]] element
}

// scanLines returns the line of every key path in src.
func scanLines(src string) map[string]int {
	src = strings.TrimPrefix(src, "\ufeff") // the parser skips a UTF-8 BOM too
	s := &scanner{src: src, lines: map[string]int{}, arrays: map[string]int{}}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			s.newlines = append(s.newlines, i)
		}
	}
	s.document()
	return s.lines
}

// lineAt returns the 1-based line holding byte offset pos.
func (s *scanner) lineAt(pos int) int {
	return sort.SearchInts(s.newlines, pos) + 1
}

func (s *scanner) eof() bool { return s.pos >= len(s.src) }

// peek returns the next byte, or 0 at the end of input.
func (s *scanner) peek() byte {
	if s.eof() {
		return 0
	}
	return s.src[s.pos]
}

func (s *scanner) record(path []string, line int) { s.lines[joinPath(path)] = line }

func (s *scanner) recordIfAbsent(path []string, line int) {
	k := joinPath(path)
	if _, ok := s.lines[k]; !ok {
		s.lines[k] = line
	}
}

func (s *scanner) document() {
	for !s.eof() {
		start := s.pos
		s.skipSpace()
		switch s.peek() {
		case 0:
		case '\n', '\r':
			s.pos++
		case '#':
			s.skipComment()
		case '[':
			s.header()
		default:
			s.keyValue(s.table)
		}
		if s.pos == start { // not TOML: drop the rest of the line
			s.skipComment()
			if s.pos == start {
				s.pos++
			}
		}
	}
}

// skipSpace skips spaces and tabs.
func (s *scanner) skipSpace() {
	for !s.eof() && (s.src[s.pos] == ' ' || s.src[s.pos] == '\t') {
		s.pos++
	}
}

// skipComment skips to the end of the line, leaving the '\n' unread.
func (s *scanner) skipComment() {
	if i := strings.IndexByte(s.src[s.pos:], '\n'); i >= 0 {
		s.pos += i
	} else {
		s.pos = len(s.src)
	}
}

// skipBlank skips whitespace, newlines and comments, as allowed inside
// arrays and (in TOML 1.1) inline tables.
func (s *scanner) skipBlank() {
	for !s.eof() {
		switch s.src[s.pos] {
		case ' ', '\t', '\r', '\n':
			s.pos++
		case '#':
			s.skipComment()
		default:
			return
		}
	}
}

// header reads a [table] or [[array]] header and makes it the current table.
func (s *scanner) header() {
	line := s.lineAt(s.pos)
	s.pos++ // '['
	isArray := false
	if s.peek() == '[' {
		isArray = true
		s.pos++
	}
	segs, ok := s.key()
	if !ok {
		return
	}
	s.skipSpace()
	if s.peek() == ']' {
		s.pos++
		if isArray && s.peek() == ']' {
			s.pos++
		}
	}
	// Resolve the header against arrays of tables seen so far: [a.b] after
	// [[a]] names b in the last element of a.
	var res []string
	for i, seg := range segs {
		res = append(res, seg)
		last := i == len(segs)-1
		if last && isArray {
			s.recordIfAbsent(res, line)
			k := joinPath(res)
			n := s.arrays[k]
			s.arrays[k] = n + 1
			res = append(res, strconv.Itoa(n))
			s.record(res, line)
			break
		}
		if n := s.arrays[joinPath(res)]; n > 0 {
			s.recordIfAbsent(res, line)
			res = append(res, strconv.Itoa(n-1))
		}
		if last {
			s.record(res, line) // an explicit header wins over an implicit parent
		} else {
			s.recordIfAbsent(res, line)
		}
	}
	s.table = res
}

// keyValue reads "key = value" with the key relative to prefix.
func (s *scanner) keyValue(prefix []string) {
	line := s.lineAt(s.pos)
	segs, ok := s.key()
	if !ok {
		return
	}
	s.skipSpace()
	if s.peek() != '=' {
		return
	}
	s.pos++
	full := make([]string, 0, len(prefix)+len(segs))
	full = append(append(full, prefix...), segs...)
	for i := len(prefix) + 1; i < len(full); i++ {
		s.recordIfAbsent(full[:i], line)
	}
	s.record(full, line)
	s.value(full)
}

// key reads a possibly dotted key and returns its segments.
func (s *scanner) key() ([]string, bool) {
	var segs []string
	for {
		s.skipSpace()
		seg, ok := s.keySegment()
		if !ok {
			return nil, false
		}
		segs = append(segs, seg)
		s.skipSpace()
		if s.peek() != '.' {
			return segs, true
		}
		s.pos++
	}
}

func (s *scanner) keySegment() (string, bool) {
	switch s.peek() {
	case '"':
		return s.basicString()
	case '\'':
		return s.literalString()
	}
	start := s.pos
	for !s.eof() && isBareKeyByte(s.src[s.pos]) {
		s.pos++
	}
	return s.src[start:s.pos], s.pos > start
}

// value skips one value, recording the keys of inline tables and the
// elements of arrays under path.
func (s *scanner) value(path []string) {
	s.skipSpace()
	switch {
	case strings.HasPrefix(s.src[s.pos:], `"""`):
		s.multiLineString(`"""`, true)
	case strings.HasPrefix(s.src[s.pos:], `'''`):
		s.multiLineString(`'''`, false)
	case s.peek() == '"':
		s.basicString()
	case s.peek() == '\'':
		s.literalString()
	case s.peek() == '{':
		s.inlineTable(path)
	case s.peek() == '[':
		s.array(path)
	default: // number, boolean, datetime (which may hold a space)
		for !s.eof() && !strings.ContainsRune(",]}\n\r#", rune(s.src[s.pos])) {
			s.pos++
		}
	}
}

func (s *scanner) inlineTable(path []string) {
	s.pos++ // '{'
	for {
		s.skipBlank()
		switch s.peek() {
		case 0:
			return
		case '}':
			s.pos++
			return
		case ',':
			s.pos++
			continue
		}
		start := s.pos
		s.keyValue(path)
		if s.pos == start {
			return
		}
	}
}

func (s *scanner) array(path []string) {
	s.pos++ // '['
	idx := 0
	for {
		s.skipBlank()
		switch s.peek() {
		case 0:
			return
		case ']':
			s.pos++
			return
		case ',':
			s.pos++
			idx++
			continue
		}
		elem := make([]string, 0, len(path)+1)
		elem = append(append(elem, path...), strconv.Itoa(idx))
		s.record(elem, s.lineAt(s.pos))
		start := s.pos
		s.value(elem)
		if s.pos == start {
			return
		}
	}
}

// basicString reads a one-line "..." string and returns its decoded value.
func (s *scanner) basicString() (string, bool) {
	s.pos++ // '"'
	var b strings.Builder
	for !s.eof() {
		c := s.src[s.pos]
		switch c {
		case '"':
			s.pos++
			return b.String(), true
		case '\n':
			return b.String(), false
		case '\\':
			s.escape(&b)
		default:
			b.WriteByte(c)
			s.pos++
		}
	}
	return b.String(), false
}

var (
	simpleEscapes = map[byte]byte{'b': '\b', 't': '\t', 'n': '\n', 'f': '\f', 'r': '\r', 'e': 0x1b, '"': '"', '\\': '\\'}
	hexEscapes    = map[byte]int{'x': 2, 'u': 4, 'U': 8} // escape letter → hex digits
)

// escape decodes the escape sequence at s.pos into b.
func (s *scanner) escape(b *strings.Builder) {
	s.pos++ // '\\'
	if s.eof() {
		return
	}
	c := s.src[s.pos]
	s.pos++
	if r, ok := simpleEscapes[c]; ok {
		b.WriteByte(r)
		return
	}
	digits := hexEscapes[c]
	if digits == 0 || s.pos+digits > len(s.src) {
		b.WriteByte('\\')
		b.WriteByte(c)
		return
	}
	n, err := strconv.ParseUint(s.src[s.pos:s.pos+digits], 16, 32)
	if err != nil || !utf8.ValidRune(rune(n)) {
		b.WriteByte('\\')
		b.WriteByte(c)
		return
	}
	s.pos += digits
	b.WriteRune(rune(n))
}

// literalString reads a one-line '...' string.
func (s *scanner) literalString() (string, bool) {
	s.pos++ // '\''
	start := s.pos
	for !s.eof() {
		switch s.src[s.pos] {
		case '\'':
			s.pos++
			return s.src[start : s.pos-1], true
		case '\n':
			return s.src[start:s.pos], false
		}
		s.pos++
	}
	return s.src[start:], false
}

// multiLineString skips a multi-line string delimited by delim (three
// double or three single quotes), including up to two
// quotes that end its content just before the closing delimiter.
func (s *scanner) multiLineString(delim string, escapes bool) {
	s.pos += len(delim)
	for !s.eof() {
		if escapes && s.src[s.pos] == '\\' {
			s.pos += 2
			continue
		}
		if strings.HasPrefix(s.src[s.pos:], delim) {
			s.pos += len(delim)
			for i := 0; i < 2 && s.peek() == delim[0]; i++ {
				s.pos++
			}
			return
		}
		s.pos++
	}
	s.pos = min(s.pos, len(s.src))
}
