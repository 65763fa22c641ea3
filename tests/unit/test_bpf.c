/* test_bpf.c: the seccomp programs zsp emits, run in a classic-BPF interpreter (the escape battery
 * runs them in the kernel): argument rules on low 32 bits, foreign ABIs, network off, policy rules. */
#include "config.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "backends/linux.h"
#include "compiler/compile.h"
#include "compiler/zsp.h"

/* A classic BPF interpreter over struct seccomp_data, as the kernel runs a seccomp filter. */
static uint32_t run_bpf(const struct sock_filter *prog, size_t n, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = { 0 };
	const unsigned char *data = (const unsigned char *)d;
	for (size_t pc = 0; pc < n; pc++) {
		const struct sock_filter *f = &prog[pc];
		uint32_t k = f->k, src = BPF_SRC(f->code) == BPF_X ? x : k;
		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
			if (BPF_MODE(f->code) == BPF_ABS) {
				CU_ASSERT_FATAL(k + 4 <= sizeof(*d));
				memcpy(&a, data + k, 4);
			} else if (BPF_MODE(f->code) == BPF_IMM) {
				a = k;
			} else if (BPF_MODE(f->code) == BPF_MEM) {
				a = mem[k % BPF_MEMWORDS];
			} else {
				CU_FAIL_FATAL("unsupported load");
			}
			break;
		case BPF_LDX:
			x = BPF_MODE(f->code) == BPF_MEM ? mem[k % BPF_MEMWORDS] : k;
			break;
		case BPF_ST:
			mem[k % BPF_MEMWORDS] = a;
			break;
		case BPF_STX:
			mem[k % BPF_MEMWORDS] = x;
			break;
		case BPF_ALU:
			switch (BPF_OP(f->code)) {
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_AND: a &= src; break;
			case BPF_OR: a |= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_LSH: a <<= src; break;
			case BPF_RSH: a >>= src; break;
			case BPF_NEG: a = -a; break;
			default: CU_FAIL_FATAL("unsupported alu op");
			}
			break;
		case BPF_JMP: {
			bool t;
			switch (BPF_OP(f->code)) {
			case BPF_JA: pc += k; continue;
			case BPF_JEQ: t = a == src; break;
			case BPF_JGT: t = a > src; break;
			case BPF_JGE: t = a >= src; break;
			case BPF_JSET: t = (a & src) != 0; break;
			default: CU_FAIL_FATAL("unsupported jump"); return 0;
			}
			pc += t ? f->jt : f->jf;
			break;
		}
		case BPF_RET:
			return BPF_RVAL(f->code) == BPF_A ? a : k;
		case BPF_MISC:
			if (BPF_MISCOP(f->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		}
	}
	CU_FAIL_FATAL("the program ran off its end");
	return 0;
}

typedef struct filter {
	struct sock_filter *prog;
	size_t n;
	zsp_policy_set *set;
} filter;

static void quiet(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	(void)text;
	(void)len;
}

static filter compile(const char *text)
{
	filter f = { 0 };
	zsp_compiler *c = zsp_compiler_new();
	CU_ASSERT_FATAL(c != NULL);
	zsp_compiler_set_sink(c, quiet, NULL);
	CU_ASSERT_FATAL(zsp_compile_buffer(c, "t.zsp", text, strlen(text), &f.set) == ZSP_OK);
	zsp_compiler_free(c);
	const zsp_ir *ir = zsp_policy_set_ir(f.set);
	zsp_diag d;
	zsp_diag_init(&d, quiet, NULL);
	char *buf;
	size_t len;
	CU_ASSERT_FATAL(zsp_seccomp_export(&ir->policies[0], false, &d, &buf, &len) == ZSP_OK);
	CU_ASSERT_FATAL(len % sizeof(struct sock_filter) == 0 && len > 0);
	f.prog = (struct sock_filter *)buf;
	f.n = len / sizeof(struct sock_filter);
	return f;
}

static void release(filter *f)
{
	free(f->prog);
	zsp_policy_set_free(f->set);
}

static uint32_t call(const filter *f, uint32_t arch, int nr, uint64_t a0, uint64_t a1)
{
	struct seccomp_data d = { .nr = nr, .arch = arch, .args = { a0, a1 } };
	return run_bpf(f->prog, f->n, &d);
}

#define X86_64 AUDIT_ARCH_X86_64
#define ERRNO(e) (SECCOMP_RET_ERRNO | (e))
#define HIGH (1ULL << 32)

static const char net_none[] = "zsp 1; policy \"p\" { fs { read \"/\"; } }";

static void test_argument_rules_low32(void)
{
	filter f = compile(net_none);
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_ioctl, 0, TIOCSTI), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_ioctl, 0, TIOCSTI | HIGH), ERRNO(EPERM)); /* CVE-2019-10063 */
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_ioctl, 0, 0x541C), ERRNO(EPERM));        /* TIOCLINUX */
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_ioctl, 0, 0x541C | HIGH), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_ioctl, 0, TCGETS), SECCOMP_RET_ALLOW);
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_personality, 0, 0), SECCOMP_RET_ALLOW);
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_personality, 0x0040000, 0), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_personality, HIGH, 0), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_clone, CLONE_NEWUSER | 17, 0), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_clone, HIGH | CLONE_NEWUSER, 0), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_clone, CLONE_VM | CLONE_THREAD, 0), SECCOMP_RET_ALLOW);
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS, 0), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_unshare, CLONE_NEWNS, 0), SECCOMP_RET_ALLOW);
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_clone3, 0, 0), ERRNO(ENOSYS));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_open_tree, 0, 0), ERRNO(ENOSYS));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_mount, 0, 0), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_getpid, 0, 0), SECCOMP_RET_ALLOW);
	release(&f);
}

