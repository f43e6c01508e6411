// SPDX-License-Identifier: GPL-2.0
/*
 * A memory hog for the governor's VM test (jobserver/service-checks.sh):
 * keeps a ring of MIB chunks of one MiB, and for ever maps and touches a
 * new chunk and unmaps the oldest.  Run in a cgroup whose memory.high is
 * below MIB and with no swap, every new chunk's charge is over the high
 * mark and can be reclaimed from nothing: the kernel throttles the hog
 * (memory.high's penalty), which PSI counts as memory stall.  It stops on
 * SIGTERM, as systemctl stop sends it.
 *
 *   hog MIB
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CHUNK (1UL << 20)

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 0, i;
	char **ring;

	if (!n) {
		fprintf(stderr, "usage: hog MIB\n");
		return 64;
	}
	ring = calloc(n, sizeof(*ring));
	if (!ring)
		return 71;
	for (i = 0;; i = (i + 1) % n) {
		if (ring[i])
			munmap(ring[i], CHUNK);
		ring[i] = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (ring[i] == MAP_FAILED) {
			perror("hog: mmap");
			return 71;
		}
		memset(ring[i], (int)i, CHUNK);
	}
}
