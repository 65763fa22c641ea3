/* files.c: the commands that read or write the files their operands name, as a table: each
 * with its option grammar and the use of its operands (doc/oracle.md "File rules for commands"). */
#include "config.h"

#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "compiler/files.h"
#include "compiler/names.h"

/* What a command does with its operands (after the skipped ones). */
enum shape {
	F_READ,    /* reads each one */
	F_WRITE,   /* writes (creates, changes, removes) each one */
	F_RW,      /* reads and writes each one (sed -i, sudoedit) */
	F_COPY,    /* reads the sources, writes the last operand or the -t DIRECTORY */
	F_MOVE,    /* writes (removes) the sources, writes the last operand or the -t DIRECTORY */
	F_IN_OUT,  /* reads the first, writes the second (uniq IN OUT, xxd IN OUT) */
	F_FIRST,   /* reads the first; the rest are its arguments (source FILE ARGS) */
	F_DD,      /* dd: if=FILE read, of=FILE written */
};

enum {
	TREE = 1,      /* operands are whole trees, always (rg) */
	DOT = 2,       /* no file operand means `.` (rg, grep -r) */
	NOOPTS = 4,    /* takes no options: every word is an operand (source, .) */
	VISIBLE = 8,   /* its trees skip hidden entries unless an option in `all` is given (rg) */
};

/* One command. Short options: req take an argument (attached or the next word), optional
 * only an attached one; longs "name=x" take an argument recorded under the letter x, "name:x"
 * are flags recorded under x (an attached `=VALUE` is allowed), and a prefix that names one
 * long option names it, as getopt_long reads it. */
