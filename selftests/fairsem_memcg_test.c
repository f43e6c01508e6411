// SPDX-License-Identifier: GPL-2.0
/*
 * The fast path inside a memory cgroup, where a login session or a
 * container runs (issue 25): a cgroup below the root whose memory
 * controller is enabled.  There a page charged to the cgroup was, up to
 * 5.10, typed PageKmemcg, which vm_insert_page() refuses: mmap(2) of a fast
 * semaphore failed with EINVAL, while every test run as init in the root
 * cgroup passed.  scripts/vm/selftests-payload.sh runs every program in
 * such a cgroup; this test fails where it is not one, so that the mapping
 * is always tested where users map it.
 *
 * From 5.11 both pages of a mapping are charged to the cgroup, as the
 * semaphore's other allocations are; before, they are not (nothing else
 * would map there), and the test of the charge skips.
 */
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include "kselftest_harness.h"
#include "fairsem_test_util.h"
#include "fairsem_cgroup_util.h"

#define BITS	(FAIRSEM_FAST_WAITERS | FAIRSEM_FAST_RECONCILE)

static size_t map_len(void)
{
	return FAIRSEM_FAST_MAP_PAGES * (size_t)sysconf(_SC_PAGESIZE);
}

/* mmap(2) of a fast handle, as libfairsem maps it: 0 or -errno. */
static int map_fast(int fd, char **base)
{
	*base = mmap(NULL, map_len(), PROT_READ | PROT_WRITE, MAP_SHARED,
		     fd, 0);
	if (*base == MAP_FAILED) {
		*base = NULL;
		return -errno;
	}
	return 0;
}

/*
 * The uncontended fast path (models/fastpath/README.md, A1 to A6 and R1 to
 * R6, without the kernel's fallback): n permits taken (n > 0) or given back
 * (n < 0) through the page.  0, or -EAGAIN where the page sends the caller
 * to the kernel, which nothing here should make it do.
 */
static int fast_step(char *base, int64_t n)
{
	_Atomic uint64_t *w = (_Atomic uint64_t *)base;
	char *slot = base + map_len() / 2;
	_Atomic uint32_t *holds = (_Atomic uint32_t *)slot;
	_Atomic uint32_t *inflight = (_Atomic uint32_t *)(slot + 4);
	uint64_t v;
	int ret = -EAGAIN;

	atomic_fetch_add_explicit(inflight, 1, memory_order_seq_cst);
	v = atomic_load_explicit(w, memory_order_relaxed);
	while (!(v & BITS) && (n < 0 || (v & FAIRSEM_FAST_FREE) >= (uint64_t)n)) {
		if (atomic_compare_exchange_weak_explicit(w, &v, v - n,
							  memory_order_seq_cst,
							  memory_order_relaxed)) {
			atomic_fetch_add_explicit(holds, (uint32_t)n,
						  memory_order_relaxed);
			ret = 0;
			break;
		}
	}
	atomic_fetch_sub_explicit(inflight, 1, memory_order_release);
	return ret;
}

/*
 * The caller's cgroup into cg, and whether it is one of a session: 0, or
 * why not.
 */
static const char *in_memory_cgroup(char *cg, size_t len)
{
	int r = fs_cgroup2_self(cg, len);

	if (r)
		return "no cgroup v2 line in /proc/self/cgroup";
	if (!strcmp(cg, "/"))
		return "in the root cgroup";
	r = fs_cgroup2_enabled(cg, "memory");
	if (r < 0)
		return "the parent's cgroup.subtree_control cannot be read";
	if (!r)
		return "the memory controller is not enabled there";
	return NULL;
}

/* The cgroup's memory.current, or -1. */
static long long memory_current(const char *cg)
{
	char path[512], text[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s%s/memory.current", CGROUP2, cg);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	text[n] = 0;
	return atoll(text);
}

TEST(a_fast_mapping_works_inside_a_memory_cgroup)
{
	const char *why;
	char cg[256], *base;
	int fd;

	why = in_memory_cgroup(cg, sizeof(cg));
	/* A precondition missing is a failure: the test would prove nothing. */
	ASSERT_EQ(NULL, why) {
		TH_LOG("not in a memory cgroup below the root (%s): %s",
		       cg, why);
	}
	TH_LOG("in %s, with the memory controller", cg);
	fd = fs_new(2, FAIRSEM_FAST);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_fast(fd, &base));
	EXPECT_EQ(2, atomic_load((_Atomic uint64_t *)base));
	ASSERT_EQ(0, fast_step(base, 1));
	EXPECT_EQ(1, atomic_load((_Atomic uint64_t *)base));
	EXPECT_EQ(1, fs_taken(fd));
	EXPECT_EQ(1, fs_holds(fd));
	ASSERT_EQ(0, fast_step(base, -1));
	EXPECT_EQ(2, atomic_load((_Atomic uint64_t *)base));
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(2, fs_available(fd));
	EXPECT_EQ(0, munmap(base, map_len()));
	EXPECT_EQ(0, close(fd));
}

/*
 * Each mapping's slot page is charged to the cgroup from 5.11.  Measured
 * on 512 mappings at once, as memory.current moves in batches of up to 64
 * pages a CPU (the per-CPU stock of charges): at least 0.6 pages a mapping
 * must show, where the slot pages give 1 each and the other allocations of
 * a mapping (its VMA and the kernel's record of it, a few hundred bytes)
 * far less.
 */
#define MAPPINGS	512

/* 512 semaphores and mappings: minutes on the =y debug kernel under TCG. */
FIXTURE(slow) {};
FIXTURE_SETUP(slow) {}
FIXTURE_TEARDOWN(slow) {}

TEST_F_TIMEOUT(slow, a_fast_mappings_slot_page_is_charged_to_its_memory_cgroup,
	       600)
{
	long long page = sysconf(_SC_PAGESIZE), before, after;
	static int fds[MAPPINGS];
	static char *bases[MAPPINGS];
	struct rlimit rl;
	struct utsname u;
	int i, n, major = 0, minor = 0;
	const char *why;
	char cg[256];

	why = in_memory_cgroup(cg, sizeof(cg));
	ASSERT_EQ(NULL, why) {
		TH_LOG("not in a memory cgroup below the root (%s): %s",
		       cg, why);
	}
	ASSERT_EQ(0, uname(&u));
	n = sscanf(u.release, "%d.%d", &major, &minor);
	ASSERT_EQ(2, n);
	if (major * 1000 + minor < 5011)
		SKIP(return, "a mapped page is not charged before 5.11 (%s)",
		     u.release);
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur < MAPPINGS + 64 && rl.rlim_max >= MAPPINGS + 64) {
		rl.rlim_cur = MAPPINGS + 64;
		ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	}
	for (i = 0; i < MAPPINGS; i++) {
		fds[i] = fs_new(1, FAIRSEM_FAST);
		ASSERT_LE(0, fds[i]);
	}
	before = memory_current(cg);
	ASSERT_LE(0, before);
	for (i = 0; i < MAPPINGS; i++)
		ASSERT_EQ(0, map_fast(fds[i], &bases[i]));
	after = memory_current(cg);
	ASSERT_LE(0, after);
	TH_LOG("%d mappings: memory.current %lld -> %lld (%lld bytes a mapping)",
	       MAPPINGS, before, after, (after - before) / MAPPINGS);
	EXPECT_LE(MAPPINGS * page * 6 / 10, after - before);
	for (i = 0; i < MAPPINGS; i++) {
		munmap(bases[i], map_len());
		close(fds[i]);
	}
}

TEST_HARNESS_MAIN
