/* bwrap.c: fs, net and process sections of a policy -> a bubblewrap argv. Rules are turned into
 * mounts in path order (parents first), so the most specific rule is the last mount on a path. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif

#include "backends/gitcfg.h"
#include "backends/linux.h"
#include "compiler/env.h"
#include "compiler/path.h"
#include "compiler/textesc.h"

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
	const char *source;         /* what is mounted there when it is not the path itself (a
				     * git directory's layer); NULL: the path */
	bool dropped;               /* taken out of the plan (a config its layer replaces) */
	const char *state;          /* bound from the sandbox's own directory sandbox_dir/state (a
				     * cache), not from the host object at path */
	bool tmp;                   /* the private /tmp: the sandbox's own directory is bound here */
	bool in_tmp;                /* emission: its nearest mounted ancestor is the private /tmp */
	bool skipped;               /* ... and it is not mounted (the host's object is not there) */
	bool rebuild;               /* a directory the sandbox only reads that holds a missing literal
				     * deny: a tmpfs with its entries at launch bound back */
	const zsp_ir_fs_rule *rebuild_for; /* ... the deny's rule */
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
	uid_t uid;
	const char *target;         /* a symlink's target once read */
	int link_err;               /* readlink's errno when it failed */
	enum { LISTED_NOT, LISTED_EMPTY, LISTED_FULL } listed; /* a directory a walk read */
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
	size_t *entix;              /* open addressing over ents by path: index + 1, 0 free */
	size_t entixcap;            /* a power of two, or 0: to be built (ents_moved()) */
	char **argv;
	size_t argc, argcap;
	char **ph, **locks, **roots, **fixed, **dropped, **masks;
	size_t nph, phcap, nlocks, lockcap, nroots, rootcap, nfixed, fixedcap, ndropped, droppedcap;
	size_t nmasks, maskcap;
	zsp_bwrap_layer *layers;
	size_t nlayers, layercap;
	bool failed;
	bool oom;                   /* failed for want of memory (not yet reported) */
	zsp_bwrap_state *state;     /* the sandbox's own directories the runner makes */
	size_t nstate, statecap;
	const char *tmp;            /* the canonical /tmp when it is the sandbox's own, else NULL */
	const char *moved_said;     /* the last cache said to be moved by the sandbox's environment */
	size_t nmissing;            /* protected names the sandbox could create (not mounted) */
	char **rebuilt;             /* directories rebuilt (remounted read-only after every mount) */
	const zsp_ir_fs_rule **root_globs; /* globs looked for under the writable roots (walk_root) */
	const char **root_lasts;    /* ... their literal last components, or NULL */
	size_t nroot_globs, rootglobcap;
	size_t nrebuilt, rebuiltcap;
	const zsp_ir_fs_rule *missing_rule;
	const char *missing_names[3];
	size_t nnames_shown;
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
static probe *probe_path_slot(plan *pl, const char *path)
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
	return probe_slot(pl, path);
}

static probe *probe_path(plan *pl, const char *path)
{
	probe *pr = probe_path_slot(pl, path);
	if (!pr || pr->path)
		return pr;
	struct stat st;
	pr->path = zsp_arena_strdup(pl->a, path);
	if (!pr->path)
		return NULL;
	pl->nprobes++;
	pr->err = lstat(path, &st) == 0 ? 0 : errno;
	pr->mode = pr->err ? 0 : st.st_mode;
	pr->uid = pr->err ? 0 : st.st_uid;
	return pr;
}

/* What a walk's fstat said about a directory it reached through no symbolic link: the memo's
 * answer for path from now on, as an lstat of it would have said (a match below it then costs
 * no lstat of its directories when its path is resolved). Nothing when path is known already
 * or on out-of-memory (the lstat is made later, as before). */
static void probe_seed(plan *pl, const char *path, const struct stat *st)
{
	if (probe_known(pl, path))
		return;
	probe *pr = probe_path_slot(pl, path);
	if (!pr || !(pr->path = zsp_arena_strdup(pl->a, path)))
		return;
	pl->nprobes++;
	pr->err = 0;
	pr->mode = st->st_mode;
	pr->uid = st->st_uid;
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
static bool is_private_tmp(plan *pl, const char *path);

/* A directory where someone other than the user and root may create entries: world-writable
 * or sticky (/tmp), or owned by another user. A symbolic link found there is not the user's. */
static bool dir_untrusted(plan *pl, const char *dir)
{
	probe *pr = probe_path(pl, dir);
	if (!pr || pr->err)
		return true;
	return (pr->mode & (S_IWOTH | S_ISVTX)) || (pr->uid != 0 && pr->uid != geteuid());
}

/* Sticky and world-writable, like /tmp: a directory every process of the machine writes. */
static bool shared_dir(plan *pl, const char *dir)
{
	const probe *pr = probe_path(pl, dir);
	return pr && !pr->err && (pr->mode & S_ISVTX) && (pr->mode & S_IWOTH);
}

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
			/* a link in a directory the policy lets a sandbox write may have been planted,
			 * and so may one where other users can write (/tmp) */
			cur[cl] = 0;
			if (untrusted && (policy_writable(pl->p, cur[0] ? cur : "/") ||
					  dir_untrusted(pl, cur[0] ? cur : "/")))
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

/* The entries were removed or reordered: their index is built again at the next addition. */
static void ents_moved(plan *pl)
{
	pl->entixcap = 0;
}

/* The index's slot for path c (untrusted or not): the entry's there, or a free one. */
static size_t *ent_slot(const plan *pl, const char *c, bool untrusted)
{
	size_t j = (size_t)(path_hash(c) ^ untrusted) & (pl->entixcap - 1);
	for (; pl->entix[j]; j = (j + 1) & (pl->entixcap - 1)) {
		const ent *e = &pl->ents[pl->entix[j] - 1];
		if (e->untrusted == untrusted && strcmp(e->path, c) == 0)
			break;
	}
	return &pl->entix[j];
}

/* Room in the index for one more entry (built anew when stale or too full). */
static bool ent_index_room(plan *pl)
{
	if (pl->entixcap && 2 * (pl->n + 1) <= pl->entixcap)
		return true;
	size_t cap = 256;
	while (cap < 2 * (pl->n + 1))
		cap *= 2;
	size_t *ix = zsp_arena_calloc(pl->a, cap, sizeof(*ix));
	if (!ix)
		return false;
	pl->entix = ix;
	pl->entixcap = cap;
	for (size_t i = 0; i < pl->n; i++) {
		size_t *slot = ent_slot(pl, pl->ents[i].path, pl->ents[i].untrusted);
		if (!*slot)   /* two entries of one path: the first answers, as the scan did */
			*slot = i + 1;
	}
	return true;
}

/* The entry of c (an existing one when c is already there), or NULL when out of memory. It is
 * valid until the next entry is added. */
static ent *add_canonical(plan *pl, char *c, enum host_kind kind, const char *missing_from, int access,
			  bool protect, bool pin, bool untrusted, const zsp_ir_fs_rule *r)
{
	ent *ne = zsp_arena_grow(pl->a, pl->ents, pl->n, &pl->cap, sizeof(ent));
	if (!ne || !ent_index_room(pl)) {
		nomem(pl);
		return NULL;
	}
	pl->ents = ne;
	/* the same canonical path twice (two spellings, or a glob match): the stronger rule, as the
	 * oracle's tie-break does; found by a hash of the path, not a pass over every entry (a
	 * thousand glob matches made that pass a launch's biggest cost) */
	size_t *slot = ent_slot(pl, c, untrusted);
	if (*slot) {
		ent *e = &pl->ents[*slot - 1];
		if (access > e->access)
			e->access = access, e->rule = r;
		e->protect |= protect;
		e->pin |= pin;
		return e;
	}
	pl->ents[pl->n] = (ent){ .path = c, .len = strlen(c), .access = access, .protect = protect, .pin = pin,
				 .untrusted = untrusted, .kind = kind, .missing_from = missing_from, .rule = r };
	*slot = pl->n + 1;
	return &pl->ents[pl->n++];
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
/* The policy's literal rule that decides path: the most specific, a tie to the stronger. */
static const zsp_ir_fs_rule *rule_for(const zsp_ir_policy *p, const char *path)
{
	const zsp_ir_fs_rule *best = NULL;
	for (size_t i = 0; i < p->nfs; i++) {
		const zsp_ir_fs_rule *r = &p->fs[i];
		if (!r->glob && zsp_path_is_prefix(r->path, path) &&
		    (!best || strlen(r->path) > strlen(best->path) ||
		     (strlen(r->path) == strlen(best->path) && r->access > best->access)))
			best = r;
	}
	return best;
}

static int rule_access(const zsp_ir_policy *p, const char *path)
{
	const zsp_ir_fs_rule *r = rule_for(p, path);
	return r ? (int)r->access : 0;
}

static bool policy_writable(const zsp_ir_policy *p, const char *dir)
{
	return rule_access(p, dir) == ZSP_ACCESS_WRITE;
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
			/* a writable root that is not there as the policy means it: refuse, rather than
			 * run with the root silently read-only */
			if (!keep && e->access == ZSP_ACCESS_WRITE && e->rule) {
				zsp_diag_error(pl->d, e->rule->loc,
					       "`%s` is reached through a symbolic link in a directory that the sandbox "
					       "or another user can write (it resolves to %s): it is not made writable",
					       e->rule->path, e->path);
				zsp_diag_hint(pl->d, "name the directory itself, not a link to it");
				pl->failed = true;
			}
		}
		if (keep)
			pl->ents[k++] = *e;
	}
	pl->n = k;
	ents_moved(pl);
}

