/* grant.c: `zspc grant add|list|revoke|end-thread|gc` and `zspc audit`: the grant store
 * and the audit trail (runtime/store.h) from the command line. Store errors exit 74. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compiler/oracle.h"
#include "compiler/textesc.h"
#include "programs/zspc/zspc.h"
#include "runtime/decide.h"
#include "runtime/store.h"

static const char grant_usage[] =
	"usage: zspc grant add --tool TOOL (--exact ARG | --exact-escaped TEXT | --prefix REGEX\n"
	"                                   | --path DIR | --host HOST)\n"
	"                      (--allow | --deny)\n"
	"                      (--once [--thread ID] | --thread ID | --project DIR | --global)\n"
	"                      [--policy NAME] [--expires DURATION|TIME] [STORE]\n"
	"       zspc grant list [--format json] [STORE]\n"
	"       zspc grant revoke ID [STORE]\n"
	"       zspc grant end-thread ID [STORE]\n"
	"       zspc grant gc [STORE]\n"
	"       zspc audit [--since DURATION|TIME] [--format json] [STORE]\n"
	"\n"
	"  STORE is --state-dir DIR (grants.db: default $XDG_STATE_HOME/zsp, else\n"
	"  ~/.local/state/zsp) and --runtime-dir DIR (threads.db: default $XDG_RUNTIME_DIR/zsp).\n"
	"  DURATION is N followed by s, m, h, d or w (from now; for --since: ago);\n"
	"  TIME is @UNIXSECONDS, YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][Z] (UTC).\n"
	"  --exact-escaped takes the argument with \\\\ \\n \\t \\r \\xHH \\u{H...} escapes,\n"
	"  as zsp-run shows a command that holds control characters.\n"
	"\n"
	"exit: 0 ok, 1 no such grant (revoke), 64 usage, 70 internal error, 74 store error\n";

static int grant_usage_error(const char *fmt, const char *arg) __attribute__((format(printf, 1, 0)));
static int grant_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "zspc: ");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	fprintf(stderr, fmt, arg);
#pragma GCC diagnostic pop
	fprintf(stderr, "\nTry 'zspc grant --help'.\n");
	return ZSP_EUSAGE;
}

static int store_open(const char *state_dir, const char *runtime_dir, zsp_store **out)
{
	zsp_store_where where = { state_dir, runtime_dir, false };
	char err[512];
	if (zsp_store_open(&where, out, err, sizeof(err)) != ZSP_OK) {
		fprintf(stderr, "zspc: grant store: %s\n", err);
		return ZSP_EIO;
	}
	return ZSP_OK;
}

/* ---- times ------------------------------------------------------------------------------ */

static int parse_duration(const char *s, int64_t *secs)
{
	char *end;
	errno = 0;
	long long n = strtoll(s, &end, 10);
	if (end == s || errno || n < 0 || !*end || end[1])
		return -1;
	int64_t unit;
	switch (*end) {
	case 's': unit = 1; break;
	case 'm': unit = 60; break;
	case 'h': unit = 3600; break;
	case 'd': unit = 86400; break;
	case 'w': unit = 7 * 86400; break;
	default: return -1;
	}
	if (n > INT64_MAX / unit / 2)
		return -1;
	*secs = (int64_t)n * unit;
	return 0;
}

int zspc_parse_time(const char *s, int direction, int64_t now, int64_t *out)
{
	int64_t secs;
	if (isdigit((unsigned char)s[0]) && parse_duration(s, &secs) == 0) {
		*out = now + direction * secs;
		return 0;
	}
	if (s[0] == '@') {
		char *end;
		errno = 0;
		long long n = strtoll(s + 1, &end, 10);
		if (end == s + 1 || *end || errno || n < 0)
			return -1;
		*out = n;
		return 0;
	}
	struct tm tm = { 0 };
	const char *rest = strptime(s, "%Y-%m-%d", &tm);
	if (!rest)
		return -1;
	if (*rest == 'T' || *rest == ' ') {
		const char *r = strptime(rest + 1, "%H:%M:%S", &tm);
		if (!r)
			r = strptime(rest + 1, "%H:%M", &tm);
		rest = r;
		if (rest && *rest == 'Z')
			rest++;
	}
	if (!rest || *rest)
		return -1;
	time_t t = timegm(&tm);
	if (t == (time_t)-1)
		return -1;
	*out = (int64_t)t;
	return 0;
}

