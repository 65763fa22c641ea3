/* pty.c: the sandbox's pseudo-terminal and the relay between it and the person's terminal
 * (runtime/pty.h, doc/linux.md "The terminal"). One loop on poll(2): the terminal's input, the
 * pty's output, the signals that concern the terminal (through a pipe), bwrap's exit (a pidfd). */
#include "config.h"

#include "runtime/pty.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler/zsp.h"

/* After bwrap exited, output still in the pty is read until the pty says no one holds the replica
 * (EIO); a read that waits this long for nothing ends it too. */
enum { DRAIN_IDLE_MS = 500, RELAY_BUF = 16384 };

int zsp_pty_open(zsp_pty *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->master = t->replica = t->term = t->out = -1;
	err[0] = 0;
	for (int fd = 0; fd < 3; fd++)
		if ((t->on[fd] = isatty(fd)) && t->term < 0)
			t->term = fd;
	if (t->term < 0)
		return ZSP_OK;
	t->out = t->on[1] ? 1 : t->on[2] ? 2 : 0;
	char name[128];
	const char *what = "posix_openpt";
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m >= 0 && (what = "grantpt", grantpt(m) == 0) && (what = "unlockpt", unlockpt(m) == 0) &&
	    (what = "ptsname", ptsname_r(m, name, sizeof(name)) == 0)) {
		what = name;
		/* O_NOCTTY: zsp-run keeps its own controlling terminal; the exec step makes this one
		 * the sandbox's (TIOCSCTTY) */
		t->replica = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
	}
	if (m < 0 || t->replica < 0) {
		snprintf(err, errlen, "the terminal is not given to the sandbox, and a pseudo-terminal of its own "
			 "cannot be made (%s: %s), so the command does not run (run it with stdin, stdout and "
			 "stderr redirected away from the terminal)", what, strerror(errno));
		if (m >= 0)
			close(m);
		return ZSP_EIO;
	}
	t->master = m;
	struct termios tio;
	struct winsize ws;
	/* the terminal's modes are the foreground program's: in the background (a shell's line
	 * editor has the terminal) the pty keeps the kernel's defaults, echo and lines */
	if (tcgetpgrp(t->term) == getpgrp() && tcgetattr(t->term, &tio) == 0)
		tcsetattr(t->replica, TCSANOW, &tio);
	if (ioctl(t->term, TIOCGWINSZ, &ws) == 0)
		ioctl(m, TIOCSWINSZ, &ws);
	fcntl(m, F_SETFL, fcntl(m, F_GETFL) | O_NONBLOCK);
	return ZSP_OK;
}

static bool foreground(const zsp_pty *t)
{
	return tcgetpgrp(t->term) == getpgrp();
}

/* Raw mode for relaying keystrokes, only in the foreground: a process of the background that
 * sets the modes is stopped (SIGTTOU), and the modes are the foreground program's business. */
static void make_raw(zsp_pty *t)
{
	if (t->raw || !t->on[0] || !foreground(t) || tcgetattr(t->term, &t->saved) != 0)
		return;
	struct termios raw = t->saved;
	cfmakeraw(&raw);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	/* TCSADRAIN, not TCSAFLUSH: what was typed ahead is the command's input */
	t->raw = tcsetattr(t->term, TCSADRAIN, &raw) == 0;
}

/* Back to the saved modes, also from the background (SIGTTOU blocked, as shells do). */
static void restore(zsp_pty *t)
{
	if (!t->raw)
		return;
	sigset_t ttou, old;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	while (tcsetattr(t->term, TCSADRAIN, &t->saved) != 0 && errno == EINTR)
		;
	sigprocmask(SIG_SETMASK, &old, NULL);
	t->raw = false;
}

void zsp_pty_close(zsp_pty *t)
{
	restore(t);
	if (t->replica >= 0)
		close(t->replica);
	if (t->master >= 0)
		close(t->master);
	t->replica = t->master = -1;
}

static int signal_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	int e = errno;
	unsigned char c = (unsigned char)sig;
	if (write(signal_pipe[1], &c, 1) < 0) {
		/* the pipe is full: the loop has signals to read already */
	}
	errno = e;
}

static const int relayed_signals[3] = { SIGWINCH, SIGCONT, SIGTSTP };

/* Writes all of buf to fd, also when another program left the terminal's file non-blocking;
 * false when fd fails (a terminal that hung up). */
static bool write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			poll(&p, 1, -1);
			continue;
		}
		if (w <= 0)
			return false;
		buf += w;
		len -= (size_t)w;
	}
	return true;
}

static void on_terminal_signal(zsp_pty *t, int sig)
{
	struct winsize ws;
	if (sig == SIGWINCH && ioctl(t->term, TIOCGWINSZ, &ws) == 0)
		ioctl(t->master, TIOCSWINSZ, &ws);
	if (sig == SIGTSTP) {
		/* stopped from outside (kill -TSTP): the person gets the terminal back as it was */
		restore(t);
		kill(getpid(), SIGSTOP);
	}
	if (sig == SIGTSTP || sig == SIGCONT)
		make_raw(t);
}

