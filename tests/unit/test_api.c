/* test_api.c: CUnit tests for what the golden data cannot reach: the public API's option
 * checks, the diagnostic sink and renderer, the arena, suggestions and source positions. */
#include <CUnit/Basic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler/compile.h"
#include "compiler/zsp.h"
#include "lang/arena.h"
#include "lang/diag.h"
#include "lang/hint.h"
#include "lang/source.h"
#include "compiler/oracle.h"
#include "compiler/regex.h"

struct capture {
	char buf[8192];
	size_t len;
	unsigned calls;
};

static void capture_sink(void *ctx, const char *text, size_t len)
{
	struct capture *c = ctx;
	if (c->len + len < sizeof(c->buf)) {
		memcpy(c->buf + c->len, text, len);
		c->len += len;
		c->buf[c->len] = '\0';
	}
	c->calls++;
}

static int compile_text(const char *text, struct capture *cap, zsp_policy_set **set,
			const char *define_name, const char *define_value, const char *warning)
{
	zsp_compiler *c = zsp_compiler_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	memset(cap, 0, sizeof(*cap));
	zsp_compiler_set_sink(c, capture_sink, cap);
	if (define_name)
		CU_ASSERT_EQUAL(zsp_compiler_define(c, define_name, define_value), ZSP_OK);
	if (warning)
		CU_ASSERT_EQUAL(zsp_compiler_warning(c, warning), ZSP_OK);
	int rc = zsp_compile_buffer(c, "t.zsp", text, strlen(text), set);
	zsp_compiler_free(c);
	return rc;
}

static void test_compile_ok(void)
{
	struct capture cap;
	zsp_policy_set *set = NULL;
	const char *text = "zsp 1;\npolicy \"b\" { fs { read \"/\"; } }\npolicy \"a\" extends \"b\" { }\n";
	CU_ASSERT_EQUAL(compile_text(text, &cap, &set, NULL, NULL, NULL), ZSP_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	CU_ASSERT_EQUAL(zsp_policy_set_count(set), 2);
	CU_ASSERT_STRING_EQUAL(zsp_policy_set_name(set, 0), "a");
	CU_ASSERT_STRING_EQUAL(zsp_policy_set_name(set, 1), "b");
	CU_ASSERT_PTR_NULL(zsp_policy_set_name(set, 2));
	CU_ASSERT_EQUAL(cap.len, 0);
	char *json = NULL;
	size_t len = 0;
	CU_ASSERT_EQUAL(zsp_policy_set_ir_json(set, &json, &len), ZSP_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(json);
	CU_ASSERT_EQUAL(strlen(json), len);
	CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"zsp_ir\": 1"));
	free(json);
	zsp_policy_set_free(set);
}

static void test_diagnostic_text(void)
{
	struct capture cap;
	zsp_policy_set *set = (zsp_policy_set *)1;
	const char *text = "zsp 1;\npolicy \"p\" {\n\tfs { write \"${WORKSPCE}/out\"; }\n}\n";
	CU_ASSERT_EQUAL(compile_text(text, &cap, &set, NULL, NULL, NULL), ZSP_EPOLICY);
	CU_ASSERT_PTR_NULL(set);
	CU_ASSERT_STRING_EQUAL(cap.buf,
		"t.zsp:3:14: error: undefined parameter `WORKSPCE`\n"
		"  \tfs { write \"${WORKSPCE}/out\"; }\n"
		"  \t            ^~~~~~~~~~~\n"
		"  hint: did you mean `${WORKSPACE}`?\n"
		"1 error generated.\n");
}

