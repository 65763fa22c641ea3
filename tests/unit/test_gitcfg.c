/* test_gitcfg.c: CUnit tests for backends/gitcfg.c: each syntax form as git 2.39 reads it,
 * spellings that must still be the dangerous key, the allow-list, the URL rule, errors, and
 * the file readers (symlinks, FIFOs, sizes). */
#include <CUnit/Basic.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backends/gitcfg.h"
#include "compiler/zsp.h"

#define MAX_SEEN 16

/* Entries seen, each as one line "section|subsection|name|value" ("-" for NULL). */
typedef struct seen {
	char text[MAX_SEEN][256];
	unsigned line[MAX_SEEN];
	size_t n;
	size_t stop_after; /* 0: never stop */
} seen;

static int collect(void *ctx, const zsp_gitcfg_entry *e)
{
	seen *s = ctx;
	if (s->n < MAX_SEEN) {
		snprintf(s->text[s->n], sizeof(s->text[0]), "%s|%s|%s|%s", e->section,
			 e->subsection ? e->subsection : "-", e->name, e->value ? e->value : "-");
		s->line[s->n] = e->line;
	}
	s->n++;
	return s->stop_after && s->n >= s->stop_after;
}

static char err[256];

static int parse(const char *text, seen *s)
{
	memset(s, 0, sizeof(*s));
	return zsp_gitcfg_parse(text, strlen(text), collect, s, err, sizeof(err));
}

/* text parses to exactly one entry, `want`. */
static void one(const char *text, const char *want)
{
	seen s;
	int st = parse(text, &s);
	CU_ASSERT_EQUAL(st, ZSP_OK);
	CU_ASSERT_EQUAL(s.n, 1);
	if (st != ZSP_OK || s.n != 1 || strcmp(s.text[0], want) != 0)
		fprintf(stderr, "\n  input %s\n  got %zu: %s (%s)\n  want %s\n", text, s.n,
			s.n ? s.text[0] : "", err, want);
	else
		CU_ASSERT_STRING_EQUAL(s.text[0], want);
}

/* text[0..len) is refused with err starting with want_line ("line 3:"). */
static void refused_n(const char *text, size_t len, const char *want_line)
{
	seen s = { 0 };
	int st = zsp_gitcfg_parse(text, len, collect, &s, err, sizeof(err));
	CU_ASSERT_EQUAL(st, ZSP_EPOLICY);
	if (st != ZSP_EPOLICY || strncmp(err, want_line, strlen(want_line)) != 0)
		fprintf(stderr, "\n  input %.*s\n  status %d err \"%s\", want \"%s...\"\n", (int)len,
			text, st, err, want_line);
	CU_ASSERT_EQUAL(strncmp(err, want_line, strlen(want_line)), 0);
}

static void refused(const char *text, const char *want_line)
{
	refused_n(text, strlen(text), want_line);
}

