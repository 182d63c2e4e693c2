#!/usr/bin/env bash
# tomlib's two commands:
#   ./reproduce.sh        set up .venv (first time only), then execute the notebook series offline into results/
#   ./reproduce.sh test   the same setup plus the `local` model and dev tools, then ruff and the whole test suite
# Extra arguments go to the runner (e.g. `./reproduce.sh --profile full 01`) or to pytest (`./reproduce.sh test -k llm`).
set -euo pipefail
cd "$(dirname "$0")"

VENV=.venv
PY_BIN=""

find_python() {
  local c
  for c in ${PYTHON:-} python3.13 python3.12 python3.11 python3; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      PY_BIN=$c
      return 0
    fi
  done
  echo "reproduce.sh: tomlib needs Python 3.11 or newer on PATH (or PYTHON=/path/to/python3.11)." >&2
  exit 2
}

# ensure_deps EXTRAS: install the project (editable) with EXTRAS when pyproject.toml changed since the last install.
ensure_deps() {
  local extras=$1 stamp want
  if [ ! -x "$VENV/bin/python" ]; then
    find_python
    echo "reproduce.sh: creating $VENV with $($PY_BIN --version)"
    "$PY_BIN" -m venv "$VENV"
  fi
  stamp="$VENV/.tomlib-deps-${extras:-base}"
  want=$("$VENV/bin/python" -c "import hashlib; print(hashlib.sha256(open('pyproject.toml', 'rb').read()).hexdigest())")
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    return 0
  fi
  echo "reproduce.sh: installing dependencies${extras:+ with extras [$extras]} (first run only; needs the package index)"
  local spec="."
  [ -n "$extras" ] && spec=".[$extras]"
  if [[ ",$extras," == *",local,"* ]]; then
    # llama-cpp-python compiles llama.cpp: no native CPU flags (the AMX path crashes), no stale cached wheel.
    CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" "$VENV/bin/python" -m pip install --no-cache-dir -q -e "$spec" \
      || { echo "reproduce.sh: installing $spec failed (see above); check access to the package index." >&2; exit 3; }
  else
    "$VENV/bin/python" -m pip install -q -e "$spec" \
      || { echo "reproduce.sh: installing $spec failed (see above); check access to the package index." >&2; exit 3; }
  fi
  echo "$want" > "$stamp"
}

cmd=${1:-run}
case "$cmd" in
  test)
    shift
    ensure_deps "dev,local"
    export TOMLIB_REQUIRE_LOCAL=1  # the live zero-key path must be exercised, never skipped
    "$VENV/bin/python" -m ruff check .
    "$VENV/bin/python" -m ruff format --check .
    exec "$VENV/bin/python" -m pytest "$@"
    ;;
  -h|--help|help)
    sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'
    ;;
  *)
    [ "$cmd" = run ] && shift || true
    ensure_deps ""
    exec "$VENV/bin/python" -m tomlib run "$@"
    ;;
esac
