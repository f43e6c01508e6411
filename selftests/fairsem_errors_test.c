// SPDX-License-Identifier: GPL-2.0
/*
 * Every row of the error table of Documentation/userspace-api/fairsem.rst
 * (section "Errors"), one behaviour per test, and the order in which the
 * checks run ("Fine points"): ENOTTY, EFAULT, EINVAL, EBADFD, then the
 * state.
 */
#include <stddef.h>
#include <sys/mount.h>

#include "fairsem_abi.h"
#include "fairsem_test_util.h"
#include "kselftest_harness.h"

#define MAXP	FAIRSEM_MAX_PERMITS
#define NOW	0ULL	/* a deadline long past */

/*
 * What INFO says this kernel's INIT, and its ACQUIRE, RELEASE, RESIZE and
 * NEW_HANDLE take.
 */
#define INIT_FLAGS	(FAIRSEM_LIFO | FAIRSEM_PRIO | FAIRSEM_JOBSERVER | \
			 FAIRSEM_FAST)
#define OP_FLAGS	(FAIRSEM_ACQ_TRY | FAIRSEM_RELEASE_FORGET | \
			 FAIRSEM_RESIZE_ADD | FAIRSEM_RESIZE_REMOVE | \
			 FAIRSEM_HANDLE_GOVERN)

/* RELEASE of a vector of one with these flags: 0 or -errno. */
static int release_flags(int fd, uint64_t count, uint32_t flags)
{
	return fs_count_ioctl(fd, FAIRSEM_IOC_RELEASE, count, flags);
}

/* RESIZE of a vector of one with these flags: 0 or -errno. */
static int resize_flags(int fd, uint64_t count, uint32_t flags)
{
	return fs_count_ioctl(fd, FAIRSEM_IOC_RESIZE, count, flags);
}

/* ---- ENOTTY: unknown ioctl, checked before anything else ---- */

TEST(unknown_ioctl_number_is_enotty)
{
	int fd = fs_new(1, 0);
	uint64_t v = 1;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTTY, fs_ret(ioctl(fd, _IOW(FAIRSEM_IOC_MAGIC, 13, __u64), &v)));
	EXPECT_EQ(-ENOTTY, fs_ret(ioctl(fd, _IO(FAIRSEM_IOC_MAGIC, 0x7f))));
}

/*
 * Each of @n ioctl numbers of an older ABI answers ENOTTY, on a bound
 * handle and on an unbound one, with a buffer large enough for any
 * argument and a count of 1 and nkinds 1 wherever either is read; and
 * nothing was taken, queued, resized, closed or bound by them.
 */
static void old_ioctls_are_enotty(struct __test_metadata *_metadata,
				  const unsigned long *old, size_t n)
{
	__u64 buf[64];
	int fd = fs_new(2, 0), unbound = fs_open();
	size_t i;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, unbound);
	for (i = 0; i < n; i++) {
		memset(buf, 0, sizeof(buf));
		buf[0] = 1;
		buf[1] = 1;
		buf[2] = 1;
		EXPECT_EQ(-ENOTTY, fs_ret(ioctl(fd, old[i], buf))) {
			TH_LOG("old ioctl %#lx", old[i]);
		}
		EXPECT_EQ(-ENOTTY, fs_ret(ioctl(unbound, old[i], buf))) {
			TH_LOG("old ioctl %#lx on an unbound handle", old[i]);
		}
	}
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(2, fs_limit(fd));
	EXPECT_EQ(0, fs_flags(fd));
	EXPECT_EQ(1, fs_handles(fd));
	EXPECT_EQ(0, fs_nkinds(unbound));
	close(unbound);
	close(fd);
}

/*
 * The ioctls of the ABI before every count was a vector, by their number
 * and the size of their argument then: each differs from every one of
 * today's, in its number, its size or its direction, so that an old
 * program is told ENOTTY and nothing it asks is misread.  The argument is
 * a buffer large enough for any.
 */
TEST(ioctls_of_the_abi_before_vectors_are_enotty)
{
	static const unsigned long old[] = {
		_IOW(FAIRSEM_IOC_MAGIC, 0, __u64[2]),	/* INIT */
		_IOW(FAIRSEM_IOC_MAGIC, 1, __u64[3]),	/* ACQUIRE */
		_IOW(FAIRSEM_IOC_MAGIC, 2, __u64),	/* RELEASE */
		_IOW(FAIRSEM_IOC_MAGIC, 3, __u64),	/* FORGET */
		_IOW(FAIRSEM_IOC_MAGIC, 4, __u64),	/* ADD */
		_IOW(FAIRSEM_IOC_MAGIC, 5, __u64),	/* REMOVE */
		_IO(FAIRSEM_IOC_MAGIC, 6),		/* CLOSE */
		_IO(FAIRSEM_IOC_MAGIC, 7),		/* CANCEL */
		_IOR(FAIRSEM_IOC_MAGIC, 8, __u64[11]),	/* INFO */
		_IOWR(FAIRSEM_IOC_MAGIC, 9, __u64),	/* NEW_HANDLE */
		_IOW(FAIRSEM_IOC_MAGIC, 10, __u64[4]),	/* LINK */
		_IOW(FAIRSEM_IOC_MAGIC, 11, __u64[26]),	/* INIT_KINDS */
		_IOW(FAIRSEM_IOC_MAGIC, 12, __u64[11]),	/* ACQUIRE_KINDS */
		_IOW(FAIRSEM_IOC_MAGIC, 13, __u64[9]),	/* RELEASE_KINDS */
		_IOW(FAIRSEM_IOC_MAGIC, 14, __u64[9]),	/* FORGET_KINDS */
		_IOW(FAIRSEM_IOC_MAGIC, 15, __u64[9]),	/* ADD_KINDS */
		_IOW(FAIRSEM_IOC_MAGIC, 16, __u64[9]),	/* REMOVE_KINDS */
		_IOR(FAIRSEM_IOC_MAGIC, 17, __u64[54]),	/* INFO_KINDS */
		_IOW(FAIRSEM_IOC_MAGIC, 18, __u64[9]),	/* SUBMIT */
		_IOW(FAIRSEM_IOC_MAGIC, 19, __u64[2]),	/* REAP */
		_IOW(FAIRSEM_IOC_MAGIC, 20, __u32),	/* WITHDRAW */
		_IOW(FAIRSEM_IOC_MAGIC, 21, __u64[3]),	/* RELEASE_FAST */
	};
	old_ioctls_are_enotty(_metadata, old, ARRAY_SIZE(old));
}

