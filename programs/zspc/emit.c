/* emit.c: zspc --emit FORMAT: the IR, or what a backend of the table (backends/table.c) makes of
 * one policy; and zspc --verify, which is zsp-run's. Output is written whole or not at all. A
 * Linux lowering names the directories zsp-run keeps the policy's caches and /tmp in. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/backend.h"
#include "backends/linux.h"
#include "compiler/compile.h"
#include "programs/zspc/zspc.h"
#include "runtime/sandbox.h"
#include "runtime/store.h"

extern char **environ;

static int emit_ir(const struct zspc_opts *o, const char *file)
{
	zsp_policy_set *set;
	int rc = zspc_compile(o, NULL, file, &set);
	if (rc != ZSP_OK)
		return rc;
	char *json;
	size_t len;
	rc = zsp_policy_set_ir_json(set, &json, &len);
	if (rc == ZSP_OK) {
		rc = zsp_cli_write_output(o->out, json, len);
		free(json);
	} else {
		zsp_warn("out of memory");
	}
	zsp_policy_set_free(set);
	return rc;
}

/* Where zsp-run keeps p's caches and private /tmp for the workspace: the same path, made by
 * nobody here (the argv expects it to exist). NULL when p needs none, or there is none. */
static char *sandbox_dir(const struct zspc_opts *o, const zsp_backend *b, const zsp_ir_policy *p,
			 const char *workspace)
{
	char ws[PATH_MAX];
	if (strcmp(b->platform, "linux") != 0 || !zsp_linux_needs_state(p) || !workspace)
		return NULL;
	char *state = zsp_state_dir(o->state_dir);
	char key[ZSP_SANDBOX_KEY_LEN + 1];
	zsp_sandbox_key(p->name, realpath(workspace, ws) ? ws : workspace, key);
	char real[PATH_MAX];
	char *dir = state ? zsp_sandbox_path(realpath(state, real) ? real : state, key) : NULL;
	free(state);
	return dir;
}

int zspc_emit_lower(const struct zspc_opts *o, const zsp_backend *b, zsp_compiler *c,
		    const zsp_policy_set *set, zsp_backend_input *in)
{
	if (!(in->p = zsp_cli_pick_policy(zsp_policy_set_ir(set), o->policy)))
		return ZSP_EUSAGE;
	char *sbdir = NULL;
	for (size_t i = 0; i < in->p->nparams && !in->sandbox_dir; i++)
		if (strcmp(in->p->params[i].name, "WORKSPACE") == 0)
			in->sandbox_dir = sbdir = sandbox_dir(o, b, in->p, in->p->params[i].value);
	zsp_buf out = { 0 };
	int rc = b->emit(in, zsp_compiler_diag(c), &out);
	free(sbdir);
	size_t len;
	char *text = zsp_buf_take(&out, &len);
	if (rc == ZSP_OK && !text) {
		zsp_warn("out of memory");
		rc = ZSP_EINTERNAL;
	}
	if (rc == ZSP_OK)
		rc = zsp_cli_write_output(o->out, text, len);
	free(text);
	return rc;
}

int zspc_emit(const struct zspc_opts *o, const char *file)
{
	if (strcmp(o->emit, "ir") == 0)
		return emit_ir(o, file);
	const zsp_backend *b = zsp_backend_find(o->emit);
	if (b->command && !o->ncommand)
		return zsp_usage_error("--emit %s needs the command to run: zspc --emit %s FILE.zsp -- "
				       "COMMAND [ARG]...", b->name, b->name);
	if (b->binary && (!o->out || strcmp(o->out, "-") == 0) && isatty(STDOUT_FILENO))
		return zsp_usage_error("--emit %s writes a binary program: redirect it or use -o FILE",
				       b->name);
	if (strcmp(b->name, "wsl") == 0)
		return zspc_emit_wsl(o, b, file);
	/* A Linux lowering is for this machine: the built-in parameters take its values. A profile
	 * for a Mac keeps them as (param "NAME"); sandbox-exec's command line passes this machine's. */
	zsp_builtin_params m;
	zsp_cli_builtins(&m, &o->cc, NULL);
	bool here = strcmp(b->platform, "linux") == 0;
	if (here || b->command)
		zsp_cli_home_warning(&o->cc, &m);
	zsp_compiler *c = zspc_compiler(o, here ? &m : NULL);
	zsp_policy_set *set;
	int rc = zsp_compile_file(c, file, &set);
	/* the command starts where zsp-run would start it: here, not at the top of WORKSPACE */
	char *cwd = getcwd(NULL, 0);
	if (rc == ZSP_OK) {
		zsp_backend_input in = { .source = file, .environ = environ, .machine = &m,
					 .chdir = cwd, .command = o->command,
					 .ncommand = o->ncommand, .nul = o->nul };
		rc = zspc_emit_lower(o, b, c, set, &in);
	}
	free(cwd);
	zsp_cli_summary(c);
	zsp_policy_set_free(set);
	zsp_compiler_free(c);
	return rc;
}

int zspc_verify(const struct zspc_opts *o, const char *file)
{
	const char *run = zsp_cli_program_path("zsp-run", ZSP_BINDIR "/zsp-run");
	const char **argv = calloc(2 * o->cc.nincludes + 8, sizeof(char *));
	if (!argv)
		zsp_die_oom();
	size_t k = 0;
	argv[k++] = "zsp-run";
	argv[k++] = "--verify";
	if (o->policy) {
		argv[k++] = "--policy";
		argv[k++] = o->policy;
	}
	for (size_t i = 0; i < o->cc.nincludes; i++) {
		argv[k++] = "-I";
		argv[k++] = o->cc.includes[i];
	}
	argv[k++] = "--";
	argv[k++] = file;
	fflush(stdout);
	execv(run, (char *const *)argv);
	zsp_warn("--verify needs zsp-run, which cannot be run from %s: %s", run, strerror(errno));
	free(argv);
	return ZSP_EINTERNAL;
}
