// SPDX-License-Identifier: MIT
/*
 * svg.c - the interactive flame graph (--svg): one self-contained SVG with
 * a box per call-tree node, width by share, children on their parent;
 * escaping that keeps any name valid XML; colours by frame kind, hashed
 * from the name. The script it embeds lives in svg_script.c.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output_int.h"

#define FRAME_H	      16 /* px per level */
#define FONT_PX	      12
#define CHAR_W	      7.1 /* average glyph width of Verdana at 12 px */
#define PAD_X	      10
#define TOP_H	      60 /* title, subtitle, controls */
#define LEGEND_H      18 /* a legend line under the subtitle */
#define BOTTOM_H      34 /* details and search result lines */
#define DEFAULT_W     1200
#define DEFAULT_MIN_W 0.1

/*
 * One code point from @s: its length in bytes, and @cp. Anything that is not
 * well-formed UTF-8 (stray or missing continuation, overlong, surrogate, past
 * U+10FFFF) is one byte of U+FFFD, so every byte string maps to text.
 */
static size_t next_cp(const unsigned char *s, uint32_t *cp)
{
	static const uint32_t min_cp[] = {0, 0, 0x80, 0x800, 0x10000};
	size_t n;
	uint32_t v;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
	if (n == 0 || s[0] >= 0xf8)
		goto bad;
	v = s[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			goto bad; /* also stops at the NUL */
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min_cp[n] || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		goto bad;
	if (v == 0xfffe || v == 0xffff) /* not XML characters */
		goto bad;
	*cp = v;
	return n;
bad:
	*cp = 0xfffd;
	return 1;
}

static size_t count_cp(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = 0;
	uint32_t cp;

	while (*u) {
		u += next_cp(u, &cp);
		n++;
	}
	return n;
}

/* Printable ASCII that XML takes as it is. */
static inline bool xml_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '&' && c != '<' && c != '>' && c != '"' && c != '\'';
}

void rpt_put_xml(FILE *out, const char *s, size_t max_cp)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp;

	for (size_t k = 0; *u && k < max_cp; k++) {
		size_t len = 0;

		while (k + len < max_cp && xml_plain(u[len])) /* a run in one write */
			len++;
		if (len) {
			fwrite(u, 1, len, out);
			u += len;
			k += len - 1;
			continue;
		}
		len = next_cp(u, &cp);

		if (cp == 0xfffd && len == 1)
			fputs("\xef\xbf\xbd", out);
		else if (cp < 0x20 || cp == 0x7f)
			putc('_', out); /* XML 1.0 allows no C0 control, not even as &#N; */
		else if (rpt_cp_hidden(cp))
			fprintf(out, "\\u%04x", (unsigned)cp);
		else if (cp == '&')
			fputs("&amp;", out);
		else if (cp == '<')
			fputs("&lt;", out);
		else if (cp == '>')
			fputs("&gt;", out);
		else if (cp == '"')
			fputs("&quot;", out);
		else if (cp == '\'')
			fputs("&#39;", out);
		else
			fwrite(u, 1, len, out);
		u += len;
	}
}

/* FNV-1a of the name, then a 32-bit finalizer: the same name gets the same
 * colour in every file. */
static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	/* FNV leaves names that differ in the last byte close; mix all bits. */
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	return h ^ (h >> 16);
}

static uint32_t rgb(double r, double g, double b)
{
	return (uint32_t)r << 16 | (uint32_t)g << 8 | (uint32_t)b;
}

/*
 * FlameGraph's palettes for perf stacks (flamegraph.pl --colors=java): kernel
 * orange (no blue), user code red (C) or yellow (C++ "::"), JIT green,
 * inlined aqua, CPython functions blue, so a kernel frame never takes a user frame's colour; root
 * and unresolved frames grey. The shade is hashed from the name.
 */
uint32_t rpt_frame_colour(const char *name, uint32_t kind)
{
	uint32_t h = name_hash(name);
	double a = (h & 0xffff) / 65535.0, b = (h >> 16) / 65535.0;

	switch (kind) {
	case RPT_FRAME_KERNEL:
		return rgb(190 + 65 * a, 90 + 65 * a, 0);
	case RPT_FRAME_JIT:
		return rgb(50 + 60 * a, 200 + 55 * a, 50 + 60 * a);
	case RPT_FRAME_INLINE:
		return rgb(50 + 60 * a, 165 + 55 * a, 165 + 55 * a);
	case RPT_FRAME_ROOT:
		return rgb(170 + 30 * a, 170 + 30 * a, 205 + 40 * b);
	case RPT_FRAME_UNKNOWN:
		return rgb(165 + 40 * a, 165 + 40 * a, 165 + 40 * a);
	case RPT_FRAME_PYTHON: /* blue, which no other kind takes */
		return rgb(70 + 50 * a, 120 + 50 * a, 210 + 45 * b);
	default:
		if (strstr(name, "::"))
			return rgb(175 + 55 * a, 175 + 55 * a, 50 + 20 * a);
		return rgb(200 + 55 * a, 50 + 80 * a, 50 + 80 * a);
	}
}