/*
 * The ioctls of the ABI of thirteen, by their numbers then: CANCEL at 5,
 * and the seven after it one number higher than today's.  INIT, ACQUIRE,
 * RELEASE, RESIZE and CLOSE kept their numbers.  Each differs from every
 * one of today's in its number, its size or its direction, so that a
 * program built against it is told ENOTTY and nothing it asks is misread.
 */
TEST(ioctls_of_the_abi_of_thirteen_are_enotty)
{
	static const unsigned long old[] = {
		_IO(FAIRSEM_IOC_MAGIC, 5),			/* CANCEL */
		_IOR(FAIRSEM_IOC_MAGIC, 6, struct fairsem_info_kinds),
		_IOWR(FAIRSEM_IOC_MAGIC, 7, struct fairsem_handle),
		_IOW(FAIRSEM_IOC_MAGIC, 8, struct fairsem_link),
		_IOW(FAIRSEM_IOC_MAGIC, 9, struct fairsem_counts),
		_IOW(FAIRSEM_IOC_MAGIC, 10, struct fairsem_reap),
		_IOW(FAIRSEM_IOC_MAGIC, 11, __u32),		/* WITHDRAW */
		_IOW(FAIRSEM_IOC_MAGIC, 12, struct fairsem_fast_release),
	};
	old_ioctls_are_enotty(_metadata, old, ARRAY_SIZE(old));
}

/* CANCEL's old number withdraws nothing: the request stays queued. */
TEST(the_old_cancel_number_is_enotty_and_withdraws_nothing)
{
	int fd = fs_new(0, 0), id;

	ASSERT_LE(0, fd);
	ASSERT_LE(1, id = fs_submit(fd, 1));
	EXPECT_EQ(-ENOTTY, fs_ret(ioctl(fd, _IO(FAIRSEM_IOC_MAGIC, 5))));
	EXPECT_EQ(1, fs_waiters(fd));
	EXPECT_EQ(1, fs_queued(fd));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(id, fs_reap1(fd));
}

TEST(unknown_ioctl_magic_is_enotty)
{
	struct fairsem_init in = { .limit = { 1 }, .nkinds = 1 };
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTTY, fs_ret(ioctl(fd, _IOW('x', 0, struct fairsem_init), &in)));
	/* and the handle was not bound by it */
	EXPECT_EQ(0, fs_init(fd, 1, 0));
}

TEST(ioctl_with_wrong_size_is_enotty)
{
	int fd = fs_new(1, 0);
	uint64_t big[16] = { 1, 0, 0, 0, 0, 0, 0, 0, FAIRSEM_NO_DEADLINE };

	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTTY, fs_ret(ioctl(fd, _IOW(FAIRSEM_IOC_MAGIC, 1, __u32), big)));
	EXPECT_EQ(-ENOTTY, fs_ret(ioctl(fd, _IOW(FAIRSEM_IOC_MAGIC, 2, __u32), big)));
	EXPECT_EQ(-ENOTTY, fs_ret(ioctl(fd, _IOW(FAIRSEM_IOC_MAGIC, 1, big), big)));
	EXPECT_EQ(-ENOTTY, fs_ret(ioctl(fd, _IOW(FAIRSEM_IOC_MAGIC, 2, big), big)));
	EXPECT_EQ(0, fs_holds(fd));
}

TEST(ioctl_with_wrong_direction_is_enotty)
{
	/* ACQUIRE's number with _IOR instead of _IOW */
	const unsigned long acquire_read = _IOR(FAIRSEM_IOC_MAGIC, 1, struct fairsem_acquire);
	int fd = fs_new(1, 0);
	struct fairsem_acquire acq = {
		.count = { 1 }, .nkinds = 1, .deadline_ns = FAIRSEM_NO_DEADLINE,
	};

	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTTY, fs_ret(ioctl(fd, acquire_read, &acq)));
	/* INFO's number and size with _IOW instead of _IOR */
	EXPECT_EQ(-ENOTTY, fs_ret(ioctl(fd, _IOW(FAIRSEM_IOC_MAGIC, 5,
						 struct fairsem_info_kinds),
					 &acq)));
	EXPECT_EQ(0, fs_holds(fd));
}

TEST(unknown_ioctl_on_unbound_handle_is_enotty_before_ebadfd)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTTY, fs_ret(ioctl(fd, _IO(FAIRSEM_IOC_MAGIC, 10))));
}

TEST(unknown_ioctl_with_bad_pointer_is_enotty_before_efault)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTTY, fs_ret(ioctl(fd, _IOW(FAIRSEM_IOC_MAGIC, 11, __u64), NULL)));
}

/* ---- EFAULT: bad user pointers ---- */

TEST(init_bad_pointer_is_efault)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, NULL)));
	/* still unbound: a malformed call changes nothing */
	EXPECT_EQ(0, fs_init(fd, 2, 0));
	EXPECT_EQ(2, fs_limit(fd));
}

TEST(acquire_bad_pointer_is_efault)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE, NULL)));
	EXPECT_EQ(0, fs_holds(fd));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(count_ioctls_bad_pointer_is_efault)
{
	int fd = fs_new(2, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 1));
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_RELEASE, NULL)));
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_RESIZE, NULL)));
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_SUBMIT, NULL)));
	EXPECT_EQ(1, fs_holds(fd));
	EXPECT_EQ(2, fs_limit(fd));
}

TEST(info_bad_pointer_is_efault)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_INFO, NULL)));
}

TEST(new_handle_bad_pointer_is_efault)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_NEW_HANDLE, NULL)));
	EXPECT_EQ(1, fs_handles(fd));
}

TEST(bad_pointer_on_unbound_handle_is_efault_before_ebadfd)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE, NULL)));
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_RELEASE, NULL)));
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_RESIZE, NULL)));
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_NEW_HANDLE, NULL)));
}

