/* seccomp.c: the policy's syscall section, the built-in hardening set and the network-off rules ->
 * one libseccomp filter for the native architecture; every other ABI (i386, x32) is killed. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "backends/linux.h"
#include "compiler/hardening.h"

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

/* Low 32 bits only: the kernel reads these arguments as int, so 1 << 32 | TIOCSTI is TIOCSTI. */
#define LO32_EQ(i, v) SCMP_CMP((i), SCMP_CMP_MASKED_EQ, 0xffffffffu, (v))
#define BITS_SET(i, v) SCMP_CMP((i), SCMP_CMP_MASKED_EQ, (v), (v))

static const char *const enosys_calls[] = {
	/* flags behind a pointer, and the new mount API: ENOSYS makes libc fall back to calls the
	 * filter can inspect (clone, mount) */
	"clone3", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
};

static const zsp_ir_syscall *policy_rule(const zsp_ir_policy *p, const char *name)
{
	for (size_t i = 0; i < p->nsyscalls; i++)
		if (strcmp(p->syscalls[i].name, name) == 0)
			return &p->syscalls[i];
	return NULL;
}

static bool unix_sockets_allowed(const zsp_ir_policy *p)
{
	for (size_t i = 0; i < p->nunix; i++)
		if (p->unix_socks[i].decision == ZSP_ALLOW)
			return true;
	return false;
}

bool zsp_linux_mediates_unix(const zsp_ir_policy *p)
{
	return p->net_mode == ZSP_NET_FULL || unix_sockets_allowed(p);
}

typedef struct fb {
	scmp_filter_ctx ctx;
	const zsp_ir_policy *p;
	zsp_diag *d;
	int rc;                     /* enum zsp_status of the first rule that failed */
} fb;

/* A built-in rule, unless the policy says something about this call itself (its own deny or an
 * allow that lifts the built-in one). */
static void builtin(fb *f, uint32_t action, const char *name, unsigned n, const struct scmp_arg_cmp *cmp)
{
	if (f->rc || policy_rule(f->p, name))
		return;
	int nr = seccomp_syscall_resolve_name(name);
	if (nr == __NR_SCMP_ERROR)
		return; /* not on this architecture (e.g. _sysctl, uselib on newer kernels) */
	int rc = seccomp_rule_add_array(f->ctx, action, nr, n, cmp);
	if (rc < 0) {
		zsp_diag_error_noloc(f->d, "seccomp: cannot add the rule for %s: %s", name, strerror(-rc));
		f->rc = ZSP_EINTERNAL;
	}
}

static void builtin1(fb *f, uint32_t action, const char *name, struct scmp_arg_cmp c)
{
	builtin(f, action, name, 1, &c);
}

static void builtin2(fb *f, uint32_t action, const char *name, struct scmp_arg_cmp c1, struct scmp_arg_cmp c2)
{
	struct scmp_arg_cmp c[2] = { c1, c2 };
	builtin(f, action, name, 2, c);
}

/* Unix sockets of type SOCK_STREAM (1) and SOCK_SEQPACKET (5) only: a datagram (SOCK_DGRAM, and
 * SOCK_RAW, which the kernel makes a datagram socket too) reaches any socket file by sendto().
 * The type is its low four bits (SOCK_NONBLOCK and SOCK_CLOEXEC lie above): 1 and 5 are the
 * values with bit 0 set and bits 1 and 3 clear. */
static void unix_types(fb *f, const char *call)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	builtin2(f, eperm, call, LO32_EQ(0, AF_UNIX), SCMP_CMP(1, SCMP_CMP_MASKED_EQ, 0x1, 0));
	builtin2(f, eperm, call, LO32_EQ(0, AF_UNIX), BITS_SET(1, 0x2));
	builtin2(f, eperm, call, LO32_EQ(0, AF_UNIX), BITS_SET(1, 0x8));
}

