/* zspc_oracle.c: the zspc modes that ask the oracle: --query, --batch, --test (with
 * --coverage), and --import zed. Exit codes for a decision: allow 0, deny 1, ask 2. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../runtime/decide.h"
#include "compile.h"
#include "import_zed.h"
#include "oracle.h"
#include "textesc.h"
#include "zspc.h"

#define EXIT_NO_DECISION 3

/* Text the request brought (a command, a path) as --explain shows it: escaped when it could
 * redraw the terminal of the person reading (compiler/textesc.h). */
static void put_shown(FILE *f, const char *s)
{
	char *e = zsp_text_escape(s);
	fputs(e ? e : "(out of memory)", f);
	free(e);
}

static void print_explain(FILE *f, const zsp_ir_policy *p, const zsp_verdict *v, const char *indent)
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

/* ---- policies and the machine ----------------------------------------------------------- */

const zsp_ir_policy *zspc_choose_policy(const zsp_ir *ir, const char *name)
{
	if (name) {
		const zsp_ir_policy *p = zsp_ir_find_policy(ir, name);
		if (!p)
			fprintf(stderr, "zspc: no policy `%s` in %s\n", name, ir->source);
		return p;
	}
	if (ir->npolicies == 1)
		return &ir->policies[0];
	fprintf(stderr, "zspc: %s defines %zu policies; choose one with --policy:", ir->source,
		ir->npolicies);
	for (size_t i = 0; i < ir->npolicies; i++)
		fprintf(stderr, " %s", ir->policies[i].name);
	fputc('\n', stderr);
	return NULL;
}

static const char *param_value(const zsp_ir_policy *p, const char *name)
{
	for (size_t i = 0; i < p->nparams; i++)
		if (strcmp(p->params[i].name, name) == 0)
			return p->params[i].value && p->params[i].value[0] == '/' ? p->params[i].value : NULL;
	return NULL;
}

/* The machine's values for the built-in parameters (a -D overrides each). */
struct machine {
	char cwd[PATH_MAX];
	char uid[32];
	const char *names[5], *values[5];
	size_t n;
};

static void machine_defaults(const struct zspc_opts *o, struct machine *m)
{
	m->n = 0;
	const char *ws = o->workspace;
	if (!ws && getcwd(m->cwd, sizeof(m->cwd)))
		ws = m->cwd;
	if (ws) {
		m->names[m->n] = "WORKSPACE";
		m->values[m->n++] = ws;
	}
	const char *home = getenv("HOME");
	if (home && home[0] == '/') {
		m->names[m->n] = "HOME";
		m->values[m->n++] = home;
	}
	const char *tmp = getenv("TMPDIR");
	m->names[m->n] = "TMPDIR";
	m->values[m->n++] = tmp && tmp[0] == '/' ? tmp : "/tmp";
	snprintf(m->uid, sizeof(m->uid), "%u", (unsigned)getuid());
	m->names[m->n] = "UID";
	m->values[m->n++] = m->uid;
	const char *user = getenv("USER");
	struct passwd *pw = user ? NULL : getpwuid(getuid());
	if (user || pw) {
		m->names[m->n] = "USER";
		m->values[m->n++] = user ? user : pw->pw_name;
	}
}

/* Values that hold `${` or control characters cannot be -D values: leave those unresolved. */
static size_t usable(struct machine *m)
{
	size_t k = 0;
	for (size_t i = 0; i < m->n; i++) {
		const char *v = m->values[i];
		bool ok = !strstr(v, "${");
		for (const unsigned char *c = (const unsigned char *)v; ok && *c; c++)
			ok = *c >= 0x20 && *c != 0x7f;
		if (ok) {
			m->names[k] = m->names[i];
			m->values[k++] = v;
		}
	}
	return m->n = k;
}

/* ---- grants ----------------------------------------------------------------------------- */

/* The grant store behind --query and --batch when --thread, --project, --record, --state-dir
 * or --runtime-dir is given. A store that cannot be opened leaves store NULL: the policy alone
 * decides (never an allow a grant would have given), and --record fails with exit 74. */
struct grants {
	zsp_store *store;
	zsp_decider *d;
	char project[PATH_MAX];
	char hash[65];           /* sha-256 of the policy's IR JSON */
	char open_error[512];    /* why the store could not be opened, else "" */
	bool audit_failed;
};

