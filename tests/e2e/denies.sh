#!/bin/sh
# denies.sh: denies that hold (backends/bwrap.c's walk, doc/linux.md "Globs"). A `.env` 100
# levels deep is masked; one below a path too long for a mount point refuses the launch, naming
# it; an unreadable directory the user owns (the sandbox could chmod it) is masked whole, and so
# is one it may search but not list; a glob over a read-only home (`~/**/.env`) masks there too;
# a workspace whose name has glob characters stays writable with its `.env` masked; a tree past
# the old 200,000-entry limit starts; the note on matches made during the run is printed once;
# a literal deny (~/.netrc, ~/.config/gh/hosts.yml) holds for a file the host creates during
# the run.
# Each case has a control: the same read in a sandbox of tests/e2e/policies/nodeny.zsp (the
# same fs rules without a deny) shows the secret. Runs as the current user and, under root,
# as uid 65534.

zsp_suite=e2e-denies zsp_up=../..
. "$(dirname "$0")/../testenv.sh"
. "$top_srcdir/tests/e2e/lib.sh"

# run WS POLICY SCRIPT: sh -c SCRIPT in a sandbox of POLICY (a file, or "" for the built-in)
# with WORKSPACE=WS, as $who from WS; stdout in $tmp/out, stderr in $tmp/err, exit status in rc
run() {
	ws_=$1 pol=$2 script=$3
	(cd "$ws_" && as "$who" "$ZSP_RUN" ${pol:+-p "$pol"} -D WORKSPACE="$ws_" -- sh -c "$script") \
		</dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
}

# hidden WS FILE LABEL [SETUP]: FILE (relative to WS, holding SECRET) cannot be read under the
# built-in policy, and can be under nodeny.zsp (SETUP runs first in the sandbox, both times)
hidden() {
	ws_=$1 f=$2 label=$3 setup=${4:-:}
	run "$ws_" "" "$setup; cat '$f'"
	if grep -q SECRET "$tmp/out"; then bad "$label: $f is readable in the sandbox"; else ok; fi
	[ "$rc" -ne 125 ] && ok || bad "$label: the sandbox did not start: $(grep -v '^ ' "$tmp/err" | head -3)"
	run "$ws_" "$nodeny" "$setup; cat '$f'"
	grep -q SECRET "$tmp/out" && ok ||
		bad "$label (control): $f is not readable without the deny: $(head -3 "$tmp/err")"
}

