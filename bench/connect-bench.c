/* connect-bench.c: the cost of one connect() to a unix socket (bench/connect-bench.sh): `serve
 * PATH` accepts and closes connections until killed; `PATH N` connects N times, prints ns per
 * connect. Run under zsp-run with `allow unix PATH`, each connect goes through the supervisor. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_un address(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(a.sun_path)) {
		fprintf(stderr, "connect-bench: %s: path too long\n", path);
		exit(2);
	}
	strcpy(a.sun_path, path);
	return a;
}

static int serve(const char *path)
{
	struct sockaddr_un a = address(path);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	unlink(path);
	if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 128) != 0) {
		fprintf(stderr, "connect-bench: serve %s: %s\n", path, strerror(errno));
		return 2;
	}
	for (;;) {
		int c = accept(s, NULL, NULL);
		if (c >= 0)
			close(c);
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "serve") == 0)
		return serve(argv[2]);
	if (argc != 3) {
		fprintf(stderr, "usage: connect-bench serve PATH | connect-bench PATH N\n");
		return 2;
	}
	struct sockaddr_un a = address(argv[1]);
	long n = atol(argv[2]);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		int c = socket(AF_UNIX, SOCK_STREAM, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) != 0) {
			fprintf(stderr, "connect-bench: connect %s: %s\n", argv[1], strerror(errno));
			return 1;
		}
		close(c);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ns = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)n;
	printf("%.0f\n", ns);
	return 0;
}
