/* SPDX-License-Identifier: MIT */
/*
 * rotate.h - sa-record --rotate/--keep/--keep-size: when to start the next
 * file, its name (STEM-YYYYMMDDTHHMMSS.mmmZ.EXT from the output's name, by
 * its start in UTC) and deleting the oldest closed files of the set.
 */
#ifndef REC_ROTATE_H
#define REC_ROTATE_H

#include <stdbool.h>
#include <stdint.h>

struct rec_opts;
struct rec_rotate;

/**
 * rec_rotate_parse() - "10m", "30s", "2h", "1d", "90" (seconds) set
 * *@secs; "64M", "512K", "1G" (upper case, optional B or iB) set *@bytes.
 * @return 0, or -EINVAL for anything else.
 */
int rec_rotate_parse(const char *arg, double *secs, uint64_t *bytes);

/**
 * rec_rotate__new() - the rotation of @o->output (borrowed; @o must
 * outlive the result), with its directory opened (O_PATH).
 * @return a handle released with rec_rotate__free(), or NULL with errno.
 */
struct rec_rotate *rec_rotate__new(const struct rec_opts *o);

/**
 * rec_rotate__name() - the path of the file that starts at @real_ns
 * (CLOCK_REALTIME); it becomes the current file. Borrowed until the next
 * call or rec_rotate__free().
 */
const char *rec_rotate__name(struct rec_rotate *rt, uint64_t real_ns);

/** rec_rotate__path() - the current file's path (borrowed, as above). */
const char *rec_rotate__path(const struct rec_rotate *rt);

/**
 * rec_rotate__open() - create the current file (O_EXCL, never through a
 * symbolic link, mode 0600). When its name is taken (by anyone: a file, a
 * link, a directory; none is followed or touched), the current file
 * becomes STEM-STAMP-xxxxxxxx.EXT with a random suffix, tried a bounded
 * number of times; rec_rotate__path() says the name it got.
 * @return a writable fd the caller closes, or a negative errno.
 */
int rec_rotate__open(struct rec_rotate *rt);

/**
 * rec_rotate__commit() - the first file, written as @tmp (a path in the
 * set's directory) with @fd open on it, renamed to the current name, never
 * over a name that exists: taken, it gets a random suffix as in
 * rec_rotate__open(). With @sync, @fd's data is on disk first.
 * @return 0, or a negative errno with a message in @err (@errsz bytes).
 */
int rec_rotate__commit(struct rec_rotate *rt, const char *tmp, int fd, bool sync, char *err,
		       size_t errsz);

/** rec_rotate__discard() - remove the current file (it could not get its META). */
void rec_rotate__discard(struct rec_rotate *rt);

/**
 * rec_rotate__due() - should the file begun at @start_ns (CLOCK_MONOTONIC)
 * that holds @bytes be closed at @now_ns?
 */
bool rec_rotate__due(const struct rec_rotate *rt, uint64_t start_ns, uint64_t now_ns,
		     uint64_t bytes);

/**
 * rec_rotate__prune() - delete the oldest closed files of the set beyond
 * --keep N and beyond --keep-size bytes in total. A file is of the set by
 * what it is, not by its name: a regular file of this user (links are not
 * followed) named as rec_rotate__name() names them, other than the
 * current one, whose first record is a META of sa-record on this host
 * with the start its name says. Oldest means: of an earlier boot (by
 * start), else by CLOCK_MONOTONIC start, so a clock stepped back never
 * makes a newer file look older. Nothing else is touched.
 * @return the number of files deleted, or a negative errno.
 */
int rec_rotate__prune(struct rec_rotate *rt);

/** rec_rotate__free() - release @rt. Accepts NULL. */
void rec_rotate__free(struct rec_rotate *rt);

#endif /* REC_ROTATE_H */