/* Is path the private /tmp, or in it and not the host's (no entry between them)? */
static bool in_private_tmp(const plan *pl, const char *path)
{
	size_t best = 0, len = strlen(path);
	const ent *deepest = NULL;
	for (size_t i = 0; i < pl->n; i++)
		if (pl->ents[i].len >= best && ent_covers(&pl->ents[i], path, len)) {
			best = pl->ents[i].len;
			deepest = &pl->ents[i];
		}
	return deepest && deepest->tmp;
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

/* The policy and the files it includes: read-only wherever the sandbox may write, so that no
 * run rewrites the rules of the next. Only narrows: a file the policy hides stays hidden. */
static void protect_readonly(plan *pl)
{
	for (size_t i = 0; i < pl->o->nreadonly && !pl->failed; i++) {
		if (pl->o->readonly[i][0] != '/')
			continue;   /* a buffer's name, not a file */
		enum host_kind kind;
		const char *missing_from;
		bool untrusted = false;
		char *c = canonicalize(pl, pl->o->readonly[i], &kind, &missing_from, &untrusted);
		if (c && kind != H_MISSING && kind != H_IMPOSSIBLE && access_at(pl, c) == ZSP_ACCESS_WRITE)
			add_canonical(pl, c, kind, NULL, ZSP_ACCESS_READ, true, false, false, NULL);
	}
}

/* A protected name is a mount point, which cannot be renamed; but a directory holding one can,
 * mounts and all, after which the name could be created afresh on the host. So every writable
 * ancestor of a protected name is mounted on itself too. */
static void pin_ancestors(plan *pl)
{
	size_t n = pl->n;
	for (size_t i = 0; i < n && !pl->failed; i++) {
		if (!pl->ents[i].protect || pl->ents[i].kind == H_IMPOSSIBLE || pl->ents[i].kind == H_MISSING)
			continue;
		char *anc = zsp_arena_strdup(pl->a, pl->ents[i].path);
		if (!anc) {
			nomem(pl);
			return;
		}
		for (char *slash = strrchr(anc, '/'); slash && slash != anc; slash = strrchr(anc, '/')) {
			*slash = 0;
			if (access_at(pl, anc) != ZSP_ACCESS_WRITE || in_private_tmp(pl, anc))
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

/* A protected name, or a directory on the way to it, that is a symbolic link: the sandbox could
 * remove the link and create the name afresh, and the read-only mount would have held the link's
 * target only. Refused, as Codex does (doc/host-later.md). true when refused. */
static bool protect_through_link(plan *pl, const char *root, const char *name, const zsp_ir_fs_rule *r)
{
	enum host_kind kind;
	const char *missing_from;
	bool untrusted = false;
	char *rc = canonicalize(pl, root, &kind, &missing_from, &untrusted);
	if (!rc || kind != H_DIR)
		return false;   /* no root, nothing under it to protect */
	char path[PATH_MAX];
	size_t len = (size_t)snprintf(path, sizeof(path), "%s", strcmp(rc, "/") == 0 ? "" : rc);
	for (const char *c = name; *c && len < sizeof(path);) {
		size_t n = strcspn(c, "/");
		if (len + 1 + n >= sizeof(path))
			return false;
		path[len++] = '/';
		memcpy(path + len, c, n);
		len += n;
		path[len] = 0;
		probe *pr = probe_path(pl, path);
		if (!pr) {
			nomem(pl);
			return true;
		}
		if (pr->err)
			return false;
		if (S_ISLNK(pr->mode)) {
			const char *target = probe_link(pl, pr);
			zsp_diag_error(pl->d, r->loc,
				       "protected `%s`: %s is a symbolic link%s%s: the sandbox could replace the "
				       "link and write the name afresh, so the sandbox is not started",
				       name, path, target ? " to " : "", target ? target : "");
			zsp_diag_hint(pl->d, "replace the link by the directory or file it points to, or move it "
					     "out of the writable root");
			pl->failed = true;
			return true;
		}
		if (!S_ISDIR(pr->mode))
			return false;
		c += n;
		c += strspn(c, "/");
	}
	return false;
}

/* The git directories git reaches from one writable root: root/.git (or the directory a .git
 * file names), its common directory, and the git directories of its submodules and worktrees.
 * via: reached through a pointer the sandbox could have written (such an entry may narrow
 * access, never widen it). */
typedef struct gitdirs {
	char *dir[64];
	bool via[64];
	size_t n;
} gitdirs;

static void gitdirs_add(plan *pl, gitdirs *gd, const char *dir, bool via)
{
	for (size_t i = 0; i < gd->n; i++)
		if (strcmp(gd->dir[i], dir) == 0)
			return;
	if (gd->n < 64 && (gd->dir[gd->n] = zsp_arena_strdup(pl->a, dir))) {
		gd->via[gd->n++] = via;
		return;
	}
	if (gd->n < 64)
		nomem(pl);
}

/* The directory a pointer file names (git's one-line files: a .git file, commondir), relative to
 * from; NULL when there is none. */
static char *pointer_target(plan *pl, const char *from, const char *file, const char *prefix)
{
	int dfd = open(from, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char target[PATH_MAX], err[256], joined[2 * PATH_MAX + 2];
	if (dfd < 0)
		return NULL;
	int rc = zsp_git_pointer_read(dfd, file, prefix, target, sizeof(target), err, sizeof(err));
	close(dfd);
	if (rc != ZSP_OK)
		return NULL;
	snprintf(joined, sizeof(joined), "%s%s%s", target[0] == '/' ? "" : from, target[0] == '/' ? "" : "/",
		 target);
	char norm[PATH_MAX];
	if (!zsp_path_lexical(joined, norm, sizeof(norm)))
		return NULL;
	return zsp_arena_strdup(pl->a, norm);
}

static void gitdirs_children(plan *pl, gitdirs *gd, const char *gdir, const char *sub, bool via)
{
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof(dir), "%s/%s", gdir, sub) >= (int)sizeof(dir))
		return;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char child[PATH_MAX];
		if (de->d_name[0] == '.' ||
		    snprintf(child, sizeof(child), "%s/%s", dir, de->d_name) >= (int)sizeof(child))
			continue;
		const probe *pr = probe_path(pl, child);
		if (pr && !pr->err && S_ISDIR(pr->mode))
			gitdirs_add(pl, gd, child, via);
	}
	if (d)
		closedir(d);
}

static void find_gitdirs(plan *pl, const char *root, gitdirs *gd)
{
	char dotgit[PATH_MAX];
	if (snprintf(dotgit, sizeof(dotgit), "%s/.git", root) >= (int)sizeof(dotgit))
		return;
	const probe *pr = probe_path(pl, dotgit);
	if (!pr) {
		nomem(pl);
		return;
	}
	if (pr->err)
		return;
	char *g = S_ISDIR(pr->mode) ? dotgit : S_ISREG(pr->mode) ? pointer_target(pl, root, ".git", ZSP_GIT_GITDIR_PREFIX) : NULL;
	if (!g)
		return;
	gitdirs_add(pl, gd, g, g != dotgit);
	/* each git directory found may name a common directory; a worktree's is the main one */
	for (size_t i = 0; i < gd->n && !pl->failed; i++) {
		char *common = pointer_target(pl, gd->dir[i], "commondir", NULL);
		if (common)
			gitdirs_add(pl, gd, common, true);
		gitdirs_children(pl, gd, gd->dir[i], "modules", gd->via[i]);
		gitdirs_children(pl, gd, gd->dir[i], "worktrees", gd->via[i]);
	}
}

typedef struct cfg_refs {
	plan *pl;
	const char *gdir, *root;
	const zsp_ir_fs_rule *r;
	bool via;
} cfg_refs;

/* The hooks in a hooks directory that are symbolic links: git runs what they point at, so the
 * targets (a script in the work tree, say) are read-only too. */
static void protect_hook_links(plan *pl, const char *dir, bool via, const zsp_ir_fs_rule *r)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d)) && !pl->failed) {
		char path[PATH_MAX];
		if (de->d_name[0] == '.' || snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		const probe *pr = probe_path(pl, path);
		if (pr && !pr->err && S_ISLNK(pr->mode))
			add_ent(pl, path, ZSP_ACCESS_READ, true, via, r);
	}
	if (d)
		closedir(d);
}

/* What a repository's config points at that git runs, or reads keys from: mounted read-only. */
static int cfg_ref(void *ctx, const zsp_gitcfg_entry *e)
{
	cfg_refs *c = ctx;
	const char *v = e->value;
	const char *base = NULL;
	if (!v || !v[0])
		return 0;
	if (strcmp(e->section, "core") == 0 && !e->subsection && strcmp(e->name, "hookspath") == 0)
		base = c->root;          /* relative to the top of the work tree */
	else if ((strcmp(e->section, "include") == 0 || strcmp(e->section, "includeif") == 0) &&
		 strcmp(e->name, "path") == 0)
		base = c->gdir;          /* relative to the including file */
	if (!base)
		return 0;
	char joined[2 * PATH_MAX + 2], norm[PATH_MAX];
	if (v[0] == '~' && v[1] == '/' && c->pl->o->home)
		snprintf(joined, sizeof(joined), "%s/%s", c->pl->o->home, v + 2);
	else if (v[0] == '/')
		snprintf(joined, sizeof(joined), "%s", v);
	else
		snprintf(joined, sizeof(joined), "%s/%s", base, v);
	if (zsp_path_lexical(joined, norm, sizeof(norm))) {
		add_ent(c->pl, norm, ZSP_ACCESS_READ, true, c->via, c->r);
		if (base == c->root)
			protect_hook_links(c->pl, norm, c->via, c->r);
	}
	return 0;
}

