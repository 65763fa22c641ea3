/* test_wsl.c: CUnit tests for backends/wsl.c: a table of Windows paths and their Linux paths (or
 * refusals), Windows quoting round-tripped through a CommandLineToArgvW parser, the invocation. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/wsl.h"

/* expect NULL: refused, and why must contain `refusal` */
struct path_case {
	const char *in, *distribution, *expect, *refusal;
};

static const struct path_case path_cases[] = {
	/* drives */
	{ "C:\\Users\\me\\proj", NULL, "/mnt/c/Users/me/proj", NULL },
	{ "c:\\Users\\me\\proj", NULL, "/mnt/c/Users/me/proj", NULL },
	{ "D:\\src", NULL, "/mnt/d/src", NULL },
	{ "z:\\", NULL, "/mnt/z", NULL },
	{ "C:\\", NULL, "/mnt/c", NULL },
	{ "C:/", NULL, "/mnt/c", NULL },
	{ "C:/x", NULL, "/mnt/c/x", NULL },
	{ "C:/Users\\me/proj\\src", NULL, "/mnt/c/Users/me/proj/src", NULL },
	{ "C:\\Users\\me\\proj\\", NULL, "/mnt/c/Users/me/proj", NULL },
	{ "C:\\Users\\me\\proj\\\\\\", NULL, "/mnt/c/Users/me/proj", NULL },
	{ "C:\\Users\\\\me//proj", NULL, "/mnt/c/Users/me/proj", NULL },
	{ "C:\\Users\\me\\My Project", NULL, "/mnt/c/Users/me/My Project", NULL },
	{ "C:\\Program Files (x86)\\Tool\\", NULL, "/mnt/c/Program Files (x86)/Tool", NULL },
	{ "C:\\Users\\Jürgen\\Документы\\項目", NULL, "/mnt/c/Users/Jürgen/Документы/項目", NULL },
	{ "C:\\Users\\me\\emoji 😀 dir", NULL, "/mnt/c/Users/me/emoji 😀 dir", NULL },
	{ "C:\\a\\.\\b\\.", NULL, "/mnt/c/a/b", NULL },
	{ "C:\\a\\..\\b", NULL, "/mnt/c/b", NULL },
	{ "C:\\a\\b\\..\\..", NULL, "/mnt/c", NULL },
	{ "C:\\..\\..\\etc", NULL, "/mnt/c/etc", NULL },
	{ "C:\\.git\\x.y", NULL, "/mnt/c/.git/x.y", NULL },
	/* long and device paths */
	{ "\\\\?\\C:\\long\\path", NULL, "/mnt/c/long/path", NULL },
	{ "\\\\?\\c:\\long\\path\\", NULL, "/mnt/c/long/path", NULL },
	{ "\\\\?\\C:\\", NULL, "/mnt/c", NULL },
	{ "\\\\?\\C:\\trailing dot.", NULL, "/mnt/c/trailing dot.", NULL },
	{ "\\\\.\\C:\\dev\\..\\x", NULL, "/mnt/c/x", NULL },
	{ "\\\\?\\C:\\a\\..\\b", NULL, NULL, "Windows takes literally" },
	{ "\\\\?\\C:", NULL, NULL, "device path" },
	{ "\\\\?\\Volume{26a21bda-a627-11d7-9931-806e6f6e6963}\\x", NULL, NULL, "device path" },
	{ "\\\\.\\pipe\\x", NULL, NULL, "device path" },
	/* WSL shares */
	{ "\\\\wsl$\\Ubuntu\\home\\me", NULL, "/home/me", NULL },
	{ "\\\\wsl.localhost\\Ubuntu\\home\\me", NULL, "/home/me", NULL },
	{ "\\\\wsl.localhost\\Ubuntu\\home\\me", "Ubuntu", "/home/me", NULL },
	{ "\\\\WSL$\\ubuntu\\home\\me\\", "Ubuntu", "/home/me", NULL },
	{ "\\\\wsl$\\Ubuntu", NULL, "/", NULL },
	{ "\\\\wsl$\\Ubuntu\\", NULL, "/", NULL },
	{ "\\\\wsl$\\Ubuntu\\..\\etc", NULL, "/etc", NULL },
	{ "\\\\wsl$/Ubuntu-22.04/home/me/my proj", NULL, "/home/me/my proj", NULL },
	{ "\\\\?\\UNC\\wsl.localhost\\Ubuntu\\home\\me", "Ubuntu", "/home/me", NULL },
	{ "\\\\wsl$\\Debian\\home\\me", "Ubuntu", NULL, "`Debian`, but the command runs in `Ubuntu`" },
	{ "\\\\wsl.localhost\\Ubuntu\\home", "Ubuntu-22.04", NULL, "`Ubuntu`, but the command runs in `Ubuntu-22.04`" },
	{ "\\\\wsl$", NULL, NULL, "names no distribution" },
	{ "\\\\wsl$\\", NULL, NULL, "names no distribution" },
	/* other UNC: no Linux path */
	{ "\\\\server\\share\\x", NULL, NULL, "\\\\server\\share is a network share" },
	{ "\\\\server\\share", NULL, NULL, "network share" },
	{ "\\\\?\\UNC\\server\\share\\x", NULL, NULL, "network share" },
	{ "\\\\localhost\\c$\\Users", NULL, NULL, "network share" },
	{ "\\\\\\x", NULL, NULL, "needs a server" },
	/* relative in some way */
	{ "C:foo", NULL, NULL, "relative to the current directory of drive C" },
	{ "c:", NULL, NULL, "relative to the current directory of drive C" },
	{ "\\foo", NULL, NULL, "root of the current drive" },
	{ "foo\\bar", NULL, NULL, "relative path" },
	{ "./x", NULL, NULL, "relative path" },
	{ "..\\x", NULL, NULL, "relative path" },
	{ "", NULL, NULL, "empty" },
	/* names Windows reads otherwise */
	{ "C:\\proj.", NULL, NULL, "ends with a dot" },
	{ "C:\\proj \\src", NULL, NULL, "ends with a space" },
	{ "C:\\file.txt:stream", NULL, NULL, "alternate data stream" },
	/* Linux paths are kept */
	{ "/home/me", NULL, "/home/me", NULL },
	{ "/home/me/", "Ubuntu", "/home/me/", NULL },
	{ "/", NULL, "/", NULL },
	{ "/mnt/c/a\\b", NULL, "/mnt/c/a\\b", NULL },
};