/* INFO answers on an unbound handle: its pointer is used, and checked. */
TEST(info_bad_pointer_on_unbound_handle_is_efault)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_INFO, NULL)));
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_INFO, fs_bad_ptr())));
}

TEST(bad_pointer_on_closed_semaphore_is_efault_before_eidrm)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE, NULL)));
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_NEW_HANDLE, NULL)));
}

/*
 * Only the first nkinds counts of a vector are read: a vector of one is
 * read up to count[0] and no further, as the scalar calls were.  Each
 * argument here ends where an unreadable page begins.
 */
static void *before_a_hole(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (mprotect(p + page, page, PROT_NONE)) {
		munmap(p, 2 * page);
		return NULL;
	}
	return p + page - len;
}

#define ACQ_ONE	(offsetof(struct fairsem_acquire, count) + sizeof(__u64))
#define CNT_ONE	(offsetof(struct fairsem_counts, count) + sizeof(__u64))

TEST(vector_of_one_is_read_no_further_than_its_count)
{
	struct fairsem_acquire *acq = before_a_hole(ACQ_ONE);
	struct fairsem_counts *c = before_a_hole(CNT_ONE);
	int fd = fs_new(2, 0);

	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, acq);
	ASSERT_NE(NULL, c);
	/* field by field: count[1] is past the end */
	acq->deadline_ns = FAIRSEM_NO_DEADLINE;
	acq->flags = 0;
	acq->nkinds = 1;
	acq->count[0] = 2;
	c->nkinds = 1;
	c->count[0] = 1;
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE, acq)));
	EXPECT_EQ(2, fs_holds(fd));
	c->flags = 0;
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_RELEASE, c)));
	c->flags = FAIRSEM_RELEASE_FORGET;
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_RELEASE, c)));
	EXPECT_EQ(0, fs_holds(fd));
	EXPECT_EQ(1, fs_limit(fd));
	c->flags = FAIRSEM_RESIZE_ADD;
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_RESIZE, c)));
	c->flags = FAIRSEM_RESIZE_REMOVE;
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_RESIZE, c)));
	EXPECT_EQ(1, fs_limit(fd));
	c->flags = 0;
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_SUBMIT, c)));	/* granted */
	EXPECT_EQ(1, fs_holds(fd));
	/* a vector of two is read on, into the hole */
	acq->nkinds = 2;
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE, acq)));
	c->nkinds = 2;
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(fd, FAIRSEM_IOC_RELEASE, c)));
	EXPECT_EQ(1, fs_holds(fd));
}

/*
 * An argument need not be aligned: a language's buffer may start anywhere.
 * A vector of two at an odd address, ending where a hole begins, is read
 * whole and no further.
 */
TEST(vector_at_an_unaligned_address_is_read_whole)
{
	struct fairsem_init in = { .nkinds = 2, .limit = { 3, 5 } };
	struct fairsem_acquire acq = {
		.deadline_ns = FAIRSEM_NO_DEADLINE, .nkinds = 2,
		.count = { 2, 4 },
	};
	struct fairsem_counts rel = { .nkinds = 2, .count = { 2, 4 } };
	size_t alen = offsetof(struct fairsem_acquire, count[2]);
	size_t clen = offsetof(struct fairsem_counts, count[2]);
	char *a = before_a_hole(alen + 1);
	char *c = before_a_hole(clen + 1);
	struct fairsem_info_kinds info;
	int fd = fs_open();

	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, c);
	ASSERT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	/* one byte in: the argument ends at the hole, at an odd address */
	memcpy(a + 1, &acq, alen);
	memcpy(c + 1, &rel, clen);
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE, a + 1)));
	ASSERT_EQ(0, fs_info(fd, &info));
	EXPECT_EQ(2, info.kind[0].taken);
	EXPECT_EQ(4, info.kind[1].taken);
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_RELEASE, c + 1)));
	ASSERT_EQ(0, fs_info(fd, &info));
	EXPECT_EQ(0, info.kind[0].taken);
	EXPECT_EQ(0, info.kind[1].taken);
}

/* An nkinds no vector may have is EINVAL before the other counts are read. */
TEST(nkinds_0_or_above_the_maximum_is_einval_before_the_counts_are_read)
{
	static const uint32_t bad[] = { 0, FAIRSEM_MAX_KINDS + 1, ~0u };
	struct fairsem_acquire *acq = before_a_hole(ACQ_ONE);
	struct fairsem_counts *c = before_a_hole(CNT_ONE);
	int fd = fs_new(2, 0);
	size_t i;

	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, acq);
	ASSERT_NE(NULL, c);
	acq->deadline_ns = FAIRSEM_NO_DEADLINE;
	acq->flags = FAIRSEM_ACQ_TRY;
	acq->count[0] = 1;
	c->count[0] = 1;
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		acq->nkinds = bad[i];
		c->nkinds = bad[i];
		EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_ACQUIRE, acq)));
		c->flags = 0;
		EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_RELEASE, c)));
		EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_SUBMIT, c)));
		c->flags = FAIRSEM_RESIZE_ADD;
		EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_RESIZE, c)));
	}
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(2, fs_limit(fd));
	EXPECT_EQ(0, fs_waiters(fd));
}

/* ---- EINVAL: counts ---- */

TEST(acquire_count_zero_is_einval)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_get(fd, 0));
	EXPECT_EQ(-EINVAL, fs_try(fd, 0));
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(0, fs_waiters(fd));
}

TEST(release_count_zero_is_einval)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 1));
	EXPECT_EQ(-EINVAL, fs_release(fd, 0));
	EXPECT_EQ(1, fs_holds(fd));
}

TEST(forget_count_zero_is_einval)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 1));
	EXPECT_EQ(-EINVAL, fs_forget(fd, 0));
	EXPECT_EQ(1, fs_holds(fd));
	EXPECT_EQ(1, fs_limit(fd));
}

TEST(add_count_zero_is_einval)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_add(fd, 0));
	EXPECT_EQ(1, fs_limit(fd));
}

TEST(remove_count_zero_is_einval)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_remove(fd, 0));
	EXPECT_EQ(1, fs_limit(fd));
}

