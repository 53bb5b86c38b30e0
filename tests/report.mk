# SPDX-License-Identifier: MIT
# Extra rules for report/'s output writers (include from the top Makefile):
# a driver that runs the folded/top/SVG/diff writers on folded text, for the
# SVG benchmark and the browser test. It links only the writers' objects,
# so it builds even while the symbolizing pipeline is being changed.

RPT_WRITER_OBJS := $(addprefix $(B)/obj/report/,common/profile.o common/profile_sort.o \
	common/strpool.o output/folded.o input/in_folded.o input/input.o output/shortname.o \
	session/filter.o output/top.o output/flame.o output/svg.o output/svg_script.o output/diff.o \
	output/noise.o output/units.o) $(B)/obj/core/grow.o $(B)/obj/core/hash.o

$(B)/tests/bench/folded-driver: tests/bench/folded_driver.c $(RPT_WRITER_OBJS)
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) $(REPORT_INC) -o $@ $^ -lm

.PHONY: folded-driver
folded-driver: $(B)/tests/bench/folded-driver
CHECK_EXTRA_DEPS += $(B)/tests/bench/folded-driver

# Other tools' stack text (folded, perf script) for tests/bench/bench-input.sh.
$(B)/tests/bench/gen-text: tests/bench/gen_text.c
	$(call msg,LINK,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(BASE_CFLAGS) -o $@ $<
