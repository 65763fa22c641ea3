/* zspc_wsl.c: zspc --emit wsl (being built: issue "macOS and Windows"). */
#include "config.h"

#include "zspc.h"

int zspc_emit_wsl(const struct zspc_opts *o, const char *file)
{
	(void)file;
	return usage_error("--emit %s is not implemented in this version (ir, bwrap, bpf and pfc are)", o->emit);
}
