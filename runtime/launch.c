/* launch.c: starting bwrap for one sandboxed command. bwrap gets its options through a memfd
 * (--args: nothing of the environment shows in ps), the BPF through another, zsp's exec step
 * through a descriptor of the file checked here, an empty environment, and no descriptor but
 * stdio and its own; zsp-run stays as the parent to remove placeholders after the run and to
 * report how it ended. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/path.h"
#include "runtime/cli.h"
#include "runtime/gitlayer.h"
#include "runtime/guard.h"
#include "runtime/launch.h"
#include "runtime/mask.h"
#include "runtime/netproxy.h"
#include "runtime/pty.h"
#include "runtime/supervise.h"

#ifndef BWRAP_PATH
#define BWRAP_PATH "/usr/bin/bwrap"
#endif
#ifndef ZSP_EXEC_INSTALLED
#define ZSP_EXEC_INSTALLED "/usr/libexec/zsp/zsp-exec"
#endif
#ifndef ZSP_BINDIR
#define ZSP_BINDIR "/usr/bin"
#endif

/* The descriptors bwrap is given: ZSP_FD_SECCOMP, ZSP_FD_EMPTY and ZSP_FD_EXEC (linux.h) are
 * the argv's; these are the invocation's; FD_STATE and up: the descriptors of the sandbox's own
 * directories (--bind-fd), then nothing. */
enum { FD_ARGS = 5, FD_STATUS = 6, FD_READY = 8, FD_NOTIFY_FILTER = 9, FD_NOTIFY_SOCK = 10, FD_MASKS = 11,
       FD_NET = 12, FD_STATE = 13, MAX_STATE_FDS = 64 };
enum { NFDS = 10 };  /* seccomp, empty, args, status, exec, ready, notify filter, notify socket,
		      * masks socket, net socket */

const char *zsp_bwrap_path(void)
{
	const char *test = zsp_cli_test_override("ZSP_BWRAP");
	return test ? test : BWRAP_PATH;
}

const char *zsp_exec_path(void)
{
	static char beside[PATH_MAX];
	char self[PATH_MAX], bindir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash = n > 0 ? (self[n] = 0, strrchr(self, '/')) : NULL;
	size_t dirlen = slash ? (size_t)(slash - self) : 0;
	if (!slash || dirlen + sizeof("/zsp-exec") > sizeof(beside))
		return ZSP_EXEC_INSTALLED;
	*slash = 0;
	if (realpath(ZSP_BINDIR, bindir) && strcmp(bindir, self) == 0)
		return ZSP_EXEC_INSTALLED;
	memcpy(beside, self, dirlen);
	memcpy(beside + dirlen, "/zsp-exec", sizeof("/zsp-exec"));
	return beside;
}

/* The exec step, opened for bwrap's --ro-bind-fd (which binds that very file: doc/facts.md
 * §bwrap): a regular file that can be executed. The descriptor, or -1 with why in msg. */
static int open_exec_step(char *msg, size_t size)
{
	const char *path = zsp_exec_path();
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	const char *why = NULL;
	if (fd < 0)
		why = strerror(errno);
	else if (fstat(fd, &st) != 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR))
		why = "not an executable file";
	if (!why)
		return fd;
	snprintf(msg, size, "zsp's exec step %s cannot be used: %s (an installed zsp-run uses %s, any "
		 "other the zsp-exec beside it: install zsp, or rebuild the tree)", path, why,
		 ZSP_EXEC_INSTALLED);
	if (fd >= 0)
		close(fd);
	return -1;
}

int zsp_launch_prepare(zsp_launch *l, const zsp_ir_policy *p, zsp_arena *a, zsp_diag *d,
		       const zsp_linux_opts *opts)
{
	memset(l, 0, sizeof(*l));
	l->p = p;
	l->bwrap = zsp_bwrap_path();
	l->home = opts->home;
	l->exec_step = opts->exec_step;
	l->walk_index = opts->walk_index;
	l->opens_decided = opts->opens_decided;
	zsp_linux_opts o = *opts;
	o.seccomp = true;
	zsp_linux_check_supervised(p, d);
	/* mode proxy sets these itself (runtime/netproxy.h): a policy's own value would point the
	 * tools elsewhere, or lose the secret, and taking one silently over the other hides it */
	const zsp_ir_env *at;
	const char *clash = p->net_mode == ZSP_NET_PROXY ? zsp_netproxy_env_conflict(p, &at) : NULL;
	if (clash) {
		zsp_diag_error(d, at->loc, "`env set %s` conflicts with `mode proxy`, which sets %s to its own proxy",
			       clash, clash);
		zsp_diag_hint(d, "remove the `set`: in mode proxy the sandbox's HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, "
			      "NO_PROXY (each also in lower case), npm_config_proxy, npm_config_https_proxy, "
			      "CARGO_HTTP_PROXY and JAVA_TOOL_OPTIONS are zsp-run's");
	}
	int rc = zsp_bwrap_plan_build(p, &o, a, d, &l->plan);
	if (rc != ZSP_OK)
		return rc;
	if (d->errors)
		return ZSP_EPOLICY;
	rc = zsp_seccomp_export(p, false, d, &l->bpf, &l->bpflen);
	if (rc != ZSP_OK)
		return rc;
	return d->errors ? ZSP_EPOLICY : ZSP_OK;
}

