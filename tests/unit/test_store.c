/* test_store.c: CUnit tests for runtime/store.c: validation, scopes, matchers, precedence,
 * expiry, once-grants, migrations, and the refusals (corrupt, permissions, symlinks, no runtime). */
#include <CUnit/Basic.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "compiler/zsp.h"
#include "runtime/store.h"

static char root[128];     /* under $TMPDIR: the state directories */
static char shm_root[128]; /* on a tmpfs (/dev/shm): the runtime directories */
static int seq;
static char err[1024];

/* Fresh directories: root/N/state, and shm_root/N/run (the runtime dir's parent, on a tmpfs as
 * thread grants require); run is set to shm_root/N/run/zsp. */
static void fresh(char *state, char *run)
{
	char dir[256];
	snprintf(dir, sizeof dir, "%s/%d", root, ++seq);
	mkdir(dir, 0700);
	snprintf(state, 512, "%s/state", dir);
	snprintf(dir, sizeof dir, "%s/%d", shm_root, seq);
	mkdir(dir, 0700);
	snprintf(run, 512, "%s/run", dir);
	mkdir(run, 0700);
	strcat(run, "/zsp");
}

static zsp_store *open_store(bool memory)
{
	char state[512], run[512];
	fresh(state, run);
	zsp_store_where w = { .state_dir = state, .runtime_dir = run, .threads_in_memory = memory };
	zsp_store *s = NULL;
	err[0] = '\0';
	if (zsp_store_open(&w, &s, err, sizeof err) != ZSP_OK)
		fprintf(stderr, "open: %s\n", err);
	return s;
}

static int64_t add(zsp_store *s, zsp_grant_scope scope, const char *thread, const char *project,
		   const char *tool, zsp_grant_match m, const char *pattern, int decision)
{
	zsp_grant g = { .scope = scope, .thread = thread, .project = project, .tool = tool,
			.match = m, .pattern = pattern, .decision = decision, .policy = "p",
			.who = "tester" };
	int64_t id = 0;
	if (zsp_store_add(s, &g, &id, err, sizeof err) != ZSP_OK) {
		fprintf(stderr, "add: %s\n", err);
		return -1;
	}
	return id;
}

/* The answer for tool arg: ALLOW/DENY, or -1 none, -2 error (-3: an error that claimed an answer). */
static int ask(zsp_store *s, const char *tool, const char *arg, const char *thread,
	       const char *project, int64_t *id)
{
	int d = -1;
	int64_t gid = 0;
	bool found = true;
	int rc = zsp_store_lookup(s, tool, arg, thread, project, 1000, &found, &d, &gid, err, sizeof err);
	if (id)
		*id = gid;
	if (rc != ZSP_OK)
		return found ? -3 : -2;   /* an error must never come with an answer */
	return found ? d : -1;
}

