/* regex.c: PCRE2 with the options that make it read Rust-regex syntax the way agent settings
 * are written (UTF-8, Unicode classes for \d \s \w \b, no \C). */
#include "config.h"

#include "compiler/regex.h"
#include "compiler/zsp.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool zsp_regex_check(const char *pattern, bool case_sensitive, char *msg, size_t msgsize,
		     size_t *erroff)
{
	int err;
	PCRE2_SIZE off;
	uint32_t opts = ZSP_REGEX_PCRE2_OPTIONS | (case_sensitive ? 0 : PCRE2_CASELESS);
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
	/* A prefilter for patterns anchored at the start: the ASCII bytes a match can begin with
	 * (a bit per byte), valid when has_first. A subject beginning with another ASCII byte
	 * cannot match, and is refused without entering PCRE2, whose own start-up costs more than
	 * the whole test: most allow rules are `^cmd\b` and most subjects are another command. */
	bool has_first;
	uint64_t first[2];
	/* A second prefilter: ASCII bytes every match contains in a row (`sudo` of `\bsudo\b`),
	 * compared caselessly unless case_sensitive. A subject without them cannot match. */
	char lit[32];
	size_t nlit;
	bool case_sensitive;
};

/* A byte that stands for itself when it starts a pattern or an alternative (no meaning in
 * PCRE2 syntax, no case beyond ASCII's to think about). */
static bool plain_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("-_/ :=,@%~!<>&;'\"", c));
}

/* A quantifier that can make the atom before it match nothing. `{` is taken for one even
 * where PCRE2 would read it as a literal: the prefilter then only gives up. */
static bool may_skip(char c)
{
	return c == '?' || c == '*' || c == '{';
}

static void add_first(zsp_regex *re, unsigned char c, bool case_sensitive)
{
	re->first[c >> 6] |= 1ull << (c & 63);
	if (!case_sensitive && ((c | 32) >= 'a' && (c | 32) <= 'z')) {
		c ^= 32;
		re->first[c >> 6] |= 1ull << (c & 63);
	}
}

/* An escape of two bytes, backslash and c, that stands for one thing and takes no argument:
 * punctuation, classes like \s, assertions like \b. \c, \x, \o, \p, \N, \g, \k, digits
 * and \Q read what follows them: a scanner that skipped two bytes would misread the rest. */
