#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the VM as PAYLOAD/run (bindings/vm/check.sh puts it there):
# load fairsem unless loaded, run each runner of PAYLOAD/runners, count its
# results, unload.  One marker per runner for the host:
#   FAIRSEM-BINDINGS: TAGNAME: N passed, N failed, N skipped
# A runner that exits nonzero without counting a failure counts one.
# PAYLOAD is /payload in the busybox VM, /srv/payload in the Debian VM
# (scripts/debvm/run.sh, which loads the module itself); BINDINGS_TAG
# prefixes the names ("debvm-").
P=$(cd "$(dirname "$0")" && pwd)
cd "$P" || exit 1
export FAIRSEM_ABI=$P/abi.txt HOME=/tmp
tag=${BINDINGS_TAG:-}
fails=0

if ! grep -q '^fairsem ' /proc/modules && ! insmod /modules/fairsem.ko; then
	echo "FAIRSEM-VM: FAIL insmod fairsem.ko"
	exit 1
fi

# report NAME RC P F S
report() {
	p=$3 f=$4 s=$5
	[ "$2" -eq 0 ] || [ "$f" -gt 0 ] || f=1
	[ $((p + f + s)) -gt 0 ] || f=1
	echo "FAIRSEM-BINDINGS: $tag$1: $p passed, $f failed, $s skipped (exit $2)"
	fails=$((fails + f))
}

# --- Rust: a peer suite (tokio's own tests, bindings/rust/peer): each
# "test NAME ... RESULT" line.  The tests named in $1.na (not applicable)
# run apart, after the others, and their output is kept out of the log:
# each must fail, and counts as skipped; one that passes, or does not run,
# fails, as does every other test that does not pass.  So the log shows
# libtest's "FAILED" only for a real failure.
peer_count() {
	awk -v na="$2" -v bin="$1" '
		BEGIN { while ((getline l < na) > 0) if (l != "") listed[l] = 1 }
		/^test .* \.\.\. (ok|FAILED|ignored)$/ {
			n = $2; r = $NF; seen[n] = 1; total++
			if (n in listed) {
				if (r == "FAILED") { s++; print "FAIRSEM-PEER: " bin ": " n ": not applicable, fails as listed" > "/tmp/peer.msg" }
				else { f++; print "FAIRSEM-PEER: " bin ": " n " is listed as not applicable, yet " r > "/tmp/peer.msg" }
			} else if (r == "ok") p++
			else { f++; print "FAIRSEM-PEER: " bin ": " n " " r > "/tmp/peer.msg" }
		}
		END {
			for (n in listed) if (!(n in seen)) { f++; print "FAIRSEM-PEER: " bin ": listed " n " did not run" > "/tmp/peer.msg" }
			if (!total) f++
			print p + 0, f + 0, s + 0
		}' /tmp/rust.out /tmp/rust.na.out
}

run_rust_peer() {
	peer=$(basename "$1")
	na=$(grep -v '^$' "$1.na")
	skips=$(for n in $na; do printf ' --skip %s' "$n"; done)
	# shellcheck disable=SC2086 # one word a test name
	"$1" --exact --test-threads=2 $skips >/tmp/rust.out 2>&1
	cat /tmp/rust.out
	: >/tmp/rust.na.out
	# shellcheck disable=SC2086
	[ -z "$na" ] || "$1" --exact --test-threads=1 $na >/tmp/rust.na.out 2>&1
	set -- $(peer_count "$peer" "$1.na")
	[ ! -f /tmp/peer.msg ] || { cat /tmp/peer.msg; rm -f /tmp/peer.msg; }
	echo "FAIRSEM-PEER: $peer: $1 of $(($1 + $2)) applicable tokio tests passed, $3 not applicable"
	p=$((p + $1)) f=$((f + $2)) s=$((s + $3))
}
# --- end Rust

