/* test_api_failclosed.c: libzsp fails closed, seen as an agent host sees it (only zsp.h, the
 * shared library): every call that cannot decide answers deny, whatever the answer variable
 * held; a session fills the built-in parameters from its workspace and home, and refuses to
 * decide, naming the parameter, while a rule it judges has none. */
#include "config.h"

#include <CUnit/Basic.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zsp.h>

/* What an answer variable may hold before the call: the allow value, garbage, 0, an ask. */
static const int presets[] = { ZSP_ANSWER_ALLOW, 0x5a5a, 0, ZSP_ANSWER_ASK, -1 };
#define NPRESETS (sizeof(presets) / sizeof(presets[0]))

static zsp_policy_set *compile(const char *text, const char *home, const char *workspace)
{
	zsp_compiler *c = zsp_compiler_new();
	zsp_policy_set *set = NULL;
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	if (home)
		CU_ASSERT_EQUAL(zsp_compiler_define(c, "HOME", home), ZSP_OK);
	if (workspace)
		CU_ASSERT_EQUAL(zsp_compiler_define(c, "WORKSPACE", workspace), ZSP_OK);
	int rc = zsp_compile_buffer(c, "p.zsp", text, strlen(text), &set);
	zsp_compiler_free(c);
	CU_ASSERT_EQUAL(rc, ZSP_OK);
	return set;
}

/* Decides request from every preset: the status when all agree (-1 when they do not), the
 * answer into *answer (-1 when they disagree), the last JSON into *json (may be NULL). */
static int decide_all(zsp_session *s, const char *request, int *answer, char **json)
{
	int status = -2, got = -2;
	if (json)
		*json = NULL;
	for (size_t i = 0; i < NPRESETS; i++) {
		int a = presets[i];
		char *j = NULL;
		int rc = zsp_session_decide(s, request, 0, &a, &j);
		status = status == -2 || status == rc ? rc : -1;
		got = got == -2 || got == a ? a : -1;
		if (json && i == NPRESETS - 1)
			*json = j;
		else
			free(j);
	}
	*answer = got;
	return status;
}

/* request under s is refused: ZSP_EUSAGE, deny from every preset, an error JSON that says why
 * with want in it (NULL: any why). */
static void refused(zsp_session *s, const char *request, const char *want)
{
	int answer;
	char *json;
	int rc = decide_all(s, request, &answer, &json);
	CU_ASSERT_EQUAL(rc, ZSP_EUSAGE);
	CU_ASSERT_EQUAL(answer, ZSP_ANSWER_DENY);
	CU_ASSERT(json && strncmp(json, "{\"decision\":\"error\",\"error\":\"", 29) == 0);
	if (want)
		CU_ASSERT(json && strstr(json, want));
	if (rc != ZSP_EUSAGE || answer != ZSP_ANSWER_DENY || (want && json && !strstr(json, want)))
		fprintf(stderr, "\n%s: rc %d answer %d json %s\n", request, rc, answer,
			json ? json : "(none)");
	free(json);
}

static int decided(zsp_session *s, const char *request)
{
	int answer;
	int rc = decide_all(s, request, &answer, NULL);
	CU_ASSERT_EQUAL(rc, ZSP_OK);
	if (rc != ZSP_OK)
		fprintf(stderr, "\n%s: rc %d (%s)\n", request, rc,
			zsp_session_refusal(s) ? zsp_session_refusal(s) : "no refusal");
	return answer;
}

/* 0 is no answer: an answer variable left 0 (or memset) reads as none of them. */
static void test_answer_numbers(void)
{
	CU_ASSERT_NOT_EQUAL(ZSP_ANSWER_ALLOW, 0);
	CU_ASSERT_NOT_EQUAL(ZSP_ANSWER_ASK, 0);
	CU_ASSERT_NOT_EQUAL(ZSP_ANSWER_DENY, 0);
	CU_ASSERT(ZSP_ANSWER_ALLOW != ZSP_ANSWER_ASK && ZSP_ANSWER_ASK != ZSP_ANSWER_DENY &&
		  ZSP_ANSWER_ALLOW != ZSP_ANSWER_DENY);
}

static const char secrets[] =
	"zsp 1;\n"
	"policy \"p\" {\n"
	"  fs { read \"/\"; write \"${WORKSPACE}\", \"${TMPDIR}/zsp-fc\", \"/srv/${USER}\";\n"
	"       deny \"~/.npmrc\", \"~/.ssh\"; }\n"
	"  tool \"read_file\" { default allow; deny path \"~/.ssh/**\"; }\n"
	"}\n";

