// SPDX-License-Identifier: MIT
/*
 * symrank.c - the preferred name among ELF symbols at one address.
 */
#include <gelf.h>
#include <string.h>

#include "symrank.h"

unsigned sac_sym__rank(int bind, const char *name)
{
	unsigned scope = 2, us = 0;

	if (bind == STB_GLOBAL || bind == STB_GNU_UNIQUE)
		scope = 0;
	else if (bind == STB_WEAK)
		scope = 1;
	while (name[us] == '_' && us < 15)
		us++;
	return scope << 5 | (name[0] && strchr(name + 1, '.') != NULL) << 4 | us;
}
