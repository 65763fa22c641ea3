/* test.c: zspc --test (and --coverage): each test block's expectations decided through the
 * session API, against the policy compiled with the block's own definitions. Ends with the
 * line "N passed, N failed". */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compile.h"
#include "programs/zspc/zspc.h"
#include "runtime/session.h"

/* Compiles file with tc after the test block's definitions (a command line's -D, given to tc by
 * zspc_compiler, is defined again after them so that it wins). */
static int compile_with(zsp_compiler *tc, const struct zspc_opts *o, const zsp_ir_test *test,
			const char *file, zsp_policy_set **set)
{
	for (size_t i = 0; i < test->ndefines; i++)
		if (zsp_compiler_define(tc, test->defines[i].name, test->defines[i].value) != ZSP_OK)
			zsp_die_oom();
	for (size_t i = 0; i < o->cc.ndefines; i++)
		if (zsp_compiler_define(tc, o->cc.define_names[i], o->cc.define_values[i]) != ZSP_OK)
			zsp_die_oom();
	return zsp_compile_file(tc, file, set);
}

struct cover {
	char *key;        /* policy + location: one rule as its author wrote it */
	char *what;
	unsigned hits;
};

struct coverage {
	struct cover *v;
	size_t n, cap;
};

static int cover_add(struct coverage *cv, const char *policy, zsp_loc loc, const char *what, unsigned hits)
{
	char l[PATH_MAX + 64], key[PATH_MAX + 256];
	if (!zsp_loc_string(l, sizeof(l), loc))
		return 0;
	snprintf(key, sizeof(key), "%s\t%s", policy, l);
	for (size_t i = 0; i < cv->n; i++)
		if (strcmp(cv->v[i].key, key) == 0) {
			cv->v[i].hits += hits;
			return 0;
		}
	if (cv->n == cv->cap) {
		size_t cap = cv->cap ? cv->cap * 2 : 64;
		struct cover *nv = realloc(cv->v, cap * sizeof(*nv));
		if (!nv)
			return -1;
		cv->v = nv;
		cv->cap = cap;
	}
	cv->v[cv->n].key = strdup(key);
	cv->v[cv->n].what = strdup(what);
	cv->v[cv->n].hits = hits;
	if (!cv->v[cv->n].key || !cv->v[cv->n].what)
		return -1;
	cv->n++;
	return 0;
}

static int cover_policy(struct coverage *cv, const zsp_ir_policy *p, const zsp_session *s)
{
	size_t n;
	const unsigned *hits = zsp_session_hits(s, &n);
	size_t k = 0;
	char what[1024];
	for (size_t i = 0; i < p->nfs; i++, k++) {
		const zsp_ir_fs_rule *r = &p->fs[i];
		if (r->protect)
			snprintf(what, sizeof(what), "protect \"%s\"", r->protect);
		else
			snprintf(what, sizeof(what), "%s \"%s\"", zsp_access_name(r->access), r->path);
		if (cover_add(cv, p->name, r->loc, what, hits[k]))
			return -1;
	}
	for (size_t i = 0; i < p->nhosts; i++, k++) {
		snprintf(what, sizeof(what), "%s \"%s\"", zsp_decision_name(p->hosts[i].decision), p->hosts[i].host);
		if (cover_add(cv, p->name, p->hosts[i].loc, what, hits[k]))
			return -1;
	}
	for (size_t t = 0; t < p->ntools; t++)
		for (size_t j = 0; j < p->tools[t].nrules; j++, k++) {
			const zsp_ir_tool_rule *r = &p->tools[t].rules[j];
			if (r->safe)
				snprintf(what, sizeof(what), "tool \"%s\": %s safe", p->tools[t].name,
					 zsp_decision_name(r->decision));
			else
				snprintf(what, sizeof(what), "tool \"%s\": %s %s%s%s", p->tools[t].name,
					 zsp_decision_name(r->decision), r->is_path ? "path \"" : "/",
					 r->pattern, r->is_path ? "\"" : "/");
			if (cover_add(cv, p->name, r->loc, what, hits[k]))
				return -1;
		}
	return 0;
}

struct captured {
	char *text;
	size_t len;
};

static void capture(void *ctx, const char *text, size_t len)
{
	struct captured *c = ctx;
	char *p = realloc(c->text, c->len + len + 1);
	if (!p)
		return;
	memcpy(p + c->len, text, len);
	c->len += len;
	p[c->len] = '\0';
	c->text = p;
}

static const char *request_text(zsp_arena *a, const zsp_ir_request *r)
{
	const char *s = r->kind;
	for (size_t i = 0; i < r->nargs; i++)
		s = zsp_arena_printf(a, "%s \"%s\"", s, r->args[i]);
	return s;
}

