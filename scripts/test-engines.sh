#!/usr/bin/env bash
# The suites against real servers: starts the engines this machine can run (MongoDB wire protocol
# via scripts/engines/mongo.sh, Kafka via scripts/engines/kafka.sh when present), runs the
# contract suites (*.engine-spec.ts) and then the HTTP end-to-end suite in the real-engine
# topology, and stops everything it started, on success, failure or interrupt.
# EVENTSTORE_URL is passed through when set (EventStoreDB is not started here). A server that
# already answers (started by hand with scripts/engines/<engine>.sh start) is used and left running.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STARTED=()

stop_all() {
  local status=$?
  for engine in "${STARTED[@]}"; do
    bash "scripts/engines/$engine.sh" stop || echo "[test-engines] could not stop $engine" >&2
  done
  exit "$status"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

start() {
  local engine=$1
  if bash "scripts/engines/$engine.sh" status >/dev/null 2>&1; then
    echo "[test-engines] $engine is already running: using it, leaving it running" >&2
    return
  fi
  bash "scripts/engines/$engine.sh" start || { echo "[test-engines] $engine did not start" >&2; exit 1; }
  STARTED+=("$engine")
}

start mongo
export MONGODB_URL="mongodb://127.0.0.1:${MONGO_PORT:-27018}"
if [[ -f scripts/engines/kafka.sh ]]; then
  start kafka
  export KAFKA_BROKERS="127.0.0.1:19092"
fi
[[ -n "${EVENTSTORE_URL:-}" ]] && export EVENTSTORE_URL

echo "[test-engines] MONGODB_URL=$MONGODB_URL KAFKA_BROKERS=${KAFKA_BROKERS:-} EVENTSTORE_URL=${EVENTSTORE_URL:-}"
status=0
npx jest -c jest.engines.config.js || status=1
echo "[test-engines] the HTTP end-to-end suite on the real engines"
npx jest --testPathPattern '/test/.*\.e2e-spec\.ts$' || status=1
exit "$status"
