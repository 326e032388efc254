package tomlx

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckShapeLimits: size and depth at the limit and one past it.
func TestCheckShapeLimits(t *testing.T) {
	pad := func(n int) []byte { // a valid document of exactly n bytes
		s := "a = 1\n# "
		return []byte(s + strings.Repeat("x", n-len(s)))
	}
	require.NoError(t, CheckShape("f.toml", pad(MaxBytes)))
	err := CheckShape("f.toml", pad(MaxBytes+1))
	require.ErrorContains(t, err, "f.toml: the file is 1048577 bytes; at most 1048576")

	nest := func(n int) []byte {
		return []byte("a = 1\nx = " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n")
	}
	require.NoError(t, CheckShape("f.toml", nest(MaxDepth)))
	require.ErrorContains(t, CheckShape("f.toml", nest(MaxDepth+1)), "f.toml:2: arrays and inline tables nested deeper than 32 levels")
	inline := func(n int) []byte {
		return []byte("x = " + strings.Repeat("{a = ", n) + "1" + strings.Repeat("}", n) + "\n")
	}
	require.NoError(t, CheckShape("f.toml", inline(MaxDepth)))
	require.Error(t, CheckShape("f.toml", inline(MaxDepth+1)))

	dotted := func(n int) []byte { return []byte(strings.Repeat("a.", n) + "b = 1\n") }
	require.NoError(t, CheckShape("f.toml", dotted(MaxDepth)))
	require.ErrorContains(t, CheckShape("f.toml", dotted(MaxDepth+1)), "dotted keys deeper than 32")

	// Brackets, braces and dots in strings and comments do not count, nor
	// the dots of numbers.
	require.NoError(t, CheckShape("f.toml", []byte("s = \""+strings.Repeat("[.", 100)+"\" # "+strings.Repeat("{.", 100)+"\n"+
		"m = '''\n"+strings.Repeat("[", 100)+"\n'''\nf = ["+strings.Repeat("1.5, ", 100)+"]\n")))
	// A deep document is refused by Decode too, before decoding.
	var v struct{}
	_, err = Decode("f.toml", nest(6000), &v)
	require.ErrorContains(t, err, "nested deeper than 32 levels")
}

// TestErrorPrintsAtMostMaxPrinted: 50 problems are printed in full; of 51,
// 50 and a count.
func TestErrorPrintsAtMostMaxPrinted(t *testing.T) {
	mk := func(n int) *Error {
		e := &Error{File: "f.toml"}
		for i := 0; i < n; i++ {
			e.Items = append(e.Items, Item{Line: i + 1, Key: "k", Msg: "bad"})
		}
		return e
	}
	require.Equal(t, MaxPrinted, strings.Count(mk(MaxPrinted).Error(), "\n")+1)
	s := mk(MaxPrinted + 1).Error()
	require.Equal(t, MaxPrinted+1, strings.Count(s, "\n")+1)
	require.True(t, strings.HasSuffix(s, "1 more problems not shown (fix the ones above first)"), s)
	require.Contains(t, mk(100_000).Error(), "99950 more problems not shown")
}
