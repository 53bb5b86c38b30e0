# SPDX-License-Identifier: MIT
# The one entry point: build, test, install, demo. Everything generated goes
# under build/ (binaries in build/bin/). Output is quiet unless V=1.

.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:
.DEFAULT_GOAL := all

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' $(1) $(2);
endif

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system

B ?= build
CC ?= gcc
CLANG ?= clang
# Debian installs bpftool in /usr/sbin, which a user's PATH lacks
BPFTOOL ?= $(shell PATH="$$PATH:/usr/sbin:/sbin" command -v bpftool || echo bpftool)
LLVM_STRIP ?= llvm-strip
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

VERSION := $(shell git describe --always --dirty 2>/dev/null || echo 0.1)
WARN := -Wall -Wextra -Werror
# The modules' own sources, stricter: a local shadows nothing, a function
# without a prototype in a header is static, and () is never a prototype.
# Tests and samples build with WARN alone.
SRC_WARN := -Wshadow -Wmissing-prototypes -Wstrict-prototypes
CFLAGS ?= -O2 -g
BASE_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -fno-omit-frame-pointer \
	-DSA_VERSION='"$(VERSION)"' $(EXTRA_CFLAGS)
# Each object's headers, as the compiler saw them (build/obj/**/*.d, read
# below): touching a header rebuilds only the objects that include it.
DEPFLAGS = -MMD -MP
LDFLAGS ?=

# Each module's -I list names only what it may use (docs/style.md, "What each
# folder may include"); `make check-deps` greps for forbidden includes as well.
FORMAT_INC := -Iformat/include -Iformat
CORE_INC := -Icore
# record/ and report/ keep their stages in subfolders (docs/design.md); each
# is on the include path, so a file includes another's header by its bare
# name (`make check-deps` checks which folder may include which).
RECORD_DIRS := record $(patsubst %/,%,$(sort $(dir $(wildcard record/*/*.[ch]))))
RECORD_INC := -Iformat/include -Ibpf -I$(B)/bpf $(RECORD_DIRS:%=-I%) $(CORE_INC)
REPORT_DIRS := report $(patsubst %/,%,$(sort $(dir $(wildcard report/*/*.[ch]))))
REPORT_INC := -Iformat/include $(REPORT_DIRS:%=-I%) $(CORE_INC)

FORMAT_LIBS := -lzstd -lz
RECORD_LIBS := -lbpf -lelf -lz -lzstd -lpthread
REPORT_EXTRA_LIBS := -liberty -ldl -lpthread
REPORT_LIBS := -ldw -lelf -lzstd -lz -lisal -lm $(REPORT_EXTRA_LIBS)

# ---- Debian packages -------------------------------------------------------
# BUILD_PKGS is all `make`, `make demo` and `make static` need: each header,
# library and tool the build uses comes from a package named here, not
# through another's dependencies (apt-get runs with --no-install-recommends;
# tests/fresh/fresh-root.t builds in a minbase Debian 12 root with these
# alone). TEST_PKGS is what the tests, `make bench` and `make accuracy` add.
# Only `make deps` and `make deps-test` look at them (dpkg), and install what
# is missing (apt-get, as root); `make demo` and `make check` run them first.
# Building runs neither: a missing package shows as the compiler's error.
BUILD_PKGS := make gcc binutils libc6-dev linux-libc-dev clang llvm bpftool libbpf-dev libelf-dev \
	libdw-dev libzstd-dev zlib1g-dev libisal-dev libiberty-dev liblzma-dev libbz2-dev \
	$(EXTRA_BUILD_PKGS)
TEST_PKGS := libcmocka-dev libclang-rt-14-dev libxml2-utils linux-perf zstd perl procps \
	chromium clang-format golang-go strace g++ groff-base util-linux libdebuginfod1 \
	debuginfod curl nodejs python3 time libc6-dbg postgresql e2fsprogs bsdutils bpftrace \
	redis-server redis-tools nginx apache2-utils libfuse3-dev fuse3 openjdk-17-jdk-headless systemd \
	qemu-system-x86 mmdebstrap git $(EXTRA_DEB_PKGS)
# COMMAND:PACKAGE pairs installed only when the command is missing: a node
# from another archive (nodesource's) brings its own npm, which Debian's
# npm package conflicts with.
TEST_CMDS := npm:npm