void zsp_launch_release(zsp_launch *l)
{
	free(l->bpf);
	l->bpf = NULL;
}

static int memfd_with(const char *name, const void *data, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	const char *p = data;
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	/* sealed: nothing can change the program or the options between here and bwrap */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0 ||
	    lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* bwrap's options: the plan's argv, then --setenv for each of env's variables (NULL: none),
 * which come last so that they replace any the plan set (bwrap applies them in order). */
static int args_fd(char *const *argv, size_t argc, const zsp_netproxy_env *env)
{
	static const char setenv_opt[] = "--setenv";
	size_t len = 0;
	for (size_t i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	for (size_t i = 0; env && i < ZSP_NETPROXY_NENV; i++)
		len += sizeof(setenv_opt) + strlen(env->name[i]) + 1 + strlen(env->value[i]) + 1;
	char *buf = malloc(len + 1), *o = buf;
	if (!buf)
		return -1;
	for (size_t i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]) + 1;
		memcpy(o, argv[i], n);
		o += n;
	}
	for (size_t i = 0; env && i < ZSP_NETPROXY_NENV; i++) {
		const char *part[3] = { setenv_opt, env->name[i], env->value[i] };
		for (int k = 0; k < 3; k++) {
			size_t n = strlen(part[k]) + 1;
			memcpy(o, part[k], n);
			o += n;
		}
	}
	int fd = memfd_with("zsp-bwrap-args", buf, len);
	/* the proxy's secret is in there: nothing of it left in freed memory */
	explicit_bzero(buf, len);
	free(buf);
	return fd;
}

static const int limit_resource[ZSP_LIMIT_COUNT] = {
	[ZSP_LIMIT_CPU] = RLIMIT_CPU,       [ZSP_LIMIT_MEMORY] = RLIMIT_AS,
	[ZSP_LIMIT_FSIZE] = RLIMIT_FSIZE,   [ZSP_LIMIT_STACK] = RLIMIT_STACK,
	[ZSP_LIMIT_CORE] = RLIMIT_CORE,     [ZSP_LIMIT_NOFILE] = RLIMIT_NOFILE,
	[ZSP_LIMIT_NPROC] = RLIMIT_NPROC,
};

/* In the child, right before bwrap: an RLIMIT_NPROC set here counts the processes of the new
 * user namespace bwrap creates, not every process of the user. ZSP_OK, or ZSP_EIO (errno set). */
static int apply_limits(const zsp_ir_policy *p)
{
	for (int k = 0; k < ZSP_LIMIT_COUNT; k++) {
		const zsp_ir_limit *lim = &p->limits[k];
		if (!lim->set)
			continue;
		struct rlimit rl;
		if (getrlimit(limit_resource[k], &rl) != 0)
			return ZSP_EIO;
		rlim_t v = lim->unlimited ? RLIM_INFINITY : (rlim_t)lim->value;
		/* never raise a hard limit (that needs privilege): a lower one stands */
		if (rl.rlim_max != RLIM_INFINITY && (v == RLIM_INFINITY || v > rl.rlim_max))
			v = rl.rlim_max;
		rl.rlim_cur = v;
		rl.rlim_max = v;
		if (setrlimit(limit_resource[k], &rl) != 0)
			return ZSP_EIO;
	}
	return ZSP_OK;
}

/* RLIMIT_NPROC never applies to the machine's real root, and bwrap keeps a root caller uid 0:
 * for root, `limit nproc` is a pids cgroup of its own (cgroup v1's pids hierarchy, or a cgroup2
 * whose pids controller is enabled for children). No such cgroup: the run is refused, ZSP_EIO
 * with the reason in *why. */
static int nproc_cgroup(const zsp_ir_policy *p, char *dir, size_t size, const char **why)
{
	static char msg[512];
	dir[0] = 0;
	const zsp_ir_limit *lim = &p->limits[ZSP_LIMIT_NPROC];
	if (!lim->set || lim->unlimited || geteuid() != 0)
		return ZSP_OK;
	const char *bases[] = { "/sys/fs/cgroup/pids", "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		char probe[256];
		snprintf(probe, sizeof(probe), "%s/pids.max", bases[i]);
		char ctl[256];
		snprintf(ctl, sizeof(ctl), "%s/cgroup.subtree_control", bases[i]);
		bool v1 = i == 0 && access(bases[i], W_OK) == 0;
		bool v2 = false;
		if (!v1) {
			FILE *f = fopen(ctl, "re");
			char line[256] = "";
			if (f) {
				v2 = fgets(line, sizeof(line), f) && strstr(line, "pids");
				fclose(f);
			}
		}
		if (!v1 && !v2)
			continue;
		snprintf(dir, size, "%s/zsp-run.%d", bases[i], (int)getpid());
		if (mkdir(dir, 0755) != 0)
			continue;
		char file[512];
		snprintf(file, sizeof(file), "%s/pids.max", dir);
		FILE *f = fopen(file, "we");
		bool ok = f && fprintf(f, "%llu\n", (unsigned long long)lim->value) > 0;
		if (f && fclose(f) != 0)
			ok = false;
		if (ok)
			return ZSP_OK;
		rmdir(dir);
	}
	dir[0] = 0;
	snprintf(msg, sizeof(msg), "`limit nproc` cannot be enforced for root here: RLIMIT_NPROC does not "
		 "apply to root and no pids cgroup could be created under /sys/fs/cgroup; run as a regular "
		 "user, or give root a writable pids cgroup");
	*why = msg;
	return ZSP_EIO;
}

