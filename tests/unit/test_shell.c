/* test_shell.c: CUnit tests for compiler/shell.c, the splitter of terminal commands.
 * A table of commands with their finding and exact entries first; then argv details, limits and
 * a fuzz loop that only asks for sane output. */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler/shell.h"
#include "compiler/textesc.h"
#include "compiler/zsp.h"

#define C ZSP_SH_CLEAN
#define S ZSP_SH_SUBSTITUTION
#define U ZSP_SH_UNSUPPORTED
#define MAX_ENTRIES 8

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

static const char *finding_name(zsp_sh_finding f)
{
	return f == C ? "CLEAN" : f == S ? "SUBSTITUTION" : f == U ? "UNSUPPORTED" : "?";
}

/* Every entry is well formed: text and argv present, argv NULL-terminated with argc words. */
static bool well_formed(const char *in, const zsp_sh_result *r)
{
	size_t n = strlen(in);

	if (r->finding != C && r->finding != S && r->finding != U)
		return false;
	if ((r->finding == C) != (r->why == NULL) || r->where > n)
		return false;
	if (r->ncmds && !r->cmds)
		return false;
	for (size_t i = 0; i < r->ncmds; i++) {
		const zsp_sh_cmd *c = &r->cmds[i];

		if (!c->text || !c->argv || c->argc == 0 || c->argv[c->argc] || c->offset >= n ||
		    c->nassign > c->argc || c->depth > ZSP_SH_MAX_DEPTH)
			return false;
		if (c->kind == ZSP_SH_REDIRECT && (c->argc != 2 || c->nassign))
			return false;
		for (size_t k = 0; k < c->argc; k++)
			if (!c->argv[k])
				return false;
	}
	return true;
}

static void show(const char *label, const char *s)
{
	fprintf(stderr, "%s\"", label);
	for (; *s; s++)
		fprintf(stderr, (unsigned char)*s < 0x20 ? "\\x%02x" : "%c", (unsigned char)*s);
	fprintf(stderr, "\"");
}

static void show_result(const char *in, const zsp_sh_result *r)
{
	show("\n  parse(", in);
	fprintf(stderr, "): %s", finding_name(r->finding));
	if (r->why)
		fprintf(stderr, " \"%s\" @%zu", r->why, r->where);
	for (size_t i = 0; i < r->ncmds; i++)
		show(i ? ", " : " [", r->cmds[i].text);
	fprintf(stderr, "%s\n", r->ncmds ? "]" : " []");
}

