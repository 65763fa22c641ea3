/* opens.c: zsp-run --strict's open decisions (runtime/opens.h; doc/linux.md "Strict"). A path
 * is read once from the caller's memory and then only resolved here: inside the sandbox's root
 * (openat2 RESOLVE_IN_ROOT under /proc/TID/root, so absolute symlinks and `..` stay in the
 * sandbox's view), to an O_PATH descriptor whose path the kernel then names (readlink of
 * /proc/self/fd/N gives it as the sandbox sees it). That path is judged, and the caller's open
 * is made from that very descriptor (reopened through /proc/self/fd/N with the caller's flags),
 * so an O_TRUNC or a read happens only on the inode that was judged. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "compiler/oracle.h"
#include "compiler/path.h"
#include "runtime/caller.h"
#include "runtime/opens.h"

/* A directory renamed could take the matches of a glob with directories in it (`~/keys/NAME.pem` as a glob)
 * out of the glob's reach: its entries are looked at first, up to this many; past it the rename
 * fails with EXDEV, which makes mv copy instead (each copy an open judged here). */
enum { RENAME_WALK_MAX = 4096, RENAME_WALK_DEPTH = 64, MAX_LINKS = 40 };

struct zsp_opens {
	const zsp_ir_policy *p;
	zsp_oracle_env env;
	zsp_oracle *oracle;
	char **walked;          /* literal leading directories of those globs ("": any place) */
	size_t nwalked;
};

/* A rule the launch's mounts do not hold for what appears later: a deny or read-only glob
 * (protected names and caches are the guard's and the cache's). */
static bool judged_rule(const zsp_ir_fs_rule *r)
{
	return r->glob && !r->protect && !r->cache &&
	       (r->access == ZSP_ACCESS_DENY || r->access == ZSP_ACCESS_READ);
}

/* The leading directories of a glob without metacharacters ("" when it starts with one). */
static char *literal_dirs(const char *pattern)
{
	size_t cut = 0, end = 0;
	for (;;) {
		size_t next = end;
		while (pattern[next] == '/')
			next++;
		size_t stop = next;
		while (pattern[stop] && pattern[stop] != '/')
			stop++;
		if (!pattern[stop])
			break;   /* the last component is the name, not a directory */
		bool meta = false;
		for (size_t i = next; i < stop; i++)
			meta |= pattern[i] == '*' || pattern[i] == '?' || pattern[i] == '[' || pattern[i] == '\\';
		if (meta)
			break;
		cut = end = stop;
	}
	return strndup(pattern, cut);
}

zsp_opens *zsp_opens_new(const zsp_ir_policy *p, const char *workspace, const char *home)
{
	zsp_opens *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->p = p;
	o->env = (zsp_oracle_env){ .workspace = workspace, .home = home };
	o->walked = calloc(p->nfs + 1, sizeof(char *));
	if (!o->walked || !(o->oracle = zsp_oracle_new(p, &o->env))) {
		zsp_opens_free(o);
		return NULL;
	}
	for (size_t i = 0; i < p->nfs; i++) {
		const char *path = p->fs[i].path;
		/* `**` + "/NAME": what matches is decided by the last name alone, which no rename of a
		 * directory above changes */
		if (!judged_rule(&p->fs[i]) || (strncmp(path, "**/", 3) == 0 && !strchr(path + 3, '/')))
			continue;
		if (!(o->walked[o->nwalked++] = literal_dirs(path))) {
			zsp_opens_free(o);
			return NULL;
		}
	}
	return o;
}

void zsp_opens_free(zsp_opens *o)
{
	if (!o)
		return;
	for (size_t i = 0; i < o->nwalked; i++)
		free(o->walked[i]);
	free(o->walked);
	zsp_oracle_free(o->oracle);
	free(o);
}

bool zsp_opens_takes(int nr)
{
	switch (nr) {
	case SYS_open: case SYS_openat: case SYS_creat: case SYS_truncate:
	case SYS_rename: case SYS_renameat: case SYS_renameat2: case SYS_link: case SYS_linkat:
		return true;
	default:
		return false;
	}
}

