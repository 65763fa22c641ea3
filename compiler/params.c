/* params.c: the built-in parameters of one account on one machine, from explicit inputs (the
 * passwd entry, the environment, the workspace), so that every caller gets the same values. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "compiler/params.h"

const char *zsp_env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);
	for (char *const *e = env; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* What zsp_compiler_define accepts as a value: no control character and no `${`. */
static bool usable(const char *v)
{
	if (strstr(v, "${"))
		return false;
	for (const unsigned char *c = (const unsigned char *)v; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return false;
	return true;
}

static void set(zsp_builtin_params *out, const char *name, char *buf, size_t size, const char *v)
{
	if (!v || !usable(v) || strlen(v) >= size)
		return;
	memcpy(buf, v, strlen(v) + 1);
	out->names[out->n] = name;
	out->values[out->n++] = buf;
}

static size_t fill(zsp_builtin_params *out, uid_t uid, const struct passwd *pw, char *const *env,
		   const char *workspace, const char *home)
{
	out->n = 0;   /* the value buffers are written as they are used: no 12 KiB memset per run */
	const char *tmp = zsp_env_get(env, "TMPDIR");
	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	if (workspace && workspace[0] == '/')
		set(out, "WORKSPACE", out->workspace, sizeof(out->workspace), workspace);
	if (home && home[0] == '/')
		set(out, "HOME", out->home, sizeof(out->home), home);
	set(out, "TMPDIR", out->tmpdir, sizeof(out->tmpdir), tmp);
	char id[24];
	snprintf(id, sizeof(id), "%u", (unsigned)uid);
	set(out, "UID", out->uid, sizeof(out->uid), id);
	if (pw && pw->pw_name)
		set(out, "USER", out->user, sizeof(out->user), pw->pw_name);
	return out->n;
}

size_t zsp_builtin_params_fill(zsp_builtin_params *out, uid_t uid, const struct passwd *pw,
			       char *const *env, const char *workspace)
{
	/* never $HOME: whoever sets the environment would choose what `~` denies */
	return fill(out, uid, pw, env, workspace, pw ? pw->pw_dir : NULL);
}

size_t zsp_builtin_params_fill_home(zsp_builtin_params *out, uid_t uid, const struct passwd *pw,
				    char *const *env, const char *workspace, const char *home)
{
	return fill(out, uid, pw, env, workspace, home);
}

const char *zsp_builtin_params_get(const zsp_builtin_params *params, const char *name)
{
	for (size_t i = 0; i < params->n; i++)
		if (strcmp(params->names[i], name) == 0)
			return params->values[i];
	return NULL;
}
