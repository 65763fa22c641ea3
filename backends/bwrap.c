/* bwrap.c: fs, net and process sections of a policy -> a bubblewrap argv. Rules are turned into
 * mounts in path order (parents first), so the most specific rule is the last mount on a path. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/linux.h"
#include "compiler/env.h"
#include "compiler/path.h"
#include "compiler/textesc.h"

#define WALK_MAX_ENTRIES 200000 /* per glob walk: beyond it, refuse rather than half-enforce */
#define WALK_MAX_DEPTH 64
#define MAX_LINKS 40

enum host_kind { H_MISSING, H_DIR, H_OTHER, H_IMPOSSIBLE /* a parent is not a directory */ };

typedef struct ent {
	const char *path;           /* canonical */
	size_t len;                 /* strlen(path) */
	int access;                 /* zsp_access */
	bool protect;
	bool pin;                   /* an ancestor of a protected name: mounted on itself so it
				     * cannot be renamed away and recreated */
	bool untrusted;             /* reached through a symlink or a .git file the sandbox could
				     * have written: may narrow access, never widen it */
	enum host_kind kind;
	const char *missing_from;   /* first missing component's path, for placeholders */
	const zsp_ir_fs_rule *rule;
} ent;

/* What lstat and readlink said about one path during this build. Every rule path is resolved
 * from the root, and pin_ancestors() resolves each ancestor of a protected name again: the same
 * few directories were lstat'ed dozens of times per launch. Now the first answer for a path
 * stands for the rest of the build. That hides no change the build could have acted on: the file
 * system may change between any two lookups, and between the build and bwrap's mounts, whether
 * or not a lookup is repeated (what guards a protected name against that is pinning and the
 * placeholder locks, not a second lstat); and every rule now sees one view of the file system
 * instead of several taken microseconds apart. */
typedef struct probe {
	const char *path;           /* NULL: a free slot */
	int err;                    /* lstat's errno; 0: it exists */
	mode_t mode;
	const char *target;         /* a symlink's target once read */
	int link_err;               /* readlink's errno when it failed */
	enum { LISTED_NOT, LISTED_EMPTY, LISTED_FULL } listed; /* a directory a glob walk read */
} probe;

typedef struct plan {
	const zsp_ir_policy *p;
	const zsp_linux_opts *o;
	zsp_arena *a;
	zsp_diag *d;
	probe *probes;              /* open addressing, a power of two of slots */
	size_t nprobes, probecap;
	ent *ents;
	size_t n, cap;
	char **argv;
	size_t argc, argcap;
	char **ph, **locks;
	size_t nph, phcap, nlocks, lockcap;
	bool failed;
	bool oom;                   /* failed for want of memory (not yet reported) */
} plan;

static void nomem(plan *pl)
{
	pl->failed = true;
	pl->oom = true;
}

/* The status of a failed plan: out of memory (reported here) or errors already reported. */
static int plan_status(plan *pl)
{
	if (!pl->oom)
		return ZSP_EPOLICY;
	zsp_diag_error_noloc(pl->d, "out of memory");
	return ZSP_EINTERNAL;
}

static void arg(plan *pl, const char *s)
{
	char **na = zsp_arena_grow(pl->a, pl->argv, pl->argc, &pl->argcap, sizeof(char *));
	char *dup = na ? zsp_arena_strdup(pl->a, s) : NULL;
	if (!dup) {
		nomem(pl);
		return;
	}
	pl->argv = na;
	pl->argv[pl->argc++] = dup;
}

static void args(plan *pl, const char *a1, const char *a2, const char *a3)
{
	arg(pl, a1);
	if (a2)
		arg(pl, a2);
	if (a3)
		arg(pl, a3);
}

static void push_str(plan *pl, char ***arr, size_t *n, size_t *cap, const char *s)
{
	char **na = zsp_arena_grow(pl->a, *arr, *n, cap, sizeof(char *));
	char *dup = na ? zsp_arena_strdup(pl->a, s) : NULL;
	if (!dup) {
		nomem(pl);
		return;
	}
	*arr = na;
	(*arr)[(*n)++] = dup;
}

static uint64_t path_hash(const char *s)
{
	uint64_t h = 14695981039346656037u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211u;
	return h;
}

/* The slot of path in the memo, or the free slot where it goes. */
static probe *probe_slot(const plan *pl, const char *path)
{
	size_t j = (size_t)path_hash(path) & (pl->probecap - 1);
	for (; pl->probes[j].path; j = (j + 1) & (pl->probecap - 1))
		if (strcmp(pl->probes[j].path, path) == 0)
			break;
	return &pl->probes[j];
}

