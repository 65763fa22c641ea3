#!/bin/sh
# masks.sh: the file masks zsp-run makes from outside the sandbox (runtime/mask.c, doc/linux.md
# "Masks"). Under the built-in policy a workspace's `.env` files are masked: each reads as
# nothing (EACCES), the command cannot unmount a mask, write through it, or chmod the mask's
# source and write through that; the source itself cannot be read. 1,000 masks start, every
# one holding. The control: the same reads under tests/e2e/policies/nodeny.zsp show the
# secret. Runs as the current user and, under root, as uid 65534.

zsp_suite=e2e-masks zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

# run POLICY SCRIPT: sh -c SCRIPT in a sandbox of POLICY ("" for the built-in) from $ws, as
# $who; stdout in $tmp/out, stderr in $tmp/err, exit status in rc
run() {
	pol=$1 script=$2
	(cd "$ws" && as "$who" "$ZSP_RUN" ${pol:+-p "$pol"} -D WORKSPACE="$ws" -- sh -c "$script") \
		</dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

for who in $(identities); do
	fresh "$who"
	nodeny=$top_srcdir/tests/e2e/policies/nodeny.zsp
	echo SECRET >"$ws/.env"
	mkdir -p "$ws/sub" && echo SECRET >"$ws/sub/.env"
	mine "$ws"

	# -- every attempt at a mask, in one run; each prints a line only when it succeeds
	run "" '
		cat .env sub/.env 2>/dev/null
		umount .env 2>/dev/null && echo UNMOUNTED
		umount -l sub/.env 2>/dev/null && echo UNMOUNTED
		echo x 2>/dev/null >.env && echo WROTE-THROUGH
		chmod 644 .env 2>/dev/null && echo CHMOD-MASK
		chmod 644 /dev/zsp-mask 2>/dev/null && echo CHMOD-SOURCE
		echo SOURCE 2>/dev/null >/dev/zsp-mask && echo WROTE-SOURCE
		cat /dev/zsp-mask 2>/dev/null && echo READ-SOURCE
		mount --bind /dev/null .env 2>/dev/null && echo REMOUNTED
		rm -f .env 2>/dev/null; mv sub/.env sub/x 2>/dev/null
		[ -e .env ] && [ -e sub/.env ] && echo STILL-THERE
		grep -cE "^Cap(Inh|Prm|Eff|Bnd|Amb):[[:space:]]*0+$" /proc/self/status'
	[ "$rc" -eq 0 ] && ok || bad "the masked sandbox did not run (exit $rc): $(grep -v '^ ' "$tmp/err" | head -3)"
	for w in SECRET UNMOUNTED WROTE-THROUGH CHMOD-MASK CHMOD-SOURCE WROTE-SOURCE READ-SOURCE REMOUNTED; do
		if grep -q "$w" "$tmp/out"; then bad "a mask gave way: $w"; else ok; fi
	done
	grep -q STILL-THERE "$tmp/out" && ok || bad "a masked file could be removed or renamed: $(cat "$tmp/out")"
	[ "$(tail -1 "$tmp/out")" = 5 ] && ok || bad "the command has capabilities: $(tail -1 "$tmp/out")"
	grep SECRET "$ws/.env" >/dev/null && grep SECRET "$ws/sub/.env" >/dev/null && ok ||
		bad "the host's .env files changed"
	run "$nodeny" 'cat .env sub/.env'
	[ "$(grep -c SECRET "$tmp/out")" = 2 ] && ok || bad "(control) the .env files are not readable without the deny"

	# -- 1,000 masks: all hold, and the launch does not refuse
	i=0
	while [ $i -lt 1000 ]; do
		mkdir -p "$ws/many/d$i" && echo SECRET >"$ws/many/d$i/.env"
		i=$((i + 1))
	done
	mine "$ws/many"
	run "" 'cat many/d*/.env 2>/dev/null; ls many | wc -l'
	[ "$rc" -eq 0 ] && ok || bad "1,000 masks: the sandbox did not start (exit $rc): $(grep -v '^ ' "$tmp/err" | head -3)"
	if grep -q SECRET "$tmp/out"; then bad "1,000 masks: $(grep -c SECRET "$tmp/out") .env readable"; else ok; fi
	[ "$(tail -1 "$tmp/out")" = 1000 ] && ok || bad "1,000 masks: the directories are not all there"
	run "$nodeny" 'cat many/d*/.env | grep -c SECRET'
	[ "$(tail -1 "$tmp/out")" = 1000 ] && ok || bad "1,000 masks (control): $(tail -1 "$tmp/out") readable"
	rm -rf "$ws/many"

	# -- a mask's path changed between the launch's walk and the mask (the walk found sub/.env;
	# then, before bwrap starts, a wrapper in its place changes the tree as another program of
	# the host could): a path that leads through a symbolic link now, or is a directory now,
	# refuses the launch (the command never runs); a new file at the path is masked all the
	# same; a file gone has nothing left to hide
	real_bwrap=$(command -v bwrap)
	mkdir -p "$world/elsewhere" && echo SECRET2 >"$world/elsewhere/.env"
	mine "$world/elsewhere"
	for how in link dir newfile gone; do
		case $how in
		link) change="mv '$ws/sub' '$ws/sub.old' && ln -s '$world/elsewhere' '$ws/sub'" ;;
		dir) change="rm '$ws/sub/.env' && mkdir '$ws/sub/.env'" ;;
		newfile) change="mv '$ws/sub' '$ws/sub.old' && mkdir '$ws/sub' && echo SECRET3 >'$ws/sub/.env'" ;;
		gone) change="rm '$ws/sub/.env'" ;;
		esac
		rm -rf "$ws/sub" "$ws/sub.old" "$ws/ran"
		mkdir -p "$ws/sub" && echo SECRET >"$ws/sub/.env"
		mine "$ws"
		printf '#!/bin/sh\n%s || exit 99\nexec %s "$@"\n' "$change" "$real_bwrap" >"$tmp/bwrap-$how"
		chmod 755 "$tmp/bwrap-$how"
		(cd "$ws" && ZSP_BWRAP=$tmp/bwrap-$how as "$who" "$ZSP_RUN" -D WORKSPACE="$ws" -- \
			sh -c 'touch ran; cat sub/.env 2>/dev/null; true') </dev/null >"$tmp/out" 2>"$tmp/err"
		rc=$?
		case $how in
		link | dir)
			[ "$rc" -ne 0 ] && [ ! -e "$ws/ran" ] && ok ||
				bad "the mask's path became a $how after the walk, and the command ran (exit $rc)"
			want="through a symbolic link now"
			[ "$how" = dir ] && want="is a directory now"
			grep -q "$want" "$tmp/err" && ok || bad "$how after the walk: stderr does not say '$want': $(head -3 "$tmp/err")"
			;;
		newfile | gone)
			[ "$rc" -eq 0 ] && [ -e "$ws/ran" ] && ok ||
				bad "$how after the walk: the command did not run (exit $rc): $(head -3 "$tmp/err")"
			;;
		esac
		if grep -q SECRET "$tmp/out"; then bad "$how after the walk: a secret was read: $(cat "$tmp/out")"; else ok; fi
	done
	rm -rf "$ws/sub" "$ws/sub.old" "$ws/ran"
	mkdir -p "$ws/sub" && echo SECRET >"$ws/sub/.env"
	mine "$ws"

	# -- --print lists what zsp-run masks, and bwrap is given no mask of its own for them
	(cd "$ws" && as "$who" "$ZSP_RUN" --print -D WORKSPACE="$ws" -- true) >"$tmp/out" 2>"$tmp/err"
	grep -qx "# masked by zsp-run: $ws/sub/.env" "$tmp/out" && ok || bad "--print does not list the mask of sub/.env"
	if grep -qx -- "$ws/sub/.env" "$tmp/out"; then bad "--print gives bwrap a mount for sub/.env"; else ok; fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