static void test_werror(void)
{
	struct capture cap;
	zsp_policy_set *set = NULL;
	const char *text = "zsp 1;\npolicy \"p\" { fs { read \"/\"; read \"/usr\"; } }\n";
	CU_ASSERT_EQUAL(compile_text(text, &cap, &set, NULL, NULL, NULL), ZSP_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(cap.buf, "warning:"));
	CU_ASSERT_PTR_NOT_NULL(strstr(cap.buf, "[-Wshadowed]"));
	zsp_policy_set_free(set);
	set = NULL;
	CU_ASSERT_EQUAL(compile_text(text, &cap, &set, NULL, NULL, "error"), ZSP_EPOLICY);
	CU_ASSERT_PTR_NOT_NULL(strstr(cap.buf, "error: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(cap.buf, "[-Werror=shadowed]"));
	CU_ASSERT_PTR_NULL(set);
	CU_ASSERT_EQUAL(compile_text(text, &cap, &set, NULL, NULL, "no-shadowed"), ZSP_OK);
	CU_ASSERT_EQUAL(cap.len, 0);
	zsp_policy_set_free(set);
}

static void test_defines(void)
{
	zsp_compiler *c = zsp_compiler_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(zsp_compiler_define(c, "WORKSPACE", "/home/u"), ZSP_OK);
	CU_ASSERT_EQUAL(zsp_compiler_define(c, "", "x"), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_compiler_define(c, "1X", "x"), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_compiler_define(c, "A-B", "x"), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_compiler_define(c, "A", "${HOME}"), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_compiler_define(c, "A", "a\nb"), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_compiler_warning(c, "nonsense"), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_compiler_warning(c, "error=nonsense"), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(zsp_compiler_warning(c, "no-unknown-tool"), ZSP_OK);
	CU_ASSERT_EQUAL(zsp_compiler_add_include_dir(c, ""), ZSP_EUSAGE);
	zsp_compiler_free(c);

	struct capture cap;
	zsp_policy_set *set = NULL;
	const char *text = "zsp 1;\npolicy \"p\" { fs { write \"${WORKSPACE}/a\"; } }\n";
	CU_ASSERT_EQUAL(compile_text(text, &cap, &set, "NOPE", "/x", NULL), ZSP_EUSAGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(cap.buf, "no policy declares a parameter `NOPE`"));
	CU_ASSERT_PTR_NULL(set);
	/* a -D value is literal text: its glob characters must not become a pattern */
	CU_ASSERT_EQUAL(compile_text(text, &cap, &set, "WORKSPACE", "/home/[u]*", NULL), ZSP_OK);
	char *json = NULL;
	size_t len;
	CU_ASSERT_EQUAL_FATAL(zsp_policy_set_ir_json(set, &json, &len), ZSP_OK);
	CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"path\": \"/home/\\\\[u]\\\\*/a\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"glob\": false"));
	free(json);
	zsp_policy_set_free(set);
	/* a relative value used as a path anchor is refused */
	set = NULL;
	CU_ASSERT_EQUAL(compile_text(text, &cap, &set, "WORKSPACE", "rel/dir", NULL), ZSP_EPOLICY);
	CU_ASSERT_PTR_NOT_NULL(strstr(cap.buf, "absolute path"));
}

static void test_missing_file(void)
{
	struct capture cap = { 0 };
	zsp_compiler *c = zsp_compiler_new();
	zsp_policy_set *set = (zsp_policy_set *)1;
	zsp_compiler_set_sink(c, capture_sink, &cap);
	CU_ASSERT_EQUAL(zsp_compile_file(c, "/nonexistent/dir/p.zsp", &set), ZSP_ENOINPUT);
	CU_ASSERT_PTR_NULL(set);
	CU_ASSERT_PTR_NOT_NULL(strstr(cap.buf, "cannot read `/nonexistent/dir/p.zsp`"));
	zsp_compiler_free(c);
}

/* the fs rule of p on path, or NULL */
static const zsp_ir_fs_rule *fs_rule(const zsp_ir_policy *p, const char *path)
{
	for (size_t i = 0; i < p->nfs; i++)
		if (strcmp(p->fs[i].path, path) == 0)
			return &p->fs[i];
	return NULL;
}

/* A built-in file includes built-in files only: a file of the same name in the current
 * directory or an -I directory (where a sandbox may have written one) is never read. */
static void test_builtin_files(void)
{
	static const zsp_builtin_file files[] = {
		{ "root.zsp", "zsp 1;\ninclude \"base.zsp\";\n"
			      "policy \"app\" extends \"base\" { fs { read \"/\"; } }\n" },
		{ "base.zsp", "zsp 1;\npolicy \"base\" { fs { deny \"/secret\"; } }\n" },
		{ "lost.zsp", "zsp 1;\ninclude \"decoy.zsp\";\n" },
	};
	char dir[] = "/tmp/test_api.XXXXXX", old[4096], path[4200];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(old, sizeof(old)));
	const char *decoy = "zsp 1;\npolicy \"base\" { }\n";
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, i ? "decoy.zsp" : "base.zsp");
		FILE *f = fopen(path, "w");
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		fputs(decoy, f);
		fclose(f);
	}
	CU_ASSERT_EQUAL_FATAL(chdir(dir), 0);

	struct capture cap = { 0 };
	zsp_compiler *c = zsp_compiler_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	zsp_compiler_set_sink(c, capture_sink, &cap);
	CU_ASSERT_EQUAL(zsp_compiler_add_include_dir(c, dir), ZSP_OK);
	zsp_compiler_set_datadir(c, dir);
	zsp_compiler_set_builtins(c, files, 3);
	zsp_policy_set *set = NULL;
	CU_ASSERT_EQUAL(zsp_compile_builtin(c, "root.zsp", &set), ZSP_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	const zsp_ir *ir = zsp_policy_set_ir(set);
	CU_ASSERT_STRING_EQUAL(ir->source, "<built-in root.zsp>");
	/* two policies, and the one the root file defines is the one meant */
	CU_ASSERT_EQUAL(ir->npolicies, 2);
	const zsp_ir_policy *p = zsp_ir_pick_policy(ir, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_STRING_EQUAL(p->name, "app");
	const zsp_ir_fs_rule *r = fs_rule(p, "/secret");
	CU_ASSERT_PTR_NOT_NULL_FATAL(r);
	CU_ASSERT_EQUAL(r->access, ZSP_ACCESS_DENY);
	CU_ASSERT_STRING_EQUAL(r->loc.src->path, "<built-in base.zsp>");
	zsp_policy_set_free(set);

	/* no built-in of that name: the one on disk is not taken instead */
	memset(&cap, 0, sizeof(cap));
	CU_ASSERT_EQUAL(zsp_compile_builtin(c, "lost.zsp", &set), ZSP_EPOLICY);
	CU_ASSERT_PTR_NULL(set);
	CU_ASSERT_PTR_NOT_NULL(strstr(cap.buf, "<built-in lost.zsp>:2:9: error: cannot find included file `decoy.zsp`"));
	CU_ASSERT_PTR_NOT_NULL(strstr(cap.buf, "includes built-in files only"));
	memset(&cap, 0, sizeof(cap));
	CU_ASSERT_EQUAL(zsp_compile_builtin(c, "none.zsp", &set), ZSP_ENOINPUT);
	CU_ASSERT_PTR_NULL(set);
	CU_ASSERT_PTR_NOT_NULL(strstr(cap.buf, "no built-in file `none.zsp`"));
	zsp_compiler_free(c);

	CU_ASSERT_EQUAL(chdir(old), 0);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, i ? "decoy.zsp" : "base.zsp");
		unlink(path);
	}
	rmdir(dir);
}