int zsp_opens_thread_setup(void)
{
	if (unshare(CLONE_FS) != 0)
		return errno;
	umask(0);
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) != 0)
		return errno;
	if (d[0].effective || d[1].effective) {
		d[0].effective = d[1].effective = 0;
		if (syscall(SYS_capset, &h, d) != 0)
			return errno;
	}
	return 0;
}

/* ---- the decision ------------------------------------------------------------------------ */

/* EACCES for a path a glob denies, EROFS for a change to one a glob makes read-only, else 0.
 * Whoever made the file: a match is a match (doc/linux.md "Strict"). */
static int judge(const zsp_opens *o, const char *path, bool change)
{
	const zsp_ir_fs_rule *r = zsp_oracle_fs_rule(o->oracle, path);
	if (!r || !judged_rule(r))
		return 0;
	if (r->access == ZSP_ACCESS_DENY)
		return EACCES;
	return change ? EROFS : 0;
}

/* ---- the caller and its paths ------------------------------------------------------------ */

typedef struct call {
	const zsp_opens *o;
	int listener;
	const struct seccomp_notif *req;
	pid_t tid;
	int root;               /* its /proc/TID/root, O_PATH; -1 until needed */
	int pidfd;              /* -1 until needed */
	zsp_caller_ids ids;
	bool have_ids;
} call;

static void call_end(call *c)
{
	if (c->root >= 0)
		close(c->root);
	if (c->pidfd >= 0)
		close(c->pidfd);
}

/* The root is opened by pid, so the notification is checked after: the pid was still its. */
static int need_root(call *c)
{
	if (c->root >= 0)
		return 0;
	char base[64];
	snprintf(base, sizeof(base), "/proc/%d/root", (int)c->tid);
	c->root = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->root < 0)
		return errno == ENOENT ? ESRCH : EACCES;
	return zsp_caller_valid(c->listener, c->req->id) ? 0 : ESRCH;
}

static int need_ids(call *c)
{
	if (!c->have_ids && !(c->have_ids = zsp_caller_ids_read(c->tid, &c->ids)))
		return ESRCH;
	return 0;
}

/* The caller's descriptor n, duplicated into *fd. */
static int take_fd(call *c, int n, int *fd)
{
	if (c->pidfd < 0) {
		if ((c->pidfd = zsp_caller_pidfd(c->tid)) < 0)
			return ESRCH;
		if (!zsp_caller_valid(c->listener, c->req->id))
			return ESRCH;
	}
	*fd = (int)syscall(SYS_pidfd_getfd, c->pidfd, n, 0);
	return *fd >= 0 ? 0 : errno == EBADF ? EBADF : EACCES;
}

static int copy(char *out, size_t size, const char *a, const char *b, const char *c)
{
	int n = snprintf(out, size, "%s%s%s", a, b, c);
	return n < 0 || (size_t)n >= size ? ENAMETOOLONG : 0;
}

/* The path of fd as the sandbox sees it: 0, or EINVAL for what has no path (a pipe). A file
 * removed since is named by the name it had. */
static int fd_path(int fd, char *out, size_t size)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, out, size);
	if (n <= 0 || (size_t)n >= size)
		return n > 0 ? ENAMETOOLONG : EACCES;
	out[n] = 0;
	if (out[0] != '/')
		return EINVAL;
	struct stat st;
	size_t del = strlen(" (deleted)");
	if ((size_t)n > del && strcmp(out + n - del, " (deleted)") == 0 && fstat(fd, &st) == 0 && st.st_nlink == 0)
		out[n - del] = 0;
	return 0;
}

/* "//" and "/./" inside a path are the kernel's no-ops: folded so the names below are seen. */
static void squash(char *path)
{
	char *w = path;
	for (const char *r = path; *r;) {
		if (r[0] == '/' && (r[1] == '/' || (r[1] == '.' && r[2] == '/'))) {
			r += r[1] == '/' ? 1 : 2;
			continue;
		}
		*w++ = *r++;
	}
	*w = 0;
}

