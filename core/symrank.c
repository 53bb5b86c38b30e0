// SPDX-License-Identifier: MIT
/*
 * symrank.c - the preferred name among ELF symbols at one address, and the
 * part of a symbol name that is shown (without its symbol version).
 */
#include <ctype.h>
#include <gelf.h>
#include <string.h>

#include "symrank.h"

size_t sac_sym__name_len(const char *name)
{
	const char *at = strchr(name, '@'), *v;

	if (!at || at == name)
		return strlen(name);
	v = at + 1 + (at[1] == '@');
	/* func@plt is a PLT entry's own name, not a version */
	if (!strcmp(v, "plt") || !(isalpha((unsigned char)*v) || *v == '_'))
		return strlen(name);
	return (size_t)(at - name);
}

unsigned sac_sym__rank(int bind, const char *name)
{
	size_t len = sac_sym__name_len(name);
	unsigned scope = 2, us = 0, suffix;

	if (bind == STB_GLOBAL || bind == STB_GNU_UNIQUE)
		scope = 0;
	else if (bind == STB_WEAK)
		scope = 1;
	/* the vDSO's own names (__vdso_clock_gettime) over their weak twins, as perf */
	while (name[us] == '_' && us < 15 && strncmp(name, "__vdso_", 7))
		us++;
	suffix = len > 1 && memchr(name + 1, '.', len - 1) != NULL;
	return suffix << 14 | us << 10 | scope << 8 | (len < 255 ? 255 - (unsigned)len : 0);
}
