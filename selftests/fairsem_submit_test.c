// SPDX-License-Identifier: GPL-2.0
/*
 * Submitted requests (FAIRSEM_IOC_SUBMIT, REAP, WITHDRAW): many
 * asynchronous requests on one handle, each test one behaviour of the
 * contract's "Submitted requests" section.
 */
#include <dirent.h>
#include <sys/epoll.h>
#include <linux/userfaultfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "fairsem_test_util.h"
#include "fairsem_named_util.h"
#include "kselftest_harness.h"

#define MAX_REQUESTS	"/sys/module/fairsem/parameters/max_requests"

/* The descriptors this process has open. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* opendir's own */
}

/* "queued=Q granted=G" of fdinfo's fairsem-submitted for @pid's @fd. */
static int submitted_of(pid_t pid, int fd, unsigned int *queued,
			unsigned int *granted)
{
	char path[64], buf[4096], *p;
	ssize_t n;
	int f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, fd);
	f = open(path, O_RDONLY);
	if (f < 0)
		return -errno;
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		return -EIO;
	buf[n] = 0;
	p = strstr(buf, "fairsem-submitted:\tqueued=");
	if (!p || sscanf(p, "fairsem-submitted:\tqueued=%u granted=%u",
			 queued, granted) != 2)
		return -ENOENT;
	return 0;
}

TEST(submit_granted_at_once_returns_zero_and_the_handle_holds_it)
{
	int fd = fs_new(3, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, fs_submit(fd, 2));
	EXPECT_EQ(2, fs_holds(fd));
	EXPECT_EQ(-EAGAIN, fs_reap1(fd));
	EXPECT_EQ(0, fs_revents(fd, POLLIN));
	EXPECT_EQ(0, fs_release(fd, 2));
	close(fd);
}

/* It is tried first: nothing allocated, no id taken, nothing in fdinfo. */
TEST(a_submit_granted_at_once_takes_no_id)
{
	int fd = fs_new(1, 0), i;

	ASSERT_LE(0, fd);
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, fs_submit(fd, 1));
		ASSERT_EQ(0, fs_release(fd, 1));
	}
	ASSERT_EQ(0, fs_get(fd, 1));
	/* The handle's first id, as if the five had never been. */
	EXPECT_EQ(1, fs_submit(fd, 1));
	EXPECT_EQ(1, fs_waiters(fd));
	close(fd);
}

TEST(submit_that_must_wait_returns_an_id_and_the_grant_polls_readable)
{
	int fd = fs_new(1, 0), id;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 1));
	id = fs_submit(fd, 1);
	ASSERT_LE(1, id);
	EXPECT_EQ(0, fs_revents(fd, POLLIN));
	EXPECT_EQ(1, fs_waiters(fd));
	EXPECT_EQ(-EAGAIN, fs_reap1(fd));
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(POLLIN | POLLRDNORM, fs_revents(fd, POLLIN | POLLRDNORM));
	EXPECT_EQ(id, fs_reap1(fd));
	EXPECT_EQ(0, fs_revents(fd, POLLIN));
	EXPECT_EQ(1, fs_holds(fd));
	close(fd);
}

TEST(ids_of_one_handle_are_distinct)
{
	int fd = fs_new(0, 0), a, b, c;

	ASSERT_LE(0, fd);
	a = fs_submit(fd, 1);
	b = fs_submit(fd, 1);
	c = fs_submit(fd, 1);
	ASSERT_LE(1, a);
	EXPECT_NE(a, b);
	EXPECT_NE(b, c);
	EXPECT_NE(a, c);
	EXPECT_EQ(3, fs_waiters(fd));
	close(fd);
}

TEST(reap_answers_the_ids_oldest_grant_first)
{
	int fd = fs_new(0, 0), id[5], i, n;
	uint32_t got[8];

	ASSERT_LE(0, fd);
	for (i = 0; i < 5; i++)
		ASSERT_LE(1, id[i] = fs_submit(fd, 1));
	ASSERT_EQ(0, fs_add(fd, 5));
	n = fs_reap(fd, got, 3);
	ASSERT_EQ(3, n);
	n = fs_reap(fd, got + 3, 8);
	ASSERT_EQ(2, n);
	for (i = 0; i < 5; i++)
		EXPECT_EQ(id[i], (int)got[i]);
	EXPECT_EQ(5, fs_holds(fd));
	close(fd);
}

