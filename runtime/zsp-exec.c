/* zsp-exec.c: zsp's exec step, the program bwrap starts in every zsp-run sandbox (doc/linux.md
 * "The exec step"). It finds and runs the command as bash does, argv and environment untouched;
 * when it cannot, it says why and exits as bash does: 127 not found, 126 found but not runnable
 * (bwrap's own failed exec exits 1, which zsp-run also uses for policy errors). libc only,
 * linked statically: it runs in sandboxes that may show no libraries at all.
 *
 * usage: zsp-exec [--ready-fd N] [--close-fds] [--ctty] [--masks-sock M] [--net-sock P]
 *                 [--notify-filter-fd F --notify-sock-fd S [--notify-killable]] -- COMMAND [ARG]...
 *   --ready-fd N  write one byte to descriptor N before the exec, then close it: the command's
 *                 status is then the command's, not the sandbox's setup failing (zsp-run)
 *   --close-fds   every descriptor above 2 closes at the exec (zsp-run hands nothing else in:
 *                 what is left above 2 is bwrap's and zsp-run's, never the command's)
 *   --ctty        the terminal on stdin, stdout or stderr (the sandbox's own pty: zsp-run gives
 *                 nothing else) becomes the controlling terminal of a new session zsp-exec
 *                 leads: /dev/tty, job control, ^C and ^Z work in the sandbox
 *   --masks-sock M
 *                 first of all, write one byte to the unix socket M and wait for zsp-run's
 *                 answer: zsp-run masks the policy's files in the sandbox's mount namespace
 *                 meanwhile, from outside, and answers "k" when every one holds (doc/linux.md
 *                 "Masks"); any other answer, or none, and the command does not run
 *   --net-sock P  likewise with the unix socket P for `mode proxy`: zsp-run makes the proxy's
 *                 listeners in the sandbox's network namespace meanwhile, from outside, and
 *                 answers "k" once they listen (doc/linux.md "The proxy's bridge"); the
 *                 requests on M and P go out together, so both are made at once
 *   --notify-filter-fd F --notify-sock-fd S
 *                 install the BPF program read from F as a seccomp filter with a listener
 *                 (SECCOMP_FILTER_FLAG_NEW_LISTENER), send the listener over the unix socket S
 *                 to zsp-run's supervisor (runtime/supervise.c), close all three: the
 *                 command and its children never hold the listener
 *   --notify-killable
 *                 with it, a call the supervisor has taken waits for its answer until a fatal
 *                 signal only (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, where the kernel has it)
 * exit: the command's; 127 or 126 when it cannot be run; 125 on a usage error, when the masks
 * are not made, the proxy's listeners not made, or when the ready byte cannot be written or the filter cannot be installed and
 * handed over (then the command does not run). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lang/textesc_core.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

enum { EXIT_SETUP = 125, EXIT_CANNOT_RUN = 126, EXIT_NOT_FOUND = 127 };

/* stderr written through a small buffer, with write(2) only: no stdio, no allocation */
typedef struct out {
	char buf[1024];
	size_t len;
} out;

static void out_flush(out *o)
{
	const char *p = o->buf;
	while (o->len) {
		ssize_t w = write(STDERR_FILENO, p, o->len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			break;
		p += w;
		o->len -= (size_t)w;
	}
	o->len = 0;
}

static void out_add(out *o, const char *s, size_t n)
{
	while (n) {
		if (o->len == sizeof(o->buf))
			out_flush(o);
		size_t k = sizeof(o->buf) - o->len < n ? sizeof(o->buf) - o->len : n;
		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
	}
}

static void out_str(out *o, const char *s)
{
	out_add(o, s, strlen(s));
}

/* A name from the command line, shown as zsp_text_escape shows it: it must not redraw the
 * terminal of the person reading. */
static void out_shown(out *o, const char *s)
{
	if (zsp_text_plain_core(s)) {
		out_str(o, s);
		return;
	}
	for (const unsigned char *c = (const unsigned char *)s; *c;) {
		char step[ZSP_TEXT_ESCAPE_STEP_MAX];
		size_t used;
		out_add(o, step, zsp_text_escape_step(c, step, &used));
		c += used;
	}
}

static _Noreturn void fail(const char *name, const char *why, int status)
{
	out o = { .len = 0 };
	out_str(&o, "zsp-run: ");
	if (name) {
		out_shown(&o, name);
		out_str(&o, ": ");
	}
	out_str(&o, why);
	out_str(&o, "\n");
	out_flush(&o);
	_exit(status);
}

/* What bash says when it cannot run name, and the status it exits with: 127 only when there is
 * no such file; anything found and not runnable is 126. */
static _Noreturn void cannot_run(const char *name, int err)
{
	bool path = strchr(name, '/') != NULL;
	struct stat st;
	if (err == ENOENT)
		fail(name, path ? "No such file or directory" : "command not found", EXIT_NOT_FOUND);
	if (err == EACCES && path && stat(name, &st) == 0 && S_ISDIR(st.st_mode))
		fail(name, "Is a directory", EXIT_CANNOT_RUN);
	if (err == ENOEXEC)
		fail(name, "cannot execute binary file: Exec format error", EXIT_CANNOT_RUN);
	fail(name, strerror(err), EXIT_CANNOT_RUN);
}

/* Whether the start of file looks like a program rather than a script without `#!`: a NUL in
 * its first line (bash's test before it runs such a file as a script). */
static bool looks_binary(const char *file)
{
	char buf[80];
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf)) : -1;
	if (fd >= 0)
		close(fd);
	for (ssize_t i = 0; i < n && buf[i] != '\n'; i++)
		if (buf[i] == '\0')
			return true;
	return n < 0;
}

