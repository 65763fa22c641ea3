/* zsp.h: the public API of libzsp: compile .zsp policies, ask the oracle, keep the grants.
 * Everything returns a status from enum zsp_status; those values are also zspc's exit codes.
 * A NULL handle or string where one is needed is ZSP_EUSAGE (an out-pointer given is set to
 * NULL first), never a crash; doc/oracle.md "Libzsp" has the contract of the answers. */
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

/* 0 is no answer: a variable the caller left 0 never reads as one, let alone as an allow. Every
 * call below that fails writes ZSP_ANSWER_DENY where it was given an answer to fill. */
enum zsp_answer {
	ZSP_ANSWER_ALLOW = 1,
	ZSP_ANSWER_ASK = 2,
	ZSP_ANSWER_DENY = 3,
};

/* A session answers requests for one policy of a compiled set (policy NULL: the set's only
 * policy, else the only one the compiled file defines itself rather than includes). workspace
 * and home are absolute paths or NULL: relative request paths, `~` and
 * symlink escapes are judged against them, and they are the values of the built-in parameters
 * WORKSPACE and HOME (`~` in a rule is ${HOME}) when the set was compiled without them; the
 * other built-ins (TMPDIR, UID, USER) get the calling process's values, as zspc computes them
 * (doc/oracle.md "Libzsp"). A parameter defined when compiling keeps its value (NULL workspace
 * or home: the compiled one); workspace or home naming another directory is a conflict.
 * ZSP_EUSAGE (and *out NULL) for a NULL set or out, a relative workspace or home, or a policy
 * the set does not hold (several and policy NULL, or none of that name); ZSP_EINTERNAL on
 * out-of-memory. A session is made, but refuses every decision, when a rule of the policy names
 * a parameter that has no value (a `deny "~/.ssh"` without a home would deny nothing) or when
 * workspace or home conflict with the compiled values: zsp_session_refusal says why. The set
 * must outlive the session. A session is not thread-safe: use one per thread. */
int zsp_session_new(const zsp_policy_set *set, const char *policy, const char *workspace,
		    const char *home, zsp_session **out);
void zsp_session_free(zsp_session *s);

/* NULL when s decides; else one line saying why it refuses every decision, naming the
 * parameter and the rule that needs it (or the conflict), for the caller to print. A NULL s
 * refuses too: "no session". */
const char *zsp_session_refusal(const zsp_session *s);

/* The shell `terminal` requests run with from now on, as `SHELL -c COMMAND`: an absolute path,
 * or NULL for /bin/sh (the default). The oracle's shell model is POSIX sh with bash's additions:
 * a shell is judged as written when the file the path resolves to is named sh, dash or bash
 * and is not one the policy lets the sandbox write; any other (zsh, whose glob qualifiers run
 * code, fish, csh, ksh, ...; a path that does not resolve) turns what the rules would allow
 * into `ask` with reason "unsupported" (deny and ask stand). ZSP_OK; ZSP_EUSAGE for a relative
 * path; ZSP_EINTERNAL on out-of-memory (then the shell is unchanged). doc/oracle.md "Shells". */
int zsp_session_set_shell(zsp_session *s, const char *shell);

/* Decides a request written as `terminal "ls -la"`, `read "/etc/hosts"`, ... On ZSP_OK,
 * *answer is an enum zsp_answer and, when json is not NULL, *json (malloc'd) holds the
 * decision as one line of JSON, with the chain of checks when explain is non-zero.
 * ZSP_EUSAGE for a NULL session, request or answer, a malformed request (an unknown tool
 * too), a relative path when the session has no workspace and a `~` path when it has no home,
 * and every request of a session that refuses (zsp_session_refusal); *json, if asked for, is
 * then {"decision":"error","error":WHY}. ZSP_EINTERNAL on out-of-memory
 * (*json NULL), ZSP_EIO when a decision to record (zsp_session_use_grants) could not be
 * appended to the audit trail (the JSON then says what the policy decided and why it was not
 * recorded). On every status but ZSP_OK, *answer is ZSP_ANSWER_DENY, whatever it held: a
 * decision that could not be made, or not recorded, is not one to act on. */
int zsp_session_decide(zsp_session *s, const char *request, int explain, int *answer,
		       char **json);

/* ---- grants and the audit trail (doc/store.md) --------------------------------------- */

/* A grant is what a person answered when the oracle said `ask`. It only ever turns an `ask`
 * into allow or deny: no grant lifts a built-in rule, a substitution or a policy deny. The
 * values of both enums are stored in the grant database (a decision is stored under numbers
 * of its own: doc/store.md "Schema"). */
enum zsp_grant_scope {
	ZSP_GRANT_ONCE = 0,      /* the next matching request only; consumed atomically */
	ZSP_GRANT_THREAD = 1,    /* this agent thread (conversation) until it ends; never on disk */
	ZSP_GRANT_PROJECT = 2,   /* always in one project directory */
	ZSP_GRANT_GLOBAL = 3,    /* always, everywhere */
};