/* Without a name, the policy meant is the only one, or the only one the root file defines. */
static void test_pick_policy(void)
{
	struct capture cap;
	zsp_policy_set *set = NULL;
	const char *two = "zsp 1;\npolicy \"a\" { }\npolicy \"b\" extends \"a\" { }\n";
	CU_ASSERT_EQUAL(compile_text(two, &cap, &set, NULL, NULL, NULL), ZSP_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	CU_ASSERT_PTR_NULL(zsp_ir_pick_policy(zsp_policy_set_ir(set), NULL));
	CU_ASSERT_STRING_EQUAL(zsp_ir_pick_policy(zsp_policy_set_ir(set), "a")->name, "a");
	zsp_policy_set_free(set);
	const char *one = "zsp 1;\npolicy \"a\" { }\n";
	CU_ASSERT_EQUAL(compile_text(one, &cap, &set, NULL, NULL, NULL), ZSP_OK);
	CU_ASSERT_PTR_NOT_NULL_FATAL(set);
	CU_ASSERT_STRING_EQUAL(zsp_ir_pick_policy(zsp_policy_set_ir(set), NULL)->name, "a");
	zsp_policy_set_free(set);
}

static void test_arena(void)
{
	zsp_arena *a = zsp_arena_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	char *prev = NULL;
	for (int i = 0; i < 10000; i++) {
		char *p = zsp_arena_alloc(a, (size_t)(i % 37) + 1);
		CU_ASSERT_PTR_NOT_NULL_FATAL(p);
		CU_ASSERT_EQUAL((uintptr_t)p % 16, 0);
		CU_ASSERT_EQUAL(p[0], 0);
		p[0] = 'x';
		CU_ASSERT_PTR_NOT_EQUAL(p, prev);
		prev = p;
	}
	char *big = zsp_arena_alloc(a, 1u << 20);
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	memset(big, 1, 1u << 20);
	CU_ASSERT_PTR_NULL(zsp_arena_alloc(a, SIZE_MAX - 8));
	CU_ASSERT_PTR_NULL(zsp_arena_calloc(a, SIZE_MAX / 2, 4));
	CU_ASSERT_STRING_EQUAL(zsp_arena_strndup(a, "abcdef", 3), "abc");
	CU_ASSERT_STRING_EQUAL(zsp_arena_printf(a, "%s-%d", "x", 42), "x-42");
	zsp_arena_free(a);
}

static void test_hint(void)
{
	const char *kw[] = { "read", "write", "deny", "protect" };
	CU_ASSERT_STRING_EQUAL(zsp_closest("wirte", kw, 4), "write");
	CU_ASSERT_STRING_EQUAL(zsp_closest("raed", kw, 4), "read");
	CU_ASSERT_STRING_EQUAL(zsp_closest("protec", kw, 4), "protect");
	CU_ASSERT_PTR_NULL(zsp_closest("zzzz", kw, 4));
	CU_ASSERT_PTR_NULL(zsp_closest("write", kw, 4)); /* an exact match is no suggestion */
	CU_ASSERT_PTR_NULL(zsp_closest("", kw, 4));
}

static void test_positions(void)
{
	zsp_arena *a = zsp_arena_new();
	const char *text = "ab\n\xc3\xa9t\xc3\xa9 x\n\nlast";
	zsp_source *s = zsp_source_new(a, "dir/f.zsp", text, strlen(text));
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	CU_ASSERT_STRING_EQUAL(s->dir, "dir");
	unsigned line, col;
	zsp_source_position(s, 0, &line, &col);
	CU_ASSERT(line == 1 && col == 1);
	zsp_source_position(s, 9, &line, &col); /* the x after two 2-byte characters */
	CU_ASSERT(line == 2 && col == 5);
	zsp_source_position(s, 11, &line, &col);
	CU_ASSERT(line == 3 && col == 1);
	zsp_source_position(s, (uint32_t)strlen(text), &line, &col);
	CU_ASSERT(line == 4 && col == 5);
	size_t len;
	uint32_t begin;
	const char *l = zsp_source_line(s, 5, &len, &begin);
	CU_ASSERT_EQUAL(begin, 3);
	CU_ASSERT_EQUAL(len, 7);
	CU_ASSERT_NSTRING_EQUAL(l, "\xc3\xa9t\xc3\xa9 x", len);
	zsp_arena_free(a);
}

static void test_diag_render(void)
{
	zsp_arena *a = zsp_arena_new();
	struct capture cap = { 0 };
	zsp_diag d;
	zsp_diag_init(&d, capture_sink, &cap);
	const char *text = "x \xc3\xa9\xc3\xa9 yy\n";
	zsp_source *s = zsp_source_new(a, "f.zsp", text, strlen(text));
	zsp_loc loc = { s, 7, 9 };
	zsp_diag_error(&d, loc, "bad %s", "yy");
	CU_ASSERT_STRING_EQUAL(cap.buf, "f.zsp:1:6: error: bad yy\n  x \xc3\xa9\xc3\xa9 yy\n       ^~\n");
	cap.len = 0;
	CU_ASSERT(zsp_diag_option(&d, "no-duplicate"));
	zsp_diag_warning(&d, ZSP_W_DUPLICATE, loc, "silenced");
	zsp_diag_note(&d, loc, "dropped with its warning");
	zsp_diag_hint(&d, "also dropped");
	CU_ASSERT_EQUAL(cap.len, 0);
	CU_ASSERT_EQUAL(d.warnings, 0);
	CU_ASSERT(zsp_diag_option(&d, "error=shadowed"));
	zsp_diag_warning(&d, ZSP_W_SHADOWED, loc, "now an error");
	CU_ASSERT_EQUAL(d.errors, 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(cap.buf, "error: now an error [-Werror=shadowed]"));
	CU_ASSERT(!zsp_diag_option(&d, "no-such-warning"));
	cap.len = 0;
	zsp_diag_summary(&d);
	CU_ASSERT_STRING_EQUAL(cap.buf, "2 errors generated.\n");
	zsp_arena_free(a);
}

/* The IR's path order, restated: '/' sorts before every other byte. */
static int ref_path_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		if (*a == *b) {
			if (!*a)
				return 0;
			continue;
		}
		if (!*a || !*b)
			return !*a ? -1 : 1;
		if (*a == '/' || *b == '/')
			return *a == '/' ? -1 : 1;
		return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
	}
}

