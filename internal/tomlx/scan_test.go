package tomlx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestScannerTrickyDocuments(t *testing.T) {
	srcs := []string{
		`[ "x.y" . z ]
 a . "b\tc" = 1
'lit' = { p.q = [ { r = "#}]" }, ], s = '''
}'''' }
`,
		`[[a]]
[a.b]
c = 1
[[a.b.d]]
e = 2
[[a]]
[[a.b.d]]
[[a.b.d]]
e = 3
`,
		`x = [[1, 2], ["""
]"""], [{ y = { z = 1, } }]] # c
	y = 0x1F
`,
		`d = 1979-05-27 07:32:00Z # space in value
t = 07:32:00
f = -inf
"" = 1
`,
		`s = """a\
   b "" """
after = { 'q"' = 1 }
`,
	}
	for _, src := range srcs {
		var raw map[string]any
		_, err := safeDecode(src, &raw)
		require.NoError(t, err, src)
		doc := newDoc("t.toml", []byte(src))
		for _, k := range rawPaths(nil, raw) {
			assert.True(t, doc.Has(k), "scanner misses %s in %q; has %v", k, src, doc.lines)
		}
	}
	doc := newDoc("t.toml", []byte(srcs[1]))
	assert.Equal(t, 3, doc.Line("a.0.b.c"))
	assert.Equal(t, 5, doc.Line("a.0.b.d.0.e"))
	assert.Equal(t, 8, doc.Line("a.1.b.d.1"))
	assert.Equal(t, 9, doc.Line("a.1.b.d.1.e"))
	assert.False(t, doc.Has("a.1.b.c"))

	doc = newDoc("t.toml", []byte(srcs[0]))
	assert.Equal(t, 2, doc.Line(`"x.y".z.a."b\tc"`))
	assert.Equal(t, 3, doc.Line(`"x.y".z.lit.s`))
	assert.Equal(t, 3, doc.Line(`"x.y".z.lit.p.q.0.r`))
}
