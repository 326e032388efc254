#!/usr/bin/env bash
# interleave.sh: A/B two compiled test binaries on a shared, noisy machine.
#
#   bench/interleave.sh OLD.test NEW.test PKGDIR BENCH-REGEX COUNT [extra test flags]
#
# Runs one benchmark round of OLD, then one of NEW, COUNT times (so load
# drifts hit both alike), in PKGDIR (the package's directory, for its
# testdata), and prints benchstat old.txt new.txt. Build the binaries with
# go test -c -o OLD.test ./PKG at each revision.
set -euo pipefail
old=$1 new=$2 dir=$3 re=$4 count=$5
shift 5
out=$(mktemp -d)
for _ in $(seq "$count"); do
	(cd "$dir" && "$old" -test.run '^$' -test.bench "$re" "$@") >>"$out/old.txt"
	(cd "$dir" && "$new" -test.run '^$' -test.bench "$re" "$@") >>"$out/new.txt"
done
benchstat=$(command -v benchstat || echo "$(go env GOPATH)/bin/benchstat")
"$benchstat" "$out/old.txt" "$out/new.txt"
echo "raw results: $out"
