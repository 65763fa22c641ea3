/* linux.h: the Linux lowering of a normalized policy: a bubblewrap argv (bwrap.c) and a seccomp
 * filter built with libseccomp (seccomp.c). zspc --emit bwrap|bpf|pfc, zsp-run and --verify use it. */
#ifndef ZSP_LINUX_H
#define ZSP_LINUX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "backends/backend.h"
#include "compiler/ir.h"
#include "lang/arena.h"
#include "lang/buf.h"
#include "lang/diag.h"

/* File descriptor numbers the emitted argv refers to. zsp-run moves its descriptors there;
 * a reader of `zspc --emit bwrap` runs it as
 * `bwrap ARGS -- /dev/zsp-exec -- CMD 3<policy.bpf 4</dev/null 7<zsp-exec` (doc/linux.md). */
enum {
	ZSP_FD_SECCOMP = 3, /* the BPF program (--seccomp) */
	ZSP_FD_EMPTY = 4,   /* an empty file: the contents of every mask of a hidden file */
	ZSP_FD_EXEC = 7,    /* zsp-exec, zsp's exec step (runtime/zsp-exec.c): --ro-bind-fd */
};

/* Where the exec step is in the sandbox: bwrap's own /dev (a tmpfs it always mounts, so the
 * mount point never lands in the user's tree nor under a directory the policy hides), bound
 * read-only from the descriptor zsp-run opened (the file it checked, not whatever the path
 * names by the time bwrap mounts). The sandbox cannot replace it: no rename, unlink or
 * unmount of a mount point without CAP_SYS_ADMIN. */
#define ZSP_EXEC_PATH "/dev/zsp-exec"

/* The source of the runner's masks: an empty file of mode 0, read-only, in bwrap's /dev beside
 * the exec step. Every mask is a bind of it (doc/linux.md "Masks"). */
#define ZSP_MASK_PATH "/dev/zsp-mask"

/* An index of the walks of writable roots kept between runs (runtime/walkindex.c; doc/linux.md
 * "The walk's index"). For each directory a walk read whole it keeps the directory's device,
 * inode and ctime and the entries that can matter (child directories and the names the policy
 * looks for): a directory whose ctime did not change since is not read again. The backend only
 * asks; what it gets back it checks as it would a listing. NULL in zsp_linux_opts: every
 * directory is read (zspc), and the plan is the same. */
typedef struct zsp_walk_entry {
	const char *name;
	unsigned char type;       /* DT_DIR, DT_REG, DT_LNK, ... (never DT_UNKNOWN) */
} zsp_walk_entry;

typedef struct zsp_walk_index {
	void *ctx;
	/* The index of one walk: scope names the root and every name and pattern the walk looks
	 * for (an index made for other patterns is never used). NULL: none (walk everything). */
	void *(*open)(void *ctx, const char *scope, size_t len);
	/* The recorded entries of the directory at rel ("" the root itself, else "/a/b") when st
	 * (its fstat now) has the recorded device, inode and ctime and that ctime is not racy; the
	 * entries stay valid until close. *any: it had entries of any name at all. */
	bool (*lookup)(void *h, const char *rel, const struct stat *st, const zsp_walk_entry **ents,
		       size_t *n, bool *any);
	/* The directory at rel, with st as fstat'ed before it was read, had these entries. */
	void (*record)(void *h, const char *rel, const struct stat *st, const zsp_walk_entry *ents,
		       size_t n, bool any);
	/* The walk is over: complete (the index may be written) or not (it must not). */
	void (*close)(void *h, bool complete);
	/* The lstat of the directory at rel ("/a/b", below the root) as fstatat(rootfd, rel + 1,
	 * st, AT_SYMLINK_NOFOLLOW) says it: 0, or -1 with errno. The provider may take those of the
	 * directories it knows ahead, on a second thread (runtime/walkindex.c says why that is
	 * sound). rootfd must stay open until close. */
	int (*stat)(void *h, int rootfd, const char *rel, struct stat *st);
} zsp_walk_index;

