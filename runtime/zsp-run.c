/* zsp-run.c: the shim. Compiles a policy (or the built-in default), lowers it for this machine
 * and runs one command inside bubblewrap + seccomp; never runs it any other way. With -c, the
 * command is first put to the oracle as a `terminal` request, then to the grants and a person. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../compiler/compile.h"
#include "../compiler/textesc.h"
#include "ask.h"
#include "decide.h"
#include "doctor.h"
#include "launch.h"
#include "verify.h"
#include "zsp.h"

extern char **environ;
extern const char zsp_default_policy[];

/* zsp-run -c: the command did not run because of the decision. Distinct from 125 (the sandbox
 * could not be set up), 126/127 (the shell's) and 124 (timeout's). */
#define ZSP_RUN_EDENIED 122    /* denied: by the policy, a grant or the person asked */
#define ZSP_RUN_EAPPROVAL 123  /* the policy asks and there is no terminal to ask on */

static const char usage_text[] =
	"usage: zsp-run [OPTIONS] -- COMMAND [ARG]...\n"
	"       zsp-run [OPTIONS] -c 'COMMAND'\n"
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
	"  -c COMMAND         ask the policy about `terminal \"COMMAND\"` first (then the grants,\n"
	"                     then you on the terminal), and run it with sh -c when allowed\n"
	"  --thread ID        -c: the agent thread (conversation) it runs for\n"
	"  --project DIR      -c: the project of `always in this project` (default: WORKSPACE)\n"
	"  --state-dir DIR    -c: grants and audit trail (default: $XDG_STATE_HOME/zsp)\n"
	"  --runtime-dir DIR  -c: thread grants (default: $XDG_RUNTIME_DIR/zsp)\n"
	"  --doctor           check what the sandbox needs on this machine and say what is missing\n"
	"  --verify           run the policy's test expectations in the real sandbox and compare\n"
	"                     the kernel with the oracle (same as zspc --verify)\n"
	"  --help, --version\n"
	"\n"
	"exit: the command's status, 128+N when a signal N ended it; 125 when the sandbox\n"
	"      cannot be set up (the command did not run); 64 usage; 1 policy errors;\n"
	"      -c: 122 denied, 123 approval needed and no terminal to ask on\n";

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
	const char *command, *thread, *project, *state_dir, *runtime_dir;  /* -c and its options */
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

/* The value parameter name gets in this run: the last -D, else this machine's default. */
static const char *param_value(const struct run_opts *o, const char *name)
{
	for (size_t i = o->ndef; i-- > 0;)
		if (strcmp(o->dnames[i], name) == 0)
			return o->dvalues[i];
	const char *names[5], *values[5];
	int n = zsp_linux_defaults(names, values);
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return values[i];
	return NULL;
}

/* `terminal "COMMAND"` in the request syntax zsp_request_parse reads. malloc'd. */
static char *terminal_request(const char *command)
{
	size_t len = strlen(command);
	char *req = malloc(sizeof("terminal \"\"") + 4 * len), *r = req;
	if (!req)
		return NULL;
	r += sprintf(r, "terminal \"");
	for (const unsigned char *c = (const unsigned char *)command; *c; c++) {
		if (*c == '"' || *c == '\\')
			*r++ = '\\', *r++ = (char)*c;
		else if (*c == '\n')
			*r++ = '\\', *r++ = 'n';
		else if (*c == '\t')
			*r++ = '\\', *r++ = 't';
		else if (*c == '\r')
			*r++ = '\\', *r++ = 'r';
		else if (*c < 0x20 || *c == 0x7F)
			r += sprintf(r, "\\x%02x", *c);
		else
			*r++ = (char)*c;
	}
	strcpy(r, "\"");
	return req;
}

/* Everything one -c decision needs, and what it found. */
struct gate {
	const struct run_opts *o;
	const zsp_ir_policy *p;
	zsp_store *store;          /* NULL: could not be opened, decide without grants */
	zsp_decider *decider;
	char *request;
	const char *project;       /* canonical */
	char policy_hash[65];      /* as zspc computes it, so the trail ties both to one policy */
	zsp_decision_out out;
};

