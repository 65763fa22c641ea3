/* verdict_json.c: a decision as one line of JSON, the form --format json, --batch and the
 * session API share (doc/oracle.md lists the keys). */
#include "config.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "compiler/oracle.h"
#include "compiler/zsp.h"
#include "lang/textesc_core.h"

void zsp_json_string(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	uint32_t cp;
	size_t n;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				fprintf(f, "\\u%04x", *p);
			} else if (*p < 0x80) {
				fputc(*p, f);
			} else if ((n = zsp_utf8_seq(p, &cp)) == 0) {
				fputs("\\ufffd", f);   /* not UTF-8: JSON cannot carry the byte */
			} else if (zsp_utf8_invisible(cp)) {
				fprintf(f, "\\u%04x", (unsigned)cp);   /* below U+10000 */
				p += n - 1;
			} else {
				fwrite(p, 1, n, f);
				p += n - 1;
			}
		}
	}
	fputc('"', f);
}

const char *zsp_loc_string(char *buf, size_t size, zsp_loc loc)
{
	if (!loc.src)
		return NULL;
	unsigned line, col;
	zsp_source_position(loc.src, loc.begin, &line, &col);
	snprintf(buf, size, "%s:%u:%u", loc.src->path, line, col);
	return buf;
}

int zsp_decision_exit(zsp_decision d)
{
	return d == ZSP_ALLOW ? 0 : d == ZSP_ASK ? 2 : 1;
}

int zsp_decision_answer(zsp_decision d)
{
	return d == ZSP_ALLOW ? ZSP_ANSWER_ALLOW : d == ZSP_ASK ? ZSP_ANSWER_ASK : ZSP_ANSWER_DENY;
}

zsp_decision zsp_answer_decision(int answer)
{
	return answer == ZSP_ANSWER_ALLOW ? ZSP_ALLOW : answer == ZSP_ANSWER_ASK ? ZSP_ASK : ZSP_DENY;
}

void zsp_verdict_json(FILE *f, const char *policy, const zsp_ir_request *req, const zsp_verdict *v,
		      bool explain, const zsp_verdict_extra *extra)
{
	char loc[PATH_MAX + 64];
	fputs("{\"decision\":", f);
	zsp_json_string(f, zsp_decision_name(v->decision));
	fprintf(f, ",\"exit\":%d,\"reason\":", zsp_decision_exit(v->decision));
	zsp_json_string(f, v->reason);
	fputs(",\"detail\":", f);
	zsp_json_string(f, v->detail);
	fputs(",\"rule\":", f);
	zsp_json_string(f, v->rule);
	fputs(",\"loc\":", f);
	zsp_json_string(f, zsp_loc_string(loc, sizeof(loc), v->loc));
	fputs(",\"policy\":", f);
	zsp_json_string(f, policy);
	fputs(",\"request\":{\"kind\":", f);
	zsp_json_string(f, req->kind);
	fputs(",\"args\":[", f);
	for (size_t i = 0; i < req->nargs; i++) {
		if (i)
			fputc(',', f);
		zsp_json_string(f, req->args[i]);
	}
	fputs("]},\"subcommands\":[", f);
	for (size_t i = 0; i < v->nsub; i++) {
		if (i)
			fputc(',', f);
		zsp_json_string(f, v->subcommands[i]);
	}
	fputc(']', f);
	if (v->shell) {
		fputs(",\"shell\":", f);
		zsp_json_string(f, v->shell);
	}
	if (explain) {
		fputs(",\"trace\":[", f);
		for (size_t i = 0; i < v->ntrace; i++) {
			if (i)
				fputc(',', f);
			zsp_json_string(f, v->trace[i]);
		}
		fputc(']', f);
	}
	if (extra && extra->grant)
		fprintf(f, ",\"grant\":%lld", extra->grant);
	if (extra && extra->store_error) {
		fputs(",\"store_error\":", f);
		zsp_json_string(f, extra->store_error);
	}
	if (extra && extra->audit_error) {
		fputs(",\"audit_error\":", f);
		zsp_json_string(f, extra->audit_error);
	}
	fputs("}\n", f);
}

