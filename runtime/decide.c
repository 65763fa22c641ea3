/* decide.c: the oracle first, then (only on `ask`) the grant store, then the audit trail, for
 * zsp-run, zspc --query and the session API alike. Grants never reach a built-in rule, a
 * substitution or a policy deny: those never say `ask`. */
#include "config.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compiler/checks.h"
#include "compiler/compile.h"
#include "compiler/oracle.h"
#include "compiler/path.h"
#include "compiler/sha256.h"
#include "runtime/decide.h"

struct zsp_decider {
	const zsp_ir_policy *p;
	zsp_oracle_env env;
	char *workspace, *home, *shell;
	zsp_oracle *o;
	zsp_arena *a;        /* scratch for the grant lookup, reset for each decision */
};

zsp_decider *zsp_decider_new(const zsp_ir_policy *p, const zsp_oracle_env *env)
{
	zsp_decider *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->p = p;
	d->workspace = env->workspace ? strdup(env->workspace) : NULL;
	d->home = env->home ? strdup(env->home) : NULL;
	d->env.workspace = d->workspace;
	d->env.home = d->home;
	d->env.resolve_symlinks = env->resolve_symlinks;
	d->o = zsp_oracle_new(p, &d->env);
	d->a = zsp_arena_new();
	if (!d->o || !d->a || (env->workspace && !d->workspace) || (env->home && !d->home) ||
	    zsp_decider_set_shell(d, env->shell) != ZSP_OK) {
		zsp_decider_free(d);
		return NULL;
	}
	return d;
}

void zsp_decider_free(zsp_decider *d)
{
	if (!d)
		return;
	zsp_oracle_free(d->o);
	zsp_arena_free(d->a);
	free(d->workspace);
	free(d->home);
	free(d->shell);
	free(d);
}

int zsp_decider_set_shell(zsp_decider *d, const char *shell)
{
	char *copy = shell ? strdup(shell) : NULL;
	if (shell && !copy)
		return ZSP_EINTERNAL;
	free(d->shell);
	d->shell = copy;
	d->env.shell = copy;  /* the oracle reads d->env */
	return ZSP_OK;
}

const unsigned *zsp_decider_hits(const zsp_decider *d, size_t *n)
{
	return zsp_oracle_hits(d->o, n);
}

bool zsp_decider_path_request(const char *kind)
{
	return zsp_tool_takes_paths(kind) || strcmp(kind, "read") == 0 || strcmp(kind, "write") == 0 ||
	       strcmp(kind, "exec") == 0;
}

/* A path argument as grants see it: `~` expanded, relative to the workspace, lexically normal
 * (`.`, `..`, `//` folded), so a path grant on /w/src covers `src/main.rs`. Without a workspace
 * (or home) the argument stays as given. */
static const char *grant_path(zsp_decider *d, const char *arg)
{
	const char *abs = arg;
	if (d->home && (strcmp(arg, "~") == 0 || strncmp(arg, "~/", 2) == 0))
		abs = zsp_arena_printf(d->a, "%s/%s", d->home, arg + 1);
	else if (arg[0] != '/' && arg[0] != '~' && d->workspace)
		abs = zsp_arena_printf(d->a, "%s/%s", d->workspace, arg);
	if (!abs || abs[0] != '/')
		return abs;
	size_t cap = strlen(abs) + 2;
	char *out = zsp_arena_alloc(d->a, cap);
	return out && zsp_path_lexical(abs, out, cap) ? out : NULL;
}

/* The grants for one request: every argument must be granted (copy_path, move_path judge both
 * paths, and a once grant is used only when the other path is granted too), a deny on any
 * argument denies. ZSP_OK with *found, *answer and *id set when grants decide, ZSP_OK with
 * *found false when they do not; on error a zsp_status (ZSP_EUSAGE for too many arguments,
 * ZSP_EINTERNAL on out-of-memory, else the store's) with err filled and *found false. */
static int consult_grants(zsp_decider *d, zsp_store *store, const zsp_ir_request *req,
			  const char *thread, const char *project, bool *found, int *answer,
			  int64_t *id, char *err, size_t errlen)
{
	*found = false;
	size_t nargs = 1;
	if (strcmp(req->kind, "copy_path") == 0 || strcmp(req->kind, "move_path") == 0)
		nargs = req->nargs;
	if (nargs == 0)
		nargs = 1;
	if (nargs > ZSP_LOOKUP_MAX_ARGS) {
		snprintf(err, errlen, "grant lookup: %zu arguments (at most %d)", nargs, ZSP_LOOKUP_MAX_ARGS);
		return ZSP_EUSAGE;
	}
	const char *args[ZSP_LOOKUP_MAX_ARGS];
	for (size_t i = 0; i < nargs; i++) {
		const char *arg = req->nargs ? req->args[i] : "";
		if (req->nargs && zsp_decider_path_request(req->kind))
			arg = grant_path(d, arg);
		if (!arg) {
			snprintf(err, errlen, "out of memory");
			return ZSP_EINTERNAL;
		}
		args[i] = arg;
	}
	return zsp_store_lookup_all(store, req->kind, args, nargs, thread, project,
				    (int64_t)time(NULL), found, answer, id, err, errlen);
}

