/* test_eval.c: CUnit tests of the SBPL evaluator on hand-written profiles: precedence, filters,
 * parameters, networks, the reader, and parse errors with their positions. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/sbpl/sbpl-eval.h"

static const struct sbpl_param params[] = {
	{ "WS", "/private/w" },
	{ "HOME", "/Users/u" },
	{ "PORT", "3128" },
};

/* "allow", "deny", "parse: MSG" or "decide: MSG" for OP on TARGET under PROFILE. */
static const char *decide(const char *profile, const char *op, const char *target)
{
	static char out[600];
	char err[512];
	sbpl_profile *p = sbpl_parse(profile, strlen(profile), params, 3, err, sizeof(err));
	if (!p) {
		snprintf(out, sizeof(out), "parse: %s", err);
		return out;
	}
	struct sbpl_verdict v;
	if (sbpl_decide(p, op, target, &v, err, sizeof(err)) != 0)
		snprintf(out, sizeof(out), "decide: %s", err);
	else
		snprintf(out, sizeof(out), "%s", v.allow ? "allow" : "deny");
	sbpl_free(p);
	return out;
}

struct row {
	const char *profile, *op, *target, *want;
};

static void run_rows(const struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *got = decide(rows[i].profile, rows[i].op, rows[i].target);
		if (strcmp(got, rows[i].want) != 0)
			fprintf(stderr, "\n  row %zu: %s %s: want %s, got %s\n", i, rows[i].op,
				rows[i].target ? rows[i].target : "-", rows[i].want, got);
		CU_ASSERT_STRING_EQUAL(got, rows[i].want);
	}
}

#define ROWS(r) run_rows((r), sizeof(r) / sizeof((r)[0]))
#define V1 "(version 1)(deny default)"

static void test_last_match_wins(void)
{
	static const struct row rows[] = {
		{ V1, "file-read-data", "/a", "deny" },
		{ "(version 1)(allow default)", "file-read-data", "/a", "allow" },
		{ "(version 1)", "file-read-data", "/a", "allow" }, /* no default: Seatbelt allows */
		{ V1 "(allow file-read* (subpath \"/a\"))(deny file-read* (subpath \"/a/b\"))", "file-read-data",
		  "/a/b/c", "deny" },
		{ V1 "(allow file-read* (subpath \"/a\"))(deny file-read* (subpath \"/a/b\"))", "file-read-data",
		  "/a/c", "allow" },
		{ V1 "(deny file-read* (subpath \"/a/b\"))(allow file-read* (subpath \"/a\"))", "file-read-data",
		  "/a/b/c", "allow" },
		/* a wildcard deny after a specific allow */
		{ V1 "(allow file-write-data (subpath \"/a\"))(deny file-write* (literal \"/a/x\"))",
		  "file-write-data", "/a/x", "deny" },
		/* the same operation: the later allow wins */
		{ V1 "(deny file-write-unlink (subpath \"/a\"))(allow file-write-unlink (subpath \"/a\"))",
		  "file-write-unlink", "/a/x", "allow" },
		/* (allow default) anywhere is only the fallback */
		{ "(version 1)(deny file-read* (literal \"/a\"))(allow default)", "file-read-data", "/a", "deny" },
	};
	ROWS(rows);
}

static void test_specific_deny_beats_wildcard_allow(void)
{
	static const struct row rows[] = {
		{ V1 "(deny file-write-unlink (literal \"/w\"))(allow file-write* (subpath \"/w\"))",
		  "file-write-unlink", "/w", "deny" },
		{ V1 "(deny file-write-unlink (literal \"/w\"))(allow file-write* (subpath \"/w\"))",
		  "file-write-data", "/w", "allow" },
		{ V1 "(deny file-write-unlink (literal \"/w\"))(allow file-write* (subpath \"/w\"))",
		  "file-write-unlink", "/w/x", "allow" },
		/* a narrower wildcard deny outlives a wider wildcard allow */
		{ V1 "(deny file-write* (literal \"/w\"))(allow file* (subpath \"/w\"))", "file-write-data", "/w",
		  "deny" },
		{ V1 "(deny file-write* (literal \"/w\"))(allow file* (subpath \"/w\"))", "file-read-data", "/w",
		  "allow" },
		/* the same wildcard: last match wins */
		{ V1 "(deny file-write* (literal \"/w\"))(allow file-write* (subpath \"/w\"))", "file-write-data",
		  "/w", "allow" },
		/* several operations in one rule: the narrowest that applies counts */
		{ V1 "(deny file-write* file-write-unlink (literal \"/w\"))(allow file-write* (subpath \"/\"))",
		  "file-write-unlink", "/w", "deny" },
		{ V1 "(deny file-write* file-write-unlink (literal \"/w\"))(allow file-write* (subpath \"/\"))",
		  "file-write-data", "/w", "allow" },
		/* a later specific allow still overrides */
		{ V1 "(deny file-write-unlink (literal \"/w\"))(allow file-write* (subpath \"/w\"))"
		     "(allow file-write-unlink (literal \"/w\"))",
		  "file-write-unlink", "/w", "allow" },
	};
	ROWS(rows);
}