static const struct fcmd {
	const char *name;
	const char *req, *optional;
	const char *const *longs;
	const char *reads, *writes; /* options whose argument is a file read / written */
	const char *trees;          /* options that make each operand a whole tree (-r) */
	const char *dest;           /* options whose argument is the destination (cp -t DIR) */
	const char *alt;            /* options that change the shape to alt_shape */
	const char *all;            /* VISIBLE: options that make its trees include hidden entries */
	const char *follows;        /* options that make its trees follow the symlinks in them */
	enum shape shape, alt_shape;
	unsigned skip;              /* leading operands that are not files (a pattern, a script) */
	const char *noskip;         /* options that give that operand instead (grep -e, sed -f) */
	unsigned flags;
} table[] = {
#define L(...) ((const char *const[]){ __VA_ARGS__, NULL })
	/* readers */
	{ .name = "cat", .shape = F_READ },
	{ .name = "tac", .req = "s", .longs = L("separator=s", "before:b", "regex:r"), .shape = F_READ },
	{ .name = "nl", .req = "bdfhilnsvw", .longs = L("body-numbering=b", "section-delimiter=d",
		"footer-numbering=f", "header-numbering=h", "line-increment=i", "join-blank-lines=l",
		"number-format=n", "number-separator=s", "starting-line-number=v",
		"number-width=w"), .shape = F_READ },
	{ .name = "head", .req = "nc", .longs = L("lines=n", "bytes=c", "quiet:q", "silent:q",
		"verbose:v", "zero-terminated:z"), .shape = F_READ },
	{ .name = "tail", .req = "ncs", .longs = L("lines=n", "bytes=c", "sleep-interval=s",
		"pid=p", "max-unchanged-stats=m", "follow:f", "retry:r", "quiet:q", "silent:q",
		"verbose:v", "zero-terminated:z"), .shape = F_READ },
	{ .name = "less", .req = "bhjkoOpPtTxyz#", .longs = L("log-file=o", "LOG-FILE=O",
		"lesskey-file=k", "tag-file=T", "pattern=p", "prompt=P", "tag=t", "tabs=x",
		"max-back-scroll=h", "max-forw-scroll=y", "window=z", "buffers=b", "jump-target=j",
		"shift=#"), .reads = "kT", .writes = "oO", .shape = F_READ },
	{ .name = "more", .req = "n", .longs = L("lines=n"), .shape = F_READ },
	{ .name = "wc", .longs = L("files0-from=F", "bytes:c", "chars:m", "lines:l", "words:w",
		"max-line-length:L"), .reads = "F", .shape = F_READ },
	{ .name = "sort", .req = "ktoST", .longs = L("key=k", "field-separator=t", "output=o",
		"buffer-size=S", "temporary-directory=T", "files0-from=F", "random-source=R",
		"compress-program=P", "batch-size=B", "parallel=N", "sort=s"), .reads = "FR",
		.writes = "oT", .shape = F_READ },
	{ .name = "uniq", .req = "fsw", .longs = L("skip-fields=f", "skip-chars=s",
		"check-chars=w", "all-repeated:D", "group:G"), .shape = F_IN_OUT },
	{ .name = "cut", .req = "bcdf", .longs = L("bytes=b", "characters=c", "delimiter=d",
		"fields=f", "output-delimiter=O"), .shape = F_READ },
	{ .name = "paste", .req = "d", .longs = L("delimiters=d"), .shape = F_READ },
	{ .name = "od", .req = "AjNtS", .optional = "w", .longs = L("address-radix=A",
		"skip-bytes=j", "read-bytes=N", "format=t", "strings=S", "width:w",
		"endian=E"), .shape = F_READ },
	{ .name = "xxd", .req = "cglosn", .shape = F_IN_OUT },
	{ .name = "hexdump", .req = "efns", .reads = "f", .shape = F_READ },
	{ .name = "hd", .req = "efns", .reads = "f", .shape = F_READ },
	{ .name = "base64", .req = "w", .longs = L("wrap=w", "decode:d", "ignore-garbage:i"),
	  .shape = F_READ },
	{ .name = "base32", .req = "w", .longs = L("wrap=w", "decode:d", "ignore-garbage:i"),
	  .shape = F_READ },
	{ .name = "diff", .req = "CUIFxXSL", .longs = L("context=C", "unified=U",
		"ignore-matching-lines=I", "show-function-line=F", "exclude=x", "exclude-from=X",
		"starting-file=S", "label=L", "from-file=1", "to-file=2", "recursive:r",
		"line-format=3", "width=W", "tabsize=4", "color:5", "palette=6"),
	  .reads = "X12", .trees = "r", .shape = F_READ },
	{ .name = "cmp", .req = "in", .longs = L("ignore-initial=i", "bytes=n"), .shape = F_READ },
	{ .name = "comm", .longs = L("output-delimiter=d"), .shape = F_READ },
	{ .name = "join", .req = "aejotv12", .shape = F_READ },
	{ .name = "md5sum", .shape = F_READ },
	{ .name = "sha1sum", .shape = F_READ },
	{ .name = "sha224sum", .shape = F_READ },
	{ .name = "sha256sum", .shape = F_READ },
	{ .name = "sha384sum", .shape = F_READ },
	{ .name = "sha512sum", .shape = F_READ },
	{ .name = "b2sum", .req = "l", .longs = L("length=l"), .shape = F_READ },
	{ .name = "cksum", .req = "al", .longs = L("algorithm=a", "length=l"), .shape = F_READ },
	{ .name = "sum", .shape = F_READ },
	{ .name = "strings", .req = "nteTo", .longs = L("bytes=n", "radix=t", "encoding=e",
		"target=T", "output-separator=s"), .shape = F_READ },
	{ .name = "file", .req = "emfFP", .longs = L("magic-file=m", "files-from=f",
		"separator=F", "exclude=e", "parameter=P"), .reads = "mf", .shape = F_READ },
	{ .name = "fold", .req = "w", .longs = L("width=w"), .shape = F_READ },
	{ .name = "fmt", .req = "wgp", .longs = L("width=w", "goal=g", "prefix=p"), .shape = F_READ },
	{ .name = "expand", .req = "t", .longs = L("tabs=t"), .shape = F_READ },
	{ .name = "unexpand", .req = "t", .longs = L("tabs=t"), .shape = F_READ },
	{ .name = "rev", .shape = F_READ },
	{ .name = "shuf", .req = "inoe", .longs = L("input-range=i", "head-count=n", "output=o",
		"random-source=R", "echo:e"), .reads = "R", .writes = "o", .shape = F_READ },
	{ .name = "iconv", .req = "fto", .longs = L("from-code=f", "to-code=t", "output=o"),
	  .writes = "o", .shape = F_READ },
	{ .name = "zcat", .shape = F_READ },
	{ .name = "bzcat", .shape = F_READ },
	{ .name = "xzcat", .shape = F_READ },
	/* grep PATTERN FILE...: the pattern is no file unless -e or -f gives it */
	{ .name = "grep", .req = "efmABCdD", .longs = L("regexp=e", "file=f", "max-count=m",
		"after-context=A", "before-context=B", "context=C", "directories=d", "devices=D",
		"include=I", "exclude=x", "exclude-from=X", "exclude-dir=y", "label=L",
		"recursive:r", "dereference-recursive:R", "color:c", "colour:c", "binary-files=b"),
	  .reads = "fX", .trees = "rR", .follows = "R", .skip = 1, .noskip = "ef", .flags = DOT,
	  .shape = F_READ },
	{ .name = "egrep", .req = "efmABCdD", .longs = L("regexp=e", "file=f", "max-count=m",
		"exclude-from=X", "recursive:r", "dereference-recursive:R"),
	  .reads = "fX", .trees = "rR", .follows = "R", .skip = 1, .noskip = "ef", .flags = DOT,
	  .shape = F_READ },
	{ .name = "fgrep", .req = "efmABCdD", .longs = L("regexp=e", "file=f", "max-count=m",
		"exclude-from=X", "recursive:r", "dereference-recursive:R"),
	  .reads = "fX", .trees = "rR", .follows = "R", .skip = 1, .noskip = "ef", .flags = DOT,
	  .shape = F_READ },
	/* rg PATTERN [PATH...]: searches trees, skipping hidden entries unless told otherwise */
	{ .name = "rg", .req = "efgtTmABCjEMr", .longs = L("regexp=e", "file=f", "glob=g",
		"iglob=G", "type=t", "type-not=T", "max-count=m", "after-context=A",
		"before-context=B", "context=C", "threads=j", "encoding=E", "max-columns=M",
		"replace=r", "pre=P", "pre-glob=Q", "ignore-file=i", "type-add=a", "type-clear=c",
		"max-depth=d", "max-filesize=z", "sort=s", "sortr=S", "path-separator=p",
		"hidden:.", "files:F", "unrestricted:u", "color=o", "colors=O", "follow:L"),
	  .reads = "fi", .all = ".u", .follows = "L", .skip = 1, .noskip = "efF", .flags = TREE | DOT | VISIBLE,
	  .shape = F_READ },
	/* source FILE ARGS: reads (and runs) FILE */
	{ .name = "source", .flags = NOOPTS, .shape = F_FIRST },
	{ .name = ".", .flags = NOOPTS, .shape = F_FIRST },
	/* sed SCRIPT FILE...: -i writes each file back */
	{ .name = "sed", .req = "efl", .optional = "i", .longs = L("expression=e", "file=f",
		"line-length=l", "in-place:i", "null-data:z", "separate:s", "regexp-extended:E",
		"quiet:n", "silent:n", "sandbox:S"), .reads = "f", .alt = "i", .alt_shape = F_RW,
	  .skip = 1, .noskip = "ef", .shape = F_READ },
	/* writers */
	{ .name = "tee", .longs = L("append:a", "ignore-interrupts:i", "output-error:p"),
	  .shape = F_WRITE },
	{ .name = "sponge", .shape = F_WRITE },
	{ .name = "touch", .req = "dtr", .longs = L("date=d", "reference=r", "time=T"),
	  .reads = "r", .shape = F_WRITE },
	{ .name = "truncate", .req = "sr", .longs = L("size=s", "reference=r", "io-blocks:o",
		"no-create:c"), .reads = "r", .shape = F_WRITE },
	{ .name = "mkdir", .req = "m", .longs = L("mode=m", "parents:p", "verbose:v",
		"context:Z"), .shape = F_WRITE },
	{ .name = "rmdir", .longs = L("parents:p", "verbose:v", "ignore-fail-on-non-empty:i"),
	  .shape = F_WRITE },
	{ .name = "rm", .longs = L("recursive:r", "force:f", "interactive:I", "dir:d",
		"one-file-system:x", "no-preserve-root:n", "preserve-root:P", "verbose:v"),
	  .trees = "rR", .shape = F_WRITE },
	{ .name = "unlink", .shape = F_WRITE },
	{ .name = "shred", .req = "ns", .longs = L("iterations=n", "size=s", "random-source=R",
		"remove:u", "force:f", "exact:x", "zero:z", "verbose:v"), .reads = "R",
	  .shape = F_WRITE },
	{ .name = "sudoedit", .req = "ugCDhprtUTR", .longs = L("user=u", "group=g",
		"close-from=C", "chdir=D", "host=h", "prompt=p", "role=r", "type=t",
		"other-user=U", "command-timeout=T", "chroot=R"), .shape = F_RW },
	/* cp, mv, install, ln: sources, then the destination (or -t DIRECTORY) */
	{ .name = "cp", .req = "St", .longs = L("suffix=S", "target-directory=t",
		"recursive:r", "archive:a", "no-target-directory:T", "backup:b", "reflink:f",
		"sparse=s", "preserve:p", "no-preserve=n", "context:Z", "parents:P",
		"dereference:L"), .dest = "t", .trees = "rRa", .follows = "L", .shape = F_COPY },
	{ .name = "mv", .req = "St", .longs = L("suffix=S", "target-directory=t",
		"no-target-directory:T", "backup:b", "exchange:x", "context:Z"), .dest = "t",
	  .shape = F_MOVE },
	{ .name = "install", .req = "gmoStC", .longs = L("group=g", "mode=m", "owner=o",
		"suffix=S", "target-directory=t", "strip-program=P", "directory:d",
		"backup:b", "context:Z"), .dest = "t", .alt = "d", .alt_shape = F_WRITE,
	  .shape = F_COPY },
	{ .name = "ln", .req = "St", .longs = L("suffix=S", "target-directory=t",
		"symbolic:s", "force:f", "no-target-directory:T", "backup:b", "relative:r"),
	  .dest = "t", .shape = F_COPY },
	{ .name = "dd", .flags = NOOPTS, .shape = F_DD },
#undef L
};