/* Random policies with paths that share long prefixes and differ in '-', '.', '/': the fs
 * rules of the IR must come out in path order, each path once. */
static void test_fs_order(void)
{
	static const char alphabet[] = "ab-.";
	unsigned seed = 12345;
	for (int round = 0; round < 20; round++) {
		char *text = malloc(1 << 16);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		size_t len = (size_t)sprintf(text, "zsp 1;\npolicy \"p\" { fs {\n");
		for (int i = 0; i < 300; i++) {
			char path[64] = "/r";
			int depth = 1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 4;
			for (int d = 0; d < depth; d++) {
				size_t pl = strlen(path);
				path[pl++] = '/';
				int clen = 1 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 3;
				for (int c = 0; c < clen; c++)
					path[pl++] = alphabet[((seed = seed * 1103515245 + 12345) >> 16) % 4];
				path[pl] = '\0';
				if (strcmp(path + pl - 2, "/.") == 0 || strstr(path, "/..") )
					path[pl - 1] = 'a';
			}
			/* the verb follows from the path, so a repeated path is a duplicate, not a conflict */
			static const char *const verbs[] = { "read", "write", "deny" };
			unsigned h = 0;
			for (const char *c = path; *c; c++)
				h = h * 31 + (unsigned char)*c;
			len += (size_t)sprintf(text + len, "  %s \"%s\";\n", verbs[h % 3], path);
		}
		len += (size_t)sprintf(text + len, "  protect \".git\", \"a-\";\n} }\n");
		struct capture cap;
		zsp_policy_set *set = NULL;
		zsp_compiler *c = zsp_compiler_new();
		memset(&cap, 0, sizeof(cap));
		zsp_compiler_set_sink(c, capture_sink, &cap);
		int rc = zsp_compile_buffer(c, "order.zsp", text, len, &set);
		zsp_compiler_free(c);
		free(text);
		CU_ASSERT_EQUAL_FATAL(rc, ZSP_OK);
		char *json = NULL;
		size_t jl;
		CU_ASSERT_EQUAL_FATAL(zsp_policy_set_ir_json(set, &json, &jl), ZSP_OK);
		char prev[128] = "";
		size_t n = 0;
		for (const char *q = json; (q = strstr(q, "\"path\": \"")) != NULL; n++) {
			q += 9;
			const char *end = strchr(q, '"');
			char cur[128];
			snprintf(cur, sizeof(cur), "%.*s", (int)(end - q), q);
			if (n)
				CU_ASSERT(ref_path_cmp(prev, cur) < 0);
			strcpy(prev, cur);
			q = end;
		}
		CU_ASSERT(n > 50);
		free(json);
		zsp_policy_set_free(set);
	}
}