static void test_forms(void)
{
	one("[core]\n\tbare = false\n", "core|-|bare|false");
	one("[Core]\n\tBare=False", "core|-|bare|False");
	one("[remote \"Origin\"]\n url = x\n", "remote|Origin|url|x");
	one("[remote\t \"a \\\"q\\\" \\\\ ]\"]\nk=v", "remote|a \"q\" \\ ]|k|v");
	one("[Remote.Origin]\nurl=x", "remote|origin|url|x");    /* legacy: lower-cased */
	one("[a.B.c]\nk=v", "a|b.c|k|v");
	one("[a.B \"C\"]\nk=v", "a|b.C|k|v");                     /* git's key a.b.C.k */
	one("[core \"\"]\nk=v", "core||k|v");                     /* core..k */
	one("[s]\nflag\n", "s|-|flag|-");
	one("[s]\nflag   \t\n", "s|-|flag|-");
	one("[s]\nempty =\n", "s|-|empty|");
	one("[s]\nempty = \"\"\n", "s|-|empty|");
	one("[s]\nk-1 = a  b\t c  \n", "s|-|k-1|a  b  c");
	one("[s]\nk = \"  a  \"\n", "s|-|k|  a  ");
	one("[s]\nk = a\\tb\\nc\\bd\\\\e\\\"f\n", "s|-|k|a\tb\nc\bd\\e\"f");
	one("[s]\nk = a\\\n  b\n", "s|-|k|a  b");
	one("[s]\nk = \"a\\\nb\"\n", "s|-|k|ab");
	one("[s]\nk = \"a#b;c\" # comment\n", "s|-|k|a#b;c");
	one("[s]\nk = v ; comment \"\n", "s|-|k|v");
	one("[s]\nk = v # comment \\\n", "s|-|k|v");
	one("[s] k = v\n", "s|-|k|v");
	one("[a][b]k=v", "b|-|k|v");
	one("# c\n; c\n\n  \t\n[s]   # c\nk=v", "s|-|k|v");
	one("[s]\nk = x\"y\"z\n", "s|-|k|xyz");
	one("[s]\nk = \"\" b\n", "s|-|k|b");
	one("[s]\nk = a\\", "s|-|k|a"); /* a backslash at the end joins nothing */
	one("[s]\r\nk = v\r\n", "s|-|k|v");
	one("[s]\r\nk = a\\\r\n b\r\n", "s|-|k|a b");
	one("[s]\nk = a\rb\n", "s|-|k|a b"); /* a lone CR is a blank */
	one("[s]\nk = \"a\rb\"\n", "s|-|k|a\rb");
	one("\xEF\xBB\xBF[s]\nk=v", "s|-|k|v");
	one("[s]\nk = caf\xC3\xA9\n", "s|-|k|caf\xC3\xA9");

	seen s;
	CU_ASSERT_EQUAL(parse("", &s), ZSP_OK);
	CU_ASSERT_EQUAL(s.n, 0);
	CU_ASSERT_EQUAL(parse("\xEF\xBB\xBF", &s), ZSP_OK);
	CU_ASSERT_EQUAL(parse("[s]\na=1\n\n# x\nb\nc = \"x\\\ny\"\nd=2", &s), ZSP_OK);
	CU_ASSERT_EQUAL(s.n, 4);
	CU_ASSERT_EQUAL(s.line[0], 2);
	CU_ASSERT_EQUAL(s.line[1], 5);
	CU_ASSERT_EQUAL(s.line[2], 6);
	CU_ASSERT_EQUAL(s.line[3], 8);
	CU_ASSERT_EQUAL(parse("[s]\na=1\nb=2\nc=3\n", &s), ZSP_OK);
	CU_ASSERT_EQUAL(s.n, 3);
	s.stop_after = 2;
	s.n = 0;
	CU_ASSERT_EQUAL(zsp_gitcfg_parse("[s]\na=1\nb=2\n\"bad", 16, collect, &s, err, sizeof(err)),
			ZSP_OK);
	CU_ASSERT_EQUAL(s.n, 2);
	CU_ASSERT_STRING_EQUAL(err, "");
}

/* Spellings of a dangerous key that git reads as that key. */
static void test_disguises(void)
{
	one("[Core] FSMonitor = x", "core|-|fsmonitor|x");
	one("[core]fsmonitor=x", "core|-|fsmonitor|x");
	one("[CORE]\n\t  fsMonitor\t=\t\"x\"  ", "core|-|fsmonitor|x");
	one("[core.x]\nfsmonitor=x", "core|x|fsmonitor|x");
	one("[core \"x\"]\nfsmonitor=x", "core|x|fsmonitor|x");
	one("\xEF\xBB\xBF[core]\r\nfsmonitor = x\r\n", "core|-|fsmonitor|x");
	/* a key hidden in a continued value is value text: one entry, bare */
	one("[core]\n\tbare = true\\\nfsmonitor = x\n", "core|-|bare|truefsmonitor = x");
	/* a quoted `#` does not hide the rest */
	one("[core]\nfsmonitor = \"#\"evil\n", "core|-|fsmonitor|#evil");
	one("[alias]\n\tst = \"!sh -c 'x;y'\" ; c\n", "alias|-|st|!sh -c 'x;y'");

	seen s;
	CU_ASSERT_EQUAL(parse("[s]\nk=\"a\\\n[core]\\\nfsmonitor=x\"\n", &s), ZSP_OK);
	CU_ASSERT_EQUAL(s.n, 1);
	CU_ASSERT_EQUAL(parse("[s]\n# x \\\n[core]\nfsmonitor=x\n", &s), ZSP_OK);
	CU_ASSERT_EQUAL(s.n, 1); /* comments do not continue */
	CU_ASSERT_STRING_EQUAL(s.text[0], "core|-|fsmonitor|x");
}

