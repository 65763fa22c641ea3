/* wsl.c: Windows paths to WSL Linux paths, Windows command-line quoting, and the wsl.exe
 * invocation of zsp-run that lowers a policy on Windows (doc/wsl.md). */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "backends/wsl.h"
#include "lang/err.h"
#include "compiler/zsp.h"
#include "lang/buf.h"

static void sb_repeat(zsp_buf *b, char c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		zsp_buf_putc(b, c);
}

static int nomem(char *why, size_t whylen)
{
	return zsp_err(why, whylen, ZSP_EINTERNAL, "out of memory");
}

static bool is_sep(char c)
{
	return c == '\\' || c == '/';
}

static bool is_drive(const char *s)
{
	return ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')) && s[1] == ':';
}

static size_t component_len(const char *s)
{
	size_t n = 0;
	while (s[n] && !is_sep(s[n]))
		n++;
	return n;
}

static bool wsl_host(const char *s, size_t n)
{
	return (n == 4 && strncasecmp(s, "wsl$", 4) == 0) || (n == 13 && strncasecmp(s, "wsl.localhost", 13) == 0);
}

/* After the leading `\\` (or `\\?\UNC\`): the server, then the share. */
static const char *unc_after_prefix(const char *path)
{
	if (path[0] != '\\' || !is_sep(path[1]))
		return NULL;
	const char *s = path + 2;
	if ((s[0] == '?' || s[0] == '.') && is_sep(s[1])) {
		s += 2;
		if (strncasecmp(s, "UNC", 3) != 0 || !is_sep(s[3]))
			return NULL;
		s += 4;
	}
	return s;
}

const char *zsp_wsl_path_distribution(const char *path, size_t *len)
{
	const char *s = path ? unc_after_prefix(path) : NULL;
	if (!s)
		return NULL;
	size_t host = component_len(s);
	if (!wsl_host(s, host) || !is_sep(s[host]))
		return NULL;
	const char *d = s + host + 1;
	size_t n = component_len(d);
	if (n == 0)
		return NULL;
	*len = n;
	return d;
}

bool zsp_wsl_is_windows_path(const char *s)
{
	return s && (is_drive(s) || s[0] == '\\');
}

/* Appends the components of rest to b (which holds the root, root bytes long), resolving `.`
 * and `..` by name unless verbatim (a `\\?\` path, which Windows does not normalize). */
static int append_components(zsp_buf *b, size_t root, const char *rest, bool verbatim, char *why,
			     size_t whylen)
{
	while (*rest) {
		size_t n = component_len(rest);
		const char *c = rest;
		rest += n;
		if (*rest)
			rest++;
		if (n == 0)
			continue;
		bool dot = n == 1 && c[0] == '.', dotdot = n == 2 && c[0] == '.' && c[1] == '.';
		if ((dot || dotdot) && verbatim)
			return zsp_err(why, whylen, ZSP_EUSAGE, "`%.*s` in a \\\\?\\ path, which Windows takes literally: give the path without it",
				    (int)n, c);
		if (dot)
			continue;
		if (dotdot) {
			/* as Windows does: by name, and never above the root */
			while (b->len > root && b->data[b->len - 1] != '/')
				b->len--;
			if (b->len > root)
				b->len--;
			if (b->data)
				b->data[b->len] = '\0';
			continue;
		}
		if (memchr(c, ':', n))
			return zsp_err(why, whylen, ZSP_EUSAGE, "`%.*s` holds a `:`, which names an alternate data stream on Windows",
				    (int)n, c);
		if (!verbatim && (c[n - 1] == '.' || c[n - 1] == ' '))
			return zsp_err(why, whylen, ZSP_EUSAGE,
				    "the name `%.*s` ends with a %s, which Windows strips and Linux keeps: give it without",
				    (int)n, c, c[n - 1] == '.' ? "dot" : "space");
		zsp_buf_add(b, "/", 1);
		zsp_buf_add(b, c, n);
	}
	return ZSP_OK;
}

