#!/bin/sh
# run.sh: the request corpus. Each corpus/requests/*.zsp holds policies and `test` blocks of
# request -> expected decision; this runs `zspc --test` on each (symlinks.zsp and kpaths.zsp
# against workspaces of real symlinks built here, passed as -D WORKSPACE=...), then the lines of
# queries.txt through `zspc --query --format json` to check reason codes too. It fails on any
# failure, on a file whose run prints no "N passed, N failed" line, and when fewer than
# MIN_EXPECTATIONS expectations ran (a corpus that silently runs nothing must fail).
# Ends with "requests: N passed, N failed".

MIN_EXPECTATIONS=400

zsp_suite=requests zsp_up=../..
. "$(dirname "$0")/../../tests/testenv.sh"
dir=$top_srcdir/corpus/requests

# The physical path: the workspace must not itself be reached through a symlink (/tmp may be one).
tmp=$(cd "$tmp" && pwd -P) || exit 99

# The symlink workspace described at the top of symlinks.zsp.
build_tree() {
	mkdir -p "$tmp/ws/src" "$tmp/ws/docs" "$tmp/outside/zed" "$tmp/home/.ssh" "$tmp/empty" &&
	: >"$tmp/ws/src/main.c" && : >"$tmp/ws/src/lib.c" && : >"$tmp/outside/passwd" &&
	: >"$tmp/outside/zed/settings.json" && : >"$tmp/home/.ssh/id_ed25519" &&
	: >"$tmp/home/.ssh/config" &&
	ln -s /etc "$tmp/ws/link" &&
	ln -s /etc/passwd "$tmp/ws/passwd" &&
	ln -s "$tmp/ws/src" "$tmp/ws/inner" &&
	ln -s src "$tmp/ws/rel_in" &&
	ln -s ../src/main.c "$tmp/ws/docs/main" &&
	ln -s ../outside "$tmp/ws/rel_out" &&
	ln -s "$tmp/home/.ssh" "$tmp/ws/secret" &&
	ln -s ../.. "$tmp/ws/up" &&
	ln -s "$tmp/ws/hop2" "$tmp/ws/hop1" &&
	ln -s "$tmp/outside" "$tmp/ws/hop2" &&
	ln -s "$tmp/outside/created.txt" "$tmp/ws/new_out" &&
	ln -s "$tmp/ws/src/created.c" "$tmp/ws/new_in" &&
	ln -s "$tmp/outside/nodir" "$tmp/ws/gone_dir" &&
	ln -s "$tmp/outside" "$tmp/ws/cfg" &&
	ln -s "$tmp/outside/zed" "$tmp/ws/.zed" &&
	ln -s "$tmp/ws" "$tmp/wslink"
}
# The tree described at the top of kpaths.zsp.
build_kpaths_tree() {
	mkdir -p "$tmp/kws/src" "$tmp/kws/docs" "$tmp/khome/.ssh/keys" &&
	: >"$tmp/kws/README.md" && : >"$tmp/kws/src/main.c" && : >"$tmp/khome/.ssh/id_rsa" &&
	ln -s "$tmp/khome/.ssh/keys" "$tmp/kws/sshdir" &&
	ln -s ../khome/.ssh/keys "$tmp/kws/relkeys" &&
	ln -s sshdir "$tmp/kws/hop" &&
	ln -s src "$tmp/kws/inner" &&
	ln -s /proc/self/root "$tmp/kws/root" &&
	ln -s /proc/self/cwd "$tmp/kws/here" &&
	ln -s /proc "$tmp/kws/p" &&
	ln -s /proc/self/fd/0 "$tmp/kws/stdin" &&
	ln -s loop "$tmp/kws/loop"
}
if ! build_tree || ! build_kpaths_tree; then
	echo "requests: cannot build the symlink workspace in $tmp" >&2
	exit 99
fi

passed=0
failed=0
expectations=0

for src in "$dir"/*.zsp; do
	[ -f "$src" ] || continue
	name=$(basename "$src")
	set --
	case $name in
	symlinks.zsp) set -- -D "WORKSPACE=$tmp/ws" ;;
	kpaths.zsp) set -- -D "WORKSPACE=$tmp/kws" -D "HOME=$tmp/khome" ;;
	esac
	# run from an empty directory: nothing of the caller's current directory leaks in
	(cd "$tmp/empty" && exec "$ZSPC" --test "$@" "$src") >"$tmp/out" 2>&1
	rc=$?
	summary=$(sed -n 's/^\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\1 \2/p' "$tmp/out" | tail -n 1)
	if [ -z "$summary" ]; then
		echo "FAIL $name: no \"N passed, N failed\" line (exit $rc)"
		cat "$tmp/out"
		failed=$((failed + 1))
		continue
	fi
	p=${summary% *}
	f=${summary#* }
	passed=$((passed + p))
	failed=$((failed + f))
	expectations=$((expectations + p + f))
	if [ "$rc" -ne 0 ] || [ "$f" -ne 0 ]; then
		echo "FAIL $name: exit $rc, $p passed, $f failed"
		cat "$tmp/out"
		[ "$f" -ne 0 ] || failed=$((failed + 1))
	else
		echo "ok   $name: $p passed"
	fi
done

# queries.txt: DECISION REASON FILE POLICY DEFS REQUEST (DEFS: NAME=VALUE,... or -; a DEFS
# entry that starts with -- is an option of zspc, `--shell=PATH`; @TMP is the temporary
# directory holding the symlink workspace).
qp=0
qf=0
while read -r want reason file policy defs request; do
	case $want in
	'' | '#'*) continue ;;
	esac
	set --
	if [ "$defs" != - ]; then
		rest=$defs
		while [ -n "$rest" ]; do
			def=${rest%%,*}
			case $rest in
			*,*) rest=${rest#*,} ;;
			*) rest= ;;
			esac
			case $def in
			--*) set -- "$@" "$(printf '%s' "$def" | sed "s|@TMP|$tmp|g")" ;;
			*) set -- "$@" -D "$(printf '%s' "$def" | sed "s|@TMP|$tmp|g")" ;;
			esac
		done
	fi
	request=$(printf '%s' "$request" | sed "s|@TMP|$tmp|g")
	out=$(cd "$tmp/empty" && "$ZSPC" --query "$request" --policy "$policy" --format json "$@" \
		"$dir/$file" 2>&1)
	ok=false
	case $out in
	*"\"decision\":\"$want\""*)
		case $out in
		*"\"reason\":\"$reason\""*) ok=true ;;
		esac ;;
	esac
	if $ok; then
		qp=$((qp + 1))
	else
		qf=$((qf + 1))
		echo "FAIL queries.txt: $file $policy $request: expected $want ($reason)"
		echo "  got: $out"
	fi
done <"$dir/queries.txt"
if [ $((qp + qf)) -eq 0 ]; then
	echo "FAIL queries.txt: no query ran"
	qf=1
elif [ "$qf" -eq 0 ]; then
	echo "ok   queries.txt: $qp passed"
else
	echo "FAIL queries.txt: $qp passed, $qf failed"
fi
passed=$((passed + qp))
failed=$((failed + qf))

if [ "$expectations" -lt "$MIN_EXPECTATIONS" ]; then
	echo "FAIL: only $expectations expectations ran, at least $MIN_EXPECTATIONS are required"
	failed=$((failed + 1))
fi

echo "requests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
