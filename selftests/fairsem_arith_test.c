// SPDX-License-Identifier: GPL-2.0
/*
 * Permit arithmetic: INIT, ACQUIRE, RELEASE (and its FORGET), RESIZE (ADD
 * and REMOVE), and the FAIRSEM_MAX_PERMITS bound.
 */
#include "fairsem_test_util.h"
#include "kselftest_harness.h"

#define MAXP	FAIRSEM_MAX_PERMITS

/* All of INFO, to check that a refused call changed nothing. */
static int same_state(int fd, const struct fairsem_info_kinds *a)
{
	struct fairsem_info_kinds b;

	if (fs_info(fd, &b))
		return 0;
	return !memcmp(a, &b, sizeof(b));
}

TEST(info_after_init_reports_a_fresh_semaphore)
{
	struct fairsem_info_kinds info;
	int fd = fs_new(7, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_info(fd, &info));
	EXPECT_EQ(1, info.nkinds);
	EXPECT_EQ(7, info.kind[0].limit);
	EXPECT_EQ(7, info.kind[0].available);
	EXPECT_EQ(0, info.kind[0].taken);
	EXPECT_EQ(0, info.kind[0].holds);
	EXPECT_EQ(0, info.kind[0].label[0]);
	EXPECT_EQ(0, info.waiters);
	EXPECT_EQ(0, info.flags);
	EXPECT_EQ(1, info.handles);
	EXPECT_EQ(0, info.reserved);
	EXPECT_EQ(0, info.reserved2);
	/* the kinds past the one it has are zero */
	for (int k = 1; k < FAIRSEM_MAX_KINDS; k++) {
		EXPECT_EQ(0, info.kind[k].limit);
		EXPECT_EQ(0, info.kind[k].available);
		EXPECT_EQ(0, info.kind[k].taken);
		EXPECT_EQ(0, info.kind[k].holds);
		EXPECT_EQ(0, info.kind[k].label[0]);
	}
}

TEST(init_with_zero_permits_is_valid_and_add_grants_the_waiter)
{
	int fd = fs_new(0, 0), h;

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, fs_limit(fd));
	EXPECT_EQ(0, fs_available(fd));
	EXPECT_EQ(-EAGAIN, fs_try(fd, 1));
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_LE(1, fs_submit(h, 1));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(1, fs_holds(h));
	EXPECT_EQ(1, fs_limit(fd));
	EXPECT_EQ(0, fs_available(fd));
}

TEST(init_with_max_permits_is_valid)
{
	int fd = fs_new(MAXP, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	EXPECT_EQ(MAXP, fs_limit(fd));
	ASSERT_EQ(0, fs_get(fd, MAXP / 2));
	ASSERT_EQ(0, fs_get(h, MAXP / 2));
	EXPECT_EQ(MAXP, fs_taken(fd));
	EXPECT_EQ(0, fs_available(fd));
	EXPECT_EQ(-EAGAIN, fs_try(fd, 1));
}

TEST(acquire_and_release_move_taken_available_and_holds)
{
	int fd = fs_new(10, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 3));
	ASSERT_EQ(0, fs_try(fd, 4));
	EXPECT_EQ(7, fs_holds(fd));
	EXPECT_EQ(7, fs_taken(fd));
	EXPECT_EQ(3, fs_available(fd));
	EXPECT_EQ(10, fs_limit(fd));
	ASSERT_EQ(0, fs_release(fd, 5));
	EXPECT_EQ(2, fs_holds(fd));
	EXPECT_EQ(8, fs_available(fd));
	ASSERT_EQ(0, fs_release(fd, 2));
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(10, fs_available(fd));
}

TEST(forget_lowers_holds_taken_and_limit)
{
	int fd = fs_new(5, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 3));
	ASSERT_EQ(0, fs_forget(fd, 2));
	EXPECT_EQ(1, fs_holds(fd));
	EXPECT_EQ(1, fs_taken(fd));
	EXPECT_EQ(3, fs_limit(fd));
	EXPECT_EQ(2, fs_available(fd));
	/* the forgotten permits are gone: releasing them is refused */
	EXPECT_EQ(-EINVAL, fs_release(fd, 2));
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(3, fs_available(fd));
}

