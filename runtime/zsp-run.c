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

#include "compiler/compile.h"
#include "compiler/path.h"
#include "compiler/textesc.h"
#include "runtime/ask.h"
#include "runtime/cli.h"
#include "runtime/doctor.h"
#include "runtime/gitlayer.h"
#include "runtime/launch.h"
#include "runtime/sandbox.h"
#include "runtime/session.h"
#include "runtime/store.h"
#include "runtime/verify.h"
#include "runtime/walkindex.h"

extern char **environ;
extern const char zsp_default_policy[], zsp_default_credentials[];

/* The built-in policy (examples/workspace.zsp) and the files it includes, compiled in: it is
 * complete without an installation, and nothing on disk can stand in for its credentials list
 * (compiler/load.c looks the includes of a built-in file up here only). */
static const zsp_builtin_file builtin_files[] = {
	{ "workspace.zsp", zsp_default_policy },
	{ "credentials.zsp", zsp_default_credentials },
};

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
	"  --policy NAME      the policy to use when FILE defines several (its includes' aside)\n"
	"  -D NAME=VALUE      give parameter NAME a value (WORKSPACE defaults to the top of\n"
	"                     the git work tree holding the current directory, else that\n"
	"                     directory; HOME, what ~ means, to your home in the password\n"
	"                     database, not $HOME; TMPDIR (else /tmp), UID and USER to yours)\n"
	"  -I DIR             search DIR for included files\n"
	"  -W NAME, -Wno-NAME, -Werror, -Werror=NAME   warnings, as zspc; `unenforced` (a rule\n"
	"                     Linux cannot enforce as written) is on: -Wno-unenforced silences it\n"
	"  --strict           enforce the policy as written or not at all: every open, rename and\n"
	"                     link is judged against the glob rules when it is made, also for\n"
	"                     files that appear during the run (each costs a round trip to\n"
	"                     zsp-run: doc/linux.md \"Strict\"); a rule Linux cannot enforce even\n"
	"                     so refuses the run\n"
	"  --no-proc          no /proc in the sandbox (where a container forbids mounting it)\n"
	"  --print            print the bwrap options instead of running\n"
	"  -v, --verbose      print the environment handed to the sandbox (names and values: your\n"
	"                     own, on your stderr), the names env clear dropped, the command, and\n"
	"                     what the walk took from its index between runs\n"
	"  -c COMMAND         ask the policy about `terminal \"COMMAND\"` first (then the grants,\n"
	"                     then you on the terminal), and run it with /bin/sh -c when allowed\n"
	"  --shell PATH       -c: run it with PATH -c instead, and have the policy judge it as that\n"
	"                     shell runs it (one other than sh, dash, bash makes an allow ask)\n"
	"  --thread ID        -c: the agent thread (conversation) it runs for\n"
	"  --project DIR      -c: the project of `always in this project` (default: WORKSPACE)\n"
	"  --state-dir DIR    grants, audit trail (-c), the sandbox's caches and private /tmp\n"
	"                     (default: $XDG_STATE_HOME/zsp, else ~/.local/state/zsp)\n"
	"  --runtime-dir DIR  -c: thread grants (default: $XDG_RUNTIME_DIR/zsp)\n"
	"  --no-audit         -c: decide without the grant store and the audit trail when they\n"
	"                     cannot be opened or written (by default nothing runs then)\n"
	"  --doctor           check what the sandbox needs on this machine and say what is missing\n"
	"  --verify           run the policy's test expectations in the real sandbox and compare\n"
	"                     the kernel with the oracle (same as zspc --verify)\n"
	"  --help, --version\n"
	"\n"
	"exit: the command's status, 128+N when a signal N ended it; 127 when it is not found,\n"
	"      126 when it cannot be run (after a status from 1 to 127 zsp-run names the\n"
	"      variables env clear dropped); 125 when the sandbox cannot be set up or a -c\n"
	"      decision cannot be recorded (the command did not run);\n"
	"      121 when the command ran and what it left for the host to run could not all be\n"
	"      moved aside (what is moved is said on stderr);\n"
	"      64 usage; 1 policy errors;\n"
	"      -c: 122 denied, 123 approval needed and no terminal to ask on\n";

struct run_opts {
	const char *file, *policy;
	zsp_cli_compile cc;        /* -I -W -D --strict */
	bool no_proc, print, no_audit, verbose;
	const char *command, *thread, *project, *state_dir, *runtime_dir;  /* -c and its options */
	const char *shell;         /* --shell: what runs -c's command (NULL: /bin/sh) */
	zsp_builtin_params builtins;
};

/* Compiles the policy (or the built-in one) with this machine's built-in parameters, -D over
 * them, into compiler *c, whose diagnostics engine the lowering reports through as well. */
