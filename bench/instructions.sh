#!/usr/bin/env bash
# instructions.sh: count the instructions one benchmark round executes
# (valgrind's callgrind; load-independent, unlike time on a shared machine).
#
#   bench/instructions.sh TEST-BINARY PKGDIR BENCH-REGEX [extra test flags]
#
# Prints the benchmark line and the total instruction count (the whole
# process: start-up included, the same for both sides of an A/B).
#
# One P by default (GOMAXPROCS=1 unless set): with two, the runtime's idle
# spinning is counted too and identical runs differed by up to 2x.
set -euo pipefail
export GOMAXPROCS=${GOMAXPROCS:-1}
bin=$1 dir=$2 re=$3
shift 3
out=$(mktemp)
# Go's asynchronous preemption signals confuse callgrind's signal tracking.
(cd "$dir" && GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$out" \
	"$bin" -test.run '^$' -test.bench "$re" -test.benchtime 1x "$@" 2>&1) |
	grep -E '^Benchmark|Collected' | sed 's/^==[0-9]*== //'
rm -f "$out"
