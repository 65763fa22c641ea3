/* resolve.c: a path walked as the kernel walks it, so that the oracle judges the file an open()
 * would reach. /proc/self is modelled, never read: on this machine it would describe the oracle. */
#include "config.h"

#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#endif

#include "compiler/resolve.h"
#include "lang/buf.h"

#define MAX_LINKS 40            /* the kernel's MAXSYMLINKS: more is ELOOP */
#define PROC_SUPER_MAGIC 0x9fa0 /* <linux/magic.h>: statfs's f_type of procfs */

struct walk {
	zsp_arena *a;
	zsp_buf out;            /* the path reached, "/a/b" (never a trailing slash): "" is "/" */
	size_t missing;         /* how many of its last components do not exist */
	const char *rest;       /* what is left to walk */
	unsigned links;
	const char *cwd;
	const char *why;        /* set: the walk cannot be followed */
};

/* Where out is inside /proc: a process directory (/proc/self, /proc/PID, .../task/TID), where
 * root, cwd and exe live; a directory of links (fd, map_files, ns), each of them known only to
 * its process; another entry of a process; or none of these (a real path, /proc/sys/...). */
enum proc_area { AREA_REAL, AREA_PROC_DIR, AREA_LINK_DIR, AREA_PROC_FILE };

static bool is_number(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static bool is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(s, word, n) == 0;
}

/* The area of out, and whether its process is the requester (/proc/self) in *self. */
static enum proc_area proc_area(const struct walk *w, bool *self)
{
	const char *p = w->out.data;
	if (w->out.len < 7 || strncmp(p, "/proc/", 6) != 0)
		return AREA_REAL;
	const char *c[5]; /* one more than a link directory needs: n tells the depth apart */
	size_t len[5], n = 0;
	for (const char *s = p + 6; *s && n < 5;) {
		const char *e = strchr(s, '/');
		e = e ? e : s + strlen(s);
		c[n] = s;
		len[n++] = (size_t)(e - s);
		s = *e ? e + 1 : e;
	}
	*self = is(c[0], len[0], "self");
	if (!*self && !is_number(c[0], len[0]))
		return AREA_REAL;
	/* /proc/X/task/TID is a process directory too */
	size_t base = n >= 3 && is(c[1], len[1], "task") ? 2 : 0;
	if (n == 1 + base)
		return AREA_PROC_DIR;
	if (n != 2 + base)
		return AREA_PROC_FILE;
	const char *d = c[1 + base];
	size_t dn = len[1 + base];
	return is(d, dn, "fd") || is(d, dn, "map_files") || is(d, dn, "ns") ? AREA_LINK_DIR
									   : AREA_PROC_FILE;
}

static void append(struct walk *w, const char *c, size_t n)
{
	zsp_buf_putc(&w->out, '/');
	zsp_buf_add(&w->out, c, n);
}

static void to_parent(struct walk *w)
{
	while (w->out.len > 0 && w->out.data[w->out.len - 1] != '/')
		w->out.len--;
	if (w->out.len > 0)
		w->out.len--;
	if (w->out.data)
		w->out.data[w->out.len] = '\0';
}

/* Counts one more link followed; false (the walk stops) past the kernel's limit. */
static bool count_link(struct walk *w)
{
	if (++w->links <= MAX_LINKS)
		return true;
	w->why = "more than 40 symbolic links";
	return false;
}

/* Continues the walk at target, from the root when it is absolute: a symlink or a magic link. */
static void follow(struct walk *w, const char *target)
{
	if (!count_link(w))
		return;
	if (target[0] == '/') {
		w->out.len = 0;
		if (w->out.data)
			w->out.data[0] = '\0';
	}
	w->rest = zsp_arena_printf(w->a, "%s/%s", target, w->rest);
	if (!w->rest)
		w->out.oom = true;
}

