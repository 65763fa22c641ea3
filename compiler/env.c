/* env.c: `env keep`, the one filter of the caller's environment that the backends share, so
 * that `LC_*` passes the same variables whoever rebuilds the environment. */
#include "config.h"

#include <string.h>

#include "compiler/env.h"
#include "compiler/path.h"

/* the categories of POSIX and glibc's locale(7), LC_ALL included */
static const char *const locale_names[] = {
	"LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY", "LC_MESSAGES",
	"LC_PAPER", "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT", "LC_IDENTIFICATION",
};

static bool is_locale(const char *name)
{
	for (size_t i = 0; i < sizeof(locale_names) / sizeof(locale_names[0]); i++)
		if (strcmp(name, locale_names[i]) == 0)
			return true;
	return false;
}

bool zsp_env_keeps(const zsp_ir_env *keep, size_t n, const char *name)
{
	bool globs_reach = strncmp(name, "LC_", 3) != 0 || is_locale(name);
	for (size_t i = 0; i < n; i++) {
		const char *pat = keep[i].name;
		if (zsp_glob_has_meta(pat) ? globs_reach && zsp_glob_match(pat, name)
					   : strcmp(pat, name) == 0)
			return true;
	}
	return false;
}