static void test_foreign_abis_killed(void)
{
	filter f = compile(net_none);
	/* i386 through int 0x80: socketcall (102) and anything else */
	CU_ASSERT_EQUAL(call(&f, AUDIT_ARCH_I386, 102, 1, 0), SECCOMP_RET_KILL_PROCESS);
	CU_ASSERT_EQUAL(call(&f, AUDIT_ARCH_I386, 20, 0, 0), SECCOMP_RET_KILL_PROCESS);
	CU_ASSERT_EQUAL(call(&f, AUDIT_ARCH_AARCH64, SYS_getpid, 0, 0), SECCOMP_RET_KILL_PROCESS);
	/* x32: native arch token, syscall number with bit 30 */
	uint32_t r = call(&f, X86_64, 0x40000000 | SYS_socket, AF_INET, SOCK_STREAM);
	CU_ASSERT(r != SECCOMP_RET_ALLOW);
	CU_ASSERT_EQUAL(r & SECCOMP_RET_ACTION_FULL, SECCOMP_RET_KILL_PROCESS);
	release(&f);
}

/* Unix sockets: SOCK_STREAM and SOCK_SEQPACKET only, in every mode (a datagram reaches any
 * socket file by sendto(); SOCK_RAW is a datagram socket too), the flag bits ignored. */
static void unix_types(filter *f, int family_call, uint32_t stream)
{
	CU_ASSERT_EQUAL(call(f, X86_64, family_call, AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK), stream);
	CU_ASSERT_EQUAL(call(f, X86_64, family_call, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC), stream);
	for (int t = 0; t < 16; t++)
		if (t != SOCK_STREAM && t != SOCK_SEQPACKET) {
			CU_ASSERT_EQUAL(call(f, X86_64, family_call, AF_UNIX, t), ERRNO(EPERM));
			CU_ASSERT_EQUAL(call(f, X86_64, family_call, AF_UNIX, t | SOCK_NONBLOCK | SOCK_CLOEXEC),
					ERRNO(EPERM));
			CU_ASSERT_EQUAL(call(f, X86_64, family_call, AF_UNIX, (uint64_t)t | HIGH), ERRNO(EPERM));
		}
}