static void test_errors(void)
{
	refused("[s]\nk = \"open\n", "line 2:");
	refused("[s]\nk = \"a\\\n", "line 3:");
	refused("[s]\nk = \\q\n", "line 2:");
	refused("[s]\nk = \\\rx\n", "line 2:");
	refused("[ core ]\nk=v", "line 1:");
	refused("[core ]\nk=v", "line 1:");
	refused("[]\nk=v", "line 1:");
	refused("[ \"x\"]\nk=v", "line 1:");
	refused("[.x]\nk=v", "line 1:");
	refused("[co_re]\nk=v", "line 1:");
	refused("[core", "line 1:");
	refused("[core\n]", "line 1:");
	refused("[s \"a\"x]", "line 1:");
	refused("[s \"a\" ]", "line 1:");
	refused("[s \"a\nb\"]", "line 1:");
	refused("[s \"a\\x\"]", "line 1:");
	refused("k=v\n", "line 1:");
	refused("[s]\n1k=v\n", "line 2:");
	refused("[s]\n-k=v\n", "line 2:");
	refused("[s]\nk_x=v\n", "line 2:");
	refused("[s]\nk # c\n", "line 2:");
	refused("[s]\nk\r=v\n", "line 2:");
	refused("[s]\nfsmon\\\nitor = x\n", "line 2:"); /* git: bad config line */
	refused("[s]\n]\n", "line 2:");
	refused("\xEF\xBB[s]", "line 1:");
	refused("\xEF[s]", "line 1:");
	refused_n("[s]\nk=a\0b\n", 10, "line 2: a NUL byte");
	refused_n("[s]\n# \0\n", 8, "line 2: a NUL byte");

	size_t big = ZSP_GITCFG_MAX + 1;
	char *text = malloc(big);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	memset(text, '\n', big);
	refused_n(text, big, "line 1: larger than");
	seen s = { 0 };
	CU_ASSERT_EQUAL(zsp_gitcfg_parse(text, big - 1, collect, &s, err, sizeof(err)), ZSP_OK);
	free(text);
}

/* Counts the entries not on the allow-list, and shows them. */
static int safe_cb(void *ctx, const zsp_gitcfg_entry *e)
{
	const char *why;
	char key[128];
	if (!zsp_gitcfg_safe(e, &why)) {
		fprintf(stderr, "\n  unsafe: %s: %s\n", zsp_gitcfg_key(e, key, sizeof(key)), why);
		++*(int *)ctx;
	}
	return 0;
}

/* Inputs of the largest size that might make a careless parser quadratic: each must parse in
 * well under a second (a quadratic pass over 1 MiB takes minutes). */
static void test_linear(void)
{
	static const char *const units[] = {
		"[s]\n",   "[s \"a\"]", "k=v\n", "k = a   \t b", " \t", "\\\n", "[a.b.c]",
		"k = \"\\\"\"\n", "#", "k\n", "[s]\nk = x ",
	};
	size_t size = ZSP_GITCFG_MAX;
	char *text = malloc(size);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		size_t n = strlen(units[u]), len = 4;
		memcpy(text, "[s]\n", 4);
		while (len + n <= size) {
			memcpy(text + len, units[u], n);
			len += n;
		}
		clock_t t0 = clock();
		seen s = { 0 };
		zsp_gitcfg_parse(text, len, collect, &s, err, sizeof(err));
		double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
		if (secs > 1.0)
			fprintf(stderr, "\n  %zu x \"%s\": %.2f s\n", len / n, units[u], secs);
		CU_ASSERT(secs < 1.0);
	}
	free(text);
}

/* The configs git itself wrote (git 2.39: init, remote add, config, submodule add). */
static void test_real(void)
{
	static const char repo[] =
		"[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n"
		"\tlogallrefupdates = true\n[user]\n\tname = A U Thor\n\temail = a@example.com\n"
		"[remote \"origin\"]\n\turl = https://example.com/x.git\n"
		"\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n"
		"\tmerge = refs/heads/main\n[submodule \"s\"]\n\turl = /tmp/r/sub\n\tactive = true\n";
	static const char global[] =
		"[init]\n\tdefaultBranch = main\n[pull]\n\trebase = true\n";
	seen s;
	CU_ASSERT_EQUAL(parse(repo, &s), ZSP_OK);
	CU_ASSERT_EQUAL(s.n, 12);
	CU_ASSERT_STRING_EQUAL(s.text[9], "branch|main|merge|refs/heads/main");
	CU_ASSERT_EQUAL(parse(global, &s), ZSP_OK);
	CU_ASSERT_EQUAL(s.n, 2);
	CU_ASSERT_STRING_EQUAL(s.text[0], "init|-|defaultbranch|main");

	/* every key git wrote there is safe */
	static const char *const texts[] = { repo, global };
	for (size_t i = 0; i < 2; i++) {
		int bad = 0;
		CU_ASSERT_EQUAL(zsp_gitcfg_parse(texts[i], strlen(texts[i]), safe_cb, &bad, err,
						 sizeof(err)), ZSP_OK);
		CU_ASSERT_EQUAL(bad, 0);
	}
}

