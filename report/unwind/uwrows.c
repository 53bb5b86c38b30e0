// SPDX-License-Identifier: MIT
/*
 * uwrows.c - one libdw lookup per distinct (binary, code address):
 * the FDE is found and its CFA program run by dwarf_cfi_addrframe(), and
 * the rules for the CFA (by rsp, rbp or rbx), rbx, rbp, rsp and the return
 * address are kept in a row. A rule outside the simple forms the compilers
 * emit for these registers (a DWARF expression, as in PLT stubs and
 * gcc's realigned stacks) marks the row SAC_CFI_DWFL and the whole unwind
 * is left to libdwfl.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

#include "binopen.h"
#include "grow.h"
#include "hash.h"
#include "uwrows.h"

/*
 * The rule of @regno: the forms libdw builds for DW_CFA_offset, val_offset,
 * same_value and undefined (CFA, plus constants, maybe DW_OP_stack_value).
 * @return false for anything else.
 */
static bool rule_of(Dwarf_Frame *frame, int regno, uint8_t *rule, int64_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t nops, i = 1;
	uint64_t sum = 0;

	if (dwarf_frame_register(frame, regno, mem, &ops, &nops)) {
		*rule = SAC_CFI_UNSET; /* libdwfl leaves such a register unset */
		return true;
	}
	if (!nops) {
		*rule = ops ? SAC_CFI_UNSET : SAC_CFI_SAME;
		return true;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	*rule = SAC_CFI_AT;
	for (; i < nops; i++) {
		if (ops[i].atom == DW_OP_plus_uconst) {
			sum += ops[i].number;
		} else if ((ops[i].atom == DW_OP_consts || ops[i].atom == DW_OP_constu) &&
			   i + 1 < nops && ops[i + 1].atom == DW_OP_plus) {
			sum += ops[i].number;
			i++;
		} else if (ops[i].atom == DW_OP_stack_value && i + 1 == nops) {
			*rule = SAC_CFI_VAL;
		} else {
			return false;
		}
	}
	*off = (int64_t)sum;
	return true;
}

void rpt_uwrows__compile(Dwarf_Frame *frame, struct sac_cfi_row *r)
{
	Dwarf_Op *ops;
	size_t nops;

	r->how = SAC_CFI_DWFL;
	if (dwarf_frame_info(frame, NULL, NULL, &r->signal) == -1 ||
	    dwarf_frame_cfa(frame, &ops, &nops))
		return;
	if (!nops) {
		r->cfa_reg = SAC_CFI_NO_CFA; /* every rule using the CFA fails */
	} else if (nops == 1 && ops[0].atom == DW_OP_bregx) {
		/* libdw's form of DW_CFA_def_cfa: register, then offset */
		if (ops[0].number != SAC_DWARF_RBP && ops[0].number != SAC_DWARF_RSP &&
		    ops[0].number != SAC_DWARF_RBX)
			return;
		r->cfa_reg = ops[0].number;
		r->cfa_off = (int64_t)ops[0].number2;
	} else {
		return;
	}
	if (rule_of(frame, SAC_DWARF_RBX, &r->rbx, &r->rbx_off) &&
	    rule_of(frame, SAC_DWARF_RBP, &r->rbp, &r->rbp_off) &&
	    rule_of(frame, SAC_DWARF_RSP, &r->rsp, &r->rsp_off) &&
	    rule_of(frame, SAC_DWARF_RA, &r->ra, &r->ra_off))
		r->how = SAC_CFI_RULES;
}

static bool has_section(Elf *elf, const char *want)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh)) {
			const char *name = elf_strptr(elf, shstrndx, sh.sh_name);

			if (name && !strcmp(name, want))
				return true;
		}
	return false;
}

/*
 * Could dwfl_module_dwarf_cfi() find a .debug_frame for @mod? It would load
 * all of the module's DWARF to look, which for a distribution's debug file
 * means inflating every compressed section. Where the answer is in the
 * section headers of the binary or of its debug file at the build-id path
 * libdwfl tries first, look there; otherwise say "maybe" and let libdwfl
 * search as before.
 */