static const char *utc(char buf[32], int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) || !strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, 32, "@%" PRId64, t);
	return buf;
}

/* ---- names ------------------------------------------------------------------------------ */

static const char *const scope_names[] = { "once", "thread", "project", "global" };
static const char *const match_names[] = { "exact", "prefix", "path", "host" };

static const char *answer_name(int a)
{
	return a == ZSP_ANSWER_ALLOW ? "allow" : a == ZSP_ANSWER_DENY ? "deny" : "ask";
}

/* ---- the subcommands -------------------------------------------------------------------- */

enum {
	OPT_STATE_DIR = 256, OPT_RUNTIME_DIR, OPT_TOOL, OPT_EXACT, OPT_EXACT_ESCAPED, OPT_PREFIX, OPT_PATH,
	OPT_HOST,
	OPT_ALLOW, OPT_DENY, OPT_ONCE, OPT_THREAD, OPT_PROJECT, OPT_GLOBAL, OPT_POLICY, OPT_EXPIRES,
	OPT_FORMAT, OPT_SINCE, OPT_HELP,
};

static const struct option grant_opts[] = {
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "runtime-dir", required_argument, NULL, OPT_RUNTIME_DIR },
	{ "tool", required_argument, NULL, OPT_TOOL },
	{ "exact", required_argument, NULL, OPT_EXACT },
	{ "exact-escaped", required_argument, NULL, OPT_EXACT_ESCAPED },
	{ "prefix", required_argument, NULL, OPT_PREFIX },
	{ "path", required_argument, NULL, OPT_PATH },
	{ "host", required_argument, NULL, OPT_HOST },
	{ "allow", no_argument, NULL, OPT_ALLOW },
	{ "deny", no_argument, NULL, OPT_DENY },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "thread", required_argument, NULL, OPT_THREAD },
	{ "project", required_argument, NULL, OPT_PROJECT },
	{ "global", no_argument, NULL, OPT_GLOBAL },
	{ "policy", required_argument, NULL, OPT_POLICY },
	{ "expires", required_argument, NULL, OPT_EXPIRES },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "since", required_argument, NULL, OPT_SINCE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

struct grant_cli {
	const char *state_dir, *runtime_dir;
	zsp_grant g;
	bool have_match, have_decision, once, global, json, help;
	bool escaped;            /* --exact-escaped: the pattern is zsp_text_escape'd */
	const char *expires, *since;
	unsigned given;          /* OPT_* bits seen, for "goes with" checks */
};

#define SEEN(o) (1u << ((o) - OPT_STATE_DIR))

