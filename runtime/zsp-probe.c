/* zsp-probe.c: run inside a sandbox (bwrap + seccomp); performs one operation and prints one line,
 * "allowed" (exit 0), "denied: ERRNO (detail)" (1) or "inconclusive: REASON" (2); bad usage: 64. */
#define _GNU_SOURCE
#include <dirent.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/netlink.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <seccomp.h>

enum { R_ALLOWED = 0, R_DENIED = 1, R_INCONCLUSIVE = 2, R_USAGE = 64 };

#define TIMEOUT_SECONDS 5	/* for the whole probe: a sandbox test must never hang */
#define WAIT_MS 2000		/* for one connect or one seccomp notification */
#define UNUSED __attribute__((unused))

/* Headers older than the running kernel may lack these; the numbers are ABI. */
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef IORING_FILE_INDEX_ALLOC	/* came with IORING_OP_SOCKET in Linux 5.19 */
#define IORING_OP_SOCKET 45
#endif
#define ZSP_TIOCL_GETSHIFTSTATE 6	/* a harmless TIOCLINUX subcode: reads the shift state */
#define ZSP_KEYCTL_GET_KEYRING_ID 0
#define ZSP_KEY_SPEC_PROCESS_KEYRING (-2)
#define ZSP_KEY_SPEC_SESSION_KEYRING (-3)

/* clone3's first ABI version; our own copy avoids <linux/sched.h> clashing with <sched.h>. */
struct zsp_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static int out_fd = STDOUT_FILENO;		/* a pipe to the parent while in run_child */
static volatile sig_atomic_t answered = -1;	/* our exit code once the line is out */
static volatile pid_t child_pid;		/* killed on timeout */
static char cleanup_path[PATH_MAX + 64];	/* removed on timeout while armed */
static volatile sig_atomic_t cleanup_armed;

#define E(x) { x, #x }
static const struct { int num; const char *name; } errno_names[] = {
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG), E(ENOEXEC),
	E(EBADF), E(ECHILD), E(EAGAIN), E(ENOMEM), E(EACCES), E(EFAULT), E(EBUSY), E(EEXIST),
	E(EXDEV), E(ENODEV), E(ENOTDIR), E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY),
	E(ETXTBSY), E(EFBIG), E(ENOSPC), E(ESPIPE), E(EROFS), E(EMLINK), E(EPIPE), E(ERANGE),
	E(EDEADLK), E(ENAMETOOLONG), E(ENOLCK), E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(ENOMSG),
	E(EOVERFLOW), E(ENOTSOCK), E(EDESTADDRREQ), E(EMSGSIZE), E(EPROTOTYPE), E(ENOPROTOOPT),
	E(EPROTONOSUPPORT), E(ESOCKTNOSUPPORT), E(EOPNOTSUPP), E(EPFNOSUPPORT), E(EAFNOSUPPORT),
	E(EADDRINUSE), E(EADDRNOTAVAIL), E(ENETDOWN), E(ENETUNREACH), E(ECONNABORTED),
	E(ECONNRESET), E(ENOBUFS), E(EISCONN), E(ENOTCONN), E(ETIMEDOUT), E(ECONNREFUSED),
	E(EHOSTDOWN), E(EHOSTUNREACH), E(EALREADY), E(EINPROGRESS), E(EDQUOT), E(ENOKEY),
	E(EKEYREVOKED), E(EKEYREJECTED), E(ENOMEDIUM), E(ECANCELED), E(EUSERS),
};
#undef E

