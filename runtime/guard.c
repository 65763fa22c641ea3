/* guard.c: after the sandbox is gone, walk its writable roots for what the host would run later
 * and move it aside. The sandbox's processes are dead when this runs (bwrap's pid namespace
 * ends with its first process), so nothing races the walk but the host's own programs. A file
 * counts as the sandbox's when its ctime is at or after the run's start: ctime cannot be set by
 * an unprivileged process (utimensat sets atime and mtime only) and moves on every create,
 * write, rename, link and chmod. Read-only mounts of the run ("fixed") are trusted: the sandbox
 * could not change them, so a change there is the host's own. doc/host-later.md. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backends/gitcfg.h"
#include "compiler/path.h"
#include "compiler/textesc.h"
#include "compiler/zsp.h"
#include "lang/buf.h"
#include "runtime/guard.h"

#define MAX_DEPTH 512        /* directories below a root; deeper ones are reported unchecked */
#define MAX_HOPS 8           /* commondir / gitdir / include links followed from one place */

typedef struct seen_dir {
	dev_t dev;
	ino_t ino;
} seen_dir;

typedef struct guard {
	const zsp_guard_opts *o;
	FILE *out;
	zsp_guard_result *r;
	seen_dir *seen;          /* git directories checked once */
	size_t nseen, seencap;
	char global_hooks[PATH_MAX]; /* core.hooksPath of the user's and the system's config */
	const char **lasts;      /* the protected names' last components, sorted (interesting()) */
	size_t nlasts;
	void *ixh;               /* the index of the root walked now (NULL: none) */
	size_t rootlen;          /* of that root: a directory's key in the index is path + rootlen */
	int rootfd;              /* that root, open */
	bool oom;
} guard;

/* A finding while a pointer's target is judged as a whole: the first reason, kept. */
typedef struct verdict {
	bool unsafe;
	char why[512];
} verdict;

struct timespec zsp_guard_start(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME_COARSE, &t);
	t.tv_sec -= 2;
	return t;
}

static bool changed(const guard *g, const struct stat *st)
{
	const struct timespec *s = &g->o->since;
	return st->st_ctim.tv_sec > s->tv_sec ||
	       (st->st_ctim.tv_sec == s->tv_sec && st->st_ctim.tv_nsec >= s->tv_nsec);
}

static bool in_list(const char *const *list, size_t n, const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (zsp_path_is_prefix(list[i], path))
			return true;
	return false;
}

/* Could the sandbox have written path? Inside a writable root and not under a fixed mount. */
static bool sandbox_writable(const guard *g, const char *path)
{
	return in_list(g->o->roots, g->o->nroots, path) && !in_list(g->o->fixed, g->o->nfixed, path);
}

static char *join(guard *g, const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	char *s = malloc(dl + 1 + nl + 1);
	if (!s) {
		g->oom = true;
		return NULL;
	}
	memcpy(s, dir, dl);
	size_t o = dl;
	if (!(dl == 1 && dir[0] == '/'))
		s[o++] = '/';
	memcpy(s + o, name, nl + 1);
	return s;
}

/* "zsp-run: HEAD PATH: REST": path and rest escaped, as they come from the file system. */
static void say(guard *g, const char *head, const char *path, const char *rest)
{
	char *shown = zsp_text_plain(path) ? NULL : zsp_text_escape(path);
	char *why = zsp_text_plain(rest) ? NULL : zsp_text_escape(rest);
	fprintf(g->out, "zsp-run: %s%s: %s\n", head, shown ? shown : path, why ? why : rest);
	free(shown);
	free(why);
}

/* Moves dir/name (path) to name.zsp-blocked[.N], without replacing anything. */
static void block(guard *g, int dfd, const char *name, const char *path, const char *why)
{
	if (!sandbox_writable(g, path))
		return;   /* not the sandbox's: the host put it there */
	char to[NAME_MAX + 1];
	for (int n = 1; n <= 50; n++) {
		int w = n == 1 ? snprintf(to, sizeof(to), "%s%s", name, ZSP_GUARD_SUFFIX)
			       : snprintf(to, sizeof(to), "%s%s.%d", name, ZSP_GUARD_SUFFIX, n);
		if (w < 0 || (size_t)w >= sizeof(to))
			break;
		if (renameat2(dfd, name, dfd, to, RENAME_NOREPLACE) == 0) {
			g->r->blocked++;
			char msg[1024];
			snprintf(msg, sizeof(msg), "%s; moved to %s", why, to);
			say(g, "blocked for the host: ", path, msg);
			return;
		}
		if (errno != EEXIST)
			break;
	}
	g->r->failed++;
	char msg[1024];
	snprintf(msg, sizeof(msg), "%s; it could not be moved aside (%s): do not run git or the agent "
		 "there before removing it", why, strerror(errno));
	say(g, "error: left for the host: ", path, msg);
}

