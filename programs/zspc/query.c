/* query.c: zspc --query and --batch: requests decided through the session API (runtime/
 * session.h), the one decision path zsp-run -c and embedders use, printed as text or JSON.
 * Exit codes for one decision: allow 0, deny 1, ask 2, no decision 3. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compile.h"
#include "compiler/textesc.h"
#include "programs/zspc/zspc.h"
#include "runtime/session.h"

/* Text the request brought (a command, a path) as --explain shows it: escaped when it could
 * redraw the terminal of the person reading (compiler/textesc.h). */
static void put_shown(FILE *f, const char *s)
{
	char *e = zsp_text_escape(s);
	fputs(e ? e : "(out of memory)", f);
	free(e);
}

void zspc_print_explain(FILE *f, const zsp_ir_policy *p, const zsp_verdict *v, const char *indent)
{
	char loc[PATH_MAX + 64];
	fprintf(f, "%spolicy: %s (%s)\n", indent, p->name, zsp_loc_string(loc, sizeof(loc), p->loc));
	if (v->nsub) {
		fprintf(f, "%ssub-commands:", indent);
		for (size_t i = 0; i < v->nsub; i++) {
			fputs(" `", f);
			put_shown(f, v->subcommands[i]);
			fputc('`', f);
		}
		fputc('\n', f);
	}
	for (size_t i = 0; i < v->ntrace; i++) {
		fprintf(f, "%scheck: ", indent);
		put_shown(f, v->trace[i]);
		fputc('\n', f);
	}
	fprintf(f, "%sdecision: %s (reason: %s)%s", indent, zsp_decision_name(v->decision), v->reason,
		v->detail ? ": " : "");
	if (v->detail)
		put_shown(f, v->detail);
	fputc('\n', f);
}

/* An absolute value of parameter name in p, or NULL: the workspace and home the oracle gets are
 * the ones the policy was compiled with. */
static bool wants_grants(const struct zspc_opts *o)
{
	return o->thread || o->project || o->record || o->state_dir || o->runtime_dir;
}

/* The grant store behind --query and --batch when --thread, --project, --record, --state-dir
 * or --runtime-dir is given. A store that cannot be opened: the policy alone decides (never an
 * allow a grant would have given), and with --record every decision fails (exit 74). */
static int attach_grants(const struct zspc_opts *o, zsp_session *s, zsp_grants **g)
{
	char project[PATH_MAX];
	if (o->project && !realpath(o->project, project))
		return zsp_usage_error("--project %s: not an existing directory", o->project);
	zsp_store_where where = { o->state_dir, o->runtime_dir, false };
	char err[1024];
	int rc;
	if (zsp_grants_open_at(&where, g, err, sizeof(err)) == ZSP_OK) {
		rc = zsp_session_use_grants(s, *g, o->thread, o->project ? project : NULL, o->record);
	} else {
		zsp_warn("%s", err);
		zsp_warn("deciding without grants: the policy's answer stands%s",
			 o->record ? "; nothing can be recorded" : "");
		rc = zsp_session_grants_missing(s, err, o->thread, o->project ? project : NULL,
						o->record);
	}
	return rc;
}

/* One request: 0/1/2 (allow/deny/ask), 3 for a malformed one (--query), ZSP_EIO when it had to
 * be recorded and was not, ZSP_EINTERNAL. */
static int ask_one(zsp_session *s, const struct zspc_opts *o, const char *text, bool batch,
		   bool store_open)
{
	zsp_session_result r;
	int rc = zsp_session_decide_text(s, text, o->explain, &r);
	if (rc == ZSP_EINTERNAL) {
		zsp_warn("out of memory");
		return rc;
	}
	if (rc == ZSP_EUSAGE && !batch) {
		zsp_warn("bad request: %s", r.error);
		fprintf(stderr, "  hint: a request is KIND \"ARG\"..., e.g. terminal \"ls -la\", read \"/etc/hosts\"\n");
		return ZSPC_EXIT_NO_DECISION;
	}
	/* a store that opened and then failed a lookup (one that did not open was said already) */
	if (r.x && r.x->store_error && store_open)
		zsp_warn("grant store: %s; deciding without grants", r.x->store_error);
	if (rc == ZSP_EIO)
		zsp_warn("cannot record the decision: %s", r.x->audit_error);
	if (o->json || batch) {
		zsp_session_result_json(stdout, s, &r);
	} else {
		printf("%s\n", zsp_decision_name(r.v->decision));
		if (o->explain)
			zspc_print_explain(stdout, zsp_session_policy(s), r.v, "  ");
	}
	if (rc == ZSP_EUSAGE)
		return 0;    /* --batch: an error line, and on to the next request */
	return rc == ZSP_EIO ? rc : zsp_decision_exit(r.v->decision);
}

static int batch(zsp_session *s, const struct zspc_opts *o, bool store_open)
{
	FILE *in = strcmp(o->batch, "-") == 0 ? stdin : fopen(o->batch, "r");
	if (!in) {
		zsp_warn("cannot read %s: %s", o->batch, strerror(errno));
		return ZSP_ENOINPUT;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = ZSP_OK;
	bool unrecorded = false;
	while (rc == ZSP_OK && (n = getline(&line, &cap, in)) >= 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		const char *t = line + strspn(line, " \t");
		if (!*t || *t == '#')
			continue;
		int r = ask_one(s, o, t, true, store_open);
		if (r == ZSP_EINTERNAL)
			rc = r;
		unrecorded |= r == ZSP_EIO;
		if (fflush(stdout) != 0)
			rc = ZSP_EIO;
	}
	if (ferror(in))
		rc = ZSP_EIO;
	free(line);
	if (in != stdin)
		fclose(in);
	/* a decision that had to be recorded and was not: fail closed, whatever it was */
	return rc == ZSP_OK && unrecorded ? ZSP_EIO : rc;
}

int zspc_query(const struct zspc_opts *o, const char *file)
{
	zsp_builtin_params m;
	zsp_cli_builtins(&m, &o->cc, o->workspace);
	zsp_cli_home_warning(&o->cc, &m);
	zsp_policy_set *set;
	int rc = zspc_compile(o, &m, file, &set);
	if (rc != ZSP_OK)
		return rc == ZSP_EPOLICY ? ZSPC_EXIT_NO_DECISION : rc;
	const zsp_ir_policy *p = zsp_cli_pick_policy(zsp_policy_set_ir(set), o->policy);
	zsp_session *s = NULL;
	zsp_grants *g = NULL;
	if (!p) {
		rc = ZSP_EUSAGE;
		goto out;
	}
	zsp_oracle_env env = zspc_oracle_env(p, o->resolve_symlinks);
	if ((rc = zsp_session_new_env(set, p->name, &env, &s)) != ZSP_OK ||
	    (rc = zsp_session_set_shell(s, o->shell)) != ZSP_OK)
		goto out;
	if (wants_grants(o) && (rc = attach_grants(o, s, &g)) != ZSP_OK)
		goto out;
	rc = o->request ? ask_one(s, o, o->request, false, g != NULL) : batch(s, o, g != NULL);
	if (fflush(stdout) != 0)
		rc = ZSP_EIO;
out:
	zsp_session_free(s);
	zsp_grants_close(g);
	zsp_policy_set_free(set);
	return rc;
}