/* rows leave `why` out when any why will do */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const struct {
	const char *in;
	zsp_sh_finding finding;
	const char *entries[MAX_ENTRIES];  /* texts in order, up to the first NULL */
	const char *why;                   /* when set: the exact why */
} table[] = {
	/* splitting */
	{ "ls", C, { "ls" } },
	{ "", C, { NULL } },
	{ "   \t ", C, { NULL } },
	{ "ls -la /tmp", C, { "ls -la /tmp" } },
	{ "a && b | c 2>/tmp/x", C, { "a", "b", "c", "2> /tmp/x" } },
	{ "a; b & c", C, { "a", "b", "c" } },
	{ "a\nb\n", C, { "a", "b" } },
	{ "a || b && c", C, { "a", "b", "c" } },
	{ "a |& b", C, { "a", "b" } },
	{ "! a | b", C, { "a", "b" } },
	{ "a &", C, { "a" } },
	{ "a;", C, { "a" } },
	{ "a &&\nb", C, { "a", "b" } },
	{ "a |\n\n b", C, { "a", "b" } },
	{ "ls   -l\t-a", C, { "ls -l -a" } },
	{ "(a; b) | c", C, { "a", "b", "c" } },
	{ "{ a; b; }", C, { "a", "b" } },
	{ "{ a; } > out", C, { "a", "> out" } },
	{ "( ( a ) )", C, { "a" } },
	{ "{ { a; } }", C, { "a" } },
	{ "(cd /tmp && ls)", C, { "cd /tmp", "ls" } },
	{ "echo a && (cd b; make) || echo c", C, { "echo a", "cd b", "make", "echo c" } },
	{ "! true", C, { "true" } },
	{ "time ls", C, { "time ls" } },
	{ "echo if then fi", C, { "echo if then fi" } },
	{ "echo }", C, { "echo }" } },
	{ "echo {", C, { "echo {" } },
	{ "echo {a,b}", C, { "echo {a,b}" } },
	/* quoting */
	{ "'rm' -rf '/'", C, { "rm -rf /" } },
	{ "\"rm\" -rf \"/\"", C, { "rm -rf /" } },
	{ "r\\m -rf /", C, { "rm -rf /" } },
	{ "echo 'a b'", C, { "echo a b" } },
	{ "echo \"a\\\"b\"", C, { "echo a\"b" } },
	{ "echo \"a\\nb\"", C, { "echo a\\nb" } },
	{ "echo \"\\$HOME\"", C, { "echo $HOME" } },
	{ "echo '$HOME'", C, { "echo $HOME" } },
	{ "echo \\$HOME", C, { "echo $HOME" } },
	{ "echo $'a\\tb'", C, { "echo a\tb" } },
	{ "echo $'\\x41\\102\\u00e9'", C, { "echo AB\xc3\xa9" } },
	{ "echo $'it\\'s'", C, { "echo it's" } },
	{ "echo $'a\\0b' c", C, { "echo a c" } },
	{ "echo $'\\e[1m\\a'", C, { "echo \x1b[1m\a" } },
	{ "echo $'\\q\\x'", C, { "echo \\q\\x" } },
	{ "echo $'\\cA\\r\\n'", C, { "echo \x01\r\n" } },
	{ "echo ''", C, { "echo " } },
	{ "echo '' x", C, { "echo  x" } },
	{ "echo a\\\nb", C, { "echo ab" } },
	{ "ls \\\n-l", C, { "ls -l" } },
	{ "echo \"multi\nline\"", C, { "echo multi\nline" } },
	{ "echo \"a\\\nb\"", C, { "echo ab" } },
	{ "echo $\"hi\"", C, { "echo hi" } },
	{ "echo a'b'\"c\"d", C, { "echo abcd" } },
	{ "echo \"it's\"", C, { "echo it's" } },
	{ "echo 'a\"b'", C, { "echo a\"b" } },
	{ "rm -rf ~", C, { "rm -rf ~" } },
	{ "echo ~/x ~root", C, { "echo ~/x ~root" } },
	{ "echo $", C, { "echo $" } },
	{ "echo $ x", C, { "echo $ x" } },
	{ "echo \"$\"", C, { "echo $" } },
	{ "echo a$'b'", C, { "echo ab" } },
	{ "echo $/ $: $=", C, { "echo $/ $: $=" } },
	{ "echo #comment", C, { "echo" } },
	{ "echo a#b", C, { "echo a#b" } },
	{ "# only a comment", C, { NULL } },
	{ "ls # rm -rf /\nrm x", C, { "ls", "rm x" } },
	{ "ls;#c\nb", C, { "ls", "b" } },
	{ "echo 'a;b' \"c|d\"", C, { "echo a;b c|d" } },
	{ "echo \\;", C, { "echo ;" } },
	{ "echo \\\\", C, { "echo \\" } },
	{ "echo \\", C, { "echo \\" } },
	{ "echo \\`", C, { "echo `" } },
	/* the cases doc/facts.md §zed names */
	{ "sudo rm -rf /", C, { "sudo rm -rf /" } },
	{ "rm -rf /tmp/../..", C, { "rm -rf /tmp/../.." } },
	{ "echo $(rm -rf /)", S, { "echo $(rm -rf /)", "rm -rf /" } },
	{ "PAGER=x git log", C, { "PAGER=x git log" } },
	{ "cat < /etc/shadow", C, { "cat", "< /etc/shadow" } },
	{ "ls > /dev/null 2>&1", C, { "ls" } },
	{ "ls &&", U, { "ls" }, "expected a command after '&&'" },
	{ "for ((i=0;i<3;i++)); do echo; done", U, { "echo" }, "arithmetic on a variable or a subscript (bash evaluates its value)" },
	{ "for ((;;)); do echo; done", S, { "echo" }, "arithmetic for ((...))" },
	{ "rm -rf / ; echo ok", C, { "rm -rf /", "echo ok" } },
	{ "echo `rm -rf /`", S, { "echo `rm -rf /`", "rm -rf /" }, "command substitution `...`" },
	{ "cat <(rm -rf /)", S, { "cat <(rm -rf /)", "rm -rf /" }, "process substitution <(...)" },
	{ "tee >(rm -rf /) x", S, { "tee >(rm -rf /) x", "rm -rf /" }, "process substitution >(...)" },
	{ "git status && rm -rf .", C, { "git status", "rm -rf ." } },
	{ "bash -c 'rm -rf /'", C, { "bash -c rm -rf /" } },
	{ "xargs rm -rf < list", C, { "xargs rm -rf", "< list" } },
	/* substitutions */
	{ "echo $HOME", S, { "echo $HOME" }, "variable expansion $NAME" },
	{ "echo ${HOME}", S, { "echo ${HOME}" }, "parameter expansion ${...}" },
	{ "echo $1", S, { "echo $1" }, "positional parameter $1" },
	{ "echo $0", S, { "echo $0" }, "positional parameter $0" },
	{ "echo $?", S, { "echo $?" }, "special parameter $?" },
	{ "echo $$", S, { "echo $$" }, "special parameter $$" },
	{ "echo $!", S, { "echo $!" }, "special parameter $!" },
	{ "echo $#", S, { "echo $#" }, "special parameter $#" },
	{ "echo $@", S, { "echo $@" }, "special parameter $@" },
	{ "echo $*", S, { "echo $*" }, "special parameter $*" },
	{ "echo $-", S, { "echo $-" }, "special parameter $-" },
	{ "echo \"$HOME\"", S, { "echo $HOME" }, "variable expansion $NAME" },
	{ "echo \"x${a}y\"", S, { "echo x${a}y" }, "parameter expansion ${...}" },
	{ "echo $((1+2))", S, { "echo $((1+2))" }, "arithmetic expansion $((...))" },
	{ "echo $(( (1+2) * 3 ))", S, { "echo $(( (1+2) * 3 ))" } },
	{ "((1+2))", S, { NULL }, "arithmetic command ((...))" },
	{ "((i++))", U, { NULL }, "arithmetic on a variable or a subscript (bash evaluates its value)" },
	{ "((i++)) && ls", U, { "ls" } },
	/* arithmetic and ${...} forms that evaluate a value or a subscript */
	{ "echo $((16#ff + 0x1f))", S, { "echo $((16#ff + 0x1f))" } },
	{ "echo $((x))", U, { "echo $((x))" }, "arithmetic on a variable or a subscript (bash evaluates its value)" },
	{ "echo $(($x+1))", U, { "echo $(($x+1))" } },
	{ "echo $((a[1]))", U, { "echo $((a[1]))" } },
	{ "echo $[x]", U, { "echo $[x]" } },
	{ "((a['$(id)']))", U, { NULL } },
	{ "echo ${a[1]} ${a[@]} ${#a[*]} ${x:-a b} ${x:1:2} ${x: -1}", S,
	  { "echo ${a[1]} ${a[@]} ${#a[*]} ${x:-a b} ${x:1:2} ${x: -1}" } },
	{ "echo ${a[i]}", U, { "echo ${a[i]}" }, "array subscript in ${...} (bash evaluates it)" },
	{ "echo ${a['$(id)']}; ls", U, { "echo ${a['$(id)']}", "ls" } },
	{ "echo ${x:i}", U, { "echo ${x:i}" }, "substring offset in ${...} that is not a number" },
	{ "echo ${x:'a[$(id)]'}", U, { "echo ${x:'a[$(id)]'}" } },
	{ "echo ${!x}", U, { "echo ${!x}" }, "indirect expansion ${!...}" },
	{ "echo $[1+2]", S, { "echo $[1+2]" }, "arithmetic expansion $[...]" },
	{ "x=$(date) ls", S, { "x=$(date) ls", "date" } },
	{ "echo \"$(ls)\"", S, { "echo $(ls)", "ls" } },
	{ "echo ${x:-$(id)}", S, { "echo ${x:-$(id)}", "id" } },
	{ "echo \"${x:-don't}\"", S, { "echo ${x:-don't}" } },
	{ "echo ${x:-'}'}", S, { "echo ${x:-'}'}" } },
	{ "echo $(( $(wc -l < f) + 1 ))", U, { "echo $(( $(wc -l < f) + 1 ))", "wc -l", "< f" } },
	{ "echo $(echo $(id))", S, { "echo $(echo $(id))", "echo $(id)", "id" } },
	{ "ls $(echo a; echo b) c", S, { "ls $(echo a; echo b) c", "echo a", "echo b" } },
	{ "a $(b) | c $(d)", S, { "a $(b)", "b", "c $(d)", "d" } },
	{ "cat > $(mktemp)", S, { "cat", "mktemp", "> $(mktemp)" } },
	{ "echo '$(rm -rf /)'", C, { "echo $(rm -rf /)" } },
	{ "echo $'$(x) `y`'", C, { "echo $(x) `y`" } },
	{ "echo \\$(x)", U, { "echo $" }, "unexpected '('" },
	{ "diff <(ls a) <(ls b)", S, { "diff <(ls a) <(ls b)", "ls a", "ls b" } },
	{ "echo $((ls) )", S, { "echo $((ls) )", "ls" }, "command substitution $(...)" },
	{ "((a) ; (b))", C, { "a", "b" } },
	{ "$(rm -rf /)", S, { "$(rm -rf /)", "rm -rf /" } },
	{ "`ls`", S, { "`ls`", "ls" } },
	{ "echo \"`id`\"", S, { "echo `id`", "id" } },
	{ "a=`id`", S, { "a=`id`", "id" } },
	{ "echo $(case x in a) echo;; esac)", S, { "echo $(case x in a) echo;; esac)", "echo" } },
	{ "echo $(cat <<EOF\nhi\nEOF\n)", S, { "echo $(cat <<EOF\nhi\nEOF\n)", "cat" } },
	{ "echo $()", S, { "echo $()" } },
	{ "echo `ls #c`", S, { "echo `ls #c`", "ls" } },
	/* here-documents and here-strings */
	{ "cat <<EOF\nhello\nEOF", C, { "cat" } },
	{ "cat <<EOF\n$HOME\nEOF", S, { "cat" }, "expansion in an unquoted here-document" },
	{ "cat <<EOF\n`id`\nEOF", S, { "cat", "id" } },
	{ "cat <<'EOF'\n$HOME\nEOF", C, { "cat" } },
	{ "cat <<\"EOF\"\n`id`\nEOF", C, { "cat" } },
	{ "cat <<\\EOF\n$x\nEOF", C, { "cat" } },
	{ "cat <<-EOF\n\t$x\n\tEOF", S, { "cat" } },
	{ "cat <<-'EOF'\n\tok\n\tEOF\necho done", C, { "cat", "echo done" } },
	{ "cat <<A; cat <<B\na\nA\nb\nB\necho end", C, { "cat", "cat", "echo end" } },
	{ "cat <<A <<'B'\n$x\nA\n$y\nB", S, { "cat" } },
	{ "cat <<EOF\nno end", U, { "cat" }, "here-document without its delimiter line" },
	{ "cat <<EOF", U, { "cat" }, "here-document without its delimiter line" },
	{ "cat <<EOF > out.txt\nbody\nEOF", C, { "cat", "> out.txt" } },
	{ "cat <<EOF | grep a\nx\nEOF", C, { "cat", "grep a" } },
	{ "cat <<EOF &&\nx\nEOF\nls", C, { "cat", "ls" } },
	{ "cat <<EOF\n5 $ \nEOF", C, { "cat" } },
	{ "cat <<EOF\n\\$x\nEOF", C, { "cat" } },
	{ "cat <<EOF\nEOFX\n EOF\nEOF\n", C, { "cat" } },
	{ "cat <<$x\nbody\n$x", C, { "cat" } },
	/* delimiters as bash reads them: quotes removed, $'...' and $"..." lose their $ */
	{ "cat <<$'EOF'\n$x\nEOF\nrm -rf /", C, { "cat", "rm -rf /" } },
	{ "cat <<$\"EOF\"\n$x\nEOF\nls", C, { "cat", "ls" } },
	{ "cat <<\"E\"OF\n$x\nEOF\nls", C, { "cat", "ls" } },
	{ "cat <<E\\OF\n$x\nEOF\nls", C, { "cat", "ls" } },
	{ "cat <<E'O'\"F\"\n`x`\nEOF\nls", C, { "cat", "ls" } },
	{ "cat <<$'E\\x4fF'\nx\nE\\x4fF\nls", U, { "cat", "ls" },
	  "backslash in a $'...' or $\"...\" here-document delimiter" },
	{ "cat <<E\\\nOF\n$x\nEOF\nls", S, { "cat", "ls" } },
	/* an unquoted body joins backslash-newlines before it looks for the delimiter */
	{ "cat <<EOF\nx\nE\\\nOF\nrm -rf /\nEOF", C, { "cat", "rm -rf /", "EOF" } },
	{ "cat <<EOF\nx\\\\\nEOF\nls", C, { "cat", "ls" } },
	{ "cat <<EOF\nx\\\\\\\nEOF\nls\nEOF", C, { "cat" } },
	{ "cat <<'EOF'\nE\\\nOF\nrm -rf /\nEOF", C, { "cat" } },
	{ "cat <<-EOF\n\t\\\n\tEOF\nls", C, { "cat", "ls" } },
	{ "cat <<-EOF\n\tE\\\n\tOF\nrm x\nEOF", C, { "cat" } },
	/* the substitutions of an unquoted body run: their commands are listed */
	{ "cat <<EOF\n$(rm -rf /)\nEOF", S, { "cat", "rm -rf /" } },
	{ "cat <<EOF\na ${x} \"$(id)\" `ls`\n<(no) $((1+2))\nEOF", S, { "cat", "id", "ls" } },
	{ "cat <<EOF | sh\n$(a; b)\nEOF\nc", S, { "cat", "sh", "a", "b", "c" } },
	{ "cat <<'EOF'\n$(rm -rf /)\nEOF", C, { "cat" } },
	{ "cat <<EOF\n\\$(rm -rf /)\nEOF", C, { "cat" } },
	{ "cat <<EOF\n$(ls\nEOF", U, { "cat", "ls" }, "unterminated $(...) substitution" },
	{ "cat <<EOF\n$(cat <<X\nhi\nX\n)\nEOF\nls", U, { "cat", "cat", "ls" },
	  "here-document inside a here-document's substitution" },
	{ "cat <<EOF\na\\\n$(id)\nEOF", U, { "cat", "id" },
	  "backslash-newline in a here-document with a command substitution" },
	{ "`cat <<EOF\nx\nEOF\n`; ls", U, { "`cat <<EOF\nx\nEOF\n`", "cat", "ls" },
	  "here-document inside `...`" },
	/* [[ ]]: process substitutions run; -v names and arithmetic operands are evaluated */
	{ "[[ -e <(rm -rf /) ]]", S, { "[[ -e <(rm -rf /) ]]", "rm -rf /" }, "process substitution <(...)" },
	{ "[[ -n x && -e >(ls) ]] || id", S, { "[[ -n x && -e >(ls) ]]", "ls", "id" } },
	{ "[[ a < b ]]", C, { "[[ a < b ]]" } },
	{ "[[ x =~ <(a) ]]", S, { "[[ x =~ <(a) ]]", "a" } },
	{ "[[ x =~ (b|<(a)) ]]", S, { "[[ x =~ ( b|<(a) ) ]]", "a" } },
	{ "[[ x =~ (b c<(a)) ]]", S, { "[[ x =~ ( b c<(a) ) ]]", "a" } },
	{ "[[ -v 'a[$(id)]' ]]; ls", U, { "[[ -v a[$(id)] ]]", "ls" }, "array subscript evaluated by [[ -v ]]" },
	{ "[[ -v a ]]", C, { "[[ -v a ]]" } },
	{ "[[ 1 -eq 'a[$(id)]' ]]", U, { "[[ 1 -eq a[$(id)] ]]" },
	  "arithmetic operand of [[ ]] that is not a number" },
	{ "[[ x -lt 2 ]]", U, { "[[ x -lt 2 ]]" } },
	{ "[[ 1 -eq 2 || -3 -ge +4 ]]", C, { "[[ 1 -eq 2 || -3 -ge +4 ]]" } },
	{ "[[ a == '-eq' ]]", C, { "[[ a == -eq ]]" } },
	/* builtins that evaluate a name's subscript, arithmetic, or code */
	{ "printf -v 'a[$(id)]' x; ls", U, { "printf -v a[$(id)] x", "ls" }, "array subscript evaluated by a builtin" },
	{ "printf -v'a[$(id)]' x", U, { "printf -va[$(id)] x" }, "array subscript evaluated by a builtin" },
	{ "printf '[%s]' -v 'a[1]'", C, { "printf [%s] -v a[1]" } },
	{ "printf -v x '%s' y", C, { "printf -v x %s y" } },
	{ "test -v 'a[$(id)]'", U, { "test -v a[$(id)]" }, "array subscript evaluated by a builtin" },
	{ "[ -v 'a[$(id)]' ]", U, { "[ -v a[$(id)] ]" }, "array subscript evaluated by a builtin" },
	{ "test -f '[x]'", C, { "test -f [x]" } },
	{ "read 'a[$(id)]' <<< x", U, { "read a[$(id)]" }, "array subscript evaluated by a builtin" },
	{ "builtin read -a 'b[$(id)]'", U, { "builtin read -a b[$(id)]" }, "array subscript evaluated by a builtin" },
	{ "declare 'a[$(id)]=1'", U, { "declare a[$(id)]=1" }, "array subscript evaluated by a builtin" },
	{ "local -a 'x[$(id)]'", U, { "local -a x[$(id)]" }, "array subscript evaluated by a builtin" },
	{ "typeset -i n; n=x", U, { "typeset -i n", "n=x" }, "declare -i or -n: later assignments are evaluated" },
	{ "declare -n r=x", U, { "declare -n r=x" } },
	{ "declare -x A=1; export B=2; readonly C", C, { "declare -x A=1", "export B=2", "readonly C" } },
	{ "unset 'a[$(id)]'", U, { "unset a[$(id)]" }, "array subscript evaluated by a builtin" },
	{ "mapfile 'm[$(id)]'; getopts ab 'o[$(id)]'", U, { "mapfile m[$(id)]", "getopts ab o[$(id)]" }, "array subscript evaluated by a builtin" },
	{ "let 'a[$(id)]=1'", U, { "let a[$(id)]=1" }, "arithmetic on a variable or a subscript (bash evaluates its value)" },
	{ "let x=1", U, { "let x=1" }, "arithmetic on a variable or a subscript (bash evaluates its value)" },
	{ "let 1+2", C, { "let 1+2" } },
	{ "a['$(id)']=1 ls", U, { "a[$(id)]=1 ls" }, "array subscript in an assignment (bash evaluates it)" },
	{ "a[i]=1", U, { "a[i]=1" } },
	{ "a[0]=1; b=([1]=x)", U, { "a[0]=1", "b=([1]=x)" } },
	{ "a[10]=1 b=(x y)", C, { "a[10]=1 b=(x y)" } },
	{ "declare b=([k]=v)", U, { "declare b=([k]=v)" }, "array subscript evaluated by a builtin" },
	{ "trap 'rm -rf /' EXIT; ls", U, { "trap rm -rf / EXIT", "ls" }, "trap runs its argument later" },
	{ "trap", C, { "trap" } },
	{ "alias ls='rm -rf /'\nls", U, { "alias ls=rm -rf /", "ls" }, "alias changes what later words run" },
	{ "enable -f ./x.so ls", U, { "enable -f ./x.so ls" }, "enable changes what names run" },
	{ "shopt -s extglob", U, { "shopt -s extglob" }, "shopt changes how later lines are read" },
	{ "set -k; ls", U, { "set -k", "ls" }, "set -k makes later words assignments" },
	{ "set -o keyword", U, { "set -o keyword" } },
	{ "set -euo pipefail; ls", C, { "set -euo pipefail", "ls" } },
	{ "command trap x INT", U, { "command trap x INT" } },
	{ "coproc rm -rf /; ls", U, { "rm -rf /", "ls" }, "coproc" },
	{ "coproc W { rm -rf /; }; ls", U, { "rm -rf /", "ls" }, "coproc" },
	{ "coproc (ls) > x", U, { "ls", "> x" }, "coproc" },
	{ "coproc", U, { NULL }, "coproc" },
	/* extglob: kept in the word, unsupported, and what follows is still read */
	{ "ls @(a|b) && rm -rf /", U, { "ls @(a|b)", "rm -rf /" }, "extglob pattern" },
	{ "ls !(x) *(y) +(z) ?(w); id", U, { "ls !(x) *(y) +(z) ?(w)", "id" }, "extglob pattern" },
	{ "case x in @(a|b)) ls;; esac", U, { "ls" }, "extglob pattern" },
	{ "ls a@(b", U, { "ls" }, "extglob pattern" },
	{ "! (ls)", C, { "ls" } },
	/* nested backquotes: the inner text, one level of escapes removed, is parsed too */
	{ "echo `a \\`b \\\\\\`c\\\\\\`\\``; d", U, { "echo `a \\`b \\\\\\`c\\\\\\`\\``", "a \\`b \\\\\\`c\\\\\\`\\`",
	  "b \\`c\\`", "c", "d" }, "nested backquotes" },
	{ "echo `echo \"\\`ls\\`\"`", U, { "echo `echo \"\\`ls\\`\"`", "echo \\`ls\\`", "ls" } },
	{ "echo `a \\`b`", U, { "echo", "a" }, "nested backquotes" },
	{ "cat <<< 'hi'", C, { "cat" } },
	{ "cat <<<$x", S, { "cat" } },
	{ "cat <<< $(id)", S, { "cat", "id" } },
	/* redirects */
	{ "ls >out", C, { "ls", "> out" } },
	{ "ls >> log 2>> err", C, { "ls", ">> log", "2>> err" } },
	{ "ls >| f", C, { "ls", ">| f" } },
	{ "ls &> all", C, { "ls", "&> all" } },
	{ "ls &>> all", C, { "ls", "&>> all" } },
	{ "ls >& all", C, { "ls", ">& all" } },
	{ "echo hi >& /tmp/x", C, { "echo hi", ">& /tmp/x" } },
	{ "ls >&2", C, { "ls" } },
	{ "ls 2>&1 >/dev/null", C, { "ls" } },
	{ "ls &>/dev/null", C, { "ls" } },
	{ "exec 3<> /dev/tcp/h/80", C, { "exec", "3<> /dev/tcp/h/80" } },
	{ "exec 3>&-", C, { "exec" } },
	{ "exec >&-", C, { "exec" } },
	{ "cat <&0", C, { "cat" } },
	{ "ls 1>&2-", C, { "ls" } },
	{ "exec {fd}> log", C, { "exec", "{fd}> log" } },
	{ "> f", C, { "> f" } },
	{ "2>/dev/null ls", C, { "ls" } },
	{ "> f ls -l", C, { "ls -l", "> f" } },
	{ "echo x >'/etc/pass wd'", C, { "echo x", "> /etc/pass wd" } },
	{ "echo x > \"/dev/null\"", C, { "echo x" } },
	{ "echo a2>f", C, { "echo a2", "> f" } },
	{ "echo 2 >f", C, { "echo 2", "> f" } },
	{ "ls > f | wc", C, { "ls", "> f", "wc" } },
	{ "ls 2>&1 | tee log", C, { "ls", "tee log" } },
	{ "cmd <> f", C, { "cmd", "<> f" } },
	{ "ls >", U, { "ls" }, "redirect without a target" },
	{ "ls > ;", U, { "ls" }, "redirect without a target" },
	{ "cat <<", U, { "cat" }, "redirect without a target" },
	/* assignments */
	{ "A=1 B=2 cmd", C, { "A=1 B=2 cmd" } },
	{ "A=1", C, { "A=1" } },
	{ "A=1 B=2", C, { "A=1 B=2" } },
	{ "A+=x cmd", C, { "A+=x cmd" } },
	{ "a[1]=x", C, { "a[1]=x" } },
	{ "cmd A=1", C, { "cmd A=1" } },
	{ "A='x y' cmd", C, { "A=x y cmd" } },
	{ "A=1 > f", C, { "A=1", "> f" } },
	{ "declare -a arr=(a 'b c')", C, { "declare -a arr=(a b c)" } },
	{ "arr=(\n one # c\n two\n)", C, { "arr=(one two)" } },
	{ "a=(1 2 $(ls)) b", S, { "a=(1 2 $(ls)) b", "ls" } },
	{ "echo a=(b)", U, { "echo a=" }, "unexpected '('" },
	{ "a=(1 2", U, { NULL }, "unterminated array assignment" },
	/* compound commands */
	{ "if true; then rm -rf /; fi", C, { "true", "rm -rf /" } },
	{ "if a; then b; elif c; then d; else e; fi", C, { "a", "b", "c", "d", "e" } },
	{ "if a\nthen b\nelse c\nfi", C, { "a", "b", "c" } },
	{ "if ! grep -q x f; then echo no; fi", C, { "grep -q x f", "echo no" } },
	{ "while true; do sleep 1; done", C, { "true", "sleep 1" } },
	{ "until a; do b; done > log", C, { "a", "b", "> log" } },
	{ "while read -r l; do echo \"$l\"; done < in.txt", S, { "read -r l", "echo $l", "< in.txt" } },
	{ "while read l; do :; done < <(ls)", S, { "read l", ":", "ls", "< <(ls)" } },
	{ "for f in *.c; do gcc -c $f; done", S, { "gcc -c $f" } },
	{ "for f in a b c\ndo\n echo x\ndone", C, { "echo x" } },
	{ "for f; do echo; done", C, { "echo" } },
	{ "for f\ndo echo; done", C, { "echo" } },
	{ "for f in $(ls); do rm \"$f\"; done", S, { "ls", "rm $f" } },
	{ "select x in a b; do break; done", C, { "break" } },
	{ "for x in a; { echo; }", C, { "echo" } },
	{ "for ((;;)) { ls; }", S, { "ls" } },
	{ "case a in a) echo a;; b|c) echo b;; esac", C, { "echo a", "echo b" } },
	{ "case x in (a) echo;& b) ls;;& *) pwd;; esac", C, { "echo", "ls", "pwd" } },
	{ "case x in\n a)\n  echo a\n  ;;\nesac", C, { "echo a" } },
	{ "case x in a) ;; esac", C, { NULL } },
	{ "case x in esac", C, { NULL } },
	{ "case x in a) echo a; esac", C, { "echo a" } },
	{ "case $(id) in *) rm x;; esac", S, { "id", "rm x" } },
	{ "f() { rm -rf /; }", C, { "rm -rf /" } },
	{ "f() { rm -rf /; }; f", C, { "rm -rf /", "f" } },
	{ "function f { ls; }", C, { "ls" } },
	{ "function f() ( ls )", C, { "ls" } },
	{ "f ()\n{\n ls\n}", C, { "ls" } },
	{ "f() { a; } > log", C, { "a", "> log" } },
	{ "f() if a; then b; fi", C, { "a", "b" } },
	{ "[[ -f x ]] && rm x", C, { "[[ -f x ]]", "rm x" } },
	{ "[[ a < b || ( c > d ) ]]", C, { "[[ a < b || ( c > d ) ]]" } },
	{ "[[ $x =~ ^(a|b)+$ ]]", S, { "[[ $x =~ ^(a|b)+$ ]]" } },
	{ "[[ -n x ]] > out", C, { "[[ -n x ]]", "> out" } },
	{ "[ -f x ] && ls", C, { "[ -f x ]", "ls" } },
	{ "if [[ -n $(id) ]]; then :; fi", S, { "[[ -n $(id) ]]", "id", ":" } },
	/* input that does not parse */
	{ "| x", U, { NULL }, "'|' without a command before it" },
	{ "ls |", U, { "ls" }, "expected a command after '|'" },
	{ "ls ||", U, { "ls" }, "expected a command after '||'" },
	{ "ls && && x", U, { "ls" }, "expected a command after '&&'" },
	{ "&& ls", U, { NULL }, "'&&' without a command before it" },
	{ "ls )", U, { "ls" }, "unexpected ')'" },
	{ "ls\n)", U, { "ls" }, "unexpected ')'" },
	{ "}", U, { NULL }, "unexpected '}'" },
	{ "{ls;}", U, { "{ls" }, "unexpected '}'" },
	{ "fi", U, { NULL }, "unexpected 'fi'" },
	{ "done", U, { NULL }, "unexpected 'done'" },
	{ "ls; then", U, { "ls" }, "unexpected 'then'" },
	{ "a ;; b", U, { "a" }, "';;' outside a case item" },
	{ "a ;& b", U, { "a" }, "';&' outside a case item" },
	{ ";", U, { NULL }, "unexpected ';'" },
	{ "a; ;", U, { "a" }, "unexpected ';'" },
	{ "a & ;", U, { "a" }, "unexpected ';'" },
	{ "echo 'abc", U, { "echo" }, "unterminated ' quote" },
	{ "rm -rf / 'x", U, { "rm -rf /" }, "unterminated ' quote" },
	{ "echo \"abc", U, { "echo" }, "unterminated \" quote" },
	{ "echo $'abc", U, { "echo" }, "unterminated $' quote" },
	{ "echo $(ls", U, { "echo", "ls" }, "unterminated $(...) substitution" },
	{ "echo `ls", U, { "echo", "ls" }, "unterminated `...` substitution" },
	{ "cat <(ls", U, { "cat", "ls" }, "unterminated process substitution" },
	{ "echo ${x", U, { "echo" }, "unterminated ${...}" },
	{ "echo $((1+2", U, { "echo" }, "unterminated $((...)) arithmetic" },
	{ "echo $((1+2)", U, { "echo", "1+2" }, "unterminated $(...) substitution" },
	{ "echo $(ls; fi)", U, { "echo", "ls" }, "unexpected 'fi'" },
	{ "`echo \\`ls\\``", U, { "`echo \\`ls\\``", "echo \\`ls\\`", "ls" }, "nested backquotes" },

	{ "(ls", U, { "ls" }, "unterminated ( subshell" },
	{ "{ ls", U, { "ls" }, "unterminated { group" },
	{ "{ ls; ", U, { "ls" }, "unterminated { group" },
	{ "{ ls; } x", U, { "ls" }, "unexpected word after a compound command" },
	{ "( )", U, { NULL }, "empty command list" },
	{ "{ }", U, { NULL }, "empty command list" },
	{ "if then fi", U, { NULL }, "empty command list" },
	{ "if true; then ls", U, { "true", "ls" }, "unterminated if" },
	{ "if true; fi", U, { "true" }, "unexpected 'fi'" },
	{ "while true; done", U, { "true" }, "unexpected 'done'" },
	{ "for x in a b", U, { NULL }, "unterminated for" },
	{ "for 1 in a; do :; done", U, { NULL }, "not a variable name after for/select" },
	{ "for ((i=0", U, { NULL }, "malformed for ((...))" },
	{ "case x in a) ls", U, { "ls" }, "unterminated case" },
	{ "case x", U, { NULL }, "unterminated case" },
	{ "case x in a) ls;; b", U, { "ls" }, "unterminated case" },
	{ "echo (", U, { "echo" }, "unexpected '('" },
	{ "f() ls", U, { NULL }, "function body is not a compound command" },
	{ "f()", U, { NULL }, "function definition without a body" },
	{ "function", U, { NULL }, "'function' without a name" },
	{ "[[ -f x", U, { "[[ -f x" }, "unterminated [[" },
	{ "((1+2", U, { NULL }, "unterminated ((...)) arithmetic" },
	{ "!", U, { NULL }, "'!' without a command" },
	{ "echo $x; ls &&", U, { "echo $x", "ls" }, "expected a command after '&&'" },
};
#pragma GCC diagnostic pop

