/* test_api_grants.c: the grant store through libzsp's public API only (zsp.h, the shared
 * library): scopes, the policy's deny, the audit trail, failures; and, when $ZSPC is set (make
 * check), that a session with grants answers byte for byte as zspc --query does. */
#include "config.h"

#include <CUnit/Basic.h>
#include <limits.h>
#include <pwd.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zsp.h>

static char root[256];      /* mkdtemp: everything below */
static char policy_path[512];
static char proj[512], other[512];
static int seq;

static const char policy_text[] =
	"zsp 1;\n"
	"policy \"p\" {\n"
	"  tool \"terminal\" { default ask; deny /^git\\s+push\\b/; }\n"
	"  tool \"edit_file\" { default ask; }\n"
	"}\n";

static zsp_compiler *compiler;
static zsp_policy_set *set;

/* A state directory that does not exist yet: root/stateN. */
static const char *fresh_state(char *buf, size_t size)
{
	snprintf(buf, size, "%s/state%d", root, ++seq);
	return buf;
}

static zsp_grants *open_grants(const char *state)
{
	zsp_grants *g = NULL;
	char err[1024];
	int rc = zsp_grants_open(state, &g, err, sizeof err);
	if (rc != ZSP_OK)
		fprintf(stderr, "open: %d %s\n", rc, err[0] ? err : "(no message)");
	return g;
}

static zsp_session *session(zsp_grants *g, const char *thread, const char *project, int record)
{
	zsp_session *s = NULL;
	if (zsp_session_new(set, NULL, proj, NULL, &s) != ZSP_OK)
		return NULL;
	if (g && zsp_session_use_grants(s, g, thread, project, record) != ZSP_OK) {
		zsp_session_free(s);
		return NULL;
	}
	return s;
}

/* The answer (or -1 when the call fails); *json_out, if given, gets the JSON. */
static int decide(zsp_session *s, const char *request, char **json_out)
{
	int answer = -1;
	char *json = NULL;
	if (zsp_session_decide(s, request, 0, &answer, &json) != ZSP_OK)
		answer = -1;
	if (json_out)
		*json_out = json;
	else
		free(json);
	return answer;
}

static long long add(zsp_grants *g, enum zsp_grant_scope scope, const char *thread,
		     const char *project, const char *tool, enum zsp_grant_match m,
		     const char *pattern, int decision)
{
	struct zsp_grant_spec spec = { .scope = scope, .tool = tool, .match = m, .pattern = pattern,
				       .decision = decision, .thread = thread, .project = project,
				       .policy = "p" };
	long long id = 0;
	char err[1024] = "unset";
	int rc = zsp_grants_add(g, &spec, &id, err, sizeof err);
	if (rc != ZSP_OK) {
		fprintf(stderr, "add: %d %s\n", rc, err[0] ? err : "(no message)");
		id = -1;
	}
	if (rc == ZSP_OK)
		CU_ASSERT_STRING_EQUAL(err, "");
	return id;
}

static void test_open_fresh(void)
{
	char state[512], db[600];
	struct stat st;
	zsp_grants *g = open_grants(fresh_state(state, sizeof state));
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_EQUAL_FATAL(stat(state, &st), 0);
	CU_ASSERT(S_ISDIR(st.st_mode));
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0700);
	snprintf(db, sizeof db, "%s/grants.db", state);
	CU_ASSERT_EQUAL_FATAL(stat(db, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	/* thread grants are in memory: nothing else in the state directory names them */
	snprintf(db, sizeof db, "%s/threads.db", state);
	CU_ASSERT_NOT_EQUAL(stat(db, &st), 0);
	zsp_grants_close(g);
	zsp_grants_close(NULL);

	char err[1024];
	g = (zsp_grants *)1;
	CU_ASSERT_EQUAL(zsp_grants_open("relative/state", &g, err, sizeof err), ZSP_EUSAGE);
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "relative/state"));
	/* a buffer too small gets the message cut, NUL-terminated; none at all is allowed */
	char small[8];
	CU_ASSERT_EQUAL(zsp_grants_open("relative/state", &g, small, sizeof small), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(strlen(small), sizeof small - 1);
	CU_ASSERT_EQUAL(strncmp(small, err, sizeof small - 1), 0);
	CU_ASSERT_EQUAL(zsp_grants_open("relative/state", &g, NULL, 0), ZSP_EUSAGE);
}

