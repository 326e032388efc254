#!/usr/bin/env bash
# release.sh: the release binaries, static, for linux and darwin on amd64 and
# arm64, into dist/ (or $1), with a SHA256SUMS file. Go cross-compiles with
# nothing else installed; `fleetsim version` reports the VCS revision.
#   bash deploy/release.sh [DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
mkdir -p "$out"
for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64; do
	os=${target%/*} arch=${target#*/}
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -ldflags="-s -w" \
		-o "$out/fleetsim-$os-$arch" ./cmd/fleetsim
	echo "release: $out/fleetsim-$os-$arch"
done
(cd "$out" && sha256sum fleetsim-* > SHA256SUMS)