static int parse_opts(int argc, char **argv, struct grant_cli *c)
{
	int opt;
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "", grant_opts, NULL)) != -1) {
		if (opt >= OPT_STATE_DIR && opt <= OPT_HELP) {
			if (c->given & SEEN(opt) && opt != OPT_HELP)
				return grant_usage_error("%s given twice", argv[optind - 1]);
			c->given |= SEEN(opt);
		}
		switch (opt) {
		case OPT_STATE_DIR:
			c->state_dir = optarg;
			break;
		case OPT_RUNTIME_DIR:
			c->runtime_dir = optarg;
			break;
		case OPT_TOOL:
			if (!*optarg)
				return grant_usage_error("%s", "--tool needs a tool name (terminal, edit_file, fetch, ...)");
			c->g.tool = optarg;
			break;
		case OPT_EXACT:
		case OPT_EXACT_ESCAPED:
		case OPT_PREFIX:
		case OPT_PATH:
		case OPT_HOST:
			if (c->have_match)
				return grant_usage_error("%s", "give one of --exact, --exact-escaped, --prefix, --path and --host");
			c->have_match = true;
			c->g.match = opt == OPT_EXACT || opt == OPT_EXACT_ESCAPED ? ZSP_MATCH_EXACT
				   : opt == OPT_PREFIX ? ZSP_MATCH_PREFIX : opt == OPT_PATH ? ZSP_MATCH_PATH
				   : ZSP_MATCH_HOST;
			c->g.pattern = optarg;
			c->escaped = opt == OPT_EXACT_ESCAPED;
			break;
		case OPT_ALLOW:
		case OPT_DENY:
			if (c->have_decision)
				return grant_usage_error("%s", "give one of --allow and --deny");
			c->have_decision = true;
			c->g.decision = opt == OPT_ALLOW ? ZSP_ANSWER_ALLOW : ZSP_ANSWER_DENY;
			break;
		case OPT_ONCE:
			c->once = true;
			break;
		case OPT_THREAD:
			if (!*optarg)
				return grant_usage_error("%s", "--thread needs an ID");
			c->g.thread = optarg;
			break;
		case OPT_PROJECT:
			c->g.project = optarg;
			break;
		case OPT_GLOBAL:
			c->global = true;
			break;
		case OPT_POLICY:
			c->g.policy = optarg;
			break;
		case OPT_EXPIRES:
			c->expires = optarg;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "json") == 0)
				c->json = true;
			else if (strcmp(optarg, "text") != 0)
				return grant_usage_error("unknown --format `%s` (expected text or json)", optarg);
			break;
		case OPT_SINCE:
			c->since = optarg;
			break;
		case OPT_HELP:
			c->help = true;
			break;
		case '?':
			if (optopt)
				return grant_usage_error("option `%s` needs an argument", argv[optind - 1]);
			return grant_usage_error("unknown option `%s`", argv[optind - 1]);
		default:
			return grant_usage_error("%s", "bad option");
		}
	}
	return ZSP_OK;
}

/* Only the options in allowed (SEEN bits) may be given, besides the store's. */
static int only(const struct grant_cli *c, unsigned allowed, const char *what)
{
	unsigned extra = c->given & ~(allowed | SEEN(OPT_STATE_DIR) | SEEN(OPT_RUNTIME_DIR) | SEEN(OPT_HELP));
	for (int o = OPT_STATE_DIR; o <= OPT_HELP; o++)
		if (extra & SEEN(o))
			for (const struct option *p = grant_opts; p->name; p++)
				if (p->val == o) {
					fprintf(stderr, "zspc: --%s does not go with %s\nTry 'zspc grant --help'.\n",
						p->name, what);
					return ZSP_EUSAGE;
				}
	return ZSP_OK;
}

static int store_error(const char *err)
{
	fprintf(stderr, "zspc: grant store: %s\n", err);
	return ZSP_EIO;
}