enum zsp_grant_match {
	ZSP_MATCH_EXACT = 0,     /* the request's argument, byte for byte (`cargo build --release`) */
	ZSP_MATCH_PREFIX = 1,    /* a regex searched in the argument, Zed style (`^cargo\s+build(\s|$)`),
				  * PCRE2, case-sensitive */
	ZSP_MATCH_PATH = 2,      /* an absolute directory: the argument (a path) is it or lies below it */
	ZSP_MATCH_HOST = 3,      /* `example.com` or `*.example.com` (strict subdomains), against the
				  * host of a URL or of a host:port argument */
};

struct zsp_grant_spec {
	enum zsp_grant_scope scope;
	const char *tool;        /* terminal, edit_file, fetch, read, connect, mcp:server:tool, ... */
	enum zsp_grant_match match;
	const char *pattern;     /* compared with the request's argument as the matcher says; path
				  * requests give their path made absolute against the session's
				  * workspace (`~` against its home) and lexically normalized */
	int decision;            /* ZSP_ANSWER_ALLOW or ZSP_ANSWER_DENY */
	const char *thread;      /* THREAD: required; ONCE: optional (then only in that thread) */
	const char *project;     /* PROJECT: required, an existing absolute directory (realpath'd) */
	const char *policy;      /* the policy it was given under (listed only); may be NULL */
	long long expires;       /* unix seconds; 0: never */
};

typedef struct zsp_grants zsp_grants;

/* On failure the zsp_grants_* calls below write one line saying why into the caller's buffer
 * err of errlen bytes (NUL-terminated, cut to fit); on success err holds "". err may be NULL
 * with errlen 0: no message. Every status is an enum zsp_status; a third outcome (no such
 * grant) comes through an out-parameter, never through the return value. A NULL handle (or
 * out) is ZSP_EUSAGE. */

/* Opens the grant store: grants.db (once, project and global grants; the audit trail) in
 * state_dir, an absolute directory created 0700 if missing, or NULL for $XDG_STATE_HOME/zsp,
 * else ~/.local/state/zsp. Thread grants are kept in this process's memory only: they die
 * with the handle (zsp_grants_close), and other processes never see them. ZSP_EUSAGE for a
 * relative state_dir; ZSP_EIO when the store cannot be opened (a corrupt, foreign or
 * group/other-writable database: the message names the file and what to do). Like a session,
 * a handle is not thread-safe: use it (and the sessions given it) from one thread at a time. */
int zsp_grants_open(const char *state_dir, zsp_grants **out, char *err, size_t errlen);
void zsp_grants_close(zsp_grants *g);

/* Adds a grant given by the process's user; *id (if not NULL) gets its id. ZSP_EUSAGE for a
 * spec the store refuses (no tool, a THREAD grant without a thread, a relative or missing
 * project, a regex that does not compile, ...), ZSP_EIO on a store error. */
int zsp_grants_add(zsp_grants *g, const struct zsp_grant_spec *spec, long long *id, char *err,
		   size_t errlen);

/* Removes grant id: ZSP_OK whether or not it existed, *found (if not NULL) then 1 when it did
 * and 0 when there was no such grant; ZSP_EIO on a store error (*found 0). */
int zsp_grants_revoke(zsp_grants *g, long long id, int *found, char *err, size_t errlen);

/* Removes every grant of thread (its THREAD grants and its ONCE grants); *removed (if not
 * NULL) gets how many. ZSP_EUSAGE for a NULL or empty thread, ZSP_EIO on a store error. */
int zsp_grants_end_thread(zsp_grants *g, const char *thread, int *removed, char *err,
			  size_t errlen);

/* From now on s consults g whenever the oracle says `ask`, as `zspc --query REQ --state-dir D
 * --thread T --project P [--record] --format json` does: a grant that answers gives reason
 * "grant" and the JSON gains "grant":N; a store that cannot be read leaves the oracle's answer
 * (never an allow) and the JSON gains "store_error". thread and project (an existing absolute
 * directory, realpath'd) may be NULL. With record non-zero every decision is appended to the
 * audit trail; when that fails zsp_session_decide returns ZSP_EIO (with *answer and *json
 * filled, the JSON with "audit_error"): do not act on such a decision. g must outlive s; g
 * NULL detaches. ZSP_EUSAGE for a NULL s or a relative or missing project, ZSP_EINTERNAL on
 * out-of-memory; on error s is left as it was. */
int zsp_session_use_grants(zsp_session *s, zsp_grants *g, const char *thread, const char *project,
			   int record);

/* An embedder that asks the person itself records the answer it got: appended to the audit
 * trail as reason "prompt", rule how ("once", "deny", ...), when s records (use_grants with
 * record). ZSP_OK (also when s does not record); ZSP_EUSAGE for a NULL s or request or an
 * answer that is none of enum zsp_answer; ZSP_EIO when it cannot be recorded. Why in err,
 * errlen bytes (NUL-terminated, cut to fit; "" on success; NULL with errlen 0: no message). */
int zsp_session_record_answer(zsp_session *s, const char *request, int answer, const char *how,
			      char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