static int unc_path(zsp_buf *b, const char *s, bool verbatim, const char *distribution, char *why,
		    size_t whylen)
{
	size_t host = component_len(s);
	if (host == 0)
		return zsp_err(why, whylen, ZSP_EUSAGE, "a UNC path needs a server name");
	const char *share = s + host + (is_sep(s[host]) ? 1 : 0);
	size_t nshare = component_len(share);
	if (!wsl_host(s, host))
		return zsp_err(why, whylen, ZSP_EUSAGE,
			    "\\\\%.*s\\%.*s is a network share, which has no Linux path in WSL: mount it in the "
			    "distribution and give its Linux path",
			    (int)host, s, (int)nshare, share);
	if (nshare == 0)
		return zsp_err(why, whylen, ZSP_EUSAGE, "\\\\%.*s names no distribution", (int)host, s);
	if (distribution && (strlen(distribution) != nshare || strncasecmp(share, distribution, nshare) != 0))
		return zsp_err(why, whylen, ZSP_EUSAGE, "the path is in distribution `%.*s`, but the command runs in `%s`",
			    (int)nshare, share, distribution);
	return append_components(b, 0, share + nshare, verbatim, why, whylen);
}

static int drive_path(zsp_buf *b, const char *s, bool verbatim, char *why, size_t whylen)
{
	char root[] = "/mnt/x";
	root[5] = (char)(s[0] | 0x20);
	zsp_buf_puts(b, root);
	return append_components(b, sizeof(root) - 1, s + 2, verbatim, why, whylen);
}

int zsp_wsl_path(const char *path, const char *distribution, char **out, char *why, size_t whylen)
{
	*out = NULL;
	if (whylen)
		why[0] = '\0';
	if (!path || !*path)
		return zsp_err(why, whylen, ZSP_EUSAGE, "the path is empty");
	if (path[0] == '/') {
		*out = strdup(path);
		return *out ? ZSP_OK : nomem(why, whylen);
	}
	zsp_buf b = { 0 };
	int rc;
	if (path[0] == '\\' && is_sep(path[1])) {
		const char *s = path + 2;
		bool device = (s[0] == '?' || s[0] == '.') && is_sep(s[1]);
		bool verbatim = device && s[0] == '?';
		if (!device)
			rc = unc_path(&b, s, false, distribution, why, whylen);
		else if (is_drive(s + 2) && is_sep(s[4]))
			rc = drive_path(&b, s + 2, verbatim, why, whylen);
		else if (strncasecmp(s + 2, "UNC", 3) == 0 && is_sep(s[5]))
			rc = unc_path(&b, s + 6, verbatim, distribution, why, whylen);
		else
			rc = zsp_err(why, whylen, ZSP_EUSAGE, "a device path (\\\\%c\\ without a drive `X:\\` or `UNC\\`) has no Linux path",
				  s[0]);
	} else if (is_drive(path)) {
		rc = is_sep(path[2]) ? drive_path(&b, path, false, why, whylen)
				     : zsp_err(why, whylen, ZSP_EUSAGE, "`%c:` without a backslash is relative to the current directory "
						   "of drive %c: give an absolute path (%c:\\...)",
					    path[0], path[0] & ~0x20, path[0] & ~0x20);
	} else if (path[0] == '\\') {
		rc = zsp_err(why, whylen, ZSP_EUSAGE, "a path from the root of the current drive (`\\...`): give the drive (C:\\...)");
	} else {
		rc = zsp_err(why, whylen, ZSP_EUSAGE, "a relative path: give an absolute one");
	}
	if (rc == ZSP_OK && b.len == 0)
		zsp_buf_add(&b, "/", 1);
	if (rc == ZSP_OK && b.oom)
		rc = nomem(why, whylen);
	if (rc != ZSP_OK) {
		zsp_buf_free(&b);
		return rc;
	}
	*out = zsp_buf_take(&b, NULL);
	return ZSP_OK;
}

