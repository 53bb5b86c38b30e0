# SPDX-License-Identifier: MIT
# samples/ rules beyond one binary per samples/NAME.c: the library that
# dlopen_host loads, and a workload built without frame pointers (what users
# of such binaries see: truncated stacks). Included by the top-level Makefile.

SAMPLE_EXTRA := $(B)/samples/libsa_plugin.so $(B)/samples/workload-nofp $(B)/samples/workload-leaf

$(B)/samples/libsa_plugin.so: samples/plugin/libsa_plugin.c $(wildcard samples/*.h)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SAMPLE_CFLAGS) -fPIC -shared -Wl,-soname,libsa_plugin.so -o $@ $<

$(B)/samples/workload-nofp: samples/workload.c $(wildcard samples/*.h)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(filter-out -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer,$(SAMPLE_CFLAGS)) \
		-fomit-frame-pointer -o $@ $< -lm -ldl

# Frame pointers on, but leaves left without a frame as gcc 12 does by
# default (issue 10): a frame-pointer walk skips their callers; CFI does not.
$(B)/samples/workload-leaf: samples/workload.c $(wildcard samples/*.h)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SAMPLE_CFLAGS) -DSA_FRAMELESS_LEAVES -o $@ $< -lm -ldl

all: $(SAMPLE_EXTRA)

# A Go program with a known split (issue 31), built by Debian's golang-go
# (a test package): offline, its cache under build/, no module to download.
# Go's default build: frame pointers, a .symtab, no GNU build id.
GO_ENV := GOCACHE=$(abspath $(B))/go/cache GOPATH=$(abspath $(B))/go/path GOPROXY=off \
	GO111MODULE=off
$(B)/samples/gosplit: samples/gosplit/main.go
	$(call msg,GO,$@)
	@mkdir -p $(@D)
	$(Q)$(GO_ENV) go build -o $@ $<
# The same, stripped (-ldflags=-s: no .symtab, no DWARF): named from .gopclntab.
$(B)/samples/gosplit-stripped: samples/gosplit/main.go
	$(call msg,GO,$@)
	@mkdir -p $(@D)
	$(Q)$(GO_ENV) go build -ldflags=-s -o $@ $<
CHECK_EXTRA_DEPS += $(B)/samples/gosplit $(B)/samples/gosplit-stripped

# A process whose memory lies to the Python reader (issues 33, 47; 3330): a
# fake libpython3.X.so the finder accepts for each layout, and the program
# that loads one (-V 3.X) and fills its _PyRuntime with looping frames and
# code objects pointing anywhere.
PYH_LIBS := $(foreach m,8 9 10 11 12 13,$(B)/samples/pyhostile/libpython3.$(m).so)
$(B)/samples/pyhostile/libpython3.%.so: samples/pyhostile/libpython.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SAMPLE_CFLAGS) -DPYH_MINOR=$* -fPIC -shared -Wl,-soname,libpython3.$*.so -o $@ $<

$(B)/samples/pyhostile/pyhostile: samples/pyhostile/main.c $(wildcard samples/*.h) $(PYH_LIBS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(SAMPLE_CFLAGS) -o $@ $< -ldl -lpthread

all: $(B)/samples/pyhostile/pyhostile
