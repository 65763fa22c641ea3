/* cli.c: the programs' shared ground: messages and exits, compiler options from the command
 * line, files written whole or not at all. Library code never exits; this file does. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler/compile.h"
#include "compiler/textesc.h"
#include "lang/textesc_core.h"
#include "runtime/cli.h"
#include "runtime/workspace.h"

extern char **environ;

static const char *prog = "zsp";

void zsp_cli_init(const char *name)
{
	prog = name;
}

static void vsay(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* One message on stderr, shown so that nothing in it can redraw the terminal: a message names
 * paths and text a sandboxed command chose. Every byte but a newline is shown as
 * zsp_text_escape shows it (lang/textesc_core.h); a newline not followed by two spaces gets them,
 * so that no line of a message but its first starts at the margin and none can pass for a
 * message of its own ("zsp-run: ..."). */
static void vsay(const char *fmt, va_list ap)
{
	char *m = NULL;
	if (vasprintf(&m, fmt, ap) < 0) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return;
	}
	fprintf(stderr, "%s: ", prog);
	for (const unsigned char *s = (const unsigned char *)m; *s;) {
		char out[ZSP_TEXT_ESCAPE_STEP_MAX];
		size_t used = 1, n;
		if (*s == '\n') {
			fputc('\n', stderr);
			if (s[1] != ' ' || s[2] != ' ')
				fputs("  ", stderr);
		} else if (*s == '\\') {
			fputc('\\', stderr);   /* as zsp_text_escape leaves it in plain text */
		} else {
			n = zsp_text_escape_step(s, out, &used);
			fwrite(out, 1, n, stderr);
		}
		s += used;
	}
	fputc('\n', stderr);
	free(m);
}

void zsp_die(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	exit(status);
}

void zsp_die_oom(void)
{
	zsp_die(ZSP_EINTERNAL, "out of memory");
}

void zsp_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

int zsp_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	fprintf(stderr, "Try '%s --help'.\n", prog);
	return ZSP_EUSAGE;
}

/* ---- compiler options ------------------------------------------------------------------- */

void zsp_cli_compile_init(zsp_cli_compile *o, int argc)
{
	size_t n = (size_t)(argc > 0 ? argc : 0) + 1;
	memset(o, 0, sizeof(*o));
	o->includes = calloc(n, sizeof(char *));
	o->warnings = calloc(n, sizeof(char *));
	o->define_names = calloc(n, sizeof(char *));
	o->define_values = calloc(n, sizeof(char *));
	if (!o->includes || !o->warnings || !o->define_names || !o->define_values)
		zsp_die_oom();
}

void zsp_cli_compile_free(zsp_cli_compile *o)
{
	free(o->includes);
	free(o->warnings);
	free(o->define_names);
	free(o->define_values);
}

int zsp_cli_define(zsp_cli_compile *o, char *arg)
{
	char *eq = strchr(arg, '=');
	if (!eq)
		return zsp_usage_error("-D %s: expected NAME=VALUE", arg);
	*eq = '\0';
	/* checked now by the compiler's own rule, so a bad -D is a usage error before anything runs */
	zsp_compiler *probe = zsp_compiler_new();
	if (!probe)
		zsp_die_oom();
	int rc = zsp_compiler_define(probe, arg, eq + 1);
	zsp_compiler_free(probe);
	if (rc == ZSP_EINTERNAL)
		zsp_die_oom();
	if (rc != ZSP_OK) {
		*eq = '=';
		return zsp_usage_error("-D %s: NAME is [A-Za-z_][A-Za-z0-9_]* and VALUE may not hold "
				       "`${` or control characters", arg);
	}
	o->define_names[o->ndefines] = arg;
	o->define_values[o->ndefines++] = eq + 1;
	return ZSP_OK;
}

int zsp_cli_warning(zsp_cli_compile *o, const char *spec)
{
	zsp_compiler *probe = zsp_compiler_new();
	if (!probe)
		zsp_die_oom();
	int rc = zsp_compiler_warning(probe, spec);
	zsp_compiler_free(probe);
	if (rc == ZSP_EINTERNAL)
		zsp_die_oom();
	if (rc != ZSP_OK)
		return zsp_usage_error("unknown warning option `-W%s`", spec);
	o->warnings[o->nwarnings++] = spec;
	return ZSP_OK;
}

int zsp_cli_include(zsp_cli_compile *o, const char *dir)
{
	if (!*dir)
		return zsp_usage_error("-I needs a directory");
	o->includes[o->nincludes++] = dir;
	return ZSP_OK;
}

static void to_stderr(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	fwrite(text, 1, len, stderr);
}

