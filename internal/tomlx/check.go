package tomlx

import (
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
)

var (
	durationType      = reflect.TypeFor[time.Duration]()
	jsonNumberType    = reflect.TypeFor[json.Number]()
	primitiveType     = reflect.TypeFor[toml.Primitive]()
	unmarshalerType   = reflect.TypeFor[toml.Unmarshaler]()
	textUnmarshalType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// Largest integers a float holds exactly; BurntSushi refuses larger ones.
const (
	maxSafeFloat32Int = 1<<24 - 1
	maxSafeFloat64Int = 1<<53 - 1
)

// checker walks the parsed TOML tree against the destination type, in sorted
// key order, collecting every problem the decoder would hit and more.
type checker struct {
	doc   *Doc
	items []Item
	// freeForm holds the paths (without array indices, as BurntSushi's
	// MetaData writes them) below which the decoder does not mark keys as
	// decoded: interface fields, Primitive and Unmarshaler values.
	freeForm map[string]bool
}

// addf records a problem at path.
func (c *checker) addf(path []string, format string, args ...any) {
	k := joinPath(path)
	c.items = append(c.items, Item{Line: c.doc.Line(k), Key: k, Msg: fmt.Sprintf(format, args...)})
}

// value checks data, found at path (plain: the same path without array
// indices), against Go type t.
func (c *checker) value(path, plain []string, data any, t reflect.Type) {
	if f, ok := data.(float64); ok && !isFinite(f) {
		c.addf(path, "must be a finite number, found %s", formatFloat(f))
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pt := reflect.PointerTo(t)
	switch {
	case t == primitiveType, t.Implements(unmarshalerType), pt.Implements(unmarshalerType):
		c.freeForm[toml.Key(plain).String()] = true
		c.finite(path, data)
		return
	case t.Implements(textUnmarshalType), pt.Implements(textUnmarshalType):
		c.text(path, data, t)
		return
	case t == durationType:
		c.duration(path, data)
		return
	case t == jsonNumberType:
		if !isNumber(data) {
			c.mismatch(path, "a number", data)
		}
		return
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		c.integer(path, data, t, true)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		c.integer(path, data, t, false)
	case reflect.Float32, reflect.Float64:
		c.float(path, data, t)
	case reflect.String:
		if _, ok := data.(string); !ok {
			c.mismatch(path, "a string", data)
		}
	case reflect.Bool:
		if _, ok := data.(bool); !ok {
			c.mismatch(path, "a boolean (true or false)", data)
		}
	case reflect.Struct:
		if m, ok := data.(map[string]any); ok {
			c.table(path, plain, m, t)
		} else {
			c.mismatch(path, "a table", data)
		}
	case reflect.Map:
		c.mapping(path, plain, data, t)
	case reflect.Slice, reflect.Array:
		c.array(path, plain, data, t)
	case reflect.Interface:
		if t.NumMethod() > 0 {
			c.addf(path, "cannot decode into Go type %s (interface with methods)", t)
			return
		}
		c.freeForm[toml.Key(plain).String()] = true
		c.finite(path, data)
	default:
		c.addf(path, "cannot decode into Go type %s", t)
	}
}

// table checks a TOML table against struct type t.
func (c *checker) table(path, plain []string, m map[string]any, t reflect.Type) {
	fields := structFields(t)
	for _, k := range sortedKeys(m) {
		sub, subPlain := extend(path, k), extend(plain, k)
		ft, ok := fields[k]
		if !ok {
			c.unknown(sub, path, k, fields)
			continue
		}
		c.value(sub, subPlain, m[k], ft)
	}
}

// unknown reports key k at path sub, which has no field among fields.
func (c *checker) unknown(sub, parent []string, k string, fields map[string]reflect.Type) {
	names := make([]string, 0, len(fields))
	for n := range fields {
		names = append(names, n)
	}
	sort.Strings(names)
	if s, ok := suggest(k, names); ok {
		c.addf(sub, "unknown key; did you mean %q?", s)
		return
	}
	where := "at the top level"
	if len(parent) > 0 {
		where = "in " + tableName(parent)
	}
	if len(names) == 0 {
		c.addf(sub, "unknown key; no keys are allowed %s", where)
		return
	}
	c.addf(sub, "unknown key; valid keys %s: %s", where, strings.Join(names, ", "))
}

// tableName names the table at path as a reader would write its header:
// [a.b], or [[arms]] for an element of an array of tables.
func tableName(path []string) string {
	if n := len(path); n > 1 {
		if _, err := strconv.Atoi(path[n-1]); err == nil {
			return "[[" + joinPath(path[:n-1]) + "]]"
		}
	}
	return "[" + joinPath(path) + "]"
}

func (c *checker) mapping(path, plain []string, data any, t reflect.Type) {
	if k := t.Key().Kind(); k != reflect.String && k != reflect.Interface {
		c.addf(path, "cannot decode into Go type %s (map keys must be strings)", t)
		return
	}
	m, ok := data.(map[string]any)
	if !ok {
		c.mismatch(path, "a table", data)
		return
	}
	for _, k := range sortedKeys(m) {
		c.value(extend(path, k), extend(plain, k), m[k], t.Elem())
	}
}

func (c *checker) array(path, plain []string, data any, t reflect.Type) {
	var elems []any
	switch d := data.(type) {
	case []any:
		elems = d
	case []map[string]any:
		elems = make([]any, len(d))
		for i := range d {
			elems[i] = d[i]
		}
	default:
		msg := fmt.Sprintf("expected an array, found %s", describe(data))
		if _, isTable := data.(map[string]any); isTable && isTableType(t.Elem()) && len(path) > 0 {
			msg += fmt.Sprintf("; write [[%s]] once for each element", joinPath(path))
		}
		c.addf(path, "%s", msg)
		return
	}
	if t.Kind() == reflect.Array && t.Len() != len(elems) {
		c.addf(path, "expected an array of %d elements, found %d elements", t.Len(), len(elems))
		return
	}
	for i, e := range elems {
		c.value(extend(path, strconv.Itoa(i)), plain, e, t.Elem())
	}
}

func (c *checker) integer(path []string, data any, t reflect.Type, signed bool) {
	n, ok := data.(int64)
	if !ok {
		if signed {
			c.mismatch(path, "an integer", data)
		} else {
			c.mismatch(path, "a non-negative integer", data)
		}
		return
	}
	bits := t.Bits()
	switch {
	case signed && bits < 64 && (n < -1<<(bits-1) || n > 1<<(bits-1)-1):
		c.addf(path, "expected an integer between %d and %d, found integer %d", int64(-1)<<(bits-1), int64(1)<<(bits-1)-1, n)
	case !signed && n < 0:
		c.addf(path, "expected a non-negative integer, found integer %d", n)
	case !signed && bits < 64 && uint64(n) > 1<<bits-1:
		c.addf(path, "expected an integer between 0 and %d, found integer %d", uint64(1)<<bits-1, n)
	}
}

func (c *checker) float(path []string, data any, t reflect.Type) {
	switch d := data.(type) {
	case float64:
		if t.Kind() == reflect.Float32 && math.Abs(d) > math.MaxFloat32 {
			c.addf(path, "expected a number within float32 range, found float %s", formatFloat(d))
		}
	case int64:
		limit := int64(maxSafeFloat64Int)
		if t.Kind() == reflect.Float32 {
			limit = maxSafeFloat32Int
		}
		if d < -limit || d > limit {
			c.addf(path, "integer %d cannot be held exactly by a float; write it as %d.0", d, d)
		}
	default:
		c.mismatch(path, "a number", data)
	}
}

func (c *checker) duration(path []string, data any) {
	switch d := data.(type) {
	case int64: // nanoseconds
	case string:
		if _, err := time.ParseDuration(d); err != nil {
			c.addf(path, `expected a duration such as "250ms", "1.5s" or "2h45m", found string %s`, quote(d))
		}
	default:
		c.mismatch(path, `a duration such as "250ms" or "1.5s"`, data)
	}
}

// text checks a value for a type decoded by its UnmarshalText method, by
// calling that method on a fresh value.
func (c *checker) text(path []string, data any, t reflect.Type) {
	var s string
	switch d := data.(type) {
	case string:
		s = d
	case bool:
		s = strconv.FormatBool(d)
	case int64:
		s = strconv.FormatInt(d, 10)
	case float64:
		s = fmt.Sprintf("%f", d) // as BurntSushi formats it
	case time.Time:
		b, err := d.MarshalText()
		if err != nil {
			c.addf(path, "invalid datetime: %v", err)
			return
		}
		s = string(b)
	default:
		c.mismatch(path, "a single value (string, number or boolean)", data)
		return
	}
	u, ok := reflect.New(t).Interface().(encoding.TextUnmarshaler)
	if !ok {
		return // only the value type has the method; the decoder will say
	}
	if err := u.UnmarshalText([]byte(s)); err != nil {
		c.addf(path, "invalid value %s: %v", describe(data), err)
	}
}

// finite reports every NaN or infinite float in data, which is stored
// unchecked (an interface, Primitive or Unmarshaler).
func (c *checker) finite(path []string, data any) {
	switch d := data.(type) {
	case float64:
		if !isFinite(d) {
			c.addf(path, "must be a finite number, found %s", formatFloat(d))
		}
	case map[string]any:
		for _, k := range sortedKeys(d) {
			c.finite(extend(path, k), d[k])
		}
	case []map[string]any:
		for i, e := range d {
			c.finite(extend(path, strconv.Itoa(i)), e)
		}
	case []any:
		for i, e := range d {
			c.finite(extend(path, strconv.Itoa(i)), e)
		}
	}
}

func (c *checker) mismatch(path []string, expected string, data any) {
	c.addf(path, "expected %s, found %s", expected, describe(data))
}

// describe names a parsed TOML value for messages: `string "fast"`,
// `integer 3`, `a table`.
func describe(data any) string {
	switch d := data.(type) {
	case string:
		return "string " + quote(d)
	case int64:
		return "integer " + strconv.FormatInt(d, 10)
	case float64:
		return "float " + formatFloat(d)
	case bool:
		return "boolean " + strconv.FormatBool(d)
	case time.Time:
		return "datetime " + d.Format(time.RFC3339Nano)
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	case []any:
		return "an array"
	case nil:
		return "nothing"
	}
	return fmt.Sprintf("a value of type %T", data)
}

// quote quotes s, shortened to 40 runes.
func quote(s string) string {
	const max = 40
	if utf8.RuneCountInString(s) > max {
		r := []rune(s)
		return strconv.Quote(string(r[:max])) + "…"
	}
	return strconv.Quote(s)
}

// formatFloat writes f as TOML does: nan, inf, -inf, else the shortest form.
func formatFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func isFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func isNumber(data any) bool {
	switch data.(type) {
	case int64, float64:
		return true
	}
	return false
}

// isTableType reports whether TOML tables decode into t.
func isTableType(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Map
}

// structFields returns the TOML key → Go type of each decodable field of
// struct type t, following BurntSushi's rules: the `toml` tag's name, else
// the Go name; "-" skips; untagged embedded structs are flattened, with
// shallower fields hiding deeper ones. Only exact key matches count here
// (BurntSushi's case-insensitive fallback is deliberately not accepted).
func structFields(t reflect.Type) map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	depthOf := map[string]int{}
	ambiguous := map[string]bool{}
	visited := map[reflect.Type]bool{}
	level := []reflect.Type{t}
	for depth := 0; len(level) > 0; depth++ {
		var next []reflect.Type
		for _, st := range level {
			if visited[st] {
				continue
			}
			visited[st] = true
			for i := 0; i < st.NumField(); i++ {
				sf := st.Field(i)
				tag := sf.Tag.Get("toml")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					next = append(next, ft) // promote its fields, even if unexported
					continue
				}
				if !sf.IsExported() {
					continue
				}
				if name == "" {
					name = sf.Name
				}
				if d, seen := depthOf[name]; seen {
					if d == depth {
						ambiguous[name] = true
					}
					continue
				}
				depthOf[name] = depth
				fields[name] = sf.Type
			}
		}
		level = next
	}
	for name := range ambiguous {
		delete(fields, name)
	}
	return fields
}

