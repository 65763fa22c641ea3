/* err.c: the reason of a failure into the caller's buffer, for every library function that
 * returns a status (doc/layout.md "Errors"). */
#include "config.h"

#include <stdio.h>

#include "lang/err.h"

int zsp_verr(char *err, size_t errlen, int status, const char *fmt, va_list ap)
{
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	return status;
}

int zsp_err(char *err, size_t errlen, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	zsp_verr(err, errlen, status, fmt, ap);
	va_end(ap);
	return status;
}

void zsp_err_clear(char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
}
