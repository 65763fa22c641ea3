/* path.h: lexical normalization, validation and glob matching of the path patterns of
 * `fs` rules, `protect` names, unix sockets and tool `path` matchers (doc/language.md §4). */
#ifndef ZSP_PATH_H
#define ZSP_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include "lang/arena.h"

typedef struct zsp_path_error {
	const char *msg;   /* static or arena string */
	const char *hint;  /* static or arena string, may be NULL */
	size_t off, len;   /* byte span inside the INPUT string that is wrong (len >= 1 when possible) */
} zsp_path_error;

enum {
	ZSP_PATH_ALLOW_RELATIVE = 1 << 0, /* also accept a relative pattern (protect names, tool path globs) */
	ZSP_PATH_NO_GLOB        = 1 << 1, /* a literal path (unix sockets): `* ? [` are errors, `\` is a plain character */
};

/* Lexically normalizes a path pattern (doc/language.md §4):
 *  - `~` or `~/...` at the start becomes `${HOME}` / `${HOME}/...`; `~user` is an error;
 *  - anchored forms: `/...`, `${NAME}` as the whole first component, `**` as the whole first
 *    component; anything else is an error unless ZSP_PATH_ALLOW_RELATIVE. That flag does not
 *    refuse anchored input: a caller that needs a relative name checks the result itself;
 *  - `//` -> `/`, `.` dropped, `..` pops a component (`/..` is `/`); popping a `${NAME}` anchor,
 *    a component containing `${`, a glob component, or above the start of a relative pattern is
 *    an error; a trailing `/` is dropped; the empty string is an error, and so is a relative
 *    pattern that normalizes to nothing (`.`, `a/..`);
 *  - `${NAME}` must be well formed wherever it appears (NAME = [A-Za-z_][A-Za-z0-9_]*); `\${`
 *    is an error because parameters cannot be escaped; a `$` not followed by `{` is plain;
 *  - glob syntax is checked with zsp_glob_check; needless escapes are removed (`\a` -> `a`,
 *    `\.` -> `.`), escapes of `* ? [ \` and class bodies are kept verbatim, and a relative
 *    result that would start with `~` keeps it escaped (`\~x`), so the result re-normalizes to
 *    itself;
 *  - control characters (< 0x20, 0x7f) are an error.
 * Returns the normalized arena string, or NULL with *err filled (err->off/len refer to the
 * input). On allocation failure returns NULL with err->msg = "out of memory". */
char *zsp_path_normalize(zsp_arena *a, const char *in, unsigned flags, zsp_path_error *err);

/* true if the pattern has an unescaped glob metacharacter (* ? [). */
bool zsp_glob_has_meta(const char *pattern);
/* The file-system path a normalized pattern without metacharacters names: each `\X` becomes
 * `X` (`proj\[1]` -> `proj[1]`). Only such a path may touch the file system. The arena's
 * string, or NULL on allocation failure. */
char *zsp_path_unescape(zsp_arena *a, const char *pattern);
/* The same into out (size bytes); false when it does not fit. */
bool zsp_path_unescape_buf(const char *pattern, char *out, size_t size);
/* Validates glob syntax: `**` must be a whole component; `[...]` must be closed within its
 * component and non-empty (`[]`, `[!]` are errors; a literal `]` in a class is written `\]`),
 * `[!...]` negates (`[^...]` is an error), ranges `a-z` need lo <= hi (code points); `\` escapes
 * the next character, but a trailing `\` and `\/` are errors. true if fine, else fills *err
 * (offsets into pattern). */
bool zsp_glob_check(const char *pattern, zsp_path_error *err);
/* Matches a whole normalized pattern against a whole normalized path: no implicit match of
 * descendants (append a `**` component for that). `*`, `?` and classes never match `/`; `*` also matches a
 * leading `.`; `?` and classes match one UTF-8 character; `**` matches zero or more whole
 * components (so a trailing `**` component also matches the path without it). A pattern starting with `/` only matches paths starting
 * with `/`; one starting with `**` matches absolute and relative paths at any depth; any other
 * (relative, `${NAME}/...`) only paths not starting with `/`. `${NAME}` is compared literally.
 * Runs in O(len(pattern) * len(path)). */
bool zsp_glob_match(const char *pattern, const char *path);
/* One component of a pattern (no `/`, not `**`) against the name name[0..n), as zsp_glob_match
 * matches each component: `**` + "/" + pattern matches a path exactly when its last component
 * matches. */
bool zsp_glob_match_component(const char *pattern, const char *name, size_t n);
/* Component-wise prefix: "/a" is a prefix of "/a" and "/a/b", not of "/ab". "/" is a prefix of
 * every absolute path. "${W}" is a prefix of "${W}/x". Pure string logic, no globs. An empty
 * parent is a prefix of nothing. */
bool zsp_path_is_prefix(const char *parent, const char *child);
/* Number of components: "/" -> 0, "/a/b" -> 2, "${W}/a" -> 2, "**" + "/.env" -> 2. */
size_t zsp_path_depth(const char *path);
/* Joins a normalized root and a relative normalized name: ("/a", "b/c") -> "/a/b/c",
 * ("/", "b") -> "/b", ("/a", "") -> "/a". NULL on out-of-memory. */
char *zsp_path_join(zsp_arena *a, const char *root, const char *rel);

/* Lexically normalizes an absolute path into out ("/a//b/./c/../d" -> "/a/b/d"; ".." at the root
 * stays at the root): what the oracle, the grant store and the decider judge. false if in is not
 * absolute or out (outlen bytes) is too small. */
bool zsp_path_lexical(const char *in, char *out, size_t outlen);

/* May a path the shell word `word` names (absolute, lexically normal; `* ? [` are wildcards, no
 * escapes, `**` any number of components) lie at or below a path the fs rule pattern `rule`
 * covers (normalized, zsp_glob_match's syntax; a rule covers what is below it too)? With tree,
 * also when the rule lies below such a path (the command reads or writes the whole tree), but
 * with visible not when a component of the rule below the word starts with `.` (the tree
 * skips hidden entries). Over-approximates (a class counts as any character; true on
 * out-of-memory): judging more paths refused only ever allows less. */
bool zsp_glob_overlap(const char *word, const char *rule, bool tree, bool visible);

#endif