static int grant_add(struct grant_cli *c)
{
	zsp_grant *g = &c->g;
	char project[PATH_MAX], path[PATH_MAX];
	if (!g->tool)
		return grant_usage_error("%s", "grant add needs --tool TOOL (terminal, edit_file, fetch, mcp:server:tool, ...)");
	if (!c->have_match)
		return grant_usage_error("%s", "grant add needs one of --exact ARG, --prefix REGEX, --path DIR and --host HOST");
	if (!c->have_decision)
		return grant_usage_error("%s", "grant add needs --allow or --deny");
	int scopes = c->once + c->global + (g->project != NULL) + (g->thread && !c->once);
	if (scopes != 1)
		return grant_usage_error("%s", "grant add needs exactly one scope: --once [--thread ID], --thread ID, "
					 "--project DIR or --global");
	g->scope = c->once ? ZSP_GRANT_ONCE : c->global ? ZSP_GRANT_GLOBAL : g->project ? ZSP_GRANT_PROJECT
		 : ZSP_GRANT_THREAD;
	if (g->project) {
		if (!realpath(g->project, project))
			return grant_usage_error("--project %s: not an existing directory", g->project);
		g->project = project;
	}
	if (g->match == ZSP_MATCH_PATH) {
		if (g->pattern[0] != '/')
			return grant_usage_error("--path %s: give an absolute directory", g->pattern);
		/* the canonical spelling when it exists: requests are judged after ~ and workspace */
		if (realpath(g->pattern, path))
			g->pattern = path;
	}
	if (g->match == ZSP_MATCH_EXACT && !*g->pattern)
		return grant_usage_error("%s", "--exact needs the argument as the request gives it");
	int64_t now = (int64_t)time(NULL);
	if (c->expires) {
		if (zspc_parse_time(c->expires, 1, now, &g->expires) != 0)
			return grant_usage_error("--expires %s: expected a duration (30m, 8h, 7d, 2w) or a time "
						 "(@UNIXSECONDS, YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS]Z)", c->expires);
		if (g->expires <= now)
			return grant_usage_error("--expires %s: that time has passed", c->expires);
	}
	g->who = zsp_decider_user();

	char *unescaped = NULL;
	if (c->escaped) {
		char why[160];
		if (zsp_text_unescape(g->pattern, &unescaped, why, sizeof(why)) != 0)
			return grant_usage_error("--exact-escaped: %s", why);
		g->pattern = unescaped;
	}

	zsp_store *s;
	int rc = store_open(c->state_dir, c->runtime_dir, &s);
	if (rc != ZSP_OK) {
		free(unescaped);
		return rc;
	}
	char err[512];
	int64_t id;
	if (zsp_store_add(s, g, &id, err, sizeof(err)) != ZSP_OK) {
		rc = store_error(err);
	} else {
		printf("%" PRId64 "\n", id);
		rc = fflush(stdout) == 0 ? ZSP_OK : ZSP_EIO;
	}
	zsp_store_close(s);
	free(unescaped);
	return rc;
}

/* Text output: what an agent wrote (commands, thread IDs) must not redraw the terminal of the
 * person reading the list; such text is shown escaped (textesc.h). */
static void put_shown(const char *prefix, const char *s)
{
	if (!s)
		return;
	char *e = zsp_text_escape(s);
	printf("%s%s", prefix, e ? e : "(out of memory)");
	free(e);
}

/* A pattern as "MATCH PATTERN": JSON-quoted; one that is not plain as `exact-escaped '...'`,
 * the escaped text quoted as `zspc grant add --exact-escaped` takes it. */
static void put_pattern(int match, const char *s)
{
	char *e = zsp_text_plain(s) ? NULL : zsp_text_escape(s);
	char *q = e ? zsp_shell_quote(e) : NULL;
	if (q) {
		printf("%s-escaped %s", match_names[match], q);
	} else {
		printf("%s ", match_names[match]);
		zsp_json_string(stdout, s);
	}
	free(q);
	free(e);
}

static int print_grant(void *ctx, const zsp_grant *g)
{
	const struct grant_cli *c = ctx;
	char t[32];
	if (c->json) {
		printf("{\"id\":%" PRId64 ",\"scope\":\"%s\",\"thread\":", g->id, scope_names[g->scope]);
		zsp_json_string(stdout, g->thread);
		fputs(",\"project\":", stdout);
		zsp_json_string(stdout, g->project);
		fputs(",\"tool\":", stdout);
		zsp_json_string(stdout, g->tool);
		printf(",\"match\":\"%s\",\"pattern\":", match_names[g->match]);
		zsp_json_string(stdout, g->pattern);
		printf(",\"decision\":\"%s\",\"policy\":", answer_name(g->decision));
		zsp_json_string(stdout, g->policy);
		fputs(",\"who\":", stdout);
		zsp_json_string(stdout, g->who);
		printf(",\"created\":%" PRId64 ",\"expires\":", g->created);
		if (g->expires)
			printf("%" PRId64 "}\n", g->expires);
		else
			fputs("null}\n", stdout);
		return 0;
	}
	printf("%" PRId64 "\t%s %s ", g->id, answer_name(g->decision), g->tool);
	put_pattern(g->match, g->pattern);
	printf("\t%s", scope_names[g->scope]);
	put_shown(" thread=", g->thread);
	put_shown(" project=", g->project);
	put_shown(" policy=", g->policy);
	if (g->expires)
		printf(" expires=%s", utc(t, g->expires));
	putchar('\n');
	return 0;
}

