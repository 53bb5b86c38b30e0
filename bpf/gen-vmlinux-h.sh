#!/bin/sh
# SPDX-License-Identifier: MIT
# Regenerate bpf/vmlinux/<arch>/vmlinux.h from a kernel's BTF. The build never
# reads the host's BTF: CO-RE relocations let one object run on any kernel
# with BTF, so this is run by hand when a newer kernel type is needed.
# usage: bpf/gen-vmlinux-h.sh [BTF_FILE] [ARCH_DIR]
set -eu
btf=${1:-/sys/kernel/btf/vmlinux}
arch=${2:-$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')}
out=$(dirname "$0")/vmlinux/$arch/vmlinux.h
mkdir -p "$(dirname "$out")"
bpftool btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out ($(wc -l < "$out") lines)"