static void quote_into(zsp_buf *b, const char *arg)
{
	if (*arg && !strpbrk(arg, " \t\"")) {
		zsp_buf_puts(b, arg);
		return;
	}
	zsp_buf_add(b, "\"", 1);
	for (const char *s = arg;; s++) {
		size_t n = 0;
		while (*s == '\\') {
			n++;
			s++;
		}
		if (*s == '\0') {
			sb_repeat(b, '\\', 2 * n); /* the closing quote must stay a quote */
			break;
		}
		if (*s == '"') {
			sb_repeat(b, '\\', 2 * n + 1);
		} else {
			sb_repeat(b, '\\', n);
		}
		zsp_buf_add(b, s, 1);
	}
	zsp_buf_add(b, "\"", 1);
}

char *zsp_wsl_quote(const char *arg)
{
	zsp_buf b = { 0 };
	quote_into(&b, arg);
	return zsp_buf_take(&b, NULL);
}

/* Translates *path in place (into the arena); what names it goes into the error. Returns
 * ZSP_OK, ZSP_EPOLICY (the path cannot be translated) or ZSP_EINTERNAL; each reported on d. */
static int translate(const char **path, const char *what, const char *distribution, zsp_arena *a,
		     zsp_diag *d)
{
	char why[512], *linux_path;
	int rc = zsp_wsl_path(*path, distribution, &linux_path, why, sizeof(why));
	if (rc == ZSP_EINTERNAL) {
		zsp_diag_error_noloc(d, "out of memory");
		return rc;
	}
	if (rc != ZSP_OK) {
		zsp_diag_error_noloc(d, "cannot translate %s `%s` to a Linux path: %s", what, *path ? *path : "", why);
		return ZSP_EPOLICY;
	}
	*path = zsp_arena_strdup(a, linux_path);
	free(linux_path);
	if (!*path) {
		zsp_diag_error_noloc(d, "out of memory");
		return ZSP_EINTERNAL;
	}
	return ZSP_OK;
}

/* The worse of two statuses of zsp_wsl_translate: out of memory over a refused path. */
static int worse(int rc, int other)
{
	return rc == ZSP_EINTERNAL || other == ZSP_OK ? rc : other;
}

/* The distribution the first `\\wsl$` path names, for an invocation without --distribution. */
static const char *named_distribution(const zsp_wsl_invocation *inv, zsp_arena *a)
{
	const char *paths[3] = { inv->cd, inv->policy_file, NULL };
	size_t len;
	const char *d = NULL;
	for (size_t i = 0; !d && i < 2; i++)
		d = zsp_wsl_path_distribution(paths[i], &len);
	for (size_t i = 0; !d && i < inv->nincludes; i++)
		d = zsp_wsl_path_distribution(inv->includes[i], &len);
	for (size_t i = 0; !d && i < inv->ndefines; i++)
		d = zsp_wsl_path_distribution(inv->define_values[i], &len);
	return d ? zsp_arena_strndup(a, d, len) : NULL;
}

static const char **copy_array(zsp_arena *a, const char **v, size_t n)
{
	const char **c = zsp_arena_calloc(a, n ? n : 1, sizeof(*c));
	if (c && n)
		memcpy(c, v, n * sizeof(*c));
	return c;
}

