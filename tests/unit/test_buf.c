/* test_buf.c: CUnit tests for lang/buf.c (the text buffer and heap array growth).
 * Out of memory cannot be forced here; the size-overflow guards stand in for it. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lang/buf.h"

static void test_add(void)
{
	zsp_buf b = { 0 };
	zsp_buf_add(&b, "ab", 2);
	zsp_buf_puts(&b, "cd");
	zsp_buf_putc(&b, 'e');
	zsp_buf_add(&b, "xyz", 0);
	zsp_buf_printf(&b, "-%d-%s", 42, "q");
	CU_ASSERT_FALSE(b.oom);
	CU_ASSERT_EQUAL(b.len, 10);
	CU_ASSERT_STRING_EQUAL(b.data, "abcde-42-q");
	CU_ASSERT_EQUAL(b.data[b.len], '\0');
	size_t len = 99;
	char *s = zsp_buf_take(&b, &len);
	CU_ASSERT_EQUAL(len, 10);
	CU_ASSERT_STRING_EQUAL(s, "abcde-42-q");
	CU_ASSERT_PTR_NULL(b.data);
	CU_ASSERT_EQUAL(b.len, 0);
	CU_ASSERT_EQUAL(b.cap, 0);
	free(s);
}

/* Bytes past a NUL are kept: the buffer is counted, not NUL-delimited. */
static void test_embedded_nul(void)
{
	zsp_buf b = { 0 };
	zsp_buf_add(&b, "a\0b", 3);
	CU_ASSERT_EQUAL(b.len, 3);
	CU_ASSERT_EQUAL(memcmp(b.data, "a\0b", 4), 0);
	zsp_buf_free(&b);
	CU_ASSERT_PTR_NULL(b.data);
	CU_ASSERT_EQUAL(b.len, 0);
}

/* Output longer than any internal scratch space, and many small adds across growth. */
static void test_long(void)
{
	char big[10000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	zsp_buf b = { 0 };
	zsp_buf_puts(&b, "<");
	zsp_buf_printf(&b, "%s|%d", big, 7);
	zsp_buf_puts(&b, ">");
	CU_ASSERT_FALSE(b.oom);
	CU_ASSERT_EQUAL(b.len, 1 + 9999 + 2 + 1);
	CU_ASSERT_EQUAL(b.data[0], '<');
	CU_ASSERT_EQUAL(memcmp(b.data + 1, big, 9999), 0);
	CU_ASSERT_STRING_EQUAL(b.data + 1 + 9999, "|7>");
	zsp_buf_free(&b);

	for (int i = 0; i < 5000; i++)
		zsp_buf_putc(&b, (char)('a' + i % 26));
	CU_ASSERT_EQUAL(b.len, 5000);
	CU_ASSERT_EQUAL(strlen(b.data), 5000);
	CU_ASSERT_EQUAL(b.data[4999], (char)('a' + 4999 % 26));
	zsp_buf_free(&b);
}

static void test_take_empty(void)
{
	zsp_buf b = { 0 };
	size_t len = 99;
	char *s = zsp_buf_take(&b, &len);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s, "");
	CU_ASSERT_EQUAL(len, 0);
	free(s);
	s = zsp_buf_take(&b, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s, "");
	free(s);
}

/* A length that would overflow len + n + 1 sets oom and leaves the text as it was; the buffer
 * then ignores adds and zsp_buf_take returns NULL, freeing it. */
static void test_add_overflow(void)
{
	zsp_buf b = { 0 };
	zsp_buf_puts(&b, "keep");
	zsp_buf_add(&b, "", SIZE_MAX);
	CU_ASSERT_TRUE(b.oom);
	CU_ASSERT_EQUAL(b.len, 4);
	CU_ASSERT_STRING_EQUAL(b.data, "keep");
	zsp_buf_puts(&b, "more");
	zsp_buf_printf(&b, "%d", 1);
	CU_ASSERT_EQUAL(b.len, 4);
	CU_ASSERT_STRING_EQUAL(b.data, "keep");
	size_t len = 99;
	CU_ASSERT_PTR_NULL(zsp_buf_take(&b, &len));
	CU_ASSERT_EQUAL(len, 0);
	CU_ASSERT_PTR_NULL(b.data);
	CU_ASSERT_FALSE(b.oom);
}

static void test_reserve(void)
{
	int *a = NULL;
	size_t cap = 0;
	CU_ASSERT(zsp_array_reserve(&a, &cap, 0, sizeof(*a)));
	CU_ASSERT_PTR_NULL(a);
	CU_ASSERT_EQUAL(cap, 0);
	CU_ASSERT(zsp_array_reserve(&a, &cap, 1, sizeof(*a)));
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL(cap, 8);
	for (int i = 0; i < 8; i++)
		a[i] = i;
	int *before = a;
	CU_ASSERT(zsp_array_reserve(&a, &cap, 8, sizeof(*a))); /* enough already */
	CU_ASSERT_PTR_EQUAL(a, before);
	CU_ASSERT_EQUAL(cap, 8);
	CU_ASSERT(zsp_array_reserve(&a, &cap, 9, sizeof(*a)));
	CU_ASSERT_EQUAL(cap, 16);
	CU_ASSERT(zsp_array_reserve(&a, &cap, 100, sizeof(*a)));
	CU_ASSERT_EQUAL(cap, 128);
	for (int i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(a[i], i);
	a[127] = 127;

	/* need * elem overflows: refused, the array and its capacity untouched */
	before = a;
	CU_ASSERT_FALSE(zsp_array_reserve(&a, &cap, SIZE_MAX / sizeof(*a) + 1, sizeof(*a)));
	CU_ASSERT_FALSE(zsp_array_reserve(&a, &cap, SIZE_MAX, sizeof(*a)));
	CU_ASSERT_PTR_EQUAL(a, before);
	CU_ASSERT_EQUAL(cap, 128);
	for (int i = 0; i < 8; i++)
		CU_ASSERT_EQUAL(a[i], i);
	CU_ASSERT_EQUAL(a[127], 127);
	free(a);
}

/* A pointer array, the common case (const char ** in the backends). */
static void test_reserve_pointers(void)
{
	const char **v = NULL;
	size_t n = 0, cap = 0;
	static const char *const words[] = { "a", "b", "c" };
	for (size_t i = 0; i < 1000; i++) {
		CU_ASSERT_FATAL(zsp_array_reserve(&v, &cap, n + 1, sizeof(*v)));
		v[n++] = words[i % 3];
	}
	CU_ASSERT_EQUAL(cap, 1024);
	CU_ASSERT_STRING_EQUAL(v[999], "a");
	CU_ASSERT_STRING_EQUAL(v[500], "c");
	free(v);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	CU_pSuite s = CU_add_suite("buf", NULL, NULL);
	CU_add_test(s, "adds, printf, take", test_add);
	CU_add_test(s, "embedded NUL", test_embedded_nul);
	CU_add_test(s, "printf longer than 4 KiB, many small adds", test_long);
	CU_add_test(s, "take on empty gives \"\"", test_take_empty);
	CU_add_test(s, "size overflow is oom: text kept, adds ignored, take NULL", test_add_overflow);
	CU_add_test(s, "array reserve: doubling from 8, overflow refused", test_reserve);
	CU_add_test(s, "array reserve of pointers", test_reserve_pointers);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