/* true if `in` parses to the row's finding and exactly its entries; prints the difference. */
static bool parses_as(size_t row)
{
	const char *in = table[row].in;
	zsp_sh_result r;
	size_t want = 0;
	bool ok;

	if (zsp_sh_parse(arena, in, &r) != 0) {
		show("\n  parse(", in);
		fprintf(stderr, ") returned -1\n");
		return false;
	}
	while (want < MAX_ENTRIES && table[row].entries[want])
		want++;
	ok = well_formed(in, &r) && r.finding == table[row].finding && r.ncmds == want &&
	     (!table[row].why || (r.why && strcmp(r.why, table[row].why) == 0));
	for (size_t i = 0; ok && i < want; i++)
		ok = strcmp(r.cmds[i].text, table[row].entries[i]) == 0;
	if (!ok) {
		show_result(in, &r);
		fprintf(stderr, "  want %s", finding_name(table[row].finding));
		if (table[row].why)
			fprintf(stderr, " \"%s\"", table[row].why);
		for (size_t i = 0; i < want; i++)
			show(i ? ", " : " [", table[row].entries[i]);
		fprintf(stderr, "%s\n", want ? "]" : " []");
	}
	return ok;
}

static void test_table(void)
{
	CU_ASSERT(sizeof table / sizeof *table >= 160);
	for (size_t i = 0; i < sizeof table / sizeof *table; i++)
		CU_ASSERT_TRUE(parses_as(i));
}

