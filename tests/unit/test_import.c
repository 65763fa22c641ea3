/* test_import.c: CUnit tests for the JSONC reader behind `zspc --import zed` (compiler/import_zed.c):
 * limits, escapes, UTF-8, numbers, comments and commas, seen through zsp_import_zed's output. */
#include <CUnit/Basic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/import_zed.h"
#include "compiler/zsp.h"

static char *out;
static char err[512];

static int import_n(const char *text, size_t len)
{
	free(out);
	out = NULL;
	return zsp_import_zed(text, len, "t.json", &out, err, sizeof(err));
}

/* true if `text` imports and the output contains `want`. */
static bool imports_to(const char *text, size_t len, const char *want)
{
	int rc = import_n(text, len);
	if (rc == ZSP_OK && out && strstr(out, want))
		return true;
	fprintf(stderr, "\n  import(%.*s): rc %d, err \"%s\", out:\n%s\n  want: %s\n", (int)len, text, rc,
		err, out ? out : "(null)", want);
	return false;
}

static bool ok(const char *text)
{
	return imports_to(text, strlen(text), "policy \"zed\"");
}

/* true if `text` is refused with exactly the message `want` ("LINE:COL: what"). */
static bool fails_n(const char *text, size_t len, const char *want)
{
	int rc = import_n(text, len);
	if (rc == ZSP_EPOLICY && !out && strcmp(err, want) == 0)
		return true;
	fprintf(stderr, "\n  import(%.*s): rc %d, err \"%s\", want \"%s\"\n", (int)len, text, rc, err,
		want);
	return false;
}

static bool fails(const char *text, const char *want)
{
	return fails_n(text, strlen(text), want);
}

/* A pattern in always_deny of terminal, as JSON source. */
static bool pattern_to(const char *json_pattern, const char *want_rule)
{
	char doc[512];
	snprintf(doc, sizeof(doc), "{\"tools\":{\"terminal\":{\"always_deny\":[\"%s\"]}}}", json_pattern);
	return imports_to(doc, strlen(doc), want_rule);
}

static void test_limits(void)
{
	char deep[200];
	memset(deep, '[', 64);
	memset(deep + 64, ']', 64);
	deep[128] = '\0';
	CU_ASSERT(fails(deep, "1:1: expected an object: Zed's settings, or their agent.tool_permissions"));
	memset(deep, '[', 65);
	memset(deep + 65, ']', 65);
	deep[130] = '\0';
	CU_ASSERT(fails(deep, "1:65: arrays and objects nest deeper than 64 levels"));
	/* depth counts objects too, and is given back when a container closes */
	char wide[1024] = "{\"x\": [";
	for (int i = 0; i < 100; i++)
		strcat(wide, "[[{}]],");
	strcat(wide, "0]}");
	CU_ASSERT(ok(wide));

	size_t big = (16u << 20) + 1;
	char *doc = malloc(big);
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	memset(doc, ' ', big);
	doc[0] = '{';
	doc[big - 1] = '}';
	CU_ASSERT(fails_n(doc, big, "1:1: the input is larger than 16 MiB"));
	doc[big - 2] = '}';
	CU_ASSERT(imports_to(doc, big - 1, "policy \"zed\""));
	free(doc);
}

static void test_escapes(void)
{
	CU_ASSERT(pattern_to("\\\"\\\\\\/\\b\\f\\n\\r\\t", "deny /\"\\/\\x08\\x0C\\n\\r\\t/;"));
	CU_ASSERT(pattern_to("\\u00e9\\u00C9", "deny /\xc3\xa9\xc3\x89/;"));
	CU_ASSERT(pattern_to("\\ud83d\\ude00", "deny /\xf0\x9f\x98\x80/;"));
	CU_ASSERT(pattern_to("\\uDBFF\\uDFFF", "deny /\xf4\x8f\xbf\xbf/;"));
	CU_ASSERT(pattern_to("a\\u0000b", "deny /a\\x00b/;"));
	CU_ASSERT(pattern_to("\\u002f", "deny /\\//;"));
	CU_ASSERT(fails("{\"a\":\"\\ude00\"}", "1:7: lone low surrogate \\uDE00"));
	CU_ASSERT(fails("{\"a\":\"\\ud83dx\"}",
			"1:7: lone high surrogate \\uD83D; it must be followed by a low one (\\uDC00 to \\uDFFF)"));
	CU_ASSERT(fails("{\"a\":\"\\ud83d\\u0041\"}",
			"1:7: lone high surrogate \\uD83D; it must be followed by a low one (\\uDC00 to \\uDFFF)"));
	CU_ASSERT(fails("{\"a\":\"\\u12\"}", "1:7: \\u needs four hex digits"));
	CU_ASSERT(fails("{\"a\":\"\\u12g4\"}", "1:7: \\u needs four hex digits"));
	CU_ASSERT(fails("{\"a\":\"\\x41\"}",
			"1:7: unknown escape `\\x` in a string; JSON's are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX"));
	CU_ASSERT(fails("{\"a\":\"\\'\"}",
			"1:7: unknown escape `\\'` in a string; JSON's are \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX"));
	CU_ASSERT(fails("{\"a\":\"x\\", "1:6: unterminated string"));
	CU_ASSERT(fails("{\"a\":\"x\\\"}", "1:6: unterminated string"));
	CU_ASSERT(fails("{\"a\":\"x\ny\"}", "1:6: unterminated string"));
	CU_ASSERT(fails("{\"a\":\"\x01\"}", "1:7: control character 0x01 in a string; write it as \\u0001"));
	/* DEL needs no escape in JSON; in the regex literal it gets one */
	CU_ASSERT(pattern_to("a\x7f", "deny /a\\x7F/;"));
	CU_ASSERT(fails_n("{\"a\":\"\0\"}", 8, "1:7: control character 0x00 in a string; write it as \\u0000"));
}