static bool wants_grants(const struct zspc_opts *o)
{
	return o->thread || o->project || o->record || o->state_dir || o->runtime_dir;
}


static int grants_open(const struct zspc_opts *o, const zsp_ir *ir, const zsp_ir_policy *p,
		       const zsp_oracle_env *env, struct grants *g)
{
	if (o->project && !realpath(o->project, g->project))
		return usage_error("--project %s: not an existing directory", o->project);
	if (zsp_policy_hash(ir, p, g->hash) != 0)
		return ZSP_EINTERNAL;
	zsp_store_where where = { o->state_dir, o->runtime_dir, false };
	if (zsp_store_open(&where, &g->store, g->open_error, sizeof(g->open_error)) != 0)
		fprintf(stderr, "zspc: grant store: %s\nzspc: deciding without grants: the policy's answer stands\n",
			g->open_error);
	g->d = zsp_decider_new(p, g->store, env->workspace, env->home);
	return g->d ? ZSP_OK : ZSP_EINTERNAL;
}

static void grants_close(struct grants *g)
{
	zsp_decider_free(g->d);
	zsp_store_close(g->store);
}

/* ---- --query and --batch ---------------------------------------------------------------- */

static int ask_one(zsp_oracle *o, const zsp_ir_policy *p, const struct zspc_opts *opts,
		   struct grants *g, const char *text, bool batch)
{
	zsp_arena *a = zsp_arena_new();
	zsp_ir_request req;
	zsp_verdict v;
	char err[256];
	int rc;
	if (!a)
		return ZSP_EINTERNAL;
	if (zsp_request_parse(a, text, &req, err, sizeof(err)) != 0) {
		if (batch) {
			fputs("{\"decision\":\"error\",\"error\":", stdout);
			zsp_json_string(stdout, err);
			fputs(",\"request\":", stdout);
			zsp_json_string(stdout, text);
			fputs("}\n", stdout);
			rc = 0;
		} else {
			fprintf(stderr, "zspc: bad request: %s\n", err);
			fprintf(stderr, "  hint: a request is KIND \"ARG\"..., e.g. terminal \"ls -la\", read \"/etc/hosts\"\n");
			rc = EXIT_NO_DECISION;
		}
		zsp_arena_free(a);
		return rc;
	}
	if (zsp_oracle_decide(o, a, &req, opts->explain, &v) != 0) {
		zsp_arena_free(a);
		fprintf(stderr, "zspc: out of memory\n");
		return ZSP_EINTERNAL;
	}
	/* the oracle's verdict explains; the decider adds the grants (and the audit trail) */
	zsp_verdict_extra x = { 0 };
	if (g && g->d) {
		int r = zsp_decider_settle(g->d, a, text, &req, &v, opts->thread,
					   g->project[0] ? g->project : NULL, opts->record, g->hash, &x);
		if (r == ZSP_EINTERNAL) {
			zsp_arena_free(a);
			fprintf(stderr, "zspc: out of memory\n");
			return ZSP_EINTERNAL;
		}
		if (x.store_error)
			fprintf(stderr, "zspc: grant store: %s; deciding without grants\n", x.store_error);
		else if (g->open_error[0])
			x.store_error = g->open_error;
		if (r == -1) {
			fprintf(stderr, "zspc: cannot record the decision: %s\n", x.audit_error);
			g->audit_failed = true;
		}
	}
	if (opts->json || batch) {
		zsp_verdict_json(stdout, p->name, &req, &v, opts->explain, &x);
	} else {
		printf("%s\n", zsp_decision_name(v.decision));
		if (opts->explain)
			print_explain(stdout, p, &v, "  ");
	}
	rc = zsp_decision_exit(v.decision);
	zsp_arena_free(a);
	return rc;
}