static bool may_have_debug_frame(Dwfl_Module *mod)
{
	static const char dir[] = "/usr/lib/debug/.build-id/";
	char path[sizeof(dir) + 2 * RPT_UW_MAX_BID + 8];
	const unsigned char *bid;
	GElf_Addr vaddr;
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias), *dbg;
	int n, fd, len;
	bool found;

	if (has_section(elf, ".debug_frame"))
		return true;
	if (has_section(elf, ".debug_info"))
		return false; /* libdwfl uses the DWARF of the binary itself */
	n = dwfl_module_build_id(mod, &bid, &vaddr);
	if (n < 2 || n > RPT_UW_MAX_BID)
		return true;
	len = snprintf(path, sizeof(path), "%s%02x/", dir, bid[0]);
	for (int i = 1; i < n; i++)
		len += snprintf(path + len, sizeof(path) - len, "%02x", bid[i]);
	snprintf(path + len, sizeof(path) - len, ".debug");
	fd = rpt_bin_open(path);
	if (fd < 0)
		return true;
	dbg = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	found = !dbg || has_section(dbg, ".debug_frame");
	elf_end(dbg);
	close(fd);
	return found;
}

/* The key of @mod's main file in t->files, 0 when it has no name. */
static uint64_t file_key(Dwfl_Module *mod)
{
	const char *file = NULL;
	uint64_t key;

	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &file, NULL);
	if (!file)
		return 0;
	key = sac_hash_fnv(file, strlen(file), 7);
	return key == UINT64_MAX || !key ? 1 : key;
}

/*
 * .debug_frame of @mod's file, if it has one; asked once per file, not per
 * process image: a file whose search found nothing is not searched again
 * (a failed search reads the whole binary for its debuglink CRC).
 */
static Dwarf_CFI *debug_frame(struct rpt_uwrows *t, Dwfl_Module *mod, Dwarf_Addr *bias)
{
	uint64_t key = file_key(mod), v = 1;
	Dwarf_CFI *cfi;

	if (key && !rpt_hmap__get(&t->files, key, &v)) {
		v = may_have_debug_frame(mod);
		if (rpt_hmap__put(&t->files, key, v))
			key = 0; /* out of memory: ask libdwfl, as before */
	}
	if (!v)
		return NULL;
	cfi = dwfl_module_dwarf_cfi(mod, bias);
	if (!cfi && key)
		rpt_hmap__put(&t->files, key, 0); /* no memory: only asked again */
	return cfi;
}

/* libdwfl's order: .eh_frame, then .debug_frame, then frame pointers. */
static void lookup(struct rpt_uwrows *t, Dwfl *dwfl, uint64_t pc, struct sac_cfi_row *r)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	Dwarf_Frame *frame;
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;

	r->how = SAC_CFI_FP;
	if (!mod)
		return;
	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame)) {
		cfi = debug_frame(t, mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame))
			return;
	}
	rpt_uwrows__compile(frame, r);
	free(frame);
}

const struct sac_cfi_row *rpt_uwrows__get(struct rpt_uwrows *t, Dwfl *dwfl, uint32_t img,
					  uint64_t pc)
{
	static const struct sac_cfi_row dwfl_row = {.how = SAC_CFI_DWFL};
	uint64_t key = (uint64_t)img << 48 | pc, v;
	struct sac_cfi_row r = {0};

	if (img >= 1u << 16 || pc >> 48)
		return &dwfl_row; /* not a key this table holds: libdwfl decides */
	if (rpt_hmap__get(&t->index, key, &v))
		return &t->rows[v];
	lookup(t, dwfl, pc, &r);
	if (SAC_GROW(t->rows, t->cap, t->nrows + 1, 256) ||
	    rpt_hmap__put(&t->index, key, t->nrows)) {
		errno = ENOMEM;
		return NULL;
	}
	t->rows[t->nrows] = r;
	return &t->rows[t->nrows++];
}

void rpt_uwrows__fini(struct rpt_uwrows *t)
{
	rpt_hmap__fini(&t->index);
	rpt_hmap__fini(&t->files);
	free(t->rows);
	*t = (struct rpt_uwrows){0};
}
