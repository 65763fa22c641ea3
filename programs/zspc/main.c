/* main.c: the zspc command: reads the options and hands the run to its mode (zspc.h). A thin
 * program over libzsp; exit codes are enum zsp_status; output files are written whole or not at all. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "compiler/compile.h"
#include "programs/zspc/zspc.h"

static const char usage_text[] =
	"usage: zspc --check [OPTIONS] FILE.zsp\n"
	"       zspc --emit ir|bwrap|bpf|pfc|sbpl [OPTIONS] [-o OUT] FILE.zsp\n"
	"       zspc --emit sandbox-exec [OPTIONS] FILE.zsp -- COMMAND [ARG]...\n"
	"       zspc --emit wsl [--distribution D] [--user U] [--cd DIR] [OPTIONS] FILE.zsp -- COMMAND...\n"
	"       zspc --query 'REQUEST' [--policy NAME] [--explain] [--format json] FILE.zsp\n"
	"       zspc --batch FILE|- [--policy NAME] FILE.zsp\n"
	"       zspc --query|--batch ... [--thread ID] [--project DIR] [--record]\n"
	"                  [--state-dir DIR] [--runtime-dir DIR] FILE.zsp\n"
	"       zspc grant add|list|revoke|end-thread|gc ...   (zspc grant --help)\n"
	"       zspc audit [--since DURATION|TIME] [--format json] [--state-dir DIR]\n"
	"       zspc cache list|clear ...   (the sandboxes' caches and /tmp: zspc cache --help)\n"
	"       zspc --test [--coverage] [--coverage-min PCT] FILE.zsp\n"
	"       zspc --import zed [-o OUT] SETTINGS.json\n"
	"       zspc --verify [--policy NAME] FILE.zsp\n"
	"\n"
	"  --check            parse and validate; print diagnostics only\n"
	"  --emit FORMAT      print what FORMAT enforces (the list below)\n"
	"  --strict           rules a backend cannot enforce as written are errors\n"
	"                     (same as -Werror=unenforced)\n"
	"  --query REQUEST    decide one request: allow (exit 0), deny (1), ask (2);\n"
	"                     exit 3 when no decision can be made (policy errors, bad request)\n"
	"  --batch FILE       decide one request per line (FILE or - for stdin), a JSON line each\n"
	"  --test             run the policy's test blocks; ends with \"N passed, N failed\"\n"
	"  --import zed       turn Zed agent.tool_permissions settings into a .zsp policy\n"
	"  --verify           run the test expectations in the real sandbox and compare the\n"
	"                     kernel with the oracle (runs zsp-run --verify)\n"
	"  --thread ID, --project DIR\n"
	"                     consult the grant store for an ask: grants of this agent thread\n"
	"                     and this project, besides once and global grants\n"
	"  --record           append each decision to the audit trail (zspc audit)\n"
	"  --state-dir DIR, --runtime-dir DIR\n"
	"                     where grants.db and threads.db are (default: XDG state/runtime dirs);\n"
	"                     --emit bwrap: where zsp-run keeps the caches and the private /tmp\n"
	"  --policy NAME      the policy to ask (needed when the file defines several; those of\n"
	"                     the files it includes do not count)\n"
	"  --explain          show the checks made and the rule that decided\n"
	"  --format json      one JSON object per decision\n"
	"  --workspace DIR    the workspace (default: -D WORKSPACE, else the top of the git work\n"
	"                     tree holding the current directory, else the current directory)\n"
	"  --shell PATH       judge terminal commands as PATH -c runs them (default: /bin/sh;\n"
	"                     a shell other than sh, dash and bash turns an allow into ask)\n"
	"  --no-symlinks      judge paths as written only\n"
	"  --coverage         list rules no expectation exercised; --coverage-min PCT fails below\n"
	"  -o OUT             write the output to OUT (atomically); `-` is stdout\n"
	"  -I DIR             search DIR for included files\n"
	"  -D NAME=VALUE      give parameter NAME a value\n"
	"  -W NAME, -Wno-NAME, -Werror, -Werror=NAME\n"
	"                     control warnings (shadowed duplicate conflict unused-param\n"
	"                     unknown-tool no-effect unenforced host-control unanchored\n"
	"                     unsafe-flag)\n"
	"  --help, --version\n";

static const char exit_text[] =
	"\nexit: 0 ok, 1 policy errors, 64 usage, 66 unreadable input, 70 internal error,\n"
	"      73 cannot create output, 74 write error or grant store error\n";

zsp_compiler *zspc_compiler(const struct zspc_opts *o, const zsp_builtin_params *builtins)
{
	return zsp_cli_compiler(&o->cc, NULL, builtins);
}

/* An absolute value of parameter name in p, or NULL. */
static const char *param_value(const zsp_ir_policy *p, const char *name)
{
	for (size_t i = 0; i < p->nparams; i++)
		if (strcmp(p->params[i].name, name) == 0)
			return p->params[i].value && p->params[i].value[0] == '/' ? p->params[i].value : NULL;
	return NULL;
}

