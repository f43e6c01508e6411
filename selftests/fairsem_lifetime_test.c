// SPDX-License-Identifier: GPL-2.0
/*
 * Lifetimes: what a dying holder or waiter leaves behind, handles shared by
 * fork/dup/SCM_RIGHTS, NEW_HANDLE, CLOSE waking every waiter, and the
 * semaphore living as long as any of its handles.
 *
 * A child's files are released before its parent can reap it (exit_files()
 * and the deferred fput run in do_exit() before exit_notify()), so after
 * waitpid() whatever the child's handle held has been given back.
 */
#include <sys/socket.h>

#include "fairsem_test_util.h"
#include "kselftest_harness.h"

/*
 * A child with its own handle on fd's semaphore.  It acquires `hold` (if
 * nonzero) and writes 'h'; then, if `wait` is nonzero, it acquires `wait`
 * more, blocking.  It stays until killed or its pipe closes.
 */
static pid_t spawn(int fd, uint64_t hold, uint64_t wait, int *ctl)
{
	int up[2], down[2];
	pid_t pid;

	if (pipe(up) || pipe(down))
		return -1;
	pid = fs_fork();
	if (pid == 0) {
		int h = fs_new_handle(fd, 0);

		close(up[0]);
		close(down[1]);
		if (h < 0)
			_exit(1);
		close(fd);	/* only its own handle keeps anything */
		if (hold && fs_get(h, hold))
			_exit(2);
		fs_put(up[1], 'h');
		if (wait)
			fs_get(h, wait);
		fs_take(down[0]);	/* EOF when the parent lets go */
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	if (pid < 0 || fs_take(up[0]) != 'h') {
		close(up[0]);
		close(down[1]);
		return -1;
	}
	close(up[0]);
	*ctl = down[1];
	return pid;
}

static int kill_and_reap(pid_t pid)
{
	int status;

	if (kill(pid, SIGKILL))
		return -errno;
	status = fs_wait_child(pid);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : -EPROTO;
}

TEST(holder_killed_by_sigkill_gives_its_permits_to_a_waiter)
{
	int fd = fs_new(2, 0), w, ctl;
	pid_t child;

	ASSERT_LE(0, fd);
	child = spawn(fd, 2, 0, &ctl);
	ASSERT_LT(0, child);
	ASSERT_EQ(2, fs_taken(fd));
	w = fs_new_handle(fd, 0);
	ASSERT_LE(0, w);
	ASSERT_LE(1, fs_submit(w, 2));
	ASSERT_EQ(0, kill_and_reap(child));
	EXPECT_EQ(2, fs_holds(w));
	EXPECT_EQ(1, fs_granted(w));
	EXPECT_EQ(2, fs_taken(fd));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(2, fs_handles(fd));
}

TEST(holder_exiting_normally_gives_its_permits_back)
{
	int fd = fs_new(3, 0), ctl, status;
	pid_t child;

	ASSERT_LE(0, fd);
	child = spawn(fd, 3, 0, &ctl);
	ASSERT_LT(0, child);
	ASSERT_EQ(3, fs_taken(fd));
	close(ctl);
	status = fs_wait_child(child);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(3, fs_available(fd));
}

TEST(waiter_killed_by_sigkill_leaves_nothing_queued)
{
	int fd = fs_new(1, 0), ctl;
	pid_t child;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 1));
	child = spawn(fd, 0, 1, &ctl);
	ASSERT_LT(0, child);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(0, kill_and_reap(child));
	EXPECT_EQ(0, fs_waiters(fd));
	/* the released permit stays free: nobody dead took it */
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(1, fs_available(fd));
	EXPECT_EQ(1, fs_handles(fd));
}

TEST(killed_head_waiter_unblocks_its_followers)
{
	int fd = fs_new(3, 0), w, ctl;
	pid_t child;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 2));
	child = spawn(fd, 0, 2, &ctl);
	ASSERT_LT(0, child);
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	w = fs_new_handle(fd, 0);
	ASSERT_LE(0, w);
	ASSERT_LE(1, fs_submit(w, 1));
	ASSERT_EQ(0, kill_and_reap(child));
	EXPECT_EQ(1, fs_holds(w));
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(3, fs_taken(fd));
}