/* What this build already knows about path, or NULL. */
static probe *probe_known(const plan *pl, const char *path)
{
	probe *pr = pl->probecap ? probe_slot(pl, path) : NULL;
	return pr && pr->path ? pr : NULL;
}

/* The memo's slot for path, after an lstat if this build has not looked at it yet. NULL when out
 * of memory. */
static probe *probe_path(plan *pl, const char *path)
{
	if (2 * (pl->nprobes + 1) > pl->probecap) {
		size_t ncap = pl->probecap ? 2 * pl->probecap : 256;
		probe *np = zsp_arena_calloc(pl->a, ncap, sizeof(probe));
		if (!np)
			return NULL;
		for (size_t i = 0; i < pl->probecap; i++) {
			if (!pl->probes[i].path)
				continue;
			size_t j = (size_t)path_hash(pl->probes[i].path) & (ncap - 1);
			while (np[j].path)
				j = (j + 1) & (ncap - 1);
			np[j] = pl->probes[i];
		}
		pl->probes = np;
		pl->probecap = ncap;
	}
	probe *pr = probe_slot(pl, path);
	if (pr->path)
		return pr;
	struct stat st;
	pr->path = zsp_arena_strdup(pl->a, path);
	if (!pr->path)
		return NULL;
	pl->nprobes++;
	pr->err = lstat(path, &st) == 0 ? 0 : errno;
	pr->mode = pr->err ? 0 : st.st_mode;
	return pr;
}

/* A symlink's target, read once per build. NULL with errno set when it cannot be read. */
static const char *probe_link(plan *pl, probe *pr)
{
	if (!pr->target && !pr->link_err) {
		char target[PATH_MAX];
		ssize_t tl = readlink(pr->path, target, sizeof(target) - 1);
		if (tl >= 0) {
			target[tl] = 0;
			pr->target = zsp_arena_strdup(pl->a, target);
		}
		if (!pr->target)
			pr->link_err = tl < 0 ? errno : ENOMEM;
	}
	errno = pr->link_err;
	return pr->target;
}

/* Resolves every symlink of an absolute path, component by component; the part that does not
 * exist is appended as written. *kind tells what is at the end. NULL on a loop or a path too long. */
static bool policy_writable(const zsp_ir_policy *p, const char *dir);

static char *canonicalize(plan *pl, const char *in, enum host_kind *kind, const char **missing_from,
			  bool *untrusted)
{
	char cur[PATH_MAX], rest[PATH_MAX];
	int links = 0;
	*missing_from = NULL;
	if (snprintf(rest, sizeof(rest), "%s", in) >= (int)sizeof(rest))
		return NULL;
	strcpy(cur, "");
	char *p = rest;
	*kind = H_DIR;
	while (*p) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		char comp[NAME_MAX + 2];
		if (len > NAME_MAX)
			return NULL;
		memcpy(comp, p, len);
		comp[len] = 0;
		p += len;
		if (strcmp(comp, ".") == 0)
			continue;
		if (strcmp(comp, "..") == 0) {
			char *last = strrchr(cur, '/');
			if (last)
				*last = 0;
			continue;
		}
		size_t cl = strlen(cur);
		if (cl + 1 + len + 1 > sizeof(cur))
			return NULL;
		cur[cl] = '/';
		memcpy(cur + cl + 1, comp, len + 1);
		if (*kind == H_MISSING || *kind == H_IMPOSSIBLE)
			continue;
		if (*kind == H_OTHER) {
			*kind = H_IMPOSSIBLE;
			continue;
		}
		probe *pr = probe_path(pl, cur);
		if (!pr) {
			errno = ENOMEM;
			return NULL;
		}
		if (pr->err) {
			*kind = pr->err == ENOTDIR ? H_IMPOSSIBLE : H_MISSING;
			if (*kind == H_MISSING)
				*missing_from = zsp_arena_strdup(pl->a, cur);
			continue;
		}
		if (S_ISLNK(pr->mode)) {
			/* a link in a directory the policy lets a sandbox write may have been planted */
			cur[cl] = 0;
			if (untrusted && policy_writable(pl->p, cur[0] ? cur : "/"))
				*untrusted = true;
			cur[cl] = '/';
			const char *target = probe_link(pl, pr);
			if (!target)
				return NULL;
			if (++links > MAX_LINKS) {
				errno = ELOOP;
				return NULL;
			}
			char joined[PATH_MAX];
			if (snprintf(joined, sizeof(joined), "%s%s", target, p) >= (int)sizeof(joined))
				return NULL;
			cur[cl] = 0;
			if (target[0] == '/')
				cur[0] = 0;
			strcpy(rest, joined);
			p = rest;
			*kind = H_DIR;
			continue;
		}
		*kind = S_ISDIR(pr->mode) ? H_DIR : H_OTHER;
	}
	return zsp_arena_strdup(pl->a, cur[0] ? cur : "/");
}