const char *zsp_decider_user(void)
{
	/* the account of the real uid, not $USER: the environment is the agent's to set */
	static char name[64];
	struct passwd *pw = getpwuid(getuid());
	if (pw && pw->pw_name && strlen(pw->pw_name) < sizeof(name))
		snprintf(name, sizeof(name), "%s", pw->pw_name);
	else
		snprintf(name, sizeof(name), "%u", (unsigned)getuid());
	return name;
}

static int audit(zsp_decider *d, const char *request, int answer, const char *reason,
		 const char *rule, const zsp_decide_ctx *ctx, char *err, size_t errlen)
{
	if (!ctx->store) {
		snprintf(err, errlen, "%s", ctx->store_error ? ctx->store_error
				   : "no grant store to record the decision in");
		return ZSP_EIO;
	}
	zsp_audit_record r = {
		.time = 0,
		.request = request,
		.decision = answer,
		.reason = reason,
		.rule = rule,
		.policy = d->p->name,
		.policy_hash = ctx->policy_hash,
		.thread = ctx->thread,
		.project = ctx->project,
		.who = zsp_decider_user(),
	};
	/* whatever went wrong, the decision was not recorded: the caller's ZSP_EIO */
	return zsp_store_audit(ctx->store, &r, err, errlen) == ZSP_OK ? ZSP_OK : ZSP_EIO;
}

int zsp_decider_decide(zsp_decider *d, zsp_arena *a, const char *request, const zsp_ir_request *req,
		       bool explain, const zsp_decide_ctx *ctx, zsp_verdict *v, zsp_verdict_extra *x)
{
	memset(x, 0, sizeof(*x));
	zsp_arena_reset(d->a);
	if (zsp_oracle_decide(d->o, a, req, explain, v) != 0)
		return ZSP_EINTERNAL;
	x->store_error = ctx->store_error;
	/* only an ask reaches the grants: denies before them are final, allows need none */
	if (v->decision == ZSP_ASK && ctx->store) {
		int answer;
		int64_t id;
		bool found;
		char err[512];
		int r = consult_grants(d, ctx->store, req, ctx->thread, ctx->project, &found, &answer,
				       &id, err, sizeof(err));
		if (r != ZSP_OK && !(x->store_error = zsp_arena_strdup(a, err)))
			return ZSP_EINTERNAL;
		if (found) {
			x->grant = (long long)id;
			v->decision = zsp_answer_decision(answer);
			v->reason = "grant";
			v->rule = zsp_arena_printf(a, "grant %lld", x->grant);
			v->detail = zsp_arena_printf(a, "grant %lld answers what the policy would ask", x->grant);
			v->loc.src = NULL;
			if (!v->rule || !v->detail)
				return ZSP_EINTERNAL;
		}
	}
	if (!ctx->record)
		return ZSP_OK;
	char loc[512], rule[1024], err[512];
	const char *where = zsp_loc_string(loc, sizeof(loc), v->loc);
	if (where && v->rule)
		snprintf(rule, sizeof(rule), "%s: %s", where, v->rule);
	else
		snprintf(rule, sizeof(rule), "%s", v->rule ? v->rule : where ? where : "");
	int rc = audit(d, request, zsp_decision_answer(v->decision), v->reason, rule[0] ? rule : NULL,
		       ctx, err, sizeof(err));
	if (rc != ZSP_OK && !(x->audit_error = zsp_arena_strdup(a, err)))
		return ZSP_EINTERNAL;
	return rc;
}

int zsp_decider_record_answer(zsp_decider *d, const char *request, int answer, const char *how,
			      const zsp_decide_ctx *ctx, char *err, size_t errlen)
{
	return audit(d, request, answer, "prompt", how, ctx, err, errlen);
}

int zsp_policy_hash(const zsp_ir *ir, const zsp_ir_policy *p, char hex[65])
{
	zsp_ir one = { .source = ir->source, .policies = (zsp_ir_policy *)p, .npolicies = 1 };
	char *json;
	size_t len;
	if (zsp_ir_to_json(&one, &json, &len) != ZSP_OK)
		return ZSP_EINTERNAL; /* it fails only on out-of-memory */
	zsp_sha256_hex(json, len, hex);
	free(json);
	return ZSP_OK;
}
