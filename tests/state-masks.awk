# state-masks.awk: a bwrap argv (one argument a line) without the masks zsp-run adds over zsp's
# own state directories (`--perms M --tmpfs DIR [--remount-ro DIR]`, DIR ending in /zsp): what
# is left is the policy's lowering, as zspc --emit bwrap prints it (tests/e2e/run.sh,
# tests/agree-params.sh). Masked files are written one way for both: bwrap's
# `--perms 0000 --ro-bind-data 4 F` (zspc) and zsp-run's `--perms 0000 --file 4 /dev/zsp-mask`
# with a `# masked by zsp-run: F` line each (doc/linux.md "Masks") become `# mask F` lines,
# sorted, after the rest. So the file is to be run on both argvs before they are compared.
{ a[NR] = $0 }
END {
	n = 0
	for (i = 1; i <= NR; i++) {
		if (a[i] == "--perms" && a[i + 2] == "--tmpfs" && a[i + 3] ~ /\/zsp$/) {
			if (a[i + 4] == "--remount-ro" && a[i + 5] == a[i + 3])
				i += 2
			i += 3
			continue
		}
		if (a[i] == "--perms" && a[i + 1] == "0000" && a[i + 2] == "--ro-bind-data" && a[i + 3] == "4") {
			m[++n] = a[i + 4]
			i += 4
			continue
		}
		if (a[i] == "--perms" && a[i + 1] == "0000" && a[i + 2] == "--file" && a[i + 3] == "4" &&
		    a[i + 4] == "/dev/zsp-mask") {
			i += 4
			continue
		}
		if (a[i] ~ /^# masked by zsp-run: /) {
			m[++n] = substr(a[i], length("# masked by zsp-run: ") + 1)
			continue
		}
		print a[i]
	}
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && m[j - 1] > m[j]; j--) {
			t = m[j]; m[j] = m[j - 1]; m[j - 1] = t
		}
	for (i = 1; i <= n; i++)
		print "# mask " m[i]
}