typedef struct zsp_linux_opts {
	const char *chdir;        /* --chdir; NULL: none */
	char *const *environ;     /* the environment the sandbox's is built from (NULL: none) */
	bool seccomp;             /* add --seccomp ZSP_FD_SECCOMP */
	bool proc;                /* add --proc /proc (zsp-run drops it where /proc cannot be mounted) */
	size_t walk_max;          /* entries a walk may read before a glob's launch is refused (0: no
				   * limit: any workspace starts; the cost is bench/launch-bench.sh's) */
	const char *home;         /* the account's home: `~/` in a git include path */
	const char *const *readonly; /* files the sandbox must not change where it may write (the */
	size_t nreadonly;         /* policy and its includes) */
	const char *const *hidden; /* directories it must not see at all (zsp's own state) */
	size_t nhidden;
	const char *layer_dir;    /* where the runner makes the layers of git directories (a path
				   * that does not exist yet); NULL: config is mounted read-only */
	bool exec_step;           /* bind zsp-exec from ZSP_FD_EXEC at ZSP_EXEC_PATH, last: the
				   * command then runs as ZSP_EXEC_PATH [OPTIONS] -- CMD... */
	bool runner_masks;        /* with exec_step: denied files are not bwrap's to mask but the
				   * runner's (zsp_bwrap_plan.masks; doc/linux.md "Masks") */
	const zsp_walk_index *walk_index; /* NULL: none */
	bool opens_decided;       /* zsp-run --strict: the supervisor judges every open against the
				   * glob rules (runtime/opens.h), so a glob holds also where the
				   * launch's mounts cannot: no -Wunenforced for those */
	const char *sandbox_dir;  /* the state of this policy and workspace, canonical: its caches
				   * and its private /tmp (runtime/sandbox.h); NULL: none, and a
				   * policy that needs them cannot be lowered */
} zsp_linux_opts;

/* At most this many git directories get a layer; the others keep a read-only config. */
#define ZSP_BWRAP_MAX_LAYERS 64

/* A git directory the sandbox sees through a layer: dir, made by the runner before bwrap
 * starts, holds copies of the git directory's top-level files (config, HEAD, index, ...) and an
 * empty directory for each of its directories, which are bound from the host. After the run,
 * the runner applies to the host what changed in the copies, config only as far as it cannot
 * make git run a program (runtime/gitlayer.h, doc/host-later.md). */
typedef struct zsp_bwrap_layer {
	const char *gitdir;       /* the host's git directory, canonical */
	const char *dir;          /* the layer: what the sandbox sees at gitdir */
	char **files;             /* top-level regular files and symbolic links, by name */
	size_t nfiles;
	char **mounts;            /* top-level directories, by name */
	size_t nmounts;
} zsp_bwrap_layer;

/* A directory (or the file a mount needs) of the sandbox's own state, sandbox_dir/rel, that the
 * runner creates before bwrap starts, without following a symbolic link on the way (the sandbox
 * writes below sandbox_dir/tmp and sandbox_dir/cache). When it is the source of a bind, argi is
 * the index of that source in the argv: the runner passes it to bwrap as an open descriptor
 * (--bind-fd), so that nothing can swap it between its checks and the mount. */
typedef struct zsp_bwrap_state {
	const char *rel;          /* "tmp", "tmp/a", "cache/npm" */
	bool file;                /* a mount point for a file: an empty regular file */
	long argi;                /* -1: not a bind source */
} zsp_bwrap_state;

/* A missing denied name under a writable root is masked by a read-only empty directory: its
 * mount point must exist on the host. The runner creates the placeholders before bwrap starts
 * and removes them after the run (rmdir: only while empty). A missing protected name gets none:
 * the runner's check after the run covers it (runtime/guard.h). */
typedef struct zsp_bwrap_plan {
	char **argv;              /* bwrap's options, without "bwrap", "--" and the command */
	size_t argc;
	char **placeholders;      /* host directories to create first; parents before children */
	size_t nplaceholders;
	char **locks;             /* existing empty protected directories (maybe another run's
				   * placeholder): held with a shared flock while the sandbox runs */
	size_t nlocks;
	char **roots;             /* the writable roots, canonical */
	size_t nroots;
	char **fixed;             /* protected names mounted read-only (they existed at launch) */
	size_t nfixed;
	zsp_bwrap_layer *layers;
	size_t nlayers;
	char **dropped;           /* names of the caller's variables that `env clear` kept out
				   * (not those `env set` replaces), sorted: what zsp-run reports */
	size_t ndropped;
	zsp_bwrap_state *state;   /* the sandbox's own directories to create (parents first) */
	size_t nstate;
	char **masks;             /* files masked by the runner (exec_step only), after every
				   * mount of bwrap's, while the exec step waits (zsp-exec
				   * --masks-sock; doc/linux.md "Masks") */
	size_t nmasks;
} zsp_bwrap_plan;

