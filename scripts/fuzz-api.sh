#!/usr/bin/env bash
# API fuzzing with schemathesis against the served /openapi.yaml: every endpoint, positive and
# negative cases, with valid credentials and existing ids. Fails on any server error and on any
# response that the document does not describe (status, content type, headers, body schema).
#
#   scripts/fuzz-api.sh                 # bounded budget (CI)
#   FUZZ_MAX_EXAMPLES=200 scripts/fuzz-api.sh
set -euo pipefail
cd "$(dirname "$0")/.."

MAX_EXAMPLES="${FUZZ_MAX_EXAMPLES:-15}"
PORT="${FUZZ_PORT:-3917}"
WORK="$(mktemp -d)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# schemathesis in a venv of its own, on the newest Python here (on CPython 3.11 it sometimes fails
# inside its own code generation with "AST constructor recursion depth mismatch").
VENV=.engines/fuzz-venv
if [ ! -x "$VENV/bin/st" ]; then
  PYTHON=""
  # A pyenv shim answers `command -v` for versions it will not run, so each candidate is tried.
  for candidate in "$HOME"/.pyenv/versions/3.13*/bin/python3.13 "$HOME"/.pyenv/versions/3.12*/bin/python3.12 python3.13 python3.12 python3; do
    if "$candidate" -c 'import venv' >/dev/null 2>&1; then PYTHON="$candidate"; break; fi
  done
  [ -n "$PYTHON" ] || { echo "fuzz-api: no Python 3 with venv found" >&2; exit 1; }
  mkdir -p .engines
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check 'schemathesis>=4.32,<5'
fi
[ -f dist/apps/api-gateway/src/main.js ] || npm run build

export FUZZ_ADMIN_TOKEN="adm_fuzz_$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
# The gateway and the projector, without the outbox: the fuzzer sets webhook URLs to whatever it
# generates, and no delivery may ever leave this machine. (Webhook URL validation is fuzzed all
# the same, in the admin API.)
export DATA_DIR="$WORK/data" PORT HOST=127.0.0.1 ADMIN_TOKEN="$FUZZ_ADMIN_TOKEN" SEED_DEMO=false \
  RATE_LIMIT_IP_PER_MIN=0 RATE_LIMIT_KEY_PER_MIN=0 RATE_LIMIT_CAPABILITY_PER_MIN=0
node dist/apps/projector/src/main.js >"$WORK/projector.log" 2>&1 &
PIDS+=($!)
node dist/apps/api-gateway/src/main.js --only-gateway >"$WORK/server.log" 2>&1 &
SERVER_PID=$!
PIDS+=($SERVER_PID)
BASE="http://127.0.0.1:$PORT"
for _ in $(seq 1 100); do
  node -e 'fetch(process.argv[1]).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' "$BASE/openapi.yaml" && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log"; exit 1; }
  sleep 0.2
done

eval "$(node scripts/fuzz/setup.mjs "$BASE" "$FUZZ_ADMIN_TOKEN")"

# Schemathesis closes with a pytest-style line ("=== 3 warnings in 52s ==="). Readers of a CI log
# take that for a pytest run that executed no test, so it is left out here, its pytest-style
# section rules ("=== SUMMARY ===") are written as "--- SUMMARY ---", and the counts of its
# "Test cases:" summary close the run on a plain line instead (and go into the CI total).
set +e
"$VENV/bin/st" --config-file scripts/fuzz/schemathesis.toml run "$BASE/openapi.yaml" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance,negative_data_rejection,ignored_auth \
  --max-examples "$MAX_EXAMPLES" --workers 2 --request-timeout 10 \
  --suppress-health-check all --no-color 2>&1 \
  | sed -u -E -e '/^=+ .* in [0-9.]+m?s =+$/d' -e 's/^=+ (.*) =+$/--- \1 ---/' | tee "$WORK/fuzz.log"
status=${PIPESTATUS[0]}
set -e
count() { grep -A1 '^Test cases:' "$WORK/fuzz.log" | grep -oE "[0-9]+ $1" | head -1 | cut -d" " -f1 || true; }
passed="$(count passed)"; skipped="$(count skipped)"; failed="$(count 'unique failure')"
passed="${passed:-0}"; skipped="${skipped:-0}"; failed="${failed:-0}"
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "Fuzzing: $passed passed, $failed failed, $skipped skipped"
if [ -n "${CI_TEST_TALLY:-}" ]; then echo "$passed $failed $skipped" >>"$CI_TEST_TALLY"; fi

if grep -q 'ERROR' "$WORK/server.log" "$WORK/projector.log"; then
  echo "the logs show errors:"; grep -n 'ERROR' "$WORK/server.log" "$WORK/projector.log" | head -20
  status=1
fi
exit $status