static void test_path_table(void)
{
	size_t n = sizeof(path_cases) / sizeof(path_cases[0]);
	CU_ASSERT(n >= 30);
	for (size_t i = 0; i < n; i++) {
		const struct path_case *c = &path_cases[i];
		char why[512], *out = NULL;
		int rc = zsp_wsl_path(c->in, c->distribution, &out, why, sizeof(why));
		bool ok = c->expect ? rc == ZSP_OK && out && strcmp(out, c->expect) == 0
				    : rc == ZSP_EUSAGE && !out && strstr(why, c->refusal) != NULL;
		if (!ok)
			fprintf(stderr, "\n  zsp_wsl_path(\"%s\", %s) = %d \"%s\" (%s); expected \"%s\"\n", c->in,
				c->distribution ? c->distribution : "NULL", rc, out ? out : "", rc ? why : "",
				c->expect ? c->expect : c->refusal);
		CU_ASSERT(ok);
		free(out);
	}
}

static void test_path_why_truncated(void)
{
	char why[8], *out;
	CU_ASSERT_EQUAL(zsp_wsl_path("\\\\server\\share", NULL, &out, why, sizeof(why)), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(strlen(why), 7);
	CU_ASSERT_EQUAL(zsp_wsl_path("foo", NULL, &out, NULL, 0), ZSP_EUSAGE);
	CU_ASSERT_PTR_NULL(out);
}

static void test_is_windows_path(void)
{
	CU_ASSERT(zsp_wsl_is_windows_path("C:\\x"));
	CU_ASSERT(zsp_wsl_is_windows_path("c:x"));
	CU_ASSERT(zsp_wsl_is_windows_path("\\\\wsl$\\U"));
	CU_ASSERT(zsp_wsl_is_windows_path("\\x"));
	CU_ASSERT(!zsp_wsl_is_windows_path("/home/me"));
	CU_ASSERT(!zsp_wsl_is_windows_path("1000"));
	CU_ASSERT(!zsp_wsl_is_windows_path("ab:c"));
	CU_ASSERT(!zsp_wsl_is_windows_path(""));
	CU_ASSERT(!zsp_wsl_is_windows_path("~/x"));
}

static void test_path_distribution(void)
{
	size_t len = 0;
	const char *d = zsp_wsl_path_distribution("\\\\wsl$\\Ubuntu\\home", &len);
	CU_ASSERT(d && len == 6 && strncmp(d, "Ubuntu", len) == 0);
	d = zsp_wsl_path_distribution("\\\\?\\UNC\\wsl.localhost\\Debian", &len);
	CU_ASSERT(d && len == 6 && strncmp(d, "Debian", len) == 0);
	CU_ASSERT_PTR_NULL(zsp_wsl_path_distribution("\\\\server\\share", &len));
	CU_ASSERT_PTR_NULL(zsp_wsl_path_distribution("\\\\wsl$\\", &len));
	CU_ASSERT_PTR_NULL(zsp_wsl_path_distribution("C:\\x", &len));
	CU_ASSERT_PTR_NULL(zsp_wsl_path_distribution(NULL, &len));
}

static const char *quote_cases[][2] = {
	{ "plain", "plain" },
	{ "", "\"\"" },
	{ "a b", "\"a b\"" },
	{ "a\tb", "\"a\tb\"" },
	{ "a\"b", "\"a\\\"b\"" },
	{ "a\\\"b", "\"a\\\\\\\"b\"" },
	{ "C:\\dir\\", "C:\\dir\\" },
	{ "C:\\my dir\\", "\"C:\\my dir\\\\\"" },
	{ "C:\\my dir\\\\", "\"C:\\my dir\\\\\\\\\"" },
	{ "a\\\\b c", "\"a\\\\b c\"" },
	{ "\\\\server\\share", "\\\\server\\share" },
	{ "\"", "\"\\\"\"" },
	{ "it's & 100% <ok> ^|", "\"it's & 100% <ok> ^|\"" },
	{ "Grüße", "Grüße" },
};

static void test_quote_table(void)
{
	for (size_t i = 0; i < sizeof(quote_cases) / sizeof(quote_cases[0]); i++) {
		char *q = zsp_wsl_quote(quote_cases[i][0]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(q);
		if (strcmp(q, quote_cases[i][1]) != 0)
			fprintf(stderr, "\n  quote(%s) = %s, expected %s\n", quote_cases[i][0], q, quote_cases[i][1]);
		CU_ASSERT_STRING_EQUAL(q, quote_cases[i][1]);
		free(q);
	}
}

/* A command-line splitter after the rules of the Microsoft C runtime since Visual C++ 2008
 * (msvcr90 and the UCRT's parse_cmdline; CommandLineToArgvW agrees on everything quoting here
 * produces): the program name (argv[0]) runs to the next space or tab outside quotes, quotes only
 * delimit it. Then arguments are separated by spaces and tabs outside quotes; 2N backslashes and
 * a `"` give N backslashes and toggle quoting; 2N+1 backslashes and a `"` give N backslashes and
 * a literal `"`; backslashes not before a `"` are literal; inside quotes `""` gives a literal `"`
 * and quoting goes on (the post-2008 rule; before, quoting ended there). Returns argc. */
static size_t split_command_line(const char *s, char **argv, size_t max)
{
	size_t argc = 0;
	char *arg = malloc(strlen(s) + 1);
	size_t n = 0;
	bool quoted = false;
	for (; *s && (quoted || (*s != ' ' && *s != '\t')); s++) {
		if (*s == '"')
			quoted = !quoted;
		else
			arg[n++] = *s;
	}
	arg[n] = '\0';
	argv[argc++] = strdup(arg);
	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || argc == max)
			break;
		n = 0;
		quoted = false;
		while (*s && (quoted || (*s != ' ' && *s != '\t'))) {
			size_t bs = 0;
			while (*s == '\\') {
				bs++;
				s++;
			}
			if (*s == '"') {
				for (size_t k = 0; k < bs / 2; k++)
					arg[n++] = '\\';
				if (bs % 2) {
					arg[n++] = '"';
				} else if (quoted && s[1] == '"') {
					arg[n++] = '"';
					s++;
				} else {
					quoted = !quoted;
				}
				s++;
				continue;
			}
			for (size_t k = 0; k < bs; k++)
				arg[n++] = '\\';
			if (!*s || (!quoted && (*s == ' ' || *s == '\t')))
				break;
			arg[n++] = *s++;
		}
		arg[n] = '\0';
		argv[argc++] = strdup(arg);
	}
	free(arg);
	return argc;
}