/* Every parameter the policy uses must be resolved. Paths are canonicalized against the file
 * system as it is now (symlinks resolved), existing objects are bound, missing ones masked only
 * where the sandbox could create them. Warnings (ZSP_W_UNENFORCED) and errors go to d. Returns
 * an enum zsp_status: ZSP_OK; ZSP_EPOLICY after errors were reported; ZSP_EINTERNAL on
 * out-of-memory (also reported). Everything is allocated in a. */
int zsp_bwrap_plan_build(const zsp_ir_policy *p, const zsp_linux_opts *o, zsp_arena *a, zsp_diag *d,
			 zsp_bwrap_plan *out);

/* The filter as a raw BPF program (what bwrap --seccomp reads) or as libseccomp's pseudo-code.
 * *out is malloc'd. Returns an enum zsp_status, the reason reported on d: ZSP_OK; ZSP_EPOLICY
 * when a rule of the policy cannot be added; ZSP_EINTERNAL on out-of-memory or when libseccomp
 * refuses a built-in rule; ZSP_EIO when the filter cannot be exported (memfd). */
int zsp_seccomp_export(const zsp_ir_policy *p, bool pfc, zsp_diag *d, char **out, size_t *len);

/* Does a run of p need the connect supervisor (runtime/supervise.h): an `allow unix` rule, or
 * mode full? Then the filter lets stream and seqpacket unix sockets be made, and only the
 * supervisor decides what their connect() reaches (doc/linux.md "Sockets"). */
bool zsp_linux_mediates_unix(const zsp_ir_policy *p);

/* The second filter of a supervised run, installed by zsp-exec with a listener: with connects,
 * connect() goes to the supervisor (SCMP_ACT_NOTIFY); with opens (zsp-run --strict), open,
 * openat, creat, truncate, rename, renameat, renameat2, link and linkat do (runtime/opens.h),
 * and openat2, whose flags lie behind a pointer, fails with ENOSYS (libc and most programs then
 * use openat). Everything else is allowed (the main filter decides it); another ABI kills the
 * process. *out is malloc'd BPF. 0, or -errno. */
int zsp_seccomp_notify_export(bool connects, bool opens, char **out, size_t *len);

/* The number of BPF instructions of the filter, in *count. Returns zsp_seccomp_export's status
 * (*count is set only on ZSP_OK). */
int zsp_seccomp_instructions(const zsp_ir_policy *p, zsp_diag *d, size_t *count);

/* The plan's options as text: one shell-quoted argument per line (what a reader runs), or
 * NUL-separated (bwrap --args FD). Appended to out. */
void zsp_bwrap_argv_text(const zsp_bwrap_plan *plan, bool nul, zsp_buf *out);

/* Does lowering p need the sandbox's own state directory (zsp_linux_opts.sandbox_dir): a cache,
 * or a private /tmp the policy lets it write? */
bool zsp_linux_needs_state(const zsp_ir_policy *p);

/* Warnings for what the Linux backends cannot enforce as written (host rules; an allowed unix
 * socket in what zspc emits, which runs without the connect supervisor). */
void zsp_linux_check(const zsp_ir_policy *p, zsp_diag *d);
/* The same for a run of zsp-run, whose connect supervisor admits the allowed unix sockets only. */
void zsp_linux_check_supervised(const zsp_ir_policy *p, zsp_diag *d);

/* The Linux rows of the backend table (backends/table.c). */
void zsp_linux_backend_check(const zsp_backend_input *in, zsp_diag *d);
int zsp_bwrap_backend_emit(const zsp_backend_input *in, zsp_diag *d, zsp_buf *out);
int zsp_bpf_backend_emit(const zsp_backend_input *in, zsp_diag *d, zsp_buf *out);
int zsp_pfc_backend_emit(const zsp_backend_input *in, zsp_diag *d, zsp_buf *out);

#endif