/* The first entry of a parse, copied out of the parser's buffers. */
typedef struct first {
	zsp_gitcfg_entry e;
	char section[64], sub[256], name[64], value[512];
	int n;
} first;

static int keep(void *ctx, const zsp_gitcfg_entry *e)
{
	first *f = ctx;
	if (f->n++)
		return 0;
	snprintf(f->section, sizeof(f->section), "%s", e->section);
	snprintf(f->sub, sizeof(f->sub), "%s", e->subsection ? e->subsection : "");
	snprintf(f->name, sizeof(f->name), "%s", e->name);
	snprintf(f->value, sizeof(f->value), "%s", e->value ? e->value : "");
	f->e.section = f->section;
	f->e.subsection = e->subsection ? f->sub : NULL;
	f->e.name = f->name;
	f->e.value = e->value ? f->value : NULL;
	return 0;
}

/* The verdict on the single entry of text, and its why. */
static bool verdict(const char *text, const char **why)
{
	first f = { 0 };
	int st = zsp_gitcfg_parse(text, strlen(text), keep, &f, err, sizeof(err));
	CU_ASSERT_EQUAL(st, ZSP_OK);
	CU_ASSERT_EQUAL(f.n, 1);
	if (st != ZSP_OK || f.n != 1) {
		fprintf(stderr, "\n  %s: %s\n", text, err);
		*why = "parse";
		return false;
	}
	return zsp_gitcfg_safe(&f.e, why);
}

static void safe(const char *text)
{
	const char *why = "";
	bool ok = verdict(text, &why);
	if (!ok)
		fprintf(stderr, "\n  want safe: %s (%s)\n", text, why);
	CU_ASSERT_TRUE(ok);
	CU_ASSERT_PTR_NULL(why);
}

static void unsafe(const char *text, const char *why_part)
{
	const char *why = NULL;
	bool ok = verdict(text, &why);
	CU_ASSERT_FALSE(ok);
	CU_ASSERT_PTR_NOT_NULL_FATAL(why);
	if (ok || !strstr(why, why_part))
		fprintf(stderr, "\n  want unsafe (%s): %s -> %s\n", why_part, text, why);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, why_part));
}

