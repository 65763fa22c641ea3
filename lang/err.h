/* err.h: the message half of the one error convention (doc/layout.md "Errors"): a function
 * returns its status, and says why into the caller's buffer with these. */
#ifndef ZSP_ERR_H
#define ZSP_ERR_H

#include <stdarg.h>
#include <stddef.h>

/* Writes the message into err (NUL-terminated, cut to errlen; nothing when err is NULL or errlen
 * is 0) and returns status, so that `return zsp_err(err, errlen, ZSP_EIO, "...")` reads whole. */
int zsp_err(char *err, size_t errlen, int status, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
int zsp_verr(char *err, size_t errlen, int status, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
/* No message: err becomes "" (when it can hold one). */
void zsp_err_clear(char *err, size_t errlen);

#endif
