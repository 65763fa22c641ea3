/* store.c: the grant store and the audit trail in SQLite (store.h, doc/store.md): checked files
 * and directories, versioned schema, WAL, one transaction per call, once-grants consumed once. */
#include "config.h"

#include "compiler/path.h"
#include "lang/err.h"
#include "runtime/store.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "compiler/regex.h"
#include "compiler/zsp.h"

/* Thread grants get ids from here up, so one id names one grant across both databases. */
#define THREAD_ID_BASE (INT64_C(1) << 40)
#define BUSY_TIMEOUT_MS 5000
#define MAX_FIELD 4096
#define REGEX_CACHE 4096
#define REGEX_PROBE 8

enum stmt_id {
	ST_BEGIN_READ,
	ST_BEGIN_WRITE,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_INSERT,
	ST_DELETE,
	ST_DELETE_THREAD,
	ST_GC,
	ST_LIST,
	ST_KEY,
	ST_PREFIX,
	ST_AUDIT,
	ST_AUDIT_LIST,
	ST_COUNT
};

static const char *const stmt_sql[ST_COUNT] = {
	[ST_BEGIN_READ] = "BEGIN",
	[ST_BEGIN_WRITE] = "BEGIN IMMEDIATE",
	[ST_COMMIT] = "COMMIT",
	[ST_ROLLBACK] = "ROLLBACK",
	[ST_INSERT] = "INSERT INTO grants(scope, thread, project, tool, matcher, pattern, decision,"
		      " policy, who, created, expires) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
	[ST_DELETE] = "DELETE FROM grants WHERE id = ?1",
	[ST_DELETE_THREAD] = "DELETE FROM grants WHERE thread = ?1 AND scope IN (0, 1)",
	[ST_GC] = "DELETE FROM grants WHERE expires <> 0 AND expires <= ?1",
	[ST_LIST] = "SELECT id, scope, thread, project, tool, matcher, pattern, decision, policy, who,"
		    " created, expires FROM grants ORDER BY id",
	/* the grants that can apply to this thread and project, for one (matcher, pattern) key */
	[ST_KEY] = "SELECT id, scope, decision FROM grants WHERE tool = ?1 AND matcher = ?2 AND"
		   " pattern = ?3 AND (expires = 0 OR expires > ?4) AND (scope = 3 OR"
		   " (scope = 2 AND project = ?5) OR (scope = 1 AND thread = ?6) OR"
		   " (scope = 0 AND (thread IS NULL OR thread = ?6)))",
	[ST_PREFIX] = "SELECT id, scope, decision, pattern FROM grants WHERE tool = ?1 AND matcher = 1"
		      " AND (expires = 0 OR expires > ?2) AND (scope = 3 OR (scope = 2 AND project = ?3)"
		      " OR (scope = 1 AND thread = ?4) OR (scope = 0 AND (thread IS NULL OR thread = ?4)))",
	[ST_AUDIT] = "INSERT INTO audit(time, request, decision, reason, rule, policy, policy_hash,"
		     " thread, project, who) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
	[ST_AUDIT_LIST] = "SELECT time, request, decision, reason, rule, policy, policy_hash, thread,"
			  " project, who FROM audit WHERE time >= ?1 ORDER BY id",
};

/* Schema version N is reached by running migrations[N-1] on version N-1. Never edit one that
 * shipped: add the next. */
static const char *const migrations[] = {
	"CREATE TABLE grants(id INTEGER PRIMARY KEY AUTOINCREMENT,"
	" scope INTEGER NOT NULL CHECK (scope BETWEEN 0 AND 3), thread TEXT, project TEXT,"
	" tool TEXT NOT NULL, matcher INTEGER NOT NULL CHECK (matcher BETWEEN 0 AND 3),"
	" pattern TEXT NOT NULL, decision INTEGER NOT NULL CHECK (decision IN (0, 1)),"
	" policy TEXT, who TEXT, created INTEGER NOT NULL, expires INTEGER NOT NULL DEFAULT 0);"
	"CREATE INDEX grants_key ON grants(tool, matcher, pattern);"
	"CREATE INDEX grants_thread ON grants(thread) WHERE thread IS NOT NULL;"
	"CREATE INDEX grants_expires ON grants(expires) WHERE expires <> 0;",
	"CREATE TABLE audit(id INTEGER PRIMARY KEY, time INTEGER NOT NULL, request TEXT NOT NULL,"
	" decision INTEGER NOT NULL, reason TEXT, rule TEXT, policy TEXT, policy_hash TEXT,"
	" thread TEXT, project TEXT, who TEXT);"
	"CREATE INDEX audit_time ON audit(time);",
};
#define SCHEMA_VERSION ((int)(sizeof migrations / sizeof migrations[0]))

/* A decision on disk, in grants and audit alike, keeps the numbers the first schema wrote:
 * 0 allow, 1 deny, 2 ask (audit only). enum zsp_answer has others (0 is no answer there), so
 * these two functions are the only place either meets the other, and databases stay readable
 * by zsp of both numberings. */
enum { DISK_ALLOW = 0, DISK_DENY = 1, DISK_ASK = 2 };

/* The disk code of answer, or -1 for a number that is no answer. */
static int disk_decision(int answer)
{
	switch (answer) {
	case ZSP_ANSWER_ALLOW: return DISK_ALLOW;
	case ZSP_ANSWER_DENY: return DISK_DENY;
	case ZSP_ANSWER_ASK: return DISK_ASK;
	default: return -1;
	}
}

/* The answer a disk code stands for. */
static int answer_of_disk(int code)
{
	switch (code) {
	case DISK_ALLOW: return ZSP_ANSWER_ALLOW;
	case DISK_ASK: return ZSP_ANSWER_ASK;
	default: return ZSP_ANSWER_DENY;   /* DISK_DENY, and a code this zsp does not know */
	}
}

typedef struct store_db {
	sqlite3 *db;
	char *path;             /* for messages; ":memory:" for an in-memory one */
	bool on_tmpfs;          /* threads.db or memory: never synced */
	bool synced;            /* the current synchronous level is FULL */
	sqlite3_stmt *st[ST_COUNT];
} store_db;

struct regex_slot {
	char *pattern;
	zsp_regex *re;
};

