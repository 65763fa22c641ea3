/* test_builtin.c: CUnit tests for compiler/builtin.c (the rm rules no policy can lift).
 * One table: a command and the rule it must hit, or NULL for no hit; each row is one assertion. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "compiler/builtin.h"
#include "compiler/files.h"
#include "compiler/zsp.h"

static zsp_arena *arena;

static int setup(void)
{
	arena = zsp_arena_new();
	return arena ? 0 : 1;
}

static int teardown(void)
{
	zsp_arena_free(arena);
	return 0;
}

#define NO_HIT NULL

/* the machine of the tests: home /home/u, workspace /w/ws */
static const zsp_builtin_env where = { .home = "/home/u", .cwd = "/w/ws" };

static const struct {
	const char *cmd;
	const char *rule;
} table[] = {
	/* doc/facts.md §zed, rules 1-5: Zed's five regexes */
	{ "rm -rf /", "rm-root" },
	{ "rm -rfv /", "rm-root" },
	{ "rm -rf /*", "rm-root" },
	{ "rm / -rf", "rm-root" },
	{ "rm -v / -rf", "rm-root" },
	{ "rm -rf ~", "rm-home" },
	{ "rm -rf ~/", "rm-home" },
	{ "rm -rf ~/*", "rm-home" },
	{ "rm ~ -rf", "rm-home" },
	{ "rm -rf $HOME", "rm-home" },
	{ "rm -rf ${HOME}", "rm-home" },
	{ "rm -rf \"$HOME\"", "rm-home" },
	{ "rm -rf $HOME/", "rm-home" },
	{ "rm -rf ${HOME}/*", "rm-home" },
	{ "rm $HOME -rf", "rm-home" },
	{ "rm -rf .", "rm-cwd" },
	{ "rm -rf ./", "rm-cwd" },
	{ "rm -rf ./*", "rm-cwd" },
	{ "rm . -rf", "rm-cwd" },
	{ "rm -rf ..", "rm-parent" },
	{ "rm -rf ../", "rm-parent" },
	{ "rm -rf ../*", "rm-parent" },
	{ "rm .. -rf", "rm-parent" },
	{ "rm -rf -- /", "rm-root" },
	{ "rm --recursive --force /", "rm-root" },
	{ "rm --no-preserve-root -rf /", "rm-root" },
	{ "rm -rf --preserve-root=all /", "rm-root" },
	{ "rm / --no-preserve-root --recursive", "rm-root" },
	{ "RM -RF /", "rm-root" },
	{ "Rm -Rf ~", "rm-home" },
	{ "rm -rf $home", "rm-home" },
	{ "rm /", "rm-root" },
	{ "rm -i .", "rm-cwd" },
	/* traversal and spellings */
	{ "rm -rf /tmp/../..", "rm-root" },
	{ "rm -rf //", "rm-root" },
	{ "rm -rf ///", "rm-root" },
	{ "rm -rf /./", "rm-root" },
	{ "rm -rf /.", "rm-root" },
	{ "rm -rf /..", "rm-root" },
	{ "rm -rf /home/..", "rm-root" },
	{ "rm -rf /*/*", "rm-root" },
	{ "rm -rf '/'", "rm-root" },
	{ "rm -rf \\/", "rm-root" },
	{ "rm -rf ./foo/..", "rm-cwd" },
	{ "rm -rf foo/..", "rm-cwd" },
	{ "rm -rf *", "rm-cwd" },
	{ "rm -rf $PWD", "rm-cwd" },
	{ "rm -rf ${PWD}/", "rm-cwd" },
	{ "rm -rf ~+", "rm-cwd" },
	{ "rm -rf ~/..", "rm-parent" },
	{ "rm -rf ~/../..", "rm-parent" },
	{ "rm -rf $HOME/..", "rm-parent" },
	{ "rm -rf ${HOME}/../..", "rm-parent" },
	{ "rm -rf ../..", "rm-parent" },
	{ "rm -rf ../../*", "rm-parent" },
	{ "rm -rf ./../", "rm-parent" },
	{ "rm -rf ~root", "rm-home" },
	{ "rm -rf ~/./", "rm-home" },
	{ "rm -rf ~/x/..", "rm-home" },
	/* brace expansion */
	{ "rm -rf {/tmp/x,/}", "rm-root" },
	{ "rm -rf /tmp/x{,/../..}", "rm-root" },
	{ "rm -rf {a,{b,~}}", "rm-home" },
	{ "rm -rf /tmp/{a,b}", NO_HIT },
	/* several operands; -- makes everything an operand */
	{ "rm -rf /tmp/x /", "rm-root" },
	{ "rm -rf /tmp/x ~ /tmp/y", "rm-home" },
	{ "rm -rf build dist .", "rm-cwd" },
	{ "rm -- -rf /", "rm-root" },
	{ "rm -rf -- -x ..", "rm-parent" },
	/* lists, pipelines, subshells, substitutions */
	{ "ls && rm -rf /", "rm-root" },
	{ "a; rm -rf ~", "rm-home" },
	{ "make || rm -rf .", "rm-cwd" },
	{ "cat x | rm -rf /", "rm-root" },
	{ "(cd /tmp && rm -rf ..)", "rm-parent" },
	{ "{ rm -rf ~; }", "rm-home" },
	{ "if true; then rm -rf /; fi", "rm-root" },
	{ "echo $(rm -rf /)", "rm-root" },
	{ "echo `rm -rf ~`", "rm-home" },
	{ "x=$(rm -rf /tmp/../..)", "rm-root" },
	{ "FOO=1 rm -rf /", "rm-root" },
	{ "/bin/rm -rf /", "rm-root" },
	{ "/usr/bin/rm -rf ~", "rm-home" },
	{ "\\rm -rf /", "rm-root" },
	{ "'rm' -rf '/'", "rm-root" },
	{ "rm -rf / > /tmp/log 2>&1", "rm-root" },
	/* wrappers */
	{ "sudo rm -rf /", "rm-root" },
	{ "sudo rm -rf /tmp/../..", "rm-root" },
	{ "sudo -u root rm -rf /", "rm-root" },
	{ "sudo -uroot -E rm -rf /", "rm-root" },
	{ "sudo --user=root rm -rf ~", "rm-home" },
	{ "sudo --user root rm -rf ~", "rm-home" },
	{ "sudo -g wheel -C 3 -D /tmp -h host -p pw -r role -t type -U u -T 9 rm -rf /", "rm-root" },
	{ "sudo -- rm -rf /", "rm-root" },
	{ "sudo FOO=1 rm -rf /", "rm-root" },
	{ "sudo sudo -n rm -rf /", "rm-root" },
	{ "doas rm -rf /", "rm-root" },
	{ "doas -u root -n rm -rf /", "rm-root" },
	{ "doas -s", NO_HIT },
	{ "env rm -rf /", "rm-root" },
	{ "env -i PATH=/bin rm -rf /", "rm-root" },
	{ "env -u HOME rm -rf ~", "rm-home" },
	{ "env -C /tmp rm -rf ..", "rm-parent" },
	{ "env - rm -rf /", "rm-root" },
	{ "env -S 'rm -rf /'", "rm-root" },
	{ "env -S 'rm -rf' /", "rm-root" },
	{ "env --split-string='rm -rf ~'", "rm-home" },
	{ "nice rm -rf /", "rm-root" },
	{ "nice -n 10 rm -rf /", "rm-root" },
	{ "nice -10 rm -rf /", "rm-root" },
	{ "nice --adjustment=5 rm -rf /", "rm-root" },
	{ "nohup rm -rf / &", "rm-root" },
	{ "timeout 10 rm -rf /", "rm-root" },
	{ "timeout -s KILL -k 5 10s rm -rf /", "rm-root" },
	{ "timeout --signal=TERM --preserve-status 1m rm -rf ~", "rm-home" },
	{ "time rm -rf /", "rm-root" },
	{ "time -p rm -rf /", "rm-root" },
	{ "command rm -rf /", "rm-root" },
	{ "command -p rm -rf /", "rm-root" },
	{ "command -v rm", NO_HIT },
	{ "exec rm -rf /", "rm-root" },
	{ "exec -a name -c -l rm -rf /", "rm-root" },
	{ "xargs rm -rf /", "rm-root" },
	{ "find /tmp -name x | xargs rm -rf ~", "rm-home" },
	{ "xargs -0 -n 1 -P 4 -I {} -L 1 -s 100 -d , -E end -a f rm -rf /", "rm-unknown" },
	{ "xargs -0 -n 1 -P 4 -I {} -L 1 -s 100 -d , -E end -a f rm -f /", "rm-root" },
	{ "xargs -i rm -rf .", "rm-cwd" },
	{ "xargs -I{} rm -rf {}", "rm-unknown" },
	{ "xargs -I{} rm -f {}", NO_HIT },
	{ "stdbuf -oL rm -rf /", "rm-root" },
	{ "stdbuf -i 0 -e 0 --output=L rm -rf /", "rm-root" },
	{ "ionice -c 3 -n 7 rm -rf /", "rm-root" },
	{ "ionice -c3 -t rm -rf ~", "rm-home" },
	{ "chroot /mnt rm -rf /", "rm-root" },
	{ "chroot --userspec=a:b /mnt rm -rf /", "rm-root" },
	{ "busybox rm -rf /", "rm-root" },
	{ "nocorrect rm -rf ~", "rm-home" },
	{ "builtin rm -rf /", "rm-root" },
	{ "setsid -f rm -rf /", "rm-root" },
	{ "sudo env -i nice -n 5 timeout 9 nohup stdbuf -o0 rm -rf /", "rm-root" },
	{ "eval rm -rf /", "rm-root" },
	{ "eval 'rm -rf ~'", "rm-home" },
	{ "su -c 'rm -rf /'", "rm-root" },
	{ "su root -c 'rm -rf /'", "rm-root" },
	{ "runuser -u nobody -- rm -rf /", "rm-root" },
	{ "watch -n 1 rm -rf /", "rm-root" },
	{ "flock /tmp/lock rm -rf /", "rm-root" },
	{ "flock /tmp/lock -c 'rm -rf ~'", "rm-home" },
	/* shells */
	{ "sh -c 'rm -rf /'", "rm-root" },
	{ "bash -c 'rm -rf ~'", "rm-home" },
	{ "dash -c 'rm -rf .'", "rm-cwd" },
	{ "zsh -c 'rm -rf ..'", "rm-parent" },
	{ "ksh -c 'rm -rf /'", "rm-root" },
	{ "ash -c 'rm -rf /'", "rm-root" },
	{ "/bin/sh -c 'rm -rf /'", "rm-root" },
	{ "bash -lc \"cd /tmp && rm -rf ..\"", "rm-parent" },
	{ "bash -ec 'rm -rf /'", "rm-root" },
	{ "bash -xc 'rm -rf /'", "rm-root" },
	{ "bash -o pipefail -c 'rm -rf /'", "rm-root" },
	{ "bash -c -- 'rm -rf /'", "rm-root" },
	{ "sh -c \"sh -c 'rm -rf /'\"", "rm-root" },
	{ "sudo bash -c 'rm -rf /'", "rm-root" },
	{ "busybox sh -c 'rm -rf /'", "rm-root" },
	{ "sh -c 'rm -rf \"$1\"' _ /", "rm-root" },
	{ "sh -c 'rm -rf $0' /", "rm-root" },
	{ "bash -c 'rm -rf \"$@\"' _ /tmp/x ~", "rm-home" },
	{ "sh -c '\"$@\"' _ rm -rf /", "rm-root" },
	{ "sh -c 'rm -rf $1/' _", "rm-root" },
	{ "sh -c 'rm -rf \"$1\"' _ /tmp/x", NO_HIT },
	{ "sh -c 'echo hi'", NO_HIT },
	{ "echo 'rm -rf /' | sh", "rm-root" },
	{ "echo rm -rf ~ | sudo bash -s", "rm-home" },
	{ "printf 'cd /tmp\\nrm -rf ..\\n' | bash", "rm-parent" },
	{ "echo 'rm -rf /' | cat", NO_HIT },
	{ "echo hi | sh", NO_HIT },
	{ "bash <<< 'rm -rf /'", "rm-root" },
	{ "sh <<EOF\nrm -rf ~\nEOF", "rm-home" },
	{ "cat <<EOF\nrm -rf ~\nEOF", NO_HIT },
	{ "bash script.sh /", NO_HIT },
	{ "eval eval eval eval eval eval eval eval rm -rf /", "rm-root" },
	{ "eval eval eval eval eval eval eval eval eval rm -rf /tmp/x", "nested-shell" },
	/* find */
	{ "find / -delete", "find-delete-root" },
	{ "find ~ -delete", "find-delete-root" },
	{ "find $HOME -type f -delete", "find-delete-root" },
	{ "find . -delete", "find-delete-root" },
	{ "find .. -mindepth 1 -delete", "find-delete-root" },
	{ "find -delete", "find-delete-root" },
	{ "find -L / -exec rm -rf {} +", "find-delete-root" },
	{ "find . -execdir rm -rf {} \\;", "find-delete-root" },
	{ "find / -ok rm {} ';'", "find-delete-root" },
	{ "find / -exec sudo /bin/rm -f {} +", "find-delete-root" },
	{ "find . -exec sh -c 'rm -rf \"$1\"' _ {} \\;", "find-delete-root" },
	{ "find /tmp/x . -name '*' -delete", "find-delete-root" },
	{ "find . -name x -o -delete", "find-delete-root" },
	{ "find . ! -name keep -delete", "find-delete-root" },
	{ "find /tmp -exec rm -rf / \\;", "rm-root" },
	{ "find . -name '*.pyc' -delete", NO_HIT },
	{ "find . -type d -name __pycache__ -exec rm -rf {} +", NO_HIT },
	{ "find /tmp/build -delete", NO_HIT },
	{ "find / -name passwd", NO_HIT },
	{ "find . -exec grep -l rm {} +", NO_HIT },
	{ "find . -empty -delete", NO_HIT },
	/* globs stand for what they can match: a component of wildcards only is every entry */
	{ "rm -rf /?*", "rm-root" },
	{ "rm -rf /[!.]*", "rm-root" },
	{ "rm -rf /[^.]*", "rm-root" },
	{ "rm -rf /.*", "rm-root" },
	{ "rm -rf /.?*", "rm-root" },
	{ "rm -rf /*?", "rm-root" },
	{ "rm -rf /[a-z]*", "rm-root" },
	{ "rm -rf /!(x)", "rm-root" },
	{ "rm -rf /*/..", "rm-root" },
	{ "rm -rf ~/?*", "rm-home" },
	{ "rm -rf ~/.*", "rm-home" },
	{ "rm -rf ./?*", "rm-cwd" },
	{ "rm -rf .*", "rm-cwd" },
	{ "rm -rf ../?*", "rm-parent" },
	{ "rm -rf /h?me/u", "rm-home" },
	{ "rm -rf /home/*", "rm-parent" },
	{ "rm -rf /*/u", "rm-home" },
	{ "rm -rf *.o", NO_HIT },
	{ "rm -rf /tmp/?*", NO_HIT },
	{ "rm -rf ~/.cache/*", NO_HIT },
	{ "rm -rf /b*", NO_HIT },
	/* braces, without expanding past the budget */
	{ "{rm,-rf,/}", "rm-root" },
	{ "{rm,-rf,~}", "rm-home" },
	{ "sudo {rm,-rf,/}", "rm-root" },
	{ "{sudo,rm,-rf,/}", "rm-root" },
	{ "{FOO=1,rm,-rf,/}", "rm-root" },
	{ "r{m,} -rf /", "rm-root" },
	{ "rm -rf {x,}/", "rm-root" },
	{ "rm -rf {x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{,}{,}{,}{/,/}", NO_HIT },
	{ "rm -rf {x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}{x,y}/",
	  "rm-unchecked" },
	{ "rm -rf {x,}{x,}{x,}{x,}{x,}{x,}{x,}{x,}{x,}{x,}{x,}{x,}/", "rm-root" },
	{ "rm -rf /tmp{/..,/x}", "rm-root" },
	{ "rm -rf /usr{/..,}", "rm-root" },
	{ "rm -rf /{-../}", "rm-root" },
	{ "rm -rf {-..0}", "rm-cwd" },
	{ "rm -rf /tmp/x{1..3}", NO_HIT },
	{ "{echo,rm,-rf,/}", NO_HIT },
	{ "echo {rm,-rf,/}", NO_HIT },
	/* assignment forms before the command */
	{ "FOO+=1 rm -rf /", "rm-root" },
	{ "a[0]=x rm -rf /", "rm-root" },
	{ "a[0]+=x b=1 rm -rf ~", "rm-home" },
	{ "coproc rm -rf /", "rm-root" },
	{ "coproc sudo rm -rf ~", "rm-home" },
	/* the machine's own paths: home /home/u, the workspace /w/ws */
	{ "rm -rf /home/u", "rm-home" },
	{ "rm -rf /home/u/", "rm-home" },
	{ "rm -rf /home/./u/x/..", "rm-home" },
	{ "rm -rf /home/u/*", "rm-home" },
	{ "rm -rf /home", "rm-parent" },
	{ "rm -rf /w/ws", "rm-cwd" },
	{ "rm -rf /w", "rm-parent" },
	{ "rm -rf ../ws", "rm-cwd" },
	{ "rm -rf ../../w", "rm-parent" },
	{ "rm -rf ../../home/u", "rm-home" },
	{ "rm -rf ~/../u", "rm-home" },
	{ "rm -rf /home/u/src", NO_HIT },
	{ "rm -rf /w/ws/build", NO_HIT },
	{ "rm -rf ../other", NO_HIT },
	{ "rm -rf /home/uu", NO_HIT },
	/* /proc/PID/root and /proc/PID/cwd lead elsewhere */
	{ "rm -rf /proc/self/root/*", "rm-root" },
	{ "rm -rf /proc/self/root", "rm-root" },
	{ "rm -rf /proc/1/root/", "rm-root" },
	{ "rm -rf /proc/*/root/*", "rm-root" },
	{ "rm -rf /proc/self/root/home/u", "rm-home" },
	{ "rm -rf /proc/self/cwd", "rm-cwd" },
	{ "rm -rf /proc/self/cwd/..", "rm-parent" },
	{ "rm -rf /proc/thread-self/cwd/*", "rm-cwd" },
	{ "rm -rf /proc/self/root/tmp/x", NO_HIT },
	{ "rm -rf /proc/self/fd/3", NO_HIT },
	/* xargs feeds a recursive rm words the text does not hold */
	{ "echo / | xargs rm -rf", "rm-unknown" },
	{ "pwd | xargs rm -rf", "rm-unknown" },
	{ "pwd | xargs -0 rm -r", "rm-unknown" },
	{ "echo / | xargs -I% rm -fR %", "rm-unknown" },
	{ "echo / | xargs sudo rm --recursive", "rm-unknown" },
	{ "echo / | xargs rm -f", NO_HIT },
	{ "ls | xargs rm", NO_HIT },
	{ "xargs echo rm -rf", NO_HIT },
	/* positional parameters: the text runs as sh -c COMMAND, with none */
	{ "rm -rf \"$1\"/", "rm-root" },
	{ "rm -rf ${1}/", "rm-root" },
	{ "set -- /; rm -rf \"$1\"", "rm-root" },
	{ "set / ; rm -rf \"$1\"", "rm-root" },
	{ "set -e -- ~; rm -rf \"$@\"", "rm-home" },
	{ "sh -c 'set -- /; rm -rf \"$1\"'", "rm-root" },
	{ "bash -c 'set -- x \"$1\"; rm -rf \"$2\"' _ /", "rm-root" },
	{ "set -- /tmp/x; rm -rf \"$1\"", NO_HIT },
	{ "set -e; rm -rf \"$1\"", NO_HIT },
	/* relative paths after cd: against every directory the command may be in */
	{ "cd /home && rm -rf u", "rm-home" },
	{ "cd ~ && rm -rf ../u", "rm-home" },
	{ "cd / ; rm -rf home", "rm-parent" },
	{ "cd /w/ws/src && rm -rf ../../ws", "rm-cwd" },
	{ "(cd /tmp); rm -rf ../ws", "rm-cwd" },
	{ "cd /tmp && cd x && rm -rf ../../w", "rm-parent" },
	{ "cd $D && rm -rf ../ws", "rm-cwd" },
	{ "cd /tmp && rm -rf build", NO_HIT },
	{ "cd /tmp && rm -rf /tmp/x", NO_HIT },
	/* a function's positional parameters are any word its calls may pass */
	{ "f() { rm -rf \"$1\"; }; f /", "rm-root" },
	{ "function f { rm -rf $1/; }; f", "rm-root" },
	{ "f() { rm -rf \"$@\"; }; f /tmp/x ~", "rm-home" },
	{ "f() { rm -rf \"$1\"; }; f /tmp/x", NO_HIT },
	{ "parallel rm -rf ::: /", "rm-unknown" },
	{ "parallel -j 4 rm -f ::: /", "rm-root" },
	/* variables the text sets */
	{ "X=/; rm -rf $X", "rm-root" },
	{ "X=/tmp; rm -rf \"${X}\"/..", "rm-root" },
	{ "export D=~; rm -rf $D", "rm-home" },
	{ "local -r D=/home/u; rm -rf $D", "rm-home" },
	{ "X=/; X+=tmp; rm -rf $X", NO_HIT },
	{ "X=/; X=/tmp; rm -rf $X", NO_HIT },
	{ "X=/; X=$(pwd); rm -rf $X/x", NO_HIT },
	{ "X=/tmp; rm -rf $X", NO_HIT },
	{ "X=/ rm -rf $X", NO_HIT },
	{ "X=/; sh -c 'rm -rf $1' _ $X", "rm-root" },
	/* shells reading their script from stdin */
	{ "bash /dev/stdin <<< 'rm -rf /'", "rm-root" },
	{ "sh /dev/fd/0 <<< 'rm -rf ~'", "rm-home" },
	{ "sh -s <<< 'rm -rf /'", "rm-root" },
	{ "sh -s x y <<< 'rm -rf /'", "rm-root" },
	{ "echo 'rm -rf /' | bash -", "rm-root" },
	{ "echo 'rm -rf /' | su", "rm-root" },
	{ "echo 'rm -rf /' | su - root", "rm-root" },
	{ "echo 'rm -rf /' | sudo -s", "rm-root" },
	{ "echo 'rm -rf /' | sudo -i", "rm-root" },
	{ "echo 'rm -rf /' | sudo su", "rm-root" },
	{ "echo 'rm -rf /' | doas -s", "rm-root" },
	{ "echo 'rm -rf /' | sg root", "rm-root" },
	{ "echo 'rm -rf /' | script -q", "rm-root" },
	{ "echo 'rm -rf /' | chroot /", "rm-root" },
	{ "echo 'rm -rf /' | source /dev/stdin", "rm-root" },
	{ "source <(echo 'rm -rf /')", "rm-root" },
	{ "bash <(echo 'rm -rf ~')", "rm-home" },
	{ "printf 'rm -rf \\x2f' | sh", "rm-root" },
	{ "printf 'rm -rf \\057' | sh", "rm-root" },
	{ "printf 'rm -rf \\0176' | sh", "rm-home" },
	{ "echo -e 'rm -rf \\x7e' | sh", "rm-home" },
	{ "sh <<EOF\nrm -rf \\\n/\nEOF", "rm-root" },
	{ "bash <<'EOF'\ncd /tmp\nrm -rf ..\nEOF", "rm-parent" },
	{ "echo 'rm -rf /' | sudo -u nobody cat", NO_HIT },
	{ "echo 'rm -rf /' | script -qc true", NO_HIT },
	{ "echo 'rm -rf /' | su -c true", NO_HIT },
	/* traps and aliases run their text later */
	{ "trap 'rm -rf /' EXIT", "rm-root" },
	{ "trap -- 'rm -rf ~' INT TERM", "rm-home" },
	{ "alias ll='rm -rf /'; ll", "rm-root" },
	{ "trap -p", NO_HIT },
	{ "alias ll='ls -l'", NO_HIT },
	/* wrappers from the table */
	{ "strace -f rm -rf /", "rm-root" },
	{ "strace -f -o /tmp/log -e trace=file rm -rf /", "rm-root" },
	{ "strace --output /tmp/log rm -rf ~", "rm-home" },
	{ "strace -p 1", NO_HIT },
	{ "ltrace -o x rm -rf /", "rm-root" },
	{ "valgrind --tool=memcheck rm -rf /", "rm-root" },
	{ "nsenter -t 1 -m -u -i -n -p rm -rf /", "rm-root" },
	{ "nsenter --target 1 --mount rm -rf /", "rm-root" },
	{ "unshare -r rm -rf /", "rm-root" },
	{ "unshare -m -R /mnt -w / rm -rf ~", "rm-home" },
	{ "chrt 1 rm -rf /", "rm-root" },
	{ "chrt -f 99 rm -rf /", "rm-root" },
	{ "chrt -p 1234", NO_HIT },
	{ "toybox rm -rf /", "rm-root" },
	{ "coreutils --coreutils-prog=rm -rf /", "rm-root" },
	{ "coreutils --coreutils-prog rm -rf ~", "rm-home" },
	{ "coreutils --coreutils-prog=ls -la /", NO_HIT },
	{ "sg root -c 'rm -rf /'", "rm-root" },
	{ "sg - root 'rm -rf ~'", "rm-home" },
	{ "script -qc 'rm -rf /'", "rm-root" },
	{ "script -q -c 'rm -rf /' /dev/null", "rm-root" },
	{ "script --command='rm -rf ~' log", "rm-home" },
	{ "csh -c 'rm -rf /'", "rm-root" },
	{ "tcsh -c 'rm -rf /'", "rm-root" },
	{ "fish -c 'rm -rf ~'", "rm-home" },
	{ "watch -q 3 'rm -rf /'", "rm-root" },
	{ "watch -n 1 -d 'rm -rf ~'", "rm-home" },
	{ "flock -w 5 /tmp/l rm -rf /", "rm-root" },
	{ "ionice -c2 -n0 taskset -c 0 rm -rf /", "rm-root" },
	{ "taskset 0x1 rm -rf /", "rm-root" },
	{ "systemd-run --user --scope rm -rf ~", "rm-home" },
	{ "systemd-run -p Nice=5 -t rm -rf /", "rm-root" },
	{ "setarch x86_64 -R rm -rf /", "rm-root" },
	{ "eatmydata rm -rf /", "rm-root" },
	{ "faketime '2020-01-01' rm -rf /", "rm-root" },
	{ "numactl --interleave=all rm -rf /", "rm-root" },
	{ "capsh --caps=x -- -c 'rm -rf /'", "rm-root" },
	{ "setpriv --reuid=0 rm -rf /", "rm-root" },
	{ "firejail --noprofile rm -rf ~", "rm-home" },
	{ "strace --never-heard-of-it x rm -rf /", "rm-root" },
	{ "unshare --frob y --blah z rm -rf /", "rm-root" },
	{ "strace -f ls /", NO_HIT },
	/* find evaluates its expression in order */
	{ "find / -delete -name x", "find-delete-root" },
	{ "find . -exec rm -rf {} + -name x", "find-delete-root" },
	{ "find / -name '?*' -delete", "find-delete-root" },
	{ "find ~ -name '[!.]*' -delete", "find-delete-root" },
	{ "find . -path '*' -delete", "find-delete-root" },
	{ "find / -regex '.+' -delete", "find-delete-root" },
	{ "find /home/u -delete", "find-delete-root" },
	{ "find . -name x -delete", NO_HIT },
	{ "find . -name '.*' -delete", NO_HIT },
	/* negatives */
	{ "rm -rf /tmp/x", NO_HIT },
	{ "rm -rf ./build", NO_HIT },
	{ "rm -rf build/", NO_HIT },
	{ "rm -rf ../sibling", NO_HIT },
	{ "rm -rf ~/.cache/x", NO_HIT },
	{ "rm -rf $HOME/.cache", NO_HIT },
	{ "rm -rf dist/*", NO_HIT },
	{ "rm file.txt", NO_HIT },
	{ "rm -f -- -", NO_HIT },
	{ "rm", NO_HIT },
	{ "rm -rf", NO_HIT },
	{ "storm -rf /", NO_HIT },
	{ "echo rm -rf /", NO_HIT },
	{ "printf '%s\\n' 'rm -rf /'", NO_HIT },
	{ "git rm -r --cached .", NO_HIT },
	{ "rm -rf \"$DIR\"", NO_HIT },
	{ "rm -rf \"$DIR\"/..", NO_HIT },
	{ "rm -rf ${DIR}/*", NO_HIT },
	{ "rm -rf $HOMER", NO_HIT },
	{ "rm -rf ~-", NO_HIT },
	{ "grep -r rm /", NO_HIT },
	{ "ls /", NO_HIT },
	{ "cd / && ls", NO_HIT },
	{ "rmdir /tmp/x", NO_HIT },
	{ "sudo -e /etc/hosts", NO_HIT },
	{ "xargs echo rm -rf /", NO_HIT },
	{ "npm run build", NO_HIT },
	{ "git commit -m 'rm -rf / is bad'", NO_HIT },
	{ "", NO_HIT },
};