/* path made absolute in the sandbox's view: relative to the caller's cwd, or to its dirfd. */
static int absolute(call *c, int dirfd, const char *path, char *out, size_t size)
{
	char base[PATH_MAX];
	if (!path[0])
		return ENOENT;
	if (path[0] == '/')
		return copy(out, size, path, "", "");
	if (dirfd == AT_FDCWD) {
		if (!zsp_caller_cwd(c->tid, base, sizeof(base)))
			return ENOENT;
	} else {
		int fd, err = take_fd(c, dirfd, &fd);
		if (err)
			return err;
		struct stat st;
		err = fstat(fd, &st) != 0 ? EBADF : !S_ISDIR(st.st_mode) ? ENOTDIR : fd_path(fd, base, sizeof(base));
		close(fd);
		if (err)
			return err == EINVAL ? ENOTDIR : err;
	}
	return copy(out, size, base, strcmp(base, "/") == 0 ? "" : "/", path);
}

/* The names of the sandbox's /proc and /dev that mean the opener itself: its procfs resolves
 * them for whoever opens, and the supervisor is no process of the sandbox's, so they are made
 * the caller's /proc/PID here (%T: its thread id). */
static const struct {
	const char *name, *to;
} self_names[] = {
	{ "/proc/self", "" }, { "/proc/thread-self", "/task/%T" }, { "/proc/net", "/net" },
	{ "/proc/mounts", "/mounts" }, { "/dev/fd", "/fd" }, { "/dev/stdin", "/fd/0" },
	{ "/dev/stdout", "/fd/1" }, { "/dev/stderr", "/fd/2" },
};

static const char *after_prefix(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(path, prefix, n) == 0 && (path[n] == '/' || !path[n]) ? path + n : NULL;
}

static int rewrite_self(call *c, char *path, size_t size)
{
	for (size_t i = 0; i < sizeof(self_names) / sizeof(self_names[0]); i++) {
		const char *rest = after_prefix(path, self_names[i].name);
		if (!rest)
			continue;
		int err = need_ids(c);
		if (err)
			return err;
		char head[96], tail[PATH_MAX];
		if (strcmp(self_names[i].to, "/task/%T") == 0)
			snprintf(head, sizeof(head), "/proc/%ld/task/%ld", c->ids.tgid, c->ids.tid);
		else
			snprintf(head, sizeof(head), "/proc/%ld%s", c->ids.tgid, self_names[i].to);
		if (copy(tail, sizeof(tail), rest, "", ""))
			return ENAMETOOLONG;
		return copy(path, size, head, tail, "");
	}
	return 0;
}

/* A decimal number ending at a '/' or the end: its value and *end, or -1. */
static long number(const char *s, const char **end)
{
	long v = 0;
	const char *p = s;
	while (*p >= '0' && *p <= '9' && v < 100000000)
		v = v * 10 + (*p++ - '0');
	if (p == s || (*p && *p != '/'))
		return -1;
	*end = p;
	return v;
}

/* The caller's own magic links, which RESOLVE_IN_ROOT will not follow: /proc/PID/fd/N (the
 * descriptor itself: *fd, or a path below the directory it is), cwd, root and exe, where PID
 * is the caller's (or its thread's /proc/PID/task/TID). Any other process's stay refused: the
 * resolution below then fails with ELOOP (doc/linux.md "Strict"). */