struct zsp_store {
	store_db grants;
	store_db threads;       /* threads.db or :memory:; db NULL when there is no runtime dir */
	char *threads_missing;  /* why there is no thread database, for the refusal */
	struct regex_slot *regex;  /* REGEX_CACHE slots */
};

/* Internal helpers, like the public calls, return an enum zsp_status (store.h): fail() fills
 * err and returns ZSP_EIO (a database or file failure), refuse() ZSP_EUSAGE (what the caller
 * gave is refused), no_memory() ZSP_EINTERNAL. */
static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = zsp_verr(err, errlen, ZSP_EIO, fmt, ap);
	va_end(ap);
	return rc;
}

static int refuse(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = zsp_verr(err, errlen, ZSP_EUSAGE, fmt, ap);
	va_end(ap);
	return rc;
}

static int no_memory(char *err, size_t errlen)
{
	return zsp_err(err, errlen, ZSP_EINTERNAL, "out of memory");
}

/* A one-line reason for an SQLite failure on d, with what to do about it. */
static int db_fail(const store_db *d, int rc, char *err, size_t errlen)
{
	int code = rc & 0xff;
	const char *msg = d->db ? sqlite3_errmsg(d->db) : sqlite3_errstr(rc);

	if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB)
		return fail(err, errlen, "%s: corrupt or not a zsp grant database (%s); move it aside "
			    "and retry (its grants are lost; decisions fall back to the policy)",
			    d->path, msg);
	if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
		return fail(err, errlen, "%s: database is locked (another process held it for more "
			    "than %d ms); retry", d->path, BUSY_TIMEOUT_MS);
	if (code == SQLITE_READONLY || code == SQLITE_CANTOPEN || code == SQLITE_PERM)
		return fail(err, errlen, "%s: %s; make the file and its directory readable and "
			    "writable by you (chmod 600 file, chmod 700 directory)", d->path, msg);
	return fail(err, errlen, "%s: %s", d->path, msg);
}

static sqlite3_stmt *stmt(store_db *d, enum stmt_id id, char *err, size_t errlen)
{
	if (!d->st[id]) {
		int rc = sqlite3_prepare_v3(d->db, stmt_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
					    &d->st[id], NULL);
		if (rc != SQLITE_OK) {
			db_fail(d, rc, err, errlen);
			return NULL;
		}
	}
	sqlite3_reset(d->st[id]);
	sqlite3_clear_bindings(d->st[id]);
	return d->st[id];
}

/* Runs a statement that returns no rows (BEGIN, COMMIT, ...). */
static int exec_stmt(store_db *d, enum stmt_id id, char *err, size_t errlen)
{
	sqlite3_stmt *s = stmt(d, id, err, errlen);
	if (!s)
		return ZSP_EIO;
	int rc = sqlite3_step(s);
	sqlite3_reset(s);
	return rc == SQLITE_DONE ? ZSP_OK : db_fail(d, rc, err, errlen);
}

/* Commits that take a permission away (a revocation, a consumed once grant, a deny grant)
 * are synced to disk (FULL): a power cut must not bring an allow back. Those that add one, and
 * the audit, use NORMAL: WAL keeps them atomic and safe from crashes, a power cut may lose the
 * last few, and a lost grant only means asking again. */
static int set_sync(store_db *d, bool full, char *err, size_t errlen)
{
	if (d->on_tmpfs || d->synced == full)
		return ZSP_OK;
	int rc = sqlite3_exec(d->db, full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
			      NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return db_fail(d, rc, err, errlen);
	d->synced = full;
	return ZSP_OK;
}

static void rollback(store_db *d)
{
	if (!sqlite3_get_autocommit(d->db))
		exec_stmt(d, ST_ROLLBACK, NULL, 0);
}

static int bind_text(sqlite3_stmt *s, int i, const char *v)
{
	return v ? sqlite3_bind_text(s, i, v, -1, SQLITE_STATIC) : sqlite3_bind_null(s, i);
}

/* ---- files and directories ------------------------------------------------------------------ */

/* Refuses what another user could have written: not ours, or writable by group or others. */
static int check_owner_mode(const char *path, const struct stat *st, const char *what,
			    char *err, size_t errlen)
{
	uid_t me = geteuid();

	if (st->st_uid != me)
		return fail(err, errlen, "%s: %s owned by uid %u, not by you (uid %u): refusing to use "
			    "it; remove it or chown it to yourself", path, what, (unsigned)st->st_uid,
			    (unsigned)me);
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return fail(err, errlen, "%s: %s writable by group or others (mode %04o): refusing to "
			    "use it; run chmod %s %s", path, what, (unsigned)(st->st_mode & 07777),
			    S_ISDIR(st->st_mode) ? "700" : "600", path);
	return ZSP_OK;
}

/* Creates dir 0700 if missing (parents too when parents), then checks it: a real directory
 * (not a symlink), ours, not writable by others, writable by us. *st gets its identity. */
static int check_dir(const char *dir, bool parents, struct stat *st, char *err, size_t errlen)
{
	if (parents) {
		char buf[PATH_MAX];
		if (strlen(dir) >= sizeof buf)
			return fail(err, errlen, "%s: path too long", dir);
		strcpy(buf, dir);
		for (char *p = buf + 1; *p; p++) {
			if (*p != '/')
				continue;
			*p = '\0';
			if (mkdir(buf, 0700) != 0 && errno != EEXIST)
				return fail(err, errlen, "cannot create directory %s: %s", buf,
					    strerror(errno));
			*p = '/';
		}
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return fail(err, errlen, "cannot create directory %s: %s; create it (mode 700) or "
			    "choose another directory", dir, strerror(errno));
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			return fail(err, errlen, "%s: a symbolic link or not a directory: refusing to "
				    "use it; replace it with a directory of mode 700", dir);
		return fail(err, errlen, "cannot open directory %s: %s", dir, strerror(errno));
	}
	int rc = ZSP_OK;
	if (fstat(fd, st) != 0)
		rc = fail(err, errlen, "cannot stat %s: %s", dir, strerror(errno));
	else if ((rc = check_owner_mode(dir, st, "directory", err, errlen)) == ZSP_OK &&
		 faccessat(fd, ".", W_OK | X_OK, AT_EACCESS) != 0)
		rc = fail(err, errlen, "%s: directory not writable (%s): the grant database needs "
			  "it for its journal; run chmod 700 %s", dir, strerror(errno), dir);
	close(fd);
	return rc;
}

/* Checks (creating it 0600 when missing) a database file or one of its -wal/-shm companions:
 * a regular file, not a symlink, ours, not writable by others. Without create, a missing file
 * is fine: ZSP_OK with nothing checked. */
static int check_file(const char *path, bool create, struct stat *st, char *err, size_t errlen)
{
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | (create ? O_CREAT : 0), 0600);
	if (fd < 0) {
		if (!create && errno == ENOENT)
			return ZSP_OK;
		if (errno == ELOOP)
			return fail(err, errlen, "%s: a symbolic link: refusing to use it; remove it",
				    path);
		return fail(err, errlen, "cannot open %s: %s; it must be a file of yours, mode 600",
			    path, strerror(errno));
	}
	int rc = ZSP_OK;
	if (fstat(fd, st) != 0)
		rc = fail(err, errlen, "cannot stat %s: %s", path, strerror(errno));
	else if (!S_ISREG(st->st_mode))
		rc = fail(err, errlen, "%s: not a regular file: refusing to use it", path);
	else
		rc = check_owner_mode(path, st, "file", err, errlen);
	close(fd);
	return rc;
}

