/* arena.c: bump allocator for one compilation.
 * Blocks are chained; large requests get a block of their own so waste stays bounded. */
#include "lang/arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Under AddressSanitizer the unused part of every block stays poisoned and each allocation is
 * unpoisoned to its exact size, so an overflow into the padding or the next object is caught. */
#if defined(__SANITIZE_ADDRESS__)
#define ZSP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ZSP_ASAN 1
#endif
#endif
#ifdef ZSP_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define ARENA_BLOCK 65536u
#define ARENA_ALIGN 16u

struct block {
	struct block *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

struct zsp_arena {
	struct block *head;
};

zsp_arena *zsp_arena_new(void)
{
	return calloc(1, sizeof(zsp_arena));
}

void zsp_arena_free(zsp_arena *a)
{
	if (!a)
		return;
	for (struct block *b = a->head, *next; b; b = next) {
		next = b->next;
		UNPOISON(b->data, b->size);
		free(b);
	}
	free(a);
}

void zsp_arena_reset(zsp_arena *a)
{
	struct block *keep = NULL;
	for (struct block *b = a->head, *next; b; b = next) {
		next = b->next;
		if (!keep && b->size == ARENA_BLOCK) {
			keep = b;
			continue;
		}
		UNPOISON(b->data, b->size);
		free(b);
	}
	if (keep) {
		keep->next = NULL;
		keep->used = 0;
		POISON(keep->data, keep->size);
	}
	a->head = keep;
}

void *zsp_arena_alloc(zsp_arena *a, size_t size)
{
	if (size > SIZE_MAX - ARENA_ALIGN - sizeof(struct block))
		return NULL;
	size_t want = size;
	size = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (size == 0)
		size = ARENA_ALIGN;
	struct block *b = a->head;
	if (!b || b->size - b->used < size) {
		size_t cap = size > ARENA_BLOCK / 4 ? size : ARENA_BLOCK;
		struct block *nb = malloc(sizeof(*nb) + cap);
		if (!nb)
			return NULL;
		nb->used = 0;
		nb->size = cap;
		POISON(nb->data, cap);
		if (b && cap == size && b->size - b->used >= ARENA_ALIGN) {
			/* keep filling the current block; park the big one behind it */
			nb->next = b->next;
			b->next = nb;
		} else {
			nb->next = b;
			a->head = nb;
		}
		b = nb;
	}
	void *p = b->data + b->used;
	b->used += size;
	UNPOISON(p, want);
	memset(p, 0, want);
	return p;
}

void *zsp_arena_calloc(zsp_arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		return NULL;
	return zsp_arena_alloc(a, n * size);
}

char *zsp_arena_strndup(zsp_arena *a, const char *s, size_t n)
{
	if (n == SIZE_MAX)
		return NULL;
	char *p = zsp_arena_alloc(a, n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

char *zsp_arena_strdup(zsp_arena *a, const char *s)
{
	return zsp_arena_strndup(a, s, strlen(s));
}

char *zsp_arena_printf(zsp_arena *a, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	char *p = zsp_arena_alloc(a, (size_t)n + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void *zsp_arena_grow(zsp_arena *a, void *arr, size_t n, size_t *cap, size_t elem)
{
	if (n < *cap)
		return arr;
	size_t ncap = *cap ? *cap * 2 : 8;
	if (ncap < *cap || (elem && ncap > SIZE_MAX / elem))
		return NULL;
	void *p = zsp_arena_calloc(a, ncap, elem);
	if (!p)
		return NULL;
	if (n)
		memcpy(p, arr, n * elem);
	*cap = ncap;
	return p;
}
