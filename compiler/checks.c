/* checks.c: validation of hosts, limits, environment names, syscalls, errnos, tool names,
 * requests and regexes, each with an error that points into the offending literal. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "lang/hint.h"
#include "compiler/checks.h"
#include "compiler/host.h"
#include "compiler/regex.h"
#include "compiler/safe.h"
#include "compiler/zsp.h"

bool zsp_check_host(zsp_cc *cc, const zsp_ast_str *s, bool allow_wild, const char **host,
		    unsigned *port)
{
	char canon[ZSP_HOST_MAX];
	zsp_host_kind kind;
	zsp_host_error e;
	unsigned flags = allow_wild ? ZSP_HOST_WILDCARD | ZSP_HOST_PORT_ANY : 0;
	if (!zsp_hostport_parse(s->s, flags, canon, &kind, port, &e)) {
		size_t n = strlen(s->s);
		zsp_diag_error(cc->diag, zsp_str_loc(s, e.off, e.len), "`%.*s%s`: %s", n > 80 ? 77 : (int)n,
			       s->s, n > 80 ? "..." : "", e.msg);
		if (e.hint[0])
			zsp_diag_hint(cc->diag, "%s", e.hint);
		return false;
	}
	if (!(*host = zsp_arena_strdup(cc->a, canon))) {
		cc->oom = true;
		return false;
	}
	return true;
}

bool zsp_check_env_name(zsp_cc *cc, const zsp_ast_str *s, bool allow_glob)
{
	const char *v = s->s;
	if (!*v) {
		zsp_diag_error(cc->diag, s->loc, "empty environment variable name");
		return false;
	}
	for (size_t i = 0; v[i]; i++) {
		unsigned char c = (unsigned char)v[i];
		bool ok = isalpha(c) || c == '_' || (i > 0 && isdigit(c)) ||
			  (allow_glob && (c == '*' || c == '?'));
		if (!ok) {
			zsp_diag_error(cc->diag, zsp_str_loc(s, i, 1),
				       "invalid character `%c` in environment variable name `%s`",
				       isprint(c) ? c : '?', v);
			zsp_diag_hint(cc->diag, allow_glob ? "a name is [A-Za-z_][A-Za-z0-9_]*, with `*` and `?` as globs"
							   : "a name is [A-Za-z_][A-Za-z0-9_]*");
			return false;
		}
	}
	return true;
}

static const struct {
	const char *name;
	zsp_unit unit;
	uint64_t min, max;
	const char *range;
} limits[ZSP_LIMIT_COUNT] = {
	[ZSP_LIMIT_CPU] = { "cpu", ZSP_UNIT_TIME, 1, 365ull * 86400, "1s to 365d" },
	[ZSP_LIMIT_MEMORY] = { "memory", ZSP_UNIT_SIZE, 1ull << 20, 1ull << 62, "1MiB to 2^62 bytes" },
	[ZSP_LIMIT_FSIZE] = { "fsize", ZSP_UNIT_SIZE, 1, 1ull << 62, "1B to 2^62 bytes" },
	[ZSP_LIMIT_STACK] = { "stack", ZSP_UNIT_SIZE, 64ull << 10, 1ull << 40, "64KiB to 1TiB" },
	[ZSP_LIMIT_CORE] = { "core", ZSP_UNIT_SIZE, 0, 1ull << 62, "0B to 2^62 bytes" },
	[ZSP_LIMIT_NOFILE] = { "nofile", ZSP_UNIT_NONE, 16, 1048576, "16 to 1048576" },
	[ZSP_LIMIT_NPROC] = { "nproc", ZSP_UNIT_NONE, 1, 4194304, "1 to 4194304" },
};

const char *zsp_limit_name(zsp_limit_kind k)
{
	return k < ZSP_LIMIT_COUNT ? limits[k].name : "?";
}

static const char *unit_words(zsp_unit u)
{
	switch (u) {
	case ZSP_UNIT_TIME: return "a time such as `600s`, `10m` or `2h`";
	case ZSP_UNIT_SIZE: return "a size such as `512MiB` or `4GiB`";
	default: return "a plain number";
	}
}

int zsp_check_limit(zsp_cc *cc, const zsp_ast_stmt *st, zsp_ir_limit *out, int *which)
{
	int k = -1;
	*which = -1;
	const char *names[ZSP_LIMIT_COUNT];
	for (int i = 0; i < ZSP_LIMIT_COUNT; i++) {
		names[i] = limits[i].name;
		if (strcmp(st->name, limits[i].name) == 0)
			k = i;
	}
	if (k < 0) {
		zsp_diag_error(cc->diag, st->name_loc, "unknown limit `%s`", st->name);
		const char *best = zsp_closest(st->name, names, ZSP_LIMIT_COUNT);
		if (best)
			zsp_diag_hint(cc->diag, "did you mean `%s`?", best);
		else
			zsp_diag_hint(cc->diag, "the limits are cpu, memory, fsize, stack, core, nofile and nproc");
		return ZSP_EPOLICY;
	}
	const zsp_ast_quantity *q = &st->qty;
	out->loc = st->loc;
	out->set = true;
	if (q->unit == ZSP_UNIT_UNLIMITED) {
		out->unlimited = true;
		*which = k;
		return ZSP_OK;
	}
	if (q->unit != limits[k].unit) {
		zsp_diag_error(cc->diag, q->loc, "limit `%s` takes %s", limits[k].name,
			       unit_words(limits[k].unit));
		return ZSP_EPOLICY;
	}
	if (q->overflow || q->value < limits[k].min || q->value > limits[k].max) {
		zsp_diag_error(cc->diag, q->loc, "limit `%s` is out of range (%s)", limits[k].name,
			       limits[k].range);
		return ZSP_EPOLICY;
	}
	out->value = q->value;
	*which = k;
	return ZSP_OK;
}

static void syscall_names(zsp_cc *cc)
{
	if (cc->syscall_names)
		return;
	size_t cap = 0;
	for (int nr = 0; nr < 1024; nr++) {
		char *n = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
		if (!n)
			continue;
		const char **slot = ZSP_PUSH(cc, cc->syscall_names, cc->nsyscall_names, cap);
		if (slot)
			*slot = zsp_arena_strdup(cc->a, n);
		free(n);
		if (!slot)
			return;
	}
}

int zsp_check_syscall(zsp_cc *cc, const zsp_ast_str *s, int *nrp)
{
	int nr = s->s[0] ? seccomp_syscall_resolve_name(s->s) : __NR_SCMP_ERROR;
	*nrp = -1;
	if (nr != __NR_SCMP_ERROR && nr >= 0) {
		*nrp = nr;
		return ZSP_OK;
	}
	if (nr != __NR_SCMP_ERROR) {
		zsp_diag_error(cc->diag, s->loc,
			       "system call `%s` does not exist on this architecture", s->s);
		return ZSP_EPOLICY;
	}
	zsp_diag_error(cc->diag, s->loc, "unknown system call `%s`", s->s);
	syscall_names(cc);
	const char *best = zsp_closest(s->s, cc->syscall_names, cc->nsyscall_names);
	if (best)
		zsp_diag_hint(cc->diag, "did you mean `%s`?", best);
	return ZSP_EPOLICY;
}

static const struct {
	const char *name;
	int value;
} errnos[] = {
	{ "EPERM", EPERM }, { "ENOENT", ENOENT }, { "ESRCH", ESRCH }, { "EINTR", EINTR },
	{ "EIO", EIO }, { "ENXIO", ENXIO }, { "E2BIG", E2BIG }, { "EBADF", EBADF },
	{ "EAGAIN", EAGAIN }, { "ENOMEM", ENOMEM }, { "EACCES", EACCES }, { "EFAULT", EFAULT },
	{ "EBUSY", EBUSY }, { "EEXIST", EEXIST }, { "EXDEV", EXDEV }, { "ENODEV", ENODEV },
	{ "ENOTDIR", ENOTDIR }, { "EISDIR", EISDIR }, { "EINVAL", EINVAL }, { "EMFILE", EMFILE },
	{ "ENOTTY", ENOTTY }, { "ENOSPC", ENOSPC }, { "EROFS", EROFS }, { "ENOSYS", ENOSYS },
	{ "ENOTSUP", ENOTSUP }, { "EOPNOTSUPP", EOPNOTSUPP }, { "EAFNOSUPPORT", EAFNOSUPPORT },
	{ "EPROTONOSUPPORT", EPROTONOSUPPORT }, { "ENETUNREACH", ENETUNREACH },
	{ "EHOSTUNREACH", EHOSTUNREACH }, { "ECONNREFUSED", ECONNREFUSED },
	{ "EADDRNOTAVAIL", EADDRNOTAVAIL }, { "ENOTSOCK", ENOTSOCK },
};

int zsp_check_errno(zsp_cc *cc, const char *name, zsp_loc loc, int *value)
{
	*value = -1;
	const char *names[sizeof(errnos) / sizeof(errnos[0])];
	for (size_t i = 0; i < sizeof(errnos) / sizeof(errnos[0]); i++) {
		names[i] = errnos[i].name;
		if (strcmp(name, errnos[i].name) == 0) {
			*value = errnos[i].value;
			return ZSP_OK;
		}
	}
	zsp_diag_error(cc->diag, loc, "unknown errno `%s`", name);
	const char *best = zsp_closest(name, names, sizeof(names) / sizeof(names[0]));
	if (best)
		zsp_diag_hint(cc->diag, "did you mean `%s`?", best);
	else
		zsp_diag_hint(cc->diag, "use a name such as EPERM, EACCES or ENOSYS, or a number from 1 to 4095");
	return ZSP_EPOLICY;
}

/* Sockets whose server runs what a client asks, outside any sandbox: D-Bus (systemd-run, a
 * session's own services) and the docker daemon (a container with the host's / mounted; its
 * socket is /run/docker.sock, or anywhere for a rootless daemon: any path ending docker.sock). */