static int follow_own(call *c, char *path, size_t size, int *fd)
{
	const char *rest = after_prefix(path, "/proc");
	long pid;
	/* the pid first: most /proc names (/proc/cpuinfo) need no read of the caller's status */
	if (!rest || !*rest || (pid = number(rest + 1, &rest)) < 0)
		return 0;
	int err = need_ids(c);
	if (err)
		return err;
	if (pid != c->ids.tgid && pid != c->ids.tid)
		return 0;
	const char *task = after_prefix(rest, "/task");
	if (task && *task && number(task + 1, &task) == c->ids.tid)
		rest = task;
	char base[PATH_MAX], tail[PATH_MAX];
	const char *after;
	if ((after = after_prefix(rest, "/fd")) && *after) {
		long n = number(after + 1, &after);
		if (n < 0 || n > INT_MAX)
			return 0;
		int taken;
		err = take_fd(c, (int)n, &taken);
		if (err)
			return err == EBADF ? ENOENT : err;
		if (!*after) {
			*fd = taken;
			return 0;
		}
		err = fd_path(taken, base, sizeof(base));
		close(taken);
		if (err)
			return err == EINVAL ? ENOTDIR : err;
	} else if ((after = after_prefix(rest, "/cwd"))) {
		if (!zsp_caller_cwd(c->tid, base, sizeof(base)))
			return ENOENT;
	} else if ((after = after_prefix(rest, "/root"))) {
		base[0] = 0;
		if (!*after)
			after = "/";
	} else if ((after = after_prefix(rest, "/exe")) && !*after) {
		char link[64];
		snprintf(link, sizeof(link), "/proc/%d/exe", (int)c->tid);
		ssize_t n = readlink(link, base, sizeof(base) - 1);
		if (n <= 0 || base[0] != '/')
			return ENOENT;
		base[n] = 0;
	} else {
		return 0;
	}
	if (copy(tail, sizeof(tail), after, "", ""))
		return ENAMETOOLONG;
	return copy(path, size, base, tail, "");
}

/* The caller's path argument at addr, made absolute in its view with its own names followed:
 * 0 with the path in out, or with the descriptor it names in *fd (-1 otherwise). */
static int read_path(call *c, int dirfd, uint64_t addr, char *out, size_t size, int *fd)
{
	char raw[PATH_MAX];
	*fd = -1;
	int err = zsp_caller_string(c->tid, addr, raw, sizeof(raw));
	if (!err)
		err = absolute(c, dirfd, raw, out, size);
	if (!err) {
		squash(out);
		err = rewrite_self(c, out, size);
	}
	return err ? err : follow_own(c, out, size, fd);
}