static void test_safe(void)
{
	safe("[core]\nrepositoryformatversion = 1");
	safe("[core]\nfilemode");
	safe("[core]\nlooseCompression = 1");
	safe("[user]\nname = x");
	safe("[committer]\nemail = x");
	safe("[init]\ndefaultBranch = trunk");
	safe("[extensions]\nobjectFormat = sha256");
	safe("[extensions]\npartialClone = origin");
	safe("[remote \"o\"]\nfetch = +refs/heads/*:refs/remotes/o/*");
	safe("[remote \"o\"]\npromisor = true");
	safe("[branch \"main\"]\nremote = origin");
	safe("[branch \"main\"]\nmerge = refs/heads/main");
	safe("[pull]\nff = only");
	safe("[merge]\nconflictStyle = diff3");
	safe("[color]\nui = auto");
	safe("[color \"diff\"]\nmeta = blue bold");
	safe("[diff]\nalgorithm = histogram");
	safe("[submodule \"s\"]\nactive = true");
	safe("[advice]\ndetachedHead = false");
	safe("[gc]\nauto = 0");

	const char *incl = "includes another file", *listed = "not on the list";
	unsafe("[include]\npath = x", incl);
	unsafe("[includeIf \"gitdir:~/w/\"]\npath = x", incl);
	unsafe("[include \"x\"]\npath = x", incl);
	unsafe("[alias]\nco = checkout", "alias");
	unsafe("[Core] FSMonitor = x", "program");
	unsafe("[core]\nhooksPath = /tmp/h", "hooks");
	unsafe("[core]\nsshCommand = x", "program");
	unsafe("[core]\npager = x", "program");
	unsafe("[core]\neditor = x", "program");
	unsafe("[core]\naskPass = x", "program");
	unsafe("[core]\ngitProxy = x", "program");
	unsafe("[core]\nalternateRefsCommand = x", "program");
	safe("[core]\nworktree = ../../../sub");
	unsafe("[core]\nexcludesFile = x", "file");
	unsafe("[core]\nattributesFile = x", "file");
	unsafe("[core \"x\"]\nbare = true", listed);
	unsafe("[core \"\"]\nbare = true", listed);
	unsafe("[core.x]\nfsmonitor = x", listed);
	unsafe("[extensions]\nworktreeConfig = true", "config.worktree");
	unsafe("[diff]\nexternal = x", "program");
	unsafe("[diff \"pdf\"]\ntextconv = x", "program");
	unsafe("[diff \"pdf\"]\ncommand = x", "program");
	unsafe("[diff \"pdf\"]\nalgorithm = x", listed);
	unsafe("[merge \"m\"]\ndriver = x", "program");
	unsafe("[merge \"m\"]\nff = true", listed);
	unsafe("[filter \"lfs\"]\nprocess = x", "filter");
	unsafe("[filter \"lfs\"]\nclean = x", "filter");
	unsafe("[submodule \"s\"]\nupdate = !x", "command");
	unsafe("[remote \"o\"]\nuploadpack = x", "program");
	unsafe("[remote \"o\"]\nreceivepack = x", "program");
	unsafe("[remote \"o\"]\nvcs = x", "helper");
	unsafe("[remote \"o\"]\nproxy = x", listed);
	unsafe("[url \"ext::\"]\ninsteadOf = https://", "rewrites");
	unsafe("[credential]\nhelper = x", "program");
	unsafe("[gpg]\nprogram = x", "program");
	unsafe("[user]\nsigningKey = x", listed);
	unsafe("[init]\ntemplateDir = x", listed);
	unsafe("[uploadpack]\npackObjectsHook = x", listed);
	unsafe("[sequence]\neditor = x", "program");
	unsafe("[pager]\nlog = x", "program");
	unsafe("[protocol]\nallow = always", listed);
}

static void test_urls(void)
{
	static const char *const good[] = {
		"https://example.com/x.git", "http://h/x", "ssh://git@h:22/x", "git://h/x",
		"file:///srv/x", "git@github.com:a/b.git", "h:x", "/srv/x.git", "../x", "x",
		"origin", "ssh://[h]:22/x", "C:/x", "a-b:x", "ssh://h/-x",
	};
	static const char *const bad[] = {
		"ext::sh -c x", "fd::3", "foo::bar", "https::x", "-oProxyCommand=x",
		"--upload-pack=x", "ssh://-oProxyCommand=x/y", "ssh://u@-h/x", "ssh://h:-p/x",
		"ssh://[-h]/x", "u@-h:x", "[-h]:x", "[h:-1]:x", "foo://x", "HTTPS://x", "ext://x",
		"git+ssh://h/x", "x\ty", "x\ny", "x\x7f", "",
	};
	char text[256];
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text), "[remote \"o\"]\nurl = \"%s\"", good[i]);
		safe(text);
		snprintf(text, sizeof(text), "[submodule \"s\"]\nurl = \"%s\"", good[i]);
		safe(text);
		snprintf(text, sizeof(text), "[remote \"o\"]\npushurl = \"%s\"", good[i]);
		safe(text);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char quoted[64];
		size_t q = 0;
		for (const char *s = bad[i]; *s && q < sizeof(quoted) - 3; s++) {
			if (*s == '\n' || *s == '\t') {
				quoted[q++] = '\\';
				quoted[q++] = *s == '\n' ? 'n' : 't';
			} else {
				quoted[q++] = *s;
			}
		}
		quoted[q] = '\0';
		snprintf(text, sizeof(text), "[remote \"o\"]\nurl = \"%s\"", quoted);
		unsafe(text, "");
		snprintf(text, sizeof(text), "[submodule \"s\"]\nurl = \"%s\"", quoted);
		unsafe(text, "");
		snprintf(text, sizeof(text), "[branch \"b\"]\nremote = \"%s\"", quoted);
		unsafe(text, "");
	}
	unsafe("[remote \"o\"]\nurl", "no value");
	unsafe("[remote \"o\"]\nurl = ext::x", "::");
	unsafe("[remote \"o\"]\nurl = -x", "`-`");
	unsafe("[remote \"o\"]\nurl = foo://x", "scheme");
}

