#!/bin/sh
# grants.sh: zspc grant/audit and --query with the grant store: grants answer only an `ask`,
# never lift a built-in rule, a substitution or a policy deny; scopes, expiry, audit, failures.
set -u
ZSPC=${ZSPC:-${top_builddir:-.}/zspc}
tmp=$(mktemp -d)
# the runtime directory (thread grants) must be on a tmpfs
shm=$(mktemp -d "${ZSP_TEST_TMPFS:-/dev/shm}/grants.XXXXXX") || exit 99
trap 'rm -rf "$tmp" "$shm"' EXIT
case $(stat -f -c %T "$shm") in
tmpfs | ramfs) ;;
*) echo "grants: ${ZSP_TEST_TMPFS:-/dev/shm} is not a tmpfs (set ZSP_TEST_TMPFS)" >&2; exit 99 ;;
esac
pass=0
fail=0

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
		sed 's/^/  stdout: /' "$tmp/out" | head -5
		sed 's/^/  stderr: /' "$tmp/err" | head -5
	fi
}

check() {
	if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi
}

mkdir -m 700 "$tmp/state" "$shm/run" "$tmp/proj" "$tmp/other" "$tmp/proj/src"
S="--state-dir $tmp/state --runtime-dir $shm/run"
proj=$(cd "$tmp/proj" && pwd -P)
cat >"$tmp/g.zsp" <<'EOF'
zsp 1;
policy "g" {
  tool "terminal" {
    default ask;
    allow /^ls\b/;
    deny  /^git\s+push\b/;
  }
  tool "edit_file" { default ask; }
  tool "fetch"     { default ask; }
  tool "copy_path" { default ask; }
}
EOF
P="$tmp/g.zsp"
W="--workspace $proj"

# q RC DESCRIPTION REQUEST [OPTIONS]...: --query against the test policy with the private store
q() {
	want=$1
	what=$2
	req=$3
	shift 3
	expect "$want" "$what" -- "$ZSPC" --query "$req" $S $W "$@" "$P"
}

add() {
	"$ZSPC" grant add $S "$@" 2>"$tmp/add.err"
}

# ---- usage errors ---------------------------------------------------------------------------
expect 64 "grant without a command" -- "$ZSPC" grant
expect 0 "grant --help" -- "$ZSPC" grant --help
check "grant --help on stdout" 'grep -q "zspc grant add" "$tmp/out"'
expect 64 "unknown grant command" -- "$ZSPC" grant frob $S
expect 64 "add without --tool" -- "$ZSPC" grant add --exact x --allow --global $S
expect 64 "add without a matcher" -- "$ZSPC" grant add --tool terminal --allow --global $S
expect 64 "add with two matchers" -- "$ZSPC" grant add --tool terminal --exact x --host y --allow --global $S
expect 64 "add without a decision" -- "$ZSPC" grant add --tool terminal --exact x --global $S
expect 64 "add with both decisions" -- "$ZSPC" grant add --tool terminal --exact x --allow --deny --global $S
expect 64 "add without a scope" -- "$ZSPC" grant add --tool terminal --exact x --allow $S
check "says which scopes there are" 'grep -q "exactly one scope" "$tmp/err"'
expect 64 "add with two scopes" -- "$ZSPC" grant add --tool terminal --exact x --allow --global --project "$proj" $S
expect 64 "add with a missing project" -- "$ZSPC" grant add --tool terminal --exact x --allow --project "$tmp/none" $S
expect 64 "add with a relative --path" -- "$ZSPC" grant add --tool edit_file --path src --allow --global $S
expect 64 "add with a bad --expires" -- "$ZSPC" grant add --tool terminal --exact x --allow --global --expires soon $S
expect 64 "add expiring in the past" -- "$ZSPC" grant add --tool terminal --exact x --allow --global --expires @1 $S
expect 64 "add with an operand" -- "$ZSPC" grant add --tool terminal --exact x --allow --global extra $S
expect 64 "list with --tool" -- "$ZSPC" grant list --tool terminal $S
expect 64 "revoke without an ID" -- "$ZSPC" grant revoke $S
expect 64 "revoke with a non-number" -- "$ZSPC" grant revoke abc $S
expect 64 "end-thread without an ID" -- "$ZSPC" grant end-thread $S
expect 64 "audit with a bad --since" -- "$ZSPC" audit --since yesterday $S
expect 64 "audit with an unknown option" -- "$ZSPC" audit --frob $S
expect 64 "--thread without --query" -- "$ZSPC" --check --thread t "$P"
expect 64 "--query --project of a missing directory" -- "$ZSPC" --query 'terminal "x"' --project "$tmp/none" $S "$P"
expect 74 "a store in an unwritable place" -- "$ZSPC" grant list --state-dir /proc/zsp --runtime-dir "$shm/run"