static bool hits_in(const zsp_builtin_env *env, const char *cmd, const zsp_sh_result *sh,
		    const char *want)
{
	zsp_builtin_hit hit;
	bool matched = false;
	int rc = zsp_builtin_check(arena, cmd, sh, env, &hit, &matched);

	if (rc == ZSP_OK && matched == (want != NULL) && (!want || strcmp(hit.rule, want) == 0)) {
		if (want && (!hit.message || !hit.what))
			fprintf(stderr, "\n  %.120s: hit %s without message or text\n", cmd, hit.rule);
		return !want || (hit.message && hit.what);
	}
	fprintf(stderr, "\n  builtin_check(\"%.120s\"%s): rc %d rule %s; want %s\n", cmd,
		sh ? "" : ", no parse", rc, matched ? hit.rule : "-", want ? want : "no hit");
	return false;
}

static bool hits(const char *cmd, const zsp_sh_result *sh, const char *want)
{
	return hits_in(&where, cmd, sh, want);
}

static void test_table(void)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		zsp_sh_result sh;

		CU_ASSERT_FATAL(zsp_sh_parse(arena, table[i].cmd, &sh) == 0);
		CU_ASSERT(hits(table[i].cmd, &sh, table[i].rule));
		CU_ASSERT(hits(table[i].cmd, NULL, table[i].rule));
	}
}