static void test_key(void)
{
	char buf[64];
	zsp_gitcfg_entry e = { "remote", "o\x1b[2J\n", "url", "x", 1 };
	CU_ASSERT_STRING_EQUAL(zsp_gitcfg_key(&e, buf, sizeof(buf)), "remote.o\\x1b[2J\\n.url");
	e.subsection = NULL;
	CU_ASSERT_STRING_EQUAL(zsp_gitcfg_key(&e, buf, sizeof(buf)), "remote.url");
	e.subsection = "";
	CU_ASSERT_STRING_EQUAL(zsp_gitcfg_key(&e, buf, sizeof(buf)), "remote..url");
	e.subsection = "caf\xC3\xA9";
	CU_ASSERT_STRING_EQUAL(zsp_gitcfg_key(&e, buf, sizeof(buf)), "remote.caf\xC3\xA9.url");
	/* cut inside the é: the whole character goes */
	CU_ASSERT_STRING_EQUAL(zsp_gitcfg_key(&e, buf, 12), "remote.caf");
	e.subsection = "\xE2\x80\xAE"; /* RIGHT-TO-LEFT OVERRIDE */
	CU_ASSERT_PTR_NULL(strstr(zsp_gitcfg_key(&e, buf, sizeof(buf)), "\xE2\x80\xAE"));
}

static char dir[] = "/tmp/test_gitcfg.XXXXXX";
static int dfd = -1;

static void put(const char *name, const char *text, size_t len)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static void test_read_file(void)
{
	char *text;
	size_t len;
	put("config", "[core]\nbare = false\n", 20);
	CU_ASSERT_EQUAL(zsp_gitcfg_read_file(dfd, "config", &text, &len, err, sizeof(err)), ZSP_OK);
	CU_ASSERT_EQUAL(len, 20);
	CU_ASSERT_STRING_EQUAL(text, "[core]\nbare = false\n");
	free(text);
	put("empty", "", 0);
	CU_ASSERT_EQUAL(zsp_gitcfg_read_file(dfd, "empty", &text, &len, err, sizeof(err)), ZSP_OK);
	CU_ASSERT_EQUAL(len, 0);
	CU_ASSERT_STRING_EQUAL(text, "");
	free(text);

	CU_ASSERT_EQUAL(symlinkat("config", dfd, "link"), 0);
	CU_ASSERT_EQUAL(zsp_gitcfg_read_file(dfd, "link", &text, &len, err, sizeof(err)),
			ZSP_EPOLICY);
	CU_ASSERT_PTR_NULL(text);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "symbolic link"));
	CU_ASSERT_EQUAL(mkfifoat(dfd, "fifo", 0600), 0);
	CU_ASSERT_EQUAL(zsp_gitcfg_read_file(dfd, "fifo", &text, &len, err, sizeof(err)),
			ZSP_EPOLICY);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a regular file"));
	CU_ASSERT_EQUAL(mkdirat(dfd, "d", 0700), 0);
	CU_ASSERT_EQUAL(zsp_gitcfg_read_file(dfd, "d", &text, &len, err, sizeof(err)), ZSP_EPOLICY);
	CU_ASSERT_EQUAL(zsp_gitcfg_read_file(dfd, "missing", &text, &len, err, sizeof(err)),
			ZSP_ENOINPUT);
	CU_ASSERT_EQUAL(zsp_gitcfg_read_file(dfd, "config/x", &text, &len, err, sizeof(err)),
			ZSP_ENOINPUT);
	CU_ASSERT_EQUAL(zsp_gitcfg_read_file(AT_FDCWD, "/dev/null", &text, &len, err, sizeof(err)),
			ZSP_EPOLICY);

	char *big = calloc(1, ZSP_GITCFG_MAX + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	put("max", big, ZSP_GITCFG_MAX);
	CU_ASSERT_EQUAL(zsp_gitcfg_read_file(dfd, "max", &text, &len, err, sizeof(err)), ZSP_OK);
	CU_ASSERT_EQUAL(len, ZSP_GITCFG_MAX);
	free(text);
	put("big", big, ZSP_GITCFG_MAX + 1);
	CU_ASSERT_EQUAL(zsp_gitcfg_read_file(dfd, "big", &text, &len, err, sizeof(err)),
			ZSP_EPOLICY);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "larger than"));
	free(big);
}

