#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: san
# The SVG flame graph in a real browser: headless Chromium driven by
# playwright-core (tests/browser/run.sh, which installs what it needs):
# search shares within 0.1 point of the folded counts, click-to-zoom to the
# full width within 1 px, reset, hover details.
SA_BUILD=${SA_BUILD:-$(pwd)/build}
exec bash "$(dirname "$0")/../browser/run.sh" "$SA_BUILD"
