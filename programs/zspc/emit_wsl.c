/* emit_wsl.c: zspc --emit wsl: the one wsl.exe command line that runs COMMAND in the Linux sandbox
 * of the policy inside a WSL2 distribution. Paths are translated first, then the policy is
 * compiled from its Linux path with the translated values, as zsp-run will in the distribution. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/wsl.h"
#include "compiler/compile.h"
#include "programs/zspc/zspc.h"

/* A relative Linux path made absolute against this directory: zspc reads the file from there, and
 * wsl.exe's command starts elsewhere. Windows paths are left to the translation. */
static const char *absolute(const char *path, zsp_arena *a)
{
	if (!path || path[0] == '/' || zsp_wsl_is_windows_path(path))
		return path;
	char *cwd = getcwd(NULL, 0);
	if (!cwd)
		return path;
	while (path[0] == '.' && path[1] == '/')
		path += 2;
	const char *abs = zsp_arena_printf(a, "%s%s%s", cwd, strcmp(cwd, "/") == 0 ? "" : "/", path);
	free(cwd);
	return abs ? abs : path;
}

int zspc_emit_wsl(const struct zspc_opts *o, const struct zsp_backend *b, const char *file)
{
	zsp_arena *a = zsp_arena_new();
	const char **includes = a ? zsp_arena_calloc(a, o->cc.nincludes + 1, sizeof(char *)) : NULL;
	if (!includes)
		zsp_die_oom();
	for (size_t i = 0; i < o->cc.nincludes; i++)
		includes[i] = absolute(o->cc.includes[i], a);
	zsp_wsl_invocation inv = {
		.distribution = o->wsl_distribution,
		.user = o->wsl_user,
		.cd = o->wsl_cd,
		.policy_file = absolute(file, a),
		.policy_name = o->policy,
		.define_names = o->cc.define_names,
		.define_values = o->cc.define_values,
		.ndefines = o->cc.ndefines,
		.includes = includes,
		.nincludes = o->cc.nincludes,
		.warnings = o->cc.warnings,
		.nwarnings = o->cc.nwarnings,
		.strict = o->cc.strict,
		.command = o->command,
		.ncommand = o->ncommand,
	};
	/* the compiler that reads the translated values reports the translation too: one engine */
	struct zspc_opts local = *o;
	local.cc.define_values = inv.define_values;
	local.cc.includes = inv.includes;
	zsp_compiler *c = zspc_compiler(&local, NULL);
	zsp_policy_set *set = NULL;
	int rc = zsp_wsl_translate(&inv, a, zsp_compiler_diag(c));
	if (rc == ZSP_OK) {
		local.cc.define_values = inv.define_values;
		local.cc.includes = inv.includes;
		zsp_compiler_free(c);
		c = zspc_compiler(&local, NULL);
		rc = zsp_compile_file(c, inv.policy_file, &set);
	}
	if (rc == ZSP_OK) {
		zsp_backend_input in = { .source = inv.policy_file, .wsl = &inv,
					 .command = o->command, .ncommand = o->ncommand };
		rc = zspc_emit_lower(o, b, c, set, &in);
	}
	zsp_cli_summary(c);
	zsp_policy_set_free(set);
	zsp_compiler_free(c);
	zsp_arena_free(a);
	return rc;
}
