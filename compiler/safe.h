/* safe.h: the known-safe commands of `allow safe;` (doc/oracle.md "Known-safe commands"), as a
 * table: each command with the options and operands that make it unsafe. */
#ifndef ZSP_SAFE_H
#define ZSP_SAFE_H

#include <stddef.h>

#include "lang/arena.h"
#include "compiler/shell.h"

/* Judges every command of a split: (*why)[i] is NULL when sh->cmds[i] is known safe, else a
 * text for people saying why not ("`rg --pre` runs a program"). A command is judged with its
 * neighbours: a `cd` anywhere in the split makes every git command unsafe. Scripts of
 * `sh -c` and friends are split and judged in turn. The caller checks sh->finding itself: a
 * substitution's words are unsafe here, but a text that did not parse is not rejected.
 * Returns an enum zsp_status (zsp.h): ZSP_OK, or ZSP_EINTERNAL on out-of-memory. */
int zsp_safe_judge(zsp_arena *a, const zsp_sh_result *sh, const char ***why);

/* For lints: commands the table calls unsafe, one per dangerous option (`rg --pre=x`, and
 * the same after an operand), with why (`--pre runs a program`). *texts and *whys (arena)
 * get *n entries. ZSP_OK or ZSP_EINTERNAL. */
int zsp_safe_probes(zsp_arena *a, const char ***texts, const char ***whys, size_t *n);

#endif
