/* textesc.h: text an agent wrote, shown to a person without letting it redraw the screen, and
 * read back exactly. Used by zsp-run's prompt and approval message and by `zspc grant add
 * --exact-escaped`. */
#ifndef ZSP_TEXTESC_H
#define ZSP_TEXTESC_H

#include <stdbool.h>
#include <stddef.h>

/* Whether text shows as written: printable ASCII and valid UTF-8 only, with no C1 control,
 * bidirectional mark, override or isolate, or line/paragraph separator. */
bool zsp_text_plain(const char *text);

/* text as shown: unchanged when plain; else `\` becomes `\\`, newline, tab and CR `\n` `\t`
 * `\r`, an invisible code point `\u{XXXX}`, any other byte that is not printable ASCII or part
 * of valid UTF-8 `\xHH`. The result is plain. malloc'd; NULL on out-of-memory. */
char *zsp_text_escape(const char *text);

/* The inverse of zsp_text_escape for escaped text: `\\ \n \t \r \xHH \u{H...}` (a Unicode
 * scalar value, written back as UTF-8); any other backslash sequence is an error. *out is
 * malloc'd; a `\x00` is refused (the text ends at a NUL). Returns an enum zsp_status (zsp.h):
 * ZSP_OK; ZSP_EUSAGE for text it refuses, ZSP_EINTERNAL on out-of-memory, either with why in
 * err (NUL-terminated, cut to fit) and *out NULL. */
int zsp_text_unescape(const char *in, char **out, char *err, size_t errlen);

/* One argument quoted for a POSIX shell: as is when it is made of safe characters, else in
 * single quotes (`'` as `'\''`). For printed command lines (zspc --emit bwrap, the approval
 * command zsp-run prints). malloc'd; NULL on out-of-memory. */
char *zsp_shell_quote(const char *s);

#endif
