/* diag.h: the one place diagnostics are formatted (file:line:col, source line, caret span).
 * Passes report through a zsp_diag; where the text goes is the sink's business, so tests can capture it. */
#ifndef ZSP_DIAG_H
#define ZSP_DIAG_H

#include <stdbool.h>

#include "lang/source.h"

typedef enum zsp_warning {
	ZSP_W_SHADOWED,
	ZSP_W_DUPLICATE,
	ZSP_W_CONFLICT,
	ZSP_W_UNUSED_PARAM,
	ZSP_W_UNKNOWN_TOOL,
	ZSP_W_NO_EFFECT,
	ZSP_W_UNENFORCED, /* a backend cannot enforce a rule as written */
	ZSP_W_HOST_CONTROL, /* an allowed unix socket that runs programs outside the sandbox */
	ZSP_W_UNANCHORED,   /* a terminal allow regex with no end anchor */
	ZSP_W_UNSAFE_FLAG,  /* a terminal allow regex that admits an option that runs or writes */
	ZSP_W_COUNT
} zsp_warning;

typedef void (*zsp_diag_sink)(void *ctx, const char *text, size_t len);

typedef struct zsp_diag {
	zsp_diag_sink sink;
	void *ctx;
	unsigned errors, warnings;
	bool enabled[ZSP_W_COUNT];
	bool as_error[ZSP_W_COUNT];
	bool all_as_error;
	bool suppressed;  /* the last diagnostic was a silenced warning: drop its notes */
	bool oom;         /* formatting ran out of memory once; text may be incomplete */
} zsp_diag;

/* All warnings on, none an error. */
void zsp_diag_init(zsp_diag *d, zsp_diag_sink sink, void *ctx);

/* Applies a -W option body: "NAME", "no-NAME", "error", "error=NAME", "no-error=NAME".
 * false if the name is unknown. */
bool zsp_diag_option(zsp_diag *d, const char *spec);
const char *zsp_warning_name(zsp_warning w);

void zsp_diag_error(zsp_diag *d, zsp_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* An error with no place (a missing file named on the command line, a bad -D). */
void zsp_diag_error_noloc(zsp_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void zsp_diag_warning(zsp_diag *d, zsp_warning w, zsp_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Attached to the previous error or warning (dropped with it when it was silenced). */
void zsp_diag_note(zsp_diag *d, zsp_loc loc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void zsp_diag_hint(zsp_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "2 errors, 1 warning generated." (nothing when both are zero). */
void zsp_diag_summary(zsp_diag *d);

#endif