static const char *errname(int err)
{
	static char other[16];

	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (errno_names[i].num == err)
			return errno_names[i].name;
	snprintf(other, sizeof(other), "E%d", err);
	return other;
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

/* One write per answer, so the line reaches a pipe whole even if we die right after. */
static int emit(int code, const char *line)
{
	char buf[700];
	size_t n = strnlen(line, sizeof(buf) - 1);

	memcpy(buf, line, n);
	buf[n++] = '\n';
	write_all(out_fd, buf, n);
	answered = code;
	return code;
}

static int allowed(void)
{
	return emit(R_ALLOWED, "allowed");
}

/* The other answers: "allowed (detail)", "denied: ERRNO (detail)", "inconclusive: detail". */
__attribute__((format(printf, 3, 4)))
static int say(int code, int err, const char *fmt, ...)
{
	char detail[512], line[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	if (code == R_ALLOWED)
		snprintf(line, sizeof(line), "allowed (%s)", detail);
	else if (code == R_DENIED)
		snprintf(line, sizeof(line), "denied: %s (%s)", errname(err), detail);
	else
		snprintf(line, sizeof(line), "inconclusive: %s", detail);
	return emit(code, line);
}
#define allowed_note(...) say(R_ALLOWED, 0, __VA_ARGS__)
#define denied(err, ...) say(R_DENIED, (err), __VA_ARGS__)
#define inconclusive(...) say(R_INCONCLUSIVE, 0, __VA_ARGS__)

__attribute__((format(printf, 1, 2)))
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("zsp-probe: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see zsp-probe --help)\n", stderr);
	return R_USAGE;
}

/* A seccomp KILL (or an unhandled TRAP) ends the process with SIGSYS. */
static int report_signal(int sig)
{
	const char *abbrev = sigabbrev_np(sig);

	if (sig == SIGSYS)
		return emit(R_DENIED, "denied: SIGSYS (killed)");
	return inconclusive("killed by SIG%s", abbrev ? abbrev : "?");
}

static void on_alarm(int sig UNUSED)
{
	static const char msg[] = "inconclusive: timeout\n";

	if (child_pid > 0 && kill(child_pid, SIGKILL) == 0)
		waitpid(child_pid, NULL, __WALL);	/* no zombie left for init */
	if (cleanup_armed)
		unlink(cleanup_path);
	if (answered < 0 && write(out_fd, msg, sizeof(msg) - 1) < 0)
		_exit(R_INCONCLUSIVE);
	_exit(answered < 0 ? R_INCONCLUSIVE : answered);
}

static void arm_cleanup(const char *path)
{
	snprintf(cleanup_path, sizeof(cleanup_path), "%s", path);
	cleanup_armed = 1;
}

/* Removes what the probe created; a sandbox that lets us create but not remove is worth a word. */
static void remove_created(const char *path, bool dir)
{
	if ((dir ? rmdir(path) : unlink(path)) < 0)
		fprintf(stderr, "zsp-probe: warning: could not remove %s: %s\n", path,
			errname(errno));
	cleanup_armed = 0;
}

static int wait_for(pid_t pid, int *status)
{
	while (waitpid(pid, status, __WALL) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

static void kill_and_reap(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	wait_for(pid, &status);
	child_pid = 0;
}

static int fork_or_say(pid_t *pid, int fds[2])
{
	*pid = fork();
	if (*pid >= 0)
		return 0;
	close(fds[0]);
	close(fds[1]);
	return inconclusive("fork: %s", errname(errno));
}

/* Runs fn in a child so that a seccomp KILL can still be reported; the child's line comes back
 * through a pipe and is relayed once the child is gone. */
static int run_child(int (*fn)(void *), void *arg)
{
	char line[700];
	int p[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return inconclusive("pipe: %s", errname(errno));
	if (fork_or_say(&pid, p))
		return R_INCONCLUSIVE;
	if (pid == 0) {
		close(p[0]);
		out_fd = p[1];
		_exit(fn(arg));
	}
	child_pid = pid;
	close(p[1]);
	do
		n = read(p[0], line, sizeof(line) - 1);
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (wait_for(pid, &status) < 0)
		return inconclusive("waitpid: %s", errname(errno));
	child_pid = 0;
	if (n > 0) {	/* an answer given before any later death stands */
		line[n] = '\0';
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "allowed", 7) == 0)
			return emit(R_ALLOWED, line);
		return emit(strncmp(line, "denied", 6) == 0 ? R_DENIED : R_INCONCLUSIVE, line);
	}
	if (WIFSIGNALED(status))
		return report_signal(WTERMSIG(status));
	return inconclusive("child exited with status %d and no answer", WEXITSTATUS(status));
}

static bool parse_long(const char *s, long min, long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return !errno && end != s && !*end && *out >= min && *out <= max;
}

/* bwrap hides a file by binding /dev/null over it; /dev/null itself hides nothing. */
static bool hidden_by_devnull(const char *path, const struct stat *st)
{
	char *real;
	bool hidden;

	if (!S_ISCHR(st->st_mode) || st->st_rdev != makedev(1, 3))
		return false;
	real = realpath(path, NULL);
	hidden = strcmp(real ? real : path, "/dev/null") != 0;
	free(real);
	return hidden;
}

/* bwrap's binds are nodev, so opening the hiding /dev/null fails with EACCES: name the cause. */
static int denied_open(int err, const char *what, const char *path)
{
	struct stat st;

	if (err == EACCES && stat(path, &st) == 0 && hidden_by_devnull(path, &st))
		return denied(EACCES, "hidden by /dev/null");
	return denied(err, "%s %s", what, path);
}

/* ---- file system ---- */

static int read_dir(int fd, const char *path)
{
	DIR *dir = fdopendir(fd);
	struct dirent *ent;
	int err;

	if (!dir) {
		err = errno;
		close(fd);
		return denied(err, "opendir %s", path);
	}
	errno = 0;
	ent = readdir(dir);
	err = errno;
	closedir(dir);
	return !ent && err ? denied(err, "getdents %s", path) : allowed();
}

static int op_read(char **argv)
{
	const char *path = argv[0];
	struct stat st;
	ssize_t n;
	int fd, err;
	char c;

	fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return denied_open(errno, "open", path);
	if (fstat(fd, &st) < 0) {
		err = errno;
		close(fd);
		return denied(err, "fstat %s", path);
	}
	if (hidden_by_devnull(path, &st)) {	/* a bind without nodev lets it open */
		close(fd);
		return denied(EACCES, "hidden by /dev/null");
	}
	if (S_ISDIR(st.st_mode))
		return read_dir(fd, path);
	n = read(fd, &c, 1);
	err = errno;
	close(fd);
	if (n < 0 && err != EAGAIN)	/* EAGAIN: an empty fifo or socket, opened fine */
		return denied(err, "read %s", path);
	return allowed();
}

/* Creates path exclusively and removes it again: a write test leaves nothing behind. */
static int create_and_remove(const char *path, const char *what)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0600);

	if (fd < 0 && errno == EEXIST)	/* a dangling symlink: O_EXCL does not follow it */
		return inconclusive("EEXIST (create %s)", what);
	if (fd < 0)
		return denied(errno, "create %s", what);
	arm_cleanup(path);
	close(fd);
	remove_created(path, false);
	return allowed();
}

static int write_in_dir(const char *dir)
{
	char path[PATH_MAX + 64];
	unsigned long long rnd;
	struct timespec ts;

	/* A random name keeps concurrent probes (and leftovers of killed ones) from colliding. */
	if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		rnd = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)ts.tv_sec << 30);
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/.zsp-probe.%d.%016llx", dir, (int)getpid(),
			     rnd) >= sizeof(path))
		return inconclusive("ENAMETOOLONG (%s)", dir);
	return create_and_remove(path, dir);
}

static int op_write(char **argv)
{
	const char *path = argv[0];
	struct stat st;
	int fd, err;

	if (stat(path, &st) < 0)
		return errno == ENOENT ? create_and_remove(path, path)
				       : denied(errno, "stat %s", path);
	if (S_ISDIR(st.st_mode))
		return write_in_dir(path);
	if (hidden_by_devnull(path, &st))
		return denied(EACCES, "hidden by /dev/null");
	/* O_APPEND and a zero-byte write: the permission checks run, the file stays as it is. */
	fd = open(path, O_WRONLY | O_APPEND | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENXIO && S_ISFIFO(st.st_mode))
		return inconclusive("ENXIO (fifo without a reader: %s)", path);
	if (fd < 0)
		return denied_open(errno, "open", path);
	err = write(fd, "", 0) < 0 ? errno : 0;
	close(fd);
	return err ? denied(err, "write %s", path) : allowed();
}

/* A successful execve renames the task after the program, so a SIGSYS death under the old name
 * happened at execve itself, not in the new program's startup. */
static bool task_renamed(pid_t pid, const char *path)
{
	char file[64], comm[32], own[32] = "", want[16];
	const char *base = strrchr(path, '/');
	ssize_t n = -1;
	size_t len;
	int fd;

	base = base ? base + 1 : path;
	len = strnlen(base, sizeof(want) - 1);
	memcpy(want, base, len);
	want[len] = '\0';
	snprintf(file, sizeof(file), "/proc/%d/comm", (int)pid);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
	}
	if (n <= 0)
		return false;
	comm[n] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
	prctl(PR_GET_NAME, own, 0, 0, 0);
	own[sizeof(own) - 1] = '\0';
	return strcmp(comm, want) == 0 && strcmp(own, want) != 0;
}

