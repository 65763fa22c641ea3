#!/bin/sh
# creds.sh: the credentials of examples/credentials.zsp stay unreadable. In a disposable home
# (-D HOME, lib.sh's `as`), every path the list denies is created holding a secret marker of
# its own, once as a file and once as a directory with a file in it, and so is every file of
# the issue's list, spelled out below (removing one from credentials.zsp fails this suite). The
# built-in policy's sandbox must show none of the markers (reads fail or show nothing), while
# the same reads on the host show them all (the control: the files are there and readable);
# the oracle (zspc --query, through --batch) must deny each path for workspace.zsp and
# read-only.zsp. Also: a credentials.zsp in the current directory, in an -I directory or in the
# data directory does not replace the built-in's list, and neither does a symbolic link into a
# secret. Runs as the current user and, under root, as uid 65534.

zsp_suite=e2e-creds zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

# The issue's list (issue 12), and the files the list's comments name: concrete files, each
# below a denied path. ~ is the disposable home.
by_hand='~/.ssh/id_ed25519
~/.aws/credentials
~/.gnupg/private-keys-v1.d/key.key
~/.netrc
~/.config/gh/hosts.yml
~/.npmrc
~/.pypirc
~/.docker/config.json
~/.kube/config
~/.git-credentials
~/.config/git/credentials
~/.config/gcloud/credentials.db
~/.config/gcloud/application_default_credentials.json
~/.azure/msal_token_cache.json
~/.oci/config
~/.config/doctl/config.yaml
~/.terraform.d/credentials.tfrc.json
~/.pulumi/credentials.json
~/.yarnrc.yml
~/.gem/credentials
~/.m2/settings.xml
~/.gradle/gradle.properties
~/.cargo/credentials.toml
~/.cargo/credentials
~/.config/hub
~/.config/glab-cli/config.yml
~/.password-store/site.gpg
~/.local/share/keyrings/login.keyring
~/.mozilla/firefox/p.default/cookies.sqlite
~/.config/google-chrome/Default/Cookies
~/.config/chromium/Default/Login Data
~/.vault-token
~/.bash_history
~/.zsh_history
~/.local/share/fish/fish_history
~/.python_history
~/.psql_history
~/.mysql_history
~/.node_repl_history
~/.claude/.credentials.json
~/.claude.json
~/.codex/auth.json
~/.config/github-copilot/hosts.json'

# The paths credentials.zsp denies, as the compiler reads them (its IR: ${HOME}/..., one per
# line), so that an entry added later is tested too.
"$ZSPC" --emit ir "$top_srcdir/examples/credentials.zsp" >"$tmp/ir" 2>"$tmp/ir.err" ||
	{ echo "FAIL cannot compile examples/credentials.zsp: $(cat "$tmp/ir.err")"; exit 1; }
from_list=$(awk '/"access": "deny"/ { d = 1; next }
	d && /"path":/ { sub(/^[^:]*: "/, ""); sub(/",?$/, ""); print; d = 0 }' "$tmp/ir")
n_list=$(printf '%s\n' "$from_list" | grep -c .)
n_src=$(grep -c '^[[:space:]]*deny "' "$top_srcdir/examples/credentials.zsp")
# every deny line of the file is one rule of the IR: none dropped as shadowed or duplicate
if [ "$n_list" -ge 40 ] && [ "$n_list" -eq "$n_src" ]; then
	passed=$((passed + 1))
else
	echo "FAIL credentials.zsp: $n_src deny lines, $n_list denied paths in its IR"
	failed=$((failed + 1))
fi

# /run/user/UID (podman's first choice) as the tests made it, to remove afterwards
run_made=
cleanup_run() {
	for d in $run_made; do rm -rf "$d"; done
	run_made=
}
trap 'cleanup_run; rm -rf "$tmp" ${shm:+"$shm"}' EXIT

# expand PATH: ~ and ${HOME} are $home, ${UID} the uid of $who (no fork: ~300 paths a pass)
expand() {
	e=$1
	case $e in
	'~/'*) e=$home/${e#'~/'} ;;
	'${HOME}/'*) e=$home/${e#'${HOME}/'} ;;
	esac
	while :; do
		case $e in
		*'${UID}'*) e=${e%%'${UID}'*}$uid${e#*'${UID}'} ;;
		*) break ;;
		esac
	done
	path=$e
}