TEST(forget_stops_the_limit_at_zero)
{
	int fd = fs_new(5, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 3));
	ASSERT_EQ(0, fs_remove(fd, 4));		/* limit 1, 3 held */
	EXPECT_EQ(1, fs_limit(fd));
	ASSERT_EQ(0, fs_forget(fd, 3));
	EXPECT_EQ(0, fs_limit(fd));
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(0, fs_holds(fd));
	EXPECT_EQ(0, fs_available(fd));
}

TEST(forget_grants_nobody_as_available_is_unchanged)
{
	int fd = fs_new(3, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_get(fd, 3));
	ASSERT_LE(1, fs_submit(h, 1));
	ASSERT_EQ(0, fs_forget(fd, 1));
	EXPECT_EQ(0, fs_holds(h));
	EXPECT_EQ(1, fs_waiters(fd));
	EXPECT_EQ(2, fs_limit(fd));
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(1, fs_holds(h));
}

TEST(forget_below_a_removed_limit_frees_permits_for_waiters)
{
	int fd = fs_new(4, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_get(fd, 4));
	ASSERT_EQ(0, fs_remove(fd, 3));		/* limit 1, 4 held */
	ASSERT_LE(1, fs_submit(h, 1));
	ASSERT_EQ(0, fs_forget(fd, 2));		/* limit 0 (clamped), 2 held */
	EXPECT_EQ(0, fs_limit(fd));
	EXPECT_EQ(0, fs_holds(h));
	ASSERT_EQ(0, fs_add(fd, 3));		/* limit 3, 2 held: 1 free */
	EXPECT_EQ(1, fs_holds(h));
}

TEST(add_raises_the_limit_and_grants_waiters)
{
	int fd = fs_new(1, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_get(fd, 1));
	ASSERT_LE(1, fs_submit(h, 2));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(0, fs_holds(h));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(2, fs_holds(h));
	EXPECT_EQ(3, fs_limit(fd));
	EXPECT_EQ(3, fs_taken(fd));
}

TEST(add_up_to_exactly_the_maximum_is_valid)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_add(fd, MAXP - 1));
	EXPECT_EQ(MAXP, fs_limit(fd));
	EXPECT_EQ(MAXP, fs_available(fd));
}

TEST(add_overflow_leaves_the_state_unchanged)
{
	struct fairsem_info_kinds before;
	int fd = fs_new(MAXP - 10, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_get(fd, MAXP - 10));
	ASSERT_LE(1, fs_submit(h, 5));
	ASSERT_EQ(0, fs_info(fd, &before));
	EXPECT_EQ(-EOVERFLOW, fs_add(fd, 11));
	EXPECT_EQ(-EOVERFLOW, fs_add(fd, MAXP));
	EXPECT_TRUE(same_state(fd, &before));
	EXPECT_EQ(0, fs_holds(h));
	EXPECT_EQ(0, fs_add(fd, 10));
	EXPECT_EQ(5, fs_holds(h));
}

TEST(add_overflow_is_judged_on_the_limit_not_on_available)
{
	int fd = fs_new(MAXP, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, MAXP));
	ASSERT_EQ(0, fs_remove(fd, 5));
	EXPECT_EQ(-EOVERFLOW, fs_add(fd, 6));
	EXPECT_EQ(MAXP - 5, fs_limit(fd));
	EXPECT_EQ(0, fs_add(fd, 5));
}

