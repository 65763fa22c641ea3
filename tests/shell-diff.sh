#!/bin/sh
# shell-diff.sh: the splitter (compiler/shell.c) against bash. Every script of
# tests/shell-diff.txt, and the scripts generated here from a fixed seed, runs under `bash -x`
# with stub commands s0..s99 (they only exit 0) as the only programs on PATH, in a throwaway
# directory. Each stub bash ran (its xtrace line) must be a command zsp listed
# (tests/unit/sh_split), unless zsp called the script unsupported. Ends with
# "shell-diff: N passed, N failed, N unsupported".
#
# SHELL_DIFF_SEED and SHELL_DIFF_COUNT choose the generated scripts (default 1 and 300).

zsp_suite=shell-diff zsp_up=..
. "$(dirname "$0")/testenv.sh"

TIMEOUT=$(command -v timeout) || TIMEOUT=
BASH=$(command -v bash) || {
	echo "shell-diff: no bash" >&2
	exit 77
}
SPLIT=${SH_SPLIT:-$top_builddir/tests/unit/sh_split}
[ -x "$SPLIT" ] || {
	echo "shell-diff: no $SPLIT" >&2
	exit 99
}
seed=${SHELL_DIFF_SEED:-1}
count=${SHELL_DIFF_COUNT:-300}

mkdir "$tmp/bin" "$tmp/run" "$tmp/cases" || exit 99
i=0
while [ $i -lt 100 ]; do
	printf '#!/bin/sh\nexit 0\n' >"$tmp/bin/s$i"
	chmod +x "$tmp/bin/s$i"
	i=$((i + 1))
done

# The collected scripts: one per file, split at lines "%%".
awk -v dir="$tmp/cases" '
	BEGIN { n = 0; f = sprintf("%s/c%04d", dir, n) }
	/^%%$/ { close(f); n++; f = sprintf("%s/c%04d", dir, n); next }
	{ printf "%s\n", $0 > f }
' "$top_srcdir/tests/shell-diff.txt" || exit 99

# The generated ones: statements and words of the kinds agents type, nested, each simple
# command a fresh stub.
awk -v dir="$tmp/cases" -v seed="$seed" -v count="$count" '
	function pick(n) { return int(rand() * n) }
	function stub() { return "s" (next_stub++ % 100) }
	function word(d,   k) {
		k = pick(d > 0 ? 22 : 14)
		if (k == 0) return "a"
		if (k == 1) return "\x27q t\x27"
		if (k == 2) return "\"d q\""
		if (k == 3) return "$\x27x\\ty\x27"
		if (k == 4) return "\\$x"
		if (k == 5) return "a\\\nb"
		if (k == 6) return ">/dev/null"
		if (k == 7) return "2>&1"
		if (k == 8) return "$((1+2))"
		if (k == 9) return "\"$HOME\""
		if (k == 10) return "x{a,b}"
		if (k == 11) return "\x27#\x27"
		if (k == 12) return "\"a\\\"b\""
		if (k == 13) return "$\x27\\x41\x27"
		if (k == 14) return "\"$(" simple(d - 1) ")\""
		if (k == 15) return "`" simple(d - 1) "`"
		if (k == 16) return "<(" simple(d - 1) ")"
		if (k == 17) return ">(" simple(d - 1) ")"
		if (k == 18) return "<<<\"$(" simple(d - 1) ")\""
		if (k == 19) return "$(" stmt(d - 1) ")"
		if (k == 20) return "\"`" simple(d - 1) "`\""
		return "$(" simple(d - 1) " | " simple(d - 1) ")"
	}
	function name(   s, k) {
		s = stub()
		k = pick(8)
		if (k == 0) return "\x27" s "\x27"
		if (k == 1) return "\"" s "\""
		if (k == 2) return "\\" s
		if (k == 3) return "X=1 " s
		if (k == 4) return "s\\\n" substr(s, 2)
		return s
	}
	function simple(d,   s, n) {
		s = name()
		for (n = pick(3); n > 0; n--) s = s " " word(d)
		return s
	}
	function delim(   k) {
		k = pick(8)
		if (k == 0) return "EOF EOF"
		if (k == 1) return "\x27EOF\x27 EOF"
		if (k == 2) return "\"EOF\" EOF"
		if (k == 3) return "$\x27EOF\x27 EOF"
		if (k == 4) return "E\\OF EOF"
		if (k == 5) return "-EOF \tEOF"
		if (k == 6) return "\"E\"OF EOF"
		return "$EOF $EOF"
	}
	function body(d,   k, s, n) {
		s = ""
		for (n = pick(3) + 1; n > 0; n--) {
			k = pick(8)
			if (k == 0) s = s "text " stub() "\n"
			else if (k == 1) s = s "$(" simple(d) ")\n"
			else if (k == 2) s = s "`" simple(d) "`\n"
			else if (k == 3) s = s "\\$(" stub() ")\n"
			else if (k == 4) s = s "E\\\nOF\n"
			else if (k == 5) s = s "x\\\\\n"
			else if (k == 6) s = s "$HOME ${x:-" stub() "}\n"
			else s = s "\t" stub() "\n"
		}
		return s
	}
	function heredoc(d,   dl, sp) {
		split(delim(), dl, " ")
		return simple(0) " <<" dl[1] "\n" body(d) (dl[2] == "\tEOF" ? "\tEOF" : dl[2]) "\n" stmt(d)
	}
	function stmt(d,   k) {
		if (d <= 0) return simple(0)
		k = pick(20)
		if (k == 0) return stmt(d - 1) "\n" stmt(d - 1)
		if (k == 1) return simple(d - 1) " && " simple(d - 1)
		if (k == 2) return simple(d - 1) " || " simple(d - 1)
		if (k == 3) return simple(d - 1) " | " simple(d - 1)
		if (k == 4) return "if " simple(d - 1) "\nthen\n" stmt(d - 1) "\nelse\n" stmt(d - 1) "\nfi"
		if (k == 5) return "for i in 1 2\ndo\n" stmt(d - 1) "\ndone"
		if (k == 6) return "case x in\nx) " stmt(d - 1) "\n;;\nesac"
		if (k == 7) return "f() {\n" stmt(d - 1) "\n}\nf"
		if (k == 8) return "(\n" stmt(d - 1) "\n)"
		if (k == 9) return "{\n" stmt(d - 1) "\n}"
		if (k == 10) return heredoc(d - 1)
		if (k == 11) return "[[ -e <(" simple(d - 1) ") ]] && " simple(d - 1)
		if (k == 12) return "x=$(" stmt(d - 1) "\n)\n" simple(d - 1)
		if (k == 13) return "((1+2)) && " simple(d - 1)
		if (k == 14) return simple(d - 1) " <<< \"$(" simple(d - 1) ")\""
		if (k == 15) return "until " simple(d - 1) "\ndo\n" stmt(d - 1) "\ndone"
		if (k == 16) return simple(d - 1) " # " stub()
		if (k == 17) return "echo \"$(" stmt(d - 1) "\n)\""
		if (k == 18) return simple(d - 1) " &\nwait"
		return simple(d)
	}
	BEGIN {
		srand(seed)
		for (c = 0; c < count; c++) {
			f = sprintf("%s/g%04d", dir, c)
			printf "%s\n", stmt(1 + pick(3)) > f
			close(f)
		}
	}