for who in $(identities); do
	fresh "$who"
	nodeny=$top_srcdir/tests/e2e/policies/nodeny.zsp
	if [ "$who" = nobody ]; then other=0; else other=65534; fi

	# -- a match at any depth: the walk has no depth limit
	d=$ws
	i=0
	while [ $i -lt 100 ]; do d=$d/d; i=$((i + 1)); done
	mkdir -p "$d" && echo SECRET >"$d/.env" && mine "$ws"
	hidden "$ws" "${d#"$ws"/}/.env" "a .env 100 levels deep"

	# -- an unreadable directory the user owns: the sandbox could chmod it and read it
	mkdir -p "$ws/locked" && echo SECRET >"$ws/locked/.env" && mine "$ws/locked" && chmod 000 "$ws/locked"
	hidden "$ws" locked/.env "a .env in a mode-000 directory of the user's" "chmod 700 locked 2>/dev/null"
	chmod 700 "$ws/locked"

	# -- a directory of another user's the user may search but not list: a name can be guessed
	mkdir -p "$ws/other" && echo SECRET >"$ws/other/.env" && chmod 644 "$ws/other/.env" &&
		chown -R "$other:$other" "$ws/other" && chmod 711 "$ws/other"
	hidden "$ws" other/.env "a .env in a searchable, unlistable directory of another user's"
	# ... and one it can neither list nor search is as closed inside as outside: the launch
	# goes ahead, and the file stays unreadable
	chmod 700 "$ws/other"
	run "$ws" "" "cat other/.env"
	if grep -q SECRET "$tmp/out"; then bad "a .env in another user's mode-700 directory is readable"; else ok; fi
	[ "$rc" -ne 125 ] && ok || bad "another user's mode-700 directory stops the launch: $(head -3 "$tmp/err")"
	rm -rf "$ws/other"

	# -- literal denies hold for files the host creates during the run: ~/.netrc in the home,
	# ~/.config/gh/hosts.yml below a directory missing at launch (both outside the writable roots)
	for pol in "" "$nodeny"; do
		rm -rf "$home/.netrc" "$home/.config/gh" "$ws/ready" "$ws/go"
		mkdir -p "$home/.config" && mine "$home"
		(cd "$ws" && as "$who" "$ZSP_RUN" ${pol:+-p "$pol"} -D WORKSPACE="$ws" -- sh -c "
			: >ready; i=0
			while [ ! -e go ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
			cat '$home/.netrc' '$home/.config/gh/hosts.yml'") </dev/null >"$tmp/out" 2>"$tmp/err" &
		pid=$!
		i=0
		while [ ! -e "$ws/ready" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
		echo SECRET-netrc >"$home/.netrc"
		mkdir -p "$home/.config/gh" && echo SECRET-gh >"$home/.config/gh/hosts.yml"
		mine "$home"
		: >"$ws/go"
		wait $pid
		if [ -z "$pol" ]; then
			if grep -q SECRET "$tmp/out"; then bad "a credential created on the host during the run is readable: $(cat "$tmp/out")"; else ok; fi
			[ -e "$ws/ready" ] && ok || bad "the sandbox did not start: $(grep -v '^ ' "$tmp/err" | head -3)"
		else
			[ "$(grep -c SECRET "$tmp/out")" -eq 2 ] && ok ||
				bad "(control) credentials created during the run are not readable without the deny: $(head -3 "$tmp/err")"
		fi
	done
	rm -rf "$home/.netrc" "$home/.config/gh" "$ws/ready" "$ws/go"
	# ... and nothing of the rebuild is left in the home (.local: zsp's state directory)
	[ -z "$(ls -A "$home" | grep -v -x -e .ssh -e .config -e .local)" ] && ok ||
		bad "the home holds more than it did: $(ls -A "$home")"

	# -- ... and outside the home, in a directory the user owns (a project tree in /srv): a
	# file the host creates there during the run is not in the sandbox's view. Not for root,
	# which owns every system directory (doc/linux.md "Denies of names missing at launch").
	if [ "$(as "$who" id -u)" != 0 ]; then
		mkdir -p "$world/srv/keep" && : >"$world/srv/keep/f" && mine "$world/srv"
		printf 'zsp 1;\ninclude "workspace.zsp";\npolicy "t" extends "workspace" {\n  param SRV;\n  fs { deny "${SRV}/later.txt"; }\n}\n' \
			>"$world/srvdeny.zsp"
		for pol in deny control; do
			rm -f "$world/srv/later.txt" "$ws/ready" "$ws/go"
			want=$([ $pol = deny ] && echo "-p $world/srvdeny.zsp -I $top_srcdir/examples -D SRV=$world/srv" ||
				echo "-p $nodeny")
			(cd "$ws" && as "$who" "$ZSP_RUN" $want -D WORKSPACE="$ws" -- sh -c "
				: >ready; i=0
				while [ ! -e go ] && [ \$i -lt 300 ]; do sleep 0.1; i=\$((i + 1)); done
				cat '$world/srv/later.txt'; ls '$world/srv'") </dev/null >"$tmp/out" 2>"$tmp/err" &
			pid=$!
			i=0
			while [ ! -e "$ws/ready" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
			echo SECRET-srv >"$world/srv/later.txt" && mine "$world/srv"
			: >"$ws/go"
			wait $pid
			if [ $pol = deny ]; then
				if grep -q SECRET "$tmp/out"; then bad "a denied file created outside the home during the run is readable"; else ok; fi
				grep -qx keep "$tmp/out" && ok || bad "the rebuilt $world/srv lost its entries: $(head -3 "$tmp/out") $(grep -v '^ ' "$tmp/err" | head -3)"
			else
				grep -q SECRET "$tmp/out" && ok || bad "(control) the file created outside the home is not readable without the deny: $(head -3 "$tmp/err")"
			fi
		done
		rm -rf "$world/srv" "$world/srvdeny.zsp" "$ws/ready" "$ws/go"
	else
		echo "note [$who] no rebuild outside the home: root owns the system's directories"
	fi

	# -- a glob over a directory the sandbox only reads (the home) masks there too
	mkdir -p "$home/proj2/sub" && echo SECRET >"$home/proj2/sub/.env" && mine "$home"
	run "$ws" "$top_srcdir/tests/e2e/policies/homeglob.zsp" "cat '$home/proj2/sub/.env'"
	if grep -q SECRET "$tmp/out"; then bad "~/**/.env: $home/proj2/sub/.env is readable"; else ok; fi
	[ "$rc" -ne 125 ] && ok || bad "~/**/.env: the sandbox did not start: $(head -3 "$tmp/err")"
	if grep -q 'enforced under the writable roots only' "$tmp/err"; then
		bad "~/**/.env is said to be enforced under the writable roots only"
	else ok; fi
	run "$ws" "$nodeny" "cat '$home/proj2/sub/.env'"
	grep -q SECRET "$tmp/out" && ok || bad "~/**/.env (control): not readable without the deny"

	# -- the note on matches made during the run: once per launch, not once per rule
	run "$ws" "" "true"
	n=$(grep -c 'a match that another process creates' "$tmp/err")
	[ "$n" -eq 1 ] && ok || bad "the note on matches created during the run is printed $n times"

	# -- a workspace whose name has glob characters is the workspace: writable, .env masked
	for name in 'proj[1]' 'a*b' 'x?y' '{a,b}' 'back\slash'; do
		w=$world/$name
		mkdir -p "$w" && echo SECRET >"$w/.env" && mine "$w"
		run "$w" "" "echo made >'$w/new'"
		[ "$rc" -eq 0 ] && [ "$(cat "$w/new" 2>/dev/null)" = made ] && ok ||
			bad "workspace $name: not writable (exit $rc): $(grep -v '^ ' "$tmp/err" | head -3)"
		hidden "$w" .env "workspace $name"
	done

	# -- a match below a path too long for a mount point: refused, naming it
	long=$(printf '%0200d' 0)
	(cd "$ws" && i=0 && while [ $i -lt 22 ]; do mkdir "$long" && cd "$long" || exit 1; i=$((i + 1)); done &&
		echo SECRET >.env) || bad "cannot make a path over PATH_MAX"
	mine "$ws"
	run "$ws" "" "true"
	[ "$rc" -eq 1 ] && grep -q "PATH_MAX" "$tmp/err" && grep -q "$long/$long" "$tmp/err" && ok ||
		bad "a .env past PATH_MAX: exit $rc, not a refusal (1) naming it: $(grep -v '^ ' "$tmp/err" | head -3)"
	run "$ws" "$nodeny" "true"
	[ "$rc" -eq 0 ] && ok || bad "the same tree without a deny does not start (exit $rc): $(head -3 "$tmp/err")"
	rm -rf "$ws/$long"

	# -- the names in a refusal are the command's to choose, and reach the terminal escaped: an
	# OSC sequence (sets the window title), BEL, CR, and a newline that starts a forged line
	evil=$(printf 'e\033]0;pwned\007\r\nzsp-run: note: all clear')
	(cd "$ws" && mkdir "$evil" && cd "$evil" && i=0 &&
		while [ $i -lt 22 ]; do mkdir "$long" && cd "$long" || exit 1; i=$((i + 1)); done &&
		echo SECRET >.env) || bad "cannot make a path over PATH_MAX below an escape-named directory"
	mine "$ws"
	run "$ws" "" "true"
	[ "$rc" -eq 1 ] && ok || bad "an escape-named tree past PATH_MAX: exit $rc, not 1"
	if LC_ALL=C grep -q "$(printf '[\033\007\r]')" "$tmp/err"; then
		bad "a refusal wrote the directory's control bytes to the terminal: $(head -c 200 "$tmp/err" | od -c | head -3)"
	else ok; fi
	grep -q '^zsp-run: note: all clear' "$tmp/err" && bad "a name's newline began a forged line on stderr" || ok
	grep -qF 'e\x1b]0;pwned\x07\r\nzsp-run: note: all clear' "$tmp/err" && ok ||
		bad "the refusal does not show the name escaped: $(grep -v '^ ' "$tmp/err" | head -c 300)"
	rm -rf "$ws/$evil"

	# -- no workspace size refuses: past the old limit of 200,000 entries
	big=$world/big
	mkdir -p "$big"
	i=0
	while [ $i -lt 201 ]; do
		mkdir "$big/d$i" && (cd "$big/d$i" && seq 1 1000 | xargs touch) || break
		i=$((i + 1))
	done
	echo SECRET >"$big/d200/.env"
	mine "$big"
	hidden "$big" d200/.env "a workspace of 201,201 entries"
	rm -rf "$big"
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
