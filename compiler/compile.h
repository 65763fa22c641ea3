/* compile.h: state of one compilation, shared by the compiler passes (internal to libzsp).
 * The compiler owns options across compilations; a zsp_cc lives for one call of zsp_compile_*. */
#ifndef ZSP_COMPILE_H
#define ZSP_COMPILE_H

#include "lang/arena.h"
#include "lang/ast.h"
#include "lang/diag.h"
#include "compiler/ir.h"
#include "compiler/zsp.h"

#define ZSP_INCLUDE_DEPTH 16

struct zsp_define {
	const char *name, *value;
	bool used;
};

/* A policy file compiled into the program: zsp-run's default policy and what it includes. */
typedef struct zsp_builtin_file {
	const char *name, *text;
} zsp_builtin_file;

struct zsp_compiler {
	const zsp_builtin_file *builtins;
	size_t nbuiltins;
	char **include_dirs;
	size_t ninclude;
	struct zsp_define *defines;
	size_t ndefines;
	char *datadir;
	zsp_diag diag;
	zsp_diag_fn sink;
	void *sink_ctx;
	char *warning_specs[64];
	size_t nwarning_specs;
	bool defer_summary;       /* the program prints the run's one summary line */
	bool no_summary;          /* the last compilation failed before any diagnostic counted */
};

/* A compiled set keeps what compiled it, to be compiled again with more parameters
 * (zsp_policy_set_bind): its files' syntax trees and the definitions and warning options it
 * was compiled with, all in its arena (a bound set borrows its parent's trees). */
struct zsp_policy_set {
	zsp_arena *arena;
	zsp_ir ir;
	zsp_ast_file **files;
	size_t nfiles;
	struct zsp_define *defines;
	size_t ndefines;
	const char **warning_specs;
	size_t nwarning_specs;
};

struct policy_state;

/* One compilation. */
typedef struct zsp_cc {
	zsp_compiler *c;
	zsp_arena *a;
	zsp_diag *diag;
	zsp_ast_file **files;
	size_t nfiles, files_cap;
	const char **inputs;        /* every file read, canonical (zsp_ir.inputs) */
	size_t ninputs;
	struct policy_state *pols;
	size_t npols;
	const char **syscall_names; /* lazily built for "did you mean" */
	size_t nsyscall_names;
	bool oom;
} zsp_cc;

/* Growable arrays in the arena (zsp_arena_grow): the (possibly moved) array with room for one more. */
#define ZSP_PUSH(cc, arr, n, cap)                                                        \
	((arr) = zsp_arena_grow((cc)->a, (arr), (n), &(cap), sizeof(*(arr))),            \
	 (arr) ? &(arr)[(n)++] : ((cc)->oom = true, (void *)0))

/* load.c: reads the root file and its includes into cc->files. A built-in root (text compiled
 * into the program) includes built-in files only. */
int zsp_load(zsp_cc *cc, const char *path, const char *text, size_t len, bool builtin);

/* lower.c: checks every policy and test and builds the IR. */
int zsp_lower(zsp_cc *cc, zsp_ir *ir);

/* fsnorm.c: protect expansion, merge, shadow detection and ordering of one policy's fs rules. */
void zsp_fs_normalize(zsp_cc *cc, zsp_ir_policy *p, const zsp_ir_fs_rule *in, size_t n);

/* A location inside a string literal: byte off..off+len of its value, or the whole literal
 * when the literal used escapes (offsets no longer map). */
zsp_loc zsp_str_loc(const zsp_ast_str *s, size_t off, size_t len);

/* api.c: the built-in files (static storage, never copied). A file compiled with
 * zsp_compile_builtin, and every file it includes, is looked up among them by name and never on
 * disk: neither the current directory, -I nor the data directory can stand in for one of them
 * (zsp-run's default policy includes examples/credentials.zsp, and must get that list). */
void zsp_compiler_set_builtins(zsp_compiler *c, const zsp_builtin_file *files, size_t n);
/* Compiles the built-in file name (diagnostics call it `<built-in NAME>`); ZSP_ENOINPUT, said
 * on the sink, when there is none of that name. */
int zsp_compile_builtin(zsp_compiler *c, const char *name, zsp_policy_set **out);
/* The built-in file name, or NULL. */
const zsp_builtin_file *zsp_compiler_builtin(const zsp_compiler *c, const char *name);

/* api.c: the IR inside a compiled set, for in-tree programs (zspc). */
const zsp_ir *zsp_policy_set_ir(const zsp_policy_set *set);

/* api.c: set lowered again, from the same syntax trees (no file is read again), with what it
 * was compiled with and names[i] defined to values[i] besides: the session fills the built-in
 * parameters a set was compiled without this way (runtime/session.c). A name the set was
 * compiled with keeps its value. On ZSP_OK *out is the new set, which borrows set's trees: free
 * it before set. ZSP_EPOLICY when the policies do not compile with those values (err gets the
 * first error, `file:line:col: error: ...`), ZSP_EUSAGE for a value that cannot be one
 * (zsp_compiler_define), ZSP_EINTERNAL on out-of-memory. */
int zsp_policy_set_bind(const zsp_policy_set *set, const char *const *names,
			const char *const *values, size_t n, zsp_policy_set **out, char *err,
			size_t errlen);

/* One diagnostics engine per run: a program that lowers what it compiled reports the backend's
 * diagnostics through the compiler's engine (zsp_compiler_diag), and prints the one summary
 * line at the end (zsp_compiler_summary) after zsp_compiler_defer_summary. */
void zsp_compiler_defer_summary(zsp_compiler *c);
zsp_diag *zsp_compiler_diag(zsp_compiler *c);
void zsp_compiler_summary(zsp_compiler *c);

/* ir_json.c */
int zsp_ir_to_json(const zsp_ir *ir, char **out, size_t *len);

#endif