/* openat2 inside the caller's root: an O_PATH descriptor in *fd, or the errno. */
static int resolve(call *c, const char *path, int flags, int *fd)
{
	int err = need_root(c);
	if (err)
		return err;
	struct open_how how = { .flags = (uint64_t)(O_PATH | O_CLOEXEC | flags),
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	*fd = (int)syscall(SYS_openat2, c->root, path, &how, sizeof(how));
	if (*fd >= 0)
		return 0;
	return errno == EXDEV ? EACCES : errno;
}

/* The last component of path into name, the rest into parent; *slash when it ended in '/'. */
static int split(const char *path, char *parent, size_t psize, char *name, bool *slash)
{
	size_t len = strlen(path);
	*slash = false;
	while (len > 1 && path[len - 1] == '/') {
		len--;
		*slash = true;
	}
	if (len == 1)
		return EBUSY;   /* the root itself */
	size_t start = len;
	while (start > 0 && path[start - 1] != '/')
		start--;
	if (len - start > NAME_MAX)
		return ENAMETOOLONG;
	memcpy(name, path + start, len - start);
	name[len - start] = 0;
	size_t plen = start > 1 ? start - 1 : 1;
	if (plen >= psize)
		return ENAMETOOLONG;
	memcpy(parent, path, plen);
	parent[plen] = 0;
	return 0;
}

static bool dot_name(const char *name)
{
	return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

/* ---- open -------------------------------------------------------------------------------- */

static int send_fd(call *c, int fd, int flags)
{
	struct seccomp_notif_addfd add = { .id = c->req->id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (uint32_t)fd,
					   .newfd_flags = (uint32_t)(flags & O_CLOEXEC) };
	int r = ioctl(c->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
	int err = errno;
	close(fd);
	/* ENOENT: the caller is gone; anything else (EMFILE) is its answer */
	return r >= 0 || err == ENOENT ? ZSP_OPENS_SENT : err;
}

/* /dev/tty names the opener's controlling terminal: opened by the supervisor it would be
 * zsp-run's, the person's own. The caller's is found among its descriptors. */
static int own_terminal(call *c, int *fd)
{
	long long tty = zsp_caller_tty(c->tid);
	if (tty <= 0)
		return tty < 0 ? ESRCH : ENXIO;
	/* the kernel's encoding: minor's low byte, major, then minor's high bits */
	dev_t want = makedev((unsigned)((tty >> 8) & 0xfff), (unsigned)((tty & 0xff) | ((tty >> 12) & 0xfff00)));
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)c->tid);
	DIR *d = opendir(dir);
	if (!d)
		return ESRCH;
	int err = ENXIO;
	struct dirent *e;
	while (err == ENXIO && (e = readdir(d))) {
		struct stat st;
		const char *end;
		long n = number(e->d_name, &end);
		if (n < 0 || fstatat(dirfd(d), e->d_name, &st, 0) != 0 || !S_ISCHR(st.st_mode) || st.st_rdev != want)
			continue;
		err = take_fd(c, (int)n, fd);
	}
	closedir(d);
	return err;
}

/* The caller's open of what fd (O_PATH) names at path, with its flags. */
static int open_found(call *c, int fd, int flags, bool may_block)
{
	struct stat st;
	char path[PATH_MAX];
	if (fstat(fd, &st) != 0) {
		close(fd);
		return EACCES;
	}
	bool change = (flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC);
	int err = fd_path(fd, path, sizeof(path));
	if (err == EINVAL)
		err = 0;   /* no path (a pipe, a socket): nothing a rule names */
	else if (!err)
		err = judge(c->o, path, change);
	if (!err && (flags & O_PATH))
		return send_fd(c, fd, flags);
	if (!err && S_ISLNK(st.st_mode))
		err = ELOOP;   /* O_NOFOLLOW on a symbolic link */
	if (!err && S_ISFIFO(st.st_mode) && !(flags & O_NONBLOCK) && !may_block)
		err = ZSP_OPENS_BLOCKS;
	if (!err && S_ISCHR(st.st_mode) && st.st_rdev == makedev(5, 0)) {
		int tty;
		err = own_terminal(c, &tty);
		if (!err) {
			close(fd);
			fd = tty;
		}
	}
	if (err) {
		close(fd);
		return err;
	}
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	int nfd = open(link, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_CLOEXEC | O_NOCTTY);
	err = errno;
	close(fd);
	return nfd < 0 ? err : send_fd(c, nfd, flags);
}

/* O_CREAT of a name that is not there: made in the parent judged, never through a link. */
static int create(call *c, const char *path, int flags, mode_t mode, char *next, size_t nsize)
{
	char parent[PATH_MAX], name[NAME_MAX + 1], full[PATH_MAX];
	bool slash;
	int pfd, err = split(path, parent, sizeof(parent), name, &slash);
	if (!err && (slash || dot_name(name)))
		err = EISDIR;
	if (err || (err = resolve(c, parent, O_DIRECTORY, &pfd)))
		return err == EBUSY ? EISDIR : err;
	err = fd_path(pfd, parent, sizeof(parent));
	if (!err)
		err = copy(full, sizeof(full), parent, strcmp(parent, "/") == 0 ? "" : "/", name);
	struct stat st;
	if (!err && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
		/* a dangling link: O_CREAT makes its target, which is judged in turn */
		char target[PATH_MAX];
		ssize_t n = (flags & O_EXCL) ? -1 : readlinkat(pfd, name, target, sizeof(target) - 1);
		close(pfd);
		if (flags & O_EXCL)
			return EEXIST;
		if (n <= 0)
			return ENOENT;
		target[n] = 0;
		if (target[0] == '/')
			return copy(next, nsize, target, "", "");
		return copy(next, nsize, parent, "/", target);
	}
	if (!err)
		err = judge(c->o, full, true);
	if (!err && need_ids(c))
		err = ESRCH;
	if (err) {
		close(pfd);
		return err;
	}
	struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY),
				.mode = (uint64_t)(mode & 07777 & ~c->ids.umask),
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, pfd, name, &how, sizeof(how));
	err = errno;
	close(pfd);
	if (fd >= 0)
		return send_fd(c, fd, flags);
	/* a link or a file made there meanwhile: look again */
	if (err == ELOOP || (err == EEXIST && !(flags & O_EXCL)))
		return copy(next, nsize, path, "", "");
	return err;
}