/* Under `substitutions judged;` (unknown_rm) a recursive rm or a deleting find of a word whose
 * value is unknown is rm-unknown; without it, Zed's answer (no hit) stands. */
static void test_unknown_rm(void)
{
	static const zsp_builtin_env judged = { .home = "/home/u", .cwd = "/w/ws", .unknown_rm = true };
	static const struct {
		const char *cmd, *rule;
	} cases[] = {
		{ "rm -rf \"$(echo /)\"", "rm-unknown" },
		{ "rm -r `cat list`", "rm-unknown" },
		{ "rm -rf \"$DIR\"/x", "rm-unknown" },
		{ "sudo timeout 5 rm -rf $(echo /)", "rm-unknown" },
		{ "sh -c 'rm -rf $(echo /)'", "rm-unknown" },
		{ "find \"$(echo /)\" -delete", "rm-unknown" },
		{ "rm -rf \"$(pwd)\"", "rm-cwd" },
		{ "rm -f \"$(echo x)\"", NO_HIT },
		{ "D=build; rm -rf $D", NO_HIT },
		{ "find $(echo /) -name x", NO_HIT },
		{ "find $(echo /) -name x -delete", NO_HIT },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		zsp_sh_result sh;

		CU_ASSERT_FATAL(zsp_sh_parse(arena, cases[i].cmd, &sh) == 0);
		CU_ASSERT(hits_in(&judged, cases[i].cmd, &sh, cases[i].rule));
		bool unknown = cases[i].rule && strcmp(cases[i].rule, "rm-unknown") == 0;
		CU_ASSERT(hits(cases[i].cmd, &sh, unknown ? NO_HIT : cases[i].rule));
	}
}

