/* sandbox.c: the sandbox's own state (caches, the private /tmp) in zsp's state directory. Every
 * directory below the state directory is reached from its parent's descriptor with O_NOFOLLOW
 * and checked to be the user's: what a sandbox wrote there (it owns cache/ and tmp/, and may
 * have left a link where a mount point goes) can neither redirect a mount nor a removal. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "compiler/sha256.h"
#include "compiler/textesc.h"
#include "compiler/zsp.h"
#include "lang/err.h"
#include "runtime/sandbox.h"

#define META "meta"
#define META_MAGIC "zsp sandbox 1"
#define MAX_DEPTH 200     /* levels below cache/ or tmp/ a walk descends; deeper is left alone */

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = zsp_verr(err, errlen, ZSP_EIO, fmt, ap);
	va_end(ap);
	return rc;
}

static uint64_t avail_bytes(int fd);

void zsp_sandbox_key(const char *policy, const char *workspace, char key[ZSP_SANDBOX_KEY_LEN + 1])
{
	zsp_sha256 c;
	unsigned char d[32];
	zsp_sha256_init(&c);
	zsp_sha256_update(&c, policy, strlen(policy) + 1);
	zsp_sha256_update(&c, workspace, strlen(workspace));
	zsp_sha256_final(&c, d);
	for (int i = 0; i < ZSP_SANDBOX_KEY_LEN / 2; i++)
		snprintf(key + 2 * i, 3, "%02x", d[i]);
}

char *zsp_sandbox_path(const char *state_dir, const char *key)
{
	char *out;
	return asprintf(&out, "%s/sandboxes/%s", state_dir, key) < 0 ? NULL : out;
}

/* What is wrong with the directory open at fd for zsp's state: NULL when it is the user's and,
 * when strict, not writable by group or others; when writable, the user can also write it.
 * advise: say how to mend it (the state directory itself, which the user made). */
static const char *dir_problem(int fd, bool strict, bool writable, bool advise)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return strerror(errno);
	if (st.st_uid != geteuid())
		return "it is not yours";
	if (strict && (st.st_mode & (S_IWGRP | S_IWOTH)))
		return advise ? "group or others can write it (chmod 700 it)" : "group or others can write it";
	if (writable && faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) != 0)
		return "it is not writable (chmod 700 it)";
	return NULL;
}

/* The descriptor of dir (made, mode 700, with its parents when make): a directory, not a
 * symbolic link, the user's, not writable by group or others, writable by the user. -1 with
 * why in err; errno ENOENT when it is missing and not made. */
static int open_state(const char *dir, bool make, char *err, size_t errlen)
{
	if (make) {
		char buf[PATH_MAX];
		if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf)) {
			fail(err, errlen, "%s: path too long", dir);
			return -1;
		}
		for (char *p = buf + 1; *p; p++) {
			if (*p != '/')
				continue;
			*p = 0;
			if (mkdir(buf, 0700) != 0 && errno != EEXIST) {
				fail(err, errlen, "cannot create the state directory %s: %s (choose another "
				     "with --state-dir or XDG_STATE_HOME)", buf, strerror(errno));
				return -1;
			}
			*p = '/';
		}
		if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
			fail(err, errlen, "cannot create the state directory %s: %s (choose another with "
			     "--state-dir or XDG_STATE_HOME)", dir, strerror(errno));
			return -1;
		}
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP || e == ENOTDIR)
			fail(err, errlen, "the state directory %s is a symbolic link or not a directory: "
			     "refusing to use it; replace it with a directory of mode 700", dir);
		else
			fail(err, errlen, "cannot open the state directory %s: %s", dir, strerror(e));
		errno = e;
		return -1;
	}
	const char *why = dir_problem(fd, true, make, true);
	if (why) {
		fail(err, errlen, "the state directory %s cannot be used: %s", dir, why);
		close(fd);
		errno = EACCES;
		return -1;
	}
	return fd;
}

