package main

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/fleetsim/fleetsim/experiments"
	"github.com/stretchr/testify/require"
)

// TestPanicExitsInternalError: a panic anywhere in a command is recovered
// at the top and reported as an internal error with its stack, exit
// status 3 (not 2, the bad-usage status); so is a panic a simulation
// worker recovered (experiments.InternalError).
func TestPanicExitsInternalError(t *testing.T) {
	defer func() { testDispatchHook = nil }()
	testDispatchHook = func() error { panic("boom") }
	var out, errb bytes.Buffer
	require.Equal(t, 3, run([]string{"version"}, &out, &errb))
	require.Contains(t, errb.String(), "fleetsim: internal error (a bug in fleetsim, not in your input")
	require.Contains(t, errb.String(), "boom")
	require.Contains(t, errb.String(), "goroutine") // the stack

	testDispatchHook = func() error {
		return fmt.Errorf("tiny, replication 0 (seed 1): %w", &experiments.InternalError{Value: "worker boom", Stack: []byte("goroutine 7 [running]:")})
	}
	errb.Reset()
	require.Equal(t, 3, run([]string{"version"}, &out, &errb))
	require.Contains(t, errb.String(), "internal error")
	require.Contains(t, errb.String(), "worker boom")
	require.Contains(t, errb.String(), "goroutine 7")
}
