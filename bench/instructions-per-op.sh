#!/usr/bin/env bash
# instructions-per-op.sh: the instructions one iteration of a micro-benchmark
# executes (valgrind's callgrind; load-independent). Counts the whole
# process at 200,000 and at 1,200,000 iterations and prints the difference
# over 10^6, so start-up and set-up cancel. GOMAXPROCS=1 and GOGC=off keep
# idle workers and the collector from adding counts that vary run to run.
#
#   bench/instructions-per-op.sh TEST-BINARY PKGDIR BENCH-REGEX
#
# e.g. bench/instructions-per-op.sh /tmp/fleet.test models/fleet '^BenchmarkLeastKV128$/^index$'
set -euo pipefail
bin=$1 dir=$2 re=$3
count() {
	(cd "$dir" && GOMAXPROCS=1 GOGC=off GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind \
		--callgrind-out-file=/dev/null "$bin" -test.run '^$' -test.bench "$re" -test.benchtime "$1x" 2>&1) |
		awk '/Collected/ {print $NF}'
}
a=$(count 200000)
b=$(count 1200000)
echo "$re: $(((b - a) / 1000000)) instructions/op"
