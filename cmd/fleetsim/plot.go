package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/fleetsim/fleetsim/experiments/plot"
)

const plotHelp = `usage: fleetsim plot DIR

Draw the figures of a run directory (cdf.csv, timeseries.csv, sweep.csv,
size.csv, size_search.csv, failures.csv, ettr.csv) into DIR/plots/ as PNG
and SVG, one line per file written.
`

// cmdPlot is `fleetsim plot DIR`: redraw the figures of a run directory
// from its saved results into DIR/plots/, printing one line per file
// written, in sorted order. A missing or empty directory, or a malformed
// results file, is bad input (exit status 2).
func cmdPlot(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	pos, err := parseFlags(fs, args, stdout, plotHelp)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("fleetsim plot: want one run directory, got %d arguments (usage: fleetsim plot DIR)", len(pos))
	}
	written, err := plot.Dir(pos[0])
	for _, w := range written {
		fmt.Fprintf(stdout, "wrote %s\n", w)
	}
	if errors.Is(err, plot.ErrBadInput) {
		return usageError{err}
	}
	return err
}
