package workloads

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// nextOnly hides a Source's NextInto (Limit then calls Next).
type nextOnly struct{ Source }

// TestNextIntoEqualsNext: drawing a synthetic workload through Limit's
// NextInto gives the same requests, field for field, and the same end
// (io.EOF, then EOF again) as through Next, whether the source under
// Limit has NextInto or not, with a request cap or a duration ending it,
// and a stale record in *r beforehand is overwritten whole (a system
// prompt's Prefix included).
func TestNextIntoEqualsNext(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*Config)
		under func(Source) Source
	}{
		{"cap", func(c *Config) { c.MaxRequests, c.DurationS = 500, 0 }, nil},
		{"duration", func(c *Config) { c.MaxRequests, c.DurationS = 0, 30 }, nil},
		{"prompts", func(c *Config) {
			c.MaxRequests, c.DurationS = 500, 0
			c.SystemPrompts, c.SystemPromptTokens, c.SystemPromptChoice = 5, 512, ChoiceZipf
		}, nil},
		{"next only", func(c *Config) { c.MaxRequests, c.DurationS = 500, 0 }, func(s Source) Source { return nextOnly{s} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			want := drain(t, mustNew(t, c, 9), 0)
			require.NotEmpty(t, want)
			src := mustNew(t, c, 9)
			if tc.under != nil {
				l := src.(*limited)
				src = Limit(tc.under(l.src), l.maxRequests, l.until)
			}
			into, ok := src.(IntoSource)
			require.True(t, ok, "Limit's source is an IntoSource")
			r := Request{ID: 1 << 60, Session: 7, SpecQuantile: 0.5, Model: 3, Prefix: []Segment{{Tokens: 99}}}
			for i, w := range want {
				require.NoError(t, into.NextInto(&r))
				require.Equal(t, w, r, "request %d", i)
			}
			require.Equal(t, io.EOF, into.NextInto(&r))
			require.Equal(t, io.EOF, into.NextInto(&r), "EOF again after the end")
		})
	}
}