/* The directory name below dfd (made, mode 700, when make), shown as `shown` in messages:
 * not a link, the user's; strict: not writable by group or others either (what no sandbox
 * reaches). O_PATH when path_only. -1 with why in err. */
static int open_below(int dfd, const char *name, bool make, bool strict, bool path_only, const char *shown,
		      char *err, size_t errlen)
{
	if (make && mkdirat(dfd, name, 0700) != 0 && errno != EEXIST) {
		fail(err, errlen, "cannot create %s: %s", shown, strerror(errno));
		return -1;
	}
	int fd = openat(dfd, name, (path_only ? O_PATH : O_RDONLY) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ELOOP || e == ENOTDIR)
			fail(err, errlen, "%s is a symbolic link or not a directory, where zsp keeps the sandbox's "
			     "own files: refusing to use it (zspc cache clear removes the sandbox's state)", shown);
		else
			fail(err, errlen, "cannot open %s: %s", shown, strerror(e));
		errno = e;
		return -1;
	}
	const char *why = dir_problem(fd, strict, false, false);
	if (why) {
		fail(err, errlen, "%s cannot be used: %s: refusing to use it (zspc cache clear removes the "
		     "sandbox's state)", shown, why);
		close(fd);
		errno = EACCES;
		return -1;
	}
	return fd;
}

/* STATE/sandboxes, made when make. */
static int open_sandboxes(const char *state_dir, bool make, char *err, size_t errlen)
{
	int sfd = open_state(state_dir, make, err, errlen);
	if (sfd < 0)
		return -1;
	char shown[PATH_MAX + 16];
	snprintf(shown, sizeof(shown), "%s/sandboxes", state_dir);
	int fd = open_below(sfd, "sandboxes", make, true, false, shown, err, errlen);
	int e = errno;
	close(sfd);
	errno = e;
	return fd;
}

/* The meta file: what `zspc cache list` shows. Replaced whole (a temporary file, renamed). */
static int write_meta(int kfd, const char *dir, const char *policy, const char *workspace, char *err,
		      size_t errlen)
{
	char *p = zsp_text_escape(policy), *w = zsp_text_escape(workspace), *text = NULL;
	int n = p && w ? asprintf(&text, "%s\npolicy %s\nworkspace %s\n", META_MAGIC, p, w) : -1;
	free(p);
	free(w);
	if (n < 0)
		return zsp_err(err, errlen, ZSP_EINTERNAL, "out of memory");
	int rc = ZSP_OK;
	unlinkat(kfd, META ".new", 0);
	int fd = openat(kfd, META ".new", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, (size_t)n) != n || close(fd) != 0 || renameat(kfd, META ".new", kfd, META) != 0) {
		rc = fail(err, errlen, "cannot write %s/%s: %s", dir, META, strerror(errno));
		if (fd >= 0)
			unlinkat(kfd, META ".new", 0);
	}
	free(text);
	return rc;
}

int zsp_sandbox_open(const char *state_dir, const char *policy, const char *workspace, zsp_sandbox *sb,
		     char *err, size_t errlen)
{
	sb->dir = NULL;
	sb->fd = -1;
	zsp_err_clear(err, errlen);
	char key[ZSP_SANDBOX_KEY_LEN + 1], real[PATH_MAX];
	zsp_sandbox_key(policy, workspace, key);
	int bfd = open_sandboxes(state_dir, true, err, errlen);
	if (bfd < 0)
		goto bad;
	/* canonical: the sandbox's paths are mount points, where bwrap would resolve a link */
	if (!(sb->dir = zsp_sandbox_path(realpath(state_dir, real) ? real : state_dir, key))) {
		close(bfd);
		return zsp_err(err, errlen, ZSP_EINTERNAL, "out of memory");
	}
	sb->fd = open_below(bfd, key, true, true, false, sb->dir, err, errlen);
	close(bfd);
	if (sb->fd < 0)
		goto bad;
	while (flock(sb->fd, LOCK_SH) != 0) {
		if (errno != EINTR) {
			fail(err, errlen, "cannot lock %s: %s", sb->dir, strerror(errno));
			goto bad;
		}
	}
	if (faccessat(sb->fd, ".", W_OK | X_OK, AT_EACCESS) != 0) {
		fail(err, errlen, "%s is not writable: chmod 700 it", sb->dir);
		goto bad;
	}
	int rc = write_meta(sb->fd, sb->dir, policy, workspace, err, errlen);
	sb->avail = avail_bytes(sb->fd);
	if (rc == ZSP_OK)
		return ZSP_OK;
	zsp_sandbox_close(sb);
	return rc;
bad:
	zsp_sandbox_close(sb);
	return ZSP_EIO;
}

