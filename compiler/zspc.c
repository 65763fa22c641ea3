/* zspc.c: the zspc command: a thin program over libzsp (--check, --emit ir).
 * Exit codes are enum zsp_status; output files are written whole or not at all. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "zsp.h"

static const char usage_text[] =
	"usage: zspc --check [OPTIONS] FILE.zsp\n"
	"       zspc --emit ir [OPTIONS] [-o OUT] FILE.zsp\n"
	"\n"
	"  --check            parse and validate; print diagnostics only\n"
	"  --emit ir          print the normalized IR as JSON\n"
	"  -o OUT             write the output to OUT (atomically); `-` is stdout\n"
	"  -I DIR             search DIR for included files\n"
	"  -D NAME=VALUE      give parameter NAME a value\n"
	"  -W NAME, -Wno-NAME, -Werror, -Werror=NAME\n"
	"                     control warnings (shadowed duplicate conflict unused-param\n"
	"                     unknown-tool no-effect)\n"
	"  --help, --version\n"
	"\n"
	"exit: 0 ok, 1 policy errors, 64 usage, 66 unreadable input, 70 internal error,\n"
	"      73 cannot create output, 74 write error\n";

static void to_stderr(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	fwrite(text, 1, len, stderr);
}

static int usage_error(const char *fmt, const char *arg) __attribute__((format(printf, 1, 0)));
static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "zspc: ");
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	fprintf(stderr, fmt, arg);
#pragma GCC diagnostic pop
	fprintf(stderr, "\nTry 'zspc --help'.\n");
	return ZSP_EUSAGE;
}

static int write_all(FILE *f, const char *p, size_t n)
{
	if (fwrite(p, 1, n, f) != n)
		return -1;
	return fflush(f) == 0 ? 0 : -1;
}

/* Writes straight into something that is not a regular file (a device, a FIFO): those
 * cannot be replaced by a rename, and replacing /dev/null with a file would be a disaster. */
static int write_special(const char *out, const char *data, size_t len)
{
	int fd = open(out, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
	if (!f) {
		fprintf(stderr, "zspc: cannot open %s: %s\n", out, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ZSP_ECANTCREAT;
	}
	int rc = write_all(f, data, len) == 0 ? ZSP_OK : ZSP_EIO;
	if (rc != ZSP_OK)
		fprintf(stderr, "zspc: cannot write %s: %s\n", out, strerror(errno));
	if (fclose(f) != 0 && rc == ZSP_OK) {
		fprintf(stderr, "zspc: cannot write %s: %s\n", out, strerror(errno));
		rc = ZSP_EIO;
	}
	return rc;
}

/* Writes a regular file atomically: a temporary file beside it, renamed over it. A symlink
 * is followed, so the link stays and its target gets the new contents. */
static int write_output(const char *out, const char *data, size_t len)
{
	if (!out || strcmp(out, "-") == 0) {
		if (write_all(stdout, data, len) != 0) {
			fprintf(stderr, "zspc: cannot write to standard output: %s\n", strerror(errno));
			return ZSP_EIO;
		}
		return ZSP_OK;
	}
	struct stat st;
	char *real = NULL;
	if (stat(out, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			fprintf(stderr, "zspc: cannot create %s: Is a directory\n", out);
			return ZSP_ECANTCREAT;
		}
		if (!S_ISREG(st.st_mode))
			return write_special(out, data, len);
		real = realpath(out, NULL);
	}
	const char *target = real ? real : out;
	size_t n = strlen(target);
	char *tmp = malloc(n + 16);
	if (!tmp) {
		free(real);
		return ZSP_EINTERNAL;
	}
	snprintf(tmp, n + 16, "%s.XXXXXX", target);
	int fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "zspc: cannot create %s: %s\n", out, strerror(errno));
		free(tmp);
		free(real);
		return ZSP_ECANTCREAT;
	}
	FILE *f = fdopen(fd, "wb");
	int rc = ZSP_OK;
	if (!f || write_all(f, data, len) != 0 || fsync(fileno(f)) != 0) {
		fprintf(stderr, "zspc: cannot write %s: %s\n", out, strerror(errno));
		rc = ZSP_EIO;
	}
	if (f ? fclose(f) != 0 : close(fd) != 0) {
		if (rc == ZSP_OK)
			fprintf(stderr, "zspc: cannot write %s: %s\n", out, strerror(errno));
		rc = ZSP_EIO;
	}
	if (rc == ZSP_OK && rename(tmp, target) != 0) {
		fprintf(stderr, "zspc: cannot create %s: %s\n", out, strerror(errno));
		rc = ZSP_ECANTCREAT;
	}
	if (rc != ZSP_OK)
		unlink(tmp);
	free(tmp);
	free(real);
	return rc;
}