static __attribute__((noreturn)) void exec_child(char *path, int report_fd)
{
	char *args[] = { path, NULL }, *env[] = { NULL };
	int null = open("/dev/null", O_RDWR), err;

	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	execve(path, args, env);
	err = errno;
	if (write(report_fd, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

static int op_exec(char **argv)
{
	int p[2], err;
	siginfo_t si;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return inconclusive("pipe: %s", errname(errno));
	if (fork_or_say(&pid, p))
		return R_INCONCLUSIVE;
	if (pid == 0) {
		close(p[0]);
		exec_child(argv[0], p[1]);
	}
	child_pid = pid;
	close(p[1]);
	do
		n = read(p[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	if (n == (ssize_t)sizeof(err)) {
		kill_and_reap(pid);
		return denied(err, "execve %s", argv[0]);
	}
	/* EOF: the CLOEXEC pipe closed because execve succeeded, or because the child died. */
	kill(pid, SIGKILL);
	memset(&si, 0, sizeof(si));
	while (waitid(P_PID, pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	n = (si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED) && si.si_status == SIGSYS &&
	    !task_renamed(pid, argv[0]);
	kill_and_reap(pid);
	return n ? report_signal(SIGSYS) : allowed();
}

/* ---- network ---- */

struct connect_ctx {
	const char *arg;	/* HOST:PORT as given, for the detail */
	char *host, *port;
	const char *netns;          /* --outside-netns: the inode of the caller's network namespace */
};

static bool split_host_port(char *arg, char **host, char **port)
{
	char *sep = arg[0] == '[' ? strchr(arg, ']') : strrchr(arg, ':');

	if (!sep || (arg[0] == '[' && sep[1] != ':'))
		return false;
	*host = arg[0] == '[' ? arg + 1 : arg;
	*port = arg[0] == '[' ? sep + 2 : sep + 1;
	*sep = '\0';
	return **host && **port;
}

/* 0 or the errno of socket() (*at_socket set) or of connect(); a silent peer is ETIMEDOUT. */
static int connect_errno(const struct addrinfo *ai, bool *at_socket)
{
	struct pollfd pfd;
	socklen_t len = sizeof(int);
	int fd, err = 0, r;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
	*at_socket = fd < 0;
	if (fd < 0)
		return errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && (err = errno) == EINPROGRESS) {
		pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
		r = poll(&pfd, 1, WAIT_MS);
		if (r == 0)
			err = ETIMEDOUT;
		else if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
	}
	close(fd);
	return err;
}

/* The packet left the sandbox if the peer answered, refused, or stayed silent. */
static bool packet_went_out(int err)
{
	return err == 0 || err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH;
}

/* Numeric addresses only (and localhost): the probe is linked statically, without the name
 * service; inside a sandbox without network a name would not resolve anyway. */
static bool numeric_address(const char *host, const char *port, struct sockaddr_storage *ss,
			    struct addrinfo *ai)
{
	char *end;
	unsigned long p = strtoul(port, &end, 10);
	if (*end || p > 65535)
		return false;
	memset(ss, 0, sizeof(*ss));
	memset(ai, 0, sizeof(*ai));
	struct sockaddr_in *in4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
	if (strcmp(host, "localhost") == 0)
		host = "127.0.0.1";
	if (inet_pton(AF_INET, host, &in4->sin_addr) == 1) {
		in4->sin_family = AF_INET;
		in4->sin_port = htons((uint16_t)p);
		ai->ai_addrlen = sizeof(*in4);
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)p);
		ai->ai_addrlen = sizeof(*in6);
	} else {
		return false;
	}
	ai->ai_family = ss->ss_family;
	ai->ai_socktype = SOCK_STREAM;
	ai->ai_addr = (struct sockaddr *)ss;
	return true;
}

/* In a network namespace other than the one of inode `outside` whose only interface is lo
 * (bwrap --unshare-net), every address, a loopback one too, is the namespace's own: nothing
 * outside is reachable, whatever connect() says. */
static bool own_loopback_only(const char *outside)
{
	struct stat st;
	char line[256];
	int others = 0, lines = 0;
	if (!outside || stat("/proc/self/ns/net", &st) < 0 ||
	    strtoull(outside, NULL, 10) == (unsigned long long)st.st_ino)
		return false;
	FILE *f = fopen("/proc/net/dev", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (++lines > 2) /* two header lines, then one interface a line: "  lo: ..." */
			others += strncmp(line + strspn(line, " "), "lo:", 3) != 0;
	fclose(f);
	return lines > 2 && others == 0;
}

static int do_connect(void *arg)
{
	struct connect_ctx *c = arg;
	struct sockaddr_storage ss;
	struct addrinfo ai;
	int fd, err;
	bool at_socket;

	if (own_loopback_only(c->netns))
		return denied(ENETUNREACH, "no network: a network namespace of its own, loopback only");
	if (!numeric_address(c->host, c->port, &ss, &ai)) {
		/* Without an address only socket() can be tested; stderr says so. */
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0) {
			close(fd);
			fprintf(stderr, "zsp-probe: %s is not a numeric address; only socket() was tested\n",
				c->host);
			return allowed();
		}
		if (errno == EPERM || errno == EACCES)
			return denied(errno, "socket");
		return inconclusive("%s (socket)", errname(errno));
	}
	err = connect_errno(&ai, &at_socket);
	if (packet_went_out(err))
		return allowed();
	if (err == ENETUNREACH || err == EADDRNOTAVAIL || err == ENETDOWN)
		return denied(err, "no network");
	if (err == EPERM || err == EACCES || at_socket)
		return denied(err, "%s %s", at_socket ? "socket" : "connect", c->arg);
	return inconclusive("%s (connect %s)", errname(err), c->arg);
}

static int op_connect(char **argv)
{
	struct connect_ctx c = { .arg = argv[0] };
	if (argv[1] && strncmp(argv[1], "--outside-netns=", 16) == 0)
		c.netns = argv[1] + 16;
	else if (argv[1])
		return usage_error("connect: unexpected argument `%s`", argv[1]);
	char *copy = strdup(argv[0]);
	int r;

	if (!copy || !split_host_port(copy, &c.host, &c.port))
		r = usage_error("connect: expected HOST:PORT or [V6]:PORT, got `%s`", argv[0]);
	else
		r = run_child(do_connect, &c);
	free(copy);
	return r;
}

static int do_unix_connect(void *arg)
{
	static const int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET };
	struct sockaddr_un *sun = arg;
	int fd, err = 0;

	/* EPROTOTYPE names the wrong socket type, not a denial. A datagram connect() makes the same
	 * lookup and permission checks as sendto() without delivering anything. */
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return denied(errno, "socket AF_UNIX");
		err = connect(fd, (struct sockaddr *)sun, sizeof(*sun)) < 0 ? errno : 0;
		close(fd);
		if (err != EPROTOTYPE)
			break;
	}
	if (err == ECONNREFUSED)
		return inconclusive("ECONNREFUSED (nobody listens on %s)", sun->sun_path);
	return err ? denied(err, "connect %s", sun->sun_path) : allowed();
}

/* A test fixture, not a probe: a unix socket of the given type that exists for SECONDS, so a
 * sandboxed probe can try to reach a "host" socket (an ssh-agent, /dev/log). Unlinked at the end. */
static int op_listen_unix(char **argv)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	bool dgram = strcmp(argv[1], "dgram") == 0;
	char *end;
	long secs = strtol(argv[2], &end, 10);
	if ((!dgram && strcmp(argv[1], "stream") != 0) || *end || secs < 1 || secs > 600 ||
	    strlen(argv[0]) >= sizeof(sun.sun_path))
		return usage_error("listen-unix: expected PATH stream|dgram SECONDS (1-600)");
	strcpy(sun.sun_path, argv[0]);
	int fd = socket(AF_UNIX, (dgram ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return denied(errno, "socket AF_UNIX");
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0 || (!dgram && listen(fd, 8) != 0)) {
		int e = errno;
		close(fd);
		return denied(e, "bind %s", argv[0]);
	}
	alarm(0);
	printf("listening\n");
	fflush(stdout);
	sleep((unsigned)secs);
	unlink(argv[0]);
	close(fd);
	return allowed();
}

static int op_unix_connect(char **argv)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	if (strlen(argv[0]) >= sizeof(sun.sun_path))
		return usage_error("unix-connect: path longer than %zu bytes",
				   sizeof(sun.sun_path) - 1);
	strcpy(sun.sun_path, argv[0]);
	return run_child(do_unix_connect, &sun);
}

/* ---- syscall NAME: ask the installed filter without running the call ---- */

/* Notifies on nr only when all six arguments are zero, so the child's own sendmsg, close and
 * _exit (never all-zero) are not caught even when NAME is one of them. */
static int install_notify_filter(int nr)
{
	struct sock_filter f[64];
	struct sock_fprog prog;
	unsigned short n = 0;

#define STMT(code, k) (f[n++] = (struct sock_filter)BPF_STMT((code), (k)))
#define SKIP_IF_EQ(k) (f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), 1, 0))
	STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	SKIP_IF_EQ(seccomp_arch_native());
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	SKIP_IF_EQ((unsigned)nr);
	STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	for (unsigned word = 0; word < 12; word++) {	/* six 64-bit args, as 32-bit halves */
		STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args) + 4 * word);
		SKIP_IF_EQ(0);
		STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
#undef STMT
#undef SKIP_IF_EQ
	prog = (struct sock_fprog){ .len = n, .filter = f };
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			    &prog);
}