/* every prefix of every table input: no crash, sane output (ASan/UBSan watch the reads) */
static void test_prefixes(void)
{
	for (size_t i = 0; i < sizeof table / sizeof *table; i++) {
		size_t n = strlen(table[i].in);

		for (size_t k = 0; k < n; k++) {
			char *cut = zsp_arena_strndup(arena, table[i].in, k);
			zsp_sh_result r;

			CU_ASSERT_FATAL(cut != NULL);
			CU_ASSERT_EQUAL(zsp_sh_parse(arena, cut, &r), 0);
			if (!well_formed(cut, &r)) {
				show_result(cut, &r);
				CU_FAIL("malformed result");
			}
		}
	}
}

static const zsp_sh_cmd *parse_one(const char *in, zsp_sh_result *r, zsp_sh_finding f, size_t n)
{
	bool ok = zsp_sh_parse(arena, in, r) == 0 && r->finding == f && r->ncmds == n;

	CU_ASSERT_TRUE(ok);
	if (!ok && strlen(in) < 200)
		show_result(in, r);
	else if (!ok)
		fprintf(stderr, "\n  long input: %s \"%s\" @%zu, %zu entries; want %s, %zu\n",
			finding_name(r->finding), r->why ? r->why : "", r->where, r->ncmds,
			finding_name(f), n);
	return ok ? r->cmds : NULL;
}