zsp_oracle_env zspc_oracle_env(const zsp_ir_policy *p, bool resolve_symlinks)
{
	zsp_oracle_env env = { .workspace = param_value(p, "WORKSPACE"), .home = param_value(p, "HOME"),
			       .resolve_symlinks = resolve_symlinks };
	return env;
}

int zspc_compile(const struct zspc_opts *o, const zsp_builtin_params *builtins, const char *file,
		 zsp_policy_set **set)
{
	zsp_compiler *c = zspc_compiler(o, builtins);
	int rc = zsp_compile_file(c, file, set);
	zsp_cli_summary(c);
	zsp_compiler_free(c);
	return rc;
}

static int help(void)
{
	fputs(usage_text, stdout);
	fputs("\n--emit FORMAT, FORMAT one of:\n  ir             the normalized IR as JSON\n", stdout);
	for (const zsp_backend *b = zsp_backends; b->name; b++)
		printf("  %-14s %s (%s)\n", b->name, b->what, b->platform);
	fputs(exit_text, stdout);
	return fflush(stdout) == 0 ? ZSP_OK : ZSP_EIO;
}

enum mode { MODE_NONE, MODE_CHECK, MODE_EMIT, MODE_QUERY, MODE_BATCH, MODE_TEST, MODE_IMPORT, MODE_VERIFY };

static int set_mode(enum mode *mode, enum mode m)
{
	if (*mode != MODE_NONE)
		return zsp_usage_error("%s", "give one of --check, --emit, --query, --batch, --test, --import and --verify");
	*mode = m;
	return ZSP_OK;
}

/* Which options go with which modes: one row per option group, checked in order. */
enum {
	M_CHECK = 1 << MODE_CHECK, M_EMIT_IR = 1 << 8, M_BACKEND = 1 << 9, M_QUERY = 1 << MODE_QUERY,
	M_BATCH = 1 << MODE_BATCH, M_TEST = 1 << MODE_TEST, M_IMPORT = 1 << MODE_IMPORT,
	M_VERIFY = 1 << MODE_VERIFY, M_ASKS = M_QUERY | M_BATCH,
};

static unsigned mode_bit(enum mode mode, const struct zspc_opts *o)
{
	if (mode == MODE_EMIT)
		return strcmp(o->emit, "ir") == 0 ? M_EMIT_IR : M_BACKEND;
	return 1u << mode;
}

static int check_combinations(const struct zspc_opts *o, enum mode mode)
{
	const zsp_backend *b = mode == MODE_EMIT ? zsp_backend_find(o->emit) : NULL;
	unsigned m = mode_bit(mode, o);
	bool wsl = b && strcmp(b->name, "wsl") == 0, bwrap = b && strcmp(b->name, "bwrap") == 0;
	const struct {
		bool given, allowed;
		const char *message;
	} rules[] = {
		{ o->wsl_distribution || o->wsl_user || o->wsl_cd, wsl,
		  "--distribution, --user and --cd go with --emit wsl" },
		{ o->out != NULL, m & (M_EMIT_IR | M_BACKEND | M_IMPORT), "-o goes with --emit and --import" },
		{ o->nul, bwrap, "--format nul goes with --emit bwrap" },
		{ o->cc.strict, m & M_BACKEND, "--strict goes with --emit FORMAT (but ir)" },
		{ o->json || o->workspace || o->shell, m & M_ASKS,
		  "--format, --workspace and --shell go with --query and --batch" },
		{ o->thread || o->project || o->record || o->runtime_dir, m & M_ASKS,
		  "--thread, --project, --record and --runtime-dir go with --query and --batch" },
		{ o->state_dir != NULL, (m & M_ASKS) || bwrap,
		  "--state-dir goes with --query, --batch and --emit bwrap" },
		{ o->policy != NULL, m & (M_ASKS | M_TEST | M_BACKEND | M_VERIFY),
		  "--policy goes with --query, --batch, --test, --verify and --emit (but ir)" },
		{ o->explain, m & (M_ASKS | M_TEST), "--explain goes with --query, --batch and --test" },
		{ o->coverage, m & M_TEST, "--coverage goes with --test" },
		{ mode == MODE_VERIFY && (o->cc.ndefines || o->cc.nwarnings || o->out), false,
		  "--verify takes the values of the test blocks: no -D, -W or -o" },
	};
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (rules[i].given && !rules[i].allowed)
			return zsp_usage_error("%s", rules[i].message);
	return ZSP_OK;
}