/* After sqlite opened path: it is still the file we checked, in the directory we checked. */
static int recheck(const char *dir, const struct stat *dst, const char *path,
		   const struct stat *fst, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(dir, &st) != 0 || st.st_dev != dst->st_dev || st.st_ino != dst->st_ino ||
	    check_owner_mode(dir, &st, "directory", err, errlen) != ZSP_OK)
		return fail(err, errlen, "%s: the directory changed while it was being opened: "
			    "refusing to use it", dir);
	if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != fst->st_dev ||
	    st.st_ino != fst->st_ino || check_owner_mode(path, &st, "file", err, errlen) != ZSP_OK)
		return fail(err, errlen, "%s: the file changed while it was being opened: refusing "
			    "to use it", path);
	return ZSP_OK;
}

/* ---- opening and migrating ------------------------------------------------------------------ */

static int pragma(store_db *d, const char *sql, char *err, size_t errlen)
{
	int rc;

	/* journal_mode can meet SQLITE_BUSY before the busy handler applies: retry a while */
	for (int tries = 0;; tries++) {
		rc = sqlite3_exec(d->db, sql, NULL, NULL, NULL);
		if ((rc & 0xff) != SQLITE_BUSY || tries >= BUSY_TIMEOUT_MS / 10)
			break;
		usleep(10000);
	}
	return rc == SQLITE_OK ? ZSP_OK : db_fail(d, rc, err, errlen);
}

static int user_version(store_db *d, int *v, char *err, size_t errlen)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(d->db, "PRAGMA user_version", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return db_fail(d, rc, err, errlen);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? ZSP_OK : db_fail(d, rc, err, errlen);
}