/* Each level of sh -c '"$@"' _ ... runs the rest of the words, so depth grows linearly. */
static void test_nesting(void)
{
	char buf[1024];

	for (int levels = 1; levels <= 10; levels++) {
		char *p = buf;

		for (int k = 0; k < levels; k++)
			p += sprintf(p, "sh -c '\"$@\"' _ ");
		sprintf(p, "rm -rf /tmp/x");
		CU_ASSERT(hits(buf, NULL, levels > 8 ? "nested-shell" : NULL));
		sprintf(p, "rm -rf /");
		CU_ASSERT(hits(buf, NULL, levels > 8 ? "nested-shell" : "rm-root"));
	}
}

/* Text that does not parse still meets Zed's regexes, with `rm` anywhere. */
static void test_unparsable(void)
{
	CU_ASSERT(hits("printf 'rm -rf ..", NULL, "rm-parent"));
	CU_ASSERT(hits("echo 'x && rm -rf /", NULL, "rm-root"));
	CU_ASSERT(hits("echo \"$(rm -rf ~", NULL, "rm-home"));
	/* every segment, not only the end of the text */
	CU_ASSERT(hits("rm -rf / ; echo 'open", NULL, "rm-root"));
	CU_ASSERT(hits("rm -rf '/' && echo \"open", NULL, "rm-root"));
	CU_ASSERT(hits("echo 'a' | sudo rm -rf ~ | echo \"open", NULL, "rm-home"));
	/* and the structural check of each segment that parses */
	CU_ASSERT(hits("strace -f rm -rf /tmp/.. ; echo 'open", NULL, "rm-root"));
	CU_ASSERT(hits("rm -rf /?* ; echo 'open", NULL, "rm-root"));
	CU_ASSERT(hits("rm -rf /!(x)", NULL, "rm-root"));
	CU_ASSERT(hits("rm -rf /tmp/x ; echo 'open", NULL, NO_HIT));
	/* the splitter gives up before the rm: only the segments see it */
	CU_ASSERT(hits("ls /!(x) ; rm -rf / ; ls", NULL, "rm-root"));
	CU_ASSERT(hits("ls /!(x) ; rm -rf /tmp/../.. ", NULL, "rm-root"));
	CU_ASSERT(hits("ls /!(x) && sudo rm -rf ~ || true", NULL, "rm-home"));
	CU_ASSERT(hits("ls /!(x) ; rm -rf /tmp/y ; ls", NULL, NO_HIT));
}