/* Decides (again) and records it. 0, or an exit status when zsp-run must stop. */
static int gate_decide(struct gate *g)
{
	char err[512];
	int rc = zsp_decider_decide(g->decider, g->request, g->o->thread, g->project, true,
				    g->policy_hash, &g->out, err, sizeof(err));
	if (rc == ZSP_EUSAGE) {
		fprintf(stderr, "zsp-run: -c: %s\n", err);
		return ZSP_EUSAGE;
	}
	if (rc == ZSP_EINTERNAL) {
		fprintf(stderr, "zsp-run: out of memory\n");
		return ZSP_RUN_ESETUP;
	}
	/* The decision stands without its record: the command is sandboxed all the same. */
	if (rc != 0)
		fprintf(stderr, "zsp-run: warning: the decision was not recorded in the audit trail: %s\n", err);
	if (g->out.store_failed)
		fprintf(stderr, "zsp-run: the grants could not be read, deciding without them: %s\n",
			g->out.store_error);
	return 0;
}

/* A record of what the person answered where no grant could carry it (a deny, or an allow
 * whose grant could not be stored or did not answer). Best effort: said, not fatal. */
static void gate_audit(struct gate *g, int answer, const char *rule)
{
	if (!g->store)
		return;
	char err[512];
	zsp_audit_record r = { .request = g->request, .decision = answer, .reason = "prompt", .rule = rule,
			       .policy = g->p->name, .policy_hash = g->policy_hash, .thread = g->o->thread,
			       .project = g->project, .who = zsp_decider_user() };
	if (zsp_store_audit(g->store, &r, err, sizeof(err)) != 0)
		fprintf(stderr, "zsp-run: warning: the answer was not recorded in the audit trail: %s\n", err);
}

static void print_denied(const zsp_decision_out *out)
{
	if (out->rule[0])
		fprintf(stderr, "zsp-run: denied: %s (%s)\n", out->reason, out->rule);
	else
		fprintf(stderr, "zsp-run: denied: %s\n", out->reason);
}

/* No terminal: say what would approve the command, as a command to copy. */
static int gate_no_terminal(struct gate *g)
{
	const struct run_opts *o = g->o;
	fprintf(stderr, "zsp-run: approval needed: %s%s%s%s, and there is no terminal to ask on\n",
		g->out.reason, g->out.rule[0] ? " (" : "", g->out.rule, g->out.rule[0] ? ")" : "");
	/* what is printed must not redraw the screen (stderr is often a terminal): a command with
	 * control or invisible characters is given escaped, and --exact-escaped reads it back */
	bool plain = zsp_text_plain(o->command);
	char *escaped = plain ? NULL : zsp_text_escape(o->command);
	char *cmd = plain || escaped ? zsp_shell_quote(plain ? o->command : escaped) : NULL;
	char *thread = o->thread ? zsp_shell_quote(o->thread) : NULL;
	char *state = o->state_dir ? zsp_shell_quote(o->state_dir) : NULL;
	char *policy = zsp_shell_quote(g->p->name);
	int rc = ZSP_RUN_EAPPROVAL;
	if (!cmd || !policy || (o->thread && !thread) || (o->state_dir && !state)) {
		fprintf(stderr, "zsp-run: out of memory\n");
		rc = ZSP_RUN_ESETUP;
	} else if (!zsp_text_plain(thread ? thread : "") || !zsp_text_plain(state ? state : "") ||
		   !zsp_text_plain(policy)) {
		fprintf(stderr, "zsp-run: --thread, --state-dir or the policy's name holds control "
				"characters: the command that allows this cannot be printed\n");
	} else {
		if (!plain)
			fprintf(stderr, "zsp-run: the command holds control or invisible characters, shown "
					"escaped (\\n, \\xHH, \\u{...})\n");
		fprintf(stderr, "zsp-run: to allow this command once, run:\n"
				"  zspc grant add --tool terminal %s %s --allow --once%s%s --policy %s%s%s\n",
			plain ? "--exact" : "--exact-escaped", cmd, thread ? " --thread " : "",
			thread ? thread : "", policy, state ? " --state-dir " : "", state ? state : "");
	}
	free(escaped);
	free(cmd);
	free(policy);
	free(thread);
	free(state);
	return rc;
}