void zsp_sandbox_close(zsp_sandbox *sb)
{
	if (sb->fd >= 0)
		close(sb->fd);
	sb->fd = -1;
	free(sb->dir);
	sb->dir = NULL;
}

/* A mount point for a file: an empty regular file of the user's, made when missing. */
static int make_file_at(int dfd, const char *name, const char *shown, char *err, size_t errlen)
{
	int fd = openat(dfd, name, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0600);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		int rc = fail(err, errlen, "%s is %s where a file's mount point goes: refusing to use it (zspc "
			      "cache clear removes the sandbox's state)", shown,
			      fd < 0 && errno == ELOOP ? "a symbolic link" : "not a file of yours");
		if (fd >= 0)
			close(fd);
		return rc;
	}
	close(fd);
	return ZSP_OK;
}

int zsp_sandbox_prepare(const zsp_sandbox *sb, const zsp_bwrap_state *st, size_t n, int *fds, char *err,
			size_t errlen)
{
	for (size_t i = 0; i < n; i++)
		fds[i] = -1;
	for (size_t i = 0; i < n; i++) {
		char rel[PATH_MAX], shown[2 * PATH_MAX];
		if (snprintf(rel, sizeof(rel), "%s", st[i].rel) >= (int)sizeof(rel))
			return fail(err, errlen, "%s/%s: path too long", sb->dir, st[i].rel);
		int dfd = dup(sb->fd);
		if (dfd < 0)
			return fail(err, errlen, "cannot open %s: %s", sb->dir, strerror(errno));
		char *name = rel;
		for (char *slash; (slash = strchr(name, '/')); name = slash + 1) {
			*slash = 0;
			snprintf(shown, sizeof(shown), "%s/%s", sb->dir, rel);
			/* cache/ itself no sandbox reaches: held to the state's own standard */
			bool strict = name == rel && strcmp(name, "cache") == 0;
			int next = open_below(dfd, name, true, strict, false, shown, err, errlen);
			close(dfd);
			if (next < 0)
				return ZSP_EIO;
			dfd = next;
			*slash = '/';
		}
		snprintf(shown, sizeof(shown), "%s/%s", sb->dir, st[i].rel);
		int rc = ZSP_OK;
		if (st[i].file) {
			rc = make_file_at(dfd, name, shown, err, errlen);
		} else {
			int fd = open_below(dfd, name, true, false, st[i].argi >= 0, shown, err, errlen);
			if (fd < 0)
				rc = ZSP_EIO;
			else if (st[i].argi >= 0)
				fds[i] = fd;
			else
				close(fd);
		}
		close(dfd);
		if (rc != ZSP_OK)
			return rc;
	}
	return ZSP_OK;
}

/* ---- walking what a sandbox wrote ---------------------------------------------------------- */

/* One file (or link, or anything but a directory) below the walked directory. */
typedef struct node {
	char *rel;
	uint64_t bytes;
	struct timespec when;
} node;

typedef struct walk {
	dev_t dev;
	uint64_t bytes;
	node *nodes;            /* collected when collect */
	size_t n, cap;
	bool collect, oom;
	bool remove;            /* removing everything: directories made writable on the way */
	size_t undone;          /* what could not be removed */
} walk;

