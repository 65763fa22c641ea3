/* workspace.c: the default WORKSPACE: the top of the user's own git work tree holding the
 * current directory, else that directory (doc/linux.md "Parameters"). Reads no environment. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/workspace.h"

enum git_entry {
	GIT_NONE,     /* no .git here: look further up */
	GIT_TOP,      /* a repository of uid's: this is the top */
	GIT_REFUSED,  /* a .git that is not uid's, or not a repository: the walk ends */
};

/* An open .git directory that git would take for one: HEAD, objects/ and refs/. */
static bool is_git_dir(int fd)
{
	struct stat st;
	return fstatat(fd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       fstatat(fd, "objects", &st, 0) == 0 && S_ISDIR(st.st_mode) &&
	       fstatat(fd, "refs", &st, 0) == 0 && S_ISDIR(st.st_mode);
}

/* An open .git file that points at a git directory, as a worktree's or a submodule's does. */
static bool is_git_file(int fd)
{
	static const char prefix[] = "gitdir: ";
	char head[sizeof(prefix) - 1];
	size_t n = 0;
	while (n < sizeof(head)) {
		ssize_t r = read(fd, head + n, sizeof(head) - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		n += (size_t)r;
	}
	return memcmp(head, prefix, sizeof(head)) == 0;
}

/* What dir/.git (dirfd: dir, open) says about dir. The .git is opened without following a
 * link and vetted on the descriptor, so what is checked is what was found. */
static enum git_entry git_entry(int dirfd, uid_t uid)
{
	struct stat st;
	if (fstatat(dirfd, ".git", &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT || errno == ENOTDIR ? GIT_NONE : GIT_REFUSED;
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return GIT_REFUSED;   /* a link, a FIFO: not a .git zsp vouches for */
	/* a directory is only looked into: O_PATH needs no read permission on it */
	int fd = S_ISDIR(st.st_mode)
		 ? openat(dirfd, ".git", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
		 : openat(dirfd, ".git", O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return GIT_REFUSED;
	bool ok = fstat(fd, &st) == 0 && st.st_uid == uid &&
		  (S_ISDIR(st.st_mode) ? is_git_dir(fd) : S_ISREG(st.st_mode) && is_git_file(fd));
	close(fd);
	return ok ? GIT_TOP : GIT_REFUSED;
}

static bool is_stop(const char *dir, const char *const *stops, size_t nstops)
{
	for (size_t i = 0; i < nstops; i++)
		if (stops[i] && strcmp(stops[i], dir) == 0)
			return true;
	return false;
}

void zsp_workspace_default(const char *cwd, uid_t uid, const char *const *stops, size_t nstops,
			   char out[PATH_MAX])
{
	snprintf(out, PATH_MAX, "%s", cwd);
	char dir[PATH_MAX];
	if (cwd[0] != '/' || snprintf(dir, sizeof(dir), "%s", cwd) >= (int)sizeof(dir))
		return;
	dev_t dev = 0;
	for (bool first = true;; first = false) {
		if (strcmp(dir, "/") == 0 || is_stop(dir, stops, nstops))
			return;
		int fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (fd < 0)
			return;
		if (fstat(fd, &st) != 0 || (!first && st.st_dev != dev)) {
			close(fd);
			return;   /* git does not look across a file system boundary either */
		}
		dev = st.st_dev;
		enum git_entry e = git_entry(fd, uid);
		close(fd);
		if (e == GIT_TOP && st.st_uid == uid) {
			snprintf(out, PATH_MAX, "%s", dir);
			return;
		}
		if (e != GIT_NONE)
			return;
		char *slash = strrchr(dir, '/');
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
}
