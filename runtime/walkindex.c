/* walkindex.c: the walk's index between runs. A directory whose device, inode and ctime are
 * those recorded (and whose ctime is older than the recording walk by more than the file
 * system's timestamp granularity) has the entries recorded: a ctime moves whenever an entry is
 * added, removed or renamed in the directory, and no unprivileged process can set it. The file
 * is zsp's own: written atomically, checked (owner, mode, size, version, scope, a checksum of the
 * content, every length) before a byte of it is used; anything wrong and it is rebuilt. */
#include "config.h"

#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compiler/sha256.h"
#include "runtime/walkindex.h"

#define MAGIC "ZSPWIDX\n"
#define RACY_SEC 2  /* a ctime this close to the recording walk may hide a later change */

/* The content's checksum: against a file cut short or damaged, not against a forger. Nobody but
 * the user can write the file (its directory is 0700 and hidden from every sandbox), and a
 * forger who could would compute any unkeyed hash as well, SHA-256 included; SHA-256 cost 67
 * instructions a byte, a fifth of a launch's own work in a 100,000-file workspace (bench/README.md
 * "the launch curve"). Four lanes of 64-bit multiply-rotate rounds over 32-byte blocks, the
 * length and the tail folded in, then a final avalanche: every bit of the input reaches every
 * bit of the sum. */
#define P1 0x9E3779B185EBCA87u
#define P2 0xC2B2AE3D27D4EB4Fu
#define P3 0x165667B19E3779F9u

static uint64_t rotl(uint64_t v, int r)
{
	return (v << r) | (v >> (64 - r));
}

static uint64_t load64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static uint64_t round64(uint64_t acc, uint64_t v)
{
	return rotl(acc + v * P2, 31) * P1;
}

uint64_t zsp_walkindex_checksum(const unsigned char *p, size_t n)
{
	uint64_t l[4] = { P1 + P2, P2, 0, -P1 }, h;
	size_t i = 0;
	for (; i + 32 <= n; i += 32)
		for (int k = 0; k < 4; k++)
			l[k] = round64(l[k], load64(p + i + 8 * k));
	h = rotl(l[0], 1) + rotl(l[1], 7) + rotl(l[2], 12) + rotl(l[3], 18);
	for (int k = 0; k < 4; k++)
		h = (h ^ round64(0, l[k])) * P1 + P3;
	h += (uint64_t)n;
	for (; i + 8 <= n; i += 8)
		h = rotl(h ^ round64(0, load64(p + i)), 27) * P1 + P3;
	for (; i < n; i++)
		h = rotl(h ^ (p[i] * P3), 11) * P1;
	h ^= h >> 33;
	h *= P2;
	h ^= h >> 29;
	h *= P3;
	h ^= h >> 32;
	return h;
}

typedef struct reader {
	const unsigned char *p, *end;
	bool bad;
} reader;

static uint64_t get(reader *r, size_t n)
{
	uint64_t v = 0;
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)r->p[i] << (8 * i);
	r->p += n;
	return v;
}

static const char *get_bytes(reader *r, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return NULL;
	}
	const char *s = (const char *)r->p;
	r->p += n;
	return s;
}

static int dir_cmp(const void *a, const void *b)
{
	return strcmp(((const zsp_walkindex_dir *)a)->rel, ((const zsp_walkindex_dir *)b)->rel);
}

void zsp_walkindex_data_free(zsp_walkindex_data *d)
{
	for (size_t i = 0; i < d->ndirs; i++) {
		free((char *)d->dirs[i].rel);
		for (size_t j = 0; j < d->dirs[i].nents; j++)
			free((char *)d->dirs[i].ents[j].name);
		free(d->dirs[i].ents);
	}
	free(d->dirs);
	memset(d, 0, sizeof(*d));
}

