/* zspc_sbpl.c: zspc --emit sbpl|sandbox-exec: the Seatbelt profile of one policy, alone or in the
 * sandbox-exec command line that runs COMMAND under it. Output is written whole or not at all. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../backends/linux.h"
#include "../backends/sbpl.h"
#include "compile.h"
#include "zspc.h"

#define SANDBOX_EXEC "/usr/bin/sandbox-exec"

static bool add_arg(char **buf, size_t *len, size_t *cap, const char *arg)
{
	char *q = zsp_shell_quote(arg);
	if (!q)
		return false;
	size_t n = strlen(q);
	if (*len + n + 2 > *cap) {
		size_t ncap = *cap ? *cap : 1024;
		while (*len + n + 2 > ncap)
			ncap *= 2;
		char *nb = realloc(*buf, ncap);
		if (!nb) {
			free(q);
			return false;
		}
		*buf = nb;
		*cap = ncap;
	}
	memcpy(*buf + *len, q, n);
	*len += n;
	(*buf)[(*len)++] = '\n';
	(*buf)[*len] = '\0';
	free(q);
	return true;
}

/* The value a built-in parameter has on this machine, or NULL. */
static const char *machine_value(const char *name)
{
	const char *names[5], *values[5];
	int n = zsp_linux_defaults(names, values);
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return values[i];
	return NULL;
}

/* sandbox-exec -p PROFILE, one -DNAME=VALUE per parameter the profile reads (built-ins take
 * this machine's values, canonical), --, the command. */
static int emit_command(const struct zspc_opts *o, const zsp_ir_policy *p, const zsp_sbpl_profile *prof,
			zsp_diag *d)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	bool ok = add_arg(&buf, &len, &cap, SANDBOX_EXEC) && add_arg(&buf, &len, &cap, "-p") &&
		  add_arg(&buf, &len, &cap, prof->text);
	for (size_t i = 0; ok && i < prof->nparams; i++) {
		const zsp_ir_param *par = NULL;
		for (size_t k = 0; k < p->nparams; k++)
			if (strcmp(p->params[k].name, prof->params[i]) == 0)
				par = &p->params[k];
		const char *v = par && par->builtin ? machine_value(prof->params[i]) : NULL;
		if (!v) {
			zsp_diag_error(d, par ? par->loc : p->loc,
				       "parameter %s has no value: give it with -D %s=VALUE", prof->params[i],
				       prof->params[i]);
			continue;
		}
		char *cv = v[0] == '/' ? zsp_sbpl_canonical(v) : strdup(v);
		char *def = NULL;
		ok = cv && asprintf(&def, "-D%s=%s", prof->params[i], cv) >= 0 && add_arg(&buf, &len, &cap, def);
		free(cv);
		free(def);
	}
	ok = ok && add_arg(&buf, &len, &cap, "--");
	for (size_t i = 0; ok && i < o->ncommand; i++)
		ok = add_arg(&buf, &len, &cap, o->command[i]);
	int rc;
	if (!ok) {
		fprintf(stderr, "zspc: out of memory\n");
		rc = ZSP_EINTERNAL;
	} else if (d->errors) {
		rc = ZSP_EPOLICY;
	} else {
		rc = zspc_write_output(o->out, buf, len);
	}
	free(buf);
	return rc;
}

int zspc_emit_sbpl(const struct zspc_opts *o, const char *file)
{
	bool command = strcmp(o->emit, "sandbox-exec") == 0;
	if (command && o->ncommand == 0)
		return usage_error("%s", "--emit sandbox-exec needs the command to run: zspc --emit sandbox-exec FILE.zsp -- COMMAND [ARG...]");
	zsp_policy_set *set;
	int rc = zspc_compile(o, NULL, NULL, 0, file, &set);
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
	zsp_sbpl_profile prof;
	if (zsp_sbpl_emit(p, file, &d, &prof) != 0 || d.errors) {
		rc = ZSP_EPOLICY;
	} else {
		rc = command ? emit_command(o, p, &prof, &d) : zspc_write_output(o->out, prof.text, prof.len);
		zsp_sbpl_profile_free(&prof);
	}
	zsp_diag_summary(&d);
	zsp_policy_set_free(set);
	return rc;
}