static void test_operations(void)
{
	static const struct row rows[] = {
		{ V1 "(allow file-read*)", "file-read-metadata", "/x", "allow" },
		{ V1 "(allow file-read*)", "file-write-data", "/x", "deny" },
		{ V1 "(allow file-read-metadata)", "file-read-data", "/x", "deny" },
		{ V1 "(allow file-write*)", "file-write-create", "/x", "allow" },
		{ V1 "(allow file*)", "file-ioctl", "/x", "allow" },
		{ V1 "(allow network*)", "network-outbound", "a.b:443", "allow" },
		{ V1 "(allow process*)", "process-fork", NULL, "allow" },
		{ V1 "(allow process-exec process-fork)", "process-fork", NULL, "allow" },
		{ V1 "(allow process-info* (target same-sandbox))", "process-info-pidinfo", "same-sandbox", "allow" },
		{ V1 "(allow process-info* (target same-sandbox))", "process-info-pidinfo", "other", "deny" },
		{ V1 "(allow signal (target same-sandbox))", "signal", "same-sandbox", "allow" },
		{ V1 "(allow mach-lookup (global-name \"com.apple.x\"))", "mach-lookup", "com.apple.x", "allow" },
		{ V1 "(allow mach-lookup (global-name \"com.apple.x\"))", "mach-lookup", "com.apple.y", "deny" },
		{ V1 "(allow sysctl-read (sysctl-name \"hw.ncpu\") (sysctl-name-prefix \"hw.optional.\"))",
		  "sysctl-read", "hw.optional.avx", "allow" },
		{ V1 "(allow sysctl-read (sysctl-name \"hw.ncpu\") (sysctl-name-prefix \"hw.optional.\"))",
		  "sysctl-read", "hw.ncpu", "allow" },
		{ V1 "(allow sysctl-read (sysctl-name \"hw.ncpu\"))", "sysctl-read", "hw.ncpu2", "deny" },
		{ V1 "(allow system-socket (socket-domain AF_UNIX))", "system-socket", "AF_UNIX", "allow" },
		{ V1 "(allow system-socket (socket-domain AF_UNIX))", "system-socket", "AF_INET", "deny" },
		/* a filter of another kind never matches */
		{ V1 "(allow file-read* (global-name \"/x\"))", "file-read-data", "/x", "deny" },
		{ V1 "(allow file-read*)", "file-read*", "/x", "decide: unknown operation `file-read*` (give a "
							   "concrete one such as file-read-data)" },
		{ V1, "file-read-data", "x", "decide: operation `file-read-data` needs an absolute path, got \"x\"" },
	};
	ROWS(rows);
}

static void test_path_filters(void)
{
	static const struct row rows[] = {
		{ V1 "(allow file-read* (literal \"/a/b\"))", "file-read-data", "/a/b", "allow" },
		{ V1 "(allow file-read* (literal \"/a/b\"))", "file-read-data", "/a/b/c", "deny" },
		{ V1 "(allow file-read* (subpath \"/a/b\"))", "file-read-data", "/a/b", "allow" },
		{ V1 "(allow file-read* (subpath \"/a/b\"))", "file-read-data", "/a/b/c", "allow" },
		{ V1 "(allow file-read* (subpath \"/a/b\"))", "file-read-data", "/a/bc", "deny" },
		{ V1 "(allow file-read* (subpath \"/a/b/\"))", "file-read-data", "/a/b", "allow" },
		{ V1 "(allow file-read* (subpath \"/\"))", "file-read-data", "/anything", "allow" },
		/* regexes are unanchored unless they say ^ or $ */
		{ V1 "(allow file-read* (regex #\"\\.env\"))", "file-read-data", "/a/.env.local", "allow" },
		{ V1 "(allow file-read* (regex #\"^/a/[^/]+/x$\"))", "file-read-data", "/a/b/x", "allow" },
		{ V1 "(allow file-read* (regex #\"^/a/[^/]+/x$\"))", "file-read-data", "/a/b/c/x", "deny" },
		{ V1 "(allow file-read* (regex #\"^/a/[^/]+/x$\"))", "file-read-data", "/z/a/b/x", "deny" },
		{ V1 "(allow file-read* (regex #\"^/w/\\.git(/.*)?$\"))", "file-read-data", "/w/.git", "allow" },
		{ V1 "(allow file-read* (regex #\"^/w/\\.git(/.*)?$\"))", "file-read-data", "/w/xgit", "deny" },
		{ V1 "(allow file-read* (regex #\"^/w/\\.git(/.*)?$\"))", "file-read-data", "/w/.github", "deny" },
		/* filters of one rule are alternatives */
		{ V1 "(allow file-read* (literal \"/a\") (literal \"/b\"))", "file-read-data", "/b", "allow" },
		{ V1 "(allow file-read* (require-any (literal \"/a\") (literal \"/b\")))", "file-read-data", "/a",
		  "allow" },
		{ V1 "(allow file-read* (require-any (literal \"/a\") (literal \"/b\")))", "file-read-data", "/c",
		  "deny" },
	};
	ROWS(rows);
}

