#!/usr/bin/env bash
# pgo.sh: regenerate cmd/fleetsim/default.pgo, the CPU profile that
# profile-guided optimisation (Go 1.21+) builds fleetsim with.
#
#   bench/pgo.sh
#
# `go build`, `go run` and `go install` of ./cmd/fleetsim use
# cmd/fleetsim/default.pgo automatically (-pgo=auto); `go test` does not, so
# benchmarks that should measure the binary as built pass it:
#
#   go test -pgo="$PWD/cmd/fleetsim/default.pgo" ./experiments -run '^$' -bench Fleet8x8B
#
# The profile merges one run of each kind of work the simulator does: the
# fleet benchmarks (short and long outputs, one replica, a 128-replica
# fleet, a disaggregated fleet, the first six hours of the autoscaled
# 1,024-GPU day with its diurnal arrivals) and the engine's hold model.
# PGO changes only what the compiler inlines and how it lays out code,
# never a result: check with bench/compare-outputs.sh after
# regenerating. Refresh it when the hot paths move (a stale profile still
# builds; it just helps less).
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/exp.test" ./experiments
go test -c -o "$work/sim.test" ./sim
n=0
prof() { # DIR BINARY BENCH [flags]
	n=$((n + 1))
	(cd "$1" && "$2" -test.run '^$' -test.bench "$3" -test.cpuprofile "$work/p$n.prof" "${@:4}" >/dev/null)
}
prof experiments "$work/exp.test" 'Fleet8x8B$' -test.benchtime 1x
prof experiments "$work/exp.test" 'SingleReplica8B$' -test.benchtime 1x
prof experiments "$work/exp.test" 'Fleet70B$' -test.benchtime 1x
prof experiments "$work/exp.test" 'Disagg4P4D$' -test.benchtime 1x
prof experiments "$work/exp.test" 'AutoscaledDay1024$' -test.benchtime 1x -test.short
prof sim "$work/sim.test" 'HoldModel/pending=100000$' -test.benchtime 5000000x
go tool pprof -proto "$work"/p*.prof >cmd/fleetsim/default.pgo 2>/dev/null
ls -l cmd/fleetsim/default.pgo