/* Compiled with no parameter at all, as an embedder that never heard of them: the session's
 * workspace and home fill WORKSPACE and HOME, the process TMPDIR and USER, and the rules bite
 * exactly as when the host defined them. */
static void test_fills_builtins(void)
{
	const struct passwd *pw = getpwuid(getuid());
	char user_dir[300], other_user[300];
	snprintf(user_dir, sizeof(user_dir), "write \"/srv/%s/x\"", pw ? pw->pw_name : "?");
	snprintf(other_user, sizeof(other_user), "write \"/srv/%s-not/x\"", pw ? pw->pw_name : "?");
	CU_ASSERT_EQUAL(setenv("TMPDIR", "/tmp/fc-tmp", 1), 0);
	zsp_policy_set *bare = compile(secrets, NULL, NULL);
	zsp_policy_set *defined = compile(secrets, "/home/u", "/home/u/proj");
	CU_ASSERT_PTR_NOT_NULL_FATAL(bare);
	CU_ASSERT_PTR_NOT_NULL_FATAL(defined);
	const struct {
		const char *request;
		int answer;
	} cases[] = {
		{ "read \"~/.npmrc\"", ZSP_ANSWER_DENY },
		{ "read \"/home/u/.npmrc\"", ZSP_ANSWER_DENY },
		{ "read_file \"~/.ssh/id_rsa\"", ZSP_ANSWER_DENY },
		{ "read_file \"/home/u/.ssh/id_rsa\"", ZSP_ANSWER_DENY },
		{ "read \"~/.ssh/id_rsa\"", ZSP_ANSWER_DENY },
		{ "read_file \"/etc/hosts\"", ZSP_ANSWER_ALLOW },
		{ "read \"~/notes\"", ZSP_ANSWER_ALLOW },
		{ "write \"src/main.rs\"", ZSP_ANSWER_ALLOW },
		{ "write \"/home/u/proj/src/main.rs\"", ZSP_ANSWER_ALLOW },
		{ "write \"/home/u/other\"", ZSP_ANSWER_DENY },
		{ "write \"/tmp/fc-tmp/zsp-fc/x\"", ZSP_ANSWER_ALLOW },
		{ "write \"/tmp/zsp-fc/x\"", ZSP_ANSWER_DENY },
		{ user_dir, ZSP_ANSWER_ALLOW },
		{ other_user, ZSP_ANSWER_DENY },
	};
	zsp_session *s = NULL, *d = NULL;
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(bare, NULL, "/home/u/proj", "/home/u", &s), ZSP_OK);
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(defined, NULL, "/home/u/proj", "/home/u", &d), ZSP_OK);
	CU_ASSERT_PTR_NULL(zsp_session_refusal(s));
	CU_ASSERT_PTR_NULL(zsp_session_refusal(d));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (!pw && i >= sizeof(cases) / sizeof(cases[0]) - 2)
			break;   /* no passwd entry: no USER to fill (the refusal test covers that) */
		int a = decided(s, cases[i].request), b = decided(d, cases[i].request);
		CU_ASSERT_EQUAL(a, cases[i].answer);
		CU_ASSERT_EQUAL(b, cases[i].answer);
		if (a != cases[i].answer || b != cases[i].answer)
			fprintf(stderr, "\n%s: filled %d, defined %d, want %d\n", cases[i].request, a, b,
				cases[i].answer);
	}
	zsp_session_free(s);
	zsp_session_free(d);
	/* the set itself is left as compiled: a second session may fill other values */
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(bare, NULL, "/work", "/home/v", &s), ZSP_OK);
	CU_ASSERT_EQUAL(decided(s, "read \"/home/v/.npmrc\""), ZSP_ANSWER_DENY);
	CU_ASSERT_EQUAL(decided(s, "read \"/home/u/.npmrc\""), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(decided(s, "write \"/work/x\""), ZSP_ANSWER_ALLOW);
	zsp_session_free(s);
	zsp_policy_set_free(bare);
	zsp_policy_set_free(defined);
	unsetenv("TMPDIR");
}

/* Without the value a rule needs, the session is made but decides nothing, and says which
 * parameter and which rule: no request, related or not, gets an answer but deny. */