#define PROTECTED                                                                                  \
	V1 "(allow file-write* (require-all (subpath \"/w\") (require-not (literal \"/w/.git\"))"    \
	   " (require-not (subpath \"/w/.git\")) (require-not (regex #\"^/w/\\.vscode(/.*)?$\"))))"

static void test_require_not_in_require_all(void)
{
	static const struct row rows[] = {
		{ PROTECTED, "file-write-data", "/w/src/a.c", "allow" },
		{ PROTECTED, "file-write-data", "/w/.git", "deny" },
		{ PROTECTED, "file-write-create", "/w/.git/config", "deny" },
		{ PROTECTED, "file-write-create", "/w/.gitignore", "allow" },
		{ PROTECTED, "file-write-create", "/w/.vscode/settings.json", "deny" },
		{ PROTECTED, "file-write-create", "/elsewhere", "deny" },
		{ V1 "(allow file-read* (require-all))", "file-read-data", "/x", "allow" },
		{ V1 "(allow file-read* (require-any))", "file-read-data", "/x", "deny" },
		{ V1 "(allow file-read* (require-not (require-not (literal \"/x\"))))", "file-read-data", "/x", "allow" },
	};
	ROWS(rows);
}

static void test_params(void)
{
	static const struct row rows[] = {
		{ V1 "(allow file-write* (subpath (param \"WS\")))", "file-write-data", "/private/w/a", "allow" },
		{ V1 "(allow file-write* (subpath (param \"WS\")))", "file-write-data", "/w/a", "deny" },
		{ V1 "(allow file-write* (literal (string-append (param \"WS\") \"/.git\")))", "file-write-data",
		  "/private/w/.git", "allow" },
		{ V1 "(allow file-read* (regex (string-append \"^\" (param \"HOME\") #\"/\\.ssh(/.*)?$\")))",
		  "file-read-data", "/Users/u/.ssh/id", "allow" },
		{ V1 "(allow file-read* (string-append))", "file-read-data", "/x",
		  "parse: 1:44: unknown filter `string-append`" },
		{ V1 "(allow file-read* (subpath (param \"NOPE\")))", "file-read-data", "/x",
		  "parse: 1:60: unknown parameter `NOPE` (give -D NOPE=VALUE)" },
		{ V1 "(allow network-outbound (remote ip (string-append \"localhost:\" (param \"PORT\"))))",
		  "network-outbound", "localhost:3128", "allow" },
	};
	ROWS(rows);
}

