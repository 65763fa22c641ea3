/* regex.c: PCRE2 with the options that make it read Rust-regex syntax the way agent settings
 * are written (UTF-8, Unicode classes for \d \s \w \b, no \C). */
#include "config.h"

#include "compiler/regex.h"
#include "compiler/zsp.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
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

struct zsp_regex {
	pcre2_code *code;
	pcre2_match_data *md;
	pcre2_match_context *mc;
};

zsp_regex *zsp_regex_compile(const char *pattern, bool case_sensitive)
{
	int err;
	PCRE2_SIZE off;
	uint32_t opts = ZSP_REGEX_OPTIONS | (case_sensitive ? 0 : PCRE2_CASELESS);
	zsp_regex *re = calloc(1, sizeof(*re));
	if (!re)
		return NULL;
	re->code = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts, &err, &off, NULL);
	if (re->code)
		re->md = pcre2_match_data_create_from_pattern(re->code, NULL);
	re->mc = pcre2_match_context_create(NULL);
	if (!re->code || !re->md || !re->mc) {
		zsp_regex_free(re);
		return NULL;
	}
	pcre2_set_match_limit(re->mc, ZSP_REGEX_MATCH_LIMIT);
	pcre2_set_depth_limit(re->mc, ZSP_REGEX_MATCH_LIMIT);
	/* JIT is only speed: without it (no support, no executable memory) matching is the same */
	(void)pcre2_jit_compile(re->code, PCRE2_JIT_COMPLETE);
	return re;
}

void zsp_regex_free(zsp_regex *re)
{
	if (!re)
		return;
	pcre2_match_data_free(re->md);
	pcre2_match_context_free(re->mc);
	pcre2_code_free(re->code);
	free(re);
}

int zsp_regex_search(zsp_regex *re, const char *subject, size_t len, bool *matched)
{
	int rc = pcre2_match(re->code, (PCRE2_SPTR)subject, len, 0, 0, re->md, re->mc);
	*matched = rc >= 0;
	if (rc >= 0 || rc == PCRE2_ERROR_NOMATCH)
		return ZSP_OK;
	return rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ? ZSP_EUSAGE : ZSP_EINTERNAL;
}