static void pointer(const char *content, const char *prefix, int want, const char *want_path)
{
	char out[64];
	put("ptr", content, strlen(content));
	int st = zsp_git_pointer_read(dfd, "ptr", prefix, out, sizeof(out), err, sizeof(err));
	if (st != want)
		fprintf(stderr, "\n  pointer \"%s\": %d (%s), want %d\n", content, st, err, want);
	CU_ASSERT_EQUAL(st, want);
	if (want == ZSP_OK && st == ZSP_OK)
		CU_ASSERT_STRING_EQUAL(out, want_path);
}

static void test_pointer(void)
{
	const char *g = ZSP_GIT_GITDIR_PREFIX;
	pointer("gitdir: ../.git/modules/s\n", g, ZSP_OK, "../.git/modules/s");
	pointer("gitdir: /r/.git/worktrees/wt\r\n\n", g, ZSP_OK, "/r/.git/worktrees/wt");
	pointer("gitdir: /x", g, ZSP_OK, "/x");
	pointer("../..\n", NULL, ZSP_OK, "../..");
	pointer("/tmp/wt/.git\n", NULL, ZSP_OK, "/tmp/wt/.git");
	pointer("gitdir:/x\n", g, ZSP_EPOLICY, NULL);
	pointer("GITDIR: /x\n", g, ZSP_EPOLICY, NULL);
	pointer("gitdir: \n", g, ZSP_EPOLICY, NULL);
	pointer("gitdir:  /x\n", g, ZSP_EPOLICY, NULL);
	pointer("gitdir: /x \n", g, ZSP_EPOLICY, NULL);
	pointer("gitdir: /x\n/y\n", g, ZSP_EPOLICY, NULL);
	pointer("gitdir: /x\r/y\n", g, ZSP_EPOLICY, NULL);
	pointer("\n", NULL, ZSP_EPOLICY, NULL);
	pointer("", NULL, ZSP_EPOLICY, NULL);
	pointer("gitdir: /a/very/long/path/that/does/not/fit/in/sixty/four/bytes/at/all/really\n", g,
		ZSP_EPOLICY, NULL);
	put("nul", "gitdir: /x\0/y\n", 14);
	char out[64];
	CU_ASSERT_EQUAL(zsp_git_pointer_read(dfd, "nul", g, out, sizeof(out), err, sizeof(err)),
			ZSP_EPOLICY);
	CU_ASSERT_EQUAL(zsp_git_pointer_read(dfd, "link", g, out, sizeof(out), err, sizeof(err)),
			ZSP_EPOLICY);
	CU_ASSERT_EQUAL(zsp_git_pointer_read(dfd, "fifo", g, out, sizeof(out), err, sizeof(err)),
			ZSP_EPOLICY);
	CU_ASSERT_EQUAL(zsp_git_pointer_read(dfd, "missing", g, out, sizeof(out), err,
					     sizeof(err)), ZSP_ENOINPUT);
	CU_ASSERT_EQUAL(zsp_git_pointer_read(dfd, "max", NULL, out, sizeof(out), err, sizeof(err)),
			ZSP_EPOLICY); /* over PATH_MAX */
}

static int setup_dir(void)
{
	if (!mkdtemp(dir))
		return 1;
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	return dfd < 0;
}

