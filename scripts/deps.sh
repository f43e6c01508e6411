#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install what building and testing fairsem needs on Debian 12 (bookworm):
#
#   scripts/deps.sh [-q] [PART...]   install whatever is missing (root or sudo)
#   scripts/deps.sh --list [PART...] print the package list, one a line
#
# Each part of the project lists its packages in scripts/deps.d/<part>.list
# (any number a line, '#' starts a comment; the first comment line says
# what the part is).  No PART: every list (make check, make check-all);
# make demo asks for "build vm" only.  -q: apt's own output goes to
# build/deps-apt.log, and only deps.sh's lines are printed (make demo).
#
# Quick no-op when everything is there (one dpkg-query, no apt).  Ends by
# asking dpkg again: a package still not installed is an error.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
list_only=0 quiet=0
while [ $# -gt 0 ]; do
	case $1 in
	--list) list_only=1; shift ;;
	-q) quiet=1; shift ;;
	-*) echo "usage: $0 [-q|--list] [PART...]" >&2; exit 2 ;;
	*) break ;;
	esac
done
parts=("$@")
if [ ${#parts[@]} -eq 0 ]; then
	for list in "$here"/deps.d/*.list; do
		parts+=("$(basename "$list" .list)")
	done
fi

# Every word of a list, comments stripped, in the order listed.
words_of() {
	sed 's/#.*//' "$here/deps.d/$1.list" | tr -s ' \t' '\n\n' | sed '/^$/d'
}
# What a part is: the first comment line of its list.
why_of() {
	sed -n '/^#/{s/^# *//p;q}' "$here/deps.d/$1.list"
}

packages=() part_of=()
declare -A seen=()
for part in "${parts[@]}"; do
	[ -r "$here/deps.d/$part.list" ] ||
		{ echo "deps: no such part: $part (scripts/deps.d/$part.list)" >&2; exit 2; }
	while read -r p; do
		[ -z "${seen[$p]:-}" ] || continue
		seen[$p]=1
		packages+=("$p") part_of+=("$part")
	done < <(words_of "$part")
done
[ "$list_only" -eq 0 ] || { printf '%s\n' "${packages[@]}"; exit 0; }

installed_set() {
	echo " $( (dpkg-query -W -f='${db:Status-Status}:${Package} ' \
		"${packages[@]}" 2>/dev/null || true) | tr ' ' '\n' |
		sed -n 's/^installed://p' | tr '\n' ' ') "
}
missing_of() {	# the packages not in the set $1, one a line
	local i
	for i in "${!packages[@]}"; do
		[[ $1 == *" ${packages[$i]} "* ]] || echo "$i"
	done
}

installed=$(installed_set)
mapfile -t missing < <(missing_of "$installed")
if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#packages[@]} packages present (${parts[*]})"
	exit 0
fi

# What is installed, and why: one line per part.
names=()
for part in "${parts[@]}"; do
	these=()
	for i in "${missing[@]}"; do
		[ "${part_of[$i]}" = "$part" ] && these+=("${packages[$i]}")
	done
	[ ${#these[@]} -eq 0 ] || echo "deps: $part ($(why_of "$part")): ${these[*]}"
	names+=("${these[@]}")
done
echo "deps: installing ${#names[@]} of ${#packages[@]} packages with apt-get (a minute or more on a fresh machine)"

sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
apt=($sudo apt-get -o DPkg::Lock::Timeout=600)
log=/dev/stderr
if [ "$quiet" -eq 1 ]; then
	mkdir -p "$root/build"
	log=$root/build/deps-apt.log
	: >"$log"
	echo "deps: apt-get's output: $log"
fi
# A fresh image has no package lists; update only when install needs it.
{
	"${apt[@]}" install -y --no-install-recommends "${names[@]}" ||
		{ "${apt[@]}" update && "${apt[@]}" install -y --no-install-recommends "${names[@]}"; }
} >>"$log" 2>&1 || { echo "deps: apt-get failed (its output: $log)" >&2; exit 1; }

mapfile -t missing < <(missing_of "$(installed_set)")
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: still not installed: $(for i in "${missing[@]}"; do printf '%s ' "${packages[$i]}"; done)" >&2
	exit 1
fi
echo "deps: all ${#packages[@]} packages present (${parts[*]})"