# deb_ensure TARGET,PACKAGES,COMMAND:PACKAGE PAIRS
define deb_ensure
	@missing=""; for p in $(2); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' \
			|| missing="$$missing $$p"; \
	done; \
	for cp in $(3); do \
		command -v $${cp%%:*} >/dev/null 2>&1 || missing="$$missing $${cp#*:}"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then \
			echo "make $(1): missing Debian packages:$$missing (run as root to install)" >&2; \
			exit 1; \
		fi; \
		echo "  APT      $$missing"; \
		apt-get update -qq >/dev/null && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			$$missing >$(B).apt.log 2>&1 || { cat $(B).apt.log >&2; exit 1; }; \
		rm -f $(B).apt.log; \
	fi
endef

.PHONY: deps deps-test
deps:
	$(call deb_ensure,deps,$(BUILD_PKGS),)
deps-test: deps
	$(call deb_ensure,deps-test,$(TEST_PKGS),$(TEST_CMDS))

# ---- format/ ---------------------------------------------------------------
FORMAT_SRCS := $(wildcard format/*.c)
FORMAT_OBJS := $(FORMAT_SRCS:%.c=$(B)/obj/%.o)
LIBSAF := $(B)/lib/libsaf.a

$(B)/obj/format/%.o: format/%.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(SRC_WARN) $(DEPFLAGS) $(FORMAT_INC) -c $< -o $@

$(LIBSAF): $(FORMAT_OBJS)
	$(call msg,AR,$@)
	@mkdir -p $(@D)
	$(Q)rm -f $@ && ar rcs $@ $^

# ---- bpf/ ------------------------------------------------------------------
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_SKELS := $(BPF_SRCS:bpf/%.bpf.c=$(B)/bpf/%.skel.h)
# clang -target bpf does not see the host's multiarch include dirs; add them
# after its own so <bpf/bpf_helpers.h> and asm/ types resolve.
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

$(B)/bpf/%.bpf.o: bpf/%.bpf.c $(wildcard bpf/*.h) bpf/vmlinux/$(ARCH)/vmlinux.h
	$(call msg,BPF,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -Wall -Werror -target bpf -D__TARGET_ARCH_$(ARCH) \
		-Ibpf -Ibpf/vmlinux/$(ARCH) $(CLANG_BPF_SYS_INCLUDES) $(BPF_EXTRA) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(B)/bpf/%.skel.h: $(B)/bpf/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen object $(B)/bpf/$*.lnk.o $< && \
		$(BPFTOOL) gen skeleton $(B)/bpf/$*.lnk.o name $* > $@

# ---- core/ -----------------------------------------------------------------
# What record/ and report/ both need (libc and libelf only); linked into both.
CORE_SRCS := $(wildcard core/*.c)
CORE_OBJS := $(CORE_SRCS:%.c=$(B)/obj/%.o)

$(B)/obj/core/%.o: core/%.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(SRC_WARN) $(DEPFLAGS) $(CORE_INC) -c $< -o $@

# ---- record/ ---------------------------------------------------------------
RECORD_SRCS := $(wildcard record/*.c record/*/*.c)
RECORD_OBJS := $(RECORD_SRCS:%.c=$(B)/obj/%.o) $(CORE_OBJS)