# libtest's "test result: ok. 3 passed; 0 failed; 1 ignored; ..." summed.
run_rust() {
	rc=0 p=0 f=0 s=0
	for t in "$P"/rust/*; do
		[ -x "$t" ] || continue
		echo "--- rust: $(basename "$t")"
		if [ -f "$t.na" ]; then
			run_rust_peer "$t"
			continue
		fi
		"$t" --test-threads=2 >/tmp/rust.out 2>&1 || rc=$?
		cat /tmp/rust.out
		set -- $(awk '/^test result:/ { p += $4; f += $6; s += $8; n++ }
			END { print p + 0, f + 0, s + 0, n + 0 }' /tmp/rust.out)
		p=$((p + $1)) f=$((f + $2)) s=$((s + $3))
		[ "$4" -gt 0 ] || f=$((f + 1))
	done
	report rust $rc $p $f $s
}

# go_test OUT ARGS...: a Go test binary, its output to the log as it runs
# (a run the VM's timeout ends still shows how far it got) and to OUT; its
# status in go_rc.  -test.timeout is in ARGS: a hang panics with every
# goroutine's stack (GOTRACEBACK=all) and counts as a failure.
go_test() {
	o=$1
	shift
	{
		GOTRACEBACK=all "$@" 2>&1
		echo $? >"$o.rc"
	} | tee "$o"
	go_rc=$(cat "$o.rc")
}

# go test -v: top-level "--- PASS:/--- FAIL:/--- SKIP:" lines.
run_go() {
	rc=0
	[ ! -f "$P/go/waiters" ] || FAIRSEM_TEST_WAITERS=$(cat "$P/go/waiters")
	[ -z "${FAIRSEM_TEST_WAITERS:-}" ] || export FAIRSEM_TEST_WAITERS
	go_test /tmp/go.out "$P"/go/fairsem.test -test.v -test.count=1 -test.timeout=900s
	rc=$go_rc
	set -- $(awk '/^--- PASS:/ { p++ } /^--- FAIL:/ { f++ } /^--- SKIP:/ { s++ }
		END { print p + 0, f + 0, s + 0 }' /tmp/go.out)
	# --- Go: x/sync's own tests (bindings/go/xsync), counted in the go runner ---
	gp=$1 gf=$2 gs=$3
	[ ! -e "$P/go/xsync.tests" ] || run_go_xsync XSYNC
	if [ -e "$P/go/xsync.tests" ]; then
		export FAIRSEM_XSYNC_FAST=1
		run_go_xsync XSYNC-FAST
		unset FAIRSEM_XSYNC_FAST
	fi
	[ ! -e "$P/go/bench-go" ] || run_go_bench
	set -- "$gp" "$gf" "$gs"
	# --- end Go ---
	report go $rc "$@"
}

# --- Go: x/sync's own tests (bindings/go/xsync/gen.sh built them) ---
# Runs exactly the tests of go/xsync.tests; each must PASS (a skip, a
# failure or a test that never reports is a failure); those of go/xsync.na
# are not run and count as skipped, each printed with its reason.  Adds
# to the go runner's counts gp, gf, gs and sets rc; prints
# "FAIRSEM-XTAG: N of M passed; K not applicable".  XTAG XSYNC-FAST: with
# FAIRSEM_XSYNC_FAST=1, whose constructor makes fast semaphores (the fast
# path under x/sync's own tests).
run_go_xsync() {
	xtag=$1
	# Each test in a process of its own: TestWeightedAcquire's 10 ms
	# deadlines do not survive TestWeighted's 18 s of goroutines beside it
	# under TCG, nor, run after it in the same process, the collection of
	# their garbage (seen in CI: the first Acquire's context had expired
	# before the call began, tries[0] false; x/sync's own Weighted would
	# fail there alike, as it too checks ctx.Done() first).  Even alone,
	# a vCPU of a TCG guest on a loaded host can lose those 10 ms before
	# the call begins (ci1, load 12: tries[0] false again), so a test that
	# fails runs again, up to 3 times in all, every attempt printed: it
	# counts as passed only if an attempt passes, and says which.
	: >/tmp/xsync.out
	np=0 nf=0
	while read -r t; do
		try=1
		while :; do
			go_test /tmp/xsync.one "$P"/go/xsync.test -test.v -test.count=1 \
				-test.timeout=600s -test.run "^$t\$" </dev/null
			cat /tmp/xsync.one >>/tmp/xsync.out
			ok=0
			! grep -q "^--- PASS: $t " /tmp/xsync.one || ok=1
			if [ "$ok" = 1 ] || [ "$try" -ge 3 ]; then
				break
			fi
			echo "FAIRSEM-$xtag: RETRY $t: attempt $try failed: $(grep -m 1 -F '_test.go:' /tmp/xsync.one)"
			try=$((try + 1))
		done
		if [ "$ok" = 1 ]; then
			np=$((np + 1))
			[ "$try" -eq 1 ] || echo "FAIRSEM-$xtag: $t passed at attempt $try"
		else
			[ "$go_rc" -eq 0 ] || rc=$go_rc
			echo "FAIRSEM-$xtag: FAIL $t (not a PASS in 3 attempts)"
			nf=$((nf + 1))
		fi
	done <"$P/go/xsync.tests"
	nn=$(grep -c . "$P/go/xsync.na" || true)
	while read -r l; do echo "FAIRSEM-$xtag: not applicable: $l"; done <"$P/go/xsync.na"
	echo "FAIRSEM-$xtag: $np of $((np + nf)) passed; $nn not applicable"
	gp=$((gp + np)) gf=$((gf + nf)) gs=$((gs + nn))
}

# The binding's uncontended Acquire(ctx, 1) + Release(1) against
# libfairsem's fairsem_acquire + fairsem_release: bench/bindings' programs,
# C then Go, seven rounds.  The load of a shared TCG host swings the
# figures by twice from one second to the next, so each round's ratio
# (Go over the C measured just before it) is the figure, and the median of
# the rounds' ratios the result: "FAIRSEM-GOBENCH: ...".  Then the same in
# one process against the two bare ioctls, in alternating blocks.  Never
# judged (timing under TCG); a program that fails or prints no figure
# fails.
run_go_bench() {
	: >/tmp/gobench.out
	for i in 1 2 3 4 5 6 7; do
		"$P/go/bench-c" c-libfairsem >>/tmp/gobench.out 2>&1 || echo "FAILED bench-c" >>/tmp/gobench.out
		"$P/go/bench-go" go >>/tmp/gobench.out 2>&1 || echo "FAILED bench-go" >>/tmp/gobench.out
	done
	cat /tmp/gobench.out
	if grep -q '^FAILED' /tmp/gobench.out; then
		echo "FAIRSEM-GOBENCH: FAIL a program failed"
		gf=$((gf + 1))
		return
	fi
	line=$(awk '$1 == "RESULT" && $2 == "c-libfairsem" { c[++nc] = $3 }
		$1 == "RESULT" && $2 == "go" { g[++ng] = $3 }
		function med(a, n,   i, j, t) {
			for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
			return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
		}
		END {
			if (nc != 7 || ng != 7) exit 1
			for (i = 1; i <= 7; i++) { r[i] = g[i] / c[i]; rs = rs sprintf(" %.2f", r[i]) }
			printf "go median %.0f ns, libfairsem median %.0f ns; go/C by round%s; median %.2fx",
				med(g, 7), med(c, 7), rs, med(r, 7)
		}' /tmp/gobench.out) || line=
	if [ -z "$line" ]; then
		echo "FAIRSEM-GOBENCH: FAIL a figure is missing"
		gf=$((gf + 1))
		return
	fi
	echo "FAIRSEM-GOBENCH: uncontended Acquire(ctx, 1)+Release(1): $line (guest loadavg $(cut -d' ' -f1-3 /proc/loadavg))"
	# In one process, blocks of the binding's calls and of the two bare
	# ioctls alternating (bindings/go/overhead_test.go): the load's
	# swings fall on both.
	r=0
	"$P"/go/fairsem.test -test.run '^$' -test.bench '^BenchmarkAcquireReleaseOverTheRawIoctls$' \
		-test.benchtime 100000x -test.timeout=300s >/tmp/gobench2.out 2>&1 || r=$?
	cat /tmp/gobench2.out
	line=$(grep '^BenchmarkAcquireReleaseOverTheRawIoctls' /tmp/gobench2.out | grep 'binding/ioctls' || true)
	if [ $r -ne 0 ] || [ -z "$line" ]; then
		echo "FAIRSEM-GOBENCH: FAIL the in-process benchmark (exit $r)"
		gf=$((gf + 1))
		return
	fi
	echo "FAIRSEM-GOBENCH: in one process: $line"
}
# --- end Go ---

# unittest's closing lines: "Ran N tests" and "OK"/"FAILED (failures=1, ...)".
# The payload's own copy of Debian's python3 (busybox VM), else the system's.
run_python() {
	rc=0
	if [ -x "$P/py/bin/python3" ]; then
		set -- env PYTHONHOME="$P/py" LD_LIBRARY_PATH="$P/py/syslib" "$P/py/bin/python3"
	else
		set -- python3
	fi
	(cd "$P/python" && PYTHONPATH="$P/python" PYTHONDONTWRITEBYTECODE=1 \
		"$@" -m unittest discover -v -s tests) >/tmp/py.out 2>&1 || rc=$?
	cat /tmp/py.out
	set -- $(awk '/^Ran [0-9]+ test/ { n = $2 }
		/^(OK|FAILED)/ { gsub(/[(),]/, " ")
			for (i = 1; i <= NF; i++) { split($i, kv, "=")
				if (kv[1] == "failures" || kv[1] == "errors") f += kv[2]
				if (kv[1] == "skipped") s += kv[2] } }
		END { print n - f - s, f + 0, s + 0 }' /tmp/py.out)
	report python $rc "$@"
}

# Programs that print their own "N passed, N failed" line (event loops,
# across languages): each one's last such line.
run_progs() {
	name=$1 dir=$2
	rc=0 p=0 f=0 s=0
	for t in "$dir"/*; do
		[ -f "$t" ] && [ -x "$t" ] || continue
		echo "--- $name: $(basename "$t")"
		r=0
		"$t" >/tmp/prog.out 2>&1 || r=$?
		cat /tmp/prog.out
		line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' /tmp/prog.out | tail -n 1)
		if [ -z "$line" ]; then
			f=$((f + 1))
		else
			set -- $line
			p=$((p + $1)) f=$((f + $3)) s=$((s + ${5:-0}))
		fi
		[ $r -eq 0 ] || rc=$r
	done
	report "$name" $rc $p $f $s
}

for r in $(cat "$P/runners"); do
	echo "FAIRSEM-VM: runner $r start"
	case $r in
	rust) run_rust ;;
	go) run_go ;;
	python) run_python ;;
	*) run_progs "$r" "$P/$r" ;;
	esac
done

if ! rmmod fairsem; then
	echo "FAIRSEM-VM: FAIL ${tag}rmmod fairsem (a handle left open?)"
	fails=$((fails + 1))
fi
# The busybox VM's console is scanned for problems, so the whole ring
# buffer goes there; the Debian VM watches its own console.
if [ -z "$tag" ]; then
	echo "FAIRSEM-VM: dmesg begin (in the log only)"
	dmesg -s 4194304
	echo "FAIRSEM-VM: dmesg end"
fi
exit $fails
