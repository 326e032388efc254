package main

import "io"

// cmdPlot is `fleetsim plot DIR` (being written; see issue 5).
func cmdPlot(args []string, stdout, stderr io.Writer) error {
	return usagef("fleetsim plot: not available yet")
}