/* Runs file as argv; returns only when it cannot, with errno set. A file the kernel does not
 * take (ENOEXEC) that is not a program is a script without `#!`: /bin/sh runs it, as execvp
 * and shells do. */
static void run_file(const char *file, char **argv)
{
	execv(file, argv);
	int err = errno;
	if (err != ENOEXEC || looks_binary(file)) {
		errno = err;
		return;
	}
	size_t n = 0;
	while (argv[n])
		n++;
	char *sh[n + 2];
	sh[0] = "/bin/sh";
	sh[1] = (char *)file;
	for (size_t i = 1; i <= n; i++)
		sh[i + 1] = argv[i];
	execv(sh[0], sh);
	errno = ENOEXEC;
}

/* Runs the command as bash finds it: a name with a slash as it is; else the first executable
 * regular file of that name in $PATH (an empty entry is the current directory; a directory that
 * cannot be searched is passed over, where execvp would give up with EACCES), and when there is
 * none, a file of that name that is not executable (Permission denied), else none (127). */
static _Noreturn void run_command(char **cmd)
{
	const char *name = cmd[0];
	if (strchr(name, '/') || !*name) {
		if (*name)
			run_file(name, cmd);
		cannot_run(name, *name ? errno : ENOENT);
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";  /* glibc's execvp without PATH */
	size_t nlen = strlen(name);
	bool denied = false;   /* a file of that name that is not executable was seen */
	for (const char *dir = path;; dir++) {
		const char *end = strchr(dir, ':');
		size_t dlen = end ? (size_t)(end - dir) : strlen(dir);
		char file[PATH_MAX];
		struct stat st;
		if (dlen + 1 + nlen < sizeof(file)) {
			memcpy(file, dlen ? dir : ".", dlen ? dlen : 1);
			size_t k = dlen ? dlen : 1;
			file[k] = '/';
			memcpy(file + k + 1, name, nlen + 1);
			if (stat(file, &st) == 0 && !S_ISDIR(st.st_mode)) {
				if (access(file, X_OK) == 0) {
					run_file(file, cmd);
					cannot_run(name, errno);
				}
				denied = true;
			}
		}
		if (!end)
			break;
		dir = end;
	}
	cannot_run(name, denied ? EACCES : ENOENT);
}

/* Every descriptor above stderr closes at the exec (and stays open until then, for the message
 * of a failed exec). */
static void close_on_exec_above_stderr(void)
{
	if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0)
		return;
	/* before Linux 5.11: one by one, up to the descriptor limit */
	struct rlimit rl;
	long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 1048576
			   ? (long)rl.rlim_cur
			   : 1048576;
	for (long fd = 3; fd < max; fd++) {
		int flags = fcntl((int)fd, F_GETFD);
		if (flags >= 0)
			fcntl((int)fd, F_SETFD, flags | FD_CLOEXEC);
	}
}

/* The pty on 0, 1 or 2 as the controlling terminal of a session this process leads, its process
 * group in the foreground (TIOCSCTTY does that); false when there is none or it cannot be made
 * so. With --unshare-pid, bwrap's --new-session makes its init (pid 1) the leader, which never
 * runs the command: the exec step (pid 2, no group leader) starts a session of its own. */
static bool take_terminal(void)
{
	if (getsid(0) != getpid() && setsid() < 0)
		return false;
	for (int fd = 0; fd < 3; fd++)
		if (isatty(fd))
			return ioctl(fd, TIOCSCTTY, 0) == 0;
	return false;
}

static int parse_fd(const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > INT_MAX)
		return -1;
	return (int)v;
}

/* zsp-run makes the masks (and the proxy's listeners) while this waits: the sandbox's mounts
 * and network namespace are all there now, and nothing of the command's runs yet. The kernel
 * attaches this process's pid to the byte (zsp-run set SO_PASSCRED), so zsp-run finds the
 * namespaces without asking the sandbox. false when the byte could not be sent. */
static bool ask(int sock, char what)
{
	ssize_t n;
	while ((n = write(sock, &what, 1)) < 0 && errno == EINTR)
		;
	return n == 1;
}

/* zsp-run's answer to ask(): "k", or the command does not run. */
static void await_answer(int sock, bool asked, const char *what)
{
	char c = 0;
	ssize_t n = asked ? 0 : -1;
	if (asked)
		while ((n = read(sock, &c, 1)) < 0 && errno == EINTR)
			;
	if (n != 1 || c != 'k')
		fail(NULL, what, EXIT_SETUP);
	close(sock);
}