TEST(init_above_max_is_einval)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_init(fd, MAXP + 1, 0));
	EXPECT_EQ(-EINVAL, fs_init(fd, ~0ULL, 0));
	/* still unbound */
	EXPECT_EQ(0, fs_nkinds(fd));
	EXPECT_EQ(0, fs_init(fd, MAXP, 0));
	EXPECT_EQ(MAXP, fs_limit(fd));
}

TEST(acquire_above_max_is_einval)
{
	int fd = fs_new(MAXP, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_get(fd, MAXP + 1));
	EXPECT_EQ(-EINVAL, fs_try(fd, ~0ULL));
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(0, fs_try(fd, MAXP));
	EXPECT_EQ(MAXP, fs_holds(fd));
}

TEST(add_above_max_is_einval_not_eoverflow)
{
	int fd = fs_new(0, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_add(fd, MAXP + 1));
	EXPECT_EQ(0, fs_limit(fd));
}

TEST(release_above_max_is_einval)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 1));
	EXPECT_EQ(-EINVAL, fs_release(fd, MAXP + 1));
	EXPECT_EQ(-EINVAL, fs_forget(fd, ~0ULL));
	EXPECT_EQ(-EINVAL, fs_remove(fd, MAXP + 1));
	EXPECT_EQ(1, fs_holds(fd));
	EXPECT_EQ(1, fs_limit(fd));
}

TEST(release_more_than_held_is_einval)
{
	int fd = fs_new(5, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_release(fd, 1));
	ASSERT_EQ(0, fs_get(fd, 2));
	EXPECT_EQ(-EINVAL, fs_release(fd, 3));
	EXPECT_EQ(2, fs_holds(fd));
	EXPECT_EQ(2, fs_taken(fd));
	EXPECT_EQ(0, fs_release(fd, 2));
}

TEST(release_of_permits_held_by_another_handle_is_einval)
{
	int a = fs_new(2, 0);
	int b;

	ASSERT_LE(0, a);
	b = fs_new_handle(a, 0);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, fs_get(a, 2));
	EXPECT_EQ(-EINVAL, fs_release(b, 1));
	EXPECT_EQ(2, fs_holds(a));
	EXPECT_EQ(0, fs_holds(b));
}

TEST(forget_more_than_held_is_einval)
{
	int fd = fs_new(5, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 2));
	EXPECT_EQ(-EINVAL, fs_forget(fd, 3));
	EXPECT_EQ(2, fs_holds(fd));
	EXPECT_EQ(5, fs_limit(fd));
}

TEST(remove_more_than_limit_is_einval)
{
	int fd = fs_new(3, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_remove(fd, 4));
	EXPECT_EQ(3, fs_limit(fd));
	EXPECT_EQ(0, fs_remove(fd, 3));
	EXPECT_EQ(0, fs_limit(fd));
}

/* ---- EINVAL: reserved fields and flags ---- */

TEST(init_reserved_nonzero_is_einval)
{
	struct fairsem_init in = { .limit = { 1 }, .nkinds = 1, .reserved = 1 };
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	in.reserved = 1ULL << 63;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	EXPECT_EQ(0, fs_init(fd, 1, 0));
}

TEST(init_unknown_flag_is_einval)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_init(fd, 1, 1u << 1));
	EXPECT_EQ(-EINVAL, fs_init(fd, 1, 1u << 31));
	EXPECT_EQ(-EINVAL, fs_init(fd, 1, FAIRSEM_LIFO | (1u << 5)));
	EXPECT_EQ(0, fs_init(fd, 1, 0));
}

TEST(acquire_unknown_flag_is_einval)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_acquire(fd, 1, FAIRSEM_NO_DEADLINE, 1u << 5));
	EXPECT_EQ(-EINVAL, fs_acquire(fd, 1, FAIRSEM_NO_DEADLINE, 1u << 31));
	EXPECT_EQ(-EINVAL, fs_acquire(fd, 1, FAIRSEM_NO_DEADLINE,
				      FAIRSEM_ACQ_TRY | (1u << 7)));
	EXPECT_EQ(0, fs_holds(fd));
}

/* The flags share one space: RELEASE's and RESIZE's are not ACQUIRE's. */
TEST(acquire_with_a_release_or_resize_flag_is_einval)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_acquire(fd, 1, FAIRSEM_NO_DEADLINE,
				      FAIRSEM_RELEASE_FORGET));
	EXPECT_EQ(-EINVAL, fs_acquire(fd, 1, FAIRSEM_NO_DEADLINE,
				      FAIRSEM_RESIZE_ADD));
	EXPECT_EQ(-EINVAL, fs_acquire(fd, 1, FAIRSEM_NO_DEADLINE,
				      FAIRSEM_ACQ_TRY | FAIRSEM_RESIZE_REMOVE));
	EXPECT_EQ(0, fs_holds(fd));
	EXPECT_EQ(1, fs_limit(fd));
}

TEST(release_unknown_flag_is_einval)
{
	static const uint32_t flags[] = {
		FAIRSEM_ACQ_TRY, FS_OP_BIT1, FAIRSEM_RESIZE_ADD,
		FAIRSEM_RESIZE_REMOVE, FAIRSEM_RELEASE_FORGET | FAIRSEM_RESIZE_ADD,
		1u << 5, 1u << 31,
	};
	int fd = fs_new(3, 0);
	size_t i;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 2));
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		EXPECT_EQ(-EINVAL, release_flags(fd, 1, flags[i])) {
			TH_LOG("flags %#x", flags[i]);
		}
	}
	EXPECT_EQ(2, fs_holds(fd));
	EXPECT_EQ(3, fs_limit(fd));
	/* the two RELEASE knows */
	EXPECT_EQ(0, release_flags(fd, 1, 0));
	EXPECT_EQ(0, release_flags(fd, 1, FAIRSEM_RELEASE_FORGET));
	EXPECT_EQ(0, fs_holds(fd));
	EXPECT_EQ(2, fs_limit(fd));
}

TEST(resize_with_neither_add_nor_remove_is_einval)
{
	int fd = fs_new(3, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, resize_flags(fd, 1, 0));
	EXPECT_EQ(3, fs_limit(fd));
}

