/* textesc.c: escaping untrusted text for a terminal, and reading the escapes back. */
#include "config.h"

#include "compiler/textesc.h"
#include "lang/textesc_core.h"
#include "compiler/zsp.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool zsp_text_plain(const char *text)
{
	return zsp_text_plain_core(text);
}

char *zsp_text_escape(const char *text)
{
	if (zsp_text_plain(text))
		return strdup(text);
	/* at most 4 bytes out per byte in: `\xHH` for one byte, `\u{XXXX}` for an invisible code
	 * point (2 or 3 bytes of UTF-8) */
	size_t len = strlen(text);
	char *out = malloc(len * 4 + 1), *o = out;
	if (!out)
		return NULL;
	for (const unsigned char *s = (const unsigned char *)text; *s;) {
		size_t used;
		o += zsp_text_escape_step(s, o, &used);
		s += used;
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
