/* test_guardindex.c: the check after the run (runtime/guard.c) with its index between runs
 * (runtime/walkindex.c), on a real tree: a directory the index knows unchanged is not read
 * again, yet a protected file changed in place there (its directory's ctime does not move) is
 * still moved aside, and a protected file made in a known directory (its ctime moves) too. The
 * sandbox cannot change an existing protected file (it is mounted read-only), so no end-to-end
 * run reaches the first case: the host's own write stands in for it here. */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/guard.h"
#include "runtime/walkindex.h"

static int failures;
static char top[64], ws[128], state[128];

#define CHECK(cond, ...) do { if (!(cond)) { printf("FAIL: " __VA_ARGS__); printf("\n"); failures++; } } while (0)

static void put(const char *rel, const char *text, const char *mode)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", ws, rel);
	FILE *f = fopen(p, mode);
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		printf("FAIL: cannot write %s\n", p);
		exit(1);
	}
}

static void dir(const char *rel)
{
	char p[256];
	snprintf(p, sizeof(p), "%s/%s", ws, rel);
	if (mkdir(p, 0755) != 0) {
		printf("FAIL: cannot make %s\n", p);
		exit(1);
	}
}

static bool exists(const char *rel)
{
	char p[256];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", ws, rel);
	return lstat(p, &st) == 0;
}

/* One check after a run that began now; *reused: the directories its index spared (-1: no
 * note). Returns the number of files moved aside. */
static size_t check(long *reused)
{
	static const char *names[] = { ".claude/settings.json", ".vscode" };
	const char *roots[] = { ws };
	char *notes = NULL, *out = NULL;
	size_t nlen, olen;
	FILE *nf = open_memstream(&notes, &nlen), *of = open_memstream(&out, &olen);
	zsp_walk_index *ix = zsp_walkindex_new(state, nf);
	zsp_guard_opts o = { .roots = roots, .nroots = 1, .names = names, .nnames = 2,
			     .since = zsp_guard_start(), .index = ix };
	zsp_guard_result r;
	CHECK(zsp_guard_check(&o, of, &r) == 0, "the check failed: %s", out);
	zsp_walkindex_free(ix);
	fclose(nf);
	fclose(of);
	const char *at = strstr(notes, "the check after the run's index ");
	size_t got = 0, of_all = 0;
	*reused = at && (at = strstr(at, ": ")) && sscanf(at, ": %zu of %zu", &got, &of_all) == 2 ? (long)got : -1;
	CHECK(r.unchecked == 0 && r.failed == 0, "unchecked %zu, failed %zu: %s", r.unchecked, r.failed, out);
	free(notes);
	free(out);
	return r.blocked;
}

int main(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(top, sizeof(top), "%s/zsp-gix.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(top))
		return 99;
	snprintf(ws, sizeof(ws), "%s/ws", top);
	snprintf(state, sizeof(state), "%s/state", top);
	if (mkdir(ws, 0755) != 0)
		return 99;
	dir("a");
	dir("a/b");
	dir("a/b/.claude");
	dir("c");
	dir("p");
	dir("p/.vscode");
	put("a/b/.claude/settings.json", "{}\n", "w");
	put("p/.vscode/tasks.json", "{}\n", "w");
	/* older than the index's racy window */
	sleep(3);
	long cold, warm, after;
	CHECK(check(&cold) == 0, "the first check moved something aside");
	CHECK(cold == 0, "the first check took %ld directories from an index that did not exist", cold);
	CHECK(check(&warm) == 0, "the second check moved something aside");
	CHECK(warm >= 5, "the second check took %ld directories from its index, not all 5 outside .vscode", warm);

	/* in place: the directory's listing is spared, the file is still looked at */
	put("a/b/.claude/settings.json", "{\"hooks\":1}\n", "a");
	CHECK(check(&after) == 1, "a protected file changed in place in a directory the index knows was not moved aside");
	CHECK(exists("a/b/.claude/settings.json.zsp-blocked") && !exists("a/b/.claude/settings.json"),
	      "a/b/.claude/settings.json was not moved to settings.json.zsp-blocked");
	CHECK(after == warm, "the check after an in-place change took %ld directories from its index, not %ld",
	      after, warm);

	/* made in a directory the index knows: its ctime moved, it is read again */
	sleep(3);
	CHECK(check(&warm) == 0, "a check with nothing new moved something aside");
	dir("c/.claude");
	put("c/.claude/settings.json", "{}\n", "w");
	CHECK(check(&after) == 1, "a protected file made in a directory the index knew was not moved aside");
	CHECK(exists("c/.claude/settings.json.zsp-blocked"), "c/.claude/settings.json was not moved aside");
	CHECK(after > 0, "the check after c changed took no directory from its index (%ld)", after);
	/* in a protected tree, read whole each time */
	put("p/.vscode/tasks.json", "{\"tasks\":1}\n", "a");
	CHECK(check(&after) == 1, "a file changed in place in a protected tree was not moved aside");

	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		printf("note: could not remove %s\n", top);
	if (failures)
		printf("%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
