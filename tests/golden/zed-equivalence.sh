#!/bin/sh
# zed-equivalence.sh: an imported Zed policy decides what Zed decides.
# tests/golden/import/equivalence/settings.json is imported with `zspc --import zed`; every line
# of cases.txt there (DECISION, REQUEST, why) is asked through `zspc --batch` and must get
# Zed's decision. Ends with "zed-equivalence: N passed, N failed".
zsp_suite=zed-equivalence zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
dir=$top_srcdir/tests/golden/import/equivalence

if ! "$ZSPC" --import zed -o "$tmp/zed.zsp" "$dir/settings.json"; then
	echo "zed-equivalence: the import failed"
	exit 1
fi
# the workspace exists so relative paths resolve inside it
mkdir -p "$tmp/ws"
grep -v '^#' "$dir/cases.txt" | cut -f2 >"$tmp/requests"
grep -v '^#' "$dir/cases.txt" | cut -f1 >"$tmp/expected"
"$ZSPC" --batch "$tmp/requests" --workspace "$tmp/ws" "$tmp/zed.zsp" >"$tmp/answers" || {
	echo "zed-equivalence: zspc --batch failed"
	exit 1
}
sed -n 's/^{"decision":"\([a-z]*\)".*/\1/p' "$tmp/answers" >"$tmp/actual"
passed=0
failed=0
n=$(wc -l <"$tmp/expected")
[ "$n" -ge 20 ] || { echo "zed-equivalence: only $n cases"; exit 1; }
i=1
while [ "$i" -le "$n" ]; do
	want=$(sed -n "${i}p" "$tmp/expected")
	got=$(sed -n "${i}p" "$tmp/actual")
	if [ "$want" = "$got" ]; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		printf 'FAIL: %s\n  Zed: %s, zsp: %s (%s)\n' "$(sed -n "${i}p" "$tmp/requests")" "$want" \
			"${got:-nothing}" "$(grep -v '^#' "$dir/cases.txt" | sed -n "${i}p" | cut -f3)"
		sed -n "${i}p" "$tmp/answers"
	fi
	i=$((i + 1))
done
echo "zed-equivalence: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