/* At most 64 a call, whatever max says: only EAGAIN means none is left. */
TEST(reap_stores_at_most_64_ids_a_call)
{
	int fd = fs_new(0, 0), i;
	uint32_t got[100];

	ASSERT_LE(0, fd);
	for (i = 0; i < 100; i++)
		ASSERT_LE(1, fs_submit(fd, 1));
	ASSERT_EQ(0, fs_add(fd, 100));
	EXPECT_EQ(64, fs_reap(fd, got, 100));
	EXPECT_EQ(POLLIN, fs_revents(fd, POLLIN));
	EXPECT_EQ(36, fs_reap(fd, got + 64, 100));
	EXPECT_EQ(-EAGAIN, fs_reap(fd, got, 100));
	EXPECT_EQ(100, fs_holds(fd));
	close(fd);
}

TEST(submitted_requests_keep_their_places_among_other_handles)
{
	int fd = fs_new(0, 0), other, a, b;

	ASSERT_LE(0, fd);
	other = fs_new_handle(fd, 0);
	ASSERT_LE(0, other);
	ASSERT_LE(1, a = fs_submit(fd, 1));
	ASSERT_LE(1, fs_submit(other, 1));
	ASSERT_LE(1, b = fs_submit(fd, 1));

	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(a, fs_reap1(fd));
	EXPECT_EQ(0, fs_revents(other, POLLIN));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(-EAGAIN, fs_reap1(fd));
	EXPECT_EQ(POLLIN, fs_revents(other, POLLIN));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(b, fs_reap1(fd));
	close(other);
	close(fd);
}

TEST(a_big_submitted_head_holds_back_the_small_behind_it)
{
	int fd = fs_new(1, 0), other, big;

	ASSERT_LE(0, fd);
	other = fs_new_handle(fd, 0);
	ASSERT_LE(0, other);
	ASSERT_LE(1, big = fs_submit(fd, 2));
	ASSERT_LE(1, fs_submit(other, 1));
	EXPECT_EQ(0, fs_revents(other, POLLIN));
	ASSERT_EQ(0, fs_add(fd, 2));
	EXPECT_EQ(big, fs_reap1(fd));
	EXPECT_EQ(POLLIN, fs_revents(other, POLLIN));
	close(other);
	close(fd);
}

TEST(reap_without_a_grant_is_eagain_and_with_max_0_einval)
{
	int fd = fs_new(0, 0);
	struct fairsem_reap r = { .max = 1, .reserved = 1 };
	uint32_t id;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EAGAIN, fs_reap(fd, &id, 1));
	ASSERT_LE(1, fs_submit(fd, 1));
	EXPECT_EQ(-EAGAIN, fs_reap(fd, &id, 1));
	EXPECT_EQ(-EINVAL, fs_reap(fd, &id, 0));
	r.ids = (uintptr_t)&id;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_REAP, &r)));
	close(fd);
}

TEST(reap_that_faults_changes_nothing)
{
	int fd = fs_new(0, 0), a, b;
	uint32_t got[2];

	ASSERT_LE(0, fd);
	ASSERT_LE(1, a = fs_submit(fd, 1));
	ASSERT_LE(1, b = fs_submit(fd, 1));
	ASSERT_EQ(0, fs_add(fd, 2));
	EXPECT_EQ(-EFAULT, fs_reap(fd, fs_bad_ptr(), 2));
	EXPECT_EQ(POLLIN, fs_revents(fd, POLLIN));
	ASSERT_EQ(2, fs_reap(fd, got, 2));
	EXPECT_EQ(a, (int)got[0]);
	EXPECT_EQ(b, (int)got[1]);
	close(fd);
}

struct fs_reaper {
	int fd;
	uint32_t *ids;
	int ret;
};