static void test_long_input(void)
{
	static char buf[60000];
	char *p = buf;

	p += sprintf(p, "rm ");
	while (p < buf + sizeof buf - 16)
		p += sprintf(p, "-a ");
	sprintf(p, "x");
	CU_ASSERT(hits(buf, NULL, NO_HIT));
	sprintf(p, "/");
	CU_ASSERT(hits(buf, NULL, "rm-root"));
	/* The same flags in text that does not parse (an open quote): only Zed's regexes look,
	 * they give up at PCRE2's match limit, and the check fails closed. */
	sprintf(p, "x 'open");
	CU_ASSERT(hits(buf, NULL, "rm-unchecked"));
}

/* What deny and ask rules see: each stage of unwrapping and the scripts' commands. */
static bool unwrapped_has(const char *cmd, const char *want, bool complete)
{
	zsp_sh_result sh;
	const char **texts;
	size_t n;
	bool all;

	if (zsp_sh_parse(arena, cmd, &sh) != 0 ||
	    zsp_builtin_unwrap(arena, &sh, &texts, &n, &all) != ZSP_OK || all != complete)
		return false;
	for (size_t k = 0; k < n && want; k++)
		if (strcmp(texts[k], want) == 0)
			return true;
	if (want)
		fprintf(stderr, "\n  unwrap(\"%.80s\"): no `%s`\n", cmd, want);
	return !want;
}