/* 1 match, 0 no match, -1 refused (the match limit) or failed */
static int search(zsp_regex *re, const char *s, size_t n)
{
	bool hit = true;
	int rc = zsp_regex_search(re, s, n, &hit);
	if (rc != ZSP_OK)
		return hit ? -2 : -1;   /* a failure must not say "matched" */
	return hit;
}

/* A pattern that backtracks exponentially must hit the match limit and report it (ZSP_EUSAGE),
 * which the oracle turns into a deny: it must neither hang nor answer "no match". */
static void test_regex_limit(void)
{
	zsp_regex *re = zsp_regex_compile("^(a+)+$", false);
	CU_ASSERT_PTR_NOT_NULL_FATAL(re);
	char subject[64];
	memset(subject, 'a', 40);
	subject[40] = 'b';
	subject[41] = '\0';
	CU_ASSERT_EQUAL(search(re, subject, strlen(subject)), -1);
	bool hit;
	CU_ASSERT_EQUAL(zsp_regex_search(re, subject, strlen(subject), &hit), ZSP_EUSAGE);
	CU_ASSERT_EQUAL(search(re, "aaaa", 4), 1);
	CU_ASSERT_EQUAL(search(re, "b", 1), 0);
	zsp_regex_free(re);
	/* Rust-style syntax, case-insensitive by default */
	re = zsp_regex_compile("^cargo\\s+(check|test)\\b", false);
	CU_ASSERT_PTR_NOT_NULL_FATAL(re);
	CU_ASSERT_EQUAL(search(re, "CARGO test --all", 16), 1);
	CU_ASSERT_EQUAL(search(re, "cargo testing", 13), 0);
	zsp_regex_free(re);
	CU_ASSERT_PTR_NULL(zsp_regex_compile("(", false));
}

