/* test_embed.c: an agent host's view of libzsp: only zsp.h, linked against the shared
 * library, so a symbol missing from compiler/libzsp.sym fails the build of this test. */
#include "config.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zsp.h>

static void test_compile_and_emit(void)
{
	zsp_compiler *c = zsp_compiler_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_STRING_EQUAL(zsp_version(), PACKAGE_VERSION);
	CU_ASSERT_EQUAL(zsp_compiler_add_include_dir(c, "/nonexistent"), ZSP_OK);
	CU_ASSERT_EQUAL(zsp_compiler_define(c, "WORKSPACE", "/home/u/p"), ZSP_OK);
	CU_ASSERT_EQUAL(zsp_compiler_warning(c, "error"), ZSP_OK);
	zsp_compiler_set_datadir(c, "/nonexistent");
	zsp_compiler_set_sink(c, NULL, NULL);
	const char *text = "zsp 1;\npolicy \"w\" { fs { read \"/\"; write \"${WORKSPACE}\"; } }\n";
	zsp_policy_set *set = NULL;
	CU_ASSERT_EQUAL_FATAL(zsp_compile_buffer(c, "w.zsp", text, strlen(text), &set), ZSP_OK);
	CU_ASSERT_EQUAL(zsp_compiler_errors(c), 0);
	CU_ASSERT_EQUAL(zsp_compiler_warnings(c), 0);
	CU_ASSERT_EQUAL(zsp_policy_set_count(set), 1);
	CU_ASSERT_STRING_EQUAL(zsp_policy_set_name(set, 0), "w");
	char *json = NULL;
	size_t len = 0;
	CU_ASSERT_EQUAL_FATAL(zsp_policy_set_ir_json(set, &json, &len), ZSP_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"path\": \"/home/u/p\""));
	free(json);
	zsp_policy_set_free(set);

	const char *bad = "zsp 1;\npolicy \"w\" { fs { read \"rel\"; } }\n";
	set = (zsp_policy_set *)1;
	CU_ASSERT_EQUAL(zsp_compile_buffer(c, "w.zsp", bad, strlen(bad), &set), ZSP_EPOLICY);
	CU_ASSERT_PTR_NULL(set);
	CU_ASSERT_EQUAL(zsp_compiler_errors(c), 1);
	zsp_compiler_free(c);
}

/* What an agent host does: compile once, then ask a session before each tool call. */
static void test_session(void)
{
	zsp_compiler *c = zsp_compiler_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	const char *text =
		"zsp 1;\n"
		"policy \"w\" {\n"
		"  fs { read \"/\"; write \"${WORKSPACE}\"; deny \"~/.ssh\"; }\n"
		"  tool \"terminal\" { default ask; allow /^cargo\\s+test\\b/; deny /^git\\s+push\\b/; }\n"
		"}\n";
	zsp_policy_set *set = NULL;
	CU_ASSERT_EQUAL(zsp_compiler_define(c, "WORKSPACE", "/home/u/p"), ZSP_OK);
	CU_ASSERT_EQUAL(zsp_compiler_define(c, "HOME", "/home/u"), ZSP_OK);
	CU_ASSERT_EQUAL_FATAL(zsp_compile_buffer(c, "w.zsp", text, strlen(text), &set), ZSP_OK);
	zsp_session *s = NULL;
	CU_ASSERT_EQUAL(zsp_session_new(set, "nope", NULL, NULL, &s), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_session_new(set, NULL, "relative", NULL, &s), ZSP_EUSAGE);
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(set, NULL, "/home/u/p", "/home/u", &s), ZSP_OK);
	static const struct {
		const char *request;
		int answer;
	} cases[] = {
		{ "terminal \"cargo test --all\"", ZSP_ANSWER_ALLOW },
		{ "terminal \"git push origin main\"", ZSP_ANSWER_DENY },
		{ "terminal \"make\"", ZSP_ANSWER_ASK },
		{ "terminal \"sudo rm -rf /\"", ZSP_ANSWER_DENY },
		{ "terminal \"cargo test $(id)\"", ZSP_ANSWER_DENY },
		{ "write \"src/main.rs\"", ZSP_ANSWER_ALLOW },
		{ "write \"/etc/passwd\"", ZSP_ANSWER_DENY },
		{ "read \"~/.ssh/id_ed25519\"", ZSP_ANSWER_DENY },
		{ "connect \"example.com:443\"", ZSP_ANSWER_DENY },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int answer = -1;
		char *json = NULL;
		CU_ASSERT_EQUAL(zsp_session_decide(s, cases[i].request, 1, &answer, &json), ZSP_OK);
		CU_ASSERT_EQUAL(answer, cases[i].answer);
		CU_ASSERT_PTR_NOT_NULL(json);
		CU_ASSERT(json && json[0] == '{' && strstr(json, "\"trace\":["));
		free(json);
	}
	int answer = -1;
	char *json = NULL;
	CU_ASSERT_EQUAL(zsp_session_decide(s, "terminal ls", 0, &answer, &json), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(answer, ZSP_ANSWER_DENY);   /* no decision: never what a host acts on */
	CU_ASSERT(json && strstr(json, "\"decision\":\"error\""));
	free(json);
	CU_ASSERT_EQUAL(zsp_session_decide(s, "terminal \"ls\"", 0, &answer, NULL), ZSP_OK);
	CU_ASSERT_EQUAL(answer, ZSP_ANSWER_ASK);
	zsp_session_free(s);
	zsp_policy_set_free(set);
	zsp_compiler_free(c);
}