/* The filter, or NULL with the reason reported on d and its enum zsp_status in *status. */
static scmp_filter_ctx build(const zsp_ir_policy *p, zsp_diag *d, int *status)
{
	fb f = { seccomp_init(SCMP_ACT_ALLOW), p, d, ZSP_OK };
	*status = ZSP_EINTERNAL;
	if (!f.ctx) {
		zsp_diag_error_noloc(d, "seccomp: cannot create a filter (out of memory)");
		return NULL;
	}
	/* the native ABI only: i386 (int 0x80, where socketcall multiplexes every socket call past
	 * per-call argument rules) and x32 (syscall numbers with bit 30) die */
	if (seccomp_attr_set(f.ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS) < 0 ||
	    seccomp_attr_set(f.ctx, SCMP_FLTATR_CTL_NNP, 1) < 0 ||
	    seccomp_attr_set(f.ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) < 0) {
		zsp_diag_error_noloc(d, "seccomp: cannot set the filter attributes");
		seccomp_release(f.ctx);
		return NULL;
	}
	uint32_t eperm = SCMP_ACT_ERRNO(EPERM), enosys = SCMP_ACT_ERRNO(ENOSYS);

	for (size_t i = 0; i < p->nsyscalls && !f.rc; i++) {
		const zsp_ir_syscall *s = &p->syscalls[i];
		if (s->action != ZSP_DENY)
			continue;
		uint32_t act = s->kill ? SCMP_ACT_KILL_PROCESS : SCMP_ACT_ERRNO((uint32_t)s->err);
		int rc = seccomp_rule_add(f.ctx, act, s->nr, 0);
		if (rc < 0) {
			zsp_diag_error(d, s->loc, "seccomp: cannot add the rule for %s: %s", s->name, strerror(-rc));
			f.rc = ZSP_EPOLICY;
		}
	}
	for (size_t i = 0; i < zsp_hardening_count; i++)
		builtin(&f, SCMP_ACT_ERRNO((uint32_t)zsp_hardening[i].err), zsp_hardening[i].name, 0, NULL);
	for (size_t i = 0; i < sizeof(enosys_calls) / sizeof(enosys_calls[0]); i++)
		builtin(&f, enosys, enosys_calls[i], 0, NULL);

	/* argument rules: a deny compares the low 32 bits; an exception compares all 64, so high
	 * bits can only make a call fail */
	builtin1(&f, eperm, "ioctl", LO32_EQ(1, TIOCSTI));
	builtin1(&f, eperm, "ioctl", LO32_EQ(1, TIOCLINUX));
	builtin1(&f, eperm, "personality", SCMP_A0(SCMP_CMP_NE, 0, 0));
	builtin1(&f, eperm, "unshare", BITS_SET(0, CLONE_NEWUSER));
	builtin1(&f, eperm, "clone", BITS_SET(0, CLONE_NEWUSER));

	/* AF_VSOCK reaches the host of a virtual machine (on WSL2, Windows): no mode allows it */
	builtin1(&f, eperm, "socket", LO32_EQ(0, AF_VSOCK));
	unix_types(&f, "socket");
	unix_types(&f, "socketpair");
	if (p->net_mode != ZSP_NET_FULL) {
		/* The sandbox has a network namespace of its own (bwrap --unshare-net): its loopback
		 * and its abstract unix names are its own. Pathname unix sockets are the host's file
		 * system, and connect() cannot tell a unix socket from an inet one: without an
		 * allowed unix path no unix socket is made but by socketpair (born connected), so
		 * connect, bind and listen reach the sandbox's loopback only (doc/linux.md "Sockets"). */
		bool unix_ok = unix_sockets_allowed(p);
		builtin1(&f, eperm, "socket", SCMP_A0(SCMP_CMP_GT, AF_INET6, 0)); /* all 64 bits */
		for (int fam = AF_UNSPEC; fam < AF_INET6; fam++)
			if (fam != AF_INET && (fam != AF_UNIX || !unix_ok))
				builtin1(&f, eperm, "socket", LO32_EQ(0, fam));
		builtin1(&f, eperm, "socketpair", SCMP_A0(SCMP_CMP_NE, AF_UNIX, 0));
	}
	if (f.rc) {
		seccomp_release(f.ctx);
		*status = f.rc;
		return NULL;
	}
	*status = ZSP_OK;
	return f.ctx;
}

/* libseccomp writes to a file descriptor: collect it through a memfd. */
static int export_to(scmp_filter_ctx ctx, bool pfc, char **out, size_t *len)
{
	int fd = memfd_create("zsp-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = pfc ? seccomp_export_pfc(ctx, fd) : seccomp_export_bpf(ctx, fd);
	off_t size = rc == 0 ? lseek(fd, 0, SEEK_END) : -1;
	char *buf = size >= 0 ? malloc((size_t)size + 1) : NULL;
	if (rc == 0 && !buf)
		rc = size >= 0 ? -ENOMEM : -EIO;
	else if (rc == 0 && pread(fd, buf, (size_t)size, 0) != size)
		rc = -EIO;
	close(fd);
	if (rc != 0) {
		free(buf);
		return rc;
	}
	buf[size] = 0;
	*out = buf;
	*len = (size_t)size;
	return 0;
}

int zsp_seccomp_export(const zsp_ir_policy *p, bool pfc, zsp_diag *d, char **out, size_t *len)
{
	int status;
	scmp_filter_ctx ctx = build(p, d, &status);
	if (!ctx)
		return status;
	int rc = export_to(ctx, pfc, out, len);
	seccomp_release(ctx);
	if (rc != 0) {
		zsp_diag_error_noloc(d, "seccomp: cannot export the filter: %s", strerror(-rc));
		return rc == -ENOMEM ? ZSP_EINTERNAL : ZSP_EIO;
	}
	return ZSP_OK;
}

int zsp_seccomp_notify_export(bool connects, bool opens, char **out, size_t *len)
{
	static const char *const path_calls[] = {
		"open", "openat", "creat", "truncate", "rename", "renameat", "renameat2", "link", "linkat",
	};
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
	if (rc == 0 && connects)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0);
	for (size_t i = 0; rc == 0 && opens && i < sizeof(path_calls) / sizeof(path_calls[0]); i++) {
		int nr = seccomp_syscall_resolve_name(path_calls[i]);
		/* a call this architecture lacks (open on arm64) needs no rule */
		rc = nr < 0 ? 0 : seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
	}
	if (rc == 0 && opens && seccomp_syscall_resolve_name("openat2") >= 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), seccomp_syscall_resolve_name("openat2"), 0);
	if (rc == 0)
		rc = export_to(ctx, false, out, len);
	seccomp_release(ctx);
	return rc;
}