static void test_parser_itself(void)
{
	char *argv[8];
	size_t argc = split_command_line("\"C:\\Program Files\\x.exe\" a\\\\b \"\"\"\" \"a\"\"b\" c\\\\\\\"d\\\\\"e f\" \"\"", argv, 8);
	CU_ASSERT_EQUAL_FATAL(argc, 6);
	CU_ASSERT_STRING_EQUAL(argv[0], "C:\\Program Files\\x.exe");
	CU_ASSERT_STRING_EQUAL(argv[1], "a\\\\b");
	CU_ASSERT_STRING_EQUAL(argv[2], "\"");
	CU_ASSERT_STRING_EQUAL(argv[3], "a\"b");
	CU_ASSERT_STRING_EQUAL(argv[4], "c\\\"d\\e f");
	CU_ASSERT_STRING_EQUAL(argv[5], "");
	for (size_t i = 0; i < argc; i++)
		free(argv[i]);
}

/* xorshift: the same sequence on every machine */
static unsigned long long rng_state = 0x5eed2025c0ffeeULL;
static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

static void test_quote_round_trip(void)
{
	static const char *const pieces[] = { " ", "\t", "\"", "\\", "\\", "\\\\", "a", "b", "Z", "'", "é",
					      "€", "😀", "項", "^", "&", "%", "\n", "=", ":" };
	enum { ITERATIONS = 5000, MAXARGS = 7, MAXPIECES = 12 };
	size_t failures = 0;
	for (int it = 0; it < ITERATIONS; it++) {
		char *args[MAXARGS], *line = NULL;
		size_t nargs = 1 + rnd(MAXARGS - 1), len = 0;
		size_t cap = 16;
		line = malloc(cap);
		memcpy(line, "wsl.exe", 8);
		len = 7;
		for (size_t i = 0; i < nargs; i++) {
			char buf[MAXPIECES * 4 + 4] = "";
			size_t np = rnd(5) == 0 ? 0 : rnd(MAXPIECES + 1);
			for (size_t k = 0; k < np; k++)
				strcat(buf, pieces[rnd(sizeof(pieces) / sizeof(pieces[0]))]);
			if (rnd(4) == 0)
				strcat(buf, "\\");
			args[i] = strdup(buf);
			char *q = zsp_wsl_quote(buf);
			size_t ql = strlen(q);
			if (len + ql + 2 > cap) {
				cap = 2 * (len + ql + 2);
				line = realloc(line, cap);
			}
			line[len++] = ' ';
			memcpy(line + len, q, ql + 1);
			len += ql;
			free(q);
		}
		char *out[MAXARGS + 2];
		size_t argc = split_command_line(line, out, MAXARGS + 2);
		bool same = argc == nargs + 1 && strcmp(out[0], "wsl.exe") == 0;
		for (size_t i = 0; same && i < nargs; i++)
			same = strcmp(out[i + 1], args[i]) == 0;
		if (!same && failures++ < 5)
			fprintf(stderr, "\n  round trip failed: %s\n", line);
		CU_ASSERT(same);
		for (size_t i = 0; i < argc; i++)
			free(out[i]);
		for (size_t i = 0; i < nargs; i++)
			free(args[i]);
		free(line);
	}
	CU_ASSERT_EQUAL(failures, 0);
}