static void *fs_reaper_fn(void *arg)
{
	struct fs_reaper *r = arg;

	r->ret = fs_reap(r->fd, r->ids, 1);
	return NULL;
}

/* A page whose first touch waits for the test: a userfaultfd, or -errno. */
static int fs_uffd_page(void *page, size_t len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)page, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	int uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);

	if (uffd < 0)
		return -errno;
	if (ioctl(uffd, UFFDIO_API, &api) || ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		close(uffd);
		return -errno;
	}
	return uffd;
}

/*
 * A reap whose buffer faults, held in its fault by a userfaultfd while a
 * withdraw of the same grant comes: whichever comes first takes it, the
 * other does not find it, and a reap that fails leaves nothing to revive.
 */
TEST(a_withdraw_while_a_reap_faults_is_final)
{
	size_t len = (size_t)sysconf(_SC_PAGESIZE);
	struct fs_reaper r = { .ret = 1 };
	struct uffd_msg msg;
	pthread_t th;
	int a, uffd;

	r.fd = fs_new(0, 0);
	ASSERT_LE(0, r.fd);
	ASSERT_LE(1, a = fs_submit(r.fd, 1));
	ASSERT_EQ(0, fs_add(r.fd, 1));		/* granted, not reaped */
	r.ids = mmap(NULL, len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r.ids);
	/* The sysctl is there exactly when the kernel has userfaultfd. */
	if (access("/proc/sys/vm/unprivileged_userfaultfd", F_OK))
		SKIP(return, "no userfaultfd (CONFIG_USERFAULTFD)");
	uffd = fs_uffd_page(r.ids, len);
	ASSERT_LE(0, uffd);
	ASSERT_EQ(0, pthread_create(&th, NULL, fs_reaper_fn, &r));
	ASSERT_EQ((ssize_t)sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);

	EXPECT_EQ(0, fs_withdraw(r.fd, a));	/* the reap has not taken it */
	/* The reap's buffer goes: its fault ends in EFAULT. */
	ASSERT_EQ(0, munmap(r.ids, len));
	close(uffd);
	pthread_join(th, NULL);
	EXPECT_EQ(-EFAULT, r.ret);
	EXPECT_EQ(-EAGAIN, fs_reap1(r.fd));	/* nothing came back */
	EXPECT_EQ(-ENOENT, fs_withdraw(r.fd, a));
	EXPECT_EQ(0, fs_holds(r.fd));
	EXPECT_EQ(1, fs_available(r.fd));
	close(r.fd);
}

TEST(withdraw_of_a_queued_request_grants_the_one_behind)
{
	int fd = fs_new(1, 0), other, a;

	ASSERT_LE(0, fd);
	other = fs_new_handle(fd, 0);
	ASSERT_LE(0, other);
	ASSERT_LE(1, a = fs_submit(fd, 2));
	ASSERT_LE(1, fs_submit(other, 1));
	EXPECT_EQ(0, fs_withdraw(fd, a));
	EXPECT_EQ(POLLIN, fs_revents(other, POLLIN));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(-ENOENT, fs_withdraw(fd, a));
	close(other);
	close(fd);
}

TEST(withdraw_of_a_grant_not_reaped_gives_it_back)
{
	int fd = fs_new(0, 0), a;

	ASSERT_LE(0, fd);
	ASSERT_LE(1, a = fs_submit(fd, 2));
	ASSERT_EQ(0, fs_add(fd, 2));
	EXPECT_EQ(2, fs_holds(fd));
	EXPECT_EQ(0, fs_withdraw(fd, a));
	EXPECT_EQ(0, fs_holds(fd));
	EXPECT_EQ(2, fs_available(fd));
	EXPECT_EQ(0, fs_revents(fd, POLLIN));
	EXPECT_EQ(-EAGAIN, fs_reap1(fd));
	close(fd);
}

