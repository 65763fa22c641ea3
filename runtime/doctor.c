/* doctor.c: zsp-run --doctor, and the explanation printed when bwrap cannot build the sandbox.
 * Each check runs the real thing (bwrap with the namespaces zsp-run asks for) and matches the
 * messages bwrap prints for the known environment failures (doc/facts.md §bwrap). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/doctor.h"
#include "runtime/launch.h"

static bool read_file(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return true;
}

int zsp_wsl_version(void)
{
	char v[512];
	if (!read_file("/proc/version", v, sizeof(v)))
		return 0;
	if (strstr(v, "microsoft-standard") || strstr(v, "WSL2"))
		return 2;
	return strstr(v, "Microsoft") ? 1 : 0;
}

/* Runs bwrap with args; its stderr (first line) in err. Exit status, or -1. */
static int try_bwrap(const char *const *args, char *err, size_t errsize)
{
	int pipefd[2];
	err[0] = 0;
	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], 2);
		int devnull = open("/dev/null", O_RDWR);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 1);
		}
		const char *argv[32];
		size_t k = 0;
		argv[k++] = "bwrap";
		for (size_t i = 0; args[i] && k < 30; i++)
			argv[k++] = args[i];
		argv[k] = NULL;
		char *const env[] = { NULL };
		execve(zsp_bwrap_path(), (char *const *)argv, env);
		dprintf(2, "cannot execute %s: %s", zsp_bwrap_path(), strerror(errno));
		_exit(127);
	}
	close(pipefd[1]);
	size_t len = 0;
	ssize_t r;
	while (pid > 0 && len < errsize - 1 && (r = read(pipefd[0], err + len, errsize - 1 - len)) > 0)
		len += (size_t)r;
	err[len] = 0;
	err[strcspn(err, "\n")] = 0;
	close(pipefd[0]);
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

struct finding {
	bool ok;
	char what[512];
	const char *remedy;
};

