/* supervise.c: the connect supervisor (doc/linux.md "Sockets"). zsp-exec installs a filter that
 * sends every connect() of the sandbox here (SECCOMP_RET_USER_NOTIF) and hands over its listener.
 * Each call is performed by the supervisor on a duplicate of the caller's socket (pidfd_getfd)
 * with its own copy of the address, never continued in the caller: the kernel would read the
 * address again from memory the sandbox can change after the check. A unix path is resolved
 * inside the sandbox's root (openat2 RESOLVE_IN_ROOT under /proc/PID/root), the socket found must
 * be one the policy allows (device and inode, stat'd on the host at launch), and the connect goes
 * to that very inode through /proc/self/fd/N. One dispatcher per system call: with --strict the
 * path calls go to runtime/opens.c, answered on the receiving thread (a FIFO's open, which may
 * wait for its peer, on a thread of its own, as every connect is). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "backends/linux.h"
#include "runtime/caller.h"
#include "runtime/cli.h"
#include "runtime/opens.h"
#include "runtime/supervise.h"

/* Connects waiting for a peer each hold a thread; past this many the next waits in line (a
 * sandbox that opens that many slow connects only slows its own). */
enum { MAX_PENDING = 256 };

typedef struct allowed_sock {
	dev_t dev;
	ino_t ino;
} allowed_sock;

struct zsp_supervisor {
	char *bpf;                /* the filter zsp-exec installs (malloc'd) */
	size_t bpflen;
	bool full;                /* mode full: abstract names are the host's */
	bool connects;            /* connect() comes here */
	zsp_opens *opens;         /* --strict: the path calls come here (runtime/opens.h); NULL */
	bool broken;              /* the receiving thread could not be made fit for them */
	allowed_sock *allowed;
	size_t nallowed;
	int sock;                 /* zsp-exec sends the listener there */
	int listener;
	size_t sizes_notif, sizes_resp;
	pthread_mutex_t lock;
	unsigned refs;            /* the receiving thread and each handler */
	unsigned pending;         /* handlers running */
	bool warned;              /* a supervisor failure was said once */
};

static bool denied_too(const zsp_ir_policy *p, const char *path)
{
	for (size_t i = 0; i < p->nunix; i++)
		if (p->unix_socks[i].decision == ZSP_DENY && strcmp(p->unix_socks[i].path, path) == 0)
			return true;
	return false;
}

int zsp_supervise_new(const zsp_ir_policy *p, const zsp_supervise_opts *o, zsp_supervisor **out, char *msg,
		      size_t len)
{
	zsp_supervisor *s = calloc(1, sizeof(*s));
	if (!s || !(s->allowed = calloc(p->nunix + 1, sizeof(allowed_sock)))) {
		free(s);
		snprintf(msg, len, "out of memory");
		return ZSP_EINTERNAL;
	}
	s->listener = s->sock = -1;
	s->full = p->net_mode == ZSP_NET_FULL;
	s->connects = o->connects;
	pthread_mutex_init(&s->lock, NULL);
	if (o->opens && !(s->opens = zsp_opens_new(p, o->workspace, o->home))) {
		snprintf(msg, len, "out of memory");
		zsp_supervise_free(s);
		return ZSP_EINTERNAL;
	}
	for (size_t i = 0; i < p->nunix && o->connects; i++) {
		const zsp_ir_unix *u = &p->unix_socks[i];
		struct stat st;
		if (u->decision != ZSP_ALLOW || denied_too(p, u->path))
			continue;
		if (stat(u->path, &st) != 0 || !S_ISSOCK(st.st_mode)) {
			zsp_warn("warning: the allowed unix socket %s %s: it stays unreachable for this run", u->path,
				 errno == ENOENT ? "does not exist" : "is not a socket");
			continue;
		}
		s->allowed[s->nallowed++] = (allowed_sock){ st.st_dev, st.st_ino };
	}
	int rc = zsp_seccomp_notify_export(o->connects, o->opens, &s->bpf, &s->bpflen);
	if (rc != 0) {
		snprintf(msg, len, "cannot build the supervisor's filter: %s", strerror(-rc));
		zsp_supervise_free(s);
		return ZSP_EIO;
	}
	*out = s;
	return ZSP_OK;
}

