// Package infile opens every file fleetsim reads: scenarios, engine
// profiles, traces, rate profiles, fault logs, calibration files, part
// files and the results files of a run directory.
//
// Each is read through [Open] (streaming) or [ReadFile] (whole), with its
// [Kind]: the file must be a regular file, after following symbolic links
// (a device such as /dev/zero, a FIFO, which would block the open, or a
// directory is refused before it is opened), and at most the kind's size
// limit is read (a file that grows while read is cut there with an error,
// not read without end). [OpenIn] and [ReadFileIn] read a file of a run
// directory that must not be a symbolic link: a run directory received
// from someone else cannot make fleetsim read elsewhere.
//
// The limits are stated in docs/reference.md's Limits table; errors name the file
// and the kind:
//
//	prof.toml: not a regular file (a FIFO); an engine profile must be a file
//	big.csv: more than 64 MiB; a rate profile is at most that (docs/reference.md, Limits)
package infile