/* A finding on dir/name: moved aside at once, or, when a pointer's target is judged (v set),
 * noted against the pointer. */
static void finding(guard *g, verdict *v, int dfd, const char *name, const char *path, const char *why)
{
	if (v) {
		if (!v->unsafe)
			snprintf(v->why, sizeof(v->why), "%s", why);
		v->unsafe = true;
		return;
	}
	block(g, dfd, name, path, why);
}

static bool seen_before(guard *g, const struct stat *st)
{
	for (size_t i = 0; i < g->nseen; i++)
		if (g->seen[i].dev == st->st_dev && g->seen[i].ino == st->st_ino)
			return true;
	if (g->nseen == g->seencap) {
		size_t nc = g->seencap ? 2 * g->seencap : 16;
		seen_dir *ns = realloc(g->seen, nc * sizeof(*ns));
		if (!ns) {
			g->oom = true;
			return true;
		}
		g->seen = ns;
		g->seencap = nc;
	}
	g->seen[g->nseen++] = (seen_dir){ st->st_dev, st->st_ino };
	return false;
}

/* --- git configuration ------------------------------------------------------------------ */

typedef struct cfg_scan {
	bool judge;                /* every key must be safe */
	bool unsafe;
	char why[256];
	char hooks[PATH_MAX];      /* core.hooksPath, as written ("" when unset) */
	char *includes[16];        /* include.path and includeIf.*.path values, malloc'd */
	size_t nincludes;
} cfg_scan;

static int scan_entry(void *ctx, const zsp_gitcfg_entry *e)
{
	cfg_scan *s = ctx;
	const char *why = NULL;
	if (s->judge && !s->unsafe && !zsp_gitcfg_safe(e, &why)) {
		char key[128];
		s->unsafe = true;
		snprintf(s->why, sizeof(s->why), "`%s`: %s", zsp_gitcfg_key(e, key, sizeof(key)),
			 why ? why : "git may run a program from it");
	}
	if (strcmp(e->section, "core") == 0 && !e->subsection && strcmp(e->name, "hookspath") == 0)
		snprintf(s->hooks, sizeof(s->hooks), "%s", e->value ? e->value : "");
	if ((strcmp(e->section, "include") == 0 || strcmp(e->section, "includeif") == 0) &&
	    strcmp(e->name, "path") == 0 && e->value && s->nincludes < 16) {
		s->includes[s->nincludes] = strdup(e->value);
		if (s->includes[s->nincludes])
			s->nincludes++;
	}
	return 0;
}

static void scan_free(cfg_scan *s)
{
	for (size_t i = 0; i < s->nincludes; i++)
		free(s->includes[i]);
	s->nincludes = 0;
}

static void check_config(guard *g, verdict *v, int dfd, const char *name, const char *path,
			 bool full, int hops, cfg_scan *s);

/* The files a config includes: judged like the config when they changed (or when a pointer's
 * target is judged whole). Relative paths are relative to the including file's directory. */
static void check_includes(guard *g, verdict *v, const char *path, bool full, int hops, cfg_scan *s)
{
	if (hops >= MAX_HOPS)
		return;
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	for (size_t i = 0; i < s->nincludes; i++) {
		const char *inc = s->includes[i];
		char abs[2 * PATH_MAX + 2];
		if (inc[0] == '~' && inc[1] == '/' && g->o->home)
			snprintf(abs, sizeof(abs), "%s/%s", g->o->home, inc + 2);
		else if (inc[0] == '/')
			snprintf(abs, sizeof(abs), "%s", inc);
		else
			snprintf(abs, sizeof(abs), "%s/%s", dir, inc);
		char norm[PATH_MAX];
		if (!zsp_path_lexical(abs, norm, sizeof(norm)))
			continue;
		char *base = strrchr(norm, '/');
		*base = 0;
		int dfd = open(norm[0] ? norm : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		*base = '/';
		if (dfd >= 0) {
			cfg_scan sub = { 0 };
			check_config(g, v, dfd, base + 1, norm, full, hops + 1, &sub);
			scan_free(&sub);
			close(dfd);
		}
	}
}

/* dir/name, a git config file: read for what it points at (hooksPath, includes), and judged key
 * by key when the sandbox changed it or full is set. */
static void check_config(guard *g, verdict *v, int dfd, const char *name, const char *path,
			 bool full, int hops, cfg_scan *s)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return;
	bool judge = (full || changed(g, &st)) && sandbox_writable(g, path);
	char *text = NULL, err[256];
	size_t len;
	if (zsp_gitcfg_read_file(dfd, name, &text, &len, err, sizeof(err)) != ZSP_OK) {
		if (judge)
			finding(g, v, dfd, name, path, err);
		return;
	}
	s->judge = judge;
	if (zsp_gitcfg_parse(text, len, scan_entry, s, err, sizeof(err)) != ZSP_OK) {
		if (judge)
			finding(g, v, dfd, name, path, err);
		free(text);
		return;
	}
	free(text);
	if (s->unsafe) {
		finding(g, v, dfd, name, path, s->why);
		return;
	}
	check_includes(g, v, path, full, hops, s);
}

