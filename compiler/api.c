/* api.c: libzsp's public entry points (zsp.h): compiler options, compile, results.
 * Internal failures are filtered to the closed set of enum zsp_status here. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/compile.h"
#include "lang/err.h"

#ifndef ZSP_DATADIR
#define ZSP_DATADIR "/usr/local/share/zsp"
#endif

const char *zsp_version(void)
{
	return PACKAGE_VERSION;
}

zsp_compiler *zsp_compiler_new(void)
{
	zsp_compiler *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	zsp_diag_init(&c->diag, NULL, NULL);
	c->datadir = strdup(ZSP_DATADIR);
	if (!c->datadir) {
		free(c);
		return NULL;
	}
	return c;
}

void zsp_compiler_free(zsp_compiler *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ninclude; i++)
		free(c->include_dirs[i]);
	free(c->include_dirs);
	for (size_t i = 0; i < c->ndefines; i++) {
		free((char *)c->defines[i].name);
		free((char *)c->defines[i].value);
	}
	free(c->defines);
	for (size_t i = 0; i < c->nwarning_specs; i++)
		free(c->warning_specs[i]);
	free(c->datadir);
	free(c);
}

void zsp_compiler_set_sink(zsp_compiler *c, zsp_diag_fn fn, void *ctx)
{
	if (!c)
		return;
	c->sink = fn;
	c->sink_ctx = ctx;
	zsp_diag_init(&c->diag, fn, ctx);   /* ready before any compilation (zsp_compiler_diag) */
}

void zsp_compiler_set_datadir(zsp_compiler *c, const char *dir)
{
	if (!c)
		return;
	char *d = dir ? strdup(dir) : NULL;
	if (dir && !d)
		return;
	free(c->datadir);
	c->datadir = d;
}

int zsp_compiler_add_include_dir(zsp_compiler *c, const char *dir)
{
	if (!c || !dir || !*dir)
		return ZSP_EUSAGE;
	char **n = realloc(c->include_dirs, (c->ninclude + 1) * sizeof(*n));
	if (!n)
		return ZSP_EINTERNAL;
	c->include_dirs = n;
	size_t len = strlen(dir);
	while (len > 1 && dir[len - 1] == '/')
		len--;
	if (!(n[c->ninclude] = strndup(dir, len)))
		return ZSP_EINTERNAL;
	c->ninclude++;
	return ZSP_OK;
}

