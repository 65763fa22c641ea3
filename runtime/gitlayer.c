/* gitlayer.c: copies of a git directory's top-level files for the sandbox, and after the run what
 * changed there applied to the host: files whose host copy did not change meanwhile, config only
 * as far as every key it adds cannot make git run a program (backends/gitcfg.h). */
#include "config.h"

#define _GNU_SOURCE 1
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/gitcfg.h"
#include "compiler/textesc.h"
#include "compiler/zsp.h"
#include "runtime/gitlayer.h"

#define TREE_MAX_DEPTH 64

typedef struct lfile {
	char *name;
	struct stat host;          /* the host's, when copied */
	struct stat copy;          /* the copy, once made */
	char *text;                /* config, config.worktree: the copy's content at launch */
	size_t len;
} lfile;

typedef struct layer {
	const zsp_bwrap_layer *pl;
	lfile *files;
	size_t nfiles;
	bool made;
} layer;

struct zsp_gitlayer {
	char *base;
	layer *layers;
	size_t n;
	char **written;
	size_t nwritten;
	size_t failed;
	bool keep;                 /* something could not be applied: the layers stay */
	FILE *out;
};

static char msg[PATH_MAX + 256];

static const char *say(const char *what, const char *path, int err)
{
	snprintf(msg, sizeof(msg), "%s %s: %s", what, path, strerror(err));
	return msg;
}

/* The directories make_dirs made for the last base, deepest last: removed again (when empty)
 * by zsp_gitlayer_base_remove, so that a run without a git directory leaves nothing. */
static char made_dirs[8][PATH_MAX];
static size_t nmade;

/* mkdir -p of dir's parents and dir itself, each 0700 when made. */
static int make_dirs(const char *dir)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	nmade = 0;
	for (char *s = buf + 1;; s++) {
		s = strchr(s, '/');
		if (s)
			*s = 0;
		if (mkdir(buf, 0700) == 0) {
			if (nmade < 8)
				snprintf(made_dirs[nmade++], PATH_MAX, "%s", buf);
		} else if (errno != EEXIST) {
			return -1;
		}
		if (!s)
			return 0;
		*s = '/';
	}
}