/* --check: compile, print the diagnostics. */
static int check(const struct zspc_opts *o, const char *file)
{
	zsp_policy_set *set;
	int rc = zspc_compile(o, NULL, file, &set);
	zsp_policy_set_free(set);
	return rc;
}

int main(int argc, char **argv)
{
	enum {
		OPT_POLICY = 256, OPT_EXPLAIN, OPT_FORMAT, OPT_WORKSPACE, OPT_NO_SYMLINKS,
		OPT_COVERAGE, OPT_COVERAGE_MIN, OPT_BATCH, OPT_TEST, OPT_QUERY, OPT_IMPORT, OPT_STRICT, OPT_VERIFY,
		OPT_DISTRIBUTION, OPT_USER, OPT_CD, OPT_THREAD, OPT_PROJECT, OPT_RECORD, OPT_STATE_DIR,
		OPT_RUNTIME_DIR, OPT_SHELL,
	};
	static const struct option longopts[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "emit", required_argument, NULL, 'e' },
		{ "query", required_argument, NULL, OPT_QUERY },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "test", no_argument, NULL, OPT_TEST },
		{ "import", required_argument, NULL, OPT_IMPORT },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "explain", no_argument, NULL, OPT_EXPLAIN },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "workspace", required_argument, NULL, OPT_WORKSPACE },
		{ "no-symlinks", no_argument, NULL, OPT_NO_SYMLINKS },
		{ "coverage", no_argument, NULL, OPT_COVERAGE },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "verify", no_argument, NULL, OPT_VERIFY },
		{ "distribution", required_argument, NULL, OPT_DISTRIBUTION },
		{ "user", required_argument, NULL, OPT_USER },
		{ "cd", required_argument, NULL, OPT_CD },
		{ "coverage-min", required_argument, NULL, OPT_COVERAGE_MIN },
		{ "thread", required_argument, NULL, OPT_THREAD },
		{ "project", required_argument, NULL, OPT_PROJECT },
		{ "record", no_argument, NULL, OPT_RECORD },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "runtime-dir", required_argument, NULL, OPT_RUNTIME_DIR },
		{ "shell", required_argument, NULL, OPT_SHELL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	zsp_cli_init("zspc");
	zsp_cli_init("zspc");
	/* subcommands: zspc grant ..., zspc audit ... */
	if (argc > 1 && (strcmp(argv[1], "grant") == 0 || strcmp(argv[1], "audit") == 0))
		return zspc_grant_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "cache") == 0)
		return zspc_cache_main(argc - 1, argv + 1);
	enum mode mode = MODE_NONE;
	int opt, rc = ZSP_OK;
	struct zspc_opts o = { .resolve_symlinks = true };
	zsp_cli_compile_init(&o.cc, argc);
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+o:I:D:W:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			rc = set_mode(&mode, MODE_CHECK);
			break;
		case 'e':
			if ((rc = set_mode(&mode, MODE_EMIT)) != ZSP_OK)
				break;
			o.emit = optarg;
			if (strcmp(optarg, "ir") != 0 && !zsp_backend_find(optarg))
				rc = zsp_usage_error("unknown --emit format `%s` (zspc --help lists them)", optarg);
			break;
		case OPT_QUERY:
			if ((rc = set_mode(&mode, MODE_QUERY)) == ZSP_OK)
				o.request = optarg;
			break;
		case OPT_BATCH:
			if ((rc = set_mode(&mode, MODE_BATCH)) == ZSP_OK)
				o.batch = optarg;
			break;
		case OPT_TEST:
			rc = set_mode(&mode, MODE_TEST);
			break;
		case OPT_IMPORT:
			if ((rc = set_mode(&mode, MODE_IMPORT)) == ZSP_OK && strcmp(optarg, "zed") != 0)
				rc = zsp_usage_error("unknown --import format `%s` (expected zed)", optarg);
			break;
		case OPT_POLICY:
			o.policy = optarg;
			break;
		case OPT_EXPLAIN:
			o.explain = true;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "json") == 0)
				o.json = true;
			else if (strcmp(optarg, "nul") == 0)
				o.nul = true;
			else if (strcmp(optarg, "text") != 0)
				rc = zsp_usage_error("unknown --format `%s` (expected text, json or nul)", optarg);
			break;
		case OPT_WORKSPACE:
			o.workspace = optarg;
			break;
		case OPT_NO_SYMLINKS:
			o.resolve_symlinks = false;
			break;
		case OPT_COVERAGE:
			o.coverage = true;
			break;
		case OPT_STRICT:
			o.cc.strict = true;
			break;
		case OPT_VERIFY:
			rc = set_mode(&mode, MODE_VERIFY);
			break;
		case OPT_DISTRIBUTION:
			o.wsl_distribution = optarg;
			break;
		case OPT_USER:
			o.wsl_user = optarg;
			break;
		case OPT_CD:
			o.wsl_cd = optarg;
			break;
		case OPT_THREAD:
			if (!*optarg)
				rc = zsp_usage_error("%s", "--thread needs an ID");
			o.thread = optarg;
			break;
		case OPT_PROJECT:
			o.project = optarg;
			break;
		case OPT_RECORD:
			o.record = true;
			break;
		case OPT_STATE_DIR:
			o.state_dir = optarg;
			break;
		case OPT_RUNTIME_DIR:
			o.runtime_dir = optarg;
			break;
		case OPT_SHELL:
			if (optarg[0] != '/')
				rc = zsp_usage_error("--shell %s: give the shell's absolute path (e.g. /bin/bash)", optarg);
			o.shell = optarg;
			break;
		case OPT_COVERAGE_MIN: {
			char *end;
			o.coverage_min = strtod(optarg, &end);
			if (*end || end == optarg || o.coverage_min < 0 || o.coverage_min > 100)
				rc = zsp_usage_error("--coverage-min %s: expected a percentage from 0 to 100", optarg);
			o.coverage = true;
			break;
		}
		case 'o':
			o.out = optarg;
			break;
		case 'I':
			rc = zsp_cli_include(&o.cc, optarg);
			break;
		case 'D':
			rc = zsp_cli_define(&o.cc, optarg);
			break;
		case 'W':
			rc = zsp_cli_warning(&o.cc, optarg);
			break;
		case 'h':
			rc = help();
			goto done;
		case 'V':
			printf("zspc %s%s\n", zsp_version(), zsp_cli_build_note());
			rc = fflush(stdout) == 0 ? ZSP_OK : ZSP_EIO;
			goto done;
		case '?':
			if (optopt) {
				char oc[2] = { (char)optopt, '\0' };
				rc = zsp_usage_error("option -%s needs an argument or is unknown", oc);
			} else {
				rc = zsp_usage_error("unknown option `%s`", argv[optind - 1]);
			}
			break;
		default:
			rc = zsp_usage_error("%s", "bad option");
			break;
		}
		if (rc != ZSP_OK)
			goto done;
	}
	if (mode == MODE_NONE) {
		rc = zsp_usage_error("%s", "say what to do: --check, --emit FORMAT, --query, --batch, --test or --import zed");
		goto done;
	}
	/* a backend that prints a command line takes FILE.zsp [-- COMMAND...] */
	const zsp_backend *b = mode == MODE_EMIT ? zsp_backend_find(o.emit) : NULL;
	if (b && b->command && optind < argc - 1 && strcmp(argv[optind + 1], "--") == 0) {
		o.command = (const char *const *)argv + optind + 2;
		o.ncommand = (size_t)(argc - optind - 2);
		argc = optind + 1;
	}
	if ((rc = check_combinations(&o, mode)) != ZSP_OK)
		goto done;
	if (optind != argc - 1) {
		rc = zsp_usage_error("%s", optind >= argc ? "no policy file given" : "give exactly one policy file");
		goto done;
	}
	static int (*const run[])(const struct zspc_opts *, const char *) = {
		[MODE_CHECK] = check, [MODE_EMIT] = zspc_emit, [MODE_QUERY] = zspc_query,
		[MODE_BATCH] = zspc_query, [MODE_TEST] = zspc_test, [MODE_IMPORT] = zspc_import,
		[MODE_VERIFY] = zspc_verify,
	};
	rc = run[mode](&o, argv[optind]);
done:
	zsp_cli_compile_free(&o.cc);
	return rc;
}
