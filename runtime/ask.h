/* ask.h: the question zsp-run -c puts to a person when the policy says `ask`: on the controlling
 * terminal (never stdin/stdout, which belong to the agent), one line read in canonical mode. */
#ifndef ZSP_ASK_H
#define ZSP_ASK_H

#include <stdbool.h>

typedef enum zsp_ask_answer {
	ZSP_ASK_ONCE,         /* this command, this time */
	ZSP_ASK_THREAD,       /* for the rest of the agent thread */
	ZSP_ASK_PROJECT,      /* always in the project */
	ZSP_ASK_DENY,         /* said no */
	ZSP_ASK_INTERRUPTED,  /* Ctrl-C (or TERM, HUP, QUIT) while waiting: a deny */
	ZSP_ASK_EOF,          /* end of input or a terminal error: a deny */
} zsp_ask_answer;

typedef struct zsp_tty zsp_tty;

/* Opens the controlling terminal; NULL (errno set, ENXIO when the process has none) otherwise. */
zsp_tty *zsp_tty_open(void);
void zsp_tty_close(zsp_tty *t);

/* Writes text as is (our own words). */
void zsp_tty_say(zsp_tty *t, const char *text);

/* Writes text that comes from elsewhere (the command, the policy) with every control character,
 * C1 control, bidirectional override and invalid UTF-8 byte shown as an escape (\n, \x1b,
 * \u{202e}): a command must not be able to redraw the question it is asked about. */
void zsp_tty_show(zsp_tty *t, const char *text);

/* Prints the menu and reads one answer; re-asks on an answer it does not know. The terminal is
 * put in canonical mode with echo and signals for the read and restored afterwards on every path;
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT are caught only while waiting. project is shown in the menu. */
zsp_ask_answer zsp_tty_ask(zsp_tty *t, const char *project);

#endif
