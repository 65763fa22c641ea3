/* names.h: the built-in tables' command names, looked up by a word's last path component with
 * ASCII case folded (a case-insensitive file system runs `RM` as rm), through an index built
 * once per table instead of a scan of the table per word. */
#ifndef ZSP_NAMES_H
#define ZSP_NAMES_H

#include <stdbool.h>
#include <stddef.h>

#define ZSP_NAMES_MAX 255

/* A bucket per folded first byte, each a list in table order, with every name's length. */
typedef struct zsp_names {
	size_t n;
	const char *name[ZSP_NAMES_MAX];
	size_t len[ZSP_NAMES_MAX];
	unsigned char head[256], next[ZSP_NAMES_MAX]; /* an index + 1; 0 ends a list */
} zsp_names;

/* Indexes n names: the k-th is the `const char *` at first + k * stride (a table of structs
 * whose first member is the name, or an array of strings). false if n > ZSP_NAMES_MAX. */
bool zsp_names_build(zsp_names *ix, const void *first, size_t n, size_t stride);
/* The index of the first name equal to word's last path component (ASCII case folded, as
 * strcasecmp compares in the C locale), or -1. */
long zsp_names_find(const zsp_names *ix, const char *word);

#endif