// Suggest is suggest for names other than keys (built-in scenarios,
// profiles): the name in names that key most likely misspells.
func Suggest(key string, names []string) (string, bool) { return suggest(key, names) }

// suggest returns the valid name that key most likely misspells: the closest
// by case-insensitive edit distance (transpositions count one edit), if that
// is at most 2 and at most a third of key's length (but at least 1, so that
// short keys don't match everything); else the only name that differs from
// key by a "_suffix" such as a unit ("rate" for "rate_per_s", "warmup_s" for
// "warmup"). Ties go to the earlier name in names.
func suggest(key string, names []string) (string, bool) {
	lk := strings.ToLower(key)
	maxD := min(2, max(1, utf8.RuneCountInString(key)/3))
	best, bestD := "", maxD+1
	for _, n := range names {
		if d := editDistance(lk, strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	if bestD <= maxD {
		return best, true
	}
	var found []string
	for _, n := range names {
		ln := strings.ToLower(n)
		if len(lk) >= 3 && len(ln) >= 3 && (strings.HasPrefix(ln, lk+"_") || strings.HasPrefix(lk, ln+"_")) {
			found = append(found, n)
		}
	}
	if len(found) == 1 {
		return found[0], true
	}
	return "", false
}

// editDistance returns the optimal-string-alignment distance between a and
// b, counted in runes: the Levenshtein distance, with a swap of two adjacent
// runes counted as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// d[i][j] is the distance between ra[:i] and rb[:j]; three rows suffice.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// extend returns path + seg in a new slice.
func extend(path []string, seg string) []string {
	out := make([]string, len(path)+1)
	copy(out, path)
	out[len(path)] = seg
	return out
}