static void add_canonical(plan *pl, char *c, enum host_kind kind, const char *missing_from, int access,
			  bool protect, bool pin, bool untrusted, const zsp_ir_fs_rule *r)
{
	ent *ne = zsp_arena_grow(pl->a, pl->ents, pl->n, &pl->cap, sizeof(ent));
	if (!ne) {
		nomem(pl);
		return;
	}
	pl->ents = ne;
	/* the same canonical path twice (two spellings, or a glob match): the stronger rule, as the
	 * oracle's tie-break does */
	for (size_t i = 0; i < pl->n; i++)
		if (strcmp(pl->ents[i].path, c) == 0 && pl->ents[i].untrusted == untrusted) {
			if (access > pl->ents[i].access)
				pl->ents[i].access = access, pl->ents[i].rule = r;
			pl->ents[i].protect |= protect;
			pl->ents[i].pin |= pin;
			return;
		}
	pl->ents[pl->n++] = (ent){ c, strlen(c), access, protect, pin, untrusted, kind, missing_from, r };
}

static void add_ent(plan *pl, const char *path, int access, bool protect, bool untrusted,
		    const zsp_ir_fs_rule *r)
{
	enum host_kind kind;
	const char *missing_from;
	char *c = canonicalize(pl, path, &kind, &missing_from, &untrusted);
	if (!c) {
		const char *why = errno == ELOOP || errno == 0 ? "too many symbolic links or too long" : strerror(errno);
		if (r)
			zsp_diag_error(pl->d, r->loc, "cannot resolve `%s` for the sandbox: %s", path, why);
		else
			zsp_diag_error_noloc(pl->d, "cannot resolve `%s` for the sandbox: %s", path, why);
		pl->failed = true;
		return;
	}
	add_canonical(pl, c, kind, missing_from, access, protect, false, untrusted, r);
}

/* The most specific literal rule covering dir, as written: does it let the sandbox write? */
static bool policy_writable(const zsp_ir_policy *p, const char *dir)
{
	const zsp_ir_fs_rule *best = NULL;
	for (size_t i = 0; i < p->nfs; i++) {
		const zsp_ir_fs_rule *r = &p->fs[i];
		if (!r->glob && zsp_path_is_prefix(r->path, dir) &&
		    (!best || strlen(r->path) > strlen(best->path) ||
		     (strlen(r->path) == strlen(best->path) && r->access > best->access)))
			best = r;
	}
	return best && best->access == ZSP_ACCESS_WRITE;
}

/* zsp_path_is_prefix(e->path, path), path being len bytes long: the loops over every entry
 * below run it for each path they look at, and most entries fail on the length alone. */
static bool ent_covers(const ent *e, const char *path, size_t len)
{
	if (e->len == 1 && e->path[0] == '/')
		return path[0] == '/';
	return e->len && e->len <= len && (path[e->len] == 0 || path[e->len] == '/') &&
	       memcmp(e->path, path, e->len) == 0;
}

/* An entry reached through something the sandbox could have planted keeps a deny, and a read
 * that narrows a writable place; anything that would widen access (a read of a hidden path, a
 * write) is dropped: a symlink written in one run must not open a hole in the next. */
static void drop_widening(plan *pl)
{
	size_t k = 0;
	for (size_t i = 0; i < pl->n; i++) {
		ent *e = &pl->ents[i];
		bool keep = true;
		if (e->untrusted && e->access != ZSP_ACCESS_DENY) {
			int target = 0;
			size_t best = 0;
			for (size_t j = 0; j < pl->n; j++) {
				const ent *t = &pl->ents[j];
				if (!t->untrusted && t->len >= best && ent_covers(t, e->path, e->len)) {
					best = t->len;
					target = t->access;
				}
			}
			keep = e->access == ZSP_ACCESS_READ && target == ZSP_ACCESS_WRITE;
		}
		if (keep)
			pl->ents[k++] = *e;
	}
	pl->n = k;
}

/* The access of the deepest entry at or above path (0: none). */
static int access_at(const plan *pl, const char *path)
{
	size_t best = 0, len = strlen(path);
	int acc = 0;
	for (size_t i = 0; i < pl->n; i++) {
		if (pl->ents[i].len >= best && ent_covers(&pl->ents[i], path, len)) {
			best = pl->ents[i].len;
			acc = pl->ents[i].access;
		}
	}
	return acc;
}

/* A protected name is a mount point, which cannot be renamed; but a directory holding one can,
 * mounts and all, after which the name could be created afresh on the host. So every writable
 * ancestor of a protected name is mounted on itself too. */