# ---- the round trip: add, list, revoke --------------------------------------------------------
expect 0 "an empty list" -- "$ZSPC" grant list $S
check "nothing listed" '[ ! -s "$tmp/out" ]'
expect 0 "add a global exact grant" -- "$ZSPC" grant add --tool terminal --exact "make install" --allow --global --policy g $S
check "prints the new id" 'grep -qx "[0-9][0-9]*" "$tmp/out"'
id=$(cat "$tmp/out")
expect 0 "list" -- "$ZSPC" grant list $S
check "the grant is listed" 'grep -q "^$id	allow terminal exact \"make install\"	global policy=g" "$tmp/out"'
expect 0 "list --format json" -- "$ZSPC" grant list --format json $S
check "one JSON object per grant" 'grep -qF "{\"id\":$id,\"scope\":\"global\"" "$tmp/out" && grep -qF "\"pattern\":\"make install\",\"decision\":\"allow\",\"policy\":\"g\"" "$tmp/out"'

# ---- --query: grants answer an ask ------------------------------------------------------------
expect 2 "without the store the policy asks" -- "$ZSPC" --query 'terminal "make install"' "$P"
q 0 "an exact grant turns the ask into allow" 'terminal "make install"'
check "prints allow" 'grep -qx allow "$tmp/out"'
q 2 "exact means exact" 'terminal "make install2"'
q 0 "--format json" 'terminal "make install"' --format json
check "the JSON names the grant" 'grep -qF "\"reason\":\"grant\"" "$tmp/out" && grep -qF ",\"grant\":$id}" "$tmp/out"'
q 0 "--explain" 'terminal "make install"' --explain
check "--explain says the grant decided" 'grep -q "decision: allow (reason: grant): grant $id" "$tmp/out"'
expect 0 "revoke" -- "$ZSPC" grant revoke "$id" $S
q 2 "a revoked grant is gone" 'terminal "make install"'
expect 1 "revoke it again" -- "$ZSPC" grant revoke "$id" $S
check "says there is no such grant" 'grep -q "no grant $id" "$tmp/err"'

add --tool terminal --prefix '^cargo\s+build(\s|$)' --allow --global >/dev/null
q 0 "a prefix grant" 'terminal "cargo build --release"'
q 2 "a prefix grant is a regex" 'terminal "cargo buildx"'
add --tool edit_file --path "$proj/src" --allow --global >/dev/null
q 0 "a path grant, relative request" 'edit_file "src/main.rs"'
q 0 "a path grant, absolute request" "edit_file \"$proj/src/a/b.rs\""
q 2 "a path grant covers nothing outside" "edit_file \"$proj/srcx\""
q 2 "no escape with .." 'edit_file "src/../../other/x"'
add --tool fetch --host '*.example.com' --allow --global >/dev/null
q 0 "a host grant" 'fetch "https://docs.example.com/x"'
q 2 "a *.host grant is strict subdomains" 'fetch "https://example.com/x"'
add --tool terminal --prefix '^cargo\s+build\s+--release' --deny --global >/dev/null
q 1 "a deny grant wins over an allow grant" 'terminal "cargo build --release"'
q 0 "the allow grant still answers the rest" 'terminal "cargo build"'

# ---- never above the policy's denies -----------------------------------------------------------
add --tool terminal --exact "rm -rf /" --allow --global >/dev/null
q 1 "a grant never lifts a built-in rule" 'terminal "rm -rf /"' --format json
check "the built-in rule decided" 'grep -qF "\"reason\":\"builtin\"" "$tmp/out" && ! grep -q "\"grant\"" "$tmp/out"'
add --tool terminal --exact 'echo $(id)' --allow --global >/dev/null
q 1 "a grant never lifts a substitution" 'terminal "echo $(id)"' --format json
check "the substitution check decided" 'grep -qF "\"reason\":\"substitution\"" "$tmp/out"'
add --tool terminal --exact 'git push origin' --allow --global >/dev/null
q 1 "a grant never lifts a policy deny" 'terminal "git push origin"' --format json
check "the policy's rule decided" 'grep -qF "\"reason\":\"rule\"" "$tmp/out"'
add --tool terminal --exact 'ls -la' --deny --global >/dev/null
q 0 "grants do not touch an allow either" 'terminal "ls -la"'