/* One int of payload: 0 with the listener fd attached, else the errno of seccomp(). */
static int pass_listener(int sock, int *err, int *lfd, bool sending)
{
	struct iovec iov = { .iov_base = err, .iov_len = sizeof(*err) };
	union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	ssize_t n;

	memset(&u, 0, sizeof(u));
	if (sending) {
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), lfd, sizeof(int));
		msg.msg_controllen = *lfd >= 0 ? sizeof(u.buf) : 0;
		return sendmsg(sock, &msg, MSG_NOSIGNAL) == (ssize_t)sizeof(*err) ? 0 : -1;
	}
	*lfd = -1;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	for (cm = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL; cm; cm = CMSG_NXTHDR(&msg, cm))
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
			memcpy(lfd, CMSG_DATA(cm), sizeof(int));
	return n == (ssize_t)sizeof(*err) ? 0 : -1;
}

static __attribute__((noreturn)) void notify_child(int sock, int nr)
{
	int lfd, err = 0;
	long r;

	/* NO_NEW_PRIVS is usually set by the sandbox already; seccomp() tells if it is missing. */
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	lfd = install_notify_filter(nr);
	if (lfd < 0)
		err = errno;
	if (pass_listener(sock, &err, &lfd, true) < 0 || lfd < 0)
		_exit(0);
	close(lfd);
	errno = 0;
	r = syscall(nr, 0, 0, 0, 0, 0, 0);
	/* Back without a notification: the exit status carries what the policy said. */
	_exit(r < 0 ? (errno > 0 && errno < 254 ? errno : 254) : 255);
}

static int syscall_verdict(const char *name, pid_t pid, int sock, int lfd)
{
	struct pollfd pfd[2] = { { .fd = lfd, .events = POLLIN },
				 { .fd = sock, .events = POLLIN } };
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	int r, status;

	do
		r = poll(pfd, 2, WAIT_MS);
	while (r < 0 && errno == EINTR);
	if (r > 0 && (pfd[0].revents & POLLIN)) {
		/* ERRNO, TRAP and KILL outrank USER_NOTIF: the policy let it through. Answer
		 * EPERM so the call never runs; if our ioctls are blocked, the kill does that. */
		memset(&req, 0, sizeof(req));
		if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0) {
			resp = (struct seccomp_notif_resp){ .id = req.id, .error = -EPERM };
			ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
		}
		kill_and_reap(pid);
		return allowed();
	}
	if (r <= 0) {
		kill_and_reap(pid);
		return inconclusive("no answer from syscall %s in %d ms", name, WAIT_MS);
	}
	if (wait_for(pid, &status) < 0)
		return inconclusive("waitpid: %s", errname(errno));
	child_pid = 0;
	if (WIFSIGNALED(status))
		return report_signal(WTERMSIG(status));
	if (WEXITSTATUS(status) == 255)	/* SECCOMP_RET_ERRNO with 0: a faked success */
		return denied(0, "syscall %s returned without running", name);
	return denied(WEXITSTATUS(status), "syscall %s", name);
}