/* O_TMPFILE: a file without a name, in the directory judged. */
static int open_tmpfile(call *c, const char *path, int flags, mode_t mode)
{
	int fd = -1, err = resolve(c, path, O_DIRECTORY, &fd);
	char dir[PATH_MAX];
	if (!err && !(err = fd_path(fd, dir, sizeof(dir))))
		err = judge(c->o, dir, true);
	if (!err)
		err = need_ids(c);
	if (err) {
		if (fd >= 0)
			close(fd);
		return err;
	}
	int nfd = openat(fd, ".", (flags & ~O_NOFOLLOW) | O_CLOEXEC, mode & 07777 & ~c->ids.umask);
	err = errno;
	close(fd);
	return nfd < 0 ? err : send_fd(c, nfd, flags);
}

static int on_open(call *c, int dirfd, uint64_t addr, int flags, mode_t mode, bool may_block)
{
	char path[PATH_MAX], next[PATH_MAX];
	if (flags & O_PATH)   /* the kernel ignores the others with it */
		flags &= O_PATH | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW;
	int fd, err = read_path(c, dirfd, addr, path, sizeof(path), &fd);
	if (err)
		return err;
	if (fd >= 0)
		return open_found(c, fd, flags, may_block);
	if ((flags & O_TMPFILE) == O_TMPFILE)
		return open_tmpfile(c, path, flags, mode);
	/* O_CREAT|O_EXCL follows no final link, as the kernel's */
	int follow = (flags & O_NOFOLLOW) || ((flags & O_CREAT) && (flags & O_EXCL)) ? O_NOFOLLOW : 0;
	for (int hops = 0; hops < MAX_LINKS; hops++) {
		err = resolve(c, path, follow | (flags & O_DIRECTORY), &fd);
		if (!err) {
			if ((flags & O_CREAT) && (flags & O_EXCL)) {
				close(fd);
				return EEXIST;
			}
			return open_found(c, fd, flags, may_block);
		}
		if (err != ENOENT || !(flags & O_CREAT))
			return err;
		next[0] = 0;
		err = create(c, path, flags, mode, next, sizeof(next));
		if (err || !next[0])
			return err;
		memcpy(path, next, sizeof(path));
	}
	return ELOOP;
}

/* ---- truncate, rename, link --------------------------------------------------------------- */