TEST(withdraw_of_a_grant_gives_back_only_what_the_handle_still_holds)
{
	int fd = fs_new(0, 0), a;

	ASSERT_LE(0, fd);
	ASSERT_LE(1, a = fs_submit(fd, 3));
	ASSERT_EQ(0, fs_add(fd, 3));
	ASSERT_EQ(0, fs_release(fd, 2));
	EXPECT_EQ(0, fs_withdraw(fd, a));
	EXPECT_EQ(0, fs_holds(fd));
	EXPECT_EQ(0, fs_taken(fd));
	close(fd);
}

TEST(withdraw_of_an_unknown_reaped_or_immediate_id_is_enoent)
{
	int fd = fs_new(1, 0), a;

	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOENT, fs_withdraw(fd, 1));
	EXPECT_EQ(0, fs_submit(fd, 1));
	EXPECT_EQ(-ENOENT, fs_withdraw(fd, 0));
	ASSERT_LE(1, a = fs_submit(fd, 1));
	ASSERT_EQ(0, fs_release(fd, 1));
	ASSERT_EQ(a, fs_reap1(fd));
	EXPECT_EQ(-ENOENT, fs_withdraw(fd, a));
	EXPECT_EQ(1, fs_holds(fd));
	close(fd);
}

TEST(close_refuses_the_queued_and_keeps_the_grants_to_reap)
{
	int fd = fs_new(0, 0), a, b;

	ASSERT_LE(0, fd);
	ASSERT_LE(1, a = fs_submit(fd, 1));
	ASSERT_LE(1, b = fs_submit(fd, 1));
	ASSERT_EQ(0, fs_add(fd, 1));
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(POLLIN | POLLHUP | POLLERR,
		  fs_revents(fd, POLLIN | POLLHUP | POLLERR));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(-ENOENT, fs_withdraw(fd, b));
	EXPECT_EQ(a, fs_reap1(fd));
	EXPECT_EQ(-EIDRM, fs_reap1(fd));
	EXPECT_EQ(-EIDRM, fs_submit(fd, 1));
	EXPECT_EQ(1, fs_holds(fd));
	close(fd);
}

TEST(closing_the_handle_withdraws_its_requests_and_gives_back_its_grants)
{
	int fd = fs_new(0, 0), other, i;

	ASSERT_LE(0, fd);
	other = fs_new_handle(fd, 0);
	ASSERT_LE(0, other);
	for (i = 0; i < 10; i++)
		ASSERT_LE(1, fs_submit(other, 1));
	ASSERT_LE(1, fs_submit(fd, 3));
	ASSERT_EQ(0, fs_add(fd, 2));
	EXPECT_EQ(2, fs_taken(fd));
	EXPECT_EQ(9, fs_waiters(fd));
	close(other);
	EXPECT_EQ(1, fs_waiters(fd));
	EXPECT_EQ(0, fs_taken(fd));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(POLLIN, fs_revents(fd, POLLIN));
	close(fd);
}

TEST(a_killed_process_leaves_the_queue_with_all_its_requests)
{
	int fd = fs_new(0, 0), ready[2], i;
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pipe(ready));
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int mine = fs_new_handle(fd, 0);

		for (i = 0; i < 1000; i++)
			if (mine < 0 || fs_submit(mine, 1) < 1)
				_exit(1);
		fs_put(ready[1], 'q');
		pause();
		_exit(0);
	}
	ASSERT_EQ('q', fs_take(ready[0]));
	EXPECT_EQ(1000, fs_waiters(fd));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	fs_wait_child(pid);
	EXPECT_EQ(0, fs_waiters(fd));
	ASSERT_LE(1, fs_submit(fd, 1));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_LE(1, fs_reap1(fd));
	close(ready[0]);
	close(ready[1]);
	close(fd);
}

/* Raise the limit by one permit @n times: what grants land meanwhile. */
struct adder {
	int fd;
	int n;
	int failed;
};

static void *adder_fn(void *arg)
{
	struct adder *a = arg;
	int i;

	for (i = 0; i < a->n; i++)
		a->failed += fs_add(a->fd, 1) != 0;
	return NULL;
}

/*
 * A handle with 10,000 requests leaves the queue a batch at a time, and
 * grants land between the batches, some of them on its own requests: the
 * handle gives back every one, and the requests behind it are granted.
 */