int zsp_gitlayer_base(const char *state_dir, char **path, const char **why)
{
	char parent[PATH_MAX], tmpl[PATH_MAX];
	struct stat st;
	*path = NULL;
	if (snprintf(parent, sizeof(parent), "%s/layers", state_dir) >= (int)sizeof(parent) ||
	    snprintf(tmpl, sizeof(tmpl), "%s/run.%ld.XXXXXX", parent, (long)getpid()) >= (int)sizeof(tmpl)) {
		*why = say("cannot make a directory in", state_dir, ENAMETOOLONG);
		return ZSP_EIO;
	}
	if (make_dirs(parent) != 0) {
		*why = say("cannot make", parent, errno);
		return ZSP_EIO;
	}
	/* ours alone: another user's directory there could be swapped under the layers */
	if (lstat(parent, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		*why = say("not a directory of yours that only you can write:", parent, EPERM);
		return ZSP_EIO;
	}
	if (!mkdtemp(tmpl)) {
		*why = say("cannot make a directory in", parent, errno);
		return ZSP_EIO;
	}
	if (!(*path = strdup(tmpl))) {
		rmdir(tmpl);
		*why = "out of memory";
		return ZSP_EINTERNAL;
	}
	return ZSP_OK;
}

void zsp_gitlayer_base_remove(const char *base)
{
	if (!base || rmdir(base) != 0)
		return;
	while (nmade > 0 && rmdir(made_dirs[nmade - 1]) == 0)
		nmade--;
}

/* Copies the regular file sfd into dfd/name (created: it must not exist), with its mode and
 * times. 0, or -1 with errno. */
static int copy_fd(int sfd, const struct stat *st, int dfd, const char *name)
{
	int out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return -1;
	char buf[65536];
	ssize_t r;
	int rc = 0;
	while ((r = read(sfd, buf, sizeof(buf))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -1;
			break;
		}
		for (ssize_t off = 0; off < r;) {
			ssize_t w = write(out, buf + off, (size_t)(r - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				rc = -1;
				break;
			}
			off += w;
		}
		if (rc)
			break;
	}
	struct timespec times[2] = { st->st_atim, st->st_mtim };
	if (rc == 0 && (fchmod(out, st->st_mode & 0777) != 0 || futimens(out, times) != 0))
		rc = -1;
	int e = errno;
	if (close(out) != 0 && rc == 0)
		rc = -1, e = errno;
	if (rc)
		unlinkat(dfd, name, 0);
	errno = e;
	return rc;
}

/* sdfd/name (a regular file or a symbolic link, not followed) to ddfd/dname. 0, or -1. */
static int copy_entry(int sdfd, const char *name, int ddfd, const char *dname, struct stat *st)
{
	if (fstatat(sdfd, name, st, AT_SYMLINK_NOFOLLOW) != 0)
		return -1;
	if (S_ISLNK(st->st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(sdfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return -1;
		target[n] = 0;
		return symlinkat(target, ddfd, dname);
	}
	if (!S_ISREG(st->st_mode)) {
		errno = EINVAL;
		return -1;
	}
	int fd = openat(sdfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat fst;
	int rc = fstat(fd, &fst) == 0 && S_ISREG(fst.st_mode) && fst.st_ino == st->st_ino ? 0 : -1;
	if (rc == 0) {
		*st = fst;
		rc = copy_fd(fd, &fst, ddfd, dname);
	} else {
		errno = EAGAIN;   /* replaced while we looked */
	}
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

static bool is_config(const char *name)
{
	return strcmp(name, "config") == 0 || strcmp(name, "config.worktree") == 0;
}

static char *read_all(int dfd, const char *name, size_t *len)
{
	char *text = NULL, err[256];
	if (zsp_gitcfg_read_file(dfd, name, &text, len, err, sizeof(err)) != ZSP_OK)
		return NULL;
	return text;
}

static int make_layer(zsp_gitlayer *g, layer *ly, const char **why)
{
	const zsp_bwrap_layer *pl = ly->pl;
	int gfd = open(pl->gitdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat gst;
	if (gfd < 0 || fstat(gfd, &gst) != 0) {
		*why = say("cannot open", pl->gitdir, errno);
		if (gfd >= 0)
			close(gfd);
		return ZSP_EIO;
	}
	int rc = ZSP_OK;
	int lfd = -1;
	if (mkdir(pl->dir, 0700) != 0 || (lfd = open(pl->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		*why = say("cannot make", pl->dir, errno);
		close(gfd);
		return ZSP_EIO;
	}
	ly->made = true;
	ly->files = calloc(pl->nfiles + 1, sizeof(lfile));
	if (!ly->files) {
		*why = "out of memory";
		rc = ZSP_EINTERNAL;
		goto out;
	}
	for (size_t i = 0; i < pl->nmounts && rc == ZSP_OK; i++)
		if (mkdirat(lfd, pl->mounts[i], 0700) != 0) {
			*why = say("cannot make a mount point in", pl->dir, errno);
			rc = ZSP_EIO;
		}
	for (size_t i = 0; i < pl->nfiles && rc == ZSP_OK; i++) {
		lfile *f = &ly->files[ly->nfiles];
		const char *name = pl->files[i];
		if (copy_entry(gfd, name, lfd, name, &f->host) != 0) {
			if (errno == ENOENT)
				continue;   /* gone since the plan was made: the sandbox does not see it */
			char path[PATH_MAX];
			snprintf(path, sizeof(path), "%s/%s", pl->gitdir, name);
			*why = say("cannot copy", path, errno);
			rc = ZSP_EIO;
			break;
		}
		if (fstatat(lfd, name, &f->copy, AT_SYMLINK_NOFOLLOW) != 0 || !(f->name = strdup(name))) {
			*why = "out of memory";
			rc = ZSP_EINTERNAL;
			break;
		}
		if (is_config(name) && S_ISREG(f->copy.st_mode))
			f->text = read_all(lfd, name, &f->len);
		ly->nfiles++;
	}
	/* the sandbox sees the layer as the git directory: with its mode */
	if (rc == ZSP_OK && fchmod(lfd, gst.st_mode & 07777) != 0) {
		*why = say("cannot set the mode of", pl->dir, errno);
		rc = ZSP_EIO;
	}
out:
	(void)g;
	close(lfd);
	close(gfd);
	return rc;
}

/* Removes dfd/name and all below it, never following a link. */
static void remove_tree(int dfd, const char *name, int depth)
{
	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 && depth < TREE_MAX_DEPTH)
			remove_tree(fd, de->d_name, depth + 1);
	closedir(d);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

int zsp_gitlayer_make(const zsp_bwrap_plan *plan, const char *base, zsp_gitlayer **out, const char **why)
{
	*out = NULL;
	zsp_gitlayer *g = calloc(1, sizeof(*g));
	if (!g || !(g->base = strdup(base)) || !(g->layers = calloc(plan->nlayers + 1, sizeof(layer)))) {
		if (g)
			free(g->base);
		free(g);
		*why = "out of memory";
		return ZSP_EINTERNAL;
	}
	*out = g;
	for (size_t i = 0; i < plan->nlayers; i++) {
		g->layers[g->n].pl = &plan->layers[i];
		int rc = make_layer(g, &g->layers[g->n++], why);
		if (rc != ZSP_OK)
			return rc;
	}
	return ZSP_OK;
}

/* --- after the run -------------------------------------------------------------------- */

static void report(zsp_gitlayer *g, const char *gitdir, const char *name, const char *why)
{
	char path[PATH_MAX + NAME_MAX + 2];
	snprintf(path, sizeof(path), "%s/%s", gitdir, name);
	char *shown = zsp_text_plain(path) ? NULL : zsp_text_escape(path);
	fprintf(g->out, "zsp-run: not applied to the host: %s: %s\n", shown ? shown : path, why);
	free(shown);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mode == b->st_mode && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* Has the host's gdfd/name changed since f was copied (or, f NULL, does it exist now)? */
static bool host_changed(int gdfd, const char *name, const lfile *f)
{
	struct stat now;
	if (fstatat(gdfd, name, &now, AT_SYMLINK_NOFOLLOW) != 0)
		return f != NULL;
	return !f || !same_file(&now, &f->host);
}

/* Puts ldfd/name on the host as gdfd/name, through a temporary name and a rename. */
static int put_file(int ldfd, const char *name, int gdfd)
{
	char tmp[NAME_MAX + 1];
	struct stat st;
	if (snprintf(tmp, sizeof(tmp), ".%s.zsp-%ld", name, (long)getpid()) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	unlinkat(gdfd, tmp, 0);
	if (copy_entry(ldfd, name, gdfd, tmp, &st) != 0)
		return -1;
	if (renameat(gdfd, tmp, gdfd, name) != 0) {
		int e = errno;
		unlinkat(gdfd, tmp, 0);
		errno = e;
		return -1;
	}
	return 0;
}

/* A tree the sandbox made (rebase-merge/, logs/ in a new repository's first commit): copied
 * whole but for symbolic links (git would write through them) and what cannot be copied (a
 * socket), which are counted in *left. 0, or -1. */
static int copy_tree(int sdfd, const char *name, int ddfd, const char *dname, int depth, size_t *left)
{
	struct stat st;
	if (fstatat(sdfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		if (S_ISREG(st.st_mode))
			return copy_entry(sdfd, name, ddfd, dname, &st);
		++*left;
		return 0;
	}
	if (depth >= TREE_MAX_DEPTH) {
		errno = ELOOP;
		return -1;
	}
	int sfd = openat(sdfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0)
		return -1;
	if (mkdirat(ddfd, dname, st.st_mode & 0777) != 0) {
		close(sfd);
		return -1;
	}
	int dfd = openat(ddfd, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(sfd) : NULL;
	if (!d) {
		close(sfd);
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	int rc = 0;
	struct dirent *de;
	while (rc == 0 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			rc = copy_tree(sfd, de->d_name, dfd, de->d_name, depth + 1, left);
	int e = errno;
	closedir(d);
	close(dfd);
	errno = e;
	return rc;
}

static int put_tree(int ldfd, const char *name, int gdfd, size_t *left)
{
	char tmp[NAME_MAX + 1];
	if (snprintf(tmp, sizeof(tmp), ".%s.zsp-%ld", name, (long)getpid()) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	remove_tree(gdfd, tmp, 0);
	int rc = copy_tree(ldfd, name, gdfd, tmp, 0, left);
	/* a directory the host made meanwhile is not replaced */
	if (rc == 0 && renameat2(gdfd, tmp, gdfd, name, RENAME_NOREPLACE) != 0)
		rc = -1;
	int e = errno;
	if (rc)
		remove_tree(gdfd, tmp, 0);
	errno = e;
	return rc;
}

typedef struct refused_ctx {
	zsp_gitlayer *g;
	const char *gitdir, *name;
} refused_ctx;

static void refused(void *ctx, const char *key, const char *why, bool applied)
{
	refused_ctx *r = ctx;
	char line[512];
	snprintf(line, sizeof(line), "%s: %s%s", key, why, applied ? " (the sandbox's other changes are applied)" : "");
	report(r->g, r->gitdir, r->name, line);
}

/* Applies the sandbox's config (ldfd/name) to the host's (gdfd/name): the changes to safe
 * variables; an unsafe variable that the launch's config did not have is taken out, and said. */
static void apply_config(zsp_gitlayer *g, const layer *ly, const lfile *f, int ldfd, int gdfd, const char *name)
{
	const char *gitdir = ly->pl->gitdir;
	size_t nlen = 0, rlen = 0;
	char *ntext = read_all(ldfd, name, &nlen), *rtext = NULL;
	char err[256];
	if (!ntext) {
		report(g, gitdir, name, "the sandbox's is not a regular file git can read (a link, or too large)");
		return;
	}
	if (f && f->text && f->len == nlen && memcmp(f->text, ntext, nlen) == 0) {
		free(ntext);
		return;
	}
	refused_ctx rc = { g, gitdir, name };
	int st = zsp_gitcfg_vet(f ? f->text : NULL, f && f->text ? f->len : 0, ntext, nlen, refused, &rc,
				&rtext, &rlen, err, sizeof(err));
	if (st == ZSP_EINTERNAL) {
		report(g, gitdir, name, "out of memory: the host's is kept");
		g->failed++;
		g->keep = true;
	} else if (st != ZSP_OK) {
		char line[512];
		snprintf(line, sizeof(line), "%s: none of the sandbox's changes are applied", err);
		report(g, gitdir, name, line);
	} else if (host_changed(gdfd, name, f)) {
		report(g, gitdir, name, "the host's changed during the run as well: it is kept, and the "
					"sandbox's changes are not applied");
	} else {
		char tmp[NAME_MAX + 1];
		snprintf(tmp, sizeof(tmp), ".%s.zsp-%ld", name, (long)getpid());
		unlinkat(gdfd, tmp, 0);
		mode_t mode = f ? f->host.st_mode & 0777 : 0644;
		int fd = openat(gdfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		bool ok = fd >= 0 && fchmod(fd, mode) == 0 && write(fd, rtext, rlen) == (ssize_t)rlen;
		if (fd >= 0 && close(fd) != 0)
			ok = false;
		if (ok && renameat(gdfd, tmp, gdfd, name) == 0) {
			char path[PATH_MAX + NAME_MAX + 2];
			snprintf(path, sizeof(path), "%s/%s", gitdir, name);
			char **nw = realloc(g->written, (g->nwritten + 1) * sizeof(char *));
			if (nw) {
				g->written = nw;
				if ((nw[g->nwritten] = strdup(path)))
					g->nwritten++;
			}
		} else {
			int e = errno;
			unlinkat(gdfd, tmp, 0);
			report(g, gitdir, name, strerror(e));
			g->failed++;
			g->keep = true;
		}
	}
	free(ntext);
	free(rtext);
}

static const lfile *snapshot(const layer *ly, const char *name)
{
	for (size_t i = 0; i < ly->nfiles; i++)
		if (strcmp(ly->files[i].name, name) == 0)
			return &ly->files[i];
	return NULL;
}

static bool mount_point(const layer *ly, const char *name)
{
	for (size_t i = 0; i < ly->pl->nmounts; i++)
		if (strcmp(ly->pl->mounts[i], name) == 0)
			return true;
	return false;
}

static void apply_failed(zsp_gitlayer *g, const layer *ly, const char *name)
{
	report(g, ly->pl->gitdir, name, strerror(errno));
	g->failed++;
	g->keep = true;
}

/* One name of the layer, as the sandbox left it (present: it exists in the layer). */
static void apply_name(zsp_gitlayer *g, const layer *ly, int ldfd, int gdfd, const char *name, bool present)
{
	const lfile *f = snapshot(ly, name);
	const char *gitdir = ly->pl->gitdir;
	struct stat st;
	if (present && fstatat(ldfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		present = false;
	if (f && present && same_file(&st, &f->copy))
		return;                                /* unchanged */
	if (!f && !present)
		return;
	if (strcmp(name, "commondir") == 0 || strcmp(name, "gitdir") == 0) {
		report(g, gitdir, name, "it sends git to another directory's config and hooks");
		return;
	}
	if (is_config(name) && (present || f)) {
		if (present)
			apply_config(g, ly, f, ldfd, gdfd, name);
		else
			report(g, gitdir, name, "the sandbox removed it: the host's is kept");
		return;
	}
	if (!f && present && S_ISDIR(st.st_mode) && strcmp(name, "hooks") == 0) {
		report(g, gitdir, name, "git runs what is there");
		return;
	}
	/* git writes through a link in its directory (a lock file beside the target, renamed over
	 * it): a link to ~/.bashrc as .git/index would have the host's next git status write there */
	if (present && S_ISLNK(st.st_mode)) {
		report(g, gitdir, name, "a symbolic link: the host's git would write where it points");
		return;
	}
	/* a lock the sandbox's git left (it was killed): nothing for the host's git to see */
	size_t nl = strlen(name);
	if (!f && nl > 5 && strcmp(name + nl - 5, ".lock") == 0)
		return;
	if (host_changed(gdfd, name, f)) {
		/* the index is git's cache of the staging area, which any host git status rewrites
		 * (an editor runs one every few seconds): the sandbox's matches the commits it made,
		 * so it is the later writer that wins, as with two gits in one repository */
		if (strcmp(name, "index") == 0 && present) {
			report(g, gitdir, name, "the host's changed during the run as well: the sandbox's "
						"replaces it (what the host staged meanwhile is to stage again)");
			if (put_file(ldfd, name, gdfd) != 0)
				apply_failed(g, ly, name);
			return;
		}
		report(g, gitdir, name, f ? "the host's changed during the run as well: it is kept"
					  : "the host made one too during the run: it is kept");
		return;
	}
	if (!present) {
		if (unlinkat(gdfd, name, 0) != 0 && errno != ENOENT)
			apply_failed(g, ly, name);
		return;
	}
	size_t left = 0;
	int rc = S_ISDIR(st.st_mode) ? put_tree(ldfd, name, gdfd, &left)
	       : S_ISREG(st.st_mode) ? put_file(ldfd, name, gdfd) : 0;
	if (rc != 0)
		apply_failed(g, ly, name);
	else if (left)
		report(g, gitdir, name, "its symbolic links (and sockets, FIFOs) were left out: the host's "
					"git would write where a link points");
}

static void apply_layer(zsp_gitlayer *g, layer *ly)
{
	int gfd = open(ly->pl->gitdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int lfd = open(ly->pl->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = lfd >= 0 ? fdopendir(dup(lfd)) : NULL;
	if (gfd < 0 || !d) {
		report(g, ly->pl->gitdir, "", gfd < 0 ? "the git directory is gone" : "its layer cannot be read");
		g->failed++;
		g->keep = true;
		goto out;
	}
	struct dirent *de;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 && !mount_point(ly, de->d_name))
			apply_name(g, ly, lfd, gfd, de->d_name, true);
	for (size_t i = 0; i < ly->nfiles; i++) {
		struct stat st;
		if (fstatat(lfd, ly->files[i].name, &st, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT)
			apply_name(g, ly, lfd, gfd, ly->files[i].name, false);
	}
out:
	if (d)
		closedir(d);
	if (lfd >= 0)
		close(lfd);
	if (gfd >= 0)
		close(gfd);
}

static void remove_layers(zsp_gitlayer *g)
{
	int bfd = open(g->base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0)
		return;
	for (size_t i = 0; i < g->n; i++) {
		const char *slash = strrchr(g->layers[i].pl->dir, '/');
		if (g->layers[i].made && slash)
			remove_tree(bfd, slash + 1, 0);
	}
	close(bfd);
	zsp_gitlayer_base_remove(g->base);
}

size_t zsp_gitlayer_apply(zsp_gitlayer *g, FILE *out)
{
	if (!g)
		return 0;
	g->out = out;
	for (size_t i = 0; i < g->n; i++)
		if (g->layers[i].made)
			apply_layer(g, &g->layers[i]);
	if (g->keep) {
		char *shown = zsp_text_plain(g->base) ? NULL : zsp_text_escape(g->base);
		fprintf(out, "zsp-run: what could not be applied is kept in %s\n", shown ? shown : g->base);
		free(shown);
	} else {
		remove_layers(g);
	}
	fflush(out);
	return g->failed;
}

const char *const *zsp_gitlayer_written(const zsp_gitlayer *g, size_t *n)
{
	*n = g ? g->nwritten : 0;
	return g ? (const char *const *)g->written : NULL;
}

void zsp_gitlayer_free(zsp_gitlayer *g)
{
	if (!g)
		return;
	if (!g->out)
		remove_layers(g);   /* never applied: the sandbox did not start */
	for (size_t i = 0; i < g->n; i++) {
		for (size_t k = 0; k < g->layers[i].nfiles; k++) {
			free(g->layers[i].files[k].name);
			free(g->layers[i].files[k].text);
		}
		free(g->layers[i].files);
	}
	for (size_t i = 0; i < g->nwritten; i++)
		free(g->written[i]);
	free(g->written);
	free(g->layers);
	free(g->base);
	free(g);
}
