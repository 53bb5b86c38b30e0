// SPDX-License-Identifier: MIT
/*
 * shortname.c - short labels for C++ names in flame graphs (--short-names):
 * template arguments and parameter lists dropped, so
 * "std::vector<int>::push_back(int const&) const" shows as
 * "std::vector::push_back". Tooltips and search keep the full name.
 */
#include <string.h>

#include "output_int.h"

/* Copy "operator<<", "operator()", "operator<=>" ... whole: their brackets
 * are the name, not arguments. @return bytes copied from @s (0 if none). */
static size_t operator_len(const char *s)
{
	size_t n;

	if (strncmp(s, "operator", 8) || (s[8] >= 'a' && s[8] <= 'z') || s[8] == '_')
		return 0;
	n = 8;
	if (!strncmp(s + n, "()", 2) || !strncmp(s + n, "[]", 2))
		return n + 2;
	while (s[n] && strchr("<>=!+-*/%^&|~,", s[n]))
		n++;
	return n;
}

/* After a parameter list: " const", " volatile", " &", " &&", " noexcept". */
static size_t qualifiers_len(const char *s)
{
	static const char *const q[] = {" const", " volatile", " &&", " &", " noexcept"};
	size_t n = 0;

	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		size_t l = strlen(q[i]);

		if (!strncmp(s + n, q[i], l)) {
			n += l;
			i = (size_t)-1; /* again from the first */
		}
	}
	return n;
}

const char *rpt_short_name(const char *name, char *buf, size_t cap)
{
	size_t o = 0, angle = 0, paren = 0;
	const char *s = name;

	if (!cap || (!strchr(name, '<') && !strchr(name, '(')))
		return name;
	while (*s && o + 1 < cap) {
		size_t n = angle || paren ? 0 : operator_len(s);

		if (n || (!angle && !paren && !strncmp(s, "(anonymous namespace)", 21))) {
			n = n ? n : 21;
			n = o + n < cap ? n : cap - 1 - o;
			memcpy(buf + o, s, n);
			o += n;
			s += n;
			continue;
		}
		if (*s == '<' && !paren)
			angle++;
		else if (*s == '>' && angle && !paren)
			angle--;
		else if (*s == '(' && !angle)
			paren++;
		else if (*s == ')' && paren && !angle && !--paren) {
			s += 1 + qualifiers_len(s + 1);
			continue;
		} else if (!angle && !paren)
			buf[o++] = *s;
		s++;
	}
	buf[o] = '\0';
	return o ? buf : name;
}
