/* doctor.h: what the sandbox needs from this machine (bwrap, user namespaces, seccomp, /proc in
 * a new pid namespace, WSL2 rather than WSL1), checked for real and explained with a remedy. */
#ifndef ZSP_DOCTOR_H
#define ZSP_DOCTOR_H

#include <stdbool.h>
#include <stdio.h>

/* 0: not WSL, 1: WSL1, 2: WSL2 (from /proc/version). */
int zsp_wsl_version(void);

/* Prints every finding; true when a sandbox can be built here. */
bool zsp_doctor(FILE *out);

/* After a failed start: the findings that explain it, each with what to do. */
void zsp_doctor_explain(FILE *out);

#endif
