#!/usr/bin/env bash
# Regenerates the notebook's inputs and executes it in place, from any
# directory. Needs Go, and a Python with pandas, matplotlib, nbconvert and
# ipykernel (on Debian: apt-get install python3-pandas python3-matplotlib
# python3-nbconvert python3-ipykernel). The interpreter is $PYTHON if set,
# else the first of /usr/bin/python3 and the python3 on PATH that has them:
# a pyenv or venv python3 earlier on PATH often does not.
set -euo pipefail
cd "$(dirname "$0")/.."
has_pkgs() { "$1" -c 'import pandas, matplotlib, nbconvert, ipykernel' >/dev/null 2>&1; }
py=""
for cand in ${PYTHON:-} /usr/bin/python3 "$(command -v python3 || true)"; do
	if [ -n "$cand" ] && [ -x "$cand" ] && has_pkgs "$cand"; then
		py=$cand
		break
	fi
done
if [ -z "$py" ]; then
	echo "notebooks/run.sh: no Python with pandas, matplotlib, nbconvert and ipykernel found" >&2
	echo "  (tried \$PYTHON, /usr/bin/python3 and python3 on PATH); on Debian:" >&2
	echo "  apt-get install python3-pandas python3-matplotlib python3-nbconvert python3-ipykernel" >&2
	exit 3
fi
go run ./cmd/fleetsim run static-batching --requests --out runs/static --quiet
chunked=$(mktemp --suffix=.toml)
trap 'rm -f "$chunked"' EXIT
sed 's/batching = "static"/batching = "chunked"/' experiments/scenarios/static-batching.toml > "$chunked"
go run ./cmd/fleetsim run "$chunked" --requests --out runs/chunked --quiet
cd notebooks
PYDEVD_DISABLE_FILE_VALIDATION=1 "$py" -Xfrozen_modules=off -m nbconvert --to notebook --execute --inplace compare_runs.ipynb
echo "executed notebooks/compare_runs.ipynb with $py"