static char captured[4096];
static void capture(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	size_t room = sizeof(captured) - strlen(captured) - 1;
	strncat(captured, text, len < room ? len : room);
}

static const char *const cmd[] = { "cargo", "test", "--", "a b", "" };

static char *build(zsp_wsl_invocation *inv, int *rc)
{
	zsp_arena *a = zsp_arena_new();
	zsp_diag d;
	captured[0] = '\0';
	zsp_diag_init(&d, capture, NULL);
	*rc = zsp_wsl_translate(inv, a, &d);
	char *line = *rc == ZSP_OK ? zsp_wsl_command_line(inv) : NULL;
	zsp_arena_free(a);
	return line;
}

static void test_invocation(void)
{
	const char *names[] = { "WORKSPACE", "HOME", "N" };
	const char *values[] = { "C:\\Users\\me\\My Project\\", "/home/me", "10" };
	const char *includes[] = { "D:\\zsp lib" };
	const char *warnings[] = { "no-shadowed" };
	zsp_wsl_invocation inv = {
		.distribution = "Ubuntu", .user = "me", .policy_file = "C:\\Users\\me\\zsp\\work.zsp",
		.policy_name = "workspace", .define_names = names, .define_values = values, .ndefines = 3,
		.includes = includes, .nincludes = 1, .warnings = warnings, .nwarnings = 1, .strict = true,
		.command = cmd, .ncommand = 5,
	};
	int rc;
	char *line = build(&inv, &rc);
	CU_ASSERT_EQUAL(rc, ZSP_OK);
	CU_ASSERT_STRING_EQUAL(line,
			       "wsl.exe --distribution Ubuntu --user me --cd \"/mnt/c/Users/me/My Project\" --exec "
			       "/usr/bin/zsp-run --policy workspace --strict -Wno-shadowed -I \"/mnt/d/zsp lib\" -p "
			       "/mnt/c/Users/me/zsp/work.zsp -D \"WORKSPACE=/mnt/c/Users/me/My Project\" -D "
			       "HOME=/home/me -D N=10 -- cargo test -- \"a b\" \"\"\n");
	/* the caller's arrays are untouched */
	CU_ASSERT_STRING_EQUAL(values[0], "C:\\Users\\me\\My Project\\");
	free(line);
}