static void test_once(void)
{
	char state[512];
	zsp_grants *g = open_grants(fresh_state(state, sizeof state));
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	zsp_session *s = session(g, NULL, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(decide(s, "terminal \"make\"", NULL), ZSP_ANSWER_ASK);
	long long id = add(g, ZSP_GRANT_ONCE, NULL, NULL, "terminal", ZSP_MATCH_EXACT, "make",
			   ZSP_ANSWER_ALLOW);
	CU_ASSERT(id > 0);
	char *json = NULL, want[64];
	CU_ASSERT_EQUAL(decide(s, "terminal \"make\"", &json), ZSP_ANSWER_ALLOW);
	snprintf(want, sizeof want, ",\"grant\":%lld}\n", id);
	CU_ASSERT(json && strlen(json) > strlen(want) &&
		  strcmp(json + strlen(json) - strlen(want), want) == 0);
	CU_ASSERT(json && strstr(json, "\"reason\":\"grant\""));
	snprintf(want, sizeof want, "\"rule\":\"grant %lld\"", id);
	CU_ASSERT(json && strstr(json, want));
	free(json);
	/* consumed */
	CU_ASSERT_EQUAL(decide(s, "terminal \"make\"", &json), ZSP_ANSWER_ASK);
	CU_ASSERT(json && !strstr(json, "\"grant\""));
	free(json);
	zsp_session_free(s);
	zsp_grants_close(g);
}

static void test_thread(void)
{
	char state[512];
	zsp_grants *g = open_grants(fresh_state(state, sizeof state));
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	long long id = add(g, ZSP_GRANT_THREAD, "t1", NULL, "terminal", ZSP_MATCH_PREFIX,
			   "^cargo\\s+build(\\s|$)", ZSP_ANSWER_ALLOW);
	CU_ASSERT(id > 0);
	zsp_session *t1 = session(g, "t1", NULL, 0), *t2 = session(g, "t2", NULL, 0);
	zsp_session *none = session(g, NULL, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(none);
	for (int k = 0; k < 2; k++)   /* not consumed */
		CU_ASSERT_EQUAL(decide(t1, "terminal \"cargo build --release\"", NULL), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(decide(t1, "terminal \"cargo test\"", NULL), ZSP_ANSWER_ASK);
	CU_ASSERT_EQUAL(decide(t2, "terminal \"cargo build\"", NULL), ZSP_ANSWER_ASK);
	CU_ASSERT_EQUAL(decide(none, "terminal \"cargo build\"", NULL), ZSP_ANSWER_ASK);

	int removed = -1;
	char err[1024] = "unset";
	CU_ASSERT_EQUAL(zsp_grants_end_thread(g, "t1", &removed, err, sizeof err), ZSP_OK);
	CU_ASSERT_EQUAL(removed, 1);
	CU_ASSERT_STRING_EQUAL(err, "");
	CU_ASSERT_EQUAL(decide(t1, "terminal \"cargo build\"", NULL), ZSP_ANSWER_ASK);
	CU_ASSERT_EQUAL(zsp_grants_end_thread(g, "t1", &removed, NULL, 0), ZSP_OK);
	CU_ASSERT_EQUAL(removed, 0);

	/* a thread grant dies with the handle: a new one does not know it */
	CU_ASSERT(add(g, ZSP_GRANT_THREAD, "t1", NULL, "terminal", ZSP_MATCH_EXACT, "make",
		      ZSP_ANSWER_ALLOW) > 0);
	CU_ASSERT_EQUAL(decide(t1, "terminal \"make\"", NULL), ZSP_ANSWER_ALLOW);
	zsp_session_free(t1);
	zsp_session_free(t2);
	zsp_session_free(none);
	zsp_grants_close(g);
	g = open_grants(state);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	t1 = session(g, "t1", NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(t1);
	CU_ASSERT_EQUAL(decide(t1, "terminal \"make\"", NULL), ZSP_ANSWER_ASK);
	zsp_session_free(t1);
	zsp_grants_close(g);
}

static void test_project(void)
{
	char state[512], link[600];
	zsp_grants *g = open_grants(fresh_state(state, sizeof state));
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	/* the project is canonical on both sides: given through a symbolic link here */
	snprintf(link, sizeof link, "%s/proj-link", root);
	CU_ASSERT_EQUAL_FATAL(symlink(proj, link), 0);
	long long id = add(g, ZSP_GRANT_PROJECT, NULL, link, "terminal", ZSP_MATCH_EXACT, "make",
			   ZSP_ANSWER_ALLOW);
	CU_ASSERT(id > 0);
	zsp_session *in = session(g, NULL, proj, 0), *out = session(g, NULL, other, 0);
	zsp_session *nowhere = session(g, NULL, NULL, 0), *via = session(g, NULL, link, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT_PTR_NOT_NULL_FATAL(nowhere);
	CU_ASSERT_PTR_NOT_NULL_FATAL(via);
	CU_ASSERT_EQUAL(decide(in, "terminal \"make\"", NULL), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(decide(in, "terminal \"make\"", NULL), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(decide(via, "terminal \"make\"", NULL), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(decide(out, "terminal \"make\"", NULL), ZSP_ANSWER_ASK);
	CU_ASSERT_EQUAL(decide(nowhere, "terminal \"make\"", NULL), ZSP_ANSWER_ASK);

	/* detached, the session is the oracle alone again */
	CU_ASSERT_EQUAL(zsp_session_use_grants(in, NULL, NULL, NULL, 1), ZSP_OK);
	CU_ASSERT_EQUAL(decide(in, "terminal \"make\"", NULL), ZSP_ANSWER_ASK);

	/* a path grant is judged against the session's workspace (proj) */
	char src[600];
	snprintf(src, sizeof src, "%s/src", proj);
	CU_ASSERT(add(g, ZSP_GRANT_GLOBAL, NULL, NULL, "edit_file", ZSP_MATCH_PATH, src,
		      ZSP_ANSWER_ALLOW) > 0);
	CU_ASSERT_EQUAL(decide(nowhere, "edit_file \"src/main.rs\"", NULL), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(decide(nowhere, "edit_file \"src/../../x\"", NULL), ZSP_ANSWER_ASK);
	CU_ASSERT_EQUAL(decide(nowhere, "edit_file \"README\"", NULL), ZSP_ANSWER_ASK);
	zsp_session_free(in);
	zsp_session_free(out);
	zsp_session_free(nowhere);
	zsp_session_free(via);
	zsp_grants_close(g);
}

/* doc/oracle.md "Grants": a policy deny concludes before the grants; so do the built-in rules. */
static void test_deny_stands(void)
{
	char state[512];
	zsp_grants *g = open_grants(fresh_state(state, sizeof state));
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT(add(g, ZSP_GRANT_GLOBAL, NULL, NULL, "terminal", ZSP_MATCH_PREFIX, "^git",
		      ZSP_ANSWER_ALLOW) > 0);
	CU_ASSERT(add(g, ZSP_GRANT_ONCE, NULL, NULL, "terminal", ZSP_MATCH_EXACT, "rm -rf /",
		      ZSP_ANSWER_ALLOW) > 0);
	zsp_session *s = session(g, NULL, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	char *json = NULL;
	CU_ASSERT_EQUAL(decide(s, "terminal \"git push origin main\"", &json), ZSP_ANSWER_DENY);
	CU_ASSERT(json && !strstr(json, "\"grant\"") && !strstr(json, "\"reason\":\"grant\""));
	free(json);
	CU_ASSERT_EQUAL(decide(s, "terminal \"rm -rf /\"", NULL), ZSP_ANSWER_DENY);
	CU_ASSERT_EQUAL(decide(s, "terminal \"git status\"", NULL), ZSP_ANSWER_ALLOW);
	/* a deny grant turns the ask into a deny */
	CU_ASSERT(add(g, ZSP_GRANT_GLOBAL, NULL, NULL, "terminal", ZSP_MATCH_EXACT, "git status",
		      ZSP_ANSWER_DENY) > 0);
	CU_ASSERT_EQUAL(decide(s, "terminal \"git status\"", &json), ZSP_ANSWER_DENY);
	CU_ASSERT(json && strstr(json, "\"reason\":\"grant\""));
	free(json);
	zsp_session_free(s);
	zsp_grants_close(g);
}

/* The audit rows of state/grants.db: their count, and the last row's reason and hash. */
static int audit_rows(const char *state, char *reason, char *hash)
{
	char path[600];
	snprintf(path, sizeof path, "%s/grants.db", state);
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int n = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "SELECT count(*) FROM audit", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	st = NULL;
	if (n > 0 && sqlite3_prepare_v2(db, "SELECT reason, policy_hash FROM audit ORDER BY id DESC "
					"LIMIT 1", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *r = sqlite3_column_text(st, 0), *h = sqlite3_column_text(st, 1);
		snprintf(reason, 64, "%s", r ? (const char *)r : "");
		snprintf(hash, 80, "%s", h ? (const char *)h : "");
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	return n;
}

static void test_record(void)
{
	char state[512], reason[64] = "", hash[80] = "";
	zsp_grants *g = open_grants(fresh_state(state, sizeof state));
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	zsp_session *s = session(g, "t", proj, 1), *quiet = session(g, "t", proj, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_PTR_NOT_NULL_FATAL(quiet);
	CU_ASSERT_EQUAL(audit_rows(state, reason, hash), 0);
	CU_ASSERT_EQUAL(decide(s, "terminal \"git push\"", NULL), ZSP_ANSWER_DENY);
	CU_ASSERT_EQUAL(decide(s, "terminal \"make\"", NULL), ZSP_ANSWER_ASK);
	CU_ASSERT(add(g, ZSP_GRANT_ONCE, "t", NULL, "terminal", ZSP_MATCH_EXACT, "make",
		      ZSP_ANSWER_ALLOW) > 0);
	CU_ASSERT_EQUAL(decide(s, "terminal \"make\"", NULL), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(decide(quiet, "terminal \"make\"", NULL), ZSP_ANSWER_ASK);
	CU_ASSERT_EQUAL(audit_rows(state, reason, hash), 3);
	CU_ASSERT_STRING_EQUAL(reason, "grant");
	CU_ASSERT_EQUAL(strlen(hash), 64);
	CU_ASSERT_EQUAL(strspn(hash, "0123456789abcdef"), 64);
	/* a malformed request is not a decision: nothing recorded */
	CU_ASSERT_EQUAL(decide(s, "terminal make", NULL), -1);
	CU_ASSERT_EQUAL(audit_rows(state, reason, hash), 3);
	zsp_session_free(s);
	zsp_session_free(quiet);
	zsp_grants_close(g);
}

static void test_corrupt(void)
{
	char state[512], db[600];
	mkdir(fresh_state(state, sizeof state), 0700);
	snprintf(db, sizeof db, "%s/grants.db", state);
	FILE *f = fopen(db, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	for (int i = 0; i < 512; i++)
		fputs("garbage, not a database ", f);
	fclose(f);
	chmod(db, 0600);
	zsp_grants *g = (zsp_grants *)1;
	char err[1024] = "";
	CU_ASSERT_EQUAL(zsp_grants_open(state, &g, err, sizeof err), ZSP_EIO);
	CU_ASSERT_PTR_NULL(g);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, db));
	fprintf(stderr, "\n(corrupt store: %s)\n", err);
	/* the host goes on without grants: the policy alone answers */
	zsp_session *s = session(NULL, NULL, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(decide(s, "terminal \"make\"", NULL), ZSP_ANSWER_ASK);
	CU_ASSERT_EQUAL(decide(s, "terminal \"git push\"", NULL), ZSP_ANSWER_DENY);
	zsp_session_free(s);
}

static void test_revoke(void)
{
	char state[512];
	zsp_grants *g = open_grants(fresh_state(state, sizeof state));
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	long long id = add(g, ZSP_GRANT_GLOBAL, NULL, NULL, "terminal", ZSP_MATCH_EXACT, "make",
			   ZSP_ANSWER_ALLOW);
	long long tid = add(g, ZSP_GRANT_THREAD, "t", NULL, "terminal", ZSP_MATCH_EXACT, "make",
			    ZSP_ANSWER_ALLOW);
	zsp_session *s = session(g, "t", NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_EQUAL(decide(s, "terminal \"make\"", NULL), ZSP_ANSWER_ALLOW);
	char err[1024] = "unset";
	int found = -1;
	CU_ASSERT_EQUAL(zsp_grants_revoke(g, tid, &found, err, sizeof err), ZSP_OK);
	CU_ASSERT_EQUAL(found, 1);
	CU_ASSERT_STRING_EQUAL(err, "");
	CU_ASSERT_EQUAL(decide(s, "terminal \"make\"", NULL), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(zsp_grants_revoke(g, id, &found, err, sizeof err), ZSP_OK);
	CU_ASSERT_EQUAL(found, 1);
	CU_ASSERT_EQUAL(decide(s, "terminal \"make\"", NULL), ZSP_ANSWER_ASK);
	/* no such grant: ZSP_OK, and *found says so */
	CU_ASSERT_EQUAL(zsp_grants_revoke(g, id, &found, err, sizeof err), ZSP_OK);
	CU_ASSERT_EQUAL(found, 0);
	CU_ASSERT_STRING_EQUAL(err, "");
	CU_ASSERT_EQUAL(zsp_grants_revoke(g, 987654321, NULL, NULL, 0), ZSP_OK);
	zsp_session_free(s);
	zsp_grants_close(g);
}

static void test_bad_arguments(void)
{
	char state[512];
	zsp_grants *g = open_grants(fresh_state(state, sizeof state));
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	static const struct {
		struct zsp_grant_spec spec;
		const char *says;
	} bad[] = {
		{ { .scope = ZSP_GRANT_GLOBAL, .tool = NULL, .match = ZSP_MATCH_EXACT, .pattern = "x",
		    .decision = ZSP_ANSWER_ALLOW }, "no tool" },
		{ { .scope = ZSP_GRANT_PROJECT, .tool = "terminal", .match = ZSP_MATCH_EXACT,
		    .pattern = "x", .decision = ZSP_ANSWER_ALLOW, .project = "relative/dir" }, "relative/dir" },
		{ { .scope = ZSP_GRANT_PROJECT, .tool = "terminal", .match = ZSP_MATCH_EXACT,
		    .pattern = "x", .decision = ZSP_ANSWER_ALLOW }, "project" },
		{ { .scope = ZSP_GRANT_THREAD, .tool = "terminal", .match = ZSP_MATCH_EXACT,
		    .pattern = "x", .decision = ZSP_ANSWER_ALLOW }, "thread" },
		{ { .scope = ZSP_GRANT_GLOBAL, .tool = "terminal", .match = ZSP_MATCH_PREFIX,
		    .pattern = "(", .decision = ZSP_ANSWER_ALLOW }, "does not compile" },
		{ { .scope = ZSP_GRANT_GLOBAL, .tool = "terminal", .match = ZSP_MATCH_EXACT,
		    .pattern = "x", .decision = ZSP_ANSWER_ASK }, "allow or deny" },
		/* a spec whose decision was left out (0) is no allow grant */
		{ { .scope = ZSP_GRANT_GLOBAL, .tool = "terminal", .match = ZSP_MATCH_EXACT,
		    .pattern = "x" }, "allow or deny" },
		{ { .scope = ZSP_GRANT_GLOBAL, .tool = "edit_file", .match = ZSP_MATCH_PATH,
		    .pattern = "src", .decision = ZSP_ANSWER_ALLOW }, "absolute" },
		{ { .scope = (enum zsp_grant_scope)9, .tool = "terminal", .match = ZSP_MATCH_EXACT,
		    .pattern = "x", .decision = ZSP_ANSWER_ALLOW }, "scope" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char err[1024] = "";
		long long id = -7;
		CU_ASSERT_EQUAL(zsp_grants_add(g, &bad[i].spec, &id, err, sizeof err), ZSP_EUSAGE);
		CU_ASSERT_EQUAL(id, -7);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].says));
		if (!strstr(err, bad[i].says))
			fprintf(stderr, "\nbad[%zu]: %s\n", i, err[0] ? err : "(no message)");
	}
	char err[1024] = "";
	CU_ASSERT_EQUAL(zsp_grants_add(g, NULL, NULL, err, sizeof err), ZSP_EUSAGE);
	CU_ASSERT_NOT_EQUAL(err[0], '\0');
	err[0] = '\0';
	CU_ASSERT_EQUAL(zsp_grants_end_thread(g, NULL, NULL, err, sizeof err), ZSP_EUSAGE);
	CU_ASSERT_NOT_EQUAL(err[0], '\0');
	CU_ASSERT_EQUAL(zsp_grants_end_thread(g, "", NULL, NULL, 0), ZSP_EUSAGE);

	zsp_session *s = session(NULL, NULL, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	char missing[600];
	snprintf(missing, sizeof missing, "%s/no-such-dir", root);
	CU_ASSERT_EQUAL(zsp_session_use_grants(s, g, "t", "relative/dir", 0), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_session_use_grants(s, g, "t", missing, 0), ZSP_EUSAGE);
	/* refused: the session stays without grants, so nothing was recorded */
	CU_ASSERT_EQUAL(decide(s, "terminal \"make\"", NULL), ZSP_ANSWER_ASK);
	char reason[64], hash[80];
	CU_ASSERT_EQUAL(audit_rows(state, reason, hash), 0);
	zsp_session_free(s);
	zsp_grants_close(g);
}

/* A grants.db written before enum zsp_answer was renumbered (ALLOW was 0; the database keeps
 * 0 allow, 1 deny): through the shared library its grants answer as they were given. */
static void test_old_numbering(void)
{
	char state[512], path[600], file[600];
	fresh_state(state, sizeof state);
	CU_ASSERT_EQUAL_FATAL(mkdir(state, 0700), 0);
	snprintf(path, sizeof path, "%s/grants.db", state);
	const char *top = getenv("top_srcdir");
	snprintf(file, sizeof file, "%s/tests/store/numbering-v2.sql", top ? top : "..");
	FILE *f = fopen(file, "r");
	static char sql[1 << 16];
	size_t n = f ? fread(sql, 1, sizeof sql - 1, f) : 0;
	if (f)
		fclose(f);
	sql[n] = '\0';
	sqlite3 *db = NULL;
	CU_ASSERT_FATAL(n > 0 && sqlite3_open(path, &db) == SQLITE_OK &&
			sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	chmod(path, 0600);
	zsp_grants *g = open_grants(state);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	zsp_session *s = session(g, NULL, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	static const struct {
		const char *request;
		int answer;
		const char *grant;
	} cases[] = {
		{ "terminal \"make\"", ZSP_ANSWER_ALLOW, "\"grant\":1" },
		{ "terminal \"make deploy\"", ZSP_ANSWER_DENY, "\"grant\":2" },
		{ "terminal \"cargo build\"", ZSP_ANSWER_ALLOW, "\"grant\":3" },
		{ "terminal \"npm install\"", ZSP_ANSWER_DENY, "\"grant\":4" },
		{ "terminal \"gcc x.c\"", ZSP_ANSWER_ASK, NULL },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *json = NULL;
		CU_ASSERT_EQUAL(decide(s, cases[i].request, &json), cases[i].answer);
		CU_ASSERT(json && (cases[i].grant ? strstr(json, cases[i].grant) != NULL
						  : strstr(json, "\"grant\"") == NULL));
		free(json);
	}
	zsp_session_free(s);
	zsp_grants_close(g);
}

/* An MCP tool whose name is longer than the store takes: the lookup fails. */
static const char *long_tool_request(void)
{
	static char req[4200];
	snprintf(req, sizeof req, "mcp:server:%04188d", 0); /* 4199 bytes: fills req */
	return req;
}

/* A store that cannot answer leaves the oracle's answer, and says so; it never allows. */
static void test_store_error(void)
{
	char state[512];
	zsp_grants *g = open_grants(fresh_state(state, sizeof state));
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	zsp_session *s = session(g, NULL, NULL, 1), *bare = session(NULL, NULL, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_PTR_NOT_NULL_FATAL(bare);
	char *json = NULL, *plain = NULL;
	CU_ASSERT_EQUAL(decide(s, long_tool_request(), &json), ZSP_ANSWER_ASK);
	CU_ASSERT_EQUAL(decide(bare, long_tool_request(), &plain), ZSP_ANSWER_ASK);
	CU_ASSERT(json && strstr(json, ",\"store_error\":\"grant lookup: "));
	/* the same JSON as without grants, but for that key */
	CU_ASSERT(json && plain && strncmp(json, plain, strlen(plain) - 2) == 0);
	free(json);
	free(plain);
	char reason[64], hash[80];
	CU_ASSERT_EQUAL(audit_rows(state, reason, hash), 1);
	CU_ASSERT_STRING_EQUAL(reason, "policy-default");
	zsp_session_free(s);
	zsp_session_free(bare);
	zsp_grants_close(g);
}

/* ---- the same answers as zspc --query ------------------------------------------------------ */

/* zspc's standard output for the arguments (none holds a single quote); NULL if it failed. */
static char *run_zspc(const char *zspc, const char *const *args)
{
	char cmd[8192];
	size_t n = (size_t)snprintf(cmd, sizeof cmd, "'%s'", zspc);
	for (size_t i = 0; args[i] && n < sizeof cmd; i++) {
		if (strchr(args[i], '\''))
			return NULL;
		n += (size_t)snprintf(cmd + n, sizeof cmd - n, " '%s'", args[i]);
	}
	if (n >= sizeof cmd - 16)
		return NULL;
	snprintf(cmd + n, sizeof cmd - n, " 2>/dev/null");
	FILE *p = popen(cmd, "r");
	if (!p)
		return NULL;
	char *out = NULL;
	size_t len = 0, cap = 0;
	int c;
	while ((c = fgetc(p)) != EOF) {
		if (len + 2 > cap) {
			cap = cap ? cap * 2 : 1024;
			char *nb = realloc(out, cap);
			if (!nb)
				break;
			out = nb;
		}
		out[len++] = (char)c;
		out[len] = '\0';
	}
	pclose(p);
	return out;
}

static void test_same_as_zspc(void)
{
	const char *zspc = getenv("ZSPC");
	if (!zspc || !*zspc) {
		fprintf(stderr, "\n(ZSPC unset: the comparison with zspc --query is skipped)\n");
		return;
	}
	char state[512], runtime[600], src[600];
	zsp_grants *g = open_grants(fresh_state(state, sizeof state));
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	/* zspc keeps thread grants in a runtime directory; there is none here, so thread grants
	 * take no part and the grants compared are the ones both see: project and global */
	snprintf(runtime, sizeof runtime, "%s/no-runtime/zsp", root);
	snprintf(src, sizeof src, "%s/src", proj);
	CU_ASSERT(add(g, ZSP_GRANT_PROJECT, NULL, proj, "terminal", ZSP_MATCH_EXACT, "make",
		      ZSP_ANSWER_ALLOW) > 0);
	CU_ASSERT(add(g, ZSP_GRANT_GLOBAL, NULL, NULL, "terminal", ZSP_MATCH_PREFIX, "^rm\\b",
		      ZSP_ANSWER_DENY) > 0);
	CU_ASSERT(add(g, ZSP_GRANT_GLOBAL, NULL, NULL, "edit_file", ZSP_MATCH_PATH, src,
		      ZSP_ANSWER_ALLOW) > 0);
	zsp_session *s = session(g, "t", proj, 1), *bare = session(NULL, NULL, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_PTR_NOT_NULL_FATAL(bare);
	const char *requests[] = {
		"terminal \"make\"", "terminal \"make -j2\"", "terminal \"rm x\"",
		"terminal \"git push\"", "terminal \"cat $HOME\"", "edit_file \"src/a.c\"",
		"edit_file \"b.c\"", long_tool_request(),
	};
	for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
		char *mine = NULL, *theirs;
		CU_ASSERT_NOT_EQUAL(decide(s, requests[i], &mine), -1);
		const char *with[] = { "--query", requests[i], "--state-dir", state, "--runtime-dir",
				       runtime, "--thread", "t", "--project", proj, "--record",
				       "--workspace", proj, "--format", "json", policy_path, NULL };
		theirs = run_zspc(zspc, with);
		CU_ASSERT(mine && theirs && strcmp(mine, theirs) == 0);
		if (!mine || !theirs || strcmp(mine, theirs) != 0)
			fprintf(stderr, "\n%s:\n  session: %s  zspc:    %s", requests[i],
				mine ? mine : "(none)\n", theirs ? theirs : "(none)\n");
		free(mine);
		free(theirs);

		/* and without grants, the oracle alone, as before */
		CU_ASSERT_NOT_EQUAL(decide(bare, requests[i], &mine), -1);
		const char *without[] = { "--query", requests[i], "--workspace", proj, "--format",
					  "json", policy_path, NULL };
		theirs = run_zspc(zspc, without);
		CU_ASSERT(mine && theirs && strcmp(mine, theirs) == 0);
		free(mine);
		free(theirs);
	}

	/* both recorded each decision; the records agree but for the time */
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	char path[600];
	snprintf(path, sizeof path, "%s/grants.db", state);
	CU_ASSERT_EQUAL_FATAL(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	CU_ASSERT_EQUAL(sqlite3_prepare_v2(db,
		"SELECT count(*), count(DISTINCT request || decision || reason || ifnull(rule, '') || "
		"policy || policy_hash || thread || project || ifnull(who, '')) FROM audit", -1, &st,
		NULL), SQLITE_OK);
	CU_ASSERT_EQUAL(sqlite3_step(st), SQLITE_ROW);
	CU_ASSERT_EQUAL(sqlite3_column_int(st, 0), 2 * (int)(sizeof requests / sizeof requests[0]));
	CU_ASSERT_EQUAL(sqlite3_column_int(st, 1), (int)(sizeof requests / sizeof requests[0]));
	sqlite3_finalize(st);
	sqlite3_close(db);
	zsp_session_free(s);
	zsp_session_free(bare);
	zsp_grants_close(g);
}

static void rm_tree(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "test_api_grants: could not remove %s\n", dir);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(root, sizeof root, "%s/test_api_grants.XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
	if (!mkdtemp(root))
		return 99;
	/* the canonical spelling: zspc and the store compare projects after realpath */
	char canon[PATH_MAX];
	if (!realpath(root, canon) || strlen(canon) >= sizeof root)
		return 99;
	strcpy(root, canon);
	snprintf(proj, sizeof proj, "%s/proj", root);
	snprintf(other, sizeof other, "%s/other", root);
	snprintf(policy_path, sizeof policy_path, "%s/p.zsp", root);
	char src[600];
	snprintf(src, sizeof src, "%s/src", proj);
	FILE *f = fopen(policy_path, "w");
	if (mkdir(proj, 0700) != 0 || mkdir(other, 0700) != 0 || mkdir(src, 0700) != 0 || !f ||
	    fputs(policy_text, f) < 0 || fclose(f) != 0)
		return 99;
	/* compiled as zspc --query --workspace proj compiles it, with this machine's values, so
	 * that both record the same policy hash */
	const char *home = getenv("HOME"), *user = getenv("USER");
	struct passwd *pw = user ? NULL : getpwuid(getuid());
	char uid[32];
	snprintf(uid, sizeof uid, "%u", (unsigned)getuid());
	compiler = zsp_compiler_new();
	if (!compiler || zsp_compiler_define(compiler, "WORKSPACE", proj) != ZSP_OK ||
	    (home && home[0] == '/' && zsp_compiler_define(compiler, "HOME", home) != ZSP_OK) ||
	    zsp_compiler_define(compiler, "TMPDIR", tmp && tmp[0] == '/' ? tmp : "/tmp") != ZSP_OK ||
	    zsp_compiler_define(compiler, "UID", uid) != ZSP_OK ||
	    ((user || pw) && zsp_compiler_define(compiler, "USER", user ? user : pw->pw_name) != ZSP_OK))
		return 99;
	if (zsp_compile_buffer(compiler, policy_path, policy_text, strlen(policy_text),
					    &set) != ZSP_OK)
		return 99;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	CU_pSuite s = CU_add_suite("api grants", NULL, NULL);
	if (!s || !CU_add_test(s, "open a fresh store", test_open_fresh) ||
	    !CU_add_test(s, "once grant", test_once) ||
	    !CU_add_test(s, "thread grants", test_thread) ||
	    !CU_add_test(s, "project and path grants", test_project) ||
	    !CU_add_test(s, "a deny stands", test_deny_stands) ||
	    !CU_add_test(s, "audit trail", test_record) ||
	    !CU_add_test(s, "corrupt store", test_corrupt) ||
	    !CU_add_test(s, "store error", test_store_error) ||
	    !CU_add_test(s, "revoke", test_revoke) ||
	    !CU_add_test(s, "bad arguments", test_bad_arguments) ||
	    !CU_add_test(s, "a store of the old numbering", test_old_numbering) ||
	    !CU_add_test(s, "same as zspc --query", test_same_as_zspc)) {
		CU_cleanup_registry();
		return 2;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	zsp_policy_set_free(set);
	zsp_compiler_free(compiler);
	rm_tree(root);
	return failures ? 1 : 0;
}
