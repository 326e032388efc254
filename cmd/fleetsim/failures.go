package main

import "io"

// cmdFailures is `fleetsim failures ...` (being written; see issue 3).
func cmdFailures(args []string, stdout, stderr io.Writer) error {
	return usagef("fleetsim failures: not available yet")
}