/* core.hooksPath as the host's git finds it outside the repository: the system config (unless
 * GIT_CONFIG_NOSYSTEM), then $GIT_CONFIG_GLOBAL, else ~/.gitconfig and the XDG one. A relative
 * one names a directory in every work tree, where the sandbox may write. */
static void read_global_hooks(guard *g)
{
	char files[3][PATH_MAX];
	size_t n = 0;
	const char *nosys = getenv("GIT_CONFIG_NOSYSTEM"), *global = getenv("GIT_CONFIG_GLOBAL");
	const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
	if (!nosys || !*nosys || strcmp(nosys, "0") == 0 || strcmp(nosys, "false") == 0)
		snprintf(files[n++], PATH_MAX, "/etc/gitconfig");
	if (global && *global) {
		snprintf(files[n++], PATH_MAX, "%s", global);
	} else if (home && home[0] == '/') {
		if (xdg && xdg[0] == '/')
			snprintf(files[n++], PATH_MAX, "%s/git/config", xdg);
		else
			snprintf(files[n++], PATH_MAX, "%s/.config/git/config", home);
		snprintf(files[n++], PATH_MAX, "%s/.gitconfig", home);
	}
	for (size_t i = 0; i < n; i++) {
		char *text = NULL, err[256];
		size_t len;
		if (zsp_gitcfg_read_file(AT_FDCWD, files[i], &text, &len, err, sizeof(err)) != ZSP_OK)
			continue;
		cfg_scan s = { 0 };
		zsp_gitcfg_parse(text, len, scan_entry, &s, err, sizeof(err));
		free(text);
		if (s.hooks[0])
			snprintf(g->global_hooks, sizeof(g->global_hooks), "%s", s.hooks);
		scan_free(&s);
	}
}

/* --- git directories ------------------------------------------------------------------- */

static void check_gitdir(guard *g, verdict *v, const char *gpath, const char *worktree, bool full,
			 int hops);

/* A hooks directory: git runs a hook by its exact name, so any file there but a *.sample the
 * sandbox wrote is one it would run. */
static void check_hooks(guard *g, verdict *v, const char *dir, bool full)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0)
		return;
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		size_t nl = strlen(n);
		if (n[0] == '.' || (nl > 7 && strcmp(n + nl - 7, ".sample") == 0) ||
		    strstr(n, ZSP_GUARD_SUFFIX))
			continue;
		struct stat st;
		if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISDIR(st.st_mode))
			continue;
		char *path = join(g, dir, n);
		if (!path)
			break;
		if ((full || changed(g, &st)) && sandbox_writable(g, path))
			finding(g, v, dirfd(d), n, path, "a git hook: git runs it on the host");
		free(path);
	}
	closedir(d);
}

/* The directory a pointer names, as git resolves it: relative to the pointer's directory. */
static char *resolve_pointer(guard *g, const char *from_dir, const char *target)
{
	char abs[2 * PATH_MAX + 2];
	if (target[0] == '/')
		snprintf(abs, sizeof(abs), "%s", target);
	else
		snprintf(abs, sizeof(abs), "%s/%s", from_dir, target);
	char *r = realpath(abs, NULL);
	if (!r && errno == ENOMEM)
		g->oom = true;
	return r;
}

/* gpath/commondir: git takes the common directory's config and hooks from where it points. In
 * a worktree's admin directory (X/worktrees/NAME) it names X; anywhere else, or naming anything
 * else, a commondir the sandbox wrote is an attack. */
