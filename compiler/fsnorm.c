/* fsnorm.c: the fs rules of one policy made canonical: protect names expanded under every
 * writable root, same-path rules merged (deny > protected > cache > write > read), shadowed rules
 * dropped, and the rest in path order: each path right before its descendants, the order
 * bwrap mounts need. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "compiler/compile.h"
#include "compiler/path.h"

/* Path order in which every path is followed directly by its descendants: '/' sorts lowest. */
static int path_cmp(const char *a, const char *b)
{
	size_t i = 0;
	while (a[i] == b[i] && a[i])
		i++;
	unsigned ca = (unsigned char)a[i], cb = (unsigned char)b[i];
	if (ca == cb)
		return 0;
	if (!ca)
		return -1;
	if (!cb)
		return 1;
	if (ca == '/')
		return -1;
	if (cb == '/')
		return 1;
	return ca < cb ? -1 : 1;
}

/* A rule being normalized, with the keys the sorts need computed once. Sorts move pointers. */
struct item {
	zsp_ir_fs_rule r;
	size_t seq;          /* input order: earlier rules win ties and keep their location */
	const char *last;    /* last component */
	bool dropped;
};

static int item_cmp(const struct item *a, const struct item *b)
{
	int c = path_cmp(a->r.path, b->r.path);
	if (c)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int by_seq(const void *pa, const void *pb)
{
	const struct item *a = *(const struct item *const *)pa, *b = *(const struct item *const *)pb;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Byte d of a path as path_cmp orders it: NUL, then '/', then the other bytes in order. */
static unsigned path_key(const struct item *it, size_t d)
{
	unsigned c = (unsigned char)it->r.path[d];
	return c == '/' ? 1 : c && c < '/' ? c + 1 : c;
}

static void swap_items(struct item **a, size_t i, size_t j)
{
	struct item *t = a[i];
	a[i] = a[j];
	a[j] = t;
}

/* Sorts by (path, seq). Paths share long prefixes (every rule under a root starts with it),
 * which makes a comparison sort re-read them again and again; multikey quicksort (Bentley and
 * Sedgewick) looks at each distinguishing byte about once. a[*] agree on their first d bytes. */
static void sort_items(struct item **a, size_t n, size_t d)
{
	while (n > 12) {
		swap_items(a, 0, n / 2);
		unsigned v = path_key(a[0], d);
		size_t lt = 0, i = 1, gt = n;
		while (i < gt) {
			unsigned k = path_key(a[i], d);
			if (k < v)
				swap_items(a, lt++, i++);
			else if (k > v)
				swap_items(a, i, --gt);
			else
				i++;
		}
		sort_items(a, lt, d);
		sort_items(a + gt, n - gt, d);
		a += lt;
		n = gt - lt;
		if (v == 0) {
			/* identical paths: input order */
			qsort(a, n, sizeof(*a), by_seq);
			return;
		}
		d++;
	}
	for (size_t x = 1; x < n; x++)
		for (size_t y = x; y > 0 && item_cmp(a[y - 1], a[y]) > 0; y--)
			swap_items(a, y - 1, y);
}


static const char *verb(zsp_access a)
{
	return a == ZSP_ACCESS_WRITE ? "write" : a == ZSP_ACCESS_DENY ? "deny" : "read";
}

/* A policy reports only about its own rules: its bases reported theirs when they were
 * finished, and a diagnostic repeated once per child is noise. */
static bool own(const zsp_ir_policy *p, const zsp_ir_fs_rule *r)
{
	return strcmp(r->policy, p->name) == 0;
}

/* Settles a run of rules naming the same path; leaves exactly one not dropped. */
static void settle_same_path(zsp_cc *cc, const zsp_ir_policy *p, struct item **g, size_t n)
{
	size_t keep = 0;
	int best = -1;
	for (size_t i = 0; i < n; i++) {
		/* deny 4 > protected 3 > a cache 2 > write 1 > read 0; the first of the strongest wins */
		int rank = g[i]->r.access == ZSP_ACCESS_DENY ? 4
			 : g[i]->r.protect ? 3
			 : g[i]->r.cache ? 2
			 : g[i]->r.access == ZSP_ACCESS_WRITE ? 1 : 0;
		if (rank > best) {
			best = rank;
			keep = i;
		}
	}
	const zsp_ir_fs_rule *k = &g[keep]->r;
	for (size_t i = 0; i < n; i++) {
		if (i == keep)
			continue;
		const zsp_ir_fs_rule *o = &g[i]->r;
		g[i]->dropped = true;
		if (o->protect)
			continue; /* protection is implied by the stronger rule */
		if (!own(p, o) && !own(p, k))
			continue;
		if (k->cache && !(o->cache && strcmp(o->cache, k->cache) == 0)) {
			/* the place is the sandbox's own cache: a write or read there reaches no host file */
			if (own(p, o))
				zsp_diag_warning(cc->diag, ZSP_W_NO_EFFECT, o->loc,
						 "`%s \"%s\"` has no effect: the sandbox has its own directory there "
						 "(`cache %s`)", o->cache ? "cache" : verb(o->access), o->path, k->cache);
			continue;
		}
		if (o->access == k->access && !k->protect) {
			zsp_diag_warning(cc->diag, ZSP_W_DUPLICATE, o->loc, "`%s \"%s\"` repeats a rule",
					 verb(o->access), o->path);
			zsp_diag_note(cc->diag, k->loc, "the same rule is here");
			continue;
		}
		if (k->access == ZSP_ACCESS_DENY) {
			bool same_policy = strcmp(o->policy, k->policy) == 0;
			const zsp_ir_fs_rule *later = o->loc.begin >= k->loc.begin || o->loc.src != k->loc.src ? o : k;
			const zsp_ir_fs_rule *earlier = later == o ? k : o;
			if (same_policy) {
				zsp_diag_error(cc->diag, later->loc, "`%s%s%s` and `%s` name the same path `%s`",
					       later->cache ? "cache " : verb(later->access),
					       later->cache ? later->cache : "", "",
					       verb(earlier->access), o->path);
				zsp_diag_note(cc->diag, earlier->loc, "the other rule is here");
				zsp_diag_hint(cc->diag, "keep one; to open a part of a denied tree, name the part");
			} else if (own(p, o)) {
				/* a deny added by the child over a base's write is a plain restriction */
				zsp_diag_warning(cc->diag, ZSP_W_CONFLICT, o->loc,
						 "`%s \"%s\"` cannot lift the deny of policy `%s`; the deny stands",
						 verb(o->access), o->path, k->policy);
				zsp_diag_note(cc->diag, k->loc, "denied here");
			}
			continue;
		}
		if (k->protect && o->access == ZSP_ACCESS_WRITE && own(p, o)) {
			zsp_diag_warning(cc->diag, ZSP_W_NO_EFFECT, o->loc,
					 "`write \"%s\"` has no effect: `%s` is protected (read-only)",
					 o->path, k->protect);
			zsp_diag_note(cc->diag, k->loc, "protected here");
		}
		/* a read next to a write or a protection: implied, dropped silently */
	}
}

/* Anchor of a path: "" for an absolute path, "${NAME}" for a parameter one. Rules in
 * different anchor families are unordered until the parameters get values. */
static size_t anchor_len(const char *p)
{
	if (p[0] != '$')
		return 0;
	const char *close = strchr(p, '}');
	return close ? (size_t)(close - p + 1) : 0;
}

/* The path after its anchor; "/" has the empty tail, like a bare "${NAME}". */
static const char *tail_of(const char *p)
{
	const char *t = p + anchor_len(p);
	return strcmp(t, "/") == 0 ? "" : t;
}

static const char *last_component(const char *p)
{
	const char *slash = strrchr(p, '/');
	return slash ? slash + 1 : p;
}

/* Tails start with '/', so a byte suffix is a component suffix. */
static bool tail_suffix(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return lx <= ls && memcmp(s + ls - lx, suffix, lx) == 0;
}

static bool same_anchor(const char *a, const char *b)
{
	size_t la = anchor_len(a);
	return la == anchor_len(b) && memcmp(a, b, la) == 0;
}

/* Could literal rule r (of another anchor family) name the same place as p once the
 * parameters have values? An absolute path must be the longer side of the match. */
static bool may_coincide(const char *r, const char *p)
{
	const char *tr = tail_of(r), *tp = tail_of(p);
	if (anchor_len(r) == 0)
		return tail_suffix(tr, tp);
	if (anchor_len(p) == 0)
		return tail_suffix(tp, tr);
	return tail_suffix(tr, tp) || tail_suffix(tp, tr);
}

struct shadow {
	const struct item **globs;      /* kept glob rules */
	size_t nglobs;
	const struct item **literals;   /* kept literal rules, sorted by last component */
	size_t nliterals;
	const struct item **bare;       /* kept rules that are a bare anchor: "${NAME}" */
	size_t nbare;
	char *scratch;
};

static int by_last_component(const void *pa, const void *pb)
{
	const struct item *a = *(const struct item *const *)pa, *b = *(const struct item *const *)pb;
	return strcmp(a->last, b->last);
}

/* Might a rule other than `anc` decide some path strictly below anc, down to and including
 * `path`? Globs are matched; literal rules of other anchor families are checked for the
 * places they could take once parameters have values. */
static bool something_between(const struct shadow *sh, const char *anc, const char *path)
{
	size_t alen = strlen(anc), plen = strlen(path);
	for (size_t i = 0; i < sh->nbare; i++)
		if (!same_anchor(sh->bare[i]->r.path, path))
			return true;
	for (size_t end = alen + 1; end <= plen; end++) {
		if (end != plen && path[end] != '/')
			continue;
		memcpy(sh->scratch, path, end);
		sh->scratch[end] = '\0';
		for (size_t i = 0; i < sh->nglobs; i++)
			if (zsp_glob_match(sh->globs[i]->r.path, sh->scratch))
				return true;
		/* literal rules that could coincide share the last component */
		const char *last = last_component(sh->scratch);
		size_t lo = 0, hi = sh->nliterals;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (strcmp(sh->literals[mid]->last, last) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t i = lo; i < sh->nliterals; i++) {
			const char *r = sh->literals[i]->r.path;
			if (strcmp(sh->literals[i]->last, last) != 0)
				break;
			if (!same_anchor(r, path) && may_coincide(r, sh->scratch))
				return true;
		}
	}
	return false;
}

void zsp_fs_normalize(zsp_cc *cc, zsp_ir_policy *p, const zsp_ir_fs_rule *in, size_t n)
{
	size_t nroots = 0, nprot = 0;
	/* a cache is not a writable root: the host never reads it, so nothing there is protected */
	for (size_t i = 0; i < n; i++) {
		nroots += in[i].access == ZSP_ACCESS_WRITE && !in[i].protect && !in[i].cache;
		nprot += in[i].protect != NULL;
	}
	size_t total = n - nprot + nprot * nroots;
	struct item *items = malloc((total + 1) * sizeof(*items));
	if (!items) {
		cc->oom = true;
		return;
	}
	size_t m = 0, maxlen = 1;
	for (size_t i = 0; i < n; i++) {
		if (in[i].protect)
			continue;
		items[m].r = in[i];
		m++;
	}
	for (size_t i = 0; i < n; i++) {
		if (!in[i].protect)
			continue;
		for (size_t j = 0; j < n; j++) {
			if (in[j].access != ZSP_ACCESS_WRITE || in[j].protect || in[j].cache)
				continue;
			const char *path = zsp_path_join(cc->a, in[j].path, in[i].protect);
			if (!path) {
				cc->oom = true;
				free(items);
				return;
			}
			items[m].r = in[i];
			items[m].r.path = path;
			items[m].r.root = in[j].path;
			items[m].r.access = ZSP_ACCESS_READ;
			m++;
		}
	}
	struct item **order = malloc((m + 1) * sizeof(*order));
	if (!order) {
		free(items);
		cc->oom = true;
		return;
	}
	for (size_t i = 0; i < m; i++) {
		struct item *it = &items[i];
		const char *path = it->r.path;
		size_t l = strlen(path);
		if (l > maxlen)
			maxlen = l;
		it->seq = i;
		it->r.glob = zsp_glob_has_meta(path);
		it->last = last_component(path);
		it->dropped = false;
		order[i] = it;
	}
	sort_items(order, m, 0);
	for (size_t i = 0; i < m;) {
		size_t j = i + 1;
		while (j < m && strcmp(order[j]->r.path, order[i]->r.path) == 0)
			j++;
		if (j - i > 1)
			settle_same_path(cc, p, order + i, j - i);
		i = j;
	}

	/* Shadowing: a literal rule whose nearest literal ancestor decides the same way, with
	 * nothing that could decide in between, changes nothing. Rules appear in path order, so
	 * the ancestors of a rule form a stack. */
	struct shadow sh = { 0 };
	const struct item **stack = calloc(m + 1, sizeof(*stack));
	sh.globs = calloc(m + 1, sizeof(*sh.globs));
	sh.literals = calloc(m + 1, sizeof(*sh.literals));
	sh.bare = calloc(m + 1, sizeof(*sh.bare));
	sh.scratch = malloc(maxlen + 1);
	size_t depth = 0;
	if (!stack || !sh.globs || !sh.literals || !sh.bare || !sh.scratch) {
		cc->oom = true;
		goto out;
	}
	for (size_t i = 0; i < m; i++) {
		const struct item *it = order[i];
		if (it->dropped)
			continue;
		if (it->r.glob)
			sh.globs[sh.nglobs++] = it;
		else if (anchor_len(it->r.path) && !*tail_of(it->r.path))
			sh.bare[sh.nbare++] = it;
		else
			sh.literals[sh.nliterals++] = it;
	}
	qsort(sh.literals, sh.nliterals, sizeof(*sh.literals), by_last_component);
	for (size_t i = 0; i < m; i++) {
		struct item *it = order[i];
		if (it->dropped || it->r.glob)
			continue;
		while (depth && !zsp_path_is_prefix(stack[depth - 1]->r.path, it->r.path))
			depth--;
		const struct item *anc = depth ? stack[depth - 1] : NULL;
		/* a cache changes what is there (the sandbox's own directory), and so does a private
		 * /tmp (what the policy names below it stays the host's): neither shadows */
		bool own_dir = anc && (anc->r.cache || (p->tmp_private && strcmp(anc->r.path, "/tmp") == 0));
		if (anc && !own_dir && !it->r.protect && !it->r.cache && anc->r.access == it->r.access &&
		    !something_between(&sh, anc->r.path, it->r.path)) {
			it->dropped = true;
			if (!own(p, &it->r))
				continue;
			zsp_diag_warning(cc->diag, ZSP_W_SHADOWED, it->r.loc,
					 "`%s \"%s\"` changes nothing: a more general rule already decides it",
					 verb(it->r.access), it->r.path);
			zsp_diag_note(cc->diag, anc->r.loc, "`%s \"%s\"` is here", verb(anc->r.access),
				      anc->r.path);
			continue;
		}
		stack[depth++] = it;
	}
out:
	free(stack);
	free(sh.globs);
	free(sh.literals);
	free(sh.bare);
	free(sh.scratch);
	/* Path order is already the IR's order: every path comes right before its descendants. */
	size_t kept = 0;
	for (size_t i = 0; i < m; i++)
		kept += !order[i]->dropped;
	p->fs = cc->oom ? NULL : zsp_arena_alloc(cc->a, (kept + 1) * sizeof(*p->fs));
	if (!p->fs) {
		cc->oom = true;
	} else {
		p->nfs = 0;
		for (size_t i = 0; i < m; i++)
			if (!order[i]->dropped)
				p->fs[p->nfs++] = order[i]->r;
	}
	free(order);
	free(items);
}