static int compile(struct run_opts *o, zsp_compiler **c, zsp_policy_set **set, const zsp_ir_policy **p)
{
	/* a rule Linux cannot enforce as written is said at every run (whoever runs the command
	 * relies on it); a WORKSPACE inside TMPDIR makes a rule shadowed: true, but not news */
	static const char *const preset[] = { "no-shadowed", NULL };
	zsp_cli_builtins(&o->builtins, &o->cc, NULL);
	zsp_cli_home_warning(&o->cc, &o->builtins);
	*c = zsp_cli_compiler(&o->cc, preset, &o->builtins);
	zsp_compiler_set_builtins(*c, builtin_files, sizeof(builtin_files) / sizeof(builtin_files[0]));
	int rc = o->file ? zsp_compile_file(*c, o->file, set)
			 : zsp_compile_builtin(*c, "workspace.zsp", set);
	if (rc != ZSP_OK)
		return rc;
	*p = zsp_cli_pick_policy(zsp_policy_set_ir(*set), o->policy);
	return *p ? ZSP_OK : ZSP_EUSAGE;
}

/* Text of the caller's (a name, a value, an argument) on stderr, escaped so that it cannot redraw
 * the terminal (compiler/textesc.h). */
static void put_shown(const char *s)
{
	char *e = zsp_text_escape(s);
	if (!e)
		zsp_die_oom();
	fputs(e, stderr);
	free(e);
}

/* Variables a shell sets for itself: their loss explains no failure. */
static bool shell_own(const char *name)
{
	static const char *const own[] = { "PWD", "OLDPWD", "SHLVL", "_" };
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strcmp(name, own[i]) == 0)
			return true;
	return false;
}

/* Does a variable name where a tool lives (RUSTUP_HOME, GOPATH, VIRTUAL_ENV...)? Such names
 * come first in the hint after a failure: they are what a toolchain misses. */
static bool names_a_place(const char *name)
{
	static const char *const suffixes[] = { "_HOME", "_ROOT", "_DIR", "_PREFIX", "PATH", "_ENV" };
	size_t n = strlen(name);
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t k = strlen(suffixes[i]);
		if (n > k && strcmp(name + n - k, suffixes[i]) == 0)
			return true;
	}
	return false;
}

/* The names env clear dropped, ", "-separated: all of them, sorted; or (a hint) at most max,
 * those that name a place first, without the shell's own, and how many more. */
static void put_dropped(const zsp_bwrap_plan *plan, size_t max)
{
	size_t shown = 0, more = 0;
	for (int pass = max ? 0 : 1; pass < 2; pass++) {
		for (size_t i = 0; i < plan->ndropped; i++) {
			const char *name = plan->dropped[i];
			if ((i && strcmp(name, plan->dropped[i - 1]) == 0) || (max && shell_own(name)) ||
			    (max && names_a_place(name) != (pass == 0)))
				continue;
			if (max && shown == max) {
				more++;
				continue;
			}
			fputs(shown++ ? ", " : "", stderr);
			put_shown(name);
		}
	}
	if (more)
		fprintf(stderr, " and %zu more", more);
}

/* -v: the environment the sandbox gets (the plan's --setenv pairs, values included: they are
 * the caller's own, shown on the caller's stderr), what env clear kept out (names only) and the
 * command. */
static void print_verbose(const zsp_launch *l, char *const *cmd)
{
	fputs("zsp-run: the sandbox's environment (bwrap adds PWD):\n", stderr);
	for (size_t i = 0; i + 2 < l->plan.argc; i++) {
		if (strcmp(l->plan.argv[i], "--setenv") != 0)
			continue;
		fputs("  ", stderr);
		put_shown(l->plan.argv[i + 1]);
		fputc('=', stderr);
		put_shown(l->plan.argv[i + 2]);
		fputc('\n', stderr);
		i += 2;
	}
	if (l->plan.ndropped) {
		fputs("zsp-run: the policy's env clear dropped: ", stderr);
		put_dropped(&l->plan, 0);
		fputc('\n', stderr);
	}
	fputs("zsp-run: the command:", stderr);
	for (size_t i = 0; cmd && cmd[i]; i++) {
		char *e = zsp_text_escape(cmd[i]);
		char *q = e ? zsp_shell_quote(e) : NULL;
		if (!q)
			zsp_die_oom();
		fprintf(stderr, " %s", q);
		free(e);
		free(q);
	}
	fprintf(stderr, "%s\n", l->exec_step ? " (through " ZSP_EXEC_PATH ")" : "");
	fflush(stderr);
}

/* After a command that failed: which variables env clear kept from it, in case it needed one
 * (RUSTUP_HOME, a VIRTUAL_ENV). Names only, never values; nothing when it dropped none but the
 * shell's own. */
