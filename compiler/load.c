/* load.c: reads the root policy file and, depth first, every file it includes.
 * Include lookup: the including file's directory, then -I dirs, then the data dir; each file once.
 * A built-in file (compiled into the program) includes built-in files only, by name. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lang/buf.h"
#include "compiler/compile.h"


/* Reads a whole policy file, at most ZSP_SOURCE_MAX bytes. Only a regular file qualifies
 * (a pipe too for the file named on the command line): opening is non-blocking and the type
 * is checked on the open descriptor, so a FIFO or a device named by an include can neither
 * hang the compiler nor feed it endless bytes. */
static int read_file(const char *path, bool allow_pipe, char **text, size_t *len, const char **why)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		*why = strerror(errno);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode) && !(allow_pipe && S_ISFIFO(st.st_mode))) {
		*why = S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file";
		close(fd);
		return -1;
	}
	/* blocking again: a pipe on the command line is read until its writer closes it */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
		*why = strerror(errno);
		close(fd);
		return -1;
	}
	size_t cap = 0, n = 0;
	char *buf = NULL;
	*why = NULL;
	for (;;) {
		if (n == cap) {
			if (cap > ZSP_SOURCE_MAX) {
				*why = "file is larger than 16 MiB";
				break;
			}
			if (!zsp_array_reserve(&buf, &cap, n + 4096, 1))
				break;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			*why = strerror(errno);
			break;
		}
		if (r == 0) {
			close(fd);
			*text = buf;
			*len = n;
			return 0;
		}
		n += (size_t)r;
	}
	if (!*why)
		*why = "out of memory";
	free(buf);
	close(fd);
	return -1;
}

struct loader {
	zsp_cc *cc;
	const char *stack[ZSP_INCLUDE_DEPTH + 1];      /* canonical paths on the include chain */
	const zsp_source *stack_src[ZSP_INCLUDE_DEPTH + 1];
	size_t depth;
	const char **seen;                             /* canonical paths already read */
	size_t nseen, seen_cap;
};

static bool file_exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && !S_ISDIR(st.st_mode);
}

static const char *resolve_include(zsp_cc *cc, const zsp_source *src, const char *name)
{
	if (name[0] == '/')
		return file_exists(name) ? name : NULL;
	/* "inc/a.zsp" rather than "./inc/a.zsp": this name shows in diagnostics */
	const char *p = strcmp(src->dir, ".") == 0 ? name
		      : zsp_arena_printf(cc->a, "%s/%s", src->dir, name);
	if (p && file_exists(p))
		return p;
	for (size_t i = 0; i < cc->c->ninclude; i++) {
		p = zsp_arena_printf(cc->a, "%s/%s", cc->c->include_dirs[i], name);
		if (p && file_exists(p))
			return p;
	}
	if (cc->c->datadir) {
		p = zsp_arena_printf(cc->a, "%s/%s", cc->c->datadir, name);
		if (p && file_exists(p))
			return p;
	}
	return NULL;
}

static int load_text(struct loader *ld, const char *path, const char *key, const char *text,
		     size_t len, zsp_loc from, bool builtin);

static bool seen(const struct loader *ld, const char *key)
{
	for (size_t i = 0; i < ld->nseen; i++)
		if (strcmp(ld->seen[i], key) == 0)
			return true;
	return false;
}

/* An include in a built-in file names a built-in file: compiled into the program with it, so
 * that nothing on disk (the current directory, -I, the data directory) can replace it. */
static int load_builtin_include(struct loader *ld, zsp_ast_include *inc)
{
	zsp_cc *cc = ld->cc;
	const char *name = inc->name->s;
	const zsp_builtin_file *f = zsp_compiler_builtin(cc->c, name);
	if (!f) {
		zsp_diag_error(cc->diag, inc->name->loc, "cannot find included file `%s`", name);
		zsp_diag_hint(cc->diag, "a built-in policy includes built-in files only, and none is "
			      "called `%s`", name);
		return ZSP_OK;
	}
	const char *key = zsp_arena_printf(cc->a, "<built-in %s>", name);
	if (!key)
		return ZSP_EINTERNAL;
	for (size_t i = 0; i < ld->depth; i++) {
		if (strcmp(ld->stack[i], key) == 0) {
			zsp_diag_error(cc->diag, inc->name->loc, "include cycle through %s", key);
			return ZSP_OK;
		}
	}
	if (seen(ld, key))
		return ZSP_OK;
	if (ld->depth > ZSP_INCLUDE_DEPTH) {
		zsp_diag_error(cc->diag, inc->name->loc, "includes nest deeper than %d files",
			       ZSP_INCLUDE_DEPTH);
		return ZSP_OK;
	}
	return load_text(ld, key, key, f->text, strlen(f->text), inc->loc, true);
}

