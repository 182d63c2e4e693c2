#!/usr/bin/env bash
# tomlib's two commands:
#   ./reproduce.sh        set up .venv (first time only), then execute the notebook series offline into results/
#   ./reproduce.sh test   the same setup plus the `local` model, dev tools and a headless browser, then ruff and tests
# and two more:
#   ./reproduce.sh lab    open a working copy of the notebooks (classroom/) in JupyterLab, on the project's environment;
#                         class work writes into classroom/results, never into results/
#   ./reproduce.sh docs   build the book of the series into results/book/ from the executed notebooks (run the series
#                         first; nothing is executed again); it opens from disk, offline
# Extra arguments go to the runner (e.g. `./reproduce.sh --profile full 01`), to pytest (`./reproduce.sh test -k llm`),
# to JupyterLab (`./reproduce.sh lab --no-browser --port 8890`) or to `tomlib book` (`./reproduce.sh docs --out DIR`).
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
  # a venv copied from another checkout imports that checkout's tomlib (kernels included): bind it to this one
  local bound
  bound=$("$VENV/bin/python" -c 'import pathlib, tomlib; print(pathlib.Path(tomlib.__file__).resolve().parent.parent)' \
    2>/dev/null || true)
  if [ -n "$bound" ] && [ "$bound" != "$(pwd -P)" ]; then
    echo "reproduce.sh: $VENV imports tomlib from $bound, not from this checkout; reinstalling it here"
    rm -f "$VENV"/.tomlib-deps-*
  fi
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

# ensure_confseq: confseq (confidence sequences, Howard et al.) ships only as a C++ source package whose pinned build
# tools no longer build on Python 3.11: build it with current ones, Boost's headers from PyPI. Only a run that stops
# when decided (--stop-when-decided) and the tests need it, so the main job needs no compiler.
ensure_confseq() {
  "$VENV/bin/python" -c 'import confseq.boundaries' 2>/dev/null && return 0
  echo "reproduce.sh: building confseq 0.0.11 (first run only, about 30 s)"
  "$VENV/bin/python" -m pip install -q boost-headers scikit-build "pybind11>=2.11" cmake setuptools wheel \
    && BOOST_ROOT="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/boost_headers" \
      "$VENV/bin/python" -m pip install -q --no-build-isolation --no-deps confseq==0.0.11 \
    || { echo "reproduce.sh: building confseq failed (see above); it needs g++ and the package index." >&2; exit 3; }
}

# ensure_browser: Debian's Chromium and the widget page scripts for the browser test (no browser download by a tool).
ensure_browser() {
  if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "reproduce.sh: installing Debian's chromium for the browser test (first run only)"
      apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null \
        || { echo "reproduce.sh: apt-get install chromium failed; install Chromium and put it on PATH." >&2; exit 3; }
    else
      echo "reproduce.sh: the browser test needs Chromium on PATH (Debian: sudo apt-get install chromium)." >&2
      exit 3
    fi
  fi
  fetch_webdeps || exit 3
}