TEST(closing_a_handle_of_ten_thousand_requests_while_grants_land_loses_nothing)
{
	struct adder add;
	int fd = fs_new(0, 0), other, i, got = 0, n;
	uint32_t ids[64];
	pthread_t t;

	ASSERT_LE(0, fd);
	other = fs_new_handle(fd, 0);
	ASSERT_LE(0, other);
	for (i = 0; i < 10000; i++)
		ASSERT_LE(1, fs_submit(other, 1));
	for (i = 0; i < 100; i++)
		ASSERT_LE(1, fs_submit(fd, 1));
	add = (struct adder){ .fd = fd, .n = 2000 };
	ASSERT_EQ(0, pthread_create(&t, NULL, adder_fn, &add));
	close(other);
	pthread_join(t, NULL);
	EXPECT_EQ(0, add.failed);

	EXPECT_EQ(2000, fs_limit(fd));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(100, fs_taken(fd));	/* the closed handle holds nothing */
	while ((n = fs_reap(fd, ids, 64)) > 0)
		got += n;
	EXPECT_EQ(100, got);
	close(fd);
}

TEST(each_grant_wakes_edge_triggered_epoll)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	int fd = fs_new(0, 0), ep = epoll_create1(0), i;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	for (i = 0; i < 3; i++)
		ASSERT_LE(1, fs_submit(fd, 1));
	EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, fs_add(fd, 1));
		EXPECT_EQ(1, epoll_wait(ep, &ev, 1, 0));
		EXPECT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	}
	close(ep);
	close(fd);
}

TEST(level_triggered_epoll_reports_a_grant_until_it_is_reaped)
{
	struct epoll_event ev = { .events = EPOLLIN }, out[2];
	int fd = fs_new(0, 0), ep = epoll_create1(0), id;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, ep);
	ev.data.u32 = 42;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	ASSERT_LE(1, id = fs_submit(fd, 1));
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 0));
	ASSERT_EQ(0, fs_add(fd, 1));
	ASSERT_EQ(1, epoll_wait(ep, out, 2, 0));
	EXPECT_EQ(42, out[0].data.u32);
	EXPECT_EQ(EPOLLIN, out[0].events & (EPOLLIN | EPOLLHUP | EPOLLERR));
	EXPECT_EQ(1, epoll_wait(ep, out, 2, 0));
	EXPECT_EQ(id, fs_reap1(fd));
	EXPECT_EQ(0, epoll_wait(ep, out, 2, 0));
	close(ep);
	close(fd);
}

/* A request for more than the limit is valid: it waits for the limit. */
TEST(a_request_above_the_limit_waits_until_the_limit_grows)
{
	int fd = fs_new(2, 0), id;

	ASSERT_LE(0, fd);
	ASSERT_LE(1, id = fs_submit(fd, 5));
	EXPECT_EQ(1, fs_waiters(fd));
	ASSERT_EQ(0, fs_add(fd, 2));
	EXPECT_EQ(1, fs_queued(fd));
	EXPECT_EQ(-EAGAIN, fs_reap1(fd));
	ASSERT_EQ(0, fs_add(fd, 1));
	EXPECT_EQ(0, fs_queued(fd));
	EXPECT_EQ(1, fs_granted(fd));
	EXPECT_EQ(id, fs_reap1(fd));
	EXPECT_EQ(5, fs_holds(fd));
	close(fd);
}

/* A handle's queued request does not stand in the way of its own ACQUIRE. */
TEST(blocking_acquire_works_while_the_handle_has_a_queued_request)
{
	int fd = fs_new(1, FAIRSEM_LIFO);

	ASSERT_LE(0, fd);
	ASSERT_LE(1, fs_submit(fd, 2));
	/* LIFO: a request that fits now is granted despite the waiter */
	EXPECT_EQ(0, fs_get(fd, 1));
	EXPECT_EQ(1, fs_holds(fd));
	EXPECT_EQ(1, fs_queued(fd));
	close(fd);
}