static void check_commondir(guard *g, verdict *v, int gfd, const char *gpath, bool full, int hops)
{
	struct stat st;
	if (fstatat(gfd, "commondir", &st, AT_SYMLINK_NOFOLLOW) != 0)
		return;
	char *cpath = join(g, gpath, "commondir");
	char target[PATH_MAX], err[256];
	if (!cpath)
		return;
	bool judge = (full || changed(g, &st)) && sandbox_writable(g, cpath);
	if (zsp_git_pointer_read(gfd, "commondir", NULL, target, sizeof(target), err, sizeof(err)) != ZSP_OK) {
		if (judge)
			finding(g, v, gfd, "commondir", cpath, err);
		free(cpath);
		return;
	}
	char *common = resolve_pointer(g, gpath, target);
	if (judge) {
		char expect[PATH_MAX];
		snprintf(expect, sizeof(expect), "%s", gpath);
		char *s1 = strrchr(expect, '/');
		if (s1)
			*s1 = 0;
		char *s2 = strrchr(expect, '/');
		bool admin = s1 && s2 && strcmp(s2, "/worktrees") == 0;
		if (s2)
			*s2 = 0;
		char *real_expect = admin ? realpath(expect, NULL) : NULL;
		if (!admin || !common || !real_expect || strcmp(common, real_expect) != 0)
			finding(g, v, gfd, "commondir", cpath,
				"a commondir sends git to another directory's config and hooks");
		free(real_expect);
	}
	if (common && hops < MAX_HOPS)
		check_gitdir(g, v, common, NULL, full, hops + 1);
	free(common);
	free(cpath);
}

/* Every directory below gpath/sub (modules/NAME, worktrees/NAME): git directories of their own
 * that git enters from a submodule or a worktree. Nested module names (a/b) hold a config. */
static void check_subdirs(guard *g, verdict *v, const char *gpath, const char *sub, bool full, int hops)
{
	char *dir = join(g, gpath, sub);
	if (!dir)
		return;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		free(dir);
		return;
	}
	struct dirent *de;
	while ((de = readdir(d)) && !g->oom) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		struct stat st;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
			continue;
		char *p = join(g, dir, de->d_name);
		if (!p)
			break;
		check_gitdir(g, v, p, NULL, full, hops + 1);
		/* a submodule named a/b lives in modules/a/b */
		if (strcmp(sub, "modules") == 0 && hops < MAX_HOPS)
			check_subdirs(g, v, dir, de->d_name, full, hops + 1);
		free(p);
	}
	closedir(d);
	free(dir);
}

/* A git directory: its config (and config.worktree), what the config includes, its hooks (or
 * core.hooksPath), its commondir, and the git directories of its submodules and worktrees.
 * worktree: the work tree's top when known (a relative hooksPath is relative to it). */