static bool simple_escape(char c)
{
	return c && (unsigned char)c < 0x80 &&
	       ((!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9')) ||
		strchr("bBsSwWdDhHvVRXAzZGKntrfea", c));
}

/* Index just past the class whose `[` is at pat[i], or 0 if it is not read: `]` first (after
 * an optional `^`) is literal; a POSIX class inside ([:alpha:]) is not read. */
static size_t class_end(const char *pat, size_t i)
{
	i++;
	if (pat[i] == '^')
		i++;
	if (pat[i] == ']')
		i++;
	for (; pat[i] && pat[i] != ']'; i++) {
		if (pat[i] == '\\' && !simple_escape(pat[i + 1]))
			return 0;
		if (pat[i] == '\\')
			i++;
		else if (pat[i] == '[' && pat[i + 1] && strchr(":.=", pat[i + 1]))
			return 0;
	}
	return pat[i] ? i + 1 : 0;
}

/* Index just past the group whose `(` is at pattern[i], or 0 if the scan finds no end; sets
 * *alts to the offsets of its alternatives (at most max of them, else 0 is returned). */
static size_t group_end(const char *pat, size_t i, size_t *alts, size_t max, size_t *nalts)
{
	unsigned depth = 0;
	*nalts = 0;
	for (; pat[i]; i++) {
		char c = pat[i];
		if (c == '\\') {
			if (!simple_escape(pat[++i]))
				return 0;
		} else if (c == '[') {
			if (!(i = class_end(pat, i)))
				return 0;
			i--; /* the loop steps past the `]` */
		} else if (c == '(') {
			size_t start = i + 1;
			/* lookaround, comments, options (`(?x)` makes `#` a comment): not read */
			if (pat[start] == '?' && pat[start + 1] != ':')
				return 0;
			if (pat[start] == '?')
				start += 2;
			if (++depth == 1)
				alts[(*nalts)++] = start;
		} else if (c == ')') {
			if (depth == 0)
				return 0;
			if (--depth == 0)
				return i + 1;
		} else if (c == '|' && depth == 1) {
			if (*nalts == max)
				return 0;
			alts[(*nalts)++] = i + 1;
		}
	}
	return 0;
}

/* Does the pattern have a `|` outside every group (then `^` anchors only one alternative)? */
static bool top_level_bar(const char *pat)
{
	char wrapped[4096];
	size_t n = strlen(pat), alts[1], nalts;
	if (n + 3 > sizeof(wrapped))
		return true;
	wrapped[0] = '(';
	memcpy(wrapped + 1, pat, n);
	wrapped[n + 1] = ')';
	wrapped[n + 2] = '\0';
	/* the whole pattern as one group: its end must be the last byte, with one alternative */
	return group_end(wrapped, 0, alts, 1, &nalts) != n + 2;
}

/* The first-byte prefilter, for `^LITERAL...` and `^(A...|B...|...)...` where each of A, B
 * starts with a plain byte that no quantifier makes optional; anything else has none. */
static void first_bytes(zsp_regex *re, const char *pat, bool case_sensitive)
{
	size_t alts[64], nalts = 0;
	if (pat[0] != '^' || top_level_bar(pat))
		return;
	if (plain_byte((unsigned char)pat[1]) && !may_skip(pat[2])) {
		add_first(re, (unsigned char)pat[1], case_sensitive);
		re->has_first = true;
		return;
	}
	if (pat[1] != '(')
		return;
	size_t end = group_end(pat, 1, alts, sizeof(alts) / sizeof(alts[0]), &nalts);
	if (end == 0 || nalts == 0 || may_skip(pat[end]))
		return;
	for (size_t k = 0; k < nalts; k++) {
		unsigned char c = (unsigned char)pat[alts[k]];
		if (!plain_byte(c) || may_skip(pat[alts[k] + 1])) {
			re->first[0] = re->first[1] = 0;
			return;
		}
		add_first(re, c, case_sensitive);
	}
	re->has_first = true;
}

/* The longest run of plain bytes outside every group, each matched once (a quantifier that
 * may skip or repeat a byte ends the run before it), for the literal prefilter. Patterns with
 * a top-level bar, or anything group_end does not read, have none. */
static void required_literal(zsp_regex *re, const char *pat, bool case_sensitive)
{
	size_t run = 0, start = 0, i = 0, alts[64], nalts;
	if (top_level_bar(pat))
		return;
	for (;;) {
		char c = pat[i];
		if (plain_byte((unsigned char)c) && !may_skip(pat[i + 1]) && pat[i + 1] != '+') {
			if (run++ == 0)
				start = i;
			i++;
			if (run > re->nlit && run <= sizeof(re->lit)) {
				memcpy(re->lit, pat + start, run);
				re->nlit = run;
			}
			continue;
		}
		run = 0;
		if (!c)
			break;
		if (c == '\\') {
			if (!simple_escape(pat[i + 1]))
				return (void)(re->nlit = 0);
			i += 2;
		} else if (c == '[') {
			if (!(i = class_end(pat, i)))
				return (void)(re->nlit = 0);
		} else if (c == '{') {
			/* a quantifier's bounds are no literal (a `{` that is one loses its run) */
			const char *close = strchr(pat + i, '}');
			i = close ? (size_t)(close - pat) + 1 : strlen(pat);
		} else if (c == '(') {
			i = group_end(pat, i, alts, sizeof(alts) / sizeof(alts[0]), &nalts);
			if (i == 0)
				return (void)(re->nlit = 0);
		} else {
			i++;
		}
	}
	re->case_sensitive = case_sensitive;
}

zsp_regex *zsp_regex_compile(const char *pattern, bool case_sensitive)
{
	int err;
	PCRE2_SIZE off;
	uint32_t opts = ZSP_REGEX_PCRE2_OPTIONS | (case_sensitive ? 0 : PCRE2_CASELESS);
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
	first_bytes(re, pattern, case_sensitive);
	required_literal(re, pattern, case_sensitive);
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

static unsigned char fold(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? c | 32 : c;
}

/* A bit per pair of adjacent bytes, ASCII letters folded to lower case. */
static unsigned pair_bit(unsigned char a, unsigned char b)
{
	return ((unsigned)fold(a) * 31u + fold(b)) & 255u;
}

void zsp_regex_subject_init(zsp_regex_subject *subj, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	*subj = (zsp_regex_subject){ .text = s, .len = len, .ascii = true };
	for (size_t i = 0; i < len; i++) {
		if (u[i] >= 0x80)
			subj->ascii = false;
		if (i + 1 < len) {
			unsigned bit = pair_bit(u[i], u[i + 1]);
			subj->pairs[bit >> 6] |= 1ull << (bit & 63);
		}
	}
}

/* Can the subject hold the regex's required literal? Each of its pairs of bytes must be in the
 * subject's (folded, so this holds caselessly too). Caselessly, only an all-ASCII subject is
 * judged: a byte >= 0x80 may begin a character that folds to an ASCII one. */
static bool may_hold_literal(const zsp_regex *re, const zsp_regex_subject *subj)
{
	size_t n = re->nlit;
	if (n < 2 || (!re->case_sensitive && !subj->ascii))
		return true;
	if (subj->len < n)
		return false; /* a character matching an ASCII one is never shorter than it */
	const unsigned char *lit = (const unsigned char *)re->lit;
	for (size_t k = 0; k + 1 < n; k++) {
		unsigned bit = pair_bit(lit[k], lit[k + 1]);
		if (!(subj->pairs[bit >> 6] >> (bit & 63) & 1))
			return false;
	}
	return true;
}

/* The first-byte prefilter: false when the subject cannot begin a match. A byte >= 0x80 may
 * begin a character that matches an ASCII one caselessly (K and the Kelvin sign): only PCRE2
 * can say. */
static bool may_begin(const zsp_regex *re, const char *subject, size_t len)
{
	unsigned char c = len ? (unsigned char)subject[0] : 0;
	return !re->has_first || c >= 0x80 || (re->first[c >> 6] >> (c & 63) & 1);
}

static int engine(zsp_regex *re, const char *subject, size_t len, bool *matched)
{
	int rc = pcre2_match(re->code, (PCRE2_SPTR)subject, len, 0, 0, re->md, re->mc);
	*matched = rc >= 0;
	if (rc >= 0 || rc == PCRE2_ERROR_NOMATCH)
		return ZSP_OK;
	return rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ? ZSP_EUSAGE : ZSP_EINTERNAL;
}

/* A subject refused by a prefilter is one PCRE2 refuses too, and without work that could reach
 * the match limit: a missing literal or first byte fails every start position at once. */
int zsp_regex_search(zsp_regex *re, const char *subject, size_t len, bool *matched)
{
	if (!may_begin(re, subject, len)) {
		*matched = false;
		return ZSP_OK;
	}
	return engine(re, subject, len, matched);
}

int zsp_regex_search_subject(zsp_regex *re, const zsp_regex_subject *subj, bool *matched)
{
	if (!may_begin(re, subj->text, subj->len) || !may_hold_literal(re, subj)) {
		*matched = false;
		return ZSP_OK;
	}
	return engine(re, subj->text, subj->len, matched);
}
