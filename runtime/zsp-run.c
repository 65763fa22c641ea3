/* zsp-run.c: the shim. Compiles a policy (or the built-in default), lowers it for this machine
 * and runs one command inside bubblewrap + seccomp; never runs it any other way. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../compiler/compile.h"
#include "doctor.h"
#include "launch.h"
#include "verify.h"
#include "zsp.h"

extern char **environ;
extern const char zsp_default_policy[];

static const char usage_text[] =
	"usage: zsp-run [OPTIONS] -- COMMAND [ARG]...\n"
	"       zsp-run --doctor\n"
	"       zsp-run --verify [OPTIONS] FILE.zsp\n"
	"\n"
	"  -p FILE.zsp        the policy (default: the built-in one, examples/workspace.zsp)\n"
	"  --policy NAME      the policy to use when FILE defines several\n"
	"  -D NAME=VALUE      give parameter NAME a value (WORKSPACE defaults to the current\n"
	"                     directory, HOME, TMPDIR (else /tmp), UID and USER to yours)\n"
	"  -I DIR             search DIR for included files\n"
	"  -W NAME, -Wno-NAME, -Werror, -Werror=NAME   warnings, as zspc; `unenforced` is off\n"
	"                     unless asked for (zspc --emit bwrap shows them)\n"
	"  --strict           refuse to run a policy with rules Linux cannot enforce as written\n"
	"  --no-proc          no /proc in the sandbox (where a container forbids mounting it)\n"
	"  --print            print the bwrap options instead of running\n"
	"  --doctor           check what the sandbox needs on this machine and say what is missing\n"
	"  --verify           run the policy's test expectations in the real sandbox and compare\n"
	"                     the kernel with the oracle (same as zspc --verify)\n"
	"  --help, --version\n"
	"\n"
	"exit: the command's status, 128+N when a signal N ended it; 125 when the sandbox\n"
	"      cannot be set up (the command did not run); 64 usage; 1 policy errors\n";

__attribute__((format(printf, 1, 0))) static int usage(const char *msg, const char *arg)
{
	fprintf(stderr, "zsp-run: ");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	fprintf(stderr, msg, arg);
#pragma GCC diagnostic pop
	fprintf(stderr, "\nTry 'zsp-run --help'.\n");
	return ZSP_EUSAGE;
}

static void to_stderr(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	fwrite(text, 1, len, stderr);
}

struct run_opts {
	const char *file, *policy;
	const char **inc, **warn, **dnames, **dvalues;
	size_t ninc, nwarn, ndef;
	bool strict, no_proc, print;
};

static zsp_compiler *make_compiler(const struct run_opts *o, zsp_diag *bd)
{
	const char *names[5], *values[5];
	int n = zsp_linux_defaults(names, values);
	if (n < 0) {
		fprintf(stderr, "zsp-run: cannot find the current directory or your home directory\n");
		return NULL;
	}
	zsp_compiler *c = zsp_compiler_new();
	if (!c)
		return NULL;
	zsp_compiler_set_sink(c, to_stderr, NULL);
	const char *dd = getenv("ZSP_DATADIR");
	if (dd && *dd)
		zsp_compiler_set_datadir(c, dd);
	for (size_t i = 0; i < o->ninc; i++)
		zsp_compiler_add_include_dir(c, o->inc[i]);
	zsp_diag_init(bd, to_stderr, NULL);
	zsp_diag_option(bd, "no-unenforced");
	/* a WORKSPACE inside TMPDIR makes a rule shadowed: true, but not news to whoever runs a command */
	zsp_compiler_warning(c, "no-shadowed");
	for (size_t i = 0; i < o->nwarn; i++) {
		zsp_compiler_warning(c, o->warn[i]);
		zsp_diag_option(bd, o->warn[i]);
	}
	if (o->strict)
		zsp_diag_option(bd, "error=unenforced");
	for (int i = 0; i < n; i++)
		zsp_compiler_define(c, names[i], values[i]);
	for (size_t i = 0; i < o->ndef; i++)
		zsp_compiler_define(c, o->dnames[i], o->dvalues[i]);
	return c;
}