static void hint_dropped(const zsp_launch *l)
{
	size_t n = 0;
	for (size_t i = 0; i < l->plan.ndropped; i++)
		n += !shell_own(l->plan.dropped[i]);
	if (!n)
		return;
	fflush(stderr);
	fputs("zsp-run: the policy's env clear dropped: ", stderr);
	put_dropped(&l->plan, 8);
	fputs(" (zsp-run -v shows the environment handed in)\n", stderr);
}

static int print_plan(const zsp_launch *l)
{
	zsp_buf out = { 0 };
	zsp_bwrap_argv_text(&l->plan, false, &out);
	size_t len;
	char *text = zsp_buf_take(&out, &len);
	if (!text)
		zsp_die_oom();
	int rc = zsp_cli_write_output(NULL, text, len);
	free(text);
	return rc;
}

/* Everything one -c decision needs, and what it found. */
struct gate {
	const struct run_opts *o;
	const zsp_ir_policy *p;
	zsp_session *s;            /* the one decision path, as zspc --query and embedders use */
	zsp_grants *grants;        /* NULL: could not be opened (then only with --no-audit) */
	char *request;
	char project[PATH_MAX];    /* canonical */
	int answer;                /* the last decision */
	char reason[64], rule[1024];
};

/* Decides (again). 0, or an exit status when zsp-run must stop. A decision that had to be
 * recorded and was not is not acted on (doc/store.md "When the audit trail cannot be written"). */
static int gate_decide(struct gate *g)
{
	zsp_session_result r;
	int rc = zsp_session_decide_text(g->s, g->request, false, &r);
	if (rc == ZSP_EUSAGE) {
		zsp_warn("-c: %s", r.error);
		return ZSP_EUSAGE;
	}
	if (rc == ZSP_EINTERNAL)
		zsp_die_oom();
	if (r.x->store_error && g->grants)
		zsp_warn("the grants could not be read, deciding without them: %s", r.x->store_error);
	if (rc == ZSP_EIO) {
		zsp_warn("the decision cannot be recorded in the audit trail, so the command does not "
			 "run: %s\n  (zsp-run --no-audit decides without the trail)", r.x->audit_error);
		return ZSP_RUN_ESETUP;
	}
	char loc[512];
	const char *where = zsp_loc_string(loc, sizeof(loc), r.v->loc);
	g->answer = r.answer;
	snprintf(g->reason, sizeof(g->reason), "%s", r.v->reason);
	if (where && r.v->rule)
		snprintf(g->rule, sizeof(g->rule), "%s: %s", where, r.v->rule);
	else   /* no rule decided (a shell it cannot judge, input it cannot split): say why */
		snprintf(g->rule, sizeof(g->rule), "%s", r.v->rule ? r.v->rule : where ? where : r.v->detail ? r.v->detail : "");
	return 0;
}

/* A record of what the person answered where no grant could carry it (a deny, or an allow
 * whose grant could not be stored or did not answer). 0, or the exit status: an allow that
 * cannot be recorded does not run. */
static int gate_audit(struct gate *g, int answer, const char *how)
{
	char err[1024];
	if (zsp_session_record_answer(g->s, g->request, answer, how, err, sizeof(err)) == ZSP_OK)
		return 0;
	zsp_warn("the answer cannot be recorded in the audit trail: %s", err);
	return answer == ZSP_ANSWER_DENY ? 0 : ZSP_RUN_ESETUP;
}

static void print_denied(const struct gate *g)
{
	if (g->rule[0])
		zsp_warn("denied: %s (%s)", g->reason, g->rule);
	else
		zsp_warn("denied: %s", g->reason);
}