/* A glob deny applies to a path of any length: a path longer than PATH_MAX once skipped the
 * glob rules and fell to `read "/"`. */
static void test_long_path(void)
{
	zsp_compiler *c = zsp_compiler_new();
	const char *text = "zsp 1;\npolicy \"p\" { fs { read \"/\"; deny \"**/.env\", \"/srv/*/secret\"; } }\n";
	zsp_policy_set *set = NULL;
	zsp_session *s = NULL;
	CU_ASSERT_EQUAL_FATAL(zsp_compile_buffer(c, "p.zsp", text, strlen(text), &set), ZSP_OK);
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(set, NULL, "/w", NULL, &s), ZSP_OK);
	static char req[12000];
	size_t n = (size_t)sprintf(req, "read \"");
	while (n < 9000)
		n += (size_t)sprintf(req + n, "/abcdefgh");
	for (int k = 0; k < 3; k++) {
		static const char *const tails[] = { "/.env\"", "/.env/inner\"", "/x\"" };
		static const int want[] = { ZSP_ANSWER_DENY, ZSP_ANSWER_DENY, ZSP_ANSWER_ALLOW };
		strcpy(req + n, tails[k]);
		int answer = -1;
		CU_ASSERT_EQUAL(zsp_session_decide(s, req, 0, &answer, NULL), ZSP_OK);
		CU_ASSERT_EQUAL(answer, want[k]);
	}
	int answer = -1;
	CU_ASSERT_EQUAL(zsp_session_decide(s, "read \"/srv/app/secret/k\"", 0, &answer, NULL), ZSP_OK);
	CU_ASSERT_EQUAL(answer, ZSP_ANSWER_DENY);
	CU_ASSERT_EQUAL(zsp_session_decide(s, "read \"/srv/app/public\"", 0, &answer, NULL), ZSP_OK);
	CU_ASSERT_EQUAL(answer, ZSP_ANSWER_ALLOW);
	zsp_session_free(s);
	zsp_policy_set_free(set);
	zsp_compiler_free(c);
}

/* The shell terminal commands run with (zsp_session_set_shell): known by the file the path
 * resolves to; one the oracle does not model, or one the sandbox may write, makes an allow ask,
 * and a deny still denies. */