/* zsp_request_text writes what zsp_request_parse reads back exactly: zsp-run -c asks the oracle
 * about the command through it, so a command must not be able to change in the round trip. */
static void test_request_text(void)
{
	static const char *const args[] = {
		"ls -la", "say \"hi\"", "back\\slash\\", "line\nbreak\ttab\rcr", "\x01\x1b[2J\x7f",
		"caf\xc3\xa9 \xe2\x80\xae", "", "\\\"", "a\"; rm -rf / #",
	};
	for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
		const char *one[] = { args[i], "second \"arg\"" };
		zsp_ir_request req = { "copy_path", one, 2 };
		char *text = zsp_request_text(&req);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		zsp_arena *a = zsp_arena_new();
		zsp_ir_request back;
		char err[256];
		CU_ASSERT_EQUAL(zsp_request_parse(a, text, &back, err, sizeof(err)), ZSP_OK);
		CU_ASSERT_STRING_EQUAL(back.kind, "copy_path");
		CU_ASSERT_EQUAL_FATAL(back.nargs, 2);
		CU_ASSERT_STRING_EQUAL(back.args[0], args[i]);
		CU_ASSERT_STRING_EQUAL(back.args[1], "second \"arg\"");
		CU_ASSERT_PTR_NULL(strchr(text, '\n'));   /* one line, whatever the command holds */
		zsp_arena_free(a);
		free(text);
	}
}

static char *ir_json_of(const zsp_policy_set *set)
{
	char *json = NULL;
	size_t len;
	CU_ASSERT_EQUAL(zsp_policy_set_ir_json(set, &json, &len), ZSP_OK);
	return json;
}

/* A set bound to values after compiling (what a session does with its workspace and home) is
 * the set compiled with those values defined, byte for byte; binding twice gives the same (the
 * syntax trees it compiles again are left as they were); the parent set is unchanged. */
