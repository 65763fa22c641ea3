/* hint.h: "did you mean ...?" suggestions for misspelt keywords, names and syscalls. */
#ifndef ZSP_HINT_H
#define ZSP_HINT_H

#include <stddef.h>

/* The candidate closest to word by edit distance, if close enough to be a plausible typo
 * (at most 1 edit for short words, 2 for longer ones); NULL otherwise. */
const char *zsp_closest(const char *word, const char *const *cands, size_t n);

#endif