static void protect_config_refs(plan *pl, const char *gdir, const char *root, bool via, const zsp_ir_fs_rule *r)
{
	int dfd = open(gdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	const char *files[] = { "config", "config.worktree" };
	for (size_t i = 0; i < 2; i++) {
		char *text = NULL, err[256];
		size_t len;
		if (zsp_gitcfg_read_file(dfd, files[i], &text, &len, err, sizeof(err)) != ZSP_OK)
			continue;
		cfg_refs c = { pl, gdir, root, r, via };
		zsp_gitcfg_parse(text, len, cfg_ref, &c, err, sizeof(err));
		free(text);
	}
	close(dfd);
}

/* canonical path of path, NULL when it is missing, reached through a link someone else (or a
 * sandbox) could have planted, or unresolvable */
static char *canonical_trusted(plan *pl, const char *path)
{
	enum host_kind kind;
	const char *missing_from;
	bool untrusted = false;
	char *c = canonicalize(pl, path, &kind, &missing_from, &untrusted);
	return c && kind != H_MISSING && kind != H_IMPOSSIBLE && !untrusted ? c : NULL;
}

static bool owned_dir(plan *pl, const char *path)
{
	const probe *pr = probe_path(pl, path);
	return pr && !pr->err && S_ISDIR(pr->mode) && pr->uid == geteuid();
}

/* Does pointer file dir/name (git's: commondir, gitdir) name want (canonical)? */
static bool points_at(plan *pl, const char *dir, const char *name, const char *want, bool dotgit_file)
{
	char *t = pointer_target(pl, dir, name, NULL);
	char *c = t ? canonical_trusted(pl, t) : NULL;
	if (!c)
		return false;
	if (dotgit_file) {   /* worktrees/NAME/gitdir names the worktree's .git file */
		size_t n = strlen(c);
		return n > 5 && strcmp(c + n - 5, "/.git") == 0 && strncmp(c, want, n - 5) == 0 && want[n - 5] == 0;
	}
	return strcmp(c, want) == 0;
}

/* Is a git directory there (HEAD, objects/, refs/)? */
static bool looks_gitdir(plan *pl, const char *dir)
{
	char p1[PATH_MAX], p2[PATH_MAX], p3[PATH_MAX];
	snprintf(p1, sizeof(p1), "%s/HEAD", dir);
	snprintf(p2, sizeof(p2), "%s/objects", dir);
	snprintf(p3, sizeof(p3), "%s/refs", dir);
	const probe *h = probe_path(pl, p1);
	return h && !h->err && S_ISREG(h->mode) && owned_dir(pl, p2) && owned_dir(pl, p3);
}

/* core.worktree's last value into ctx (PATH_MAX bytes; "" without one or when too long) */
static int core_worktree(void *ctx, const zsp_gitcfg_entry *e)
{
	char *v = ctx;
	if (strcmp(e->section, "core") == 0 && !e->subsection && strcmp(e->name, "worktree") == 0 &&
	    snprintf(v, PATH_MAX, "%s", e->value ? e->value : "") >= PATH_MAX)
		v[0] = 0;
	return 0;
}

/* A writable root that is a linked worktree (root/.git: `gitdir: C/worktrees/NAME`) or a
 * submodule (`gitdir: S/.git/modules/NAME`, S above root) commits into a git directory outside
 * it. The .git file is the sandbox's to write, so access is widened only into a git directory
 * that is the repository's own and names root back: a worktree's gitdir file pointing at
 * root/.git and its commondir at C; a submodule's core.worktree at root, inside a superproject
 * S that holds root. Then: the worktree's or module's directory (its redirects, config and hooks
 * stay read-only: protect_repo), and for a worktree C's objects, refs and logs (what a commit
 * writes; C's config, hooks and packed-refs stay read-only). true when widened. */
static bool widen_linked(plan *pl, const char *root, const char *target)
{
	char *t = canonical_trusted(pl, target);
	char *rc = canonical_trusted(pl, root);
	if (!t || !rc || !owned_dir(pl, t) || access_at(pl, t) == ZSP_ACCESS_DENY)
		return false;
	char head[PATH_MAX + 8];
	snprintf(head, sizeof(head), "%s/HEAD", t);
	const probe *hp = probe_path(pl, head);
	if (!hp || hp->err || !S_ISREG(hp->mode))
		return false;
	char parent[PATH_MAX];
	snprintf(parent, sizeof(parent), "%s", t);
	char *slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return false;
	*slash = 0;
	const char *pname = strrchr(parent, '/');
	pname = pname ? pname + 1 : parent;
	if (strcmp(pname, "worktrees") == 0) {
		char common[PATH_MAX];
		snprintf(common, sizeof(common), "%s", parent);
		*strrchr(common, '/') = 0;
		if (!looks_gitdir(pl, common) || !points_at(pl, t, "commondir", common, false) ||
		    !points_at(pl, t, "gitdir", rc, true))
			return false;
		add_canonical(pl, t, H_DIR, NULL, ZSP_ACCESS_WRITE, false, false, false, NULL);
		push_str(pl, &pl->roots, &pl->nroots, &pl->rootcap, t);
		static const char *const shared[] = { "objects", "refs", "logs" };
		for (size_t i = 0; i < 3; i++) {
			char sub[PATH_MAX + 16];
			if (snprintf(sub, sizeof(sub), "%s/%s", common, shared[i]) >= (int)PATH_MAX)
				continue;
			char *c = owned_dir(pl, sub) ? canonical_trusted(pl, sub) : NULL;
			if (c && strcmp(c, sub) == 0 && access_at(pl, c) != ZSP_ACCESS_DENY)
				add_canonical(pl, c, H_DIR, NULL, ZSP_ACCESS_WRITE, false, false, false, NULL);
		}
		return true;
	}
	/* a submodule: t is S/.git/modules/NAME (NAME may hold slashes), S an ancestor of root */
	const char *m = strstr(t, "/.git/modules/");
	if (!m)
		return false;
	char super[PATH_MAX];
	snprintf(super, sizeof(super), "%.*s", (int)(m - t), t);
	char sgit[PATH_MAX + 8];
	if (snprintf(sgit, sizeof(sgit), "%s/.git", super) >= (int)PATH_MAX)
		return false;
	if (!zsp_path_is_prefix(super, rc) || strcmp(super, rc) == 0 || !owned_dir(pl, sgit) ||
	    !looks_gitdir(pl, sgit) || !looks_gitdir(pl, t))
		return false;
	int dfd = open(t, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char *text = NULL, err[256];
	size_t len;
	bool ok = false;
	if (dfd >= 0 && zsp_gitcfg_read_file(dfd, "config", &text, &len, err, sizeof(err)) == ZSP_OK) {
		char wt[PATH_MAX] = "";
		if (zsp_gitcfg_parse(text, len, core_worktree, wt, err, sizeof(err)) == ZSP_OK && wt[0]) {
			char joined[2 * PATH_MAX + 2];
			snprintf(joined, sizeof(joined), "%s%s%s", wt[0] == '/' ? "" : t, wt[0] == '/' ? "" : "/", wt);
			char *c = canonical_trusted(pl, joined);
			ok = c && strcmp(c, rc) == 0;
		}
	}
	free(text);
	if (dfd >= 0)
		close(dfd);
	if (!ok)
		return false;
	add_canonical(pl, t, H_DIR, NULL, ZSP_ACCESS_WRITE, false, false, false, NULL);
	push_str(pl, &pl->roots, &pl->nroots, &pl->rootcap, t);
	return true;
}

/* `protect ".git/NAME"` under a writable root: NAME is protected in every git directory git
 * reaches from there, and so are the files that redirect git (a .git file, commondir,
 * config.worktree) and what the config names (core.hooksPath, include.path). Existing ones are
 * mounted read-only; missing ones are left to the check after the run (doc/host-later.md). */
static void protect_repo(plan *pl, const zsp_ir_fs_rule *r)
{
	if (!r->protect || !r->root || strncmp(r->protect, ".git", 4) != 0 ||
	    (r->protect[4] != 0 && r->protect[4] != '/'))
		return;
	if (protect_through_link(pl, r->root, r->protect, r))
		return;
	gitdirs gd = { .n = 0 };
	find_gitdirs(pl, r->root, &gd);
	char dotgit[PATH_MAX];
	snprintf(dotgit, sizeof(dotgit), "%s/.git", r->root);
	const probe *pr = probe_known(pl, dotgit);
	if (pr && !pr->err && S_ISREG(pr->mode)) {
		add_ent(pl, dotgit, ZSP_ACCESS_READ, true, false, r);
		if (gd.n && widen_linked(pl, r->root, gd.dir[0]))
			gd.via[0] = false;
	}
	const char *rest = r->protect[4] == '/' ? r->protect + 5 : NULL;
	static const char *const redirects[] = { "commondir", "config.worktree", "gitdir" };
	for (size_t i = 0; i < gd.n && !pl->failed; i++) {
		char path[PATH_MAX];
		if (rest && !protect_through_link(pl, gd.dir[i], rest, r) &&
		    snprintf(path, sizeof(path), "%s/%s", gd.dir[i], rest) < (int)sizeof(path)) {
			add_ent(pl, path, ZSP_ACCESS_READ, true, gd.via[i], r);
			if (strcmp(rest, "hooks") == 0)
				protect_hook_links(pl, path, gd.via[i], r);
		}
		for (size_t k = 0; k < 3; k++)
			if (snprintf(path, sizeof(path), "%s/%s", gd.dir[i], redirects[k]) < (int)sizeof(path))
				add_ent(pl, path, ZSP_ACCESS_READ, true, gd.via[i], r);
		protect_config_refs(pl, gd.dir[i], r->root, gd.via[i], r);
	}
}

/* --- git directories seen through a layer (doc/host-later.md "git's own writes") ---------- */

static ent *ent_at(plan *pl, const char *path)
{
	for (size_t i = 0; i < pl->n; i++)
		if (!pl->ents[i].dropped && strcmp(pl->ents[i].path, path) == 0)
			return &pl->ents[i];
	return NULL;
}

/* The layer of git directory gdir: its top-level files (copies, made by the runner) and mount
 * points for its directories, each bound from the host. git's writes to HEAD, index and config
 * (a lock file renamed over the old) then work, where a read-only mount of config made the
 * rename fail with EBUSY; the host's config is not writable at all, and the runner applies
 * back after the run only what cannot make git run a program. false when gdir cannot have one. */
static bool layer_one(plan *pl, const char *gdir, size_t cfg)
{
	const probe *pr = probe_known(pl, gdir);
	if (!pr || pr->err || !S_ISDIR(pr->mode) || pr->uid != geteuid() || access_at(pl, gdir) != ZSP_ACCESS_WRITE)
		return false;
	for (size_t i = 0; i < pl->nlayers; i++)
		if (strcmp(pl->layers[i].gitdir, gdir) == 0)
			return false;
	if (pl->nlayers >= ZSP_BWRAP_MAX_LAYERS)
		return false;
	int dfd = open(gdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!dir) {
		if (dfd >= 0)
			close(dfd);
		return false;
	}
	zsp_bwrap_layer *nl = zsp_arena_grow(pl->a, pl->layers, pl->nlayers, &pl->layercap, sizeof(*nl));
	char ldir[PATH_MAX];
	if (!nl || snprintf(ldir, sizeof(ldir), "%s/%zu", pl->o->layer_dir, pl->nlayers) >= (int)sizeof(ldir)) {
		closedir(dir);
		if (!nl)
			nomem(pl);
		return false;
	}
	pl->layers = nl;
	zsp_bwrap_layer *ly = &pl->layers[pl->nlayers];
	*ly = (zsp_bwrap_layer){ .gitdir = zsp_arena_strdup(pl->a, gdir), .dir = zsp_arena_strdup(pl->a, ldir) };
	size_t fcap = 0, mcap = 0;
	struct dirent *de;
	while ((de = readdir(dir)) && !pl->failed) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char child[PATH_MAX];
		struct stat st;
		if (snprintf(child, sizeof(child), "%s/%s", gdir, de->d_name) >= (int)sizeof(child) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			ent *e = ent_at(pl, child);
			if (e)
				e->pin = true;
			else
				add_canonical(pl, zsp_arena_strdup(pl->a, child), H_DIR, NULL, ZSP_ACCESS_WRITE, false,
					      true, false, NULL);
			push_str(pl, &ly->mounts, &ly->nmounts, &mcap, de->d_name);
		} else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) {
			push_str(pl, &ly->files, &ly->nfiles, &fcap, de->d_name);
		}
		/* sockets and FIFOs (git's fsmonitor daemon's): not seen in the sandbox */
	}
	closedir(dir);
	if (pl->failed)
		return false;
	ent *g = ent_at(pl, gdir);
	if (!g) {
		add_canonical(pl, zsp_arena_strdup(pl->a, gdir), H_DIR, NULL, ZSP_ACCESS_WRITE, false, true, false, NULL);
		g = ent_at(pl, gdir);
	}
	if (!g || !ly->gitdir || !ly->dir) {
		nomem(pl);
		return false;
	}
	g->source = ly->dir;
	g->pin = true;
	pl->ents[cfg].dropped = true;
	pl->nlayers++;
	return true;
}

/* Every git directory whose config is protected and that the sandbox may write gets a layer. */
static void layer_gitdirs(plan *pl)
{
	if (!pl->o->layer_dir)
		return;
	for (size_t i = 0; i < pl->n && !pl->failed; i++) {
		const ent *e = &pl->ents[i];
		size_t len = e->len;
		if (!e->protect || e->untrusted || e->dropped || e->kind != H_OTHER || !e->rule ||
		    !e->rule->protect || strcmp(e->rule->protect, ".git/config") != 0 || len < 8 ||
		    strcmp(e->path + len - 7, "/config") != 0)
			continue;
		const probe *pr = probe_known(pl, e->path);
		if (!pr || pr->err || !S_ISREG(pr->mode))
			continue;
		char gdir[PATH_MAX];
		snprintf(gdir, sizeof(gdir), "%.*s", (int)(len - 7), e->path);
		layer_one(pl, gdir, i);
	}
	size_t k = 0;
	for (size_t i = 0; i < pl->n; i++)
		if (!pl->ents[i].dropped)
			pl->ents[k++] = pl->ents[i];
	pl->n = k;
	ents_moved(pl);
}

/* ---- walking a tree: by descriptor, at any depth and any path length ----
 * Both walks of a launch (the glob rules' matches, the protected names below the writable
 * roots) go through tree_walk: each directory is opened with openat from its parent's
 * descriptor (so neither depth nor a path over PATH_MAX stops it), an entry's type comes from
 * getdents (a file is never stat'ed unless the file system does not say), and nothing is passed
 * over in silence: what cannot be walked is covered whole, or the launch is refused with the
 * reason (doc/linux.md "Globs"). */
struct tree_walk {
	plan *pl;
	char *buf;                  /* the path being visited, NUL-terminated (grows) */
	size_t cap;
	size_t seen, max;
	bool over;                  /* more than max entries */
	bool as_root;               /* walking as uid 0 (root_closed) */
	size_t mark;                /* the visitor's, for a subtree: restored after each descent */
	const zsp_ir_fs_rule *r;    /* the rule the walk is for, for its messages */
	/* an entry (path t->buf, len bytes; its directory's len is dirlen): true to go below it */
	bool (*visit)(struct tree_walk *t, size_t len, size_t dirlen, const char *name, unsigned char type);
	/* a directory that the sandbox could read but the walk cannot (len bytes of t->buf) */
	void (*cover)(struct tree_walk *t, size_t len);
	/* could the visitor do anything with an entry of this name (walk_keeps)? */
	bool (*candidate)(const struct tree_walk *t, const char *name, unsigned char type);
	void *ctx;
	const zsp_walk_index *ix;   /* the index between runs, and this walk's (NULL: none) */
	void *ixh;
	size_t rootlen;             /* t->buf's root: what the index's paths are relative to */
	int rootfd;                 /* that root, open (walk_known) */
};

