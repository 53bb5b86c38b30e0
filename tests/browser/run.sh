#!/bin/bash
# SPDX-License-Identifier: MIT
# run.sh - the browser test of the SVG flame graph, as TAP: installs what it
# needs when missing (Debian's chromium through apt-get when root, the npm
# dependencies through npm ci), draws a folded 60/30/10 split with sa-report
# (or build/tests/bench/folded-driver when sa-report takes no folded text
# for --svg) and runs flamegraph.test.mjs in headless Chromium.
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
if [ -x "$B/bin/sa-report" ] && "$B/bin/sa-report" --svg -o "$T/split.svg" "$T/split.folded" 2>/dev/null; then
	echo "# SVG drawn by sa-report --svg"
elif [ -x "$B/tests/bench/folded-driver" ]; then
	"$B/tests/bench/folded-driver" --svg "$T/split.folded" >"$T/split.svg" || exit 1
	echo "# SVG drawn by folded-driver"
else
	skip_all "neither sa-report --svg on folded text nor $B/tests/bench/folded-driver"
fi
node "$HERE/flamegraph.test.mjs" "$T/split.svg" "$T/split.folded"
