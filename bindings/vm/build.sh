#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build one runner of bindings/vm/check.sh into the VM payload:
#
#   bindings/vm/build.sh RUNNER PAYLOAD_DIR CACHE_DIR
#
# Everything offline: Debian's cargo and rustc with the crates of
# /usr/share/cargo/registry (bindings/rust/.cargo/config.toml), Debian's Go
# with the standard library only, Debian's python3.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
runner=$1 payload=$2 cache=$3
mkdir -p "$cache"

# Debian's toolchains, whatever else is on PATH (rustup, pyenv, ...).
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
CARGO=/usr/bin/cargo
GO=$(ls -d /usr/lib/go-1.*/bin/go 2>/dev/null | sort -V | tail -n 1)
PY=/usr/bin/python3
# shellcheck source=caches.sh
. "$here/caches.sh"
bindings_caches "$cache"

# cargo's --message-format=json: the test executables it built.
cargo_executables() {
	$PY -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(m["target"]["name"], m["executable"])'
}

build_rust() {
	local dir=$payload/rust
	mkdir -p "$dir"
	bindings_cargo_own
	# The crate without its tokio feature, as a program that only blocks
	# builds it: nothing else builds it so.
	(cd "$root/bindings/rust" && $CARGO build --release -j2 --lib --no-default-features)
	(cd "$root/bindings/rust" && $CARGO test --release -j2 --no-run --message-format=json-render-diagnostics) |
		cargo_executables | while read -r name exe; do
		cp "$exe" "$dir/$name"
	done
	ls "$dir"/* >/dev/null
	# --- Rust: tokio's own semaphore tests, only the constructor shimmed
	# (issue 17): peer-FILE and peer-FILE.na, counted by payload.sh.
	CARGO=$CARGO PY=$PY "$root/bindings/rust/peer/build.sh" "$cache" "$dir"
	# --- end Rust
}

build_go() {
	mkdir -p "$payload/go"
	(cd "$root/bindings/go" && CGO_ENABLED=0 GOPATH=$cache/gopath GOFLAGS=-mod=mod GO111MODULE=on \
		$GO test -c -o "$payload/go/fairsem.test" .)
	# --- Go: x/sync's own tests against the binding (issue 17) ---
	GOPATH=$cache/gopath "$root/bindings/go/xsync/gen.sh" "$GO" "$cache/go-xsync" "$payload/go"
	# FAIRSEM_TEST_WAITERS (the descriptors tests' goroutines, 20,000
	# unless set) goes into the VM with the tests.
	[ -z "${FAIRSEM_TEST_WAITERS:-}" ] || echo "$FAIRSEM_TEST_WAITERS" >"$payload/go/waiters"
	# The binding's uncontended Acquire+Release against libfairsem's call,
	# measured in the same run (issue 17: at most 1.2 times): the programs
	# of bench/bindings.
	make -s -C "$root/lib" lib
	gcc -O2 -Wall -Werror -static -I"$root/lib" -I"$root/uapi" -o "$payload/go/bench-c" \
		"$root/bench/bindings/c.c" "$root/build/lib/libfairsem.a"
	(cd "$root/bench/bindings/go" && CGO_ENABLED=0 GOPATH=$cache/gopath GOFLAGS=-mod=mod \
		GOPROXY=off $GO build -o "$payload/go/bench-go" .)
	# --- end Go ---
}

# The package, its tests, and Debian's python3 with its standard library
# (no test suite, no GUI): the busybox VM has no Python of its own.
build_python() {
	local py=$payload/py ver
	ver=$($PY -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	mkdir -p "$payload/python" "$py/bin" "$py/lib" "$py/syslib"
	cp -a "$root/bindings/python/fairsem" "$root/bindings/python/tests" "$payload/python/"
	# Python peer suite: CPython's asyncio lock tests from Debian's
	# libpython3.11-testsuite, unchanged (tests/test_cpython_semaphore.py).
	cp "$root/bindings/python/cpython-not-applicable.txt" "$payload/python/"
	mkdir -p "$payload/python/cpython"
	cp "/usr/lib/python$ver/test/test_asyncio/test_locks.py" "$payload/python/cpython/"
	dpkg-query -W "libpython$ver-testsuite" >"$payload/python/cpython/VERSION"
	cp -L "/usr/bin/python$ver" "$py/bin/python3"
	tar -C /usr/lib -cf - --exclude=__pycache__ --exclude=test \
		--exclude=tests --exclude=idlelib --exclude=tkinter \
		--exclude=turtledemo --exclude=ensurepip --exclude=lib2to3 \
		--exclude=pydoc_data --exclude=dist-packages \
		--exclude=site-packages --exclude='config-*' --exclude='_test*' \
		--exclude='_tkinter*' --exclude='nis.*' --exclude='readline.*' \
		--exclude='_curses*' --exclude='_dbm*' --exclude='_sqlite3*' \
		--exclude='_crypt.*' --exclude='_xx*' --exclude='xxlimited*' \
		"python$ver" | tar -C "$py/lib" -xf -
	# Extension modules' libraries (the binary's own come with run.sh).
	for so in "$py/lib/python$ver"/lib-dynload/*.so; do
		{ ldd "$so" | grep -o '/[^ ]*' || true; } | while read -r lib; do
			[ -e "$py/syslib/${lib##*/}" ] || cp -L "$lib" "$py/syslib/"
		done
	done
}

build_eventloops() {
	make -C "$root/examples/eventloops" DEST="$payload/eventloops"
}

build_cross() {
	# The Python holder and waiters run on the python runner's interpreter.
	[ -d "$payload/py" ] || build_python
	make -C "$root/examples/cross" DEST="$payload/cross" CACHE="$cache"
}

case $runner in
rust | go | python | eventloops | cross) "build_$runner" ;;
*) echo "build: unknown runner $runner" >&2; exit 2 ;;
esac