static void put_subtitle(FILE *out, const struct rpt_profile *p, const struct rpt_svg_opts *o)
{
	const struct rpt_summary *s = o ? o->summary : NULL;
	const char *host = s ? s->host : (p->meta.host ? rpt_profile__name(p, p->meta.host) : NULL);
	uint64_t dur = s ? s->duration_ns : p->meta.duration_ns;
	uint64_t samples = s ? s->samples : p->total, lost = s ? s->lost : p->meta.lost;

	if (o && o->subtitle) {
		rpt_put_xml(out, o->subtitle, SIZE_MAX);
		return;
	}
	if (host) {
		fputs("host ", out);
		rpt_put_xml(out, host, SIZE_MAX);
		fputs(", ", out);
	}
	if (dur)
		fprintf(out, "%.1f s, ", dur / 1e9);
	if (rpt_value__is_time(p->meta.value)) {
		rpt_value__put(out, p->meta.value, (double)samples);
		fputs(p->meta.value == RPT_VALUE_OFF_CPU ? " off-CPU" : " of threads' time", out);
		if (s && s->total) {
			fputs(" of ", out);
			rpt_value__put(out, p->meta.value, (double)s->total);
		}
		fprintf(out, ", %llu lost", (unsigned long long)lost);
	} else {
		fprintf(out, "%llu", (unsigned long long)samples);
		if (s && s->total)
			fprintf(out, " of %llu", (unsigned long long)s->total);
		fprintf(out, " samples, %llu lost", (unsigned long long)lost);
	}
	if (s && s->lost_detail && s->lost_detail[0]) {
		fputs(" (", out);
		rpt_put_xml(out, s->lost_detail, SIZE_MAX);
		putc(')', out);
	}
}

static void put_head(FILE *out, const struct rpt_profile *p, const struct rpt_svg_opts *o,
		     const struct rpt_svg_style *st, uint32_t w, uint32_t h, double total)
{
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
		"height=\"%u\" viewBox=\"0 0 %u %u\" data-pad=\"%d\" data-cw=\"%.2f\" "
		"data-total=\"%.0f\" data-inverted=\"%d\">\n",
		w, h, w, h, PAD_X, CHAR_W, total, o && o->inverted);
	fputs("<style type=\"text/css\">\n"
	      "text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}\n"
	      "#title{font-size:17px;text-anchor:middle}\n"
	      "#subtitle,#legend{fill:#555;text-anchor:middle}\n"
	      "#frames g{cursor:pointer}\n"
	      "#frames g:hover rect{stroke:#000;stroke-width:0.5}\n"
	      "#frames g.m rect{fill:#e040e0}\n"
	      "#frames text{pointer-events:none}\n"
	      ".ctl{cursor:pointer;fill:#24c}\n"
	      "</style>\n",
	      out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f6f6f2\"/>\n", w, h);
	fprintf(out, "<text id=\"title\" x=\"%u\" y=\"24\">", w / 2);
	rpt_put_xml(out, o && o->title ? o->title : st->default_title, SIZE_MAX);
	fprintf(out, "%s</text>\n<text id=\"subtitle\" x=\"%u\" y=\"44\">",
		o && o->inverted ? " (icicle)" : "", w / 2);
	put_subtitle(out, p, o);
	if (st->legend) {
		fprintf(out, "</text>\n<text id=\"legend\" x=\"%u\" y=\"62\">", w / 2);
		rpt_put_xml(out, st->legend, SIZE_MAX);
	}
	fprintf(out,
		"</text>\n<text id=\"reset\" class=\"ctl\" x=\"%d\" y=\"24\">Reset Zoom</text>\n"
		"<text id=\"search\" class=\"ctl\" x=\"%u\" y=\"24\" "
		"text-anchor=\"end\">Search</text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n"
		"<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"></text>\n",
		PAD_X, w - PAD_X, PAD_X, h - 12, w - PAD_X, h - 12);
}

/**
 * rpt_fmt_fixed() - "%.*f" of @v into @buf (64 bytes), as printf writes it, for 0 to 3
 * decimals. A double scaled by 10^prec is off by under 1e-9 here, so
 * rounding to nearest is exact unless it lies that close to a tie: then,
 * and for negative or huge values, printf itself writes it.
 * @return its length.
 */
