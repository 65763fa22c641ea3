/* import_zed.h: `zspc --import zed`: Zed's agent tool_permissions settings (JSONC) to .zsp text.
 * The mapping and where it differs from Zed are in doc/import-zed.md. */
#ifndef ZSP_IMPORT_ZED_H
#define ZSP_IMPORT_ZED_H

#include <stddef.h>

/* Converts Zed settings JSON (JSONC: line and block comments and trailing commas allowed, as in Zed's
 * settings.json) into .zsp text. Accepts a whole settings object with
 * "agent": {"tool_permissions": {...}}, or the tool_permissions object itself.
 * Returns ZSP_OK with *out (malloc'd, NUL-terminated .zsp text) or ZSP_EPOLICY with a message
 * "LINE:COL: what" in err (input positions; columns count characters). ZSP_EINTERNAL on
 * out-of-memory. On failure *out is NULL. */
int zsp_import_zed(const char *json, size_t len, const char *source_name, char **out, char *err,
		   size_t errsize);

#endif
