/* cli.h: what the programs (zspc, zsp-run) share and the library must not do: die(), usage
 * errors, compiler options checked as they are read, output files written whole, the paths of
 * sibling programs. Linked into the programs only, never into libzsp. */
#ifndef ZSP_CLI_H
#define ZSP_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler/params.h"
#include "compiler/zsp.h"

/* The program's name in messages ("zspc"); set once by main. */
void zsp_cli_init(const char *prog);

/* "PROG: message" on stderr, then exit(status). */
__attribute__((noreturn, format(printf, 2, 3))) void zsp_die(int status, const char *fmt, ...);
/* Out of memory in a program: says so and exits ZSP_EINTERNAL. */
__attribute__((noreturn)) void zsp_die_oom(void);
/* "PROG: message" on stderr. */
__attribute__((format(printf, 1, 2))) void zsp_warn(const char *fmt, ...);
/* "PROG: message" and "Try 'PROG --help'." on stderr; returns ZSP_EUSAGE. */
__attribute__((format(printf, 1, 2))) int zsp_usage_error(const char *fmt, ...);

/* The compiler options of a command line (-I, -W, -D), each checked when it is read. */
typedef struct zsp_cli_compile {
	const char **includes, **warnings, **define_names, **define_values;
	size_t nincludes, nwarnings, ndefines;
	bool strict;             /* --strict: -Werror=unenforced */
} zsp_cli_compile;

/* Room for up to argc options of each kind; dies when out of memory. */
void zsp_cli_compile_init(zsp_cli_compile *o, int argc);
void zsp_cli_compile_free(zsp_cli_compile *o);
/* -D NAME=VALUE (arg is split in place), -W SPEC, -I DIR: ZSP_OK, or ZSP_EUSAGE after saying why. */
int zsp_cli_define(zsp_cli_compile *o, char *arg);
int zsp_cli_warning(zsp_cli_compile *o, const char *spec);
int zsp_cli_include(zsp_cli_compile *o, const char *dir);

/* A compiler with these options: warning specs in order (first the program's own `preset`,
 * NULL-terminated, then -W, then --strict), the built-in parameters (NULL: none) overridden by
 * every -D, the configured data directory (a test build: $ZSP_DATADIR). Diagnostics go to
 * stderr and the compilation's summary line is left to the run (zsp_cli_summary), so a run
 * that also lowers prints one. Dies when out of memory. */
zsp_compiler *zsp_cli_compiler(const zsp_cli_compile *o, const char *const *preset,
			       const zsp_builtin_params *builtins);
/* The one summary line of the run ("2 errors, 1 warning generated."). */
void zsp_cli_summary(zsp_compiler *c);

/* The built-in parameters of the user running the program: the passwd entry of the real uid,
 * the process environment and workspace (NULL: the default, the top of the user's git work tree
 * holding the current directory, else that directory: runtime/workspace.h; o, the command
 * line's -D HOME and -D WORKSPACE, may be NULL). */
void zsp_cli_builtins(zsp_builtin_params *b, const zsp_cli_compile *o, const char *workspace);
/* A warning when $HOME is not the home `~` means (b's HOME, the passwd entry's), unless -D HOME
 * chose one: someone who set HOME may expect `~` to follow it. */
void zsp_cli_home_warning(const zsp_cli_compile *o, const zsp_builtin_params *b);

/* The value parameter NAME takes in this run: the last -D NAME=..., else the built-in value. */
const char *zsp_cli_param(const zsp_cli_compile *o, const zsp_builtin_params *b, const char *name);

struct zsp_ir;
struct zsp_ir_policy;
/* The policy named name, or the set's only one (zsp_ir_pick_policy); NULL after saying why on
 * stderr, with the names to choose from. */
const struct zsp_ir_policy *zsp_cli_pick_policy(const struct zsp_ir *ir, const char *name);

/* Writes data to out (NULL or "-": stdout). A regular file is replaced atomically (a temporary
 * file beside it, fsync'd, renamed over it; a symlink's target gets the contents), a device or
 * FIFO is written in place. ZSP_OK, ZSP_ECANTCREAT or ZSP_EIO, after saying why. */
int zsp_cli_write_output(const char *out, const char *data, size_t len);

/* A size for people: "512 B", "12 KiB", "4.2 GiB", "unlimited" (UINT64_MAX). */
void zsp_cli_bytes(char *buf, size_t size, uint64_t bytes);

/* A program installed beside the running one (a build tree keeps them together), else fallback.
 * Static storage. */
const char *zsp_cli_program_path(const char *name, const char *fallback);

/* $name (ZSP_BWRAP, ZSP_PROBE, ZSP_DATADIR) when set and not empty, in a build configured with
 * --enable-test-overrides; else NULL. Whoever controls an agent host's environment must not
 * choose the programs zsp-run runs or the files a policy includes. */
const char *zsp_cli_test_override(const char *name);
/* What --version prints after the version: "" in a normal build, a warning in a test build. */
const char *zsp_cli_build_note(void);

#endif