static void test_argv(void)
{
	zsp_sh_result r;
	const zsp_sh_cmd *c;

	c = parse_one("  A=1 B='x y' cmd 'a b'", &r, C, 1);
	if (c) {
		CU_ASSERT_EQUAL(c[0].kind, ZSP_SH_COMMAND);
		CU_ASSERT_EQUAL(c[0].argc, 4);
		CU_ASSERT_EQUAL(c[0].nassign, 2);
		CU_ASSERT_STRING_EQUAL(c[0].argv[1], "B=x y");
		CU_ASSERT_STRING_EQUAL(c[0].argv[2], "cmd");
		CU_ASSERT_STRING_EQUAL(c[0].argv[3], "a b");
		CU_ASSERT_PTR_NULL(c[0].argv[4]);
		CU_ASSERT_EQUAL(c[0].depth, 0);
		CU_ASSERT_EQUAL(c[0].offset, 2);
	}

	c = parse_one("cmd A=1 B=2", &r, C, 1);
	if (c)
		CU_ASSERT_EQUAL(c[0].nassign, 0);

	c = parse_one("x=1 y=$(id)", &r, S, 2);
	if (c) {
		CU_ASSERT_EQUAL(c[0].nassign, 2);
		CU_ASSERT_EQUAL(c[0].argc, 2);
		CU_ASSERT_STRING_EQUAL(c[1].text, "id");
		CU_ASSERT_EQUAL(c[1].depth, 1);
		CU_ASSERT_EQUAL(c[1].offset, 8);
	}
	CU_ASSERT_STRING_EQUAL(r.why, "command substitution $(...)");
	CU_ASSERT_EQUAL(r.where, 6);

	c = parse_one("a `b $(c <(d))` 2>>log", &r, S, 5);
	if (c) {
		CU_ASSERT_STRING_EQUAL(c[0].text, "a `b $(c <(d))`");
		CU_ASSERT_EQUAL(c[0].depth, 0);
		CU_ASSERT_STRING_EQUAL(c[1].text, "b $(c <(d))");
		CU_ASSERT_EQUAL(c[1].depth, 1);
		CU_ASSERT_STRING_EQUAL(c[2].text, "c <(d)");
		CU_ASSERT_EQUAL(c[2].depth, 2);
		CU_ASSERT_STRING_EQUAL(c[3].text, "d");
		CU_ASSERT_EQUAL(c[3].depth, 3);
		CU_ASSERT_EQUAL(c[4].kind, ZSP_SH_REDIRECT);
		CU_ASSERT_STRING_EQUAL(c[4].argv[0], "2>>");
		CU_ASSERT_STRING_EQUAL(c[4].argv[1], "log");
		CU_ASSERT_EQUAL(c[4].argc, 2);
		CU_ASSERT_EQUAL(c[4].offset, 16);
		CU_ASSERT_EQUAL(c[4].depth, 0);
	}
	CU_ASSERT_EQUAL(r.where, 2);

	c = parse_one("echo $(cat < /etc/shadow)", &r, S, 3);
	if (c) {
		CU_ASSERT_EQUAL(c[2].kind, ZSP_SH_REDIRECT);
		CU_ASSERT_EQUAL(c[2].depth, 1);
		CU_ASSERT_EQUAL(c[2].offset, 11);
	}

	/* UNSUPPORTED wins over an earlier SUBSTITUTION and reports its own place */
	parse_one("echo $HOME; (", &r, U, 1);
	CU_ASSERT_STRING_EQUAL(r.why, "unterminated ( subshell");
	CU_ASSERT_EQUAL(r.where, 12);

	parse_one("echo 'unterminated", &r, U, 1);
	CU_ASSERT_EQUAL(r.where, 5);
}

