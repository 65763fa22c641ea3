/* test_regex.c: CUnit tests for compiler/regex.c. zsp_regex_search answers some subjects
 * without PCRE2 (the first-byte prefilter of `^...` patterns, and with a zsp_regex_subject the
 * required-literal one); every answer must be PCRE2's own, so each pattern is searched both ways over subjects chosen to sit on the filter's edges:
 * case, characters that fold to ASCII (the Kelvin sign, long s), invalid UTF-8, empty text. */
#include "config.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "compiler/regex.h"
#include "compiler/zsp.h"

static const char *const patterns[] = {
	"^cargo\\s+(check|build|test)\\b", "^(make|ninja|cmake)\\b", "^(npx\\s+)?(tsc|eslint)\\b",
	"^(go\\s+(build|test)|gofmt)\\b", "^python3?\\s+-m", "^a?b", "^a*b", "^a{0,2}b", "^a{b",
	"^(a|b)?c", "^(a|)c", "^(|a)c", "^(a|b)*c", "^(a|b){1}c", "^(a|b)+c", "^a|b", "^a|^b",
	"^(a)|b", "^k", "^s", "^K\\b", "^(k|s)x", "^ks", "^\\Qa|b\\E", "^a\\Q(\\E|b\\Q)\\E",
	"^a(?#(|)b", "^a(?x)|b", "^(?:cat|tac)\\b", "^(?i)x", "^(?=a)b", "^[ab]c", "^a[|]|b",
	"^a[]|]|b", "^a[^]|]|b", "^a[[:alpha:]|]|b", "^a\\|b", "^a\\\\|b", "^-n", "^ ", "^'x'",
	"^\"x\"", "^~/x", "^\\x{212a}", "^é", "^(é|a)", "\\bsudo\\b", "sudo", "^$", "^", "^(a|b",
	"^(a(b|c)|d)e", "^(a(?:b|c)|d)e", "^a(b|c", "^git\\s+push\\b.*(--force|\\s-f\\b)",
	"^(curl|wget)\\s+(-[sSLfI]+\\s+)*https:\\/\\/", "^.", "^\\w", "^[a]", "^(a|[b])",
	/* the literal prefilter: runs outside groups, quantifiers, escapes that read on */
	"\\bsudo\\b", "\\b(curl|wget)\\b.*\\|\\s*(ba|z|da)?sh\\b", "\\bdd\\s+.*of=\\/dev\\/",
	"\\bmkfs(\\.\\w+)?\\b", ":\\(\\)\\s*\\{\\s*:\\|:&\\s*\\};:", "\\bchmod\\s+(-R\\s+)?777\\b",
	"ab?c", "abc?", "ab*c", "ab+c", "ab{2}c", "ab{0,2}c", "a{1,}bc", "a(bc)?d", "ab|cd",
	"x(a|b)y", "ka", "sx", "KS", "a\\c(|b\\c)", "^a\\c(|b\\c)", "a\\x{28}|b", "^a\\x{28}|b",
	"\\x61b", "a\\012b", "\\Qab|c\\E", "(?i)ab", "a(?i)b", "(?-i)AB", "[ab]c", "[]a]c",
	"a[\\]]b", "a#b", "a b", "\\N{U+61}b", "\\p{L}ab", "a\\Kb", "a\\.b", "sudo|x", "(su)do",
	"(?:su)do", "a\\Eb", "\\cAab", "[[:alpha:]]ab", "s{0}udo", "\\x{212a}a", "a{b}c", "a{,2}b",
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
};

static const char *const subjects[] = {
	"", "a", "b", "c", "ac", "bc", "abc", "aac", "ab", "a|b", "a(", "b)", "a(|b)", "k", "K", "s",
	"S", "x", "kx", "Kx", "sx", "Sx", "ks", "KS", "\xe2\x84\xaa", "\xe2\x84\xaax", "\xc5\xbf",
	"\xc5\xbfx", "\xff", "\xff" "a", "a\xff", "cargo test", "CARGO build", "Cargo  check x", "cmake .",
	"make", "ninja -C b", "npx tsc", "tsc", "eslint", "go build", "gofmt -l", "python3 -m x",
	"python -m y", "cat f", "tac f", "Cat", "-n", " ", "'x'", "\"x\"", "~/x", "\xc3\xa9", "\xc3\x89",
	"e", "sudo rm", "x sudo", "git push --force", "git push -f", "GIT PUSH -F",
	"curl -sL https://x", "de", "abe", "ace", "e", "[", "|", "\\", "\\b", "a\\", "\n", "\na",
	"a\nb", "c\nb",
	"sudo", "xsudo y", "SUDO", "Sudo", "su do", "sud", "\xe2\x84\xaa" "a", "curl x | sh",
	"CURL x|bash", "dd if=x of=/dev/sda", "mkfs.ext4", ":(){ :|:& };:", "chmod -R 777 x", "abcd",
	"ad", "abbc", "acd", "xay", "xby", "a\x01" "b", "a#b", "a b", "a.b", "a]b", "\x01" "ab",
	"aKb", "KA", "\xc5\xbf" "x", "ab\xff", "a{b}c", "a{,2}b", "aa{1,}bc", "0,2", "abbbc",
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	"\xe2\x84\xaa" "S", "k\xc5\xbf", "\xef\xbd\x81" "b",
};

