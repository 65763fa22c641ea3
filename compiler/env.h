/* env.h: which variables of the caller's environment `env keep` lets into a sandbox. One
 * answer for every backend that rebuilds the environment (doc/language.md, `env keep`). */
#ifndef ZSP_ENV_H
#define ZSP_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/ir.h"

/* Whether one of the n keep patterns keeps variable name. A pattern is a glob (`*`, `?`);
 * among the LC_ names, a glob reaches only the locale categories (LC_ALL, LC_CTYPE, ...,
 * LC_IDENTIFICATION): LC_ is a prefix ssh and agents pass on freely, and `LC_*` means the
 * locale, not LC_EVIL. Any other LC_ name is kept only when a pattern names it exactly. */
bool zsp_env_keeps(const zsp_ir_env *keep, size_t n, const char *name);

#endif
