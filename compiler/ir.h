/* ir.h: the normalized policy IR, the contract between the compiler passes, the oracle and the
 * backends (which take it const). Arena-owned; see doc/ir.md for its JSON form. */
#ifndef ZSP_IR_H
#define ZSP_IR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lang/ast.h"

#define ZSP_IR_VERSION 1

typedef enum zsp_access {
	ZSP_ACCESS_READ = 1,
	ZSP_ACCESS_WRITE = 2,
	ZSP_ACCESS_DENY = 3,
} zsp_access;

typedef struct zsp_ir_param {
	const char *name;
	const char *value;     /* resolved value (may still hold ${X} of unresolved params), NULL if unresolved */
	const char *def;       /* declared default, NULL if none */
	bool builtin;          /* HOME TMPDIR UID USER WORKSPACE */
	bool from_define;      /* value came from -D */
	zsp_loc loc;           /* the declaration, src NULL for an undeclared built-in */
} zsp_ir_param;

typedef struct zsp_ir_fs_rule {
	zsp_access access;
	const char *path;      /* normalized; ${NAME} for unresolved parameters */
	const char *written;   /* the path as the policy wrote it (for protect: the name) */
	bool glob;
	const char *protect;   /* for a rule made by `protect NAME`: NAME; else NULL */
	const char *root;      /* ... and the writable root it was expanded under */
	const char *cache;     /* for the place of a mounted cache part (zsp_ir_cache): the cache's
				* name; the sandbox writes its own directory there, never the host's */
	const struct zsp_ir_cache_part *part;
	const char *policy;    /* policy that wrote the rule (differs from the owner under extends) */
	zsp_loc loc;
} zsp_ir_fs_rule;

typedef struct zsp_ir_host {
	zsp_decision decision; /* ZSP_ALLOW or ZSP_DENY */
	const char *host;      /* canonical (compiler/host.h): "*", "*.example.com", "10.0.0.1", "[::1]",
				* "example.com" */
	unsigned port;         /* 0 = any */
	zsp_loc loc;
} zsp_ir_host;

typedef struct zsp_ir_unix {
	zsp_decision decision;
	const char *path;
	zsp_loc loc;
} zsp_ir_unix;

typedef enum zsp_limit_kind {
	ZSP_LIMIT_CPU,
	ZSP_LIMIT_MEMORY,
	ZSP_LIMIT_FSIZE,
	ZSP_LIMIT_STACK,
	ZSP_LIMIT_CORE,
	ZSP_LIMIT_NOFILE,
	ZSP_LIMIT_NPROC,
	ZSP_LIMIT_COUNT
} zsp_limit_kind;

typedef struct zsp_ir_limit {
	bool set;
	bool unlimited;
	uint64_t value;        /* seconds, bytes or a count */
	zsp_loc loc;
} zsp_ir_limit;

typedef struct zsp_ir_env {
	const char *name;      /* a name or a glob (keep/unset) */
	const char *value;     /* set only */
	zsp_loc loc;
} zsp_ir_env;

typedef struct zsp_ir_syscall {
	const char *name;
	int nr;                /* libseccomp's number on the build architecture */
	zsp_decision action;   /* ZSP_ALLOW (lift from the hardening set) or ZSP_DENY */
	int err;               /* errno for a deny; 0 with kill */
	bool kill;
	zsp_loc loc;
} zsp_ir_syscall;

/* One directory of a tool's cache (doc/language.md "Caches"). The sandbox gets a directory of
 * its own for it in zsp's state, kept per policy and workspace: through the tool's variable
 * when it has one (env), else mounted where the tool looks (path, or base_env/base_sub when
 * the sandbox's environment moves it). */
typedef struct zsp_ir_cache_part {
	const char *id;        /* its directory in the state: "npm", "cargo-registry", "path-1a2b3c4d" */
	const char *path;      /* where the tool looks by default, normalized (${HOME}/.npm) */
	const char *env;       /* the tool's variable that names it, set in the sandbox; NULL: mounted */
	const char *base_env;  /* mounted: a variable that moves it (CARGO_HOME), or NULL */
	const char *base_sub;  /* ... and its place below that directory ("registry") */
} zsp_ir_cache_part;

typedef struct zsp_ir_cache {
	const char *name;      /* the tool ("npm"), or the path as written for `cache "PATH"` */
	bool is_path;
	const zsp_ir_cache_part *parts;
	size_t nparts;
	const char *policy;    /* the policy whose text named it */
	zsp_loc loc;
} zsp_ir_cache;

