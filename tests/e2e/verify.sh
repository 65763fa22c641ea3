#!/bin/sh
# verify.sh: `zsp-run --verify` over every policy in corpus/ and examples/: the kernel must agree
# with the oracle on every sandbox expectation it can check (as the current user and, under
# root, as uid 65534). Then a deliberately broken bwrap (read-only binds made writable) must be
# caught: --verify that cannot fail would prove nothing.

zsp_suite=e2e-verify zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

for who in $(identities); do
	fresh "$who"
	for policy in "$top_srcdir"/examples/*.zsp "$top_srcdir"/corpus/requests/*.zsp; do
		name=${policy#"$top_srcdir"/}
		(cd "$ws" && as "$who" env ZSP_VERIFY_DIR="$world" "$ZSP_RUN" --verify "$policy") >"$tmp/out" 2>&1
		rc=$?
		summary=$(grep '^verify:' "$tmp/out")
		if [ "$rc" -eq 0 ] && [ -n "$summary" ]; then
			ok
			echo "[$who] $name: $summary"
		else
			bad "$name: --verify exit $rc"
			grep -v ': agree:' "$tmp/out" | head -20
		fi
	done
	# nothing of the scratch directories is left
	left=$(find "$world" -maxdepth 1 -name 'zsp-verify.*' | head -1)
	[ -z "$left" ] && ok || bad "--verify left $left behind"

	# zspc --verify is the same
	(cd "$ws" && as "$who" env ZSP_VERIFY_DIR="$world" "$ZSPC" --verify "$top_srcdir/examples/workspace.zsp") >"$tmp/out" 2>&1
	grep -q '^verify: [1-9][0-9]* agree, 0 differ' "$tmp/out" && ok || bad "zspc --verify: $(tail -1 "$tmp/out")"
done

# A broken bwrap: the same options with every --ro-bind turned into --bind.
real=$(command -v bwrap)
broken=$tmp/broken-bwrap
cat >"$broken" <<EOS
#!/bin/sh
tr '\\000' '\\n' <&5 | sed 's/^--ro-bind\$/--bind/' | tr '\\n' '\\000' >"$tmp/args.\$\$"
exec 5<"$tmp/args.\$\$"
rm -f "$tmp/args.\$\$"
exec "$real" "\$@"
EOS
chmod 755 "$broken"
who=self
fresh self
(cd "$ws" && env ZSP_BWRAP="$broken" ZSP_VERIFY_DIR="$world" "$ZSP_RUN" --verify "$top_srcdir/examples/read-only.zsp") >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'DIFFER: write' "$tmp/out"; then ok; else bad "a writable home went unnoticed (exit $rc)"; cat "$tmp/out"; fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
