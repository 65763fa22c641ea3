/* arena.h: bump allocator owning everything one compilation creates (AST, IR, strings).
 * Freed once with zsp_arena_free; allocation failure returns NULL, never aborts. */
#ifndef ZSP_ARENA_H
#define ZSP_ARENA_H

#include <stddef.h>

typedef struct zsp_arena zsp_arena;

zsp_arena *zsp_arena_new(void);
void zsp_arena_free(zsp_arena *a);
/* Forgets every allocation but keeps one block for reuse: a loop that needs a fresh arena per
 * step (a decision per request) then allocates no memory in the steady state. */
void zsp_arena_reset(zsp_arena *a);

/* Zero-filled, aligned for any object. NULL on out-of-memory or size overflow. */
void *zsp_arena_alloc(zsp_arena *a, size_t size);
void *zsp_arena_calloc(zsp_arena *a, size_t n, size_t size);
/* Room for one more element in an arena array of n elements of elem bytes and capacity *cap:
 * arr itself when it has room, else a copy twice the size (from 8) in the arena (the old block
 * stays until the arena goes). NULL on out-of-memory or size overflow, *cap unchanged. */
void *zsp_arena_grow(zsp_arena *a, void *arr, size_t n, size_t *cap, size_t elem);
char *zsp_arena_strdup(zsp_arena *a, const char *s);
char *zsp_arena_strndup(zsp_arena *a, const char *s, size_t n);
/* printf into the arena. */
char *zsp_arena_printf(zsp_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
