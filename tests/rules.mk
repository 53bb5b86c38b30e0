# SPDX-License-Identifier: MIT
# tests/rules.mk - fixtures compiled for the report unit tests (small ELF
# files with known symbols, a stripped copy with its debug file in a
# build-id tree, a binary whose build id no longer matches) and the
# synthetic-recording generator of tests/bench/.

TD := $(B)/tests/data
FIXTURE_CFLAGS := -g -fno-omit-frame-pointer -Wl,--build-id

$(TD)/plain: tests/data/sym_plain.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O1 $(FIXTURE_CFLAGS) -o $@ $<

# A stripped copy whose symbols live in debug/.build-id/xx/rest.debug.
$(TD)/stripped: $(TD)/plain
	$(call msg,STRIP,$@)
	$(Q)id=$$(readelf -n $< | sed -n 's/.*Build ID: *//p'); \
	d=$(TD)/debug/.build-id/$$(echo $$id | cut -c1-2); \
	rm -rf $(TD)/debug && mkdir -p $$d && \
	objcopy --only-keep-debug $< $$d/$$(echo $$id | cut -c3-).debug && \
	strip -o $@ $<

# Same code, another build id: a rebuilt binary at the recorded path.
$(TD)/mismatch: tests/data/sym_plain.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O1 -g -fno-omit-frame-pointer -Wl,--build-id=0x0123456789abcdef0123456789abcdef01234567 \
		-o $@ $<

$(TD)/inline: tests/data/sym_inline.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 $(FIXTURE_CFLAGS) -o $@ $<

$(TD)/cxx: tests/data/sym_cxx.cc
	$(call msg,CXX,$@)
	@mkdir -p $(@D)
	$(Q)g++ -O1 $(FIXTURE_CFLAGS) -o $@ $<

# GCC's clones (.isra.0, .constprop.0) and .localalias symbols: check them
# with nm -C; the cloning needs -O2, the aliases -fPIC.
$(TD)/cxx_clone: tests/data/sym_clone.cc tests/rules.mk
	$(call msg,CXX,$@)
	@mkdir -p $(@D)
	$(Q)g++ -O2 -fPIC -fno-semantic-interposition $(FIXTURE_CFLAGS) -o $@ $<

REPORT_FIXTURES := $(TD)/plain $(TD)/stripped $(TD)/mismatch $(TD)/inline $(TD)/cxx \
	$(TD)/cxx_clone
CHECK_EXTRA_DEPS += $(REPORT_FIXTURES)
$(B)/tests/unit/report/test_symbolize: | $(REPORT_FIXTURES)

# Synthetic recordings for scale tests (tests/bench/, tests/cli/).
$(B)/tests/bench/gen-synthetic: tests/bench/gen-synthetic.c tests/bench/gen-images.c \
		tests/bench/gen-images.h $(LIBSAF)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -Iformat/include -o $@ $(filter %.c,$^) $(LIBSAF) $(FORMAT_LIBS) \
		-ldw -lelf
CHECK_EXTRA_DEPS += $(B)/tests/bench/gen-synthetic

