/* wsl.h: the Windows lowering: one wsl.exe command line that runs zsp-run, hence the Linux
 * sandbox of the same policy, inside a WSL2 distribution. Path translation and Windows quoting. */
#ifndef ZSP_WSL_H
#define ZSP_WSL_H

#include <stdbool.h>
#include <stddef.h>

#include "backends/backend.h"
#include "lang/arena.h"
#include "lang/diag.h"

/* Where the distribution's zsp package installs the shim. */
#define ZSP_WSL_RUN "/usr/bin/zsp-run"

/* The Linux path, inside a WSL distribution, of a Windows path (doc/wsl.md has the table):
 * `C:\a\b` and `C:/a/b` -> /mnt/c/a/b, `\\?\C:\a` -> /mnt/c/a, `\\wsl$\D\a` and
 * `\\wsl.localhost\D\a` -> /a when D is distribution (any D when distribution is NULL); an
 * absolute Linux path is kept as written. `.` and `..` are resolved by name as Windows does
 * (refused in `\\?\` paths, which Windows takes literally). Refused: other UNC and device
 * paths, drive-relative (`C:x`), rooted (`\x`) and relative paths, names ending with a dot or a
 * space (Windows strips those, Linux does not), `:` in a name (a stream).
 * Returns an enum zsp_status: ZSP_OK and a malloc'd *out; else *out is NULL and the reason is in
 * why (NUL-terminated, cut to whylen): ZSP_EUSAGE for a path that cannot be translated,
 * ZSP_EINTERNAL on out-of-memory. */
int zsp_wsl_path(const char *path, const char *distribution, char **out, char *why, size_t whylen);

/* A -D value taken for a Windows path, to be translated: a drive letter and `:`, or a leading
 * backslash (`\\server\share`, `\\?\...`, and `\x`, which is refused rather than passed on). */
bool zsp_wsl_is_windows_path(const char *s);

/* The distribution a `\\wsl$\D\...` or `\\wsl.localhost\D\...` path (also behind `\\?\UNC\`)
 * names: a pointer to D inside path and its length; NULL for any other path. */
const char *zsp_wsl_path_distribution(const char *path, size_t *len);

/* One argument quoted for CreateProcess, as CommandLineToArgvW and the C runtime split a command
 * line: as is unless empty or holding a space, tab or `"`; else in quotes, with N backslashes
 * before a `"` doubled plus one (2N+1) and N backslashes before the closing quote doubled.
 * malloc'd; NULL when out of memory. */
char *zsp_wsl_quote(const char *arg);

/* Everything the wsl.exe command line says. zsp_wsl_translate turns its paths into Linux ones in
 * place (arrays and strings then live in its arena); zsp_wsl_command_line formats it. */
typedef struct zsp_wsl_invocation {
	const char *distribution;      /* --distribution; NULL: wsl.exe's default distribution */
	const char *user;              /* --user; NULL: the distribution's default user */
	const char *cd;                /* --cd: a Windows or absolute Linux path or `~`; NULL */
	const char *policy_file;       /* zsp-run -p: a Windows or absolute Linux path */
	const char *policy_name;       /* zsp-run --policy; NULL */
	const char **define_names, **define_values;   /* zsp-run -D NAME=VALUE */
	size_t ndefines;
	const char **includes;         /* zsp-run -I DIR: Windows or absolute Linux paths */
	size_t nincludes;
	const char **warnings;         /* zsp-run -W, as given to zspc */
	size_t nwarnings;
	bool strict;                   /* zsp-run --strict */
	const char *const *command;    /* what runs in the sandbox, passed as written */
	size_t ncommand;
} zsp_wsl_invocation;

/* Translates the policy file, the -I directories, --cd and every -D value that is a Windows path
 * (zsp_wsl_is_windows_path) to Linux. A `\\wsl$` path names the distribution: without
 * --distribution, the first one named becomes it, and every path must then be in that one.
 * Without --cd, a -D WORKSPACE (the last one) gives it: the command starts in its workspace.
 * Reports each path that cannot be translated on d, naming it. Returns an enum zsp_status:
 * ZSP_OK; ZSP_EPOLICY after errors were reported (the policy cannot be lowered for this
 * invocation); ZSP_EINTERNAL on out-of-memory (also reported). */
int zsp_wsl_translate(zsp_wsl_invocation *inv, zsp_arena *a, zsp_diag *d);

/* `wsl.exe [--distribution D] [--user U] [--cd DIR] --exec /usr/bin/zsp-run [--policy NAME]
 * [--strict] [-WSPEC]... [-I DIR]... -p FILE [-D NAME=VALUE]... -- COMMAND [ARG]...` quoted
 * argument by argument with zsp_wsl_quote, ending with a newline. For an invocation that
 * zsp_wsl_translate accepted. malloc'd; NULL on out of memory. */
char *zsp_wsl_command_line(const zsp_wsl_invocation *inv);

/* The Windows row of the backend table (backends/table.c): in->wsl, translated and formatted.
 * WSL runs the Linux sandbox, so its check is the Linux row's, found through the table. */
void zsp_wsl_backend_check(const zsp_backend_input *in, zsp_diag *d);
int zsp_wsl_backend_emit(const zsp_backend_input *in, zsp_diag *d, zsp_buf *out);

#endif
