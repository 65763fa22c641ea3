/* regex.c: PCRE2 with the options that make it read Rust-regex syntax the way agent settings
 * are written (UTF-8, Unicode classes for \d \s \w \b, no \C). */
#include "config.h"

#include "regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <string.h>

#define ZSP_REGEX_OPTIONS (PCRE2_UTF | PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C | PCRE2_MATCH_INVALID_UTF)

bool zsp_regex_check(const char *pattern, bool case_sensitive, char *msg, size_t msgsize,
		     size_t *erroff)
{
	int err;
	PCRE2_SIZE off;
	uint32_t opts = ZSP_REGEX_OPTIONS | (case_sensitive ? 0 : PCRE2_CASELESS);
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts, &err,
				       &off, NULL);
	if (re) {
		pcre2_code_free(re);
		return true;
	}
	if (pcre2_get_error_message(err, (PCRE2_UCHAR *)msg, msgsize) < 0)
		snprintf(msg, msgsize, "error %d", err);
	*erroff = off;
	return false;
}