TEST(withdraw_of_a_grant_keeps_the_handles_other_permits)
{
	int fd = fs_new(2, 0), id;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 2));
	ASSERT_LE(1, id = fs_submit(fd, 3));
	ASSERT_EQ(0, fs_add(fd, 3));
	ASSERT_EQ(5, fs_holds(fd));
	EXPECT_EQ(0, fs_withdraw(fd, id));
	EXPECT_EQ(2, fs_holds(fd));
	EXPECT_EQ(2, fs_taken(fd));
	EXPECT_EQ(0, fs_granted(fd));
	close(fd);
}

TEST(submit_on_a_jobserver_is_einval_and_unbound_ebadfd)
{
	int js = fs_new(2, FAIRSEM_JOBSERVER), fd = fs_open();
	uint32_t id;

	ASSERT_LE(0, js);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_submit(js, 1));
	EXPECT_EQ(-EBADFD, fs_submit(fd, 1));
	EXPECT_EQ(-EBADFD, fs_reap(fd, &id, 1));
	EXPECT_EQ(-EBADFD, fs_withdraw(fd, 1));
	close(fd);
	close(js);
}

TEST(submit_of_bad_counts_is_einval)
{
	struct fairsem_counts c = { .nkinds = 1 };
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fs_submit(fd, 0));
	EXPECT_EQ(-EINVAL, fs_submit(fd, FAIRSEM_MAX_PERMITS + 1));
	c.count[0] = 1;
	c.nkinds = 2;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_SUBMIT, &c)));
	c.nkinds = 0;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_SUBMIT, &c)));
	c.nkinds = FAIRSEM_MAX_KINDS + 1;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(fd, FAIRSEM_IOC_SUBMIT, &c)));
	EXPECT_EQ(0, fs_waiters(fd));
	close(fd);
}

/*
 * SUBMIT takes no flag: not ACQUIRE's, RELEASE's or RESIZE's, nor any
 * other; checked with the argument, so on an unbound handle too.
 */
TEST(submit_with_flags_is_einval)
{
	static const uint32_t flags[] = {
		FAIRSEM_ACQ_TRY, FS_OP_BIT1, FAIRSEM_RELEASE_FORGET,
		FAIRSEM_RESIZE_ADD, FAIRSEM_RESIZE_REMOVE, 1u << 5, 1u << 31,
	};
	int fd = fs_new(0, 0), unbound = fs_open();
	size_t i;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, unbound);
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		EXPECT_EQ(-EINVAL, fs_count_ioctl(fd, FAIRSEM_IOC_SUBMIT, 1,
						  flags[i]));
		EXPECT_EQ(-EINVAL, fs_count_ioctl(unbound, FAIRSEM_IOC_SUBMIT,
						  1, flags[i]));
	}
	EXPECT_EQ(0, fs_waiters(fd));
	/* the same request without a flag is queued */
	EXPECT_LE(1, fs_count_ioctl(fd, FAIRSEM_IOC_SUBMIT, 1, 0));
	EXPECT_EQ(1, fs_waiters(fd));
	close(unbound);
	close(fd);
}

TEST(read_only_handles_cannot_submit_reap_or_withdraw)
{
	char dir[64];
	int dfd, fd, ro;
	uint32_t id;

	ASSERT_EQ(0, fsn_mount_tmp(dir, sizeof(dir), NULL));
	dfd = fsn_opendir(dir);
	ASSERT_LE(0, dfd);
	fd = fsn_create(dfd, "s", 1, 0, 0644);
	ASSERT_LE(0, fd);
	ro = fsn_open(dir, "s", O_RDONLY);
	ASSERT_LE(0, ro);
	EXPECT_EQ(-EBADF, fs_submit(ro, 1));
	EXPECT_EQ(-EBADF, fs_reap(ro, &id, 1));
	EXPECT_EQ(-EBADF, fs_withdraw(ro, 1));
	close(ro);
	close(fd);
	close(dfd);
	fsn_unmount(dir);
}