/* Case-insensitive comparison of the last path component of word with name. */
static bool name_is(const char *word, const char *name)
{
	const char *slash = strrchr(word, '/');

	return strcasecmp(slash ? slash + 1 : word, name) == 0;
}

/* Looked up for every command: indexed once */
_Static_assert(sizeof(table) / sizeof(table[0]) <= ZSP_NAMES_MAX, "files: too many to index");
static zsp_names table_names;
static bool table_ok;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void index_table(void)
{
	table_ok = zsp_names_build(&table_names, &table[0].name, sizeof(table) / sizeof(table[0]),
				   sizeof(table[0]));
}

static const struct fcmd *find_cmd(const char *word)
{
	if (pthread_once(&table_once, index_table) == 0 && table_ok) {
		long k = zsp_names_find(&table_names, word);
		return k < 0 ? NULL : &table[k];
	}
	/* no index (pthread_once failed): a scan, so that no reader goes unjudged */
	for (size_t k = 0; k < sizeof(table) / sizeof(table[0]); k++)
		if (name_is(word, table[k].name))
			return &table[k];
	return NULL;
}

bool zsp_files_known(const char *word)
{
	return find_cmd(word) != NULL;
}

#define OPERANDS_MAX 256

/* What the option scan found. */
typedef struct scan {
	bool seen[128];
	const char **operands;
	size_t n;
} scan;