int zsp_wsl_translate(zsp_wsl_invocation *inv, zsp_arena *a, zsp_diag *d)
{
	unsigned errors = d->errors;
	if (inv->distribution && !*inv->distribution)
		zsp_diag_error_noloc(d, "--distribution needs a name");
	if (inv->user && !*inv->user)
		zsp_diag_error_noloc(d, "--user needs a name");
	if (!inv->distribution)
		inv->distribution = named_distribution(inv, a);
	const char **values = copy_array(a, inv->define_values, inv->ndefines);
	const char **includes = copy_array(a, inv->includes, inv->nincludes);
	if (!values || !includes) {
		zsp_diag_error_noloc(d, "out of memory");
		return ZSP_EINTERNAL;
	}
	inv->define_values = values;
	inv->includes = includes;
	const char *dist = inv->distribution;
	int rc = translate(&inv->policy_file, "the policy file", dist, a, d);
	for (size_t i = 0; i < inv->nincludes; i++)
		rc = worse(rc, translate(&includes[i], "the include directory", dist, a, d));
	const char *workspace = NULL;
	for (size_t i = 0; i < inv->ndefines; i++) {
		if (zsp_wsl_is_windows_path(values[i])) {
			char *what = zsp_arena_printf(a, "-D %s", inv->define_names[i]);
			int trc = translate(&values[i], what ? what : "a -D value", dist, a, d);
			rc = worse(rc, trc);
			if (trc != ZSP_OK)
				continue;
		}
		if (strcmp(inv->define_names[i], "WORKSPACE") == 0)
			workspace = values[i];
	}
	if (inv->cd && strcmp(inv->cd, "~") != 0)
		rc = worse(rc, translate(&inv->cd, "--cd", dist, a, d));
	else if (!inv->cd && workspace && workspace[0] == '/')
		inv->cd = workspace;
	if (rc == ZSP_OK && d->errors > errors)
		rc = ZSP_EPOLICY;
	return rc;
}

static void arg(zsp_buf *b, const char *s)
{
	zsp_buf_add(b, " ", 1);
	quote_into(b, s);
}

char *zsp_wsl_command_line(const zsp_wsl_invocation *inv)
{
	zsp_buf b = { 0 };
	zsp_buf_puts(&b, "wsl.exe");
	if (inv->distribution) {
		arg(&b, "--distribution");
		arg(&b, inv->distribution);
	}
	if (inv->user) {
		arg(&b, "--user");
		arg(&b, inv->user);
	}
	if (inv->cd) {
		arg(&b, "--cd");
		arg(&b, inv->cd);
	}
	arg(&b, "--exec");
	arg(&b, ZSP_WSL_RUN);
	if (inv->policy_name) {
		arg(&b, "--policy");
		arg(&b, inv->policy_name);
	}
	if (inv->strict)
		arg(&b, "--strict");
	for (size_t i = 0; i < inv->nwarnings; i++) {
		zsp_buf w = { 0 };
		zsp_buf_puts(&w, "-W");
		zsp_buf_puts(&w, inv->warnings[i]);
		if (w.oom)
			b.oom = true;
		else
			arg(&b, w.data);
		zsp_buf_free(&w);
	}
	for (size_t i = 0; i < inv->nincludes; i++) {
		arg(&b, "-I");
		arg(&b, inv->includes[i]);
	}
	arg(&b, "-p");
	arg(&b, inv->policy_file);
	for (size_t i = 0; i < inv->ndefines; i++) {
		zsp_buf def = { 0 };
		zsp_buf_puts(&def, inv->define_names[i]);
		zsp_buf_add(&def, "=", 1);
		zsp_buf_puts(&def, inv->define_values[i]);
		arg(&b, "-D");
		if (def.oom)
			b.oom = true;
		else
			arg(&b, def.data);
		zsp_buf_free(&def);
	}
	arg(&b, "--");
	for (size_t i = 0; i < inv->ncommand; i++)
		arg(&b, inv->command[i]);
	zsp_buf_add(&b, "\n", 1);
	return zsp_buf_take(&b, NULL);
}

void zsp_wsl_backend_check(const zsp_backend_input *in, zsp_diag *d)
{
	const zsp_backend *linux_row = zsp_backend_find("bwrap");
	linux_row->check(in, d);
}

int zsp_wsl_backend_emit(const zsp_backend_input *in, zsp_diag *d, zsp_buf *out)
{
	zsp_wsl_backend_check(in, d);
	if (d->errors)
		return ZSP_EPOLICY;
	char *line = zsp_wsl_command_line(in->wsl);
	if (!line) {
		zsp_diag_error_noloc(d, "out of memory");
		return ZSP_EINTERNAL;
	}
	zsp_buf_puts(out, line);
	free(line);
	return out->oom ? ZSP_EINTERNAL : ZSP_OK;
}
