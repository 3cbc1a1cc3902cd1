#!/usr/bin/env bash
# A MongoDB wire-protocol server for the engine suites, without Docker: FerretDB 1.x built from its
# Go module, on its SQLite backend. Binary, data and logs live in .engines/mongo/.
#
#   scripts/engines/mongo.sh start   builds FerretDB if needed, starts it on 127.0.0.1:27018, waits until it answers
#   scripts/engines/mongo.sh stop    stops the server this script started
#   scripts/engines/mongo.sh status  exits 0 when the server answers
#
# MONGO_PORT overrides the port. The server keeps no state worth keeping: each start begins empty.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HOME_DIR="$ROOT/.engines/mongo"
BIN="$HOME_DIR/bin/ferretdb"
PID_FILE="$HOME_DIR/ferretdb.pid"
LOG_FILE="$HOME_DIR/ferretdb.log"
DATA_DIR="$HOME_DIR/data"
PORT="${MONGO_PORT:-27018}"
FERRETDB_VERSION="v1.24.0" # the last release line with the SQLite backend

log() { echo "[mongo.sh] $*" >&2; }

build() {
  # (Not piped into grep -q: with pipefail, the early exit would fail the check.)
  if [[ -x "$BIN" ]] && [[ "$("$BIN" --version 2>&1)" == *"version: ${FERRETDB_VERSION}"* ]]; then return; fi
  command -v go >/dev/null || { log "Go is needed to build FerretDB (apt-get install golang, or a Go toolchain on PATH)"; exit 1; }
  log "building FerretDB ${FERRETDB_VERSION} from its Go module (once; a few minutes)"
  local module
  module="$(cd "$HOME_DIR" && GOFLAGS=-mod=mod go mod download -json "github.com/FerretDB/FerretDB@${FERRETDB_VERSION}" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [[ -d "$module" ]] || { log "could not download the FerretDB module"; exit 1; }
  # The module cache is read-only, and a release build needs its version file, which the module omits.
  rm -rf "$HOME_DIR/src"
  cp -r "$module" "$HOME_DIR/src"
  chmod -R u+w "$HOME_DIR/src"
  echo "$FERRETDB_VERSION" > "$HOME_DIR/src/build/version/version.txt"
  mkdir -p "$HOME_DIR/bin"
  (cd "$HOME_DIR/src" && GOFLAGS=-buildvcs=false go build -trimpath -o "$BIN" ./cmd/ferretdb)
}

answers() {
  (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null
}

running_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE")"
  kill -0 "$pid" 2>/dev/null && echo "$pid"
}

start() {
  mkdir -p "$HOME_DIR"
  if running_pid >/dev/null; then log "already running (pid $(cat "$PID_FILE"))"; return; fi
  if answers; then log "port $PORT is taken by a process this script did not start"; exit 1; fi
  build
  rm -rf "$DATA_DIR"
  mkdir -p "$DATA_DIR"
  "$BIN" --handler=sqlite --sqlite-url="file:$DATA_DIR/" --state-dir="$HOME_DIR" \
    --listen-addr="127.0.0.1:$PORT" --telemetry=disable --log-level=warn --debug-addr=- \
    >"$LOG_FILE" 2>&1 &
  echo $! > "$PID_FILE"
  for _ in $(seq 1 100); do
    if answers; then log "FerretDB ${FERRETDB_VERSION} answers on 127.0.0.1:$PORT (pid $(cat "$PID_FILE"))"; return; fi
    if ! running_pid >/dev/null; then log "FerretDB exited; see $LOG_FILE"; tail -20 "$LOG_FILE" >&2; rm -f "$PID_FILE"; exit 1; fi
    sleep 0.1
  done
  log "FerretDB did not answer within 10 s; see $LOG_FILE"
  stop
  exit 1
}

stop() {
  local pid
  if ! pid="$(running_pid)"; then rm -f "$PID_FILE"; return; fi
  kill "$pid"
  for _ in $(seq 1 50); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$PID_FILE"; log "stopped"; return; }
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$PID_FILE"
  log "stopped (killed)"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) answers ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