/* No terminal: say what would approve the command, as a command to copy. */
static int gate_no_terminal(struct gate *g)
{
	const struct run_opts *o = g->o;
	zsp_warn("approval needed: %s%s%s%s, and there is no terminal to ask on", g->reason,
		 g->rule[0] ? " (" : "", g->rule, g->rule[0] ? ")" : "");
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
		zsp_die_oom();
	} else if (!zsp_text_plain(thread ? thread : "") || !zsp_text_plain(state ? state : "") ||
		   !zsp_text_plain(policy)) {
		zsp_warn("--thread, --state-dir or the policy's name holds control characters: the "
			 "command that allows this cannot be printed");
	} else {
		if (!plain)
			zsp_warn("the command holds control or invisible characters, shown escaped "
				 "(\\n, \\xHH, \\u{...})");
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

/* Adds the grant the person chose, through the same API an embedder uses. 0, or -1 with why
 * in err (errlen bytes). */
static int gate_grant(struct gate *g, zsp_ask_answer a, char *err, size_t errlen)
{
	struct zsp_grant_spec spec = { .tool = "terminal", .match = ZSP_MATCH_EXACT,
				       .pattern = g->o->command, .decision = ZSP_ANSWER_ALLOW,
				       .policy = g->p->name };
	if (a == ZSP_ASK_ONCE) {
		spec.scope = ZSP_GRANT_ONCE;
		spec.thread = g->o->thread;
	} else if (a == ZSP_ASK_THREAD) {
		spec.scope = ZSP_GRANT_THREAD;
		spec.thread = g->o->thread;
	} else {
		spec.scope = ZSP_GRANT_PROJECT;
		spec.project = g->project;
	}
	return zsp_grants_add(g->grants, &spec, NULL, err, errlen) == ZSP_OK ? 0 : -1;
}

/* The policy asks and there is a terminal: put the question to the person there. 0 to run,
 * else the exit status. */
static int gate_ask(struct gate *g, zsp_tty *t)
{
	zsp_tty_say(t, "zsp-run: the policy asks before running\n  ");
	zsp_tty_show(t, g->o->command);
	zsp_tty_say(t, "\n  because: ");
	zsp_tty_show(t, g->reason);
	if (g->rule[0]) {
		zsp_tty_say(t, " (");
		zsp_tty_show(t, g->rule);
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
			zsp_warn("denied at the prompt (%s)", how);
			return ZSP_RUN_EDENIED;
		}
		if (a == ZSP_ASK_THREAD && !g->o->thread) {
			zsp_tty_say(t, "there is no thread: zsp-run was started without --thread ID\n");
			continue;
		}
		if (!g->grants) {
			if (a == ZSP_ASK_ONCE)
				return 0;  /* a yes for this run needs nothing stored */
			zsp_tty_say(t, "the grant store could not be opened: only [o]nce or [d]eny\n");
			continue;
		}
		char err[1024];
		if (gate_grant(g, a, err, sizeof(err)) != 0) {
			zsp_tty_say(t, "the grant could not be stored: ");
			zsp_tty_show(t, err);
			zsp_tty_say(t, "\n");
			if (a != ZSP_ASK_ONCE)
				continue;
			return gate_audit(g, ZSP_ANSWER_ALLOW, "once");
		}
		/* Decide again rather than run: the trail then shows the grant that allowed it (and a
		 * once grant is consumed by this very lookup). */
		int rc = gate_decide(g);
		if (rc != 0)
			return rc;
		if (g->answer == ZSP_ANSWER_DENY) {
			print_denied(g);
			return ZSP_RUN_EDENIED;
		}
		/* Still `ask`: the grant was not read back (the store failed, or a concurrent run with
		 * the same command consumed the once grant). The person's yes holds for this run. */
		if (g->answer != ZSP_ANSWER_ALLOW)
			return gate_audit(g, ZSP_ANSWER_ALLOW, a == ZSP_ASK_ONCE	? "once"
							       : a == ZSP_ASK_THREAD ? "thread"
										 : "project");
		return 0;
	}
}

/* The session for -c: the grant store attached (recording every decision unless --no-audit).
 * 0, or the exit status. A store that cannot be opened means no audit trail: the command does
 * not run unless --no-audit says to decide without one. */
static int gate_session(struct gate *g, const zsp_policy_set *set, const char *workspace,
			const char *home)
{
	const struct run_opts *o = g->o;
	int rc = zsp_session_new(set, g->p->name, workspace, home, &g->s);
	if (rc == ZSP_OK)
		rc = zsp_session_set_shell(g->s, o->shell);
	if (rc == ZSP_EINTERNAL)
		zsp_die_oom();
	if (rc != ZSP_OK) {
		zsp_warn("the policy cannot be asked: WORKSPACE and HOME must be absolute paths, and every "
			 "parameter its rules name needs a value (-D NAME=VALUE)");
		return ZSP_EUSAGE;
	}
	zsp_store_where where = { .state_dir = o->state_dir, .runtime_dir = o->runtime_dir };
	char err[1024];
	if (zsp_grants_open_at(&where, &g->grants, err, sizeof(err)) == ZSP_OK) {
		rc = zsp_session_use_grants(g->s, g->grants, o->thread, g->project, !o->no_audit);
	} else if (o->no_audit) {
		zsp_warn("%s", err);
		zsp_warn("--no-audit: deciding without grants; nothing is recorded");
		rc = ZSP_OK;
	} else {
		zsp_warn("%s", err);
		zsp_warn("without the grant store there is no audit trail, so nothing runs "
			 "(zsp-run --no-audit decides without grants and records nothing)");
		rc = ZSP_RUN_ESETUP;
	}
	if (rc == ZSP_EINTERNAL)
		zsp_die_oom();
	return rc;
}

