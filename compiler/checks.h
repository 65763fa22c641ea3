/* checks.h: validators for the small value languages inside a policy: hosts, limits, env names,
 * syscall and errno names, tool names, request kinds, regexes. Each reports through diag. */
#ifndef ZSP_CHECKS_H
#define ZSP_CHECKS_H

#include "compiler/compile.h"

/* "host:port" -> lower-cased host and port (0 = any). allow_wild: `*` and `*.` forms. */
bool zsp_check_host(zsp_cc *cc, const zsp_ast_str *s, bool allow_wild, const char **host,
		    unsigned *port);
bool zsp_check_env_name(zsp_cc *cc, const zsp_ast_str *s, bool allow_glob);
/* The checks below that return int return an enum zsp_status (zsp.h): ZSP_OK, or ZSP_EPOLICY
 * after reporting through diag; the value found comes through the out-parameter (-1 on error). */
/* The limit statement st: *which gets the index of the limit it names, out its value. */
int zsp_check_limit(zsp_cc *cc, const zsp_ast_stmt *st, zsp_ir_limit *out, int *which);
/* *nr gets the syscall's number on the native architecture. */
int zsp_check_syscall(zsp_cc *cc, const zsp_ast_str *s, int *nr);
/* *value gets the errno named `name` ("EPERM"). */
int zsp_check_errno(zsp_cc *cc, const char *name, zsp_loc loc, int *value);
bool zsp_tool_known(const char *name);
bool zsp_tool_takes_paths(const char *name);
/* *nargs gets the arguments a request kind takes (0 for mcp:SERVER:TOOL). ZSP_OK, or
 * ZSP_EUSAGE for an unknown kind (nothing is reported: the caller says why). */
int zsp_request_arity(const char *kind, unsigned *nargs);
/* Warns (-Whost-control) when an allowed unix socket path is a session or system bus or a
 * docker socket: through either a command starts processes outside the sandbox. */
void zsp_check_unix_socket(zsp_cc *cc, const char *path, zsp_loc loc);
/* Validates a request's kind and arguments (test `expect`). */
bool zsp_check_request(zsp_cc *cc, const zsp_ast_stmt *st);
/* Compiles a tool regex with the engine the oracle uses; reports errors inside the literal. */
bool zsp_check_regex(zsp_cc *cc, const zsp_ast_matcher *m, bool case_sensitive);
/* Lints a terminal allow regex (which compiles): -Wunanchored when nothing anchors its end,
 * so it allows its command with any further arguments; -Wunsafe-flag when it matches a
 * command with an option that runs a program or writes a file (compiler/safe.h's probes). */
void zsp_lint_allow_regex(zsp_cc *cc, const zsp_ast_matcher *m, bool case_sensitive);

#endif