/* quick_check reads every page: corruption shows at open, not in the middle of a decision. */
static int quick_check(store_db *d, char *err, size_t errlen)
{
	sqlite3_stmt *s;
	int rc = sqlite3_prepare_v2(d->db, "PRAGMA quick_check(1)", -1, &s, NULL);
	if (rc != SQLITE_OK)
		return db_fail(d, rc, err, errlen);
	rc = sqlite3_step(s);
	int ret = ZSP_OK;
	if (rc != SQLITE_ROW)
		ret = db_fail(d, rc, err, errlen);
	else if (strcmp((const char *)sqlite3_column_text(s, 0), "ok") != 0)
		ret = fail(err, errlen, "%s: corrupt (%s); move it aside and retry (its grants are "
			   "lost; decisions fall back to the policy)", d->path,
			   (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return ret;
}

/* Brings the schema to SCHEMA_VERSION in one write transaction (concurrent openers wait). */
static int migrate(store_db *d, bool threads, char *err, size_t errlen)
{
	int v;
	int rc = user_version(d, &v, err, errlen);

	if (rc != ZSP_OK)
		return rc;
	if (v == SCHEMA_VERSION)
		return ZSP_OK;
	if ((rc = exec_stmt(d, ST_BEGIN_WRITE, err, errlen)) != ZSP_OK)
		return rc;
	if (user_version(d, &v, err, errlen) != ZSP_OK)
		goto out;
	if (v > SCHEMA_VERSION) {
		fail(err, errlen, "%s: written by a newer zsp (schema %d; this zsp knows "
		     "%d): upgrade zsp", d->path, v, SCHEMA_VERSION);
		goto out;
	}
	for (; v < SCHEMA_VERSION; v++) {
		int src = sqlite3_exec(d->db, migrations[v], NULL, NULL, NULL);
		if (src != SQLITE_OK) {
			db_fail(d, src, err, errlen);
			goto out;
		}
		if (v == 0 && threads) {
			char sql[128];
			snprintf(sql, sizeof sql, "INSERT INTO sqlite_sequence(name, seq) VALUES "
				 "('grants', %" PRId64 ")", THREAD_ID_BASE);
			src = sqlite3_exec(d->db, sql, NULL, NULL, NULL);
			if (src != SQLITE_OK) {
				db_fail(d, src, err, errlen);
				goto out;
			}
		}
	}
	char sql[64];
	snprintf(sql, sizeof sql, "PRAGMA user_version = %d", SCHEMA_VERSION);
	if (sqlite3_exec(d->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
		db_fail(d, sqlite3_errcode(d->db), err, errlen);
		goto out;
	}
	return exec_stmt(d, ST_COMMIT, err, errlen);
out:
	rollback(d);
	return ZSP_EIO;
}

static void db_close(store_db *d)
{
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(d->st[i]);
	sqlite3_close(d->db);
	free(d->path);
	memset(d, 0, sizeof *d);
}

/* Opens dir/name (dir NULL: in memory) into d, checked, configured, migrated. */
static int db_open(store_db *d, const char *dir, const char *name, bool threads, char *err,
		   size_t errlen)
{
	struct stat dst, fst, cst;
	int rc;

	d->on_tmpfs = threads;
	if (!dir) {
		d->path = strdup(":memory:");
		if (!d->path)
			return no_memory(err, errlen);
		rc = sqlite3_open_v2(":memory:", &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
				     NULL);
		if (rc != SQLITE_OK)
			return db_fail(d, rc, err, errlen);
		return migrate(d, threads, err, errlen);
	}
	if (asprintf(&d->path, "%s/%s", dir, name) < 0) {
		d->path = NULL;
		return no_memory(err, errlen);
	}
	if ((rc = check_file(d->path, true, &fst, err, errlen)) != ZSP_OK)
		return rc;
	for (int i = 0; i < 2; i++) {
		char companion[PATH_MAX];
		snprintf(companion, sizeof companion, "%s%s", d->path, i ? "-shm" : "-wal");
		if ((rc = check_file(companion, false, &cst, err, errlen)) != ZSP_OK)
			return rc;
	}
	rc = sqlite3_open_v2(d->path, &d->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW,
			     NULL);
	if (rc != SQLITE_OK)
		return db_fail(d, rc, err, errlen);
	if ((rc = check_dir(dir, false, &dst, err, errlen)) != ZSP_OK ||
	    (rc = recheck(dir, &dst, d->path, &fst, err, errlen)) != ZSP_OK)
		return rc;
	sqlite3_busy_timeout(d->db, BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(d->db, 1);
	if ((rc = quick_check(d, err, errlen)) != ZSP_OK ||
	    (rc = pragma(d, "PRAGMA journal_mode = WAL", err, errlen)) != ZSP_OK ||
	    (rc = pragma(d, "PRAGMA synchronous = NORMAL", err, errlen)) != ZSP_OK ||
	    (rc = pragma(d, "PRAGMA foreign_keys = ON", err, errlen)) != ZSP_OK)
		return rc;
	return migrate(d, threads, err, errlen);
}

/* $VAR/zsp if $VAR is an absolute path, else NULL; the caller frees. */
static char *env_dir(const char *var, const char *fallback_rel)
{
	const char *v = getenv(var);
	char *out = NULL;

	if (v && v[0] == '/') {
		if (asprintf(&out, "%s/zsp", v) < 0)
			return NULL;
		return out;
	}
	if (!fallback_rel)
		return NULL;
	const char *home = getenv("HOME");
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(geteuid());
		home = pw ? pw->pw_dir : NULL;
	}
	if (!home || home[0] != '/')
		return NULL;
	if (asprintf(&out, "%s/%s", home, fallback_rel) < 0)
		return NULL;
	return out;
}

char *zsp_state_dir(const char *given)
{
	return given ? strdup(given) : env_dir("XDG_STATE_HOME", ".local/state/zsp");
}

int zsp_store_open(const zsp_store_where *where, zsp_store **out, char *err, size_t errlen)
{
	zsp_store_where none = { 0 };
	char *state = NULL, *runtime = NULL;
	struct stat st;
	int rc;

	*out = NULL;
	if (!where)
		where = &none;
	zsp_store *s = calloc(1, sizeof *s);
	if (s)
		s->regex = calloc(REGEX_CACHE, sizeof *s->regex);
	if (!s || !s->regex) {
		free(s);
		return no_memory(err, errlen);
	}
	state = zsp_state_dir(where->state_dir);
	if (!state) {
		rc = fail(err, errlen, "no state directory for the grant database: set "
			  "XDG_STATE_HOME or HOME to an absolute path");
		goto bad;
	}
	if ((rc = check_dir(state, true, &st, err, errlen)) != ZSP_OK ||
	    (rc = db_open(&s->grants, state, "grants.db", false, err, errlen)) != ZSP_OK)
		goto bad;

	if (where->threads_in_memory) {
		if ((rc = db_open(&s->threads, NULL, NULL, true, err, errlen)) != ZSP_OK)
			goto bad;
	} else {
		/* XDG_RUNTIME_DIR must exist already: it is the tmpfs; only its zsp/ is ours to make */
		runtime = where->runtime_dir ? strdup(where->runtime_dir) : env_dir("XDG_RUNTIME_DIR", NULL);
		char *parent = runtime ? strdup(runtime) : NULL;
		char *slash = parent ? strrchr(parent, '/') : NULL;
		if (slash)
			*(slash == parent ? slash + 1 : slash) = '\0';
		struct statfs fs;
		bool exists = slash && stat(parent, &st) == 0 && S_ISDIR(st.st_mode);
		/* the promise is that thread grants never reach a persistent disk: a runtime dir
		 * that is not a tmpfs (or ramfs) does not keep it */
		bool in_memory = exists && statfs(parent, &fs) == 0 &&
				 (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC);
		if (!in_memory) {
			char why[PATH_MAX + 64];
			if (exists)
				snprintf(why, sizeof why, "%s is not on a tmpfs", parent);
			else if (slash)
				snprintf(why, sizeof why, "%s does not exist", parent);
			else
				snprintf(why, sizeof why, "XDG_RUNTIME_DIR is unset or not absolute");
			if (asprintf(&s->threads_missing, "no runtime directory (%s): thread grants are "
				     "kept only there, on a tmpfs, never on disk; use a once, project or "
				     "global grant, or run in a login session that sets XDG_RUNTIME_DIR",
				     why) < 0)
				s->threads_missing = NULL;
			free(parent);
		} else {
			free(parent);
			rc = check_dir(runtime, false, &st, err, errlen);
			if (rc == ZSP_OK)
				rc = db_open(&s->threads, runtime, "threads.db", true, err, errlen);
			if (rc != ZSP_OK)
				goto bad;
		}
	}
	free(state);
	free(runtime);
	*out = s;
	return ZSP_OK;
bad:
	free(state);
	free(runtime);
	zsp_store_close(s);
	return rc;
}

void zsp_store_close(zsp_store *s)
{
	if (!s)
		return;
	db_close(&s->grants);
	db_close(&s->threads);
	free(s->threads_missing);
	for (int i = 0; i < REGEX_CACHE; i++) {
		free(s->regex[i].pattern);
		zsp_regex_free(s->regex[i].re);
	}
	free(s->regex);
	free(s);
}

const char *zsp_store_grants_path(const zsp_store *s)
{
	return s ? s->grants.path : NULL;
}

const char *zsp_store_threads_path(const zsp_store *s)
{
	return s && s->threads.db && strcmp(s->threads.path, ":memory:") != 0 ? s->threads.path : NULL;
}

/* ---- patterns ------------------------------------------------------------------------------ */

/* A host name (labels of letters, digits, '-', '_'), lowercased into out; with allow_wild a
 * leading "*." too. */
static bool host_normalize(const char *in, bool allow_wild, char *out, size_t outlen)
{
	size_t n = strlen(in);
	size_t i = 0;

	if (n && in[n - 1] == '.')
		n--;
	if (n == 0 || n > 255 || n + 1 > outlen)
		return false;
	if (allow_wild && n > 2 && in[0] == '*' && in[1] == '.') {
		out[0] = '*';
		out[1] = '.';
		i = 2;
	}
	size_t label = 0;
	for (size_t k = i; k < n; k++) {
		char c = in[k];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c == '.') {
			if (label == 0)
				return false;
			label = 0;
		} else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') {
			if (++label > 63)
				return false;
		} else {
			return false;
		}
		out[k] = c;
	}
	if (label == 0)
		return false;
	out[n] = '\0';
	return true;
}

/* The host of a URL (scheme://user@host:port/path), of host:port, of [v6]:port, or a bare host. */
static bool host_of(const char *arg, char *out, size_t outlen)
{
	const char *p = strstr(arg, "://");
	p = p ? p + 3 : arg;
	size_t end = strcspn(p, "/?#");
	const char *at = memchr(p, '@', end);
	while (at) {
		end -= (size_t)(at + 1 - p);
		p = at + 1;
		at = memchr(p, '@', end);
	}
	char buf[512];
	if (end >= sizeof buf)
		return false;
	memcpy(buf, p, end);
	buf[end] = '\0';
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');
		if (!close || (size_t)(close - buf) >= outlen)
			return false;
		*close = '\0';
		strcpy(out, buf + 1);
		return out[0] != '\0';
	}
	char *colon = strchr(buf, ':');
	if (colon)
		*colon = '\0';
	return host_normalize(buf, false, out, outlen);
}