TEST(resize_with_both_add_and_remove_is_einval)
{
	int fd = fs_new(3, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, resize_flags(fd, 1, FAIRSEM_RESIZE_ADD |
						FAIRSEM_RESIZE_REMOVE));
	EXPECT_EQ(3, fs_limit(fd));
}

TEST(resize_unknown_flag_is_einval)
{
	static const uint32_t flags[] = {
		FAIRSEM_ACQ_TRY, FS_OP_BIT1, FAIRSEM_RELEASE_FORGET,
		1u << 5, 1u << 31,
	};
	int fd = fs_new(3, 0);
	size_t i;

	ASSERT_LE(0, fd);
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		EXPECT_EQ(-EINVAL, resize_flags(fd, 1, flags[i])) {
			TH_LOG("flags %#x", flags[i]);
		}
		EXPECT_EQ(-EINVAL, resize_flags(fd, 1, flags[i] |
							FAIRSEM_RESIZE_ADD)) {
			TH_LOG("flags %#x with ADD", flags[i]);
		}
		EXPECT_EQ(-EINVAL, resize_flags(fd, 1, flags[i] |
							FAIRSEM_RESIZE_REMOVE)) {
			TH_LOG("flags %#x with REMOVE", flags[i]);
		}
	}
	EXPECT_EQ(3, fs_limit(fd));
}

/*
 * Bit 1 was the asynchronous flag of an earlier ABI: now no flag, alone,
 * with TRY or with a deadline, and nothing is queued or granted by it.
 */
TEST(acquire_with_bit_1_is_einval)
{
	int fd = fs_new(1, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	EXPECT_EQ(-EINVAL, fs_acquire(h, 1, FAIRSEM_NO_DEADLINE, FS_OP_BIT1));
	EXPECT_EQ(-EINVAL, fs_acquire(h, 1, FAIRSEM_NO_DEADLINE,
				      FAIRSEM_ACQ_TRY | FS_OP_BIT1));
	EXPECT_EQ(-EINVAL, fs_acquire(h, 1, NOW, FS_OP_BIT1));
	EXPECT_EQ(0, fs_holds(h));
	ASSERT_EQ(0, fs_get(fd, 1));
	EXPECT_EQ(-EINVAL, fs_acquire(h, 1, FAIRSEM_NO_DEADLINE, FS_OP_BIT1));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(0, fs_queued(h));
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(new_handle_unknown_flag_is_einval)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_new_handle(fd, O_APPEND));
	EXPECT_EQ(-EINVAL, fs_new_handle(fd, O_RDWR));
	EXPECT_EQ(-EINVAL, fs_new_handle(fd, O_CLOEXEC | O_TRUNC));
	EXPECT_EQ(-EINVAL, fs_new_handle(fd, 1u << 31));
	EXPECT_EQ(1, fs_handles(fd));
}

/* ---- EINVAL before EBADFD, EINVAL before the state ---- */

TEST(invalid_argument_on_unbound_handle_is_einval_before_ebadfd)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_get(fd, 0));
	EXPECT_EQ(-EINVAL, fs_acquire(fd, 1, FAIRSEM_NO_DEADLINE, 1u << 7));
	EXPECT_EQ(-EINVAL, fs_acquire(fd, 1, FAIRSEM_NO_DEADLINE,
				      FAIRSEM_RELEASE_FORGET));
	EXPECT_EQ(-EINVAL, fs_release(fd, 0));
	EXPECT_EQ(-EINVAL, release_flags(fd, 1, FAIRSEM_RESIZE_ADD));
	EXPECT_EQ(-EINVAL, fs_add(fd, MAXP + 1));
	EXPECT_EQ(-EINVAL, resize_flags(fd, 1, 0));
	EXPECT_EQ(-EINVAL, resize_flags(fd, 1, FAIRSEM_RESIZE_ADD |
						FAIRSEM_RESIZE_REMOVE));
	EXPECT_EQ(-EINVAL, fs_acquire(fd, 1, FAIRSEM_NO_DEADLINE, FS_OP_BIT1));
	EXPECT_EQ(-EINVAL, fs_count_ioctl(fd, FAIRSEM_IOC_SUBMIT, 1,
					  FS_OP_BIT1));
	EXPECT_EQ(-EINVAL, fs_new_handle(fd, O_APPEND));
}

TEST(invalid_argument_on_closed_semaphore_is_einval_before_eidrm)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EINVAL, fs_get(fd, 0));
	EXPECT_EQ(-EINVAL, fs_acquire(fd, 1, NOW, FS_OP_BIT1));
	EXPECT_EQ(-EINVAL, fs_acquire(fd, 1, FAIRSEM_NO_DEADLINE,
				      FAIRSEM_ACQ_TRY | FS_OP_BIT1));
	EXPECT_EQ(-EINVAL, fs_count_ioctl(fd, FAIRSEM_IOC_SUBMIT, 1,
					  FS_OP_BIT1));
	EXPECT_EQ(-EINVAL, fs_new_handle(fd, O_APPEND));
}

TEST(init_invalid_on_bound_handle_is_einval_before_ebusy)
{
	struct fairsem_init in = { .limit = { 1 }, .nkinds = 1, .reserved = 7 };
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_INIT, &in)));
	EXPECT_EQ(-EINVAL, fs_init(fd, MAXP + 1, 0));
	EXPECT_EQ(-EBUSY, fs_init(fd, 1, 0));
}

TEST(add_invalid_count_on_closed_semaphore_is_einval)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EINVAL, fs_add(fd, 0));
	EXPECT_EQ(-EINVAL, fs_add(fd, MAXP + 1));
}

/* ---- EBADFD: every operation but INIT and INFO on an unbound handle ---- */

TEST(acquire_on_unbound_handle_is_ebadfd)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADFD, fs_get(fd, 1));
	EXPECT_EQ(-EBADFD, fs_try(fd, 1));
	EXPECT_EQ(-EBADFD, fs_acquire(fd, 1, NOW, 0));
}

TEST(release_on_unbound_handle_is_ebadfd)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADFD, fs_release(fd, 1));
}

TEST(forget_on_unbound_handle_is_ebadfd)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADFD, fs_forget(fd, 1));
}