int zspc_query(const struct zspc_opts *opts, const char *file)
{
	struct machine m;
	machine_defaults(opts, &m);
	usable(&m);
	zsp_policy_set *set;
	int rc = zspc_compile(opts, m.names, m.values, m.n, file, &set);
	if (rc != ZSP_OK)
		return rc == ZSP_EPOLICY ? EXIT_NO_DECISION : rc;
	const zsp_ir *ir = zsp_policy_set_ir(set);
	const zsp_ir_policy *p = zspc_choose_policy(ir, opts->policy);
	if (!p) {
		zsp_policy_set_free(set);
		return ZSP_EUSAGE;
	}
	zsp_oracle_env env = { param_value(p, "WORKSPACE"), param_value(p, "HOME"), opts->resolve_symlinks };
	zsp_oracle *o = zsp_oracle_new(p, &env);
	if (!o) {
		zsp_policy_set_free(set);
		return ZSP_EINTERNAL;
	}
	struct grants g = { .store = NULL };
	if (wants_grants(opts) && (rc = grants_open(opts, ir, p, &env, &g)) != ZSP_OK) {
		grants_close(&g);
		zsp_oracle_free(o);
		zsp_policy_set_free(set);
		return rc;
	}
	struct grants *gp = wants_grants(opts) ? &g : NULL;
	if (opts->request) {
		rc = ask_one(o, p, opts, gp, opts->request, false);
	} else {
		FILE *in = strcmp(opts->batch, "-") == 0 ? stdin : fopen(opts->batch, "r");
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;
		rc = ZSP_OK;
		if (!in) {
			fprintf(stderr, "zspc: cannot read %s: %s\n", opts->batch, strerror(errno));
			rc = ZSP_ENOINPUT;
		}
		while (in && rc == ZSP_OK && (n = getline(&line, &cap, in)) >= 0) {
			while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
				line[--n] = '\0';
			const char *t = line + strspn(line, " \t");
			if (!*t || *t == '#')
				continue;
			int r = ask_one(o, p, opts, gp, t, true);
			if (r == ZSP_EINTERNAL)
				rc = r;
			if (fflush(stdout) != 0)
				rc = ZSP_EIO;
		}
		if (in && ferror(in))
			rc = ZSP_EIO;
		free(line);
		if (in && in != stdin)
			fclose(in);
	}
	if (fflush(stdout) != 0)
		rc = ZSP_EIO;
	/* a decision that had to be recorded and was not: fail closed, whatever it was */
	if (g.audit_failed && rc != ZSP_EINTERNAL)
		rc = ZSP_EIO;
	grants_close(&g);
	zsp_oracle_free(o);
	zsp_policy_set_free(set);
	return rc;
}

/* ---- --test ----------------------------------------------------------------------------- */

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

