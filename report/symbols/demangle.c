// SPDX-License-Identifier: MIT
/*
 * demangle.c - C++ (Itanium) and Rust names made readable: libiberty's
 * demangler, which also writes GCC's clone suffixes as c++filt does, and an
 * outline of the names it rejects (docs/sa-report.1, SYMBOL NAMES).
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "symbolize.h"

struct dm_out {
	char *buf;
	size_t cap, len;
};

static void put(struct dm_out *o, const char *s, size_t n)
{
	size_t room = o->len + 1 < o->cap ? o->cap - o->len - 1 : 0;

	if (n > room)
		n = room;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

/*
 * The clone suffixes after @s (".isra.0", ".constprop.1.cold", ...) as
 * c++filt writes them: " [clone .isra.0] [clone .cold]". A part that is not
 * a clone suffix ends the list and is kept as it is.
 */
static void put_clones(struct dm_out *o, const char *s)
{
	while (*s == '.' && (islower((unsigned char)s[1]) || s[1] == '_')) {
		const char *e = s + 1;

		while (islower((unsigned char)*e) || *e == '_')
			e++;
		while (e[0] == '.' && isdigit((unsigned char)e[1]))
			for (e++; isdigit((unsigned char)*e); e++)
				;
		put(o, " [clone ", 8);
		put(o, s, e - s);
		put(o, "]", 1);
		s = e;
	}
	if (*s)
		put(o, s, strlen(s));
}

/*
 * libiberty rejects a few valid names (V8's StringShape dispatchers, whose
 * template arguments hold lambdas in local scopes). Rather than the mangled
 * name, show its leading qualified name, the first template argument list
 * elided: "v8::internal::StringShape::DispatchToSpecificTypeWithoutCast<...>
 * [clone .isra.0]". NULL when even that does not parse.
 */
static const char *outline(const char *name, char *buf, size_t cap)
{
	struct dm_out o = {buf, cap, 0};
	const char *p = name + 2, *dot = strchr(name, '.');
	bool nested = *p == 'N';
	int parts = 0;

	buf[0] = '\0';
	if (nested)
		for (p++; *p && strchr("rVKRO", *p); p++)
			;
	if (p[0] == 'S' && p[1] == 't') {
		put(&o, "std", 3);
		parts++;
		p += 2;
	}
	while (isdigit((unsigned char)*p) && (nested || !parts)) {
		char *end;
		unsigned long n = strtoul(p, &end, 10);

		if (!n || strnlen(end, n) < n || (dot && end + n > dot))
			return NULL;
		if (parts++)
			put(&o, "::", 2);
		put(&o, end, n);
		p = end + n;
	}
	if (!parts)
		return NULL;
	if (*p == 'I')
		put(&o, "<...>", 5);
	if (dot)
		put_clones(&o, dot);
	return buf;
}

const char *rpt_demangle(const char *name, char *buf, size_t cap)
{
	const char *r;
	char *d;

	if (!name || !cap || (strncmp(name, "_Z", 2) && strncmp(name, "_R", 2)))
		return name;
	d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	if (!d) {
		r = name[1] == 'Z' ? outline(name, buf, cap) : NULL;
		return r ? r : name;
	}
	snprintf(buf, cap, "%s", d);
	free(d);
	return buf;
}
