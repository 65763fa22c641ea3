/* cache.h: the tools `cache NAME` knows (doc/language.md "Caches"): for each, the directories of
 * its cache, the variable that moves each, and what of its home stays the host's own. */
#ifndef ZSP_CACHE_H
#define ZSP_CACHE_H

#include <stddef.h>

#include "compiler/ir.h"

typedef struct zsp_cache_tool {
	const char *name;
	const zsp_ir_cache_part *parts;    /* paths relative to ${HOME}, as zsp_ir_cache_part */
	size_t nparts;
} zsp_cache_tool;

/* The tool called name, or NULL. */
const zsp_cache_tool *zsp_cache_tool_find(const char *name);

/* The names of every known tool, for "did you mean"; the count. */
size_t zsp_cache_tool_names(const char **out, size_t max);

/* The state directory's name for a `cache "PATH"`: "path-" and 8 hex digits of the path's
 * SHA-256 (the normalized path as written, parameters unresolved: stable across homes). */
void zsp_cache_path_id(const char *path, char id[14]);

#endif