static void test_invocation_distribution_from_path(void)
{
	const char *names[] = { "WORKSPACE" };
	const char *values[] = { "\\\\wsl$\\Ubuntu\\home\\me\\proj" };
	zsp_wsl_invocation inv = { .policy_file = "\\\\wsl.localhost\\ubuntu\\etc\\zsp\\w.zsp", .define_names = names,
				   .define_values = values, .ndefines = 1, .command = cmd, .ncommand = 1 };
	int rc;
	char *line = build(&inv, &rc);
	CU_ASSERT_EQUAL(rc, ZSP_OK);
	CU_ASSERT_STRING_EQUAL(line, "wsl.exe --distribution ubuntu --cd /home/me/proj --exec /usr/bin/zsp-run -p "
				     "/etc/zsp/w.zsp -D WORKSPACE=/home/me/proj -- cargo\n");
	free(line);

	values[0] = "\\\\wsl$\\Debian\\home\\me\\proj";
	inv = (zsp_wsl_invocation){ .policy_file = "\\\\wsl.localhost\\Ubuntu\\w.zsp", .define_names = names,
				    .define_values = values, .ndefines = 1, .command = cmd, .ncommand = 1 };
	line = build(&inv, &rc);
	CU_ASSERT_EQUAL(rc, ZSP_EPOLICY);
	CU_ASSERT_PTR_NULL(line);
	CU_ASSERT_PTR_NOT_NULL(strstr(captured, "-D WORKSPACE `\\\\wsl$\\Debian\\home\\me\\proj`"));
	CU_ASSERT_PTR_NOT_NULL(strstr(captured, "`Debian`, but the command runs in `Ubuntu`"));
}

