#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the bindings' tests and run them in a VM against the real module:
#
#   bindings/vm/check.sh KERNEL_IMAGE MODULE_KO [RUNNER...]
#
# Runners (default: all): rust (cargo's test binaries), go (`go test -c`,
# static), python (`python3 -m unittest`, with Debian's python3 copied into
# the initramfs), eventloops (examples/eventloops), cross (holders in three
# languages killed while the others wait).  Prints one line per runner,
# "bindings: NAME: N passed, N failed, N skipped", then the total as the
# last line (scripts/summarize.sh).  A runner that never reports, a console
# problem, a timeout or a boot that never reached init: one failure each.
#
# Then, once the tree has the Debian VM (scripts/debvm/run.sh), the same
# payload runs there too, with Debian's own python3 and libraries: lines
# "bindings: debvm-NAME: ...".  Without it that run counts as skipped.
#
# Environment: BINDINGS_OUT (build/bindings), VM_TIMEOUT (2700), the VM_*
# knobs of scripts/vm/run.sh, BINDINGS_DEBVM (the Debian VM's run.sh),
# BINDINGS_BUSYBOX=0 (the Debian VM run only: check-all, where the Debian
# VM always exists).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
[ $# -ge 2 ] || { sed -n '4,5p' "$0" >&2; exit 2; }
kernel=$1 module=$2
shift 2
runners=("$@")
[ ${#runners[@]} -gt 0 ] || runners=(rust go python eventloops cross)
out=${BINDINGS_OUT:-$root/build/bindings}
payload=$out/payload
results=$out/results
mkdir -p "$out"
rm -rf "$payload" "$results"
mkdir -p "$payload"

build_failed=()
for r in "${runners[@]}"; do
	echo "bindings: building $r"
	if ! "$here/build.sh" "$r" "$payload" "$out"; then
		echo "bindings: $r: build FAILED"
		build_failed+=("$r")
		rm -rf "${payload:?}/$r"
	fi
done
gcc -Wall -O2 -I"$root/uapi" -o "$out/abi" "$root/bindings/abi.c"
"$out/abi" >"$payload/abi.txt"
cp "$here/payload.sh" "$payload/run"
: >"$payload/runners"
for r in "${runners[@]}"; do
	[ -e "$payload/$r" ] && echo "$r" >>"$payload/runners"
done

passed=0 failed=0 skipped=0
# count LOG TAG: each runner's "FAIRSEM-BINDINGS: TAGNAME: ..." line.
count() {
	local r line p f s
	for r in "${runners[@]}"; do
		line=
		[ ! -r "$1" ] || line=$(tr -d '\r' <"$1" |
			sed -n "s/^FAIRSEM-BINDINGS: $2$r: //p" | tail -n 1)
		if [[ $line =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped ]]; then
			p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} s=${BASH_REMATCH[3]}
		else
			p=0 f=1 s=0
			line="skipped (no report)"
		fi
		case " ${build_failed[*]-} " in *" $r "*) f=$((f + 1)) line+=" (build failed)" ;; esac
		echo "bindings: $2$r: $p passed, $f failed, $s skipped${line#*skipped}"
		passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	done
}
if [ "${BINDINGS_BUSYBOX:-1}" = 1 ]; then
	vmrc=0
	[ -f "$module" ] || { echo "bindings: $module: no module"; vmrc=64; }
	if [ $vmrc -eq 0 ]; then
		VM_TIMEOUT=${VM_TIMEOUT:-2700} "$root/scripts/vm/run.sh" -n bindings \
			-m "$module" "$kernel" "$payload" || vmrc=$?
	fi
	log=${VM_OUT:-$root/build/vm}/bindings.log
	count "$log" ""
	if [ -r "$log" ]; then
		while read -r l; do
			echo "bindings: $l"
			failed=$((failed + 1))
		done < <(tr -d '\r' <"$log" | grep '^FAIRSEM-VM: FAIL ' || true)
	fi
	for bit in 1:"payload exited nonzero" 2:"console problems" 4:"no exit marker" 8:"no boot" 64:"setup error"; do
		if [ $((vmrc & ${bit%%:*})) -ne 0 ]; then
			echo "bindings: vm: ${bit#*:}"
			# A nonzero payload exit is already counted by the runners.
			[ "${bit%%:*}" = 1 ] || failed=$((failed + 1))
		fi
	done
else
	echo "bindings: busybox VM: not run (BINDINGS_BUSYBOX=0); the Debian VM runs them"
fi

# The same payload in the Debian VM (scripts/debvm/, from the packaging
# work), with the system's python3 and libraries, once the tree has it.
debvm=${BINDINGS_DEBVM:-$root/scripts/debvm/run.sh}
if [ -x "$debvm" ] && [ -f "$module" ]; then
	dpayload=$out/debvm-payload
	rm -rf "$dpayload"
	cp -a "$payload" "$dpayload"
	rm -rf "$dpayload/py"
	drc=0
	"$debvm" --name bindings --module "$module" --files "$dpayload" \
		--timeout "${VM_TIMEOUT:-2700}" -- env BINDINGS_TAG=debvm- sh ./run \
		>"$out/debvm.out" 2>&1 || drc=$?
	[ "${VM_QUIET:-0}" = 1 ] || cat "$out/debvm.out"
	count "$out/debvm.out" debvm-
	grep '^FAIRSEM-VM: FAIL ' "$out/debvm.out" | sed 's/^/bindings: /' || true
	failed=$((failed + $(grep -c '^FAIRSEM-VM: FAIL ' "$out/debvm.out" || true)))
	if [ "$drc" -ge 250 ]; then
		echo "bindings: debvm: scripts/debvm/run.sh exit $drc (console problem, timeout or no boot)"
		failed=$((failed + 1))
	fi
else
	echo "bindings: debvm: no scripts/debvm/run.sh in the tree yet: skipped"
	skipped=$((skipped + 1))
fi
echo "$passed $failed $skipped" >"$results"
exec "$root/scripts/summarize.sh" "$results"
