# SPDX-License-Identifier: MIT
# tests/fuzz/rules.mk - build rules for the harnesses that link more than
# format/: fuzz_report and fuzz_inputs drive sa-report's whole pipeline
# (report/, all but main.c, besides format/), so they need explicit rules: make prefers them to the generic
# replay_% / libfuzzer_% pattern rules of the top Makefile, whatever the
# order of inclusion. The target itself stays in FUZZ_TARGETS (its name
# matches tests/fuzz/fuzz_*.c), so check-fuzz and make fuzz run it.

# fuzz_objs GROUP,SRCS,DEPS,FLAGS: FUZZ_GCC_GROUP and FUZZ_CLANG_GROUP, the
# objects of SRCS under $(B)/fuzz/gcc-GROUP/ (gcc, ASan + UBSan, for the
# replays) and $(B)/fuzz/clang-GROUP/ (clang, fuzzer-no-link: libFuzzer's
# coverage without its main), each compiled once for all of a group's
# harnesses.
define fuzz_objs
FUZZ_GCC_$(1) := $$(patsubst %.c,$$(B)/fuzz/gcc-$(1)/%.o,$(2))
FUZZ_CLANG_$(1) := $$(patsubst %.c,$$(B)/fuzz/clang-$(1)/%.o,$(2))
$$(FUZZ_GCC_$(1)): $$(B)/fuzz/gcc-$(1)/%.o: %.c $(3)
	$$(call msg,CC,$$@)
	@mkdir -p $$(@D)
	$$(Q)$$(CC) -O1 -g $$(WARN) -std=gnu11 -D_GNU_SOURCE $$(SAN_FLAGS) $(4) -c -o $$@ $$<
$$(FUZZ_CLANG_$(1)): $$(B)/fuzz/clang-$(1)/%.o: %.c $(3)
	$$(call msg,CLANG,$$@)
	@mkdir -p $$(@D)
	$$(Q)$$(CLANG) -O1 -g -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer-no-link,address,undefined \
		$(4) -c -o $$@ $$<
endef