/* Adds the grant the person chose. 0, or -1 with why in err. */
static int gate_grant(struct gate *g, zsp_ask_answer a, char *err, size_t errlen)
{
	zsp_grant gr = { .tool = "terminal", .match = ZSP_MATCH_EXACT, .pattern = g->o->command,
			 .decision = ZSP_ANSWER_ALLOW, .policy = g->p->name, .who = zsp_decider_user() };
	if (a == ZSP_ASK_ONCE) {
		gr.scope = ZSP_GRANT_ONCE;
		gr.thread = g->o->thread;
	} else if (a == ZSP_ASK_THREAD) {
		gr.scope = ZSP_GRANT_THREAD;
		gr.thread = g->o->thread;
	} else {
		gr.scope = ZSP_GRANT_PROJECT;
		gr.project = g->project;
	}
	return zsp_store_add(g->store, &gr, NULL, err, errlen);
}

/* The policy asks and there is a terminal: put the question to the person there. 0 to run,
 * else the exit status. */
static int gate_ask(struct gate *g, zsp_tty *t)
{
	zsp_tty_say(t, "zsp-run: the policy asks before running\n  ");
	zsp_tty_show(t, g->o->command);
	zsp_tty_say(t, "\n  because: ");
	zsp_tty_show(t, g->out.reason);
	if (g->out.rule[0]) {
		zsp_tty_say(t, " (");
		zsp_tty_show(t, g->out.rule);
		zsp_tty_say(t, ")");
	}
	zsp_tty_say(t, "\n");
	for (;;) {
		zsp_ask_answer a = zsp_tty_ask(t, g->project);
		if (a == ZSP_ASK_DENY || a == ZSP_ASK_INTERRUPTED || a == ZSP_ASK_EOF) {
			const char *how = a == ZSP_ASK_DENY		? "deny"
					  : a == ZSP_ASK_INTERRUPTED ? "interrupted"
								     : "end of input";
			gate_audit(g, ZSP_ANSWER_DENY, how);
			fprintf(stderr, "zsp-run: denied at the prompt (%s)\n", how);
			return ZSP_RUN_EDENIED;
		}
		if (a == ZSP_ASK_THREAD && !g->o->thread) {
			zsp_tty_say(t, "there is no thread: zsp-run was started without --thread ID\n");
			continue;
		}
		if (!g->store) {
			if (a == ZSP_ASK_ONCE)
				return 0;  /* a yes for this run needs nothing stored */
			zsp_tty_say(t, "the grant store could not be opened: only [o]nce or [d]eny\n");
			continue;
		}
		char err[512];
		if (gate_grant(g, a, err, sizeof(err)) != 0) {
			zsp_tty_say(t, "the grant could not be stored: ");
			zsp_tty_show(t, err);
			zsp_tty_say(t, "\n");
			if (a != ZSP_ASK_ONCE)
				continue;
			gate_audit(g, ZSP_ANSWER_ALLOW, "once");
			return 0;
		}
		/* Decide again rather than run: the trail then shows the grant that allowed it (and a
		 * once grant is consumed by this very lookup). */
		int rc = gate_decide(g);
		if (rc != 0)
			return rc;
		if (g->out.answer == ZSP_ANSWER_DENY) {
			print_denied(&g->out);
			return ZSP_RUN_EDENIED;
		}
		/* Still `ask`: the grant was not read back (the store failed, or a concurrent run with
		 * the same command consumed the once grant). The person's yes holds for this run. */
		if (g->out.answer != ZSP_ANSWER_ALLOW)
			gate_audit(g, ZSP_ANSWER_ALLOW, a == ZSP_ASK_ONCE ? "once" : a == ZSP_ASK_THREAD ? "thread" : "project");
		return 0;
	}
}


