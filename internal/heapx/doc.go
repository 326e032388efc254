// Package heapx is a small generic binary min-heap over a slice, for the
// packages that keep a few pending items in time order (failure
// generators, precursor signals, session turns). The caller owns the
// slice; less must be a strict weak order (ties broken by the caller, for
// determinism). sim keeps its own queue: it imports nothing of the project.
package heapx