static void test_bind(void)
{
	static const char *const names[] = { "WORKSPACE", "HOME", "TMPDIR", "UID", "USER" };
	static const char *const values[] = { "/home/u/proj", "/home/u", "/tmp/t", "1000", "u" };
	const char *top = getenv("top_srcdir");
	char example[4096];
	snprintf(example, sizeof(example), "%s/examples/workspace.zsp", top ? top : "..");
	static const char text[] =
		"zsp 1;\n"
		"policy \"b\" { param DATA = \"${HOME}/data\";\n"
		"  fs { read \"/\"; deny \"${DATA}\", \"~/.ssh\"; } }\n"
		"policy \"a\" extends \"b\" { fs { write \"${WORKSPACE}\"; protect \".git\"; }\n"
		"  tool \"read_file\" { default allow; deny path \"~/.aws/**\"; } }\n";
	for (int k = 0; k < 2; k++) {
		zsp_compiler *plain = zsp_compiler_new(), *with = zsp_compiler_new();
		CU_ASSERT_PTR_NOT_NULL_FATAL(plain);
		CU_ASSERT_PTR_NOT_NULL_FATAL(with);
		for (size_t i = 0; i < 5; i++)
			CU_ASSERT_EQUAL(zsp_compiler_define(with, names[i], values[i]), ZSP_OK);
		zsp_policy_set *bare = NULL, *want = NULL, *bound = NULL, *again = NULL;
		int r1 = k ? zsp_compile_buffer(plain, "t.zsp", text, strlen(text), &bare)
			   : zsp_compile_file(plain, example, &bare);
		int r2 = k ? zsp_compile_buffer(with, "t.zsp", text, strlen(text), &want)
			   : zsp_compile_file(with, example, &want);
		CU_ASSERT_EQUAL_FATAL(r1, ZSP_OK);
		CU_ASSERT_EQUAL_FATAL(r2, ZSP_OK);
		char *before = ir_json_of(bare);
		char err[256];
		CU_ASSERT_EQUAL(zsp_policy_set_bind(bare, names, values, 5, &bound, err, sizeof(err)), ZSP_OK);
		CU_ASSERT_EQUAL(zsp_policy_set_bind(bare, names, values, 5, &again, err, sizeof(err)), ZSP_OK);
		CU_ASSERT_PTR_NOT_NULL_FATAL(bound);
		CU_ASSERT_PTR_NOT_NULL_FATAL(again);
		char *b = ir_json_of(bound), *a = ir_json_of(again), *w = ir_json_of(want);
		char *after = ir_json_of(bare);
		CU_ASSERT_STRING_EQUAL(b, w);
		CU_ASSERT_STRING_EQUAL(a, w);
		CU_ASSERT_STRING_EQUAL(after, before);
		CU_ASSERT_PTR_NOT_NULL(strstr(b, "/home/u/.ssh"));
		CU_ASSERT_PTR_NOT_NULL(strstr(before, "\"path\": \"${"));
		CU_ASSERT_PTR_NULL(strstr(b, "\"path\": \"${"));   /* a default may still say ${HOME} */
		free(before);
		free(after);
		free(a);
		free(b);
		free(w);
		zsp_policy_set_free(again);
		zsp_policy_set_free(bound);
		zsp_policy_set_free(want);
		zsp_policy_set_free(bare);
		zsp_compiler_free(plain);
		zsp_compiler_free(with);
	}
	/* a value that makes a path relative does not compile: the first error says why */
	zsp_compiler *c = zsp_compiler_new();
	zsp_policy_set *bare = NULL, *bound = (zsp_policy_set *)1;
	CU_ASSERT_EQUAL_FATAL(zsp_compile_buffer(c, "t.zsp", text, strlen(text), &bare), ZSP_OK);
	const char *rel[] = { "rel/dir" };
	char err[256];
	CU_ASSERT_EQUAL(zsp_policy_set_bind(bare, names, rel, 1, &bound, err, sizeof(err)), ZSP_EPOLICY);
	CU_ASSERT_PTR_NULL(bound);
	CU_ASSERT(strncmp(err, "t.zsp:", 6) == 0 && strstr(err, ": error: ") && strstr(err, "rel/dir"));
	/* and one that cannot be a parameter value is refused */
	const char *ctl[] = { "/a\nb" };
	CU_ASSERT_EQUAL(zsp_policy_set_bind(bare, names, ctl, 1, &bound, err, sizeof(err)), ZSP_EUSAGE);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "WORKSPACE"));
	zsp_policy_set_free(bare);
	zsp_compiler_free(c);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	CU_pSuite s = CU_add_suite("api", NULL, NULL);
	if (!s || !CU_add_test(s, "compile ok", test_compile_ok) ||
	    !CU_add_test(s, "request text", test_request_text) ||
	    !CU_add_test(s, "diagnostic text", test_diagnostic_text) ||
	    !CU_add_test(s, "werror", test_werror) ||
	    !CU_add_test(s, "defines and options", test_defines) ||
	    !CU_add_test(s, "missing file", test_missing_file) ||
	    !CU_add_test(s, "built-in files", test_builtin_files) ||
	    !CU_add_test(s, "pick policy", test_pick_policy) ||
	    !CU_add_test(s, "arena", test_arena) ||
	    !CU_add_test(s, "hint", test_hint) ||
	    !CU_add_test(s, "positions", test_positions) ||
	    !CU_add_test(s, "diag render", test_diag_render) ||
	    !CU_add_test(s, "fs order", test_fs_order) ||
	    !CU_add_test(s, "regex limit", test_regex_limit) ||
	    !CU_add_test(s, "bind", test_bind)) {
		CU_cleanup_registry();
		return 2;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures ? 1 : 0;
}