TEST(exit_with_a_queued_submitted_request_withdraws_it)
{
	int fd = fs_new(1, 0), status;
	pid_t child;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 1));
	child = fs_fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		int h = fs_new_handle(fd, 0);

		_exit(h >= 0 && fs_submit(h, 1) >= 1 ? 0 : 1);
	}
	status = fs_wait_child(child);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, fs_waiters(fd));
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(exit_with_a_granted_unreaped_request_gives_it_back)
{
	int fd = fs_new(0, 0), up[2], status;
	pid_t child;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pipe(up));
	child = fs_fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		int h = fs_new_handle(fd, 0);

		if (h < 0 || fs_submit(h, 2) < 1)
			_exit(1);
		fs_put(up[1], 'q');
		/* wait for the grant, never reap it */
		while (fs_granted(h) != 1)
			fs_sleep_us(1000);
		_exit(0);
	}
	ASSERT_EQ('q', fs_take(up[0]));
	ASSERT_EQ(0, fs_add(fd, 2));
	status = fs_wait_child(child);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(2, fs_available(fd));
}

TEST(handle_shared_by_fork_keeps_permits_until_the_last_reference_closes)
{
	int fd = fs_new(3, 0), h, go[2], status;
	pid_t child;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_get(h, 2));
	ASSERT_EQ(0, pipe(go));
	child = fs_fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		close(go[1]);
		fs_take(go[0]);
		/* the shared handle: the child sees what the parent took */
		_exit(fs_holds(h) == 2 ? 0 : 1);
	}
	close(go[0]);
	ASSERT_EQ(0, close(h));
	EXPECT_EQ(2, fs_taken(fd));
	EXPECT_EQ(2, fs_handles(fd));
	close(go[1]);
	status = fs_wait_child(child);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(1, fs_handles(fd));
}

TEST(dup_shares_the_handle_and_its_permits)
{
	int fd = fs_new(3, 0), h, d;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	d = dup(h);
	ASSERT_LE(0, d);
	ASSERT_EQ(0, fs_get(h, 2));
	EXPECT_EQ(2, fs_holds(d));
	EXPECT_EQ(0, fs_release(d, 1));
	EXPECT_EQ(1, fs_holds(h));
	EXPECT_EQ(2, fs_handles(fd));
	ASSERT_EQ(0, close(h));
	EXPECT_EQ(1, fs_taken(fd));
	ASSERT_EQ(0, close(d));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(handle_passed_by_scm_rights_shares_its_permits)
{
	int fd = fs_new(3, 0), h, sv[2], got = -1;
	char cbuf[CMSG_SPACE(sizeof(int))], byte = 'x';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_get(h, 2));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &h, sizeof(int));
	ASSERT_EQ(1, sendmsg(sv[0], &msg, 0));
	ASSERT_EQ(0, close(h));
	memset(cbuf, 0, sizeof(cbuf));
	ASSERT_EQ(1, recvmsg(sv[1], &msg, 0));
	cm = CMSG_FIRSTHDR(&msg);
	ASSERT_NE(NULL, cm);
	memcpy(&got, CMSG_DATA(cm), sizeof(int));
	ASSERT_LE(0, got);
	EXPECT_EQ(2, fs_holds(got));
	EXPECT_EQ(2, fs_taken(fd));
	ASSERT_EQ(0, close(got));
	EXPECT_EQ(0, fs_taken(fd));
}

