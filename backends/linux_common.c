/* linux_common.c: what the Linux lowering needs from the machine it runs on: the values of the
 * built-in parameters, and the shell quoting of an emitted argv. */
#include "config.h"

#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "linux.h"

int zsp_linux_defaults(const char *names[5], const char *values[5])
{
	static char uid[32], cwd[PATH_MAX], user[256];
	struct passwd *pw = getpwuid(getuid());
	const char *home = getenv("HOME");
	const char *tmp = getenv("TMPDIR");
	if (!getcwd(cwd, sizeof(cwd)))
		return -1;
	if (!home || home[0] != '/')
		home = pw ? pw->pw_dir : NULL;
	if (!home)
		return -1;
	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	snprintf(uid, sizeof(uid), "%u", (unsigned)getuid());
	int n = 0;
	names[n] = "WORKSPACE", values[n++] = cwd;
	names[n] = "HOME", values[n++] = home;
	names[n] = "TMPDIR", values[n++] = tmp;
	names[n] = "UID", values[n++] = uid;
	if (pw && pw->pw_name && snprintf(user, sizeof(user), "%s", pw->pw_name) < (int)sizeof(user))
		names[n] = "USER", values[n++] = user;
	return n;
}

char *zsp_shell_quote(const char *s)
{
	bool plain = *s != 0;
	for (const char *c = s; *c; c++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+@%-", *c))
			plain = false;
	if (plain)
		return strdup(s);
	size_t n = 2;
	for (const char *c = s; *c; c++)
		n += *c == '\'' ? 4 : 1;
	char *out = malloc(n + 1), *o = out;
	if (!out)
		return NULL;
	*o++ = '\'';
	for (const char *c = s; *c; c++) {
		if (*c == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *c;
		}
	}
	*o++ = '\'';
	*o = 0;
	return out;
}

const char *zsp_program_path(const char *name, const char *fallback)
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