/* Defaults of `cache limit` and `tmp limit`: what a run may leave in the state, per policy and
 * workspace, before the least recently used files are removed after it. */
#define ZSP_CACHE_LIMIT_DEFAULT (4ULL << 30)
#define ZSP_TMP_LIMIT_DEFAULT (1ULL << 30)

typedef struct zsp_ir_tool_rule {
	zsp_decision decision;
	bool is_path;          /* path glob rather than regex */
	bool safe;             /* `allow safe`: the known-safe commands (compiler/safe.h); no pattern */
	const char *pattern;   /* NULL for safe */
	bool case_sensitive;   /* effective, after the tool's `case` setting */
	zsp_loc loc;
} zsp_ir_tool_rule;

typedef struct zsp_ir_tool {
	const char *name;
	zsp_decision def;      /* ZSP_DECISION_NONE: fall through to the policy default */
	bool case_sensitive;
	bool judge_substitutions; /* terminal's `substitutions judged;` (doc/oracle.md, step 2) */
	zsp_ir_tool_rule *rules;
	size_t nrules;
	zsp_loc loc;
} zsp_ir_tool;

typedef struct zsp_ir_policy {
	const char *name;
	zsp_loc loc;
	const char **extends;
	size_t nextends;
	zsp_ir_param *params;
	size_t nparams;
	zsp_decision def;      /* policy default for tools; ZSP_ASK unless stated */
	zsp_ir_fs_rule *fs;    /* path order: each path right before its descendants */
	size_t nfs;
	int net_mode;          /* enum zsp_net_mode */
	zsp_loc net_mode_loc;  /* where the mode was set (a base's, or none: the default) */
	zsp_ir_host *hosts;
	size_t nhosts;
	zsp_ir_unix *unix_socks;
	size_t nunix;
	bool env_clear;
	zsp_ir_env *env_keep, *env_unset, *env_set;
	size_t nenv_keep, nenv_unset, nenv_set;
	zsp_ir_limit limits[ZSP_LIMIT_COUNT];
	zsp_ir_syscall *syscalls;
	size_t nsyscalls;
	zsp_ir_tool *tools;    /* sorted by name */
	size_t ntools;
	zsp_ir_env *sensitive; /* names (relative globs): path tools ask instead of allowing below them */
	size_t nsensitive;
	zsp_ir_cache *caches;  /* in source order, bases' first */
	size_t ncaches;
	zsp_ir_limit cache_limit; /* value: the effective limit (the default when not set) */
	bool tmp_private;      /* the sandbox's /tmp is its own (the default) */
	zsp_loc tmp_loc;       /* where `tmp` says so; src NULL for the default */
	zsp_ir_limit tmp_limit;
} zsp_ir_policy;

typedef struct zsp_ir_request {
	const char *kind;      /* terminal, read, copy_path, mcp:server:tool, ... */
	const char **args;
	size_t nargs;
} zsp_ir_request;

typedef struct zsp_ir_expect {
	zsp_decision decision;
	zsp_ir_request req;
	zsp_loc loc;
} zsp_ir_expect;

typedef struct zsp_ir_define {
	const char *name, *value;
	zsp_loc loc;
} zsp_ir_define;

typedef struct zsp_ir_test {
	const char *policy;
	zsp_loc loc;
	zsp_ir_define *defines;
	size_t ndefines;
	zsp_ir_expect *expects;
	size_t nexpects;
} zsp_ir_test;

typedef struct zsp_ir {
	const char *source;        /* the file named on the command line */
	const char **inputs;       /* every file read (it and its includes), canonical; a buffer's
				    * name is among them as given */
	size_t ninputs;
	zsp_ir_policy *policies;   /* sorted by name */
	size_t npolicies;
	zsp_ir_test *tests;        /* in source order */
	size_t ntests;
} zsp_ir;

const char *zsp_access_name(zsp_access a);
const char *zsp_limit_name(zsp_limit_kind k);
const char *zsp_net_mode_name(int mode);
const zsp_ir_policy *zsp_ir_find_policy(const zsp_ir *ir, const char *name);
/* The policy a caller means: the one named name, or (name NULL) the set's only one, else the
 * only one the file named on the command line defines itself (not an included file's: a base
 * it extends); NULL when there is no such policy or there are several (or none). The one rule
 * zspc, zsp-run and the session follow; runtime/cli.c says why to a person. */
const zsp_ir_policy *zsp_ir_pick_policy(const zsp_ir *ir, const char *name);

#endif
