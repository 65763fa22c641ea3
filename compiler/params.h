/* params.h: the values of the built-in parameters (WORKSPACE HOME TMPDIR UID USER) for one
 * account on one machine. Computed once, from explicit inputs, for the oracle, every backend
 * (through the IR), zsp-run and the session alike: two computations once disagreed. */
#ifndef ZSP_PARAMS_H
#define ZSP_PARAMS_H

#include <limits.h>
#include <pwd.h>
#include <stddef.h>
#include <sys/types.h>

enum { ZSP_BUILTIN_MAX = 5 };

typedef struct zsp_builtin_params {
	const char *names[ZSP_BUILTIN_MAX];
	const char *values[ZSP_BUILTIN_MAX];   /* point into the buffers below */
	size_t n;
	char workspace[PATH_MAX], home[PATH_MAX], tmpdir[PATH_MAX];
	char uid[24], user[256];
} zsp_builtin_params;

/* Fills out from the account uid and its passwd entry pw (NULL: none; then HOME and USER are
 * left out), the environment env (a NULL-terminated "NAME=VALUE" list) and the workspace
 * directory:
 *   WORKSPACE  workspace, as given (absolute);
 *   HOME       pw->pw_dir, never $HOME (what `~` denies is not the environment's to choose);
 *   TMPDIR     $TMPDIR when it is absolute, else /tmp;
 *   UID        uid in decimal;
 *   USER       pw->pw_name, never $USER (the agent sets the environment; doc/language.md).
 * A value that cannot be a parameter value (control characters, `${`, too long) leaves its
 * parameter out, so a policy that uses it fails to compile rather than guess. workspace may be
 * NULL (then WORKSPACE is left out). Returns how many were set. */
size_t zsp_builtin_params_fill(zsp_builtin_params *out, uid_t uid, const struct passwd *pw,
			       char *const *env, const char *workspace);

/* The same with HOME given (an embedder's session names the home it judges for: a libzsp
 * session, runtime/session.c): home, or left out when NULL, never the passwd entry's. */
size_t zsp_builtin_params_fill_home(zsp_builtin_params *out, uid_t uid, const struct passwd *pw,
				    char *const *env, const char *workspace, const char *home);

/* The value NAME gets in params, or NULL. */
const char *zsp_builtin_params_get(const zsp_builtin_params *params, const char *name);

/* The value of NAME in env ("NAME=VALUE" entries), or NULL. */
const char *zsp_env_get(char *const *env, const char *name);

#endif