/* The connect() filter with its listener, which goes to zsp-run over sock (SCM_RIGHTS); every
 * failure ends the run before the command: without the supervisor the filter would leave
 * connect() to whatever it names. */
static void install_notify(int filter, int sock, bool killable)
{
	static struct sock_filter prog[BPF_MAXINSNS];
	struct stat st;
	if (fstat(filter, &st) != 0 || st.st_size <= 0 || st.st_size % (off_t)sizeof(prog[0]) != 0 ||
	    st.st_size > (off_t)sizeof(prog) || pread(filter, prog, (size_t)st.st_size, 0) != st.st_size)
		fail(NULL, "zsp-exec: cannot read the connect() filter, so the command does not run", EXIT_SETUP);
	struct sock_fprog fp = { .len = (unsigned short)(st.st_size / (off_t)sizeof(prog[0])), .filter = prog };
	/* killable: once the supervisor has a call, only a fatal signal ends the wait, so a call it
	 * performed (a file it created) is never repeated by a restart that finds it done; the
	 * flag is Linux 5.19's, and without it a signal in that window is the only cost */
	long listener = -1;
	if (killable)
		listener = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				   SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &fp);
	if (listener < 0)
		listener = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &fp);
	if (listener < 0)
		fail(NULL, errno == EINVAL ? "zsp-exec: the kernel has no seccomp listener (Linux 5.0), so the command does not run"
			   : "zsp-exec: cannot install the connect() filter, so the command does not run", EXIT_SETUP);
	int lfd = (int)listener;
	char byte = 'L';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			      .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &lfd, sizeof(int));
	ssize_t w;
	while ((w = sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	if (w != 1)
		fail(NULL, "zsp-exec: cannot hand the connect() filter to zsp-run, so the command does not run",
		     EXIT_SETUP);
	close(lfd);
	close(sock);
	close(filter);
}

int main(int argc, char **argv)
{
	int ready = -1, filter = -1, sock = -1, masks = -1, net = -1;
	bool close_fds = false, ctty = false, killable = false;
	int i = 1;
	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--ready-fd") == 0 && i + 1 < argc && (ready = parse_fd(argv[i + 1])) >= 0)
			i++;
		else if (strcmp(argv[i], "--close-fds") == 0)
			close_fds = true;
		else if (strcmp(argv[i], "--ctty") == 0)
			ctty = true;
		else if (strcmp(argv[i], "--notify-killable") == 0)
			killable = true;
		else if (strcmp(argv[i], "--masks-sock") == 0 && i + 1 < argc && (masks = parse_fd(argv[i + 1])) >= 0)
			i++;
		else if (strcmp(argv[i], "--net-sock") == 0 && i + 1 < argc && (net = parse_fd(argv[i + 1])) >= 0)
			i++;
		else if (strcmp(argv[i], "--notify-filter-fd") == 0 && i + 1 < argc &&
			 (filter = parse_fd(argv[i + 1])) >= 0)
			i++;
		else if (strcmp(argv[i], "--notify-sock-fd") == 0 && i + 1 < argc &&
			 (sock = parse_fd(argv[i + 1])) >= 0)
			i++;
		else
			fail(NULL, "zsp-exec: usage: zsp-exec [--ready-fd N] [--close-fds] [--ctty] [--masks-sock M] [--net-sock P] "
			     "[--notify-filter-fd F --notify-sock-fd S [--notify-killable]] -- COMMAND [ARG]...", EXIT_SETUP);
	}
	if (i + 1 >= argc)
		fail(NULL, "zsp-exec: no command after --", EXIT_SETUP);
	if ((filter >= 0) != (sock >= 0))
		fail(NULL, "zsp-exec: --notify-filter-fd and --notify-sock-fd go together", EXIT_SETUP);
	char **cmd = argv + i + 1;
	bool masks_asked = masks >= 0 && ask(masks, 'm'), net_asked = net >= 0 && ask(net, 'n');
	if (masks >= 0)
		await_answer(masks, masks_asked, "zsp-exec: zsp-run did not mask the policy's files, so the command does not run");
	if (net >= 0)
		await_answer(net, net_asked, "zsp-exec: zsp-run did not make the proxy's listeners in the sandbox, so the "
			     "command does not run");
	if (filter >= 0)
		install_notify(filter, sock, killable);
	if (close_fds)
		close_on_exec_above_stderr();
	if (ctty && !take_terminal())
		fail(NULL, "zsp-exec: cannot make the sandbox's pseudo-terminal its controlling terminal, so the "
		     "command does not run", EXIT_SETUP);
	if (ready >= 0) {
		ssize_t w;
		while ((w = write(ready, "1", 1)) < 0 && errno == EINTR)
			;
		if (w != 1)
			fail(NULL, "zsp-exec: cannot tell zsp-run that the sandbox is ready, so the command does not run",
			     EXIT_SETUP);
		close(ready);
	}
	run_command(cmd);
}