static void remove_cgroup(const char *dir)
{
	/* the sandbox's processes die with bwrap; give the kernel a moment to reap them */
	for (int i = 0; dir[0] && i < 100 && rmdir(dir) != 0 && errno == EBUSY; i++)
		usleep(10000);
}

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

static const int forwarded[4] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

/* bwrap is started with vfork: the child runs in zsp-run's memory, on its stack, until its
 * execve, while zsp-run waits. No page tables are copied and the code it runs is mapped already,
 * where a fork cost ~35 page faults in the child and copy-on-write faults in the parent: most of
 * what starting bwrap cost on top of bwrap itself. On Linux the descriptor table, the resource
 * limits, the signal dispositions and the cgroup stay the child's own, so it sets them up as a
 * forked child would. What it must not do is change memory zsp-run uses: it allocates nothing,
 * calls only system call wrappers and never returns; it reports a failure in *c, which zsp-run
 * reads once the child has exec'd or exited. (vfork rather than clone with a stack of our own:
 * AddressSanitizer knows vfork, and takes an unknown stack for a corrupt one.) */
typedef struct spawn {
	const zsp_launch *l;
	const int *fds;             /* seccomp, empty, args, status, exec, ready, notify filter, notify
				     * socket -> 3, ..., 10; exec and ready -1 without the exec step,
				     * the notify pair -1 without the connect supervisor */
	const int *state;           /* the sandbox's own directories -> 9, 10, ... */
	size_t nstate;
	const zsp_pty *pty;         /* its replica -> those of 0, 1, 2 that were the terminal */
	char *const *argv;          /* bwrap's */
	const char *procs;          /* the cgroup.procs to enter, or NULL */
	const struct sigaction *old; /* the dispositions of forwarded[] before zsp-run's handler */
	const sigset_t *mask;       /* the signal mask to run bwrap with */
	/* written by the child: volatile, as the compiler does not see it happen */
	volatile bool failed;       /* it could not exec bwrap */
	const char *volatile what;  /* what it was doing */
	volatile int err;           /* and errno */
} spawn;

static _Noreturn void child_main(spawn *c)
{
	/* signals are blocked: no handler of zsp-run's may run on its memory in the child, so
	 * every caught signal gets its default action (execve would give it) before the unblock */
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa) != 0)
			continue;
		if (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN) {
			sa.sa_handler = SIG_DFL;
			sa.sa_flags = 0;
			sigaction(sig, &sa, NULL);
		}
	}
	/* ... and a signal zsp-run was started ignoring stays ignored */
	for (int i = 0; i < 4; i++)
		if (c->old[i].sa_handler == SIG_IGN)
			sigaction(forwarded[i], &c->old[i], NULL);
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigaction(SIGPIPE, &dfl, NULL);
	sigprocmask(SIG_SETMASK, c->mask, NULL);

	const int targets[NFDS] = { ZSP_FD_SECCOMP, ZSP_FD_EMPTY, FD_ARGS,          FD_STATUS,
				    ZSP_FD_EXEC,    FD_READY,     FD_NOTIFY_FILTER, FD_NOTIFY_SOCK,
				    FD_MASKS,       FD_NET };
	int moved[NFDS + MAX_STATE_FDS];
	int first_free = FD_STATE + (int)c->nstate;
	c->what = "cannot set up descriptors";
	/* above every target first: a source may sit on another's target */
	for (size_t i = 0; i < NFDS + c->nstate; i++) {
		int fd = i < NFDS ? c->fds[i] : c->state[i - NFDS];
		moved[i] = -1;
		if (fd >= 0 && (moved[i] = fcntl(fd, F_DUPFD, first_free)) < 0)
			goto fail;
	}
	int replica = -1;
	if (c->pty->master >= 0 && (replica = fcntl(c->pty->replica, F_DUPFD, first_free)) < 0)
		goto fail;
	for (size_t i = 0; i < NFDS + c->nstate; i++)
		if (moved[i] >= 0 && dup2(moved[i], i < NFDS ? targets[i] : FD_STATE + (int)(i - NFDS)) < 0)
			goto fail;
	/* the person's terminal never enters the sandbox: its own pty does (runtime/pty.h) */
	for (int fd = 0; replica >= 0 && fd < 3; fd++)
		if (c->pty->on[fd] && dup2(replica, fd) < 0)
			goto fail;
	/* everything else closes: an inherited socket (an ssh-agent connection, a D-Bus) must not
	 * reach the sandbox */
	if (syscall(SYS_close_range, first_free, ~0U, 0) != 0)
		for (int fd = first_free; fd < 1024; fd++)
			close(fd);
	c->what = "cannot apply the policy's resource limits";
	if (apply_limits(c->l->p) != 0)
		goto fail;
	if (c->procs) {
		c->what = "cannot enter the pids cgroup for `limit nproc`";
		int cfd = open(c->procs, O_WRONLY | O_CLOEXEC);
		if (cfd < 0 || write(cfd, "0\n", 2) != 2)
			goto fail;
		close(cfd);
	}
	/* bwrap runs with an empty environment: no LD_PRELOAD, LD_LIBRARY_PATH or the like reaches
	 * it; the command's environment is the --setenv list of the plan */
	char *const empty_env[] = { NULL };
	c->what = "cannot execute bwrap";
	execve(c->l->bwrap, c->argv, empty_env);