static void test_shell(void)
{
	char ws[] = "/tmp/zsp-embed-shell.XXXXXX", other[] = "/tmp/zsp-embed-other.XXXXXX";
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(ws));
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(other));
	char path[4][128];
	snprintf(path[0], sizeof(path[0]), "%s/zsh", other);    /* named zsh, is sh */
	snprintf(path[1], sizeof(path[1]), "%s/bash", other);   /* named bash, is env */
	snprintf(path[2], sizeof(path[2]), "%s/bash", ws);      /* bash, where the sandbox writes */
	snprintf(path[3], sizeof(path[3]), "%s/fish", other);   /* no such file */
	CU_ASSERT_EQUAL(symlink("/bin/sh", path[0]), 0);
	CU_ASSERT_EQUAL(symlink("/usr/bin/env", path[1]), 0);
	CU_ASSERT_EQUAL(symlink("/bin/bash", path[2]), 0);
	zsp_compiler *c = zsp_compiler_new();
	CU_ASSERT_EQUAL(zsp_compiler_define(c, "WORKSPACE", ws), ZSP_OK);
	const char *text = "zsp 1;\npolicy \"p\" {\n  fs { read \"/\"; write \"${WORKSPACE}\"; }\n"
			   "  tool \"terminal\" { default ask; allow /^ls\\b/; deny /^rm\\b/; }\n}\n";
	zsp_policy_set *set = NULL;
	zsp_session *s = NULL;
	CU_ASSERT_EQUAL_FATAL(zsp_compile_buffer(c, "p.zsp", text, strlen(text), &set), ZSP_OK);
	CU_ASSERT_EQUAL_FATAL(zsp_session_new(set, NULL, ws, NULL, &s), ZSP_OK);
	static const struct {
		int shell;                 /* -1: the default; 4: /bin/bash; 5: /bin/sh */
		int ls, rm, make;          /* the answers to ls, rm -rf x, make */
	} cases[] = {
		{ -1, ZSP_ANSWER_ALLOW, ZSP_ANSWER_DENY, ZSP_ANSWER_ASK },
		{ 4, ZSP_ANSWER_ALLOW, ZSP_ANSWER_DENY, ZSP_ANSWER_ASK },
		{ 5, ZSP_ANSWER_ALLOW, ZSP_ANSWER_DENY, ZSP_ANSWER_ASK },
		{ 0, ZSP_ANSWER_ALLOW, ZSP_ANSWER_DENY, ZSP_ANSWER_ASK },
		{ 1, ZSP_ANSWER_ASK, ZSP_ANSWER_DENY, ZSP_ANSWER_ASK },
		{ 2, ZSP_ANSWER_ASK, ZSP_ANSWER_DENY, ZSP_ANSWER_ASK },
		{ 3, ZSP_ANSWER_ASK, ZSP_ANSWER_DENY, ZSP_ANSWER_ASK },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int k = cases[i].shell;
		const char *shell = k < 0 ? NULL : k == 4 ? "/bin/bash" : k == 5 ? "/bin/sh" : path[k];
		CU_ASSERT_EQUAL(zsp_session_set_shell(s, shell), ZSP_OK);
		const char *reqs[] = { "terminal \"ls -la\"", "terminal \"rm -rf x\"", "terminal \"make\"" };
		const int want[] = { cases[i].ls, cases[i].rm, cases[i].make };
		for (int r = 0; r < 3; r++) {
			int answer = -1;
			char *json = NULL;
			CU_ASSERT_EQUAL(zsp_session_decide(s, reqs[r], 0, &answer, &json), ZSP_OK);
			CU_ASSERT_EQUAL(answer, want[r]);
			if (answer != want[r])
				printf("\n  shell %s, %s: %s", shell ? shell : "(default)", reqs[r], json);
			if (r == 0 && want[r] == ZSP_ANSWER_ASK)
				CU_ASSERT(json && strstr(json, "\"reason\":\"unsupported\""));
			if (shell)
				CU_ASSERT(json && strstr(json, "\"shell\":"));
			free(json);
		}
	}
	CU_ASSERT_EQUAL(zsp_session_set_shell(s, "bash"), ZSP_EUSAGE);
	zsp_session_free(s);
	zsp_policy_set_free(set);
	zsp_compiler_free(c);
	for (int k = 0; k < 3; k++)
		unlink(path[k]);
	rmdir(ws);
	rmdir(other);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	CU_pSuite s = CU_add_suite("embed", NULL, NULL);
	if (!s || !CU_add_test(s, "compile and emit", test_compile_and_emit) ||
	    !CU_add_test(s, "session", test_session) ||
	    !CU_add_test(s, "long path", test_long_path) ||
	    !CU_add_test(s, "shell", test_shell)) {
		CU_cleanup_registry();
		return 2;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures ? 1 : 0;
}