static int op_syscall(char **argv)
{
	const char *name = argv[0];
	int nr = seccomp_syscall_resolve_name(name), sv[2], lfd, err = 0, status, r;
	pid_t pid;

	if (nr == __NR_SCMP_ERROR)
		return usage_error("syscall: unknown system call `%s`", name);
	if (nr < 0)	/* libseccomp's pseudo numbers: the call exists on other architectures */
		return inconclusive("%s does not exist on this architecture", name);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return inconclusive("socketpair: %s", errname(errno));
	if (fork_or_say(&pid, sv))
		return R_INCONCLUSIVE;
	if (pid == 0) {
		close(sv[0]);
		notify_child(sv[1], nr);
	}
	child_pid = pid;
	close(sv[1]);
	if (pass_listener(sv[0], &err, &lfd, false) < 0 || err || lfd < 0) {
		if (lfd >= 0)
			close(lfd);
		close(sv[0]);
		kill(pid, SIGKILL);
		wait_for(pid, &status);
		child_pid = 0;
		if (err)
			return inconclusive("cannot install the notify filter: seccomp: %s",
					    errname(err));
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
			return inconclusive("SIGSYS while installing the notify filter");
		return inconclusive("the notify filter was not installed");
	}
	r = syscall_verdict(name, pid, sv[0], lfd);
	close(lfd);
	close(sv[0]);
	return r;
}

/* ---- attacks: "allowed" means the attack worked ---- */

static bool high_flag(char **argv)
{
	for (; *argv; argv++)
		if (strcmp(*argv, "--high") == 0)
			return true;
	return false;
}

struct ioctl_ctx {
	unsigned long req;
	bool high;
	const char *name;
};

static int do_tty_ioctl(void *arg)
{
	struct ioctl_ctx *c = arg;
	unsigned long req = c->req;
	char ch = c->req == TIOCSTI ? 'x' : ZSP_TIOCL_GETSHIFTSTATE;
	int fd = 0, tty = -1, err;
	long r;

	if (!isatty(0)) {
		tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
		if (tty >= 0 && isatty(tty))
			fd = tty;
	}
#if ULONG_MAX > 0xffffffffUL
	if (c->high)	/* the kernel truncates cmd to 32 bits; a filter comparing 64 may not */
		req |= 1UL << 32;
#endif
	r = syscall(SYS_ioctl, fd, req, &ch);
	err = errno;
	if (tty >= 0)
		close(tty);
	if (r >= 0)
		return allowed();
	if (err == ENOTTY || err == EIO || (c->req == TIOCLINUX && err == EINVAL))
		return inconclusive("%s (filter let it through, %s)", errname(err),
				    c->req == TIOCSTI ? "no tty" : "not a virtual console");
	return denied(err, "ioctl %s%s", c->name, c->high ? " with high bits" : "");
}

static int op_tty_ioctl(char **argv, unsigned long req, const char *name)
{
	struct ioctl_ctx c = { .req = req, .name = name, .high = high_flag(argv) };

	if (argv[0] && !c.high)
		return usage_error("%s: unknown argument `%s`", name, argv[0]);
#if ULONG_MAX <= 0xffffffffUL
	if (c.high)
		return inconclusive("not 64-bit");
#endif
	return run_child(do_tty_ioctl, &c);
}

static int op_tiocsti(char **argv)
{
	return op_tty_ioctl(argv, TIOCSTI, "TIOCSTI");
}

static int op_tioclinux(char **argv)
{
	return op_tty_ioctl(argv, TIOCLINUX, "TIOCLINUX");
}

static int do_ptrace(void *arg)
{
	pid_t pid = *(pid_t *)arg;

	if (ptrace(PTRACE_ATTACH, pid, 0, 0) < 0)
		return denied(errno, "ptrace attach %d", (int)pid);
	/* Detaching needs the tracee stopped; should we die first, the kernel detaches. */
	waitpid(pid, NULL, __WALL);
	ptrace(PTRACE_DETACH, pid, 0, 0);
	return allowed();
}

static int do_kill(void *arg)
{
	pid_t pid = *(pid_t *)arg;

	return kill(pid, 0) < 0 ? denied(errno, "kill %d", (int)pid) : allowed();
}

static int op_pid(char **argv, int (*fn)(void *))
{
	long v;
	pid_t pid;

	if (!parse_long(argv[0], 1, INT_MAX, &v))	/* 0 and negatives mean process groups */
		return usage_error("expected a positive PID, got `%s`", argv[0]);
	pid = (pid_t)v;
	return run_child(fn, &pid);
}

static int op_ptrace(char **argv)
{
	return op_pid(argv, do_ptrace);
}

static int op_kill(char **argv)
{
	return op_pid(argv, do_kill);
}

struct socket_ctx {
	int family, type, proto;
	bool high;
	const char *name;
};

static int do_socket(void *arg)
{
	struct socket_ctx *c = arg;
	long fd;

#if ULONG_MAX > 0xffffffffUL
	if (c->high)	/* family is an int in the kernel: bit 32 vanishes there, not in a filter */
		fd = syscall(SYS_socket, (long)c->family | (1L << 32), c->type | SOCK_CLOEXEC,
			     c->proto);
	else
#endif
		fd = socket(c->family, c->type | SOCK_CLOEXEC, c->proto);
	if (fd < 0)
		return denied(errno, "socket %s%s", c->name, c->high ? " with high bits" : "");
	close((int)fd);
	return allowed();
}

static int op_socket(char **argv)
{
	static const struct { const char *name; int family, type, proto; } families[] = {
		{ "unix", AF_UNIX, SOCK_STREAM, 0 },
		{ "inet", AF_INET, SOCK_STREAM, 0 },
		{ "inet6", AF_INET6, SOCK_STREAM, 0 },
		{ "netlink", AF_NETLINK, SOCK_RAW, NETLINK_ROUTE },
		{ "packet", AF_PACKET, SOCK_RAW, 0 },
		{ "vsock", AF_VSOCK, SOCK_STREAM, 0 },
	};
	static const struct { const char *name; int type; } types[] = {
		{ "stream", SOCK_STREAM }, { "dgram", SOCK_DGRAM }, { "raw", SOCK_RAW },
	};
	struct socket_ctx c = { .high = high_flag(argv) };
	char *pos[2] = { NULL, NULL };
	int npos = 0;

	for (; *argv; argv++)	/* FAMILY [TYPE], with --high anywhere */
		if (strcmp(*argv, "--high") != 0) {
			if (npos == 2)
				return usage_error("socket: unexpected argument `%s`", *argv);
			pos[npos++] = *argv;
		}
	for (size_t i = 0; pos[0] && i < sizeof(families) / sizeof(families[0]); i++)
		if (strcmp(pos[0], families[i].name) == 0) {
			c.family = families[i].family;
			c.type = families[i].type;
			c.proto = families[i].proto;
			c.name = families[i].name;
		}
	if (!c.name)
		return usage_error("socket: unknown or missing FAMILY");
	if (pos[1]) {
		c.type = -1;
		for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
			if (strcmp(pos[1], types[i].name) == 0)
				c.type = types[i].type;
		if (c.type < 0)
			return usage_error("socket: unknown TYPE `%s`", pos[1]);
	}
#if ULONG_MAX <= 0xffffffffUL
	if (c.high)
		return inconclusive("not 64-bit");
#endif
	return run_child(do_socket, &c);
}