fail:
	c->err = errno;
	c->failed = true;
	_exit(ZSP_RUN_ESETUP);
}

/* bwrap --args 5 --json-status-fd 6 -- [ZSP_EXEC_PATH --ready-fd 8 --close-fds [--ctty]
 * [--masks-sock 11] [--net-sock 12] [--notify-filter-fd 9 --notify-sock-fd 10 [--notify-killable]]
 * --] CMD...: NULL-terminated, malloc'd. --ctty with a pty: the exec step makes it the
 * controlling terminal; --masks-sock with the plan's masks (runtime/mask.h); --net-sock with
 * mode proxy (runtime/netproxy.h); the notify options with the supervisor, --notify-killable
 * when it performs the path calls (doc/linux.md "Strict"). */
static char **bwrap_argv(char *const *cmd, bool exec_step, bool ctty, bool masks, bool net, bool notify,
			 bool killable)
{
	static char fa[] = { '0' + FD_ARGS, 0 }, fs[] = { '0' + FD_STATUS, 0 }, fr[] = { '0' + FD_READY, 0 };
	static char fnf[] = { '0' + FD_NOTIFY_FILTER, 0 }, fns[] = "10", fm[] = "11";
	static char *const head[] = { "bwrap", "--args", fa, "--json-status-fd", fs, "--" };
	static char *const step[] = { ZSP_EXEC_PATH, "--ready-fd", fr, "--close-fds" };
	static char *const notify_opts[] = { "--notify-filter-fd", fnf, "--notify-sock-fd", fns };
	static char *const mask_opts[] = { "--masks-sock", fm };
	static char *const net_opts[] = { "--net-sock", "12" };
	_Static_assert(FD_NOTIFY_SOCK == 10 && FD_MASKS == 11 && FD_NET == 12, "fns, fm, net_opts");
	size_t nh = sizeof(head) / sizeof(head[0]), nstep = sizeof(step) / sizeof(step[0]);
	size_t nn = sizeof(notify_opts) / sizeof(notify_opts[0]), nm = sizeof(mask_opts) / sizeof(mask_opts[0]);
	size_t ns = !exec_step ? 0 : nstep + (ctty ? 1 : 0) + (masks ? nm : 0) + (net ? 2 : 0) + (notify ? nn : 0) +
				     (notify && killable ? 1 : 0) + 1;
	size_t n = 0;
	while (cmd[n])
		n++;
	char **argv = calloc(nh + ns + n + 1, sizeof(char *));
	if (!argv)
		return NULL;
	memcpy(argv, head, sizeof(head));
	if (exec_step) {
		size_t k = nh;
		memcpy(argv + k, step, sizeof(step));
		k += nstep;
		if (ctty)
			argv[k++] = "--ctty";
		if (masks) {
			memcpy(argv + k, mask_opts, sizeof(mask_opts));
			k += nm;
		}
		if (net) {
			memcpy(argv + k, net_opts, sizeof(net_opts));
			k += 2;
		}
		if (notify) {
			memcpy(argv + k, notify_opts, sizeof(notify_opts));
			k += nn;
			if (killable)
				argv[k++] = "--notify-killable";
		}
		argv[k++] = "--";
	}
	memcpy(argv + nh + ns, cmd, n * sizeof(char *));
	return argv;
}

/* Starts bwrap: its pid, or -1 with *why set when it could not be started (a child that failed
 * before its execve is reaped here). */
static pid_t start_bwrap(const zsp_launch *l, const int fds[NFDS], const int *state, size_t nstate,
			 const zsp_pty *pty, char *const *cmd, const char *cgroup, const struct sigaction old[4],
			 const char **why)
{
	static char msg[512];
	char procs[600];
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cgroup);
	sigset_t all, mask;
	sigfillset(&all);
	spawn c = { .l = l, .fds = fds, .state = state, .nstate = nstate, .pty = pty,
		    .procs = cgroup[0] ? procs : NULL, .old = old, .mask = &mask };
	char **argv = bwrap_argv(cmd, l->exec_step, pty->master >= 0, fds[8] >= 0, fds[9] >= 0, fds[6] >= 0,
				 l->opens_decided);
	if (!argv) {
		*why = "cannot start bwrap: out of memory";
		return -1;
	}
	c.argv = argv;
	sigprocmask(SIG_BLOCK, &all, &mask);
	pid_t pid = vfork();
	if (pid == 0)
		child_main(&c);
	int e = errno;
	/* the child has exec'd or exited; a signal that came meanwhile is forwarded once unblocked */
	if (pid > 0 && !c.failed)
		child_pid = pid;
	sigprocmask(SIG_SETMASK, &mask, NULL);
	free(argv);
	if (pid < 0 || c.failed) {
		snprintf(msg, sizeof(msg), "%s: %s", pid < 0 ? "cannot start bwrap" : c.what,
			 strerror(pid < 0 ? e : c.err));
		*why = msg;
	}
	if (pid > 0 && c.failed) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return -1;
	}
	return pid;
}