static void test_unwrap(void)
{
	static char buf[1024];
	char *p = buf;

	CU_ASSERT(unwrapped_has("FOO=1 sudo env rm x", "sudo env rm x", true));
	CU_ASSERT(unwrapped_has("FOO=1 sudo env rm x", "env rm x", true));
	CU_ASSERT(unwrapped_has("FOO=1 sudo env rm x", "rm x", true));
	CU_ASSERT(unwrapped_has("timeout -s KILL 5 nice -n 3 rm x", "rm x", true));
	CU_ASSERT(unwrapped_has("bash -c 'ls; FOO=1 rm x'", "rm x", true));
	CU_ASSERT(unwrapped_has("sudo sh -c \"eval 'rm x'\"", "rm x", true));
	CU_ASSERT(unwrapped_has("{rm,-f,x}", "rm -f x", true));
	CU_ASSERT(unwrapped_has("su -c 'rm x'", "rm x", true));
	CU_ASSERT(unwrapped_has("watch -n 1 rm x", "rm x", true));
	CU_ASSERT(unwrapped_has("command -v rm", NULL, true));
	for (int k = 0; k < 65; k++)
		p += sprintf(p, "nice ");
	sprintf(p, "rm x");
	CU_ASSERT(unwrapped_has(buf, NULL, false));
	buf[5 * 64] = '\0';
	strcat(buf, "rm x");
	CU_ASSERT(unwrapped_has(buf, "rm x", true));
}