static void walk_fd(struct tree_walk *t, int dfd, size_t len);

static void walk_refuse(struct tree_walk *t, size_t len, const char *why)
{
	t->buf[len] = 0;
	zsp_diag_error(t->pl->d, t->r->loc, "cannot walk `%s` for `%s`: %s, so its matches cannot all be "
		       "masked and the sandbox is not started", t->buf[0] ? t->buf : "/", t->r->path, why);
	t->pl->failed = true;
}

/* Room in t->buf for need bytes. */
static bool walk_room(struct tree_walk *t, size_t need)
{
	if (need <= t->cap)
		return true;
	size_t cap = t->cap ? t->cap : 256;
	while (cap < need)
		cap *= 2;
	char *nb = realloc(t->buf, cap);
	if (!nb) {
		nomem(t->pl);
		return false;
	}
	t->buf = nb;
	t->cap = cap;
	return true;
}

/* A directory the walk cannot open (errno err), named name in dfd, path len bytes of t->buf.
 * The sandbox runs as the same user without capabilities: if the user owns the directory, the
 * sandbox can chmod it and read it; if it may search it, it can open a name it guesses. Either
 * way what the walk did not see is covered by the directory whole. One the user neither owns nor
 * may search is as closed to the sandbox as to the walk (and stays so: only its owner or root
 * outside can change its mode). Gone since it was listed: nothing to cover. */
static void walk_unreadable(struct tree_walk *t, int dfd, const char *name, size_t len, int err)
{
	char why[128];
	if (err == ENOENT)
		return;
	if (err == EACCES) {
		struct stat st;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
			if (errno == ENOENT)
				return;
			err = errno;
		} else {
			if (st.st_uid != geteuid() && faccessat(dfd, name, X_OK, AT_EACCESS) != 0)
				return;
			t->cover(t, len);
			return;
		}
	}
	snprintf(why, sizeof(why), "%s", strerror(err));
	walk_refuse(t, len, why);
}

/* A walk as root reads every directory; the sandbox's root, without capabilities, enters only
 * what the mode lets it (the owner's bits if it owns the directory, else the group's or the
 * others'), and bwrap cannot reach a mount point below either. A directory it can neither enter
 * nor chmod (another user's) is as closed to it as an unreadable one to a walk without
 * privilege: not entered. */
static bool root_closed_st(const struct tree_walk *t, const struct stat *st)
{
	if (!t->as_root || st->st_uid == 0)
		return false;
	mode_t x = st->st_gid == getegid() ? S_IXGRP : S_IXOTH;
	return !(st->st_mode & x);
}

static bool root_closed(const struct tree_walk *t, int dfd, const char *name)
{
	struct stat st;
	return t->as_root && fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && root_closed_st(t, &st);
}

static bool walk_known(struct tree_walk *t, size_t len);

/* The directory at path (relative, several components) below dfd, through no symbolic link. */
static int open_beneath(int dfd, const char *path)
{
#ifdef SYS_openat2
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	return (int)syscall(SYS_openat2, dfd, path, &how, sizeof(how));
#else
	(void)dfd;
	(void)path;
	errno = ENOSYS;   /* walk_known() looks at nothing then: t->rootfd stays -1 */
	return -1;
#endif
}

/* One entry of the directory dfd (path len bytes of t->buf): visited, and walked below when it is
 * a directory the visitor wants. dfd -1: a directory walk_known() did not open, and the entry is
 * reached from the root by its path. False: stop reading this directory. */
static bool walk_entry(struct tree_walk *t, int dfd, size_t len, const char *name, unsigned char type)
{
	if (++t->seen > t->max) {
		t->over = true;
		return false;
	}
	size_t nl = strlen(name), end = len + 1 + nl;
	if (!walk_room(t, end + 1))
		return false;
	t->buf[len] = '/';
	memcpy(t->buf + len + 1, name, nl + 1);
	size_t mark = t->mark;
	bool down = t->visit(t, end, len, name, type);
	if (t->pl->failed)
		return false;
	if (down && type == DT_DIR && dfd < 0) {
		/* from the root, beneath it and through no symbolic link */
		dfd = t->rootfd;
		name = t->buf + t->rootlen + 1;
	}
	if (down && type == DT_DIR && walk_known(t, end)) {
		if (t->pl->failed || t->over)
			return false;
	} else if (down && type == DT_DIR && !root_closed(t, dfd, name)) {
		int cfd = dfd == t->rootfd ? open_beneath(dfd, name)
					   : openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd >= 0)
			walk_fd(t, cfd, end);
		else if (errno == EMFILE || errno == ENFILE)
			walk_refuse(t, end, "more directories deep than descriptors can be open (ulimit -n)");
		else if (errno != ELOOP && errno != ENOTDIR)   /* no longer a directory: seen as it was */
			walk_unreadable(t, dfd, name, end, errno);
		if (t->pl->failed || t->over)
			return false;
	}
	t->mark = mark;
	return true;
}

/* The entries the index keeps of a directory: those a walk could do something with (every
 * directory, and the names the visitor looks for). */
static bool walk_keeps(const struct tree_walk *t, const char *name, unsigned char type)
{
	return type == DT_DIR || t->candidate(t, name, type);
}

/* A directory the index knows unchanged: its kept entries visited as if listed. */
static bool walk_indexed(struct tree_walk *t, int dfd, size_t len, bool *any)
{
	struct stat st;
	const zsp_walk_entry *es;
	size_t n;
	if (!t->ixh || fstat(dfd, &st) != 0 ||
	    !t->ix->lookup(t->ixh, t->buf + t->rootlen, &st, &es, &n, any))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!walk_entry(t, dfd, len, es[i].name, es[i].type))
			break;
	return true;
}

/* A protected directory read whole (here, or known unchanged) need not be read again to see
 * whether it is empty (looked up now: the probes may have moved while the entries were
 * visited). */
static void walk_listed(struct tree_walk *t, size_t len, bool any)
{
	probe *pr = len < PATH_MAX ? probe_known(t->pl, len ? t->buf : "/") : NULL;
	if (pr && !pr->err && S_ISDIR(pr->mode))
		pr->listed = any ? LISTED_FULL : LISTED_EMPTY;
}

/* A directory below the root (len bytes of t->buf) that the index knows unchanged, looked at by
 * its path from the root (one fstatat, where opening it would take three calls): its kept
 * entries visited as if listed, and it is not opened. A path looked at by name may pass through
 * a symbolic link made since: the index matches only if it leads to the very directory recorded
 * (device, inode and ctime), whose kept entries are the same; a mask made there is then refused
 * by zsp-run, which opens every mask's path through no symbolic link (doc/linux.md "Masks").
 * False: the directory is to be opened and walked (walk_fd). */
static bool walk_known(struct tree_walk *t, size_t len)
{
	struct stat st;
	const zsp_walk_entry *es;
	size_t n;
	bool any = false;
	if (!t->ixh || len <= t->rootlen || t->rootfd < 0 ||
	    t->ix->stat(t->ixh, t->rootfd, t->buf + t->rootlen, &st) != 0 || !S_ISDIR(st.st_mode) ||
	    root_closed_st(t, &st) || !t->ix->lookup(t->ixh, t->buf + t->rootlen, &st, &es, &n, &any))
		return false;
	probe_seed(t->pl, t->buf, &st);
	for (size_t i = 0; i < n; i++)
		if (!walk_entry(t, -1, len, es[i].name, es[i].type))
			break;
	t->buf[len] = 0;
	if (!t->pl->failed && !t->over)
		walk_listed(t, len, any);
	return true;
}

static void walk_fd(struct tree_walk *t, int dfd, size_t len)
{
	bool any = false, whole = false;
	t->buf[len] = 0;
	if (walk_indexed(t, dfd, len, &any)) {
		t->buf[len] = 0;
		close(dfd);
		whole = !t->pl->failed && !t->over;
		goto listed;
	}
	struct stat st;
	bool keep = t->ixh && fstat(dfd, &st) == 0;
	zsp_walk_entry *kept = NULL;
	size_t nkept = 0, keptcap = 0;
	DIR *dir = fdopendir(dfd);
	if (!dir) {
		walk_refuse(t, len, strerror(errno));
		close(dfd);
		return;
	}
	for (;;) {
		errno = 0;
		struct dirent *de = readdir(dir);
		if (!de) {
			if (errno)
				walk_refuse(t, len, strerror(errno));
			whole = !errno;
			break;
		}
		const char *name = de->d_name;
		if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0)))
			continue;
		any = true;
		unsigned char type = de->d_type;
		if (type == DT_UNKNOWN) {
			struct stat est;
			if (fstatat(dirfd(dir), name, &est, AT_SYMLINK_NOFOLLOW) != 0) {
				if (errno == ENOENT)
					continue;
				int err = errno;
				size_t end = len + 1 + strlen(name);
				if (walk_room(t, end + 1)) {
					t->buf[len] = '/';
					memcpy(t->buf + len + 1, name, end - len);
					walk_refuse(t, end, strerror(err));
				}
				break;
			}
			type = S_ISDIR(est.st_mode) ? DT_DIR : S_ISLNK(est.st_mode) ? DT_LNK : DT_REG;
		}
		if (keep && walk_keeps(t, name, type)) {
			zsp_walk_entry *nk = keptcap > nkept ? kept
					   : zsp_arena_grow(t->pl->a, kept, nkept, &keptcap, sizeof(*kept));
			char *nm = nk ? zsp_arena_strdup(t->pl->a, name) : NULL;
			if (!nm) {
				nomem(t->pl);
				break;
			}
			kept = nk;
			kept[nkept++] = (zsp_walk_entry){ nm, type };
		}
		if (!walk_entry(t, dirfd(dir), len, name, type))
			break;
	}
	t->buf[len] = 0;
	closedir(dir);
	if (keep && whole && !t->over && !t->pl->failed)
		t->ix->record(t->ixh, t->buf + t->rootlen, &st, kept, nkept, any);
listed:
	if (whole)
		walk_listed(t, len, any);
}

/* Walks the tree at root ("/" or a path); false when the walk failed (reported). */
static bool walk_tree(struct tree_walk *t, const char *root)
{
	bool top = strcmp(root, "/") == 0;
	size_t len = top ? 0 : strlen(root);
	t->rootlen = len;
	if (!walk_room(t, len + 1))
		return false;
	memcpy(t->buf, root, len);
	t->buf[len] = 0;
	t->as_root = geteuid() == 0;
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
#ifdef SYS_openat2
	t->rootfd = fd >= 0 ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;   /* walk_fd closes fd */
#else
	t->rootfd = -1;
#endif
	if (fd >= 0) {
		walk_fd(t, fd, len);
	} else if (errno != ENOENT && errno != ENOTDIR) {
		int err = errno;
		char parent[PATH_MAX];
		snprintf(parent, sizeof(parent), "%s", root);
		char *slash = strrchr(parent, '/');
		if (slash && slash != parent)
			*slash = 0;
		else if (slash)
			slash[1] = 0;
		int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_PATH | O_CLOEXEC);
		if (pfd >= 0) {
			walk_unreadable(t, pfd, strrchr(root, '/') ? strrchr(root, '/') + 1 : root, len, err);
			close(pfd);
		} else {
			walk_refuse(t, len, strerror(err));
		}
	}
	if (t->rootfd >= 0)
		close(t->rootfd);
	t->rootfd = -1;
	free(t->buf);
	t->buf = NULL;
	t->cap = 0;
	return !t->pl->failed;
}

