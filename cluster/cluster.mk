# SPDX-License-Identifier: GPL-2.0
#
# The cluster semaphore (cluster/), included by the top Makefile:
#
#   make cluster          build fairsem-cluster and clustertest into
#                         build/cluster/ (offline, Debian's Go sources:
#                         scripts/deps.d/cluster.list)
#   make check-cluster    its fault test in the Debian VM (cluster/check.sh):
#                         3 etcd members, 3 machines as network namespaces,
#                         faults, the checkers and the mutant, and the
#                         packages of make deb installed and their unit run;
#                         last line "N passed, N failed".  Not part of
#                         check-all yet.

CLUSTER_MODULE ?= module-$(DEB_NAME)

.PHONY: cluster check-cluster

cluster:
	$(TOP)/cluster/build.sh $(BUILD)/cluster

check-cluster: $(CLUSTER_MODULE) deb
	$(MAKE) -C $(TOP)/lib lib cmd
	$(TOP)/cluster/check.sh $(BUILD)/kmod-$(DEB_NAME)/fairsem.ko
