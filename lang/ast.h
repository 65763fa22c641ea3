/* ast.h: the syntax tree the parser builds, one per source file, arena-allocated.
 * Blocks (fs, net, process) are flattened into their policy's statement list; nothing here is checked yet. */
#ifndef ZSP_AST_H
#define ZSP_AST_H

#include <stdbool.h>
#include <stdint.h>

#include "lang/source.h"

typedef struct zsp_ast_str {
	struct zsp_ast_str *next;
	const char *s;     /* value, escapes applied */
	size_t len;        /* bytes of s */
	zsp_loc loc;       /* the whole literal, quotes included */
	bool raw;          /* no escapes: s[i] is at source offset loc.begin + 1 + i */
} zsp_ast_str;

typedef enum zsp_decision {
	ZSP_DECISION_NONE = 0,
	ZSP_ALLOW,
	ZSP_ASK,
	ZSP_DENY,
} zsp_decision;

typedef enum zsp_ast_kind {
	ZSP_ST_PARAM,        /* name [= value] */
	ZSP_ST_DEFAULT,      /* decision */
	ZSP_ST_FS,           /* op = read|write|deny|protect, args */
	ZSP_ST_NET_MODE,     /* op = mode */
	ZSP_ST_NET_HOST,     /* decision allow|deny, args "host:port" */
	ZSP_ST_NET_UNIX,     /* decision allow|deny, args paths */
	ZSP_ST_ENV_CLEAR,
	ZSP_ST_ENV_KEEP,     /* args */
	ZSP_ST_ENV_UNSET,    /* args */
	ZSP_ST_ENV_SET,      /* args = name, value = value */
	ZSP_ST_LIMIT,        /* name, quantity */
	ZSP_ST_SYSCALLS,     /* decision allow|deny, args, errno/kill */
	ZSP_ST_TOOL,         /* args = tool name, body */
	ZSP_ST_SENSITIVE,    /* args = names under which path tools ask instead of allowing */
	ZSP_ST_TOOL_DEFAULT, /* decision */
	ZSP_ST_TOOL_CASE,    /* op = 1 sensitive, 0 insensitive */
	ZSP_ST_TOOL_SUBSTITUTIONS, /* op = 1 judged, 0 denied (terminal only) */
	ZSP_ST_TOOL_RULE,    /* decision, matchers */
	ZSP_ST_DEFINE,       /* name = value */
	ZSP_ST_EXPECT,       /* decision, name = request kind, args */
	ZSP_ST_CACHE,        /* one tool's cache: name (a known tool) or value (a path) */
	ZSP_ST_CACHE_LIMIT,  /* quantity */
	ZSP_ST_TMP,          /* op = ZSP_TMP_PRIVATE | ZSP_TMP_HOST */
	ZSP_ST_TMP_LIMIT,    /* quantity */
} zsp_ast_kind;

enum zsp_fs_op { ZSP_FS_READ = 1, ZSP_FS_WRITE, ZSP_FS_DENY, ZSP_FS_PROTECT };
enum zsp_net_mode { ZSP_NET_NONE = 0, ZSP_NET_FULL, ZSP_NET_PROXY };
enum zsp_tmp_mode { ZSP_TMP_UNSET = 0, ZSP_TMP_PRIVATE, ZSP_TMP_HOST };

typedef enum zsp_unit {
	ZSP_UNIT_NONE,   /* a plain count */
	ZSP_UNIT_TIME,   /* value in seconds */
	ZSP_UNIT_SIZE,   /* value in bytes */
	ZSP_UNIT_UNLIMITED,
} zsp_unit;

typedef struct zsp_ast_quantity {
	uint64_t value;
	zsp_unit unit;
	bool overflow;   /* the literal does not fit in 64 bits */
	zsp_loc loc;
} zsp_ast_quantity;

typedef struct zsp_ast_matcher {
	struct zsp_ast_matcher *next;
	bool is_path;        /* path "glob" rather than /regex/ */
	bool is_safe;        /* `safe`: the known-safe commands (compiler/safe.h) */
	const char *text;    /* regex body (\/ unescaped) or glob */
	char flag;           /* regex flag: 0, 'i' or 'c' */
	zsp_loc loc;
	zsp_ast_str *str;    /* for path matchers, the string literal */
} zsp_ast_matcher;

typedef struct zsp_ast_stmt {
	struct zsp_ast_stmt *next;
	zsp_ast_kind kind;
	zsp_loc loc;           /* the whole statement */
	int op;                /* fs op, net mode, case flag */
	zsp_decision decision;
	const char *name;      /* param, limit, define or request kind */
	zsp_loc name_loc;
	zsp_ast_str *args;     /* list */
	zsp_ast_str *value;
	zsp_ast_quantity qty;
	int err;               /* syscalls: errno, 0 = default */
	bool kill;
	zsp_loc err_loc;
	zsp_ast_matcher *matchers;
	struct zsp_ast_stmt *body; /* tool statements */
} zsp_ast_stmt;

typedef struct zsp_ast_policy {
	struct zsp_ast_policy *next;
	zsp_ast_str *name;
	zsp_ast_str *extends;  /* list */
	zsp_ast_stmt *stmts;
	zsp_loc loc;           /* the `policy "name"` head */
} zsp_ast_policy;

typedef struct zsp_ast_test {
	struct zsp_ast_test *next;
	zsp_ast_str *name;
	zsp_ast_stmt *stmts;
	zsp_loc loc;
} zsp_ast_test;

typedef struct zsp_ast_include {
	struct zsp_ast_include *next;
	zsp_ast_str *name;
	zsp_loc loc;
} zsp_ast_include;

typedef struct zsp_ast_file {
	const zsp_source *src;
	bool has_version;
	uint64_t version;
	zsp_loc version_loc;
	zsp_ast_include *includes;
	zsp_ast_policy *policies;
	zsp_ast_test *tests;
} zsp_ast_file;

struct zsp_diag;
/* Parses one source. Syntax errors go to diag; the returned tree holds what could be recovered
 * (NULL only on out-of-memory). The caller checks diag->errors. */
zsp_ast_file *zsp_parse(zsp_arena *a, const zsp_source *src, struct zsp_diag *diag);

const char *zsp_decision_name(zsp_decision d);

#endif