zsp_compiler *zsp_cli_compiler(const zsp_cli_compile *o, const char *const *preset,
			       const zsp_builtin_params *builtins)
{
	zsp_compiler *c = zsp_compiler_new();
	if (!c)
		zsp_die_oom();
	zsp_compiler_set_sink(c, to_stderr, NULL);
	zsp_compiler_defer_summary(c);
	int rc = ZSP_OK;
	for (size_t i = 0; i < o->nincludes && rc == ZSP_OK; i++)
		rc = zsp_compiler_add_include_dir(c, o->includes[i]);
	for (const char *const *p = preset; p && *p && rc == ZSP_OK; p++)
		rc = zsp_compiler_warning(c, *p);
	for (size_t i = 0; i < o->nwarnings && rc == ZSP_OK; i++)
		rc = zsp_compiler_warning(c, o->warnings[i]);
	if (o->strict && rc == ZSP_OK)
		rc = zsp_compiler_warning(c, "error=unenforced");
	/* the built-in values first: a -D on the command line wins over them */
	for (size_t i = 0; builtins && i < builtins->n && rc == ZSP_OK; i++)
		rc = zsp_compiler_define(c, builtins->names[i], builtins->values[i]);
	for (size_t i = 0; i < o->ndefines && rc == ZSP_OK; i++)
		rc = zsp_compiler_define(c, o->define_names[i], o->define_values[i]);
	const char *datadir = zsp_cli_test_override("ZSP_DATADIR");
	if (datadir)
		zsp_compiler_set_datadir(c, datadir);
	if (rc != ZSP_OK)
		zsp_die_oom();   /* every option was checked when it was read */
	return c;
}

void zsp_cli_summary(zsp_compiler *c)
{
	zsp_compiler_summary(c);
}

/* The default WORKSPACE: the top of the user's git work tree holding the current directory,
 * looked for below every home `~` may mean here (the password database's, -D HOME's, $HOME's:
 * a dotfiles repository at ~ is no workspace); else the current directory. */
static const char *default_workspace(const zsp_cli_compile *o, const char *pw_home, char *cwd,
				     char out[PATH_MAX])
{
	if (!cwd)
		return NULL;
	if (o && zsp_cli_param(o, NULL, "WORKSPACE"))
		return cwd;   /* -D WORKSPACE decides: no walk */
	const char *homes[3] = { pw_home, o ? zsp_cli_param(o, NULL, "HOME") : NULL, getenv("HOME") };
	char real[3][PATH_MAX];
	const char *stops[3];
	size_t n = 0;
	for (size_t i = 0; i < 3; i++)
		if (homes[i] && homes[i][0] == '/' && realpath(homes[i], real[n])) {
			stops[n] = real[n];
			n++;
		}
	zsp_workspace_default(cwd, getuid(), stops, n, out);
	return out;
}

void zsp_cli_builtins(zsp_builtin_params *b, const zsp_cli_compile *o, const char *workspace)
{
	char *cwd = workspace ? NULL : getcwd(NULL, 0);
	uid_t uid = getuid();
	const struct passwd *pw = getpwuid(uid);
	char top[PATH_MAX];
	if (!workspace)
		workspace = default_workspace(o, pw ? pw->pw_dir : NULL, cwd, top);
	zsp_builtin_params_fill(b, uid, pw, environ, workspace);
	free(cwd);
}

/* a and b name the same directory as written, trailing slashes aside */
static bool same_dir(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	while (na > 1 && a[na - 1] == '/')
		na--;
	while (nb > 1 && b[nb - 1] == '/')
		nb--;
	return na == nb && strncmp(a, b, na) == 0;
}

void zsp_cli_home_warning(const zsp_cli_compile *o, const zsp_builtin_params *b)
{
	const char *env = getenv("HOME");
	const char *home = zsp_builtin_params_get(b, "HOME");
	for (size_t i = 0; i < o->ndefines; i++)
		if (strcmp(o->define_names[i], "HOME") == 0)
			return;
	if (!env || !*env || (home && same_dir(env, home)))
		return;
	/* the environment's text, so shown escaped: it must not redraw the terminal */
	char *shown = zsp_text_escape(env);
	if (!shown)
		zsp_die_oom();
	if (home)
		zsp_warn("warning: $HOME is %s, but ~ in the policy means your account's home, %s "
			 "(give -D HOME=%s to use it)", shown, home, shown);
	else
		zsp_warn("warning: $HOME is %s, but ~ in the policy means your account's home, and the "
			 "password database has none (give -D HOME=%s to use it)", shown, shown);
	free(shown);
}

const char *zsp_cli_param(const zsp_cli_compile *o, const zsp_builtin_params *b, const char *name)
{
	for (size_t i = o->ndefines; i-- > 0;)
		if (strcmp(o->define_names[i], name) == 0)
			return o->define_values[i];
	return b ? zsp_builtin_params_get(b, name) : NULL;
}