# 6090, 6100: the workload built with its own FDEs in .debug_frame
# (-fno-asynchronous-unwind-tables) while the C runtime's stay in .eh_frame.
$(TD)/cfi_debug_frame: samples/workload.c $(wildcard samples/*.h)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer -fno-asynchronous-unwind-tables \
		-DSA_FRAMELESS_LEAVES -pthread -o $@ $< -lm -ldl
CHECK_EXTRA_DEPS += $(TD)/cfi_debug_frame
$(B)/tests/unit/record/test_elfsyms: | $(TD)/cxx_clone

# record/cfi/cfirows.c's unit test compares its rows with libdw's, reduced by
# report/unwind/uwrows.c's rpt_uwrows__compile() (tests may use anything).
$(B)/tests/unit/record/test_cfirows: $(B)/obj/report/unwind/uwrows.o \
	$(B)/obj/report/common/binopen.o $(B)/obj/report/common/strpool.o \
	| $(B)/bin/sa-record $(B)/samples/workload-leaf $(B)/samples/workload-nofp
$(B)/tests/unit/record/test_cfirows: UNIT_INC := -Ireport/unwind -Ireport/common
$(B)/tests/unit/record/test_cfirows: UNIT_LIBS := -ldw

# PLT layouts for core/elfplt.c's test and 6130: lazy binding, -z now, and
# IBT's .plt.sec; plus a debug file, whose PLT sections have no contents.
PLT_FIXTURES := $(TD)/plt_lazy $(TD)/plt_now $(TD)/plt_ibt $(TD)/plt_debug
$(TD)/plt_lazy: PLT_LDFLAGS := -Wl,-z,lazy
$(TD)/plt_now: PLT_LDFLAGS := -Wl,-z,now
$(TD)/plt_ibt: PLT_LDFLAGS := -fcf-protection -Wl,-z,ibtplt
$(TD)/plt_lazy $(TD)/plt_now $(TD)/plt_ibt: tests/data/plt_loop.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 -fno-builtin $(FIXTURE_CFLAGS) $(PLT_LDFLAGS) -o $@ $<
$(TD)/plt_debug: $(TD)/plt_lazy
	$(call msg,OBJCOPY,$@)
	$(Q)objcopy --only-keep-debug $< $@
CHECK_EXTRA_DEPS += $(PLT_FIXTURES)
$(B)/tests/unit/core/test_elfplt: | $(PLT_FIXTURES)

# 6160: a frame whose CFA is rbx-based, as ld.so's resolver's; no frame pointers.
$(TD)/cfa_rbx: tests/data/cfa_rbx.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 $(FIXTURE_CFLAGS) -fomit-frame-pointer -o $@ $<
CHECK_EXTRA_DEPS += $(TD)/cfa_rbx
$(B)/tests/unit/core/test_elfplt: UNIT_INC := -DTD='"$(TD)"'

# Build ids (core/buildid.c): a known one given to the linker, readelf's on
# the others, and copies without a PT_NOTE segment or without any note.
BUILDID_FIXTURES := $(TD)/plain $(TD)/stripped $(TD)/mismatch $(TD)/plt_debug $(TD)/mismatch.o
$(TD)/mismatch.o: tests/data/sym_plain.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -c -O1 -o $@ $<
CHECK_EXTRA_DEPS += $(BUILDID_FIXTURES)
$(B)/tests/unit/core/test_buildid: | $(BUILDID_FIXTURES)
$(B)/tests/unit/core/test_buildid: UNIT_INC := -DTD='"$(TD)"'

# 6170: a program whose own functions block through libc wrappers, with and
# without frame pointers (in-kernel unwinding of off-CPU stacks).
OFFWRAP_FIXTURES := $(TD)/off_wrappers_fp $(TD)/off_wrappers_nofp
$(TD)/off_wrappers_fp: tests/data/off_wrappers.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 $(FIXTURE_CFLAGS) -mno-omit-leaf-frame-pointer -pthread -o $@ $<
$(TD)/off_wrappers_nofp: tests/data/off_wrappers.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 $(filter-out -fno-omit-frame-pointer,$(FIXTURE_CFLAGS)) -fomit-frame-pointer \
		-pthread -o $@ $<
CHECK_EXTRA_DEPS += $(OFFWRAP_FIXTURES)
OFFWRAP_FIXTURES += $(TD)/off_wrappers_fpnocfi
$(TD)/off_wrappers_fpnocfi: tests/data/off_wrappers.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 $(FIXTURE_CFLAGS) -mno-omit-leaf-frame-pointer -fno-asynchronous-unwind-tables \
		-fno-unwind-tables -pthread -o $@ $<
CHECK_EXTRA_DEPS += $(TD)/off_wrappers_fpnocfi

# 6180: code the in-kernel unwinder has no mapping for, called with data in rbp.
$(TD)/uw_late: tests/data/uw_late.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 $(filter-out -fno-omit-frame-pointer,$(FIXTURE_CFLAGS)) -fomit-frame-pointer \
		-o $@ $<
CHECK_EXTRA_DEPS += $(TD)/uw_late
