/* pty.h: the sandbox's own pseudo-terminal (doc/linux.md "The terminal"). When zsp-run's stdin,
 * stdout or stderr is a terminal, the sandbox gets the replica of a pty zsp-run opened in their
 * place, and zsp-run relays between the pty and the terminal: the sandbox never holds the
 * person's terminal, so it cannot read what is typed for another program, inject input, or
 * leave the terminal's modes changed. */
#ifndef ZSP_PTY_H
#define ZSP_PTY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <termios.h>

typedef struct zsp_pty {
	int master;           /* -1: none of stdin, stdout, stderr is a terminal, nothing to relay */
	int replica;          /* for the sandbox's descriptors; closed once bwrap holds it */
	bool on[3];           /* which of 0, 1, 2 were the terminal (they become the replica) */
	int term;             /* one of 0, 1, 2 that is the terminal: its modes and size */
	int out;              /* where the pty's output goes: 1, 2 or 0 (the first that is the terminal) */
	bool raw;             /* the terminal is in raw mode and saved holds its modes */
	struct termios saved;
} zsp_pty;

/* Opens the pty when any of 0, 1, 2 is a terminal (else t->master is -1), its replica given the
 * terminal's modes and window size. ZSP_OK, or ZSP_EIO with the reason in err: the command must
 * then not run, as it would get the terminal itself. */
int zsp_pty_open(zsp_pty *t, char *err, size_t errlen);

/* Relays until the process pid (bwrap) has exited and what the sandbox wrote is drained: the
 * terminal's input to the pty (the terminal in raw mode while zsp-run is in the foreground; in
 * the background, reading it stops zsp-run by SIGTTIN as job control wants), the pty's output to
 * the terminal, the window size on SIGWINCH, end of input as the pty's VEOF character. The
 * terminal's modes are restored before it returns, and on SIGTSTP before zsp-run stops. Returns
 * waitpid's result for pid, its status in *status. */
pid_t zsp_pty_relay(zsp_pty *t, pid_t pid, int *status);

/* Restores the terminal's modes if they were changed, closes the pty. Idempotent. */
void zsp_pty_close(zsp_pty *t);

#endif