TEST(remove_lowers_limit_and_available)
{
	int fd = fs_new(6, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_EQ(0, fs_remove(fd, 3));
	EXPECT_EQ(3, fs_limit(fd));
	EXPECT_EQ(1, fs_available(fd));
	EXPECT_EQ(2, fs_taken(fd));
	EXPECT_EQ(-EAGAIN, fs_try(fd, 2));
}

TEST(remove_below_taken_holds_grants_back_until_taken_is_under_the_limit)
{
	int fd = fs_new(4, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_get(fd, 4));
	ASSERT_LE(1, fs_submit(h, 1));
	ASSERT_EQ(0, fs_remove(fd, 2));		/* limit 2, 4 held */
	EXPECT_EQ(0, fs_available(fd));
	EXPECT_EQ(4, fs_taken(fd));
	ASSERT_EQ(0, fs_release(fd, 1));	/* 3 held */
	EXPECT_EQ(0, fs_holds(h));
	EXPECT_EQ(0, fs_available(fd));
	ASSERT_EQ(0, fs_release(fd, 1));	/* 2 held */
	EXPECT_EQ(0, fs_holds(h));
	ASSERT_EQ(0, fs_release(fd, 1));	/* 1 held: 1 free */
	EXPECT_EQ(1, fs_holds(h));
	EXPECT_EQ(0, fs_available(fd));
}

TEST(remove_down_to_zero_is_valid)
{
	int fd = fs_new(3, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_remove(fd, 3));
	EXPECT_EQ(0, fs_limit(fd));
	EXPECT_EQ(-EAGAIN, fs_try(fd, 1));
	EXPECT_EQ(-EINVAL, fs_remove(fd, 1));
}

TEST(refused_remove_leaves_the_state_unchanged)
{
	struct fairsem_info_kinds before;
	int fd = fs_new(3, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_EQ(0, fs_info(fd, &before));
	EXPECT_EQ(-EINVAL, fs_remove(fd, 4));
	EXPECT_TRUE(same_state(fd, &before));
}

TEST(request_above_the_limit_waits_at_the_head)
{
	struct fs_waiter t;
	int fd = fs_new(2, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_waiter_start(&t, fd, 5, FAIRSEM_NO_DEADLINE, 0));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	/* the head wants more than the limit: a small request waits behind */
	ASSERT_LE(1, fs_submit(h, 1));
	EXPECT_EQ(2, fs_available(fd));
	ASSERT_EQ(0, fs_add(fd, 3));
	EXPECT_EQ(0, fs_waiter_join(&t));
	EXPECT_EQ(5, fs_holds(fd));
	EXPECT_EQ(0, fs_holds(h));
	EXPECT_EQ(1, fs_waiters(fd));
}

TEST(try_above_the_limit_is_eagain)
{
	int fd = fs_new(2, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EAGAIN, fs_try(fd, 3));
	EXPECT_EQ(-EAGAIN, fs_try(fd, MAXP));
	EXPECT_EQ(0, fs_waiters(fd));
}

TEST(sums_up_to_the_maximum_across_handles)
{
	int fd = fs_new(MAXP, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_get(fd, MAXP - 1));
	ASSERT_EQ(0, fs_get(h, 1));
	EXPECT_EQ(MAXP, fs_taken(fd));
	EXPECT_EQ(-EAGAIN, fs_try(h, 1));
	ASSERT_EQ(0, fs_release(fd, MAXP - 1));
	EXPECT_EQ(MAXP - 1, fs_available(fd));
}

TEST(unreaped_grant_is_held_and_can_be_released_before_the_reap)
{
	int fd = fs_new(0, 0), id;

	ASSERT_LE(0, fd);
	ASSERT_LE(1, id = fs_submit(fd, 3));
	ASSERT_EQ(0, fs_add(fd, 3));
	EXPECT_EQ(3, fs_holds(fd));
	ASSERT_EQ(0, fs_release(fd, 3));
	EXPECT_EQ(0, fs_taken(fd));
	/* the reap still reports the grant */
	EXPECT_EQ(id, fs_reap1(fd));
	EXPECT_EQ(0, fs_holds(fd));
}

TEST_HARNESS_MAIN