static void pin_ancestors(plan *pl)
{
	size_t n = pl->n;
	for (size_t i = 0; i < n && !pl->failed; i++) {
		if (!pl->ents[i].protect || pl->ents[i].kind == H_IMPOSSIBLE)
			continue;
		char *anc = zsp_arena_strdup(pl->a, pl->ents[i].path);
		if (!anc) {
			nomem(pl);
			return;
		}
		for (char *slash = strrchr(anc, '/'); slash && slash != anc; slash = strrchr(anc, '/')) {
			*slash = 0;
			if (access_at(pl, anc) != ZSP_ACCESS_WRITE)
				break;
			enum host_kind kind;
			const char *missing_from;
			bool untrusted = false;
			char *c = canonicalize(pl, anc, &kind, &missing_from, &untrusted);
			if (!c || strcmp(c, anc) != 0 || kind == H_IMPOSSIBLE || untrusted)
				break;
			add_canonical(pl, c, kind, missing_from, ZSP_ACCESS_WRITE, false, true, false, NULL);
		}
	}
}

/* A .git file ("gitdir: DIR", worktrees and submodules) in a writable root: the protected .git
 * names hold for the directory it points to, and for that repository's common directory. */
static void follow_gitdir(plan *pl, const zsp_ir_fs_rule *r)
{
	if (!r->protect || !r->root || strncmp(r->protect, ".git", 4) != 0 ||
	    (r->protect[4] != 0 && r->protect[4] != '/'))
		return;
	char dotgit[PATH_MAX], line[PATH_MAX];
	if (snprintf(dotgit, sizeof(dotgit), "%s/.git", r->root) >= (int)sizeof(dotgit))
		return;
	const probe *pr = probe_path(pl, dotgit);
	if (!pr) {
		nomem(pl);
		return;
	}
	if (pr->err || !S_ISREG(pr->mode))
		return;
	FILE *f = fopen(dotgit, "re");
	bool ok = f && fgets(line, sizeof(line), f) && strncmp(line, "gitdir:", 7) == 0;
	if (f)
		fclose(f);
	if (!ok)
		return;
	/* the pointer itself: rewritten, it would send git to hooks of the sandbox's making */
	add_ent(pl, dotgit, ZSP_ACCESS_READ, true, false, r);
	char *dir = line + 7;
	dir += strspn(dir, " \t");
	dir[strcspn(dir, "\r\n")] = 0;
	const char *rest = r->protect + 4;
	for (int round = 0; round < 2 && *dir; round++) {
		char target[PATH_MAX];
		if (snprintf(target, sizeof(target), "%s%s%s%s", dir[0] == '/' ? "" : r->root,
			     dir[0] == '/' ? "" : "/", dir, rest) >= (int)sizeof(target))
			return;
		/* the file's contents are the sandbox's to write when it was not protected before */
		add_ent(pl, target, ZSP_ACCESS_READ, true, true, r);
		/* a worktree's hooks and config live in the common directory */
		char common[PATH_MAX], cdir[PATH_MAX];
		if (snprintf(common, sizeof(common), "%s%s%s/commondir", dir[0] == '/' ? "" : r->root,
			     dir[0] == '/' ? "" : "/", dir) >= (int)sizeof(common))
			return;
		FILE *c = fopen(common, "re");
		bool has = c && fgets(cdir, sizeof(cdir), c);
		if (c)
			fclose(c);
		if (!has)
			return;
		cdir[strcspn(cdir, "\r\n")] = 0;
		char joined[PATH_MAX];
		if (cdir[0] == '/')
			snprintf(joined, sizeof(joined), "%s", cdir);
		else if (snprintf(joined, sizeof(joined), "%s%s%s/%s", dir[0] == '/' ? "" : r->root,
				  dir[0] == '/' ? "" : "/", dir, cdir) >= (int)sizeof(joined))
			return;
		strcpy(line, joined);
		dir = line;
	}
}

/* Path order: '/' sorts before every other byte, so a directory comes right before its subtree. */
static int path_cmp(const void *x, const void *y)
{
	const unsigned char *a = (const unsigned char *)((const ent *)x)->path;
	const unsigned char *b = (const unsigned char *)((const ent *)y)->path;
	for (; *a && *a == *b; a++, b++)
		;
	int ca = *a == '/' ? 1 : *a ? *a + 1 : 0;
	int cb = *b == '/' ? 1 : *b ? *b + 1 : 0;
	return ca - cb;
}