static void check_gitdir(guard *g, verdict *v, const char *gpath, const char *worktree, bool full, int hops)
{
	int gfd = open(gpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (gfd < 0)
		return;
	/* a target judged whole (v) is judged again wherever it is reached: hops bound that */
	if (fstat(gfd, &st) != 0 || hops > MAX_HOPS || (!v && seen_before(g, &st))) {
		close(gfd);
		return;
	}
	cfg_scan s = { 0 };
	char *cfg = join(g, gpath, "config");
	if (cfg)
		check_config(g, v, gfd, "config", cfg, full, hops, &s);
	free(cfg);
	/* read when extensions.worktreeConfig is set, in this config or the common directory's (a
	 * worktree's admin directory has none of its own): judged wherever it is */
	{
		cfg_scan w = { 0 };
		char *wc = join(g, gpath, "config.worktree");
		if (wc)
			check_config(g, v, gfd, "config.worktree", wc, full, hops, &w);
		free(wc);
		if (w.hooks[0])
			snprintf(s.hooks, sizeof(s.hooks), "%s", w.hooks);
		scan_free(&w);
	}
	char hooks[2 * PATH_MAX + 2];
	if (!s.hooks[0] && g->global_hooks[0])
		snprintf(s.hooks, sizeof(s.hooks), "%s", g->global_hooks);
	if (!s.hooks[0])
		snprintf(hooks, sizeof(hooks), "%s/hooks", gpath);
	else if (s.hooks[0] == '~' && s.hooks[1] == '/' && g->o->home)
		snprintf(hooks, sizeof(hooks), "%s/%s", g->o->home, s.hooks + 2);
	else if (s.hooks[0] == '/')
		snprintf(hooks, sizeof(hooks), "%s", s.hooks);
	else
		snprintf(hooks, sizeof(hooks), "%s/%s", worktree ? worktree : gpath, s.hooks);
	scan_free(&s);
	check_hooks(g, v, hooks, full);
	check_commondir(g, v, gfd, gpath, full, hops);
	close(gfd);
	check_subdirs(g, v, gpath, "modules", full, hops);
	check_subdirs(g, v, gpath, "worktrees", full, hops);
}

/* dir/.git as a file ("gitdir: PATH") or a symlink: git follows either to a git directory. One
 * the sandbox wrote makes its target reachable from here, so the target is judged whole; one it
 * did not write still leads to files it may have changed. */
static void check_dotgit_pointer(guard *g, int dfd, const char *dir, const struct stat *st)
{
	char *path = join(g, dir, ".git");
	if (!path)
		return;
	char target[PATH_MAX], err[256];
	int rc;
	if (S_ISLNK(st->st_mode)) {
		ssize_t n = readlinkat(dfd, ".git", target, sizeof(target) - 1);
		rc = n >= 0 ? ZSP_OK : ZSP_EIO;
		target[n >= 0 ? n : 0] = 0;
		snprintf(err, sizeof(err), "an unreadable .git link");
	} else {
		rc = zsp_git_pointer_read(dfd, ".git", ZSP_GIT_GITDIR_PREFIX, target, sizeof(target), err, sizeof(err));
	}
	bool mine = changed(g, st) && sandbox_writable(g, path);
	if (rc != ZSP_OK) {
		if (mine)
			block(g, dfd, ".git", path, err);
		free(path);
		return;
	}
	char *gdir = resolve_pointer(g, dir, target);
	if (!gdir) {
		free(path);
		return;   /* leads nowhere: git stops there */
	}
	if (mine) {
		verdict v = { 0 };
		check_gitdir(g, &v, gdir, dir, true, 1);
		if (v.unsafe) {
			char why[700];
			snprintf(why, sizeof(why), "a .git pointer to %s, where %s", gdir, v.why);
			block(g, dfd, ".git", path, why);
		}
	} else {
		check_gitdir(g, NULL, gdir, dir, false, 1);
	}
	free(gdir);
	free(path);
}

/* --- the walk -------------------------------------------------------------------------- */

/* Does path end in one of the protected names ("/.vscode", "/.claude/settings.json")? Names
 * under .git are the git checks' business. */
static bool last_protected(const guard *g, const char *name);

static bool protected_name(const guard *g, const char *path)
{
	/* a protected name ends in its last component: most paths are refused by that alone */
	const char *slash = strrchr(path, '/');
	if (!last_protected(g, slash ? slash + 1 : path))
		return false;
	size_t pl = strlen(path);
	for (size_t i = 0; i < g->o->nnames; i++) {
		const char *n = g->o->names[i];
		size_t nl = strlen(n);
		if (strncmp(n, ".git/", 5) == 0 || strcmp(n, ".git") == 0 || nl >= pl)
			continue;
		if (path[pl - nl - 1] == '/' && memcmp(path + pl - nl, n, nl) == 0)
			return true;
	}
	return false;
}

static void walk(guard *g, int dfd, const char *path, int depth, bool protected_tree);

/* Was dir/name created during the run? Its birth time, where the file system keeps one; without
 * it, no (its files are then judged one by one). */
static bool born_in_run(const guard *g, int dfd, const char *name)
{
	struct statx sx;
	if (statx(dfd, name, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) != 0 || !(sx.stx_mask & STATX_BTIME))
		return false;
	const struct timespec *s = &g->o->since;
	return sx.stx_btime.tv_sec > s->tv_sec ||
	       (sx.stx_btime.tv_sec == s->tv_sec && sx.stx_btime.tv_nsec >= (unsigned)s->tv_nsec);
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const zsp_walk_entry *)a)->name, ((const zsp_walk_entry *)b)->name);
}

/* Could name matter? A directory to walk, a .git, or the last component of a protected name:
 * every other entry is passed over without a system call. */
static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int name_cmp(const void *key, const void *elt)
{
	return strcmp(key, *(const char *const *)elt);
}

/* g->lasts, for a binary search per entry rather than a pass over every name */
static void sort_lasts(guard *g)
{
	g->lasts = calloc(g->o->nnames + 1, sizeof(*g->lasts));
	if (!g->lasts) {
		g->oom = true;
		return;
	}
	for (size_t i = 0; i < g->o->nnames; i++) {
		const char *n = g->o->names[i], *last = strrchr(n, '/');
		g->lasts[g->nlasts++] = last ? last + 1 : n;
	}
	qsort(g->lasts, g->nlasts, sizeof(*g->lasts), str_cmp);
}

/* Is name the last component of a protected name? */
static bool last_protected(const guard *g, const char *name)
{
	return bsearch(name, g->lasts, g->nlasts, sizeof(*g->lasts), name_cmp) != NULL;
}

static bool interesting(const guard *g, const char *name, unsigned char type)
{
	if (type == DT_DIR || type == DT_UNKNOWN || strcmp(name, ".git") == 0)
		return true;
	return last_protected(g, name);
}

