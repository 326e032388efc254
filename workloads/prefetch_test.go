package workloads

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPrefetchSameRequests: a prefetched workload gives the same requests,
// field for field and in the same order, as the source drawn directly, then
// io.EOF and io.EOF again, for every kind of workload and for batches that
// do and do not divide the number of requests.
func TestPrefetchSameRequests(t *testing.T) {
	kinds := map[string]func(*Config){
		KindSynthetic: func(c *Config) { c.SystemPrompts, c.SystemPromptTokens, c.SystemPromptChoice = 5, 512, ChoiceZipf },
		KindSessions:  func(c *Config) { c.Arrival.Process, c.Arrival.CV = ProcessGamma, 3 },
		KindAgentic:   func(c *Config) { c.Arrival.Process = ProcessDiurnal },
	}
	for kind, edit := range kinds {
		c := DefaultConfig()
		c.Kind, c.MaxRequests, c.DurationS = kind, 1000, 0
		edit(&c)
		want := drain(t, mustNew(t, c, 5), 0)
		require.Len(t, want, 1000, kind)
		for _, b := range [][2]int{{1, 1}, {7, 2}, {1000, 1}, {256, 3}, {4096, 2}} {
			src := Prefetch(mustNew(t, c, 5), b[0], b[1])
			got := drain(t, src, 0)
			require.Equal(t, want, got, "%s, batches of %d, %d ahead", kind, b[0], b[1])
			_, err := src.Next()
			require.Equal(t, io.EOF, err, "EOF again after the end")
			require.NoError(t, src.(io.Closer).Close())
		}
	}
}

// failing emits n requests, then err; or panics with panicWith there.
type failing struct {
	n, i      int
	err       error
	panicWith any
	closed    bool
}

func (f *failing) Next() (Request, error) {
	if f.i == f.n {
		if f.panicWith != nil {
			panic(f.panicWith)
		}
		return Request{}, f.err
	}
	f.i++
	return Request{ID: uint64(f.i), InputTokens: 1, OutputTokens: 1}, nil
}

func (f *failing) Close() error { f.closed = true; return nil }

// TestPrefetchErrorInPlace: a source's error (a malformed trace line) reaches
// the caller at the request where the source returned it, not earlier,
// however far ahead the drawing goroutine ran; and again on the next call.
func TestPrefetchErrorInPlace(t *testing.T) {
	bad := errors.New("trace.csv:12: bad line")
	for _, n := range []int{0, 5, 8, 13} {
		src := Prefetch(&failing{n: n, err: bad}, 4, 2)
		for i := 1; i <= n; i++ {
			r, err := src.Next()
			require.NoError(t, err, "request %d of %d", i, n)
			require.Equal(t, uint64(i), r.ID)
		}
		_, err := src.Next()
		require.Same(t, bad, err)
		_, err = src.Next()
		require.Same(t, bad, err)
		require.NoError(t, src.(io.Closer).Close())
	}
}

// TestPrefetchPanicReraised: a panic while drawing (a bug) is raised again by
// the call that reaches it, with the value and the drawing goroutine's stack,
// so that the run's recover (experiments.safeRun) reports it.
func TestPrefetchPanicReraised(t *testing.T) {
	src := Prefetch(&failing{n: 6, panicWith: "boom"}, 4, 2)
	for i := 0; i < 6; i++ {
		_, err := src.Next()
		require.NoError(t, err)
	}
	v := func() (v any) {
		defer func() { v = recover() }()
		_, _ = src.Next()
		return nil
	}()
	require.NotNil(t, v)
	require.Contains(t, v, "boom")
	require.Contains(t, v, "workloads.(*failing).Next")
	require.NoError(t, src.(io.Closer).Close())
}

// TestPrefetchCloseEarly: closing before the workload ends (a run stopped
// at its horizon, or overloaded) stops the drawing goroutine, even while it
// waits for a free batch, and closes the source; a second Close is a no-op.
func TestPrefetchCloseEarly(t *testing.T) {
	for _, read := range []int{0, 1, 9, 100} {
		f := &failing{n: 1 << 30}
		src := Prefetch(f, 4, 2).(*prefetched)
		for i := 0; i < read; i++ {
			_, err := src.Next()
			require.NoError(t, err)
		}
		done := make(chan error)
		go func() { done <- src.Close() }()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("Close did not return")
		}
		require.True(t, f.closed, "the source is closed")
		require.NoError(t, src.Close())
	}
}