/* zsp-run -c: the decision before the run. 0 to run the command, else the exit status. */
static int gate(const struct run_opts *o, const zsp_policy_set *set, const zsp_ir_policy *p)
{
	struct gate g = { .o = o, .p = p };
	const char *workspace = zsp_cli_param(&o->cc, &o->builtins, "WORKSPACE");
	const char *home = zsp_cli_param(&o->cc, &o->builtins, "HOME");
	const char *pdir = o->project ? o->project : workspace;
	struct stat st;
	int rc = 0;
	if (!workspace) {
		zsp_warn("WORKSPACE has no value");
		return ZSP_EUSAGE;
	}
	const char *why = NULL;
	if (!realpath(pdir, g.project))
		why = strerror(errno);
	else if (stat(g.project, &st) != 0 || !S_ISDIR(st.st_mode))
		why = "not a directory";
	if (why) {
		zsp_warn("%s %s: %s", o->project ? "--project" : "the project directory (WORKSPACE)", pdir, why);
		return ZSP_EUSAGE;
	}
	const char *args[] = { o->command };
	zsp_ir_request req = { "terminal", args, 1 };
	if (!(g.request = zsp_request_text(&req)))
		zsp_die_oom();
	if ((rc = gate_session(&g, set, workspace, home)) == 0 && (rc = gate_decide(&g)) == 0) {
		if (g.answer == ZSP_ANSWER_DENY) {
			print_denied(&g);
			rc = ZSP_RUN_EDENIED;
		} else if (g.answer == ZSP_ANSWER_ASK) {
			zsp_tty *t = zsp_tty_open();
			rc = t ? gate_ask(&g, t) : gate_no_terminal(&g);
			zsp_tty_close(t);
		}
	}
	zsp_session_free(g.s);
	zsp_grants_close(g.grants);
	free(g.request);
	return rc;
}

/* What a writable root must not be by accident: `/`, the home and the directories above it, the
 * system's own. NULL when path (canonical) is none of them. */
static const char *risky_root(const char *path, const char *home)
{
	static const char *const system_trees[] = {
		"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot", "/proc",
		"/sys", "/dev", "/root", "/var/lib", "/var/log", "/var/cache", "/var/spool", "/var/mail",
		"/var/backups", "/snap",
	};
	static const char *const system_dirs[] = { "/var", "/opt", "/srv", "/run", "/mnt", "/media" };
	if (strcmp(path, "/") == 0)
		return "the root directory";
	if (home && strcmp(path, home) == 0)
		return "your home directory";
	if (home && zsp_path_is_prefix(path, home))
		return "a directory above your home";
	if (home && zsp_path_is_prefix(home, path))
		return NULL;   /* a project in the home (even when the home is /root) */
	for (size_t i = 0; i < sizeof(system_trees) / sizeof(system_trees[0]); i++)
		if (zsp_path_is_prefix(system_trees[i], path))
			return "a system directory";
	for (size_t i = 0; i < sizeof(system_dirs) / sizeof(system_dirs[0]); i++)
		if (strcmp(system_dirs[i], path) == 0)
			return "a system directory";
	return NULL;
}

/* Was every parameter in written given with -D? (A literal path has none: deliberate too.) */
static bool deliberate(const struct run_opts *o, const char *written)
{
	for (const char *d = strstr(written, "${"); d; d = strstr(d + 2, "${")) {
		const char *end = strchr(d, '}');
		size_t len = end ? (size_t)(end - d - 2) : strlen(d + 2);
		bool given = false;
		for (size_t i = 0; i < o->cc.ndefines; i++)
			given |= strlen(o->cc.define_names[i]) == len && strncmp(o->cc.define_names[i], d + 2, len) == 0;
		if (!given)
			return false;
	}
	return true;
}

/* A writable root that a parameter made `/`, the home or a system directory without anyone
 * naming it (WORKSPACE defaulting to ~ for a command started there, TMPDIR=/etc) is refused:
 * the sandbox could then write the user's dotfiles, zsp's grants or the system. Reported on d. */
static void check_roots(const struct run_opts *o, const zsp_ir_policy *p, zsp_diag *d)
{
	const char *home = zsp_cli_param(&o->cc, &o->builtins, "HOME");
	char real_home[PATH_MAX];
	if (home && realpath(home, real_home))
		home = real_home;
	for (size_t i = 0; i < p->nfs; i++) {
		const zsp_ir_fs_rule *r = &p->fs[i];
		if (r->access != ZSP_ACCESS_WRITE || r->protect || r->cache || r->glob || !r->written ||
		    strstr(r->path, "${") || deliberate(o, r->written))
			continue;
		/* a private /tmp is the sandbox's own directory: the host's /tmp is not written */
		if (p->tmp_private && strcmp(r->path, "/tmp") == 0)
			continue;
		/* the file the rule names: its pattern unescaped (a workspace `proj[1]` is `proj\[1]`) */
		char lit[PATH_MAX], real[PATH_MAX];
		if (!zsp_path_unescape_buf(r->path, lit, sizeof(lit)))
			continue;   /* longer than any path: bwrap's plan refuses it */
		const char *path = realpath(lit, real) ? real : lit;
		/* through a symbolic link: maybe one a sandbox planted where it could write before
		 * (TMPDIR=$TMPDIR/x, x a link a previous run made) */
		const char *what = strcmp(path, lit) != 0 ? "reached through a symbolic link"
							  : risky_root(path, home);
		if (!what)
			continue;
		zsp_diag_error(d, r->loc, "the writable root `%s` is %s, %s: the sandbox could change what "
			       "the host runs, so it is not started", r->written, r->path, what);
		const char *name = strstr(r->written, "${");
		const char *end = name ? strchr(name, '}') : NULL;
		if (name && end && strcmp(end + 1, "") == 0 && name == r->written)
			zsp_diag_hint(d, "if that is meant, say so: -D %.*s=%s", (int)(end - name - 2), name + 2, r->path);
		else
			zsp_diag_hint(d, "if that is meant, say so: give its parameters with -D, or write the path in the policy");
	}
}