static void test_validation(void)
{
	zsp_store *s = open_store(true);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	struct {
		zsp_grant g;
		const char *want;
	} bad[] = {
		{ { .scope = 9, .tool = "t", .pattern = "x", .decision = ZSP_ANSWER_ALLOW }, "scope" },
		{ { .scope = ZSP_GRANT_GLOBAL, .match = 7, .tool = "t", .pattern = "x", .decision = ZSP_ANSWER_ALLOW }, "matcher" },
		{ { .scope = ZSP_GRANT_GLOBAL, .tool = "t", .pattern = "x", .decision = ZSP_ANSWER_ASK }, "allow or deny" },
		/* 0 is no answer: a spec whose decision was left out is refused, never an allow */
		{ { .scope = ZSP_GRANT_GLOBAL, .tool = "t", .pattern = "x" }, "allow or deny" },
		{ { .scope = ZSP_GRANT_GLOBAL, .tool = "", .pattern = "x", .decision = ZSP_ANSWER_ALLOW }, "tool" },
		{ { .scope = ZSP_GRANT_GLOBAL, .tool = "t", .match = ZSP_MATCH_PREFIX, .decision = ZSP_ANSWER_ALLOW }, "pattern" },
		{ { .scope = ZSP_GRANT_THREAD, .tool = "t", .pattern = "x", .decision = ZSP_ANSWER_ALLOW }, "thread ID" },
		{ { .scope = ZSP_GRANT_GLOBAL, .thread = "t1", .tool = "t", .pattern = "x", .decision = ZSP_ANSWER_ALLOW }, "takes no thread" },
		{ { .scope = ZSP_GRANT_PROJECT, .tool = "t", .pattern = "x", .decision = ZSP_ANSWER_ALLOW }, "absolute canonical" },
		{ { .scope = ZSP_GRANT_PROJECT, .project = "rel/dir", .tool = "t", .pattern = "x", .decision = ZSP_ANSWER_ALLOW }, "absolute canonical" },
		{ { .scope = ZSP_GRANT_PROJECT, .project = "/a/../b", .tool = "t", .pattern = "x", .decision = ZSP_ANSWER_ALLOW }, "absolute canonical" },
		{ { .scope = ZSP_GRANT_GLOBAL, .project = "/a", .tool = "t", .pattern = "x", .decision = ZSP_ANSWER_ALLOW }, "only a project" },
		{ { .scope = ZSP_GRANT_GLOBAL, .tool = "t", .match = ZSP_MATCH_PREFIX, .pattern = "(", .decision = ZSP_ANSWER_ALLOW }, "does not compile" },
		{ { .scope = ZSP_GRANT_GLOBAL, .tool = "t", .match = ZSP_MATCH_PATH, .pattern = "a/b", .decision = ZSP_ANSWER_ALLOW }, "absolute directory" },
		{ { .scope = ZSP_GRANT_GLOBAL, .tool = "t", .match = ZSP_MATCH_HOST, .pattern = "a..b", .decision = ZSP_ANSWER_ALLOW }, "host name" },
		{ { .scope = ZSP_GRANT_GLOBAL, .tool = "t", .match = ZSP_MATCH_HOST, .pattern = "*.*.b", .decision = ZSP_ANSWER_ALLOW }, "host name" },
		{ { .scope = ZSP_GRANT_GLOBAL, .tool = "t", .match = ZSP_MATCH_HOST, .pattern = "a b", .decision = ZSP_ANSWER_ALLOW }, "host name" },
		{ { .scope = ZSP_GRANT_GLOBAL, .tool = "t", .pattern = "x", .expires = -1, .decision = ZSP_ANSWER_ALLOW }, "negative" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		CU_ASSERT_EQUAL(zsp_store_validate(&bad[i].g, err, sizeof err), ZSP_EUSAGE);
		CU_ASSERT(strncmp(err, "invalid grant: ", 15) == 0 && strstr(err, bad[i].want));
		err[0] = '\0';
		CU_ASSERT_EQUAL(zsp_store_add(s, &bad[i].g, NULL, err, sizeof err), ZSP_EUSAGE);
		if (!strstr(err, bad[i].want)) {
			fprintf(stderr, "case %zu: '%s' lacks '%s'\n", i, err, bad[i].want);
			CU_FAIL("message");
		}
	}
	CU_ASSERT_EQUAL(zsp_store_add(s, NULL, NULL, err, sizeof err), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_store_validate(NULL, err, sizeof err), ZSP_EUSAGE);
	zsp_grant ok = { .scope = ZSP_GRANT_PROJECT, .project = "/a/b", .tool = "t",
			 .match = ZSP_MATCH_HOST, .pattern = "*.example.com", .decision = ZSP_ANSWER_DENY };
	CU_ASSERT_EQUAL(zsp_store_validate(&ok, err, sizeof err), ZSP_OK);
	zsp_store_close(s);
}

static void test_matchers(void)
{
	zsp_store *s = open_store(true);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT(add(s, ZSP_GRANT_GLOBAL, NULL, NULL, "terminal", ZSP_MATCH_EXACT,
		      "cargo build --release", ZSP_ANSWER_ALLOW) > 0);
	CU_ASSERT(add(s, ZSP_GRANT_GLOBAL, NULL, NULL, "terminal", ZSP_MATCH_PREFIX,
		      "^cargo\\s+test(\\s|$)", ZSP_ANSWER_ALLOW) > 0);
	CU_ASSERT(add(s, ZSP_GRANT_GLOBAL, NULL, NULL, "edit_file", ZSP_MATCH_PATH, "/a", ZSP_ANSWER_ALLOW) > 0);
	CU_ASSERT(add(s, ZSP_GRANT_GLOBAL, NULL, NULL, "fetch", ZSP_MATCH_HOST, "*.Example.com", ZSP_ANSWER_ALLOW) > 0);
	CU_ASSERT(add(s, ZSP_GRANT_GLOBAL, NULL, NULL, "connect", ZSP_MATCH_HOST, "api.test.org", ZSP_ANSWER_ALLOW) > 0);
	struct {
		const char *tool, *arg;
		int want;
	} t[] = {
		{ "terminal", "cargo build --release", ZSP_ANSWER_ALLOW },
		{ "terminal", "cargo build --release ", -1 },
		{ "terminal", "cargo build", -1 },
		{ "edit_file", "cargo build --release", -1 },   /* tool must match */
		{ "terminal", "cargo test", ZSP_ANSWER_ALLOW },
		{ "terminal", "cargo  test --all", ZSP_ANSWER_ALLOW },
		{ "terminal", "cargo testing", -1 },
		{ "terminal", "xcargo test", -1 },
		{ "terminal", "CARGO test", -1 },                 /* case-sensitive */
		{ "edit_file", "/a", ZSP_ANSWER_ALLOW },
		{ "edit_file", "/a/b/c.txt", ZSP_ANSWER_ALLOW },
		{ "edit_file", "/ab", -1 },
		{ "edit_file", "/ab/c", -1 },
		{ "edit_file", "/a/../etc/passwd", -1 },
		{ "edit_file", "//a//b/./c", ZSP_ANSWER_ALLOW },
		{ "edit_file", "a/b", -1 },
		{ "fetch", "https://api.example.com/v1", ZSP_ANSWER_ALLOW },
		{ "fetch", "https://a.b.EXAMPLE.com:8443/x?y", ZSP_ANSWER_ALLOW },
		{ "fetch", "https://user@x.example.com/", ZSP_ANSWER_ALLOW },
		{ "fetch", "https://example.com/", -1 },           /* never the apex */
		{ "fetch", "https://badexample.com/", -1 },
		{ "fetch", "https://example.com.evil.net/", -1 },
		{ "fetch", "https://x.example.com@evil.net/", -1 },
		{ "connect", "api.test.org:443", ZSP_ANSWER_ALLOW },
		{ "connect", "api.test.org", ZSP_ANSWER_ALLOW },
		{ "connect", "x.api.test.org:443", -1 },
		{ "connect", "test.org:443", -1 },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		int got = ask(s, t[i].tool, t[i].arg, NULL, NULL, NULL);
		if (got != t[i].want) {
			fprintf(stderr, "%s '%s': got %d, want %d\n", t[i].tool, t[i].arg, got, t[i].want);
			CU_FAIL("match");
		}
	}
	zsp_store_close(s);
}

static void test_precedence(void)
{
	zsp_store *s = open_store(true);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	int64_t g = add(s, ZSP_GRANT_GLOBAL, NULL, NULL, "terminal", ZSP_MATCH_EXACT, "make", ZSP_ANSWER_ALLOW);
	int64_t p = add(s, ZSP_GRANT_PROJECT, NULL, "/src/p", "terminal", ZSP_MATCH_EXACT, "make", ZSP_ANSWER_ALLOW);
	int64_t t = add(s, ZSP_GRANT_THREAD, "T1", NULL, "terminal", ZSP_MATCH_EXACT, "make", ZSP_ANSWER_ALLOW);
	int64_t id;
	CU_ASSERT_EQUAL(ask(s, "terminal", "make", NULL, NULL, &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, g);
	CU_ASSERT_EQUAL(ask(s, "terminal", "make", NULL, "/src/p", &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, p);
	CU_ASSERT_EQUAL(ask(s, "terminal", "make", NULL, "/src/other", &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, g);
	CU_ASSERT_EQUAL(ask(s, "terminal", "make", "T1", "/src/p", &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, t);
	CU_ASSERT(t >= (INT64_C(1) << 40));   /* thread ids never collide with grants.db ids */
	/* a once grant is the narrowest; it answers once */
	int64_t o = add(s, ZSP_GRANT_ONCE, "T1", NULL, "terminal", ZSP_MATCH_EXACT, "make", ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(ask(s, "terminal", "make", "T2", NULL, &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, g);   /* another thread's once grant does not apply */
	CU_ASSERT_EQUAL(ask(s, "terminal", "make", "T1", NULL, &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, o);
	CU_ASSERT_EQUAL(ask(s, "terminal", "make", "T1", NULL, &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, t);
	/* deny over allow, whatever the scopes */
	int64_t d = add(s, ZSP_GRANT_GLOBAL, NULL, NULL, "terminal", ZSP_MATCH_PREFIX, "^make", ZSP_ANSWER_DENY);
	CU_ASSERT_EQUAL(ask(s, "terminal", "make", "T1", "/src/p", &id), ZSP_ANSWER_DENY);
	CU_ASSERT_EQUAL(id, d);
	/* a once allow is not consumed when a deny answers */
	o = add(s, ZSP_GRANT_ONCE, NULL, NULL, "terminal", ZSP_MATCH_EXACT, "make", ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(ask(s, "terminal", "make", NULL, NULL, &id), ZSP_ANSWER_DENY);
	bool found = false;
	CU_ASSERT_EQUAL(zsp_store_revoke(s, d, &found, err, sizeof err), ZSP_OK);
	CU_ASSERT(found);
	CU_ASSERT_EQUAL(zsp_store_revoke(s, d, &found, err, sizeof err), ZSP_OK);
	CU_ASSERT(!found);
	CU_ASSERT_EQUAL(zsp_store_revoke(s, d, NULL, err, sizeof err), ZSP_OK);
	CU_ASSERT_EQUAL(ask(s, "terminal", "make", NULL, NULL, &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, o);
	/* revoking a thread grant */
	CU_ASSERT_EQUAL(zsp_store_revoke(s, t, &found, err, sizeof err), ZSP_OK);
	CU_ASSERT(found);
	CU_ASSERT_EQUAL(ask(s, "terminal", "make", "T1", "/src/p", &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, p);
	found = true;
	CU_ASSERT_EQUAL(zsp_store_lookup(s, "", "x", NULL, NULL, 0, &found, &(int){ 0 }, NULL, err, sizeof err),
			ZSP_EUSAGE);
	CU_ASSERT(!found);
	zsp_store_close(s);
}

/* Two arguments (copy_path, move_path): both must be granted; a once grant is used only then,
 * together with the other argument's, and one grant covering both goes once. */
static void test_two_arguments(void)
{
	zsp_store *s = open_store(true);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	int64_t src = add(s, ZSP_GRANT_ONCE, NULL, NULL, "copy_path", ZSP_MATCH_PATH, "/w/src", ZSP_ANSWER_ALLOW);
	const char *both[2] = { "/w/src/a.c", "/w/out/a.c" };
	int d = -1;
	int64_t id = 0;
	bool found;
	/* the destination has no grant: no answer, and the source's once grant is still there */
	CU_ASSERT_EQUAL(zsp_store_lookup_all(s, "copy_path", both, 2, NULL, NULL, 1000, &found, &d, &id, err, sizeof err), ZSP_OK);
	CU_ASSERT(!found);
	CU_ASSERT_EQUAL(ask(s, "copy_path", "/w/src/b.c", NULL, NULL, &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, src);
	/* used by that single-argument lookup: gone */
	CU_ASSERT_EQUAL(ask(s, "copy_path", "/w/src/b.c", NULL, NULL, &id), -1);

	src = add(s, ZSP_GRANT_ONCE, NULL, NULL, "copy_path", ZSP_MATCH_PATH, "/w/src", ZSP_ANSWER_ALLOW);
	int64_t out = add(s, ZSP_GRANT_PROJECT, NULL, "/w", "copy_path", ZSP_MATCH_PATH, "/w/out", ZSP_ANSWER_ALLOW);
	/* another project: the destination is not granted, nothing is consumed */
	CU_ASSERT_EQUAL(zsp_store_lookup_all(s, "copy_path", both, 2, NULL, "/x", 1000, &found, &d, &id, err, sizeof err), ZSP_OK);
	CU_ASSERT(!found);
	CU_ASSERT_EQUAL(zsp_store_lookup_all(s, "copy_path", both, 2, NULL, "/w", 1000, &found, &d, &id, err, sizeof err), ZSP_OK);
	CU_ASSERT(found);
	CU_ASSERT_EQUAL(d, ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, src);
	/* the once grant went with that answer; the project grant stays */
	CU_ASSERT_EQUAL(zsp_store_lookup_all(s, "copy_path", both, 2, NULL, "/w", 1000, &found, &d, &id, err, sizeof err), ZSP_OK);
	CU_ASSERT(!found);
	CU_ASSERT_EQUAL(ask(s, "copy_path", "/w/out/x", NULL, "/w", &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, out);

	/* one once grant covering both paths answers once */
	int64_t tree = add(s, ZSP_GRANT_ONCE, NULL, NULL, "move_path", ZSP_MATCH_PATH, "/w", ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(zsp_store_lookup_all(s, "move_path", both, 2, NULL, NULL, 1000, &found, &d, &id, err, sizeof err), ZSP_OK);
	CU_ASSERT(found);
	CU_ASSERT_EQUAL(d, ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, tree);
	CU_ASSERT_EQUAL(zsp_store_lookup_all(s, "move_path", both, 2, NULL, NULL, 1000, &found, &d, &id, err, sizeof err), ZSP_OK);
	CU_ASSERT(!found);

	/* a deny on the destination answers deny, and the source's once allow is not consumed */
	src = add(s, ZSP_GRANT_ONCE, NULL, NULL, "move_path", ZSP_MATCH_PATH, "/w/src", ZSP_ANSWER_ALLOW);
	int64_t no = add(s, ZSP_GRANT_GLOBAL, NULL, NULL, "move_path", ZSP_MATCH_PATH, "/w/out", ZSP_ANSWER_DENY);
	CU_ASSERT_EQUAL(zsp_store_lookup_all(s, "move_path", both, 2, NULL, NULL, 1000, &found, &d, &id, err, sizeof err), ZSP_OK);
	CU_ASSERT(found);
	CU_ASSERT_EQUAL(d, ZSP_ANSWER_DENY);
	CU_ASSERT_EQUAL(id, no);
	CU_ASSERT_EQUAL(ask(s, "move_path", "/w/src/a.c", NULL, NULL, &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, src);

	/* no argument, or too many: an error, never an answer */
	CU_ASSERT_EQUAL(zsp_store_lookup_all(s, "move_path", both, 0, NULL, NULL, 1000, &found, &d, &id, err, sizeof err), ZSP_EUSAGE);
	CU_ASSERT(!found);
	const char *many[ZSP_LOOKUP_MAX_ARGS + 1] = { 0 };
	CU_ASSERT_EQUAL(zsp_store_lookup_all(s, "move_path", many, ZSP_LOOKUP_MAX_ARGS + 1, NULL, NULL, 1000, &found, &d, &id, err, sizeof err), ZSP_EUSAGE);
	CU_ASSERT(!found);
	zsp_store_close(s);
}

struct collect {
	int n;
	int64_t ids[16];
	char last_pattern[64];
};

static int collect_grant(void *ctx, const zsp_grant *g)
{
	struct collect *c = ctx;
	if (c->n < 16)
		c->ids[c->n] = g->id;
	c->n++;
	snprintf(c->last_pattern, sizeof c->last_pattern, "%s", g->pattern);
	return 0;
}

static int stop_at_first(void *ctx, const zsp_grant *g)
{
	(*(int *)ctx)++;
	return 1;
}

static void test_expiry_list_end_thread(void)
{
	zsp_store *s = open_store(false);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_PTR_NOT_NULL(zsp_store_threads_path(s));
	CU_ASSERT_PTR_NOT_NULL(strstr(zsp_store_grants_path(s), "/grants.db"));
	zsp_grant g = { .scope = ZSP_GRANT_GLOBAL, .tool = "read", .match = ZSP_MATCH_PATH,
			.pattern = "/x/y/", .decision = ZSP_ANSWER_ALLOW, .expires = 1500 };
	int64_t e;
	CU_ASSERT_EQUAL(zsp_store_add(s, &g, &e, err, sizeof err), ZSP_OK);
	add(s, ZSP_GRANT_THREAD, "T9", NULL, "read", ZSP_MATCH_EXACT, "a", ZSP_ANSWER_ALLOW);
	add(s, ZSP_GRANT_ONCE, "T9", NULL, "read", ZSP_MATCH_EXACT, "b", ZSP_ANSWER_ALLOW);
	add(s, ZSP_GRANT_ONCE, NULL, NULL, "read", ZSP_MATCH_EXACT, "c", ZSP_ANSWER_ALLOW);
	int d;
	bool found;
	CU_ASSERT_EQUAL(zsp_store_lookup(s, "read", "/x/y/z", NULL, NULL, 1499, &found, &d, NULL, err, sizeof err), ZSP_OK);
	CU_ASSERT(found);
	CU_ASSERT_EQUAL(zsp_store_lookup(s, "read", "/x/y/z", NULL, NULL, 1500, &found, &d, NULL, err, sizeof err), ZSP_OK);
	CU_ASSERT(!found);
	struct collect c = { 0 };
	CU_ASSERT_EQUAL(zsp_store_list(s, collect_grant, &c, err, sizeof err), ZSP_OK);
	CU_ASSERT_EQUAL(c.n, 4);
	CU_ASSERT_EQUAL(c.ids[0], e);
	CU_ASSERT(c.ids[0] < c.ids[1] && c.ids[1] < c.ids[2] && c.ids[2] < c.ids[3]);
	int stops = 0;
	CU_ASSERT_EQUAL(zsp_store_list(s, stop_at_first, &stops, err, sizeof err), ZSP_OK);
	CU_ASSERT_EQUAL(stops, 1);
	int removed = -1;
	CU_ASSERT_EQUAL(zsp_store_gc(s, 1499, &removed, err, sizeof err), ZSP_OK);
	CU_ASSERT_EQUAL(removed, 0);
	CU_ASSERT_EQUAL(zsp_store_gc(s, 1500, &removed, err, sizeof err), ZSP_OK);
	CU_ASSERT_EQUAL(removed, 1);
	CU_ASSERT_EQUAL(zsp_store_end_thread(s, "T9", &removed, err, sizeof err), ZSP_OK);
	CU_ASSERT_EQUAL(removed, 2);
	c.n = 0;
	CU_ASSERT_EQUAL(zsp_store_list(s, collect_grant, &c, err, sizeof err), ZSP_OK);
	CU_ASSERT_EQUAL(c.n, 1);
	CU_ASSERT_STRING_EQUAL(c.last_pattern, "c");
	CU_ASSERT_EQUAL(zsp_store_end_thread(s, "", &removed, err, sizeof err), ZSP_EUSAGE);
	zsp_store_close(s);
}

static void test_once_persisted(void)
{
	char state[512], run[512];
	fresh(state, run);
	zsp_store_where w = { .state_dir = state, .runtime_dir = run };
	zsp_store *a = NULL, *b = NULL;
	CU_ASSERT_EQUAL_FATAL(zsp_store_open(&w, &a, err, sizeof err), ZSP_OK);
	CU_ASSERT_EQUAL_FATAL(zsp_store_open(&w, &b, err, sizeof err), ZSP_OK);
	int64_t o = add(a, ZSP_GRANT_ONCE, NULL, NULL, "terminal", ZSP_MATCH_EXACT, "ls", ZSP_ANSWER_ALLOW);
	int64_t id;
	CU_ASSERT_EQUAL(ask(b, "terminal", "ls", NULL, NULL, &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, o);
	CU_ASSERT_EQUAL(ask(a, "terminal", "ls", NULL, NULL, &id), -1);
	CU_ASSERT_EQUAL(ask(b, "terminal", "ls", NULL, NULL, &id), -1);
	/* files 0600 in a 0700 directory */
	struct stat st;
	CU_ASSERT_EQUAL(stat(state, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0700);
	CU_ASSERT_EQUAL(stat(zsp_store_grants_path(a), &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	CU_ASSERT_EQUAL(stat(run, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0700);
	zsp_store_close(a);
	zsp_store_close(b);
}

struct audit_collect {
	int n;
	char request[64], rule[64];
};

static int collect_audit(void *ctx, const zsp_audit_record *r)
{
	struct audit_collect *c = ctx;
	c->n++;
	snprintf(c->request, sizeof c->request, "%s", r->request);
	snprintf(c->rule, sizeof c->rule, "%s", r->rule ? r->rule : "(null)");
	return 0;
}

static void test_audit(void)
{
	zsp_store *s = open_store(true);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	zsp_audit_record r = { .time = 100, .request = "terminal \"cargo test\"",
			       .decision = ZSP_ANSWER_ALLOW, .reason = "grant", .rule = "grant 3",
			       .policy = "p", .policy_hash = "ab12" };
	CU_ASSERT_EQUAL(zsp_store_audit(s, &r, err, sizeof err), ZSP_OK);
	r.time = 200;
	r.request = "read \"/etc\"";
	r.rule = NULL;
	CU_ASSERT_EQUAL(zsp_store_audit(s, &r, err, sizeof err), ZSP_OK);
	struct audit_collect c = { 0 };
	CU_ASSERT_EQUAL(zsp_store_audit_list(s, 0, collect_audit, &c, err, sizeof err), ZSP_OK);
	CU_ASSERT_EQUAL(c.n, 2);
	CU_ASSERT_STRING_EQUAL(c.rule, "(null)");
	c.n = 0;
	CU_ASSERT_EQUAL(zsp_store_audit_list(s, 150, collect_audit, &c, err, sizeof err), ZSP_OK);
	CU_ASSERT_EQUAL(c.n, 1);
	CU_ASSERT_STRING_EQUAL(c.request, "read \"/etc\"");
	r.request = NULL;
	CU_ASSERT_EQUAL(zsp_store_audit(s, &r, err, sizeof err), ZSP_EUSAGE);
	zsp_store_close(s);
}

static void test_no_runtime_dir(void)
{
	char state[512], run[512];
	fresh(state, run);
	strcat(run, "/missing/zsp");
	zsp_store_where w = { .state_dir = state, .runtime_dir = run };
	zsp_store *s = NULL;
	CU_ASSERT_EQUAL_FATAL(zsp_store_open(&w, &s, err, sizeof err), ZSP_OK);
	CU_ASSERT_PTR_NULL(zsp_store_threads_path(s));
	err[0] = '\0';
	zsp_grant g = { .scope = ZSP_GRANT_THREAD, .thread = "T", .tool = "t", .pattern = "x",
			.decision = ZSP_ANSWER_ALLOW };
	CU_ASSERT_EQUAL(zsp_store_add(s, &g, NULL, err, sizeof err), ZSP_EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no runtime directory"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "never on disk"));
	/* the rest works, thread or not */
	CU_ASSERT(add(s, ZSP_GRANT_GLOBAL, NULL, NULL, "t", ZSP_MATCH_EXACT, "x", ZSP_ANSWER_ALLOW) > 0);
	CU_ASSERT_EQUAL(ask(s, "t", "x", "T", NULL, NULL), ZSP_ANSWER_ALLOW);
	zsp_store_close(s);

	/* a runtime directory on a persistent disk is no place for thread grants either */
	struct statfs fs;
	if (statfs(root, &fs) == 0 && fs.f_type != TMPFS_MAGIC && fs.f_type != RAMFS_MAGIC) {
		snprintf(run, sizeof run, "%s/diskrun", root);
		mkdir(run, 0700);
		strcat(run, "/zsp");
		w.runtime_dir = run;
		CU_ASSERT_EQUAL_FATAL(zsp_store_open(&w, &s, err, sizeof err), ZSP_OK);
		CU_ASSERT_PTR_NULL(zsp_store_threads_path(s));
		err[0] = '\0';
		CU_ASSERT_EQUAL(zsp_store_add(s, &g, NULL, err, sizeof err), ZSP_EIO);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "diskrun is not on a tmpfs"));
		struct stat st;
		CU_ASSERT_NOT_EQUAL(stat(run, &st), 0);   /* nothing was created there */
		zsp_store_close(s);
	} else {
		fprintf(stderr, "\n(%s is a tmpfs: the on-disk runtime directory case is skipped)\n", root);
	}
	/* and by default: XDG_RUNTIME_DIR unset */
	char *saved = getenv("XDG_RUNTIME_DIR") ? strdup(getenv("XDG_RUNTIME_DIR")) : NULL;
	unsetenv("XDG_RUNTIME_DIR");
	w.runtime_dir = NULL;
	CU_ASSERT_EQUAL_FATAL(zsp_store_open(&w, &s, err, sizeof err), ZSP_OK);
	CU_ASSERT_EQUAL(zsp_store_add(s, &g, NULL, err, sizeof err), ZSP_EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "XDG_RUNTIME_DIR"));
	zsp_store_close(s);
	if (saved) {
		setenv("XDG_RUNTIME_DIR", saved, 1);
		free(saved);
	}
}

static void test_defaults_from_env(void)
{
	char state[512], run[512];
	fresh(state, run);
	char *saved_state = getenv("XDG_STATE_HOME") ? strdup(getenv("XDG_STATE_HOME")) : NULL;
	char *saved_run = getenv("XDG_RUNTIME_DIR") ? strdup(getenv("XDG_RUNTIME_DIR")) : NULL;
	setenv("XDG_STATE_HOME", state, 1);    /* not created yet: made with its parents */
	run[strlen(run) - 4] = '\0';
	setenv("XDG_RUNTIME_DIR", run, 1);
	zsp_store *s = NULL;
	CU_ASSERT_EQUAL_FATAL(zsp_store_open(NULL, &s, err, sizeof err), ZSP_OK);
	char want[600];
	snprintf(want, sizeof want, "%s/zsp/grants.db", state);
	CU_ASSERT_STRING_EQUAL(zsp_store_grants_path(s), want);
	snprintf(want, sizeof want, "%s/zsp/threads.db", run);
	CU_ASSERT_STRING_EQUAL(zsp_store_threads_path(s), want);
	zsp_store_close(s);
	if (saved_state)
		setenv("XDG_STATE_HOME", saved_state, 1);
	else
		unsetenv("XDG_STATE_HOME");
	if (saved_run)
		setenv("XDG_RUNTIME_DIR", saved_run, 1);
	else
		unsetenv("XDG_RUNTIME_DIR");
	free(saved_state);
	free(saved_run);
}

static void test_migration(void)
{
	char state[512], run[512], path[600];
	fresh(state, run);
	mkdir(state, 0700);
	snprintf(path, sizeof path, "%s/grants.db", state);
	/* a version-0 database (empty, user_version 0), as an older zsp or sqlite3 left it */
	sqlite3 *db;
	CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
	CU_ASSERT_EQUAL(sqlite3_exec(db, "CREATE TABLE unrelated(x); PRAGMA user_version = 0", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	chmod(path, 0600);
	zsp_store_where w = { .state_dir = state, .threads_in_memory = true };
	zsp_store *s = NULL;
	CU_ASSERT_EQUAL_FATAL(zsp_store_open(&w, &s, err, sizeof err), ZSP_OK);
	CU_ASSERT(add(s, ZSP_GRANT_GLOBAL, NULL, NULL, "t", ZSP_MATCH_EXACT, "x", ZSP_ANSWER_ALLOW) > 0);
	zsp_store_close(s);
	CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
	sqlite3_stmt *st;
	sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);
	CU_ASSERT_EQUAL(sqlite3_step(st), SQLITE_ROW);
	CU_ASSERT_EQUAL(sqlite3_column_int(st, 0), 2);
	sqlite3_finalize(st);
	sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL);
	CU_ASSERT_EQUAL(sqlite3_step(st), SQLITE_ROW);
	CU_ASSERT_STRING_EQUAL((const char *)sqlite3_column_text(st, 0), "wal");
	sqlite3_finalize(st);
	/* a newer schema is refused */
	CU_ASSERT_EQUAL(sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	CU_ASSERT_EQUAL(zsp_store_open(&w, &s, err, sizeof err), ZSP_EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "newer zsp"));
	CU_ASSERT_PTR_NULL(s);
}

/* Runs the SQL of tests/store/NAME into the new database path (its test data). */
static bool load_fixture(const char *name, const char *path)
{
	const char *top = getenv("top_srcdir");
	char file[600];
	snprintf(file, sizeof file, "%s/tests/store/%s", top ? top : "..", name);
	FILE *f = fopen(file, "r");
	char *sql = f ? calloc(1, 1 << 16) : NULL;
	size_t n = sql ? fread(sql, 1, (1 << 16) - 1, f) : 0;
	if (f)
		fclose(f);
	sqlite3 *db = NULL;
	bool ok = n > 0 && sqlite3_open(path, &db) == SQLITE_OK &&
		  sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
	if (!ok)
		fprintf(stderr, "cannot load %s into %s: %s\n", file, path, db ? sqlite3_errmsg(db) : "");
	sqlite3_close(db);
	free(sql);
	chmod(path, 0600);
	return ok;
}

struct decisions {
	int d[16];
	size_t n;
};

static int collect_grant_decision(void *ctx, const zsp_grant *g)
{
	struct decisions *c = ctx;
	if (c->n < 16)
		c->d[c->n++] = g->decision;
	return 0;
}

static int collect_audit_decision(void *ctx, const zsp_audit_record *r)
{
	struct decisions *c = ctx;
	if (c->n < 16)
		c->d[c->n++] = r->decision;
	return 0;
}

/* The decision column of the row of table with the highest id, as stored. */
static int stored_decision(const char *path, const char *table)
{
	char sql[128];
	snprintf(sql, sizeof sql, "SELECT decision FROM %s ORDER BY id DESC LIMIT 1", table);
	sqlite3 *db;
	sqlite3_stmt *st = NULL;
	int d = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		d = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return d;
}

/* A grants.db written before enum zsp_answer was renumbered (ALLOW was 0) reads as it was
 * written: each grant answers and lists with its own decision, each audit row keeps its own;
 * and what this zsp writes keeps the numbers on disk, for a zsp of either numbering. */
static void test_old_numbering(void)
{
	char state[512], run[512], path[600];
	fresh(state, run);
	mkdir(state, 0700);
	snprintf(path, sizeof path, "%s/grants.db", state);
	CU_ASSERT_FATAL(load_fixture("numbering-v2.sql", path));
	zsp_store_where w = { .state_dir = state, .threads_in_memory = true };
	zsp_store *s = NULL;
	CU_ASSERT_EQUAL_FATAL(zsp_store_open(&w, &s, err, sizeof err), ZSP_OK);
	int64_t id = 0;
	CU_ASSERT_EQUAL(ask(s, "terminal", "make", NULL, NULL, &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, 1);
	CU_ASSERT_EQUAL(ask(s, "terminal", "make deploy", NULL, NULL, &id), ZSP_ANSWER_DENY);
	CU_ASSERT_EQUAL(id, 2);
	CU_ASSERT_EQUAL(ask(s, "terminal", "cargo build", NULL, NULL, &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, 3);
	CU_ASSERT_EQUAL(ask(s, "terminal", "npm install", NULL, NULL, &id), ZSP_ANSWER_DENY);
	CU_ASSERT_EQUAL(id, 4);
	CU_ASSERT_EQUAL(ask(s, "read_file", "/srv/data/x", NULL, NULL, &id), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(id, 5);
	CU_ASSERT_EQUAL(ask(s, "terminal", "gcc x.c", NULL, NULL, NULL), -1);
	struct decisions g = { { 0 }, 0 }, a = { { 0 }, 0 };
	CU_ASSERT_EQUAL(zsp_store_list(s, collect_grant_decision, &g, err, sizeof err), ZSP_OK);
	static const int want_grants[] = { ZSP_ANSWER_ALLOW, ZSP_ANSWER_DENY, ZSP_ANSWER_ALLOW,
					   ZSP_ANSWER_DENY, ZSP_ANSWER_ALLOW };
	CU_ASSERT_EQUAL_FATAL(g.n, 5);
	for (size_t i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(g.d[i], want_grants[i]);
	CU_ASSERT_EQUAL(zsp_store_audit_list(s, 0, collect_audit_decision, &a, err, sizeof err), ZSP_OK);
	static const int want_audit[] = { ZSP_ANSWER_ALLOW, ZSP_ANSWER_DENY, ZSP_ANSWER_ASK,
					  ZSP_ANSWER_ALLOW, ZSP_ANSWER_DENY };
	CU_ASSERT_EQUAL_FATAL(a.n, 5);
	for (size_t i = 0; i < 5; i++)
		CU_ASSERT_EQUAL(a.d[i], want_audit[i]);
	/* written now: the numbers the old rows have (0 allow, 1 deny, 2 ask) */
	static const struct {
		int answer, disk;
	} codes[] = { { ZSP_ANSWER_ALLOW, 0 }, { ZSP_ANSWER_DENY, 1 }, { ZSP_ANSWER_ASK, 2 } };
	for (size_t i = 0; i < 3; i++) {
		zsp_audit_record r = { .request = "terminal \"x\"", .decision = codes[i].answer };
		CU_ASSERT_EQUAL(zsp_store_audit(s, &r, err, sizeof err), ZSP_OK);
		CU_ASSERT_EQUAL(stored_decision(path, "audit"), codes[i].disk);
		if (codes[i].answer == ZSP_ANSWER_ASK)
			continue;
		CU_ASSERT(add(s, ZSP_GRANT_GLOBAL, NULL, NULL, "t", ZSP_MATCH_EXACT, "x", codes[i].answer) > 0);
		CU_ASSERT_EQUAL(stored_decision(path, "grants"), codes[i].disk);
	}
	/* and no number that is no answer reaches the trail */
	zsp_audit_record none = { .request = "terminal \"x\"", .decision = 0 };
	CU_ASSERT_EQUAL(zsp_store_audit(s, &none, err, sizeof err), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(stored_decision(path, "audit"), 2);
	zsp_store_close(s);
}

/* Opening state (with grants.db prepared by how) fails with a message containing want. */
static void refused(const char *what, void (*how)(const char *state, const char *db), const char *want)
{
	char state[512], run[512], path[600];
	fresh(state, run);
	zsp_store_where w = { .state_dir = state, .threads_in_memory = true };
	zsp_store *s = NULL;
	CU_ASSERT_EQUAL_FATAL(zsp_store_open(&w, &s, err, sizeof err), ZSP_OK);
	add(s, ZSP_GRANT_GLOBAL, NULL, NULL, "t", ZSP_MATCH_EXACT, "x", ZSP_ANSWER_ALLOW);
	zsp_store_close(s);
	snprintf(path, sizeof path, "%s/grants.db", state);
	how(state, path);
	err[0] = '\0';
	int rc = zsp_store_open(&w, &s, err, sizeof err);
	if (rc != ZSP_EIO || !strstr(err, want)) {
		fprintf(stderr, "%s: rc %d, '%s' lacks '%s'\n", what, rc, err, want);
		CU_FAIL(what);
	}
	CU_ASSERT_PTR_NULL(s);
	zsp_store_close(s);
	chmod(state, 0700);
}

static void make_garbage(const char *state, const char *db)
{
	char wal[700];
	snprintf(wal, sizeof wal, "%s-wal", db);
	unlink(wal);
	FILE *f = fopen(db, "w");
	for (int i = 0; i < 2000; i++)
		fputs("this is not a database ", f);
	fclose(f);
}

static void make_group_writable(const char *state, const char *db)
{
	chmod(db, 0620);
}

static void make_dir_other_writable(const char *state, const char *db)
{
	chmod(state, 0707);
}

static void make_symlink(const char *state, const char *db)
{
	char real[700];
	snprintf(real, sizeof real, "%s.real", db);
	rename(db, real);
	symlink(real, db);
}

static void make_dir_symlink(const char *state, const char *db)
{
	char real[700];
	snprintf(real, sizeof real, "%s.real", state);
	rename(state, real);
	symlink(real, state);
}

static void make_wal_symlink(const char *state, const char *db)
{
	char wal[700];
	snprintf(wal, sizeof wal, "%s-wal", db);
	unlink(wal);
	symlink("/etc/passwd", wal);
}

static void make_foreign(const char *state, const char *db)
{
	if (chown(db, 65534, 65534) != 0)
		perror("chown");
}

static void make_dir_readonly(const char *state, const char *db)
{
	chmod(state, 0500);
}

static void make_unreadable(const char *state, const char *db)
{
	chmod(db, 0);
}

static void test_refusals(void)
{
	refused("corrupt", make_garbage, "not a zsp grant database");
	refused("group-writable file", make_group_writable, "writable by group or others (mode 0620)");
	refused("other-writable directory", make_dir_other_writable, "writable by group or others (mode 0707)");
	refused("symlinked db", make_symlink, "symbolic link");
	refused("symlinked dir", make_dir_symlink, "symbolic link");
	refused("symlinked wal", make_wal_symlink, "symbolic link");
	if (geteuid() == 0) {
		refused("foreign owner", make_foreign, "owned by uid 65534, not by you");
		fprintf(stderr, "\n(root: read-only directory and unreadable file cases skipped: root "
			"ignores permissions)\n");
	} else {
		refused("read-only directory", make_dir_readonly, "not writable");
		refused("unreadable file", make_unreadable, "Permission denied");
		fprintf(stderr, "\n(not root: the foreign-owner case is skipped: it needs chown)\n");
	}
}

int main(void)
{
	snprintf(root, sizeof root, "%s/test_store.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		return 99;
	const char *shm = getenv("ZSP_TEST_TMPFS") ? getenv("ZSP_TEST_TMPFS") : "/dev/shm";
	snprintf(shm_root, sizeof shm_root, "%s/test_store.XXXXXX", shm);
	struct statfs fs;
	if (!mkdtemp(shm_root) || statfs(shm_root, &fs) != 0 ||
	    (fs.f_type != TMPFS_MAGIC && fs.f_type != RAMFS_MAGIC)) {
		fprintf(stderr, "test_store: needs a tmpfs for the runtime directories: %s is not one "
			"(set ZSP_TEST_TMPFS)\n", shm);
		return 99;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	CU_pSuite s = CU_add_suite("store", NULL, NULL);
	if (!s || !CU_add_test(s, "validation", test_validation) ||
	    !CU_add_test(s, "matchers", test_matchers) ||
	    !CU_add_test(s, "precedence", test_precedence) ||
	    !CU_add_test(s, "two arguments", test_two_arguments) ||
	    !CU_add_test(s, "expiry, list, end thread", test_expiry_list_end_thread) ||
	    !CU_add_test(s, "once across stores", test_once_persisted) ||
	    !CU_add_test(s, "audit", test_audit) ||
	    !CU_add_test(s, "no runtime dir", test_no_runtime_dir) ||
	    !CU_add_test(s, "defaults from env", test_defaults_from_env) ||
	    !CU_add_test(s, "migration", test_migration) ||
	    !CU_add_test(s, "old numbering", test_old_numbering) ||
	    !CU_add_test(s, "refusals", test_refusals)) {
		CU_cleanup_registry();
		return 2;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	char cmd[800];
	snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s' '%s' 2>/dev/null; rm -rf '%s' '%s'", root, shm_root,
		 root, shm_root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	return failures ? 1 : 0;
}
