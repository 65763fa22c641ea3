#!/bin/sh
# index.sh: the walk's index kept between runs (runtime/walkindex.c, doc/linux.md "The walk's
# index"). After a cold run has written it, a warm run reuses unchanged directories (-v says how
# many), and still masks: a .env added to an old directory whose mtime is then reset, one added
# deep down, one in a renamed directory, one reached through a directory replaced by a symlink.
# A truncated, flipped, garbage or foreign-owned index is rebuilt (-v says so) and the run still
# masks; the plan (--print) is the same with the index and without it; the sandbox can neither
# read nor write the index. Runs as the current user and, under root, as uid 65534.

zsp_suite=e2e-index zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

# masked FILE LABEL: FILE (relative to $ws, holding SECRET) cannot be read in the sandbox, and
# the sandbox started
masked() {
	zrun "cat '$1'"
	if grep -q SECRET "$tmp/out"; then bad "$2: $1 is readable in the sandbox"; else ok; fi
	[ "$rc" -ne 125 ] && ok || bad "$2: the sandbox did not start: $(grep -v '^ ' "$tmp/err" | head -3)"
}

# reused: the last run took directories from the index
reused() {
	n=$(sed -n "s/.*the walk's index .*: \([0-9]*\) of [0-9]* directories unchanged.*/\1/p" "$tmp/err" |
		sort -n | tail -n 1)
	[ "${n:-0}" -gt 0 ] && ok || bad "$1: no directory was taken from the index: $(grep note "$tmp/err" | head -3)"
}

for who in $(identities); do
	fresh "$who"
	unset XDG_STATE_HOME
	index=$home/.local/state/zsp/walk
	for d in a/b/c r/s x/y q2 big/1 big/2 big/3; do
		mkdir -p "$ws/$d" && (cd "$ws/$d" && seq 1 50 | xargs touch)
	done
	echo SECRET >"$ws/r/s/.env"
	echo SECRET >"$ws/q2/.env"
	mkdir -p "$ws/q" && touch "$ws/q/plain"
	mine "$ws"
	# older than the index by more than its racy window (2 s): reusable
	sleep 3
	zrun true
	[ "$rc" -eq 0 ] && [ -n "$(ls "$index" 2>/dev/null)" ] && ok ||
		bad "the first run wrote no index in $index (exit $rc): $(grep -v '^ ' "$tmp/err" | head -3)"
	masked .env "warm, the top's .env"
	reused "a warm run"

	# -- a match added to an old directory whose mtime is then set back: its ctime moved
	echo SECRET >"$ws/a/b/c/.env"
	touch -d '2020-01-01 00:00' "$ws/a/b/c"
	mine "$ws/a"
	masked a/b/c/.env "a .env added to a directory whose mtime was reset"
	zrun "cat a/b/c/.env" -p "$top_srcdir/tests/e2e/policies/nodeny.zsp"
	grep -q SECRET "$tmp/out" && ok || bad "(control) a/b/c/.env is not readable without the deny"

	# -- one added deep down, below directories the index knows
	mkdir -p "$ws/big/2/d/e/f/g" && echo SECRET >"$ws/big/2/d/e/f/g/.env" && mine "$ws/big"
	masked big/2/d/e/f/g/.env "a .env added deep down"

	# -- a renamed directory: the .env below it has a new path
	mv "$ws/r" "$ws/r2"
	masked r2/s/.env "a .env in a renamed directory"

	# -- a directory the index knows replaced by a symlink to one with a .env
	rm -rf "$ws/q" && ln -s q2 "$ws/q" && mine "$ws"
	masked q/.env "a .env through a directory replaced by a symlink"
	sleep 3
	zrun true
	masked q2/.env "warm again, the .env the symlink leads to"
	reused "a run after the changes"

	# -- nothing changed since the last run: the index is left as it was, not written again;
	# one directory changed: it is written again, and the change is seen
	sleep 3
	zrun true
	before=$(stat -c '%n %i %Y' "$index"/* | sort)
	zrun true
	after=$(stat -c '%n %i %Y' "$index"/* | sort)
	[ -n "$before" ] && [ "$before" = "$after" ] && grep -q "index stays as it was" "$tmp/err" && ok ||
		bad "an unchanged workspace: the index was written again: $before / $after"
	echo SECRET >"$ws/big/3/.env" && mine "$ws/big"
	masked big/3/.env "a .env added after an index left as it was"
	after2=$(stat -c '%n %i %Y' "$index"/* | sort)
	[ "$after" != "$after2" ] && ok || bad "a changed directory did not write the index again"
	reused "the run after an index left as it was"

	# -- a corrupt index is rebuilt, and the run still masks everything
	# an index another user owns takes root to make: the unprivileged run of the whole suite
	# (dev.sh's last pass) checks the other three, the root run all four
	hows="truncated flipped garbage"
	if [ "$(id -u)" -eq 0 ]; then
		hows="$hows foreign"
	else
		echo "note [$who] no foreign-owned index: making one takes root (the suite's root run makes it)"
	fi
	for how in $hows; do
		for f in "$index"/*; do
			case $how in
			truncated) head -c 100 "$f" >"$f.t" && cat "$f.t" >"$f" && rm -f "$f.t" ;;
			flipped) printf '\377' | dd of="$f" bs=1 seek=130 conv=notrunc 2>/dev/null ;;
			garbage) head -c 4096 /dev/urandom >"$f" ;;
			foreign) if [ "$who" = nobody ]; then chown 0:0 "$f"; else chown 65534:65534 "$f"; fi ;;
			esac
		done
		masked .env "a $how index"
		grep -q "walk's index .* is rebuilt" "$tmp/err" && ok ||
			bad "a $how index: -v does not say it is rebuilt: $(grep note "$tmp/err" | head -3)"
		for p in .env r2/s/.env a/b/c/.env big/2/d/e/f/g/.env; do masked "$p" "after a $how index"; done
		reused "the run after rebuilding a $how index"
	done

	# -- the same plan with the index and without it
	(cd "$ws" && as "$who" "$ZSP_RUN" -D WORKSPACE="$ws" --print) >"$tmp/warm" 2>"$tmp/err" ||
		bad "--print with the index failed: $(head -3 "$tmp/err")"
	rm -rf "$index"
	(cd "$ws" && as "$who" "$ZSP_RUN" -D WORKSPACE="$ws" --print) >"$tmp/cold" 2>"$tmp/err" ||
		bad "--print without the index failed: $(head -3 "$tmp/err")"
	[ -s "$tmp/warm" ] && cmp -s "$tmp/warm" "$tmp/cold" && ok ||
		bad "the plan differs with the index and without it: $(diff "$tmp/warm" "$tmp/cold" | head -5)"
	# ... and printing the plan leaves zsp's state as it was: no index written
	[ -z "$(ls -A "$index" 2>/dev/null)" ] && ok || bad "--print wrote an index: $(ls -A "$index")"

	# -- the sandbox can neither read nor write the index
	sleep 3
	zrun true
	f=$(ls "$index"/* | head -n 1)
	zrun "cat '$f' | head -c 8; ls '$index'; echo x >'$f'; : >'$index/new'; rm -f '$f'"
	if grep -q ZSPWIDX "$tmp/out" || grep -q "$(basename "$f")" "$tmp/out"; then
		bad "the sandbox can read the index: $(head -c 200 "$tmp/out")"
	else ok; fi
	[ -f "$f" ] && [ "$(head -c 7 "$f")" = ZSPWIDX ] && [ ! -e "$index/new" ] && ok ||
		bad "the sandbox changed the index in $index"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
