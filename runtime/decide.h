/* decide.h: one decision as agent hosts get it: the oracle (DESIGN §3), then, only when it says
 * `ask`, the grant store; optionally appended to the audit trail. Shared by zspc --query and
 * zsp-run -c. */
#ifndef ZSP_DECIDE_H
#define ZSP_DECIDE_H

#include <stdbool.h>
#include <stdint.h>

#include "../compiler/ir.h"
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

/* Decides request (`terminal "cargo test"`). A store error never turns into an allow: the
 * oracle's answer stands (out->store_failed says so). With record, the decision is appended
 * to the audit trail (policy_hash: hex sha-256 of the policy's IR, may be NULL). Returns 0,
 * ZSP_EUSAGE for a malformed request (err says why), ZSP_EINTERNAL on out-of-memory, or -1
 * when record was asked and the audit append failed (out is still filled). */
int zsp_decider_decide(zsp_decider *d, const char *request, const char *thread, const char *project,
		       bool record, const char *policy_hash, zsp_decision_out *out, char *err,
		       size_t errlen);

/* The policy's fingerprint for the audit trail: the hex SHA-256 of the IR JSON of a set holding
 * only p, as `zspc --emit ir` prints a file with that one policy and no tests. 0, or -1. */
int zsp_policy_hash(const zsp_ir *ir, const zsp_ir_policy *p, char hex[65]);

#endif
