package failures

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetsim/fleetsim/sim"
)

type sliceSource struct{ evs []Event }

func (s *sliceSource) Next() (Event, bool) {
	if len(s.evs) == 0 {
		return Event{}, false
	}
	ev := s.evs[0]
	s.evs = s.evs[1:]
	return ev, true
}
func (s *sliceSource) Err() error { return nil }

func TestSignalsOrder(t *testing.T) {
	ev := func(at, pre sim.Time, cat string) Event {
		return Event{Time: at, Precursor: pre, Category: cat}
	}
	src := &sliceSource{[]Event{
		ev(10, NoPrecursor, "a"),
		ev(20, 5, "b"),  // precursor before a's failure
		ev(30, 20, "c"), // precursor at b's failure time: precursor first
		ev(30, NoPrecursor, "d"),
	}}
	s := NewSignals(src, 15)
	type got struct {
		at  sim.Time
		pre bool
		cat string
	}
	var out []got
	for {
		sig, ok := s.Next()
		if !ok {
			break
		}
		out = append(out, got{sig.Time, sig.Precursor, sig.Event.Category})
	}
	assert.Equal(t, []got{{5, true, "b"}, {10, false, "a"}, {20, true, "c"}, {20, false, "b"}, {30, false, "c"}, {30, false, "d"}}, out)
	assert.NoError(t, s.Err())
}

// TestSignalsGenerator: on a generated stream, signals are in time order,
// every failure appears once, and each precursor precedes its failure.
func TestSignalsGenerator(t *testing.T) {
	p := mustProfile(t, ProfileLlama3)
	p.Rows = append(p.Rows, newRow("tray", "tray", ComponentNVLinkSwitch, 1e-6, 0, "user"))
	g, err := NewGenerator(p, HGX(2048, 4), sim.NewStream(3, "failures"))
	require.NoError(t, err)
	s := NewSignals(g, p.MaxPrecursorLead())
	h := 30 * 24 * sim.Hour
	var last sim.Time
	failures, precursors := 0, 0
	seenPre := map[sim.Time]bool{}
	for {
		sig, ok := s.Next()
		if !ok || sig.Time > h {
			break
		}
		require.GreaterOrEqual(t, sig.Time, last)
		last = sig.Time
		if sig.Precursor {
			precursors++
			seenPre[sig.Event.Time] = true
		} else {
			failures++
			if sig.Event.HasPrecursor() {
				require.True(t, seenPre[sig.Event.Time], "precursor before its failure")
			}
		}
	}
	assert.Greater(t, failures, 150)
	assert.Greater(t, precursors, 5)
}