static void test_missing_parameter(void)
{
	zsp_policy_set *set = compile(secrets, NULL, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	static const char *const requests[] = {
		"read \"~/.npmrc\"", "read_file \"~/.ssh/id_rsa\"", "read \"/home/u/.npmrc\"",
		"read \"/etc/hosts\"", "terminal \"ls\"", "write \"src/main.rs\"",
	};
	static const struct {
		const char *workspace, *home, *names;
	} sessions[] = {
		{ "/home/u/proj", NULL, "parameter HOME has no value" },
		{ NULL, "/home/u", "parameter WORKSPACE has no value" },
		{ NULL, NULL, "parameter " },
	};
	for (size_t k = 0; k < sizeof(sessions) / sizeof(sessions[0]); k++) {
		zsp_session *s = (zsp_session *)1;
		CU_ASSERT_EQUAL_FATAL(zsp_session_new(set, NULL, sessions[k].workspace, sessions[k].home,
						      &s), ZSP_OK);
		const char *why = zsp_session_refusal(s);
		CU_ASSERT_PTR_NOT_NULL_FATAL(why);
		CU_ASSERT_PTR_NOT_NULL(strstr(why, sessions[k].names));
		CU_ASSERT_PTR_NOT_NULL(strstr(why, "p.zsp:"));   /* the rule's place */
		for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
			refused(s, requests[i], sessions[k].names);
		zsp_session_free(s);
	}
	zsp_policy_set_free(set);

	/* a tool's path rule is a rule the session judges too */
	set = compile("zsp 1;\npolicy \"p\" { tool \"read_file\" { default allow; "
		      "deny path \"~/.ssh/**\"; } }\n", NULL, NULL);
	zsp_session *s = NULL;
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(set, NULL, "/home/u/proj", NULL, &s), ZSP_OK);
	refused(s, "read_file \"~/.ssh/id_rsa\"", "parameter HOME has no value");
	refused(s, "read_file \"/etc/hosts\"", "/.ssh/**");
	zsp_session_free(s);
	zsp_policy_set_free(set);

	/* a parameter of the policy's own, which no session can fill */
	set = compile("zsp 1;\npolicy \"p\" { param DATA; fs { read \"/\"; deny \"${DATA}/secret\"; } }\n",
		      NULL, NULL);
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(set, NULL, "/home/u/proj", "/home/u", &s), ZSP_OK);
	CU_ASSERT(zsp_session_refusal(s) && strstr(zsp_session_refusal(s), "parameter DATA has no value"));
	refused(s, "read \"/srv/secret\"", "DATA");
	zsp_session_free(s);
	zsp_policy_set_free(set);
}

/* A value the host defined when compiling stands; a session that names another place for it
 * would judge `~` (or a relative path) elsewhere than the rules: refused. */
static void test_conflict(void)
{
	zsp_policy_set *set = compile(secrets, "/home/a", "/home/a/proj");
	zsp_session *s = NULL;
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(set, NULL, "/home/a/proj", "/home/b", &s), ZSP_OK);
	CU_ASSERT(zsp_session_refusal(s) && strstr(zsp_session_refusal(s), "/home/b"));
	refused(s, "read \"~/.npmrc\"", "HOME");
	zsp_session_free(s);
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(set, NULL, "/home/b/proj", "/home/a", &s), ZSP_OK);
	refused(s, "read \"/etc/hosts\"", "WORKSPACE");
	zsp_session_free(s);
	/* the same directory, spelt another way, is no conflict; NULL takes the compiled value */
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(set, NULL, "/home/a/proj/", "/home//a", &s), ZSP_OK);
	CU_ASSERT_PTR_NULL(zsp_session_refusal(s));
	CU_ASSERT_EQUAL(decided(s, "read \"~/.npmrc\""), ZSP_ANSWER_DENY);
	zsp_session_free(s);
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(set, NULL, NULL, NULL, &s), ZSP_OK);
	CU_ASSERT_PTR_NULL(zsp_session_refusal(s));
	CU_ASSERT_EQUAL(decided(s, "read \"~/.npmrc\""), ZSP_ANSWER_DENY);
	CU_ASSERT_EQUAL(decided(s, "write \"src/x\""), ZSP_ANSWER_ALLOW);
	zsp_session_free(s);
	zsp_policy_set_free(set);
}

/* A session given no workspace or no home cannot place a relative or `~` request path: judged
 * against `/` (or as a name `~`), `read "~/.npmrc"` came back allow. */
