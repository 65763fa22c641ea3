/* gitcfg.h: git configuration files read as git 2.39 reads them (config.c), without running git,
 * and the keys among them that cannot make git run a program. Used to protect a repository's
 * hooks and included files before a sandbox starts and to vet the config files it left. */
#ifndef ZSP_GITCFG_H
#define ZSP_GITCFG_H

#include <stdbool.h>
#include <stddef.h>

/* Larger config files are refused (git has no such limit; ours keeps parsing cheap). */
#define ZSP_GITCFG_MAX (1024 * 1024)

/* What a `.git` file starts with: read_gitfile requires exactly these 8 bytes. */
#define ZSP_GIT_GITDIR_PREFIX "gitdir: "

/* One variable. section and name are lower-cased, as git compares them. subsection is kept as
 * written in `[section "Sub"]` and lower-cased in the legacy `[section.sub]`; NULL without one,
 * "" for `[section ""]` (git's key `section..name`, which is not `section.name`). value is
 * unquoted and unescaped; NULL for a variable without `=` (git's boolean true), "" for `x =`.
 * line is where the variable's name starts (1-based). Strings live until fn returns. */
typedef struct zsp_gitcfg_entry {
	const char *section;
	const char *subsection;
	const char *name;
	const char *value;
	unsigned line;
} zsp_gitcfg_entry;

/* Returns 0 to go on, nonzero to stop the parse. */
typedef int (*zsp_gitcfg_fn)(void *ctx, const zsp_gitcfg_entry *e);

/* Parses text[0..len) (no NUL needed), calling fn for each variable in file order. Returns an
 * enum zsp_status (compiler/zsp.h): ZSP_OK when the text was read to its end or fn stopped it
 * (then the rest is not checked); ZSP_EPOLICY for what git rejects and for what zsp refuses to
 * guess (a NUL byte, a variable before any section, an empty section name, an escape other than
 * `\"` `\\` in a subsection, more than ZSP_GITCFG_MAX bytes), with "line N: what" in err;
 * ZSP_EINTERNAL on out-of-memory. fn may have seen variables before an error: a caller deciding
 * safety must take the file as a whole. Linear time, no recursion. */
int zsp_gitcfg_parse(const char *text, size_t len, zsp_gitcfg_fn fn, void *ctx, char *err,
		     size_t errlen);

/* True only for variables on an allow-list of keys that cannot make git run a program or read a
 * file that could (remote and submodule URLs and remote names must also be plain: no `::`
 * helper, no scheme but http(s)/ssh/git/file, no leading `-`, no control character). Else false
 * and *why (when why is not NULL) a static phrase to print after the key:
 * "%s: %s", zsp_gitcfg_key(e, buf, sizeof(buf)), why. */
bool zsp_gitcfg_safe(const zsp_gitcfg_entry *e, const char **why);

/* `section.subsection.name` (`section.name` without a subsection) into buf, cut to size at a
 * character boundary, control characters and invisible code points escaped
 * (compiler/textesc.h), so that it can reach a terminal. Returns buf. */
const char *zsp_gitcfg_key(const zsp_gitcfg_entry *e, char *buf, size_t size);

/* Reads path (relative to dirfd, or absolute) whole into *text (malloc'd, NUL-terminated,
 * *len bytes). The file must be a regular file of at most ZSP_GITCFG_MAX bytes; its last
 * component must not be a symbolic link (O_NOFOLLOW: directories above it are followed); a FIFO
 * or device is refused without blocking. Returns ZSP_OK; ZSP_ENOINPUT when it does not exist
 * (ENOENT, ENOTDIR: no config); ZSP_EPOLICY for a symbolic link, a file that is not regular or
 * too large; ZSP_EIO for another failure; ZSP_EINTERNAL on out-of-memory. Why is in err;
 * *text is NULL unless ZSP_OK. */
int zsp_gitcfg_read_file(int dirfd, const char *path, char **text, size_t *len, char *err,
			 size_t errlen);

/* Reads one of git's pointer files with the rules of zsp_gitcfg_read_file and a PATH_MAX cap:
 * a `.git` file (prefix ZSP_GIT_GITDIR_PREFIX, which git requires exactly, as read_gitfile
 * does), `commondir` and worktrees/NAME/gitdir (prefix NULL: the whole content). As git, trailing
 * `\n` and `\r` are dropped. The path is copied to out as written: a relative one is relative
 * to the directory holding the file (git resolves both kinds so). Refused (ZSP_EPOLICY), where
 * git's readers differ or would read a path nobody meant: a missing prefix, an empty path, a
 * NUL or another control character (a second line), a leading or trailing space or tab, a path
 * that does not fit in size. Other statuses as zsp_gitcfg_read_file. */
int zsp_git_pointer_read(int dirfd, const char *path, const char *prefix, char *out, size_t size,
			 char *err, size_t errlen);

/* Called by zsp_gitcfg_vet for each variable taken out: key as zsp_gitcfg_key shows it, why as
 * zsp_gitcfg_safe says it; applied: whether the rest of the text was kept. */
typedef void (*zsp_gitcfg_refused_fn)(void *ctx, const char *key, const char *why, bool applied);

/* What of a config's new text may replace it, given the text it had (old; NULL: none): text
 * without every variable that zsp_gitcfg_safe refuses, unless old has that very variable
 * (section, subsection, name and value; one for one). A variable is taken out with the lines
 * its value runs over. *out is then malloc'd (NUL-terminated, *outlen bytes) and holds no
 * variable old does not vouch for. Returns ZSP_OK; ZSP_EPOLICY, *out NULL and why in err, when
 * text cannot be read with certainty, or when what is left after taking out reads differently
 * (a variable on a section header's line: what follows would change sections); ZSP_EINTERNAL
 * on out-of-memory. fn (may be NULL) hears of each variable taken out. */
int zsp_gitcfg_vet(const char *old, size_t oldlen, const char *text, size_t len, zsp_gitcfg_refused_fn fn,
		   void *ctx, char **out, size_t *outlen, char *err, size_t errlen);

#endif