' || exit 99

passed=0
failed=0
unsupported=0
for f in "$tmp"/cases/*; do
	# bash runs it with nothing but the stubs; its xtrace goes to fd 9
	(cd "$tmp/run" && exec env -i PATH="$tmp/bin" HOME="$tmp/run" BASH_XTRACEFD=9 \
		$TIMEOUT ${TIMEOUT:+10} "$BASH" -x -c "$(cat "$f")" 9>"$tmp/trace" >/dev/null 2>&1 </dev/null)
	sed -n 's/^++* //p' "$tmp/trace" | awk '
		{ for (i = 1; i <= NF && $i ~ /^[A-Za-z_][A-Za-z0-9_]*=/; i++) ; }
		i <= NF && $i ~ /^s[0-9]+$/ { print $i }' | sort -u >"$tmp/ran"
	"$SPLIT" "$f" >"$tmp/split" || {
		echo "FAIL $(basename "$f"): sh_split failed"
		failed=$((failed + 1))
		continue
	}
	case $(head -n 1 "$tmp/split") in
	unsupported*)
		unsupported=$((unsupported + 1))
		continue
		;;
	esac
	awk -F '\t' 'NR > 1 && $1 == "command" { print $3 }' "$tmp/split" | sort -u >"$tmp/listed"
	missing=$(comm -23 "$tmp/ran" "$tmp/listed")
	if [ -z "$missing" ] && [ -s "$tmp/ran" ]; then
		passed=$((passed + 1))
		continue
	fi
	failed=$((failed + 1))
	if [ -s "$tmp/ran" ]; then
		echo "FAIL $(basename "$f"): bash ran $(echo $missing), zsp did not list it"
	else
		echo "FAIL $(basename "$f"): bash ran no stub (a case that tests nothing)"
	fi
	sed 's/^/  | /' "$f"
	sed 's/^/  zsp: /' "$tmp/split"
done

echo "shell-diff: $passed passed, $failed failed, $unsupported unsupported"
# a run where nearly everything is unsupported checks nothing
if [ "$passed" -lt $(((passed + failed + unsupported) / 2)) ]; then
	echo "shell-diff: fewer than half of the scripts were checked" >&2
	exit 1
fi
[ "$failed" -eq 0 ]
