#!/usr/bin/env bash
# fuzz-smoke.sh: run every fuzz target of the module for FUZZTIME (default
# 60s) each, one after another, and report how many inputs each executed;
# exit 1 when a target crashes or executes fewer than MIN_EXECS (default
# 100000: issue 33's bar for a 60-second smoke run). A crash leaves its
# input under the package's testdata/fuzz/, where go test then replays it.
#
#   testdata/hostile/fuzz-smoke.sh                 # all targets, 60 s each
#   FUZZTIME=10s MIN_EXECS=0 testdata/hostile/fuzz-smoke.sh FuzzParse
#
# Not part of CI (12 targets × 60 s); the seeds of every target run in
# go test ./... on every commit. docs/reference.md (Fuzzing) has the last
# measured counts.
set -uo pipefail
cd "$(dirname "$0")/../.."
fuzztime=${FUZZTIME:-60s}
min=${MIN_EXECS:-100000}
status=0
while IFS=: read -r file fn; do
	name=${fn#func }
	name=${name%%(*}
	if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then
		continue
	fi
	pkg=./$(dirname "$file")
	out=$(go test "$pkg" -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" 2>&1)
	rc=$?
	execs=$(printf '%s\n' "$out" | sed -n 's/.*execs: \([0-9]*\).*/\1/p' | tail -1)
	execs=${execs:-0}
	verdict=ok
	if [ $rc -ne 0 ]; then
		verdict=CRASH
		status=1
		printf '%s\n' "$out" | grep -v '^fuzz: elapsed' | head -20 >&2
	elif [ "$execs" -lt "$min" ]; then
		verdict="FEW (< $min)"
		status=1
	fi
	printf '%-22s %-28s %10s execs  %s\n' "$name" "$pkg" "$execs" "$verdict"
done < <(grep -rn --include='*_test.go' '^func Fuzz' . | sed 's/^\.\///' | awk -F: '{print $1":"$3}' | sort)
exit $status
