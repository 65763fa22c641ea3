/* mask.c: zsp-run's file masks (mask.h; doc/linux.md "Masks"). A child of zsp-run joins the
 * user namespace that owns the sandbox's mount namespace (zsp-run's uid made it, through bwrap,
 * so the child holds every capability there), then the mount namespace itself, whose root is
 * the sandbox's root. There it clones the mask's mount once per path and moves it onto the
 * path: no mount table is read, so a mask costs the same whatever the number of mounts. The
 * command runs in a user namespace nested below that one (bwrap --disable-userns) with no
 * capability, so it can neither unmount a mask nor mount over one. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/linux.h"
#include "runtime/cli.h"
#include "runtime/mask.h"

/* What the child reports when a mask fails: the step, its errno, the path's index. */
typedef struct report {
	int step;
	int err;
	size_t at;
} report;

enum { STEP_OK, STEP_SAME_NS, STEP_JOIN, STEP_SOURCE, STEP_OPEN, STEP_LINK, STEP_DIR, STEP_MOUNT, STEP_CHECK };

int zsp_masks_listen(int sock)
{
	int one = 1;
	return setsockopt(sock, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
}

pid_t zsp_exec_step_request(int sock, char want)
{
	char c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	ssize_t n;
	while ((n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n <= 0)
		return (pid_t)n;
	for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
		if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_CREDENTIALS && c == want) {
			struct ucred cr;
			memcpy(&cr, CMSG_DATA(h), sizeof(cr));
			if (cr.pid > 0)
				return cr.pid;
		}
	errno = EPROTO;
	return -1;
}

static int open_beneath_root(const char *path)
{
	struct open_how how = { .flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
}

/* A read-only clone of src's mount moved onto t; false with errno set. */
static bool bind_ro(int src, int t)
{
	int tree = (int)syscall(SYS_open_tree, src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
						 MOUNT_ATTR_NOEXEC };
	bool ok = tree >= 0 && syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof(attr)) == 0 &&
		 syscall(SYS_move_mount, tree, "", t, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == 0;
	int e = errno;
	if (tree >= 0)
		close(tree);
	errno = e;
	return ok;
}

/* Is path, opened now, the mask src (srcst) on a read-only mount? */
static bool reads_as_mask(const struct stat *srcst, const char *path)
{
	struct stat st;
	struct statvfs sv;
	int c = open_beneath_root(path);
	bool ok = c >= 0 && fstat(c, &st) == 0 && fstatvfs(c, &sv) == 0 && st.st_dev == srcst->st_dev &&
		  st.st_ino == srcst->st_ino && st.st_size == 0 && (sv.f_flag & ST_RDONLY);
	if (c >= 0)
		close(c);
	return ok;
}

/* One mask; STEP_OK, or the step that failed with errno set. A clone of src's mount (read-only,
 * nosuid, nodev, noexec since make() bound it so: a clone keeps its mount's flags) is moved onto
 * the file opened, not onto a path, so it lands on exactly what was opened through no symbolic
 * link. The kernel refuses to mount a file on a directory; only then is the target looked at. The
 * first mask is opened again and checked to read as the mask (check): that proves the clone's
 * flags on this kernel, at five calls a mask instead of eleven (doc/linux.md "Masks"). */
static int mask_one(int src, const struct stat *srcst, const char *path, bool check)
{
	int t = open_beneath_root(path);
	if (t < 0)
		return errno == ENOENT ? STEP_OK : errno == ELOOP ? STEP_LINK : STEP_OPEN;
	int tree = (int)syscall(SYS_open_tree, src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
	bool ok = tree >= 0 &&
		  syscall(SYS_move_mount, tree, "", t, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == 0;
	int e = errno, step = STEP_MOUNT;
	struct stat st;
	if (!ok && fstat(t, &st) == 0 && S_ISDIR(st.st_mode))
		step = STEP_DIR, e = EISDIR;
	if (tree >= 0)
		close(tree);
	close(t);
	if (!ok) {
		errno = e;
		return step;
	}
	if (check && !reads_as_mask(srcst, path)) {
		errno = EEXIST;
		return STEP_CHECK;
	}
	return STEP_OK;
}

/* The masks, made in the sandbox's mount namespace: true, or false with r saying why. */
static bool make(pid_t pid, char *const *paths, size_t n, report *rp)
{
	report r = { .step = STEP_JOIN };
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
	int mnt = open(p, O_RDONLY | O_CLOEXEC);
	struct stat a, b;
	if (mnt < 0 || fstat(mnt, &a) != 0 || stat("/proc/self/ns/mnt", &b) != 0)
		goto fail;
	/* never the host's own mounts */
	if (a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
		r.step = STEP_SAME_NS;
		errno = EINVAL;
		goto fail;
	}
	int uns = ioctl(mnt, NS_GET_USERNS);
	if (uns < 0 || setns(uns, CLONE_NEWUSER) != 0 || setns(mnt, CLONE_NEWNS) != 0)
		goto fail;
	/* joining the mount namespace made its root (the sandbox's) this process's root and cwd */
	r.step = STEP_SOURCE;
	struct stat srcst;
	struct statvfs sv;
	int src = open_beneath_root(ZSP_MASK_PATH);
	if (src < 0 || fstat(src, &srcst) != 0)
		goto fail;
	if (!S_ISREG(srcst.st_mode) || srcst.st_size != 0 || (srcst.st_mode & 07777) != 0) {
		errno = EINVAL;
		goto fail;
	}
	/* bwrap's file is on its writable /dev, and the command's uid owns it: read-only over
	 * itself first, or the command could chmod it and write through every mask */
	if (!bind_ro(src, src))
		goto fail;
	close(src);
	src = open_beneath_root(ZSP_MASK_PATH);
	if (src < 0 || fstat(src, &srcst) != 0 || fstatvfs(src, &sv) != 0)
		goto fail;
	if (!(sv.f_flag & ST_RDONLY) || !S_ISREG(srcst.st_mode) || srcst.st_size != 0) {
		errno = EINVAL;
		goto fail;
	}
	for (r.at = 0; r.at < n; r.at++)
		if ((r.step = mask_one(src, &srcst, paths[r.at], r.at == 0)) != STEP_OK)
			goto fail;
	return true;
fail:
	r.err = errno;
	*rp = r;
	return false;
}

/* Why the masks failed, in plain words. */
static void say(const report *r, char *const *paths, size_t n)
{
	const char *path = r->at < n ? paths[r->at] : "";
	switch (r->step) {
	case STEP_SAME_NS:
		zsp_warn("the exec step is in zsp-run's own mount namespace, so no mask is made");
		break;
	case STEP_SOURCE:
		zsp_warn("%s in the sandbox is not the empty, mode-0 mask bwrap was asked for: %s", ZSP_MASK_PATH,
			 strerror(r->err));
		break;
	case STEP_LINK:
		zsp_warn("%s is reached through a symbolic link now, so it cannot be masked", path);
		break;
	case STEP_DIR:
		zsp_warn("%s is a directory now, so it cannot be masked as a file", path);
		break;
	case STEP_OPEN:
		zsp_warn("cannot open %s in the sandbox to mask it: %s", path, strerror(r->err));
		break;
	case STEP_MOUNT:
		zsp_warn("cannot mask %s: %s%s", path, strerror(r->err),
			 r->err == ENOSYS ? " (the mount calls of Linux 5.12 are needed)" : "");
		break;
	case STEP_CHECK:
		zsp_warn("%s does not read as its mask after the mount", path);
		break;
	default:
		zsp_warn("cannot enter the sandbox's mount namespace to mask its files: %s", strerror(r->err));
	}
}

pid_t zsp_masks_start(int sock, char *const *paths, size_t n)
{
	pid_t c = fork();
	if (c != 0)
		return c;
	/* nothing of zsp-run's but stderr and the socket: the pipes whose end tells zsp-run that
	 * bwrap is gone must not be held open here */
	if (dup2(sock, 3) != 3)
		_exit(1);
	syscall(SYS_close_range, 4U, ~0U, 0U);
	pid_t pid = zsp_exec_step_request(3, 'm');
	if (pid == 0)
		_exit(0);
	if (pid < 0) {
		zsp_warn("cannot hear the exec step ask for the masks: %s", strerror(errno));
		_exit(1);
	}
	report r = { 0 };
	if (!make(pid, paths, n, &r)) {
		say(&r, paths, n);
		_exit(1);
	}
	char k = 'k';
	ssize_t w;
	while ((w = write(3, &k, 1)) < 0 && errno == EINTR)
		;
	if (w != 1) {
		zsp_warn("cannot tell the exec step the masks are made: %s", strerror(errno));
		_exit(1);
	}
	_exit(0);
}
