/* zspc.c: the zspc command: a thin program over libzsp (--check, --emit ir).
 * Exit codes are enum zsp_status; output files are written whole or not at all. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zsp.h"
#include "zspc.h"

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
	"       zspc --test [--coverage] [--coverage-min PCT] FILE.zsp\n"
	"       zspc --import zed [-o OUT] SETTINGS.json\n"
	"       zspc --verify [--policy NAME] FILE.zsp\n"
	"\n"
	"  --check            parse and validate; print diagnostics only\n"
	"  --emit ir          print the normalized IR as JSON\n"
	"  --emit bwrap       print bubblewrap's options, one shell-quoted argument per line\n"
	"                     (--format nul: NUL-separated, for bwrap --args FD)\n"
	"  --emit bpf         write the seccomp filter as a raw BPF program (bwrap --seccomp FD)\n"
	"  --emit pfc         print the seccomp filter as libseccomp's readable pseudo-code\n"
	"  --emit sbpl        print the macOS Seatbelt profile (parameters stay (param \"NAME\")\n"
	"                     unless -D gives them)\n"
	"  --emit sandbox-exec  print the sandbox-exec command line running COMMAND\n"
	"  --emit wsl         print the wsl.exe command line running COMMAND under zsp-run in a\n"
	"                     WSL2 distribution (Windows paths in -D values translated)\n"
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
	"                     where grants.db and threads.db are (default: XDG state/runtime dirs)\n"
	"  --policy NAME      the policy to ask (needed when the file defines several)\n"
	"  --explain          show the checks made and the rule that decided\n"
	"  --format json      one JSON object per decision\n"
	"  --workspace DIR    the workspace (default: -D WORKSPACE, else the current directory)\n"
	"  --no-symlinks      judge paths as written only\n"
	"  --coverage         list rules no expectation exercised; --coverage-min PCT fails below\n"
	"  -o OUT             write the output to OUT (atomically); `-` is stdout\n"
	"  -I DIR             search DIR for included files\n"
	"  -D NAME=VALUE      give parameter NAME a value\n"
	"  -W NAME, -Wno-NAME, -Werror, -Werror=NAME\n"
	"                     control warnings (shadowed duplicate conflict unused-param\n"
	"                     unknown-tool no-effect unenforced)\n"
	"  --help, --version\n"
	"\n"
	"exit: 0 ok, 1 policy errors, 64 usage, 66 unreadable input, 70 internal error,\n"
	"      73 cannot create output, 74 write error or grant store error\n";

void to_stderr(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	fwrite(text, 1, len, stderr);
}

int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "zspc: ");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	fprintf(stderr, fmt, arg);
#pragma GCC diagnostic pop
	fprintf(stderr, "\nTry 'zspc --help'.\n");
	return ZSP_EUSAGE;
}

static int write_all(FILE *f, const char *p, size_t n)
{
	if (fwrite(p, 1, n, f) != n)
		return -1;
	return fflush(f) == 0 ? 0 : -1;
}

/* Writes straight into something that is not a regular file (a device, a FIFO): those
 * cannot be replaced by a rename, and replacing /dev/null with a file would be a disaster. */