static void test_invocation_cd(void)
{
	const char *names[] = { "WORKSPACE" };
	const char *values[] = { "C:\\w" };
	zsp_wsl_invocation inv = { .cd = "E:\\elsewhere\\", .policy_file = "/etc/zsp/w.zsp", .define_names = names,
				   .define_values = values, .ndefines = 1, .command = cmd, .ncommand = 1 };
	int rc;
	char *line = build(&inv, &rc);
	CU_ASSERT_STRING_EQUAL(line, "wsl.exe --cd /mnt/e/elsewhere --exec /usr/bin/zsp-run -p /etc/zsp/w.zsp -D "
				     "WORKSPACE=/mnt/c/w -- cargo\n");
	free(line);

	inv = (zsp_wsl_invocation){ .cd = "~", .policy_file = "/w.zsp", .command = cmd, .ncommand = 1 };
	line = build(&inv, &rc);
	CU_ASSERT_STRING_EQUAL(line, "wsl.exe --cd ~ --exec /usr/bin/zsp-run -p /w.zsp -- cargo\n");
	free(line);

	/* a relative WORKSPACE is zsp-run's business, and no --cd */
	values[0] = "proj";
	inv = (zsp_wsl_invocation){ .policy_file = "/w.zsp", .define_names = names, .define_values = values,
				    .ndefines = 1, .command = cmd, .ncommand = 1 };
	line = build(&inv, &rc);
	CU_ASSERT_STRING_EQUAL(line, "wsl.exe --exec /usr/bin/zsp-run -p /w.zsp -D WORKSPACE=proj -- cargo\n");
	free(line);
}

static void test_invocation_errors(void)
{
	const char *names[] = { "WORKSPACE", "CACHE" };
	const char *values[] = { "\\\\server\\share\\proj", "C:cache" };
	zsp_wsl_invocation inv = { .distribution = "", .cd = "relative\\dir", .policy_file = "policy.zsp",
				   .define_names = names, .define_values = values, .ndefines = 2, .command = cmd,
				   .ncommand = 1 };
	int rc;
	char *line = build(&inv, &rc);
	CU_ASSERT_EQUAL(rc, ZSP_EPOLICY);
	CU_ASSERT_PTR_NULL(line);
	CU_ASSERT_PTR_NOT_NULL(strstr(captured, "--distribution needs a name"));
	CU_ASSERT_PTR_NOT_NULL(strstr(captured, "the policy file `policy.zsp`"));
	CU_ASSERT_PTR_NOT_NULL(strstr(captured, "-D WORKSPACE `\\\\server\\share\\proj`"));
	CU_ASSERT_PTR_NOT_NULL(strstr(captured, "-D CACHE `C:cache`"));
	CU_ASSERT_PTR_NOT_NULL(strstr(captured, "--cd `relative\\dir`"));
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	CU_pSuite s = CU_add_suite("wsl", NULL, NULL);
	CU_add_test(s, "path translation table", test_path_table);
	CU_add_test(s, "reason cut to the buffer", test_path_why_truncated);
	CU_add_test(s, "-D values taken for Windows paths", test_is_windows_path);
	CU_add_test(s, "distribution named by a path", test_path_distribution);
	CU_add_test(s, "quoting table", test_quote_table);
	CU_add_test(s, "the test's command-line parser", test_parser_itself);
	CU_add_test(s, "quoting round trip (property)", test_quote_round_trip);
	CU_add_test(s, "invocation", test_invocation);
	CU_add_test(s, "distribution from a \\\\wsl$ path", test_invocation_distribution_from_path);
	CU_add_test(s, "--cd and WORKSPACE", test_invocation_cd);
	CU_add_test(s, "errors name each path", test_invocation_errors);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