int zsp_compiler_define(zsp_compiler *c, const char *name, const char *value)
{
	if (!c || !name || !value)
		return ZSP_EUSAGE;
	size_t n = strlen(name);
	if (n == 0 || n > 64 || (name[0] >= '0' && name[0] <= '9') ||
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") != n)
		return ZSP_EUSAGE;
	if (strstr(value, "${"))
		return ZSP_EUSAGE;
	for (const unsigned char *p = (const unsigned char *)value; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return ZSP_EUSAGE;
	for (size_t i = 0; i < c->ndefines; i++) {
		if (strcmp(c->defines[i].name, name) == 0) {
			char *v = strdup(value);
			if (!v)
				return ZSP_EINTERNAL;
			free((char *)c->defines[i].value);
			c->defines[i].value = v; /* the last -D wins, as with cc */
			return ZSP_OK;
		}
	}
	struct zsp_define *d = realloc(c->defines, (c->ndefines + 1) * sizeof(*d));
	if (!d)
		return ZSP_EINTERNAL;
	c->defines = d;
	d[c->ndefines].name = strdup(name);
	d[c->ndefines].value = strdup(value);
	d[c->ndefines].used = false;
	if (!d[c->ndefines].name || !d[c->ndefines].value) {
		free((char *)d[c->ndefines].name);
		free((char *)d[c->ndefines].value);
		return ZSP_EINTERNAL;
	}
	c->ndefines++;
	return ZSP_OK;
}

int zsp_compiler_warning(zsp_compiler *c, const char *spec)
{
	if (!c || !spec)
		return ZSP_EUSAGE;
	zsp_diag probe;
	zsp_diag_init(&probe, NULL, NULL);
	if (!zsp_diag_option(&probe, spec))
		return ZSP_EUSAGE;
	if (c->nwarning_specs >= sizeof(c->warning_specs) / sizeof(c->warning_specs[0]))
		return ZSP_EUSAGE;
	if (!(c->warning_specs[c->nwarning_specs] = strdup(spec)))
		return ZSP_EINTERNAL;
	c->nwarning_specs++;
	return ZSP_OK;
}

void zsp_compiler_defer_summary(zsp_compiler *c)
{
	c->defer_summary = true;
}

zsp_diag *zsp_compiler_diag(zsp_compiler *c)
{
	return &c->diag;
}

void zsp_compiler_summary(zsp_compiler *c)
{
	if (!c->no_summary)
		zsp_diag_summary(&c->diag);
}

unsigned zsp_compiler_errors(const zsp_compiler *c)
{
	return c ? c->diag.errors : 0;
}

unsigned zsp_compiler_warnings(const zsp_compiler *c)
{
	return c ? c->diag.warnings : 0;
}

/* Copies c's definitions and warning options into set's arena, for zsp_policy_set_bind. */
static bool keep_options(zsp_policy_set *set, const zsp_compiler *c)
{
	zsp_arena *a = set->arena;
	set->defines = zsp_arena_calloc(a, c->ndefines + 1, sizeof(*set->defines));
	set->warning_specs = zsp_arena_calloc(a, c->nwarning_specs + 1, sizeof(char *));
	if (!set->defines || !set->warning_specs)
		return false;
	for (size_t i = 0; i < c->ndefines; i++) {
		set->defines[i].name = zsp_arena_strdup(a, c->defines[i].name);
		set->defines[i].value = zsp_arena_strdup(a, c->defines[i].value);
		if (!set->defines[i].name || !set->defines[i].value)
			return false;
	}
	set->ndefines = c->ndefines;
	for (size_t i = 0; i < c->nwarning_specs; i++)
		if (!(set->warning_specs[i] = zsp_arena_strdup(a, c->warning_specs[i])))
			return false;
	set->nwarning_specs = c->nwarning_specs;
	return true;
}

static int compile(zsp_compiler *c, const char *name, const char *text, size_t len,
		   bool builtin, zsp_policy_set **out)
{
	if (!out)
		return ZSP_EUSAGE;
	*out = NULL;
	if (!c || !name)
		return ZSP_EUSAGE;
	zsp_diag_init(&c->diag, c->sink, c->sink_ctx);
	for (size_t i = 0; i < c->nwarning_specs; i++)
		zsp_diag_option(&c->diag, c->warning_specs[i]);
	zsp_policy_set *set = calloc(1, sizeof(*set));
	zsp_arena *a = zsp_arena_new();
	if (!set || !a) {
		free(set);
		zsp_arena_free(a);
		return ZSP_EINTERNAL;
	}
	set->arena = a;
	zsp_cc cc = { .c = c, .a = a, .diag = &c->diag };
	int rc = zsp_load(&cc, name, text, len, builtin);
	if (rc == ZSP_OK && c->diag.errors == 0)
		rc = zsp_lower(&cc, &set->ir);
	else if (rc == ZSP_OK)
		rc = ZSP_EPOLICY;
	if (rc == ZSP_OK && c->diag.errors)
		rc = ZSP_EPOLICY;
	if (rc == ZSP_EINTERNAL || c->diag.oom)
		zsp_diag_error_noloc(&c->diag, "out of memory");
	c->no_summary = rc == ZSP_EUSAGE || rc == ZSP_ENOINPUT;
	if (!c->defer_summary)
		zsp_compiler_summary(c);
	set->ir.source = zsp_arena_strdup(a, name);
	set->ir.inputs = cc.inputs;
	set->ir.ninputs = cc.ninputs;
	set->files = cc.files;
	set->nfiles = cc.nfiles;
	if (rc != ZSP_OK || !set->ir.source || !keep_options(set, c)) {
		zsp_policy_set_free(set);
		return rc == ZSP_OK ? ZSP_EINTERNAL : rc;
	}
	*out = set;
	return ZSP_OK;
}

int zsp_compile_file(zsp_compiler *c, const char *path, zsp_policy_set **out)
{
	return compile(c, path, NULL, 0, false, out);
}

int zsp_compile_buffer(zsp_compiler *c, const char *name, const char *text, size_t len,
		       zsp_policy_set **out)
{
	return compile(c, name, text ? text : "", len, false, out);
}

void zsp_compiler_set_builtins(zsp_compiler *c, const zsp_builtin_file *files, size_t n)
{
	c->builtins = files;
	c->nbuiltins = n;
}

const zsp_builtin_file *zsp_compiler_builtin(const zsp_compiler *c, const char *name)
{
	for (size_t i = 0; i < c->nbuiltins; i++)
		if (strcmp(c->builtins[i].name, name) == 0)
			return &c->builtins[i];
	return NULL;
}

int zsp_compile_builtin(zsp_compiler *c, const char *name, zsp_policy_set **out)
{
	*out = NULL;
	const zsp_builtin_file *f = zsp_compiler_builtin(c, name);
	size_t n = strlen(name) + sizeof("<built-in >");
	char *shown = malloc(n);
	if (!shown)
		return ZSP_EINTERNAL;
	snprintf(shown, n, "<built-in %s>", name);
	int rc;
	if (f) {
		rc = compile(c, shown, f->text, strlen(f->text), true, out);
	} else {
		zsp_diag_init(&c->diag, c->sink, c->sink_ctx);
		zsp_diag_error_noloc(&c->diag, "no built-in file `%s`", name);
		c->no_summary = true;
		rc = ZSP_ENOINPUT;
	}
	free(shown);
	return rc;
}

/* The first error a compilation reports, its first line: why a bind failed. */
struct first_error {
	char line[512];
};

static void first_error_sink(void *ctx, const char *text, size_t len)
{
	struct first_error *f = ctx;
	const char *nl = memchr(text, '\n', len);
	size_t n = nl ? (size_t)(nl - text) : len;
	if (f->line[0] || !memmem(text, n, ": error: ", 9))
		return;
	snprintf(f->line, sizeof(f->line), "%.*s", (int)n, text);
}

int zsp_policy_set_bind(const zsp_policy_set *set, const char *const *names,
			const char *const *values, size_t n, zsp_policy_set **out, char *err,
			size_t errlen)
{
	*out = NULL;
	zsp_err_clear(err, errlen);
	zsp_compiler *c = zsp_compiler_new();
	zsp_policy_set *bound = calloc(1, sizeof(*bound));
	zsp_arena *a = zsp_arena_new();
	struct first_error first = { "" };
	int rc = c && bound && a ? ZSP_OK : ZSP_EINTERNAL;
	/* the given values first: a definition the set was compiled with comes last, and wins */
	for (size_t i = 0; i < n && rc == ZSP_OK; i++)
		if ((rc = zsp_compiler_define(c, names[i], values[i])) == ZSP_EUSAGE)
			zsp_err(err, errlen, rc, "%s: its value cannot be a parameter value", names[i]);
	for (size_t i = 0; i < set->ndefines && rc == ZSP_OK; i++)
		rc = zsp_compiler_define(c, set->defines[i].name, set->defines[i].value);
	for (size_t i = 0; i < set->nwarning_specs && rc == ZSP_OK; i++)
		rc = zsp_compiler_warning(c, set->warning_specs[i]);
	if (rc != ZSP_OK)
		goto out;
	zsp_diag_init(&c->diag, first_error_sink, &first);
	for (size_t i = 0; i < c->nwarning_specs; i++)
		zsp_diag_option(&c->diag, c->warning_specs[i]);
	bound->arena = a;
	a = NULL;
	zsp_cc cc = { .c = c, .a = bound->arena, .diag = &c->diag, .files = set->files,
		      .nfiles = set->nfiles, .inputs = set->ir.inputs, .ninputs = set->ir.ninputs };
	rc = zsp_lower(&cc, &bound->ir);
	if (rc == ZSP_OK && c->diag.errors)
		rc = ZSP_EPOLICY;
	if (c->diag.oom || cc.oom)
		rc = ZSP_EINTERNAL;
	bound->ir.source = set->ir.source;
	bound->ir.inputs = set->ir.inputs;
	bound->ir.ninputs = set->ir.ninputs;
	bound->files = set->files;
	bound->nfiles = set->nfiles;
	if (rc == ZSP_OK && !keep_options(bound, c))
		rc = ZSP_EINTERNAL;
	if (rc == ZSP_EPOLICY)
		zsp_err(err, errlen, rc, "%s", first.line[0] ? first.line : "the policy does not compile");
out:
	if (rc == ZSP_EINTERNAL)
		zsp_err(err, errlen, rc, "out of memory");
	zsp_compiler_free(c);
	zsp_arena_free(a);
	if (rc != ZSP_OK) {
		zsp_policy_set_free(bound);
		return rc;
	}
	*out = bound;
	return ZSP_OK;
}

void zsp_policy_set_free(zsp_policy_set *set)
{
	if (!set)
		return;
	zsp_arena_free(set->arena);
	free(set);
}

size_t zsp_policy_set_count(const zsp_policy_set *set)
{
	return set ? set->ir.npolicies : 0;
}

const char *zsp_policy_set_name(const zsp_policy_set *set, size_t i)
{
	return set && i < set->ir.npolicies ? set->ir.policies[i].name : NULL;
}

int zsp_policy_set_ir_json(const zsp_policy_set *set, char **json, size_t *len)
{
	if (json)
		*json = NULL;
	if (!set || !json || !len)
		return ZSP_EUSAGE;
	return zsp_ir_to_json(&set->ir, json, len);
}

const zsp_ir *zsp_policy_set_ir(const zsp_policy_set *set)
{
	return &set->ir;
}
