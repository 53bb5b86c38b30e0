/* SPDX-License-Identifier: MIT */
/*
 * strclip.h - strings from the profiled host (function names, paths,
 * command lines) cut to what a record can hold (docs/format.md, "Limits":
 * SAF_MAX_STRING bytes), so that one long name costs that name's tail,
 * never a record nor the recording (docs/reliability.md, "Long names").
 */
#ifndef REC_STRCLIP_H
#define REC_STRCLIP_H

#include <stddef.h>
#include <stdint.h>
#include <saf.h>

/* What a clipped string ends with, inside its SAF_MAX_STRING bytes. */
#define REC_CLIP_MARK "..."

/* A buffer rec_strclip() may write a clipped copy to. */
typedef char rec_clipbuf[SAF_MAX_STRING + 1];

/**
 * rec_strclip() - @s (@len bytes) as a string field the writer takes: @s
 * itself when it is at most SAF_MAX_STRING bytes, else its head, cut
 * before a UTF-8 continuation byte, then REC_CLIP_MARK, copied into @buf.
 * @clipped: incremented when @s was clipped; may be NULL.
 * @return a view of @s or of @buf (NUL-terminated then), valid while
 * both are. Thread-safe as far as @buf and @clipped are the caller's.
 */
struct saf_str rec_strclip(const char *s, size_t len, char *buf, uint64_t *clipped);

/**
 * rec_strclip_dup() - a copy of @s (@len bytes), clipped as rec_strclip()
 * clips. @clipped: as above.
 * @return a string the caller frees, or NULL with errno = ENOMEM.
 */
char *rec_strclip_dup(const char *s, size_t len, uint64_t *clipped);

#endif /* REC_STRCLIP_H */