/* zsp's own state: the grant store and audit trail, the thread grants. */
static size_t state_dirs(const struct run_opts *o, char dirs[][PATH_MAX], size_t max)
{
	const char *xdg_state = getenv("XDG_STATE_HOME"), *xdg_run = getenv("XDG_RUNTIME_DIR");
	const char *env_home = getenv("HOME"), *home = zsp_builtin_params_get(&o->builtins, "HOME");
	size_t n = 0;
	if (o->state_dir && n < max)
		snprintf(dirs[n++], PATH_MAX, "%s", o->state_dir);
	if (o->runtime_dir && n < max)
		snprintf(dirs[n++], PATH_MAX, "%s", o->runtime_dir);
	if (xdg_state && xdg_state[0] == '/' && n < max)
		snprintf(dirs[n++], PATH_MAX, "%s/zsp", xdg_state);
	if (xdg_run && xdg_run[0] == '/' && n < max)
		snprintf(dirs[n++], PATH_MAX, "%s/zsp", xdg_run);
	if (env_home && env_home[0] == '/' && n < max)
		snprintf(dirs[n++], PATH_MAX, "%s/.local/state/zsp", env_home);
	if (home && n < max)
		snprintf(dirs[n++], PATH_MAX, "%s/.local/state/zsp", home);
	return n;
}

/* Where the layers of git directories are made: zsp's state directory (hidden from the sandbox,
 * like the grants), as the grant store finds it. NULL when there is none. */
static char *layer_base(const struct run_opts *o, char *why_not, size_t size)
{
	char *state = zsp_state_dir(o->state_dir);
	if (!state) {
		snprintf(why_not, size, "no state directory: set XDG_STATE_HOME or HOME, or give --state-dir");
		return NULL;
	}
	char *base = NULL;
	const char *why = NULL;
	if (zsp_gitlayer_base(state, &base, &why) != ZSP_OK)
		snprintf(why_not, size, "%s", why);
	free(state);
	return base;
}

/* Without a layer, a repository's config is a read-only mount: say so where there is one. */
static void layer_warning(const zsp_launch *l, const char *why)
{
	for (size_t i = 0; i < l->plan.nfixed; i++) {
		size_t n = strlen(l->plan.fixed[i]);
		if (n > 12 && strcmp(l->plan.fixed[i] + n - 12, "/.git/config") == 0) {
			zsp_warn("warning: %s is read-only in the sandbox (git config and git remote add fail "
				 "there): %s", l->plan.fixed[i], why);
			return;
		}
	}
}

/* The policy's own state for this workspace (its caches and private /tmp), when it needs one:
 * made or opened in zsp's state directory. 0, or the exit status after saying why. */
static int open_sandbox(const struct run_opts *o, const zsp_ir_policy *p, zsp_sandbox *sb)
{
	if (!zsp_linux_needs_state(p))
		return 0;
	const char *ws = zsp_cli_param(&o->cc, &o->builtins, "WORKSPACE");
	char workspace[PATH_MAX], err[PATH_MAX + 512];
	char *state = zsp_state_dir(o->state_dir);
	if (!ws || !realpath(ws, workspace)) {
		zsp_warn("the workspace %s cannot be found: %s", ws ? ws : "(none)", strerror(errno));
		free(state);
		return ZSP_RUN_ESETUP;
	}
	if (!state) {
		zsp_warn("the sandbox's caches and /tmp are kept in zsp's state directory, and there is none: "
			 "set XDG_STATE_HOME or HOME to an absolute path, or give --state-dir");
		return ZSP_RUN_ESETUP;
	}
	int rc = zsp_sandbox_open(state, p->name, workspace, sb, err, sizeof(err));
	free(state);
	if (rc == ZSP_EINTERNAL)
		zsp_die_oom();
	if (rc != ZSP_OK) {
		zsp_warn("the sandbox's caches and /tmp cannot be kept, so the command does not run: %s", err);
		return ZSP_RUN_ESETUP;
	}
	return 0;
}

