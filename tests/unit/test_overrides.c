/* test_overrides.c: ZSP_BWRAP, ZSP_PROBE and ZSP_DATADIR choose nothing unless the build was
 * configured with --enable-test-overrides. Built twice: as configured (test_overrides), and
 * from runtime/cli.c and runtime/launch.c compiled without the switch (test_overrides_off,
 * through tests/unit/off-*.c), which is what a shipped build runs. */
#include "config.h"

#include <CUnit/Basic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/zsp.h"
#include "runtime/cli.h"
#include "runtime/launch.h"

/* test_overrides_off says EXPECT_HONOURED=0; the configured build honours them iff switched on */
#ifndef EXPECT_HONOURED
#ifdef ZSP_TEST_OVERRIDES
#define EXPECT_HONOURED 1
#else
#define EXPECT_HONOURED 0
#endif
#endif

static const char *const names[] = { "ZSP_BWRAP", "ZSP_PROBE", "ZSP_DATADIR" };

static void test_override(void)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		setenv(names[i], "/attacker/x", 1);
		const char *got = zsp_cli_test_override(names[i]);
		if (EXPECT_HONOURED) {
			CU_ASSERT_PTR_NOT_NULL_FATAL(got);
			CU_ASSERT_STRING_EQUAL(got, "/attacker/x");
		} else {
			CU_ASSERT_PTR_NULL(got);
		}
		setenv(names[i], "", 1);   /* empty is unset, in either build */
		CU_ASSERT_PTR_NULL(zsp_cli_test_override(names[i]));
		unsetenv(names[i]);
		CU_ASSERT_PTR_NULL(zsp_cli_test_override(names[i]));
	}
}

static void test_bwrap_path(void)
{
	setenv("ZSP_BWRAP", "/attacker/bwrap", 1);
	CU_ASSERT_STRING_EQUAL(zsp_bwrap_path(), EXPECT_HONOURED ? "/attacker/bwrap" : BWRAP_PATH);
	unsetenv("ZSP_BWRAP");
	CU_ASSERT_STRING_EQUAL(zsp_bwrap_path(), BWRAP_PATH);
}

static void collect(void *ctx, const char *text, size_t len)
{
	strncat(ctx, text, 4095 - strlen(ctx) < len ? 4095 - strlen(ctx) : len);
}

/* The data directory shows in the hint of an include that is found nowhere. */
static void test_datadir(void)
{
	static const char src[] = "zsp 1;\ninclude \"zsp-test-nowhere.zsp\";\npolicy \"p\" { default ask; }\n";
	static char text[4096];
	zsp_cli_compile o;
	zsp_cli_compile_init(&o, 1);
	setenv("ZSP_DATADIR", "/attacker/share", 1);
	zsp_compiler *c = zsp_cli_compiler(&o, NULL, NULL);
	zsp_compiler_set_sink(c, collect, text);
	zsp_policy_set *set = NULL;
	zsp_compile_buffer(c, "t.zsp", src, strlen(src), &set);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "cannot find included file"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, EXPECT_HONOURED ? "/attacker/share" : ZSP_DATADIR));
	if (!EXPECT_HONOURED)
		CU_ASSERT_PTR_NULL(strstr(text, "/attacker"));
	unsetenv("ZSP_DATADIR");
	zsp_policy_set_free(set);
	zsp_compiler_free(c);
	zsp_cli_compile_free(&o);
}

/* A test build says so in --version, a normal one adds nothing. */
static void test_note(void)
{
	const char *note = zsp_cli_build_note();
	CU_ASSERT_STRING_EQUAL(note, EXPECT_HONOURED
					     ? " (test build: honours ZSP_BWRAP, ZSP_PROBE, ZSP_DATADIR)" : "");
}

int main(void)
{
	zsp_cli_init("test_overrides");
	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	CU_pSuite s = CU_add_suite(EXPECT_HONOURED ? "overrides (test build)" : "overrides (normal build)",
				   NULL, NULL);
	CU_add_test(s, "zsp_cli_test_override", test_override);
	CU_add_test(s, "ZSP_BWRAP and the bwrap zsp-run runs", test_bwrap_path);
	CU_add_test(s, "ZSP_DATADIR and the data directory of the programs' compiler", test_datadir);
	CU_add_test(s, "the --version note", test_note);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