/* Placeholders: created before bwrap (mount points must exist), held with a shared lock while
 * the sandbox runs (another run may be using the same one), removed after while still empty. */
typedef struct held {
	int *fds;
	bool *created;
	int *lockfds;
} held;

/* ZSP_OK; ZSP_EINTERNAL (out of memory) or ZSP_EIO with the reason in *why. */
static int make_placeholders(const zsp_launch *l, held *h, const char **why)
{
	size_t n = l->plan.nplaceholders;
	h->fds = calloc(n + 1, sizeof(int));
	h->created = calloc(n + 1, sizeof(bool));
	h->lockfds = calloc(l->plan.nlocks + 1, sizeof(int));
	if (!h->fds || !h->created || !h->lockfds) {
		*why = "out of memory";
		return ZSP_EINTERNAL;
	}
	for (size_t i = 0; i < n; i++) {
		const char *path = l->plan.placeholders[i];
		h->fds[i] = -1;
		if (mkdir(path, 0755) == 0)
			h->created[i] = true;
		else if (errno != EEXIST) {
			static char buf[4352];
			snprintf(buf, sizeof(buf), "cannot create the mount point %s: %s", path, strerror(errno));
			*why = buf;
			return ZSP_EIO;
		}
		h->fds[i] = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (h->fds[i] >= 0)
			flock(h->fds[i], LOCK_SH);
	}
	for (size_t i = 0; i < l->plan.nlocks; i++) {
		h->lockfds[i] = open(l->plan.locks[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (h->lockfds[i] >= 0)
			flock(h->lockfds[i], LOCK_SH);
	}
	return ZSP_OK;
}

static void remove_placeholders(const zsp_launch *l, held *h)
{
	if (!h->fds)
		return;
	for (size_t i = l->plan.nplaceholders; i-- > 0;) {
		int fd = h->fds[i];
		/* a run still holding it shared keeps it; rmdir removes only an empty directory */
		if (h->created[i] && fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
			rmdir(l->plan.placeholders[i]);
		if (fd >= 0)
			close(fd);
	}
	for (size_t i = 0; i < l->plan.nlocks; i++)
		if (h->lockfds[i] >= 0)
			close(h->lockfds[i]);
	free(h->fds);
	free(h->created);
	free(h->lockfds);
}

/* What bwrap wrote on its status pipe, or zsp-exec on the ready pipe: what is there (bwrap and
 * a process left in the sandbox could hold the pipe open). */
static void read_pipe(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t r;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	while (len < size - 1 && (r = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)r;
	buf[len] = 0;
}

/* Did bwrap start its child? It writes {"child-pid": N} once it did, before the child sets up the
 * mounts: a failed mount comes after it (doc/facts.md §bwrap; the exec step tells them apart). */
static bool status_says_started(int fd)
{
	char buf[4096];
	read_pipe(fd, buf, sizeof(buf));
	return strstr(buf, "\"child-pid\"") != NULL;
}

/* Did zsp-exec start, the sandbox set up? It writes one byte before it runs the command. */
static bool exec_step_ready(int fd)
{
	char buf[8];
	read_pipe(fd, buf, sizeof(buf));
	return buf[0] == '1';
}

/* After the run: what the sandbox left in its writable roots for the host to run is moved
 * aside (runtime/guard.c). false when something could not be. */
static bool guard_after(const zsp_launch *l, struct timespec since, const zsp_gitlayer *gl)
{
	const char *names[256];
	size_t nnames = 0;
	for (size_t i = 0; i < l->p->nfs && nnames < 256; i++) {
		const char *n = l->p->fs[i].protect;
		bool dup = false;
		for (size_t k = 0; n && k < nnames; k++)
			dup |= strcmp(names[k], n) == 0;
		if (n && !dup)
			names[nnames++] = n;
	}
	const char *roots[l->plan.nroots + 1];
	size_t nroots = 0;
	bool ws_writable = false;
	for (size_t i = 0; i < l->plan.nroots; i++) {
		roots[nroots++] = l->plan.roots[i];
		ws_writable |= l->workspace && zsp_path_is_prefix(l->plan.roots[i], l->workspace);
	}
	if (ws_writable)
		roots[nroots++] = l->workspace;
	/* the configs the layers applied were vetted key by key: not judged again */
	size_t nwritten;
	const char *const *written = zsp_gitlayer_written(gl, &nwritten);
	const char *fixed[l->plan.nfixed + nwritten + 1];
	for (size_t i = 0; i < l->plan.nfixed; i++)
		fixed[i] = l->plan.fixed[i];
	for (size_t i = 0; i < nwritten; i++)
		fixed[l->plan.nfixed + i] = written[i];
	zsp_guard_opts go = {
		.roots = roots, .nroots = nroots,
		.fixed = fixed, .nfixed = l->plan.nfixed + nwritten,
		.names = names, .nnames = nnames, .home = l->home, .since = since,
		.index = l->walk_index,
	};
	zsp_guard_result r;
	fflush(stderr);
	zsp_guard_check(&go, stderr, &r);
	return r.failed == 0;
}

/* The sandbox's own directories, made and opened (runtime/sandbox.c); the plan's argv with each
 * of them as a bind source turned into --bind-fd N (N from FD_STATE on), in *argv (malloc'd
 * array, strings in numbers). ZSP_OK, or ZSP_EIO with the reason in msg. */
static int state_argv(const zsp_launch *l, int *state, size_t *nstate, char ***argv, char numbers[][16],
		      char *msg, size_t msglen)
{
	const zsp_bwrap_plan *pl = &l->plan;
	int opened[pl->nstate + 1];
	*nstate = 0;
	if (!(*argv = malloc((pl->argc + 1) * sizeof(char *)))) {
		snprintf(msg, msglen, "out of memory");
		return ZSP_EIO;
	}
	memcpy(*argv, pl->argv, pl->argc * sizeof(char *));
	if (!pl->nstate)
		return ZSP_OK;
	if (!l->sandbox) {
		snprintf(msg, msglen, "the sandbox's own state directory is not open");
		return ZSP_EIO;
	}
	if (zsp_sandbox_prepare(l->sandbox, pl->state, pl->nstate, opened, msg, msglen) != ZSP_OK)
		return ZSP_EIO;
	for (size_t i = 0; i < pl->nstate; i++) {
		long a = pl->state[i].argi;
		if (opened[i] < 0)
			continue;
		if (*nstate == MAX_STATE_FDS || a < 1 || (size_t)a >= pl->argc) {
			snprintf(msg, msglen, "more than %d directories of the sandbox's own to mount", MAX_STATE_FDS);
			for (size_t k = i; k < pl->nstate; k++)
				if (opened[k] >= 0)
					close(opened[k]);
			return ZSP_EIO;
		}
		snprintf(numbers[*nstate], 16, "%d", FD_STATE + (int)*nstate);
		(*argv)[a - 1] = strcmp(pl->argv[a - 1], "--ro-bind") == 0 ? "--ro-bind-fd" : "--bind-fd";
		(*argv)[a] = numbers[*nstate];
		state[(*nstate)++] = opened[i];
	}
	return ZSP_OK;
}

/* After the run: the caches and the private /tmp kept to the policy's limits; said on stderr. */
static void trim_after(const zsp_launch *l)
{
	const zsp_ir_policy *p = l->p;
	zsp_sandbox_trimmed t[2];
	char err[1024];
	uint64_t cache = p->cache_limit.unlimited ? UINT64_MAX : p->cache_limit.value;
	uint64_t tmp = p->tmp_limit.unlimited || !p->tmp_private ? UINT64_MAX : p->tmp_limit.value;
	if (zsp_sandbox_trim(l->sandbox, cache, tmp, t, err, sizeof(err)) != ZSP_OK)
		zsp_warn("warning: the sandbox's caches and /tmp could not be kept to their limits: %s", err);
	for (int k = 0; k < 2; k++) {
		const char *what = k == 0 ? "caches" : "/tmp";
		uint64_t limit = k == 0 ? cache : tmp;
		char b[32], a[32], lim[32];
		zsp_cli_bytes(b, sizeof(b), t[k].before);
		zsp_cli_bytes(a, sizeof(a), t[k].after);
		zsp_cli_bytes(lim, sizeof(lim), limit);
		const char *their = k == 0 ? "their" : "its", *they = k == 0 ? "they are" : "it is";
		if (t[k].busy)
			zsp_warn("the sandbox's %s hold%s %s, over %s %s limit; another run is using %s, so %s "
				 "trimmed when the last one ends", what, k == 0 ? "" : "s", b, their, lim,
				 k == 0 ? "them" : "it", they);
		else if (t[k].files)
			zsp_warn("the sandbox's %s held %s, over %s %s limit (`%s limit`): removed the %llu "
				 "least recently used files, %s left (%s/%s)", what, b, their, lim, k == 0 ? "cache" : "tmp",
				 (unsigned long long)t[k].files, a, l->sandbox->dir, t[k].sub);
	}
}

int zsp_launch_run(const zsp_launch *l, char *const *argv, const char **why)
{
	static char msg[4352];
	const char *dummy;
	if (!why)
		why = &dummy;
	*why = NULL;
	struct timespec since = zsp_guard_start();
	bool started = false;
	held h = { 0 };
	zsp_gitlayer *gl = NULL;
	char cgroup[512] = "";
	int fds[NFDS] = { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1 }, status_pipe[2] = { -1, -1 },
	    ready_pipe[2] = { -1, -1 };
	int notify_pair[2] = { -1, -1 }, masks_pair[2] = { -1, -1 }, net_pair[2] = { -1, -1 }, stop_pipe[2] = { -1, -1 };
	pid_t masker = -1, proxy = -1;
	bool proxied = l->p->net_mode == ZSP_NET_PROXY;
	char secret[ZSP_NETPROXY_SECRET_LEN + 1] = "";
	zsp_netproxy_env penv = { .name = { NULL } };
	zsp_supervisor *sup = NULL;
	int state[MAX_STATE_FDS];
	size_t nstate = 0;
	char numbers[MAX_STATE_FDS][16];
	char **bargv = NULL;
	int rc = ZSP_RUN_ESETUP;
	zsp_pty pty;
	if (zsp_pty_open(&pty, msg, sizeof(msg)) != ZSP_OK) {
		*why = msg;
		goto out;
	}
	if (l->exec_step && (fds[4] = open_exec_step(msg, sizeof(msg))) < 0) {
		*why = msg;
		goto out;
	}
	if (state_argv(l, state, &nstate, &bargv, numbers, msg, sizeof(msg)) != ZSP_OK) {
		*why = msg;
		goto out;
	}
	fds[0] = memfd_with("zsp-seccomp", l->bpf, l->bpflen);
	fds[1] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	/* mode proxy: a secret of this run's, in the sandbox's environment and the proxy's memory
	 * only (bwrap reads its options from a memfd: no command line shows it) */
	if (proxied && !l->exec_step) {
		*why = "mode proxy needs zsp's exec step";
		goto out;
	}
	if (proxied && zsp_netproxy_secret(secret) != 0) {
		snprintf(msg, sizeof(msg), "cannot make the proxy's secret: getrandom: %s", strerror(errno));
		*why = msg;
		goto out;
	}
	if (proxied && zsp_netproxy_env_make(&penv, l->p, secret) != 0) {
		*why = "cannot prepare the proxy's variables: out of memory";
		goto out;
	}
	fds[2] = args_fd(bargv, l->plan.argc, proxied ? &penv : NULL);
	if (pipe2(status_pipe, O_CLOEXEC) == 0)
		fds[3] = status_pipe[1];
	if (l->exec_step && pipe2(ready_pipe, O_CLOEXEC) == 0)
		fds[5] = ready_pipe[1];
	if (l->plan.nmasks && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, masks_pair) == 0)
		fds[8] = masks_pair[1];   /* closed with the others from here on */
	if (proxied && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, net_pair) == 0)
		fds[9] = net_pair[1];
	if (proxied && (fds[9] < 0 || zsp_netproxy_listen(net_pair[0]) != 0 || pipe2(stop_pipe, O_CLOEXEC) != 0)) {
		snprintf(msg, sizeof(msg), "cannot prepare the proxy's socket: %s", strerror(errno));
		*why = msg;
		goto out;
	}
	if (fds[8] >= 0 && zsp_masks_listen(masks_pair[0]) != 0) {
		snprintf(msg, sizeof(msg), "cannot prepare the masks' socket: %s", strerror(errno));
		*why = msg;
		goto out;
	}
	if (fds[0] < 0 || fds[1] < 0 || fds[2] < 0 || fds[3] < 0 || (l->exec_step && fds[5] < 0) ||
	    (l->plan.nmasks && fds[8] < 0)) {
		snprintf(msg, sizeof(msg), "cannot prepare bwrap's inputs: %s", strerror(errno));
		*why = msg;
		goto out;
	}
	/* unix sockets reach only the allowed paths, and with --strict opens only what the globs
	 * allow: the exec step installs the supervisor's filter and hands its listener over
	 * (runtime/supervise.h) */
	zsp_supervise_opts so = { .connects = zsp_linux_mediates_unix(l->p), .opens = l->opens_decided,
				  .workspace = l->workspace, .home = l->home };
	if (so.connects || so.opens) {
		size_t flen;
		if (!l->exec_step) {
			*why = "the supervisor needs zsp's exec step";
			goto out;
		}
		if (zsp_supervise_new(l->p, &so, &sup, msg, sizeof(msg)) != ZSP_OK) {
			*why = msg;
			goto out;
		}
		const void *filter = zsp_supervise_filter(sup, &flen);
		fds[6] = memfd_with("zsp-notify", filter, flen);
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, notify_pair) == 0)
			fds[7] = notify_pair[1];
		if (fds[6] < 0 || fds[7] < 0) {
			snprintf(msg, sizeof(msg), "cannot prepare the supervisor: %s", strerror(errno));
			*why = msg;
			goto out;
		}
	}
	if (nproc_cgroup(l->p, cgroup, sizeof(cgroup), why) != 0)
		goto out;
	if (make_placeholders(l, &h, why) != 0)
		goto out;
	if (l->plan.nlayers && zsp_gitlayer_make(&l->plan, l->layer_base, &gl, why) != ZSP_OK)
		goto out;

	struct sigaction sa = { .sa_handler = forward }, old[4];
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 4; i++)
		sigaction(forwarded[i], &sa, &old[i]);
	/* the masks' helper first: its fork then overlaps bwrap's setup (runtime/mask.h) */
	if (masks_pair[0] >= 0) {
		masker = zsp_masks_start(masks_pair[0], l->plan.masks, l->plan.nmasks);
		close(masks_pair[0]);
		masks_pair[0] = -1;
		if (masker < 0) {
			snprintf(msg, sizeof(msg), "cannot start the helper that masks the policy's files: %s",
				 strerror(errno));
			*why = msg;
			goto restore;
		}
	}
	/* the proxy before bwrap too, and before the supervisor's threads: it forks again to join
	 * the sandbox's user namespace, which a multithreaded process cannot */
	if (proxied) {
		zsp_oracle_env oe = { .workspace = l->workspace ? l->workspace : "/", .home = l->home };
		proxy = zsp_netproxy_start(l->p, &oe, net_pair[0], stop_pipe[0], secret);
		close(net_pair[0]);
		close(stop_pipe[0]);
		net_pair[0] = stop_pipe[0] = -1;
		if (proxy < 0) {
			snprintf(msg, sizeof(msg), "cannot start the proxy: %s", strerror(errno));
			*why = msg;
			goto restore;
		}
	}
	pid_t pid = start_bwrap(l, fds, state, nstate, &pty, argv, cgroup, old, why);
	if (pid > 0) {
		/* only bwrap and the sandbox hold the write ends (and the ends of the notify and net
		 * sockets) now */
		for (int i = 3; i < NFDS; i += 2) {
			if (fds[i] >= 0)
				close(fds[i]);
			fds[i] = -1;
		}
		if (fds[8] >= 0)
			close(fds[8]);
		fds[8] = -1;
		if (sup) {
			zsp_supervisor *s = sup;
			sup = NULL;
			if (zsp_supervise_start(s, notify_pair[0], msg, sizeof(msg)) != ZSP_OK)
				zsp_warn("zsp-run: %s; the sandbox's calls it decides fail (ENOSYS)", msg);
			notify_pair[0] = -1;
		}
		int st;
		pid_t w;
		if (pty.master >= 0)
			w = zsp_pty_relay(&pty, pid, &st);
		else
			while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
				;
		child_pid = 0;
		started = status_says_started(status_pipe[0]);
		bool ready = !l->exec_step || exec_step_ready(ready_pipe[0]);
		if (w < 0) {
			snprintf(msg, sizeof(msg), "lost bwrap: %s", strerror(errno));
			*why = msg;
		} else if (!started || !ready) {
			*why = "bwrap could not set up the sandbox (its message is above)";
		} else if (WIFSIGNALED(st)) {
			rc = 128 + WTERMSIG(st);
		} else {
			rc = WEXITSTATUS(st);
		}
	}