TEST(new_handle_has_independent_accounting)
{
	int fd = fs_new(5, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	EXPECT_EQ(fs_id(fd), fs_id(h));
	ASSERT_EQ(0, fs_get(h, 3));
	ASSERT_EQ(0, fs_get(fd, 1));
	EXPECT_EQ(3, fs_holds(h));
	EXPECT_EQ(1, fs_holds(fd));
	EXPECT_EQ(4, fs_taken(fd));
	EXPECT_EQ(4, fs_taken(h));
	EXPECT_EQ(-EINVAL, fs_release(fd, 2));
	ASSERT_EQ(0, close(h));
	EXPECT_EQ(1, fs_taken(fd));
	EXPECT_EQ(1, fs_holds(fd));
}

TEST(new_handle_returns_its_fd_in_the_struct_and_as_return_value)
{
	struct fairsem_handle nh = { .flags = 0, .fd = -7 };
	int fd = fs_new(1, 0), ret;

	ASSERT_LE(0, fd);
	ret = ioctl(fd, FAIRSEM_IOC_NEW_HANDLE, &nh);
	ASSERT_LE(0, ret);
	EXPECT_EQ(ret, nh.fd);
	EXPECT_NE(fd, ret);
	EXPECT_EQ(0, fcntl(ret, F_GETFD) & FD_CLOEXEC);
	/* open for reading and writing, as the handle it came from */
	EXPECT_NE(O_WRONLY, fcntl(ret, F_GETFL) & O_ACCMODE);
	EXPECT_EQ(fs_id(fd), fs_id(ret));
	EXPECT_EQ(2, fs_handles(fd));
}

TEST(new_handle_honours_o_cloexec)
{
	int fd = fs_new(1, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, O_CLOEXEC);
	ASSERT_LE(0, h);
	EXPECT_EQ(FD_CLOEXEC, fcntl(h, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(0, fcntl(h, F_GETFL) & O_NONBLOCK);
}

TEST(new_handle_honours_o_nonblock)
{
	int fd = fs_new(1, 0), h, plain;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, O_NONBLOCK);
	plain = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_LE(0, plain);
	EXPECT_EQ(O_NONBLOCK, fcntl(h, F_GETFL) & O_NONBLOCK);
	EXPECT_EQ(0, fcntl(plain, F_GETFL) & O_NONBLOCK);
	EXPECT_EQ(0, fcntl(h, F_GETFD) & FD_CLOEXEC);
	ASSERT_EQ(0, fs_get(fd, 1));
	EXPECT_EQ(-EAGAIN, fs_get(h, 1));
	EXPECT_EQ(-EAGAIN, fs_acquire(h, 1, now_ns() + 3600000000000ULL, 0));
	EXPECT_EQ(0, fs_waiters(fd));
	ASSERT_EQ(0, fs_release(fd, 1));
	EXPECT_EQ(0, fs_get(h, 1));
}

TEST(new_handle_with_both_flags)
{
	int fd = fs_new(1, 0), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, O_CLOEXEC | O_NONBLOCK);
	ASSERT_LE(0, h);
	EXPECT_EQ(FD_CLOEXEC, fcntl(h, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(O_NONBLOCK, fcntl(h, F_GETFL) & O_NONBLOCK);
}

TEST(new_handle_from_a_new_handle_joins_the_same_semaphore)
{
	int fd = fs_new(4, FAIRSEM_LIFO), a, b;

	ASSERT_LE(0, fd);
	a = fs_new_handle(fd, 0);
	ASSERT_LE(0, a);
	b = fs_new_handle(a, 0);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, close(fd));
	ASSERT_EQ(0, close(a));
	EXPECT_EQ(1, fs_handles(b));
	EXPECT_EQ(4, fs_limit(b));
	EXPECT_EQ(FAIRSEM_LIFO, fs_flags(b));
}

TEST(close_wakes_every_blocked_waiter_with_eidrm)
{
	struct fs_waiter t[4];
	int fd = fs_new(1, 0), h[4];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 1));
	for (int i = 0; i < 4; i++) {
		h[i] = fs_new_handle(fd, 0);
		ASSERT_LE(0, h[i]);
		ASSERT_EQ(0, fs_waiter_start(&t[i], h[i], 1 + i % 2,
					     FAIRSEM_NO_DEADLINE, 0));
	}
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 4));
	ASSERT_EQ(0, fs_close_sem(h[2]));
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(-EIDRM, fs_waiter_join(&t[i]));
		EXPECT_EQ(0, fs_holds(h[i]));
	}
	EXPECT_EQ(0, fs_waiters(fd));
	EXPECT_EQ(1, fs_taken(fd));
	EXPECT_EQ(FAIRSEM_INFO_CLOSED, fs_flags(fd));
}