/* A match a mount must hold: bwrap names mount points by path, and one of PATH_MAX bytes or more
 * cannot be named. Such a match is refused, not skipped. */
static bool walk_mountable(struct tree_walk *t, size_t len)
{
	if (len < PATH_MAX)
		return true;
	char why[160];
	snprintf(why, sizeof(why), "a match %zu bytes long lies there, and a mount point must be under "
		 "%d bytes (PATH_MAX)", len, PATH_MAX);
	walk_refuse(t, len, why);
	zsp_diag_hint(t->pl->d, "move it higher up the tree, or remove it");
	return false;
}

/* Protected names below the top of a writable root (sub/.claude/settings.json, a nested
 * repository's .git/config): read-only where they exist at launch, found by one walk of the root.
 * What the command creates there is the check after the run's (doc/host-later.md). */
struct pwalk {
	size_t rootlen;
	const zsp_ir_fs_rule **rules;  /* the protect rules of this root, by the name an entry must
					* have for each (pwalk_key) */
	size_t nrules;
	const zsp_ir_fs_rule *const *globs; /* the glob rules looked for under every writable root */
	const char *const *lasts;      /* ... each one's last component when it is literal, or NULL */
	size_t nglobs;
};

/* The name an entry must have for r to match it: ".git" for a repository's names (a nested
 * repository), else the last component of the protected name. */
static const char *pwalk_key(const zsp_ir_fs_rule *r)
{
	const char *n = r->protect;
	if (strncmp(n, ".git", 4) == 0 && (n[4] == 0 || n[4] == '/'))
		return ".git";
	const char *last = strrchr(n, '/');
	return last ? last + 1 : n;
}

static int pwalk_rule_cmp(const void *x, const void *y)
{
	return strcmp(pwalk_key(*(const zsp_ir_fs_rule *const *)x), pwalk_key(*(const zsp_ir_fs_rule *const *)y));
}

static int pwalk_name_cmp(const void *key, const void *elt)
{
	return strcmp(key, pwalk_key(*(const zsp_ir_fs_rule *const *)elt));
}

static void pwalk_match(struct tree_walk *t, size_t len, size_t dirlen, const char *name, unsigned char type)
{
	struct pwalk *w = t->ctx;
	plan *pl = t->pl;
	const char *buf = t->buf;
	/* the rules whose key is name: a binary search rejects nearly every entry */
	const zsp_ir_fs_rule **hit = bsearch(name, w->rules, w->nrules, sizeof(*w->rules), pwalk_name_cmp);
	if (!hit)
		return;
	size_t from = (size_t)(hit - w->rules), to = from + 1;
	while (from > 0 && strcmp(pwalk_key(w->rules[from - 1]), name) == 0)
		from--;
	while (to < w->nrules && strcmp(pwalk_key(w->rules[to]), name) == 0)
		to++;
	for (size_t i = from; i < to && !pl->failed; i++) {
		const zsp_ir_fs_rule *r = w->rules[i];
		const char *n = r->protect;
		size_t nl = strlen(n);
		if (strncmp(n, ".git", 4) == 0 && (n[4] == 0 || n[4] == '/')) {
			/* a nested repository: what the top's gets */
			if (strcmp(name, ".git") != 0 || (type != DT_DIR && type != DT_REG && type != DT_UNKNOWN))
				continue;
			if (!walk_mountable(t, len))
				return;
			zsp_ir_fs_rule *nr = zsp_arena_alloc(pl->a, sizeof(*nr));
			char *root = nr ? zsp_arena_strndup(pl->a, buf, dirlen) : NULL;
			if (!root) {
				nomem(pl);
				return;
			}
			*nr = *r;
			nr->root = root;
			protect_repo(pl, nr);
			continue;
		}
		/* buf ends in "/NAME", and NAME starts below the root's top; the last component first,
		 * which rejects nearly every entry */
		const char *last = strrchr(n, '/');
		if (strcmp(last ? last + 1 : n, name) != 0)
			continue;
		if (nl + 1 > len || len - nl - 1 <= w->rootlen || buf[len - nl - 1] != '/' ||
		    memcmp(buf + len - nl, n, nl) != 0)
			continue;
		if (!walk_mountable(t, len))
			return;
		char *start = zsp_arena_strndup(pl->a, buf, len - nl - 1);
		if (!start) {
			nomem(pl);
			return;
		}
		if (!protect_through_link(pl, start, n, r))
			add_ent(pl, buf, ZSP_ACCESS_READ, true, false, r);
	}
}

static void glob_visit(struct tree_walk *t, const zsp_ir_fs_rule *r, const char *last, size_t len,
		       const char *name)
{
	/* a literal last component must equal the name: most entries stop here */
	if ((!last || strcmp(last, name) == 0) && zsp_glob_match(r->path, t->buf) && walk_mountable(t, len))
		add_ent(t->pl, t->buf, r->access, false, false, r);
}

/* One walk of a writable root serves its protected names and the globs looked for under the
 * writable roots. t->mark: inside a .git, where protected names are protect_repo's business. */
static bool pwalk_visit(struct tree_walk *t, size_t len, size_t dirlen, const char *name, unsigned char type)
{
	struct pwalk *w = t->ctx;
	bool dotgit = strcmp(name, ".git") == 0;
	if (w->nrules && !t->mark && (dirlen > w->rootlen || !dotgit))
		pwalk_match(t, len, dirlen, name, type);
	for (size_t i = 0; i < w->nglobs && !t->pl->failed; i++)
		glob_visit(t, w->globs[i], w->lasts[i], len, name);
	if (dotgit)
		t->mark = 1;
	return w->nglobs || !dotgit;
}

/* The entries pwalk_visit can do something with: a .git, a protected name's key, a glob's
 * literal last component (a glob without one makes every entry a candidate). */
static bool pwalk_candidate(const struct tree_walk *t, const char *name, unsigned char type)
{
	(void)type;
	const struct pwalk *w = t->ctx;
	if (strcmp(name, ".git") == 0 ||
	    bsearch(name, w->rules, w->nrules, sizeof(*w->rules), pwalk_name_cmp))
		return true;
	for (size_t i = 0; i < w->nglobs; i++)
		if (!w->lasts[i] || strcmp(w->lasts[i], name) == 0)
			return true;
	return false;
}

/* The index of this root's walk, when the runner keeps one and it can serve: every name and
 * pattern the walk looks for is in its scope, so an index made for another policy is another's. */
static void pwalk_index(plan *pl, struct tree_walk *t, const char *root)
{
	const struct pwalk *w = t->ctx;
	const zsp_walk_index *ix = pl->o->walk_index;
	if (!ix || t->max != SIZE_MAX)
		return;
	for (size_t i = 0; i < w->nglobs; i++)
		if (!w->lasts[i])
			return;   /* every entry matters: an index would keep whole listings */
	zsp_buf b = { 0 };
	zsp_buf_printf(&b, "zsp walk 1\nroot %s\nuid %ld\n", root, (long)geteuid());
	for (size_t i = 0; i < w->nrules; i++)
		zsp_buf_printf(&b, "protect %s\n", w->rules[i]->protect);
	for (size_t i = 0; i < w->nglobs; i++)
		zsp_buf_printf(&b, "glob %d %s\n", (int)w->globs[i]->access, w->globs[i]->path);
	if (b.oom) {
		zsp_buf_free(&b);
		nomem(pl);
		return;
	}
	t->ix = ix;
	t->ixh = ix->open(ix->ctx, b.data, b.len);
	zsp_buf_free(&b);
}

/* A directory below a writable root the walk cannot read, which the sandbox could: each glob
 * that denies or makes read-only holds for it whole, and with protected names it is read-only
 * whole, so no protected name can be made or changed in it. */
static void pwalk_cover(struct tree_walk *t, size_t len)
{
	struct pwalk *w = t->ctx;
	if (!walk_mountable(t, len))
		return;
	for (size_t i = 0; i < w->nglobs && !t->pl->failed; i++)
		if (w->globs[i]->access != ZSP_ACCESS_WRITE)
			add_ent(t->pl, t->buf, w->globs[i]->access, false, false, w->globs[i]);
	if (w->nrules && !t->mark && !t->pl->failed)
		add_ent(t->pl, t->buf, ZSP_ACCESS_READ, false, false, NULL);
}

static void walk_root(plan *pl, const zsp_ir_fs_rule *root)
{
	const zsp_ir_fs_rule **rules = zsp_arena_calloc(pl->a, pl->p->nfs + 1, sizeof(*rules));
	if (!rules) {
		nomem(pl);
		return;
	}
	struct pwalk w = { strlen(root->path), rules, 0, pl->root_globs, pl->root_lasts, pl->nroot_globs };
	const probe *pr = probe_path(pl, root->path);
	if (pr && !pr->err && S_ISDIR(pr->mode) && !shared_dir(pl, root->path))
		for (size_t i = 0; i < pl->p->nfs; i++)
			if (pl->p->fs[i].protect && pl->p->fs[i].root && strcmp(pl->p->fs[i].root, root->path) == 0)
				rules[w.nrules++] = &pl->p->fs[i];
	if (!w.nrules && !w.nglobs)
		return;
	qsort(rules, w.nrules, sizeof(*rules), pwalk_rule_cmp);
	struct tree_walk t = { .pl = pl, .max = pl->o->walk_max ? pl->o->walk_max : SIZE_MAX,
			       .r = w.nglobs ? w.globs[0] : root, .visit = pwalk_visit, .cover = pwalk_cover,
			       .candidate = pwalk_candidate, .ctx = &w };
	pwalk_index(pl, &t, root->path);
	walk_tree(&t, root->path);
	if (t.ixh)
		t.ix->close(t.ixh, !pl->failed && !t.over);
	if (t.over && w.nglobs) {
		zsp_diag_error(pl->d, w.globs[0]->loc, "`%s` would need more than %zu entries of `%s` to be "
			       "walked to find its matches", w.globs[0]->path, t.max, root->path);
		zsp_diag_hint(pl->d, "narrow the glob to a directory (e.g. \"${WORKSPACE}/config/**/.env\")");
		pl->failed = true;
	} else if (t.over) {
		zsp_diag_warning(pl->d, ZSP_W_UNENFORCED, root->loc,
				 "`%s` has more than %zu entries: protected names below its top are not made "
				 "read-only, only checked after the run (doc/host-later.md)", root->path, t.max);
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

/* The literal directories before a glob's first component with a metacharacter, unescaped. */
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
		bool meta = zsp_glob_has_meta(c);
		c[len] = save;
		if (meta)
			break;
		end = c + len;
		c += len;
	}
	*end = 0;
	return s[0] ? zsp_path_unescape(pl->a, s) : zsp_arena_strdup(pl->a, "/");
}

struct gwalk {
	const char *last;           /* the pattern's last component when it is literal, else NULL */
};

static bool gwalk_visit(struct tree_walk *t, size_t len, size_t dirlen, const char *name, unsigned char type)
{
	(void)dirlen;
	const struct gwalk *g = t->ctx;
	plan *pl = t->pl;
	/* a literal last component must equal the name: most entries stop here */
	if ((!g->last || strcmp(g->last, name) == 0) && zsp_glob_match(t->r->path, t->buf) &&
	    walk_mountable(t, len))
		add_ent(pl, t->buf, t->r->access, false, false, t->r);
	return true;
}

