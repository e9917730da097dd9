#!/usr/bin/env bash
# One command from a fresh Debian machine to a serving one-node nasd: installs the packages,
# builds the programs a node runs (not the tests: tests/run_all.sh builds those), starts rpcbind
# when it is not running (so clients find the server without port options), and starts the
# server with the embedded default export /r/v0 (an LFS volume in a backing file under ./data).
# Stop it with deploy/stop-node.sh.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
"$ROOT/deploy/install-deps.sh"
TARGETS="${TARGETS:-nasd nasd-admin nasd-mkfs nasd-fsck nasd-mirror nasd-passwd}" "$ROOT/deploy/build.sh"
exec "$ROOT/deploy/start-node.sh" "$@"
