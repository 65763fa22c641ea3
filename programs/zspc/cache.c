/* cache.c: `zspc cache list|clear`: the sandboxes' own state (caches, private /tmp) kept per
 * policy and workspace in zsp's state directory (runtime/sandbox.h). State errors exit 74. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/textesc.h"
#include "programs/zspc/zspc.h"
#include "runtime/sandbox.h"
#include "runtime/store.h"

static const char cache_usage[] =
	"usage: zspc cache list [--state-dir DIR]\n"
	"       zspc cache clear [--workspace DIR] [--policy NAME] [--state-dir DIR]\n"
	"       zspc cache clear --key KEY [--state-dir DIR]\n"
	"       zspc cache clear --all [--state-dir DIR]\n"
	"\n"
	"  list shows each sandbox's caches and private /tmp: its key, policy, workspace, size and\n"
	"  when a run last used it. clear removes them: those of the workspace (default: the\n"
	"  current directory), of one policy there with --policy, one by its key, or --all.\n"
	"  A sandbox a run is using is not cleared.\n"
	"  --state-dir DIR    zsp's state directory (default: $XDG_STATE_HOME/zsp, else\n"
	"                     ~/.local/state/zsp)\n"
	"\n"
	"exit: 0 ok, 64 usage, 70 internal error, 74 state error (one in use, or unusable)\n";

static int cache_usage_error(const char *what)
{
	fprintf(stderr, "zspc: %s\nTry 'zspc cache --help'.\n", what);
	return ZSP_EUSAGE;
}

struct cache_opts {
	const char *state_dir, *workspace, *policy, *key;
	bool all;
};

static void print_info(const zsp_sandbox_info *in)
{
	char total[32], when[32] = "never";
	zsp_cli_bytes(total, sizeof(total), in->total);
	struct tm tm;
	if (in->used && localtime_r(&in->used, &tm))
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	printf("%s  %s  %s  used %s%s\n", in->key, in->policy ? in->policy : "?", total, when,
	       in->in_use ? "  (in use)" : "");
	printf("  workspace %s\n", in->workspace ? in->workspace : "?");
	if (in->problem)
		printf("  unusable: %s\n", in->problem);
	for (size_t k = 0; k < in->nparts; k++) {
		char b[32];
		zsp_cli_bytes(b, sizeof(b), in->bytes[k]);
		printf("  %-20s %s\n", in->parts[k], b);
	}
}

static int list(const struct cache_opts *o, const char *state)
{
	zsp_sandbox_info *v;
	size_t n;
	char err[PATH_MAX + 512];
	int rc = zsp_sandbox_list(state, &v, &n, err, sizeof(err));
	if (rc != ZSP_OK) {
		fprintf(stderr, "zspc: %s\n", err);
		return rc;
	}
	(void)o;
	for (size_t i = 0; i < n; i++)
		print_info(&v[i]);
	if (!n)
		printf("no sandbox has caches in %s\n", state);
	zsp_sandbox_list_free(v, n);
	return fflush(stdout) == 0 ? ZSP_OK : ZSP_EIO;
}

static int clear_one(const char *state, const zsp_sandbox_info *in, const char *key)
{
	char err[PATH_MAX + 512], total[32] = "";
	if (in)
		zsp_cli_bytes(total, sizeof(total), in->total);
	int rc = zsp_sandbox_clear(state, key, NULL, err, sizeof(err));
	if (rc != ZSP_OK) {
		fprintf(stderr, "zspc: %s\n", err);
		return rc;
	}
	if (in)
		printf("cleared %s (policy %s, workspace %s): %s\n", key, in->policy ? in->policy : "?",
		       in->workspace ? in->workspace : "?", total);
	else
		printf("cleared %s\n", key);
	return ZSP_OK;
}

static int clear(const struct cache_opts *o, const char *state)
{
	char ws[PATH_MAX];
	char *escaped = NULL;
	if (!o->all && !o->key) {
		const char *dir = o->workspace;
		zsp_builtin_params b;
		if (!dir) {
			zsp_cli_builtins(&b, NULL, NULL);   /* the default zsp-run takes: the repository's top */
			dir = zsp_builtin_params_get(&b, "WORKSPACE");
		}
		if (!dir || !realpath(dir, ws)) {
			fprintf(stderr, "zspc: the workspace %s: %s\n", dir ? dir : "(none)", strerror(errno));
			return ZSP_EUSAGE;
		}
		if (!(escaped = zsp_text_escape(ws)))
			zsp_die_oom();
	}
	zsp_sandbox_info *v;
	size_t n;
	char err[PATH_MAX + 512];
	int rc = zsp_sandbox_list(state, &v, &n, err, sizeof(err));
	if (rc != ZSP_OK) {
		fprintf(stderr, "zspc: %s\n", err);
		free(escaped);
		return rc;
	}
	/* a policy and a workspace name one sandbox, even one whose meta is unreadable */
	char want[ZSP_SANDBOX_KEY_LEN + 1] = "";
	if (o->key)
		snprintf(want, sizeof(want), "%s", o->key);
	else if (o->policy && escaped)
		zsp_sandbox_key(o->policy, ws, want);
	size_t cleared = 0;
	int worst = ZSP_OK;
	for (size_t i = 0; i < n; i++) {
		const zsp_sandbox_info *in = &v[i];
		bool match = o->all || (want[0] ? strcmp(in->key, want) == 0
						: in->workspace && strcmp(in->workspace, escaped) == 0);
		if (!match)
			continue;
		int r = clear_one(state, in, in->key);
		if (r == ZSP_OK)
			cleared++;
		else if (worst == ZSP_OK)
			worst = r;
	}
	if (!cleared && worst == ZSP_OK) {
		if (o->key && strlen(o->key) != ZSP_SANDBOX_KEY_LEN)
			worst = cache_usage_error("--key takes a sandbox's key: 16 hex digits, as zspc cache list shows");
		else
			printf("nothing to clear: no sandbox %s%s%s%s in %s\n", o->all ? "at all" : "of ",
			       o->all ? "" : o->key ? o->key : ws, o->policy ? " for policy " : "",
			       o->policy ? o->policy : "", state);
	}
	zsp_sandbox_list_free(v, n);
	free(escaped);
	if (fflush(stdout) != 0 && worst == ZSP_OK)
		worst = ZSP_EIO;
	return worst;
}