TEST(a_vector_request_is_submitted_whole)
{
	struct fairsem_init in = {
		.limit = { 1, 100 }, .nkinds = 2,
	};
	struct fairsem_counts c = { .count = { 1, 60 }, .nkinds = 2 };
	struct fairsem_info_kinds info;
	int fd = fs_open(), a;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, FAIRSEM_IOC_INIT, &in));
	EXPECT_EQ(0, fs_ret(ioctl(fd, FAIRSEM_IOC_SUBMIT, &c)));
	c.count[0] = 0;
	a = fs_ret(ioctl(fd, FAIRSEM_IOC_SUBMIT, &c));
	ASSERT_LE(1, a);
	ASSERT_EQ(0, ioctl(fd, FAIRSEM_IOC_INFO, &info));
	EXPECT_EQ(60, info.kind[1].holds);
	c.count[0] = 1;
	c.count[1] = 60;
	ASSERT_EQ(0, ioctl(fd, FAIRSEM_IOC_RELEASE, &c));
	EXPECT_EQ(a, fs_reap1(fd));
	ASSERT_EQ(0, ioctl(fd, FAIRSEM_IOC_INFO, &info));
	EXPECT_EQ(0, info.kind[0].holds);
	EXPECT_EQ(60, info.kind[1].holds);
	close(fd);
}

TEST(fdinfo_counts_the_queued_and_the_grants_to_reap)
{
	unsigned int queued = 99, granted = 99;
	int fd = fs_new(0, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, submitted_of(getpid(), fd, &queued, &granted));
	EXPECT_EQ(0, queued);
	EXPECT_EQ(0, granted);
	ASSERT_LE(1, fs_submit(fd, 1));
	ASSERT_LE(1, fs_submit(fd, 1));
	ASSERT_LE(1, fs_submit(fd, 1));
	ASSERT_EQ(0, fs_add(fd, 1));
	ASSERT_EQ(0, submitted_of(getpid(), fd, &queued, &granted));
	EXPECT_EQ(2, queued);
	EXPECT_EQ(1, granted);
	close(fd);
}

/* Write @val to the module parameter max_requests: 0 or -errno. */
static int set_max_requests(const char *val)
{
	int f = open(MAX_REQUESTS, O_WRONLY);
	ssize_t n;

	if (f < 0)
		return -errno;
	n = write(f, val, strlen(val));
	close(f);
	return n == (ssize_t)strlen(val) ? 0 : -EIO;
}

TEST(more_than_max_requests_is_enospc)
{
	int fd = fs_new(0, 0), a;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, set_max_requests("2"));
	ASSERT_LE(1, a = fs_submit(fd, 1));
	ASSERT_LE(1, fs_submit(fd, 1));
	EXPECT_EQ(-ENOSPC, fs_submit(fd, 1));
	EXPECT_EQ(2, fs_waiters(fd));
	ASSERT_EQ(0, fs_withdraw(fd, a));
	EXPECT_LE(1, fs_submit(fd, 1));
	ASSERT_EQ(0, set_max_requests("1048576"));
	close(fd);
}

/* A grant not reaped counts; the submit tried first does not pass it. */
TEST(a_handle_at_max_requests_is_enospc_even_where_it_would_be_granted)
{
	int fd = fs_new(1, 0), id;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, set_max_requests("1"));
	EXPECT_EQ(0, fs_submit(fd, 1));	/* at once: no request kept */
	ASSERT_LE(1, id = fs_submit(fd, 1));
	ASSERT_EQ(0, fs_add(fd, 5));	/* granted, not reaped */
	EXPECT_EQ(4, fs_available(fd));
	EXPECT_EQ(-ENOSPC, fs_submit(fd, 1));
	EXPECT_EQ(id, fs_reap1(fd));
	EXPECT_EQ(0, fs_submit(fd, 1));
	ASSERT_EQ(0, set_max_requests("1048576"));
	close(fd);
}

/*
 * 100,000 waiters, in ten rounds of STEP; FAIRSEM_TEST_SCALE (a percentage,
 * as in fairsem_race_test.c) makes fewer rounds, never fewer than one:
 * emulated foreign architectures and the debug kernel set it.
 */
#define STEP		10000
#define MANY		(rounds() * STEP)