const void *zsp_supervise_filter(const zsp_supervisor *s, size_t *len)
{
	*len = s->bpflen;
	return s->bpf;
}

void zsp_supervise_free(zsp_supervisor *s)
{
	if (!s)
		return;
	if (s->listener >= 0)
		close(s->listener);
	if (s->sock >= 0)
		close(s->sock);
	pthread_mutex_destroy(&s->lock);
	zsp_opens_free(s->opens);
	free(s->allowed);
	free(s->bpf);
	free(s);
}

static void unref(zsp_supervisor *s)
{
	pthread_mutex_lock(&s->lock);
	bool last = --s->refs == 0;
	pthread_mutex_unlock(&s->lock);
	if (last)
		zsp_supervise_free(s);
}

/* A failure of the supervisor itself: the call is refused, and said once. */
static int failed(zsp_supervisor *s, const char *what, int err)
{
	pthread_mutex_lock(&s->lock);
	bool first = !s->warned;
	s->warned = true;
	pthread_mutex_unlock(&s->lock);
	if (first)
		zsp_warn("zsp-run: the supervisor %s: %s; the sandbox's calls it decides are refused (EACCES)",
			 what, strerror(err));
	return EACCES;
}

static bool is_allowed(const zsp_supervisor *s, const struct stat *st)
{
	for (size_t i = 0; i < s->nallowed; i++)
		if (s->allowed[i].dev == st->st_dev && s->allowed[i].ino == st->st_ino)
			return true;
	return false;
}

static int connect_errno(int sock, const void *addr, socklen_t len)
{
	int rc;
	while ((rc = connect(sock, addr, len)) != 0 && errno == EINTR)
		;
	return rc == 0 ? 0 : errno;
}

/* A pathname: resolved inside the sandbox's root (a relative one from the caller's working
 * directory), then connected by the inode found, if allowed. The sandbox may rename directories
 * meanwhile: then another file of its own view is found, and checked the same way. */
static int connect_path(zsp_supervisor *s, const struct seccomp_notif *req, int sock, const char *path)
{
	char base[64], full[PATH_MAX];
	snprintf(base, sizeof(base), "/proc/%u/root", (unsigned)req->pid);
	if (path[0] != '/') {
		if (!zsp_caller_cwd((pid_t)req->pid, full, sizeof(full) - sizeof(((struct sockaddr_un *)0)->sun_path) - 2))
			return ENOENT;
		strcat(full, "/");
		strcat(full, path);
		path = full;
	}
	int dir = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return errno == ENOENT ? ENOENT : failed(s, "cannot open the sandbox's root", errno);
	if (!zsp_caller_valid(s->listener, req->id)) {
		close(dir);
		return ENOENT;
	}
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int target = (int)syscall(SYS_openat2, dir, path, &how, sizeof(how));
	int err = errno;
	close(dir);
	if (target < 0)
		return err == EXDEV ? EACCES : err;
	struct stat st;
	int rc;
	if (fstat(target, &st) != 0)
		rc = failed(s, "cannot stat a socket", errno);
	else if (!S_ISSOCK(st.st_mode))
		rc = ECONNREFUSED;  /* what connect() says of a file that is no socket */
	else if (!is_allowed(s, &st))
		rc = EACCES;
	else {
		struct sockaddr_un via = { .sun_family = AF_UNIX };
		int n = snprintf(via.sun_path, sizeof(via.sun_path), "/proc/self/fd/%d", target);
		rc = connect_errno(sock, &via, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1));
	}
	close(target);
	return rc;
}

