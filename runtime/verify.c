/* verify.c: the kernel against the oracle. Each test block's parameters that name directories are
 * moved into a scratch directory (so the probe can create what the expectations name), the
 * sandbox of that block is built for real, and every read/write/exec/connect/syscall expectation
 * is probed inside it, and outside it as a baseline (the host may refuse on its own). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/compile.h"
#include "compiler/host.h"
#include "compiler/oracle.h"
#include "compiler/path.h"
#include "runtime/cli.h"
#include "runtime/launch.h"
#include "runtime/verify.h"
#include "compiler/zsp.h"

#ifndef ZSP_PROBE_PATH
#define ZSP_PROBE_PATH "/usr/libexec/zsp/zsp-probe"
#endif

enum outcome { OUT_ALLOWED, OUT_DENIED, OUT_UNKNOWN };

struct map {
	const char *from, *to;   /* a test's parameter value and its place in the scratch directory */
};

struct block {
	const char *scratch;     /* this block's directory */
	struct map maps[64];
	size_t nmaps;
	const char *workspace, *home;
};

struct tally {
	unsigned agree, differ, gap, skipped;
};

static void to_stderr(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	fwrite(text, 1, len, stderr);
}

/* The probe: the one next to this program (a build tree), else the installed one (a test
 * build: $ZSP_PROBE first). */
static const char *probe_path(void)
{
	const char *test = zsp_cli_test_override("ZSP_PROBE");
	return test ? test : zsp_cli_program_path("zsp-probe", ZSP_PROBE_PATH);
}

static int mkdirs(const char *path, mode_t mode)
{
	char buf[4096];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -1;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, mode) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(buf, mode) == 0 || errno == EEXIST ? 0 : -1;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A request path in the block's scratch world: `~` is the moved HOME, a relative path is in the
 * moved WORKSPACE, a path under a moved parameter's value moves with it. */
static char *translate(const struct block *b, const char *path)
{
	char *out = NULL;
	if (path[0] == '~' && (path[1] == '/' || path[1] == 0))
		return asprintf(&out, "%s%s", b->home, path + 1) < 0 ? NULL : out;
	if (path[0] != '/')
		return asprintf(&out, "%s/%s", b->workspace, path) < 0 ? NULL : out;
	const struct map *best = NULL;
	for (size_t i = 0; i < b->nmaps; i++)
		if (zsp_path_is_prefix(b->maps[i].from, path) &&
		    (!best || strlen(b->maps[i].from) > strlen(best->from)))
			best = &b->maps[i];
	if (!best)
		return strdup(path);
	return asprintf(&out, "%s%s", best->to, path + strlen(best->from)) < 0 ? NULL : out;
}

/* The policy's warnings are --check's business; here they would repeat once per block. */
static void quiet(zsp_compiler *c)
{
	static const char *const off[] = { "no-shadowed", "no-duplicate", "no-conflict", "no-unused-param",
					   "no-unknown-tool", "no-no-effect", "no-unenforced" };
	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
		zsp_compiler_warning(c, off[i]);
}

static bool is_fs_kind(const char *k)
{
	return !strcmp(k, "read") || !strcmp(k, "write") || !strcmp(k, "exec");
}

/* Fixtures: what a read or exec names exists (a directory when another expectation lies below
 * it, else a small executable file); a write's parent exists. Only inside the scratch dir. */
