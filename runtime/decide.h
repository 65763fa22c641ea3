/* decide.h: one decision as agent hosts get it: the oracle (doc/oracle.md), then, only when it says
 * `ask`, the grant store; optionally appended to the audit trail. Shared by zspc --query and
 * zsp-run -c. */
#ifndef ZSP_DECIDE_H
#define ZSP_DECIDE_H

#include <stdbool.h>
#include <stdint.h>

#include "../compiler/ir.h"
#include "../compiler/oracle.h"
#include "store.h"

typedef struct zsp_decider zsp_decider;

typedef struct zsp_decision_out {
	int answer;              /* enum zsp_answer */
	const char *reason;      /* the oracle's stable reason code, or "grant" */
	char rule[512];          /* the deciding rule's place and text, "grant N", or "" */
	int64_t grant_id;        /* the grant that answered, else 0 */
	bool store_failed;       /* the store could not be read: decided without grants */
	char store_error[512];   /* ... and why */
} zsp_decision_out;

/* A decider for policy p (must outlive it). store may be NULL (no grants, no audit). workspace
 * and home as for zsp_session_new. NULL on out-of-memory. */
zsp_decider *zsp_decider_new(const zsp_ir_policy *p, zsp_store *store, const char *workspace,
			     const char *home);
void zsp_decider_free(zsp_decider *d);

/* The store consulted from now on (NULL: none). It must outlive d. */
void zsp_decider_set_store(zsp_decider *d, zsp_store *store);

/* Decides request (`terminal "cargo test"`). A store error never turns into an allow: the
 * oracle's answer stands (out->store_failed says so). With record, the decision is appended
 * to the audit trail (policy_hash: hex sha-256 of the policy's IR, may be NULL). Returns 0,
 * ZSP_EUSAGE for a malformed request (err says why), ZSP_EINTERNAL on out-of-memory, or -1
 * when record was asked and the audit append failed (out is still filled). */
int zsp_decider_decide(zsp_decider *d, const char *request, const char *thread, const char *project,
		       bool record, const char *policy_hash, zsp_decision_out *out, char *err,
		       size_t errlen);

/* The same steps for a verdict the caller shows (zspc --query, the session API): v is the
 * oracle's verdict on req (parsed from request), its strings in arena a. When a grant answers,
 * v becomes the grant's answer (reason "grant", rule "grant N", no location) and x->grant is N;
 * x->store_error and x->audit_error say what failed (they live in a), for the JSON. Returns 0,
 * ZSP_EINTERNAL on out-of-memory, or -1 when the audit append failed. */
int zsp_decider_settle(zsp_decider *d, zsp_arena *a, const char *request, const zsp_ir_request *req,
		       zsp_verdict *v, const char *thread, const char *project, bool record,
		       const char *policy_hash, zsp_verdict_extra *x);

/* Parses request, asks d's oracle (with the chain of checks when explain) and settles the
 * verdict as above; *req and *v live in d until its next decision. Returns as
 * zsp_decider_settle, or ZSP_EUSAGE for a malformed request (err says why). */
int zsp_decider_verdict(zsp_decider *d, const char *request, bool explain, const char *thread,
			const char *project, bool record, const char *policy_hash, zsp_ir_request *req,
			zsp_verdict *v, zsp_verdict_extra *x, char *err, size_t errlen);

/* The account of the real uid (the password database, else the uid in decimal; never $USER,
 * which the agent sets), for grants and the audit trail. Static storage. */
const char *zsp_decider_user(void);

/* The policy's fingerprint for the audit trail: the hex SHA-256 of the IR JSON of a set holding
 * only p, as `zspc --emit ir` prints a file with that one policy and no tests. 0, or -1. */
int zsp_policy_hash(const zsp_ir *ir, const zsp_ir_policy *p, char hex[65]);

#endif