static int do_socketpair_dgram(void *arg UNUSED)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
		return denied(errno, "socketpair AF_UNIX SOCK_DGRAM");
	close(sv[0]);
	close(sv[1]);
	return allowed();
}

/* io_uring runs its operations outside the seccomp filter: a socket made there is an escape. */
static int do_iouring_socket(void *arg UNUSED)
{
	struct io_uring_params p = { 0 };
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	size_t sq_size, cq_size;
	unsigned *tail, *head;
	char *sq, *cq;
	int fd, res;

	fd = (int)syscall(SYS_io_uring_setup, 2, &p);
	if (fd < 0)
		return denied(errno, "io_uring_setup");
	sq_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	cq_size = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	if (p.features & IORING_FEAT_SINGLE_MMAP)
		sq_size = cq_size = sq_size > cq_size ? sq_size : cq_size;
	sq = mmap(NULL, sq_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_SQ_RING);
	cq = p.features & IORING_FEAT_SINGLE_MMAP ? sq :
	     mmap(NULL, cq_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, IORING_OFF_CQ_RING);
	sqe = mmap(NULL, p.sq_entries * sizeof(*sqe), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		   IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqe == MAP_FAILED) {
		res = errno;
		close(fd);
		return inconclusive("mmap io_uring: %s", errname(res));
	}
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_SOCKET;
	sqe->fd = AF_INET;	/* domain; off is the type, len the protocol */
	sqe->off = SOCK_STREAM;
	tail = (unsigned *)(sq + p.sq_off.tail);
	((unsigned *)(sq + p.sq_off.array))[*tail & *(unsigned *)(sq + p.sq_off.ring_mask)] = 0;
	__atomic_store_n(tail, *tail + 1, __ATOMIC_RELEASE);
	if (syscall(SYS_io_uring_enter, fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
		res = errno;
		close(fd);
		return denied(res, "io_uring_enter");
	}
	head = (unsigned *)(cq + p.cq_off.head);
	tail = (unsigned *)(cq + p.cq_off.tail);
	cqe = (struct io_uring_cqe *)(cq + p.cq_off.cqes) +
	      (*head & *(unsigned *)(cq + p.cq_off.ring_mask));
	res = __atomic_load_n(tail, __ATOMIC_ACQUIRE) == *head ? -ENODATA : cqe->res;
	close(fd);
	if (res >= 0) {
		close(res);
		return allowed();
	}
	if (res == -ENODATA)
		return inconclusive("no io_uring completion");
	if (res == -EINVAL)	/* kernels before 5.19 do not know IORING_OP_SOCKET */
		return inconclusive("EINVAL (IORING_OP_SOCKET unsupported)");
	return denied(-res, "IORING_OP_SOCKET");
}

/* Raw calls that return an fd (or another non-negative number) when they go through. */
static int fd_result(long r, int err, const char *what)
{
	if (r < 0)
		return denied(err, "%s", what);
	close((int)r);
	return allowed();
}

#if defined(__x86_64__)
/* The i386 entry: a filter written for x86_64 numbers sees AUDIT_ARCH_I386 here. */
static long int80(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory", "r8", "r9", "r10", "r11");
	return (int)ret;	/* i386 results are 32-bit */
}

static int do_int80_socketcall(void *arg UNUSED)
{
	/* socketcall reads its arguments through a 32-bit pointer. */
	uint32_t *args = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	long r;

	if (args == MAP_FAILED)
		return inconclusive("mmap MAP_32BIT: %s", errname(errno));
	args[0] = AF_INET;
	args[1] = SOCK_STREAM;
	args[2] = 0;
	r = int80(102, 1, (long)(uintptr_t)args, 0);	/* socketcall(SYS_SOCKET, args) */
	return fd_result(r, (int)-r, "int 0x80 socketcall");
}

static int do_int80_socket(void *arg UNUSED)
{
	long r = int80(359, AF_INET, SOCK_STREAM, 0);

	return fd_result(r, (int)-r, "int 0x80 socket");
}

static int do_x32_socket(void *arg UNUSED)
{
	/* __X32_SYSCALL_BIT | 41, socket on the x32 ABI */
	long r = syscall(0x40000000L | 41, AF_INET, SOCK_STREAM, 0);

	return fd_result(r, errno, "x32 socket");
}
#else
static int not_x86_64(void *arg UNUSED)
{
	return inconclusive("not x86_64");
}
#define do_int80_socketcall not_x86_64
#define do_int80_socket not_x86_64
#define do_x32_socket not_x86_64
#endif

static int do_unshare_userns(void *arg UNUSED)
{
	return unshare(CLONE_NEWUSER) < 0 ? denied(errno, "unshare CLONE_NEWUSER") : allowed();
}

/* The new process exits at once; only whether it could be created matters. */
static int clone_result(long pid, const char *what)
{
	if (pid < 0)
		return denied(errno, "%s CLONE_NEWUSER", what);
	if (pid == 0)
		_exit(0);
	waitpid((pid_t)pid, NULL, __WALL);
	return allowed();
}

static int do_clone_userns(void *arg UNUSED)
{
	return clone_result(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0), "clone");
}

static int do_clone3_userns(void *arg UNUSED)
{
	struct zsp_clone_args ca = { .flags = CLONE_NEWUSER, .exit_signal = SIGCHLD };

	return clone_result(syscall(SYS_clone3, &ca, sizeof(ca)), "clone3");
}

static int do_mount(void *arg UNUSED)
{
	if (mount("none", "/tmp", "tmpfs", 0, NULL) < 0)
		return denied(errno, "mount tmpfs on /tmp");
	if (umount2("/tmp", 0) < 0 && umount2("/tmp", MNT_DETACH) < 0)
		fprintf(stderr, "zsp-probe: warning: could not unmount /tmp: %s\n", errname(errno));
	return allowed();
}

static int do_open_tree(void *arg UNUSED)
{
	long r = syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE | O_CLOEXEC);

	return fd_result(r, errno, "open_tree");
}

static int do_fsopen(void *arg UNUSED)
{
	long r = syscall(SYS_fsopen, "tmpfs", 0);

	return fd_result(r, errno, "fsopen");
}