static const char *const buses[] = { /* fnmatch(3) with FNM_PATHNAME */
	"/run/user/*/bus", "/var/run/dbus/system_bus_socket", "/run/dbus/system_bus_socket",
};

void zsp_check_unix_socket(zsp_cc *cc, const char *path, zsp_loc loc)
{
	const char *base = strrchr(path, '/');
	const char *what = base && strcmp(base, "/docker.sock") == 0 ? "the docker daemon's socket" : NULL;
	for (size_t i = 0; !what && i < sizeof(buses) / sizeof(buses[0]); i++)
		if (fnmatch(buses[i], path, FNM_PATHNAME) == 0)
			what = "a D-Bus bus";
	if (what)
		zsp_diag_warning(cc->diag, ZSP_W_HOST_CONTROL, loc,
				 "`%s` is %s: a command that reaches it starts processes outside the sandbox", path,
				 what);
}

static const char *const path_tools[] = {
	"edit_file", "write_file", "read_file", "delete_path", "create_directory",
	"list_directory", "copy_path", "move_path",
};
static const char *const other_tools[] = { "terminal", "fetch", "search_web" };

bool zsp_tool_takes_paths(const char *name)
{
	for (size_t i = 0; i < sizeof(path_tools) / sizeof(path_tools[0]); i++)
		if (strcmp(name, path_tools[i]) == 0)
			return true;
	return false;
}