TEST(add_on_unbound_handle_is_ebadfd)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADFD, fs_add(fd, 1));
}

TEST(remove_on_unbound_handle_is_ebadfd)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADFD, fs_remove(fd, 1));
}

TEST(close_on_unbound_handle_is_ebadfd)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADFD, fs_close_sem(fd));
}

TEST(submit_reap_and_withdraw_on_unbound_handle_are_ebadfd)
{
	uint32_t id;
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADFD, fs_submit(fd, 1));
	EXPECT_EQ(-EBADFD, fs_reap(fd, &id, 1));
	EXPECT_EQ(-EBADFD, fs_withdraw(fd, 1));
}

/* A grant is reaped, never read: read(2) of an unbound handle, EBADFD. */
TEST(read_of_an_unbound_handle_is_ebadfd)
{
	uint64_t buf = 0;
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADFD, fs_ret(read(fd, &buf, sizeof(buf))));
	EXPECT_EQ(0, fs_nkinds(fd));
}

/* ... of a bound handle that is not a jobserver's, EINVAL, grant or not. */
TEST(read_of_a_bound_handle_is_einval_and_reaps_nothing)
{
	uint64_t buf[2] = { 0 };
	int fd = fs_new(0, 0), id;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_ret(read(fd, buf, sizeof(buf))));
	ASSERT_LE(1, id = fs_submit(fd, 3));
	EXPECT_EQ(-EINVAL, fs_ret(read(fd, buf, sizeof(buf[0]))));
	ASSERT_EQ(0, fs_add(fd, 3));
	EXPECT_EQ(-EINVAL, fs_ret(read(fd, buf, sizeof(buf[0]))));
	EXPECT_EQ(-EINVAL, fs_ret(read(fd, buf, sizeof(buf))));
	EXPECT_EQ(0, buf[0]);
	/* the grant is still there to reap */
	EXPECT_EQ(1, fs_granted(fd));
	EXPECT_EQ(id, fs_reap1(fd));
	EXPECT_EQ(3, fs_holds(fd));
	EXPECT_EQ(-EINVAL, fs_ret(read(fd, buf, sizeof(buf[0]))));
}

/* Bit 1 is no op flag any more: INFO reports none there, bound or not. */
TEST(info_reports_no_op_flag_at_bit_1)
{
	struct fairsem_info_kinds info;
	int fd = fs_new(1, 0), unbound = fs_open();

	ASSERT_LE(0, fd);
	ASSERT_LE(0, unbound);
	ASSERT_EQ(0, fs_info(fd, &info));
	EXPECT_EQ(0, info.op_flags & FS_OP_BIT1);
	ASSERT_EQ(0, fs_info(unbound, &info));
	EXPECT_EQ(0, info.op_flags & FS_OP_BIT1);
	EXPECT_EQ(0x3d, info.op_flags);
}

/*
 * INFO alone answers on an unbound handle, for feature discovery: no
 * kind, no semaphore, every count zero, and the flags this kernel takes.
 */
TEST(info_on_unbound_handle_reports_nkinds_0_and_the_supported_flags)
{
	struct fairsem_info_kinds info, want;
	int fd = fs_open();

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_info(fd, &info));	/* over a buffer of 0xa5 */
	EXPECT_EQ(0, info.nkinds);
	EXPECT_EQ(0, info.id);
	EXPECT_EQ(0, info.waiters);
	EXPECT_EQ(0, info.flags);
	EXPECT_EQ(0, info.handles);
	EXPECT_EQ(INIT_FLAGS, info.init_flags);
	EXPECT_EQ(OP_FLAGS, info.op_flags);
	memset(&want, 0, sizeof(want));
	want.init_flags = INIT_FLAGS;
	want.op_flags = OP_FLAGS;
	EXPECT_EQ(0, memcmp(&want, &info, sizeof(info)));
	/* it looked, and bound nothing */
	EXPECT_EQ(0, fs_init(fd, 2, 0));
	EXPECT_EQ(1, fs_nkinds(fd));
}

TEST(info_on_bound_handle_reports_the_supported_flags_too)
{
	struct fairsem_info_kinds info;
	int fd = fs_new(2, FAIRSEM_LIFO);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_info(fd, &info));
	EXPECT_EQ(1, info.nkinds);
	EXPECT_EQ(FAIRSEM_LIFO, info.flags);
	EXPECT_EQ(INIT_FLAGS, info.init_flags);
	EXPECT_EQ(OP_FLAGS, info.op_flags);
	EXPECT_EQ(0, info.reserved);
	EXPECT_EQ(0, info.reserved2);
}

TEST(new_handle_on_unbound_handle_is_ebadfd)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADFD, fs_new_handle(fd, 0));
}

/* ---- the state: EBUSY, EOVERFLOW, EAGAIN, ETIMEDOUT, EINTR, EIDRM, ENOENT ---- */

TEST(init_on_bound_handle_is_ebusy)
{
	int fd = fs_new(3, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBUSY, fs_init(fd, 5, 0));
	EXPECT_EQ(3, fs_limit(fd));
}

TEST(init_on_new_handle_is_ebusy)
{
	int fd = fs_new(3, 0);
	int h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	EXPECT_EQ(-EBUSY, fs_init(h, 5, FAIRSEM_LIFO));
	EXPECT_EQ(fs_id(fd), fs_id(h));
	EXPECT_EQ(3, fs_limit(h));
}

TEST(add_past_max_is_eoverflow)
{
	int fd = fs_new(MAXP - 1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EOVERFLOW, fs_add(fd, 2));
	EXPECT_EQ(MAXP - 1, fs_limit(fd));
	EXPECT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(MAXP, fs_limit(fd));
	EXPECT_EQ(-EOVERFLOW, fs_add(fd, 1));
}

TEST(try_without_enough_permits_is_eagain)
{
	int fd = fs_new(2, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EAGAIN, fs_try(fd, 3));
	ASSERT_EQ(0, fs_try(fd, 2));
	EXPECT_EQ(-EAGAIN, fs_try(fd, 1));
	EXPECT_EQ(2, fs_holds(fd));
	EXPECT_EQ(0, fs_waiters(fd));
}

