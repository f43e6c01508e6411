# SPDX-License-Identifier: GPL-2.0
#
# The cluster semaphore (cluster/), included by the top Makefile:
#
#   make cluster          build fairsem-cluster and clustertest into
#                         build/cluster/ (offline, Debian's Go sources:
#                         scripts/deps.d/cluster.list)
#   make check-cluster    its fault test in the Debian VM (cluster/check.sh):
#                         3 etcd members, 3 machines as network namespaces,
#                         faults, the checkers and the mutants, share mode,
#                         fairsem status --cluster, and the packages
#                         installed and their unit run; last line "N
#                         passed, N failed".  make lane-cluster runs it as
#                         a cached part (CLUSTER_INPUTS), one of
#                         check-all's lanes.
#   make bench-cluster    its benchmark in the Debian VM (cluster/bench.sh):
#                         build/cluster/bench.txt, the rows of
#                         bench/results.md's "Cluster semaphores"
#
# The packages go to their own directory (CLUSTER_DEBS), not build/deb:
# check-all's lane-install builds that one at the same time.

CLUSTER_MODULE ?= module-$(DEB_NAME)
CLUSTER_DEBS ?= $(BUILD)/cluster-deb

# What check-cluster runs and installs, by content as git has it (not
# the objects an in-tree build leaves beside the sources, which a clean
# clone lacks): the agent and its tests, the module, the library and the
# command, the Go binding (built into the agent), the packaging, the
# Debian VM's scripts and cached image (by name: named by its own
# inputs).  Not the rest of the tree: a change elsewhere does not run it
# again.
CLUSTER_INPUTS := $(addprefix @git:,cluster kmod uapi Kbuild VERSION lib \
	bindings/go debian scripts/debvm scripts/pkg scripts/build-module.sh) \
	@cache:debvm-[0-9a-f][0-9a-f][0-9a-f]*
CLUSTER_CACHE := PART_INPUTS="$(CLUSTER_INPUTS)"

.PHONY: cluster check-cluster check-cluster-run bench-cluster

cluster:
	$(TOP)/cluster/build.sh $(BUILD)/cluster

check-cluster: $(CLUSTER_MODULE)
	$(MAKE) check-cluster-run

# In check-all the cluster's VM starts once the other lanes of Debian VMs
# that re-run most (the packages, README's source blocks, the bindings, the
# jobserver) are done: its etcd keeps deadlines (heartbeats, elections, 5 s
# requests), and beside them, at a host load of 15 to 20, it answered no
# write within 5 s (two runs of 2026-12-04), where the others, which count
# rather than time, only took longer.  A run that reuses their results
# starts it at once.
lane-cluster: lane-install install-source lane-bindings lane-jobserver

# check-cluster on the module as built (lane-cluster: shared-builds built it).
check-cluster-run:
	$(MAKE) -C $(TOP)/lib lib cmd
	@$(TOP)/scripts/pkg/deb.sh $(CLUSTER_DEBS) >$(BUILD)/cluster-deb.log 2>&1 || \
		{ tail -n 30 $(BUILD)/cluster-deb.log; echo "cluster: make deb failed"; }
	CLUSTER_DEBS=$(CLUSTER_DEBS) $(TOP)/cluster/check.sh $(BUILD)/kmod-$(DEB_NAME)/fairsem.ko

bench-cluster: $(CLUSTER_MODULE)
	$(MAKE) -C $(TOP)/lib lib cmd
	$(TOP)/cluster/bench.sh $(BUILD)/kmod-$(DEB_NAME)/fairsem.ko
