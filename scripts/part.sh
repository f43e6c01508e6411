#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run one part of `make check` and record its counts:
#
#   scripts/part.sh NAME CMD [ARG...]   -> build/results/NAME.txt
#
# The counts come from the last "N passed, N failed[, N skipped]" line CMD
# prints.  A CMD that exits nonzero without counting a failure adds one; a
# CMD that prints no such line counts nothing when it succeeds (a build step)
# and one failure when it fails.  Exits with CMD's status.
#
# build/results/NAME.time gets "WALL CPU START END LANE": the part's
# elapsed time and the CPU time (user + system) of everything it ran, in
# seconds, when it started and ended (epoch), and $PART_LANE (the lane of
# check-all it ran in, or -): scripts/lanes.sh reports them.
#
# The result cache (as Bazel's action cache or ccache): a part whose
# PART_INPUTS names its inputs is run only when no passed result of the
# same inputs is kept under $FAIRSEM_CACHE/results/NAME/KEY/.  KEY is the
# sha256 of:
#   - NAME, CMD and its arguments, and the environment variables that steer
#     the tests (VM_*, PROG_TIMEOUT, FAIRSEM_*, FUZZ_*, CROSS_*, JS_*,
#     BINDINGS_*, RECIPES_*, CHECK_INSTALL, BENCH_*), the tree's path
#     written as @ROOT;
#   - this script, and every package dpkg has installed with its version
#     (the compilers, QEMU, busybox, python, ...);
#   - each word of PART_INPUTS: a file or a directory (every file below it)
#     by content, @tree for every file git knows or would add in the tree
#     (by content), @git:PATH for those of them at or below PATH (a
#     path in the tree: a file or a directory, its build products left
#     out as @tree leaves them), @names:DIR for the names of the files below DIR (not
#     their content: what a VM runs, when its programs are keyed by their
#     sources, which unlike the binaries do not hold the tree's path),
#     @cache:GLOB for the names of the entries of
#     $FAIRSEM_CACHE matching GLOB (each is named by its own inputs' key or
#     version: debvm-<key>, bindings-go-<version>, ...; not their .lock and
#     .log files, made on first use); a missing path is
#     written as missing.  A file over 512 MiB goes by size and mtime.
# Other lanes of the same run make some of those entries while a part runs
# (the debug kernel, the bindings' toolchains, the RFC's sparse): a part
# keyed before they existed would miss in every later run, which sees them
# from its start.  So a passed result is also kept under the key its inputs
# have when it ends, when only the cache's entries differ (each entry being
# named by its own inputs, its appearance changes nothing the part read).
# Only a run that exited 0 with no failure is kept; a hit says so with its
# key, replays the exact counts recorded, and puts the recorded output in
# build/results/NAME.out (and the files of PART_OUTPUTS, e.g. a console
# log, back where they were).  PART_CACHE=0 runs every part (and records
# anew); PART_CACHE=off neither reads nor writes the cache.  The newest
# four keys of each part are kept.
set -uo pipefail

[ $# -ge 2 ] || { echo "usage: $0 NAME CMD [ARG...]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
name=$1; shift
res=$root/build/results
mkdir -p "$res"
out=$res/$name.out
rm -f "$res/$name.hit"
echo "=== $name: $*"

cache=${FAIRSEM_CACHE:-/var/cache/fairsem}/results/$name
key=
# Everything the key is made of, one line each.
key_text() {
	local w f
	echo "fairsem part cache 1"
	echo "part $name"
	printf 'arg %s\n' "$@"
	env | grep -E '^(VM_[A-Z_]*|PROG_TIMEOUT|FAIRSEM_[A-Z_]*|FUZZ_[A-Z_]*|CROSS_[A-Z_]*|JS_[A-Z_]*|BINDINGS_[A-Z_]*|RECIPES_[A-Z_]*|CHECK_INSTALL|BENCH_[A-Z_]*)=' |
		grep -v '^FAIRSEM_CACHE=' | LC_ALL=C sort
	sha256sum "$0" | sed "s|  .*| part.sh|"
	# shellcheck disable=SC2016  # dpkg-query expands them
	dpkg-query -W -f='${Package} ${Version} ${Architecture}\n' |
		LC_ALL=C sort | sha256sum | sed 's/  -$/  dpkg/'
	for w in $inputs; do
		case $w in
		@tree)
			git -C "$root" ls-files -z -co --exclude-standard |
				LC_ALL=C sort -z | (cd "$root" && xargs -0 -r sha256sum) ;;
		@git:*)
			git -C "$root" ls-files -z -co --exclude-standard -- "${w#@git:}" |
				LC_ALL=C sort -z | (cd "$root" && xargs -0 -r sha256sum) ;;
		@names:*)
			w=${w#@names:}
			[ ! -d "$w" ] ||
				(cd "$w" && find -L . -type f | LC_ALL=C sort | sed 's/^/name /') ;;
		@cache:*)
			# nullglob: no entry, or only a lock, says the same.
			# shellcheck disable=SC2086  # the glob is the point
			(cd "${FAIRSEM_CACHE:-/var/cache/fairsem}" && shopt -s nullglob &&
				for f in ${w#@cache:}; do echo "cache $f"; done) |
				grep -Ev '\.(lock|log)$' ;;
		*)
			if [ -d "$w" ]; then
				find -L "$w" -type f -print0 | LC_ALL=C sort -z |
					xargs -0 -r sha256sum
			elif [ -f "$w" ] && [ "$(stat -L -c %s "$w")" -gt 536870912 ]; then
				stat -L -c 'stat %n %s %Y' "$w"
			elif [ -f "$w" ]; then
				sha256sum "$w"
			else
				echo "missing $w"
			fi ;;
		esac
	done
}

