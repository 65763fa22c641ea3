/* agree.c: sbpl-agree FILE.zsp: for each test block, the profile `zspc --emit sbpl` prints for
 * the block's parameters must decide every read/write/exec/connect expectation as the oracle does. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/compile.h"
#include "compiler/host.h"
#include "compiler/oracle.h"
#include "compiler/path.h"
#include "tests/sbpl/sbpl-eval.h"
#include "compiler/zsp.h"

#define EXIT_SKIP 77
#define MAX_DEFINES 96

struct tally {
	unsigned agree, differ, gap, errors;
};

/* One block's parameters: its defines, then fixed values for what it leaves unset, so that the
 * oracle and zspc (which would take this machine's values) judge the same policy. */
struct defines {
	struct sbpl_param v[MAX_DEFINES];
	size_t n;
	char owned[MAX_DEFINES][128];
};

static bool verbose;

static void to_stderr(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	fwrite(text, 1, len, stderr);
}

static const char *define_value(const struct defines *d, const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].name, name))
			return d->v[i].value;
	return NULL;
}

static void add_define(struct defines *d, const char *name, const char *value)
{
	if (d->n < MAX_DEFINES && !define_value(d, name))
		d->v[d->n++] = (struct sbpl_param){ name, value };
}

static void block_defines(const zsp_ir_test *t, const zsp_ir_policy *p, struct defines *d)
{
	static const char *const fixed[][2] = { { "WORKSPACE", "/zsp-agree/ws" }, { "HOME", "/zsp-agree/home" },
						{ "TMPDIR", "/zsp-agree/tmp" },   { "UID", "1000" },
						{ "USER", "u" } };
	d->n = 0;
	for (size_t i = 0; i < t->ndefines; i++)
		add_define(d, t->defines[i].name, t->defines[i].value);
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		add_define(d, fixed[i][0], fixed[i][1]);
	for (size_t i = 0; p && i < p->nparams && d->n < MAX_DEFINES; i++) {
		if (p->params[i].value || define_value(d, p->params[i].name))
			continue;
		snprintf(d->owned[d->n], sizeof(d->owned[0]), "/zsp-agree/%s", p->params[i].name);
		add_define(d, p->params[i].name, d->owned[d->n]);
	}
}

/* The policy's warnings are --check's business; here they would repeat once per block. */
static zsp_compiler *quiet_compiler(void)
{
	static const char *const off[] = { "no-shadowed",   "no-duplicate", "no-conflict", "no-unused-param",
					   "no-unknown-tool", "no-no-effect", "no-unenforced" };
	zsp_compiler *c = zsp_compiler_new();
	if (!c)
		return NULL;
	zsp_compiler_set_sink(c, to_stderr, NULL);
	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
		zsp_compiler_warning(c, off[i]);
	return c;
}

static char *read_all(FILE *f)
{
	fflush(f);
	long n = ftell(f);
	char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (!buf)
		return NULL;
	rewind(f);
	size_t r = fread(buf, 1, (size_t)n, f);
	buf[r] = 0;
	return buf;
}

/* Runs `$ZSPC --emit sbpl -D ... --policy P FILE`; its exit status, stdout and stderr. */
static int emit_profile(const char *file, const char *policy, const struct defines *d, char **out, char **err)
{
	const char *zspc = getenv("ZSPC") && *getenv("ZSPC") ? getenv("ZSPC") : "zspc";
	char *argv[2 * MAX_DEFINES + 10];
	char defs[MAX_DEFINES][4200];
	size_t n = 0;
	argv[n++] = (char *)zspc;
	argv[n++] = "--emit";
	argv[n++] = "sbpl";
	for (size_t i = 0; i < d->n; i++) {
		snprintf(defs[i], sizeof(defs[i]), "%s=%s", d->v[i].name, d->v[i].value);
		argv[n++] = "-D";
		argv[n++] = defs[i];
	}
	argv[n++] = "--policy";
	argv[n++] = (char *)policy;
	argv[n++] = (char *)file;
	argv[n] = NULL;
	FILE *fo = tmpfile(), *fe = tmpfile();
	int status = -1;
	pid_t pid = fo && fe ? fork() : -1;
	if (pid == 0) {
		dup2(fileno(fo), 1);
		dup2(fileno(fe), 2);
		execvp(zspc, argv);
		perror(zspc);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid)
		status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	*out = fo ? read_all(fo) : NULL;
	*err = fe ? read_all(fe) : NULL;
	if (fo)
		fclose(fo);
	if (fe)
		fclose(fe);
	return *out && *err ? status : -1;
}