static int compile(const struct run_opts *o, zsp_diag *bd, zsp_policy_set **set, const zsp_ir_policy **p)
{
	zsp_compiler *c = make_compiler(o, bd);
	if (!c)
		return ZSP_RUN_ESETUP;
	int rc = o->file ? zsp_compile_file(c, o->file, set)
			 : zsp_compile_buffer(c, "<built-in workspace.zsp>", zsp_default_policy,
					      strlen(zsp_default_policy), set);
	zsp_compiler_free(c);
	if (rc != ZSP_OK)
		return rc;
	const zsp_ir *ir = zsp_policy_set_ir(*set);
	*p = o->policy ? zsp_ir_find_policy(ir, o->policy) : ir->npolicies == 1 ? &ir->policies[0] : NULL;
	if (!*p) {
		if (o->policy)
			fprintf(stderr, "zsp-run: no policy named `%s` in %s\n", o->policy, ir->source);
		else
			fprintf(stderr, "zsp-run: %s defines %zu policies: say which with --policy NAME\n",
				ir->source, ir->npolicies);
		return ZSP_EUSAGE;
	}
	return ZSP_OK;
}

static int print_plan(const zsp_launch *l)
{
	for (size_t i = 0; i < l->plan.argc; i++) {
		char *q = zsp_shell_quote(l->plan.argv[i]);
		if (!q)
			return ZSP_EINTERNAL;
		puts(q);
		free(q);
	}
	return fflush(stdout) == 0 ? 0 : ZSP_EIO;
}

static int run(const struct run_opts *o, char *const *cmd)
{
	if (zsp_wsl_version() == 1) {
		fprintf(stderr, "zsp-run: this is WSL1, which has no user namespaces: the sandbox cannot be built\n"
				"  remedy: convert the distribution to WSL2 (wsl --set-version DISTRO 2)\n");
		return ZSP_RUN_ESETUP;
	}
	zsp_diag bd;
	zsp_policy_set *set = NULL;
	const zsp_ir_policy *p = NULL;
	int rc = compile(o, &bd, &set, &p);
	if (rc != ZSP_OK) {
		zsp_policy_set_free(set);
		return rc == ZSP_EPOLICY || rc == ZSP_EUSAGE || rc == ZSP_ENOINPUT ? rc : ZSP_RUN_ESETUP;
	}
	char *cwd = getcwd(NULL, 0);
	zsp_arena *a = zsp_arena_new();
	zsp_launch l;
	if (!cwd || !a) {
		fprintf(stderr, "zsp-run: %s\n", cwd ? "out of memory" : "cannot find the current directory");
		rc = ZSP_RUN_ESETUP;
	} else if (zsp_launch_prepare(&l, p, a, &bd, cwd, environ, !o->no_proc) != 0) {
		zsp_diag_summary(&bd);
		rc = bd.errors ? ZSP_EPOLICY : ZSP_RUN_ESETUP;
		zsp_launch_release(&l);
	} else if (o->print) {
		rc = print_plan(&l);
		zsp_launch_release(&l);
	} else {
		const char *why = NULL;
		rc = zsp_launch_run(&l, cmd, &why);
		if (rc == ZSP_RUN_ESETUP && why) {
			fprintf(stderr, "zsp-run: the sandbox could not be set up, so %s did not run: %s\n", cmd[0], why);
			zsp_doctor_explain(stderr);
		}
		zsp_launch_release(&l);
	}
	zsp_arena_free(a);
	free(cwd);
	zsp_policy_set_free(set);
	return rc;
}