static int connect_unix(zsp_supervisor *s, const struct seccomp_notif *req, int sock,
			const struct sockaddr_storage *addr, socklen_t len)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)addr;
	size_t off = offsetof(struct sockaddr_un, sun_path);
	if (len <= off || un->sun_family != AF_UNIX)
		return EINVAL;
	if (un->sun_path[0] == 0)   /* abstract: the network namespace's (mode full: the host's) */
		return s->full ? EACCES : connect_errno(sock, addr, len);
	char path[sizeof(un->sun_path) + 1];
	memcpy(path, un->sun_path, len - off);
	path[len - off] = 0;  /* the kernel, too, reads up to the first NUL */
	return connect_path(s, req, sock, path);
}

/* connect(fd, addr, len): the errno to answer with, 0 for success. */
static int on_connect(zsp_supervisor *s, const struct seccomp_notif *req)
{
	int fd = (int)req->data.args[0];
	int ilen = (int)req->data.args[2];
	struct sockaddr_storage addr;
	memset(&addr, 0, sizeof(addr));
	if (ilen < 0 || (size_t)ilen > sizeof(addr))
		return EINVAL;
	if (ilen > 0) {
		struct iovec local = { &addr, (size_t)ilen };
		struct iovec remote = { (void *)(uintptr_t)req->data.args[1], (size_t)ilen };
		ssize_t r = process_vm_readv((pid_t)req->pid, &local, 1, &remote, 1, 0);
		if (r != ilen)
			return r < 0 && errno == ESRCH ? ENOENT : EFAULT;
	}
	int pidfd = zsp_caller_pidfd((pid_t)req->pid);
	if (pidfd < 0)
		return errno == ESRCH ? ENOENT : failed(s, "cannot open the caller (pidfd_open)", errno);
	if (!zsp_caller_valid(s->listener, req->id)) {
		close(pidfd);
		return ENOENT;
	}
	int sock = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	int err = errno;
	close(pidfd);
	if (sock < 0)
		return err == EBADF ? EBADF : failed(s, "cannot take the caller's socket (pidfd_getfd)", err);
	int domain;
	socklen_t dlen = sizeof(domain);
	int rc;
	if (getsockopt(sock, SOL_SOCKET, SO_DOMAIN, &domain, &dlen) != 0)
		rc = errno == ENOTSOCK ? ENOTSOCK : failed(s, "cannot read a socket's family", errno);
	else if (domain == AF_UNIX)
		rc = connect_unix(s, req, sock, &addr, (socklen_t)ilen);
	else  /* inet, and the other families the main filter lets be made */
		rc = connect_errno(sock, &addr, (socklen_t)ilen);
	close(sock);
	return rc;
}

typedef struct job {
	zsp_supervisor *s;
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
} job;

/* Answers j; false when it was not, as it may block and belongs on a thread of its own. */
static bool answer(job *j, bool may_block)
{
	zsp_supervisor *s = j->s;
	const struct seccomp_notif *req = j->req;
	long long val = 0;
	int err;
	if (req->data.nr == SYS_connect && s->connects)
		err = on_connect(s, req);
	else if (s->opens && zsp_opens_takes(req->data.nr))
		err = s->broken ? EACCES : zsp_opens_answer(s->opens, s->listener, req, may_block, &val);
	else
		err = ENOSYS;
	if (err == ZSP_OPENS_BLOCKS)
		return false;
	if (err == ZSP_OPENS_SENT)
		return true;
	memset(j->resp, 0, s->sizes_resp);
	j->resp->id = req->id;
	j->resp->error = -err;
	j->resp->val = err ? 0 : val;
	/* ENOENT: the caller is gone (a signal); nothing to answer */
	ioctl(s->listener, SECCOMP_IOCTL_NOTIF_SEND, j->resp);
	return true;
}

static void job_free(job *j)
{
	free(j->req);
	free(j->resp);
	free(j);
}

