/* buf.c: a growable NUL-terminated text buffer, and the growth of heap arrays.
 * Capacities double; a size that would overflow counts as out of memory. */
#include "lang/buf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more bytes and the NUL; false (and oom set) when there is none. */
static bool reserve(zsp_buf *b, size_t n)
{
	if (b->oom)
		return false;
	if (n > SIZE_MAX - 1 - b->len) {
		b->oom = true;
		return false;
	}
	size_t need = b->len + n + 1;
	if (need <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	char *p = realloc(b->data, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void zsp_buf_add(zsp_buf *b, const void *s, size_t n)
{
	if (!reserve(b, n))
		return;
	if (n)
		memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void zsp_buf_puts(zsp_buf *b, const char *s)
{
	zsp_buf_add(b, s, strlen(s));
}

void zsp_buf_putc(zsp_buf *b, char c)
{
	zsp_buf_add(b, &c, 1);
}

void zsp_buf_vprintf(zsp_buf *b, const char *fmt, va_list ap)
{
	if (b->oom)
		return;
	char small[256];
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(small, sizeof(small), fmt, ap2);
	va_end(ap2);
	if (n < 0) {
		b->oom = true; /* the text cannot be rendered: the result would be silently short */
		return;
	}
	if ((size_t)n < sizeof(small)) {
		zsp_buf_add(b, small, (size_t)n);
		return;
	}
	if (!reserve(b, (size_t)n))
		return;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void zsp_buf_printf(zsp_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	zsp_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

char *zsp_buf_take(zsp_buf *b, size_t *len)
{
	char *s = b->data;
	size_t n = b->len;
	if (b->oom) {
		free(s);
		s = NULL;
		n = 0;
	} else if (!s) {
		s = calloc(1, 1);
	}
	memset(b, 0, sizeof(*b));
	if (len)
		*len = n;
	return s;
}

void zsp_buf_free(zsp_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

bool zsp_array_reserve(void *arrp, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	if (elem == 0 || need > SIZE_MAX / elem)
		return false;
	size_t max = SIZE_MAX / elem, ncap = *cap ? *cap : 8;
	while (ncap < need)
		ncap = ncap > max / 2 ? max : ncap * 2;
	void *old, *p;
	memcpy(&old, arrp, sizeof(old));
	p = realloc(old, ncap * elem);
	if (!p)
		return false;
	memcpy(arrp, &p, sizeof(p));
	*cap = ncap;
	return true;
}