# ---- scopes ------------------------------------------------------------------------------------
once=$(add --tool terminal --exact "make dist" --allow --once)
q 0 "a once grant answers once" 'terminal "make dist"'
q 2 "and is used up" 'terminal "make dist"'
add --tool terminal --exact "make docs" --allow --once --thread t1 >/dev/null
q 2 "a thread's once grant: not in another thread" 'terminal "make docs"' --thread t2
q 0 "a thread's once grant: in its thread" 'terminal "make docs"' --thread t1
add --tool terminal --exact "make check" --allow --thread t1 >/dev/null
q 0 "a thread grant in its thread" 'terminal "make check"' --thread t1
q 0 "every time" 'terminal "make check"' --thread t1
q 2 "not in another thread" 'terminal "make check"' --thread t2
q 2 "not without a thread" 'terminal "make check"'
if [ "$(stat -f -c %T "$tmp")" != tmpfs ]; then
	mkdir -m 700 "$tmp/diskrun"
	expect 74 "no thread grant in a runtime directory on disk" -- "$ZSPC" grant add --tool terminal \
		--exact "make check" --allow --thread t1 --state-dir "$tmp/state" --runtime-dir "$tmp/diskrun/zsp"
	check "says the runtime directory is not a tmpfs" 'grep -q "diskrun is not on a tmpfs" "$tmp/err"'
	check "nothing written there" '[ ! -e "$tmp/diskrun/zsp" ]'
fi
expect 0 "end-thread" -- "$ZSPC" grant end-thread t1 $S
check "says how many went" 'grep -qx 1 "$tmp/out"'
q 2 "an ended thread's grants are gone" 'terminal "make check"' --thread t1
add --tool terminal --exact "make bench" --allow --project "$tmp/proj" >/dev/null
q 0 "a project grant in its project" 'terminal "make bench"' --project "$tmp/proj"
q 0 "the project is canonical" 'terminal "make bench"' --project "$tmp/proj/src/.."
q 2 "not in another project" 'terminal "make bench"' --project "$tmp/other"
q 2 "not without a project" 'terminal "make bench"'

# copy_path needs both paths granted; a once grant is used only when the copy is allowed
add --tool copy_path --path "$proj/src" --allow --once >/dev/null
q 2 "copy: the source alone is not enough" 'copy_path "src/a.rs" "out/a.rs"'
add --tool copy_path --path "$proj/out" --allow --global >/dev/null
q 0 "copy: the once grant was kept for a copy that is allowed" 'copy_path "src/a.rs" "out/a.rs"' --format json
check "copy: the once grant answered" 'grep -qF "\"reason\":\"grant\"" "$tmp/out"'
q 2 "copy: and is used up" 'copy_path "src/a.rs" "out/a.rs"'

