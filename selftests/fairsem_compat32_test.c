// SPDX-License-Identifier: GPL-2.0
/*
 * The core ioctls from a 32-bit process on a 64-bit kernel (compat_ioctl).
 * Built with gcc -m32 -static (Debian: gcc-multilib); the structs have no
 * implicit padding, so their layout and the ioctl numbers are the same as
 * for a 64-bit process, which the static asserts pin down.
 */
#include <stddef.h>

#include "fairsem_test_util.h"
#include "kselftest_harness.h"

#ifndef __i386__
#error "fairsem_compat32_test is built with -m32"
#endif

#include "fairsem_abi.h"

/* above 32 bits, so a truncating compat path shows */
#define BIG	((1ULL << 40) + 3)

TEST(compat_init_and_info_keep_64_bit_values)
{
	struct fairsem_info_kinds info;
	int fd = fs_new(BIG, FAIRSEM_LIFO);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_info(fd, &info));
	EXPECT_EQ(1, info.nkinds);
	EXPECT_EQ(BIG, info.kind[0].limit);
	EXPECT_EQ(BIG, info.kind[0].available);
	EXPECT_EQ(0, info.kind[0].taken);
	EXPECT_EQ(0, info.kind[0].holds);
	EXPECT_EQ(0, info.kind[1].limit);
	EXPECT_EQ(0, info.waiters);
	EXPECT_EQ(FAIRSEM_LIFO, info.flags);
	EXPECT_EQ(1, info.handles);
	EXPECT_EQ(0, info.reserved);
	EXPECT_EQ(0, info.reserved2);
}

TEST(compat_info_on_unbound_handle_reports_nkinds_0_and_the_supported_flags)
{
	struct fairsem_info_kinds info;
	int fd = fs_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_info(fd, &info));
	EXPECT_EQ(0, info.nkinds);
	EXPECT_EQ(0, info.id);
	EXPECT_EQ(0, info.kind[0].limit);
	EXPECT_EQ(0, info.handles);
	EXPECT_EQ(FAIRSEM_LIFO | FAIRSEM_PRIO | FAIRSEM_JOBSERVER | FAIRSEM_FAST,
		  info.init_flags);
	EXPECT_EQ(FAIRSEM_ACQ_TRY | FAIRSEM_RELEASE_FORGET |
		  FAIRSEM_RESIZE_ADD | FAIRSEM_RESIZE_REMOVE |
		  FAIRSEM_HANDLE_GOVERN, info.op_flags);
	EXPECT_EQ(0, info.reserved2);
}

TEST(compat_acquire_and_release_64_bit_counts)
{
	int fd = fs_new(BIG, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, BIG - 1));
	EXPECT_EQ(BIG - 1, fs_holds(fd));
	EXPECT_EQ(1, fs_available(fd));
	EXPECT_EQ(-EAGAIN, fs_try(fd, 2));
	EXPECT_EQ(-ETIMEDOUT, fs_acquire(fd, 2, 0, 0));
	ASSERT_EQ(0, fs_release(fd, (1ULL << 40)));
	EXPECT_EQ(2, fs_holds(fd));
	EXPECT_EQ(-EINVAL, fs_release(fd, 3));
	ASSERT_EQ(0, fs_release(fd, 2));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(compat_release_forget_and_resize_add_remove)
{
	int fd = fs_new(10, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 4));
	ASSERT_EQ(0, fs_forget(fd, 1));
	ASSERT_EQ(0, fs_add(fd, BIG));
	ASSERT_EQ(0, fs_remove(fd, 5));
	EXPECT_EQ(BIG + 4, fs_limit(fd));
	EXPECT_EQ(3, fs_holds(fd));
	EXPECT_EQ(-EOVERFLOW, fs_add(fd, FAIRSEM_MAX_PERMITS));
}

TEST(compat_deadline_is_a_full_64_bit_value)
{
	struct fs_waiter t;
	int fd = fs_new(1, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_get(fd, 1));
	/* 2^40 ns ahead: cut to 32 bits it would lie in the past */
	ASSERT_EQ(0, fs_waiter_start(&t, h, 1, now_ns() + (1ULL << 40), 0));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(0, fs_waiter_join(&t));
	EXPECT_EQ(1, fs_holds(h));
	/* and a deadline just ahead does come */
	EXPECT_EQ(-ETIMEDOUT, fs_acquire(fd, 1, now_ns() + 20000000ULL, 0));
	EXPECT_EQ(0, fs_waiters(fd));
}