/* A copy of n bytes that must hold no NUL (and, for a name, no '/' and not be . or ..). */
static char *text(reader *r, size_t n, bool name)
{
	const char *s = get_bytes(r, n);
	if (!s || memchr(s, 0, n) || (name && (n == 0 || memchr(s, '/', n) ||
					      (n <= 2 && s[0] == '.' && (n == 1 || s[1] == '.'))))) {
		r->bad = true;
		return NULL;
	}
	char *c = malloc(n + 1);
	if (!c) {
		r->bad = true;
		return NULL;
	}
	memcpy(c, s, n);
	c[n] = 0;
	return c;
}

bool zsp_walkindex_parse(const unsigned char *data, size_t len, const unsigned char scope_sha[32],
			 uint32_t uid, zsp_walkindex_data *out, const char **why)
{
	memset(out, 0, sizeof(*out));
	reader r = { data, data + len, false };
	const char *magic = get_bytes(&r, 8);
	if (!magic || memcmp(magic, MAGIC, 8) != 0)
		return *why = "not an index", false;
	uint64_t version = get(&r, 4), owner = get(&r, 4);
	/* the version before any length: another version's header may have another size */
	if (!r.bad && version != ZSP_WALKINDEX_VERSION)
		return *why = "another version", false;
	int64_t since = (int64_t)get(&r, 8);
	uint64_t plen = get(&r, 8);
	const char *scope = get_bytes(&r, 32);
	uint64_t sum = get(&r, 8);
	if (r.bad || plen != (uint64_t)(r.end - r.p))
		return *why = "truncated", false;
	if (version != ZSP_WALKINDEX_VERSION)
		return *why = "another version", false;
	if (owner != uid)
		return *why = "written for another user", false;
	if (memcmp(scope, scope_sha, 32) != 0)
		return *why = "made for another root or policy", false;
	if (zsp_walkindex_checksum(r.p, (size_t)plen) != sum)
		return *why = "its checksum does not match", false;
	size_t cap = 0;
	while (r.p < r.end && !r.bad) {
		zsp_walkindex_dir d = { 0 };
		size_t rl = (size_t)get(&r, 4);
		d.rel = text(&r, rl, false);
		if (d.rel && rl && d.rel[0] != '/')
			r.bad = true;
		d.dev = get(&r, 8);
		d.ino = get(&r, 8);
		d.ctime_sec = (int64_t)get(&r, 8);
		d.ctime_nsec = (int64_t)get(&r, 8);
		uint64_t any = get(&r, 1);
		uint64_t n = get(&r, 4);
		/* each entry takes at least 4 bytes: a count beyond that is a lie */
		if (any > 1 || n > (uint64_t)(r.end - r.p) / 4)
			r.bad = true;
		d.any = any;
		if (!r.bad && n && !(d.ents = calloc((size_t)n, sizeof(*d.ents))))
			r.bad = true;
		for (size_t i = 0; i < n && !r.bad; i++) {
			unsigned type = (unsigned)get(&r, 1);
			size_t nl = (size_t)get(&r, 2);
			if (type == DT_UNKNOWN)
				r.bad = true;
			d.ents[i].type = (unsigned char)type;
			d.ents[i].name = text(&r, nl, true);
			d.nents = i + 1;
		}
		if (!r.bad && out->ndirs == cap) {
			size_t nc = cap ? 2 * cap : 64;
			zsp_walkindex_dir *nd = realloc(out->dirs, nc * sizeof(*nd));
			if (nd) {
				out->dirs = nd;
				cap = nc;
			} else {
				r.bad = true;
			}
		}
		if (r.bad) {
			for (size_t j = 0; j < d.nents; j++)
				free((char *)d.ents[j].name);
			free(d.ents);
			free((char *)d.rel);
			break;
		}
		out->dirs[out->ndirs++] = d;
	}
	if (!r.bad && out->ndirs)
		qsort(out->dirs, out->ndirs, sizeof(*out->dirs), dir_cmp);
	for (size_t i = 1; i < out->ndirs && !r.bad; i++)
		if (strcmp(out->dirs[i - 1].rel, out->dirs[i].rel) == 0)
			r.bad = true;
	if (r.bad) {
		zsp_walkindex_data_free(out);
		return *why = "corrupt", false;
	}
	out->since = since;
	return true;
}

