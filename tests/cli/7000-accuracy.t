#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: alone (perf record beside sa-record (perf 6.1 aborts beside another script's BPF program))
# sa-test: statistical
# sa against perf on the same process, function by function (issue 16): the
# short subset of `make accuracy`, Debian's dash loop and zstd -19 in fp and
# dwarf (tests/accuracy/run.sh --short prints the TAP; about a minute).
exec bash "$(dirname "$0")/../accuracy/run.sh" --short "${SA_BUILD:-$(pwd)/build}"