/* A directory the walk cannot read: a deny or read-only glob holds for it whole (a writable
 * glob's matches in it stay as they are, which narrows access, never widens it). */
static void gwalk_cover(struct tree_walk *t, size_t len)
{
	if (t->r->access != ZSP_ACCESS_WRITE && walk_mountable(t, len))
		add_ent(t->pl, t->buf, t->r->access, false, false, t->r);
}

/* A glob rule applies to what exists when the sandbox starts. Its literal prefix is walked whole
 * (every match, inside the writable roots or not) unless that prefix is `/`: then the writable
 * roots are, and matches elsewhere are not masked (-Wunenforced says so). */
static void expand_glob(plan *pl, const zsp_ir_fs_rule *r, bool *over_writable)
{
	const char *lit = glob_literal_prefix(pl, r->path);
	if (!lit) {
		nomem(pl);
		return;
	}
	const char *last = strrchr(r->path, '/');
	last = last ? last + 1 : r->path;
	struct gwalk g = { zsp_glob_has_meta(last) ? NULL : zsp_path_unescape(pl->a, last) };
	struct tree_walk t = { .pl = pl, .max = pl->o->walk_max ? pl->o->walk_max : SIZE_MAX, .r = r,
			       .visit = gwalk_visit, .cover = gwalk_cover, .ctx = &g };
	bool whole = strcmp(lit, "/") != 0 && !in_private_tmp(pl, lit);
	for (size_t i = 0; i < pl->p->nfs && !pl->failed; i++) {
		const zsp_ir_fs_rule *w = &pl->p->fs[i];
		if (w->access != ZSP_ACCESS_WRITE || w->glob || w->cache || is_private_tmp(pl, w->path))
			continue;
		if (r->access == ZSP_ACCESS_DENY &&
		    (zsp_path_is_prefix(w->path, lit) || zsp_path_is_prefix(lit, w->path)))
			*over_writable = true;
	}
	if (!whole) {
		/* looked for by the one walk of each writable root (walk_root) */
		size_t cap = pl->rootglobcap;
		const zsp_ir_fs_rule **rs = zsp_arena_grow(pl->a, pl->root_globs, pl->nroot_globs, &pl->rootglobcap,
							   sizeof(*rs));
		const char **ls = rs ? zsp_arena_grow(pl->a, pl->root_lasts, pl->nroot_globs, &cap, sizeof(*ls)) : NULL;
		if (!ls) {
			nomem(pl);
			return;
		}
		pl->root_globs = rs;
		pl->root_lasts = ls;
		rs[pl->nroot_globs] = r;
		ls[pl->nroot_globs++] = g.last;
	} else if (!pl->failed) {
		walk_tree(&t, lit);
	}
	if (t.over) {
		zsp_diag_error(pl->d, r->loc, "`%s` would need more than %zu entries to be walked to find its matches",
			       r->path, t.max);
		zsp_diag_hint(pl->d, "narrow the glob to a directory (e.g. \"${WORKSPACE}/config/**/.env\")");
		pl->failed = true;
		return;
	}
	if (!whole && !pl->o->opens_decided)
		zsp_diag_warning(pl->d, ZSP_W_UNENFORCED, r->loc,
				 "on Linux, `%s` is enforced under the writable roots only: its matches elsewhere "
				 "are not masked (begin it with a directory, e.g. \"~/**/.env\", to have that walked)",
				 r->path);
}

/* ---- the sandbox's own state: caches and the private /tmp (doc/linux.md "Caches") ---- */

static void placeholder(plan *pl, const ent *e);
static bool env_listed(const zsp_ir_env *list, size_t n, const char *name);
static bool in_private_tmp(const plan *pl, const char *path);

/* The index of sandbox_dir/rel in the plan's state list, added when new (-1: out of memory). */
static long state_need(plan *pl, const char *rel, bool file)
{
	for (size_t i = 0; i < pl->nstate; i++)
		if (strcmp(pl->state[i].rel, rel) == 0)
			return (long)i;
	zsp_bwrap_state *ns = zsp_arena_grow(pl->a, pl->state, pl->nstate, &pl->statecap, sizeof(*ns));
	const char *dup = ns ? zsp_arena_strdup(pl->a, rel) : NULL;
	if (!dup) {
		nomem(pl);
		return -1;
	}
	pl->state = ns;
	pl->state[pl->nstate] = (zsp_bwrap_state){ dup, file, -1 };
	return (long)pl->nstate++;
}

static const char *state_path(plan *pl, const char *rel)
{
	const char *p = zsp_arena_printf(pl->a, "%s/%s", pl->o->sandbox_dir, rel);
	if (!p)
		nomem(pl);
	return p;
}

/* opt sandbox_dir/rel dest: the runner gives bwrap that source as a descriptor it opened. */
static void state_bind(plan *pl, const char *opt, const char *rel, const char *dest)
{
	long k = state_need(pl, rel, false);
	const char *src = state_path(pl, rel);
	if (k < 0 || !src)
		return;
	args(pl, opt, src, dest);
	pl->state[k].argi = (long)pl->argc - 2;
}

/* The value variable name has in the sandbox's environment (env set, else what passes the env
 * rules), or NULL. */
static const char *sandbox_env(plan *pl, const char *name)
{
	const zsp_ir_policy *p = pl->p;
	for (size_t i = p->nenv_set; i-- > 0;)
		if (strcmp(p->env_set[i].name, name) == 0)
			return p->env_set[i].value;
	size_t n = strlen(name);
	for (char *const *e = pl->o->environ; e && *e; e++) {
		if (strncmp(*e, name, n) != 0 || (*e)[n] != '=')
			continue;
		bool pass = p->env_clear ? zsp_env_keeps(p->env_keep, p->nenv_keep, name)
					 : !env_listed(p->env_unset, p->nenv_unset, name);
		return pass ? *e + n + 1 : NULL;
	}
	return NULL;
}

/* A part of a cache mounted where the tool looks: its place from the rule, or where the
 * sandbox's environment moves it (CARGO_HOME). */
static void add_cache_ent(plan *pl, const zsp_ir_fs_rule *r)
{
	const zsp_ir_cache_part *part = r->part;
	const char *where = r->path;
	const char *base = part->base_env ? sandbox_env(pl, part->base_env) : NULL;
	char moved[PATH_MAX];
	if (base && base[0] == '/') {
		char joined[PATH_MAX];
		snprintf(joined, sizeof(joined), "%s/%s", base, part->base_sub);
		if (zsp_path_lexical(joined, moved, sizeof(moved)) && strcmp(moved, r->path) != 0) {
			where = moved;
			/* once per cache: its parts move together */
			if (pl->moved_said != r->cache)
				zsp_diag_warning(pl->d, ZSP_W_UNENFORCED, r->loc,
						 "`cache %s`: the sandbox's %s is %s, so the cache is mounted there "
						 "(%s, ...); the oracle answers for its usual place (%s)", r->cache,
						 part->base_env, base, moved, r->path);
			pl->moved_said = r->cache;
		}
	}
	enum host_kind kind;
	const char *missing_from;
	bool untrusted = false;
	char *c = canonicalize(pl, where, &kind, &missing_from, &untrusted);
	if (!c) {
		zsp_diag_error(pl->d, r->loc, "`cache %s`: %s cannot be resolved: too many symbolic links or too long",
			       r->cache, where);
		pl->failed = true;
		return;
	}
	if (untrusted) {
		/* its mount point would be made through a link the sandbox or another user planted */
		zsp_diag_error(pl->d, r->loc, "`cache %s`: %s is reached through a symbolic link in a directory "
			       "that the sandbox or another user can write (it resolves to %s): the sandbox is "
			       "not started", r->cache, where, c);
		zsp_diag_hint(pl->d, "replace the link by the directory it points to");
		pl->failed = true;
		return;
	}
	if (kind == H_IMPOSSIBLE || kind == H_OTHER) {
		zsp_diag_warning(pl->d, ZSP_W_UNENFORCED, r->loc, "`cache %s`: %s is not a directory: the tool "
				 "has no cache of its own in this run", r->cache, c);
		return;
	}
	if (kind == H_MISSING && in_private_tmp(pl, c)) {
		/* in the private /tmp: its mount point is made there (tmp_mount_point) */
	} else if (kind == H_MISSING) {
		/* the runner makes the mount point (and removes it after the run), but only in the
		 * tool's own directory: without ~/.cargo the tool is not set up here, and the home gets
		 * nothing of ours */
		if (strcmp(missing_from, c) != 0)
			return;
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", missing_from);
		char *slash = strrchr(dir, '/');
		if (slash)
			*(slash == dir ? slash + 1 : slash) = 0;
		if (access(dir, W_OK) != 0) {
			zsp_diag_warning(pl->d, ZSP_W_UNENFORCED, r->loc, "`cache %s`: %s does not exist and "
					 "cannot be made (%s is not writable): the tool has no cache of its own in "
					 "this run", r->cache, c, dir);
			return;
		}
	}
	ent *e = add_canonical(pl, c, kind, missing_from, ZSP_ACCESS_WRITE, false, false, false, r);
	if (e)
		e->state = zsp_arena_printf(pl->a, "cache/%s", part->id);
	if (e && !e->state)
		nomem(pl);
}

/* A part of a cache the tool finds through its own variable: bound on itself, under zsp's
 * hidden state directory, which the variable names. */
static void add_cache_env_ents(plan *pl)
{
	for (size_t i = 0; i < pl->p->ncaches && !pl->failed; i++)
		for (size_t k = 0; k < pl->p->caches[i].nparts; k++) {
			const zsp_ir_cache_part *part = &pl->p->caches[i].parts[k];
			if (!part->env)
				continue;
			const char *rel = zsp_arena_printf(pl->a, "cache/%s", part->id);
			const char *path = rel ? state_path(pl, rel) : NULL;
			char *c = path ? zsp_arena_strdup(pl->a, path) : NULL;
			ent *e = c ? add_canonical(pl, c, H_DIR, NULL, ZSP_ACCESS_WRITE, false, false, false, NULL) : NULL;
			if (!e) {
				nomem(pl);
				return;
			}
			e->state = rel;
		}
}

/* Does the policy need the state (a cache, or a private /tmp)? Then it must have one: true
 * after reporting that it has not. */
static bool state_missing(plan *pl)
{
	if (pl->o->sandbox_dir || (!pl->p->ncaches && !pl->tmp))
		return false;
	zsp_diag_error(pl->d, pl->p->ncaches ? pl->p->caches[0].loc : pl->p->tmp_loc,
		       "the policy's caches and private /tmp are kept in zsp's state directory, and none was given");
	pl->failed = true;
	return true;
}

/* A place the policy names without a rule of its own (the home, the workspace, where the command
 * starts) that lies in the private /tmp: the host's, bound there, read-only at most (what the
 * host's /tmp holds is not the sandbox's to write unless a rule names it). */
static void keep_host_place(plan *pl, const char *path)
{
	enum host_kind kind;
	const char *missing_from;
	bool untrusted = false;
	char *c = path && path[0] == '/' ? canonicalize(pl, path, &kind, &missing_from, &untrusted) : NULL;
	if (!c || kind != H_DIR || untrusted || !zsp_path_is_prefix(pl->tmp, c) || strcmp(pl->tmp, c) == 0)
		return;
	/* a rule of its own below /tmp (the workspace's write) decides it as it says */
	const zsp_ir_fs_rule *r = rule_for(pl->p, path);
	if (r && (r->access == ZSP_ACCESS_READ || r->access == ZSP_ACCESS_WRITE) &&
	    !(zsp_path_is_prefix("/tmp", r->path) && strcmp(r->path, "/tmp") != 0))
		add_canonical(pl, c, kind, NULL, ZSP_ACCESS_READ, false, false, false, NULL);
}

