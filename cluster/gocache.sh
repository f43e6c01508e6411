# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by cluster/build.sh and scripts/pkg/deb.sh: Go's build cache for
# the cluster agent, unless the caller names one in GOCACHE.  It outlives
# the tree (a fresh clone, as CI's, builds warm) under $FAIRSEM_CACHE
# (/var/cache/fairsem), one per Go version; go locks and keys what it
# keeps, so two builds at once share it.  Falls back to $1 when the cache
# directory cannot be made.  Exports GOCACHE.
cluster_gocache() {
	if [ -z "${GOCACHE:-}" ]; then
		GOCACHE=${FAIRSEM_CACHE:-/var/cache/fairsem}/cluster-$(go env GOVERSION 2>/dev/null || echo none)
		mkdir -p "$GOCACHE" 2>/dev/null || GOCACHE=$1
	fi
	export GOCACHE
}
