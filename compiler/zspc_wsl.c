/* zspc_wsl.c: zspc --emit wsl: the one wsl.exe command line that runs COMMAND in the Linux sandbox
 * of the policy inside a WSL2 distribution. The policy is compiled here first, so errors show now. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../backends/linux.h"
#include "../backends/wsl.h"
#include "compile.h"
#include "zspc.h"

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

/* Compiles the policy from its Linux path with the translated values, as zsp-run will in the
 * distribution; the built-in parameters get their values there. */
static int check_policy(const struct zspc_opts *o, const zsp_wsl_invocation *inv, zsp_diag *d)
{
	struct zspc_opts local = *o;
	local.define_values = inv->define_values;
	local.includes = inv->includes;
	zsp_policy_set *set;
	int rc = zspc_compile(&local, NULL, NULL, 0, inv->policy_file, &set);
	if (rc == ZSP_OK) {
		const zsp_ir_policy *p = zspc_choose_policy(zsp_policy_set_ir(set), o->policy);
		if (!p)
			rc = ZSP_EUSAGE;
		else
			zsp_linux_check(p, d);
	}
	zsp_policy_set_free(set);
	return rc;
}

int zspc_emit_wsl(const struct zspc_opts *o, const char *file)
{
	if (!o->ncommand)
		return usage_error("%s", "--emit wsl needs the command to run: zspc --emit wsl FILE.zsp -- COMMAND [ARG]...");
	zsp_arena *a = zsp_arena_new();
	const char **includes = a ? zsp_arena_calloc(a, o->nincludes + 1, sizeof(char *)) : NULL;
	if (!includes) {
		zsp_arena_free(a);
		fprintf(stderr, "zspc: out of memory\n");
		return ZSP_EINTERNAL;
	}
	for (size_t i = 0; i < o->nincludes; i++)
		includes[i] = absolute(o->includes[i], a);
	zsp_wsl_invocation inv = {
		.distribution = o->wsl_distribution,
		.user = o->wsl_user,
		.cd = o->wsl_cd,
		.policy_file = absolute(file, a),
		.policy_name = o->policy,
		.define_names = o->define_names,
		.define_values = o->define_values,
		.ndefines = o->ndefines,
		.includes = includes,
		.nincludes = o->nincludes,
		.warnings = o->warnings,
		.nwarnings = o->nwarnings,
		.strict = o->strict,
		.command = o->command,
		.ncommand = o->ncommand,
	};
	zsp_diag d;
	zspc_backend_diag(o, &d);
	int rc = ZSP_OK;
	if (zsp_wsl_translate(&inv, a, &d) != 0)
		rc = ZSP_EPOLICY;
	if (rc == ZSP_OK)
		rc = check_policy(o, &inv, &d);
	if (rc == ZSP_OK && d.errors)
		rc = ZSP_EPOLICY;
	if (rc == ZSP_OK) {
		char *line = zsp_wsl_command_line(&inv);
		if (line) {
			rc = zspc_write_output(o->out, line, strlen(line));
			free(line);
		} else {
			fprintf(stderr, "zspc: out of memory\n");
			rc = ZSP_EINTERNAL;
		}
	}
	zsp_diag_summary(&d);
	zsp_arena_free(a);
	return rc;
}
