#!/bin/bash
# SPDX-License-Identifier: MIT
# run.sh - the browser test of the SVG flame graph, as TAP: installs what it
# needs when missing (Debian's chromium through apt-get when root, the npm
# dependencies through npm ci), writes a recording of a folded 60/30/10
# split (build/tests/bench/gen-synthetic -f: each frame a function with an
# embedded symbol), draws it with sa-report --svg and runs
# flamegraph.test.mjs on that SVG in headless Chromium.
# Usage: tests/browser/run.sh [BUILD_DIR]   (default: $SA_BUILD or ./build)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
B=${1:-${SA_BUILD:-$HERE/../../build}}
CHROMIUM=${SA_CHROMIUM:-/usr/bin/chromium}

skip_all() { echo "1..0 # SKIP $*"; exit 0; }

if [ ! -x "$CHROMIUM" ]; then
	[ "$(id -u)" = 0 ] || skip_all "no $CHROMIUM and not root to apt-get install chromium"
	echo "# installing chromium (apt-get)"
	{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends chromium; } >/tmp/sa-apt-chromium.log 2>&1 ||
		{ sed 's/^/# /' /tmp/sa-apt-chromium.log | tail -n 20; echo "1..1"; echo "not ok 1 - install chromium"; exit 1; }
fi
command -v node >/dev/null && command -v npm >/dev/null || skip_all "node and npm not installed"
if [ ! -d "$HERE/node_modules/playwright-core" ]; then
	echo "# installing npm dependencies (npm ci)"
	(cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error) 2>&1 | sed 's/^/# /'
	[ -d "$HERE/node_modules/playwright-core" ] || { echo "1..1"; echo "not ok 1 - npm ci"; exit 1; }
fi

T=$(mktemp -d /tmp/sa-browser.XXXXXX)
trap 'rm -rf "$T"' EXIT
cat >"$T/split.folded" <<'EOT'
workload;main;sa_run;sa_leaf_a 6000
workload;main;sa_run;sa_leaf_b 3000
workload;main;sa_run;sa_leaf_c 1000
EOT
for x in "$B/bin/sa-report" "$B/tests/bench/gen-synthetic"; do
	[ -x "$x" ] || { echo "1..1"; echo "not ok 1 - $x not built"; exit 1; }
done
"$B/tests/bench/gen-synthetic" -f "$T/split.folded" -i 10 -o "$T/split.sa" ||
	{ echo "1..1"; echo "not ok 1 - gen-synthetic -f split.folded"; exit 1; }
"$B/bin/sa-report" --svg -o "$T/split.svg" "$T/split.sa" ||
	{ echo "1..1"; echo "not ok 1 - sa-report --svg split.sa"; exit 1; }
node "$HERE/flamegraph.test.mjs" "$T/split.svg" "$T/split.folded"