static bool in_set(const char *set, unsigned char x)
{
	return set && x && strchr(set, x);
}

/* One option's argument: a file when the command says so. */
static int option_file(const struct fcmd *c, unsigned char x, const char *val, zsp_files_fn fn,
		       void *arg)
{
	if (!val)
		return 0;
	if (in_set(c->reads, x))
		return fn(arg, val, ZSP_FILE_READ, false);
	if (in_set(c->writes, x))
		return fn(arg, val, ZSP_FILE_WRITE, false);
	return 0;
}

/* A long option: every entry its name (as given, before `=`) is a prefix of, or the one entry
 * it names exactly. An ambiguous prefix counts as each entry it could be: more files judged,
 * never fewer. *val gets its argument (the next word when it takes one and none is attached). */
static int long_option(const struct fcmd *c, scan *s, const char *const *argv, size_t argc,
		       size_t *i, zsp_files_fn fn, void *arg, const char **dest)
{
	const char *w = argv[*i] + 2;
	size_t n = strcspn(w, "=");
	bool exact = false, takes = false;
	int rc;

	for (const char *const *l = c->longs; l && *l && !exact; l++)
		exact = strlen(*l) - 2 == n && strncmp(*l, w, n) == 0;
	for (const char *const *l = c->longs; l && *l; l++) {
		size_t ln = strlen(*l) - 2;

		if (n > ln || strncmp(*l, w, n) != 0 || (exact && ln != n))
			continue;
		takes |= (*l)[ln] == '=';
	}
	const char *val = w[n] ? w + n + 1 : takes && *i + 1 < argc ? argv[++*i] : NULL;
	for (const char *const *l = c->longs; l && *l; l++) {
		size_t ln = strlen(*l) - 2;
		unsigned char x = (unsigned char)(*l)[ln + 1];

		if (n > ln || strncmp(*l, w, n) != 0 || (exact && ln != n))
			continue;
		s->seen[x & 127] = true;
		if ((*l)[ln] != '=')
			continue;
		if (in_set(c->dest, x) && val)
			*dest = val;
		else if ((rc = option_file(c, x, val, fn, arg)) != 0)
			return rc;
	}
	return 0;
}