/* zsp-run -c: the decision before the run. 0 to run the command, else the exit status. */
static int gate(const struct run_opts *o, const zsp_ir *ir, const zsp_ir_policy *p)
{
	struct gate g = { .o = o, .p = p };
	const char *ws = param_value(o, "WORKSPACE"), *hm = param_value(o, "HOME");
	/* copies: the defaults live in static storage that getpwuid() may reuse */
	char *workspace = ws ? strdup(ws) : NULL, *home = hm ? strdup(hm) : NULL;
	const char *pdir = o->project ? o->project : workspace;
	char project[PATH_MAX];
	struct stat st;
	int rc = 0;
	if (!workspace || (hm && !home)) {
		fprintf(stderr, "zsp-run: %s\n", ws ? "out of memory" : "WORKSPACE has no value");
		rc = ws ? ZSP_RUN_ESETUP : ZSP_EUSAGE;
		goto out;
	}
	const char *why = NULL;
	if (!realpath(pdir, project))
		why = strerror(errno);
	else if (stat(project, &st) != 0 || !S_ISDIR(st.st_mode))
		why = "not a directory";
	if (why) {
		fprintf(stderr, "zsp-run: %s %s: %s\n", o->project ? "--project" : "the project directory (WORKSPACE)",
			pdir, why);
		rc = ZSP_EUSAGE;
		goto out;
	}
	g.project = project;

	char err[512];
	zsp_store_where where = { .state_dir = o->state_dir, .runtime_dir = o->runtime_dir };
	if (zsp_store_open(&where, &g.store, err, sizeof(err)) != 0) {
		/* fail closed: without grants the oracle's answer stands, and nothing is recorded */
		fprintf(stderr, "zsp-run: %s\nzsp-run: deciding without grants; nothing is recorded\n", err);
		g.store = NULL;
	}
	g.decider = zsp_decider_new(p, g.store, workspace, home);
	g.request = terminal_request(o->command);
	if (!g.decider || !g.request || zsp_policy_hash(ir, p, g.policy_hash) != 0) {
		fprintf(stderr, "zsp-run: out of memory\n");
		rc = ZSP_RUN_ESETUP;
		goto out;
	}
	rc = gate_decide(&g);
	if (rc != 0)
		goto out;
	if (g.out.answer == ZSP_ANSWER_DENY) {
		print_denied(&g.out);
		rc = ZSP_RUN_EDENIED;
	} else if (g.out.answer == ZSP_ANSWER_ASK) {
		zsp_tty *t = zsp_tty_open();
		rc = t ? gate_ask(&g, t) : gate_no_terminal(&g);
		zsp_tty_close(t);
	}
out:
	if (g.decider)
		zsp_decider_free(g.decider);
	if (g.store)
		zsp_store_close(g.store);
	free(g.request);
	free(workspace);
	free(home);
	return rc;
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
	char *sh_c[] = { "sh", "-c", (char *)o->command, NULL };
	if (o->command) {
		rc = gate(o, zsp_policy_set_ir(set), p);
		if (rc != 0) {
			zsp_policy_set_free(set);
			return rc;
		}
		cmd = sh_c;
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
	enum {
		OPT_POLICY = 256,
		OPT_STRICT,
		OPT_NO_PROC,
		OPT_PRINT,
		OPT_DOCTOR,
		OPT_VERIFY,
		OPT_THREAD,
		OPT_PROJECT,
		OPT_STATE_DIR,
		OPT_RUNTIME_DIR,
	};
	static const struct option longopts[] = {
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "no-proc", no_argument, NULL, OPT_NO_PROC },
		{ "print", no_argument, NULL, OPT_PRINT },
		{ "doctor", no_argument, NULL, OPT_DOCTOR },
		{ "verify", no_argument, NULL, OPT_VERIFY },
		{ "thread", required_argument, NULL, OPT_THREAD },
		{ "project", required_argument, NULL, OPT_PROJECT },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "runtime-dir", required_argument, NULL, OPT_RUNTIME_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool doctor = false, verify = false;
	opterr = 0;
	int opt;
	while ((opt = getopt_long(argc, argv, "+p:D:I:W:c:", longopts, NULL)) != -1) {
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
		case 'c':
			if (o->command)
				return usage("%s", "-c given twice: one command per run");
			o->command = optarg;
			break;
		case OPT_THREAD:
			o->thread = optarg;
			break;
		case OPT_PROJECT:
			o->project = optarg;
			break;
		case OPT_STATE_DIR:
			o->state_dir = optarg;
			break;
		case OPT_RUNTIME_DIR:
			o->runtime_dir = optarg;
			break;
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
	if (!o->command && (o->thread || o->project || o->state_dir || o->runtime_dir))
		return usage("%s", "--thread, --project, --state-dir and --runtime-dir go with -c COMMAND");
	if (o->command && (doctor || verify || o->print))
		return usage("%s", "-c runs a command: it does not go with --doctor, --verify or --print");
	if (o->command && optind != argc)
		return usage("%s", "-c COMMAND is the whole command: give no other after it (or use -- COMMAND [ARG]...)");
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
	if (optind >= argc && !o->print && !o->command)
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
