package hw

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A degraded NVLink domain (a switch tray out) slows a TP group through
// its all-reduce bandwidth term only: the slow-down grows with the step's
// tokens, matches the term's share of the step, and a TP=1 replica has none.
func TestWithNVLinkFraction(t *testing.T) {
	cat := NewCatalog()
	gpu, llm := cat.GPUs["GB200"], cat.LLMs["llama-3-70b"]
	m, err := NewStepModel(gpu, llm, 8, BF16, BF16, testProfile())
	require.NoError(t, err)
	d := m.WithNVLinkFraction(8.0 / 9)
	assert.Same(t, m, m.WithNVLinkFraction(1))
	small := StepShape{DecodeSeqs: 8, DecodeCtx: 8 * 1000}
	big := StepShape{PrefillTokens: 4096, PrefillSeqs: 1, PrefillPairs: 4096 * 4097 / 2}
	for _, s := range []StepShape{small, big} {
		want := m.Step(s) + m.commPerTokenS*s.Tokens()*(9.0/8-1)
		assert.InDelta(t, want, d.Step(s), 1e-12)
		assert.Greater(t, d.Step(s), m.Step(s))
	}
	slowSmall := d.Step(small) / m.Step(small)
	slowBig := d.Step(big) / m.Step(big)
	assert.Greater(t, slowBig, slowSmall, "more tokens, more all-reduce bytes")
	assert.Less(t, slowBig, 9.0/8, "only the communication term slows")
	t.Logf("one of 9 switch trays out: decode step ×%.4f, 4k prefill ×%.4f", slowSmall, slowBig)

	one, err := NewStepModel(gpu, cat.LLMs["llama-3-8b"], 1, BF16, BF16, testProfile())
	require.NoError(t, err)
	assert.Same(t, one, one.WithNVLinkFraction(0.5), "TP=1 has no all-reduce")
}
