#!/bin/sh
# launch-bench.sh: what zsp-run costs on top of bwrap, measured in one run: the median wall time of
# `zsp-run -p POLICY -- /bin/true` against a bare bwrap given the same argv and BPF program
# (and `firejail --noprofile /bin/true` when firejail is installed), with hyperfine.
# Usage: bench/launch-bench.sh [POLICY]   (env: ZSP_RUN, ZSPC, RUNS, BIG; run from the build dir)
# Then the same in a workspace of BIG files (default 100000; 0: skip; the issue's 1,000,000-file
# figure: BIG=1000000), a git repository with all of them in its index: what the walks of a large
# repository cost (protected names below the top at launch, the check after the run).
# The workspace and TMPDIR are scratch directories in which every protected name exists, so the
# argv has no placeholder, and the bare bwrap is given the very options zsp-run gives it
# (zsp-run --print): both commands mount exactly the same things; the bare bwrap runs /bin/true
# through zsp's exec step (zsp-exec beside zsp-run) as zsp-run does.
set -eu
ZSP_RUN=${ZSP_RUN:-./zsp-run}
ZSPC=${ZSPC:-./zspc}
RUNS=${RUNS:-50}
policy=${1:-$(dirname "$0")/../examples/workspace.zsp}
die() { echo "launch-bench: $*" >&2; exit 1; }
command -v hyperfine >/dev/null 2>&1 || die "needs hyperfine (apt-get install hyperfine)"
[ -x "$ZSP_RUN" ] && [ -x "$ZSPC" ] || die "build zsp-run and zspc first (or set ZSP_RUN, ZSPC)"
ZSP_RUN=$(cd "$(dirname "$ZSP_RUN")" && pwd)/$(basename "$ZSP_RUN")
ZSPC=$(cd "$(dirname "$ZSPC")" && pwd)/$(basename "$ZSPC")
policy=$(cd "$(dirname "$policy")" && pwd)/$(basename "$policy")
bwrap=$(command -v bwrap) || die "needs bwrap"
exec_step=$(dirname "$ZSP_RUN")/zsp-exec
[ -x "$exec_step" ] || die "no zsp-exec beside $ZSP_RUN"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/zsp-launch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
for d in "$tmp/ws" "$tmp/tmp"; do
	mkdir -p "$d/.git/hooks" "$d/.claude/commands" "$d/.claude/agents"
	: >"$d/.git/config"
	for n in .agents .codex .zed .vscode .idea .gitconfig .gitmodules .bashrc .bash_profile \
		.zshrc .zprofile .profile .ripgreprc .mcp.json; do
		mkdir -p "$d/$n"
	done
done
# a home of the bench's own (`~` is -D HOME), where every mounted cache's place exists too
mkdir -p "$tmp/home/.cargo/registry" "$tmp/home/.cargo/git" "$tmp/home/.m2/repository"
cd "$tmp/ws"
export TMPDIR="$tmp/tmp" XDG_STATE_HOME="$tmp/state"   # the sandboxes' caches: not the real ones
# bare_args FILE: the options zsp-run gives bwrap here (--print: one shell-quoted word a line;
# its sandbox's own directories bound by path rather than by descriptor), NUL-separated
bare_args() {
	"$ZSP_RUN" -Wno-unenforced -D HOME="$tmp/home" -p "$policy" -- /bin/true >/dev/null 2>&1 ||
		die "zsp-run cannot run /bin/true here: run it by hand to see why"
	"$ZSP_RUN" -Wno-unenforced -D HOME="$tmp/home" -p "$policy" --print >"$1.argv" 2>/dev/null ||
		die "zsp-run --print failed"
	(eval "set -- $(tr '\n' ' ' <"$1.argv")" && printf '%s\0' "$@") >"$1"
}
bare_args "$tmp/args"
"$ZSPC" --emit bpf -o "$tmp/bpf" "$policy" 2>/dev/null

set -- "$ZSP_RUN -D HOME=$tmp/home -p $policy -- /bin/true" \
	"$bwrap --args 5 -- /dev/zsp-exec -- /bin/true 5<$tmp/args 3<$tmp/bpf 4</dev/null 7<$exec_step"
names="zsp-run bwrap"
if command -v firejail >/dev/null 2>&1; then
	set -- "$@" "firejail --quiet --noprofile /bin/true"
	names="$names firejail"
fi
hyperfine --style basic --warmup 3 --runs "$RUNS" --export-json "$tmp/h.json" "$@" >/dev/null 2>&1 ||
	die "hyperfine failed: run it by hand to see why: hyperfine '$1'"
# medians, in ms, and the ratio to the bare bwrap
awk -v names="$names" '
	/"median":/ { gsub(/[",]/, "", $2); m[++n] = $2 * 1000 }
	END {
		split(names, nm, " ")
		for (i = 1; i <= n; i++)
			printf "%-9s median %7.2f ms  %5.2fx bare bwrap\n", nm[i], m[i], m[i] / m[2]
	}' "$tmp/h.json"
printf 'BPF program: %s instructions; bwrap argv: %s arguments\n' \
	"$(($(wc -c <"$tmp/bpf") / 8))" "$(tr -cd '\0' <"$tmp/args" | wc -c)"

BIG=${BIG:-100000}
[ "$BIG" -gt 0 ] || exit 0
big=$tmp/big
mkdir -p "$big/.claude/commands" "$big/.claude/agents"
i=0
while [ "$i" -lt "$((BIG / 100))" ]; do
	mkdir -p "$big/d$((i / 100))/e$i"
	i=$((i + 1))
done
# 100 empty files per directory
find "$big" -mindepth 2 -maxdepth 2 -type d -name 'e*' -exec sh -c 'cd "$1" && touch $(seq -f f%g 1 100)' _ {} \;
# a real repository with every file in its index: each run copies the index into git's layer
# (doc/host-later.md) and the check after the run walks the tree
git -C "$big" init -q && git -C "$big" add -A ||
	die "git cannot make the large workspace a repository"
cd "$big"
bare_args "$tmp/bigargs"
set -- "$ZSP_RUN -Wno-unenforced -D HOME=$tmp/home -p $policy -- /bin/true" \
	"$bwrap --args 5 -- /dev/zsp-exec -- /bin/true 5<$tmp/bigargs 3<$tmp/bpf 4</dev/null 7<$exec_step"
hyperfine --style basic --warmup 2 --runs "$((RUNS / 5 + 3))" --export-json "$tmp/b.json" "$@" >/dev/null 2>&1 ||
	die "hyperfine failed in the large workspace: run it by hand: hyperfine '$1'"
awk -v n="$(find "$big" | wc -l)" '
	/"median":/ { gsub(/[",]/, "", $2); m[++k] = $2 * 1000 }
	END {
		printf "in a workspace of %d entries:\n", n
		printf "zsp-run   median %7.2f ms  %5.2fx bare bwrap\n", m[1], m[1] / m[2]
		printf "bwrap     median %7.2f ms  %5.2fx bare bwrap\n", m[2], 1
	}' "$tmp/b.json"