static int on_truncate(call *c, uint64_t addr, long long length)
{
	char path[PATH_MAX];
	int fd, err = read_path(c, AT_FDCWD, addr, path, sizeof(path), &fd);
	if (!err && fd < 0)
		err = resolve(c, path, 0, &fd);
	if (err)
		return err;
	struct stat st;
	if (fstat(fd, &st) != 0)
		err = EACCES;
	else if (S_ISDIR(st.st_mode))
		err = EISDIR;
	else if (!S_ISREG(st.st_mode))
		err = EINVAL;
	else if (!(err = fd_path(fd, path, sizeof(path))))
		err = judge(c->o, path, true);
	int wfd = -1;
	if (!err) {
		char link[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		wfd = open(link, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		err = wfd < 0 ? errno : ftruncate(wfd, (off_t)length) != 0 ? errno : 0;
	}
	if (wfd >= 0)
		close(wfd);
	close(fd);
	return err;
}

/* One name of a rename or a link: its directory resolved and named, and the name in it. */
typedef struct side {
	int parent;            /* O_PATH; -1 */
	char name[NAME_MAX + 1];
	char full[PATH_MAX];   /* the directory's path as the sandbox sees it, then the name */
	bool slash;            /* written with a trailing '/': it must be a directory */
} side;

static int side_open(call *c, int dirfd, uint64_t addr, side *s)
{
	char path[PATH_MAX], parent[PATH_MAX];
	int fd, err = read_path(c, dirfd, addr, path, sizeof(path), &fd);
	s->parent = -1;
	if (fd >= 0) {
		close(fd);
		return EXDEV;   /* a descriptor's magic link is not a name to move */
	}
	if (!err)
		err = split(path, parent, sizeof(parent), s->name, &s->slash);
	if (!err)
		err = resolve(c, parent, O_DIRECTORY, &s->parent);
	if (!err)
		err = fd_path(s->parent, parent, sizeof(parent));
	if (!err)
		err = copy(s->full, sizeof(s->full), parent, strcmp(parent, "/") == 0 ? "" : "/", s->name);
	return err;
}

static void side_end(side *s)
{
	if (s->parent >= 0)
		close(s->parent);
	s->parent = -1;
}

/* The entries below a directory about to move, each judged at the place it has now. */
static int walk_under(const zsp_opens *o, int dir, char *path, size_t len, unsigned depth, size_t *budget)
{
	DIR *d = fdopendir(dir);
	if (!d) {
		close(dir);
		return EXDEV;
	}
	int err = 0;
	struct dirent *e;
	while (!err && (e = readdir(d))) {
		if (dot_name(e->d_name))
			continue;
		size_t n = strlen(e->d_name);
		if (*budget == 0 || len + 1 + n >= PATH_MAX) {
			err = EXDEV;
			break;
		}
		(*budget)--;
		path[len] = '/';
		memcpy(path + len + 1, e->d_name, n + 1);
		if (judge(o, path, true)) {
			err = EACCES;
			break;
		}
		struct stat st;
		bool is_dir = e->d_type == DT_DIR ||
			      (e->d_type == DT_UNKNOWN && fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			       S_ISDIR(st.st_mode));
		if (!is_dir)
			continue;
		int sub = depth >= RENAME_WALK_DEPTH ? -1
			  : openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		err = sub < 0 ? EXDEV : walk_under(o, sub, path, len + 1 + n, depth + 1, budget);
	}
	path[len] = 0;
	closedir(d);
	return err;
}

/* A directory renamed (or exchanged) from s: 0 when no glob with directories can lose a match
 * by it; EACCES when an entry below is such a match; EXDEV when there is too much to look at. */
static int dir_moves(const zsp_opens *o, const side *s)
{
	bool near = false;
	for (size_t i = 0; i < o->nwalked && !near; i++)
		near = !o->walked[i][0] || zsp_path_is_prefix(o->walked[i], s->full) ||
		       zsp_path_is_prefix(s->full, o->walked[i]);
	if (!near)
		return 0;
	int dir = openat(s->parent, s->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return EXDEV;
	char path[PATH_MAX];
	memcpy(path, s->full, strlen(s->full) + 1);
	size_t budget = RENAME_WALK_MAX;
	return walk_under(o, dir, path, strlen(path), 0, &budget);
}

/* What moves away from s: judged as a change, and below it when it is a directory. */
static int source_moves(const zsp_opens *o, const side *s)
{
	struct stat st;
	if (fstatat(s->parent, s->name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno;
	if (s->slash && !S_ISDIR(st.st_mode))
		return ENOTDIR;
	int err = judge(o, s->full, true);
	return err || !S_ISDIR(st.st_mode) ? err : dir_moves(o, s);
}

static int on_rename(call *c, int odir, uint64_t oaddr, int ndir, uint64_t naddr, unsigned flags)
{
	side a, b;
	b.parent = -1;
	int err = side_open(c, odir, oaddr, &a);
	if (!err)
		err = side_open(c, ndir, naddr, &b);
	if (!err && (dot_name(a.name) || dot_name(b.name)))
		err = EBUSY;
	if (!err)
		err = source_moves(c->o, &a);
	if (!err)
		err = (flags & RENAME_EXCHANGE) ? source_moves(c->o, &b) : judge(c->o, b.full, true);
	if (!err && renameat2(a.parent, a.name, b.parent, b.name, flags) != 0)
		err = errno;
	side_end(&a);
	side_end(&b);
	return err;
}

static int on_link(call *c, int odir, uint64_t oaddr, int ndir, uint64_t naddr, int flags)
{
	side a = { .parent = -1 }, b = { .parent = -1 };
	char path[PATH_MAX], raw[2];
	int src = -1, err = 0;
	if ((flags & AT_EMPTY_PATH) && zsp_caller_string(c->tid, oaddr, raw, sizeof(raw)) == 0 && !raw[0]) {
		err = odir == AT_FDCWD ? EPERM : take_fd(c, odir, &src);
	} else if (flags & AT_SYMLINK_FOLLOW) {
		err = read_path(c, odir, oaddr, path, sizeof(path), &src);
		if (!err && src < 0)
			err = resolve(c, path, 0, &src);
	} else {
		err = side_open(c, odir, oaddr, &a);
		if (!err)
			err = dot_name(a.name) ? EPERM : judge(c->o, a.full, true);
	}
	if (!err && src >= 0) {
		err = fd_path(src, path, sizeof(path));
		err = err == EINVAL ? 0 : err ? err : judge(c->o, path, true);
	}
	if (!err)
		err = side_open(c, ndir, naddr, &b);
	if (!err)
		err = dot_name(b.name) ? EEXIST : judge(c->o, b.full, true);
	if (!err) {
		char link[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", src);
		int rc = src >= 0 ? linkat(AT_FDCWD, link, b.parent, b.name, AT_SYMLINK_FOLLOW)
				  : linkat(a.parent, a.name, b.parent, b.name, 0);
		err = rc != 0 ? errno : 0;
	}
	if (src >= 0)
		close(src);
	side_end(&a);
	side_end(&b);
	return err;
}

/* ---- the dispatcher ----------------------------------------------------------------------- */

int zsp_opens_answer(const zsp_opens *o, int listener, const struct seccomp_notif *req, bool may_block,
		     long long *val)
{
	call c = { .o = o, .listener = listener, .req = req, .tid = (pid_t)req->pid, .root = -1, .pidfd = -1 };
	const __u64 *a = req->data.args;
	int err;
	*val = 0;
	switch (req->data.nr) {
	case SYS_open:
		err = on_open(&c, AT_FDCWD, a[0], (int)a[1], (mode_t)a[2], may_block);
		break;
	case SYS_openat:
		err = on_open(&c, (int)a[0], a[1], (int)a[2], (mode_t)a[3], may_block);
		break;
	case SYS_creat:
		err = on_open(&c, AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC, (mode_t)a[1], may_block);
		break;
	case SYS_truncate:
		err = on_truncate(&c, a[0], (long long)a[1]);
		break;
	case SYS_rename:
		err = on_rename(&c, AT_FDCWD, a[0], AT_FDCWD, a[1], 0);
		break;
	case SYS_renameat:
		err = on_rename(&c, (int)a[0], a[1], (int)a[2], a[3], 0);
		break;
	case SYS_renameat2:
		err = on_rename(&c, (int)a[0], a[1], (int)a[2], a[3], (unsigned)a[4]);
		break;
	case SYS_link:
		err = on_link(&c, AT_FDCWD, a[0], AT_FDCWD, a[1], 0);
		break;
	case SYS_linkat:
		err = on_link(&c, (int)a[0], a[1], (int)a[2], a[3], (int)a[4]);
		break;
	default:
		err = ENOSYS;
	}
	call_end(&c);
	/* ESRCH: the caller is gone; whatever is answered is heard by no one */
	return err == ESRCH ? ENOENT : err;
}