static int print_audit(void *ctx, const zsp_audit_record *r)
{
	const struct grant_cli *c = ctx;
	char t[32];
	if (c->json) {
		printf("{\"time\":%" PRId64 ",\"request\":", r->time);
		zsp_json_string(stdout, r->request);
		printf(",\"decision\":\"%s\",\"reason\":", answer_name(r->decision));
		zsp_json_string(stdout, r->reason);
		fputs(",\"rule\":", stdout);
		zsp_json_string(stdout, r->rule);
		fputs(",\"policy\":", stdout);
		zsp_json_string(stdout, r->policy);
		fputs(",\"policy_hash\":", stdout);
		zsp_json_string(stdout, r->policy_hash);
		fputs(",\"thread\":", stdout);
		zsp_json_string(stdout, r->thread);
		fputs(",\"project\":", stdout);
		zsp_json_string(stdout, r->project);
		fputs(",\"who\":", stdout);
		zsp_json_string(stdout, r->who);
		fputs("}\n", stdout);
		return 0;
	}
	printf("%s %s ", utc(t, r->time), answer_name(r->decision));
	put_shown("", r->request);
	put_shown("\treason=", r->reason ? r->reason : "-");
	if (r->rule) {
		put_shown(" rule=\"", r->rule);
		putchar('"');
	}
	put_shown(" policy=", r->policy ? r->policy : "-");
	put_shown(" sha256=", r->policy_hash ? r->policy_hash : "-");
	put_shown(" thread=", r->thread);
	put_shown(" project=", r->project);
	put_shown(" who=", r->who);
	putchar('\n');
	return 0;
}

static int parse_id(const char *s, int64_t *id)
{
	char *end;
	errno = 0;
	long long n = strtoll(s, &end, 10);
	if (!isdigit((unsigned char)*s) || *end || errno || n <= 0)
		return -1;
	*id = n;
	return 0;
}

/* Runs one store action on an opened store; prints and returns the exit status. */
static int grant_action(const char *action, struct grant_cli *c, const char *arg)
{
	zsp_store *s;
	int rc = store_open(c->state_dir, c->runtime_dir, &s);
	if (rc != ZSP_OK)
		return rc;
	char err[512];
	int removed = 0;
	if (strcmp(action, "list") == 0) {
		if (zsp_store_list(s, print_grant, c, err, sizeof(err)) != ZSP_OK)
			rc = store_error(err);
	} else if (strcmp(action, "revoke") == 0) {
		int64_t id;
		parse_id(arg, &id);
		bool found;
		if (zsp_store_revoke(s, id, &found, err, sizeof(err)) != ZSP_OK)
			rc = store_error(err);
		else if (!found) {
			fprintf(stderr, "zspc: no grant %s\n", arg);
			rc = 1;
		}
	} else if (strcmp(action, "end-thread") == 0) {
		if (zsp_store_end_thread(s, arg, &removed, err, sizeof(err)) != ZSP_OK)
			rc = store_error(err);
		else
			printf("%d\n", removed);
	} else if (strcmp(action, "gc") == 0) {
		if (zsp_store_gc(s, (int64_t)time(NULL), &removed, err, sizeof(err)) != ZSP_OK)
			rc = store_error(err);
		else
			printf("%d\n", removed);
	} else {
		int64_t since = 0;
		if (c->since)
			zspc_parse_time(c->since, -1, (int64_t)time(NULL), &since);
		if (zsp_store_audit_list(s, since, print_audit, c, err, sizeof(err)) != ZSP_OK)
			rc = store_error(err);
	}
	zsp_store_close(s);
	if (fflush(stdout) != 0 && rc == ZSP_OK) {
		fprintf(stderr, "zspc: cannot write to standard output: %s\n", strerror(errno));
		rc = ZSP_EIO;
	}
	return rc;
}

