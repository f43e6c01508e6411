#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the VM as /payload/run (bindings/vm/check.sh puts it there):
# load fairsem, run each runner present in the payload, count its results,
# unload.  One marker per runner for the host:
#   FAIRSEM-BINDINGS: NAME: N passed, N failed, N skipped
# A runner that exits nonzero without counting a failure counts one.
cd /payload
export FAIRSEM_ABI=/payload/abi.txt HOME=/tmp
fails=0

if ! insmod /modules/fairsem.ko; then
	echo "FAIRSEM-VM: FAIL insmod fairsem.ko"
	exit 1
fi

# report NAME RC P F S
report() {
	p=$3 f=$4 s=$5
	[ "$2" -eq 0 ] || [ "$f" -gt 0 ] || f=1
	[ $((p + f + s)) -gt 0 ] || f=1
	echo "FAIRSEM-BINDINGS: $1: $p passed, $f failed, $s skipped (exit $2)"
	fails=$((fails + f))
}

# libtest's "test result: ok. 3 passed; 0 failed; 1 ignored; ..." summed.
run_rust() {
	rc=0 p=0 f=0 s=0
	for t in /payload/rust/*; do
		[ -x "$t" ] || continue
		echo "--- rust: $(basename "$t")"
		"$t" --test-threads=2 >/tmp/rust.out 2>&1 || rc=$?
		cat /tmp/rust.out
		set -- $(awk '/^test result:/ { p += $4; f += $6; s += $8; n++ }
			END { print p + 0, f + 0, s + 0, n + 0 }' /tmp/rust.out)
		p=$((p + $1)) f=$((f + $2)) s=$((s + $3))
		[ "$4" -gt 0 ] || f=$((f + 1))
	done
	report rust $rc $p $f $s
}

# go test -v: top-level "--- PASS:/--- FAIL:/--- SKIP:" lines.
run_go() {
	rc=0
	/payload/go/fairsem.test -test.v -test.count=1 >/tmp/go.out 2>&1 || rc=$?
	cat /tmp/go.out
	set -- $(awk '/^--- PASS:/ { p++ } /^--- FAIL:/ { f++ } /^--- SKIP:/ { s++ }
		END { print p + 0, f + 0, s + 0 }' /tmp/go.out)
	report go $rc "$@"
}

# unittest's closing lines: "Ran N tests" and "OK"/"FAILED (failures=1, ...)".
run_python() {
	rc=0
	(cd /payload/python && PYTHONHOME=/payload/py PYTHONPATH=/payload/python \
		LD_LIBRARY_PATH=/payload/py/syslib PYTHONDONTWRITEBYTECODE=1 \
		/payload/py/bin/python3 -m unittest discover -v -s tests) >/tmp/py.out 2>&1 || rc=$?
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
			p=$((p + $1)) f=$((f + $3))
		fi
		[ $r -eq 0 ] || rc=$r
	done
	report "$name" $rc $p $f $s
}

for r in $(cat /payload/runners); do
	echo "FAIRSEM-VM: runner $r start"
	case $r in
	rust) run_rust ;;
	go) run_go ;;
	python) run_python ;;
	*) run_progs "$r" "/payload/$r" ;;
	esac
done

if ! rmmod fairsem; then
	echo "FAIRSEM-VM: FAIL rmmod fairsem (a handle left open?)"
	fails=$((fails + 1))
fi
echo "FAIRSEM-VM: dmesg begin (in the log only)"
dmesg -s 4194304
echo "FAIRSEM-VM: dmesg end"
exit $fails