/* The literal directories before a glob's first component with a metacharacter. */
static char *glob_literal_prefix(plan *pl, const char *pattern)
{
	char *s = zsp_arena_strdup(pl->a, pattern);
	if (!s)
		return NULL;
	char *end = s;
	for (char *c = s; *c;) {
		char *slash = strchr(c + 1, '/');
		size_t len = slash ? (size_t)(slash - c) : strlen(c);
		char save = c[len];
		c[len] = 0;
		bool meta = zsp_glob_has_meta(c) || strchr(c, '\\');
		c[len] = save;
		if (meta)
			break;
		end = c + len;
		c += len;
	}
	*end = 0;
	return s[0] ? s : zsp_arena_strdup(pl->a, "/");
}

struct walk {
	plan *pl;
	const zsp_ir_fs_rule *r;
	const char *last;           /* the pattern's last component when it is literal, else NULL */
	size_t seen, max;
	bool over;
};

static void walk_dir(struct walk *w, char *buf, size_t len, int depth)
{
	if (depth > WALK_MAX_DEPTH || w->over)
		return;
	DIR *dir = opendir(buf[0] ? buf : "/");
	if (!dir)
		return;
	/* a protected directory read here need not be read again to see whether it is empty */
	probe *pr = probe_known(w->pl, buf[0] ? buf : "/");
	if (pr && (pr->err || !S_ISDIR(pr->mode)))
		pr = NULL;
	if (pr)
		pr->listed = LISTED_EMPTY;
	struct dirent *de;
	while ((de = readdir(dir))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (pr)
			pr->listed = LISTED_FULL;
		if (++w->seen > w->max) {
			w->over = true;
			break;
		}
		size_t nl = strlen(de->d_name);
		if (len + 1 + nl + 1 > PATH_MAX)
			continue;
		buf[len] = '/';
		memcpy(buf + len + 1, de->d_name, nl + 1);
		/* a literal last component must equal the name: most entries stop here */
		if ((!w->last || strcmp(w->last, de->d_name) == 0) && zsp_glob_match(w->r->path, buf))
			add_ent(w->pl, buf, w->r->access, false, false, w->r);
		unsigned char type = de->d_type;
		if (type == DT_UNKNOWN) {
			struct stat st;
			type = lstat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		}
		if (type == DT_DIR)
			walk_dir(w, buf, len + 1 + nl, depth + 1);
		buf[len] = 0;
	}
	closedir(dir);
}

/* A glob rule applies to what exists when the sandbox starts: its matches under each writable
 * root inside the glob's literal prefix (or under that prefix, if a writable root holds it). */
static void expand_glob(plan *pl, const zsp_ir_fs_rule *r)
{
	const char *lit = glob_literal_prefix(pl, r->path);
	if (!lit) {
		nomem(pl);
		return;
	}
	for (size_t i = 0; i < pl->p->nfs; i++) {
		const zsp_ir_fs_rule *w = &pl->p->fs[i];
		if (w->access != ZSP_ACCESS_WRITE || w->glob)
			continue;
		const char *root = NULL;
		if (zsp_path_is_prefix(w->path, lit)) {
			root = lit;
		} else if (zsp_path_is_prefix(lit, w->path)) {
			root = w->path;
		}
		if (!root)
			continue;
		char buf[PATH_MAX];
		if (snprintf(buf, sizeof(buf), "%s", strcmp(root, "/") == 0 ? "" : root) >= (int)sizeof(buf))
			continue;
		const char *last = strrchr(r->path, '/');
		last = last ? last + 1 : r->path;
		if (zsp_glob_has_meta(last) || strchr(last, '\\'))
			last = NULL;
		struct walk wk = { pl, r, last, 0, pl->o->walk_max ? pl->o->walk_max : WALK_MAX_ENTRIES, false };
		walk_dir(&wk, buf, strlen(buf), 0);
		if (wk.over) {
			zsp_diag_error(pl->d, r->loc,
				       "`%s` would need more than %zu entries of `%s` to be walked to find its matches",
				       r->path, wk.max, root);
			zsp_diag_hint(pl->d, "narrow the glob to a directory (e.g. \"${WORKSPACE}/config/**/.env\")");
			pl->failed = true;
			return;
		}
		if (root == lit)
			break;
	}
	zsp_diag_warning(pl->d, ZSP_W_UNENFORCED, r->loc,
			 "on Linux, `%s` applies only to what matches it under the writable roots when the sandbox starts: other matches, and new ones the command creates, are not covered",
			 r->path);
}

/* Nearest earlier entry that is an ancestor of e (entries are sorted): its access, or 0. */
static int parent_access(const plan *pl, size_t i)
{
	for (size_t j = i; j-- > 0;)
		if (ent_covers(&pl->ents[j], pl->ents[i].path, pl->ents[i].len))
			return pl->ents[j].access;
	return 0;
}