static void test_utf8(void)
{
	static const struct {
		const char *text;
		const char *err;
	} bad[] = {
		{ "{\"a\":\"\xc0\x80\"}", "1:7: invalid UTF-8" },          /* overlong NUL */
		{ "{\"a\":\"\xe0\x80\x80\"}", "1:7: invalid UTF-8" },      /* overlong */
		{ "{\"a\":\"\xed\xa0\x80\"}", "1:7: invalid UTF-8" },      /* a surrogate */
		{ "{\"a\":\"\xf4\x90\x80\x80\"}", "1:7: invalid UTF-8" },  /* above U+10FFFF */
		{ "{\"a\":\"\xf5\x80\x80\x80\"}", "1:7: invalid UTF-8" },
		{ "{\"a\":\"\x80\"}", "1:7: invalid UTF-8" },              /* stray continuation */
		{ "{\"a\":\"\xe2\x82\"}", "1:7: invalid UTF-8" },          /* truncated */
		{ "{\"a\":\"x\"}\xe2\x82", "1:10: invalid UTF-8" },        /* at the very end */
		{ "// caf\xe9\n{}", "1:7: invalid UTF-8" },                /* Latin-1, in a comment */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT(fails(bad[i].text, bad[i].err));
	CU_ASSERT(pattern_to("\xf0\x9f\x98\x80 \xe2\x82\xac \xc3\xa9", "deny /\xf0\x9f\x98\x80 \xe2\x82\xac \xc3\xa9/;"));
	/* columns count characters, like zsp's diagnostics */
	CU_ASSERT(fails("{\"\xc3\xa9\xc3\xa9\": x}", "1:8: unknown word `x`; JSON's are true, false and null"));
	CU_ASSERT(ok("\xef\xbb\xbf{}"));
	CU_ASSERT(fails("{}\xef\xbb\xbf", "1:3: unexpected text after the JSON value"));
}

static void test_numbers_and_words(void)
{
	CU_ASSERT(ok("{\"a\": [0, -0, 1.5, -12.25e+10, 3E-2, 7e0, 123456789012345678901234567890]}"));
	CU_ASSERT(fails("{\"a\": 01}", "1:7: invalid number: a leading zero"));
	CU_ASSERT(fails("{\"a\": 1.}", "1:7: invalid number: digits must follow `.`"));
	CU_ASSERT(fails("{\"a\": 1e}", "1:7: invalid number: digits must follow the exponent"));
	CU_ASSERT(fails("{\"a\": 1e+}", "1:7: invalid number: digits must follow the exponent"));
	CU_ASSERT(fails("{\"a\": -}", "1:7: invalid number"));
	CU_ASSERT(fails("{\"a\": .5}", "1:7: expected a value, found `.`"));
	CU_ASSERT(fails("{\"a\": +1}", "1:7: expected a value, found `+`"));
	CU_ASSERT(fails("{\"a\": 0x10}", "1:8: expected `,` or `}` in the object, found `x`"));
	CU_ASSERT(ok("{\"a\": [true, false, null]}"));
	CU_ASSERT(fails("{\"a\": tru}", "1:7: unknown word `tru`; JSON's are true, false and null"));
	CU_ASSERT(fails("{\"a\": nullx}", "1:7: unknown word `nullx`; JSON's are true, false and null"));
	CU_ASSERT(fails("{\"a\": NaN}", "1:7: unknown word `NaN`; JSON's are true, false and null"));
	CU_ASSERT(fails("{\"a\": 'x'}", "1:7: expected a value, found `'`"));
	CU_ASSERT(fails("{a: 1}", "1:2: expected a string key or `}`, found `a`"));
	CU_ASSERT(fails("{\"a\" 1}", "1:6: expected `:` after the key, found `1`"));
}

static void test_commas_and_comments(void)
{
	CU_ASSERT(ok("{\"a\": [1, 2,],}"));
	CU_ASSERT(ok("{\"a\": [],\n}"));
	CU_ASSERT(fails("{\"a\": [,]}", "1:8: expected a value, found `,`"));
	CU_ASSERT(fails("{,}", "1:2: expected a string key or `}`, found `,`"));
	CU_ASSERT(fails("{\"a\": [1,,2]}", "1:10: expected a value, found `,`"));
	CU_ASSERT(fails("{\"a\": [1 2]}", "1:10: expected `,` or `]` in the array, found `2`"));
	CU_ASSERT(fails("{\"a\": [1,", "1:7: unterminated array"));
	CU_ASSERT(fails("{\"a\": 1,", "1:1: unterminated object"));
	CU_ASSERT(fails("{\"a\":", "1:6: expected a value, found the end of the input"));
	CU_ASSERT(ok("/**/{/* ** / */\"a\"/**/:/***/1// x\n}// no newline at the end"));
	CU_ASSERT(ok("{\"a\": \"// not a comment /* either */\"}"));
	CU_ASSERT(fails("{} /* x *", "1:4: unterminated /* comment"));
	CU_ASSERT(fails("{} /", "1:4: unexpected text after the JSON value"));
	CU_ASSERT(fails("{\"a\": / 1}", "1:7: expected a value, found `/`"));
	CU_ASSERT(fails("", "1:1: expected a value, found the end of the input"));
	CU_ASSERT(fails("  // only a comment\n", "2:1: expected a value, found the end of the input"));
	CU_ASSERT(fails("{}\n{}", "2:1: unexpected text after the JSON value"));
	CU_ASSERT(fails("\v{}", "1:1: expected a value, found byte 0x0B"));
}

static void test_duplicates(void)
{
	CU_ASSERT(fails("{\"tools\": {\"terminal\": {}, \"fetch\": {}, \"terminal\": {}}}",
			"1:41: duplicate key \"terminal\" (first at 1:12); Zed would use the last one, zspc refuses to guess"));
	CU_ASSERT(fails("{\"tools\": {\"t\": {\"always_deny\": [{\"pattern\": \"a\", \"pattern\": \"b\"}]}}}",
			"1:51: duplicate key \"pattern\" (first at 1:35); Zed would use the last one, zspc refuses to guess"));
	/* the earliest repetition is reported, whatever the keys sort to */
	CU_ASSERT(fails("{\"z\": 1, \"a\": 1, \"z\": 2, \"a\": 2}",
			"1:18: duplicate key \"z\" (first at 1:2); Zed would use the last one, zspc refuses to guess"));
	/* duplicates in settings that are not imported are not zspc's business */
	const char *dups = "{\"theme\": 1, \"theme\": 2, \"agent\": {\"x\": 1, \"x\": 2}}";
	CU_ASSERT(imports_to(dups, strlen(dups), "# other settings, not imported: theme, theme, agent.x, agent.x"));
	CU_ASSERT(fails("{\"agent\": {}, \"agent\": {}}",
			"1:15: duplicate key \"agent\" (first at 1:2); Zed would use the last one, zspc refuses to guess"));
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static void test_api_contract(void)
{
	char small[8];
	out = NULL;
	CU_ASSERT_EQUAL(zsp_import_zed("{", 1, "x", &out, small, sizeof(small)), ZSP_EPOLICY);
	CU_ASSERT_PTR_NULL(out);
	CU_ASSERT_STRING_EQUAL(small, "1:1: un");
	CU_ASSERT_EQUAL(zsp_import_zed("{", 1, "x", &out, NULL, 0), ZSP_EPOLICY);
	CU_ASSERT_EQUAL(zsp_import_zed("{}", 2, NULL, &out, err, sizeof(err)), ZSP_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT(starts_with(out, "# imported from (input) by zspc --import zed\nzsp 1;\n"));
	free(out);
	out = NULL;
	/* a control character in the source name cannot break out of the header comment */
	CU_ASSERT_EQUAL(zsp_import_zed("{}", 2, "a\nzsp 2;", &out, err, sizeof(err)), ZSP_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	CU_ASSERT(starts_with(out, "# imported from a\\nzsp 2; by zspc"));
	/* the input need not be NUL-terminated */
	CU_ASSERT(imports_to("{\"default\": \"deny\"}xxxx", 19, "default deny;"));
}

int main(void)
{
	unsigned failures;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	CU_pSuite suite = CU_add_suite("import", NULL, NULL);
	if (!suite || !CU_add_test(suite, "size and depth limits", test_limits) ||
	    !CU_add_test(suite, "string escapes", test_escapes) ||
	    !CU_add_test(suite, "UTF-8 and positions", test_utf8) ||
	    !CU_add_test(suite, "numbers and words", test_numbers_and_words) ||
	    !CU_add_test(suite, "commas and comments", test_commas_and_comments) ||
	    !CU_add_test(suite, "duplicate keys", test_duplicates) ||
	    !CU_add_test(suite, "API contract", test_api_contract)) {
		CU_cleanup_registry();
		return CU_get_error();
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	free(out);
	return failures ? 1 : 0;
}
