# SPDX-License-Identifier: GPL-2.0
#
# Sourced by bindings/vm/build.sh and bench/bindings/run.sh: build caches
# that outlive the tree, so that a fresh clone (CI) builds warm.  cargo's
# target directory and Go's build cache, one per toolchain version under
# $FAIRSEM_CACHE (/var/cache/fairsem); both tools lock and fingerprint
# what they keep.  Falls back to $1 (the build directory) when the cache
# directory cannot be made.  Exports CARGO_TARGET_DIR and GOCACHE.
bindings_caches() {
	local root=${FAIRSEM_CACHE:-/var/cache/fairsem} rv gv
	rv=$(/usr/bin/rustc -V 2>/dev/null | cut -d' ' -f2)
	gv=$("$(ls -d /usr/lib/go-1.*/bin/go 2>/dev/null | sort -V | tail -n 1)" env GOVERSION 2>/dev/null)
	if mkdir -p "$root/bindings-cargo-${rv:-none}" "$root/bindings-go-${gv:-none}" 2>/dev/null; then
		export CARGO_TARGET_DIR=$root/bindings-cargo-${rv:-none}
		export GOCACHE=$root/bindings-go-${gv:-none}
	else
		export CARGO_TARGET_DIR=$1/rust-target GOCACHE=$1/go-cache
	fi
}

# cargo takes a path crate's artifacts for fresh while the files its last
# build read are older than they: in a target directory shared by two
# trees (two clones at once), one tree's build of the binding passed for
# fresh in the other, whose tests then failed against the other's source.
# So the binding's own artifacts (fairsem, and the peer crate built on it)
# go before each build: the binding is always built from this tree, and
# what it depends on (tokio, libc) stays cached.
bindings_cargo_own() {
	local t=$CARGO_TARGET_DIR/release
	rm -rf "$t"/.fingerprint/fairsem-* "$t"/deps/*fairsem* "$t"/examples/bench*
}
