/* store.h: the grant store and the audit trail, in SQLite. Grants are what people answered when
 * the oracle said `ask`; they apply only to an `ask` (doc/oracle.md "Grants": never to a
 * built-in rule, a substitution or a policy deny) and last exactly as long as their scope says. */
#ifndef ZSP_STORE_H
#define ZSP_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/zsp.h"

typedef struct zsp_store zsp_store;

/* The scopes and matchers are libzsp's public enum zsp_grant_scope and enum zsp_grant_match
 * (zsp.h, where each is described); their values are stored in the databases. */
typedef enum zsp_grant_scope zsp_grant_scope;
typedef enum zsp_grant_match zsp_grant_match;

typedef struct zsp_grant {
	int64_t id;          /* set by the store */
	zsp_grant_scope scope;
	const char *thread;  /* THREAD: required; ONCE: optional (then only in that thread) */
	const char *project; /* PROJECT: required, an absolute canonical directory; else NULL */
	const char *tool;    /* terminal, edit_file, fetch, read, connect, mcp:server:tool, ... */
	zsp_grant_match match;
	const char *pattern;
	int decision;        /* enum zsp_answer (zsp.h): ZSP_ANSWER_ALLOW or ZSP_ANSWER_DENY */
	const char *policy;  /* the policy it was given under (informational, listed) */
	const char *who;     /* the user who answered */
	int64_t created;     /* unix seconds, set by the store when 0 */
	int64_t expires;     /* unix seconds; 0 = no expiry */
} zsp_grant;

/* Where the databases live. NULL members take the defaults:
 *  state_dir   $XDG_STATE_HOME/zsp, else ~/.local/state/zsp   (grants.db: once, project, global
 *              grants and the audit trail)
 *  runtime_dir $XDG_RUNTIME_DIR/zsp                           (threads.db: thread grants; a tmpfs)
 * Directories are created 0700, files 0600. A database or directory that is not owned by the
 * user, or is writable by group or others, is refused; so is a corrupt one. */
typedef struct zsp_store_where {
	const char *state_dir;
	const char *runtime_dir;
	bool threads_in_memory;  /* embedded use: thread grants live in this process only */
} zsp_store_where;

/* zsp's state directory: given, else $XDG_STATE_HOME/zsp, else $HOME/.local/state/zsp (the
 * passwd entry's home when $HOME is not absolute). The grant store and audit trail live there,
 * and the sandboxes' caches (runtime/sandbox.h). malloc'd; NULL when no directory can be named
 * (or out of memory). */
char *zsp_state_dir(const char *given);

/* Every zsp_store_* call below that returns int returns an enum zsp_status (zsp.h): ZSP_OK;
 * ZSP_EUSAGE for an argument it refuses (an invalid grant, a missing store, tool or thread);
 * ZSP_EIO for a database or file failure; ZSP_EINTERNAL on out-of-memory. On error err (if
 * not NULL) gets a one-line reason. Any third outcome (no such grant, no grant answers) comes
 * through an out-parameter, never through the return value. */

/* Opens (creating and migrating as needed: PRAGMA user_version, WAL, a busy timeout). On error
 * err names the file and what to do, and *out is NULL: ZSP_EIO for a directory or database
 * that cannot be used (missing, foreign, group/other-writable, corrupt, newer), ZSP_EINTERNAL
 * on out-of-memory. When no runtime dir exists (and not threads_in_memory) the store opens,
 * but thread grants are refused (ZSP_EIO) with a clear error rather than written to disk. */
int zsp_store_open(const zsp_store_where *where, zsp_store **out, char *err, size_t errlen);
void zsp_store_close(zsp_store *s);

/* Every call below is one transaction. */

/* Whether g may be added: a THREAD grant needs a thread, a PROJECT grant an absolute canonical
 * project, a PREFIX pattern must compile, a HOST pattern is a host name or *.domain, decision
 * allow/deny. ZSP_OK, or ZSP_EUSAGE with "invalid grant: ..." in err. Needs no store. */