# The skeletons exist before the first compile; after it, the .d files
# name the objects that include one.
$(B)/obj/record/%.o: record/%.c | $(BPF_SKELS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(SRC_WARN) $(DEPFLAGS) $(RECORD_INC) -c $< -o $@

$(B)/bin/sa-record: $(RECORD_OBJS) $(LIBSAF)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $(EXTRA_LDFLAGS) -o $@ $^ $(RECORD_LIBS)

# ---- report/ ---------------------------------------------------------------
REPORT_SRCS := $(wildcard report/*.c report/*/*.c)
REPORT_OBJS := $(REPORT_SRCS:%.c=$(B)/obj/%.o) $(CORE_OBJS)

$(B)/obj/report/%.o: report/%.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(SRC_WARN) $(DEPFLAGS) $(REPORT_INC) -c $< -o $@

$(B)/bin/sa-report: $(REPORT_OBJS) $(LIBSAF)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $(EXTRA_LDFLAGS) -o $@ $^ $(REPORT_LIBS)

# ---- static/ ---------------------------------------------------------------
# `make static`: sa-record and sa-report linked statically (libbpf, libelf,
# libdw, zstd, zlib, xz, bzip2, libiberty and libc from Debian's -dev
# packages), the BPF object embedded as always. They need nothing from a host
# but the kernel (docs/deploy.md). Debian ships no static ISA-L: the static
# sa-report inflates debug sections with zlib (SA_INFLATE_ZLIB in report/symbols/dwload.c).
# glibc warns that the static sa-report's dlopen() of libdebuginfod needs
# the host's glibc; without it, it just does not ask debuginfod.
STATIC_RECORD := $(B)/static/sa-record
STATIC_REPORT := $(B)/static/sa-report
STATIC_REPORT_OBJS := $(filter-out $(B)/obj/report/symbols/dwload.o,$(REPORT_OBJS)) \
	$(B)/static/obj/report/symbols/dwload.o
STATIC_REPORT_LIBS := -ldw -lelf -lzstd -lz -llzma -lbz2 -lm $(REPORT_EXTRA_LIBS)

.PHONY: static
static: $(STATIC_RECORD) $(STATIC_REPORT)

$(STATIC_RECORD): $(RECORD_OBJS) $(LIBSAF)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -static $(LDFLAGS) $(EXTRA_LDFLAGS) -o $@ $^ $(RECORD_LIBS)

$(B)/static/obj/report/symbols/dwload.o: report/symbols/dwload.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(SRC_WARN) $(DEPFLAGS) -DSA_INFLATE_ZLIB $(REPORT_INC) -c $< -o $@

$(STATIC_REPORT): $(STATIC_REPORT_OBJS) $(LIBSAF)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -static $(LDFLAGS) $(EXTRA_LDFLAGS) -o $@ $^ $(STATIC_REPORT_LIBS) 2>$@.err; \
		rc=$$?; grep -v "dlopen' in statically linked\|in function .dbgd_load" $@.err >&2; \
		rm -f $@.err; exit $$rc

# ---- samples/ --------------------------------------------------------------
# Workloads with a known profile, built with frame pointers.
SAMPLE_SRCS := $(wildcard samples/*.c)
SAMPLE_BINS := $(SAMPLE_SRCS:samples/%.c=$(B)/samples/%)
SAMPLE_CFLAGS := -O2 -g -Wall -Wextra -Werror -fno-omit-frame-pointer \
	-mno-omit-leaf-frame-pointer -pthread

$(B)/samples/%: samples/%.c $(wildcard samples/*.h)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SAMPLE_CFLAGS) -o $@ $< -lm -ldl

BINS := $(B)/bin/sa-record $(B)/bin/sa-report

-include $(shell find $(B)/obj $(B)/static/obj -name '*.d' 2>/dev/null)

# The version the binaries print and write into each recording: a stamp
# rewritten only when `git describe` changes, so the objects that use
# SA_VERSION rebuild then (-MMD does not see a -D value change).
VERSION_STAMP := $(B)/version.stamp
$(shell mkdir -p $(B) && [ "$$(cat $(VERSION_STAMP) 2>/dev/null)" = '$(VERSION)' ] || \
	echo '$(VERSION)' >$(VERSION_STAMP))
$(addprefix $(B)/obj/,report/cli.o report/output/speedscope.o record/output/output.o \
	record/main.o): $(VERSION_STAMP)

.PHONY: all
all: $(BINS) $(SAMPLE_BINS)

# Module fragments: extra rules owned by a folder (tests, samples).
-include tests/rules.mk samples/rules.mk tests/report.mk tests/record.mk tests/fuzz/rules.mk

# ---- tests -----------------------------------------------------------------
# tests/unit/<module>/test_<file>.c: one cmocka binary per source file; it
# links that module's objects except main.o. A test may add objects as
# prerequisites, and UNIT_INC and UNIT_LIBS as target-specific variables.
UNIT_SRCS := $(wildcard tests/unit/*/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/unit/%)
.PHONY: unit-bins check-extra
unit-bins: $(UNIT_BINS)
check-extra: $(CHECK_EXTRA_DEPS)
MODULE_OBJS_format :=
MODULE_OBJS_core := $(CORE_OBJS)
MODULE_OBJS_record := $(filter-out %/main.o,$(RECORD_OBJS))
MODULE_OBJS_report := $(filter-out %/main.o,$(REPORT_OBJS))
MODULE_LIBS_format := $(FORMAT_LIBS)
MODULE_LIBS_core := -lelf
MODULE_LIBS_record := $(RECORD_LIBS)
MODULE_LIBS_report := $(REPORT_LIBS)
MODULE_INC_format := $(FORMAT_INC)
MODULE_INC_core := $(CORE_INC)
MODULE_INC_record := $(RECORD_INC)
MODULE_INC_report := $(REPORT_INC)

.SECONDEXPANSION:
$(B)/tests/unit/%: tests/unit/%.c $$(MODULE_OBJS_$$(firstword $$(subst /, ,$$*))) \
		$(LIBSAF) $(wildcard tests/unit/*.h tests/unit/*/*.h)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)m=$(firstword $(subst /, ,$*)); \
	$(CC) $(BASE_CFLAGS) -Itests/unit $(MODULE_INC_$(firstword $(subst /, ,$*))) $(UNIT_INC) \
		-o $@ $(filter %.c %.o %.a,$^) -lcmocka \
		$(MODULE_LIBS_$(firstword $(subst /, ,$*))) $(UNIT_LIBS)