static int teardown_dir(void)
{
	static const char *const names[] = { "config", "empty", "link", "fifo", "max", "big",
					     "ptr", "nul" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlinkat(dfd, names[i], 0);
	unlinkat(dfd, "d", AT_REMOVEDIR);
	close(dfd);
	return rmdir(dir) != 0;
}

/* zsp_gitcfg_vet: what of the sandbox's config reaches the host. */
static size_t nrefused;
static void count_refused(void *ctx, const char *key, const char *why, bool applied)
{
	(void)ctx;
	(void)why;
	(void)applied;
	CU_ASSERT_PTR_NOT_NULL(key);
	nrefused++;
}

/* vet(old, new): the text out, or NULL when nothing may be applied */
static char *vet(const char *old, const char *text)
{
	char *out = NULL, err[256] = "";
	size_t len = 0;
	nrefused = 0;
	int rc = zsp_gitcfg_vet(old, old ? strlen(old) : 0, text, strlen(text), count_refused, NULL, &out, &len,
				err, sizeof(err));
	CU_ASSERT(rc == ZSP_OK || rc == ZSP_EPOLICY);
	CU_ASSERT((rc == ZSP_OK) == (out != NULL));
	if (rc != ZSP_OK)
		CU_ASSERT(err[0] != 0);
	return out;
}

#define VET(old, text, want, refused)                                          \
	do {                                                                   \
		char *o_ = vet(old, text);                                     \
		if (want) {                                                    \
			CU_ASSERT_PTR_NOT_NULL_FATAL(o_);                      \
			CU_ASSERT_STRING_EQUAL(o_, (const char *)(want));      \
		} else {                                                       \
			CU_ASSERT_PTR_NULL(o_);                                \
		}                                                              \
		CU_ASSERT_EQUAL(nrefused, (size_t)(refused));                  \
		free(o_);                                                      \
	} while (0)

static void test_vet(void)
{
	const char *base = "[core]\n\tbare = false\n";
	/* safe changes pass whole */
	VET(base, "[core]\n\tbare = false\n[remote \"o\"]\n\turl = https://x/r.git\n",
	    "[core]\n\tbare = false\n[remote \"o\"]\n\turl = https://x/r.git\n", 0);
	/* an unsafe key is taken out with its line; the rest stays */
	VET(base, "[core]\n\tbare = false\n\tfsmonitor = touch /m\n[user]\n\tname = x\n",
	    "[core]\n\tbare = false\n[user]\n\tname = x\n", 1);
	/* ... with every line its value runs over */
	VET(base, "[core]\n\tfsmonitor = touch \\\n/m\n\tautocrlf = true\n", "[core]\n\tautocrlf = true\n", 1);
	/* a backslash in a comment does not continue the line */
	VET(base, "[core]\n\tfsmonitor = x ; \\\n\tautocrlf = true\n", "[core]\n\tautocrlf = true\n", 1);
	/* the owner's own unsafe key stays, one for one: a second copy is refused */
	VET("[core]\n\teditor = vim\n", "[core]\n\teditor = vim\n\tpager = less\n", "[core]\n\teditor = vim\n", 1);
	VET("[core]\n\teditor = vim\n", "[core]\n\teditor = vim\n[core]\n\teditor = vim\n", "[core]\n\teditor = vim\n[core]\n", 1);
	/* the same key with another value is the sandbox's */
	VET("[core]\n\teditor = vim\n", "[core]\n\teditor = vim -c '!x'\n", "[core]\n", 1);
	/* removing a key is fine */
	VET("[core]\n\teditor = vim\n\tbare = false\n", "[core]\n\tbare = false\n", "[core]\n\tbare = false\n", 0);
	/* a key on a header's line: taking the line out gives the keys after it the section above;
	 * applied when they are safe there too ... */
	VET("[remote \"o\"]\n\turl = https://x\n", "[remote \"o\"]\n\turl = https://x\n[remote \"p\"] uploadpack = x\n\turl = https://y\n",
	    "[remote \"o\"]\n\turl = https://x\n\turl = https://y\n", 1);
	/* ... and when one would not be (user.bare is not on the list), nothing is applied */
	VET("[user]\n\tname = a\n", "[user]\n\tname = a\n[core] fsmonitor = x\n\tbare = false\n", NULL, 1);
	/* include.path is refused; a config zsp cannot read certainly is refused whole */
	VET(base, "[include]\n\tpath = /tmp/x\n", "[include]\n", 1);
	VET(base, "fsmonitor = x\n", NULL, 0);
	/* no old config: every unsafe key is the sandbox's */
	VET(NULL, "[core]\n\tfsmonitor = x\n", "[core]\n", 1);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	CU_pSuite s = CU_add_suite("gitcfg parse", NULL, NULL);
	CU_add_test(s, "each syntax form as git reads it", test_forms);
	CU_add_test(s, "spellings of a dangerous key", test_disguises);
	CU_add_test(s, "what git rejects and what zsp will not guess", test_errors);
	CU_add_test(s, "configs git wrote", test_real);
	CU_add_test(s, "1 MiB inputs in linear time", test_linear);
	CU_pSuite v = CU_add_suite("gitcfg verdicts", NULL, NULL);
	CU_add_test(v, "allow-list and unsafe classes", test_safe);
	CU_add_test(v, "the URL rule", test_urls);
	CU_add_test(v, "keys for messages", test_key);
	CU_add_test(v, "vetting a changed config", test_vet);
	CU_pSuite f = CU_add_suite("gitcfg files", setup_dir, teardown_dir);
	CU_add_test(f, "config files: symlink, FIFO, size", test_read_file);
	CU_add_test(f, "pointer files", test_pointer);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