TEST(compat_new_handle_returns_the_fd_both_ways)
{
	struct fairsem_handle nh = { .flags = O_CLOEXEC, .fd = -1 };
	int fd = fs_new(2, 0), ret;

	ASSERT_LE(0, fd);
	ret = ioctl(fd, FAIRSEM_IOC_NEW_HANDLE, &nh);
	ASSERT_LE(0, ret);
	EXPECT_EQ(ret, nh.fd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(ret, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(fs_id(fd), fs_id(ret));
	EXPECT_EQ(2, fs_handles(fd));
	ASSERT_EQ(0, fs_get(ret, 2));
	EXPECT_EQ(0, fs_holds(fd));
	EXPECT_EQ(2, fs_taken(fd));
	EXPECT_EQ(-EINVAL, fs_new_handle(fd, O_APPEND));
}

/* REAP's ids pointer is a __u64 that a 32-bit process fills from its own. */
TEST(compat_submitted_request_is_granted_and_reaped)
{
	uint32_t ids[4] = { 0 };
	int fd = fs_new(0, 0), h, a, b;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_LE(1, a = fs_submit(h, BIG));
	ASSERT_LE(1, b = fs_submit(h, 1));
	EXPECT_EQ(2, fs_queued(h));
	EXPECT_EQ(0, fs_revents(h, POLLIN) & POLLIN);
	ASSERT_EQ(0, fs_add(fd, BIG + 1));
	EXPECT_EQ(POLLIN, fs_revents(h, POLLIN) & POLLIN);
	EXPECT_EQ(2, fs_reap(h, ids, 4));
	EXPECT_EQ(a, (int)ids[0]);
	EXPECT_EQ(b, (int)ids[1]);
	EXPECT_EQ(0, ids[2]);
	EXPECT_EQ(BIG + 1, fs_holds(h));
	EXPECT_EQ(-EAGAIN, fs_reap1(h));
}

TEST(compat_kinds_vectors_keep_64_bit_values)
{
	struct fairsem_init in = { .limit = { 2, BIG }, .nkinds = 2 };
	struct fairsem_acquire acq = {
		.count = { 1, BIG }, .nkinds = 2,
		.deadline_ns = FAIRSEM_NO_DEADLINE,
	};
	struct fairsem_counts sub = { .count = { 1, BIG }, .nkinds = 2 };
	struct fairsem_counts add = {
		.count = { 0, BIG }, .nkinds = 2, .flags = FAIRSEM_RESIZE_ADD,
	};
	struct fairsem_info_kinds info;
	int fd = fs_open(), h, id;

	ASSERT_LE(0, fd);
	strcpy(in.label[1], "bytes");
	ASSERT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE, &acq)));
	ASSERT_LE(1, id = fs_ret(ioctl(h, FAIRSEM_IOC_SUBMIT, &sub)));
	ASSERT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_RESIZE, &add)));
	EXPECT_EQ(id, fs_reap1(h));
	ASSERT_EQ(0, fs_ret(ioctl(h, FAIRSEM_IOC_INFO, &info)));
	EXPECT_EQ(2, info.nkinds);
	EXPECT_EQ(2 * BIG, info.kind[1].limit);
	EXPECT_EQ(2 * BIG, info.kind[1].taken);
	EXPECT_EQ(BIG, info.kind[1].holds);
	EXPECT_STREQ("bytes", info.kind[1].label);
}

TEST(compat_withdraw_and_close)
{
	int fd = fs_new(0, 0), id;

	ASSERT_LE(0, fd);
	ASSERT_LE(1, id = fs_submit(fd, 1));
	EXPECT_EQ(0, fs_withdraw(fd, id));
	EXPECT_EQ(-ENOENT, fs_withdraw(fd, id));
	ASSERT_LE(1, fs_submit(fd, 1));
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EIDRM, fs_reap1(fd));
	EXPECT_EQ(-EIDRM, fs_get(fd, 1));
	EXPECT_EQ(FAIRSEM_INFO_CLOSED, fs_flags(fd));
}

TEST(compat_errors_are_the_same)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADFD, fs_get(fd, 1));
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, NULL)));
	EXPECT_EQ(-ENOTTY, fs_ret(ioctl(fd, _IO(FAIRSEM_IOC_MAGIC, 10))));
	ASSERT_EQ(0, fs_init(fd, 1, 0));
	EXPECT_EQ(-EBUSY, fs_init(fd, 1, 0));
	EXPECT_EQ(-EINVAL, fs_get(fd, 0));
	EXPECT_EQ(-EINVAL, fs_acquire(fd, 1, FAIRSEM_NO_DEADLINE,
				      FAIRSEM_ACQ_TRY | FS_OP_BIT1));
	EXPECT_EQ(-EINVAL, fs_count_ioctl(fd, FAIRSEM_IOC_RELEASE, 1,
					  FAIRSEM_RESIZE_ADD));
	EXPECT_EQ(-EINVAL, fs_count_ioctl(fd, FAIRSEM_IOC_RESIZE, 1, 0));
	EXPECT_EQ(-EINVAL, fs_count_ioctl(fd, FAIRSEM_IOC_SUBMIT, 1,
					  FAIRSEM_ACQ_TRY));
}

TEST_HARNESS_MAIN
