/* ask.c: the prompt on the controlling terminal for zsp-run -c: escapes what it shows, reads one
 * line in canonical mode, treats Ctrl-C and end of input as a deny, and restores the terminal. */
#include "config.h"

#include "runtime/ask.h"

#include "compiler/textesc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

struct zsp_tty {
	int fd;
};

zsp_tty *zsp_tty_open(void)
{
	/* O_NOCTTY: a process without a controlling terminal must not acquire this one by asking */
	int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return NULL;
	zsp_tty *t = malloc(sizeof(*t));
	if (!t) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	t->fd = fd;
	return t;
}

void zsp_tty_close(zsp_tty *t)
{
	if (!t)
		return;
	close(t->fd);
	free(t);
}

static void put(zsp_tty *t, const char *s, size_t n)
{
	while (n > 0) {
		ssize_t w = write(t->fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;  /* a terminal that cannot be written to: the read will fail too */
		s += w;
		n -= (size_t)w;
	}
}

void zsp_tty_say(zsp_tty *t, const char *text)
{
	put(t, text, strlen(text));
}

/* Shown escaped (compiler/textesc.h) when it could redraw the line; an escape that cannot be
 * made (out of memory) shows nothing of it rather than the raw text. */
void zsp_tty_show(zsp_tty *t, const char *text)
{
	char *shown = zsp_text_escape(text);
	zsp_tty_say(t, shown ? shown : "(out of memory)");
	free(shown);
}

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
	caught = sig;
}

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define NSTOP (sizeof(stop_signals) / sizeof(stop_signals[0]))

/* One line from the terminal into line (NUL-terminated, truncated; *long_line when it was).
 * Signals are blocked except inside ppoll, so one that arrives at any moment is seen: 1 for a
 * line, 0 at end of input or on an error, -1 when a signal came. */
static int read_line(zsp_tty *t, const sigset_t *waitmask, char *line, size_t size, bool *long_line)
{
	size_t n = 0;
	*long_line = false;
	for (;;) {
		struct pollfd pfd = { .fd = t->fd, .events = POLLIN };
		if (caught)
			return -1;
		int r = ppoll(&pfd, 1, NULL, waitmask);
		if (r < 0) {
			if (errno == EINTR)
				continue;  /* `caught` says whether it was one of ours */
			return 0;
		}
		char buf[256];
		ssize_t got = read(t->fd, buf, sizeof(buf));
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0)
			return 0;
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] == '\n') {
				line[n] = 0;
				return 1;
			}
			if (n + 1 < size)
				line[n++] = buf[i];
			else
				*long_line = true;
		}
		/* no newline: a long line continues, or ^D ended a partial one (the next read says) */
	}
}

/* The answer a line gives: o, once, t, thread, p, project, d, deny (any case, blanks around);
 * -1 for anything else. */
static int parse_answer(const char *line)
{
	static const struct {
		const char *word;
		zsp_ask_answer answer;
	} words[] = {
		{ "once", ZSP_ASK_ONCE },      { "thread", ZSP_ASK_THREAD }, { "project", ZSP_ASK_PROJECT },
		{ "deny", ZSP_ASK_DENY },
	};
	while (isspace((unsigned char)*line))
		line++;
	size_t n = strlen(line);
	while (n > 0 && isspace((unsigned char)line[n - 1]))
		n--;
	if (n == 0)
		return -1;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if ((n == 1 || n == strlen(words[i].word)) && strncasecmp(line, words[i].word, n) == 0)
			return (int)words[i].answer;
	return -1;
}

zsp_ask_answer zsp_tty_ask(zsp_tty *t, const char *project)
{
	/* The caller's terminal may be raw (an agent's TUI): the answer is a line, echoed, Enter
	 * ends it and Ctrl-C interrupts, whatever mode it was left in. */
	struct termios saved, cooked;
	bool have_termios = tcgetattr(t->fd, &saved) == 0;
	if (have_termios) {
		cooked = saved;
		cooked.c_lflag |= ICANON | ECHO | ECHOE | ECHOK | ISIG;
		cooked.c_iflag |= ICRNL;
		cooked.c_iflag &= ~(tcflag_t)(INLCR | IGNCR);
		cooked.c_oflag |= OPOST | ONLCR;
		tcsetattr(t->fd, TCSANOW, &cooked);
	}

	sigset_t stop, oldmask, waitmask;
	struct sigaction sa = { .sa_handler = on_signal }, old[NSTOP];
	sigemptyset(&stop);
	for (size_t i = 0; i < NSTOP; i++)
		sigaddset(&stop, stop_signals[i]);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;  /* no SA_RESTART: a signal must end the wait */
	caught = 0;
	sigprocmask(SIG_BLOCK, &stop, &oldmask);
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_signals[i], &sa, &old[i]);
	waitmask = oldmask;
	for (size_t i = 0; i < NSTOP; i++)
		sigdelset(&waitmask, stop_signals[i]);

	zsp_ask_answer answer;
	for (;;) {
		zsp_tty_say(t, "[o]nce / [t]his thread / [p]roject (always in ");
		zsp_tty_show(t, project ? project : "(none)");
		zsp_tty_say(t, ") / [d]eny ? ");
		char line[64];
		bool long_line;
		int r = read_line(t, &waitmask, line, sizeof(line), &long_line);
		if (r <= 0) {
			answer = r < 0 ? ZSP_ASK_INTERRUPTED : ZSP_ASK_EOF;
			zsp_tty_say(t, "\n");
			break;
		}
		int a = long_line ? -1 : parse_answer(line);
		if (a >= 0) {
			answer = (zsp_ask_answer)a;
			break;
		}
		zsp_tty_say(t, "please answer o, t, p or d\n");
	}

	/* Unblock first, with our handler still in place: a signal that came after the last
	 * read is taken as an interruption rather than killing us with the terminal unrestored. */
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_signals[i], &old[i], NULL);
	if (have_termios)
		tcsetattr(t->fd, TCSANOW, &saved);
	if (caught)
		answer = ZSP_ASK_INTERRUPTED;
	return answer;
}