static uint64_t disk_bytes(const struct stat *st)
{
	return (uint64_t)st->st_blocks * 512;
}

static struct timespec later(struct timespec a, struct timespec b)
{
	return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec) ? a : b;
}

/* A directory the user owns but cannot change (Go makes its module cache read-only): made
 * writable so that its entries can be removed. */
static void make_writable(int fd)
{
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & S_IRWXU) != S_IRWXU)
		fchmod(fd, (st.st_mode & 07777) | S_IRWXU);
}

/* One more node: rel (below the walk's top) and what lstat said of it. */
static void add_node(walk *w, const char *rel, const struct stat *st)
{
	if (w->n == w->cap) {
		size_t ncap = w->cap ? 2 * w->cap : 1024;
		node *nn = realloc(w->nodes, ncap * sizeof(node));
		if (!nn) {
			w->oom = true;
			return;
		}
		w->nodes = nn;
		w->cap = ncap;
	}
	char *dup = strdup(rel);
	if (!dup) {
		w->oom = true;
		return;
	}
	w->nodes[w->n++] = (node){ dup, disk_bytes(st), later(st->st_atim, st->st_mtim) };
}

/* Counts (and collects, or removes) what is below the directory dfd, whose path below the
 * walk's top is rel (len bytes of buf). Takes dfd. */
static void walk_dir(walk *w, int dfd, char *buf, size_t len, int depth)
{
	if (w->remove)
		make_writable(dfd);
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		w->undone++;
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		size_t nl = strlen(de->d_name);
		if (len + 1 + nl + 1 > PATH_MAX) {
			w->undone++;
			continue;
		}
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			w->undone++;
			continue;
		}
		if (st.st_dev != w->dev) {
			w->undone++;   /* another file system mounted here: not ours to walk */
			continue;
		}
		w->bytes += disk_bytes(&st);
		buf[len] = '/';
		memcpy(buf + len + 1, de->d_name, nl + 1);
		if (S_ISDIR(st.st_mode)) {
			int cfd = depth < MAX_DEPTH ? openat(dirfd(d), de->d_name,
							     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
			if (cfd < 0)
				w->undone++;
			else
				walk_dir(w, cfd, buf, len + 1 + nl, depth + 1);
			if (w->remove && unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) != 0)
				w->undone++;
		} else if (w->remove) {
			if (unlinkat(dirfd(d), de->d_name, 0) != 0)
				w->undone++;
		} else if (w->collect) {
			add_node(w, buf + 1, &st);
		}
		buf[len] = 0;
	}
	closedir(d);
}

/* Opens top (a directory below dfd, not a link) and walks it. -1 when it cannot be opened
 * (ENOENT: missing). */
static int walk_top(walk *w, int dfd, const char *top)
{
	int fd = openat(dfd, top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
		close(fd);
		errno = EACCES;
		return -1;
	}
	w->dev = st.st_dev;
	char buf[PATH_MAX] = "";
	walk_dir(w, fd, buf, 0, 0);
	return 0;
}

static int by_time(const void *pa, const void *pb)
{
	const node *a = pa, *b = pb;
	if (a->when.tv_sec != b->when.tv_sec)
		return a->when.tv_sec < b->when.tv_sec ? -1 : 1;
	if (a->when.tv_nsec != b->when.tv_nsec)
		return a->when.tv_nsec < b->when.tv_nsec ? -1 : 1;
	return strcmp(a->rel, b->rel);
}

/* Removes top/rel (not a directory): each directory on the way opened from top's descriptor
 * with O_NOFOLLOW, so that a link anywhere on the way is never followed. */
static bool remove_node(int topfd, const char *rel)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", rel);
	int dfd = dup(topfd);
	char *name = buf;
	for (char *slash; dfd >= 0 && (slash = strchr(name, '/')); name = slash + 1) {
		*slash = 0;
		int next = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(dfd);
		dfd = next;
	}
	if (dfd < 0)
		return false;
	bool ok = unlinkat(dfd, name, 0) == 0;
	if (!ok && (errno == EACCES || errno == EPERM)) {
		make_writable(dfd);
		ok = unlinkat(dfd, name, 0) == 0;
	}
	close(dfd);
	return ok;
}

