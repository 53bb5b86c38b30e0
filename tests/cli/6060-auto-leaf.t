#!/bin/bash
# SPDX-License-Identifier: MIT
# sa-test: statistical
# --call-graph auto (issue 10): the checks of 6010-dwarf-leaf.t, with the stack copy
# taken only for samples in code without frame pointers (docs/unwinding.md).
SA_CG=auto . "$(dirname "$0")/6010-dwarf-leaf.t"
