/* reliability.c: the grant store under concurrent processes and under SIGKILL (run by
 * reliability.sh): no once-grant used twice, nothing lost, every committed grant survives. */
#include <errno.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compiler/zsp.h"
#include "runtime/store.h"

static char err[1024];

static zsp_store *open_at(const char *dir)
{
	zsp_store_where w = { .state_dir = dir, .threads_in_memory = true };
	zsp_store *s = NULL;
	if (zsp_store_open(&w, &s, err, sizeof err) != ZSP_OK) {
		fprintf(stderr, "open %s: %s\n", dir, err);
		return NULL;
	}
	return s;
}

static int64_t add_exact(zsp_store *s, zsp_grant_scope scope, const char *pattern)
{
	zsp_grant g = { .scope = scope, .tool = "terminal", .match = ZSP_MATCH_EXACT,
			.pattern = pattern, .decision = ZSP_ANSWER_ALLOW, .policy = "reliability",
			.who = "reliability" };
	int64_t id;
	if (zsp_store_add(s, &g, &id, err, sizeof err) != ZSP_OK) {
		fprintf(stderr, "add: %s\n", err);
		return -1;
	}
	return id;
}

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

struct ids {
	int64_t *v;
	size_t n, cap;
};

static void ids_push(struct ids *l, int64_t id)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 1024;
		l->v = realloc(l->v, l->cap * sizeof *l->v);
		if (!l->v)
			abort();
	}
	l->v[l->n++] = id;
}

static void sort_ids(struct ids *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof *l->v, cmp_id);
}

static int list_grant(void *ctx, const zsp_grant *g)
{
	ids_push(ctx, g->id);
	return 0;
}

/* Every grant id in the store, sorted. */
static int all_ids(zsp_store *s, struct ids *out)
{
	out->n = 0;
	if (zsp_store_list(s, list_grant, out, err, sizeof err) != ZSP_OK) {
		fprintf(stderr, "list: %s\n", err);
		return -1;
	}
	sort_ids(out);
	return 0;
}

static bool has(const struct ids *l, int64_t id)
{
	return l->n && bsearch(&id, l->v, l->n, sizeof id, cmp_id) != NULL;
}

/* One worker: nops operations, a third each add, lookup (of a global grant it added), consume
 * (a random once-grant). Writes "A id" and "C id" lines to out. */
static int worker(const char *dir, int me, int nops, int nonce, FILE *out)
{
	zsp_store *s = open_at(dir);
	if (!s)
		return 1;
	srand((unsigned)(getpid() ^ time(NULL)));
	char pat[64];
	int added = 0, bad = 0;
	for (int i = 0; i < nops && !bad; i++) {
		int op = rand() % 3;
		int d;
		int64_t id;
		bool found;
		if (op == 0 || added == 0) {
			snprintf(pat, sizeof pat, "worker %d op %d", me, added++);
			id = add_exact(s, ZSP_GRANT_GLOBAL, pat);
			if (id < 0)
				bad = 1;
			else
				fprintf(out, "A %lld\n", (long long)id);
		} else if (op == 1) {
			snprintf(pat, sizeof pat, "worker %d op %d", me, rand() % added);
			if (zsp_store_lookup(s, "terminal", pat, NULL, NULL, time(NULL), &found, &d, &id,
					     err, sizeof err) != ZSP_OK || !found || d != ZSP_ANSWER_ALLOW) {
				fprintf(stderr, "worker %d: lost grant '%s': %s\n", me, pat, err);
				bad = 1;
			}
		} else {
			snprintf(pat, sizeof pat, "once %d", rand() % nonce);
			int rc = zsp_store_lookup(s, "terminal", pat, NULL, NULL, time(NULL), &found, &d,
						  &id, err, sizeof err);
			if (rc != ZSP_OK) {
				fprintf(stderr, "worker %d: lookup: %s\n", me, err);
				bad = 1;
			} else if (found) {
				fprintf(out, "C %lld\n", (long long)id);
			}
		}
	}
	zsp_store_close(s);
	return bad;
}