FUZZ_REPORT_SRCS := $(filter-out report/main.c,$(REPORT_SRCS)) $(FORMAT_SRCS) $(CORE_SRCS)
FUZZ_REPORT_HDRS := $(wildcard report/*.h report/*/*.h format/*.h format/include/*.h core/*.h)
FUZZ_REPORT_INC := -Iformat/include -Iformat $(REPORT_DIRS:%=-I%) $(CORE_INC)

# Each source is compiled once per compiler for both harnesses (fuzz_obj).
FUZZ_REPORT_FLAGS := -DSA_VERSION='"fuzz"' $(FUZZ_REPORT_INC)
$(eval $(call fuzz_objs,report,$(FUZZ_REPORT_SRCS),$(FUZZ_REPORT_HDRS),$(FUZZ_REPORT_FLAGS)))

$(B)/fuzz/replay_fuzz_report $(B)/fuzz/replay_fuzz_inputs: $(B)/fuzz/replay_%: tests/fuzz/%.c \
		$(FUZZ_GCC_report) $(FUZZ_REPORT_HDRS) tests/fuzz/fuzz_outputs.h tests/fuzz/replay.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O1 -g $(WARN) -std=gnu11 -D_GNU_SOURCE $(SAN_FLAGS) $(FUZZ_REPORT_FLAGS) \
		-o $@ tests/fuzz/$*.c tests/fuzz/replay.c $(FUZZ_GCC_report) $(REPORT_LIBS)

$(B)/fuzz/libfuzzer_fuzz_report $(B)/fuzz/libfuzzer_fuzz_inputs: $(B)/fuzz/libfuzzer_%: \
		tests/fuzz/%.c $(FUZZ_CLANG_report) $(FUZZ_REPORT_HDRS) tests/fuzz/fuzz_outputs.h
	$(call msg,CLANG,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) -O1 -g -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
		$(FUZZ_REPORT_FLAGS) -o $@ tests/fuzz/$*.c $(FUZZ_CLANG_report) $(REPORT_LIBS)

# fuzz_jitmap and fuzz_elfcfi: what record/ reads from files other users
# control (docs/security.md): a perf map, and the ELF symbols, build id and
# CFI of a mapped binary. Each links the record/ sources it drives.
FUZZ_REC_INC := -Iformat/include -Ibpf $(RECORD_DIRS:%=-I%) $(CORE_INC)
FUZZ_REC_SRCS_fuzz_jitmap := record/meta/jitmap.c record/meta/jitbudget.c record/common/safeopen.c \
	record/common/fguard.c $(CORE_SRCS)
FUZZ_REC_SRCS_fuzz_elfcfi := record/meta/elfread.c record/meta/gopclntab.c record/meta/golines.c \
	record/common/htab.c record/cfi/cfirows.c record/cfi/cfiread.c \
	record/cfi/uwbuild.c record/common/safeopen.c record/common/fguard.c $(CORE_SRCS)
FUZZ_REC_HDRS := $(wildcard record/*.h record/*/*.h format/include/*.h core/*.h)

$(eval $(call fuzz_objs,rec,$(sort $(FUZZ_REC_SRCS_fuzz_elfcfi) $(FUZZ_REC_SRCS_fuzz_jitmap)),\
	$(FUZZ_REC_HDRS),$(FUZZ_REC_INC)))

$(B)/fuzz/replay_fuzz_jitmap $(B)/fuzz/replay_fuzz_elfcfi: $(B)/fuzz/replay_%: tests/fuzz/%.c \
		tests/fuzz/replay.c $(FUZZ_GCC_rec) $(FUZZ_REC_HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O1 -g $(WARN) -std=gnu11 -D_GNU_SOURCE $(SAN_FLAGS) $(FUZZ_REC_INC) -o $@ \
		tests/fuzz/$*.c tests/fuzz/replay.c \
		$(patsubst %.c,$(B)/fuzz/gcc-rec/%.o,$(FUZZ_REC_SRCS_$*)) -lelf

$(B)/fuzz/libfuzzer_fuzz_jitmap $(B)/fuzz/libfuzzer_fuzz_elfcfi: $(B)/fuzz/libfuzzer_%: \
		tests/fuzz/%.c $(FUZZ_CLANG_rec) $(FUZZ_REC_HDRS)
	$(call msg,CLANG,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) -O1 -g -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
		$(FUZZ_REC_INC) -o $@ tests/fuzz/$*.c \
		$(patsubst %.c,$(B)/fuzz/clang-rec/%.o,$(FUZZ_REC_SRCS_$*)) -lelf

# fuzz_pycode: the code objects of a process claiming to run CPython
# (docs/python.md), read by record/python/pyread.c from the fuzzer's bytes
# through its one seam, REC_PY_VM_READV; pyfind.c gives the layout table.
FUZZ_PYCODE_SRCS := record/python/pyread.c record/python/pyfind.c record/common/safeopen.c \
	record/common/fguard.c $(CORE_SRCS)
FUZZ_PYCODE_FLAGS := -DREC_PY_VM_READV=fuzz_pycode_readv $(FUZZ_REC_INC)

$(B)/fuzz/replay_fuzz_pycode: tests/fuzz/fuzz_pycode.c tests/fuzz/replay.c $(FUZZ_PYCODE_SRCS) \
		$(FUZZ_REC_HDRS) bpf/sa_shared.h
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O1 -g $(WARN) -std=gnu11 -D_GNU_SOURCE $(SAN_FLAGS) $(FUZZ_PYCODE_FLAGS) -o $@ \
		tests/fuzz/fuzz_pycode.c tests/fuzz/replay.c $(FUZZ_PYCODE_SRCS) -lelf

$(B)/fuzz/libfuzzer_fuzz_pycode: tests/fuzz/fuzz_pycode.c $(FUZZ_PYCODE_SRCS) $(FUZZ_REC_HDRS) \
		bpf/sa_shared.h
	$(call msg,CLANG,$@)
	@mkdir -p $(@D)
	$(Q)$(CLANG) -O1 -g -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
		$(FUZZ_PYCODE_FLAGS) -o $@ tests/fuzz/fuzz_pycode.c $(FUZZ_PYCODE_SRCS) -lelf
