/* caller.c: the supervisor's view of a notified thread (runtime/caller.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "runtime/caller.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

bool zsp_caller_valid(int listener, uint64_t id)
{
	return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

bool zsp_caller_cwd(pid_t tid, char *buf, size_t size)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/%d/cwd", (int)tid);
	ssize_t n = readlink(link, buf, size - 1);
	if (n <= 0 || (size_t)n >= size - 1 || buf[0] != '/')
		return false;
	buf[n] = 0;
	return strstr(buf, " (deleted)") == NULL;
}

/* One "Name:\tvalue..." line of /proc/TID/status into line (size bytes); false when absent. */
static bool status_line(FILE *f, const char *name, char *line, size_t size)
{
	size_t n = strlen(name);
	while (fgets(line, (int)size, f))
		if (strncmp(line, name, n) == 0 && line[n] == ':')
			return true;
	return false;
}

int zsp_caller_pidfd(pid_t tid)
{
	int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
	if (fd >= 0 || errno != EINVAL)
		return fd;
	char file[64], line[128];
	snprintf(file, sizeof(file), "/proc/%d/status", (int)tid);
	FILE *f = fopen(file, "re");
	if (!f)
		return -1;
	long tgid = status_line(f, "Tgid", line, sizeof(line)) ? strtol(line + 5, NULL, 10) : -1;
	fclose(f);
	if (tgid <= 0) {
		errno = ESRCH;
		return -1;
	}
	return (int)syscall(SYS_pidfd_open, (pid_t)tgid, 0);
}

int zsp_caller_string(pid_t tid, uint64_t addr, char *buf, size_t size)
{
	/* page by page: the string may end just before an unmapped page */
	size_t got = 0;
	while (got < size) {
		uint64_t at = addr + got;
		size_t chunk = 4096 - (size_t)(at & 4095);
		if (chunk > size - got)
			chunk = size - got;
		struct iovec local = { buf + got, chunk };
		struct iovec remote = { (void *)(uintptr_t)at, chunk };
		ssize_t r = process_vm_readv(tid, &local, 1, &remote, 1, 0);
		if (r <= 0)
			return r < 0 && errno == ESRCH ? ESRCH : EFAULT;
		char *nul = memchr(buf + got, 0, (size_t)r);
		if (nul)
			return 0;
		got += (size_t)r;
	}
	return ENAMETOOLONG;
}

/* The second number of a "NStgid:\t1719\t4" line: the id in the namespace below zsp-run's. */
static long second_id(const char *line)
{
	const char *p = strchr(line, ':');
	if (!p)
		return -1;
	char *end;
	strtol(p + 1, &end, 10);
	if (end == p + 1)
		return -1;
	const char *q = end;
	long v = strtol(q, &end, 10);
	return end == q || v <= 0 ? -1 : v;
}

bool zsp_caller_ids_read(pid_t tid, zsp_caller_ids *out)
{
	char file[64], line[256];
	snprintf(file, sizeof(file), "/proc/%d/status", (int)tid);
	FILE *f = fopen(file, "re");
	if (!f)
		return false;
	/* the fields come in this order: Umask, ..., NStgid, NSpid */
	bool ok = status_line(f, "Umask", line, sizeof(line));
	long mask = ok ? strtol(line + 6, NULL, 8) : -1;
	ok = ok && status_line(f, "NStgid", line, sizeof(line));
	out->tgid = ok ? second_id(line) : -1;
	ok = ok && status_line(f, "NSpid", line, sizeof(line));
	out->tid = ok ? second_id(line) : -1;
	fclose(f);
	out->umask = (mode_t)(mask & 0777);
	return ok && mask >= 0 && out->tgid > 0 && out->tid > 0;
}

long long zsp_caller_tty(pid_t tid)
{
	char file[64], buf[1024];
	snprintf(file, sizeof(file), "/proc/%d/stat", (int)tid);
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* after "pid (comm) ": state ppid pgrp session tty_nr; comm may hold anything but ')' ends it last */
	char *p = strrchr(buf, ')');
	if (!p)
		return -1;
	char state;
	long long ppid, pgrp, session, tty;
	if (sscanf(p + 1, " %c %lld %lld %lld %lld", &state, &ppid, &pgrp, &session, &tty) != 5)
		return -1;
	return tty;
}