static int cover_policy(struct coverage *cv, const zsp_ir_policy *p, const zsp_oracle *o)
{
	size_t n;
	const unsigned *hits = zsp_oracle_hits(o, &n);
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
			snprintf(what, sizeof(what), "tool \"%s\": %s %s%s%s", p->tools[t].name,
				 zsp_decision_name(r->decision), r->is_path ? "path \"" : "/", r->pattern,
				 r->is_path ? "\"" : "/");
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
	int rc = zspc_compile(opts, NULL, NULL, 0, file, &set);
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
		/* each test block runs against the policy compiled with its own definitions */
		const char **names = calloc(test->ndefines + 1, sizeof(char *));
		const char **values = calloc(test->ndefines + 1, sizeof(char *));
		if (!names || !values) {
			free(names);
			free(values);
			rc = ZSP_EINTERNAL;
			break;
		}
		for (size_t i = 0; i < test->ndefines; i++) {
			names[i] = test->defines[i].name;
			values[i] = test->defines[i].value;
		}
		struct captured diag = { 0 };
		zsp_compiler *tc = zspc_compiler(opts, names, values, test->ndefines);
		zsp_policy_set *tset = NULL;
		int trc = ZSP_EINTERNAL;
		if (tc) {
			zsp_compiler_set_sink(tc, capture, &diag);
			trc = zsp_compile_file(tc, file, &tset);
			zsp_compiler_free(tc);
		}
		free(names);
		free(values);
		if (trc != ZSP_OK) {
			fprintf(stderr, "%s: error: test `%s`: the policy does not compile with the test's definitions:\n%s",
				zsp_loc_string(loc, sizeof(loc), test->loc), test->policy, diag.text ? diag.text : "");
			free(diag.text);
			failed += (unsigned)test->nexpects;
			continue;
		}
		free(diag.text);
		const zsp_ir_policy *p = zsp_ir_find_policy(zsp_policy_set_ir(tset), test->policy);
		zsp_oracle_env env = { p ? param_value(p, "WORKSPACE") : NULL, p ? param_value(p, "HOME") : NULL,
				       opts->resolve_symlinks };
		zsp_oracle *o = p ? zsp_oracle_new(p, &env) : NULL;
		if (!o) {
			zsp_policy_set_free(tset);
			rc = ZSP_EINTERNAL;
			break;
		}
		for (size_t i = 0; i < test->nexpects; i++) {
			const zsp_ir_expect *x = &test->expects[i];
			zsp_arena *a = zsp_arena_new();
			zsp_verdict v;
			if (!a || zsp_oracle_decide(o, a, &x->req, false, &v) != 0) {
				zsp_arena_free(a);
				rc = ZSP_EINTERNAL;
				break;
			}
			if (v.decision == x->decision) {
				passed++;
				if (opts->explain) {
					printf("%s: ok: expect %s %s\n", zsp_loc_string(loc, sizeof(loc), x->loc),
					       zsp_decision_name(x->decision), request_text(a, &x->req));
				}
			} else if (zsp_oracle_decide(o, a, &x->req, true, &v) != 0) {
				/* decided again, with the explanation a failure is printed with */
				zsp_arena_free(a);
				rc = ZSP_EINTERNAL;
				break;
			} else {
				failed++;
				printf("%s: FAIL: expect %s %s\n", zsp_loc_string(loc, sizeof(loc), x->loc),
				       zsp_decision_name(x->decision), request_text(a, &x->req));
				printf("  expected: %s\n  actual:   %s\n", zsp_decision_name(x->decision),
				       zsp_decision_name(v.decision));
				print_explain(stdout, p, &v, "  ");
			}
			zsp_arena_free(a);
		}
		if (opts->coverage && cover_policy(&cv, p, o) != 0)
			rc = ZSP_EINTERNAL;
		zsp_oracle_free(o);
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

/* ---- --import zed ----------------------------------------------------------------------- */

int zspc_import(const struct zspc_opts *opts, const char *file)
{
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
	if (!f) {
		fprintf(stderr, "zspc: cannot read `%s`: %s\n", file, strerror(errno));
		return ZSP_ENOINPUT;
	}
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	int rc = ZSP_OK;
	while (buf) {
		if (len == cap) {
			/* room for one byte past the limit tells "exactly 16 MiB" from "more" */
			if (cap > (16u << 20)) {
				fprintf(stderr, "zspc: `%s` is larger than 16 MiB\n", file);
				rc = ZSP_ENOINPUT;
				break;
			}
			size_t ncap = cap * 2 > (16u << 20) ? (16u << 20) + 1 : cap * 2;
			char *nb = realloc(buf, ncap);
			if (!nb)
				break;
			buf = nb;
			cap = ncap;
		}
		size_t r = fread(buf + len, 1, cap - len, f);
		len += r;
		if (r == 0)
			break;
	}
	if (!buf) {
		rc = ZSP_EINTERNAL;
	} else if (ferror(f)) {
		fprintf(stderr, "zspc: cannot read `%s`: %s\n", file, strerror(errno));
		rc = ZSP_ENOINPUT;
	}
	if (f != stdin)
		fclose(f);
	if (rc != ZSP_OK) {
		free(buf);
		return rc;
	}
	char *out = NULL, err[512] = "";
	rc = zsp_import_zed(buf, len, file, &out, err, sizeof(err));
	free(buf);
	if (rc == ZSP_EPOLICY) {
		/* err is "LINE:COL: message": print it the way every zspc diagnostic reads */
		const char *c1 = strchr(err, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2 && c2[1] == ' ')
			fprintf(stderr, "%s:%.*s: error:%s\n", file, (int)(c2 - err), err, c2 + 1);
		else
			fprintf(stderr, "%s: error: %s\n", file, err);
	}
	else if (rc != ZSP_OK)
		fprintf(stderr, "zspc: out of memory\n");
	if (rc == ZSP_OK)
		rc = zspc_write_output(opts->out, out, strlen(out));
	free(out);
	return rc;
}
