/* checks.h: validators for the small value languages inside a policy: hosts, limits, env names,
 * syscall and errno names, tool names, request kinds, regexes. Each reports through diag. */
#ifndef ZSP_CHECKS_H
#define ZSP_CHECKS_H

#include "compiler/compile.h"

/* "host:port" -> lower-cased host and port (0 = any). allow_wild: `*` and `*.` forms. */
bool zsp_check_host(zsp_cc *cc, const zsp_ast_str *s, bool allow_wild, const char **host,
		    unsigned *port);
bool zsp_check_env_name(zsp_cc *cc, const zsp_ast_str *s, bool allow_glob);
/* The limit named `name`, or -1 after reporting. */
int zsp_check_limit(zsp_cc *cc, const zsp_ast_stmt *st, zsp_ir_limit *out);
/* Syscall number on the native architecture, or -1 after reporting. */
int zsp_check_syscall(zsp_cc *cc, const zsp_ast_str *s);
/* errno by name ("EPERM") or -1 after reporting. */
int zsp_check_errno(zsp_cc *cc, const char *name, zsp_loc loc);
bool zsp_tool_known(const char *name);
bool zsp_tool_takes_paths(const char *name);
/* Arguments a request kind takes (0 for mcp:SERVER:TOOL), -1 for an unknown kind. */
int zsp_request_arity(const char *kind);
/* Validates a request's kind and arguments (test `expect`). */
bool zsp_check_request(zsp_cc *cc, const zsp_ast_stmt *st);
/* Compiles a tool regex with the engine the oracle uses; reports errors inside the literal. */
bool zsp_check_regex(zsp_cc *cc, const zsp_ast_matcher *m, bool case_sensitive);

#endif