/* As the oracle makes a request path concrete (~, relative, //, ., ..), then in macOS's
 * canonical spelling: /tmp, /var and /etc live under /private. */
static void concrete_path(const char *in, const struct defines *d, char *out, size_t size)
{
	char joined[8192];
	const char *home = define_value(d, "HOME"), *ws = define_value(d, "WORKSPACE");
	if (in[0] == '~' && (in[1] == '/' || in[1] == 0))
		snprintf(joined, sizeof(joined), "%s/%s", home, in + 1);
	else if (in[0] != '/')
		snprintf(joined, sizeof(joined), "%s/%s", ws, in);
	else
		snprintf(joined, sizeof(joined), "%s", in);
	size_t n = 0;
	char norm[8192];
	for (char *s = joined, *e; *s; s = e) {
		while (*s == '/')
			s++;
		for (e = s; *e && *e != '/'; e++)
			;
		size_t len = (size_t)(e - s);
		if (len == 0 || (len == 1 && s[0] == '.'))
			continue;
		if (len == 2 && s[0] == '.' && s[1] == '.') {
			while (n > 0 && norm[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
			continue;
		}
		norm[n++] = '/';
		memcpy(norm + n, s, len);
		n += len;
	}
	norm[n] = 0;
	const char *p = n ? norm : "/";
	static const char *const priv[] = { "/tmp", "/var", "/etc" };
	for (size_t i = 0; i < 3; i++) {
		size_t l = strlen(priv[i]);
		if (!strncmp(p, priv[i], l) && (p[l] == 0 || p[l] == '/')) {
			snprintf(out, size, "/private%s", p);
			return;
		}
	}
	snprintf(out, size, "%s", p);
}

/* Line `line` of the profile, for messages. */
static void profile_line(const char *text, unsigned line, char *out, size_t size)
{
	for (unsigned l = 1; l < line && text; l++)
		text = (text = strchr(text, '\n')) ? text + 1 : NULL;
	if (!text) {
		snprintf(out, size, "?");
		return;
	}
	int len = (int)strcspn(text, "\n");
	snprintf(out, size, "%.*s%s", len > 160 ? 160 : len, text, len > 160 ? "..." : "");
}

struct check {
	const char *kind, *arg, *target; /* target: the path or host:port given to the evaluator */
	bool oracle_allows;
	const char *profile;
	const sbpl_profile *sp;
};

/* The operations one expectation stands for (doc/sbpl-eval.md): a write that the oracle allows
 * must be allowed as data and create; one it denies must also refuse unlink. */
static size_t operations_of(const struct check *c, const char **ops)
{
	if (!strcmp(c->kind, "read"))
		return ops[0] = "file-read-data", 1;
	if (!strcmp(c->kind, "exec"))
		return ops[0] = "process-exec", ops[1] = "file-read-data", 2;
	if (!strcmp(c->kind, "connect"))
		return ops[0] = "network-outbound", 1;
	ops[0] = "file-write-data";
	ops[1] = "file-write-create";
	ops[2] = "file-write-unlink";
	return c->oracle_allows ? 2 : 3;
}

/* Evaluates every operation; true when the profile says what the oracle says. exec is denied
 * when either of its operations is. Each verdict is described in why. */
static int judge(const struct check *c, bool *agrees, bool *sbpl_allows, char *why, size_t size)
{
	const char *ops[3];
	size_t n = operations_of(c, ops), allowed = 0, o = 0;
	why[0] = 0;
	for (size_t i = 0; i < n; i++) {
		struct sbpl_verdict v;
		char err[256], line[200];
		if (sbpl_decide(c->sp, ops[i], c->target, &v, err, sizeof(err)) != 0) {
			snprintf(why, size, "%s", err);
			return -1;
		}
		allowed += v.allow;
		if (v.line)
			profile_line(c->profile, v.line, line, sizeof(line));
		int w = snprintf(why + o, size - o, "\n    %s %s by %s%u: %s", ops[i], v.allow ? "allowed" : "denied",
				 v.line ? "line " : "the default", v.line, v.line ? line : "");
		if (w > 0 && (size_t)w < size - o)
			o += (size_t)w;
	}
	bool exec = !strcmp(c->kind, "exec");
	*sbpl_allows = allowed == n;
	*agrees = c->oracle_allows ? allowed == n : exec ? allowed < n : allowed == 0;
	return 0;
}

/* A mismatch Seatbelt cannot avoid: its ip filters name only `*` and `localhost`. */
static const char *known_gap(const zsp_ir_policy *p, const struct check *c, bool sbpl_allows)
{
	/* a cache is the sandbox's own directory on Linux; on macOS the host's stays as it is */
	for (size_t i = 0; strcmp(c->kind, "connect") != 0 && i < p->nfs; i++)
		if (p->fs[i].cache && zsp_path_is_prefix(p->fs[i].path, c->target) && c->oracle_allows && !sbpl_allows)
			return "a cache: Seatbelt cannot give the sandbox a directory of its own, so the host's is left read-only";
	/* Seatbelt's regex matches bytes: a glob's `?` is one byte there, one UTF-8 character in the
	 * oracle, so a deny with `?` over a non-ASCII character is not enforced on macOS
	 * (doc/sbpl.md "Known gaps") */
	if (strcmp(c->kind, "connect") != 0 && !c->oracle_allows && sbpl_allows) {
		bool high = false;
		for (const unsigned char *q = (const unsigned char *)c->target; *q; q++)
			high |= *q >= 0x80;
		for (size_t i = 0; high && i < p->nfs; i++)
			if (p->fs[i].glob && p->fs[i].access == ZSP_ACCESS_DENY && strchr(p->fs[i].path, '?'))
				return "a glob's `?` over a non-ASCII character: Seatbelt's regex counts bytes, so the deny does not hold on macOS";
	}
	if (strcmp(c->kind, "connect") != 0)
		return NULL;
	if (p->net_mode == ZSP_NET_PROXY && c->oracle_allows && !sbpl_allows)
		return "mode proxy: the profile admits only the proxy, which filters the hosts";
	if (p->net_mode == ZSP_NET_FULL && !c->oracle_allows && sbpl_allows)
		return "mode full: Seatbelt cannot refuse single hosts";
	/* stricter, not looser: `localhost` in an ip filter is every loopback address */
	if (p->net_mode == ZSP_NET_FULL && c->oracle_allows && !sbpl_allows &&
	    (!strncmp(c->target, "127.", 4) || !strncmp(c->target, "[::1]:", 6) || !strncmp(c->target, "localhost:", 10)))
		return "mode full: Seatbelt's `localhost` is every loopback address, so a deny of one refuses them all";
	return NULL;
}

static bool sandbox_kind(const zsp_ir_expect *x)
{
	const char *k = x->req.kind;
	return x->req.nargs == 1 &&
	       (!strcmp(k, "read") || !strcmp(k, "write") || !strcmp(k, "exec") || !strcmp(k, "connect"));
}

static void check_expect(const zsp_ir_policy *p, zsp_oracle *o, zsp_arena *a, const zsp_ir_expect *x,
			 struct check *c, const struct defines *d, struct tally *t)
{
	char loc[512], target[8192], why[2048];
	zsp_loc_string(loc, sizeof(loc), x->loc);
	zsp_verdict v = { 0 };
	if (zsp_oracle_decide(o, a, &x->req, false, &v) != 0) {
		printf("%s: error: the oracle ran out of memory\n", loc);
		t->errors++;
		return;
	}
	c->kind = x->req.kind;
	c->arg = x->req.args[0];
	c->oracle_allows = v.decision == ZSP_ALLOW;
	char host[ZSP_HOST_MAX];
	zsp_host_kind hk;
	zsp_host_error he;
	unsigned port;
	/* the address the kernel sees: the canonical host (`2130706433` is 127.0.0.1) */
	if (!strcmp(c->kind, "connect") && zsp_hostport_parse(c->arg, 0, host, &hk, &port, &he))
		snprintf(target, sizeof(target), "%s:%u", host, port);
	else if (!strcmp(c->kind, "connect"))
		snprintf(target, sizeof(target), "%s", c->arg);
	else
		concrete_path(c->arg, d, target, sizeof(target));
	c->target = target;
	bool agrees, sbpl_allows;
	if (judge(c, &agrees, &sbpl_allows, why, sizeof(why)) != 0) {
		printf("%s: error: %s \"%s\": the evaluator cannot ask: %s\n", loc, c->kind, c->arg, why);
		t->errors++;
		return;
	}
	const char *said = v.decision == ZSP_ALLOW ? "allow" : v.decision == ZSP_ASK ? "ask" : "deny";
	const char *gap = agrees ? NULL : known_gap(p, c, sbpl_allows);
	if (agrees) {
		t->agree++;
		if (verbose)
			printf("%s: agree: %s \"%s\": oracle %s%s\n", loc, c->kind, c->arg, said, why);
		return;
	}
	char rloc[512] = "";
	if (v.loc.src)
		zsp_loc_string(rloc, sizeof(rloc), v.loc);
	printf("%s: %s: %s \"%s\" (as %s): oracle %s (%s%s%s), the profile:%s\n", loc,
	       gap ? "known gap" : "DIFFER", c->kind, c->arg, target, said, v.reason, rloc[0] ? " at " : "", rloc, why);
	if (gap) {
		printf("    %s\n", gap);
		t->gap++;
	} else {
		t->differ++;
	}
}

/* One test block: compile with its parameters, emit its profile, compare. EXIT_SKIP when zspc
 * cannot emit SBPL yet. */
static int check_block(const char *file, const zsp_ir *ir0, const zsp_ir_test *test, struct tally *t)
{
	struct defines d;
	block_defines(test, zsp_ir_find_policy(ir0, test->policy), &d);
	char *out = NULL, *err = NULL;
	int rc = emit_profile(file, test->policy, &d, &out, &err);
	char loc[512] = "?";
	zsp_loc_string(loc, sizeof(loc), test->loc);
	if (rc == ZSP_EUSAGE && err && strstr(err, "not implemented")) {
		printf("%s: zspc --emit sbpl is not implemented yet: %s", loc, err);
		free(out);
		free(err);
		return EXIT_SKIP;
	}
	if (rc != 0) {
		printf("%s: error: zspc --emit sbpl --policy %s exited %d:\n%s", loc, test->policy, rc, err ? err : "");
		t->errors++;
		free(out);
		free(err);
		return 0;
	}
	char perr[512];
	sbpl_profile *sp = sbpl_parse(out, strlen(out), d.v, d.n, perr, sizeof(perr));
	zsp_compiler *c = quiet_compiler();
	zsp_policy_set *set = NULL;
	for (size_t i = 0; c && i < d.n; i++)
		zsp_compiler_define(c, d.v[i].name, d.v[i].value);
	int crc = c ? zsp_compile_file(c, file, &set) : ZSP_EINTERNAL;
	zsp_compiler_free(c);
	const zsp_ir_policy *p = set ? zsp_ir_find_policy(zsp_policy_set_ir(set), test->policy) : NULL;
	zsp_oracle_env env = { .workspace = define_value(&d, "WORKSPACE"), .home = define_value(&d, "HOME") };
	zsp_oracle *o = p ? zsp_oracle_new(p, &env) : NULL;
	zsp_arena *a = zsp_arena_new();
	if (!sp) {
		char line[200];
		profile_line(out, (unsigned)strtoul(perr, NULL, 10), line, sizeof(line));
		printf("%s: error: the profile of policy `%s` does not parse: %s\n    %s\n", loc, test->policy, perr, line);
		t->errors++;
	} else if (crc != ZSP_OK || !o || !a) {
		printf("%s: error: policy `%s` does not compile with the block's parameters\n", loc, test->policy);
		t->errors++;
	} else {
		struct check ck = { .profile = out, .sp = sp };
		for (size_t i = 0; i < test->nexpects; i++)
			if (sandbox_kind(&test->expects[i]))
				check_expect(p, o, a, &test->expects[i], &ck, &d, t);
	}
	zsp_arena_free(a);
	zsp_oracle_free(o);
	zsp_policy_set_free(set);
	sbpl_free(sp);
	free(out);
	free(err);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "-v")) {
		verbose = true;
		argv++;
		argc--;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: sbpl-agree [-v] FILE.zsp   (zspc from $ZSPC)\n");
		return 2;
	}
	const char *file = argv[1];
	zsp_compiler *c = quiet_compiler();
	zsp_policy_set *set = NULL;
	int crc = c ? zsp_compile_file(c, file, &set) : ZSP_EINTERNAL;
	zsp_compiler_free(c);
	if (crc != ZSP_OK) {
		fprintf(stderr, "sbpl-agree: %s does not compile\n", file);
		return 2;
	}
	const zsp_ir *ir = zsp_policy_set_ir(set);
	struct tally t = { 0 };
	int rc = 0;
	for (size_t i = 0; i < ir->ntests && rc == 0; i++)
		rc = check_block(file, ir, &ir->tests[i], &t);
	zsp_policy_set_free(set);
	if (rc == EXIT_SKIP)
		return EXIT_SKIP;
	printf("sbpl-agree: %s: %u agree, %u differ, %u known gaps, %u errors\n", file, t.agree, t.differ, t.gap,
	       t.errors);
	return t.errors ? 2 : t.differ ? 1 : 0;
}
