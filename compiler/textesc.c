/* textesc.c: escaping untrusted text for a terminal, and reading the escapes back. */
#include "config.h"

#include "compiler/textesc.h"
#include "compiler/zsp.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (2..4) with its code point, or 0 (overlong forms,
 * surrogates and values above U+10FFFF are not valid). */
static size_t utf8_seq(const unsigned char *s, uint32_t *cp)
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
static bool invisible(uint32_t c)
{
	return (c >= 0x80 && c <= 0x9F) || c == 0x061C || c == 0x200E || c == 0x200F ||
	       (c >= 0x2028 && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

bool zsp_text_plain(const char *text)
{
	for (const unsigned char *s = (const unsigned char *)text; *s;) {
		uint32_t cp;
		size_t n;
		if (*s >= 0x20 && *s < 0x7F)
			s++;
		else if ((n = utf8_seq(s, &cp)) != 0 && !invisible(cp))
			s += n;
		else
			return false;
	}
	return true;
}

char *zsp_text_escape(const char *text)
{
	if (zsp_text_plain(text))
		return strdup(text);
	/* at most 4 bytes out per byte in: `\xHH` for one byte, `\u{XXXX}` for an invisible code
	 * point (2 or 3 bytes of UTF-8, all below U+10000) */
	size_t len = strlen(text);
	char *out = malloc(len * 5 + 1), *o = out;
	if (!out)
		return NULL;
	/* once anything is escaped, a backslash is too: `\n` must not be mistaken for a newline */
	for (const unsigned char *s = (const unsigned char *)text; *s;) {
		uint32_t cp;
		size_t n;
		if (*s == '\\') {
			*o++ = '\\', *o++ = '\\';
			s++;
		} else if (*s >= 0x20 && *s < 0x7F) {
			*o++ = (char)*s++;
		} else if (*s == '\n' || *s == '\t' || *s == '\r') {
			*o++ = '\\';
			*o++ = *s == '\n' ? 'n' : *s == '\t' ? 't' : 'r';
			s++;
		} else if ((n = utf8_seq(s, &cp)) != 0) {
			if (invisible(cp))
				o += sprintf(o, "\\u{%04x}", (unsigned)cp);
			else
				memcpy(o, s, n), o += n;
			s += n;
		} else {
			o += sprintf(o, "\\x%02x", *s);
			s++;
		}
	}
	*o = '\0';
	return out;
}

static int hex(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int zsp_text_unescape(const char *in, char **out, char *err, size_t errlen)
{
	*out = NULL;
	char *buf = malloc(strlen(in) + 1), *o = buf;
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return ZSP_EINTERNAL;
	}
	for (const char *s = in; *s;) {
		if (*s != '\\') {
			*o++ = *s++;
			continue;
		}
		size_t at = (size_t)(s - in);
		s++;
		if (*s == '\\' || *s == 'n' || *s == 't' || *s == 'r') {
			*o++ = *s == '\\' ? '\\' : *s == 'n' ? '\n' : *s == 't' ? '\t' : '\r';
			s++;
		} else if (*s == 'x' && hex(s[1]) >= 0 && hex(s[2]) >= 0) {
			int b = hex(s[1]) << 4 | hex(s[2]);
			if (b == 0) {
				snprintf(err, errlen, "\\x00 at byte %zu: the text cannot hold a NUL", at);
				goto bad;
			}
			*o++ = (char)b;
			s += 3;
		} else if (*s == 'u' && s[1] == '{') {
			uint32_t cp = 0;
			size_t digits = 0;
			for (s += 2; hex(*s) >= 0 && digits < 6; s++, digits++)
				cp = cp << 4 | (uint32_t)hex(*s);
			if (*s != '}' || digits == 0 || cp == 0 || cp > 0x10FFFF ||
			    (cp >= 0xD800 && cp <= 0xDFFF)) {
				snprintf(err, errlen, "bad \\u{...} at byte %zu: a Unicode scalar value in 1 to 6 "
					 "hex digits, not 0", at);
				goto bad;
			}
			s++;
			if (cp < 0x80) {
				*o++ = (char)cp;
			} else if (cp < 0x800) {
				*o++ = (char)(0xC0 | cp >> 6);
				*o++ = (char)(0x80 | (cp & 0x3F));
			} else if (cp < 0x10000) {
				*o++ = (char)(0xE0 | cp >> 12);
				*o++ = (char)(0x80 | (cp >> 6 & 0x3F));
				*o++ = (char)(0x80 | (cp & 0x3F));
			} else {
				*o++ = (char)(0xF0 | cp >> 18);
				*o++ = (char)(0x80 | (cp >> 12 & 0x3F));
				*o++ = (char)(0x80 | (cp >> 6 & 0x3F));
				*o++ = (char)(0x80 | (cp & 0x3F));
			}
		} else {
			snprintf(err, errlen, "unknown escape at byte %zu: use \\\\ \\n \\t \\r \\xHH or \\u{H...}", at);
			goto bad;
		}
	}
	*o = '\0';
	*out = buf;
	return ZSP_OK;
bad:
	free(buf);
	return ZSP_EUSAGE;
}

char *zsp_shell_quote(const char *s)
{
	bool plain = *s != 0;
	for (const char *c = s; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+@%-", *c))
			plain = false;
	if (plain)
		return strdup(s);
	size_t n = 2;
	for (const char *c = s; *c; c++)
		n += *c == '\'' ? 4 : 1;
	char *out = malloc(n + 1), *o = out;
	if (!out)
		return NULL;
	*o++ = '\'';
	for (const char *c = s; *c; c++) {
		if (*c == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *c;
		}
	}
	*o++ = '\'';
	*o = 0;
	return out;
}