static int run(struct run_opts *o, char *const *cmd)
{
	if (zsp_wsl_version() == 1) {
		zsp_warn("this is WSL1, which has no user namespaces: the sandbox cannot be built\n"
			 "  remedy: convert the distribution to WSL2 (wsl --set-version DISTRO 2)");
		return ZSP_RUN_ESETUP;
	}
	zsp_compiler *c = NULL;
	zsp_policy_set *set = NULL;
	const zsp_ir_policy *p = NULL;
	int rc = compile(o, &c, &set, &p);
	if (rc != ZSP_OK) {
		zsp_cli_summary(c);
		zsp_compiler_free(c);
		zsp_policy_set_free(set);
		return rc == ZSP_EPOLICY || rc == ZSP_EUSAGE || rc == ZSP_ENOINPUT ? rc : ZSP_RUN_ESETUP;
	}
	char *sh_c[] = { (char *)(o->shell ? o->shell : "/bin/sh"), "-c", (char *)o->command, NULL };
	char *cwd = getcwd(NULL, 0);
	zsp_arena *a = zsp_arena_new();
	zsp_diag *d = zsp_compiler_diag(c);
	zsp_launch l;
	bool ready = false;
	char hidden[6][PATH_MAX];
	const char *hidden_ptrs[6];
	size_t nhidden = state_dirs(o, hidden, 6);
	for (size_t i = 0; i < nhidden; i++)
		hidden_ptrs[i] = hidden[i];
	const zsp_ir *ir = zsp_policy_set_ir(set);
	const char *env_home = getenv("HOME");
	zsp_linux_opts lo = {
		.chdir = cwd, .environ = environ, .proc = !o->no_proc,
		.home = env_home && env_home[0] == '/' ? env_home : zsp_builtin_params_get(&o->builtins, "HOME"),
		.readonly = ir->inputs, .nreadonly = ir->ninputs,
		.hidden = hidden_ptrs, .nhidden = nhidden, .exec_step = true, .runner_masks = true,
	};
	/* the walk's index between runs: zsp's state, hidden from the sandbox like the rest */
	char *ix_state = zsp_state_dir(o->state_dir);
	FILE *notes = o->verbose ? stderr : NULL;
	zsp_walk_index *ix = !ix_state ? NULL
			     : o->print ? zsp_walkindex_new_readonly(ix_state, notes) : zsp_walkindex_new(ix_state, notes);
	free(ix_state);
	lo.walk_index = ix;
	lo.opens_decided = o->cc.strict;
	char why_no_layers[PATH_MAX + 128] = "";
	char *layers = o->print ? NULL : layer_base(o, why_no_layers, sizeof(why_no_layers));
	lo.layer_dir = layers;
	if (!a)
		zsp_die_oom();
	zsp_sandbox sb = { .fd = -1 };
	check_roots(o, p, d);
	if (!cwd) {
		zsp_warn("cannot find the current directory");
		rc = ZSP_RUN_ESETUP;
	} else if (d->errors) {
		rc = ZSP_EPOLICY;
	} else if ((rc = open_sandbox(o, p, &sb)) != 0) {
		/* said why */
	} else if ((lo.sandbox_dir = sb.dir), (rc = zsp_launch_prepare(&l, p, a, d, &lo)) != ZSP_OK) {
		rc = rc == ZSP_EPOLICY ? ZSP_EPOLICY : ZSP_RUN_ESETUP;
		zsp_launch_release(&l);
	} else {
		l.sandbox = sb.fd >= 0 ? &sb : NULL;
		ready = true;
		l.layer_base = layers;
		if (!layers && !o->print)
			layer_warning(&l, why_no_layers);
	}
	char workspace[PATH_MAX];
	const char *ws = zsp_cli_param(&o->cc, &o->builtins, "WORKSPACE");
	if (ready && ws && realpath(ws, workspace))
		l.workspace = workspace;
	/* the run's one summary line, before the command's own output */
	zsp_cli_summary(c);
	if (ready && o->command && (rc = gate(o, set, p)) != 0) {
		zsp_launch_release(&l);
	} else if (ready && o->print) {
		rc = print_plan(&l);
		zsp_launch_release(&l);
	} else if (ready) {
		const char *why = NULL;
		if (o->command)
			cmd = sh_c;
		if (o->verbose)
			print_verbose(&l, cmd);
		rc = zsp_launch_run(&l, cmd, &why);
		/* the command ran and failed (its own 125 comes without a why) */
		if (rc >= 1 && rc <= 127 && rc != ZSP_RUN_EGUARD && !(rc == ZSP_RUN_ESETUP && why))
			hint_dropped(&l);
		if (rc == ZSP_RUN_EGUARD) {
			zsp_warn("error: %s", why);
		} else if (rc == ZSP_RUN_ESETUP && why) {
			zsp_warn("the sandbox could not be set up, so %s did not run: %s", cmd[0], why);
			zsp_doctor_explain(stderr);
		}
		zsp_launch_release(&l);
	}
	zsp_sandbox_close(&sb);
	zsp_arena_free(a);
	zsp_gitlayer_base_remove(layers);   /* when empty: no run, or no layer was needed */
	free(layers);
	zsp_walkindex_free(ix);
	free(cwd);
	zsp_compiler_free(c);
	zsp_policy_set_free(set);
	return rc;
}