TEST(try_behind_a_waiter_is_eagain_even_if_it_fits)
{
	int fd = fs_new(2, 0);
	int w;

	ASSERT_LE(0, fd);
	w = fs_new_handle(fd, 0);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, fs_get(fd, 1));
	ASSERT_LE(1, fs_submit(w, 2));
	EXPECT_EQ(-EAGAIN, fs_try(fd, 1));
	EXPECT_EQ(1, fs_holds(fd));
	EXPECT_EQ(1, fs_waiters(fd));
}

TEST(nonblock_handle_blocking_acquire_is_eagain)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 1));
	ASSERT_EQ(0, fcntl(fd, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(-EAGAIN, fs_get(fd, 1));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(1, fs_holds(fd));
	/* and it is granted when it can be */
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(0, fs_get(fd, 1));
}

/* O_NONBLOCK never sleeps: a deadline already past answers as TRY does. */
TEST(nonblock_handle_with_a_past_deadline_is_eagain_not_etimedout)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 1));
	ASSERT_EQ(0, fcntl(fd, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(-EAGAIN, fs_acquire(fd, 1, NOW, 0));
	EXPECT_EQ(-EAGAIN, fs_acquire(fd, 1, NOW, FAIRSEM_ACQ_TRY));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(1, fs_holds(fd));
}

TEST(nonblock_handle_with_a_past_deadline_is_granted_when_it_fits)
{
	int fd = fs_new(2, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fcntl(fd, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(0, fs_acquire(fd, 1, NOW, 0));
	EXPECT_EQ(1, fs_holds(fd));
}

/* O_NONBLOCK is ACQUIRE's: a submit on such a handle queues all the same. */
TEST(nonblock_handle_submit_queues_and_returns_an_id)
{
	int fd = fs_new(1, 0);
	int w;

	ASSERT_LE(0, fd);
	w = fs_new_handle(fd, O_NONBLOCK);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, fs_get(fd, 1));
	EXPECT_LE(1, fs_submit(w, 1));
	EXPECT_EQ(1, fs_waiters(fd));
}

TEST(past_deadline_without_permits_is_etimedout_and_not_queued)
{
	int fd = fs_new(1, 0);
	int w;

	ASSERT_LE(0, fd);
	w = fs_new_handle(fd, 0);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, fs_get(fd, 1));
	EXPECT_EQ(-ETIMEDOUT, fs_acquire(w, 1, NOW, 0));
	EXPECT_EQ(-ETIMEDOUT, fs_acquire(w, 1, now_ns() - 1, 0));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(0, fs_holds(w));
	/* nothing stayed queued: the released permit is not taken by w */
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(past_deadline_with_permits_is_granted_at_once)
{
	int fd = fs_new(3, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, fs_acquire(fd, 2, NOW, 0));
	EXPECT_EQ(2, fs_holds(fd));
	EXPECT_EQ(0, fs_acquire(fd, 1, 1, 0));
	EXPECT_EQ(3, fs_holds(fd));
}

TEST(past_deadline_behind_a_waiter_is_etimedout_even_if_it_fits)
{
	int fd = fs_new(2, 0);
	int w, v;

	ASSERT_LE(0, fd);
	w = fs_new_handle(fd, 0);
	v = fs_new_handle(fd, 0);
	ASSERT_LE(0, w);
	ASSERT_LE(0, v);
	ASSERT_EQ(0, fs_get(fd, 1));
	ASSERT_LE(1, fs_submit(w, 2));
	EXPECT_EQ(-ETIMEDOUT, fs_acquire(v, 1, NOW, 0));
	EXPECT_EQ(1, fs_waiters(fd));
	EXPECT_EQ(0, fs_holds(v));
}

TEST(try_with_past_deadline_is_eagain)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 1));
	EXPECT_EQ(-EAGAIN, fs_acquire(fd, 1, NOW, FAIRSEM_ACQ_TRY));
	EXPECT_EQ(-EAGAIN, fs_acquire(fd, 1, now_ns() - 1, FAIRSEM_ACQ_TRY));
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(0, fs_acquire(fd, 1, NOW, FAIRSEM_ACQ_TRY));
	EXPECT_EQ(1, fs_holds(fd));
}

TEST(deadline_reached_is_etimedout_holding_nothing)
{
	int fd = fs_new(1, 0);
	int w;

	ASSERT_LE(0, fd);
	w = fs_new_handle(fd, 0);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, fs_get(fd, 1));
	EXPECT_EQ(-ETIMEDOUT, fs_acquire(w, 1, now_ns() + 50000000ULL, 0));
	EXPECT_EQ(0, fs_holds(w));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(1, fs_taken(fd));
}

TEST(deadline_beyond_the_kernel_time_range_means_no_deadline)
{
	static const uint64_t far[] = {
		1ULL << 63, (1ULL << 63) + 12345, FAIRSEM_NO_DEADLINE - 1,
	};
	int fd = fs_new(1, 0), w;

	ASSERT_LE(0, fd);
	w = fs_new_handle(fd, 0);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, fs_get(fd, 1));
	for (size_t i = 0; i < ARRAY_SIZE(far); i++) {
		struct fs_waiter t;

		/* it waits (not ETIMEDOUT at once), and is granted */
		ASSERT_EQ(0, fs_waiter_start(&t, w, 1, far[i], 0));
		ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
		ASSERT_EQ(0, fs_release(fd, 1));
		EXPECT_EQ(0, fs_waiter_join(&t));
		ASSERT_EQ(1, fs_holds(w));
		ASSERT_EQ(0, fs_release(w, 1));
		ASSERT_EQ(0, fs_get(fd, 1));
	}
}

TEST(signal_without_restart_is_eintr_holding_nothing)
{
	struct fs_waiter t;
	int fd = fs_new(1, 0);
	int w;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_catch(SIGUSR1, false));
	w = fs_new_handle(fd, 0);
	ASSERT_LE(0, w);
	ASSERT_EQ(0, fs_get(fd, 1));
	ASSERT_EQ(0, fs_waiter_start(&t, w, 1, FAIRSEM_NO_DEADLINE, 0));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(0, pthread_kill(t.thread, SIGUSR1));
	EXPECT_EQ(-EINTR, fs_waiter_join(&t));
	EXPECT_EQ(0, fs_holds(w));
	EXPECT_EQ(0, fs_waiters(fd));
}

