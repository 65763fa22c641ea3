/* files.h: the commands whose operands are files they read or write (doc/oracle.md "File
 * rules for commands"), as a table: each command with its option grammar and what it does
 * with each operand. */
#ifndef ZSP_FILES_H
#define ZSP_FILES_H

#include <stdbool.h>
#include <stddef.h>

enum {
	ZSP_FILE_READ = 1,
	ZSP_FILE_WRITE = 2,
	ZSP_FILE_VISIBLE = 4,  /* with a tree: its hidden entries (`.NAME`) are skipped (rg) */
	ZSP_FILE_FOLLOW = 8,   /* with a tree: the symlinks in it are followed (grep -R, rg -L) */
};

/* Called for each file a command names: the word as the shell gives it (braces not expanded),
 * ZSP_FILE_READ and/or ZSP_FILE_WRITE, and whether the whole tree below it is read or written
 * (cp -r, grep -r, rg, mv). Returns 0 to go on, anything else to stop (returned as is). */
typedef int (*zsp_files_fn)(void *arg, const char *word, unsigned access, bool tree);

/* Is the command word (its last path component) one of the table? */
bool zsp_files_known(const char *word);

/* argv[0] is the command word. When it is in the table, calls fn for every file it reads or
 * writes: its operands as its option grammar sees them (options anywhere before `--`, as GNU
 * tools take them; `-` is standard input, not a file) and the files options name
 * (`sort -o F`, `grep -f F`, `cp -t DIR`, `dd if=F`). A command not in the table names no
 * file here. Returns 0, or the first nonzero fn returned. */
int zsp_files_of(const char *const *argv, size_t argc, zsp_files_fn fn, void *arg);

#endif