static bool has_descendant(const plan *pl, size_t i)
{
	return i + 1 < pl->n && ent_covers(&pl->ents[i], pl->ents[i + 1].path, pl->ents[i + 1].len);
}

static bool under(const char *path, const char *dir)
{
	return zsp_path_is_prefix(dir, path);
}

static void placeholder(plan *pl, const ent *e)
{
	/* every directory from the first missing component down to e->path is created by bwrap */
	const char *from = e->missing_from ? e->missing_from : e->path;
	size_t fl = strlen(from);
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", e->path);
	for (size_t i = fl; i <= strlen(e->path); i++) {
		if (buf[i] != '/' && buf[i] != 0)
			continue;
		char save = buf[i];
		buf[i] = 0;
		bool dup = false;
		for (size_t k = 0; k < pl->nph; k++)
			dup |= strcmp(pl->ph[k], buf) == 0;
		if (!dup)
			push_str(pl, &pl->ph, &pl->nph, &pl->phcap, buf);
		buf[i] = save;
	}
}

static void hide_dir(plan *pl, size_t i, bool leaf)
{
	const char *path = pl->ents[i].path;
	/* 0111: children re-allowed below stay reachable; the directory cannot be listed */
	args(pl, "--perms", leaf ? "0000" : "0111", NULL);
	args(pl, "--tmpfs", path, NULL);
	if (leaf)
		args(pl, "--remount-ro", path, NULL);
}

/* Could the sandbox create the missing e? Its parent must be writable by the policy, and by the
 * user: a missing name in a directory the user cannot write needs no mask (and no placeholder
 * could be made there). */
static bool creatable(const plan *pl, size_t i)
{
	const ent *e = &pl->ents[i];
	char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", e->missing_from ? e->missing_from : e->path);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return false;
	if (slash == dir)
		slash[1] = 0;
	else
		*slash = 0;
	/* the first missing component is made in an existing directory: the policy and the user
	 * must both let the sandbox write there */
	if (access_at(pl, dir) != ZSP_ACCESS_WRITE || access(dir, W_OK) != 0)
		return false;
	/* ... and every missing directory on the way must be writable too: below a masked missing
	 * name (a read-only island not there yet) nothing can be created */
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s", e->path);
	for (char *c = path + strlen(dir) + 1; (c = strchr(c, '/')); c++) {
		*c = 0;
		int acc = access_at(pl, path);
		*c = '/';
		if (acc != ZSP_ACCESS_WRITE)
			return false;
	}
	return true;
}