# plant FORM LIST: each path of LIST (one per line) made, holding the marker zsp-secret-N-$$,
# N its number; FORM file: the path is the file; dir: a directory holding the file `secret`.
# Writes $tmp/paths, line N the expanded path N ("-" when it was left out). A path outside the
# home (/run/user/UID) is made only where the suite may (plant_outside), and removed after.
plant() {
	form=$1
	printf '%s\n' "$2" | grep . >"$tmp/list"
	: >"$tmp/paths"
	n=0
	old_umask=$(umask)
	umask 077
	while IFS= read -r p; do
		n=$((n + 1))
		expand "$p"
		case $path in
		"$home"/*) ;;
		*)
			if ! plant_outside "$path"; then
				echo "SKIP [$who] $path: not made ($why); the oracle is still asked"
				echo "$path" >>"$tmp/paths"
				continue
			fi
			;;
		esac
		if [ -e "$path" ] || [ -L "$path" ]; then
			bad "$path exists already"
			echo - >>"$tmp/paths"
			continue
		fi
		if [ "$form" = file ]; then
			mkdir -p "${path%/*}" && echo "zsp-secret-$n-$$" >"$path"
		else
			mkdir -p "$path" && echo "zsp-secret-$n-$$" >"$path/secret"
		fi || bad "cannot create $path"
		echo "$path" >>"$tmp/paths"
	done <"$tmp/list"
	umask "$old_umask"
	# shellcheck disable=SC2086 # run_made: a list of paths without blanks
	chown -R "$uid:$uid" "$world" $run_made
}

# plant_outside PATH: makes room for PATH below /run/user/UID, as root only: /run/user/UID
# itself when it is missing, else the first directory below it when that is missing (a real
# one, such as podman's own, is never written to). Sets $why when it cannot.
plant_outside() {
	why="the suite is not root"
	[ "$(id -u)" -eq 0 ] || return 1
	base=/run/user/$uid
	case $1 in "$base"/*/*) ;; *) why="not below $base/DIR"; return 1 ;; esac
	rel=${1#"$base"/}
	first=$base/${rel%%/*}
	if [ ! -e "$base" ]; then
		made=$base
	elif [ ! -e "$first" ]; then
		made=$first
	else
		why="$first exists already"
		return 1
	fi
	# (umask 022: /run/user and below must be searchable by the unprivileged pass's uid)
	(umask 022 && mkdir -p "${1%/*}") || { why="cannot create ${1%/*}"; return 1; }
	run_made="$run_made $made"
}

# What the sandbox (or the host, for the control) runs: every way to read each path of the
# file $1 (one per line).
reader='while IFS= read -r p; do
	[ "$p" = - ] && continue
	cat "$p"; cat "$p/secret"; find "$p" -type f -exec cat {} +; ls -la "$p"
done <"$1"'

# check_reads MODE LABEL CMD...: the reader over $tmp/paths run by CMD in $ws as $who; each
# marker must then be absent (MODE sandbox) or present (MODE host). A path that was not made
# (the SKIP of plant) is not judged.
check_reads() {
	mode=$1 label=$2
	shift 2
	(cd "$ws" && as "$who" "$@" sh -c "$reader" sh "$tmp/paths") </dev/null >"$tmp/read.out" 2>&1
	: >"$tmp/made"
	while IFS= read -r path; do
		if [ -e "$path" ]; then echo 1; else echo 0; fi >>"$tmp/made"
	done <"$tmp/paths"
	awk -v mode="$mode" -v label="$label" -v who="$who" -v pid="$$" '
	FILENAME == ARGV[1] { if (match($0, "zsp-secret-[0-9]+-" pid "$")) seen[substr($0, RSTART + 11, RLENGTH - 12 - length(pid))] = 1; next }
	FILENAME == ARGV[2] { made[FNR] = $0; next }
	$0 == "-" || !made[FNR] { next }
	mode == "sandbox" && (FNR in seen) { print "FAIL [" who "] " label ": the sandbox read " $0; next }
	mode == "host" && !(FNR in seen) { print "FAIL [" who "] " label " (control): the host cannot read " $0 " either: the case proves nothing"; next }
	{ print "ok" }' "$tmp/read.out" "$tmp/made" "$tmp/paths" >"$tmp/verdicts"
	count_verdicts
}

# count_verdicts: the ok and FAIL lines of $tmp/verdicts into the counts; the FAILs shown
count_verdicts() {
	passed=$((passed + $(grep -c '^ok$' "$tmp/verdicts")))
	failed=$((failed + $(grep -c '^FAIL' "$tmp/verdicts")))
	grep '^FAIL' "$tmp/verdicts"
}

# oracle POLICY LABEL: zspc denies `read` of every path of $tmp/paths and of what is below it
oracle() {
	: >"$tmp/req"
	while IFS= read -r path; do
		[ "$path" = - ] && continue
		printf 'read "%s"\nread "%s/secret"\n' "$path" "$path" >>"$tmp/req"
	done <"$tmp/paths"
	(cd "$ws" && as "$who" "$ZSPC" -D HOME="$home" --batch - "$top_srcdir/examples/$1") \
		<"$tmp/req" >"$tmp/ans" 2>"$tmp/ans.err"
	if [ "$(grep -c . "$tmp/ans")" -ne "$(grep -c . "$tmp/req")" ]; then
		bad "$2: zspc --batch answered $(grep -c . "$tmp/ans") of $(grep -c . "$tmp/req"): $(head -3 "$tmp/ans.err")"
		return
	fi
	paste -d '\t' "$tmp/req" "$tmp/ans" | while IFS='	' read -r req ans; do
		case $ans in
		'{"decision":"deny",'*) echo ok ;;
		*) echo "FAIL [$who] $2: the oracle does not deny $req: $(printf '%s' "$ans" | cut -c1-160)" ;;
		esac
	done >"$tmp/verdicts"
	count_verdicts
}

for who in $(identities); do
	if [ "$who" = nobody ]; then uid=65534; else uid=$(id -u); fi

	for list in by-hand list-files list-dirs; do
		fresh "$who"
		rm -rf "$home/.ssh"   # lib.sh's key: the lists make their own
		echo "not a secret" >"$home/.bashrc"
		case $list in
		by-hand) plant file "$by_hand" ;;
		list-files) plant file "$from_list" ;;
		list-dirs) plant dir "$from_list" ;;
		esac
		# the home itself stays readable (so that the sandbox cases are not vacuous)
		(cd "$ws" && as "$who" "$ZSP_RUN" -- cat "$home/.bashrc") </dev/null >"$tmp/out" 2>/dev/null
		grep -qx "not a secret" "$tmp/out" && ok || bad "$list: the sandbox cannot read ~/.bashrc at all"
		check_reads host "$list" env
		check_reads sandbox "$list: built-in policy" "$ZSP_RUN" --
		check_reads sandbox "$list: read-only.zsp" "$ZSP_RUN" -p "$top_srcdir/examples/read-only.zsp" --
		oracle workspace.zsp "$list: workspace.zsp"
		oracle read-only.zsp "$list: read-only.zsp"
		cleanup_run
	done

	# neither the current directory, -I nor the data directory replaces the built-in list:
	# a sandbox that could write a credentials.zsp there would empty it for the next run
	fresh "$who"
	echo "zsp-secret-npmrc-$$" >"$home/.npmrc"
	printf 'zsp 1;\npolicy "credentials" { }\n' >"$ws/credentials.zsp"
	[ "$who" = nobody ] && chown -R 65534:65534 "$world"
	(cd "$ws" && as "$who" env ZSP_DATADIR="$ws" "$ZSP_RUN" -D HOME="$home" -I "$ws" -- cat "$home/.npmrc") \
		</dev/null >"$tmp/out" 2>"$tmp/err"
	if grep -q "zsp-secret-npmrc" "$tmp/out"; then
		bad "a credentials.zsp in the workspace, -I and the data directory replaced the built-in list"
	elif grep -q "Permission denied" "$tmp/err"; then
		ok
	else
		bad "the decoy case did not run as expected: $(tail -2 "$tmp/err")"
	fi
	# a policy of the user's that includes it from its own directory gets that file
	mkdir "$world/mine"
	cp "$top_srcdir/examples/workspace.zsp" "$world/mine/"
	printf 'zsp 1;\npolicy "credentials" { fs { deny "~/.pypirc"; } }\n' >"$world/mine/credentials.zsp"
	[ "$who" = nobody ] && chown -R 65534:65534 "$world"
	(cd "$ws" && as "$who" "$ZSP_RUN" -p "$world/mine/workspace.zsp" -- cat "$home/.npmrc") \
		</dev/null >"$tmp/out" 2>"$tmp/err"
	grep -q "zsp-secret-npmrc" "$tmp/out" && ok ||
		bad "-p FILE: the include beside FILE was not the one used: $(tail -2 "$tmp/err")"

	# a link to a secret is no way around the mask: one in the workspace, and a dotfile that is
	# a link into a dotfiles repository (GNU stow's way)
	fresh "$who"
	mkdir -p "$world/dotfiles"
	echo "zsp-secret-stow-$$" >"$world/dotfiles/pypirc"
	ln -s "$world/dotfiles/pypirc" "$home/.pypirc"
	echo "zsp-secret-link-$$" >"$home/.vault-token"
	ln -s "$home/.vault-token" "$ws/token"
	[ "$who" = nobody ] && chown -R -h 65534:65534 "$world"
	(cd "$ws" && as "$who" "$ZSP_RUN" -- sh -c 'cat token; cat ~/.pypirc; cat "$1"' sh \
		"$world/dotfiles/pypirc") </dev/null >"$tmp/out" 2>&1
	grep -q "zsp-secret-link" "$tmp/out" && bad "a link in the workspace reads ~/.vault-token" || ok
	grep -q "zsp-secret-stow" "$tmp/out" && bad "~/.pypirc, a link into ~/dotfiles, is readable" || ok
	(cd "$ws" && as "$who" sh -c 'cat token; cat "$1"' sh "$home/.pypirc") </dev/null >"$tmp/out" 2>&1
	grep -q "zsp-secret-link" "$tmp/out" && grep -q "zsp-secret-stow" "$tmp/out" && ok ||
		bad "links (control): the host cannot read through them either"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