static void *handler_main(void *arg)
{
	job *j = arg;
	zsp_supervisor *s = j->s;
	answer(j, true);
	job_free(j);
	pthread_mutex_lock(&s->lock);
	s->pending--;
	pthread_mutex_unlock(&s->lock);
	unref(s);
	return NULL;
}

/* A connect (or a FIFO's open) answered on a thread of its own, so one that waits for its peer
 * holds up no other; inline when that many are pending or no thread can be made. */
static void dispatch(zsp_supervisor *s, job *j)
{
	pthread_mutex_lock(&s->lock);
	bool threaded = s->pending < MAX_PENDING;
	if (threaded) {
		s->pending++;
		s->refs++;
	}
	pthread_mutex_unlock(&s->lock);
	pthread_t t;
	pthread_attr_t attr;
	if (threaded && pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		int rc = pthread_create(&t, &attr, handler_main, j);
		pthread_attr_destroy(&attr);
		if (rc == 0)
			return;
	}
	if (threaded) {
		pthread_mutex_lock(&s->lock);
		s->pending--;
		s->refs--;
		pthread_mutex_unlock(&s->lock);
	}
	answer(j, true);
	job_free(j);
}

static int receive_listener(int sock)
{
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			      .msg_controllen = sizeof(ctl.buf) };
	ssize_t r;
	while ((r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	struct cmsghdr *c = r == 1 ? CMSG_FIRSTHDR(&msg) : NULL;
	int fd = -1;
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}

static void *receiver_main(void *arg)
{
	zsp_supervisor *s = arg;
	struct seccomp_notif_sizes sizes;
	s->listener = receive_listener(s->sock);
	close(s->sock);
	s->sock = -1;
	/* no listener: the sandbox did not get as far as zsp-exec, which then ran nothing */
	if (s->listener < 0 || syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0)
		goto out;
	s->sizes_notif = sizes.seccomp_notif > sizeof(struct seccomp_notif) ? sizes.seccomp_notif
									   : sizeof(struct seccomp_notif);
	s->sizes_resp = sizes.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)
				? sizes.seccomp_notif_resp : sizeof(struct seccomp_notif_resp);
	int setup = s->opens ? zsp_opens_thread_setup() : 0;
	if (setup) {
		s->broken = true;
		failed(s, "cannot set up its thread for the sandbox's opens", setup);
	}
	for (;;) {
		job *j = calloc(1, sizeof(*j));
		if (j) {
			j->s = s;
			j->req = calloc(1, s->sizes_notif);
			j->resp = calloc(1, s->sizes_resp);
		}
		if (!j || !j->req || !j->resp) {
			if (j)
				job_free(j);
			/* closing the listener fails the sandbox's connect() calls (ENOSYS): closed */
			failed(s, "ran out of memory", ENOMEM);
			break;
		}
		if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_RECV, j->req) != 0) {
			int err = errno;
			job_free(j);
			if (err == EINTR)
				continue;
			if (err != ENOENT)  /* ENOENT: the filter's last process is gone */
				failed(s, "cannot receive", err);
			break;
		}
		/* the path calls inline: most are over in microseconds, and a thread each would cost
		 * more than the call */
		if (s->opens && zsp_opens_takes(j->req->data.nr) && answer(j, false)) {
			job_free(j);
			continue;
		}
		dispatch(s, j);
	}
out:
	unref(s);
	return NULL;
}

int zsp_supervise_start(zsp_supervisor *s, int sock, char *msg, size_t len)
{
	s->refs = 1;
	s->sock = sock;
	sigset_t all, old;
	sigfillset(&all);
	/* the run's signals stay zsp-run's main thread's (it forwards them to the sandbox) */
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_t t;
	pthread_attr_t attr;
	int rc = pthread_attr_init(&attr);
	if (rc == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		rc = pthread_create(&t, &attr, receiver_main, s);
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(msg, len, "cannot start the connect supervisor: %s", strerror(rc));
		zsp_supervise_free(s);
		return ZSP_EIO;
	}
	return ZSP_OK;
}
