package tomlx

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Decode decodes the TOML document data, read from filename (used only in
// messages), into v, which must be a non-nil pointer to a struct (or to a
// map with string keys) whose fields carry `toml:"snake_case"` tags and
// already hold their defaults: keys absent from data leave their fields
// unchanged.
//
// Decode first parses data and checks the whole document against v's type,
// reporting every unknown key, wrong type and NaN/Inf float at once (see the
// package doc); only a document that passes is decoded into v. It returns a
// non-nil *Doc in every case, for positions (after a syntax error the Doc
// is a best effort), and a nil error or an *Error listing all problems
// sorted by line. When the error is non-nil, v's contents are unspecified and
// must not be used.
func Decode(filename string, data []byte, v any) (*Doc, error) {
	if err := CheckShape(filename, data); err != nil {
		return newDoc(filename, nil), err // before even the position scan
	}
	doc := newDoc(filename, data)
	fail := func(items []Item) (*Doc, error) {
		sortItems(items)
		return doc, &Error{File: doc.File(), Items: items}
	}

	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || !isTableType(rv.Type().Elem()) {
		return fail([]Item{{Msg: fmt.Sprintf("tomlx: Decode needs a non-nil pointer to a struct or map, got %T", v)}})
	}

	src := string(data)
	var raw map[string]any
	if _, err := safeDecode(src, &raw); err != nil {
		return fail([]Item{syntaxItem(src, err)})
	}

	c := &checker{doc: doc, freeForm: map[string]bool{}}
	c.value(nil, nil, raw, rv.Type().Elem())
	if len(c.items) > 0 {
		return fail(c.items)
	}

	// The document fits v: decode it for real. Problems here mean the checker
	// missed a case the decoder knows about; report them rather than hide them.
	md, err := safeDecode(src, v)
	if err != nil {
		return fail([]Item{decodeItem(doc, err)})
	}
	var items []Item
	for _, k := range md.Undecoded() {
		if !c.underFreeForm(k) {
			ks := k.String()
			items = append(items, Item{Line: doc.Line(ks), Key: ks, Msg: "unknown key"})
		}
	}
	if len(items) > 0 {
		return fail(items)
	}
	return doc, nil
}

// underFreeForm reports whether k lies below a value the decoder stores
// without marking its keys as decoded (an interface, Primitive or
// Unmarshaler).
func (c *checker) underFreeForm(k toml.Key) bool {
	for i := 1; i < len(k); i++ {
		if c.freeForm[k[:i].String()] {
			return true
		}
	}
	return false
}

// safeDecode runs the BurntSushi decoder, turning a panic inside it into an
// error so that Decode never panics on any input.
func safeDecode(src string, v any) (md toml.MetaData, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error in the TOML decoder: %v", r)
		}
	}()
	return toml.Decode(src, v)
}

// syntaxItem converts a parse error in src into an Item with the parser's
// line, column and message plus a hint. The column is left out when it does
// not fall on the line (the parser places some errors, such as duplicate
// keys, past the end of the line).
func syntaxItem(src string, err error) Item {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		return Item{Msg: err.Error()}
	}
	line, col, key := pe.Position.Line, pe.Position.Col, pe.LastKey
	if st := pe.Position.Start; st >= 0 && st <= len(src) {
		// The byte offset of the offending token: its line and column from
		// the source (the lexer's line has already counted a newline that
		// is itself the offending token: "[workload" then a newline).
		line = 1 + strings.Count(src[:st], "\n")
		col = st - strings.LastIndexByte(src[:st], '\n')
	}
	if strings.Contains(pe.Message, "table name") {
		key = "" // the last key is the table before the broken header
	}
	msg := "syntax error"
	if col > 0 && col <= lineLen(src, line)+1 {
		msg += " at column " + strconv.Itoa(col)
	}
	msg += ": " + pe.Message
	if h := hint(pe.Message); h != "" {
		msg += "; hint: " + h
	}
	return Item{Line: line, Key: key, Msg: msg}
}

// lineLen returns the length in bytes of 1-based line n of src, or -1 when
// src has no such line.
func lineLen(src string, n int) int {
	for i := 1; i < n; i++ {
		j := strings.IndexByte(src, '\n')
		if j < 0 {
			return -1
		}
		src = src[j+1:]
	}
	if n < 1 {
		return -1
	}
	if j := strings.IndexByte(src, '\n'); j >= 0 {
		return j
	}
	return len(src)
}

// hints maps fragments of the parser's messages to advice, first match wins.
var hints = []struct{ fragment, hint string }{
	{"already been defined", "each key and each [table] may appear only once"},
	{"already created", "a key cannot be both a value and a table, or both a [table] and an [[array]]"},
	{"expected value but found '\\n'", "every key needs a value after '='"},
	{"expected value but found", `text must be quoted, e.g. name = "fast"`},
	{"unexpected EOF; expected value", "every key needs a value after '='"},
	{"strings cannot contain newlines", `use """triple quotes""" for a multi-line string`},
	{"newlines not allowed within inline tables", "write the inline table on one line, or use a [table] section"},
	{"end with a newline", "put each key = value on its own line"},
	{"expected a comma", "look for a missing comma or closing bracket"},
	{"unexpected comma", "look for a doubled or misplaced comma"},
	{"escape", `write \\ for a backslash, or use a 'literal string'`},
	{"out of range", "integers must fit in 64 bits"},
	{"datetime", "datetimes look like 2006-01-02 or 2006-01-02T15:04:05Z; quote the value if it is text"},
	{"NULL bytes", "save the file as UTF-8"},
	{"UTF-8", "save the file as UTF-8"},
	{"control characters", "remove the control character, or escape it inside a string"},
	{"unexpected EOF", "the file ends inside a value: look for an unclosed quote or bracket"},
	{"table name", "table headers look like [name] or [[name]]"},
	{"key", "keys are letters, digits, '_' and '-', or quoted"},
	{"loat", "numbers look like 42, -3, 1.5, 2e-3 or 1_000"},
	{"nteger", "numbers look like 42, -3, 1.5, 2e-3 or 1_000"},
	{"number", "numbers look like 42, -3, 1.5, 2e-3 or 1_000"},
}

func hint(msg string) string {
	for _, h := range hints {
		if strings.Contains(msg, h.fragment) {
			return h.hint
		}
	}
	return "see https://toml.io/en/v1.0.0"
}

// decoderMsg matches the decoder's own type errors:
// `toml: line 3 (last key "a.b"): message`.
var decoderMsg = regexp.MustCompile(`^toml: (?:line (\d+) )?(?:\(last key "((?:[^"\\]|\\.)*)"\): )?(.*)$`)

// decodeItem converts an error from the final decode into an Item.
func decodeItem(doc *Doc, err error) Item {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return Item{Line: pe.Position.Line, Key: pe.LastKey, Msg: pe.Message}
	}
	m := decoderMsg.FindStringSubmatch(err.Error())
	if m == nil {
		return Item{Msg: err.Error()}
	}
	it := Item{Key: m[2], Msg: m[3]}
	if k, uerr := strconv.Unquote(`"` + m[2] + `"`); uerr == nil {
		it.Key = k
	}
	it.Line, _ = strconv.Atoi(m[1])
	if it.Line == 0 {
		it.Line = doc.Line(it.Key)
	}
	return it
}
