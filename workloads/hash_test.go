package workloads

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestChainHash(t *testing.T) {
	assert.Equal(t, ChainHash(1, 2), ChainHash(1, 2), "deterministic")
	assert.NotEqual(t, ChainHash(1, 2), ChainHash(2, 1), "order sensitive")
	assert.NotEqual(t, ChainHash(ChainHash(0, 1), 2), ChainHash(ChainHash(0, 3), 2), "depends on the whole chain")
	// A pinned value: hashes must not change between releases or platforms.
	assert.Equal(t, uint64(0xe220a8397b1dcdaf), Mix64(0))
	seen := map[uint64]bool{}
	for i := range uint64(10000) {
		seen[ChainHash(7, i)] = true
	}
	assert.Len(t, seen, 10000, "no collisions over small ids")
}

func TestContinuationSegment(t *testing.T) {
	tests := []struct {
		name       string
		r          Request
		wantTokens int32
	}{
		{"no prefix", Request{InputTokens: 100, OutputTokens: 30, Session: 1}, 128},
		{"after a system prompt", Request{InputTokens: 100, OutputTokens: 30, Session: 1,
			Prefix: []Segment{{Hash: 9, Tokens: 64}}}, 64},
		{"less than a block more", Request{InputTokens: 70, OutputTokens: 2, Session: 1,
			Prefix: []Segment{{Hash: 9, Tokens: 64}}}, 0},
		{"aligned", Request{InputTokens: 16, OutputTokens: 16, Session: 1}, 32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ContinuationSegment(&tt.r)
			assert.Equal(t, tt.wantTokens, c.Tokens)
			assert.Zero(t, (tt.r.PrefixTokens()+c.Tokens)%SegmentTokens)
		})
	}
	a := Request{InputTokens: 100, OutputTokens: 30, Session: 1}
	b := a
	b.Session = 2
	assert.NotEqual(t, ContinuationSegment(&a).Hash, ContinuationSegment(&b).Hash, "sessions do not share")
}