restore:
	for (int i = 0; i < 4; i++)
		sigaction(forwarded[i], &old[i], NULL);
out:
	if (masker > 0) {
		if (fds[8] >= 0)
			close(fds[8]);   /* bwrap never started: the helper hears the end */
		fds[8] = -1;
		while (waitpid(masker, NULL, 0) < 0 && errno == EINTR)
			;
	}
	/* the sandbox is gone: the proxy closes its connections and ends (runtime/netproxy.h) */
	if (proxy > 0) {
		if (fds[9] >= 0)
			close(fds[9]);
		fds[9] = -1;
		close(stop_pipe[1]);
		stop_pipe[1] = -1;
		while (waitpid(proxy, NULL, 0) < 0 && errno == EINTR)
			;
	}
	zsp_netproxy_env_free(&penv);
	explicit_bzero(secret, sizeof(secret));
	zsp_pty_close(&pty);
	remove_cgroup(cgroup);
	remove_placeholders(l, &h);
	if (started && gl)
		zsp_gitlayer_apply(gl, stderr);
	if (started && !guard_after(l, since, gl)) {
		*why = "after the run, what the sandbox left for the host to run could not all be moved aside (see above)";
		rc = ZSP_RUN_EGUARD;
	}
	zsp_gitlayer_free(gl);
	if (!gl)
		zsp_gitlayer_base_remove(l->layer_base);
	/* the write ends of the pipes are fds[3] and fds[5] */
	for (int i = 0; i < NFDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	for (size_t i = 0; i < nstate; i++)
		close(state[i]);
	free(bargv);
	if (status_pipe[0] >= 0)
		close(status_pipe[0]);
	if (ready_pipe[0] >= 0)
		close(ready_pipe[0]);
	if (notify_pair[0] >= 0)
		close(notify_pair[0]);
	if (masks_pair[0] >= 0)
		close(masks_pair[0]);
	/* net_pair[1] is fds[9] */
	if (net_pair[0] >= 0)
		close(net_pair[0]);
	for (int i = 0; i < 2; i++)
		if (stop_pipe[i] >= 0)
			close(stop_pipe[i]);
	zsp_supervise_free(sup);
	if (started && l->sandbox)
		trim_after(l);
	return rc;
}