static int do_keyctl(void *arg UNUSED)
{
	long r = syscall(SYS_keyctl, ZSP_KEYCTL_GET_KEYRING_ID, ZSP_KEY_SPEC_SESSION_KEYRING, 0);

	return r < 0 ? denied(errno, "keyctl") : allowed();
}

static int do_add_key(void *arg UNUSED)
{
	/* The process keyring dies with this child: nothing is left behind. */
	long r = syscall(SYS_add_key, "user", "zsp", "x", 1, ZSP_KEY_SPEC_PROCESS_KEYRING);

	return r < 0 ? denied(errno, "add_key") : allowed();
}

static int do_bpf(void *arg UNUSED)
{
	union bpf_attr attr;
	long r;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;	/* the smallest harmless object bpf() makes */
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	r = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	return fd_result(r, errno, "bpf BPF_MAP_CREATE");
}

static int do_perf_event_open(void *arg UNUSED)
{
	struct perf_event_attr attr;
	long r;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	r = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd_result(r, errno, "perf_event_open");
}

static int do_userfaultfd(void *arg UNUSED)
{
	long r = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	return fd_result(r, errno, "userfaultfd");
}

static int do_personality(void *arg)
{
	unsigned long value = *(unsigned long *)arg;
	long prev = syscall(SYS_personality, value);

	if (prev < 0)
		return denied(errno, "personality %#lx", value);
	syscall(SYS_personality, (unsigned long)prev);
	return allowed();
}

static int op_personality(char **argv)
{
	unsigned long value;
	char *end;

	errno = 0;
	value = strtoul(argv[0], &end, 0);
	if (errno || end == argv[0] || *end || argv[0][0] == '-')
		return usage_error("personality: expected a number, got `%s`", argv[0]);
	return run_child(do_personality, &value);
}

/* ---- what the process is and has ---- */

static int op_caps(char **argv UNUSED)
{
	FILE *f = fopen("/proc/self/status", "re");
	unsigned long long eff;
	char line[256];

	if (!f)
		return inconclusive("cannot read /proc/self/status: %s", errname(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			fclose(f);
			if (eff)
				return allowed_note("CapEff %016llx", eff);
			return denied(EPERM, "CapEff 0");
		}
	fclose(f);
	return inconclusive("no CapEff in /proc/self/status");
}

static int op_euid(char **argv UNUSED)
{
	uid_t euid = geteuid();

	return euid == 0 ? allowed_note("euid 0") : denied(EPERM, "euid %u", (unsigned)euid);
}

static int op_env(char **argv)
{
	/* Never print the value: it may be a secret. */
	return getenv(argv[0]) ? allowed() : denied(ENOENT, "%s is not set", argv[0]);
}

/* ---- limits ---- */

static int op_fsize(char **argv)
{
	static char chunk[64 * 1024];
	long total, done = 0;
	ssize_t n;
	int fd, err = 0;

	if (!parse_long(argv[1], 0, 1L << 30, &total))
		return usage_error("fsize: BYTES must be 0..%ld, got `%s`", 1L << 30, argv[1]);
	signal(SIGXFSZ, SIG_IGN);	/* so RLIMIT_FSIZE shows as EFBIG, not as a death */
	fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0)
		return denied(errno, "create %s", argv[0]);
	arm_cleanup(argv[0]);
	while (done < total) {
		n = total - done < (long)sizeof(chunk) ? total - done : (long)sizeof(chunk);
		n = write(fd, chunk, (size_t)n);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : ENOSPC;
			break;
		}
		done += n;
	}
	close(fd);
	remove_created(argv[0], false);
	return err ? denied(err, "wrote %ld of %ld bytes", done, total) : allowed();
}