int rpt_fmt_fixed(char *buf, double v, int prec)
{
	static const double scale[] = {1, 10, 100, 1000};
	double x = v * scale[prec], f = floor(x);
	char tmp[24];
	uint64_t n;
	int len = 0, k = 0;

	if (signbit(v) || !(x < 1e12) || fabs(x - f - 0.5) < 1e-6)
		return snprintf(buf, 64, "%.*f", prec, v);
	n = (uint64_t)f + (x - f > 0.5);
	do {
		tmp[k++] = (char)('0' + n % 10);
		n /= 10;
	} while (n || k <= prec);
	while (k > prec)
		buf[len++] = tmp[--k];
	if (prec)
		buf[len++] = '.';
	while (k)
		buf[len++] = tmp[--k];
	buf[len] = '\0';
	return len;
}

static void default_detail(FILE *out, const struct rpt_flame *f, size_t i, void *ctx)
{
	double total = f->n[0].v[0] > 0 ? f->n[0].v[0] : 1;
	char a[64], b[64];

	(void)ctx;
	rpt_fmt_fixed(a, f->n[i].v[0], 0);
	rpt_fmt_fixed(b, 100 * f->n[i].v[0] / total, 2);
	fputs(a, out);
	fputs(" samples, ", out);
	fputs(b, out);
	putc('%', out);
}

/* --off-cpu, --wall: "12.3 ms, 4.56%" */
static void time_detail(FILE *out, const struct rpt_flame *f, size_t i, void *ctx)
{
	const struct rpt_profile *p = ctx;
	double total = f->n[0].v[0] > 0 ? f->n[0].v[0] : 1;

	rpt_value__put(out, p->meta.value, f->n[i].v[0]);
	fprintf(out, ", %.2f%%", 100 * f->n[i].v[0] / total);
}

/* --off-cpu: a cool palette, blues for user code and aqua for the kernel (FlameGraph's io). */
static uint32_t cool_fill(const struct rpt_flame *f, size_t i, void *ctx)
{
	const struct rpt_profile *p = ctx;
	const char *name = rpt_profile__name(p, f->n[i].name);
	uint32_t h = name_hash(name);
	double a = (h & 0xffff) / 65535.0, b = (h >> 16) / 65535.0;

	(void)ctx;
	if (i == 0 || f->n[i].kind == RPT_FRAME_ROOT || f->n[i].kind == RPT_FRAME_UNKNOWN)
		return rpt_frame_colour(name, f->n[i].kind);
	if (f->n[i].kind == RPT_FRAME_KERNEL)
		return rgb(40 + 50 * a, 160 + 60 * b, 180 + 50 * a);
	return rgb(60 + 60 * a, 90 + 70 * b, 200 + 55 * a);
}

struct draw_geom {
	double scale, min_w;
	uint32_t top, max_depth;
	bool inverted, short_names;
};

/* Decimal @v at @p (no NUL). @return the end. */
static char *put_dec(char *p, uint32_t v)
{
	char t[10];
	int n = 0;

	do
		t[n++] = (char)('0' + v % 10);
	while (v /= 10);
	while (n)
		*p++ = t[--n];
	return p;
}

/* @v as "%06x" does at @p (no NUL). @return the end. */
static char *put_hex6(char *p, uint32_t v)
{
	int n = 6;

	while (n < 8 && v >> (4 * n))
		n++;
	while (n--)
		*p++ = "0123456789abcdef"[(v >> (4 * n)) & 15];
	return p;
}

static char *put_str(char *p, const char *s)
{
	size_t len = strlen(s);

	memcpy(p, s, len);
	return p + len;
}

/* A frame's box: the end of its <title> and its <rect>, in one write. */
static void put_rect(FILE *out, double x, uint32_t y, double w, uint32_t fill)
{
	char buf[256], *p = buf; /* each number takes 64 bytes at most */

	p = put_str(p, "</title><rect x=\"");
	p += rpt_fmt_fixed(p, x, 3);
	p = put_str(p, "\" y=\"");
	p = put_dec(p, y);
	p = put_str(p, "\" width=\"");
	p += rpt_fmt_fixed(p, w, 3);
	p = put_str(p, "\" height=\"");
	p = put_dec(p, FRAME_H - 1);
	p = put_str(p, "\" fill=\"#");
	p = put_hex6(p, fill);
	p = put_str(p, "\"/>");
	fwrite(buf, 1, (size_t)(p - buf), out);
}