/* Directories left empty below dfd (at depth >= keep_depth) are removed. Takes dfd. */
static void prune_empty(int dfd, dev_t dev, int depth, int keep_depth)
{
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
		    st.st_dev != dev || depth >= MAX_DEPTH)
			continue;
		int cfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0)
			continue;
		prune_empty(cfd, dev, depth + 1, keep_depth);
		if (depth + 1 >= keep_depth)
			unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);   /* only when empty */
	}
	closedir(d);
}

/* Trims sub to limit; what it held is in w (measured). */
static int trim_sub(zsp_sandbox *sb, const char *sub, uint64_t limit, const walk *w, zsp_sandbox_trimmed *out,
		    char *err, size_t errlen)
{
	walk c = { .collect = true };
	int topfd = openat(sb->fd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (topfd < 0 || walk_top(&c, sb->fd, sub) != 0) {
		int rc = fail(err, errlen, "cannot read %s/%s: %s", sb->dir, sub, strerror(errno));
		if (topfd >= 0)
			close(topfd);
		free(c.nodes);
		return rc;
	}
	int rc = c.oom ? zsp_err(err, errlen, ZSP_EINTERNAL, "out of memory while trimming %s/%s", sb->dir, sub)
		       : ZSP_OK;
	qsort(c.nodes, c.n, sizeof(node), by_time);
	uint64_t have = c.bytes;
	for (size_t i = 0; i < c.n && have > limit && rc == ZSP_OK; i++) {
		if (!remove_node(topfd, c.nodes[i].rel))
			continue;
		have -= c.nodes[i].bytes < have ? c.nodes[i].bytes : have;
		out->files++;
	}
	for (size_t i = 0; i < c.n; i++)
		free(c.nodes[i].rel);
	free(c.nodes);
	/* cache/ID stays (depth 1), tmp/ itself stays */
	int pfd = dup(topfd);
	if (pfd >= 0)
		prune_empty(pfd, c.dev, 0, strcmp(sub, "cache") == 0 ? 2 : 1);
	close(topfd);
	walk after = { 0 };
	out->after = walk_top(&after, sb->fd, sub) == 0 ? after.bytes : have;
	(void)w;
	return rc;
}

/* usage: what the last measurement found, and when. */
#define USAGE "usage"
#define USAGE_MAX_AGE (24 * 3600)

static bool read_usage(int kfd, uint64_t size[2], time_t *when)
{
	int fd = openat(kfd, USAGE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	char buf[256];
	ssize_t r = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (r <= 0)
		return false;
	buf[r] = 0;
	unsigned long long c, t;
	long long w;
	if (sscanf(buf, "cache %llu\ntmp %llu\nmeasured %lld\n", &c, &t, &w) != 3)
		return false;
	size[0] = c;
	size[1] = t;
	*when = (time_t)w;
	return true;
}

static void write_usage(int kfd, const uint64_t size[2], time_t when)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "cache %llu\ntmp %llu\nmeasured %lld\n", (unsigned long long)size[0],
			 (unsigned long long)size[1], (long long)when);
	unlinkat(kfd, USAGE ".new", 0);
	int fd = openat(kfd, USAGE ".new", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	bool ok = write(fd, buf, (size_t)n) == n;
	if (close(fd) != 0 || !ok || renameat(kfd, USAGE ".new", kfd, USAGE) != 0)
		unlinkat(kfd, USAGE ".new", 0);
}

static uint64_t avail_bytes(int fd)
{
	struct statvfs vfs;
	if (fstatvfs(fd, &vfs) != 0)
		return 0;
	return (uint64_t)vfs.f_bavail * vfs.f_frsize;
}

int zsp_sandbox_trim(zsp_sandbox *sb, uint64_t cache_limit, uint64_t tmp_limit, zsp_sandbox_trimmed out[2],
		     char *err, size_t errlen)
{
	static const char *const subs[2] = { "cache", "tmp" };
	const uint64_t limit[2] = { cache_limit, tmp_limit };
	memset(out, 0, 2 * sizeof(*out));
	out[0].sub = subs[0];
	out[1].sub = subs[1];
	zsp_err_clear(err, errlen);
	if (sb->fd < 0)
		return ZSP_OK;
	uint64_t size[2] = { 0, 0 };
	time_t measured = 0, now = time(NULL);
	bool known = read_usage(sb->fd, size, &measured) && now >= measured && now - measured < USAGE_MAX_AGE;
	/* what the run can have added: no more than the file system lost (an estimate that only
	 * errs high, unless another program frees space meanwhile; the daily walk corrects it) */
	uint64_t avail = avail_bytes(sb->fd);
	uint64_t grown = sb->avail > avail ? sb->avail - avail : 0;
	/* space freed meanwhile by another program hides what the run added: measured instead */
	if (avail > sb->avail)
		known = false;
	bool walk_any = false;
	int rc = ZSP_OK;
	for (int k = 0; k < 2; k++) {
		uint64_t estimate = size[k] + grown < size[k] ? UINT64_MAX : size[k] + grown;
		out[k].before = out[k].after = estimate;
		if (known && estimate <= limit[k]) {
			size[k] = estimate;
			continue;
		}
		walk w = { 0 };
		walk_any = true;
		if (walk_top(&w, sb->fd, subs[k]) != 0) {
			if (errno != ENOENT)
				rc = fail(err, errlen, "cannot read %s/%s: %s", sb->dir, subs[k], strerror(errno));
			size[k] = out[k].before = out[k].after = 0;
			out[k].walked = errno == ENOENT;
			continue;
		}
		out[k].walked = true;
		out[k].before = out[k].after = size[k] = w.bytes;
		if (w.bytes <= limit[k])
			continue;
		/* removing files under a sandbox that still runs would break it: only the last run out
		 * trims (a failed conversion gives the shared lock up: this is the last call) */
		if (flock(sb->fd, LOCK_EX | LOCK_NB) != 0) {
			out[k].busy = true;
			continue;
		}
		int r = trim_sub(sb, subs[k], limit[k], &w, &out[k], err, errlen);
		if (r != ZSP_OK && rc == ZSP_OK)
			rc = r;
		size[k] = out[k].after;
	}
	write_usage(sb->fd, size, walk_any || !known ? now : measured);
	/* shared again (a failed conversion dropped it): the caller may run once more */
	while (walk_any && flock(sb->fd, LOCK_SH) != 0 && errno == EINTR)
		;
	return rc;
}

/* ---- zspc cache ---------------------------------------------------------------------------- */

/* The meta of a sandbox: policy and workspace as written there (escaped). */
static void read_meta(int kfd, zsp_sandbox_info *in, time_t *used)
{
	int fd = openat(kfd, META, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	char buf[8192];
	ssize_t r = -1;
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		*used = st.st_mtime;
		r = read(fd, buf, sizeof(buf) - 1);
	}
	if (fd >= 0)
		close(fd);
	buf[r > 0 ? r : 0] = 0;
	size_t ml = strlen(META_MAGIC);
	if (r <= 0 || strncmp(buf, META_MAGIC, ml) != 0 || buf[ml] != '\n') {
		in->problem = strdup("its meta file is missing or unreadable");
		return;
	}
	for (char *line = buf + ml + 1, *nl; *line; line = nl + 1) {
		if (!(nl = strchr(line, '\n')))
			break;
		*nl = 0;
		if (strncmp(line, "policy ", 7) == 0 && !in->policy)
			in->policy = strdup(line + 7);
		else if (strncmp(line, "workspace ", 10) == 0 && !in->workspace)
			in->workspace = strdup(line + 10);
	}
	if (!in->policy || !in->workspace)
		in->problem = strdup("its meta file names no policy or workspace");
}

static bool add_part(zsp_sandbox_info *in, const char *name, uint64_t bytes)
{
	char **np = realloc(in->parts, (in->nparts + 1) * sizeof(char *));
	if (np)
		in->parts = np;
	uint64_t *nb = np ? realloc(in->bytes, (in->nparts + 1) * sizeof(uint64_t)) : NULL;
	if (nb)
		in->bytes = nb;
	char *dup = nb ? strdup(name) : NULL;
	if (!dup)
		return false;
	in->parts[in->nparts] = dup;
	in->bytes[in->nparts++] = bytes;
	in->total += bytes;
	return true;
}

/* The sizes of cache/ID and tmp of one sandbox. */
static bool sizes(int kfd, zsp_sandbox_info *in)
{
	int cfd = openat(kfd, "cache", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = cfd >= 0 ? fdopendir(cfd) : NULL;
	struct dirent *de;
	bool ok = true;
	if (!d && cfd >= 0)
		close(cfd);
	while (d && ok && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		walk w = { 0 };
		char name[PATH_MAX];
		snprintf(name, sizeof(name), "cache/%s", de->d_name);
		if (walk_top(&w, dirfd(d), de->d_name) == 0)
			ok = add_part(in, name, w.bytes);
	}
	if (d)
		closedir(d);
	walk t = { 0 };
	if (ok && walk_top(&t, kfd, "tmp") == 0)
		ok = add_part(in, "tmp", t.bytes);
	/* by name: cache/... then tmp */
	for (size_t i = 1; ok && i < in->nparts; i++)
		for (size_t j = i; j > 0 && strcmp(in->parts[j - 1], in->parts[j]) > 0; j--) {
			char *np = in->parts[j];
			uint64_t nb = in->bytes[j];
			in->parts[j] = in->parts[j - 1];
			in->bytes[j] = in->bytes[j - 1];
			in->parts[j - 1] = np;
			in->bytes[j - 1] = nb;
		}
	return ok;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const zsp_sandbox_info *)a)->key, ((const zsp_sandbox_info *)b)->key);
}