void zsp_walkindex_seal(unsigned char head[ZSP_WALKINDEX_HEADER], const unsigned char scope_sha[32],
			uint32_t uid, int64_t since, const unsigned char *payload, size_t len)
{
	unsigned char *p = head;
	memcpy(p, MAGIC, 8);
	p += 8;
	uint64_t fields[4] = { ZSP_WALKINDEX_VERSION, uid, (uint64_t)since, len };
	size_t sizes[4] = { 4, 4, 8, 8 };
	for (size_t f = 0; f < 4; f++)
		for (size_t i = 0; i < sizes[f]; i++)
			*p++ = (unsigned char)(fields[f] >> (8 * i));
	memcpy(p, scope_sha, 32);
	p += 32;
	uint64_t sum = zsp_walkindex_checksum(payload ? payload : (const unsigned char *)"", len);
	for (size_t i = 0; i < 8; i++)
		*p++ = (unsigned char)(sum >> (8 * i));
}

/* ---- the provider ---- */

typedef struct provider {
	zsp_walk_index ix;
	char *dir;                  /* state_dir/walk */
	FILE *notes;
	bool readonly;              /* indexes are read, never written */
} provider;

/* A directory's lstat taken ahead (walk_stat()): 0 untaken, 1 being taken, 2 taken. */
typedef struct ahead {
	_Atomic unsigned char state;
	int err;
	struct stat st;
} ahead;

enum { AHEAD_MIN = 256 };   /* directories an index must know for a second thread to pay */

typedef struct walk {
	provider *pv;
	char path[4096];
	unsigned char scope[32];
	zsp_walkindex_data old;
	struct timespec start;
	unsigned char *out;         /* the new index's payload */
	size_t len, cap;
	size_t dirs, reused;        /* directories recorded, and of them taken from the index */
	const char *name;           /* what the notes call this index (walk_name()) */
	bool oom;
	ahead *ahead;               /* per directory of old, when the second thread runs */
	pthread_t thread;
	int aheadfd;                /* the root, the thread's own descriptor of it */
	bool ahead_tried;           /* start_ahead() was called */
	_Atomic bool stop;
} walk;

/* The notes name whose index it is: the check after the run's scope starts "zsp guard "
 * (runtime/guard.c), the backend's walk's "zsp walk ". */
static const char *walk_name(const char *scope, size_t len)
{
	static const char guard[] = "zsp guard ";
	return len >= sizeof(guard) - 1 && memcmp(scope, guard, sizeof(guard) - 1) == 0
	       ? "the check after the run's index" : "the walk's index";
}

static void note(const provider *pv, const char *name, const char *what, const char *path, const char *why)
{
	if (pv->notes)
		fprintf(pv->notes, "zsp-run: note: %s %s %s: %s\n", name, path, what, why);
}