static int rounds(void)
{
	const char *s = getenv("FAIRSEM_TEST_SCALE");
	int pct = s ? atoi(s) : 100;

	if (pct < 1 || pct > 100)
		pct = 100;
	return 10 * pct / 100 > 1 ? 10 * pct / 100 : 1;
}

/*
 * The child: its own handle, one request after each STEP of the parent's,
 * never reaped; told by a byte on @go, it answers on @done.
 */
static void interleaver(int fd, int go, int done)
{
	int mine = fs_new_handle(fd, 0), i;

	if (mine < 0)
		_exit(1);
	fs_put(done, (char)mine);
	for (i = 0; i < MANY / STEP; i++) {
		if (fs_take(go) != 's' || fs_submit(mine, 1) < 1)
			_exit(2);
		fs_put(done, 'd');
	}
	pause();
	_exit(0);
}

/* Slab: of /proc/meminfo, in kB, or -1. */
static long slab_kb(void)
{
	char line[128];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Slab: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* The parent's STEP grants of round @round, oldest first, or -1. */
static int reap_round(int fd, const uint32_t *id, int round)
{
	uint32_t got[64];
	int n, i, seen = 0;

	while (seen < STEP) {
		n = fs_reap(fd, got, 64);
		if (n < 0)
			return -1;
		for (i = 0; i < n; i++)
			if (got[i] != id[round * STEP + seen + i])
				return -1;
		seen += n;
	}
	return fs_reap(fd, got, 1) == -EAGAIN ? 0 : -1;
}

FIXTURE(many) {};
FIXTURE_SETUP(many) {}
FIXTURE_TEARDOWN(many) {}

/* 100,000 submits and 1,600 reaps under emulation: minutes, not seconds. */
TEST_F_TIMEOUT(many, a_hundred_thousand_waiters_on_one_descriptor_keep_fifo_across_processes, 900)
{
	int fd = fs_new(0, 0), go[2], done[2], fds, child_fd, r, i;
	unsigned int queued, granted;
	uint64_t t0, t1;
	long slab0, slab1;
	uint32_t *id;
	pid_t pid;

	ASSERT_LE(0, fd);
	id = calloc(MANY, sizeof(*id));
	ASSERT_NE(NULL, id);
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		interleaver(fd, go[0], done[1]);
	child_fd = fs_take(done[0]);
	ASSERT_LE(0, child_fd);
	fds = open_fds();
	slab0 = slab_kb();
	t0 = now_ns();

	for (r = 0; r < MANY / STEP; r++) {
		for (i = 0; i < STEP; i++) {
			int ret = fs_submit(fd, 1);

			ASSERT_LE(1, ret);
			id[r * STEP + i] = ret;
		}
		ASSERT_EQ(0, fs_put(go[1], 's'));
		ASSERT_EQ('d', fs_take(done[0]));
	}
	t1 = now_ns();
	slab1 = slab_kb();
	EXPECT_EQ(MANY + MANY / STEP, fs_waiters(fd));
	EXPECT_EQ(fds, open_fds());
	/* Figures for the record, not checked: emulation sets the time. */
	TH_LOG("%d waiters, %d descriptors open; %llu ns a submit",
	       MANY + MANY / STEP, fds,
	       (unsigned long long)((t1 - t0) / (MANY + MANY / STEP)));
	TH_LOG("slab +%ld kB, %ld bytes a waiter (slub_debug's tracking included)",
	       slab1 - slab0, (slab1 - slab0) * 1024 / MANY);

	for (r = 0; r < MANY / STEP; r++) {
		ASSERT_EQ(0, fs_add(fd, STEP + 1));
		ASSERT_EQ(0, reap_round(fd, id, r));
		ASSERT_EQ(0, submitted_of(pid, child_fd, &queued, &granted));
		ASSERT_EQ(r + 1, granted);
		ASSERT_EQ(MANY / STEP - r - 1, queued);
	}
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(MANY, fs_holds(fd));
	kill(pid, SIGKILL);
	fs_wait_child(pid);
	free(id);
	close(fd);
}

TEST_HARNESS_MAIN