static void test_network_off(void)
{
	/* mode none: inet sockets on the sandbox's own loopback; no unix socket but socketpair,
	 * so connect() and bind() reach nothing of the host's */
	filter f = compile(net_none);
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_socket, AF_INET, SOCK_STREAM), SECCOMP_RET_ALLOW);
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_socket, AF_INET6, SOCK_DGRAM), SECCOMP_RET_ALLOW);
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_socket, AF_INET | HIGH, SOCK_STREAM), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_socket, AF_UNSPEC, SOCK_STREAM), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_socket, AF_NETLINK, SOCK_RAW), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_socket, AF_PACKET, SOCK_RAW), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_socket, AF_VSOCK, SOCK_STREAM), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_socket, AF_UNIX | HIGH, SOCK_STREAM), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_socket, AF_UNIX, SOCK_STREAM), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_socket, AF_UNIX, SOCK_SEQPACKET), ERRNO(EPERM));
	for (int fam = AF_INET + 1; fam < AF_INET6; fam++)
		CU_ASSERT_EQUAL(call(&f, X86_64, SYS_socket, fam, SOCK_STREAM), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_socket, AF_INET6 + 1, SOCK_STREAM), ERRNO(EPERM));
	unix_types(&f, SYS_socketpair, SECCOMP_RET_ALLOW);
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_socketpair, AF_INET, SOCK_STREAM), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_connect, 3, 0), SECCOMP_RET_ALLOW);
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_bind, 3, 0), SECCOMP_RET_ALLOW);
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_io_uring_setup, 8, 0), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_recvfrom, 3, 0), SECCOMP_RET_ALLOW);
	release(&f);

	filter full = compile("zsp 1; policy \"p\" { fs { read \"/\"; } net { mode full; } }");
	CU_ASSERT_EQUAL(call(&full, X86_64, SYS_socket, AF_INET, SOCK_STREAM), SECCOMP_RET_ALLOW);
	/* AF_VSOCK reaches a VM's host (WSL2: Windows) in every mode */
	CU_ASSERT_EQUAL(call(&full, X86_64, SYS_socket, AF_VSOCK, SOCK_STREAM), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&full, X86_64, SYS_socket, AF_VSOCK | HIGH, SOCK_STREAM), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&full, X86_64, SYS_connect, 3, 0), SECCOMP_RET_ALLOW);
	CU_ASSERT_EQUAL(call(&full, X86_64, SYS_ioctl, 0, TIOCSTI | HIGH), ERRNO(EPERM));
	unix_types(&full, SYS_socket, SECCOMP_RET_ALLOW);
	unix_types(&full, SYS_socketpair, SECCOMP_RET_ALLOW);
	release(&full);

	filter ux = compile("zsp 1; policy \"p\" { fs { read \"/\"; } net { allow unix \"/run/x.sock\"; } }");
	CU_ASSERT_EQUAL(call(&ux, X86_64, SYS_connect, 3, 0), SECCOMP_RET_ALLOW);
	CU_ASSERT_EQUAL(call(&ux, X86_64, SYS_socket, AF_INET, SOCK_STREAM), SECCOMP_RET_ALLOW);
	CU_ASSERT_EQUAL(call(&ux, X86_64, SYS_socket, AF_NETLINK, SOCK_RAW), ERRNO(EPERM));
	unix_types(&ux, SYS_socket, SECCOMP_RET_ALLOW);
	release(&ux);
}

static void test_policy_rules(void)
{
	filter f = compile("zsp 1; policy \"p\" { fs { read \"/\"; } process {"
			   " syscalls deny \"uname\" errno EACCES; syscalls deny \"mknod\" kill;"
			   " syscalls allow \"ptrace\"; syscalls deny \"ioctl\"; } }");
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_uname, 0, 0), ERRNO(EACCES));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_mknod, 0, 0), SECCOMP_RET_KILL_PROCESS);
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_ptrace, 0, 0), SECCOMP_RET_ALLOW);
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_ioctl, 0, TCGETS), ERRNO(EPERM));
	CU_ASSERT_EQUAL(call(&f, X86_64, SYS_bpf, 0, 0), ERRNO(EPERM));
	release(&f);
}

int main(void)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	CU_pSuite s = CU_add_suite("bpf", NULL, NULL);
	CU_add_test(s, "argument rules compare the low 32 bits", test_argument_rules_low32);
	CU_add_test(s, "i386, x32 and other ABIs are killed", test_foreign_abis_killed);
	CU_add_test(s, "network off", test_network_off);
	CU_add_test(s, "the policy's own syscall rules", test_policy_rules);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	unsigned failures = CU_get_number_of_failures() + CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failures ? 1 : 0;
}