static void test_network(void)
{
	static const struct row rows[] = {
		{ V1, "network-outbound", "localhost:3128", "deny" },
		{ V1 "(allow network-outbound (remote ip \"localhost:3128\"))", "network-outbound", "localhost:3128",
		  "allow" },
		{ V1 "(allow network-outbound (remote ip \"localhost:3128\"))", "network-outbound", "127.0.0.1:3128",
		  "allow" },
		{ V1 "(allow network-outbound (remote ip \"localhost:3128\"))", "network-outbound", "[::1]:3128",
		  "allow" },
		{ V1 "(allow network-outbound (remote ip \"localhost:3128\"))", "network-outbound", "localhost:3129",
		  "deny" },
		{ V1 "(allow network-outbound (remote ip \"localhost:3128\"))", "network-outbound", "example.com:3128",
		  "deny" },
		{ V1 "(allow network-outbound (remote ip \"localhost:*\"))", "network-outbound", "localhost:1",
		  "allow" },
		{ V1 "(allow network-outbound (remote ip \"*:443\"))", "network-outbound", "example.com:443", "allow" },
		{ V1 "(allow network-outbound (remote ip \"*:*\"))", "network-outbound", "10.1.2.3:22", "allow" },
		/* srt's bug: matching the local end admits everything */
		{ V1 "(allow network-outbound (local ip \"*:*\"))", "network-outbound", "example.com:443", "allow" },
		{ V1 "(allow network-outbound (local ip \"localhost:*\"))", "network-outbound", "example.com:443",
		  "deny" },
		{ V1 "(allow network-bind (local ip \"localhost:*\"))", "network-bind", "localhost:8080", "allow" },
		{ V1 "(allow network-bind (remote ip \"*:*\"))", "network-bind", "localhost:8080", "deny" },
		{ V1 "(allow network-outbound (remote unix-socket (path-literal \"/private/var/run/s\")))",
		  "network-outbound", "/private/var/run/s", "allow" },
		{ V1 "(allow network-outbound (remote unix-socket (path-literal \"/private/var/run/s\")))",
		  "network-outbound", "localhost:80", "deny" },
		{ V1 "(allow network-outbound (literal \"/private/var/run/syslog\"))", "network-outbound",
		  "/private/var/run/syslog", "allow" },
		{ V1 "(allow network-outbound (remote ip \"*:*\"))", "network-outbound", "/private/var/run/s", "deny" },
		{ V1, "network-outbound", "example.com", "decide: expected HOST:PORT or /socket/path, got \"example.com\"" },
		{ V1 "(allow network-outbound (remote ip \"example.com:443\"))", "network-outbound", "x:1",
		  "parse: 1:61: the host of an ip filter is `*` or `localhost`, got \"example.com\"" },
		{ V1 "(allow network-outbound (remote ip \"*:99999\"))", "network-outbound", "x:1",
		  "parse: 1:61: the port of an ip filter is `*` or 1..65535, got \"99999\"" },
		{ V1 "(allow network-outbound (remote tcp \"*:*\"))", "network-outbound", "x:1",
		  "parse: 1:50: expected (remote ip \"HOST:PORT\")" },
	};
	ROWS(rows);
}

static void test_reader(void)
{
	static const struct row rows[] = {
		{ "; a profile\n(version 1) ; trailing\n(deny default)\n;(allow default)\n", "file-read-data", "/x",
		  "deny" },
		{ V1 "(allow file-read* (literal \"/a \\\"q\\\" b\"))", "file-read-data", "/a \"q\" b", "allow" },
		{ V1 "(allow file-read* (literal \"/a\\\\b\"))", "file-read-data", "/a\\b", "allow" },
		{ V1 "(allow file-read* (literal \"/tab\\there\"))", "file-read-data", "/tab\there", "allow" },
		{ V1 "(allow file-read* (literal \"/\\x41\"))", "file-read-data", "/A", "allow" },
		{ V1 "(allow file-read* (literal \"/a;b\"))", "file-read-data", "/a;b", "allow" },
		/* a regex keeps its backslashes; \" does not end it */
		{ V1 "(allow file-read* (regex #\"^/a\\\"b$\"))", "file-read-data", "/a\"b", "allow" },
		{ "\n\n  (version 1)\n\t(deny default)\n(allow\n  file-read*\n  (subpath \"/\"))", "file-read-data",
		  "/x", "allow" },
	};
	ROWS(rows);
}