static void test_null_places(void)
{
	zsp_policy_set *set = compile("zsp 1;\npolicy \"p\" {\n"
				      "  fs { read \"/\"; deny \"/home/u/.npmrc\"; }\n"
				      "  tool \"read_file\" { default allow; } }\n", NULL, NULL);
	zsp_session *s = NULL;
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(set, NULL, NULL, NULL, &s), ZSP_OK);
	CU_ASSERT_PTR_NULL(zsp_session_refusal(s));   /* no rule needs a parameter */
	CU_ASSERT_EQUAL(decided(s, "read \"/etc/hosts\""), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(decided(s, "read \"/home/u/.npmrc\""), ZSP_ANSWER_DENY);
	refused(s, "read \"~/.npmrc\"", "no home directory");
	refused(s, "read_file \"~\"", "no home directory");
	refused(s, "read \"src/main.rs\"", "no workspace");
	refused(s, "read_file \"../x\"", "no workspace");
	refused(s, "copy_path \"/etc/hosts\" \"copy\"", "no workspace");
	zsp_session_free(s);
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(set, NULL, "/home/u/proj", NULL, &s), ZSP_OK);
	CU_ASSERT_EQUAL(decided(s, "read \"src/main.rs\""), ZSP_ANSWER_ALLOW);
	refused(s, "read \"~/.npmrc\"", "no home directory");
	zsp_session_free(s);
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(set, NULL, NULL, "/home/u", &s), ZSP_OK);
	CU_ASSERT_EQUAL(decided(s, "read \"~/.npmrc\""), ZSP_ANSWER_DENY);
	refused(s, "read \"src/main.rs\"", "no workspace");
	zsp_session_free(s);
	zsp_policy_set_free(set);
}

/* Text that is no request, a tool the oracle does not know, the wrong number of arguments:
 * ZSP_EUSAGE and deny, from every value the answer held. */
static void test_malformed(void)
{
	zsp_policy_set *set = compile("zsp 1;\npolicy \"p\" { fs { read \"/\"; } default allow; }\n",
				      NULL, NULL);
	zsp_session *s = NULL;
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(set, NULL, "/w", "/h", &s), ZSP_OK);
	static const char *const bad[] = {
		"", "   ", "terminal", "terminal ls", "terminal \"ls", "read \"/etc\" \"/a\" \"/b\"",
		"\"ls\"", "frobnicate \"x\"", "read_file", "copy_path \"/a\"", "connect",
		"terminal \"ls\" trailing", "read \"\\q\"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused(s, bad[i], NULL);
	/* and the session still decides what is well formed */
	CU_ASSERT_EQUAL(decided(s, "read \"/etc/hosts\""), ZSP_ANSWER_ALLOW);
	CU_ASSERT_EQUAL(decided(s, "mcp:github:create_issue"), ZSP_ANSWER_ALLOW);
	zsp_session_free(s);
	zsp_policy_set_free(set);
}

/* NULL where a handle or a string belongs: a status, a deny where an answer is asked for, and
 * no crash. */
