#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the cluster agent and the test tools offline, in GOPATH mode, from
# Debian's Go sources in /usr/share/gocode (golang-etcd-server-dev,
# golang-github-vishvananda-netlink-dev: scripts/deps.d/cluster.list) and
# the Go binding (bindings/go, as the package "fairsem"):
#
#   cluster/build.sh OUTDIR        -> OUTDIR/fairsem-cluster, OUTDIR/clustertest
#   cluster/build.sh OUTDIR agent  -> OUTDIR/fairsem-cluster only (the
#                                     package's build: no netlink needed)
#
# after go vet and the unit tests (the grant rule: agent/grant_test.go; the
# history checker and its mutants: testtool/history_test.go).
#
# Static (CGO_ENABLED=0): they run in the Debian VM as built here.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=${1:?usage: $0 OUTDIR [agent]}
what=${2:-all}
pkgs="go.etcd.io/etcd/clientv3 github.com/vishvananda/netlink"
dirs="./agent ./testtool"
if [ "$what" = agent ]; then
	pkgs=go.etcd.io/etcd/clientv3
	dirs=./agent
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
for p in $pkgs; do
	[ -d "/usr/share/gocode/src/$p" ] || {
		echo "cluster/build.sh: /usr/share/gocode/src/$p missing (scripts/deps.sh cluster)" >&2
		exit 1
	}
done
gopath=$out/gopath
rm -rf "$gopath"
mkdir -p "$gopath/src"
# GOPATH mode reads no go.mod: the binding is copied in as package fairsem.
mkdir -p "$gopath/src/fairsem"
cp "$root"/bindings/go/*.go "$gopath/src/fairsem/"
rm -f "$gopath"/src/fairsem/*_test.go
for d in agent testtool; do
	mkdir -p "$gopath/src/fairsem-cluster/$d"
	cp "$here/$d"/*.go "$gopath/src/fairsem-cluster/$d/"
done
# shellcheck source=gocache.sh
. "$here/gocache.sh"
cluster_gocache "$out/gocache"
export GOPATH=$gopath:/usr/share/gocode GO111MODULE=off CGO_ENABLED=0 GOPROXY=off \
	GOCACHE GOFLAGS=
cd "$gopath/src/fairsem-cluster"
# shellcheck disable=SC2086 # two words at most, no globs
go vet $dirs
# shellcheck disable=SC2086
go test $dirs
# A PIE: lintian takes a Go program of no other build mode for a static
# binary (it exempts Go only when it sees the source package too).
go build -buildmode=pie -o "$out/fairsem-cluster" ./agent
[ "$what" = agent ] || go build -o "$out/clustertest" ./testtool
echo "cluster/build.sh: built $dirs into $out"