static char *repeat(const char *head, const char *unit, size_t n, const char *tail)
{
	size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail);
	char *s = zsp_arena_alloc(arena, hl + ul * n + tl + 1);

	if (!s)
		return NULL;
	memcpy(s, head, hl);
	for (size_t i = 0; i < n; i++)
		memcpy(s + hl + i * ul, unit, ul);
	memcpy(s + hl + ul * n, tail, tl + 1);
	return s;
}

static void test_limits(void)
{
	zsp_sh_result r;
	char *s;

	/* 1000 subshells: refused at the depth limit, not by the C stack */
	s = repeat(repeat("", "( ", 1000, "ls"), " )", 1000, "");
	CU_ASSERT_FATAL(s != NULL);
	parse_one(s, &r, U, 0);
	CU_ASSERT_STRING_EQUAL(r.why, "nested deeper than 32 levels");
	CU_ASSERT_EQUAL(r.where, 2 * ZSP_SH_MAX_DEPTH);

	parse_one(repeat("", "(", 1000, ""), &r, U, 0);
	parse_one(repeat("", "$(", 1000, ""), &r, U, 0);
	CU_ASSERT_STRING_EQUAL(r.why, "nested deeper than 32 levels");
	parse_one(repeat("echo ", "${x:-", 1000, ""), &r, U, 1);
	parse_one(repeat("", "{ ", 1000, ""), &r, U, 0);
	parse_one(repeat("", "if a; then ", 1000, ""), &r, U, ZSP_SH_MAX_DEPTH);
	/* (((...(ls)...))) is arithmetic to bash too; the scan is iterative */
	parse_one(repeat(repeat("", "(", 1000, "1"), ")", 1000, ""), &r, S, 0);

	/* exactly at the limit nests fine */
	s = repeat(repeat("", "( ", ZSP_SH_MAX_DEPTH, "ls"), " )", ZSP_SH_MAX_DEPTH, "");
	parse_one(s, &r, C, 1);
	s = repeat(repeat("", "( ", ZSP_SH_MAX_DEPTH + 1, "ls"), " )", ZSP_SH_MAX_DEPTH + 1, "");
	parse_one(s, &r, U, 0);

	/* size: 64 KiB parses; longer is unsupported and still split, up to 1 MiB */
	s = repeat("echo ", "a", ZSP_SH_MAX_INPUT - 5, "");
	CU_ASSERT_EQUAL(strlen(s), ZSP_SH_MAX_INPUT);
	if (parse_one(s, &r, C, 1))
		CU_ASSERT_EQUAL(strlen(r.cmds[0].text), ZSP_SH_MAX_INPUT);
	parse_one(repeat("echo ", "a", ZSP_SH_MAX_INPUT - 4, ""), &r, U, 1);
	CU_ASSERT_STRING_EQUAL(r.why, "command longer than 64 KiB");
	s = repeat("", "ls; ", 70 << 8, "rm -rf /");
	CU_ASSERT_EQUAL(strlen(s), (70u << 10) + 8);
	if (parse_one(s, &r, U, (70 << 8) + 1))
		CU_ASSERT_STRING_EQUAL(r.cmds[70 << 8].text, "rm -rf /");
	parse_one(repeat("", "ls; ", (ZSP_SH_MAX_SPLIT >> 2) + 1, ""), &r, U, 0);
	CU_ASSERT_STRING_EQUAL(r.why, "command longer than 1 MiB");

	/* a NUL: what execve passes on (the text before it) is split, and the input unsupported */
	{
		static const char nul[] = "ls; rm x\0; rm -rf /";

		CU_ASSERT_EQUAL(zsp_sh_parse_n(arena, nul, sizeof nul - 1, &r), 0);
		CU_ASSERT_EQUAL(r.finding, U);
		CU_ASSERT_STRING_EQUAL(r.why, "NUL byte in the command");
		CU_ASSERT_EQUAL(r.where, 8);
		CU_ASSERT_EQUAL(r.ncmds, 2);
		CU_ASSERT_EQUAL(zsp_sh_parse_n(arena, nul, 8, &r), 0);
		CU_ASSERT_EQUAL(r.finding, C);
	}

	/* the budget: arithmetic nested 30 deep, each level probed to its end, is refused */
	s = repeat(repeat(repeat("", "$(( (", 30, ""), "1", 20000, ""), ") ))", 30, "");
	parse_one(s, &r, U, 0);
	CU_ASSERT_STRING_EQUAL(r.why, "budget");
	s = repeat(repeat(repeat("", "$(( (", 3, ""), "1", 20000, ""), ") ))", 3, "");
	parse_one(s, &r, S, 1);

	/* many nested backquotes: each costs its own length */
	s = repeat("echo `", "a \\`b\\` ", 6000, "`");
	parse_one(s, &r, U, 6002);

	/* many commands and many words stay linear */
	s = repeat("", "a $(b) `c` | ", 4000, "d");
	parse_one(s, &r, S, 12001);
	s = repeat("", "'x' \"y\" ", 8000, "");
	if (parse_one(s, &r, C, 1))
		CU_ASSERT_EQUAL(r.cmds[0].argc, 16000);
}

