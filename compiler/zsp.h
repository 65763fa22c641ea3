/* zsp.h: the public API of libzsp: compile .zsp policies and read the result.
 * Everything returns a status from enum zsp_status; those values are also zspc's exit codes. */
#ifndef ZSP_H
#define ZSP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum zsp_status {
	ZSP_OK = 0,          /* success (warnings allowed) */
	ZSP_EPOLICY = 1,     /* the policy has errors; diagnostics were reported */
	ZSP_EUSAGE = 64,     /* bad option, -D or warning name */
	ZSP_ENOINPUT = 66,   /* an input file cannot be opened or read */
	ZSP_EINTERNAL = 70,  /* out of memory or a bug */
	ZSP_ECANTCREAT = 73, /* the output file cannot be created */
	ZSP_EIO = 74,        /* an I/O error while writing */
};

typedef struct zsp_compiler zsp_compiler;
typedef struct zsp_policy_set zsp_policy_set;

/* Receives rendered diagnostics ("file:line:col: error: ...\n  source\n  ^~~\n"), one call
 * per diagnostic. Without a sink, diagnostics are discarded. */
typedef void (*zsp_diag_fn)(void *ctx, const char *text, size_t len);

const char *zsp_version(void);

zsp_compiler *zsp_compiler_new(void);
void zsp_compiler_free(zsp_compiler *c);
void zsp_compiler_set_sink(zsp_compiler *c, zsp_diag_fn fn, void *ctx);
/* Searched for includes after the including file's directory, in call order. */
int zsp_compiler_add_include_dir(zsp_compiler *c, const char *dir);
/* Resolves parameter NAME to VALUE in every policy (-D NAME=VALUE). ZSP_EUSAGE for a bad
 * name or a value holding `${` or a control character. */
int zsp_compiler_define(zsp_compiler *c, const char *name, const char *value);
/* A -W option body: "shadowed", "no-shadowed", "error", "error=shadowed". ZSP_EUSAGE if unknown. */
int zsp_compiler_warning(zsp_compiler *c, const char *spec);
/* Where include searches end; defaults to the installed $(datadir)/zsp. */
void zsp_compiler_set_datadir(zsp_compiler *c, const char *dir);

/* Compiles a file (or a buffer named `name`). On ZSP_OK *out is the compiled set; otherwise
 * *out is NULL and the diagnostics say why. A summary line ends the diagnostics. */
int zsp_compile_file(zsp_compiler *c, const char *path, zsp_policy_set **out);
int zsp_compile_buffer(zsp_compiler *c, const char *name, const char *text, size_t len,
		       zsp_policy_set **out);
unsigned zsp_compiler_errors(const zsp_compiler *c);
unsigned zsp_compiler_warnings(const zsp_compiler *c);

void zsp_policy_set_free(zsp_policy_set *set);
size_t zsp_policy_set_count(const zsp_policy_set *set);
const char *zsp_policy_set_name(const zsp_policy_set *set, size_t i);
/* The normalized IR as JSON (doc/ir.md), NUL-terminated, malloc'd; the caller frees it. */
int zsp_policy_set_ir_json(const zsp_policy_set *set, char **json, size_t *len);

/* ---- asking the oracle (doc/oracle.md) ---------------------------------------------- */

typedef struct zsp_session zsp_session;

enum zsp_answer {
	ZSP_ANSWER_ALLOW = 0,
	ZSP_ANSWER_DENY = 1,
	ZSP_ANSWER_ASK = 2,
};

/* A session answers requests for one policy of a compiled set (policy NULL: the set's only
 * policy; ZSP_EUSAGE when it has several or none of that name). workspace and home are
 * absolute paths (relative request paths, `~`, symlink escapes) or NULL. The set must outlive
 * the session. A session is not thread-safe: use one per thread. */
int zsp_session_new(const zsp_policy_set *set, const char *policy, const char *workspace,
		    const char *home, zsp_session **out);
void zsp_session_free(zsp_session *s);

/* Decides a request written as `terminal "ls -la"`, `read "/etc/hosts"`, ... On ZSP_OK,
 * *answer is an enum zsp_answer and, when json is not NULL, *json (malloc'd) holds the
 * decision as one line of JSON, with the chain of checks when explain is non-zero.
 * ZSP_EUSAGE for a malformed request (then *json, if asked for, says why),
 * ZSP_EINTERNAL on out-of-memory. */
int zsp_session_decide(zsp_session *s, const char *request, int explain, int *answer,
		       char **json);

#ifdef __cplusplus
}
#endif

#endif