enum mode { MODE_NONE, MODE_CHECK, MODE_EMIT };

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "check", no_argument, NULL, 'c' },
		{ "emit", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	enum mode mode = MODE_NONE;
	const char *out = NULL;
	int opt, rc;
	zsp_compiler *c = zsp_compiler_new();
	if (!c) {
		fprintf(stderr, "zspc: out of memory\n");
		return ZSP_EINTERNAL;
	}
	zsp_compiler_set_sink(c, to_stderr, NULL);
	const char *datadir = getenv("ZSP_DATADIR");
	if (datadir && *datadir)
		zsp_compiler_set_datadir(c, datadir);

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "+o:I:D:W:", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
		case 'e':
			if (mode != MODE_NONE) {
				rc = usage_error("%s", "give one of --check and --emit");
				goto done;
			}
			if (opt == 'c') {
				mode = MODE_CHECK;
			} else if (strcmp(optarg, "ir") == 0) {
				mode = MODE_EMIT;
			} else if (!strcmp(optarg, "bwrap") || !strcmp(optarg, "bpf") || !strcmp(optarg, "pfc") ||
				   !strcmp(optarg, "sbpl") || !strcmp(optarg, "wsl")) {
				rc = usage_error("--emit %s is not implemented in this version; only `ir` is", optarg);
				goto done;
			} else {
				rc = usage_error("unknown --emit format `%s` (expected ir)", optarg);
				goto done;
			}
			break;
		case 'o':
			out = optarg;
			break;
		case 'I':
			if ((rc = zsp_compiler_add_include_dir(c, optarg)) != ZSP_OK) {
				rc = usage_error("bad -I directory `%s`", optarg);
				goto done;
			}
			break;
		case 'D': {
			char *eq = strchr(optarg, '=');
			if (!eq) {
				rc = usage_error("-D %s: expected NAME=VALUE", optarg);
				goto done;
			}
			*eq = '\0';
			rc = zsp_compiler_define(c, optarg, eq + 1);
			if (rc == ZSP_EUSAGE) {
				*eq = '=';
				rc = usage_error("-D %s: NAME is [A-Za-z_][A-Za-z0-9_]* and VALUE may not hold `${` or control characters", optarg);
				goto done;
			}
			if (rc != ZSP_OK)
				goto done;
			break;
		}
		case 'W':
			if (zsp_compiler_warning(c, optarg) != ZSP_OK) {
				rc = usage_error("unknown warning option `-W%s`", optarg);
				goto done;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			rc = fflush(stdout) == 0 ? ZSP_OK : ZSP_EIO;
			goto done;
		case 'V':
			printf("zspc %s\n", zsp_version());
			rc = fflush(stdout) == 0 ? ZSP_OK : ZSP_EIO;
			goto done;
		case '?':
			if (optopt) {
				char o[2] = { (char)optopt, '\0' };
				rc = usage_error("option -%s needs an argument or is unknown", o);
			} else
				rc = usage_error("unknown option `%s`", argv[optind - 1]);
			goto done;
		default:
			rc = usage_error("%s", "bad option");
			goto done;
		}
	}
	if (mode == MODE_NONE) {
		rc = usage_error("%s", "say what to do: --check or --emit ir");
		goto done;
	}
	if (optind != argc - 1) {
		rc = usage_error("%s", optind >= argc ? "no policy file given" : "give exactly one policy file");
		goto done;
	}
	if (mode == MODE_CHECK && out) {
		rc = usage_error("%s", "-o goes with --emit");
		goto done;
	}

	zsp_policy_set *set = NULL;
	rc = zsp_compile_file(c, argv[optind], &set);
	if (rc == ZSP_OK && mode == MODE_EMIT) {
		char *json;
		size_t len;
		rc = zsp_policy_set_ir_json(set, &json, &len);
		if (rc == ZSP_OK) {
			rc = write_output(out, json, len);
			free(json);
		} else {
			fprintf(stderr, "zspc: out of memory\n");
		}
	}
	zsp_policy_set_free(set);
done:
	zsp_compiler_free(c);
	return rc;
}