/* Options anywhere before `--` (GNU tools permute them); the operands in order. */
static int scan_words(const struct fcmd *c, const char *const *argv, size_t argc, scan *s,
		      zsp_files_fn fn, void *arg, const char **dest)
{
	bool only = (c->flags & NOOPTS) != 0;
	int rc;

	for (size_t i = 1; i < argc; i++) {
		const char *w = argv[i];

		if (!only && strcmp(w, "--") == 0) {
			only = true;
			continue;
		}
		if (only || w[0] != '-' || w[1] == '\0') {
			if (strcmp(w, "-") == 0 && !only)
				continue;
			if (s->n < OPERANDS_MAX)
				s->operands[s->n] = w;
			s->n++;
			continue;
		}
		if (w[1] == '-') {
			if ((rc = long_option(c, s, argv, argc, &i, fn, arg, dest)) != 0)
				return rc;
			continue;
		}
		for (size_t j = 1; w[j]; j++) {
			unsigned char x = (unsigned char)w[j];
			const char *val = NULL;

			if (x >= 128)
				break;
			s->seen[x] = true;
			if (c->req && strchr(c->req, x))
				val = w[j + 1] ? w + j + 1 : i + 1 < argc ? argv[++i] : NULL;
			else if (c->optional && strchr(c->optional, x))
				val = w[j + 1] ? w + j + 1 : NULL;
			else
				continue;
			if (in_set(c->dest, x) && val)
				*dest = val;
			else if ((rc = option_file(c, x, val, fn, arg)) != 0)
				return rc;
			break;
		}
	}
	return 0;
}