.PHONY: check check-unit check-cli check-fuzz check-deps check-style check-san bless
.PHONY: check-kernels
# Each stage is its own make, timed; the summary gives every stage's time
# (tests/check-stages.sh, tests/README.md).
check:
	@bash tests/check-stages.sh "$(MAKE)"

# The unit and end-to-end tests of every module again, built with ASan and
# UBSan in a separate build directory; any sanitizer report fails the test.
SAN_B := $(B)/san
# Jobs for the sanitizer builds: one per CPU (the tests after them run alone).
SA_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
.PHONY: san-build tsan-build
san-build:
	$(Q)$(MAKE) --no-print-directory -j$(SA_JOBS) B=$(SAN_B) \
		EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -O1" \
		EXTRA_LDFLAGS="-fsanitize=address,undefined" CFLAGS="-g" \
		SA_SANITIZED=1 all unit-bins check-extra

check-san: san-build
	@echo "== unit and end-to-end tests under ASan + UBSan ($(SAN_B))"
	$(Q)ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
		$(MAKE) --no-print-directory B=$(SAN_B) SA_SANITIZED=1 check-unit check-cli

# sa-report's DWARF worker thread (report/symbols/dwprefetch.c) under ThreadSanitizer:
# sa-report alone, built with -fsanitize=thread in $(TSAN_B), on real dwarf
# and fp recordings whose debug files the worker loads (tests/tsan/run-tsan.t).
TSAN_B := $(B)/tsan
.PHONY: check-tsan
tsan-build:
	$(Q)$(MAKE) --no-print-directory -j$(SA_JOBS) B=$(TSAN_B) EXTRA_CFLAGS="-fsanitize=thread -O1" \
		EXTRA_LDFLAGS="-fsanitize=thread" CFLAGS="-g" $(TSAN_B)/bin/sa-report

check-tsan: all tsan-build | deps-test
	@echo "== sa-report's worker thread under ThreadSanitizer ($(TSAN_B))"
	$(Q)SA_BUILD=$(CURDIR)/$(B) SA_TSAN_REPORT=$(CURDIR)/$(TSAN_B)/bin/sa-report \
		prove tests/tsan/run-tsan.t

check-unit: $(UNIT_BINS) | deps-test
	@echo "== unit tests (cmocka)"
	$(Q)CMOCKA_MESSAGE_OUTPUT=TAP prove -e '' $(UNIT_BINS)

# Only a script that declares itself statistical is run again after a
# failure, and the summary names it (tests/cli/run-all.sh).
check-cli: all | deps-test
	@echo "== end-to-end tests (tests/cli)"
	$(Q)SA_BUILD=$(CURDIR)/$(B) bash tests/cli/run-all.sh

# README's `make demo` in a fresh minbase Debian 12 root, then `make deps`
# and `make` there as a user who is not root (tests/fresh/fresh-root.t: root;
# on a loaded 2-CPU host 3.7-5.3 min cold, 3.3 warm; the root tarball and
# apt's downloads are kept in /var/cache/sa-fresh).
.PHONY: check-fresh
check-fresh: | deps-test
	@echo "== make demo in a fresh Debian 12 root, make as a user there (tests/fresh)"
	$(Q)SA_BUILD=$(CURDIR)/$(B) prove -v tests/fresh/fresh-root.t

