/* table.c: the backends, one row each (backends/backend.h). zspc --emit NAME and --help read
 * this table; nothing else names a backend. */
#include "config.h"

#include <string.h>

#include "backends/backend.h"
#include "backends/linux.h"
#include "backends/sbpl.h"
#include "backends/wsl.h"

const zsp_backend zsp_backends[] = {
	{ "bwrap", "linux", "bubblewrap's options, one shell-quoted argument per line "
	  "(--format nul: NUL-separated, for bwrap --args FD)", false, false,
	  zsp_linux_backend_check, zsp_bwrap_backend_emit },
	{ "bpf", "linux", "the seccomp filter as a raw BPF program (bwrap --seccomp FD)", true, false,
	  zsp_linux_backend_check, zsp_bpf_backend_emit },
	{ "pfc", "linux", "the seccomp filter as libseccomp's readable pseudo-code", false, false,
	  zsp_linux_backend_check, zsp_pfc_backend_emit },
	{ "sbpl", "macos", "the Seatbelt profile (parameters stay (param \"NAME\") unless -D gives them)",
	  false, false, NULL, zsp_sbpl_backend_emit },
	{ "sandbox-exec", "macos", "the sandbox-exec command line running COMMAND", false, true, NULL,
	  zsp_sandbox_exec_backend_emit },
	{ "wsl", "windows", "the wsl.exe command line running COMMAND under zsp-run in a WSL2 "
	  "distribution (Windows paths in -D values translated)", false, true, zsp_wsl_backend_check,
	  zsp_wsl_backend_emit },
	{ NULL, NULL, NULL, false, false, NULL, NULL },
};

const zsp_backend *zsp_backend_find(const char *name)
{
	for (const zsp_backend *b = zsp_backends; b->name; b++)
		if (strcmp(b->name, name) == 0)
			return b;
	return NULL;
}
