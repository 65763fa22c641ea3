/* diag.c: diagnostic formatting. Every message of every pass is rendered here, in one format:
 * the include chain, "file:line:col: level: message [-Wname]", the source line and a ^~~~ span. */
#include "lang/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lang/buf.h"
#include "lang/textesc_core.h"

static const char *const warning_names[ZSP_W_COUNT] = {
	[ZSP_W_SHADOWED] = "shadowed",
	[ZSP_W_DUPLICATE] = "duplicate",
	[ZSP_W_CONFLICT] = "conflict",
	[ZSP_W_UNUSED_PARAM] = "unused-param",
	[ZSP_W_UNKNOWN_TOOL] = "unknown-tool",
	[ZSP_W_NO_EFFECT] = "no-effect",
	[ZSP_W_UNENFORCED] = "unenforced",
	[ZSP_W_HOST_CONTROL] = "host-control",
	[ZSP_W_UNANCHORED] = "unanchored",
	[ZSP_W_UNSAFE_FLAG] = "unsafe-flag",
};

const char *zsp_warning_name(zsp_warning w)
{
	return w < ZSP_W_COUNT ? warning_names[w] : "?";
}

void zsp_diag_init(zsp_diag *d, zsp_diag_sink sink, void *ctx)
{
	memset(d, 0, sizeof(*d));
	d->sink = sink;
	d->ctx = ctx;
	for (int i = 0; i < ZSP_W_COUNT; i++)
		d->enabled[i] = true;
}

static int warning_by_name(const char *name)
{
	for (int i = 0; i < ZSP_W_COUNT; i++)
		if (strcmp(name, warning_names[i]) == 0)
			return i;
	return -1;
}

bool zsp_diag_option(zsp_diag *d, const char *spec)
{
	int w;
	if (strcmp(spec, "error") == 0) {
		d->all_as_error = true;
		return true;
	}
	if (strncmp(spec, "error=", 6) == 0) {
		if ((w = warning_by_name(spec + 6)) < 0)
			return false;
		d->as_error[w] = true;
		d->enabled[w] = true;
		return true;
	}
	if (strncmp(spec, "no-error=", 9) == 0) {
		if ((w = warning_by_name(spec + 9)) < 0)
			return false;
		d->as_error[w] = false;
		return true;
	}
	if (strncmp(spec, "no-", 3) == 0) {
		if ((w = warning_by_name(spec + 3)) < 0)
			return false;
		d->enabled[w] = false;
		return true;
	}
	if ((w = warning_by_name(spec)) < 0)
		return false;
	d->enabled[w] = true;
	return true;
}

static void flush(zsp_diag *d, zsp_buf *b)
{
	if (b->oom)
		d->oom = true;
	if (b->len && d->sink)
		d->sink(d->ctx, b->data, b->len);
	zsp_buf_free(b);
}

/* What b holds from byte `from` on, made to show as zsp_text_escape shows text
 * (lang/textesc_core.h): a message names paths and text that a sandboxed command or a request
 * chose (a directory called "\033]0;...", a newline that starts a line of its own), and none of
 * it may redraw the terminal or forge a line. */
static void show_from(zsp_buf *b, size_t from)
{
	if (b->oom || b->len == from || zsp_text_plain_core(b->data + from))
		return;
	zsp_buf m = { 0 };
	for (const unsigned char *s = (const unsigned char *)b->data + from; *s;) {
		char out[ZSP_TEXT_ESCAPE_STEP_MAX];
		size_t used, n = zsp_text_escape_step(s, out, &used);
		zsp_buf_add(&m, out, n);
		s += used;
	}
	b->len = from;
	zsp_buf_add(b, m.data ? m.data : "", m.len);
	zsp_buf_free(&m);
}

static void include_chain(zsp_buf *b, const zsp_source *src)
{
	for (zsp_loc inc = src->included_from; inc.src; inc = inc.src->included_from) {
		unsigned line, col;
		zsp_source_position(inc.src, inc.begin, &line, &col);
		size_t from = b->len;
		zsp_buf_printf(b, "In file included from %s:%u:%u:", inc.src->path, line, col);
		show_from(b, from);
		zsp_buf_add(b, "\n", 1);
	}
}

/* The source line, then spaces (tabs kept, so the caret lines up) and ^~~~ under the span.
 * A span that runs past the end of the line is cut there. */
#define CARET_WIDTH 160

