# SPDX-License-Identifier: MIT
# Rules for sa-record's test tools; included from the top-level Makefile.
# sa-dump prints an .sa file record by record for tests/cli/2xxx.

$(B)/tests/tools/sa-dump: tests/tools/sa-dump.c $(LIBSAF) format/include/saf.h
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -Iformat/include -o $@ $< $(LIBSAF) $(FORMAT_LIBS)

CHECK_EXTRA_DEPS += $(B)/tests/tools/sa-dump

# sa-trim: record/drain/uwtrim.c applied to a --whole-stack recording (test 6100)
$(B)/tests/tools/sa-trim: tests/tools/sa-trim.c tests/tools/saf_rewrite.h $(filter-out %/main.o,$(RECORD_OBJS)) $(LIBSAF)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(RECORD_INC) -Itests/tools -o $@ $< $(filter-out %/main.o,$(RECORD_OBJS)) $(LIBSAF) \
		$(RECORD_LIBS)

CHECK_EXTRA_DEPS += $(B)/tests/tools/sa-trim

# The static sa-record (test 2007). ASan cannot link statically: the
# sanitized pass runs 2007 on the plain build's binary.
ifneq ($(SA_SANITIZED),1)
CHECK_EXTRA_DEPS += $(STATIC_RECORD) $(STATIC_REPORT)
endif

# sa-stub: a recording's loop samples moved into the PLT stub it calls (test 6130)
$(B)/tests/tools/sa-stub: tests/tools/sa-stub.c tests/tools/saf_rewrite.h $(LIBSAF) format/include/saf.h
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -Iformat/include -Itests/tools -o $@ $< $(LIBSAF) $(FORMAT_LIBS)

CHECK_EXTRA_DEPS += $(B)/tests/tools/sa-stub

# sa-fuseblock: a FUSE mirror of a directory that a test stops to block (5160)
$(B)/tests/tools/sa-fuseblock: tests/tools/sa-fuseblock.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -I/usr/include/fuse3 -o $@ $< -lfuse3 -lpthread

CHECK_EXTRA_DEPS += $(B)/tests/tools/sa-fuseblock