/* The compiled regex for pattern, from a cache probed over REGEX_PROBE slots (so a few
 * thousand prefix grants stay compiled); when all are taken, one of them is replaced. */
static zsp_regex *regex_get(zsp_store *s, const char *pattern)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)pattern; *p; p++)
		h = (h ^ *p) * 16777619u;
	struct regex_slot *slot = NULL;
	for (uint32_t k = 0; k < REGEX_PROBE; k++) {
		struct regex_slot *at = &s->regex[(h + k) % REGEX_CACHE];
		if (!at->pattern) {
			slot = at;
			break;
		}
		if (strcmp(at->pattern, pattern) == 0)
			return at->re;
	}
	if (!slot)
		slot = &s->regex[(h + (h >> 16) % REGEX_PROBE) % REGEX_CACHE];
	zsp_regex *re = zsp_regex_compile(pattern, true);
	char *copy = re ? strdup(pattern) : NULL;
	if (!copy) {
		zsp_regex_free(re);
		return NULL;
	}
	free(slot->pattern);
	zsp_regex_free(slot->re);
	slot->pattern = copy;
	slot->re = re;
	return re;
}

/* ---- adding, removing, listing --------------------------------------------------------------- */

static bool field_ok(const char *v)
{
	return v && v[0] && strlen(v) <= MAX_FIELD;
}

/* Validates g; the pattern as it will be stored goes to pat. */
static int validate(const zsp_grant *g, char *pat, size_t patlen, char *err, size_t errlen)
{
	char msg[256];
	size_t off;

	if (g->scope < ZSP_GRANT_ONCE || g->scope > ZSP_GRANT_GLOBAL)
		return refuse(err, errlen, "invalid grant: unknown scope %d", (int)g->scope);
	if (g->match < ZSP_MATCH_EXACT || g->match > ZSP_MATCH_HOST)
		return refuse(err, errlen, "invalid grant: unknown matcher %d", (int)g->match);
	if (g->decision != ZSP_ANSWER_ALLOW && g->decision != ZSP_ANSWER_DENY)
		return refuse(err, errlen, "invalid grant: the decision must be allow or deny");
	if (!field_ok(g->tool))
		return refuse(err, errlen, "invalid grant: no tool (or longer than %d bytes)", MAX_FIELD);
	if (!g->pattern || strlen(g->pattern) > MAX_FIELD ||
	    (g->match != ZSP_MATCH_EXACT && !g->pattern[0]))
		return refuse(err, errlen, "invalid grant: no pattern (or longer than %d bytes)", MAX_FIELD);
	if (g->scope == ZSP_GRANT_THREAD && !field_ok(g->thread))
		return refuse(err, errlen, "invalid grant: a thread grant needs a thread ID");
	if ((g->scope == ZSP_GRANT_PROJECT || g->scope == ZSP_GRANT_GLOBAL) && g->thread)
		return refuse(err, errlen, "invalid grant: a %s grant takes no thread ID",
			      g->scope == ZSP_GRANT_PROJECT ? "project" : "global");
	if (g->thread && !field_ok(g->thread))
		return refuse(err, errlen, "invalid grant: empty or overlong thread ID");
	if (g->scope == ZSP_GRANT_PROJECT) {
		char canon[PATH_MAX];
		if (!g->project || !zsp_path_lexical(g->project, canon, sizeof canon) ||
		    strcmp(canon, g->project) != 0)
			return refuse(err, errlen, "invalid grant: a project grant needs the project's "
				      "absolute canonical directory (got %s%s%s)", g->project ? "'" : "",
				      g->project ? g->project : "none", g->project ? "'" : "");
	} else if (g->project) {
		return refuse(err, errlen, "invalid grant: only a project grant takes a project");
	}
	if (g->expires < 0 || g->created < 0)
		return refuse(err, errlen, "invalid grant: negative time");
	switch (g->match) {
	case ZSP_MATCH_EXACT:
		break;
	case ZSP_MATCH_PREFIX:
		if (!zsp_regex_check(g->pattern, true, msg, sizeof msg, &off))
			return refuse(err, errlen, "invalid grant: the pattern /%s/ does not compile: %s "
				      "(at byte %zu)", g->pattern, msg, off);
		break;
	case ZSP_MATCH_PATH:
		if (!zsp_path_lexical(g->pattern, pat, patlen))
			return refuse(err, errlen, "invalid grant: a path grant needs an absolute "
				      "directory (got '%s')", g->pattern);
		return ZSP_OK;
	case ZSP_MATCH_HOST:
		if (!host_normalize(g->pattern, true, pat, patlen))
			return refuse(err, errlen, "invalid grant: '%s' is not a host name or *.domain",
				      g->pattern);
		return ZSP_OK;
	}
	if (strlen(g->pattern) >= patlen)
		return refuse(err, errlen, "invalid grant: pattern too long");
	strcpy(pat, g->pattern);
	return ZSP_OK;
}