static int write_special(const char *out, const char *data, size_t len)
{
	int fd = open(out, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
	if (!f) {
		fprintf(stderr, "zspc: cannot open %s: %s\n", out, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ZSP_ECANTCREAT;
	}
	int rc = write_all(f, data, len) == 0 ? ZSP_OK : ZSP_EIO;
	if (rc != ZSP_OK)
		fprintf(stderr, "zspc: cannot write %s: %s\n", out, strerror(errno));
	if (fclose(f) != 0 && rc == ZSP_OK) {
		fprintf(stderr, "zspc: cannot write %s: %s\n", out, strerror(errno));
		rc = ZSP_EIO;
	}
	return rc;
}

/* Writes a regular file atomically: a temporary file beside it, renamed over it. A symlink
 * is followed, so the link stays and its target gets the new contents. */
int zspc_write_output(const char *out, const char *data, size_t len)
{
	if (!out || strcmp(out, "-") == 0) {
		if (write_all(stdout, data, len) != 0) {
			fprintf(stderr, "zspc: cannot write to standard output: %s\n", strerror(errno));
			return ZSP_EIO;
		}
		return ZSP_OK;
	}
	struct stat st;
	char *real = NULL;
	if (stat(out, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			fprintf(stderr, "zspc: cannot create %s: Is a directory\n", out);
			return ZSP_ECANTCREAT;
		}
		if (!S_ISREG(st.st_mode))
			return write_special(out, data, len);
		real = realpath(out, NULL);
	}
	const char *target = real ? real : out;
	size_t n = strlen(target);
	char *tmp = malloc(n + 16);
	if (!tmp) {
		free(real);
		return ZSP_EINTERNAL;
	}
	snprintf(tmp, n + 16, "%s.XXXXXX", target);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "zspc: cannot create %s: %s\n", out, strerror(errno));
		free(tmp);
		free(real);
		return ZSP_ECANTCREAT;
	}
	FILE *f = fdopen(fd, "wb");
	int rc = ZSP_OK;
	if (!f || write_all(f, data, len) != 0 || fsync(fileno(f)) != 0) {
		fprintf(stderr, "zspc: cannot write %s: %s\n", out, strerror(errno));
		rc = ZSP_EIO;
	}
	if (f ? fclose(f) != 0 : close(fd) != 0) {
		if (rc == ZSP_OK)
			fprintf(stderr, "zspc: cannot write %s: %s\n", out, strerror(errno));
		rc = ZSP_EIO;
	}
	if (rc == ZSP_OK && rename(tmp, target) != 0) {
		fprintf(stderr, "zspc: cannot create %s: %s\n", out, strerror(errno));
		rc = ZSP_ECANTCREAT;
	}
	if (rc != ZSP_OK)
		unlink(tmp);
	free(tmp);
	free(real);
	return rc;
}

static int add_define(struct zspc_opts *o, char *arg)
{
	char *eq = strchr(arg, '=');
	if (!eq)
		return usage_error("-D %s: expected NAME=VALUE", arg);
	*eq = '\0';
	/* validated now, so a bad -D is a usage error before anything else happens */
	zsp_compiler *probe = zsp_compiler_new();
	int rc = probe ? zsp_compiler_define(probe, arg, eq + 1) : ZSP_EINTERNAL;
	zsp_compiler_free(probe);
	if (rc == ZSP_EUSAGE) {
		*eq = '=';
		return usage_error("-D %s: NAME is [A-Za-z_][A-Za-z0-9_]* and VALUE may not hold `${` or control characters", arg);
	}
	if (rc != ZSP_OK)
		return rc;
	o->define_names[o->ndefines] = arg;
	o->define_values[o->ndefines++] = eq + 1;
	return ZSP_OK;
}

zsp_compiler *zspc_compiler(const struct zspc_opts *o, const char *const *names,
			    const char *const *values, size_t n)
{
	zsp_compiler *c = zsp_compiler_new();
	if (!c)
		return NULL;
	zsp_compiler_set_sink(c, to_stderr, NULL);
	if (o->datadir)
		zsp_compiler_set_datadir(c, o->datadir);
	for (size_t i = 0; i < o->nincludes; i++)
		zsp_compiler_add_include_dir(c, o->includes[i]);
	for (size_t i = 0; i < o->nwarnings; i++)
		zsp_compiler_warning(c, o->warnings[i]);
	/* extra definitions first: a -D on the command line wins over them */
	for (size_t i = 0; i < n; i++)
		zsp_compiler_define(c, names[i], values[i]);
	for (size_t i = 0; i < o->ndefines; i++)
		zsp_compiler_define(c, o->define_names[i], o->define_values[i]);
	return c;
}

int zspc_compile(const struct zspc_opts *o, const char *const *names, const char *const *values,
		 size_t n, const char *file, zsp_policy_set **set)
{
	zsp_compiler *c = zspc_compiler(o, names, values, n);
	*set = NULL;
	if (!c)
		return ZSP_EINTERNAL;
	int rc = zsp_compile_file(c, file, set);
	zsp_compiler_free(c);
	return rc;
}

enum mode { MODE_NONE, MODE_CHECK, MODE_EMIT, MODE_QUERY, MODE_BATCH, MODE_TEST, MODE_IMPORT, MODE_VERIFY };

static int set_mode(enum mode *mode, enum mode m)
{
	if (*mode != MODE_NONE)
		return usage_error("%s", "give one of --check, --emit, --query, --batch, --test, --import and --verify");
	*mode = m;
	return ZSP_OK;
}