static void test_errors(void)
{
	static const struct row rows[] = {
		{ "(deny default)", "file-read-data", "/x", "parse: 1:1: the profile has no (version 1)" },
		{ "(version 2)", "file-read-data", "/x", "parse: 1:1: only (version 1) is known" },
		{ "(version 1)\n(deny default", "file-read-data", "/x", "parse: 2:1: unclosed parenthesis" },
		{ "(version 1))", "file-read-data", "/x", "parse: 1:12: unexpected `)`" },
		{ "(version 1)\n(allow file-read* (literal \"/x", "file-read-data", "/x",
		  "parse: 2:28: unterminated string" },
		{ "(version 1)\n(allow file-read* (literal \"/\\q\"))", "file-read-data", "/x",
		  "parse: 2:30: bad escape in a string (known: \\\\ \\\" \\n \\t \\r \\xHH)" },
		{ "(version 1)\n(allow file-read-everything)", "file-read-data", "/x",
		  "parse: 2:8: unknown operation `file-read-everything`" },
		{ "(version 1)\n(allow bogus*)", "file-read-data", "/x", "parse: 2:8: unknown operation `bogus*`" },
		{ "(version 1)\n(allow file-read* (vnode-type REGULAR-FILE))", "file-read-data", "/x",
		  "parse: 2:19: unknown filter `vnode-type`" },
		{ "(version 1)\n(allow file-read* \"/x\")", "file-read-data", "/x",
		  "parse: 2:19: expected a filter such as (literal \"/path\")" },
		{ "(version 1)\n(allow (literal \"/x\"))", "file-read-data", "/x",
		  "parse: 2:1: (allow ...) names no operation" },
		{ "(version 1)\n(import \"system.sb\")", "file-read-data", "/x",
		  "parse: 2:1: unknown form `(import ...)`" },
		{ "(version 1)\n(deny default (literal \"/x\"))", "file-read-data", "/x",
		  "parse: 2:15: (deny default) takes no filter" },
		{ "(version 1)\n(allow file-read* (require-not (literal \"/a\") (literal \"/b\")))", "file-read-data",
		  "/x", "parse: 2:19: (require-not FILTER) takes exactly one filter" },
		{ "(version 1)\n(allow file-read* (literal \"/x\" \"/y\"))", "file-read-data", "/x",
		  "parse: 2:19: (literal ...) takes one string" },
		{ "(version 1)\n(allow file-read* (literal #\"/x\"))", "file-read-data", "/x",
		  "parse: 2:28: a regex literal where a string is expected" },
		{ "(version 1)\n(allow process-info* (target other))", "file-read-data", "/x",
		  "parse: 2:22: expected (target same-sandbox)" },
	};
	ROWS(rows);
}

/* Malformed input is refused, never a crash: deep nesting, NUL bytes, truncated escapes. */
static void test_limits(void)
{
	size_t n = 10000;
	char *deep = malloc(2 * n + 32);
	strcpy(deep, "(version 1)");
	memset(deep + 11, '(', n);
	memset(deep + 11 + n, ')', n);
	deep[11 + 2 * n] = 0;
	CU_ASSERT_STRING_EQUAL(decide(deep, "file-read-data", "/x"), "parse: 1:76: nesting deeper than 64");
	/* the message after the position is the C library's */
	CU_ASSERT_NSTRING_EQUAL(decide("(version 1)\n(allow file-read* (regex #\"(\"))", "file-read-data", "/x"),
				"parse: 2:26: bad regex \"(\": ", 26);
	free(deep);
	char err[256];
	CU_ASSERT_PTR_NULL(sbpl_parse("(version 1)\0", 12, NULL, 0, err, sizeof(err)));
	CU_ASSERT_STRING_EQUAL(err, "1:1: the profile holds a NUL byte");
	static const char *const broken[] = { "(", ")", "\"", "#\"", "#\"\\", "\"\\x4", "\"\\", "(version 1)(allow",
					      "(version 1)(allow file-read* (require-all (", "#", "(()", "((version 1))" };
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++)
		CU_ASSERT_STRING_EQUAL(strncmp(decide(broken[i], "file-read-data", "/x"), "parse: ", 7) ? "no error"
												: "error",
				       "error");
	CU_ASSERT_STRING_EQUAL(decide("(version 1)(allow file-read* (require-all (require-all (require-all "
				      "(require-all (literal \"/x\"))))))",
				      "file-read-data", "/x"),
			       "allow");
}

int main(void)
{
	CU_pSuite suite;
	unsigned failures;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	suite = CU_add_suite("sbpl-eval", NULL, NULL);
	if (!suite || !CU_add_test(suite, "last match wins", test_last_match_wins) ||
	    !CU_add_test(suite, "specific deny beats wildcard allow", test_specific_deny_beats_wildcard_allow) ||
	    !CU_add_test(suite, "operations and wildcards", test_operations) ||
	    !CU_add_test(suite, "literal, subpath, regex", test_path_filters) ||
	    !CU_add_test(suite, "require-not inside require-all", test_require_not_in_require_all) ||
	    !CU_add_test(suite, "params and string-append", test_params) ||
	    !CU_add_test(suite, "network", test_network) || !CU_add_test(suite, "reader", test_reader) ||
	    !CU_add_test(suite, "parse errors with positions", test_errors) ||
	    !CU_add_test(suite, "limits", test_limits)) {
		CU_cleanup_registry();
		return CU_get_error();
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures ? 1 : 0;
}