static void put_frame(FILE *out, const struct rpt_profile *p, const struct rpt_flame *f, size_t i,
		      const struct draw_geom *g, const struct rpt_svg_style *st)
{
	const struct rpt_flame_node *n = &f->n[i];
	const char *name = i == 0 ? "all" : rpt_profile__name(p, n->name);
	double x = PAD_X + n->x * g->scale, w = n->v[0] * g->scale;
	uint32_t level = g->inverted ? n->depth : g->max_depth - n->depth;
	uint32_t y = g->top + level * FRAME_H;
	uint32_t fill = st->fill ? st->fill(f, i, st->ctx)
			: i == 0 ? 0xc8c8d0
				 : rpt_frame_colour(name, n->kind);
	long chars = (long)((w - 6) / CHAR_W);
	char sbuf[1024], xs[96], *e;
	const char *label = g->short_names ? rpt_short_name(name, sbuf, sizeof(sbuf)) : name;

	fputs(i == 0 ? "<g id=\"all\">" : "<g>", out);
	if (label != name) { /* the script labels zoomed frames with it */
		fputs("<desc>", out);
		rpt_put_xml(out, label, SIZE_MAX);
		fputs("</desc>", out);
	}
	fputs("<title>", out);
	rpt_put_xml(out, name, SIZE_MAX);
	fputs("&#10;", out);
	(st->detail ? st->detail : default_detail)(out, f, i, st->ctx);
	put_rect(out, x, y, w, fill);
	if (chars >= 3) {
		size_t len = count_cp(label);

		e = put_str(xs, "<text x=\"");
		e += rpt_fmt_fixed(e, x + 3, 2);
		e = put_str(e, "\" y=\"");
		e = put_dec(e, y + 11);
		e = put_str(e, ".5\">"); /* y + 11.5 */
		fwrite(xs, 1, (size_t)(e - xs), out);
		rpt_put_xml(out, label, len <= (size_t)chars ? SIZE_MAX : (size_t)chars - 2);
		fputs(len <= (size_t)chars ? "</text>" : "..</text>", out);
	}
	fputs("</g>\n", out);
}

static bool visible(const struct rpt_flame *f, size_t i, const struct draw_geom *g)
{
	double w = f->n[i].v[0] * g->scale;

	return w > 0 && w >= g->min_w;
}

/* Geometry of a drawing of @f at @o's width; -EINVAL when too narrow. */
static int geom_init(struct draw_geom *g, const struct rpt_flame *f, const struct rpt_svg_opts *o,
		     uint32_t *w)
{
	double total = f->len ? f->n[0].v[0] : 0;

	*w = o && o->width ? o->width : DEFAULT_W;
	if (*w < 2 * PAD_X + 10)
		return -EINVAL;
	memset(g, 0, sizeof(*g));
	g->inverted = o && o->inverted;
	g->short_names = o && o->short_names;
	g->min_w = o && o->min_width >= 0 ? o->min_width : DEFAULT_MIN_W;
	g->scale = total > 0 ? (*w - 2 * PAD_X) / total : 0;
	g->top = TOP_H;
	for (size_t i = 0; i < f->len; i++)
		if (visible(f, i, g) && f->n[i].depth > g->max_depth)
			g->max_depth = f->n[i].depth;
	return 0;
}

size_t rpt_svg__count_drawn(const struct rpt_flame *f, const struct rpt_svg_opts *o)
{
	struct draw_geom g;
	size_t n = 0;
	uint32_t w;

	if (geom_init(&g, f, o, &w))
		return 0;
	for (size_t i = 1; i < f->len; i++)
		n += visible(f, i, &g);
	return n;
}

int rpt_svg__draw(const struct rpt_profile *p, const struct rpt_flame *f, FILE *out,
		  const struct rpt_svg_opts *o, const struct rpt_svg_style *st)
{
	double total = f->len ? f->n[0].v[0] : 0;
	struct draw_geom g;
	uint32_t w, h;
	int err = geom_init(&g, f, o, &w);

	if (err)
		return err;
	if (st->legend)
		g.top += LEGEND_H;
	h = g.top + (g.max_depth + 1) * FRAME_H + BOTTOM_H;
	put_head(out, p, o, st, w, h, total);
	fputs("<g id=\"frames\">\n", out);
	for (size_t i = 0; i < f->len; i++)
		if (visible(f, i, &g))
			put_frame(out, p, f, i, &g, st);
	fputs("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fputs(rpt_svg_script, out);
	fputs("]]></script>\n</svg>\n", out);
	if (fflush(out) || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

int rpt_svg__write(const struct rpt_profile *p, FILE *out, const struct rpt_svg_opts *o)
{
	struct rpt_svg_style st = {.default_title = rpt_value__title(p->meta.value)};
	struct rpt_flame f;
	int err;

	if (rpt_value__is_time(p->meta.value)) {
		st.detail = time_detail;
		st.ctx = (void *)p;
	}
	if (p->meta.value == RPT_VALUE_OFF_CPU)
		st.fill = cool_fill;
	err = rpt_flame__build(&f, p, NULL, NULL);
	if (!err)
		err = rpt_svg__draw(p, &f, out, o, &st);
	rpt_flame__release(&f);
	return err;
}