# fetch_webdeps: require.js, the widget renderer (with its icon fonts) and MathJax, shipped beside the exported pages so
# they work without the internet; the browser test needs them too. Returns non-zero when they cannot be fetched.
fetch_webdeps() {
  local web=.tomlib/webdeps
  if [ ! -f "$web/html-manager/dist/embed-amd.js" ] || [ ! -f "$web/requirejs/require.js" ]; then
    command -v npm >/dev/null 2>&1 \
      || { echo "reproduce.sh: no npm to fetch the widget page scripts (install Node.js)." >&2; return 1; }
    echo "reproduce.sh: fetching @jupyter-widgets/html-manager and requirejs from the npm registry (first run only)"
    rm -rf "$web" && mkdir -p "$web"
    (cd "$web" && npm pack --silent @jupyter-widgets/html-manager@1 requirejs@2 >/dev/null \
      && mkdir html-manager requirejs \
      && tar xzf jupyter-widgets-html-manager-*.tgz -C html-manager --strip-components=1 \
      && tar xzf requirejs-*.tgz -C requirejs --strip-components=1 && rm -f ./*.tgz) \
      || { echo "reproduce.sh: npm pack failed; check access to the npm registry." >&2; rm -rf "$web"; return 1; }
  fi
  if [ ! -f "$web/mathjax/MathJax.js" ]; then
    # MathJax 2.7.7 (what nbconvert's pages load), only the parts TeX-AMS_CHTML-full,Safe uses: 1.6 MB of 71
    local parts=(MathJax.js LICENSE config/TeX-AMS_CHTML-full.js config/Safe.js extensions jax/input/TeX
                 jax/output/CommonHTML jax/element fonts/HTML-CSS/TeX/woff)
    echo "reproduce.sh: fetching MathJax 2.7.7 for the pages' equations from the npm registry (first run only)"
    rm -rf "$web/mathjax.part" && mkdir -p "$web/mathjax.part"
    (cd "$web/mathjax.part" && npm pack --silent mathjax@2.7.7 >/dev/null \
      && tar xzf mathjax-2.7.7.tgz --strip-components=1 --exclude=package/extensions/a11y "${parts[@]/#/package/}" \
      && rm -f mathjax-2.7.7.tgz) && mv "$web/mathjax.part" "$web/mathjax" \
      || { echo "reproduce.sh: npm pack mathjax failed; check access to the npm registry." >&2; rm -rf "$web/mathjax.part"; return 1; }
  fi
  export TOMLIB_WEBDEPS="$PWD/$web"
}

# edits WORD OTHER: the edits (insert, delete, substitute, swap two neighbours) that make WORD into OTHER.
edits() {
  local a=$1 b=$2 i j cost best
  local -a prev2 prev row
  for ((j = 0; j <= ${#b}; j++)); do prev[j]=$j; done
  for ((i = 1; i <= ${#a}; i++)); do
    row=("$i")
    for ((j = 1; j <= ${#b}; j++)); do
      [ "${a:i-1:1}" = "${b:j-1:1}" ] && cost=0 || cost=1
      best=$(( prev[j] + 1 < row[j-1] + 1 ? prev[j] + 1 : row[j-1] + 1 ))
      (( prev[j-1] + cost < best )) && best=$(( prev[j-1] + cost ))
      if (( i > 1 && j > 1 )) && [ "${a:i-1:1}" = "${b:j-2:1}" ] && [ "${a:i-2:1}" = "${b:j-1:1}" ] \
        && (( prev2[j-2] + 1 < best )); then
        best=$(( prev2[j-2] + 1 ))
      fi
      row[j]=$best
    done
    prev2=("${prev[@]}") prev=("${row[@]}")
  done
  echo "${prev[${#b}]}"
}

# not_a_command WORD: a first word that names no notebook but is a command mistyped (`tset`) stops here, before any
# install, with the command it is nearest.
not_a_command() {
  local word=$1 c
  [[ $word == -* || $word == run ]] && return 0
  compgen -G "notebooks/${word}*.ipynb" >/dev/null || compgen -G "notebooks/*${word}*.ipynb" >/dev/null && return 0
  for c in test lab docs help run; do
    if (( $(edits "$word" "$c") <= 1 )); then
      echo "reproduce.sh: '$word' is not a command or a notebook (did you mean '$c'?). Commands: run (the default)," \
        "test, lab, docs, help; anything else goes to \`tomlib run\` (e.g. ./reproduce.sh 01)." >&2
      exit 2
    fi
  done
}

cmd=${1:-run}
case "$cmd" in
  test)
    shift
    ensure_deps "dev,local,lab,docs"  # docs: the browser test builds the book
    ensure_confseq
    export TOMLIB_REQUIRE_LOCAL=1  # the live zero-key path must be exercised, never skipped
    ensure_browser
    export TOMLIB_REQUIRE_BROWSER=1  # so is the widget page in a real browser
    "$VENV/bin/python" -m ruff check .
    "$VENV/bin/python" -m ruff format --check .
    started=$SECONDS rc=0
    "$VENV/bin/python" -m pytest "$@" || rc=$?
    echo "reproduce.sh: the suite took $((SECONDS - started)) s (setup excluded; every tier, in parallel on $(nproc) cores)"
    exit $rc
    ;;
  lab)
    shift
    ensure_deps "lab"
    root_ok=()
    [ "$(id -u)" = 0 ] && root_ok=(--allow-root)  # containers and classroom VMs often run as root
    # a working copy: autosave never touches the committed notebooks, and the class's kernels and terminals write
    # into classroom/results and their own response store (TOMLIB_RESULTS, TOMLIB_STORE), never into results/
    exec "$VENV/bin/python" -m tomlib.classroom "${root_ok[@]}" "$@"
    ;;
  docs)
    shift
    ensure_deps "docs"  # Sphinx and MyST-NB: only this command installs them
    exec "$VENV/bin/python" -m tomlib book "$@"
    ;;
  -h|--help|help)
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    ;;
  *)
    not_a_command "$cmd"
    [ "$cmd" = run ] && shift || true
    ensure_deps ""
    for arg in "$@"; do
      if [ "$arg" = --stop-when-decided ]; then ensure_confseq; fi
    done
    fetch_webdeps || echo "reproduce.sh: the exported pages will load their widget scripts from a CDN (online only)." >&2
    exec "$VENV/bin/python" -m tomlib run "$@"
    ;;
esac
