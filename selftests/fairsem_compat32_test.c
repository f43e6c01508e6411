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

_Static_assert(sizeof(struct fairsem_init) == 16, "fairsem_init");
_Static_assert(sizeof(struct fairsem_acquire) == 24, "fairsem_acquire");
_Static_assert(sizeof(struct fairsem_info) == 88, "fairsem_info");
_Static_assert(offsetof(struct fairsem_info, flags) == 48, "info.flags");
_Static_assert(offsetof(struct fairsem_info, reserved) == 56, "info.reserved");
_Static_assert(sizeof(struct fairsem_handle) == 8, "fairsem_handle");
/* Kinds: inline vectors, the same layout on 32- and 64-bit. */
_Static_assert(sizeof(struct fairsem_init_kinds) == 208, "fairsem_init_kinds");
_Static_assert(sizeof(struct fairsem_acquire_kinds) == 88, "fairsem_acquire_kinds");
_Static_assert(sizeof(struct fairsem_counts) == 72, "fairsem_counts");
_Static_assert(sizeof(struct fairsem_kind) == 48, "fairsem_kind");
_Static_assert(sizeof(struct fairsem_info_kinds) == 432, "fairsem_info_kinds");
_Static_assert(FAIRSEM_IOC_INIT == 0x4010fa00u, "INIT");
_Static_assert(FAIRSEM_IOC_ACQUIRE == 0x4018fa01u, "ACQUIRE");
_Static_assert(FAIRSEM_IOC_RELEASE == 0x4008fa02u, "RELEASE");
_Static_assert(FAIRSEM_IOC_INFO == 0x8058fa08u, "INFO");
_Static_assert(FAIRSEM_IOC_NEW_HANDLE == 0xc008fa09u, "NEW_HANDLE");
_Static_assert(FAIRSEM_IOC_CLOSE == 0x0000fa06u, "CLOSE");

/* above 32 bits, so a truncating compat path shows */
#define BIG	((1ULL << 40) + 3)

TEST(compat_init_and_info_keep_64_bit_values)
{
	struct fairsem_info info;
	int fd = fs_new(BIG, FAIRSEM_LIFO);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_info(fd, &info));
	EXPECT_EQ(BIG, info.limit);
	EXPECT_EQ(BIG, info.available);
	EXPECT_EQ(0, info.taken);
	EXPECT_EQ(0, info.holds);
	EXPECT_EQ(0, info.waiters);
	EXPECT_EQ(FAIRSEM_LIFO, info.flags);
	EXPECT_EQ(1, info.handles);
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(0, info.reserved[i]);
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

TEST(compat_forget_add_remove)
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

TEST(compat_async_request_and_read)
{
	uint64_t n = 0;
	int fd = fs_new(0, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(-EINPROGRESS, fs_async(h, BIG));
	EXPECT_EQ(FAIRSEM_INFO_ASYNC_PENDING, fs_flags(h));
	EXPECT_EQ(0, fs_revents(h, POLLIN) & POLLIN);
	ASSERT_EQ(0, fs_add(fd, BIG));
	EXPECT_EQ(POLLIN, fs_revents(h, POLLIN) & POLLIN);
	EXPECT_EQ(8, fs_read(h, &n));
	EXPECT_EQ(BIG, n);
	EXPECT_EQ(BIG, fs_holds(h));
	EXPECT_EQ(-EINVAL, fs_read(h, &n));
}

TEST(compat_kinds_vectors_keep_64_bit_values)
{
	struct fairsem_init_kinds in = { .limit = { 2, BIG }, .nkinds = 2 };
	struct fairsem_acquire_kinds acq = {
		.count = { 1, BIG }, .nkinds = 2,
		.deadline_ns = FAIRSEM_NO_DEADLINE, .flags = FAIRSEM_ACQ_ASYNC,
	};
	struct fairsem_counts add = { .count = { 0, BIG }, .nkinds = 2 };
	struct fairsem_info_kinds info;
	uint64_t got[2] = { 0 };
	int fd = fs_open(), h;

	ASSERT_LE(0, fd);
	strcpy(in.label[1], "bytes");
	ASSERT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT_KINDS, &in)));
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE_KINDS, &acq)));
	ASSERT_EQ(-EINPROGRESS, fs_ret(ioctl(h, FAIRSEM_IOC_ACQUIRE_KINDS, &acq)));
	ASSERT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_ADD_KINDS, &add)));
	EXPECT_EQ(16, read(h, got, sizeof(got)));
	EXPECT_EQ(1, got[0]);
	EXPECT_EQ(BIG, got[1]);
	ASSERT_EQ(0, fs_ret(ioctl(h, FAIRSEM_IOC_INFO_KINDS, &info)));
	EXPECT_EQ(2, info.nkinds);
	EXPECT_EQ(2 * BIG, info.kind[1].limit);
	EXPECT_EQ(2 * BIG, info.kind[1].taken);
	EXPECT_EQ(BIG, info.kind[1].holds);
	EXPECT_STREQ("bytes", info.kind[1].label);
}

TEST(compat_cancel_and_close)
{
	uint64_t n;
	int fd = fs_new(0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(-EINPROGRESS, fs_async(fd, 1));
	EXPECT_EQ(0, fs_cancel(fd));
	EXPECT_EQ(-ENOENT, fs_cancel(fd));
	ASSERT_EQ(-EINPROGRESS, fs_async(fd, 1));
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EIDRM, fs_read(fd, &n));
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
				      FAIRSEM_ACQ_TRY | FAIRSEM_ACQ_ASYNC));
}

TEST_HARNESS_MAIN
