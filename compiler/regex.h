/* regex.h: the one regex engine of zsp (PCRE2, Rust-regex-compatible options, bounded matching).
 * The compiler validates with it; the oracle will match with it, so both agree on syntax. */
#ifndef ZSP_REGEX_H
#define ZSP_REGEX_H

#include <stdbool.h>
#include <stddef.h>

/* true if pattern compiles; otherwise the engine's message and the byte offset of the error. */
bool zsp_regex_check(const char *pattern, bool case_sensitive, char *msg, size_t msgsize,
		     size_t *erroff);

#endif
