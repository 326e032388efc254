#!/usr/bin/env bash
# Regenerates the notebook's inputs and executes it in place, from any
# directory. Needs Go, and Python with pandas, matplotlib and nbconvert
# (on Debian: apt-get install python3-pandas python3-matplotlib
# python3-nbconvert python3-ipykernel).
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./cmd/fleetsim run static-batching --requests --out runs/static --quiet
chunked=$(mktemp --suffix=.toml)
trap 'rm -f "$chunked"' EXIT
sed 's/batching = "static"/batching = "chunked"/' experiments/scenarios/static-batching.toml > "$chunked"
go run ./cmd/fleetsim run "$chunked" --requests --out runs/chunked --quiet
cd notebooks
PYDEVD_DISABLE_FILE_VALIDATION=1 python3 -Xfrozen_modules=off -m nbconvert --to notebook --execute --inplace compare_runs.ipynb
echo "executed notebooks/compare_runs.ipynb"
