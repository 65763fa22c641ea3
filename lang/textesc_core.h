/* textesc_core.h: the rules of compiler/textesc.c (what text shows as written, how the rest is
 * escaped), header-only so that a program which must not link libzsp (runtime/zsp-exec.c, libc
 * only) shows a name exactly as zsp_text_escape does. */
#ifndef ZSP_TEXTESC_CORE_H
#define ZSP_TEXTESC_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at s (2..4) with its code point in *cp, or 0 (overlong
 * forms, surrogates and values above U+10FFFF are not valid). */
static inline size_t zsp_utf8_seq(const unsigned char *s, uint32_t *cp)
{
	size_t n;
	uint32_t c, min;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		n = 2, c = s[0] & 0x1Fu, min = 0x80;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF)
		n = 3, c = s[0] & 0x0Fu, min = 0x800;
	else if (s[0] >= 0xF0 && s[0] <= 0xF4)
		n = 4, c = s[0] & 0x07u, min = 0x10000;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3Fu);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return n;
}

/* Code points that change how the rest of a line is drawn: C1 controls, bidirectional marks,
 * overrides and isolates, line and paragraph separators. */
static inline bool zsp_utf8_invisible(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F ||
	       (c >= 0x2028 && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

/* Whether text (NUL-terminated) shows as written: zsp_text_plain. */
static inline bool zsp_text_plain_core(const char *text)
{
	for (const unsigned char *s = (const unsigned char *)text; *s;) {
		uint32_t cp;
		size_t n;
		if (*s >= 0x20 && *s < 0x7F)
			s++;
		else if ((n = zsp_utf8_seq(s, &cp)) != 0 && !zsp_utf8_invisible(cp))
			s += n;
		else
			return false;
	}
	return true;
}

/* The longest output of one step of zsp_text_escape_step: `\u{XXXX}` (an invisible code point
 * is below U+10000). */
#define ZSP_TEXT_ESCAPE_STEP_MAX 8

/* One step of zsp_text_escape over text that is not plain, at s (not at its NUL): writes what
 * it shows as to out (ZSP_TEXT_ESCAPE_STEP_MAX bytes, not NUL-terminated) and returns how many
 * bytes that is; *used gets the bytes of s consumed. `\` becomes `\\` (once anything is escaped
 * a backslash is too: `\n` must not be mistaken for a newline), newline, tab and CR `\n` `\t`
 * `\r`, an invisible code point `\u{XXXX}`, any other byte that is not printable ASCII or part
 * of valid UTF-8 `\xHH`. */
static inline size_t zsp_text_escape_step(const unsigned char *s, char *out, size_t *used)
{
	static const char hexdigit[] = "0123456789abcdef";
	uint32_t cp;
	size_t n;
	*used = 1;
	if (*s == '\\' || *s == '\n' || *s == '\t' || *s == '\r') {
		out[0] = '\\';
		out[1] = *s == '\\' ? '\\' : *s == '\n' ? 'n' : *s == '\t' ? 't' : 'r';
		return 2;
	}
	if (*s >= 0x20 && *s < 0x7F) {
		out[0] = (char)*s;
		return 1;
	}
	if ((n = zsp_utf8_seq(s, &cp)) != 0) {
		*used = n;
		if (!zsp_utf8_invisible(cp)) {
			for (size_t i = 0; i < n; i++)
				out[i] = (char)s[i];
			return n;
		}
		out[0] = '\\', out[1] = 'u', out[2] = '{';
		for (int i = 0; i < 4; i++)
			out[3 + i] = hexdigit[cp >> (12 - 4 * i) & 0xF];
		out[7] = '}';
		return 8;
	}
	out[0] = '\\', out[1] = 'x', out[2] = hexdigit[*s >> 4], out[3] = hexdigit[*s & 0xF];
	return 4;
}

#endif