static bool is_key(const char *s)
{
	return strlen(s) == ZSP_SANDBOX_KEY_LEN && strspn(s, "0123456789abcdef") == ZSP_SANDBOX_KEY_LEN;
}

int zsp_sandbox_list(const char *state_dir, zsp_sandbox_info **out, size_t *n, char *err, size_t errlen)
{
	*out = NULL;
	*n = 0;
	zsp_err_clear(err, errlen);
	int bfd = open_sandboxes(state_dir, false, err, errlen);
	if (bfd < 0) {
		if (errno == ENOENT) {
			zsp_err_clear(err, errlen);
			return ZSP_OK;
		}
		return ZSP_EIO;
	}
	DIR *d = fdopendir(bfd);
	if (!d) {
		close(bfd);
		return fail(err, errlen, "cannot read %s/sandboxes: %s", state_dir, strerror(errno));
	}
	zsp_sandbox_info *v = NULL;
	size_t cnt = 0;
	int rc = ZSP_OK;
	struct dirent *de;
	while (rc == ZSP_OK && (de = readdir(d))) {
		if (!is_key(de->d_name))
			continue;
		zsp_sandbox_info *nv = realloc(v, (cnt + 1) * sizeof(*v));
		if (!nv) {
			rc = zsp_err(err, errlen, ZSP_EINTERNAL, "out of memory");
			break;
		}
		v = nv;
		zsp_sandbox_info *in = &v[cnt++];
		memset(in, 0, sizeof(*in));
		snprintf(in->key, sizeof(in->key), "%s", de->d_name);
		char shown[PATH_MAX + 32];
		snprintf(shown, sizeof(shown), "%s/sandboxes/%s", state_dir, de->d_name);
		char why[PATH_MAX + 256];
		int kfd = open_below(dirfd(d), de->d_name, false, true, false, shown, why, sizeof(why));
		if (kfd < 0) {
			in->problem = strdup(why);
			continue;
		}
		if (flock(kfd, LOCK_EX | LOCK_NB) != 0)
			in->in_use = true;
		else
			flock(kfd, LOCK_UN);
		read_meta(kfd, in, &in->used);
		if (!sizes(kfd, in))
			rc = zsp_err(err, errlen, ZSP_EINTERNAL, "out of memory");
		close(kfd);
	}
	closedir(d);
	if (cnt)
		qsort(v, cnt, sizeof(*v), by_key);
	*out = v;
	*n = cnt;
	return rc;
}