int zsp_store_validate(const zsp_grant *g, char *err, size_t errlen)
{
	char pat[MAX_FIELD + 2];
	if (!g)
		return refuse(err, errlen, "invalid grant: none given");
	return validate(g, pat, sizeof pat, err, errlen);
}

static int threads_refused(zsp_store *s, char *err, size_t errlen)
{
	return fail(err, errlen, "%s", s->threads_missing ? s->threads_missing :
		    "no database for thread grants");
}

/* Steps st, the one statement of a write transaction already begun, and commits; with
 * exactly_one, the statement must have changed exactly one row (else nothing is committed).
 * Rolls back and fills err on failure. sqlite3_changes() and the last rowid stay readable. */
static int step_commit(store_db *d, sqlite3_stmt *st, bool exactly_one, char *err, size_t errlen)
{
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE || (exactly_one && sqlite3_changes(d->db) != 1)) {
		db_fail(d, rc, err, errlen);
		rollback(d);
		return ZSP_EIO;
	}
	if (exec_stmt(d, ST_COMMIT, err, errlen) != ZSP_OK) {
		rollback(d);
		return ZSP_EIO;
	}
	return ZSP_OK;
}

int zsp_store_add(zsp_store *s, const zsp_grant *g, int64_t *id, char *err, size_t errlen)
{
	char pat[MAX_FIELD + 2];

	if (!s || !g)
		return refuse(err, errlen, "invalid grant: none given");
	int rc = validate(g, pat, sizeof pat, err, errlen);
	if (rc != ZSP_OK)
		return rc;
	store_db *d = &s->grants;
	if (g->scope == ZSP_GRANT_THREAD) {
		if (!s->threads.db)
			return threads_refused(s, err, errlen);
		d = &s->threads;
	}
	sqlite3_stmt *st = stmt(d, ST_INSERT, err, errlen);
	if (!st || set_sync(d, g->decision == ZSP_ANSWER_DENY, err, errlen) != ZSP_OK ||
	    exec_stmt(d, ST_BEGIN_WRITE, err, errlen) != ZSP_OK)
		return ZSP_EIO;
	sqlite3_bind_int(st, 1, (int)g->scope);
	bind_text(st, 2, g->thread);
	bind_text(st, 3, g->project);
	bind_text(st, 4, g->tool);
	sqlite3_bind_int(st, 5, (int)g->match);
	bind_text(st, 6, pat);
	sqlite3_bind_int(st, 7, disk_decision(g->decision));
	bind_text(st, 8, g->policy);
	bind_text(st, 9, g->who);
	sqlite3_bind_int64(st, 10, g->created ? g->created : (int64_t)time(NULL));
	sqlite3_bind_int64(st, 11, g->expires);
	if (step_commit(d, st, false, err, errlen) != ZSP_OK)
		return ZSP_EIO;
	if (id)
		*id = sqlite3_last_insert_rowid(d->db);
	return ZSP_OK;
}

/* Runs a DELETE (bound by bind) in its own write transaction; *changes rows went. */
static int delete_in(store_db *d, enum stmt_id which, const char *text, int64_t num, int *changes,
		     char *err, size_t errlen)
{
	sqlite3_stmt *st = stmt(d, which, err, errlen);
	if (!st || set_sync(d, which != ST_GC, err, errlen) != ZSP_OK ||
	    exec_stmt(d, ST_BEGIN_WRITE, err, errlen) != ZSP_OK)
		return ZSP_EIO;
	if (text)
		bind_text(st, 1, text);
	else
		sqlite3_bind_int64(st, 1, num);
	if (step_commit(d, st, false, err, errlen) != ZSP_OK)
		return ZSP_EIO;
	*changes = sqlite3_changes(d->db);
	return ZSP_OK;
}

int zsp_store_revoke(zsp_store *s, int64_t id, bool *found, char *err, size_t errlen)
{
	int n = 0;

	if (found)
		*found = false;
	if (!s)
		return refuse(err, errlen, "no grant store");
	store_db *d = id >= THREAD_ID_BASE ? &s->threads : &s->grants;
	if (!d->db)
		return ZSP_OK;
	int rc = delete_in(d, ST_DELETE, NULL, id, &n, err, errlen);
	if (rc != ZSP_OK)
		return rc;
	if (found)
		*found = n > 0;
	return ZSP_OK;
}

int zsp_store_end_thread(zsp_store *s, const char *thread, int *removed, char *err, size_t errlen)
{
	int a = 0, b = 0;

	if (removed)
		*removed = 0;
	if (!s || !field_ok(thread))
		return refuse(err, errlen, "ending a thread needs its thread ID");
	if (delete_in(&s->grants, ST_DELETE_THREAD, thread, 0, &a, err, errlen) != ZSP_OK)
		return ZSP_EIO;
	if (s->threads.db && delete_in(&s->threads, ST_DELETE_THREAD, thread, 0, &b, err, errlen) != ZSP_OK)
		return ZSP_EIO;
	if (removed)
		*removed = a + b;
	return ZSP_OK;
}

int zsp_store_gc(zsp_store *s, int64_t now, int *removed, char *err, size_t errlen)
{
	int a = 0, b = 0;

	if (removed)
		*removed = 0;
	if (!s)
		return refuse(err, errlen, "no grant store");
	if (delete_in(&s->grants, ST_GC, NULL, now, &a, err, errlen) != ZSP_OK)
		return ZSP_EIO;
	if (s->threads.db && delete_in(&s->threads, ST_GC, NULL, now, &b, err, errlen) != ZSP_OK)
		return ZSP_EIO;
	if (removed)
		*removed = a + b;
	return ZSP_OK;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/* Lists d's grants to fn; *stopped when fn asked to stop. */
static int list_in(store_db *d, int (*fn)(void *, const zsp_grant *), void *ctx, bool *stopped,
		   char *err, size_t errlen)
{
	sqlite3_stmt *st = stmt(d, ST_LIST, err, errlen);
	if (!st || exec_stmt(d, ST_BEGIN_READ, err, errlen) != ZSP_OK)
		return ZSP_EIO;
	int rc, ret = ZSP_OK;
	*stopped = false;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		zsp_grant g = {
			.id = sqlite3_column_int64(st, 0),
			.scope = (zsp_grant_scope)sqlite3_column_int(st, 1),
			.thread = col_text(st, 2),
			.project = col_text(st, 3),
			.tool = col_text(st, 4),
			.match = (zsp_grant_match)sqlite3_column_int(st, 5),
			.pattern = col_text(st, 6),
			.decision = answer_of_disk(sqlite3_column_int(st, 7)),
			.policy = col_text(st, 8),
			.who = col_text(st, 9),
			.created = sqlite3_column_int64(st, 10),
			.expires = sqlite3_column_int64(st, 11),
		};
		if (fn(ctx, &g) != 0) {
			*stopped = true;
			break;
		}
	}
	if (!*stopped && rc != SQLITE_DONE)
		ret = db_fail(d, rc, err, errlen);
	sqlite3_reset(st);
	rollback(d);
	return ret;
}