/* PCRE2's answer: 1 match, 0 none, -1 an error */
static int pcre2_says(const char *pattern, bool case_sensitive, const char *subject)
{
	int err;
	PCRE2_SIZE off;
	uint32_t opts = ZSP_REGEX_PCRE2_OPTIONS | (case_sensitive ? 0 : PCRE2_CASELESS);
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, opts, &err, &off, NULL);
	if (!re)
		return -2;
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
	int rc = md ? pcre2_match(re, (PCRE2_SPTR)subject, strlen(subject), 0, 0, md, NULL) : -1;
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return rc >= 0 ? 1 : rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

static unsigned compared;

static void same_as_pcre2(const char *pattern, bool case_sensitive, const char *subject)
{
	int want = pcre2_says(pattern, case_sensitive, subject);
	if (want == -2)
		return; /* the pattern does not compile: the oracle never holds it */
	zsp_regex *re = zsp_regex_compile(pattern, case_sensitive);
	CU_ASSERT_PTR_NOT_NULL_FATAL(re);
	bool hit = false, hit_subj = false;
	int rc = zsp_regex_search(re, subject, strlen(subject), &hit);
	int got = rc == ZSP_OK ? hit : -1;
	zsp_regex_subject subj;
	zsp_regex_subject_init(&subj, subject, strlen(subject));
	rc = zsp_regex_search_subject(re, &subj, &hit_subj);
	int got_subj = rc == ZSP_OK ? hit_subj : -1;
	if (got != want || got_subj != want)
		fprintf(stderr, "\n  /%s/%s on \"%s\": zsp %d (with the subject's pairs %d), PCRE2 %d\n",
			pattern, case_sensitive ? "c" : "", subject, got, got_subj, want);
	CU_ASSERT_EQUAL(got, want);
	CU_ASSERT_EQUAL(got_subj, want);
	zsp_regex_free(re);
	compared++;
}

static void test_table(void)
{
	for (size_t p = 0; p < sizeof(patterns) / sizeof(patterns[0]); p++)
		for (size_t s = 0; s < sizeof(subjects) / sizeof(subjects[0]); s++)
			for (int cs = 0; cs < 2; cs++)
				same_as_pcre2(patterns[p], cs, subjects[s]);
	CU_ASSERT(compared > 20000);
}

/* Patterns built from fragments, half of them anchored, so that groups, bars, quantifiers and escapes meet in orders
 * nobody wrote down; each against every subject. Deterministic. */
static void test_generated(void)
{
	static const char *const frags[] = { "a", "b", "k", "s", "(", ")", "|", "?", "*", "+", "{1}",
					     "{", "\\b", "\\s", "\\Q", "\\E", "[", "]", "^", "(?:", "(?#",
					     "(?i)", "-", " ", ".", "\\", "x", "\\c", "\\x", "{0}", "{0,",
					     "}", "ab", "su", "do", "\\1", "[:", "\\p{L}", "#" };
	size_t nf = sizeof(frags) / sizeof(frags[0]);
	unsigned seed = 7;
	for (int n = 0; n < 6000; n++) {
		char pat[96] = "";
		size_t len = 1 + (size_t)(seed % 6);
		if (n % 2 == 0)
			strcat(pat, "^"); /* the first-byte filter; the literal one reads both */
		for (size_t k = 0; k < len; k++) {
			seed = seed * 1103515245u + 12345u;
			strcat(pat, frags[(seed >> 16) % nf]);
		}
		seed = seed * 1103515245u + 12345u;
		for (size_t s = 0; s < sizeof(subjects) / sizeof(subjects[0]); s++)
			same_as_pcre2(pat, (seed >> 16) & 1, subjects[s]);
	}
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	CU_pSuite s = CU_add_suite("regex", NULL, NULL);
	if (!s || !CU_add_test(s, "prefilter agrees with PCRE2 (table)", test_table) ||
	    !CU_add_test(s, "prefilter agrees with PCRE2 (generated)", test_generated)) {
		CU_cleanup_registry();
		return CU_get_error();
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