/* *dir made absolute in buf (against the current directory) when it is relative. */
static bool absolute_dir(const char **dir, char buf[PATH_MAX])
{
	if (!*dir || (*dir)[0] == '/')
		return true;
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)) || snprintf(buf, PATH_MAX, "%s/%s", cwd, *dir) >= PATH_MAX)
		return false;
	*dir = buf;
	return true;
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
		OPT_NO_AUDIT,
		OPT_SHELL,
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
		{ "no-audit", no_argument, NULL, OPT_NO_AUDIT },
		{ "shell", required_argument, NULL, OPT_SHELL },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool doctor = false, verify = false;
	opterr = 0;
	int opt;
	while ((opt = getopt_long(argc, argv, "+p:D:I:W:c:v", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			o->file = optarg;
			break;
		case OPT_POLICY:
			o->policy = optarg;
			break;
		case 'D':
			if (zsp_cli_define(&o->cc, optarg) != ZSP_OK)
				return ZSP_EUSAGE;
			break;
		case 'I':
			if (zsp_cli_include(&o->cc, optarg) != ZSP_OK)
				return ZSP_EUSAGE;
			break;
		case 'W':
			if (zsp_cli_warning(&o->cc, optarg) != ZSP_OK)
				return ZSP_EUSAGE;
			break;
		case 'c':
			if (o->command)
				return zsp_usage_error("%s", "-c given twice: one command per run");
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
		case OPT_NO_AUDIT:
			o->no_audit = true;
			break;
		case OPT_RUNTIME_DIR:
			o->runtime_dir = optarg;
			break;
		case OPT_SHELL:
			if (optarg[0] != '/')
				return zsp_usage_error("--shell %s: give the shell's absolute path (e.g. /bin/bash)", optarg);
			o->shell = optarg;
			break;
		case OPT_STRICT:
			o->cc.strict = true;
			break;
		case 'v':
			o->verbose = true;
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
			printf("zsp-run %s%s\n", zsp_version(), zsp_cli_build_note());
			return fflush(stdout) == 0 ? 0 : ZSP_EIO;
		default:
			if (optopt) {
				char oc[2] = { (char)optopt, 0 };
				return zsp_usage_error("option -%s needs an argument or is unknown", oc);
			}
			return zsp_usage_error("unknown option `%s`", argv[optind - 1]);
		}
	}
	/* absolute: the directories are hidden from the sandbox by path, and named to bwrap */
	static char state_abs[PATH_MAX], runtime_abs[PATH_MAX];
	if (!absolute_dir(&o->state_dir, state_abs) || !absolute_dir(&o->runtime_dir, runtime_abs))
		return zsp_usage_error("%s", "--state-dir or --runtime-dir is too long, or the current directory is gone");
	if (!o->command && (o->thread || o->project || o->runtime_dir || o->no_audit || o->shell))
		return zsp_usage_error("%s", "--thread, --project, --runtime-dir, --no-audit and --shell go with -c COMMAND");
	if (o->command && (doctor || verify || o->print))
		return zsp_usage_error("%s", "-c runs a command: it does not go with --doctor, --verify or --print");
	if (o->command && optind != argc)
		return zsp_usage_error("%s", "-c COMMAND is the whole command: give no other after it (or use -- COMMAND [ARG]...)");
	if (doctor) {
		if (optind != argc || verify)
			return zsp_usage_error("%s", "--doctor takes no other arguments");
		return zsp_doctor(stdout) ? 0 : ZSP_RUN_ESETUP;
	}
	if (verify) {
		if (optind != argc - 1)
			return zsp_usage_error("%s", "--verify needs exactly one policy file");
		if (o->file || o->print)
			return zsp_usage_error("%s", "--verify takes the policy file as its argument, without -p or --print");
		struct zsp_verify_opts vo = { .file = argv[optind], .policy = o->policy, .includes = o->cc.includes,
					      .nincludes = o->cc.nincludes, .no_proc = o->no_proc };
		return zsp_verify(&vo);
	}
	if (optind >= argc && !o->print && !o->command)
		return zsp_usage_error("%s", "no command given: zsp-run [OPTIONS] -- COMMAND [ARG]...");
	return run(o, argv + optind);
}

int main(int argc, char **argv)
{
	static struct run_opts o;   /* static: zero without a memset of its 12 KiB of paths */
	zsp_cli_init("zsp-run");
	zsp_cli_compile_init(&o.cc, argc);
	int rc = parse_and_run(&o, argc, argv);
	zsp_cli_compile_free(&o.cc);
	return rc;
}
