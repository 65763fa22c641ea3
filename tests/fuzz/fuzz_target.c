/* fuzz_target.c: the libFuzzer entry point shared by fuzz_parser and fuzz_regress.
 * Every input is compiled twice: bare, then with -D values and an -I directory (include lookup). */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/linux.h"
#include "backends/sbpl.h"
#include "compiler/compile.h"
#include "tests/fuzz/fuzz.h"
#include "compiler/zsp.h"

#ifndef ZSP_FUZZ_INCDIR
#error "ZSP_FUZZ_INCDIR must name tests/fuzz/inc in the source tree"
#endif

static void discard(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	(void)text;
	(void)len;
}

/* The lowerings of each policy: the bwrap plan (against this machine's file system, with a
 * small glob walk budget), the seccomp program in both forms, the Seatbelt profile. */
static void lower(const zsp_policy_set *set)
{
	static char *const env[] = { "PATH=/usr/bin:/bin", "HOME=/home/u", "LC_ALL=C", NULL };
	const zsp_ir *ir = zsp_policy_set_ir(set);
	for (size_t i = 0; i < ir->npolicies; i++) {
		const zsp_ir_policy *p = &ir->policies[i];
		zsp_arena *a = zsp_arena_new();
		zsp_diag d;
		zsp_diag_init(&d, discard, NULL);
		zsp_linux_opts o = { .chdir = "/", .environ = env, .seccomp = true, .proc = true, .walk_max = 500 };
		zsp_bwrap_plan plan;
		zsp_linux_check(p, &d);
		if (!a)
			abort();
		if (zsp_bwrap_plan_build(p, &o, a, &d, &plan) == ZSP_OK)
			for (size_t k = 0; k < plan.argc; k++)
				if (!plan.argv[k])
					abort();
		zsp_arena_free(a);
		zsp_sbpl_profile prof;
		if (zsp_sbpl_emit(p, "fuzz.zsp", &d, &prof) == ZSP_OK) {
			if (!prof.text || strlen(prof.text) != prof.len)
				abort();
			zsp_sbpl_profile_free(&prof);
		}
		for (int pfc = 0; pfc < 2; pfc++) {
			char *out = NULL;
			size_t len = 0;
			if (zsp_seccomp_export(p, pfc, &d, &out, &len) == ZSP_OK && (!out || (!pfc && len % 8)))
				abort();
			free(out);
		}
	}
}

/* On success, walks the whole result: names, the IR as JSON, the Linux lowering. */
static void use_result(zsp_policy_set *set)
{
	lower(set);
	size_t n = zsp_policy_set_count(set);
	for (size_t i = 0; i < n; i++)
		if (!zsp_policy_set_name(set, i))
			abort();
	if (zsp_policy_set_name(set, n))
		abort();
	char *json = NULL;
	size_t len = 0;
	if (zsp_policy_set_ir_json(set, &json, &len) == ZSP_OK) {
		if (!json || strlen(json) != len)
			abort(); /* the API promises a NUL-terminated string of length len */
	}
	free(json);
	zsp_policy_set_free(set);
}

/* `with_options` adds -D WORKSPACE and HOME and -I ZSP_FUZZ_INCDIR, and names the buffer
 * inside ZSP_FUZZ_INCDIR/local so that relative includes find the files there. */
static void compile_once(const uint8_t *data, size_t size, int with_options)
{
	zsp_compiler *c = zsp_compiler_new();
	if (!c)
		abort();
	zsp_compiler_set_sink(c, discard, NULL);
	const char *name = "/nonexistent/zsp-fuzz/input.zsp";
	if (with_options) {
		name = ZSP_FUZZ_INCDIR "/local/input.zsp";
		if (zsp_compiler_define(c, "WORKSPACE", "/home/u/proj") != ZSP_OK ||
		    zsp_compiler_define(c, "HOME", "/home/u") != ZSP_OK ||
		    zsp_compiler_add_include_dir(c, ZSP_FUZZ_INCDIR) != ZSP_OK ||
		    zsp_compiler_warning(c, "error=shadowed") != ZSP_OK)
			abort();
		zsp_compiler_set_datadir(c, ZSP_FUZZ_INCDIR "/data");
	} else {
		zsp_compiler_set_datadir(c, NULL);
	}
	zsp_policy_set *set = NULL;
	int rc = zsp_compile_buffer(c, name, (const char *)data, size, &set);
	if (rc == ZSP_OK) {
		if (!set)
			abort();
		use_result(set);
	} else if (set) {
		abort(); /* on failure *out must be NULL */
	}
	if (rc == ZSP_EINTERNAL)
		abort(); /* out of memory is not expected on fuzz-sized inputs: a bug */
	zsp_compiler_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	compile_once(data, size, 0);
	compile_once(data, size, 1);
	return 0;
}
