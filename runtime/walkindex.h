/* walkindex.h: the index of the walks of writable roots kept between runs, in zsp's state
 * directory (doc/linux.md "The walk's index"): the provider behind zsp_linux_opts.walk_index. */
#ifndef ZSP_WALKINDEX_H
#define ZSP_WALKINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "backends/linux.h"

#define ZSP_WALKINDEX_VERSION 2  /* 2: a 64-bit checksum of the payload where 1 had SHA-256 */
#define ZSP_WALKINDEX_MAX (256u << 20)  /* bytes an index may have; a bigger one is not read */

/* The file: a header of ZSP_WALKINDEX_HEADER bytes (little-endian): "ZSPWIDX\n", version (4),
 * uid (4), since (8: the second the recording walk began), payload length (8), SHA-256 of the
 * walk's scope (32), zsp_walkindex_checksum of the payload (8). The payload: per directory, rel length (4),
 * rel, dev (8), ino (8), ctime seconds (8) and nanoseconds (8), any (1), entry count (4), and per
 * entry its type (1), name length (2), name. */
#define ZSP_WALKINDEX_HEADER (8 + 4 + 4 + 8 + 8 + 32 + 8)

/* The payload's checksum: catches a damaged or cut file (walkindex.c says why no more). */
uint64_t zsp_walkindex_checksum(const unsigned char *p, size_t n);

/* One directory of an index. */
typedef struct zsp_walkindex_dir {
	const char *rel;            /* "" the root, else "/a/b" */
	uint64_t dev, ino;
	int64_t ctime_sec, ctime_nsec;
	bool any;
	zsp_walk_entry *ents;
	size_t nents;
} zsp_walkindex_dir;

/* A parsed index: dirs sorted by rel; since: the time the walk that made it began. */
typedef struct zsp_walkindex_data {
	zsp_walkindex_dir *dirs;
	size_t ndirs;
	int64_t since;
} zsp_walkindex_data;

/* Parses data (len bytes), an index for scope_sha (SHA-256 of the walk's scope) written by uid.
 * true on success (*out's arrays malloc'd, names pointing into data: keep data; free with
 * zsp_walkindex_data_free); false with why set: truncated, corrupt, wrong version, another
 * scope or user. Never trusts a length it did not check. */
bool zsp_walkindex_parse(const unsigned char *data, size_t len, const unsigned char scope_sha[32],
			 uint32_t uid, zsp_walkindex_data *out, const char **why);
void zsp_walkindex_data_free(zsp_walkindex_data *d);

/* The header of an index of payload (len bytes), in head. */
void zsp_walkindex_seal(unsigned char head[ZSP_WALKINDEX_HEADER], const unsigned char scope_sha[32],
			uint32_t uid, int64_t since, const unsigned char *payload, size_t len);

/* The provider: indexes kept in state_dir/walk (made 0700 when missing). notes (NULL: none)
 * gets a line when an index is not used or cannot be written (zsp-run -v). NULL on
 * out-of-memory. */
zsp_walk_index *zsp_walkindex_new(const char *state_dir, FILE *notes);
/* The same provider, reading indexes and never writing one (zsp-run --print: printing the plan
 * leaves zsp's state as it was). */
zsp_walk_index *zsp_walkindex_new_readonly(const char *state_dir, FILE *notes);
void zsp_walkindex_free(zsp_walk_index *ix);

#endif