int zsp_seccomp_instructions(const zsp_ir_policy *p, zsp_diag *d, size_t *count)
{
	char *bpf;
	size_t len;
	int rc = zsp_seccomp_export(p, false, d, &bpf, &len);
	if (rc != ZSP_OK)
		return rc;
	free(bpf);
	*count = len / 8; /* struct sock_filter is 8 bytes */
	return ZSP_OK;
}

static void check(const zsp_ir_policy *p, bool supervised, zsp_diag *d)
{
	for (size_t i = 0; i < p->nhosts; i++) {
		const zsp_ir_host *h = &p->hosts[i];
		/* zsp-run brings the proxy (runtime/netproxy.h); an emitted sandbox has none */
		if (p->net_mode == ZSP_NET_PROXY && h->decision == ZSP_ALLOW && !supervised)
			zsp_diag_warning(d, ZSP_W_UNENFORCED, h->loc,
					 "on Linux, only zsp-run brings the proxy of mode proxy: the emitted sandbox run by hand has no network, so `%s` stays unreachable",
					 h->host);
		else if (p->net_mode == ZSP_NET_FULL && h->decision == ZSP_DENY)
			zsp_diag_warning(d, ZSP_W_UNENFORCED, h->loc,
					 "on Linux, mode full cannot refuse single hosts: `%s` stays reachable", h->host);
	}
	/* what zspc emits runs without zsp-run's connect supervisor (runtime/supervise.c) */
	bool named = false;
	for (size_t i = 0; i < p->nunix && !supervised; i++)
		if (p->unix_socks[i].decision == ZSP_ALLOW) {
			named = true;
			zsp_diag_warning(d, ZSP_W_UNENFORCED, p->unix_socks[i].loc,
					 "on Linux, only zsp-run's connect supervisor keeps unix sockets to `%s`: the emitted sandbox run by hand reaches every socket file it can see",
					 p->unix_socks[i].path);
		}
	if (!supervised && !named && p->net_mode == ZSP_NET_FULL)
		zsp_diag_warning(d, ZSP_W_UNENFORCED, p->net_mode_loc.src ? p->net_mode_loc : p->loc,
				 "on Linux, only zsp-run's connect supervisor keeps unix sockets closed in mode full: the emitted sandbox run by hand reaches every socket file it can see (the session bus, docker.sock)");
}

void zsp_linux_check(const zsp_ir_policy *p, zsp_diag *d)
{
	check(p, false, d);
}

void zsp_linux_check_supervised(const zsp_ir_policy *p, zsp_diag *d)
{
	check(p, true, d);
}

void zsp_linux_backend_check(const zsp_backend_input *in, zsp_diag *d)
{
	check(in->p, true, d);
}

static int export_row(const zsp_backend_input *in, bool pfc, zsp_diag *d, zsp_buf *out)
{
	char *text;
	size_t len;
	zsp_linux_check(in->p, d);
	int rc = zsp_seccomp_export(in->p, pfc, d, &text, &len);
	if (rc != ZSP_OK)
		return rc;
	if (d->errors) {
		free(text);
		return ZSP_EPOLICY;
	}
	zsp_buf_add(out, text, len);
	free(text);
	if (out->oom) {
		zsp_diag_error_noloc(d, "out of memory");
		return ZSP_EINTERNAL;
	}
	return ZSP_OK;
}

int zsp_bpf_backend_emit(const zsp_backend_input *in, zsp_diag *d, zsp_buf *out)
{
	return export_row(in, false, d, out);
}

int zsp_pfc_backend_emit(const zsp_backend_input *in, zsp_diag *d, zsp_buf *out)
{
	return export_row(in, true, d, out);
}