static bool mcp_name(const char *name)
{
	if (strncmp(name, "mcp:", 4) != 0)
		return false;
	const char *server = name + 4, *colon = strchr(server, ':');
	return colon && colon > server && colon[1] && !strchr(colon + 1, ':');
}

bool zsp_tool_known(const char *name)
{
	if (zsp_tool_takes_paths(name) || mcp_name(name))
		return true;
	for (size_t i = 0; i < sizeof(other_tools) / sizeof(other_tools[0]); i++)
		if (strcmp(name, other_tools[i]) == 0)
			return true;
	return false;
}

static const struct {
	const char *kind;
	unsigned nargs;
} requests[] = {
	{ "terminal", 1 }, { "edit_file", 1 }, { "write_file", 1 }, { "read_file", 1 },
	{ "delete_path", 1 }, { "create_directory", 1 }, { "list_directory", 1 },
	{ "copy_path", 2 }, { "move_path", 2 }, { "fetch", 1 }, { "search_web", 1 },
	{ "read", 1 }, { "write", 1 }, { "exec", 1 }, { "connect", 1 }, { "syscall", 1 },
};

int zsp_request_arity(const char *kind, unsigned *nargs)
{
	*nargs = 0;
	if (kind[0] == 'm' && mcp_name(kind))
		return ZSP_OK;
	/* asked once per decision: the first byte rules out most kinds before strcmp */
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
		if (kind[0] == requests[i].kind[0] && strcmp(kind, requests[i].kind) == 0) {
			*nargs = requests[i].nargs;
			return ZSP_OK;
		}
	return ZSP_EUSAGE;
}

bool zsp_check_request(zsp_cc *cc, const zsp_ast_stmt *st)
{
	unsigned n = 0;
	for (const zsp_ast_str *a = st->args; a; a = a->next)
		n++;
	if (strchr(st->name, ':')) {
		if (!mcp_name(st->name)) {
			zsp_diag_error(cc->diag, st->name_loc, "`%s` is not an MCP tool name", st->name);
			zsp_diag_hint(cc->diag, "MCP tools are named `mcp:SERVER:TOOL`");
			return false;
		}
		if (n != 0) {
			zsp_diag_error(cc->diag, st->args->loc, "an MCP tool request takes no arguments");
			return false;
		}
		return true;
	}
	const char *kinds[sizeof(requests) / sizeof(requests[0])];
	for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++) {
		kinds[i] = requests[i].kind;
		if (strcmp(st->name, requests[i].kind) != 0)
			continue;
		if (n != requests[i].nargs) {
			zsp_diag_error(cc->diag, n ? st->args->loc : st->name_loc,
				       "`%s` takes %u argument%s, not %u", st->name, requests[i].nargs,
				       requests[i].nargs == 1 ? "" : "s", n);
			return false;
		}
		const zsp_ast_str *a = st->args;
		if (strcmp(st->name, "connect") == 0) {
			const char *host;
			unsigned port;
			return zsp_check_host(cc, a, false, &host, &port);
		}
		if (strcmp(st->name, "syscall") == 0) {
			int nr;
			return zsp_check_syscall(cc, a, &nr) == ZSP_OK;
		}
		for (; a; a = a->next)
			if (!a->s[0] && strcmp(st->name, "terminal") != 0) {
				zsp_diag_error(cc->diag, a->loc, "empty argument");
				return false;
			}
		return true;
	}
	zsp_diag_error(cc->diag, st->name_loc, "unknown request `%s`", st->name);
	const char *best = zsp_closest(st->name, kinds, sizeof(kinds) / sizeof(kinds[0]));
	if (best)
		zsp_diag_hint(cc->diag, "did you mean `%s`?", best);
	return false;
}