int zspc_cache_main(int argc, char **argv)
{
	enum { OPT_STATE_DIR = 256, OPT_WORKSPACE, OPT_POLICY, OPT_KEY, OPT_ALL };
	static const struct option longopts[] = {
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "workspace", required_argument, NULL, OPT_WORKSPACE },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "key", required_argument, NULL, OPT_KEY },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(cache_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? ZSP_EUSAGE : ZSP_OK;
	}
	const char *verb = argv[1];
	bool is_list = strcmp(verb, "list") == 0;
	if (!is_list && strcmp(verb, "clear") != 0)
		return cache_usage_error("zspc cache takes list or clear");
	struct cache_opts o = { 0 };
	int opt;
	optind = 2;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (opt) {
		case OPT_STATE_DIR:
			o.state_dir = optarg;
			break;
		case OPT_WORKSPACE:
			o.workspace = optarg;
			break;
		case OPT_POLICY:
			o.policy = optarg;
			break;
		case OPT_KEY:
			o.key = optarg;
			break;
		case OPT_ALL:
			o.all = true;
			break;
		case 'h':
			fputs(cache_usage, stdout);
			return ZSP_OK;
		default:
			return cache_usage_error("unknown option or missing argument");
		}
	}
	if (optind != argc)
		return cache_usage_error("unexpected argument");
	if (is_list && (o.workspace || o.policy || o.key || o.all))
		return cache_usage_error("zspc cache list takes only --state-dir");
	if ((o.all && (o.key || o.workspace || o.policy)) || (o.key && (o.workspace || o.policy)))
		return cache_usage_error("--all, --key and --workspace/--policy each choose what to clear: give one");
	char *state = zsp_state_dir(o.state_dir);
	if (!state) {
		fprintf(stderr, "zspc: no state directory: set XDG_STATE_HOME or HOME to an absolute path, or "
				"give --state-dir\n");
		return ZSP_EUSAGE;
	}
	int rc = is_list ? list(&o, state) : clear(&o, state);
	free(state);
	return rc;
}