/* The files the walk reports to the oracle: "r f" read, "w f" write, "rw f" both, "+" a tree,
 * "?" a word the text does not show, "@N" N directories known, separated by ", ". */
static int record_file(void *arg, const zsp_file_use *f)
{
	char *out = arg;
	size_t len = strlen(out);
	unsigned rw = f->access & (ZSP_FILE_READ | ZSP_FILE_WRITE);

	snprintf(out + len, 512 - len, "%s%s%s %s%s", len ? ", " : "",
		 rw & ZSP_FILE_READ ? "r" : "", rw & ZSP_FILE_WRITE ? "w" : "", f->word ? f->word : "?",
		 f->tree ? "+" : "");
	if (f->ndirs != 1) {
		len = strlen(out);
		snprintf(out + len, 512 - len, "@%zu", f->ndirs);
	}
	return 0;
}

static void test_files(void)
{
	static const struct {
		const char *cmd, *want;
	} cases[] = {
		{ "cat a b", "r a, r b" },
		{ "head -n 5 f", "r f" },
		{ "head -n5 -- -f", "r -f" },
		{ "tail -f log", "r log" },
		{ "tail --lines 3 x", "r x" },
		{ "cat - < in > out", "r in, w out" },
		{ "grep -e pat f g", "r f, r g" },
		{ "grep pat f", "r f" },
		{ "grep -r pat", "r .+" },
		{ "grep -f pats f", "r pats, r f" },
		{ "rg pat", "r .+" },
		{ "sed -i s/a/b/ f", "rw f" },
		{ "sed -n 1p f", "r f" },
		{ "cp a b c", "r a, r b, w c" },
		{ "cp -t dir a b", "r a, r b, w dir" },
		{ "cp -r src dst", "r src+, w dst+" },
		{ "cp --target=dir a", "r a, w dir" },
		{ "mv a b", "w a+, w b" },
		{ "tee -a x y", "w x, w y" },
		{ "sort -o out in", "w out, r in" },
		{ "uniq in out", "r in, w out" },
		{ "dd if=a of=b bs=1", "r a, w b" },
		{ "ln -s target link", "r target, w link" },
		{ "touch -r ref new", "r ref, w new" },
		{ "cat {a,b}", "r a, r b" },
		{ "sudo cat x", "r x" },
		{ "timeout 5 cat x", "r x" },
		{ "sh -c 'cat \"$1\"' _ x", "r x" },
		{ "cd /d && cat x", "r x@2" },
		{ "env -C /d cat x", "r x@0" },
		{ "echo a | xargs cat", "rw ?+@0, r a" },
		{ "echo x >> log 2> err", "w log, w err" },
		{ "ls -la", "" },
		{ "git diff", "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char got[512] = "";
		zsp_builtin_env env = { .home = "/home/u", .cwd = "/w/ws", .file = record_file, .file_arg = got };
		zsp_builtin_hit hit;
		bool matched = false;
		zsp_sh_result sh;

		CU_ASSERT_FATAL(zsp_sh_parse(arena, cases[i].cmd, &sh) == ZSP_OK);
		CU_ASSERT(zsp_builtin_check(arena, cases[i].cmd, &sh, &env, &hit, &matched) == ZSP_OK);
		if (strcmp(got, cases[i].want) != 0)
			fprintf(stderr, "\n  files of `%s`: `%s`, want `%s`\n", cases[i].cmd, got, cases[i].want);
		CU_ASSERT_STRING_EQUAL(got, cases[i].want);
	}
}

int main(void)
{
	CU_pSuite suite;
	unsigned failures;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	suite = CU_add_suite("builtin", setup, teardown);
	if (!suite || !CU_add_test(suite, "table", test_table) ||
	    !CU_add_test(suite, "nested shells", test_nesting) ||
	    !CU_add_test(suite, "unparsable text", test_unparsable) ||
	    !CU_add_test(suite, "long input", test_long_input) ||
	    !CU_add_test(suite, "unwrap", test_unwrap) ||
	    !CU_add_test(suite, "files", test_files) ||
	    !CU_add_test(suite, "unknown rm operands", test_unknown_rm)) {
		CU_cleanup_registry();
		return CU_get_error();
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures ? 1 : 0;
}