/* `tmp private` (the default): where the policy lets the sandbox write /tmp, its /tmp is its own
 * directory, not the host's, which every user and service of the machine shares (and which the
 * check after the run cannot walk). What the policy names below /tmp (a workspace there, a
 * rule's path) stays the host's, bound at its place; so do the home, the workspace and where
 * the command starts, read-only unless a rule of their own says otherwise. Where the policy
 * only lets it read /tmp, /tmp is the host's, read-only, as before. */
static void private_tmp(plan *pl)
{
	const zsp_ir_policy *p = pl->p;
	if (!p->tmp_private)
		return;
	enum host_kind kind;
	const char *missing_from;
	bool untrusted = false;
	char *t = canonicalize(pl, "/tmp", &kind, &missing_from, &untrusted);
	if (!t || kind != H_DIR || strcmp(t, "/") == 0 ||
	    (rule_access(p, "/tmp") != ZSP_ACCESS_WRITE && rule_access(p, t) != ZSP_ACCESS_WRITE))
		return;
	ent *e = add_canonical(pl, t, H_DIR, NULL, ZSP_ACCESS_WRITE, false, false, false, NULL);
	if (!e)
		return;
	e->tmp = true;
	pl->tmp = t;
	for (size_t i = 0; i < p->nparams; i++)
		if (strcmp(p->params[i].name, "HOME") == 0 || strcmp(p->params[i].name, "WORKSPACE") == 0)
			keep_host_place(pl, p->params[i].value);
	keep_host_place(pl, pl->o->chdir);
}

bool zsp_linux_needs_state(const zsp_ir_policy *p)
{
	return p->ncaches || (p->tmp_private && rule_access(p, "/tmp") == ZSP_ACCESS_WRITE);
}

/* Is path (a rule's) the private /tmp itself? Then the host's /tmp is not what the sandbox
 * writes, and no walk of it means anything. */
static bool is_private_tmp(plan *pl, const char *path)
{
	if (!pl->tmp)
		return false;
	if (strcmp(path, pl->tmp) == 0 || strcmp(path, "/tmp") == 0)
		return true;
	char real[PATH_MAX];
	return realpath(path, real) && strcmp(real, pl->tmp) == 0;
}

/* Nearest earlier entry that is an ancestor of entry i (entries are sorted), or -1. */
static long ancestor_of(const plan *pl, size_t i)
{
	for (size_t j = i; j-- > 0;)
		if (ent_covers(&pl->ents[j], pl->ents[i].path, pl->ents[i].len))
			return (long)j;
	return -1;
}

/* Entry i lies in the private /tmp: its mount point is made in the sandbox's own directory, by
 * the runner, and each directory on the way there is mounted on itself (from a descriptor), so
 * that no sandbox can swap it for a link before the next run mounts through it. */
static void tmp_mount_point(plan *pl, size_t i, bool file)
{
	const ent *e = &pl->ents[i];
	size_t tl = strlen(pl->tmp);
	char rel[PATH_MAX];
	for (size_t k = tl + 1; k <= e->len; k++) {
		if (k != e->len && e->path[k] != '/')
			continue;
		snprintf(rel, sizeof(rel), "tmp%.*s", (int)(k - tl), e->path + tl);
		if (k == e->len) {
			state_need(pl, rel, file);
			break;
		}
		long idx = state_need(pl, rel, false);
		if (idx >= 0 && pl->state[idx].argi < 0) {
			char *dest = zsp_arena_strndup(pl->a, e->path, k);
			if (!dest) {
				nomem(pl);
				return;
			}
			state_bind(pl, "--bind", rel, dest);
		}
	}
}

/* Entry i in the private /tmp: the host's object is bound at its place, or skipped when the
 * private /tmp has no such thing to hide (a deny, a protected name under /tmp itself). true
 * when it was handled here. */