# --exact-escaped: what zsp-run prints for a command with control characters
add --tool terminal --exact-escaped 'make \x1b[2Kx\u{202e}y\\z' --allow --global >/dev/null
q 0 "--exact-escaped reads the escapes back" "$(printf 'terminal "make \033[2Kx\342\200\256y\\\\z"')"
expect 0 "grant list with control characters" -- "$ZSPC" grant list $S
want='exact-escaped '\''make \x1b[2Kx\u{202e}y\\z'\'''
check "grant list shows them escaped" 'grep -qF "$want" "$tmp/out" && ! LC_ALL=C grep -q "$(printf "\033")" "$tmp/out"'
expect 64 "--exact-escaped with an unknown escape" -- "$ZSPC" grant add --tool terminal --exact-escaped 'a\q' --allow --global $S
check "names the escape" 'grep -q "unknown escape at byte 1" "$tmp/err"'
expect 64 "--exact-escaped with a NUL" -- "$ZSPC" grant add --tool terminal --exact-escaped 'a\x00' --allow --global $S
expect 64 "--exact and --exact-escaped" -- "$ZSPC" grant add --tool terminal --exact a --exact-escaped b --allow --global $S

# --explain shows the request's text escaped when it could redraw the terminal
expect 0 "--explain with control characters" -- "$ZSPC" --query 'terminal "ls \x1b[2K\rok"' --explain "$P"
check "--explain escapes them" 'grep -qF "sub-commands: \`ls \\x1b[2K\\rok\`" "$tmp/out" && ! LC_ALL=C grep -q "$(printf "\033")" "$tmp/out"'

# ---- expiry ------------------------------------------------------------------------------------
add --tool terminal --exact "make soon" --allow --global --expires 1s >/dev/null
add --tool terminal --exact "make later" --allow --global --expires 1d >/dev/null
add --tool terminal --exact "make dated" --allow --global --expires 2999-01-01 >/dev/null
sleep 2
q 2 "an expired grant is ignored" 'terminal "make soon"'
q 0 "an unexpired one answers" 'terminal "make later"'
q 0 "--expires as a date" 'terminal "make dated"'
expect 0 "gc" -- "$ZSPC" grant gc $S
check "gc removed the expired grant" 'grep -qx 1 "$tmp/out"'
expect 0 "list after gc" -- "$ZSPC" grant list $S
check "the expired grant is not listed" '! grep -q "make soon" "$tmp/out" && grep -q "make later.*expires=" "$tmp/out"'

# ---- the audit trail ---------------------------------------------------------------------------
# the hash is over the policy as applied: with this machine's parameter values, given here
D="-D WORKSPACE=$proj -D HOME=/home/u -D TMPDIR=/tmp -D UID=1000 -D USER=u"
hash=$("$ZSPC" --emit ir $D "$P" | sha256sum 2>/dev/null | cut -d' ' -f1)
q 0 "--record an allow by a grant" 'terminal "make later"' --record --thread t9 --project "$tmp/proj" $D
q 2 "--record an ask" 'terminal "make unknown"' --record
q 1 "--record a deny" 'terminal "git push"' --record
expect 0 "audit" -- "$ZSPC" audit $S
check "three entries" '[ "$(wc -l <"$tmp/out")" -eq 3 ]'
check "the grant's entry" 'sed -n 1p "$tmp/out" | grep -q "allow terminal \"make later\"	reason=grant rule=\"grant [0-9]*\" policy=g sha256=[0-9a-f]\{64\} thread=t9 project=$proj"'
check "the deny names the rule" 'sed -n 3p "$tmp/out" | grep -q "deny terminal \"git push\"	reason=rule rule=\".*g.zsp:6:[0-9]*: deny /^git\\\\s+push\\\\b/\""'
if [ -n "$hash" ]; then
	check "the policy hash is the sha-256 of its IR" 'grep -q "sha256=$hash" "$tmp/out"'
fi
expect 0 "audit --format json" -- "$ZSPC" audit --format json $S
check "JSON entries with the hash" '[ "$(grep -c "\"policy_hash\":\"[0-9a-f]\{64\}\"" "$tmp/out")" -eq 3 ] && grep -qF "\"decision\":\"ask\",\"reason\":\"tool-default\"" "$tmp/out"'
expect 0 "audit --since the future" -- "$ZSPC" audit --since 2999-01-01T00:00Z $S
check "nothing that late" '[ ! -s "$tmp/out" ]'
expect 0 "audit --since 1h" -- "$ZSPC" audit --since 1h $S
check "everything of the last hour" '[ "$(wc -l <"$tmp/out")" -eq 3 ]'
printf 'terminal "make later"\nterminal oops\nterminal "make x"\n' >"$tmp/batch"
expect 0 "--batch with grants and --record" -- "$ZSPC" --batch "$tmp/batch" --record $S $W "$P"
check "the batch names the grant" 'sed -n 1p "$tmp/out" | grep -q "\"grant\":[0-9]*}$" && sed -n 3p "$tmp/out" | grep -q "\"decision\":\"ask\""'
expect 0 "audit after the batch" -- "$ZSPC" audit $S
check "two more entries (not the malformed line)" '[ "$(wc -l <"$tmp/out")" -eq 5 ]'

# ---- a store that cannot be read: the policy alone decides, never an allow ---------------------
add --tool terminal --exact "make corrupt" --allow --global >/dev/null
q 0 "before the damage" 'terminal "make corrupt"'
printf 'this is not a database, not at all; it is long enough to be a header of sorts\n' >"$tmp/state/grants.db"
q 2 "a corrupt grants.db: the policy's ask, not allow" 'terminal "make corrupt"' --format json
check "a clear error naming the file" 'grep -q "grant store: .*grants.db" "$tmp/err" && grep -q "deciding without grants" "$tmp/err"'
check "the JSON carries the store error" 'grep -q "\"store_error\":\".*grants.db" "$tmp/out" && grep -qF "\"decision\":\"ask\"" "$tmp/out"'
q 74 "--record into a corrupt store fails" 'terminal "make corrupt"' --record
check "and still prints the policy's answer" 'grep -qx ask "$tmp/out"'
q 0 "an allow needs no store" 'terminal "ls"'
expect 74 "grant list on a corrupt store" -- "$ZSPC" grant list $S
expect 74 "grant add on a corrupt store" -- "$ZSPC" grant add --tool terminal --exact x --allow --global $S
expect 74 "audit on a corrupt store" -- "$ZSPC" audit $S

echo "grants: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