const zsp_ir_policy *zsp_cli_pick_policy(const zsp_ir *ir, const char *name)
{
	const zsp_ir_policy *p = zsp_ir_pick_policy(ir, name);
	if (p)
		return p;
	if (name) {
		zsp_warn("no policy `%s` in %s", name, ir->source);
		return NULL;
	}
	fprintf(stderr, "%s: %s defines %zu policies; choose one with --policy:", prog, ir->source,
		ir->npolicies);
	for (size_t i = 0; i < ir->npolicies; i++)
		fprintf(stderr, " %s", ir->policies[i].name);
	fputc('\n', stderr);
	return NULL;
}

/* ---- output files ----------------------------------------------------------------------- */

static int write_all(FILE *f, const char *p, size_t n)
{
	if (fwrite(p, 1, n, f) != n)
		return -1;
	return fflush(f) == 0 ? 0 : -1;
}

/* Writes straight into something that is not a regular file (a device, a FIFO): those
 * cannot be replaced by a rename, and replacing /dev/null with a file would be a disaster. */
static int write_special(const char *out, const char *data, size_t len)
{
	int fd = open(out, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
	if (!f) {
		zsp_warn("cannot open %s: %s", out, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ZSP_ECANTCREAT;
	}
	int rc = write_all(f, data, len) == 0 ? ZSP_OK : ZSP_EIO;
	if (rc != ZSP_OK)
		zsp_warn("cannot write %s: %s", out, strerror(errno));
	if (fclose(f) != 0 && rc == ZSP_OK) {
		zsp_warn("cannot write %s: %s", out, strerror(errno));
		rc = ZSP_EIO;
	}
	return rc;
}

int zsp_cli_write_output(const char *out, const char *data, size_t len)
{
	if (!out || strcmp(out, "-") == 0) {
		if (write_all(stdout, data, len) != 0) {
			zsp_warn("cannot write to standard output: %s", strerror(errno));
			return ZSP_EIO;
		}
		return ZSP_OK;
	}
	struct stat st;
	char *real = NULL;
	if (stat(out, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			zsp_warn("cannot create %s: Is a directory", out);
			return ZSP_ECANTCREAT;
		}
		if (!S_ISREG(st.st_mode))
			return write_special(out, data, len);
		real = realpath(out, NULL);
	}
	const char *target = real ? real : out;
	size_t n = strlen(target);
	char *tmp = malloc(n + 16);
	if (!tmp)
		zsp_die_oom();
	snprintf(tmp, n + 16, "%s.XXXXXX", target);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		zsp_warn("cannot create %s: %s", out, strerror(errno));
		free(tmp);
		free(real);
		return ZSP_ECANTCREAT;
	}
	FILE *f = fdopen(fd, "wb");
	int rc = ZSP_OK;
	if (!f || write_all(f, data, len) != 0 || fsync(fileno(f)) != 0) {
		zsp_warn("cannot write %s: %s", out, strerror(errno));
		rc = ZSP_EIO;
	}
	if (f ? fclose(f) != 0 : close(fd) != 0) {
		if (rc == ZSP_OK)
			zsp_warn("cannot write %s: %s", out, strerror(errno));
		rc = ZSP_EIO;
	}
	if (rc == ZSP_OK && rename(tmp, target) != 0) {
		zsp_warn("cannot create %s: %s", out, strerror(errno));
		rc = ZSP_ECANTCREAT;
	}
	if (rc != ZSP_OK)
		unlink(tmp);
	free(tmp);
	free(real);
	return rc;
}

const char *zsp_cli_program_path(const char *name, const char *fallback)
{
	static char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 64);
	if (n <= 0 || strlen(name) > 60)
		return fallback;
	buf[n] = 0;
	char *slash = strrchr(buf, '/');
	if (!slash)
		return fallback;
	strcpy(slash + 1, name);
	return access(buf, X_OK) == 0 ? buf : fallback;
}

const char *zsp_cli_test_override(const char *name)
{
#ifdef ZSP_TEST_OVERRIDES
	const char *v = getenv(name);
	return v && *v ? v : NULL;
#else
	(void)name;
	return NULL;
#endif
}

const char *zsp_cli_build_note(void)
{
#ifdef ZSP_TEST_OVERRIDES
	return " (test build: honours ZSP_BWRAP, ZSP_PROBE, ZSP_DATADIR)";
#else
	return "";
#endif
}

void zsp_cli_bytes(char *buf, size_t size, uint64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	if (bytes == UINT64_MAX) {
		snprintf(buf, size, "unlimited");
		return;
	}
	double v = (double)bytes;
	size_t u = 0;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0 || v >= 10 || v == (double)(uint64_t)v)
		snprintf(buf, size, "%.0f %s", v, units[u]);
	else
		snprintf(buf, size, "%.1f %s", v, units[u]);
}