static bool emit_in_tmp(plan *pl, size_t i)
{
	ent *e = &pl->ents[i];
	long j = ancestor_of(pl, i);
	const ent *a = j >= 0 ? &pl->ents[j] : NULL;
	e->in_tmp = a && (a->tmp || (a->in_tmp && a->skipped));
	if (!e->in_tmp)
		return false;
	if (e->kind == H_IMPOSSIBLE || (!e->state && (e->kind == H_MISSING || e->access == ZSP_ACCESS_DENY ||
	    (e->protect && pl->ents[j].tmp)))) {
		e->skipped = true;
		return true;
	}
	tmp_mount_point(pl, i, !e->state && e->kind == H_OTHER);
	if (e->state) {
		state_bind(pl, "--bind", e->state, e->path);
	} else if (e->access == ZSP_ACCESS_WRITE) {
		if (e->rule)
			push_str(pl, &pl->roots, &pl->nroots, &pl->rootcap, e->path);
		args(pl, "--bind", e->path, e->path);
	} else {
		args(pl, "--ro-bind", e->path, e->path);
	}
	return true;
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

/* ---- literal denies that hold for files made later (doc/linux.md "Denies") ----
 * A deny of a name that does not exist at launch, in a directory the sandbox may only read,
 * mounts nothing: the sandbox cannot create it, but the host can (`gh auth login` writing
 * ~/.config/gh/hosts.yml during the run), and the sandbox would read it. Such a directory in
 * the home, or elsewhere owned by the user (not root: root owns the system's directories, whose
 * new entries come from the system, not from the user's tools), is rebuilt instead: a tmpfs with its entries at launch bound back (symbolic links
 * made again, never followed), read-only after every mount, so a name made there later is not
 * in the sandbox's view. A directory the sandbox may write gets a placeholder (emit_ent). */
#define REBUILD_MAX 4096

static void mark_rebuilds(plan *pl)
{
	const char *home = NULL;
	for (size_t i = 0; i < pl->p->nparams; i++)
		if (strcmp(pl->p->params[i].name, "HOME") == 0 && pl->p->params[i].value)
			home = canonical_trusted(pl, pl->p->params[i].value);
	uid_t me = geteuid();
	for (size_t i = 0; i < pl->n && !pl->failed; i++) {
		const ent *e = &pl->ents[i];
		if (e->access != ZSP_ACCESS_DENY || e->kind != H_MISSING || !e->rule || e->rule->glob ||
		    creatable(pl, i))
			continue;
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", e->missing_from ? e->missing_from : e->path);
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			continue;
		*slash = 0;
		const probe *pr = probe_path(pl, dir);
		if (!pr || pr->err || !S_ISDIR(pr->mode) ||
		    !((home && zsp_path_is_prefix(home, dir)) || (me != 0 && pr->uid == me)) ||
		    access_at(pl, dir) != ZSP_ACCESS_READ || in_private_tmp(pl, dir))
			continue;
		char *c = zsp_arena_strdup(pl->a, dir);
		ent *pe = c ? add_canonical(pl, c, H_DIR, NULL, ZSP_ACCESS_READ, false, false, false, NULL) : NULL;
		if (!pe) {
			nomem(pl);
			return;
		}
		pe->rebuild = true;
		if (!pe->rebuild_for)
			pe->rebuild_for = pl->ents[i].rule;
	}
}

/* Emits the tmpfs of a rebuilt directory and its entries; false when it has too many entries
 * to bind back (said, and the directory is then mounted as usual). */
static bool emit_rebuild(plan *pl, const ent *e)
{
	DIR *dir = opendir(e->path);
	const probe *pr = probe_known(pl, e->path);
	if (!dir || !pr) {
		if (dir)
			closedir(dir);
		zsp_diag_error_noloc(pl->d, "cannot list %s to keep a deny in it: %s", e->path, strerror(errno));
		pl->failed = true;
		return true;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	errno = 0;
	while ((de = readdir(dir)) && n <= REBUILD_MAX) {
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			push_str(pl, &names, &n, &cap, de->d_name);
		errno = 0;
	}
	int err = errno;
	closedir(dir);
	if (err) {
		zsp_diag_error_noloc(pl->d, "cannot list %s to keep a deny in it: %s", e->path, strerror(err));
		pl->failed = true;
		return true;
	}
	if (n > REBUILD_MAX) {
		zsp_diag_warning(pl->d, ZSP_W_UNENFORCED, e->rebuild_for->loc,
				 "%s has more than %d entries: `%s`, missing at launch, is readable if another "
				 "process creates it during the run", e->path, REBUILD_MAX, e->rebuild_for->path);
		return false;
	}
	char mode[8];
	snprintf(mode, sizeof(mode), "%04o", (unsigned)(pr->mode & 07777));
	args(pl, "--perms", mode, NULL);
	args(pl, "--tmpfs", e->path, NULL);
	for (size_t k = 0; k < n && !pl->failed; k++) {
		char path[PATH_MAX];
		if (snprintf(path, sizeof(path), "%s/%s", e->path, names[k]) >= (int)sizeof(path))
			continue;   /* a name no path can reach: nothing to show */
		probe *cp = probe_path(pl, path);
		if (!cp || cp->err)
			continue;   /* gone since it was listed */
		if (S_ISLNK(cp->mode)) {
			const char *target = probe_link(pl, cp);
			if (target)
				args(pl, "--symlink", target, path);
			continue;
		}
		args(pl, "--ro-bind", path, path);
	}
	push_str(pl, &pl->rebuilt, &pl->nrebuilt, &pl->rebuiltcap, e->path);
	return true;
}

static void emit_ent(plan *pl, size_t i)
{
	if (pl->ents[i].tmp) {
		state_bind(pl, "--bind", "tmp", pl->ents[i].path);
		return;
	}
	if (emit_in_tmp(pl, i))
		return;
	const ent *e = &pl->ents[i];
	if (e->state) {
		/* a cache: the sandbox's own directory, never a writable root of the host's */
		if (e->kind == H_MISSING)
			placeholder(pl, e);
		state_bind(pl, "--bind", e->state, e->path);
		return;
	}
	if (e->rebuild && emit_rebuild(pl, e) && e->access == ZSP_ACCESS_READ)
		return;
	int pa = parent_access(pl, i);
	bool can_create = e->kind == H_MISSING && creatable(pl, i);
	if (e->kind == H_IMPOSSIBLE)
		return;
	switch (e->access) {
	case ZSP_ACCESS_READ:
		/* a missing protected name gets no placeholder (a file must not become a directory,
		 * and the user's tree shows nothing of ours): what the sandbox creates there is the
		 * check after the run's (doc/host-later.md) */
		/* (under a shared root such as /tmp the check after the run does not look: it cannot
		 * tell the sandbox's files from everyone else's, and no host program runs from there) */
		if (e->kind == H_MISSING && e->protect && can_create && e->rule && e->rule->root &&
		    !shared_dir(pl, e->rule->root)) {
			if (pl->nmissing++ == 0)
				pl->missing_rule = e->rule;
			bool listed = false;
			for (size_t k = 0; k < pl->nnames_shown; k++)
				listed |= strcmp(pl->missing_names[k], e->rule->protect) == 0;
			if (!listed && pl->nnames_shown < 3)
				pl->missing_names[pl->nnames_shown++] = e->rule->protect;
		}
		if (e->kind == H_MISSING || pa == ZSP_ACCESS_READ)
			return;
		if (e->protect && e->kind == H_DIR && dir_empty(pl, e->path))
			push_str(pl, &pl->locks, &pl->nlocks, &pl->lockcap, e->path);
		if (e->protect)
			push_str(pl, &pl->fixed, &pl->nfixed, &pl->fixedcap, e->path);
		args(pl, "--ro-bind", e->path, e->path);
		return;
	case ZSP_ACCESS_WRITE:
		if (e->kind != H_MISSING && e->rule)   /* a write rule's, not only a pin */
			push_str(pl, &pl->roots, &pl->nroots, &pl->rootcap, e->path);
		if (e->kind == H_MISSING || (pa == ZSP_ACCESS_WRITE && !e->pin && !e->source))
			return;
		args(pl, "--bind", e->source ? e->source : e->path, e->path);
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
		/* zsp-run masks files itself while the exec step waits: bwrap reads its whole mount
		 * table after each bind, so a mask per match would cost launch time in the square of
		 * the matches (doc/linux.md "Masks") */
		if (pl->o->exec_step && pl->o->runner_masks) {
			push_str(pl, &pl->masks, &pl->nmasks, &pl->maskcap, e->path);
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
		bool replaced = env_listed(p->env_set, p->nenv_set, name);
		/* WSL2 interop: the socket a sandboxed process would use to start Windows programs */
		bool interop = strcmp(name, "WSL_INTEROP") == 0;
		if (pass && !replaced && !interop)
			names[k++] = (char *)kv;
		else if (!pass && !replaced && p->env_clear)
			push_str(pl, &pl->dropped, &pl->ndropped, &pl->droppedcap, name);
	}
	qsort(names, k, sizeof(char *), env_cmp);
	if (pl->ndropped)
		qsort(pl->dropped, pl->ndropped, sizeof(char *), env_cmp);
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
	/* a cache the tool finds through its variable: after the policy's own `env set` */
	for (size_t i = 0; i < p->ncaches && pl->o->sandbox_dir; i++)
		for (size_t j = 0; j < p->caches[i].nparts; j++) {
			const zsp_ir_cache_part *part = &p->caches[i].parts[j];
			const char *rel = part->env ? zsp_arena_printf(pl->a, "cache/%s", part->id) : NULL;
			if (part->env)
				args(pl, "--setenv", part->env, rel ? state_path(pl, rel) : "");
		}
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

/* The policy with its literal paths as the file system names them: a rule's path keeps the
 * escapes of its pattern (`proj\[1]`), and looked up as written it names another file (the
 * workspace then silently missing, and read-only). Globs keep their patterns. */
static const zsp_ir_policy *fs_unescaped(zsp_arena *a, const zsp_ir_policy *p)
{
	zsp_ir_policy *c = zsp_arena_alloc(a, sizeof(*c));
	zsp_ir_fs_rule *fs = p->nfs ? zsp_arena_calloc(a, p->nfs, sizeof(*fs)) : NULL;
	if (!c || (p->nfs && !fs))
		return NULL;
	*c = *p;
	c->fs = fs;
	for (size_t i = 0; i < p->nfs; i++) {
		fs[i] = p->fs[i];
		if (fs[i].glob)
			continue;
		if (!(fs[i].path = zsp_path_unescape(a, p->fs[i].path)) ||
		    (p->fs[i].root && !(fs[i].root = zsp_path_unescape(a, p->fs[i].root))) ||
		    (p->fs[i].protect && !(fs[i].protect = zsp_path_unescape(a, p->fs[i].protect))))
			return NULL;
	}
	return c;
}

int zsp_bwrap_plan_build(const zsp_ir_policy *p, const zsp_linux_opts *o, zsp_arena *a, zsp_diag *d,
			 zsp_bwrap_plan *out)
{
	memset(out, 0, sizeof(*out));
	if (!(p = fs_unescaped(a, p))) {
		zsp_diag_error_noloc(d, "out of memory");
		return ZSP_EINTERNAL;
	}
	plan pl = { .p = p, .o = o, .a = a, .d = d };
	private_tmp(&pl);
	for (size_t i = 0; i < p->nfs; i++) {
		const zsp_ir_fs_rule *r = &p->fs[i];
		if (unresolved(&pl, r->path, r->loc))
			continue;
		if (r->protect && r->root && is_private_tmp(&pl, r->root))
			continue;   /* nothing of the host's under the private /tmp to protect */
		if (r->cache)
			add_cache_ent(&pl, r);
		else if (!r->glob)
			add_ent(&pl, r->path, r->access, r->protect != NULL, false, r);
		if (!pl.failed && r->protect && strncmp(r->protect, ".git", 4) != 0)
			protect_through_link(&pl, r->root, r->protect, r);
		if (!pl.failed)
			protect_repo(&pl, r);
	}
	const zsp_ir_fs_rule *glob_deny = NULL;
	for (size_t i = 0; i < p->nfs && !pl.failed; i++) {
		bool over_writable = false;
		if (p->fs[i].glob)
			expand_glob(&pl, &p->fs[i], &over_writable);
		if (over_writable && !glob_deny)
			glob_deny = &p->fs[i];
	}
	/* mounts hold what they cover at launch; a name made later by the command is its own */
	if (glob_deny && !pl.failed && !o->opens_decided)
		zsp_diag_warning(pl.d, ZSP_W_UNENFORCED, glob_deny->loc,
				 "on Linux, glob denies such as `%s` mask their matches when the sandbox starts: a "
				 "match that another process creates in a writable root during the run is not masked "
				 "(doc/linux.md \"Globs\")", glob_deny->path);
	for (size_t i = 0; i < p->nfs && !pl.failed; i++)
		if (p->fs[i].access == ZSP_ACCESS_WRITE && !p->fs[i].glob && !p->fs[i].protect &&
		    !p->fs[i].cache && !is_private_tmp(&pl, p->fs[i].path))
			walk_root(&pl, &p->fs[i]);
	/* WSL2 interop sockets (Windows programs started from Linux): hidden whatever the policy
	 * says; /run/WSL exists only on WSL */
	struct stat wsl;
	if (!pl.failed && lstat("/run/WSL", &wsl) == 0 && S_ISDIR(wsl.st_mode))
		add_ent(&pl, "/run/WSL", ZSP_ACCESS_DENY, false, false, NULL);
	/* zsp's own state (grants, audit trail): no sandbox reads or forges it */
	for (size_t i = 0; i < o->nhidden && !pl.failed; i++)
		if (lstat(o->hidden[i], &wsl) == 0)
			add_ent(&pl, o->hidden[i], ZSP_ACCESS_DENY, false, false, NULL);
	if (!pl.failed)
		add_cache_env_ents(&pl);
	if (!pl.failed)
		state_missing(&pl);
	for (size_t i = 0; i < p->nenv_set; i++)
		unresolved(&pl, p->env_set[i].value, p->env_set[i].loc);
	if (!pl.failed) {
		drop_widening(&pl);
		protect_readonly(&pl);
		pin_ancestors(&pl);
		layer_gitdirs(&pl);
	}
	if (!pl.failed)
		mark_rebuilds(&pl);
	if (pl.failed)
		return plan_status(&pl);
	if (pl.n)
		qsort(pl.ents, pl.n, sizeof(ent), path_cmp);
	ents_moved(&pl);

	/* root view */
	size_t first = 0;
	if (pl.n && strcmp(pl.ents[0].path, "/") == 0) {
		first = 1;
		if (pl.ents[0].access == ZSP_ACCESS_READ)
			args(&pl, "--ro-bind", "/", "/");
		else if (pl.ents[0].access == ZSP_ACCESS_WRITE) {
			args(&pl, "--bind", "/", "/");
			push_str(&pl, &pl.roots, &pl.nroots, &pl.rootcap, "/");
		}
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
	if (o->chdir && pl.tmp && in_private_tmp(&pl, o->chdir) && strcmp(o->chdir, pl.tmp) != 0) {
		zsp_diag_error_noloc(pl.d, "the command would start in %s, in the host's /tmp, which the sandbox "
				     "does not see: its /tmp is its own (`tmp private`)", o->chdir);
		zsp_diag_hint(pl.d, "start it in the workspace, or write `tmp host;` in the policy's fs block");
		pl.failed = true;
	}
	for (size_t i = first; i < pl.n; i++)
		if (under(pl.ents[i].path, "/dev") && strcmp(pl.ents[i].path, "/dev") != 0)
			emit_ent(&pl, i);

	for (size_t i = 0; i < pl.nrebuilt; i++)
		args(&pl, "--remount-ro", pl.rebuilt[i], NULL);
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
	/* after every mount of the policy's, so that none covers it (doc/linux.md "The exec step") */
	if (o->exec_step) {
		char fd[16];
		/* a file of bwrap's /dev, not --ro-bind-data's: the kernel refuses to mount a clone of
		 * that, whose file bwrap has unlinked. zsp-run binds it read-only over itself first
		 * (runtime/mask.c). */
		if (pl.nmasks) {
			snprintf(fd, sizeof(fd), "%d", ZSP_FD_EMPTY);
			args(&pl, "--perms", "0000", NULL);
			args(&pl, "--file", fd, ZSP_MASK_PATH);
		}
		snprintf(fd, sizeof(fd), "%d", ZSP_FD_EXEC);
		args(&pl, "--ro-bind-fd", fd, ZSP_EXEC_PATH);
	}
	/* with --strict too: the guard moves them aside after the run (doc/host-later.md), which
	 * is how the policy holds for them; the warning is for those who rely on the mounts alone */
	if (pl.nmissing && !o->opens_decided) {
		char names[256] = "";
		for (size_t i = 0; i < pl.nnames_shown; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s`%s`", i ? ", " : "",
				 pl.missing_names[i]);
		zsp_diag_warning(pl.d, ZSP_W_UNENFORCED, pl.missing_rule->loc,
				 "on Linux, %zu protected path%s under the writable roots (%s%s) do%s not exist at "
				 "launch: the command can create %s while it runs, and %s moved aside when it ends "
				 "(doc/host-later.md)",
				 pl.nmissing, pl.nmissing == 1 ? "" : "s", names, pl.nmissing > pl.nnames_shown ? ", ..." : "",
				 pl.nmissing == 1 ? "es" : "", pl.nmissing == 1 ? "it" : "them",
				 pl.nmissing == 1 ? "it is" : "they are");
	}
	if (pl.failed)
		return plan_status(&pl);
	out->argv = pl.argv;
	out->argc = pl.argc;
	out->placeholders = pl.ph;
	out->nplaceholders = pl.nph;
	out->locks = pl.locks;
	out->nlocks = pl.nlocks;
	out->roots = pl.roots;
	out->nroots = pl.nroots;
	out->fixed = pl.fixed;
	out->nfixed = pl.nfixed;
	out->layers = pl.layers;
	out->nlayers = pl.nlayers;
	out->dropped = pl.dropped;
	out->ndropped = pl.ndropped;
	out->state = pl.state;
	out->nstate = pl.nstate;
	out->masks = pl.masks;
	out->nmasks = pl.nmasks;
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
	/* zsp-run's masks, for the reader: bwrap never sees them (doc/linux.md "Masks") */
	for (size_t i = 0; !nul && i < bp->nmasks; i++) {
		char *q = zsp_shell_quote(bp->masks[i]);
		if (!q) {
			out->oom = true;
			return;
		}
		zsp_buf_printf(out, "# masked by zsp-run: %s\n", q);
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
	zsp_linux_opts lo = { .chdir = in->chdir, .environ = in->environ, .seccomp = true, .proc = true,
			      .exec_step = true, .sandbox_dir = in->sandbox_dir };
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