/* What the index keeps of a directory: what interesting() passes, and HEAD (with objects/ and
 * refs/, directories, it says the directory is shaped like a git directory). */
static bool kept(const guard *g, const char *name, unsigned char type)
{
	return interesting(g, name, type) || strcmp(name, "HEAD") == 0;
}

/* HEAD, objects/ and refs/ are there: a bare repository, which git uses from inside. */
static bool git_shaped(const zsp_walk_entry *es, size_t n)
{
	unsigned shape = 0;
	for (size_t i = 0; i < n; i++) {
		const char *nm = es[i].name;
		unsigned char t = es[i].type;
		shape |= strcmp(nm, "HEAD") == 0 && (t == DT_REG || t == DT_UNKNOWN) ? 1
		       : strcmp(nm, "objects") == 0 && (t == DT_DIR || t == DT_UNKNOWN) ? 2
		       : strcmp(nm, "refs") == 0 && (t == DT_DIR || t == DT_UNKNOWN) ? 4 : 0;
	}
	return shape == 7;
}

/* The entries of one directory that matter (all of them in a protected tree), sorted: moves and
 * reports come in a stable order. Outside a protected tree an entry without a d_type gets its
 * type from fstatat, so that the list can go to the index; *whole: every entry was read and
 * typed (only then may it). */
static zsp_walk_entry *list_dir(guard *g, int dfd, bool all, size_t *n, bool *whole)
{
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	zsp_walk_entry *es = NULL;
	size_t cap = 0;
	*n = 0;
	*whole = false;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	bool typed = true;
	struct dirent *de;
	for (;;) {
		errno = 0;
		if (!(de = readdir(d)))
			break;
		const char *nm = de->d_name;
		if (strcmp(nm, ".") == 0 || strcmp(nm, "..") == 0)
			continue;
		unsigned char t = de->d_type;
		if (t == DT_UNKNOWN && !all) {
			struct stat st;
			if (fstatat(dfd, nm, &st, AT_SYMLINK_NOFOLLOW) == 0)
				t = IFTODT(st.st_mode);
			else if (errno == ENOENT)
				continue;
			else
				typed = false;
		}
		if (!all && !kept(g, nm, t))
			continue;
		if (*n == cap) {
			size_t nc = cap ? 2 * cap : 64;
			zsp_walk_entry *ne = realloc(es, nc * sizeof(*ne));
			if (!ne)
				goto oom;
			es = ne;
			cap = nc;
		}
		if (!(es[*n].name = strdup(nm)))
			goto oom;
		es[(*n)++].type = t;
	}
	*whole = errno == 0 && typed;
	closedir(d);
	if (*n)
		qsort(es, *n, sizeof(*es), entry_cmp);
	return es;
oom:
	g->oom = true;
	closedir(d);
	for (size_t i = 0; i < *n; i++)
		free((char *)es[i].name);
	free(es);
	*n = 0;
	return NULL;
}

static void walk(guard *g, int dfd, const char *path, int depth, bool protected_tree);
static bool walk_known(guard *g, const char *path, const struct stat *st, int depth);

/* path (below the root being walked) opened from the root, beneath it and through no symbolic
 * link; -1 with errno. */
static int open_below_root(const guard *g, const char *path)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	return (int)syscall(SYS_openat2, g->rootfd, path + g->rootlen + 1, &how, sizeof(how));
}

