/* test_env.c: CUnit tests for compiler/env.c, what `env keep` lets into a sandbox: among the
 * LC_ names a glob reaches the locale categories only; a name given exactly always passes. */
#include <CUnit/Basic.h>
#include <stdbool.h>

#include "compiler/env.h"

static bool keeps(const char *pattern, const char *name)
{
	zsp_ir_env keep = { .name = pattern };
	return zsp_env_keeps(&keep, 1, name);
}

static void test_locale(void)
{
	static const char *const locale[] = {
		"LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY",
		"LC_MESSAGES", "LC_PAPER", "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE",
		"LC_MEASUREMENT", "LC_IDENTIFICATION",
	};
	for (size_t i = 0; i < sizeof(locale) / sizeof(locale[0]); i++) {
		CU_ASSERT_TRUE(keeps("LC_*", locale[i]));
		CU_ASSERT_TRUE(keeps("*", locale[i]));
	}
	CU_ASSERT_TRUE(keeps("LC_C*", "LC_CTYPE"));
	CU_ASSERT_TRUE(keeps("LC_C*", "LC_COLLATE"));
	CU_ASSERT_FALSE(keeps("LC_C*", "LC_TIME"));
}

static void test_not_locale(void)
{
	static const char *const globs[] = { "LC_*", "*", "L*", "LC_?*", "LC_EVI?", "LC_C*" };
	static const char *const names[] = { "LC_EVIL", "LC_X", "LC_", "LC_CEVIL", "LC_all" };
	for (size_t g = 0; g < sizeof(globs) / sizeof(globs[0]); g++)
		for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++)
			CU_ASSERT_FALSE(keeps(globs[g], names[n]));
	/* a glob's LANG, LANGUAGE: names of their own, not LC_ */
	CU_ASSERT_TRUE(keeps("LANG*", "LANG"));
	CU_ASSERT_TRUE(keeps("LANG*", "LANGUAGE"));
	CU_ASSERT_FALSE(keeps("LC_*", "LANG"));
}

static void test_exact(void)
{
	CU_ASSERT_TRUE(keeps("LC_EVIL", "LC_EVIL"));
	CU_ASSERT_FALSE(keeps("LC_EVIL", "LC_EVIL2"));
	CU_ASSERT_TRUE(keeps("PATH", "PATH"));
	CU_ASSERT_FALSE(keeps("PATH", "PATHX"));
	zsp_ir_env two[] = { { .name = "LC_*" }, { .name = "LC_X" } };
	CU_ASSERT_TRUE(zsp_env_keeps(two, 2, "LC_X"));
	CU_ASSERT_TRUE(zsp_env_keeps(two, 2, "LC_ALL"));
	CU_ASSERT_FALSE(zsp_env_keeps(two, 2, "LC_EVIL"));
	CU_ASSERT_FALSE(zsp_env_keeps(two, 0, "LC_ALL"));
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	CU_pSuite s = CU_add_suite("env keep", NULL, NULL);
	CU_add_test(s, "globs keep the locale categories", test_locale);
	CU_add_test(s, "globs keep no other LC_ name", test_not_locale);
	CU_add_test(s, "a name given exactly is kept", test_exact);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
