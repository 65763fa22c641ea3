/* regex.h: the one regex engine of zsp (PCRE2, Rust-regex-compatible options, bounded matching).
 * The compiler validates with it; the oracle will match with it, so both agree on syntax. */
#ifndef ZSP_REGEX_H
#define ZSP_REGEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* true if pattern compiles; otherwise the engine's message and the byte offset of the error. */
bool zsp_regex_check(const char *pattern, bool case_sensitive, char *msg, size_t msgsize,
		     size_t *erroff);

/* The PCRE2 options of every pattern (PCRE2_CASELESS added unless case-sensitive). Spelt here
 * for the code that includes pcre2.h: tests compare the oracle's search with PCRE2's own. */
#define ZSP_REGEX_PCRE2_OPTIONS \
	(PCRE2_UTF | PCRE2_UCP | PCRE2_NEVER_BACKSLASH_C | PCRE2_MATCH_INVALID_UTF)

/* A compiled regex for matching. Not thread-safe: it owns its match data. */
typedef struct zsp_regex zsp_regex;

/* The work one search may do (PCRE2's match limit). A search that needs more fails, and the
 * oracle treats a failed search as a deny: a crafted input cannot buy time by backtracking. */
#define ZSP_REGEX_MATCH_LIMIT 200000u

/* NULL if the pattern does not compile or on out-of-memory. JIT-compiled where available. */
zsp_regex *zsp_regex_compile(const char *pattern, bool case_sensitive);
void zsp_regex_free(zsp_regex *re);
/* Unanchored search: ZSP_OK with *matched (a pattern anchored with `^` and a subject that
 * cannot begin a match are answered without PCRE2, the same answer); ZSP_EUSAGE when the
 * match limit refused the subject, ZSP_EINTERNAL when the engine failed (then *matched is
 * false, and callers fail closed). */
int zsp_regex_search(zsp_regex *re, const char *subject, size_t len, bool *matched);

/* A subject searched by many regexes: what the prefilters need of it, computed once (a bit per
 * pair of adjacent bytes, folded; whether it is all ASCII). text must outlive it. */
typedef struct zsp_regex_subject {
	const char *text;
	size_t len;
	bool ascii;
	uint64_t pairs[4];
} zsp_regex_subject;
void zsp_regex_subject_init(zsp_regex_subject *subj, const char *text, size_t len);
/* zsp_regex_search of subj's text, the same answer; a regex with a required literal (the
 * `sudo` of `\bsudo\b`) refuses a subject lacking one of its pairs of bytes without PCRE2. */
int zsp_regex_search_subject(zsp_regex *re, const zsp_regex_subject *subj, bool *matched);

#endif