/* Deterministic generator, so a failure reproduces. */
static unsigned long rng = 88172645463325252ul;

static unsigned long next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void fuzz(const char *alphabet, size_t max_len, unsigned rounds)
{
	size_t an = strlen(alphabet);
	char *buf = malloc(max_len + 1);

	CU_ASSERT_FATAL(buf != NULL);
	for (unsigned i = 0; i < rounds; i++) {
		size_t len = next_rand() % (max_len + 1);
		zsp_arena *a = zsp_arena_new();
		zsp_sh_result r;

		CU_ASSERT_FATAL(a != NULL);
		for (size_t k = 0; k < len; k++)
			buf[k] = an ? alphabet[next_rand() % an] : (char)(1 + next_rand() % 255);
		buf[len] = '\0';
		CU_ASSERT_EQUAL(zsp_sh_parse(a, buf, &r), 0);
		if (!well_formed(buf, &r)) {
			show_result(buf, &r);
			CU_FAIL("malformed result");
		}
		zsp_arena_free(a);
	}
	free(buf);
}

static void test_garbage(void)
{
	clock_t start = clock();

	fuzz("", 300, 3000);                               /* NUL-free binary garbage */
	fuzz("a $'\"`\\(){}<>|&;\n#=!-~[]*0123", 60, 30000);  /* shell punctuation */
	fuzz("ab ;|&()\n", 40, 10000);
	fuzz("$(`'\"{<>)]} \n\\", 80, 10000);
	fuzz("if then fi do done case esac in ;; ) ( { } ! [[ ]] for x =~ <<E\nE\n", 200, 3000);
	CU_ASSERT((double)(clock() - start) / CLOCKS_PER_SEC < 30.0);
}