/* The walk directory: made by this user, writable by nobody else. */
static bool own_dir(provider *pv, const char *name)
{
	struct stat st;
	if (pv->readonly)   /* nothing made: no directory, no index to read */
		return lstat(pv->dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
		       !(st.st_mode & 022);
	*strrchr(pv->dir, '/') = 0;
	int made = mkdir(pv->dir, 0700);
	*strrchr(pv->dir, 0) = '/';
	(void)made;   /* the state directory: another run's, or missing (then so is the index's) */
	if (mkdir(pv->dir, 0700) != 0 && errno != EEXIST) {
		note(pv, name, "cannot be kept in", pv->dir, strerror(errno));
		return false;
	}
	if (lstat(pv->dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		note(pv, name, "is not kept in", pv->dir, "not a directory of this user's that only it can write");
		return false;
	}
	return true;
}

static void load(walk *w)
{
	provider *pv = w->pv;
	int fd = open(w->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			note(pv, w->name, "is rebuilt", w->path, strerror(errno));
		return;
	}
	struct stat st;
	const char *why = NULL;
	unsigned char *data = NULL;
	if (fstat(fd, &st) != 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		why = "not a file of this user's that only it can write";
	else if ((uint64_t)st.st_size > ZSP_WALKINDEX_MAX)
		why = "too big";
	else if (!(data = malloc((size_t)st.st_size + 1)))
		why = "out of memory";
	size_t got = 0;
	while (!why && got < (size_t)st.st_size) {
		ssize_t n = read(fd, data + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			why = n < 0 ? strerror(errno) : "truncated";
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (!why && !zsp_walkindex_parse(data, got, w->scope, (uint32_t)geteuid(), &w->old, &why))
		memset(&w->old, 0, sizeof(w->old));
	free(data);
	if (why)
		note(pv, w->name, "is rebuilt", w->path, why);
}

static void *wi_open(void *ctx, const char *scope, size_t len)
{
	provider *pv = ctx;
	walk *w = calloc(1, sizeof(*w));
	if (!w || !own_dir(pv, walk_name(scope, len))) {
		free(w);
		return NULL;
	}
	w->pv = pv;
	w->name = walk_name(scope, len);
	clock_gettime(CLOCK_REALTIME, &w->start);
	zsp_sha256 c;
	zsp_sha256_init(&c);
	zsp_sha256_update(&c, scope, len);
	zsp_sha256_final(&c, w->scope);
	char hex[65];
	zsp_sha256_hex(scope, len, hex);
	if ((size_t)snprintf(w->path, sizeof(w->path), "%s/%s", pv->dir, hex) >= sizeof(w->path)) {
		free(w);
		return NULL;
	}
	load(w);
	return w;
}

/* Room for n more bytes of the payload; false (and w->oom) when there is none. */
static bool room(walk *w, size_t n)
{
	if (w->oom)
		return false;
	if (w->len + n > w->cap) {
		size_t nc = w->cap ? w->cap : 4096;
		while (nc < w->len + n)
			nc *= 2;
		unsigned char *no = realloc(w->out, nc);
		if (!no) {
			w->oom = true;
			return false;
		}
		w->out = no;
		w->cap = nc;
	}
	return true;
}

static void put(walk *w, uint64_t v, size_t n)
{
	if (!room(w, n))
		return;
	for (size_t i = 0; i < n; i++)
		w->out[w->len + i] = (unsigned char)(v >> (8 * i));
	w->len += n;
}

static void put_bytes(walk *w, const char *s, size_t n)
{
	if (!room(w, n))
		return;
	memcpy(w->out + w->len, s, n);
	w->len += n;
}

static void wi_record(void *h, const char *rel, const struct stat *st, const zsp_walk_entry *ents, size_t n,
		      bool any)
{
	walk *w = h;
	size_t rl = strlen(rel);
	if (rl > UINT32_MAX || n > UINT32_MAX)
		return;
	/* a directory the walk wrote while it was being read is kept, and found racy next time */
	w->dirs++;
	put(w, rl, 4);
	put_bytes(w, rel, rl);
	put(w, (uint64_t)st->st_dev, 8);
	put(w, (uint64_t)st->st_ino, 8);
	put(w, (uint64_t)st->st_ctim.tv_sec, 8);
	put(w, (uint64_t)st->st_ctim.tv_nsec, 8);
	put(w, any, 1);
	size_t at = w->len;
	put(w, 0, 4);
	uint32_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		size_t nl = strlen(ents[i].name);
		if (nl > UINT16_MAX)
			continue;   /* over NAME_MAX: no file system has one; not kept, so not reused */
		put(w, ents[i].type, 1);
		put(w, nl, 2);
		put_bytes(w, ents[i].name, nl);
		kept++;
	}
	if (!w->oom) {
		for (size_t i = 0; i < 4; i++)
			w->out[at + i] = (unsigned char)(kept >> (8 * i));
		if (kept != n)
			w->oom = true;   /* an entry left out: this index must not be written */
	}
}

static bool wi_lookup(void *h, const char *rel, const struct stat *st, const zsp_walk_entry **ents, size_t *n,
		      bool *any)
{
	walk *w = h;
	zsp_walkindex_dir key = { .rel = rel };
	const zsp_walkindex_dir *d = w->old.ndirs ? bsearch(&key, w->old.dirs, w->old.ndirs, sizeof(key), dir_cmp)
						  : NULL;
	if (!d || d->dev != (uint64_t)st->st_dev || d->ino != (uint64_t)st->st_ino ||
	    d->ctime_sec != (int64_t)st->st_ctim.tv_sec || d->ctime_nsec != (int64_t)st->st_ctim.tv_nsec)
		return false;
	/* racy: changed in the same tick as (or after) the walk that recorded it, or a clock that went
	 * back; either way it is read again */
	if (d->ctime_sec >= w->old.since - RACY_SEC || d->ctime_sec > (int64_t)w->start.tv_sec)
		return false;
	*ents = d->ents;
	*n = d->nents;
	*any = d->any;
	w->reused++;
	wi_record(w, rel, st, d->ents, d->nents, d->any);
	return true;
}

/* The second thread: the known directories' lstats, from the last in the index's order (the
 * walk goes from the first), each taken by whichever thread claims it first. */
static void *stat_ahead(void *arg)
{
	walk *w = arg;
	for (size_t i = w->old.ndirs; i-- > 0 && !atomic_load_explicit(&w->stop, memory_order_relaxed);) {
		unsigned char untaken = 0;
		const char *rel = w->old.dirs[i].rel;
		if (!rel[0] || !atomic_compare_exchange_strong(&w->ahead[i].state, &untaken, 1))
			continue;
		ahead *a = &w->ahead[i];
		a->err = fstatat(w->aheadfd, rel + 1, &a->st, AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
		atomic_store_explicit(&a->state, 2, memory_order_release);
	}
	return NULL;
}

/* The second thread, started at a walk's first lstat when the index knows enough directories
 * for it to pay; without it (too few, no memory, no thread) each lstat is the caller's own. */
static void start_ahead(walk *w, int rootfd)
{
	w->ahead_tried = true;
	w->aheadfd = -1;
	if (w->old.ndirs < AHEAD_MIN || !(w->ahead = calloc(w->old.ndirs, sizeof(*w->ahead))))
		return;
	if ((w->aheadfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3)) < 0 ||
	    pthread_create(&w->thread, NULL, stat_ahead, w) != 0) {
		if (w->aheadfd >= 0)
			close(w->aheadfd);
		w->aheadfd = -1;
		free(w->ahead);
		w->ahead = NULL;
	}
}

static void stop_ahead(walk *w)
{
	if (!w->ahead)
		return;
	atomic_store(&w->stop, true);
	pthread_join(w->thread, NULL);
	close(w->aheadfd);
	free(w->ahead);
	w->ahead = NULL;
}

/* fstatat(rootfd, rel + 1, st, AT_SYMLINK_NOFOLLOW), or the same call's answer taken ahead by
 * the second thread. A walk runs when only the host's own programs change the tree (before the
 * sandbox starts, after it has ended), so an lstat taken a moment earlier is as good as one
 * taken now: the walk could as well have reached the directory sooner. On this 2-core machine a
 * directory's lstat (2.2 µs, three components) was most of a walk's cost (bench/README.md). */
static int wi_stat(void *h, int rootfd, const char *rel, struct stat *st)
{
	walk *w = h;
	if (!w->ahead_tried)
		start_ahead(w, rootfd);
	zsp_walkindex_dir key = { .rel = rel };
	const zsp_walkindex_dir *d = w->ahead ? bsearch(&key, w->old.dirs, w->old.ndirs, sizeof(key), dir_cmp) : NULL;
	if (d) {
		ahead *a = &w->ahead[d - w->old.dirs];
		unsigned char untaken = 0;
		if (!atomic_compare_exchange_strong(&a->state, &untaken, 1)) {
			while (atomic_load_explicit(&a->state, memory_order_acquire) != 2)
				sched_yield();
			*st = a->st;
			errno = a->err;
			return a->err ? -1 : 0;
		}
	}
	return fstatat(rootfd, rel + 1, st, AT_SYMLINK_NOFOLLOW);
}

static void wi_close(void *h, bool complete)
{
	walk *w = h;
	provider *pv = w->pv;
	stop_ahead(w);
	/* every directory of the index found unchanged, and no other: the file on disk says
	 * exactly what a new one would (its since, older, only makes fewer directories racy than
	 * a new one's would), so it is not written again */
	bool same = w->reused == w->dirs && w->dirs == w->old.ndirs && w->old.ndirs;
	if (complete && !w->oom && same && pv->notes)
		fprintf(pv->notes, "zsp-run: note: %s %s: %zu of %zu directories unchanged, not read again "
			"(the index stays as it was)\n", w->name, w->path, w->dirs, w->dirs);
	if (complete && !w->oom && !same && pv->readonly && pv->notes)
		fprintf(pv->notes, "zsp-run: note: %s %s: %zu of %zu directories unchanged, not read again "
			"(--print: the index is not written)\n", w->name, w->path, w->reused, w->dirs);
	if (complete && !w->oom && !same && !pv->readonly) {
		unsigned char head[ZSP_WALKINDEX_HEADER];
		zsp_walkindex_seal(head, w->scope, (uint32_t)geteuid(), (int64_t)w->start.tv_sec, w->out, w->len);
		char tmp[sizeof(w->path) + 16];
		snprintf(tmp, sizeof(tmp), "%s.XXXXXX", w->path);
		int fd = mkostemp(tmp, O_CLOEXEC);
		bool ok = fd >= 0;
		if (ok) {
			FILE *f = fdopen(fd, "w");
			ok = f && fwrite(head, 1, sizeof(head), f) == sizeof(head) &&
			     (!w->len || fwrite(w->out, 1, w->len, f) == w->len);
			ok = f ? fclose(f) == 0 && ok : (close(fd), false);
			ok = ok && rename(tmp, w->path) == 0;
			if (!ok)
				unlink(tmp);
		}
		if (!ok)
			note(pv, w->name, "cannot be written to", w->path, strerror(errno));
		else if (pv->notes)
			fprintf(pv->notes, "zsp-run: note: %s %s: %zu of %zu directories unchanged, "
				"not read again\n", w->name, w->path, w->reused, w->dirs);
	}
	zsp_walkindex_data_free(&w->old);
	free(w->out);
	free(w);
}

zsp_walk_index *zsp_walkindex_new(const char *state_dir, FILE *notes)
{
	provider *pv = calloc(1, sizeof(*pv));
	if (!pv || asprintf(&pv->dir, "%s/walk", state_dir) < 0) {
		free(pv);
		return NULL;
	}
	pv->notes = notes;
	pv->ix = (zsp_walk_index){ pv, wi_open, wi_lookup, wi_record, wi_close, wi_stat };
	return &pv->ix;
}

zsp_walk_index *zsp_walkindex_new_readonly(const char *state_dir, FILE *notes)
{
	zsp_walk_index *ix = zsp_walkindex_new(state_dir, notes);
	if (ix)
		((provider *)ix->ctx)->readonly = true;
	return ix;
}

void zsp_walkindex_free(zsp_walk_index *ix)
{
	if (!ix)
		return;
	provider *pv = ix->ctx;
	free(pv->dir);
	free(pv);
}
