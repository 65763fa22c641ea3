/* buf.h: a growable text buffer, and the growth of heap arrays, shared by every pass and backend.
 * Out of memory never aborts: the buffer remembers it (oom) and zsp_buf_take then returns NULL. */
#ifndef ZSP_BUF_H
#define ZSP_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Zero-initialised is empty. data is NUL-terminated once anything was added (len excludes the
 * NUL). After a failed allocation (or a format that cannot be rendered) the buffer keeps what it
 * has, sets oom and ignores every further add. */
typedef struct zsp_buf {
	char *data;
	size_t len, cap;
	bool oom;
} zsp_buf;

void zsp_buf_add(zsp_buf *b, const void *s, size_t n);
void zsp_buf_puts(zsp_buf *b, const char *s);
void zsp_buf_putc(zsp_buf *b, char c);
void zsp_buf_printf(zsp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void zsp_buf_vprintf(zsp_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Hands over data (NUL-terminated, "" when nothing was added; *len its length when len is not
 * NULL) and empties b. NULL, with b freed, if an allocation ever failed. */
char *zsp_buf_take(zsp_buf *b, size_t *len);
/* Frees the text and empties b. */
void zsp_buf_free(zsp_buf *b);

/* Makes the heap array *(T **)arrp, of *cap elements of elem bytes, hold at least need: the
 * capacity doubles, from 8. false on size overflow or out of memory, the array left as it was
 * (lang/ knows no zsp_status: a failure here can only be out of memory). */
bool zsp_array_reserve(void *arrp, size_t *cap, size_t need, size_t elem);

#endif
