# state-masks.awk: a bwrap argv (one argument a line) without the masks zsp-run adds over zsp's
# own state directories (`--perms M --tmpfs DIR [--remount-ro DIR]`, DIR ending in /zsp): what
# is left is the policy's lowering, as zspc --emit bwrap prints it (tests/e2e/run.sh,
# tests/agree-params.sh).
{ a[NR] = $0 }
END {
	for (i = 1; i <= NR; i++) {
		if (a[i] == "--perms" && a[i + 2] == "--tmpfs" && a[i + 3] ~ /\/zsp$/) {
			if (a[i + 4] == "--remount-ro" && a[i + 5] == a[i + 3])
				i += 2
			i += 3
			continue
		}
		print a[i]
	}
}