typedef struct relay {
	char in[RELAY_BUF];     /* from the terminal, not yet written to the pty */
	size_t inlen, inoff;
	bool reading;           /* the terminal's input is still relayed */
	bool master_open;       /* someone in the sandbox still holds the replica */
	bool exited;
} relay;

/* The terminal's input: read once poll says there is some. In the background this read is what
 * stops zsp-run (SIGTTIN): the bytes stay for the foreground program. */
static void from_terminal(zsp_pty *t, relay *r)
{
	ssize_t n = read(0, r->in, sizeof(r->in));
	if (n > 0) {
		r->inlen = (size_t)n;
		r->inoff = 0;
	} else if (n == 0) {
		/* end of input: the pty's own end-of-file character, which the command reads as EOF */
		struct termios tio;
		r->in[0] = tcgetattr(t->master, &tio) == 0 ? (char)tio.c_cc[VEOF] : 4;
		r->inlen = 1;
		r->inoff = 0;
		r->reading = false;
	} else if (errno != EINTR && errno != EAGAIN) {
		/* EIO: hung up, or the background of an orphaned process group */
		r->reading = false;
	}
}

static void to_pty(zsp_pty *t, relay *r)
{
	ssize_t w = write(t->master, r->in + r->inoff, r->inlen - r->inoff);
	if (w > 0 && (r->inoff += (size_t)w) == r->inlen)
		r->inlen = r->inoff = 0;
	else if (w < 0 && errno != EINTR && errno != EAGAIN)
		r->inlen = r->inoff = 0;
}

static void from_pty(zsp_pty *t, relay *r)
{
	char buf[RELAY_BUF];
	ssize_t n = read(t->master, buf, sizeof(buf));
	if (n > 0) {
		if (t->out >= 0 && !write_all(t->out, buf, (size_t)n))
			t->out = -1;  /* the terminal is gone: the output is read, so the sandbox does not block */
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		r->master_open = false;   /* EIO: no one holds the replica any more */
	}
}

static pid_t reap(pid_t pid, int *status, int flags)
{
	pid_t w;
	while ((w = waitpid(pid, status, flags)) < 0 && errno == EINTR)
		;
	return w;
}

pid_t zsp_pty_relay(zsp_pty *t, pid_t pid, int *status)
{
	if (pipe2(signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		return -1;
	struct sigaction sa = { .sa_handler = on_signal }, old[3];
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++) {
		sigaction(relayed_signals[i], &sa, &old[i]);
		/* started with SIGTSTP ignored (a shell without job control): it stays so */
		if (old[i].sa_handler == SIG_IGN && relayed_signals[i] == SIGTSTP)
			sigaction(SIGTSTP, &old[i], NULL);
	}
	close(t->replica);
	t->replica = -1;
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	relay r = { .reading = t->on[0], .master_open = true };
	pid_t w = -1;
	make_raw(t);
	while (!r.exited || r.master_open) {
		struct pollfd p[4] = {
			{ .fd = r.master_open ? t->master : -1, .events = POLLIN | (r.inlen ? POLLOUT : 0) },
			{ .fd = r.reading && !r.inlen ? 0 : -1, .events = POLLIN },
			{ .fd = signal_pipe[0], .events = POLLIN },
			{ .fd = r.exited ? -1 : pidfd, .events = POLLIN },
		};
		/* without a pidfd (before Linux 5.3) bwrap's exit is looked for every 50 ms */
		int timeout = r.exited ? DRAIN_IDLE_MS : pidfd < 0 ? 50 : -1;
		int n = poll(p, 4, timeout);
		if (n < 0 && errno != EINTR)
			break;
		if (n == 0 && r.exited)
			break;
		unsigned char sig;
		while (n > 0 && (p[2].revents & POLLIN) && read(signal_pipe[0], &sig, 1) == 1)
			on_terminal_signal(t, sig);
		if (n > 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR)))
			from_pty(t, &r);
		if (n > 0 && (p[0].revents & POLLOUT))
			to_pty(t, &r);
		if (n > 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR)))
			from_terminal(t, &r);
		if (!r.master_open)
			r.inlen = 0;
		if (!r.exited && (pidfd < 0 || (n > 0 && (p[3].revents & POLLIN))) &&
		    (w = reap(pid, status, WNOHANG)) != 0)
			r.exited = true;
	}
	if (!r.exited)
		w = reap(pid, status, 0);
	restore(t);
	for (int i = 0; i < 3; i++)
		sigaction(relayed_signals[i], &old[i], NULL);
	if (pidfd >= 0)
		close(pidfd);
	close(signal_pipe[0]);
	close(signal_pipe[1]);
	signal_pipe[0] = signal_pipe[1] = -1;
	return w;
}
