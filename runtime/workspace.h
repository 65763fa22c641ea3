/* workspace.h: the default WORKSPACE of the programs: the top of the git work tree holding the
 * current directory, found without running git, else the current directory. */
#ifndef ZSP_WORKSPACE_H
#define ZSP_WORKSPACE_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

/* Writes to out the workspace for a command started in cwd (absolute and canonical, as getcwd
 * gives it): the nearest directory, from cwd up, that holds a `.git` (a git directory with HEAD,
 * objects/ and refs/, or a file `gitdir: ...` of a worktree or submodule), when that directory
 * and its `.git` belong to uid; else cwd. The walk looks at none of stops (canonical paths: the
 * home directories, where a dotfiles repository is no workspace) nor above them, never takes
 * `/`, and stops at a file system boundary as git does. The nearest `.git` decides: one that
 * belongs to someone else (planted in /tmp) or is no repository leaves cwd. GIT_DIR and
 * GIT_WORK_TREE are not read: the environment is the agent's. */
void zsp_workspace_default(const char *cwd, uid_t uid, const char *const *stops, size_t nstops,
			   char out[PATH_MAX]);

#endif