static int parse_and_run(struct run_opts *o, int argc, char **argv)
{
	enum { OPT_POLICY = 256, OPT_STRICT, OPT_NO_PROC, OPT_PRINT, OPT_DOCTOR, OPT_VERIFY };
	static const struct option longopts[] = {
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "no-proc", no_argument, NULL, OPT_NO_PROC },
		{ "print", no_argument, NULL, OPT_PRINT },
		{ "doctor", no_argument, NULL, OPT_DOCTOR },
		{ "verify", no_argument, NULL, OPT_VERIFY },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool doctor = false, verify = false;
	opterr = 0;
	int opt;
	while ((opt = getopt_long(argc, argv, "+p:D:I:W:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			o->file = optarg;
			break;
		case OPT_POLICY:
			o->policy = optarg;
			break;
		case 'D': {
			char *eq = strchr(optarg, '=');
			zsp_compiler *probe = eq ? zsp_compiler_new() : NULL;
			if (eq)
				*eq = 0;
			int ok = probe && zsp_compiler_define(probe, optarg, eq + 1) == ZSP_OK;
			zsp_compiler_free(probe);
			if (!ok) {
				if (eq)
					*eq = '=';
				return usage("-D %s: expected NAME=VALUE (NAME is [A-Za-z_][A-Za-z0-9_]*)", optarg);
			}
			o->dnames[o->ndef] = optarg;
			o->dvalues[o->ndef++] = eq + 1;
			break;
		}
		case 'I':
			o->inc[o->ninc++] = optarg;
			break;
		case 'W': {
			zsp_compiler *probe = zsp_compiler_new();
			int ok = probe && zsp_compiler_warning(probe, optarg) == ZSP_OK;
			zsp_compiler_free(probe);
			if (!ok)
				return usage("unknown warning option `-W%s`", optarg);
			o->warn[o->nwarn++] = optarg;
			break;
		}
		case OPT_STRICT:
			o->strict = true;
			break;
		case OPT_NO_PROC:
			o->no_proc = true;
			break;
		case OPT_PRINT:
			o->print = true;
			break;
		case OPT_DOCTOR:
			doctor = true;
			break;
		case OPT_VERIFY:
			verify = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return fflush(stdout) == 0 ? 0 : ZSP_EIO;
		case 'V':
			printf("zsp-run %s\n", zsp_version());
			return fflush(stdout) == 0 ? 0 : ZSP_EIO;
		default:
			if (optopt) {
				char oc[2] = { (char)optopt, 0 };
				return usage("option -%s needs an argument or is unknown", oc);
			}
			return usage("unknown option `%s`", argv[optind - 1]);
		}
	}
	if (doctor) {
		if (optind != argc || verify)
			return usage("%s", "--doctor takes no other arguments");
		return zsp_doctor(stdout) ? 0 : ZSP_RUN_ESETUP;
	}
	if (verify) {
		if (optind != argc - 1)
			return usage("%s", "--verify needs exactly one policy file");
		if (o->file || o->print)
			return usage("%s", "--verify takes the policy file as its argument, without -p or --print");
		struct zsp_verify_opts vo = { .file = argv[optind], .policy = o->policy, .includes = o->inc,
					      .nincludes = o->ninc, .no_proc = o->no_proc };
		return zsp_verify(&vo);
	}
	if (optind >= argc && !o->print)
		return usage("%s", "no command given: zsp-run [OPTIONS] -- COMMAND [ARG]...");
	return run(o, argv + optind);
}

int main(int argc, char **argv)
{
	struct run_opts o = { 0 };
	o.inc = calloc((size_t)argc + 1, sizeof(char *));
	o.warn = calloc((size_t)argc + 1, sizeof(char *));
	o.dnames = calloc((size_t)argc + 1, sizeof(char *));
	o.dvalues = calloc((size_t)argc + 1, sizeof(char *));
	int rc = ZSP_RUN_ESETUP;
	if (!o.inc || !o.warn || !o.dnames || !o.dvalues)
		fprintf(stderr, "zsp-run: out of memory\n");
	else
		rc = parse_and_run(&o, argc, argv);
	free(o.inc);
	free(o.warn);
	free(o.dnames);
	free(o.dvalues);
	return rc;
}