static void walk_entry(guard *g, int dfd, const char *dir, const zsp_walk_entry *e, int depth, bool protected_tree)
{
	struct stat st;
	if (fstatat(dfd, e->name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return;
	char *path = join(g, dir, e->name);
	if (!path)
		return;
	if (strcmp(e->name, ".git") == 0) {
		if (S_ISDIR(st.st_mode))
			check_gitdir(g, NULL, path, dir, false, 0);
		else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
			check_dotgit_pointer(g, dfd, dir, &st);
		free(path);
		return;
	}
	bool prot = protected_tree || protected_name(g, path);
	bool mine = changed(g, &st) && !strstr(e->name, ZSP_GUARD_SUFFIX);
	/* a file: its ctime says it changed; a directory: only its birth does (its ctime also
	 * moves when the host adds a file), and one born in the run goes whole */
	if (prot && mine && (!S_ISDIR(st.st_mode) || born_in_run(g, dfd, e->name)))
		block(g, dfd, e->name, path, "a protected name (a tool or agent may run what it says)");
	else if (S_ISDIR(st.st_mode) && !in_list(g->o->fixed, g->o->nfixed, path)) {
		if (!prot && walk_known(g, path, &st, depth + 1)) {
			free(path);
			return;
		}
		int cfd = openat(dfd, e->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (cfd >= 0) {
			walk(g, cfd, path, depth + 1, prot);
			close(cfd);
		} else if (errno != EACCES && errno != ENOENT) {
			g->r->unchecked++;
		}
	}
	free(path);
}

/* One directory. Outside a protected tree, one the index knows unchanged (device, inode and
 * ctime as recorded, and not racy) is not read: its kept entries are walked as if listed. That
 * is sound because a directory's ctime moves on every create, remove and rename in it and no
 * unprivileged process can set it: a protected name, a .git or a new directory made there during
 * the run moves it. What the index does not spare: every kept entry is still fstatat'ed (a
 * protected file changed in place, which leaves its directory's ctime alone, is caught by its
 * own ctime), and every child directory is still entered and looked up on its own. A change in
 * the same timestamp tick as the recording walk is the racy case: such a directory is read
 * again. A protected tree is read whole, every time, and not recorded. doc/host-later.md. */
static void walk(guard *g, int dfd, const char *path, int depth, bool protected_tree)
{
	if (depth > MAX_DEPTH) {
		g->r->unchecked++;
		say(g, "warning: ", path, "too deep to check for what the host would run");
		return;
	}
	const char *rel = path + g->rootlen;
	struct stat st;
	bool indexed = g->ixh && !protected_tree && fstat(dfd, &st) == 0, any, whole;
	const zsp_walk_entry *es;
	zsp_walk_entry *listed = NULL;
	size_t n;
	if (!indexed || !g->o->index->lookup(g->ixh, rel, &st, &es, &n, &any)) {
		es = listed = list_dir(g, dfd, protected_tree, &n, &whole);
		/* st: taken before the listing, so a change while it was read shows next time */
		if (indexed && whole && !g->oom)
			g->o->index->record(g->ixh, rel, &st, listed, n, n > 0);
	}
	if (git_shaped(es, n))
		check_gitdir(g, NULL, path, NULL, false, 0);
	for (size_t i = 0; i < n && !g->oom; i++)
		if (protected_tree || interesting(g, es[i].name, es[i].type))
			walk_entry(g, dfd, path, &es[i], depth, protected_tree);
	for (size_t i = 0; i < n && listed; i++)
		free((char *)listed[i].name);
	free(listed);
}

/* A directory outside a protected tree (path, as st says it is now, depth deep) that the index
 * knows unchanged and whose kept entries are all child directories, none of them protected or a
 * .git: walked without being opened or listed. Each child is looked at by its path from the
 * root (one fstatat, where opening it would take three calls); one the index knows is walked
 * the same way, any other is opened beneath the root through no symbolic link and walked as
 * usual. A path looked at by name may pass through a symbolic link made since (the sandbox has
 * ended; only the host's own processes remain): the index then matches only if it leads to the
 * very directory recorded (device, inode and ctime), whose kept entries are the same. Any other
 * known directory is opened beneath the root and its kept entries checked as walk() does. False:
 * the index does not know it; it must be opened and walked (walk()). */
static bool walk_known(guard *g, const char *path, const struct stat *st, int depth)
{
	const zsp_walk_entry *es;
	size_t n;
	bool any;
	if (!g->ixh || depth > MAX_DEPTH || strlen(path) <= g->rootlen ||
	    !g->o->index->lookup(g->ixh, path + g->rootlen, st, &es, &n, &any))
		return false;
	/* known from here on (a second lookup would record it twice): walked here either way */
	char **kids = calloc(n + 1, sizeof(char *));
	if (!kids) {
		g->oom = true;
		return true;
	}
	bool plain = !git_shaped(es, n);
	for (size_t i = 0; i < n && plain && !g->oom; i++)
		plain = es[i].type == DT_DIR && strcmp(es[i].name, ".git") != 0 &&
			(kids[i] = join(g, path, es[i].name)) && !protected_name(g, kids[i]);
	int pfd = -1;   /* this directory, opened only for an entry that needs more than a look */
	if (!plain && !g->oom) {
		/* as walk() does with a directory the index knows */
		if ((pfd = open_below_root(g, path)) < 0) {
			if (errno != EACCES && errno != ENOENT)
				g->r->unchecked++;
		} else {
			if (git_shaped(es, n))
				check_gitdir(g, NULL, path, NULL, false, 0);
			for (size_t i = 0; i < n && !g->oom; i++)
				if (interesting(g, es[i].name, es[i].type))
					walk_entry(g, pfd, path, &es[i], depth, false);
		}
	}
	for (size_t i = 0; i < n && plain && !g->oom; i++) {
		struct stat cst;
		if (in_list(g->o->fixed, g->o->nfixed, kids[i]) ||
		    g->o->index->stat(g->ixh, g->rootfd, kids[i] + g->rootlen, &cst) != 0)
			continue;   /* not entered, as walk_entry() does not; gone: nothing to check */
		if (!S_ISDIR(cst.st_mode)) {
			if (pfd < 0 && (pfd = open_below_root(g, path)) < 0) {
				if (errno != EACCES && errno != ENOENT)
					g->r->unchecked++;
				continue;
			}
			walk_entry(g, pfd, path, &es[i], depth, false);
			continue;
		}
		if (walk_known(g, kids[i], &cst, depth + 1))
			continue;
		int cfd = open_below_root(g, kids[i]);
		if (cfd >= 0) {
			walk(g, cfd, kids[i], depth + 1, false);
			close(cfd);
		} else if (errno != EACCES && errno != ENOENT) {
			g->r->unchecked++;
		}
	}
	if (pfd >= 0)
		close(pfd);
	for (size_t i = 0; i < n; i++)
		free(kids[i]);
	free(kids);
	return true;
}

/* The index of one root's check: its scope names the root, the user and every protected name
 * (they decide what is kept), and starts unlike the backend's walk's ("zsp walk 1"), so that the
 * two never share a file (they keep different entries). The fixed mounts are not in it: what is
 * recorded of a directory does not depend on them (a fixed directory is kept as an entry and
 * only not entered), and they change whenever a repository comes or goes. NULL: none, or out
 * of memory. */
static void *open_index(guard *g, const char *root)
{
	const zsp_walk_index *ix = g->o->index;
	if (!ix)
		return NULL;
	zsp_buf b = { 0 };
	zsp_buf_printf(&b, "zsp guard 1\nroot %s\nuid %ld\n", root, (long)geteuid());
	for (size_t i = 0; i < g->o->nnames; i++)
		zsp_buf_printf(&b, "protect %s\n", g->o->names[i]);
	void *h = b.oom ? NULL : ix->open(ix->ctx, b.data, b.len);
	zsp_buf_free(&b);
	return h;
}

/* A shared, sticky, world-writable root (/tmp): every process of the machine writes there, and
 * the check cannot tell their files from the sandbox's, so it is not walked (pointers from the
 * other roots into it are still followed and judged, and a root inside it is walked). */
static bool shared_root(const char *root)
{
	struct stat st;
	return stat(root, &st) == 0 && (st.st_mode & S_ISVTX) && (st.st_mode & S_IWOTH);
}

int zsp_guard_check(const zsp_guard_opts *o, FILE *out, zsp_guard_result *r)
{
	guard g = { .o = o, .out = out, .r = r };
	memset(r, 0, sizeof(*r));
	read_global_hooks(&g);
	sort_lasts(&g);
	bool *shared = calloc(o->nroots + 1, sizeof(bool));
	if (!shared)
		g.oom = true;
	for (size_t i = 0; i < o->nroots && !g.oom; i++)
		shared[i] = shared_root(o->roots[i]);
	for (size_t i = 0; i < o->nroots && !g.oom; i++) {
		/* a root inside another that is walked is walked with it */
		bool inner = false;
		for (size_t j = 0; j < o->nroots; j++)
			inner |= j != i && !shared[j] && zsp_path_is_prefix(o->roots[j], o->roots[i]) &&
				 (strcmp(o->roots[j], o->roots[i]) != 0 || j < i);
		if (shared[i] || inner || in_list(o->fixed, o->nfixed, o->roots[i]))
			continue;
		int dfd = open(o->roots[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (dfd < 0) {
			if (errno != ENOENT)
				r->unchecked++;
			continue;
		}
		size_t unchecked = r->unchecked;
		g.ixh = open_index(&g, o->roots[i]);
		g.rootlen = strcmp(o->roots[i], "/") == 0 ? 0 : strlen(o->roots[i]);
		g.rootfd = dfd;
		walk(&g, dfd, o->roots[i], 0, protected_name(&g, o->roots[i]));
		close(dfd);
		/* an index of a walk that skipped a directory would hide it next time */
		if (g.ixh)
			o->index->close(g.ixh, !g.oom && r->unchecked == unchecked);
		g.ixh = NULL;
	}
	free(shared);
	free(g.seen);
	free(g.lasts);
	if (g.oom) {
		r->failed++;
		fprintf(out, "zsp-run: error: out of memory while checking what the host would run\n");
		return ZSP_EINTERNAL;
	}
	return ZSP_OK;
}
