package tomlx

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// level is decoded by UnmarshalText.
type level int

func (l *level) UnmarshalText(b []byte) error {
	switch string(b) {
	case "low":
		*l = 1
	case "high":
		*l = 2
	default:
		return fmt.Errorf("want low or high")
	}
	return nil
}

// anyTOML is decoded by UnmarshalTOML and takes any value.
type anyTOML struct{ v any }

func (a *anyTOML) UnmarshalTOML(v any) error { a.v = v; return nil }

type kinds struct {
	Ptr      *float64             `toml:"ptr"`
	F32      float32              `toml:"f32"`
	U8       uint8                `toml:"u8"`
	Num      json.Number          `toml:"num"`
	Level    level                `toml:"level"`
	Custom   anyTOML              `toml:"custom"`
	Prim     toml.Primitive       `toml:"prim"`
	Pair     [2]int               `toml:"pair"`
	When     time.Time            `toml:"when"`
	Subs     []*testRouter        `toml:"subs"`
	ByName   map[string]testArm   `toml:"by_name"`
	Lists    map[string][]float64 `toml:"lists"`
	Anything any                  `toml:"anything"`
	Flag     bool                 `toml:"flag"`
}

type badKinds struct {
	IntKeys map[int]string `toml:"int_keys"`
	Ch      chan int       `toml:"ch"`
	Err     error          `toml:"err"`
}

func TestDecodeKinds(t *testing.T) {
	valid := `ptr = 1.5
f32 = 2
u8 = 255
num = 3.25
level = "high"
custom = { x = [1, 2], y = "z" }
prim = { deep = { key = 1 } }
pair = [1, 2]
when = 2024-05-01T10:00:00Z
subs = [{ name = "a" }, { name = "b", choices = 3 }]
anything = { a = [1, { b = "c" }] }
flag = true
[by_name.first]
label = "one"
[lists]
a = [1, 2.5]
`
	var k kinds
	doc, err := Decode("k.toml", []byte(valid), &k)
	require.NoError(t, err)
	require.NotNil(t, k.Ptr)
	assert.InDelta(t, 1.5, *k.Ptr, 0)
	assert.Equal(t, level(2), k.Level)
	assert.Equal(t, json.Number("3.25"), k.Num)
	assert.Equal(t, [2]int{1, 2}, k.Pair)
	assert.Equal(t, "b", k.Subs[1].Name)
	assert.Equal(t, "one", k.ByName["first"].Label)
	assert.Equal(t, []float64{1, 2.5}, k.Lists["a"])
	assert.True(t, doc.Has("prim.deep.key"))

	tests := []struct {
		src  string
		want string
	}{
		{"ptr = \"x\"", `ptr: expected a number, found string "x"`},
		{"f32 = 1e39", "f32: expected a number within float32 range, found float 1e+39"},
		{"f32 = 16777216", "f32: integer 16777216 cannot be held exactly by a float; write it as 16777216.0"},
		{"ptr = 9007199254740993", "ptr: integer 9007199254740993 cannot be held exactly by a float; write it as 9007199254740993.0"},
		{"u8 = 256", "u8: expected an integer between 0 and 255, found integer 256"},
		{"u8 = 1.0", "u8: expected a non-negative integer, found float 1"},
		{"num = \"3\"", `num: expected a number, found string "3"`},
		{"level = \"medium\"", `level: invalid value string "medium": want low or high`},
		{"level = [1]", "level: expected a single value (string, number or boolean), found an array"},
		{"level = 3", "level: invalid value integer 3: want low or high"},
		{"level = true", "level: invalid value boolean true: want low or high"},
		{"level = 1.5", "level: invalid value float 1.5: want low or high"},
		{"custom = { x = nan }", "custom.x: must be a finite number, found nan"},
		{"prim = [inf]", "prim.0: must be a finite number, found inf"},
		{"pair = [1, 2, 3]", "pair: expected an array of 2 elements, found 3 elements"},
		{"pair = 1", "pair: expected an array, found integer 1"},
		{"when = \"soon\"", `when: invalid value string "soon": parsing time "soon" as "2006-01-02T15:04:05Z07:00": cannot parse "soon" as "2006"`},
		{"when = {}", "when: expected a single value (string, number or boolean), found a table"},
		{"subs = [{ nmae = \"a\" }]", `subs.0.nmae: unknown key; did you mean "name"?`},
		{"[by_name.first]\nlabl = 1", `by_name.first.labl: unknown key; did you mean "label"?`},
		{"by_name = 1", "by_name: expected a table, found integer 1"},
		{"[[lists.a]]", "lists.a.0: expected a number, found a table"},
		{"anything = [[-inf]]", "anything.0.0: must be a finite number, found -inf"},
		{"flag = \"yes\"", `flag: expected a boolean (true or false), found string "yes"`},
		{"flag = 2024-01-01", "flag: expected a boolean (true or false), found datetime 2024-01-01T00:00:00Z"},
		{"flag = \"" + strings.Repeat("x", 50) + "\"", `flag: expected a boolean (true or false), found string "` + strings.Repeat("x", 40) + `"…`},
	}
	for _, tc := range tests {
		var k kinds
		_, err := Decode("k.toml", []byte(tc.src+"\n"), &k)
		require.Error(t, err, tc.src)
		var e *Error
		require.True(t, errors.As(err, &e))
		require.Len(t, e.Items, 1, tc.src)
		got := e.Items[0].Key + ": " + e.Items[0].Msg
		assert.Equal(t, tc.want, got, tc.src)
		assert.Equal(t, strings.Count(tc.src, "\n")+1, e.Items[0].Line, tc.src)
	}
}

func TestDecodeUnsupportedTypes(t *testing.T) {
	var b badKinds
	_, err := Decode("b.toml", []byte("int_keys = { a = \"b\" }\nch = 1\nerr = \"x\"\n"), &b)
	require.Error(t, err)
	assert.Equal(t, "b.toml:1: int_keys: cannot decode into Go type map[int]string (map keys must be strings)\n"+
		"b.toml:2: ch: cannot decode into Go type chan int\n"+
		"b.toml:3: err: cannot decode into Go type error (interface with methods)", err.Error())
}
