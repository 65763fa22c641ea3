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

	# -- --print lists what zsp-run masks, and bwrap is given no mask of its own for them
	(cd "$ws" && as "$who" "$ZSP_RUN" --print -D WORKSPACE="$ws" -- true) >"$tmp/out" 2>"$tmp/err"
	grep -qx "# masked by zsp-run: $ws/sub/.env" "$tmp/out" && ok || bad "--print does not list the mask of sub/.env"
	if grep -qx -- "$ws/sub/.env" "$tmp/out"; then bad "--print gives bwrap a mount for sub/.env"; else ok; fi
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