int zsp_store_list(zsp_store *s, int (*fn)(void *ctx, const zsp_grant *g), void *ctx, char *err,
		   size_t errlen)
{
	if (!s || !fn)
		return refuse(err, errlen, "no grant store or callback");
	bool stopped;
	int rc = list_in(&s->grants, fn, ctx, &stopped, err, errlen);
	if (rc == ZSP_OK && !stopped && s->threads.db)
		rc = list_in(&s->threads, fn, ctx, &stopped, err, errlen);
	return rc;
}

/* ---- lookup --------------------------------------------------------------------------------- */

struct best {
	int64_t id;
	int scope;              /* -1: none yet */
};

enum { PICK_ALLOW, PICK_DENY };

struct lookup {
	const char *tool, *thread, *project;
	int64_t now;
	struct best pick[2];    /* [PICK_ALLOW], [PICK_DENY] */
};

/* Keeps the narrowest scope, then the oldest grant; what is not an allow counts as a deny. */
static void consider(struct lookup *l, int64_t id, int scope, int decision)
{
	struct best *b = &l->pick[decision == ZSP_ANSWER_ALLOW ? PICK_ALLOW : PICK_DENY];
	if (b->scope < 0 || scope < b->scope || (scope == b->scope && id < b->id)) {
		b->id = id;
		b->scope = scope;
	}
}

static int lookup_key(store_db *d, struct lookup *l, int match, const char *key, char *err,
		      size_t errlen)
{
	sqlite3_stmt *st = stmt(d, ST_KEY, err, errlen);
	if (!st)
		return ZSP_EIO;
	bind_text(st, 1, l->tool);
	sqlite3_bind_int(st, 2, match);
	bind_text(st, 3, key);
	sqlite3_bind_int64(st, 4, l->now);
	bind_text(st, 5, l->project);
	bind_text(st, 6, l->thread);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		consider(l, sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1),
			 answer_of_disk(sqlite3_column_int(st, 2)));
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? ZSP_OK : db_fail(d, rc, err, errlen);
}

/* Every grant of d that answers `tool arg`, into l. */
static int lookup_in(zsp_store *s, store_db *d, struct lookup *l, const char *arg, char *err,
		     size_t errlen)
{
	char buf[PATH_MAX];

	if (lookup_key(d, l, ZSP_MATCH_EXACT, arg, err, errlen) != ZSP_OK)
		return ZSP_EIO;
	/* a path grant: the path or one of its ancestors */
	if (zsp_path_lexical(arg, buf, sizeof buf)) {
		size_t n = strlen(buf);
		for (;;) {
			if (lookup_key(d, l, ZSP_MATCH_PATH, buf, err, errlen) != ZSP_OK)
				return ZSP_EIO;
			if (n == 1)
				break;
			while (n > 1 && buf[n - 1] != '/')
				n--;
			buf[n > 1 ? n - 1 : 1] = '\0';
			n = strlen(buf);
		}
	}
	/* a host grant: the host, or *. and one of its strict parent domains */
	if (host_of(arg, buf, sizeof buf - 2)) {
		if (lookup_key(d, l, ZSP_MATCH_HOST, buf, err, errlen) != ZSP_OK)
			return ZSP_EIO;
		for (char *dot = strchr(buf, '.'); dot; dot = strchr(dot + 1, '.')) {
			char wild[PATH_MAX];
			snprintf(wild, sizeof wild, "*%s", dot);
			if (lookup_key(d, l, ZSP_MATCH_HOST, wild, err, errlen) != ZSP_OK)
				return ZSP_EIO;
		}
	}
	sqlite3_stmt *st = stmt(d, ST_PREFIX, err, errlen);
	if (!st)
		return ZSP_EIO;
	bind_text(st, 1, l->tool);
	sqlite3_bind_int64(st, 2, l->now);
	bind_text(st, 3, l->project);
	bind_text(st, 4, l->thread);
	int rc;
	size_t arglen = strlen(arg);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int decision = answer_of_disk(sqlite3_column_int(st, 2));
		zsp_regex *re = regex_get(s, col_text(st, 3));
		bool hit = false;
		int searched = re ? zsp_regex_search(re, arg, arglen, &hit) : ZSP_EINTERNAL;
		/* a search that fails counts for a deny grant, never for an allow grant */
		if ((searched == ZSP_OK && hit) || (searched != ZSP_OK && decision != ZSP_ANSWER_ALLOW))
			consider(l, sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1), decision);
	}
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? ZSP_OK : db_fail(d, rc, err, errlen);
}

/* The picks for one argument, from the thread database and the grants database. */
static int lookup_arg(zsp_store *s, struct lookup *l, const char *arg, char *err, size_t errlen)
{
	l->pick[PICK_ALLOW].scope = l->pick[PICK_DENY].scope = -1;
	if (l->thread && s->threads.db) {
		if (exec_stmt(&s->threads, ST_BEGIN_READ, err, errlen) != ZSP_OK)
			return ZSP_EIO;
		int rc = lookup_in(s, &s->threads, l, arg, err, errlen);
		rollback(&s->threads);
		if (rc != ZSP_OK)
			return ZSP_EIO;
	}
	return lookup_in(s, &s->grants, l, arg, err, errlen);
}

