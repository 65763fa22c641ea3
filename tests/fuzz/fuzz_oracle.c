/* fuzz_oracle.c: a libFuzzer target for what an agent controls: the request text and the
 * terminal command. Each input is parsed as a request and, as a command, decided against a
 * policy with rules on every tool, through the public session API; and escaped as zsp-run
 * shows it (compiler/textesc.h). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/textesc.h"
#include "tests/fuzz/fuzz.h"
#include "compiler/zsp.h"

static const char policy[] =
	"zsp 1;\n"
	"policy \"fuzz\" {\n"
	"  sensitive \".vscode\";\n"
	"  fs { read \"/\"; write \"/tmp/ws\"; deny \"/tmp/ws/.env\", \"**/*.key\"; protect \".git\"; }\n"
	"  net { mode proxy; allow \"*.example.com:443\"; deny \"bad.example.com:*\"; }\n"
	"  tool \"terminal\" { default ask; allow /^(ls|cat|git\\s+status)\\b/; deny /^git\\s+push/;\n"
	"                    ask /curl/; allow /^(a+)+$/; allow safe; }\n"
	"  tool \"edit_file\" { default allow; deny path \"**/.env\"; ask path \"src/**\"; }\n"
	"  tool \"fetch\" { allow /^https:\\/\\/docs\\.rs\\//; }\n"
	"}\n"
	/* the same terminal rules with the substitutions judged (doc/oracle.md, step 2) */
	"policy \"judged\" extends \"fuzz\" {\n"
	"  tool \"terminal\" { substitutions judged; allow /^/; allow /^echo\\b/; }\n"
	"}\n";

static zsp_policy_set *set;
static zsp_session *session, *judged;

static void setup(void)
{
	zsp_compiler *c = zsp_compiler_new();
	if (!c || zsp_compile_buffer(c, "fuzz.zsp", policy, strlen(policy), &set) != ZSP_OK ||
	    zsp_session_new(set, "fuzz", "/tmp/ws", "/home/u", &session) != ZSP_OK ||
	    zsp_session_new(set, "judged", "/tmp/ws", "/home/u", &judged) != ZSP_OK)
		abort();
	zsp_compiler_free(c);
}

/* One decision: the answer must be one of the three (a deny when no decision was made, whatever
 * the variable held), the JSON a single line. */
static void ask_in(zsp_session *in, const char *request, int must_parse)
{
	int answer = ZSP_ANSWER_ALLOW;
	char *json = NULL;
	int rc = zsp_session_decide(in, request, 1, &answer, &json);
	if (rc == ZSP_OK) {
		if (answer != ZSP_ANSWER_ALLOW && answer != ZSP_ANSWER_DENY && answer != ZSP_ANSWER_ASK)
			abort();
	} else if (rc != ZSP_EUSAGE || must_parse || answer != ZSP_ANSWER_DENY) {
		abort();
	}
	if (!json || json[0] != '{' || strchr(json, '\n') != json + strlen(json) - 1)
		abort();
	free(json);
}

static void ask(const char *request, int must_parse)
{
	ask_in(session, request, must_parse);
}

/* Writes s as a request string argument: quotes and backslashes escaped, control characters
 * as \xHH (NUL and bytes >= 0x80 pass through or are dropped as the syntax requires). */
static char *quoted(const char *kind, const uint8_t *data, size_t size)
{
	char *out = malloc(strlen(kind) + 3 + size * 4 + 2);
	if (!out)
		abort();
	size_t n = (size_t)sprintf(out, "%s \"", kind);
	for (size_t i = 0; i < size; i++) {
		uint8_t c = data[i];
		if (c == '"' || c == '\\') {
			out[n++] = '\\';
			out[n++] = (char)c;
		} else if (c == 0) {
			continue;
		} else if (c < 0x20 || c == 0x7f) {
			n += (size_t)sprintf(out + n, "\\x%02x", c);
		} else {
			out[n++] = (char)c;
		}
	}
	out[n++] = '"';
	out[n] = '\0';
	return out;
}

/* What zsp-run shows of a command: the escape is plain (nothing in it can redraw a terminal)
 * and, when the text was not, reads back to exactly it; any text unescapes or is refused. */
static void textesc(const char *text)
{
	char *e = zsp_text_escape(text), *back = NULL, err[160];
	if (!e || !zsp_text_plain(e))
		abort();
	if (!zsp_text_plain(text) &&
	    (zsp_text_unescape(e, &back, err, sizeof(err)) != 0 || strcmp(back, text) != 0))
		abort();
	free(back);
	back = NULL;
	if (zsp_text_unescape(text, &back, err, sizeof(err)) == 0 ? !back : back != NULL)
		abort();
	free(back);
	free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!session)
		setup();
	if (size > 70000)
		return 0;
	/* the bytes as a request of any kind */
	char *raw = malloc(size + 1);
	if (!raw)
		abort();
	memcpy(raw, data, size);
	raw[size] = '\0';
	ask(raw, 0);
	textesc(raw);
	free(raw);
	/* the bytes as a terminal command, a path and a host */
	static const char *const kinds[] = { "terminal", "edit_file", "read", "write", "connect", "fetch" };
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		char *req = quoted(kinds[k], data, size);
		ask(req, strcmp(kinds[k], "connect") != 0);
		if (k == 0)
			ask_in(judged, req, 1);
		free(req);
	}
	return 0;
}