# The kernel matrix: the smoke set on this kernel and on Debian's kernels
# booted under qemu, one table (tests/kernels/run.sh, tests/README.md).
check-kernels: all $(STATIC_RECORD) $(STATIC_REPORT) | deps-test
	@bash tests/kernels/run.sh $(B)

# Forbidden includes: format/ sees libc and zstd only; report/ never sees
# libbpf or bpf/; nothing includes record/ or report/ from elsewhere; and
# per folder, which stage may include which (tests/check-deps.sh).
# ... and no circle of files inside a module (tests/check-cycles.sh, over
# the objects' symbols).
check-deps: $(FORMAT_OBJS) $(RECORD_OBJS) $(REPORT_OBJS)
	@echo "== dependency direction"
	$(Q)! grep -nE '#include *[<"](bpf/|libbpf|libelf|gelf|elfutils|dwarf|libdw|sa_shared|.*skel)' \
		format/*.c format/*.h format/include/*.h 2>/dev/null
	$(Q)! grep -nE '#include *[<"](bpf/|libbpf|sa_shared|.*skel)' report/*.c report/*.h report/*/*.[ch] 2>/dev/null
	$(Q)! grep -nE '#include *[<"](\.\./)*(record|report)/' format/*.[ch] bpf/*.[ch] \
		record/*.[ch] record/*/*.[ch] report/*.[ch] report/*/*.[ch] core/*.[ch] 2>/dev/null
	$(Q)! grep -nE '#include *[<"](bpf/|libbpf|sa_shared|.*skel|dwarf|libdw|elfutils|saf|zstd)' \
		core/*.[ch] 2>/dev/null
	$(Q)bash tests/check-deps.sh
	$(Q)bash tests/check-cycles.sh $(B)/obj
	@echo "ok: no forbidden includes, no circle of files"

# Kernel style, as .clang-format says; `clang-format -i` on the same files fixes it.
check-style: | deps-test
	@echo "== style (clang-format)"
	$(Q)clang-format --dry-run --Werror format/*.[ch] format/include/*.h record/*.[ch] \
		record/*/*.[ch] report/*.[ch] report/*/*.[ch] bpf/*.[ch] core/*.[ch]

bless: all | deps-test
	$(Q)SA_BUILD=$(CURDIR)/$(B) SA_BLESS=1 prove tests/cli/*.t

# ---- fuzzing ---------------------------------------------------------------
# replay: the libFuzzer harness linked with a plain main() that replays the
# corpus, built with gcc under ASan + UBSan. fuzz: clang -fsanitize=fuzzer.
# check-fuzz replays every corpus through both and fuzzes nothing, so one
# commit gives one result; `make fuzz` fuzzes each target for FUZZ_SECONDS
# and writes what fails into its corpus (tests/fuzz/fuzz-all.sh).
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,%,$(filter-out tests/fuzz/replay.c,$(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_SECONDS ?= 60

# format/ is compiled once per compiler and shared by every harness
# (fuzz_objs, tests/fuzz/rules.mk).
FORMAT_HDRS := $(wildcard format/*.h format/include/*.h)
$(eval $(call fuzz_objs,fmt,$(FORMAT_SRCS),$(FORMAT_HDRS),$(FORMAT_INC)))

$(B)/fuzz/replay_%: tests/fuzz/%.c tests/fuzz/replay.c $(FUZZ_GCC_fmt) $(FORMAT_HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O1 -g $(WARN) -std=gnu11 -D_GNU_SOURCE $(SAN_FLAGS) $(FORMAT_INC) \
		-o $@ tests/fuzz/$*.c tests/fuzz/replay.c $(FUZZ_GCC_fmt) $(FORMAT_LIBS)

$(B)/fuzz/libfuzzer_%: tests/fuzz/%.c $(FUZZ_CLANG_fmt) $(FORMAT_HDRS)
	$(call msg,CLANG,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) -O1 -g -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
		$(FORMAT_INC) -o $@ tests/fuzz/$*.c $(FUZZ_CLANG_fmt) $(FORMAT_LIBS)

.PHONY: fuzz-bins
fuzz-bins: $(FUZZ_TARGETS:%=$(B)/fuzz/replay_%) $(FUZZ_TARGETS:%=$(B)/fuzz/libfuzzer_%)

check-fuzz: fuzz-bins
	@echo "== fuzz corpora replayed under gcc and clang ASan+UBSan (no random fuzzing)"
	$(Q)SA_BUILD=$(CURDIR)/$(B) FUZZ_TARGETS="$(FUZZ_TARGETS)" prove tests/fuzz/run-fuzz.t

.PHONY: fuzz fuzz-seeds
# Regenerate the seed corpora from tests/fuzz/gen_seeds.c (valid small files).
fuzz-seeds: $(LIBSAF)
	$(Q)mkdir -p $(B)/fuzz
	$(Q)$(CC) $(BASE_CFLAGS) $(FORMAT_INC) -o $(B)/fuzz/gen_seeds tests/fuzz/gen_seeds.c $(LIBSAF) $(FORMAT_LIBS)
	$(Q)$(B)/fuzz/gen_seeds

fuzz: $(FUZZ_TARGETS:%=$(B)/fuzz/libfuzzer_%)
	$(Q)SA_BUILD=$(CURDIR)/$(B) FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_TARGETS="$(FUZZ_TARGETS)" \
		bash tests/fuzz/fuzz-all.sh

# ---- demo, install, clean --------------------------------------------------
.PHONY: demo install clean
# The one build target that installs: `make deps` first (as root), then a
# fresh make, which sees the compilers it installed.
demo:
	$(Q)$(MAKE) --no-print-directory deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)sh tests/demo.sh $(B)

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions
	install -m 0755 $(BINS) $(DESTDIR)$(BINDIR)/
	install -m 0644 docs/sa-record.1 docs/sa-report.1 $(DESTDIR)$(MANDIR)/man1/
	$(Q)for c in sa-record sa-report; do install -m 0644 docs/completion/$$c.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$c || exit 1; done
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|/usr/local/bin/sa-record|$(BINDIR)/sa-record|' docs/systemd/sa-record.service \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/sa-record.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/sa-record.service

# Benchmarks against perf (tests/bench/run-all.sh, ~20 min; BENCH_QUICK=1 for
# a few minutes): prints ratios, writes docs/performance.md. Not part of check.
.PHONY: bench
bench: $(B)/bin/sa-record $(B)/bin/sa-report $(B)/samples/workload $(B)/samples/workload-nofp \
		$(B)/tests/bench/gen-synthetic \
		$(B)/tests/bench/gen-text | deps-test
	$(Q)bash tests/bench/run-all.sh $(B) docs/performance.md

# The always-on recorder's cost (tests/bench/always-on.sh, 65 min, root): a
# day of -F 19 files, RSS and CPU over a -F 99 run; rewrites its section of
# docs/deploy.md. Not part of check or bench.
.PHONY: bench-always-on
bench-always-on: $(B)/bin/sa-record
	$(Q)bash tests/bench/always-on.sh $(B) docs/deploy.md

# sa against perf on the same processes, function by function (dash, zstd,
# python3, PostgreSQL, gcc, node, C++, the known-split workload; fp, dwarf,
# auto; tests/accuracy/run.sh, ~20 min): writes docs/accuracy.md from the run
# and fails if a comparison does; jvm-perfmap.sh: OpenJDK's JIT samples
# named while jcmd rewrites its perf map. `make check` runs a short subset (7000).
.PHONY: accuracy
accuracy: $(B)/bin/sa-record $(B)/bin/sa-report $(B)/samples/workload $(B)/samples/workload-nofp \
		$(B)/tests/tools/sa-dump \
		$(B)/samples/pingpong | deps-test
	$(Q)SA_BUILD=$(abspath $(B)) prove -v tests/accuracy/pingpong-counts.t; pc=$$?; \
	bash tests/accuracy/run.sh --results $(B)/accuracy.tsv $(B); rc=$$?; \
	bash tests/accuracy/jvm-perfmap.sh $(B); jr=$$?; \
	[ $$pc = 0 ] && [ $$jr = 0 ] || rc=1; \
	bash tests/accuracy/write-doc.sh $(B)/accuracy.tsv docs/accuracy.md && \
		echo "  wrote docs/accuracy.md"; exit $$rc

# Leaves only tracked files: build/ and what the browser and schema tests
# install with npm.
clean:
	rm -rf $(B) .prove tests/browser/node_modules tests/speedscope/node_modules