int zsp_store_lookup_all(zsp_store *s, const char *tool, const char *const *args, size_t nargs,
			 const char *thread, const char *project, int64_t now, bool *found,
			 int *decision, int64_t *id, char *err, size_t errlen)
{
	*found = false;
	if (!s || !field_ok(tool) || !args || nargs == 0 || nargs > ZSP_LOOKUP_MAX_ARGS)
		return refuse(err, errlen, "grant lookup: no store, no tool or no argument");
	if (thread && !thread[0])
		thread = NULL;
	if (project && !project[0])
		project = NULL;

	struct lookup l = { .tool = tool, .thread = thread, .project = project, .now = now };
	store_db *d = &s->grants;
	/* First a read transaction; only when once grants would answer, again under the write lock,
	 * where they are deleted before anyone else can see them. */
	for (int write = 0; write < 2; write++) {
		if ((write && set_sync(d, true, err, errlen) != ZSP_OK) ||
		    exec_stmt(d, write ? ST_BEGIN_WRITE : ST_BEGIN_READ, err, errlen) != ZSP_OK)
			return ZSP_EIO;
		struct best allow[ZSP_LOOKUP_MAX_ARGS], deny = { 0, -1 };
		bool all_allow = true;
		for (size_t i = 0; i < nargs; i++) {
			if (lookup_arg(s, &l, args[i] ? args[i] : "", err, errlen) != ZSP_OK) {
				rollback(d);
				return ZSP_EIO;
			}
			allow[i] = l.pick[PICK_ALLOW];
			if (l.pick[PICK_DENY].scope >= 0) {
				deny = l.pick[PICK_DENY];
				break;
			}
			all_allow = all_allow && allow[i].scope >= 0;
		}
		/* a deny on any argument answers; else an allow on every argument; else nothing */
		size_t nused = deny.scope >= 0 ? 1 : all_allow ? nargs : 0;
		struct best *used = deny.scope >= 0 ? &deny : allow;
		if (nused == 0) {
			rollback(d);
			return ZSP_OK;
		}
		bool once = false;
		for (size_t i = 0; i < nused; i++)
			once = once || used[i].scope == ZSP_GRANT_ONCE;
		if (once && !write) {
			rollback(d);
			continue;
		}
		if (once) {
			/* every once grant that answers goes, in one transaction, or none does; a grant
			 * answering for two arguments goes once */
			for (size_t i = 0; i < nused; i++) {
				bool seen = false;
				for (size_t j = 0; j < i; j++)
					seen = seen || used[j].id == used[i].id;
				if (used[i].scope != ZSP_GRANT_ONCE || seen)
					continue;
				sqlite3_stmt *st = stmt(d, ST_DELETE, err, errlen);
				if (!st) {
					rollback(d);
					return ZSP_EIO;
				}
				sqlite3_bind_int64(st, 1, used[i].id);
				int rc = sqlite3_step(st);
				sqlite3_reset(st);
				if (rc != SQLITE_DONE || sqlite3_changes(d->db) != 1) {
					db_fail(d, rc, err, errlen);
					rollback(d);
					return ZSP_EIO;
				}
			}
			if (exec_stmt(d, ST_COMMIT, err, errlen) != ZSP_OK) {
				rollback(d);
				return ZSP_EIO;
			}
		} else {
			rollback(d);
		}
		*found = true;
		*decision = deny.scope >= 0 ? ZSP_ANSWER_DENY : ZSP_ANSWER_ALLOW;
		if (id)
			*id = used[0].id;
		return ZSP_OK;
	}
	return ZSP_OK;
}

int zsp_store_lookup(zsp_store *s, const char *tool, const char *arg, const char *thread,
		     const char *project, int64_t now, bool *found, int *decision, int64_t *id,
		     char *err, size_t errlen)
{
	const char *args[1] = { arg ? arg : "" };
	return zsp_store_lookup_all(s, tool, args, 1, thread, project, now, found, decision, id, err,
				    errlen);
}

/* ---- audit ---------------------------------------------------------------------------------- */

int zsp_store_audit(zsp_store *s, const zsp_audit_record *r, char *err, size_t errlen)
{
	if (!s || !r || !r->request)
		return refuse(err, errlen, "audit: no store or no request");
	if (disk_decision(r->decision) < 0)
		return refuse(err, errlen, "audit: %d is not a decision", r->decision);
	store_db *d = &s->grants;
	sqlite3_stmt *st = stmt(d, ST_AUDIT, err, errlen);
	if (!st || set_sync(d, false, err, errlen) != ZSP_OK || exec_stmt(d, ST_BEGIN_WRITE, err, errlen) != ZSP_OK)
		return ZSP_EIO;
	sqlite3_bind_int64(st, 1, r->time ? r->time : (int64_t)time(NULL));
	bind_text(st, 2, r->request);
	sqlite3_bind_int(st, 3, disk_decision(r->decision));
	bind_text(st, 4, r->reason);
	bind_text(st, 5, r->rule);
	bind_text(st, 6, r->policy);
	bind_text(st, 7, r->policy_hash);
	bind_text(st, 8, r->thread);
	bind_text(st, 9, r->project);
	bind_text(st, 10, r->who);
	return step_commit(d, st, false, err, errlen);
}

int zsp_store_audit_list(zsp_store *s, int64_t since, int (*fn)(void *ctx, const zsp_audit_record *r),
			 void *ctx, char *err, size_t errlen)
{
	if (!s || !fn)
		return refuse(err, errlen, "audit: no store or no callback");
	store_db *d = &s->grants;
	sqlite3_stmt *st = stmt(d, ST_AUDIT_LIST, err, errlen);
	if (!st || exec_stmt(d, ST_BEGIN_READ, err, errlen) != ZSP_OK)
		return ZSP_EIO;
	sqlite3_bind_int64(st, 1, since);
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		zsp_audit_record r = {
			.time = sqlite3_column_int64(st, 0),
			.request = col_text(st, 1),
			.decision = answer_of_disk(sqlite3_column_int(st, 2)),
			.reason = col_text(st, 3),
			.rule = col_text(st, 4),
			.policy = col_text(st, 5),
			.policy_hash = col_text(st, 6),
			.thread = col_text(st, 7),
			.project = col_text(st, 8),
			.who = col_text(st, 9),
		};
		if (fn(ctx, &r) != 0) {
			rc = SQLITE_DONE;
			break;
		}
	}
	sqlite3_reset(st);
	rollback(d);
	return rc == SQLITE_DONE ? ZSP_OK : db_fail(d, rc, err, errlen);
}