/* One component of /proc/self, /proc/PID or /proc itself; false when c is not one of theirs. */
static bool proc_step(struct walk *w, const char *c, size_t n)
{
	bool self = false;
	if (w->out.len == 5 && strcmp(w->out.data, "/proc") == 0) {
		if (is(c, n, "self") || is(c, n, "thread-self")) {
			/* links to PID and PID/task/TID: the requester, whichever its PID; its thread
			 * directory has the same root, cwd and links */
			if (count_link(w))
				append(w, "self", 4);
			return true;
		}
		if (!is_number(c, n))
			return false;
		append(w, c, n);
		return true;
	}
	switch (proc_area(w, &self)) {
	case AREA_REAL:
		return false;
	case AREA_PROC_DIR:
		if (self && is(c, n, "root")) {
			follow(w, "/");
		} else if (self && is(c, n, "cwd")) {
			if (w->cwd && w->cwd[0] == '/')
				follow(w, w->cwd);
			else
				w->why = "/proc/self/cwd without a known working directory";
		} else if (is(c, n, "root") || is(c, n, "cwd") || is(c, n, "exe")) {
			w->why = self ? "/proc/self/exe is the requester's program"
				      : "root, cwd and exe of another process are that process's own";
		} else {
			append(w, c, n);
		}
		return true;
	case AREA_LINK_DIR:
		w->why = "an entry of /proc/PID/fd, map_files or ns leads where only its process knows";
		return true;
	case AREA_PROC_FILE:
		append(w, c, n);
		return true;
	}
	return false;
}

/* A component of a real directory: lstat it and follow it when it is a symlink. */
static void real_step(struct walk *w, const char *c, size_t n)
{
	struct stat st;
	size_t dir = w->out.len;
	append(w, c, n);
	if (w->out.oom)
		return;
	if (lstat(w->out.data, &st) != 0) {
		w->missing = 1; /* ENOENT, ENOTDIR, EACCES: the rest is judged as spelt */
		return;
	}
	if (!S_ISLNK(st.st_mode))
		return;
	char target[PATH_MAX + 1];
	ssize_t len = readlink(w->out.data, target, sizeof(target));
	w->out.len = dir;
	w->out.data[dir] = '\0';
#ifdef __linux__
	struct statfs fs;
	if (statfs(dir ? w->out.data : "/", &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC &&
	    strcmp(w->out.data, "/proc") != 0) {
		/* another mount of procfs: its self and PID links would name the oracle */
		w->why = "a link on a procfs mounted elsewhere than /proc";
		return;
	}
#endif
	if (len <= 0 || (size_t)len >= sizeof(target)) {
		append(w, c, n); /* unreadable or empty: nothing to follow, judged as spelt */
		w->missing = 1;
		return;
	}
	target[len] = '\0';
	follow(w, target);
}

int zsp_resolve_path(zsp_arena *a, const char *path, const char *cwd, char **out, const char **why)
{
	struct walk w = { .a = a, .cwd = cwd };
	*out = NULL;
	*why = NULL;
	zsp_buf_puts(&w.out, "");
	w.rest = path;
	if (path[0] != '/') {
		w.rest = zsp_arena_printf(a, "%s/%s", cwd && cwd[0] == '/' ? cwd : "", path);
		if (!w.rest)
			w.out.oom = true;
	}
	while (!w.why && !w.out.oom && *w.rest) {
		const char *c = w.rest;
		while (*c == '/')
			c++;
		const char *e = c;
		while (*e && *e != '/')
			e++;
		size_t n = (size_t)(e - c);
		w.rest = e;
		if (n == 0 || is(c, n, "."))
			continue;
		if (is(c, n, "..")) {
			to_parent(&w); /* out holds no symlink: its parent is the link target's parent */
			if (w.missing)
				w.missing--;
			continue;
		}
		if (w.missing) {
			append(&w, c, n);
			w.missing++;
		} else if (!proc_step(&w, c, n)) {
			real_step(&w, c, n);
		}
	}
	if (w.out.oom) {
		zsp_buf_free(&w.out);
		return ZSP_RESOLVE_NOMEM;
	}
	if (w.why) {
		zsp_buf_free(&w.out);
		*why = w.why;
		return ZSP_RESOLVE_UNKNOWN;
	}
	*out = zsp_arena_strdup(a, w.out.len ? w.out.data : "/");
	zsp_buf_free(&w.out);
	return *out ? ZSP_RESOLVE_OK : ZSP_RESOLVE_NOMEM;
}