static int op_nproc(char **argv)
{
	long want, made;
	int p[2], err = 0;
	pid_t pid;
	char c;

	if (!parse_long(argv[0], 1, 100000, &want))
		return usage_error("nproc: N must be 1..100000, got `%s`", argv[0]);
	if (pipe2(p, O_CLOEXEC) < 0)
		return inconclusive("pipe: %s", errname(errno));
	for (made = 0; made < want; made++) {
		pid = fork();
		if (pid < 0) {
			err = errno;
			break;
		}
		if (pid == 0) {
			/* Blocks until the parent closes its end or dies: none outlives us. */
			close(p[1]);
			while (read(p[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
	}
	close(p[1]);
	close(p[0]);
	while (wait(NULL) > 0 || errno == EINTR)
		;
	return err ? denied(err, "forked %ld of %ld", made, want) : allowed();
}

/* ---- simple file wrappers ---- */

static int op_rename(char **argv)
{
	if (rename(argv[0], argv[1]) < 0)
		return denied(errno, "rename %s", argv[0]);
	/* Put it back: the probe reports, it does not rearrange the test's files. */
	if (rename(argv[1], argv[0]) < 0)
		fprintf(stderr, "zsp-probe: warning: could not rename %s back: %s\n", argv[1],
			errname(errno));
	return allowed();
}

static int op_mkdir(char **argv)
{
	if (mkdir(argv[0], 0700) < 0)
		return denied(errno, "mkdir %s", argv[0]);
	remove_created(argv[0], true);
	return allowed();
}

static int op_symlink(char **argv)
{
	if (symlink(argv[0], argv[1]) < 0)
		return denied(errno, "symlink %s", argv[1]);
	remove_created(argv[1], false);
	return allowed();
}

static int op_link(char **argv)
{
	if (link(argv[0], argv[1]) < 0)
		return denied(errno, "link %s", argv[1]);
	remove_created(argv[1], false);
	return allowed();
}

static int op_unlink(char **argv)
{
	return unlink(argv[0]) < 0 ? denied(errno, "unlink %s", argv[0]) : allowed();
}

static int op_create(char **argv)
{
	int fd = open(argv[0], O_WRONLY | O_CREAT | O_EXCL | O_NOCTTY | O_CLOEXEC, 0600);

	if (fd < 0)
		return denied(errno, "create %s", argv[0]);
	close(fd);	/* kept: the test removes it */
	return allowed();
}

/* ---- main ---- */

struct op {
	const char *name, *args;
	int min, max;			/* arguments after the name, --high included */
	int (*run)(char **argv);	/* parses its arguments; or else: */
	int (*child)(void *);		/* run in a child, no arguments */
	const char *help;
};

static const struct op ops[] = {
	{ "read", "PATH", 1, 1, op_read, NULL,
	  "open for reading, read a byte or list the directory" },
	{ "write", "PATH", 1, 1, op_write, NULL,
	  "open for writing; or create and remove a file in/at PATH" },
	{ "exec", "PATH", 1, 1, op_exec, NULL,
	  "execve PATH in a child that is killed at once" },
	{ "connect", "HOST:PORT [--outside-netns=INODE]", 1, 2, op_connect, NULL,
	  "TCP connect; refused or silent (2 s) counts as allowed (not in a namespace of lo only)" },
	{ "syscall", "NAME", 1, 1, op_syscall, NULL,
	  "does the seccomp filter let NAME through (never run)" },
	{ "tiocsti", "[--high]", 0, 1, op_tiocsti, NULL,
	  "push 'x' into the terminal input with TIOCSTI" },
	{ "tioclinux", "[--high]", 0, 1, op_tioclinux, NULL,
	  "TIOCLINUX (get shift state) on the terminal" },
	{ "ptrace", "PID", 1, 1, op_ptrace, NULL,
	  "PTRACE_ATTACH to PID (detaches again)" },
	{ "kill", "PID", 1, 1, op_kill, NULL,
	  "kill(PID, 0)" },
	{ "socket", "FAMILY [TYPE] [--high]", 1, 3, op_socket, NULL,
	  "unix inet inet6 netlink packet vsock; stream dgram raw" },
	{ "socketpair-dgram", "", 0, 0, NULL, do_socketpair_dgram,
	  "socketpair(AF_UNIX, SOCK_DGRAM)" },
	{ "iouring-socket", "", 0, 0, NULL, do_iouring_socket,
	  "io_uring_setup and an IORING_OP_SOCKET" },
	{ "x32-socket", "", 0, 0, NULL, do_x32_socket,
	  "socket() through the x32 system call ABI" },
	{ "int80-socketcall", "", 0, 0, NULL, do_int80_socketcall,
	  "socketcall(SYS_SOCKET) via int $0x80 (i386)" },
	{ "int80-socket", "", 0, 0, NULL, do_int80_socket,
	  "socket() (i386 nr 359) via int $0x80" },
	{ "unshare-userns", "", 0, 0, NULL, do_unshare_userns,
	  "unshare(CLONE_NEWUSER)" },
	{ "clone-userns", "", 0, 0, NULL, do_clone_userns,
	  "clone(CLONE_NEWUSER)" },
	{ "clone3-userns", "", 0, 0, NULL, do_clone3_userns,
	  "clone3(CLONE_NEWUSER)" },
	{ "mount", "", 0, 0, NULL, do_mount,
	  "mount a tmpfs on /tmp (unmounted again)" },
	{ "open-tree", "", 0, 0, NULL, do_open_tree,
	  "open_tree(\"/\", OPEN_TREE_CLONE)" },
	{ "fsopen", "", 0, 0, NULL, do_fsopen,
	  "fsopen(\"tmpfs\")" },
	{ "keyctl", "", 0, 0, NULL, do_keyctl,
	  "keyctl(KEYCTL_GET_KEYRING_ID, session keyring)" },
	{ "add-key", "", 0, 0, NULL, do_add_key,
	  "add_key a user key to the process keyring" },
	{ "bpf", "", 0, 0, NULL, do_bpf,
	  "bpf(BPF_MAP_CREATE) of a one-entry array map" },
	{ "perf-event-open", "", 0, 0, NULL, do_perf_event_open,
	  "perf_event_open a software clock on itself" },
	{ "userfaultfd", "", 0, 0, NULL, do_userfaultfd,
	  "userfaultfd()" },
	{ "personality", "VALUE", 1, 1, op_personality, NULL,
	  "personality(VALUE), then restore it" },
	{ "caps", "", 0, 0, op_caps, NULL,
	  "allowed if the effective capability set is not empty" },
	{ "euid", "", 0, 0, op_euid, NULL,
	  "allowed if the effective uid is 0" },
	{ "env", "NAME", 1, 1, op_env, NULL,
	  "allowed if NAME is in the environment (value never shown)" },
	{ "unix-connect", "PATH", 1, 1, op_unix_connect, NULL,
	  "connect to the unix socket at PATH" },
	{ "listen-unix", "PATH stream|dgram SECONDS", 3, 3, op_listen_unix, NULL,
	  "(a fixture) keep a unix socket at PATH for SECONDS, then remove it" },
	{ "fsize", "PATH BYTES", 2, 2, op_fsize, NULL,
	  "write BYTES bytes to PATH (removed after)" },
	{ "nproc", "N", 1, 1, op_nproc, NULL,
	  "fork N blocked children (reaped after)" },
	{ "rename", "FROM TO", 2, 2, op_rename, NULL,
	  "rename FROM to TO (and back)" },
	{ "mkdir", "PATH", 1, 1, op_mkdir, NULL,
	  "mkdir PATH (removed after)" },
	{ "symlink", "TARGET LINKPATH", 2, 2, op_symlink, NULL,
	  "symlink (removed after)" },
	{ "link", "TARGET LINKPATH", 2, 2, op_link, NULL,
	  "hard link (removed after)" },
	{ "unlink", "PATH", 1, 1, op_unlink, NULL,
	  "unlink PATH (only on files the test owns)" },
	{ "create", "PATH", 1, 1, op_create, NULL,
	  "create PATH exclusively and keep it" },
};

static void print_help(void)
{
	char head[64];

	puts("usage: zsp-probe OP [ARG]...\n"
	     "Performs one operation and prints one line: allowed (exit 0),\n"
	     "denied: ERRNO (detail) (exit 1) or inconclusive: REASON (exit 2).\n"
	     "Usage errors exit 64.\n");
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		snprintf(head, sizeof(head), "%s %s", ops[i].name, ops[i].args);
		printf("  %-30s %s\n", head, ops[i].help);
	}
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct rlimit no_core = { 0, 0 };
	const struct op *op = NULL;

	if (argc < 2)
		return usage_error("missing operation");
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		print_help();
		return 0;
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(argv[1], ops[i].name) == 0)
			op = &ops[i];
	if (!op)
		return usage_error("unknown operation `%s`", argv[1]);
	if (argc - 2 < op->min || argc - 2 > op->max)
		return usage_error("usage: zsp-probe %s %s", op->name, op->args);

	sigaction(SIGALRM, &sa, NULL);
	alarm(TIMEOUT_SECONDS);
	signal(SIGPIPE, SIG_IGN);
	/* A SIGSYS death would dump core into the working directory: leave nothing behind. */
	setrlimit(RLIMIT_CORE, &no_core);
	return op->run ? op->run(argv + 2) : run_child(op->child, NULL);
}