TEST(close_wakes_waiters_in_other_processes_with_eidrm)
{
	int fd = fs_new(0, 0), status;
	pid_t child;

	ASSERT_LE(0, fd);
	child = fs_fork();
	ASSERT_LE(0, child);
	if (child == 0) {
		int h = fs_new_handle(fd, 0);

		_exit(h >= 0 && fs_get(h, 1) == -EIDRM ? 0 : 1);
	}
	ASSERT_EQ(0, fs_wait_for_waiters(fd, 1));
	ASSERT_EQ(0, fs_close_sem(fd));
	status = fs_wait_child(child);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST(close_is_seen_through_every_handle)
{
	int fd = fs_new(1, FAIRSEM_LIFO), h;

	ASSERT_LE(0, fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_close_sem(h));
	EXPECT_EQ(FAIRSEM_INFO_CLOSED | FAIRSEM_LIFO, fs_flags(fd));
	EXPECT_EQ(-EIDRM, fs_try(fd, 1));
}

TEST(handles_count_follows_new_handles_and_closes)
{
	int fd = fs_new(1, 0), h[3];

	ASSERT_LE(0, fd);
	EXPECT_EQ(1, fs_handles(fd));
	for (int i = 0; i < 3; i++) {
		h[i] = fs_new_handle(fd, 0);
		ASSERT_LE(0, h[i]);
		EXPECT_EQ(2 + i, fs_handles(fd));
	}
	ASSERT_EQ(0, close(h[0]));
	ASSERT_EQ(0, close(h[2]));
	EXPECT_EQ(2, fs_handles(fd));
	EXPECT_EQ(2, fs_handles(h[1]));
}

TEST(semaphore_lives_while_any_handle_is_open)
{
	int fd = fs_new(2, 0), h;
	uint64_t id;

	ASSERT_LE(0, fd);
	id = fs_id(fd);
	h = fs_new_handle(fd, 0);
	ASSERT_LE(0, h);
	ASSERT_EQ(0, close(fd));
	EXPECT_EQ(id, fs_id(h));
	EXPECT_EQ(1, fs_handles(h));
	EXPECT_EQ(0, fs_get(h, 2));
	EXPECT_EQ(2, fs_taken(h));
}

TEST(ids_are_unique_and_not_reused)
{
	uint64_t ids[8];

	for (int i = 0; i < 8; i++) {
		int fd = fs_new(1, 0);

		ASSERT_LE(0, fd);
		ids[i] = fs_id(fd);
		ASSERT_NE(FS_BAD, ids[i]);
		/* every other one is freed before the next is made */
		if (i % 2)
			close(fd);
		for (int j = 0; j < i; j++)
			ASSERT_NE(ids[j], ids[i]);
	}
}

/*
 * 200 rounds take a few seconds, but over 30 (the harness's default) on the
 * RFC's =y kernel with KASAN, lockdep and kmemleak under TCG on a loaded
 * host (ci1): the same rounds, with room.
 */
FIXTURE(churn) {
	int unused;
};

FIXTURE_SETUP(churn)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(churn)
{
}

TEST_F_TIMEOUT(churn, many_open_and_closed_semaphores_leave_nothing_behind, 300)
{
	for (int i = 0; i < 200; i++) {
		int fd = fs_new(3, i % 2 ? FAIRSEM_LIFO : 0), h;

		ASSERT_LE(0, fd);
		h = fs_new_handle(fd, O_CLOEXEC);
		ASSERT_LE(0, h);
		ASSERT_EQ(0, fs_get(fd, 2));
		ASSERT_LE(1, fs_submit(h, 2));
		if (i % 3 == 0)
			ASSERT_EQ(0, fs_close_sem(fd));
		close(fd);
		close(h);
	}
}

TEST_HARNESS_MAIN