static int load_include(struct loader *ld, const zsp_source *parent, zsp_ast_include *inc)
{
	zsp_cc *cc = ld->cc;
	const char *name = inc->name->s;
	if (name[0] == '\0') {
		zsp_diag_error(cc->diag, inc->name->loc, "empty include name");
		return ZSP_OK;
	}
	if (parent->builtin)
		return load_builtin_include(ld, inc);
	const char *path = resolve_include(cc, parent, name);
	if (!path) {
		zsp_diag_error(cc->diag, inc->name->loc, "cannot find included file `%s`", name);
		zsp_diag_hint(cc->diag, "searched %s, then each -I directory, then %s", parent->dir,
			      cc->c->datadir ? cc->c->datadir : "(no data directory)");
		return ZSP_OK;
	}
	char *real = realpath(path, NULL);
	if (!real) {
		zsp_diag_error(cc->diag, inc->name->loc, "cannot open included file `%s`: %s", path,
			       strerror(errno));
		return ZSP_OK;
	}
	const char *key = zsp_arena_strdup(cc->a, real);
	free(real);
	if (!key)
		return ZSP_EINTERNAL;
	for (size_t i = 0; i < ld->depth; i++) {
		if (strcmp(ld->stack[i], key) != 0)
			continue;
		char chain[1024];
		size_t len = 0;
		for (size_t j = i; j < ld->depth && len < sizeof(chain); j++)
			len += (size_t)snprintf(chain + len, sizeof(chain) - len, "%s -> ",
						ld->stack_src[j]->path);
		if (len < sizeof(chain))
			snprintf(chain + len, sizeof(chain) - len, "%s", path);
		zsp_diag_error(cc->diag, inc->name->loc, "include cycle: %s", chain);
		return ZSP_OK;
	}
	if (seen(ld, key))
		return ZSP_OK; /* a file included twice is read once */
	if (ld->depth > ZSP_INCLUDE_DEPTH) {
		zsp_diag_error(cc->diag, inc->name->loc, "includes nest deeper than %d files",
			       ZSP_INCLUDE_DEPTH);
		return ZSP_OK;
	}
	char *text;
	size_t len;
	const char *why;
	if (read_file(path, false, &text, &len, &why) != 0) {
		zsp_diag_error(cc->diag, inc->name->loc, "cannot read included file `%s`: %s", path, why);
		return ZSP_OK;
	}
	int rc = load_text(ld, path, key, text, len, inc->loc, false);
	free(text);
	return rc;
}

static int load_text(struct loader *ld, const char *path, const char *key, const char *text,
		     size_t len, zsp_loc from, bool builtin)
{
	zsp_cc *cc = ld->cc;
	zsp_source *src = zsp_source_new(cc->a, path, text, len);
	if (!src)
		return ZSP_EINTERNAL;
	src->included_from = from;
	src->builtin = builtin;
	const char **seen = ZSP_PUSH(cc, ld->seen, ld->nseen, ld->seen_cap);
	if (!seen)
		return ZSP_EINTERNAL;
	*seen = key;
	zsp_ast_file *f = zsp_parse(cc->a, src, cc->diag);
	if (!f)
		return ZSP_EINTERNAL;
	if (f->has_version && f->version != 1) {
		zsp_diag_error(cc->diag, f->version_loc,
			       "unsupported language version %llu; this zspc understands version 1",
			       (unsigned long long)f->version);
		zsp_diag_hint(cc->diag, "start the file with `zsp 1;`");
	}
	zsp_ast_file **slot = ZSP_PUSH(cc, cc->files, cc->nfiles, cc->files_cap);
	if (!slot)
		return ZSP_EINTERNAL;
	*slot = f;
	ld->stack[ld->depth] = key;
	ld->stack_src[ld->depth] = src;
	ld->depth++;
	for (zsp_ast_include *inc = f->includes; inc; inc = inc->next) {
		int rc = load_include(ld, src, inc);
		if (rc != ZSP_OK) {
			ld->depth--;
			return rc;
		}
	}
	ld->depth--;
	return ZSP_OK;
}

int zsp_load(zsp_cc *cc, const char *path, const char *text, size_t len, bool builtin)
{
	struct loader ld = { .cc = cc };
	char *owned = NULL;
	const char *why;
	if (!text) {
		if (read_file(path, true, &owned, &len, &why) != 0) {
			zsp_diag_error_noloc(cc->diag, "cannot read `%s`: %s", path, why);
			return ZSP_ENOINPUT;
		}
		text = owned;
	}
	char *real = builtin ? NULL : realpath(path, NULL);
	const char *key = zsp_arena_strdup(cc->a, real ? real : path);
	free(real);
	int rc = key ? load_text(&ld, path, key, text, len, (zsp_loc){ 0 }, builtin) : ZSP_EINTERNAL;
	cc->inputs = ld.seen;
	cc->ninputs = ld.nseen;
	free(owned);
	return rc;
}
