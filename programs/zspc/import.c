/* import.c: zspc --import zed: Zed's agent.tool_permissions settings turned into a .zsp policy
 * (compiler/import_zed.c does the work; doc/import-zed.md says how it maps). */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/import_zed.h"
#include "programs/zspc/zspc.h"

int zspc_import(const struct zspc_opts *opts, const char *file)
{
	FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
	if (!f) {
		zsp_warn("cannot read `%s`: %s", file, strerror(errno));
		return ZSP_ENOINPUT;
	}
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap);
	int rc = ZSP_OK;
	while (buf) {
		if (len == cap) {
			/* room for one byte past the limit tells "exactly 16 MiB" from "more" */
			if (cap > (16u << 20)) {
				zsp_warn("`%s` is larger than 16 MiB", file);
				rc = ZSP_ENOINPUT;
				break;
			}
			size_t ncap = cap * 2 > (16u << 20) ? (16u << 20) + 1 : cap * 2;
			char *nb = realloc(buf, ncap);
			if (!nb)
				break;
			buf = nb;
			cap = ncap;
		}
		size_t r = fread(buf + len, 1, cap - len, f);
		len += r;
		if (r == 0)
			break;
	}
	if (!buf) {
		rc = ZSP_EINTERNAL;
	} else if (ferror(f)) {
		zsp_warn("cannot read `%s`: %s", file, strerror(errno));
		rc = ZSP_ENOINPUT;
	}
	if (f != stdin)
		fclose(f);
	if (rc != ZSP_OK) {
		free(buf);
		return rc;
	}
	char *out = NULL, err[512] = "";
	rc = zsp_import_zed(buf, len, file, &out, err, sizeof(err));
	free(buf);
	if (rc == ZSP_EPOLICY) {
		/* err is "LINE:COL: message": print it the way every zspc diagnostic reads */
		const char *c1 = strchr(err, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2 && c2[1] == ' ')
			fprintf(stderr, "%s:%.*s: error:%s\n", file, (int)(c2 - err), err, c2 + 1);
		else
			fprintf(stderr, "%s: error: %s\n", file, err);
	}
	else if (rc != ZSP_OK)
		zsp_warn("out of memory");
	if (rc == ZSP_OK)
		rc = zsp_cli_write_output(opts->out, out, strlen(out));
	free(out);
	return rc;
}