inputs=${PART_INPUTS:-}
# keyof: the key text of the inputs now, and its key.
keyof() {
	keytext=$(key_text "$@" | sed "s|$root|@ROOT|g")
	key=$(sha256sum <<<"$keytext" | cut -c1-20)
}
if [ -n "$inputs" ] && [ "${PART_CACHE:-1}" != off ]; then
	keyof "$@"
	entry=$cache/$key
	if [ "${PART_CACHE:-1}" != 0 ] && [ -f "$entry/counts" ]; then
		read -r p f s _ <"$entry/counts"
		read -r wall cpu _ <"$entry/time"
		cp "$entry/out" "$out"
		[ ! -f "$entry/outputs.tar" ] || tar -xf "$entry/outputs.tar" -C "$root"
		echo "$p $f $s" >"$res/$name.txt"
		now=$(date +%s)
		echo "0 0 $now $now ${PART_LANE:--}" >"$res/$name.time"
		echo "$key $wall $cpu" >"$res/$name.hit"
		echo "=== $name: CACHE HIT, key $key: not run; its inputs are those of the run of $(cat "$entry/date") ($wall s wall, $cpu CPU-s), whose output is $entry/out"
		echo "=== $name: replayed: $p passed, $f failed, $s skipped"
		exit 0
	fi
fi

# Not for the parts CMD may run in turn.
outputs=${PART_OUTPUTS:-}
unset PART_INPUTS PART_OUTPUTS
t0=$(date +%s)
"$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
# times' second line: the children's user and system time, "XmY.YYYs".
# Not in a pipeline: a subshell's times start from zero.
times >"$out.times"
cpu=$(tail -n 1 "$out.times" | awk '{
	c = 0
	for (i = 1; i <= 2; i++) { split($i, a, "m"); c += a[1] * 60 + a[2] }
	printf "%.0f", c }')
rm -f "$out.times"
t1=$(date +%s)
echo "$((t1 - t0)) $cpu $t0 $t1 ${PART_LANE:--}" >"$res/$name.time"
re='^([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?$'
p=0 f=0 s=0
line=$(tr -d '\r' <"$out" | grep -E "$re" | tail -n 1 || true)
if [[ $line =~ $re ]]; then
	p=${BASH_REMATCH[1]} f=${BASH_REMATCH[2]} s=${BASH_REMATCH[4]:-0}
fi
[ "$rc" -eq 0 ] || [ "$f" -gt 0 ] || f=1
echo "$p $f $s" >"$res/$name.txt"
echo "=== $name: exit $rc: $p passed, $f failed, $s skipped"

# keep: put this passed run's result under $key (in a new directory,
# renamed into place: a concurrent reader sees all of it or nothing).
keep() {
	local tmp=$cache/.new.$$
	rm -rf "$tmp" && mkdir -p "$tmp" || return 1
	cp "$out" "$tmp/out" || return 1
	echo "$p $f $s" >"$tmp/counts"
	echo "$((t1 - t0)) $cpu" >"$tmp/time"
	echo "$(date -u '+%F %T UTC') in $root" >"$tmp/date"
	echo "$keytext" >"$tmp/inputs"
	if [ -n "$outputs" ]; then
		# shellcheck disable=SC2086  # a list of paths
		(cd "$root" && tar -cf "$tmp/outputs.tar" $outputs) || return 1
	fi
	rm -rf "${cache:?}/$key" && mv "$tmp" "$cache/$key" || return 1
	# The newest four keys of this part.
	# shellcheck disable=SC2012  # the names are hex keys
	ls -1td "$cache"/*/ | tail -n +5 | xargs -r rm -rf
}
# Only a run that exited 0, counted something and failed nothing.
if [ -n "$key" ] && [ "$rc" -eq 0 ] && [ "$f" -eq 0 ] && [ $((p + s)) -gt 0 ]; then
	first=$keytext
	for pass in start end; do
		if [ $pass = end ]; then
			keyof "$@"
			[ "$keytext" != "$first" ] || break
			ours=$(grep -v -e '^cache ' -e "${FAIRSEM_CACHE:-/var/cache/fairsem}/" <<<"$keytext")
			[ "$ours" = "$(grep -v -e '^cache ' -e "${FAIRSEM_CACHE:-/var/cache/fairsem}/" <<<"$first")" ] || break
		fi
		if keep; then
			echo "=== $name: result kept under key $key"
		else
			rm -rf "$cache/.new.$$"
			echo "=== $name: could not keep the result in $cache"
		fi
	done
fi
exit "$rc"