/* ---- textesc: untrusted text shown to a person, and read back ---------------------------- */

static void check_escape(const char *in, const char *want)
{
	char *e = zsp_text_escape(in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	if (strcmp(e, want) != 0)
		fprintf(stderr, "\nescape: got `%s`, want `%s`\n", e, want);
	CU_ASSERT_STRING_EQUAL(e, want);
	CU_ASSERT(zsp_text_plain(e));
	/* plain text is shown as it is (its backslashes are no escapes: zsp-run prints it with
	 * --exact); escaped text reads back exactly (--exact-escaped) */
	if (!zsp_text_plain(in)) {
		char *back = NULL, err[160];
		CU_ASSERT_EQUAL(zsp_text_unescape(e, &back, err, sizeof err), 0);
		CU_ASSERT(back && strcmp(back, in) == 0);
		free(back);
	}
	free(e);
}

static void test_textesc_table(void)
{
	check_escape("cargo build", "cargo build");
	check_escape("echo h\xc3\xa9llo \xe4\xb8\x96", "echo h\xc3\xa9llo \xe4\xb8\x96");   /* printable UTF-8 */
	check_escape("a\\b", "a\\b");                                        /* plain: unchanged */
	check_escape("touch x\033[2K\rfine", "touch x\\x1b[2K\\rfine");
	check_escape("a\\b\n", "a\\\\b\\n");                                 /* escaped: \ is too */
	check_escape("x\ty\x7f", "x\\ty\\x7f");
	check_escape("rm -rf \xe2\x80\xae/ gnp.txt", "rm -rf \\u{202e}/ gnp.txt");   /* RLO */
	check_escape("\xc2\x9b" "31m", "\\u{009b}31m");                      /* C1 CSI */
	check_escape("\xe2\x81\xa6x", "\\u{2066}x");                         /* LRI */
	check_escape("\xe2\x80\xa8", "\\u{2028}");                           /* line separator */
	check_escape("\xff\xfe", "\\xff\\xfe");                              /* not UTF-8 */
	check_escape("\xc0\xaf", "\\xc0\\xaf");                              /* overlong '/' */
	check_escape("\xed\xa0\x80", "\\xed\\xa0\\x80");                     /* a surrogate */
	check_escape("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");                /* an emoji is plain */

	char *out = NULL, err[160];
	CU_ASSERT_EQUAL(zsp_text_unescape("a\\u{1F600}b\\x41", &out, err, sizeof err), 0);
	CU_ASSERT_STRING_EQUAL(out, "a\xf0\x9f\x98\x80" "bA");
	free(out);
	const char *bad[] = { "a\\", "\\q", "\\x4", "\\xZZ", "\\x00", "\\u{}", "\\u{0}", "\\u{110000}",
			      "\\u{d800}", "\\u{41", "\\u41", "\\u{1234567}" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		out = (char *)1;
		err[0] = '\0';
		CU_ASSERT_EQUAL(zsp_text_unescape(bad[i], &out, err, sizeof err), ZSP_EUSAGE);
		CU_ASSERT_PTR_NULL(out);
		CU_ASSERT(err[0] != '\0');
	}
}

/* Random bytes: the escape is plain (nothing that redraws a line gets through) and reads back
 * to exactly the input. */
static void test_textesc_roundtrip(void)
{
	unsigned seed = 20261130;
	char in[64];
	const unsigned char pool[] = { 'a', ' ', '\\', '"', '\n', '\r', '\t', 0x1b, 0x7f, 0x80, 0x9b,
				       0xc2, 0xc3, 0xa9, 0xe2, 0x80, 0xae, 0xa8, 0x81, 0xa6, 0xf0, 0x9f,
				       0x98, 0xff, 'x', 'u', '{', '}' };
	int failures = 0;
	for (int round = 0; round < 20000; round++) {
		size_t n = (size_t)(rand_r(&seed) % (sizeof in - 1));
		for (size_t i = 0; i < n; i++)
			in[i] = (char)(rand_r(&seed) % 2 ? pool[rand_r(&seed) % sizeof pool]
						     : 1 + rand_r(&seed) % 255);
		in[n] = '\0';
		char *e = zsp_text_escape(in), *back = NULL, err[160];
		if (!e || !zsp_text_plain(e)) {
			failures++;
		} else if (zsp_text_plain(in)) {
			failures += strcmp(e, in) != 0;
		} else if (zsp_text_unescape(e, &back, err, sizeof err) != 0 || strcmp(back, in) != 0) {
			failures++;
		}
		free(back);
		free(e);
	}
	CU_ASSERT_EQUAL(failures, 0);
}

int main(void)
{
	CU_pSuite suite;
	unsigned failures;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	suite = CU_add_suite("shell", setup, teardown);
	if (!suite || !CU_add_test(suite, "table", test_table) ||
	    !CU_add_test(suite, "argv, depth, offsets", test_argv) ||
	    !CU_add_test(suite, "limits", test_limits) ||
	    !CU_add_test(suite, "every prefix", test_prefixes) ||
	    !CU_add_test(suite, "garbage", test_garbage) ||
	    !CU_add_test(suite, "textesc table", test_textesc_table) ||
	    !CU_add_test(suite, "textesc round trip", test_textesc_roundtrip)) {
		CU_cleanup_registry();
		return CU_get_error();
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failures = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failures ? 1 : 0;
}
