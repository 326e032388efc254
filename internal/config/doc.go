// Package config holds the small vocabulary every package's configuration
// validation shares: a Problem names a dotted key path (as written in a
// scenario file, e.g. "workload.arrival.rate") and what is wrong with it.
// Validation collects every problem rather than stopping at the first;
// experiments turns keys into file:line positions for the user.
package config
