/* oracle.h: the reference semantics of zsp: decide(policy, request) -> allow | ask | deny, with
 * the rule that decided, a stable reason and the chain of checks (doc/oracle.md,
 * doc/facts.md §zed). */
#ifndef ZSP_ORACLE_H
#define ZSP_ORACLE_H

#include <stdbool.h>
#include <stddef.h>

#include "compiler/ir.h"

/* The machine the question is asked about. */
typedef struct zsp_oracle_env {
	const char *workspace;   /* absolute: relative request paths and symlink escapes */
	const char *home;        /* absolute: `~` in request paths; NULL leaves `~` alone */
	bool resolve_symlinks;   /* judge paths after resolving symlinks on this machine too */
	const char *shell;       /* absolute: the shell `terminal` commands run with (SHELL -c);
				  * NULL: /bin/sh. One the oracle does not model turns an allow
				  * into ask (doc/oracle.md "Shells") */
} zsp_oracle_env;

typedef struct zsp_verdict {
	zsp_decision decision;
	const char *reason;      /* stable code, see doc/oracle.md */
	const char *detail;      /* for people: what matched, or why */
	const char *rule;        /* the deciding rule as written, or NULL */
	zsp_loc loc;             /* where that rule is; src NULL for built-in and defaults */
	const char **trace;      /* the checks made, in order */
	size_t ntrace, trace_cap;
	const char **subcommands;/* terminal: the entries judged */
	size_t nsub;
	const char *shell;       /* terminal: the shell named (zsp_oracle_env.shell), or NULL */
	bool explain;            /* trace wanted: set by zsp_oracle_decide */
} zsp_verdict;

typedef struct zsp_oracle zsp_oracle;

/* Prepares a policy for questions (compiles its regexes). NULL on out-of-memory. The oracle
 * keeps pointers into p and env: both must outlive it. Not thread-safe: one per thread. */
zsp_oracle *zsp_oracle_new(const zsp_ir_policy *p, const zsp_oracle_env *env);
void zsp_oracle_free(zsp_oracle *o);

/* Decides one request; the verdict's strings live in arena a. With explain, the verdict's
 * trace lists the checks made (without, it stays empty: cheaper). Returns an enum zsp_status
 * (zsp.h): ZSP_OK (a bad request is a verdict, not an error), or ZSP_EINTERNAL on
 * out-of-memory. */
int zsp_oracle_decide(zsp_oracle *o, zsp_arena *a, const zsp_ir_request *req, bool explain,
		      zsp_verdict *v);

/* The fs rule deciding the concrete absolute path (the most specific one covering it, ties going
 * deny > write > read, as read_file and edit_file are decided), or NULL when none covers it.
 * Reads only what zsp_oracle_new prepared: unlike zsp_oracle_decide it may be called from
 * several threads at once (zsp-run --strict's supervisor does: runtime/opens.c). */
const zsp_ir_fs_rule *zsp_oracle_fs_rule(const zsp_oracle *o, const char *path);

/* A request path as the oracle judges it (doc/oracle.md "Path tools"): abs is arg with `~`
 * expanded (env->home), made absolute under env->workspace when relative, and lexically
 * normal; with env->resolve_symlinks, resolved is where it leads as the kernel walks it, with
 * /proc/self/cwd the workspace (compiler/resolve.h), NULL when that is abs itself; unknown
 * (then resolved is NULL) says why it cannot be followed: such a path is never allowed. All in
 * arena a. 0, or -1 on out-of-memory. */
typedef struct zsp_oracle_path {
	const char *abs, *resolved, *unknown;
} zsp_oracle_path;
int zsp_oracle_resolve(const zsp_oracle_env *env, zsp_arena *a, const char *arg, zsp_oracle_path *out);

/* Decides a connection to HOST on PORT, as `connect "HOST:PORT"` is decided (zsp_oracle_decide
 * splits the request and calls this): the one decision the proxy asks too. HOST as a request
 * writes it: a name, an IPv4 address in any inet_aton(3) form, a bracketed IPv6 address; it is
 * canonicalized first (compiler/host.h), and one that is not a host is a bad request (deny,
 * reason `bad-request`, the detail starting with the error's name). The verdict's strings live
 * in arena a. Like zsp_oracle_fs_rule it may be called from several threads at once, each with
 * its own arena (rule coverage is counted with atomic increments). Returns ZSP_OK, or
 * ZSP_EINTERNAL on out-of-memory. */
int zsp_oracle_connect(const zsp_oracle *o, zsp_arena *a, const char *host, unsigned port, bool explain,
		       zsp_verdict *v);

/* Coverage: how many decisions each rule took part in. Rules are numbered fs rules first,
 * then host rules, then tool rules in IR order; *n receives the count. */
const unsigned *zsp_oracle_hits(const zsp_oracle *o, size_t *n);

/* Parses the request syntax shared by --query, tests and corpora: KIND followed by strings,
 * e.g. `terminal "ls -la"`, `copy_path "a" "b"`, `mcp:github:create_issue`. Returns an enum
 * zsp_status (zsp.h): ZSP_OK; ZSP_EUSAGE for text it refuses, ZSP_EINTERNAL on out-of-memory,
 * either with a one-line message in err (NUL-terminated, cut to fit; err may be NULL if
 * errsize is 0). */
int zsp_request_parse(zsp_arena *a, const char *text, zsp_ir_request *out, char *err, size_t errsize);

/* The request written in that syntax, each argument quoted so that zsp_request_parse reads it
 * back exactly (`"` and `\` escaped, newline, tab, CR as \n \t \r, other control bytes as
 * \xHH): what zsp-run -c asks and what the audit trail keeps. malloc'd; NULL on out-of-memory. */
char *zsp_request_text(const zsp_ir_request *req);

/* Checks kind and argument count (the same table the compiler uses for `expect`). */
bool zsp_request_valid(const zsp_ir_request *req, char *err, size_t errsize);

/* verdict_json.c */
#include <stdio.h>
/* allow 0, deny 1, ask 2: zspc --query's exit status (and the JSON's "exit"). */
int zsp_decision_exit(zsp_decision d);
/* The session API's enum zsp_answer (zsp.h) for d, and back; whatever is neither allow nor ask
 * (ZSP_DECISION_NONE, a number that is no answer) is deny. */
int zsp_decision_answer(zsp_decision d);
zsp_decision zsp_answer_decision(int answer);
/* s as a JSON string (null for NULL), always valid UTF-8 and safe on a terminal: control
 * characters, C1 controls and invisible code points (lang/textesc_core.h) as \uXXXX, and each
 * byte that is not part of valid UTF-8 as \ufffd (JSON cannot carry it). */
void zsp_json_string(FILE *f, const char *s);
/* "FILE:LINE:COL" into buf, or NULL for a location-less rule. */
const char *zsp_loc_string(char *buf, size_t size, zsp_loc loc);
/* What the grant store adds to a verdict (runtime/decide.h): the grant that answered (0: none),
 * why the store could not be read, why the decision could not be recorded (NULL: neither). */
typedef struct zsp_verdict_extra {
	long long grant;
	const char *store_error;
	const char *audit_error;
} zsp_verdict_extra;
/* One line of JSON (doc/oracle.md); extra may be NULL: without its keys. */
void zsp_verdict_json(FILE *f, const char *policy, const zsp_ir_request *req, const zsp_verdict *v,
		      bool explain, const zsp_verdict_extra *extra);

#endif