TEST(blocking_acquire_after_close_is_eidrm)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EIDRM, fs_get(fd, 1));
	EXPECT_EQ(0, fs_holds(fd));
}

TEST(try_after_close_is_eidrm_even_with_permits_free)
{
	int fd = fs_new(5, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EIDRM, fs_try(fd, 1));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(acquire_after_close_with_past_deadline_is_eidrm)
{
	int fd = fs_new(0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EIDRM, fs_acquire(fd, 1, NOW, 0));
	EXPECT_EQ(-EIDRM, fs_acquire(fd, 1, NOW, FAIRSEM_ACQ_TRY));
}

TEST(acquire_on_closed_nonblock_handle_is_eidrm_not_eagain)
{
	int fd = fs_new(0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fcntl(fd, F_SETFL, O_NONBLOCK));
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EIDRM, fs_get(fd, 1));
}

TEST(new_handle_after_close_is_eidrm)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EIDRM, fs_new_handle(fd, 0));
	EXPECT_EQ(-EIDRM, fs_new_handle(fd, O_CLOEXEC));
	EXPECT_EQ(1, fs_handles(fd));
}

TEST(close_is_idempotent)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(FAIRSEM_INFO_CLOSED, fs_flags(fd) & FAIRSEM_INFO_CLOSED);
}

TEST(release_forget_add_remove_info_still_work_after_close)
{
	int fd = fs_new(4, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 3));
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(0, fs_forget(fd, 1));
	EXPECT_EQ(0, fs_add(fd, 2));
	EXPECT_EQ(0, fs_remove(fd, 1));
	EXPECT_EQ(-ENOENT, fs_withdraw(fd, 1));
	EXPECT_EQ(-EOVERFLOW, fs_add(fd, MAXP));
	EXPECT_EQ(1, fs_holds(fd));
	EXPECT_EQ(1, fs_taken(fd));
	EXPECT_EQ(4, fs_limit(fd));	/* 4 - 1 + 2 - 1 */
	EXPECT_EQ(FAIRSEM_INFO_CLOSED, fs_flags(fd));
}

/* ---- (a) no ENOMEM: a blocking acquire allocates nothing ---- */

#define FAILSLAB	"/sys/kernel/debug/failslab"

static int write_str(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, v, strlen(v));
	close(fd);
	return n == (ssize_t)strlen(v) ? 0 : -EIO;
}

/* Every slab allocation of a task with make-it-fail set fails. */
static int failslab_setup(void)
{
	if (access(FAILSLAB, F_OK))
		mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL);
	if (access(FAILSLAB "/probability", W_OK))
		return -ENOENT;
	if (write_str(FAILSLAB "/task-filter", "Y") ||
	    write_str(FAILSLAB "/ignore-gfp-wait", "N") ||
	    write_str(FAILSLAB "/interval", "1") ||
	    write_str(FAILSLAB "/times", "-1") ||
	    write_str(FAILSLAB "/verbose", "0") ||
	    write_str(FAILSLAB "/probability", "100"))
		return -EIO;
	return 0;
}

static void failslab_off(void)
{
	write_str(FAILSLAB "/probability", "0");
	write_str(FAILSLAB "/times", "1");
}

/* The make-it-fail switch of the calling thread, opened in advance. */
static int fail_switch(void)
{
	return open("/proc/thread-self/make-it-fail", O_WRONLY);
}

static int fail_set(int sw, bool on)
{
	return pwrite(sw, on ? "1" : "0", 1, 0) == 1 ? 0 : -EIO;
}

struct failing_waiter {
	int fd;
	int ret;
};

static void *failing_wait_fn(void *arg)
{
	struct failing_waiter *fw = arg;
	int sw = fail_switch();

	if (sw < 0 || fail_set(sw, true)) {
		fw->ret = -EPROTO;
		return NULL;
	}
	fw->ret = fs_get(fw->fd, 2);
	fail_set(sw, false);
	close(sw);
	return NULL;
}

TEST(acquire_allocates_nothing_so_never_fails_with_enomem)
{
	struct failing_waiter fw;
	int fd = fs_new(2, 0), w, sw, control;
	pthread_t t;

	ASSERT_LE(0, fd);
	if (failslab_setup()) {
		failslab_off();
		SKIP(return, "no failslab fault injection (CONFIG_FAILSLAB)");
	}
	w = fs_new_handle(fd, 0);
	ASSERT_LE(0, w);
	sw = fail_switch();
	ASSERT_LE(0, sw);

	/* the control: with injection on, NEW_HANDLE cannot allocate */
	ASSERT_EQ(0, fail_set(sw, true));
	control = fs_new_handle(fd, 0);
	ASSERT_EQ(0, fail_set(sw, false));
	if (control != -ENOMEM) {
		failslab_off();
		if (control >= 0)
			close(control);
		SKIP(return, "failslab does not fail NEW_HANDLE (%d)", control);
	}

	/* a blocking acquire that waits, with every allocation failing */
	ASSERT_EQ(0, fs_get(fd, 2));
	fw.fd = w;
	fw.ret = -EPROTO;
	ASSERT_EQ(0, pthread_create(&t, NULL, failing_wait_fn, &fw));
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(0, fs_release(fd, 2));
	pthread_join(t, NULL);
	EXPECT_EQ(0, fw.ret);
	EXPECT_EQ(2, fs_holds(w));

	/* and the other paths, here */
	ASSERT_EQ(0, fail_set(sw, true));
	EXPECT_EQ(0, fs_release(w, 2));
	EXPECT_EQ(0, fs_try(fd, 1));
	EXPECT_EQ(-ETIMEDOUT, fs_acquire(w, 2, now_ns() + 10000000ULL, 0));
	EXPECT_EQ(0, fs_release(fd, 1));
	ASSERT_EQ(0, fail_set(sw, false));
	failslab_off();
	EXPECT_EQ(0, fs_taken(fd));
}

TEST_HARNESS_MAIN
