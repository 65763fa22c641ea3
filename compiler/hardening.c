/* hardening.c: the built-in syscall denials. Argument-level rules (personality, ioctl
 * TIOCSTI, clone with CLONE_NEWUSER, socket families) live in the seccomp backend; this table
 * lists the calls refused outright, which is what the oracle can answer by name. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "compiler/hardening.h"

#define P(name, why) { name, EPERM, why }
#define N(name, why) { name, ENOSYS, why }

const zsp_hardening_call zsp_hardening[] = {
	P("kexec_load", "replaces the kernel"), P("kexec_file_load", "replaces the kernel"),
	P("init_module", "loads kernel code"), P("finit_module", "loads kernel code"),
	P("delete_module", "unloads kernel code"), P("reboot", "reboots the machine"),
	P("add_key", "kernel keyring"), P("keyctl", "kernel keyring"), P("request_key", "kernel keyring"),
	P("bpf", "loads kernel programs"), P("perf_event_open", "kernel profiling, side channels"),
	P("userfaultfd", "kernel exploitation primitive"), P("mount", "changes the mount table"),
	P("umount2", "changes the mount table"), P("pivot_root", "changes the root"),
	P("chroot", "changes the root"), P("setns", "enters other namespaces"),
	P("ptrace", "reads and writes other processes"),
	P("process_vm_readv", "reads other processes' memory"),
	P("process_vm_writev", "writes other processes' memory"), P("kcmp", "compares kernel objects"),
	P("pidfd_getfd", "steals file descriptors"), P("modify_ldt", "x86 segment tricks"),
	P("iopl", "raw I/O ports"), P("ioperm", "raw I/O ports"), P("settimeofday", "sets the clock"),
	P("clock_settime", "sets the clock"), P("clock_adjtime", "sets the clock"),
	P("adjtimex", "sets the clock"), P("sethostname", "renames the host"),
	P("setdomainname", "renames the domain"), P("syslog", "reads the kernel log"),
	P("acct", "process accounting"), P("quotactl", "disk quotas"), P("swapon", "swap"),
	P("swapoff", "swap"), P("open_by_handle_at", "bypasses path permissions (shocker)"),
	P("name_to_handle_at", "file handles"), P("fanotify_init", "watches the whole file system"),
	P("lookup_dcookie", "kernel profiling"), P("vhangup", "hangs up the terminal"),
	P("nfsservctl", "NFS server control"), P("uselib", "obsolete library loading"),
	P("_sysctl", "kernel parameters"), P("move_pages", "NUMA memory of other processes"),
	P("migrate_pages", "NUMA memory of other processes"), P("mbind", "NUMA policy"),
	P("set_mempolicy", "NUMA policy"),
	P("io_uring_setup", "bypasses socket and file filters"),
	P("io_uring_enter", "bypasses socket and file filters"),
	P("io_uring_register", "bypasses socket and file filters"),
	N("clone3", "flags behind a pointer: the filter cannot see CLONE_NEWUSER"),
	N("open_tree", "new mount API"), N("move_mount", "new mount API"), N("fsopen", "new mount API"),
	N("fsconfig", "new mount API"), N("fsmount", "new mount API"), N("fspick", "new mount API"),
	N("mount_setattr", "new mount API"),
};

const size_t zsp_hardening_count = sizeof(zsp_hardening) / sizeof(zsp_hardening[0]);

const zsp_hardening_call *zsp_hardening_find(const char *name)
{
	for (size_t i = 0; i < zsp_hardening_count; i++)
		if (strcmp(zsp_hardening[i].name, name) == 0)
			return &zsp_hardening[i];
	return NULL;
}