static const char *userns_remedy(const char *err)
{
	char v[64];
	if (read_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", v, sizeof(v)) && atoi(v) == 1)
		return "AppArmor forbids unprivileged user namespaces (Ubuntu 24.04 and later): "
		       "as root, `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`, or install "
		       "an AppArmor profile that allows userns for bwrap";
	if (read_file("/proc/sys/user/max_user_namespaces", v, sizeof(v)) && atoi(v) == 0)
		return "user namespaces are switched off: as root, `sysctl -w user.max_user_namespaces=15000`";
	if (read_file("/proc/sys/kernel/unprivileged_userns_clone", v, sizeof(v)) && atoi(v) == 0)
		return "unprivileged user namespaces are switched off: as root, "
		       "`sysctl -w kernel.unprivileged_userns_clone=1`";
	if (strstr(err, "setting up uid map") || strstr(err, "No permissions to create a new namespace") ||
	    strstr(err, "Creating new namespace failed"))
		return "this looks like a container that forbids new namespaces: run the container with "
		       "user namespaces allowed (e.g. without the default seccomp profile), or run zsp-run on the host";
	return "bwrap cannot create a user namespace here; see `man 7 user_namespaces`";
}

static size_t check(struct finding *f)
{
	size_t n = 0;
	const char *bw = zsp_bwrap_path();
	struct stat st;
	char err[400], v[256];

	if (stat(bw, &st) != 0 || access(bw, X_OK) != 0) {
		f[n] = (struct finding){ false, "", "install bubblewrap (as root: apt-get install bubblewrap)" };
		snprintf(f[n++].what, sizeof(f[0].what), "bwrap: %s is missing or not executable", bw);
		return n;
	}
	const char *ver_args[] = { "--version", NULL };
	char ver[128] = "";
	if (try_bwrap(ver_args, ver, sizeof(ver)) != 0)
		ver[0] = 0;
	f[n] = (struct finding){ true, "", NULL };
	snprintf(f[n++].what, sizeof(f[0].what), "bwrap: %s%s%s, %s", bw, ver[0] ? ", " : "", ver,
		 st.st_mode & S_ISUID ? "setuid root (zsp-run works with it, but does not need it)"
				      : "not setuid (unprivileged user namespaces)");

	/* zsp's exec step, which every sandbox of zsp-run starts with (runtime/launch.h) */
	const char *ex = zsp_exec_path();
	struct stat est;
	bool ex_ok = stat(ex, &est) == 0 && S_ISREG(est.st_mode) && access(ex, X_OK) == 0;
	f[n] = (struct finding){ ex_ok, "", ex_ok ? NULL
					      : "install zsp (make install puts zsp-exec beside zsp-probe); a "
						"zsp-run that is not the installed one uses the zsp-exec beside it: "
						"rebuild, or copy both" };
	snprintf(f[n++].what, sizeof(f[0].what), "exec step: %s%s", ex, ex_ok ? "" : " is missing or not executable");

	int wsl = zsp_wsl_version();
	f[n] = (struct finding){ wsl != 1, "", wsl == 1 ? "convert the distribution to WSL2: wsl --set-version DISTRO 2" : NULL };
	snprintf(f[n++].what, sizeof(f[0].what), "platform: %s",
		 wsl == 1 ? "WSL1 (no user namespaces: unsupported)" : wsl == 2 ? "WSL2" : "Linux");

	const char *userns[] = { "--ro-bind", "/", "/", "--unshare-user", "--", "/bin/true", NULL };
	int rc = try_bwrap(userns, err, sizeof(err));
	if (!read_file("/proc/sys/user/max_user_namespaces", v, sizeof(v)))
		strcpy(v, "?");
	f[n] = (struct finding){ rc == 0, "", rc == 0 ? NULL : userns_remedy(err) };
	if (rc == 0)
		snprintf(f[n++].what, sizeof(f[0].what), "user namespaces: available (user.max_user_namespaces=%s)", v);
	else
		snprintf(f[n++].what, sizeof(f[0].what), "user namespaces: bwrap failed: %s", err[0] ? err : "(no message)");
	if (rc != 0)
		return n;

	const char *proc[] = { "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-user", "--unshare-pid",
			       "--proc", "/proc", "--", "/bin/true", NULL };
	rc = try_bwrap(proc, err, sizeof(err));
	f[n] = (struct finding){ rc == 0, "", rc == 0 ? NULL
					     : "this container does not let a new /proc be mounted: run with "
					       "zsp-run --no-proc (the sandbox then has no /proc), or give the container "
					       "an unmasked /proc" };
	snprintf(f[n++].what, sizeof(f[0].what), "/proc in a new pid namespace: %s%s",
		 rc == 0 ? "mountable" : "bwrap failed: ", rc == 0 ? "" : err);

	const char *net[] = { "--ro-bind", "/", "/", "--unshare-user", "--unshare-net", "--", "/bin/true", NULL };
	rc = try_bwrap(net, err, sizeof(err));
	f[n] = (struct finding){ rc == 0, "", rc == 0 ? NULL
					     : "bwrap cannot set up the loopback of a new network namespace "
					       "(RTM_NEWADDR/RTM_NEWLINK): a container without CAP_NET_ADMIN in "
					       "user namespaces; run zsp-run on the host" };
	snprintf(f[n++].what, sizeof(f[0].what), "network namespace: %s%s", rc == 0 ? "available" : "bwrap failed: ",
		 rc == 0 ? "" : err);

	int sc = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
	bool filter = sc >= 0;
	f[n] = (struct finding){ filter, "", filter ? NULL : "the kernel lacks CONFIG_SECCOMP_FILTER" };
	snprintf(f[n++].what, sizeof(f[0].what), "seccomp: %s%s", filter ? "available" : "unavailable",
		 sc == 2 ? " (this process is already filtered; filters stack)" : "");
	return n;
}

bool zsp_doctor(FILE *out)
{
	struct finding f[8];
	size_t n = check(f);
	bool ok = true;
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%s %s\n", f[i].ok ? "ok:     " : "problem:", f[i].what);
		if (f[i].remedy)
			fprintf(out, "         remedy: %s\n", f[i].remedy);
		ok &= f[i].ok;
	}
	fprintf(out, "%s\n", ok ? "result: a sandbox can be built here" : "result: zsp-run cannot build a sandbox here");
	fflush(out);
	return ok;
}

void zsp_doctor_explain(FILE *out)
{
	struct finding f[8];
	size_t n = check(f);
	bool any = false;
	for (size_t i = 0; i < n; i++) {
		if (f[i].ok)
			continue;
		fprintf(out, "  found: %s\n", f[i].what);
		if (f[i].remedy)
			fprintf(out, "  remedy: %s\n", f[i].remedy);
		any = true;
	}
	if (!any)
		fprintf(out, "  zsp-run --doctor finds nothing wrong with this machine: the policy's mounts are the likely cause (bwrap's message above names the path)\n");
}