static void test_null_arguments(void)
{
	zsp_policy_set *set = compile("zsp 1;\npolicy \"p\" { fs { read \"/\"; } default allow; }\n",
				      NULL, NULL);
	zsp_session *s = (zsp_session *)1;
	CU_ASSERT_EQUAL(zsp_session_new(NULL, NULL, "/w", "/h", &s), ZSP_EUSAGE);
	CU_ASSERT_PTR_NULL(s);
	CU_ASSERT_EQUAL(zsp_session_new(set, NULL, "/w", "/h", NULL), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_session_new(set, "nope", "/w", "/h", &s), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_session_new(set, NULL, "w", "/h", &s), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_session_new(set, NULL, "/w", "h", &s), ZSP_EUSAGE);
	CU_ASSERT_PTR_NULL(s);
	refused(NULL, "read \"/etc/hosts\"", "no session");
	CU_ASSERT_PTR_NOT_NULL(zsp_session_refusal(NULL));
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(set, NULL, "/w", "/h", &s), ZSP_OK);
	refused(s, NULL, "no request");
	char *json = (char *)1;
	CU_ASSERT_EQUAL(zsp_session_decide(s, "read \"/etc/hosts\"", 0, NULL, &json), ZSP_EUSAGE);
	CU_ASSERT(json && strstr(json, "\"decision\":\"error\""));
	free(json);
	int answer = ZSP_ANSWER_ALLOW;
	CU_ASSERT_EQUAL(zsp_session_decide(NULL, NULL, 0, &answer, NULL), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(answer, ZSP_ANSWER_DENY);

	char err[256];
	CU_ASSERT_EQUAL(zsp_session_use_grants(NULL, NULL, NULL, NULL, 0), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_session_record_answer(NULL, "read \"/x\"", ZSP_ANSWER_DENY, "deny", err,
						  sizeof(err)), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_session_record_answer(s, NULL, ZSP_ANSWER_DENY, "deny", err, sizeof(err)),
			ZSP_EUSAGE);
	/* a number that is no answer is never recorded as one */
	CU_ASSERT_EQUAL(zsp_session_record_answer(s, "read \"/x\"", 0, "once", err, sizeof(err)),
			ZSP_EUSAGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not an answer"));
	CU_ASSERT_EQUAL(zsp_session_record_answer(s, "read \"/x\"", 7, "once", NULL, 0), ZSP_EUSAGE);
	zsp_session_free(s);
	zsp_session_free(NULL);

	zsp_grants *g = (zsp_grants *)1;
	int found = 7, removed = 7;
	long long id = -7;
	struct zsp_grant_spec spec = { .scope = ZSP_GRANT_GLOBAL, .tool = "terminal",
				       .match = ZSP_MATCH_EXACT, .pattern = "ls",
				       .decision = ZSP_ANSWER_ALLOW };
	CU_ASSERT_EQUAL(zsp_grants_open(NULL, NULL, err, sizeof(err)), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_grants_add(NULL, &spec, &id, err, sizeof(err)), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(id, -7);
	CU_ASSERT_EQUAL(zsp_grants_revoke(NULL, 1, &found, err, sizeof(err)), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(found, 0);
	CU_ASSERT_EQUAL(zsp_grants_end_thread(NULL, "t", &removed, err, sizeof(err)), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(removed, 0);
	zsp_grants_close(NULL);
	(void)g;

	zsp_policy_set *out = (zsp_policy_set *)1;
	CU_ASSERT_EQUAL(zsp_compile_buffer(NULL, "p.zsp", "", 0, &out), ZSP_EUSAGE);
	CU_ASSERT_PTR_NULL(out);
	CU_ASSERT_EQUAL(zsp_compile_file(NULL, "p.zsp", NULL), ZSP_EUSAGE);
	zsp_compiler *c = zsp_compiler_new();
	out = (zsp_policy_set *)1;
	CU_ASSERT_EQUAL(zsp_compile_file(c, NULL, &out), ZSP_EUSAGE);
	CU_ASSERT_PTR_NULL(out);
	CU_ASSERT_EQUAL(zsp_compiler_define(c, NULL, "x"), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_compiler_define(c, "X", NULL), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_compiler_define(NULL, "X", "x"), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_compiler_warning(c, NULL), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_compiler_warning(NULL, "error"), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_compiler_add_include_dir(NULL, "/x"), ZSP_EUSAGE);
	zsp_compiler_set_sink(NULL, NULL, NULL);
	zsp_compiler_set_datadir(NULL, "/x");
	CU_ASSERT_EQUAL(zsp_compiler_errors(NULL), 0);
	CU_ASSERT_EQUAL(zsp_compiler_warnings(NULL), 0);
	zsp_compiler_free(c);
	CU_ASSERT_EQUAL(zsp_policy_set_count(NULL), 0);
	CU_ASSERT_PTR_NULL(zsp_policy_set_name(NULL, 0));
	size_t len;
	json = (char *)1;
	CU_ASSERT_EQUAL(zsp_policy_set_ir_json(NULL, &json, &len), ZSP_EUSAGE);
	CU_ASSERT_PTR_NULL(json);
	zsp_policy_set_free(set);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	CU_pSuite s = CU_add_suite("fail closed", NULL, NULL);
	if (!s || !CU_add_test(s, "answer numbers", test_answer_numbers) ||
	    !CU_add_test(s, "the session fills the built-ins", test_fills_builtins) ||
	    !CU_add_test(s, "a missing parameter refuses", test_missing_parameter) ||
	    !CU_add_test(s, "a conflicting workspace or home refuses", test_conflict) ||
	    !CU_add_test(s, "no workspace or home to place a path", test_null_places) ||
	    !CU_add_test(s, "malformed requests", test_malformed) ||
	    !CU_add_test(s, "NULL arguments", test_null_arguments)) {
		CU_cleanup_registry();
		return 2;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures ? 1 : 0;
}