int main(int argc, char **argv)
{
	enum {
		OPT_POLICY = 256, OPT_EXPLAIN, OPT_FORMAT, OPT_WORKSPACE, OPT_NO_SYMLINKS,
		OPT_COVERAGE, OPT_COVERAGE_MIN, OPT_BATCH, OPT_TEST, OPT_QUERY, OPT_IMPORT, OPT_STRICT, OPT_VERIFY,
		OPT_DISTRIBUTION, OPT_USER, OPT_CD, OPT_THREAD, OPT_PROJECT, OPT_RECORD, OPT_STATE_DIR,
		OPT_RUNTIME_DIR,
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
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	/* subcommands: zspc grant ..., zspc audit ... */
	if (argc > 1 && (strcmp(argv[1], "grant") == 0 || strcmp(argv[1], "audit") == 0))
		return zspc_grant_main(argc - 1, argv + 1);
	enum mode mode = MODE_NONE;
	int opt, rc = ZSP_OK;
	struct zspc_opts o = { .resolve_symlinks = true };
	o.datadir = getenv("ZSP_DATADIR");
	if (o.datadir && !*o.datadir)
		o.datadir = NULL;
	o.includes = calloc((size_t)argc + 1, sizeof(char *));
	o.warnings = calloc((size_t)argc + 1, sizeof(char *));
	o.define_names = calloc((size_t)argc + 1, sizeof(char *));
	o.define_values = calloc((size_t)argc + 1, sizeof(char *));
	if (!o.includes || !o.warnings || !o.define_names || !o.define_values) {
		fprintf(stderr, "zspc: out of memory\n");
		rc = ZSP_EINTERNAL;
		goto done;
	}

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
			if (strcmp(optarg, "ir") != 0 && strcmp(optarg, "bwrap") != 0 &&
			    strcmp(optarg, "bpf") != 0 && strcmp(optarg, "pfc") != 0 &&
			    strcmp(optarg, "sbpl") != 0 && strcmp(optarg, "sandbox-exec") != 0 &&
			    strcmp(optarg, "wsl") != 0)
				rc = usage_error("unknown --emit format `%s` (expected ir, bwrap, bpf, pfc, sbpl, "
						 "sandbox-exec or wsl)", optarg);
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
				rc = usage_error("unknown --import format `%s` (expected zed)", optarg);
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
				rc = usage_error("unknown --format `%s` (expected text, json or nul)", optarg);
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
			o.strict = true;
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
				rc = usage_error("%s", "--thread needs an ID");
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
		case OPT_COVERAGE_MIN: {
			char *end;
			o.coverage_min = strtod(optarg, &end);
			if (*end || end == optarg || o.coverage_min < 0 || o.coverage_min > 100)
				rc = usage_error("--coverage-min %s: expected a percentage from 0 to 100", optarg);
			o.coverage = true;
			break;
		}
		case 'o':
			o.out = optarg;
			break;
		case 'I':
			if (!*optarg)
				rc = usage_error("%s", "-I needs a directory");
			else
				o.includes[o.nincludes++] = optarg;
			break;
		case 'D':
			rc = add_define(&o, optarg);
			break;
		case 'W': {
			zsp_compiler *probe = zsp_compiler_new();
			if (!probe || zsp_compiler_warning(probe, optarg) != ZSP_OK)
				rc = usage_error("unknown warning option `-W%s`", optarg);
			else
				o.warnings[o.nwarnings++] = optarg;
			zsp_compiler_free(probe);
			break;
		}
		case 'h':
			fputs(usage_text, stdout);
			rc = fflush(stdout) == 0 ? ZSP_OK : ZSP_EIO;
			goto done;
		case 'V':
			printf("zspc %s\n", zsp_version());
			rc = fflush(stdout) == 0 ? ZSP_OK : ZSP_EIO;
			goto done;
		case '?':
			if (optopt) {
				char oc[2] = { (char)optopt, '\0' };
				rc = usage_error("option -%s needs an argument or is unknown", oc);
			} else {
				rc = usage_error("unknown option `%s`", argv[optind - 1]);
			}
			break;
		default:
			rc = usage_error("%s", "bad option");
			break;
		}
		if (rc != ZSP_OK)
			goto done;
	}
	if (mode == MODE_NONE) {
		rc = usage_error("%s", "say what to do: --check, --emit ir, --query, --batch, --test or --import zed");
		goto done;
	}
	/* --emit sandbox-exec and --emit wsl print a whole command line: FILE.zsp [-- COMMAND...] */
	bool with_command = mode == MODE_EMIT &&
			    (strcmp(o.emit, "sandbox-exec") == 0 || strcmp(o.emit, "wsl") == 0);
	if (with_command && optind < argc - 1 && strcmp(argv[optind + 1], "--") == 0) {
		o.command = (const char *const *)argv + optind + 2;
		o.ncommand = (size_t)(argc - optind - 2);
		argc = optind + 1;
	}
	if ((o.wsl_distribution || o.wsl_user || o.wsl_cd) && !(mode == MODE_EMIT && strcmp(o.emit, "wsl") == 0)) {
		rc = usage_error("%s", "--distribution, --user and --cd go with --emit wsl");
		goto done;
	}
	if (optind != argc - 1) {
		rc = usage_error("%s", optind >= argc ? "no policy file given" : "give exactly one policy file");
		goto done;
	}
	if (o.out && mode != MODE_EMIT && mode != MODE_IMPORT) {
		rc = usage_error("%s", "-o goes with --emit and --import");
		goto done;
	}
	bool asks = mode == MODE_QUERY || mode == MODE_BATCH;
	bool backend_emit = mode == MODE_EMIT && strcmp(o.emit, "ir") != 0;
	bool linux_emit = backend_emit && (strcmp(o.emit, "bwrap") == 0 || strcmp(o.emit, "bpf") == 0 ||
					   strcmp(o.emit, "pfc") == 0);
	if (o.nul && !(linux_emit && strcmp(o.emit, "bwrap") == 0)) {
		rc = usage_error("%s", "--format nul goes with --emit bwrap");
		goto done;
	}
	if (o.strict && !backend_emit) {
		rc = usage_error("%s", "--strict goes with --emit bwrap, bpf, pfc, sbpl, sandbox-exec and wsl");
		goto done;
	}
	if ((o.json || o.workspace) && !asks) {
		rc = usage_error("%s", "--format and --workspace go with --query and --batch");
		goto done;
	}
	if ((o.thread || o.project || o.record || o.state_dir || o.runtime_dir) && !asks) {
		rc = usage_error("%s", "--thread, --project, --record, --state-dir and --runtime-dir go with "
				 "--query and --batch");
		goto done;
	}
	if (mode == MODE_VERIFY && (o.ndefines || o.nwarnings || o.out)) {
		rc = usage_error("%s", "--verify takes the values of the test blocks: no -D, -W or -o");
		goto done;
	}
	if (o.policy && !asks && mode != MODE_TEST && !backend_emit && mode != MODE_VERIFY) {
		rc = usage_error("%s", "--policy goes with --query, --batch, --test, --verify and --emit (but ir)");
		goto done;
	}
	if (o.explain && !asks && mode != MODE_TEST) {
		rc = usage_error("%s", "--explain goes with --query, --batch and --test");
		goto done;
	}
	if (o.coverage && mode != MODE_TEST) {
		rc = usage_error("%s", "--coverage goes with --test");
		goto done;
	}
	const char *file = argv[optind];
	switch (mode) {
	case MODE_QUERY:
	case MODE_BATCH:
		rc = zspc_query(&o, file);
		goto done;
	case MODE_TEST:
		rc = zspc_test(&o, file);
		goto done;
	case MODE_IMPORT:
		rc = zspc_import(&o, file);
		goto done;
	case MODE_VERIFY:
		rc = zspc_verify(&o, file);
		goto done;
	case MODE_EMIT:
		if (linux_emit) {
			rc = zspc_emit_linux(&o, file);
			goto done;
		}
		if (strcmp(o.emit, "sbpl") == 0 || strcmp(o.emit, "sandbox-exec") == 0) {
			rc = zspc_emit_sbpl(&o, file);
			goto done;
		}
		if (strcmp(o.emit, "wsl") == 0) {
			rc = zspc_emit_wsl(&o, file);
			goto done;
		}
		break;
	default:
		break;
	}

	zsp_policy_set *set;
	rc = zspc_compile(&o, NULL, NULL, 0, file, &set);
	if (rc == ZSP_OK && mode == MODE_EMIT) {
		char *json;
		size_t len;
		rc = zsp_policy_set_ir_json(set, &json, &len);
		if (rc == ZSP_OK) {
			rc = zspc_write_output(o.out, json, len);
			free(json);
		} else {
			fprintf(stderr, "zspc: out of memory\n");
		}
	}
	zsp_policy_set_free(set);
done:
	free(o.includes);
	free(o.warnings);
	free(o.define_names);
	free(o.define_values);
	return rc;
}