int zsp_store_validate(const zsp_grant *g, char *err, size_t errlen);

/* Adds g (validated as zsp_store_validate does: ZSP_EUSAGE when invalid). *id, if not NULL,
 * gets the new grant's id. A THREAD grant without a thread database is ZSP_EIO. */
int zsp_store_add(zsp_store *s, const zsp_grant *g, int64_t *id, char *err, size_t errlen);

/* Removes grant id. ZSP_OK whether or not it existed; *found (if not NULL) says whether it did
 * (false on error). */
int zsp_store_revoke(zsp_store *s, int64_t id, bool *found, char *err, size_t errlen);

/* Removes every grant of thread (THREAD and ONCE); *removed how many. */
int zsp_store_end_thread(zsp_store *s, const char *thread, int *removed, char *err, size_t errlen);

/* Removes expired grants (expires <= now); *removed how many. */
int zsp_store_gc(zsp_store *s, int64_t now, int *removed, char *err, size_t errlen);

/* Calls fn for each grant (thread grants too), ordered by id. fn returns non-zero to stop
 * (still ZSP_OK). */
int zsp_store_list(zsp_store *s, int (*fn)(void *ctx, const zsp_grant *g), void *ctx, char *err,
		   size_t errlen);

/* The grant that answers `tool arg` for this thread (may be NULL) and project (may be NULL) at
 * time now: a deny grant wins over an allow grant; among the rest the narrowest scope (once,
 * thread, project, global). A once grant that answers is consumed in the same transaction: two
 * processes can never both use it. ZSP_OK with *found true and *decision (enum zsp_answer)
 * and *id (if not NULL) set when a grant answers, ZSP_OK with *found false when none does.
 * On error (ZSP_EUSAGE for no store or no tool, else ZSP_EIO) *found is false and the caller
 * must decide without grants: fail closed, never allow. */
int zsp_store_lookup(zsp_store *s, const char *tool, const char *arg, const char *thread,
		     const char *project, int64_t now, bool *found, int *decision, int64_t *id,
		     char *err, size_t errlen);

/* The same for a request with several arguments (copy_path and move_path: source and
 * destination): a deny grant on any argument answers deny; otherwise grants answer allow only
 * when every argument has an allow grant, and *id is the first argument's. The once grants
 * that answer are consumed together, in one transaction; when the arguments are not all
 * granted, none is consumed. At most ZSP_LOOKUP_MAX_ARGS arguments (else ZSP_EUSAGE, as for
 * none). */
#define ZSP_LOOKUP_MAX_ARGS 8
int zsp_store_lookup_all(zsp_store *s, const char *tool, const char *const *args, size_t nargs,
			 const char *thread, const char *project, int64_t now, bool *found,
			 int *decision, int64_t *id, char *err, size_t errlen);

typedef struct zsp_audit_record {
	int64_t time;         /* unix seconds; 0 = now */
	const char *request;  /* as given: `terminal "cargo test"` */
	int decision;         /* enum zsp_answer */
	const char *reason;   /* the oracle's reason code, or "grant" */
	const char *rule;     /* the deciding rule's place (file:line:col) or "grant N"; may be NULL */
	const char *policy;   /* policy name */
	const char *policy_hash; /* sha-256 of the policy's IR JSON, hex */
	const char *thread, *project, *who;   /* may be NULL */
} zsp_audit_record;

/* Appends r to the audit trail (ZSP_EUSAGE when r has no request). */
int zsp_store_audit(zsp_store *s, const zsp_audit_record *r, char *err, size_t errlen);

/* Calls fn for each audit record with time >= since, oldest first; fn returns non-zero to
 * stop (still ZSP_OK). */
int zsp_store_audit_list(zsp_store *s, int64_t since, int (*fn)(void *ctx, const zsp_audit_record *r),
			 void *ctx, char *err, size_t errlen);

/* Paths of the two databases (for messages); threads may be NULL (memory, or none). */
const char *zsp_store_grants_path(const zsp_store *s);
const char *zsp_store_threads_path(const zsp_store *s);

#endif