int zspc_grant_main(int argc, char **argv)
{
	bool audit = strcmp(argv[0], "audit") == 0;
	const char *action = audit ? "audit" : argc > 1 ? argv[1] : NULL;
	if (!audit && (!action || strcmp(action, "--help") == 0)) {
		fputs(grant_usage, action ? stdout : stderr);
		return action ? ZSP_OK : ZSP_EUSAGE;
	}
	struct grant_cli c = { 0 };
	int rc = audit ? parse_opts(argc, argv, &c) : parse_opts(argc - 1, argv + 1, &c);
	if (rc != ZSP_OK)
		return rc;
	if (c.help) {
		fputs(grant_usage, stdout);
		return fflush(stdout) == 0 ? ZSP_OK : ZSP_EIO;
	}
	int first = audit ? optind : optind + 1;    /* operands after the options */
	int noperands = argc - first;
	const char *operand = noperands > 0 ? argv[first] : NULL;
	unsigned add_opts = SEEN(OPT_TOOL) | SEEN(OPT_EXACT) | SEEN(OPT_EXACT_ESCAPED) |
			    SEEN(OPT_PREFIX) | SEEN(OPT_PATH) |
			    SEEN(OPT_HOST) | SEEN(OPT_ALLOW) | SEEN(OPT_DENY) | SEEN(OPT_ONCE) |
			    SEEN(OPT_THREAD) | SEEN(OPT_PROJECT) | SEEN(OPT_GLOBAL) | SEEN(OPT_POLICY) |
			    SEEN(OPT_EXPIRES);
	if (strcmp(action, "add") == 0) {
		if ((rc = only(&c, add_opts, "grant add")) != ZSP_OK)
			return rc;
		if (noperands)
			return grant_usage_error("grant add takes no operand (`%s`): the argument goes after "
						 "--exact, --prefix, --path or --host", operand);
		return grant_add(&c);
	}
	if (strcmp(action, "list") == 0 || strcmp(action, "gc") == 0 || audit) {
		unsigned ok = audit ? SEEN(OPT_FORMAT) | SEEN(OPT_SINCE) : strcmp(action, "list") == 0 ? SEEN(OPT_FORMAT) : 0;
		const char *what = audit ? "audit" : strcmp(action, "list") == 0 ? "grant list" : "grant gc";
		if ((rc = only(&c, ok, what)) != ZSP_OK)
			return rc;
		if (noperands) {
			fprintf(stderr, "zspc: %s takes no operand (`%s`)\nTry 'zspc grant --help'.\n", what, operand);
			return ZSP_EUSAGE;
		}
		int64_t since;
		if (c.since && zspc_parse_time(c.since, -1, (int64_t)time(NULL), &since) != 0)
			return grant_usage_error("--since %s: expected a duration ago (30m, 8h, 7d, 2w) or a time "
						 "(@UNIXSECONDS, YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS]Z)", c.since);
		return grant_action(action, &c, NULL);
	}
	if (strcmp(action, "revoke") == 0 || strcmp(action, "end-thread") == 0) {
		bool revoke = action[0] == 'r';
		if ((rc = only(&c, 0, revoke ? "grant revoke" : "grant end-thread")) != ZSP_OK)
			return rc;
		if (noperands != 1)
			return grant_usage_error("%s", revoke ? "grant revoke takes one grant ID"
						      : "grant end-thread takes one thread ID");
		int64_t id;
		if (revoke && parse_id(operand, &id) != 0)
			return grant_usage_error("grant revoke %s: a grant ID is a positive number (see zspc grant list)",
						 operand);
		if (!*operand)
			return grant_usage_error("%s", "grant end-thread needs a thread ID");
		return grant_action(action, &c, operand);
	}
	return grant_usage_error("unknown grant command `%s` (expected add, list, revoke, end-thread or gc)",
				 action);
}