void zsp_sandbox_list_free(zsp_sandbox_info *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].policy);
		free(v[i].workspace);
		free(v[i].problem);
		for (size_t k = 0; k < v[i].nparts; k++)
			free(v[i].parts[k]);
		free(v[i].parts);
		free(v[i].bytes);
	}
	free(v);
}

int zsp_sandbox_clear(const char *state_dir, const char *key, bool *busy, char *err, size_t errlen)
{
	if (busy)
		*busy = false;
	zsp_err_clear(err, errlen);
	if (!is_key(key))
		return zsp_err(err, errlen, ZSP_EUSAGE, "`%s` is not a sandbox's key (16 hex digits)", key);
	int bfd = open_sandboxes(state_dir, false, err, errlen);
	if (bfd < 0)
		return errno == ENOENT ? zsp_err(err, errlen, ZSP_EUSAGE, "no sandbox %s in %s", key, state_dir) : ZSP_EIO;
	char shown[PATH_MAX + 32];
	snprintf(shown, sizeof(shown), "%s/sandboxes/%s", state_dir, key);
	/* a symbolic link or a foreign directory in its place: only the name is removed */
	struct stat st;
	if (fstatat(bfd, key, &st, AT_SYMLINK_NOFOLLOW) != 0) {
		close(bfd);
		return zsp_err(err, errlen, ZSP_EUSAGE, "no sandbox %s in %s", key, state_dir);
	}
	if (!S_ISDIR(st.st_mode)) {
		int rc = unlinkat(bfd, key, 0) == 0 ? ZSP_OK
			 : fail(err, errlen, "cannot remove %s: %s", shown, strerror(errno));
		close(bfd);
		return rc;
	}
	char why[PATH_MAX + 256];
	int kfd = open_below(bfd, key, false, false, false, shown, why, sizeof(why));
	if (kfd < 0) {
		close(bfd);
		return fail(err, errlen, "%s", why);
	}
	if (flock(kfd, LOCK_EX | LOCK_NB) != 0) {
		close(kfd);
		close(bfd);
		if (busy)
			*busy = true;
		return fail(err, errlen, "%s is in use by a running sandbox: not cleared", shown);
	}
	/* out of the way first: a run that starts now makes a fresh one */
	char trash[64];
	snprintf(trash, sizeof(trash), ".clear-%s-%ld", key, (long)getpid());
	int rc = ZSP_OK;
	if (renameat(bfd, key, bfd, trash) != 0) {
		rc = fail(err, errlen, "cannot move %s aside: %s", shown, strerror(errno));
	} else {
		walk w = { .remove = true };
		if (fstat(kfd, &st) == 0)
			w.dev = st.st_dev;
		char buf[PATH_MAX] = "";
		walk_dir(&w, kfd, buf, 0, 0);   /* takes kfd */
		kfd = -1;
		if (unlinkat(bfd, trash, AT_REMOVEDIR) != 0 || w.undone)
			rc = fail(err, errlen, "%s: %zu entries could not be removed (left in %s/sandboxes/%s)",
				  shown, w.undone, state_dir, trash);
	}
	if (kfd >= 0)
		close(kfd);
	close(bfd);
	return rc;
}