/* An unreadable directory counts as empty (a lock on it is harmless). */
static bool dir_empty(const plan *pl, const char *path)
{
	const probe *pr = probe_known(pl, path);
	if (pr && pr->listed != LISTED_NOT)
		return pr->listed == LISTED_EMPTY;
	DIR *dir = opendir(path);
	bool empty = true;
	struct dirent *de;
	while (dir && (de = readdir(dir)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			empty = false;
	if (dir)
		closedir(dir);
	return empty;
}

static void emit_ent(plan *pl, size_t i)
{
	const ent *e = &pl->ents[i];
	int pa = parent_access(pl, i);
	bool can_create = e->kind == H_MISSING && creatable(pl, i);
	if (e->kind == H_IMPOSSIBLE)
		return;
	switch (e->access) {
	case ZSP_ACCESS_READ:
		if (e->kind == H_MISSING) {
			if (!can_create)
				return;
			placeholder(pl, e);
			args(pl, "--perms", "0555", NULL);
			args(pl, "--tmpfs", e->path, NULL);
			args(pl, "--remount-ro", e->path, NULL);
			return;
		}
		if (pa == ZSP_ACCESS_READ)
			return;
		if (e->protect && e->kind == H_DIR && dir_empty(pl, e->path))
			push_str(pl, &pl->locks, &pl->nlocks, &pl->lockcap, e->path);
		args(pl, "--ro-bind", e->path, e->path);
		return;
	case ZSP_ACCESS_WRITE:
		if (e->pin && e->kind == H_MISSING && can_create) {
			placeholder(pl, e);
		} else if (e->kind == H_MISSING || (pa == ZSP_ACCESS_WRITE && !e->pin)) {
			return;
		}
		args(pl, "--bind", e->path, e->path);
		return;
	case ZSP_ACCESS_DENY:
		if (pa == ZSP_ACCESS_DENY && !has_descendant(pl, i))
			return;
		if (e->kind == H_MISSING) {
			if (!can_create)
				return;
			placeholder(pl, e);
			hide_dir(pl, i, !has_descendant(pl, i));
			return;
		}
		if (e->kind == H_DIR) {
			hide_dir(pl, i, !has_descendant(pl, i));
			return;
		}
		char fd[16];
		snprintf(fd, sizeof(fd), "%d", ZSP_FD_EMPTY);
		args(pl, "--perms", "0000", NULL);
		args(pl, "--ro-bind-data", fd, e->path);
		return;
	}
}

static bool env_listed(const zsp_ir_env *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (zsp_glob_match(list[i].name, name))
			return true;
	return false;
}

static int env_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* --clearenv, then the sandbox's whole environment as --setenv: bwrap itself runs with an empty
 * one, and what the command sees is exactly what the policy lets through. */
static void emit_env(plan *pl)
{
	const zsp_ir_policy *p = pl->p;
	arg(pl, "--clearenv");
	size_t n = 0;
	for (char *const *e = pl->o->environ; e && *e; e++)
		n++;
	char **names = zsp_arena_calloc(pl->a, n + 1, sizeof(char *));
	if (!names) {
		nomem(pl);
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const char *kv = pl->o->environ[i];
		const char *eq = strchr(kv, '=');
		if (!eq || eq == kv)
			continue;
		char *name = zsp_arena_strndup(pl->a, kv, (size_t)(eq - kv));
		if (!name) {
			nomem(pl);
			return;
		}
		bool pass = p->env_clear ? zsp_env_keeps(p->env_keep, p->nenv_keep, name)
					 : !env_listed(p->env_unset, p->nenv_unset, name);
		if (env_listed(p->env_set, p->nenv_set, name))
			pass = false;
		/* WSL2 interop: the socket a sandboxed process would use to start Windows programs */
		if (strcmp(name, "WSL_INTEROP") == 0)
			pass = false;
		if (pass)
			names[k++] = (char *)kv;
	}
	qsort(names, k, sizeof(char *), env_cmp);
	for (size_t i = 0; i < k; i++) {
		const char *eq = strchr(names[i], '=');
		char *name = zsp_arena_strndup(pl->a, names[i], (size_t)(eq - names[i]));
		if (!name) {
			nomem(pl);
			return;
		}
		args(pl, "--setenv", name, eq + 1);
	}
	for (size_t i = 0; i < p->nenv_set; i++)
		args(pl, "--setenv", p->env_set[i].name, p->env_set[i].value);
}

static bool unresolved(plan *pl, const char *s, zsp_loc loc)
{
	const char *d = s ? strstr(s, "${") : NULL;
	if (!d)
		return false;
	const char *end = strchr(d, '}');
	int len = end ? (int)(end - d - 2) : (int)strlen(d + 2);
	zsp_diag_error(pl->d, loc, "parameter `%.*s` has no value: the sandbox needs every path resolved", len,
		       d + 2);
	zsp_diag_hint(pl->d, "give it with -D %.*s=VALUE", len, d + 2);
	pl->failed = true;
	return true;
}

int zsp_bwrap_plan_build(const zsp_ir_policy *p, const zsp_linux_opts *o, zsp_arena *a, zsp_diag *d,
			 zsp_bwrap_plan *out)
{
	plan pl = { .p = p, .o = o, .a = a, .d = d };
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < p->nfs; i++) {
		const zsp_ir_fs_rule *r = &p->fs[i];
		if (unresolved(&pl, r->path, r->loc))
			continue;
		if (!r->glob)
			add_ent(&pl, r->path, r->access, r->protect != NULL, false, r);
		if (!pl.failed)
			follow_gitdir(&pl, r);
	}
	for (size_t i = 0; i < p->nfs && !pl.failed; i++)
		if (p->fs[i].glob)
			expand_glob(&pl, &p->fs[i]);
	/* WSL2 interop sockets (Windows programs started from Linux): hidden whatever the policy
	 * says; /run/WSL exists only on WSL */
	struct stat wsl;
	if (!pl.failed && lstat("/run/WSL", &wsl) == 0 && S_ISDIR(wsl.st_mode))
		add_ent(&pl, "/run/WSL", ZSP_ACCESS_DENY, false, false, NULL);
	for (size_t i = 0; i < p->nenv_set; i++)
		unresolved(&pl, p->env_set[i].value, p->env_set[i].loc);
	if (!pl.failed) {
		drop_widening(&pl);
		pin_ancestors(&pl);
	}
	if (pl.failed)
		return plan_status(&pl);
	if (pl.n)
		qsort(pl.ents, pl.n, sizeof(ent), path_cmp);

	/* root view */
	size_t first = 0;
	if (pl.n && strcmp(pl.ents[0].path, "/") == 0) {
		first = 1;
		if (pl.ents[0].access == ZSP_ACCESS_READ)
			args(&pl, "--ro-bind", "/", "/");
		else if (pl.ents[0].access == ZSP_ACCESS_WRITE)
			args(&pl, "--bind", "/", "/");
		else
			hide_dir(&pl, 0, !has_descendant(&pl, 0));
	} else {
		/* nothing is readable unless a rule says so */
		args(&pl, "--perms", "0111", NULL);
		args(&pl, "--tmpfs", "/", NULL);
	}
	args(&pl, "--dev", "/dev", NULL);
	for (size_t i = first; i < pl.n; i++)
		if (!under(pl.ents[i].path, "/dev") && !under(pl.ents[i].path, "/proc"))
			emit_ent(&pl, i);
	for (size_t i = first; i < pl.n; i++)
		if (under(pl.ents[i].path, "/dev") && strcmp(pl.ents[i].path, "/dev") != 0)
			emit_ent(&pl, i);

	args(&pl, "--unshare-user", "--unshare-pid", "--unshare-ipc");
	args(&pl, "--unshare-uts", "--unshare-cgroup-try", NULL);
	if (p->net_mode != ZSP_NET_FULL)
		arg(&pl, "--unshare-net");
	arg(&pl, "--disable-userns");
	if (o->proc) {
		args(&pl, "--proc", "/proc", NULL);
		/* bwrap 0.8 leaves /proc/sys writable for a root caller (uid 0 stays uid 0, and sysctl
		 * writes check the uid, not capabilities): kernel.core_pattern would run a program as
		 * root outside every namespace. The sysctl tree is one for all mounts of proc (its
		 * namespaced parts follow the reading task), so the host's, read-only, is the same. */
		args(&pl, "--ro-bind", "/proc/sys", "/proc/sys");
		args(&pl, "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger");
		args(&pl, "--ro-bind-try", "/proc/irq", "/proc/irq");
		args(&pl, "--ro-bind-try", "/proc/bus", "/proc/bus");
		for (size_t i = first; i < pl.n; i++)
			if (under(pl.ents[i].path, "/proc") && strcmp(pl.ents[i].path, "/proc") != 0)
				emit_ent(&pl, i);
	} else {
		/* no proc of its own: the host's, reached through the root bind, must not show
		 * (its /proc/PID/root would lead around every mount) */
		args(&pl, "--perms", "0555", NULL);
		args(&pl, "--tmpfs", "/proc", NULL);
		args(&pl, "--remount-ro", "/proc", NULL);
	}
	args(&pl, "--new-session", "--die-with-parent", NULL);
	args(&pl, "--cap-drop", "ALL", NULL);
	emit_env(&pl);
	if (o->seccomp) {
		char fd[16];
		snprintf(fd, sizeof(fd), "%d", ZSP_FD_SECCOMP);
		args(&pl, "--seccomp", fd, NULL);
	}
	if (o->chdir)
		args(&pl, "--chdir", o->chdir, NULL);
	if (pl.failed)
		return plan_status(&pl);
	out->argv = pl.argv;
	out->argc = pl.argc;
	out->placeholders = pl.ph;
	out->nplaceholders = pl.nph;
	out->locks = pl.locks;
	out->nlocks = pl.nlocks;
	return ZSP_OK;
}

void zsp_bwrap_argv_text(const zsp_bwrap_plan *bp, bool nul, zsp_buf *out)
{
	for (size_t i = 0; i < bp->argc; i++) {
		char *q = nul ? NULL : zsp_shell_quote(bp->argv[i]);
		if (!nul && !q) {
			out->oom = true;
			return;
		}
		zsp_buf_add(out, q ? q : bp->argv[i], strlen(q ? q : bp->argv[i]));
		zsp_buf_putc(out, nul ? '\0' : '\n');
		free(q);
	}
}

int zsp_bwrap_backend_emit(const zsp_backend_input *in, zsp_diag *d, zsp_buf *out)
{
	zsp_arena *a = zsp_arena_new();
	if (!a) {
		zsp_diag_error_noloc(d, "out of memory");
		return ZSP_EINTERNAL;
	}
	zsp_linux_opts lo = { .chdir = in->chdir, .environ = in->environ, .seccomp = true, .proc = true };
	zsp_bwrap_plan bp;
	zsp_linux_check(in->p, d);
	int rc = zsp_bwrap_plan_build(in->p, &lo, a, d, &bp);
	if (rc == ZSP_OK && d->errors)
		rc = ZSP_EPOLICY;
	if (rc == ZSP_OK)
		zsp_bwrap_argv_text(&bp, in->nul, out);
	zsp_arena_free(a);
	if (rc == ZSP_OK && out->oom) {
		zsp_diag_error_noloc(d, "out of memory");
		rc = ZSP_EINTERNAL;
	}
	return rc;
}
