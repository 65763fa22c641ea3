#!/bin/sh
# cli.sh: zspc's command-line contract: exit codes, stdout/stderr split, atomic -o output.
set -u
ZSPC=${ZSPC:-${top_builddir:-.}/zspc}
src=${top_srcdir:-.}
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
pass=0
fail=0

# expect RC DESCRIPTION -- COMMAND...: checks the exit code; stdout/stderr land in $tmp/out, $tmp/err
expect() {
	want=$1
	what=$2
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	if [ "$got" -eq "$want" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL: $what: exit $got, expected $want"
		sed 's/^/  stderr: /' "$tmp/err" | head -5
	fi
}

check() {
	if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}

good="$src/examples/workspace.zsp"
printf 'zsp 1;\npolicy "p" { fs { write "/x"; deny "/x"; } }\n' >"$tmp/bad.zsp"

expect 0 "--check a good policy" -- "$ZSPC" --check "$good"
check "--check prints nothing on success" '[ ! -s "$tmp/out" ] && [ ! -s "$tmp/err" ]'
expect 0 "--emit ir" -- "$ZSPC" --emit ir "$good"
check "--emit ir writes JSON to stdout" 'head -c 1 "$tmp/out" | grep -q "{" && [ ! -s "$tmp/err" ]'
expect 1 "policy errors" -- "$ZSPC" --check "$tmp/bad.zsp"
check "errors go to stderr only" '[ ! -s "$tmp/out" ] && grep -q "bad.zsp:2:.*error" "$tmp/err"'
check "error summary line" 'tail -n 1 "$tmp/err" | grep -qx "1 error generated."'
# one diagnostics engine per run: the compiler's and the lowering's warnings, one summary line
printf 'zsp 1;\npolicy "p" {\n  param UNUSED = "x";\n  fs { read "/"; }\n  net { mode proxy; allow "a.example:443"; }\n}\n' >"$tmp/two.zsp"
expect 0 "--emit bwrap with warnings of both" -- "$ZSPC" --emit bwrap "$tmp/two.zsp"
check "compile and lowering warnings share one summary" \
	'grep -q "Wunused-param" "$tmp/err" && grep -q "Wunenforced" "$tmp/err" && [ "$(grep -c "generated\." "$tmp/err")" -eq 1 ] && tail -n 1 "$tmp/err" | grep -qx "2 warnings generated."'
expect 1 "--emit with errors" -- "$ZSPC" --emit ir "$tmp/bad.zsp"
check "no partial output on errors" '[ ! -s "$tmp/out" ]'

expect 64 "no arguments" -- "$ZSPC"
expect 64 "no mode" -- "$ZSPC" "$good"
expect 64 "unknown option" -- "$ZSPC" --frobnicate "$good"
expect 64 "two modes" -- "$ZSPC" --check --emit ir "$good"
expect 64 "unknown --emit format" -- "$ZSPC" --emit xml "$good"
expect 64 "sandbox-exec without a command" -- "$ZSPC" --emit sandbox-exec "$good"
check "says it needs the command" 'grep -q "needs the command" "$tmp/err"'
expect 64 "two files" -- "$ZSPC" --check "$good" "$good"
expect 64 "-D without =" -- "$ZSPC" --check -D WORKSPACE "$good"
expect 64 "-D bad name" -- "$ZSPC" --check -D 'A-B=1' "$good"
expect 64 "-D value with \${" -- "$ZSPC" --check -D 'WORKSPACE=${HOME}' "$good"
expect 64 "-D unknown parameter" -- "$ZSPC" --check -D NOPE=/x "$good"
check "names the parameter" 'grep -q "NOPE" "$tmp/err"'
expect 64 "unknown warning" -- "$ZSPC" --check -Wfoo "$good"
expect 64 "-o with --check" -- "$ZSPC" --check -o "$tmp/x" "$good"
expect 0 "--help" -- "$ZSPC" --help
check "--help on stdout" 'grep -q "usage: zspc" "$tmp/out"'
expect 0 "--version" -- "$ZSPC" --version
check "--version prints the version" 'grep -q "^zspc [0-9]" "$tmp/out"'

expect 66 "missing file" -- "$ZSPC" --check "$tmp/none.zsp"
check "names the missing file" 'grep -q "none.zsp" "$tmp/err"'
expect 66 "a directory" -- "$ZSPC" --check "$tmp"

# Includes must be regular files: a FIFO would block open() forever, a device never ends.
# (timeout only keeps a regression from hanging the suite; nothing here is timed.)
mkfifo "$tmp/fifo"
printf 'zsp 1;\ninclude "%s";\ninclude "/dev/zero";\n' "$tmp/fifo" >"$tmp/special.zsp"
expect 1 "include of a FIFO and a device" -- timeout 60 "$ZSPC" --check "$tmp/special.zsp"
check "both refused as not regular files" '[ "$(grep -c "not a regular file" "$tmp/err")" -eq 2 ]'
expect 66 "a device as the policy" -- timeout 60 "$ZSPC" --check /dev/zero
expect 0 "a pipe as the policy" -- sh -c 'printf "zsp 1;\npolicy \"p\" {}\n" | "$1" --check /dev/stdin' sh "$ZSPC"

expect 0 "-o writes the file" -- "$ZSPC" --emit ir -o "$tmp/ir.json" "$good"
check "-o output equals stdout output" '"$ZSPC" --emit ir "$good" | cmp -s - "$tmp/ir.json"'
check "-o leaves no temporary file" '[ "$(ls "$tmp" | grep -c "ir.json")" -eq 1 ]'
printf 'old contents\n' >"$tmp/keep.json"
expect 1 "-o with policy errors" -- "$ZSPC" --emit ir -o "$tmp/keep.json" "$tmp/bad.zsp"
check "-o keeps the old file when compilation fails" 'grep -qx "old contents" "$tmp/keep.json"'
mkdir "$tmp/ro"
chmod a-w "$tmp/ro"
if [ "$(id -u)" -ne 0 ]; then
	expect 73 "-o into a read-only directory" -- "$ZSPC" --emit ir -o "$tmp/ro/x.json" "$good"
	check "nothing created in the read-only directory" '[ -z "$(ls -A "$tmp/ro")" ]'
fi
# -o never replaces what is not a regular file: a FIFO or a device is written in place,
# a symlink keeps pointing at its target, which gets the output.
mkfifo "$tmp/out.fifo"
cat "$tmp/out.fifo" >"$tmp/fifo.read" &
reader=$!
expect 0 "-o into a FIFO" -- "$ZSPC" --emit ir -o "$tmp/out.fifo" "$good"
check "the FIFO is still a FIFO" '[ -p "$tmp/out.fifo" ]'
# a reader still waiting means nobody wrote into the FIFO: do not hang on it
[ -p "$tmp/out.fifo" ] && wait "$reader" || kill "$reader" 2>/dev/null
check "the reader got the IR" '"$ZSPC" --emit ir "$good" | cmp -s - "$tmp/fifo.read"'
printf 'old\n' >"$tmp/target.json"
ln -s target.json "$tmp/link.json"
expect 0 "-o through a symlink" -- "$ZSPC" --emit ir -o "$tmp/link.json" "$good"
check "the symlink is still a symlink" '[ -L "$tmp/link.json" ]'
check "its target has the IR" '"$ZSPC" --emit ir "$good" | cmp -s - "$tmp/target.json"'
# (a nodev mount, such as a hardened /tmp, lets mknod make the node but not open it)
if [ "$(id -u)" -eq 0 ] && mknod "$tmp/null" c 1 3 2>/dev/null && : 2>/dev/null >"$tmp/null"; then
	expect 0 "-o into a character device" -- "$ZSPC" --emit ir -o "$tmp/null" "$good"
	check "the device is still a device" '[ -c "$tmp/null" ]'
fi
expect 73 "-o naming a directory" -- "$ZSPC" --emit ir -o "$tmp" "$good"
expect 73 "-o into a missing directory" -- "$ZSPC" --emit ir -o "$tmp/nodir/x.json" "$good"
if [ -w /dev/full ]; then
	expect 74 "stdout is full" -- sh -c '"$1" --emit ir "$2" >/dev/full' sh "$ZSPC" "$good"
fi

# --query: the decision is the exit status (allow 0, deny 1, ask 2; 3 = no decision)
expect 0 "--query allow" -- "$ZSPC" --query 'terminal "cargo test --workspace"' "$good"
check "--query prints the decision" 'grep -qx allow "$tmp/out"'
expect 1 "--query deny" -- "$ZSPC" --query 'terminal "rm -rf /"' "$good"
check "deny on stdout" 'grep -qx deny "$tmp/out"'
expect 2 "--query ask" -- "$ZSPC" --query 'terminal "make install"' "$good"
expect 3 "--query with a malformed request" -- "$ZSPC" --query 'terminal ls' "$good"
check "says what is wrong with the request" 'grep -q "bad request" "$tmp/err" && [ ! -s "$tmp/out" ]'
expect 3 "--query on a policy with errors" -- "$ZSPC" --query 'terminal "ls"' "$tmp/bad.zsp"
expect 1 "--explain" -- "$ZSPC" --query 'terminal "sudo rm -rf /tmp/../.."' --explain "$good"
check "--explain names the built-in rule" 'grep -q "built-in rule rm-root" "$tmp/out" && grep -q "^  decision: deny (reason: builtin)" "$tmp/out"'
expect 1 "--format json" -- "$ZSPC" --query 'read "~/.ssh/id_rsa"' -D HOME=/home/u --format json "$good"
want_head='{"decision":"deny","exit":1,"reason":"fs-rule",'
want_rule='"rule":"deny \"/home/u/.ssh\""'
check "one JSON object with the reason and the rule" 'grep -qF "$want_head" "$tmp/out" && grep -qF "$want_rule" "$tmp/out" && [ "$(wc -l <"$tmp/out")" -eq 1 ]'
printf 'zsp 1;\npolicy "a" {}\npolicy "b" { default allow; }\n' >"$tmp/two.zsp"
expect 64 "--query needs --policy with two policies" -- "$ZSPC" --query 'mcp:s:t' "$tmp/two.zsp"
expect 0 "--policy chooses" -- "$ZSPC" --query 'mcp:s:t' --policy b "$tmp/two.zsp"
expect 64 "--policy naming nothing" -- "$ZSPC" --query 'mcp:s:t' --policy c "$tmp/two.zsp"
expect 64 "--explain without a question" -- "$ZSPC" --check --explain "$good"

# --batch: a JSON line per request, malformed lines answered and skipped over
printf '# a comment\nterminal "ls -la"\n\nterminal oops\nconnect "example.com:443"\n' >"$tmp/requests"
expect 0 "--batch FILE" -- "$ZSPC" --batch "$tmp/requests" "$good"
check "three answers, in order" '[ "$(wc -l <"$tmp/out")" -eq 3 ] && sed -n 1p "$tmp/out" | grep -q "\"decision\":\"allow\"" && sed -n 2p "$tmp/out" | grep -q "\"decision\":\"error\"" && sed -n 3p "$tmp/out" | grep -q "\"reason\":\"net-none\""'
expect 0 "--batch from stdin" -- sh -c 'printf "syscall \"ptrace\"\n" | "$1" --batch - "$2"' sh "$ZSPC" "$good"
check "stdin answered" 'grep -q "\"reason\":\"syscall-rule\"" "$tmp/out"'
expect 66 "--batch of a missing file" -- "$ZSPC" --batch "$tmp/none" "$good"

# --test: the examples pass; a wrong expectation fails with its explanation
expect 0 "--test examples/workspace.zsp" -- "$ZSPC" --test "$good"
check "--test ends with the count line" 'tail -n 1 "$tmp/out" | grep -qE "^[1-9][0-9]* passed, 0 failed$"'
printf 'zsp 1;\npolicy "p" { fs { read "/"; } }\ntest "p" {\n  expect allow read "/etc/hosts";\n  expect allow write "/etc/hosts";\n}\n' >"$tmp/t.zsp"
expect 1 "--test with a failing expectation" -- "$ZSPC" --test "$tmp/t.zsp"
check "the failure names the line, expected and actual" 'grep -q "t.zsp:5:3: FAIL: expect allow write \"/etc/hosts\"" "$tmp/out" && grep -q "actual:   deny" "$tmp/out" && tail -n 1 "$tmp/out" | grep -qx "1 passed, 1 failed"'
expect 0 "--coverage" -- "$ZSPC" --test --coverage "$good"
check "coverage lists unexercised rules" 'grep -q "not exercised" "$tmp/out" && grep -q "^coverage: [0-9]* of [0-9]* rules exercised" "$tmp/out"'
expect 1 "--coverage-min above the coverage" -- "$ZSPC" --test --coverage-min 100 "$good"
expect 64 "--coverage-min out of range" -- "$ZSPC" --test --coverage-min 101 "$good"

# --import zed
printf '{ "agent": { "tool_permissions": { "default": "confirm", "tools": { "terminal": { "always_allow": [ { "pattern": "^ls\\\\b" } ] } } } } }\n' >"$tmp/zed.json"
expect 0 "--import zed" -- "$ZSPC" --import zed -o "$tmp/zed.zsp" "$tmp/zed.json"
expect 0 "the imported policy compiles" -- "$ZSPC" --check "$tmp/zed.zsp"
expect 0 "and decides like Zed" -- "$ZSPC" --query 'terminal "ls -la"' "$tmp/zed.zsp"
expect 2 "and asks by default" -- "$ZSPC" --query 'terminal "make"' "$tmp/zed.zsp"
expect 64 "--import of an unknown format" -- "$ZSPC" --import vscode "$tmp/zed.json"

# ZSP_BWRAP, ZSP_PROBE and ZSP_DATADIR are read through zsp_cli_test_override only, which
# ignores them unless the build is a test build (tests/unit/test_overrides.c)
check "no source reads ZSP_BWRAP, ZSP_PROBE or ZSP_DATADIR itself" \
	'! grep -rn "getenv(\"ZSP_\(BWRAP\|PROBE\|DATADIR\)\")" "$src/lang" "$src/compiler" "$src/backends" "$src/runtime" "$src/programs"'

# JSON is valid UTF-8 and shows nothing raw that redraws a terminal, whatever the request holds:
# an invalid byte, a C1 control, a right-to-left override, ESC, in --batch and in --explain
printf 'terminal "echo \377 \302\233 \342\200\256 \033]0;t\007 $(x)"\n' >"$tmp/odd.txt"
expect 0 "--batch of a request with invalid UTF-8" -- "$ZSPC" --batch "$tmp/odd.txt" "$good"
check "--batch JSON is valid UTF-8" 'iconv -f UTF-8 -t UTF-8 "$tmp/out" >/dev/null 2>&1 && [ -s "$tmp/out" ]'
check "--batch JSON has no raw control, C1 or override" \
	'! LC_ALL=C grep -q "$(printf "[\001-\010\013-\037\177]\|\302[\200-\237]\|\342\200\256")" "$tmp/out"'
check "--batch JSON names the bad byte U+FFFD and the override by its number" \
	'grep -q "ufffd" "$tmp/out" && grep -q "u202e" "$tmp/out" && grep -q "u009b" "$tmp/out"'
"$ZSPC" --query "$(head -c -1 "$tmp/odd.txt")" --explain --format json "$good" >"$tmp/out" 2>"$tmp/err"
check "--explain JSON is valid UTF-8" 'iconv -f UTF-8 -t UTF-8 "$tmp/out" >/dev/null 2>&1 && [ -s "$tmp/out" ]'

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