static void caret(zsp_buf *b, zsp_loc loc)
{
	size_t len;
	uint32_t lb;
	const char *line = zsp_source_line(loc.src, loc.begin, &len, &lb);
	/* a long line is shown as a window around the error, cut on character boundaries */
	if (len > CARET_WIDTH) {
		uint32_t from = loc.begin - lb > CARET_WIDTH / 2 ? loc.begin - lb - CARET_WIDTH / 2 : 0;
		while (from > 0 && ((unsigned char)line[from] & 0xC0) == 0x80)
			from--;
		size_t to = from + CARET_WIDTH < len ? from + CARET_WIDTH : len;
		while (to < len && ((unsigned char)line[to] & 0xC0) == 0x80)
			to++;
		line += from;
		lb += from;
		len = to - from;
	}
	zsp_buf_add(b, "  ", 2);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		/* control characters would garble the terminal; show them as '?' */
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			zsp_buf_add(b, "?", 1);
		else
			zsp_buf_add(b, line + i, 1);
	}
	zsp_buf_add(b, "\n  ", 3);
	uint32_t start = loc.begin - lb;
	for (uint32_t i = 0; i < start && i < len; i++) {
		unsigned char c = (unsigned char)line[i];
		if ((c & 0xC0) == 0x80)
			continue;
		zsp_buf_add(b, c == '\t' ? "\t" : " ", 1);
	}
	zsp_buf_add(b, "^", 1);
	uint32_t end = loc.end > loc.begin ? loc.end - lb : start + 1;
	if (end > len)
		end = (uint32_t)len > start ? (uint32_t)len : start + 1;
	for (uint32_t i = start + 1; i < end; i++)
		if (((unsigned char)line[i] & 0xC0) != 0x80)
			zsp_buf_add(b, "~", 1);
	zsp_buf_add(b, "\n", 1);
}

static void report(zsp_diag *d, const char *level, const char *tag, zsp_loc loc,
		   bool with_chain, const char *fmt, va_list ap) __attribute__((format(printf, 6, 0)));
static void report(zsp_diag *d, const char *level, const char *tag, zsp_loc loc,
		   bool with_chain, const char *fmt, va_list ap)
{
	zsp_buf b = { 0 };
	size_t from = 0;
	if (loc.src) {
		unsigned line, col;
		if (with_chain)
			include_chain(&b, loc.src);
		from = b.len;
		zsp_source_position(loc.src, loc.begin, &line, &col);
		zsp_buf_printf(&b, "%s:%u:%u: %s: ", loc.src->path, line, col, level);
	} else {
		zsp_buf_printf(&b, "zspc: %s: ", level);
	}
	zsp_buf_vprintf(&b, fmt, ap);
	show_from(&b, from);
	if (tag)
		zsp_buf_printf(&b, " [-W%s]", tag);
	zsp_buf_add(&b, "\n", 1);
	if (loc.src)
		caret(&b, loc);
	flush(d, &b);
}

/* Past this many errors the rest are counted, not shown: a binary included as a policy gave an
 * error per byte, each rendered with its line, which took minutes (found by fuzz_parser). */
#define SHOWN_ERRORS 100

/* Counts one more error; false when it is not to be shown (the first one over the limit says
 * so once). */
static bool error_shown(zsp_diag *d)
{
	d->errors++;
	d->suppressed = d->errors > SHOWN_ERRORS;
	if (d->errors == SHOWN_ERRORS + 1) {
		zsp_buf b = { 0 };
		zsp_buf_printf(&b, "zspc: note: more than %d errors: the rest are counted, not shown\n",
			       SHOWN_ERRORS);
		flush(d, &b);
	}
	return !d->suppressed;
}

void zsp_diag_error(zsp_diag *d, zsp_loc loc, const char *fmt, ...)
{
	va_list ap;
	if (!error_shown(d))
		return;
	va_start(ap, fmt);
	report(d, "error", NULL, loc, true, fmt, ap);
	va_end(ap);
}

void zsp_diag_error_noloc(zsp_diag *d, const char *fmt, ...)
{
	va_list ap;
	zsp_loc none = { 0 };
	if (!error_shown(d))
		return;
	va_start(ap, fmt);
	report(d, "error", NULL, none, false, fmt, ap);
	va_end(ap);
}

void zsp_diag_warning(zsp_diag *d, zsp_warning w, zsp_loc loc, const char *fmt, ...)
{
	va_list ap;
	d->suppressed = !d->enabled[w];
	if (d->suppressed)
		return;
	bool err = d->all_as_error || d->as_error[w];
	if (err)
		d->errors++;
	else
		d->warnings++;
	char tag[64];
	snprintf(tag, sizeof(tag), "%s%s", err ? "error=" : "", warning_names[w]);
	va_start(ap, fmt);
	report(d, err ? "error" : "warning", tag, loc, true, fmt, ap);
	va_end(ap);
}

void zsp_diag_note(zsp_diag *d, zsp_loc loc, const char *fmt, ...)
{
	va_list ap;
	if (d->suppressed)
		return;
	va_start(ap, fmt);
	report(d, "note", NULL, loc, false, fmt, ap);
	va_end(ap);
}

void zsp_diag_hint(zsp_diag *d, const char *fmt, ...)
{
	va_list ap;
	zsp_buf b = { 0 };
	if (d->suppressed)
		return;
	zsp_buf_add(&b, "  hint: ", 8);
	va_start(ap, fmt);
	zsp_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	show_from(&b, 8);
	zsp_buf_add(&b, "\n", 1);
	flush(d, &b);
}

void zsp_diag_summary(zsp_diag *d)
{
	zsp_buf b = { 0 };
	if (!d->errors && !d->warnings)
		return;
	if (d->errors)
		zsp_buf_printf(&b, "%u error%s", d->errors, d->errors == 1 ? "" : "s");
	if (d->errors && d->warnings)
		zsp_buf_add(&b, ", ", 2);
	if (d->warnings)
		zsp_buf_printf(&b, "%u warning%s", d->warnings, d->warnings == 1 ? "" : "s");
	zsp_buf_add(&b, " generated.\n", 12);
	flush(d, &b);
}