static void make_fixtures(const struct block *b, char **paths, const char **kinds, size_t n)
{
	size_t sl = strlen(b->scratch);
	for (size_t i = 0; i < n; i++) {
		if (!paths[i] || strncmp(paths[i], b->scratch, sl) != 0 || paths[i][sl] != '/')
			continue;
		char *parent = strdup(paths[i]);
		char *slash = parent ? strrchr(parent, '/') : NULL;
		if (slash) {
			*slash = 0;
			mkdirs(parent, 0755);
		}
		free(parent);
		if (!strcmp(kinds[i], "write"))
			continue;
		bool dir = false;
		for (size_t j = 0; j < n; j++)
			if (j != i && paths[j] && zsp_path_is_prefix(paths[i], paths[j]) && strcmp(paths[i], paths[j]))
				dir = true;
		if (dir) {
			mkdirs(paths[i], 0755);
			continue;
		}
		struct stat st;
		if (lstat(paths[i], &st) == 0)
			continue;
		int fd = open(paths[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
		if (fd >= 0) {
			(void)!write(fd, "#!/bin/sh\nexit 0\n", 17);
			close(fd);
		}
	}
}

/* Runs fn (the probe, in or out of the sandbox) with stdout and stderr captured. */
static enum outcome capture(int (*fn)(void *), void *ctx, char *line, size_t size, int *rc)
{
	int mfd = memfd_create("zsp-verify", MFD_CLOEXEC);
	line[0] = 0;
	if (mfd < 0)
		return OUT_UNKNOWN;
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	dup2(mfd, 1);
	dup2(mfd, 2);
	*rc = fn(ctx);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	off_t len = lseek(mfd, 0, SEEK_END);
	ssize_t r = pread(mfd, line, size - 1, 0);
	close(mfd);
	line[r > 0 ? r : 0] = 0;
	(void)len;
	/* the probe's verdict is its first line starting with a known word; bwrap's own errors are not */
	for (char *l = line; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		enum outcome o = !strncmp(l, "allowed", 7) ? OUT_ALLOWED
			       : !strncmp(l, "denied", 6)  ? OUT_DENIED
							   : OUT_UNKNOWN;
		if (o != OUT_UNKNOWN || !strncmp(l, "inconclusive", 12)) {
			memmove(line, l, strlen(l) + 1);
			line[strcspn(line, "\n")] = 0;
			return o;
		}
	}
	line[strcspn(line, "\n")] = 0;
	return OUT_UNKNOWN;
}

struct probe_call {
	const zsp_launch *l;
	char *const *argv;
};

static int in_sandbox(void *ctx)
{
	struct probe_call *c = ctx;
	return zsp_launch_run(c->l, c->argv, NULL);
}

static int outside(void *ctx)
{
	struct probe_call *c = ctx;
	pid_t pid = fork();
	if (pid == 0) {
		char *const env[] = { "PATH=/usr/bin:/bin", NULL };
		execve(c->argv[0], c->argv, env);
		printf("inconclusive: cannot run the probe %s: %s\n", c->argv[0], strerror(errno));
		_exit(2);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A request string for the oracle: KIND "ARG" with quotes and backslashes escaped. */
static char *request_text(const char *kind, const char *arg)
{
	size_t n = strlen(arg);
	char *buf = malloc(strlen(kind) + 2 * n + 8), *o = buf;
	if (!buf)
		return NULL;
	o += sprintf(o, "%s \"", kind);
	for (const char *c = arg; *c; c++) {
		if (*c == '"' || *c == '\\')
			*o++ = '\\';
		*o++ = *c;
	}
	strcpy(o, "\"");
	return buf;
}

/* Is a mismatch one the backend announced (-Wunenforced)? */
static const char *known_gap(const zsp_ir_policy *p, const char *kind, const char *path, bool oracle_allows,
			     enum outcome kernel)
{
	if (!strcmp(kind, "connect")) {
		if (p->net_mode == ZSP_NET_PROXY && oracle_allows && kernel == OUT_DENIED)
			return "mode proxy reaches allowed hosts through zsp-run's proxy only: the probe's direct connect is refused, as it must be";
		if (p->net_mode == ZSP_NET_FULL && !oracle_allows && kernel == OUT_ALLOWED)
			return "mode full cannot refuse single hosts on Linux";
		return NULL;
	}
	if (!is_fs_kind(kind) || oracle_allows || kernel != OUT_ALLOWED)
		return NULL;
	/* a descriptor's name: only the process holding it knows the file, and the oracle refuses
	 * what it cannot follow (reason unresolvable-path, doc/oracle.md "Path tools") */
	static const char *const fd_names[] = { "/proc/self/fd/", "/proc/thread-self/fd/", "/dev/fd/",
						"/dev/stdin", "/dev/stdout", "/dev/stderr" };
	for (size_t i = 0; i < sizeof(fd_names) / sizeof(fd_names[0]); i++) {
		size_t n = strlen(fd_names[i]);
		if (strncmp(path, fd_names[i], n) == 0 && (fd_names[i][n - 1] == '/' || !path[n]))
			return "the oracle cannot know which file a descriptor names and refuses it; the kernel "
			       "gives the process the file its descriptor holds";
	}
	/* a protected name that does not exist at launch is not mounted: the command may create it,
	 * and it is moved aside when the run ends (doc/host-later.md) */
	for (size_t i = 0; i < p->nfs; i++) {
		char file[PATH_MAX];   /* the file the rule names, its pattern unescaped */
		if (p->fs[i].protect && zsp_path_is_prefix(p->fs[i].path, path) &&
		    zsp_path_unescape_buf(p->fs[i].path, file, sizeof(file)) && access(file, F_OK) != 0)
			return "a protected name missing at launch can be created during the run on Linux; it is moved aside when the run ends";
	}
	for (size_t i = 0; i < p->nfs; i++) {
		const zsp_ir_fs_rule *r = &p->fs[i];
		if (!r->glob || r->access != ZSP_ACCESS_DENY)
			continue;
		char buf[4096];
		snprintf(buf, sizeof(buf), "%s", path);
		for (;;) {
			if (zsp_glob_match(r->path, buf))
				return "a glob rule applies on Linux only to matches under the writable roots at launch";
			char *slash = strrchr(buf, '/');
			if (!slash || slash == buf)
				break;
			*slash = 0;
		}
	}
	return NULL;
}

static int verify_block(const struct zsp_verify_opts *o, const zsp_ir *ir0, size_t ti, const char *base,
			struct tally *t)
{
	const zsp_ir_test *test = &ir0->tests[ti];
	struct block b = { 0 };
	char scratch[4200];
	snprintf(scratch, sizeof(scratch), "%s/t%zu", base, ti + 1);
	b.scratch = scratch;
	const char *names[80], *values[80];
	size_t n = 0;
	char *owned[80];
	size_t nowned = 0;
	bool has_ws = false, has_home = false, has_tmp = false;
	for (size_t i = 0; i < test->ndefines && n < 60; i++) {
		const zsp_ir_define *d = &test->defines[i];
		names[n] = d->name;
		values[n] = d->value;
		if (d->value[0] == '/' && b.nmaps < 60) {
			char *to;
			if (asprintf(&to, "%s/%s", scratch, d->name) < 0)
				return ZSP_EINTERNAL;
			owned[nowned++] = to;
			b.maps[b.nmaps++] = (struct map){ d->value, to };
			values[n] = to;
			mkdirs(to, 0755);
		}
		has_ws |= !strcmp(d->name, "WORKSPACE");
		has_home |= !strcmp(d->name, "HOME");
		has_tmp |= !strcmp(d->name, "TMPDIR");
		n++;
	}
	const char *defaults[3] = { "WORKSPACE", "HOME", "TMPDIR" };
	bool given[3] = { has_ws, has_home, has_tmp };
	for (int k = 0; k < 3; k++) {
		if (given[k])
			continue;
		char *to;
		if (asprintf(&to, "%s/%s", scratch, defaults[k]) < 0)
			return ZSP_EINTERNAL;
		owned[nowned++] = to;
		mkdirs(to, 0755);
		names[n] = defaults[k];
		values[n++] = to;
	}
	/* a parameter the block leaves without a value gets a directory of its own: the sandbox
	 * needs every path resolved (the oracle then judges the same, resolved, policy) */
	const zsp_ir_policy *p0 = zsp_ir_find_policy(ir0, test->policy);
	for (size_t i = 0; p0 && i < p0->nparams && n < 75; i++) {
		const zsp_ir_param *pp = &p0->params[i];
		bool known = pp->value != NULL || !strcmp(pp->name, "UID") || !strcmp(pp->name, "USER");
		for (size_t j = 0; j < n && !known; j++)
			known = !strcmp(names[j], pp->name);
		if (known)
			continue;
		char *to;
		if (asprintf(&to, "%s/%s", scratch, pp->name) < 0)
			return ZSP_EINTERNAL;
		owned[nowned++] = to;
		mkdirs(to, 0755);
		names[n] = pp->name;
		values[n++] = to;
	}
	char uid[32];
	snprintf(uid, sizeof(uid), "%u", (unsigned)getuid());
	names[n] = "UID";
	values[n++] = uid;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(names[i], "WORKSPACE"))
			b.workspace = values[i];
		if (!strcmp(names[i], "HOME"))
			b.home = values[i];
	}

	/* translate and create the fixtures before the sandbox is planned: what exists decides
	 * what is bound and what is masked */
	size_t ne = test->nexpects;
	char **paths = calloc(ne + 1, sizeof(char *));
	const char **kinds = calloc(ne + 1, sizeof(char *));
	if (!paths || !kinds)
		return ZSP_EINTERNAL;
	for (size_t i = 0; i < ne; i++) {
		const zsp_ir_request *rq = &test->expects[i].req;
		kinds[i] = rq->kind;
		if (is_fs_kind(rq->kind) && rq->nargs == 1)
			paths[i] = translate(&b, rq->args[0]);
	}
	make_fixtures(&b, paths, kinds, ne);

	zsp_compiler *c = zsp_compiler_new();
	zsp_policy_set *set = NULL;
	int rc = ZSP_EINTERNAL;
	if (!c)
		goto out;
	zsp_compiler_set_sink(c, to_stderr, NULL);
	quiet(c);
	for (size_t i = 0; i < o->nincludes; i++)
		zsp_compiler_add_include_dir(c, o->includes[i]);
	for (size_t i = 0; i < n; i++)
		zsp_compiler_define(c, names[i], values[i]);
	rc = zsp_compile_file(c, o->file, &set);
	zsp_compiler_free(c);
	if (rc != ZSP_OK)
		goto out;
	const zsp_ir_policy *p = zsp_ir_find_policy(zsp_policy_set_ir(set), test->policy);
	zsp_session *s = NULL;
	zsp_sandbox sb = { .fd = -1 };
	zsp_arena *a = zsp_arena_new();
	zsp_diag d;
	zsp_diag_init(&d, to_stderr, NULL);
	zsp_diag_option(&d, "no-unenforced");
	zsp_launch l;
	rc = ZSP_EINTERNAL;
	if (!p || !a || zsp_session_new(set, test->policy, b.workspace, b.home, &s) != ZSP_OK)
		goto out_a;
	/* the probe is given absolute paths: "/" is a directory every sandbox has */
	/* through the exec step, as zsp-run runs a command: the connect supervisor needs it */
	zsp_linux_opts lo = { .chdir = "/", .proc = !o->no_proc, .exec_step = true, .runner_masks = true };
	/* the block's caches and private /tmp: a state directory of the scratch directory's own */
	char state[4300], why[4400];
	snprintf(state, sizeof(state), "%s/state", scratch);
	if (zsp_linux_needs_state(p) && zsp_sandbox_open(state, p->name, b.workspace, &sb, why, sizeof(why)) != ZSP_OK) {
		fprintf(stderr, "zsp-run: --verify: %s\n", why);
		rc = ZSP_RUN_ESETUP;
		goto out_a;
	}
	lo.sandbox_dir = sb.dir;
	if (zsp_launch_prepare(&l, p, a, &d, &lo) != ZSP_OK) {
		fprintf(stderr, "zsp-run: --verify: cannot lower policy `%s` for Linux\n", p->name);
		zsp_launch_release(&l);
		rc = ZSP_RUN_ESETUP;
		goto out_a;
	}
	l.sandbox = sb.fd >= 0 ? &sb : NULL;
	rc = ZSP_OK;
	const char *probe = probe_path();
	/* the probe is bound read-only at its own path after every other mount: a policy that
	 * hides it (or shows no root at all) still gets probed; that is the one thing verify adds */
	char **argv2 = zsp_arena_calloc(a, l.plan.argc + 4, sizeof(char *));
	if (!argv2) {
		rc = ZSP_EINTERNAL;
		zsp_launch_release(&l);
		goto out_a;
	}
	memcpy(argv2, l.plan.argv, l.plan.argc * sizeof(char *));
	argv2[l.plan.argc] = "--ro-bind";
	argv2[l.plan.argc + 1] = (char *)probe;
	argv2[l.plan.argc + 2] = (char *)probe;
	l.plan.argv = argv2;
	l.plan.argc += 3;
	/* the probe's connect tells the sandbox's own network namespace from ours; when ours cannot
	 * be named it is not told, and a loopback the sandbox reaches counts as reached */
	struct stat netst;
	char netns_arg[48];
	char *netns = NULL;
	if (stat("/proc/self/ns/net", &netst) == 0) {
		snprintf(netns_arg, sizeof(netns_arg), "--outside-netns=%llu", (unsigned long long)netst.st_ino);
		netns = netns_arg;
	}
	for (size_t i = 0; i < ne; i++) {
		const zsp_ir_expect *x = &test->expects[i];
		const char *kind = x->req.kind;
		bool sandbox_kind = is_fs_kind(kind) || !strcmp(kind, "connect") || !strcmp(kind, "syscall");
		if (!sandbox_kind || x->req.nargs != 1)
			continue;
		const char *arg = paths[i] ? paths[i] : x->req.args[0];
		char *req = request_text(kind, arg);
		int answer = -1;
		char loc[256];
		zsp_loc_string(loc, sizeof(loc), x->loc);
		if (!req || zsp_session_decide(s, req, 0, &answer, NULL) != ZSP_OK) {
			printf("%s: skipped: %s \"%s\": the oracle cannot decide it\n", loc, kind, x->req.args[0]);
			t->skipped++;
			free(req);
			continue;
		}
		free(req);
		bool oracle_allows = answer == ZSP_ANSWER_ALLOW;
		/* connect: the address the kernel would see (`127.1` is 127.0.0.1: doc/oracle.md
		 * "Hosts"); the sandbox's own loopback is not the host's (the probe tells them apart) */
		char host[ZSP_HOST_MAX], target[ZSP_HOST_MAX + 8];
		zsp_host_kind hk;
		zsp_host_error he;
		unsigned port;
		if (!strcmp(kind, "connect") && zsp_hostport_parse(arg, 0, host, &hk, &port, &he)) {
			snprintf(target, sizeof(target), "%s:%u", host, port);
			arg = target;
		}
		char *argv[] = { (char *)probe, (char *)kind, (char *)arg, strcmp(kind, "connect") ? NULL : netns, NULL };
		struct probe_call call = { &l, argv };
		char kline[1024], bline[1024];
		int krc, brc;
		if (is_fs_kind(kind)) {
			enum outcome outcome = capture(outside, &call, bline, sizeof(bline), &brc);
			if (outcome != OUT_ALLOWED) {
				printf("%s: skipped: %s \"%s\": the host itself refuses it (%s)\n", loc, kind,
				       x->req.args[0], bline[0] ? bline : "no answer from the probe");
				t->skipped++;
				continue;
			}
		}
		enum outcome k = capture(in_sandbox, &call, kline, sizeof(kline), &krc);
		if (krc == ZSP_RUN_ESETUP && k == OUT_UNKNOWN) {
			printf("%s: error: the sandbox could not be set up: %s\n", loc, kline);
			rc = ZSP_RUN_ESETUP;
			break;
		}
		if (k == OUT_UNKNOWN) {
			printf("%s: skipped: %s \"%s\": the probe could not tell (%s)\n", loc, kind, x->req.args[0],
			       kline[0] ? kline : "no answer");
			t->skipped++;
			continue;
		}
		bool kernel_allows = k == OUT_ALLOWED;
		const char *verdict = answer == ZSP_ANSWER_ALLOW ? "allow" : answer == ZSP_ANSWER_DENY ? "deny" : "ask";
		if (kernel_allows == oracle_allows) {
			t->agree++;
			if (o->verbose)
				printf("%s: agree: %s \"%s\": oracle %s, kernel %s\n", loc, kind, x->req.args[0], verdict,
				       kline);
			continue;
		}
		const char *gap = known_gap(p, kind, arg, oracle_allows, k);
		if (gap) {
			t->gap++;
			printf("%s: known gap: %s \"%s\": oracle %s, kernel %s: %s\n", loc, kind, x->req.args[0],
			       verdict, kline, gap);
			continue;
		}
		t->differ++;
		printf("%s: DIFFER: %s \"%s\": oracle %s, kernel %s", loc, kind, x->req.args[0], verdict, kline);
		if (paths[i] && strcmp(paths[i], x->req.args[0]) != 0)
			printf(" (probed as %s)", paths[i]);
		printf("\n");
	}
	zsp_launch_release(&l);
out_a:
	zsp_sandbox_close(&sb);
	zsp_session_free(s);
	zsp_arena_free(a);
out:
	zsp_policy_set_free(set);
	for (size_t i = 0; i < ne; i++)
		free(paths[i]);
	free(paths);
	free(kinds);
	for (size_t i = 0; i < nowned; i++)
		free(owned[i]);
	rm_tree(scratch);
	return rc;
}

int zsp_verify(const struct zsp_verify_opts *o)
{
	zsp_compiler *c = zsp_compiler_new();
	zsp_policy_set *set = NULL;
	if (!c)
		return ZSP_EINTERNAL;
	zsp_compiler_set_sink(c, to_stderr, NULL);
	quiet(c);
	for (size_t i = 0; i < o->nincludes; i++)
		zsp_compiler_add_include_dir(c, o->includes[i]);
	int rc = zsp_compile_file(c, o->file, &set);
	zsp_compiler_free(c);
	if (rc != ZSP_OK) {
		zsp_policy_set_free(set);
		return rc;
	}
	const zsp_ir *ir = zsp_policy_set_ir(set);
	const char *env = getenv("ZSP_VERIFY_DIR");
	const char *dir = env && *env ? env : access("/var/tmp", W_OK) == 0 ? "/var/tmp" : "/tmp";
	char base[4096];
	snprintf(base, sizeof(base), "%s/zsp-verify.XXXXXX", dir);
	if (!mkdtemp(base)) {
		fprintf(stderr, "zsp-run: --verify: cannot create a scratch directory in %s: %s\n", dir, strerror(errno));
		zsp_policy_set_free(set);
		return ZSP_RUN_ESETUP;
	}
	struct tally t = { 0 };
	for (size_t i = 0; i < ir->ntests && rc == ZSP_OK; i++) {
		if (o->policy && strcmp(ir->tests[i].policy, o->policy) != 0)
			continue;
		rc = verify_block(o, ir, i, base, &t);
	}
	rm_tree(base);
	zsp_policy_set_free(set);
	if (rc != ZSP_OK)
		return rc;
	printf("verify: %u agree, %u differ, %u known gaps, %u skipped\n", t.agree, t.differ, t.gap, t.skipped);
	return t.differ ? 1 : 0;
}
