#!/usr/bin/env bash
# compare-outputs.sh: check that a change leaves every output byte-identical.
#
# Builds fleetsim at BASE (a git revision, default main) and from the working
# tree, runs every built-in scenario with both (run; ab for A/B scenarios,
# sweep for sweeps, size for sizings) under GOMAXPROCS=1 and 2, and compares
# every file of the run directories byte for byte: summary.json,
# replications.csv, cdf.csv, timeseries.csv and the rest.
#
#   bench/compare-outputs.sh [BASE]      # REPS=2 replications each (env)
#
# Exit status 0: identical; 1: a difference (listed); 2: a build or run
# failed.
set -euo pipefail
base=${1:-main}
reps=${REPS:-2}
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/base-src"
git -C "$root" archive "$base" | tar -x -C "$work/base-src"
(cd "$work/base-src" && go build -o "$work/fleetsim-base" ./cmd/fleetsim) || exit 2
(cd "$root" && go build -o "$work/fleetsim-new" ./cmd/fleetsim) || exit 2

names=$("$work/fleetsim-new" scenarios | awk '{print $1}')
for which in base new; do
	for procs in 1 2; do
		for n in $names; do
			toml="$root/experiments/scenarios/$n.toml"
			cmds=(run)
			grep -q '^\[\[arms\]\]' "$toml" && cmds+=(ab)
			grep -q '^\[sweep\]' "$toml" && cmds+=(sweep)
			grep -q '^\[size' "$toml" && cmds+=(size)
			for c in "${cmds[@]}"; do
				out="$work/$which-p$procs/$n-$c"
				log="$work/logs/$which-p$procs-$n-$c"
				mkdir -p "$work/$which-p$procs" "$work/logs"
				if ! GOMAXPROCS=$procs "$work/fleetsim-$which" "$c" "$n" --quiet --replications "$reps" \
					--out "$out" >"$log.stdout" 2>"$log.stderr"; then
					echo "FAIL: fleetsim-$which $c $n (GOMAXPROCS=$procs):" >&2
					cat "$log.stderr" >&2
					exit 2
				fi
			done
		done
	done
done

status=0
for procs in 1 2; do
	if ! diff -r -q "$work/base-p1" "$work/new-p$procs"; then
		echo "DIFFERENT: $base (GOMAXPROCS=1) vs working tree (GOMAXPROCS=$procs)"
		status=1
	fi
done
if ! diff -r -q "$work/base-p1" "$work/base-p2"; then
	echo "DIFFERENT: $base at GOMAXPROCS=1 vs 2"
	status=1
fi
files=$(find "$work/base-p1" -type f | wc -l)
[ $status -eq 0 ] && echo "identical: $files files from $(echo $names | wc -w) built-ins, $base vs working tree, GOMAXPROCS 1 and 2, $reps replications"
exit $status