/* The source offset of pattern byte `off`: the lexer turned each `\/` into `/`. */
static uint32_t regex_source_offset(const zsp_ast_matcher *m, size_t off)
{
	const char *src = m->loc.src->text + m->loc.begin + 1;
	const char *end = m->loc.src->text + m->loc.end;
	size_t pat = 0;
	const char *p = src;
	while (p < end && pat < off) {
		if (p[0] == '\\' && p + 1 < end && p[1] == '/')
			p += 2;
		else if (p[0] == '\\' && p + 1 < end)
			p += 2, pat++;
		else
			p++;
		pat++;
	}
	return (uint32_t)(p - m->loc.src->text);
}

bool zsp_check_regex(zsp_cc *cc, const zsp_ast_matcher *m, bool case_sensitive)
{
	if (!m->text[0]) {
		zsp_diag_error(cc->diag, m->loc, "empty regex: it would match every input");
		zsp_diag_hint(cc->diag, "use `default` to decide for every input of a tool");
		return false;
	}
	char msg[256];
	size_t off;
	if (zsp_regex_check(m->text, case_sensitive, msg, sizeof(msg), &off))
		return true;
	zsp_loc l = m->loc;
	l.begin = regex_source_offset(m, off);
	if (l.begin >= m->loc.end - 1)
		l.begin = m->loc.end > m->loc.begin + 1 ? m->loc.end - 1 : m->loc.begin;
	l.end = l.begin + 1;
	zsp_diag_error(cc->diag, l, "invalid regex: %s", msg);
	return false;
}

/* Does the pattern end in an anchor (`$`, `\z`, `\Z`), maybe inside groups (`^(a|b)$`)? A
 * branch of an alternation left open (`^a$|^b`) is caught only when it comes last. */
static bool end_anchored(const char *p)
{
	size_t n = strlen(p);
	while (n > 0 && p[n - 1] == ')')
		n--;
	size_t slashes = 0;
	if (n >= 1 && p[n - 1] == '$') {
		for (size_t i = n - 1; i > 0 && p[i - 1] == '\\'; i--)
			slashes++;
		return slashes % 2 == 0;
	}
	if (n >= 2 && p[n - 2] == '\\' && (p[n - 1] == 'z' || p[n - 1] == 'Z')) {
		for (size_t i = n - 2; i > 0 && p[i - 1] == '\\'; i--)
			slashes++;
		return slashes % 2 == 0;
	}
	return false;
}

void zsp_lint_allow_regex(zsp_cc *cc, const zsp_ast_matcher *m, bool case_sensitive)
{
	const char **texts, **whys;
	size_t n;
	bool admits = false;
	zsp_regex *re = zsp_regex_compile(m->text, case_sensitive);
	if (re && zsp_safe_probes(cc->a, &texts, &whys, &n) == ZSP_OK) {
		for (size_t i = 0; i < n; i++) {
			bool hit = false;
			if (zsp_regex_search(re, texts[i], strlen(texts[i]), &hit) != ZSP_OK || !hit)
				continue;
			zsp_diag_warning(cc->diag, ZSP_W_UNSAFE_FLAG, m->loc,
					 "this allow regex admits `%s`: %s", texts[i], whys[i]);
			zsp_diag_hint(cc->diag, "end it with `$` after the arguments it means, or use "
				      "`allow safe;` (doc/oracle.md, \"Known-safe commands\")");
			admits = true;
			break;
		}
	}
	zsp_regex_free(re);
	/* an admitted option says more than the missing anchor that let it through */
	if (end_anchored(m->text) || (admits && cc->diag->enabled[ZSP_W_UNSAFE_FLAG]))
		return;
	zsp_diag_warning(cc->diag, ZSP_W_UNANCHORED, m->loc,
			 "this allow regex has no end anchor: it allows its command with any further arguments");
	zsp_diag_hint(cc->diag, "end it with `$` (`/^npm test$/`), or with `(\\s.*)?$` to allow "
		      "arguments on purpose");
}