static int concurrent(const char *dir, int nproc, int nops, int nonce)
{
	zsp_store *s = open_at(dir);
	if (!s)
		return 1;
	struct ids once = { 0 };
	char pat[64];
	for (int i = 0; i < nonce; i++) {
		snprintf(pat, sizeof pat, "once %d", i);
		int64_t id = add_exact(s, ZSP_GRANT_ONCE, pat);
		if (id < 0)
			return 1;
		ids_push(&once, id);
	}
	zsp_store_close(s);

	pid_t pids[64];
	char outs[64][512];
	for (int p = 0; p < nproc; p++) {
		snprintf(outs[p], sizeof outs[p], "%s/worker-%d.log", dir, p);
		fflush(NULL);
		pids[p] = fork();
		if (pids[p] == 0) {
			FILE *f = fopen(outs[p], "w");
			int rc = f ? worker(dir, p, nops, nonce, f) : 1;
			if (f && fclose(f) != 0)
				rc = 1;
			_exit(rc);
		}
	}
	int failed = 0;
	for (int p = 0; p < nproc; p++) {
		int st;
		waitpid(pids[p], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "worker %d failed (status %d)\n", p, st);
			failed = 1;
		}
	}
	struct ids added = { 0 }, consumed = { 0 }, now = { 0 };
	for (int p = 0; p < nproc; p++) {
		FILE *f = fopen(outs[p], "r");
		char kind;
		long long id;
		while (f && fscanf(f, " %c %lld", &kind, &id) == 2)
			ids_push(kind == 'A' ? &added : &consumed, id);
		if (f)
			fclose(f);
	}
	s = open_at(dir);
	if (!s || all_ids(s, &now) != 0)
		return 1;
	sort_ids(&consumed);
	sort_ids(&once);
	for (size_t i = 1; i < consumed.n; i++)
		if (consumed.v[i] == consumed.v[i - 1]) {
			fprintf(stderr, "once-grant %lld used twice\n", (long long)consumed.v[i]);
			failed = 1;
		}
	size_t left = 0;
	for (size_t i = 0; i < once.n; i++) {
		bool used = has(&consumed, once.v[i]), there = has(&now, once.v[i]);
		if (used == there) {
			fprintf(stderr, "once-grant %lld %s\n", (long long)once.v[i],
				used ? "used and still present" : "lost: neither used nor present");
			failed = 1;
		}
		left += there;
	}
	for (size_t i = 0; i < consumed.n; i++)
		if (!has(&once, consumed.v[i])) {
			fprintf(stderr, "consumed %lld is not a once-grant\n", (long long)consumed.v[i]);
			failed = 1;
		}
	for (size_t i = 0; i < added.n; i++)
		if (!has(&now, added.v[i])) {
			fprintf(stderr, "added grant %lld lost\n", (long long)added.v[i]);
			failed = 1;
		}
	printf("concurrent: %d processes x %d operations: %zu grants added, %zu of %d once-grants "
	       "consumed (each once), %zu left; %s\n", nproc, nops, added.n, consumed.n, nonce, left,
	       failed ? "FAILED" : "ok");
	zsp_store_close(s);
	free(once.v);
	free(added.v);
	free(consumed.v);
	free(now.v);
	return failed;
}

static int integrity_ok(const char *dir)
{
	char path[600];
	snprintf(path, sizeof path, "%s/grants.db", dir);
	sqlite3 *db;
	sqlite3_stmt *st;
	int ok = 0;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK) {
		ok = sqlite3_step(st) == SQLITE_ROW &&
		     strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return ok;
}

/* A writer adds grants (some in with an audit record) as fast as it can and reports each id on
 * fd only after the call returned: committed. It is killed with SIGKILL at a random moment. */
static void writer(const char *dir, int fd)
{
	zsp_store *s = open_at(dir);
	if (!s)
		_exit(1);
	char pat[64];
	for (int i = 0;; i++) {
		snprintf(pat, sizeof pat, "killed writer %d %d", getpid(), i);
		int64_t id = add_exact(s, i % 2 ? ZSP_GRANT_ONCE : ZSP_GRANT_GLOBAL, pat);
		if (id < 0)
			_exit(1);
		if (write(fd, &id, sizeof id) != sizeof id)
			_exit(1);
		if (i % 3 == 0) {
			zsp_audit_record r = { .request = pat, .decision = ZSP_ANSWER_ALLOW,
					       .reason = "grant", .policy = "reliability" };
			if (zsp_store_audit(s, &r, err, sizeof err) != ZSP_OK)
				_exit(1);
		}
	}
}

static int killer(const char *dir, int iterations)
{
	struct ids committed = { 0 }, now = { 0 };
	int failed = 0;
	srand((unsigned)(getpid() ^ time(NULL)));
	for (int it = 0; it < iterations && !failed; it++) {
		int fds[2];
		if (pipe(fds) != 0)
			return 1;
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			close(fds[0]);
			writer(dir, fds[1]);
		}
		close(fds[1]);
		/* wait for the first commit, so that every kill lands while it is writing */
		int64_t id;
		if (read(fds[0], &id, sizeof id) == sizeof id)
			ids_push(&committed, id);
		struct timespec ts = { 0, (long)(rand() % 30000) * 1000 + 2000000 };
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		while (read(fds[0], &id, sizeof id) == sizeof id)
			ids_push(&committed, id);
		close(fds[0]);
		int st;
		waitpid(pid, &st, 0);
		if (!WIFSIGNALED(st)) {
			fprintf(stderr, "iteration %d: the writer ended by itself (status %d)\n", it, st);
			failed = 1;
		}
		zsp_store *s = open_at(dir);
		if (!s || all_ids(s, &now) != 0) {
			failed = 1;
		} else {
			for (size_t i = 0; i < committed.n; i++)
				if (!has(&now, committed.v[i])) {
					fprintf(stderr, "iteration %d: committed grant %lld lost\n", it,
						(long long)committed.v[i]);
					failed = 1;
				}
		}
		zsp_store_close(s);
		if (!integrity_ok(dir)) {
			fprintf(stderr, "iteration %d: integrity_check failed\n", it);
			failed = 1;
		}
	}
	printf("sigkill: %d writers killed mid-run, %zu committed grants all present, integrity ok: "
	       "%s\n", iterations, committed.n, failed ? "FAILED" : "ok");
	free(committed.v);
	free(now.v);
	return failed;
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "concurrent") == 0)
		return concurrent(argv[2], atoi(argv[3]) > 64 ? 64 : atoi(argv[3]), atoi(argv[4]),
				  atoi(argv[5]));
	if (argc == 4 && strcmp(argv[1], "sigkill") == 0)
		return killer(argv[2], atoi(argv[3]));
	if (argc == 3 && strcmp(argv[1], "open") == 0) {
		/* prints the store's refusal and exits 1, or exits 0 when it opens */
		zsp_store *s = open_at(argv[2]);
		zsp_store_close(s);
		return s ? 0 : 1;
	}
	fprintf(stderr, "usage: reliability concurrent DIR NPROC NOPS NONCE | sigkill DIR N | "
		"open DIR\n");
	return 2;
}
