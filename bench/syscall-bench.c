/* syscall-bench.c: the cost of the seccomp filter per system call: a tight getppid loop in a
 * child without a filter and in a child with the given BPF program loaded, same binary, same run.
 * Usage: syscall-bench PROGRAM.bpf [ITERATIONS] [ROUNDS]   (prints ns per call, median of rounds) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns per getppid in a child; with prog, the filter is loaded first */
static double measure(const struct sock_fprog *prog, long n)
{
	int p[2];
	if (pipe(p) != 0)
		exit(1);
	pid_t pid = fork();
	if (pid == 0) {
		if (prog && (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
			     syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) != 0)) {
			perror("seccomp");
			_exit(1);
		}
		double t0 = now();
		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
		double ns = (now() - t0) / (double)n;
		(void)!write(p[1], &ns, sizeof(ns));
		_exit(0);
	}
	close(p[1]);
	double ns = -1;
	if (read(p[0], &ns, sizeof(ns)) != sizeof(ns))
		ns = -1;
	close(p[0]);
	waitpid(pid, NULL, 0);
	return ns;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s PROGRAM.bpf [ITERATIONS] [ROUNDS]\n", argv[0]);
		return 64;
	}
	long n = argc > 2 ? atol(argv[2]) : 5000000;
	int rounds = argc > 3 ? atoi(argv[3]) : 7;
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size % 8 || st.st_size == 0) {
		fprintf(stderr, "%s: not a BPF program\n", argv[1]);
		return 66;
	}
	struct sock_filter *f = malloc((size_t)st.st_size);
	if (!f || read(fd, f, (size_t)st.st_size) != st.st_size)
		return 74;
	struct sock_fprog prog = { .len = (unsigned short)(st.st_size / 8), .filter = f };
	double *plain = calloc((size_t)rounds, sizeof(double)), *filtered = calloc((size_t)rounds, sizeof(double));
	for (int r = 0; r < rounds; r++) {
		/* alternate, so drift hits both */
		plain[r] = measure(NULL, n);
		filtered[r] = measure(&prog, n);
	}
	qsort(plain, (size_t)rounds, sizeof(double), cmp);
	qsort(filtered, (size_t)rounds, sizeof(double), cmp);
	double a = plain[rounds / 2], b = filtered[rounds / 2];
	printf("BPF program: %u instructions\n", prog.len);
	printf("getppid without the filter: %.1f ns/call\n", a);
	printf("getppid with the filter:    %.1f ns/call (+%.1f ns, %.2fx)\n", b, b - a, b / a);
	printf("(%ld calls per round, median of %d rounds)\n", n, rounds);
	return 0;
}