int zspc_test(const struct zspc_opts *opts, const char *file)
{
	zsp_policy_set *set;
	int rc = zspc_compile(opts, NULL, file, &set);
	if (rc != ZSP_OK)
		return rc;
	const zsp_ir *ir = zsp_policy_set_ir(set);
	unsigned passed = 0, failed = 0;
	struct coverage cv = { 0 };
	char loc[PATH_MAX + 64];
	for (size_t t = 0; t < ir->ntests && rc == ZSP_OK; t++) {
		const zsp_ir_test *test = &ir->tests[t];
		if (opts->policy && strcmp(opts->policy, test->policy) != 0)
			continue;
		/* each test block runs against the policy compiled with its own definitions, which a
		 * -D on the command line overrides */
		struct captured diag = { 0 };
		zsp_compiler *tc = zspc_compiler(opts, NULL);
		zsp_policy_set *tset = NULL;
		zsp_compiler_set_sink(tc, capture, &diag);
		int trc = compile_with(tc, opts, test, file, &tset);
		zsp_compiler_summary(tc);
		zsp_compiler_free(tc);
		if (trc != ZSP_OK) {
			fprintf(stderr, "%s: error: test `%s`: the policy does not compile with the test's definitions:\n%s",
				zsp_loc_string(loc, sizeof(loc), test->loc), test->policy, diag.text ? diag.text : "");
			free(diag.text);
			failed += (unsigned)test->nexpects;
			continue;
		}
		free(diag.text);
		const zsp_ir_policy *p = zsp_ir_find_policy(zsp_policy_set_ir(tset), test->policy);
		zsp_oracle_env env = p ? zspc_oracle_env(p, opts->resolve_symlinks) : (zsp_oracle_env){ 0 };
		zsp_session *s = NULL;
		if (!p || zsp_session_new_env(tset, test->policy, &env, &s) != ZSP_OK) {
			zsp_policy_set_free(tset);
			rc = ZSP_EINTERNAL;
			break;
		}
		for (size_t i = 0; i < test->nexpects; i++) {
			const zsp_ir_expect *x = &test->expects[i];
			zsp_arena *a = zsp_arena_new();
			zsp_session_result r;
			if (!a || zsp_session_decide_req(s, &x->req, false, &r) != ZSP_OK) {
				zsp_arena_free(a);
				rc = ZSP_EINTERNAL;
				break;
			}
			if (r.v->decision == x->decision) {
				passed++;
				if (opts->explain) {
					printf("%s: ok: expect %s %s\n", zsp_loc_string(loc, sizeof(loc), x->loc),
					       zsp_decision_name(x->decision), request_text(a, &x->req));
				}
			} else if (zsp_session_decide_req(s, &x->req, true, &r) != ZSP_OK) {
				/* decided again, with the explanation a failure is printed with */
				zsp_arena_free(a);
				rc = ZSP_EINTERNAL;
				break;
			} else {
				failed++;
				printf("%s: FAIL: expect %s %s\n", zsp_loc_string(loc, sizeof(loc), x->loc),
				       zsp_decision_name(x->decision), request_text(a, &x->req));
				printf("  expected: %s\n  actual:   %s\n", zsp_decision_name(x->decision),
				       zsp_decision_name(r.v->decision));
				zspc_print_explain(stdout, p, r.v, "  ");
			}
			zsp_arena_free(a);
		}
		if (opts->coverage && cover_policy(&cv, p, s) != 0)
			rc = ZSP_EINTERNAL;
		zsp_session_free(s);
		zsp_policy_set_free(tset);
	}
	if (rc == ZSP_OK && opts->coverage) {
		size_t hit = 0;
		for (size_t i = 0; i < cv.n; i++) {
			if (cv.v[i].hits) {
				hit++;
				continue;
			}
			const char *where = strchr(cv.v[i].key, '\t') + 1;
			printf("%s: not exercised: %s\n", where, cv.v[i].what);
		}
		double pct = cv.n ? 100.0 * (double)hit / (double)cv.n : 100.0;
		printf("coverage: %zu of %zu rules exercised (%.1f%%)\n", hit, cv.n, pct);
		if (pct + 1e-9 < opts->coverage_min) {
			printf("coverage: below the minimum of %.1f%%\n", opts->coverage_min);
			failed++;
		}
	}
	for (size_t i = 0; i < cv.n; i++) {
		free(cv.v[i].key);
		free(cv.v[i].what);
	}
	free(cv.v);
	zsp_policy_set_free(set);
	printf("%u passed, %u failed\n", passed, failed);
	if (fflush(stdout) != 0)
		return ZSP_EIO;
	if (rc != ZSP_OK)
		return rc;
	return failed ? 1 : 0;
}

