/* zspc_emit.c: zspc --emit bwrap|bpf|pfc: the Linux lowering of one policy, with the built-in
 * parameters defaulted from this machine (-D overrides them). Output is written whole or not at all. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../backends/linux.h"
#include "compile.h"
#include "zspc.h"

extern char **environ;

void zspc_backend_diag(const struct zspc_opts *o, zsp_diag *d)
{
	zsp_diag_init(d, to_stderr, NULL);
	for (size_t i = 0; i < o->nwarnings; i++)
		zsp_diag_option(d, o->warnings[i]);
	if (o->strict)
		zsp_diag_option(d, "error=unenforced");
}

static int emit_argv(const struct zspc_opts *o, const zsp_ir_policy *p, zsp_diag *d, const char *cwd)
{
	zsp_arena *a = zsp_arena_new();
	if (!a)
		return ZSP_EINTERNAL;
	zsp_linux_opts lo = { .chdir = cwd, .environ = environ, .seccomp = true, .proc = true };
	zsp_bwrap_plan plan;
	zsp_linux_check(p, d);
	int rc = zsp_bwrap_plan_build(p, &lo, a, d, &plan);
	if (rc != 0 || d->errors) {
		zsp_arena_free(a);
		return ZSP_EPOLICY;
	}
	size_t cap = 1024, len = 0;
	char *buf = malloc(cap);
	for (size_t i = 0; buf && i < plan.argc; i++) {
		char *q = o->nul ? strdup(plan.argv[i]) : zsp_shell_quote(plan.argv[i]);
		size_t ql = q ? strlen(q) : 0;
		if (q && len + ql + 2 > cap) {
			while (len + ql + 2 > cap)
				cap *= 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				buf = NULL;
			} else {
				buf = nb;
			}
		}
		if (!q || !buf) {
			free(q);
			free(buf);
			buf = NULL;
			break;
		}
		memcpy(buf + len, q, ql);
		len += ql;
		buf[len++] = o->nul ? '\0' : '\n';
		free(q);
	}
	zsp_arena_free(a);
	if (!buf) {
		fprintf(stderr, "zspc: out of memory\n");
		return ZSP_EINTERNAL;
	}
	rc = zspc_write_output(o->out, buf, len);
	free(buf);
	return rc;
}

int zspc_emit_linux(const struct zspc_opts *o, const char *file)
{
	const char *names[5], *values[5];
	int n = zsp_linux_defaults(names, values);
	if (n < 0) {
		fprintf(stderr, "zspc: cannot find the current directory or the user's home for the built-in parameters\n");
		return ZSP_EINTERNAL;
	}
	bool binary = strcmp(o->emit, "bpf") == 0;
	if (binary && (!o->out || strcmp(o->out, "-") == 0) && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "zspc: --emit bpf writes a binary program: redirect it or use -o FILE (--emit pfc is the readable form)\n");
		return ZSP_EUSAGE;
	}
	zsp_policy_set *set;
	int rc = zspc_compile(o, names, values, (size_t)n, file, &set);
	if (rc != ZSP_OK) {
		zsp_policy_set_free(set);
		return rc;
	}
	const zsp_ir_policy *p = zspc_choose_policy(zsp_policy_set_ir(set), o->policy);
	if (!p) {
		zsp_policy_set_free(set);
		return ZSP_EUSAGE;
	}
	zsp_diag d;
	zspc_backend_diag(o, &d);
	if (strcmp(o->emit, "bwrap") == 0) {
		rc = emit_argv(o, p, &d, values[0]);
	} else {
		char *out;
		size_t len;
		zsp_linux_check(p, &d);
		if (zsp_seccomp_export(p, !binary, &d, &out, &len) != 0 || d.errors) {
			rc = ZSP_EPOLICY;
		} else {
			rc = zspc_write_output(o->out, out, len);
			free(out);
		}
	}
	zsp_diag_summary(&d);
	zsp_policy_set_free(set);
	return rc;
}

int zspc_verify(const struct zspc_opts *o, const char *file)
{
	const char *run = zsp_program_path("zsp-run", ZSP_BINDIR "/zsp-run");
	const char **argv = calloc(2 * o->nincludes + 8, sizeof(char *));
	if (!argv)
		return ZSP_EINTERNAL;
	size_t k = 0;
	argv[k++] = "zsp-run";
	argv[k++] = "--verify";
	if (o->policy) {
		argv[k++] = "--policy";
		argv[k++] = o->policy;
	}
	for (size_t i = 0; i < o->nincludes; i++) {
		argv[k++] = "-I";
		argv[k++] = o->includes[i];
	}
	argv[k++] = "--";
	argv[k++] = file;
	fflush(stdout);
	execv(run, (char *const *)argv);
	fprintf(stderr, "zspc: --verify needs zsp-run, which cannot be run from %s: %s\n", run, strerror(errno));
	free(argv);
	return ZSP_EINTERNAL;
}