static bool any_seen(const scan *s, const char *set)
{
	for (const char *p = set; p && *p; p++)
		if (s->seen[(unsigned char)*p & 127])
			return true;
	return false;
}

int zsp_files_of(const char *const *argv, size_t argc, zsp_files_fn fn, void *arg)
{
	const struct fcmd *c = argc ? find_cmd(argv[0]) : NULL;
	const char *stack[OPERANDS_MAX], *dest = NULL;
	scan s = { .operands = stack };
	int rc = 0;

	if (!c)
		return 0;
	if ((rc = scan_words(c, argv, argc, &s, fn, arg, &dest)) != 0)
		return rc;
	if (s.n > OPERANDS_MAX) {
		/* more operands than kept: every word that is no option is read and written, as a
		 * whole tree (fewer files judged would be an allow the table cannot vouch for) */
		for (size_t i = 1; i < argc; i++)
			if ((argv[i][0] != '-' || !argv[i][1]) &&
			    (rc = fn(arg, argv[i], ZSP_FILE_READ | ZSP_FILE_WRITE, true)) != 0)
				return rc;
		return 0;
	}
	enum shape shape = c->alt && any_seen(&s, c->alt) ? c->alt_shape : c->shape;
	size_t first = c->skip && !any_seen(&s, c->noskip) ? c->skip : 0;
	bool tree = (c->flags & TREE) || any_seen(&s, c->trees);
	unsigned hidden = ((c->flags & VISIBLE) && !any_seen(&s, c->all) ? ZSP_FILE_VISIBLE : 0u) |
			  (tree && any_seen(&s, c->follows) ? ZSP_FILE_FOLLOW : 0u);
	const char *const *ops = s.operands + (first < s.n ? first : s.n);
	size_t n = first < s.n ? s.n - first : 0;

	if (n == 0 && (c->flags & DOT) && tree)
		return fn(arg, ".", ZSP_FILE_READ | hidden, true);
	switch (shape) {
	case F_READ:
	case F_WRITE:
	case F_RW:
		for (size_t k = 0; k < n; k++) {
			unsigned acc = shape == F_READ ? ZSP_FILE_READ : shape == F_WRITE
				? ZSP_FILE_WRITE : ZSP_FILE_READ | ZSP_FILE_WRITE;

			if ((rc = fn(arg, ops[k], acc | hidden, tree)) != 0)
				return rc;
		}
		return 0;
	case F_COPY:
	case F_MOVE:
		/* without -t, the last operand is the destination (when there are two or more) */
		if (!dest && n >= 2)
			dest = ops[--n];
		for (size_t k = 0; k < n; k++) {
			unsigned acc = shape == F_COPY ? ZSP_FILE_READ | hidden : ZSP_FILE_WRITE;

			/* a move removes its sources: each is a write of its whole tree */
			if ((rc = fn(arg, ops[k], acc, shape == F_MOVE || tree)) != 0)
				return rc;
		}
		return dest ? fn(arg, dest, ZSP_FILE_WRITE, tree) : 0;
	case F_IN_OUT:
		if (n > 0 && (rc = fn(arg, ops[0], ZSP_FILE_READ, false)) != 0)
			return rc;
		return n > 1 ? fn(arg, ops[1], ZSP_FILE_WRITE, false) : 0;
	case F_FIRST:
		return n > 0 ? fn(arg, ops[0], ZSP_FILE_READ, false) : 0;
	case F_DD:
		for (size_t k = 0; k < n; k++, rc = 0) {
			if (strncmp(ops[k], "if=", 3) == 0)
				rc = fn(arg, ops[k] + 3, ZSP_FILE_READ, false);
			else if (strncmp(ops[k], "of=", 3) == 0)
				rc = fn(arg, ops[k] + 3, ZSP_FILE_WRITE, false);
			if (rc)
				return rc;
		}
		return 0;
	}
	return 0;
}
