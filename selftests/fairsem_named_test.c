// SPDX-License-Identifier: GPL-2.0
/*
 * Named semaphores: the fairsem filesystem and read-only handles.  One test
 * per promise of the contract's section "Named semaphores", named after it.
 *
 * Each test mounts an instance of its own on a fresh directory (the
 * fixture) and unmounts it at the end.  Tests that need an unprivileged
 * caller fork a child that drops to uid/gid 1000.  Runs as root in the VM.
 */
#include <dirent.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "fairsem_named_util.h"

#define USER	1000	/* the unprivileged uid and gid */

FIXTURE(named) {
	char dir[64];
	int dirfd;
};

FIXTURE_SETUP(named)
{
	int ret = fsn_mount_tmp(self->dir, sizeof(self->dir), NULL);

	if (ret == -ENODEV)
		SKIP(return, "no fairsem filesystem (module without it?)");
	ASSERT_EQ(0, ret);
	self->dirfd = fsn_opendir(self->dir);
	ASSERT_LE(0, self->dirfd);
	umask(022);
}

FIXTURE_TEARDOWN(named)
{
	if (self->dirfd > 0)
		close(self->dirfd);
	fsn_unmount(self->dir);
}

/* ---- the filesystem type and its instances ---- */

TEST_F(named, mount_is_a_fairsem_instance)
{
	struct statfs sfs;
	struct stat st;

	ASSERT_EQ(0, statfs(self->dir, &sfs));
	EXPECT_EQ(FAIRSEM_FS_MAGIC, (unsigned long)sfs.f_type);
	ASSERT_EQ(0, stat(self->dir, &st));
	EXPECT_TRUE(S_ISDIR(st.st_mode));
}

TEST_F(named, default_root_is_sticky_1777_owned_by_mounter)
{
	struct stat st;

	ASSERT_EQ(0, stat(self->dir, &st));
	EXPECT_EQ(01777, st.st_mode & 07777);
	EXPECT_EQ(getuid(), st.st_uid);
	EXPECT_EQ(getgid(), st.st_gid);
}

TEST_F(named, two_mounts_are_two_namespaces)
{
	char dir2[64];
	int d2, a, b, a2, b2;

	ASSERT_EQ(0, fsn_mount_tmp(dir2, sizeof(dir2), NULL));
	d2 = fsn_opendir(dir2);
	ASSERT_LE(0, d2);
	a = fsn_create(self->dirfd, "same", 1, 0, 0600);
	b = fsn_create(d2, "same", 2, 0, 0600);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	a2 = fsn_open(self->dir, "same", O_RDWR);
	b2 = fsn_open(dir2, "same", O_RDWR);
	ASSERT_LE(0, a2);
	ASSERT_LE(0, b2);
	EXPECT_EQ(fs_id(a), fs_id(a2));
	EXPECT_EQ(fs_id(b), fs_id(b2));
	EXPECT_NE(fs_id(a2), fs_id(b2));
	EXPECT_EQ(1, fs_limit(a2));
	EXPECT_EQ(2, fs_limit(b2));
	close(a);
	close(b);
	close(a2);
	close(b2);
	close(d2);
	EXPECT_EQ(0, fsn_unmount(dir2));
}

TEST(mount_options_mode_uid_gid_max)
{
	char dir[64];
	struct stat st;
	int d, fd;

	ASSERT_EQ(0, fsn_mount_tmp(dir, sizeof(dir),
				   "mode=0750,uid=1000,gid=1000,max=1"));
	ASSERT_EQ(0, stat(dir, &st));
	EXPECT_EQ(0750, st.st_mode & 07777);
	EXPECT_EQ(USER, st.st_uid);
	EXPECT_EQ(USER, st.st_gid);
	d = fsn_opendir(dir);
	ASSERT_LE(0, d);
	fd = fsn_create(d, "one", 1, 0, 0600);
	EXPECT_LE(0, fd);
	EXPECT_EQ(-ENOSPC, fsn_create(d, "two", 1, 0, 0600));
	close(fd);
	close(d);
	EXPECT_EQ(0, fsn_unmount(dir));
}

TEST(unknown_mount_option_fails_einval)
{
	char dir[64];

	ASSERT_EQ(0, fsn_tmpdir(dir, sizeof(dir)));
	EXPECT_EQ(-EINVAL, fsn_mount(dir, "frobnicate=1"));
	EXPECT_EQ(-EINVAL, fsn_mount(dir, "mode=77777"));
	EXPECT_EQ(-EINVAL, fsn_mount(dir, "max=lots"));
	EXPECT_EQ(0, rmdir(dir));
}

static int fsn_remount(const char *dir, unsigned long flags, const char *opts)
{
	return fs_ret(mount("fairsem", dir, "fairsem", MS_REMOUNT | flags, opts));
}

/* The options as /proc/self/mountinfo shows them for dir, in buf. */
static int mount_options_of(const char *dir, char *buf, size_t len)
{
	char line[1024], mnt[256], opts[512];
	FILE *f = fopen("/proc/self/mountinfo", "r");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* id parent dev root mountpoint opts ... - type source superopts */
		char *dash = strstr(line, " - ");

		if (!dash || sscanf(line, "%*s %*s %*s %*s %255s", mnt) != 1 ||
		    strcmp(mnt, dir) ||
		    sscanf(dash, " - %*s %*s %511s", opts) != 1)
			continue;
		snprintf(buf, len, "%s", opts);
		ret = 0;
	}
	fclose(f);
	return ret;
}

TEST(remount_changes_the_options_it_names)
{
	char dir[64], opts[512];
	struct stat st;
	int d, a, b, h;

	/* root, no longer the owner after uid=, is not bounded per user. */
	ASSERT_EQ(0, fsn_mount_tmp(dir, sizeof(dir), "max=3,max_per_user=3"));
	d = fsn_opendir(dir);
	ASSERT_LE(0, d);
	a = fsn_create(d, "a", 1, 0, 0600);
	b = fsn_create(d, "b", 1, 0, 0600);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);

	ASSERT_EQ(0, fsn_remount(dir, 0, "mode=0750,uid=1000,gid=1000"));
	ASSERT_EQ(0, stat(dir, &st));
	EXPECT_EQ(0750, st.st_mode & 07777);
	EXPECT_EQ(USER, st.st_uid);
	EXPECT_EQ(USER, st.st_gid);
	ASSERT_EQ(0, mount_options_of(dir, opts, sizeof(opts)));
	EXPECT_NE(NULL, strstr(opts, "mode=750,uid=1000,gid=1000,max=3"))
		TH_LOG("options: %s", opts);

	/* max= below the names held keeps them and refuses new ones. */
	ASSERT_EQ(0, fsn_remount(dir, 0, "max=1"));
	EXPECT_EQ(-ENOSPC, fsn_create(d, "c", 1, 0, 0600));
	h = fsn_open(dir, "a", O_RDWR);
	EXPECT_LE(0, h);
	close(h);
	ASSERT_EQ(0, fsn_remount(dir, 0, "max=3"));
	h = fsn_create(d, "c", 1, 0, 0600);
	EXPECT_LE(0, h);
	close(h);

	/* A remount that names nothing changes nothing. */
	ASSERT_EQ(0, fsn_remount(dir, 0, NULL));
	ASSERT_EQ(0, stat(dir, &st));
	EXPECT_EQ(0750, st.st_mode & 07777);
	EXPECT_EQ(USER, st.st_uid);
	close(a);
	close(b);
	close(d);
	EXPECT_EQ(0, fsn_unmount(dir));
}

TEST(remount_with_a_bad_option_fails_einval_and_changes_nothing)
{
	char dir[64];
	struct stat st;

	ASSERT_EQ(0, fsn_mount_tmp(dir, sizeof(dir), "mode=0755"));
	EXPECT_EQ(-EINVAL, fsn_remount(dir, 0, "frobnicate=1"));
	EXPECT_EQ(-EINVAL, fsn_remount(dir, 0, "mode=0700,mode=77777"));
	ASSERT_EQ(0, stat(dir, &st));
	EXPECT_EQ(0755, st.st_mode & 07777);
	EXPECT_EQ(0, fsn_unmount(dir));
}

TEST(remount_read_only_refuses_link_erofs)
{
	char dir[64];
	int d, fd;

	ASSERT_EQ(0, fsn_mount_tmp(dir, sizeof(dir), NULL));
	d = fsn_opendir(dir);
	ASSERT_LE(0, d);
	ASSERT_EQ(0, fsn_remount(dir, MS_RDONLY, NULL));
	fd = fs_new(1, 0);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EROFS, fsn_link(d, fd, "x", 0600));
	ASSERT_EQ(0, fsn_remount(dir, 0, NULL));
	EXPECT_EQ(0, fsn_link(d, fd, "x", 0600));
	close(fd);
	close(d);
	EXPECT_EQ(0, fsn_unmount(dir));
}

TEST(max_gives_enospc_and_unlink_frees_a_slot)
{
	char dir[64], path[128];
	int d, a, b;

	ASSERT_EQ(0, fsn_mount_tmp(dir, sizeof(dir), "max=2"));
	d = fsn_opendir(dir);
	ASSERT_LE(0, d);
	a = fsn_create(d, "a", 1, 0, 0600);
	b = fsn_create(d, "b", 1, 0, 0600);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	EXPECT_EQ(-ENOSPC, fsn_create(d, "c", 1, 0, 0600));
	/* A rename over a name frees one too. */
	ASSERT_EQ(0, renameat(d, "a", d, "b"));
	b = fsn_create(d, "c", 1, 0, 0600);
	EXPECT_LE(0, b);
	EXPECT_EQ(-ENOSPC, fsn_create(d, "d", 1, 0, 0600));
	ASSERT_EQ(0, fsn_path(path, sizeof(path), dir, "c"));
	ASSERT_EQ(0, unlink(path));
	EXPECT_LE(0, fsn_create(d, "d", 1, 0, 0600));
	close(d);
	EXPECT_EQ(0, fsn_unmount(dir));
}

TEST(module_cannot_unload_while_mounted)
{
	char dir[64], before[32], during[32];
	int fd;

	fd = open("/sys/module/fairsem/refcnt", O_RDONLY);
	if (fd < 0)
		SKIP(return, "no /sys/module/fairsem/refcnt");
	ASSERT_LT(0, read(fd, before, sizeof(before) - 1));
	ASSERT_EQ(0, fsn_mount_tmp(dir, sizeof(dir), NULL));
	ASSERT_LT(0, pread(fd, during, sizeof(during) - 1, 0));
	close(fd);
	EXPECT_LT(atoi(before), atoi(during));
	EXPECT_EQ(0, fsn_unmount(dir));
}

TEST_F(named, umount_with_open_handle_ebusy)
{
	int fd = fsn_create(self->dirfd, "x", 1, 0, 0600);
	int h = fsn_open(self->dir, "x", O_RDWR);

	ASSERT_LE(0, h);
	close(fd);
	close(self->dirfd);
	self->dirfd = -1;
	EXPECT_EQ(-EBUSY, fs_ret(umount(self->dir)));
	/* Lazily detached, the handle goes on working. */
	EXPECT_EQ(0, umount2(self->dir, MNT_DETACH));
	EXPECT_EQ(0, fs_get(h, 1));
	EXPECT_EQ(1, fs_holds(h));
	close(h);
	EXPECT_EQ(0, fsn_mount(self->dir, NULL));	/* for the teardown */
}

/*
 * Only handles opened by name are files of the instance: one made by
 * NEW_HANDLE does not keep it mounted, and works on after the unmount.
 */
TEST_F(named, umount_with_only_a_new_handle_open_succeeds)
{
	int fd = fsn_create(self->dirfd, "x", 1, 0, 0600);
	int h = fsn_open(self->dir, "x", O_RDWR);
	int nh;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, h);
	nh = fs_new_handle(h, 0);
	ASSERT_LE(0, nh);
	close(h);
	close(fd);
	close(self->dirfd);
	self->dirfd = -1;
	EXPECT_EQ(0, fs_ret(umount(self->dir)));
	EXPECT_EQ(0, fs_get(nh, 1));
	EXPECT_EQ(1, fs_holds(nh));
	close(nh);
	EXPECT_EQ(0, fsn_mount(self->dir, NULL));	/* for the teardown */
}

/* In a new user and mount namespace, as an unprivileged user would. */
static int userns_mount_child(void *arg)
{
	const char *dir = arg;
	char map[32];
	int fd, d, h;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
		return errno == EPERM || errno == EINVAL ? 4 : 10;
	fd = open("/proc/self/setgroups", O_WRONLY);
	if (fd < 0 || write(fd, "deny", 4) != 4)
		return 11;
	close(fd);
	snprintf(map, sizeof(map), "0 %d 1", USER);
	fd = open("/proc/self/uid_map", O_WRONLY);
	if (fd < 0 || write(fd, map, strlen(map)) < 0)
		return 12;
	close(fd);
	fd = open("/proc/self/gid_map", O_WRONLY);
	if (fd < 0 || write(fd, map, strlen(map)) < 0)
		return 13;
	close(fd);
	if (mount("fairsem", dir, "fairsem", 0, NULL))
		return 14;
	d = fsn_opendir(dir);
	h = d < 0 ? d : fsn_create(d, "mine", 1, 0, 0600);
	if (h < 0)
		return 15;
	close(h);
	h = fsn_open(dir, "mine", O_RDWR);
	if (h < 0 || fs_get(h, 1))
		return 16;
	return 0;
}

TEST(user_namespace_mounts_its_own)
{
	char dir[64];
	int ret;

	ASSERT_EQ(0, fsn_tmpdir(dir, sizeof(dir)));
	ASSERT_EQ(0, chmod(dir, 0777));
	ret = fsn_as_user(USER, USER, userns_mount_child, dir);
	rmdir(dir);
	if (ret == 4)
		SKIP(return, "unprivileged user namespaces are not allowed");
	EXPECT_EQ(0, ret);
}

/*
 * A user namespace where uid and gid 0 are the caller's USER: the
 * ns-root, holding every capability over what it mounts there.
 */
static int enter_userns_as_root_of_user(void)
{
	char map[32];
	int fd;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
		return errno == EPERM || errno == EINVAL ? 4 : 10;
	fd = open("/proc/self/setgroups", O_WRONLY);
	if (fd < 0 || write(fd, "deny", 4) != 4)
		return 11;
	close(fd);
	snprintf(map, sizeof(map), "0 %d 1", USER);
	fd = open("/proc/self/uid_map", O_WRONLY);
	if (fd < 0 || write(fd, map, strlen(map)) < 0)
		return 12;
	close(fd);
	fd = open("/proc/self/gid_map", O_WRONLY);
	if (fd < 0 || write(fd, map, strlen(map)) < 0)
		return 13;
	close(fd);
	return 0;
}

/*
 * The VFS's may_create(): a caller whose fsuid or fsgid has no mapping in
 * the instance's user namespace creates nothing there (EOVERFLOW), as
 * creat(2) refuses.  The instance belongs to a user namespace that maps
 * only USER; root outside reaches it through /proc/PID/root, and the
 * sticky 1777 root directory lets anyone in.
 */
TEST(link_by_a_caller_the_instance_cannot_map_eoverflow)
{
	char dir[64], path[128];
	int ready[2], done[2], d, fd, status, ret;
	pid_t pid;

	ASSERT_EQ(0, fsn_tmpdir(dir, sizeof(dir)));
	ASSERT_EQ(0, chmod(dir, 0777));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(done));
	pid = fs_fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(ready[0]);
		close(done[1]);
		if (setgroups(0, NULL) || setresgid(USER, USER, USER) ||
		    setresuid(USER, USER, USER))
			_exit(250);
		prctl(PR_SET_DUMPABLE, 1);	/* for /proc/PID/root */
		ret = enter_userns_as_root_of_user();
		if (!ret && mount("fairsem", dir, "fairsem", 0, NULL))
			ret = 14;
		fs_put(ready[1], ret ? 'n' : 'y');
		fs_take(done[0]);
		_exit(ret);
	}
	close(ready[1]);
	close(done[0]);
	if (fs_take(ready[0]) != 'y') {
		fs_put(done[1], 'q');
		ret = fs_wait_child(pid);
		rmdir(dir);
		if (WIFEXITED(ret) && WEXITSTATUS(ret) == 4)
			SKIP(return, "unprivileged user namespaces are not allowed");
		ASSERT_EQ(0, ret);
	}
	snprintf(path, sizeof(path), "/proc/%d/root%s", pid, dir);
	d = fsn_opendir(path);
	fd = fs_new(1, 0);
	EXPECT_LE(0, d);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EOVERFLOW, fsn_link(d, fd, "unmapped", 0600));
	close(fd);
	close(d);
	fs_put(done[1], 'q');
	status = fs_wait_child(pid);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(ready[0]);
	close(done[1]);
	rmdir(dir);
}

/* ---- flat: only semaphores ---- */

TEST_F(named, mkdir_mknod_symlink_link_refused_eperm)
{
	char path[128], other[128];
	int fd = fsn_create(self->dirfd, "sem", 1, 0, 0600);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fsn_path(path, sizeof(path), self->dir, "d"));
	EXPECT_EQ(-EPERM, fs_ret(mkdir(path, 0755)));
	EXPECT_EQ(-EPERM, fs_ret(mknod(path, S_IFIFO | 0600, 0)));
	EXPECT_EQ(-EPERM, fs_ret(mknod(path, S_IFREG | 0600, 0)));
	EXPECT_EQ(-EPERM, fs_ret(symlink("sem", path)));
	ASSERT_EQ(0, fsn_path(other, sizeof(other), self->dir, "sem"));
	EXPECT_EQ(-EPERM, fs_ret(link(other, path)));
	close(fd);
}

TEST_F(named, o_creat_of_a_missing_name_eperm)
{
	EXPECT_EQ(-EPERM, fsn_open(self->dir, "nope", O_RDWR | O_CREAT));
	EXPECT_EQ(-EPERM, fsn_open(self->dir, "nope", O_RDWR | O_CREAT | O_EXCL));
	EXPECT_EQ(-ENOENT, fsn_open(self->dir, "nope", O_RDWR));
}

TEST_F(named, write_einval_truncate_eperm)
{
	char path[128];
	int fd = fsn_create(self->dirfd, "sem", 1, 0, 0600);
	int h = fsn_open(self->dir, "sem", O_RDWR);

	ASSERT_LE(0, h);
	EXPECT_EQ(-EINVAL, fs_ret(write(h, "x", 1)));
	EXPECT_EQ(-EPERM, fs_ret(ftruncate(h, 0)));
	ASSERT_EQ(0, fsn_path(path, sizeof(path), self->dir, "sem"));
	EXPECT_EQ(-EPERM, fs_ret(truncate(path, 8)));
	EXPECT_EQ(-EPERM, fsn_open(self->dir, "sem", O_RDWR | O_TRUNC));
	close(h);
	close(fd);
}

TEST_F(named, names_follow_the_vfs_rules)
{
	char name[NAME_MAX + 2];
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EINVAL, fsn_link(self->dirfd, fd, "", 0600));
	EXPECT_EQ(-EINVAL, fsn_link(self->dirfd, fd, ".", 0600));
	EXPECT_EQ(-EINVAL, fsn_link(self->dirfd, fd, "..", 0600));
	EXPECT_EQ(-EINVAL, fsn_link(self->dirfd, fd, "a/b", 0600));
	memset(name, 'n', sizeof(name));
	name[NAME_MAX + 1] = 0;
	EXPECT_EQ(-ENAMETOOLONG, fsn_link(self->dirfd, fd, name, 0600));
	name[NAME_MAX] = 0;
	EXPECT_EQ(0, fsn_link(self->dirfd, fd, name, 0600));
	EXPECT_EQ(0, fsn_link(self->dirfd, fd, "...", 0600));
	close(fd);
}

/* ---- each file is one semaphore ---- */

TEST_F(named, open_gives_a_new_handle_on_the_semaphore)
{
	int fd = fsn_create(self->dirfd, "sem", 3, 0, 0600);
	int h;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_get(fd, 1));
	h = fsn_open(self->dir, "sem", O_RDWR);
	ASSERT_LE(0, h);
	EXPECT_EQ(fs_id(fd), fs_id(h));
	EXPECT_EQ(0, fs_holds(h));
	EXPECT_EQ(2, fs_handles(h));
	EXPECT_EQ(1, fs_taken(h));
	ASSERT_EQ(0, fs_get(h, 2));
	EXPECT_EQ(2, fs_holds(h));
	EXPECT_EQ(0, fs_available(fd));
	close(h);	/* its own accounting: its permits come back */
	EXPECT_EQ(2, fs_available(fd));
	EXPECT_EQ(1, fs_handles(fd));
	close(fd);
}

TEST_F(named, open_flags_apply_cloexec_nonblock)
{
	int fd = fsn_create(self->dirfd, "sem", 0, 0, 0600);
	int h = fsn_open(self->dir, "sem", O_RDWR | O_NONBLOCK);

	ASSERT_LE(0, h);
	EXPECT_EQ(FD_CLOEXEC, fcntl(h, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(-EAGAIN, fs_get(h, 1));	/* O_NONBLOCK never sleeps */
	close(h);
	close(fd);
}

TEST_F(named, init_on_a_named_handle_ebusy)
{
	int fd = fsn_create(self->dirfd, "sem", 1, 0, 0600);
	int h = fsn_open(self->dir, "sem", O_RDWR);

	ASSERT_LE(0, h);
	EXPECT_EQ(-EBUSY, fs_init(h, 5, 0));
	EXPECT_EQ(1, fs_limit(h));
	close(h);
	close(fd);
}

TEST_F(named, fdinfo_of_a_named_handle)
{
	int fd = fsn_create(self->dirfd, "sem", 4, 0, 0600);
	int h = fsn_open(self->dir, "sem", O_RDWR);
	char val[32];

	ASSERT_LE(0, h);
	ASSERT_EQ(0, fs_get(h, 3));
	ASSERT_EQ(0, fs_fdinfo(h, "fairsem-holds", val, sizeof(val)));
	EXPECT_STREQ("3", val);
	ASSERT_EQ(0, fs_fdinfo(h, "fairsem-limit", val, sizeof(val)));
	EXPECT_STREQ("4", val);
	close(h);
	close(fd);
}

/* ---- creating a name: FAIRSEM_IOC_LINK ---- */

TEST_F(named, link_creates_a_file_owned_by_the_caller)
{
	char path[128];
	struct stat st;
	int fd = fsn_create(self->dirfd, "sem", 1, 0, 0666);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fsn_path(path, sizeof(path), self->dir, "sem"));
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	EXPECT_EQ(0644, st.st_mode & 07777);	/* umask 022 applies */
	EXPECT_EQ(geteuid(), st.st_uid);
	EXPECT_EQ(getegid(), st.st_gid);
	EXPECT_EQ(0, st.st_size);
	EXPECT_EQ(1, st.st_nlink);
	close(fd);
}

TEST_F(named, link_taken_name_eexist)
{
	int a = fsn_create(self->dirfd, "sem", 1, 0, 0600);
	int b = fs_new(7, 0);
	int h;

	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	EXPECT_EQ(-EEXIST, fsn_link(self->dirfd, b, "sem", 0600));
	h = fsn_open(self->dir, "sem", O_RDWR);
	ASSERT_LE(0, h);
	EXPECT_EQ(fs_id(a), fs_id(h));	/* the winner's, unchanged */
	close(h);
	close(a);
	close(b);
}

TEST_F(named, link_argument_errors)
{
	struct fairsem_link l = { .mode = 0600, .name = (uintptr_t)"x" };
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	l.fd = fd;
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(self->dirfd, FAIRSEM_IOC_LINK, fs_bad_ptr())));
	l.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(self->dirfd, FAIRSEM_IOC_LINK, &l)));
	l.reserved[1] = 0;
	l.mode = 01777;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(self->dirfd, FAIRSEM_IOC_LINK, &l)));
	l.mode = 0600;
	l.name = (uintptr_t)fs_bad_ptr();
	EXPECT_EQ(-EFAULT, fs_ret(ioctl(self->dirfd, FAIRSEM_IOC_LINK, &l)));
	/* EINVAL of the argument comes before EBADF of the handle. */
	l.name = (uintptr_t)"";
	l.fd = -1;
	EXPECT_EQ(-EINVAL, fs_ret(ioctl(self->dirfd, FAIRSEM_IOC_LINK, &l)));
	EXPECT_EQ(-ENOENT, fsn_open(self->dir, "x", O_RDWR));
	close(fd);
}

TEST_F(named, link_needs_a_read_write_fairsem_handle_ebadf)
{
	char path[128];
	int ro, other, h;
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADF, fsn_link(self->dirfd, -1, "x", 0600));
	EXPECT_EQ(-EBADF, fsn_link(self->dirfd, 999, "x", 0600));
	other = open("/proc/self/stat", O_RDONLY);
	ASSERT_LE(0, other);
	EXPECT_EQ(-EBADF, fsn_link(self->dirfd, other, "x", 0600));
	EXPECT_EQ(-EBADF, fsn_link(self->dirfd, self->dirfd, "x", 0600));
	/* A read-only handle may not publish what it may not take. */
	ASSERT_EQ(0, fsn_link(self->dirfd, fd, "sem", 0600));
	ro = fsn_open(self->dir, "sem", O_RDONLY);
	ASSERT_LE(0, ro);
	EXPECT_EQ(-EBADF, fsn_link(self->dirfd, ro, "x", 0600));
	ASSERT_EQ(0, fsn_path(path, sizeof(path), self->dir, "sem"));
	h = open(path, O_PATH);
	ASSERT_LE(0, h);
	EXPECT_EQ(-EBADF, fsn_link(self->dirfd, h, "x", 0600));
	EXPECT_EQ(-ENOENT, fsn_open(self->dir, "x", O_RDWR));
	close(h);
	close(ro);
	close(other);
	close(fd);
}

TEST_F(named, link_unbound_handle_ebadfd)
{
	int fd = fs_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBADFD, fsn_link(self->dirfd, fd, "x", 0600));
	close(fd);
}

TEST_F(named, link_closed_semaphore_eidrm)
{
	int fd = fs_new(1, 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(-EIDRM, fsn_link(self->dirfd, fd, "x", 0600));
	EXPECT_EQ(-ENOENT, fsn_open(self->dir, "x", O_RDWR));
	close(fd);
}

TEST_F(named, link_on_a_handle_or_another_directory_enotty)
{
	int fd = fs_new(1, 0);
	int tmp = open("/tmp", O_RDONLY | O_DIRECTORY);

	ASSERT_LE(0, fd);
	ASSERT_LE(0, tmp);
	EXPECT_EQ(-ENOTTY, fsn_link(fd, fd, "x", 0600));
	EXPECT_EQ(-ENOTTY, fsn_link(tmp, fd, "x", 0600));
	close(tmp);
	close(fd);
}

TEST(link_on_a_read_only_mount_erofs)
{
	char dir[64];
	int d, fd;

	ASSERT_EQ(0, fsn_tmpdir(dir, sizeof(dir)));
	ASSERT_EQ(0, fs_ret(mount("fairsem", dir, "fairsem", MS_RDONLY, NULL)));
	d = fsn_opendir(dir);
	fd = fs_new(1, 0);
	ASSERT_LE(0, d);
	EXPECT_EQ(-EROFS, fsn_link(d, fd, "x", 0600));
	close(fd);
	close(d);
	EXPECT_EQ(0, fsn_unmount(dir));
}

TEST_F(named, several_names_in_several_instances)
{
	char dir2[64];
	int d2, fd = fs_new(2, 0);
	int a, b;

	ASSERT_EQ(0, fsn_mount_tmp(dir2, sizeof(dir2), NULL));
	d2 = fsn_opendir(dir2);
	ASSERT_EQ(0, fsn_link(self->dirfd, fd, "one", 0600));
	ASSERT_EQ(0, fsn_link(self->dirfd, fd, "two", 0600));
	ASSERT_EQ(0, fsn_link(d2, fd, "three", 0600));
	a = fsn_open(self->dir, "two", O_RDWR);
	b = fsn_open(dir2, "three", O_RDWR);
	ASSERT_LE(0, a);
	ASSERT_LE(0, b);
	EXPECT_EQ(fs_id(fd), fs_id(a));
	EXPECT_EQ(fs_id(fd), fs_id(b));
	close(a);
	close(b);
	close(fd);
	close(d2);
	EXPECT_EQ(0, fsn_unmount(dir2));
}

TEST_F(named, link_is_seen_by_inotify)
{
	/* the union aligns the buffer for the events read into it */
	union {
		struct inotify_event ev;
		char buf[4096];
	} u;
	struct inotify_event *ev = &u.ev;
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	int fd;

	/* a kernel built without inotify has no such sysctl directory */
	if (in < 0 && access("/proc/sys/fs/inotify", F_OK))
		SKIP(return, "no inotify in this kernel");
	ASSERT_LE(0, in);
	ASSERT_LE(0, inotify_add_watch(in, self->dir, IN_CREATE | IN_DELETE));
	fd = fsn_create(self->dirfd, "watched", 1, 0, 0600);
	ASSERT_LE(0, fd);
	ASSERT_LT(0, read(in, u.buf, sizeof(u.buf)));
	EXPECT_TRUE(ev->mask & IN_CREATE);
	EXPECT_STREQ("watched", ev->name);
	close(fd);
	close(in);
}

/* ---- removing, renaming and the other file operations ---- */

TEST_F(named, unlink_while_handles_are_open)
{
	char path[128];
	int fd = fsn_create(self->dirfd, "sem", 2, 0, 0600);
	int h = fsn_open(self->dir, "sem", O_RDWR);
	uint64_t old;
	int n;

	ASSERT_LE(0, h);
	old = fs_id(h);
	ASSERT_EQ(0, fs_get(h, 1));
	ASSERT_EQ(0, fsn_path(path, sizeof(path), self->dir, "sem"));
	ASSERT_EQ(0, unlink(path));
	EXPECT_EQ(-ENOENT, fsn_open(self->dir, "sem", O_RDWR));
	/* The handles go on working. */
	EXPECT_EQ(0, fs_get(fd, 1));
	EXPECT_EQ(0, fs_available(h));
	EXPECT_EQ(0, fs_release(h, 1));
	/* The name is free for a new semaphore. */
	n = fsn_create(self->dirfd, "sem", 5, 0, 0600);
	ASSERT_LE(0, n);
	EXPECT_NE(old, fs_id(n));
	EXPECT_EQ(old, fs_id(fd));
	EXPECT_EQ(2, fs_handles(fd));
	close(h);
	EXPECT_EQ(1, fs_handles(fd));
	close(fd);
	close(n);
}

TEST_F(named, rename_within_the_instance)
{
	char from[128], to[128], dir2[64];
	int fd = fsn_create(self->dirfd, "old", 1, 0, 0600);
	int h;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fsn_path(from, sizeof(from), self->dir, "old"));
	ASSERT_EQ(0, fsn_path(to, sizeof(to), self->dir, "new"));
	ASSERT_EQ(0, rename(from, to));
	EXPECT_EQ(-ENOENT, fsn_open(self->dir, "old", O_RDWR));
	h = fsn_open(self->dir, "new", O_RDWR);
	ASSERT_LE(0, h);
	EXPECT_EQ(fs_id(fd), fs_id(h));
	close(h);
	/* Not into another instance. */
	ASSERT_EQ(0, fsn_mount_tmp(dir2, sizeof(dir2), NULL));
	ASSERT_EQ(0, fsn_path(from, sizeof(from), dir2, "x"));
	EXPECT_EQ(-EXDEV, fs_ret(rename(to, from)));
	EXPECT_EQ(0, fsn_unmount(dir2));
	close(fd);
}

TEST_F(named, stat_and_readdir_as_on_files)
{
	static const char * const names[] = { "alpha", "beta", "gamma" };
	int fds[3], seen = 0, i;
	struct dirent *de;
	DIR *d;

	for (i = 0; i < 3; i++) {
		fds[i] = fsn_create(self->dirfd, names[i], 1, 0, 0600);
		ASSERT_LE(0, fds[i]);
	}
	d = opendir(self->dir);
	ASSERT_NE(NULL, d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		for (i = 0; i < 3; i++)
			if (!strcmp(de->d_name, names[i]))
				seen |= 1 << i;
		EXPECT_EQ(DT_REG, de->d_type);
	}
	closedir(d);
	EXPECT_EQ(7, seen);
	for (i = 0; i < 3; i++)
		close(fds[i]);
}

TEST_F(named, chown_as_on_files)
{
	char path[128];
	struct stat st;
	int fd = fsn_create(self->dirfd, "sem", 1, 0, 0600);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fsn_path(path, sizeof(path), self->dir, "sem"));
	ASSERT_EQ(0, chown(path, USER, USER));
	ASSERT_EQ(0, stat(path, &st));
	EXPECT_EQ(USER, st.st_uid);
	EXPECT_EQ(USER, st.st_gid);
	close(fd);
}

/* ---- lifetime without processes ---- */

TEST_F(named, persistence_without_processes)
{
	pid_t pid = fs_fork();
	int h;

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = fsn_create(self->dirfd, "kept", 5, 0, 0600);

		/* Dies holding 3 permits, after shrinking the limit by one. */
		_exit(fd < 0 || fs_get(fd, 3) || fs_remove(fd, 1));
	}
	ASSERT_EQ(0, fs_wait_child(pid));
	h = fsn_open(self->dir, "kept", O_RDWR);
	ASSERT_LE(0, h);
	EXPECT_EQ(4, fs_limit(h));
	EXPECT_EQ(0, fs_taken(h));
	EXPECT_EQ(0, fs_flags(h) & FAIRSEM_INFO_CLOSED);
	EXPECT_EQ(1, fs_handles(h));
	close(h);
}

TEST_F(named, close_keeps_the_name_new_handles_eidrm)
{
	int fd = fsn_create(self->dirfd, "sem", 1, 0, 0600);
	int h;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fs_close_sem(fd));
	close(fd);
	h = fsn_open(self->dir, "sem", O_RDWR);
	ASSERT_LE(0, h);
	EXPECT_EQ(FAIRSEM_INFO_CLOSED, fs_flags(h) & FAIRSEM_INFO_CLOSED);
	EXPECT_EQ(-EIDRM, fs_get(h, 1));
	EXPECT_EQ(-EIDRM, fs_try(h, 1));
	close(h);
}

/*
 * No POSIX ACLs: the mode bits alone decide.  A valid access ACL (the
 * owner rw, uid USER rw, the group and others r) is refused, on a name and
 * on the root directory, and none can be read.
 */
TEST_F(named, posix_acls_are_not_supported_eopnotsupp)
{
	struct { uint16_t tag, perm; uint32_t id; } e[] = {
		{ 0x01, 6, ~0u },	/* ACL_USER_OBJ rw */
		{ 0x02, 6, USER },	/* ACL_USER USER rw */
		{ 0x04, 4, ~0u },	/* ACL_GROUP_OBJ r */
		{ 0x10, 6, ~0u },	/* ACL_MASK rw */
		{ 0x20, 4, ~0u },	/* ACL_OTHER r */
	};
	char acl[4 + sizeof(e)], path[128], buf[256];
	uint32_t version = 2;
	int fd = fsn_create(self->dirfd, "acl", 1, 0, 0640);

	ASSERT_LE(0, fd);
	memcpy(acl, &version, 4);
	memcpy(acl + 4, e, sizeof(e));
	ASSERT_EQ(0, fsn_path(path, sizeof(path), self->dir, "acl"));
	EXPECT_EQ(-EOPNOTSUPP, fs_ret(setxattr(path, "system.posix_acl_access",
					       acl, sizeof(acl), 0)));
	EXPECT_EQ(-EOPNOTSUPP, fs_ret(setxattr(self->dir, "system.posix_acl_default",
					       acl, sizeof(acl), 0)));
	EXPECT_EQ(-EOPNOTSUPP, fs_ret(getxattr(path, "system.posix_acl_access",
					       buf, sizeof(buf))));
	close(fd);
}

/* ---- read-only handles ---- */

static void check_read_only(struct __test_metadata *_metadata, int ro)
{
	struct fairsem_handle nh = { .fd = -1 };
	struct fairsem_acquire acq = {
		.count = { 1 }, .nkinds = 1, .deadline_ns = FAIRSEM_NO_DEADLINE,
	};
	struct fairsem_init in = { .limit = { 1 }, .nkinds = 1 };
	struct fairsem_info_kinds info;

	EXPECT_EQ(-EBADF, fs_ret(ioctl(ro, FAIRSEM_IOC_INIT, &in)));
	EXPECT_EQ(-EBADF, fs_ret(ioctl(ro, FAIRSEM_IOC_ACQUIRE, &acq)));
	acq.flags = FAIRSEM_ACQ_TRY;
	EXPECT_EQ(-EBADF, fs_ret(ioctl(ro, FAIRSEM_IOC_ACQUIRE, &acq)));
	EXPECT_EQ(-EBADF, fs_release(ro, 1));
	EXPECT_EQ(-EBADF, fs_forget(ro, 1));
	EXPECT_EQ(-EBADF, fs_add(ro, 1));
	EXPECT_EQ(-EBADF, fs_remove(ro, 1));
	EXPECT_EQ(-EBADF, fs_count_ioctl(ro, FAIRSEM_IOC_SUBMIT, 1, 0));
	EXPECT_EQ(-EBADF, fs_ret(ioctl(ro, FAIRSEM_IOC_CLOSE)));
	EXPECT_EQ(-EBADF, fs_reap1(ro));
	EXPECT_EQ(-EBADF, fs_withdraw(ro, 1));
	EXPECT_EQ(-EBADF, fs_ret(ioctl(ro, FAIRSEM_IOC_NEW_HANDLE, &nh)));
	EXPECT_EQ(-1, nh.fd);
	/* ENOTTY first, then EBADF, then EFAULT. */
	EXPECT_EQ(-ENOTTY, fs_ret(ioctl(ro, _IO(FAIRSEM_IOC_MAGIC, 99))));
	EXPECT_EQ(-ENOTTY, fs_ret(ioctl(ro, FAIRSEM_IOC_LINK, fs_bad_ptr())));
	EXPECT_EQ(-EBADF, fs_ret(ioctl(ro, FAIRSEM_IOC_RESIZE, fs_bad_ptr())));
	EXPECT_EQ(0, fs_info(ro, &info));
}

TEST_F(named, read_only_handle_ebadf_for_every_mutating_ioctl)
{
	int fd = fsn_create(self->dirfd, "sem", 2, 0, 0644);
	int ro = fsn_open(self->dir, "sem", O_RDONLY);

	ASSERT_LE(0, ro);
	check_read_only(_metadata, ro);
	/* Nothing changed. */
	EXPECT_EQ(2, fs_limit(fd));
	EXPECT_EQ(0, fs_taken(fd));
	EXPECT_EQ(0, fs_flags(fd) & FAIRSEM_INFO_CLOSED);
	EXPECT_EQ(2, fs_handles(fd));
	close(ro);
	close(fd);
}

TEST_F(named, read_only_handle_info_poll_fdinfo_work)
{
	int fd = fsn_create(self->dirfd, "sem", 2, 0, 0644);
	int ro = fsn_open(self->dir, "sem", O_RDONLY);
	char val[32];

	ASSERT_LE(0, ro);
	ASSERT_EQ(0, fs_get(fd, 2));
	EXPECT_EQ(fs_id(fd), fs_id(ro));
	EXPECT_EQ(2, fs_taken(ro));
	EXPECT_EQ(0, fs_holds(ro));
	ASSERT_EQ(0, fs_fdinfo(ro, "fairsem-taken", val, sizeof(val)));
	EXPECT_STREQ("2", val);
	EXPECT_EQ(0, fs_revents(ro, FS_POLL_ALL));
	ASSERT_EQ(0, fs_close_sem(fd));
	EXPECT_EQ(POLLHUP | POLLERR, fs_revents(ro, FS_POLL_ALL));
	close(ro);
	close(fd);
}

/*
 * Every command the driver knows (the one answering anything but ENOTTY
 * on a read-write handle) needs write access, INFO alone excepted: scanned
 * over the whole number space of the magic, every direction and the sizes
 * of the uapi's types (and sizes around them, each scanned once), so that
 * a command added later is held to it too.  Both handles are unbound and
 * the pointer is bad: nothing can change.
 */
TEST(every_known_ioctl_but_info_needs_write_access)
{
	static const unsigned int sizes[] = {
		0, sizeof(__u32), sizeof(__u64), sizeof(struct fairsem_init),
		sizeof(struct fairsem_acquire), sizeof(struct fairsem_counts),
		sizeof(struct fairsem_info_kinds), sizeof(struct fairsem_handle),
		sizeof(struct fairsem_link), sizeof(struct fairsem_reap),
		sizeof(struct fairsem_fast_release),
		16, 24, 32, 40, 48, 64, 72, 80, 88, 96, 128, 208, 432,
	};
	static const unsigned int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE,
					     _IOC_READ | _IOC_WRITE };
	int rw = open(FAIRSEM_DEV, O_RDWR | O_CLOEXEC);
	int ro = open(FAIRSEM_DEV, O_RDONLY | O_CLOEXEC);
	unsigned int d, nr, s, i, known = 0, wrong = 0;
	unsigned int size[ARRAY_SIZE(sizes)], nsize = 0;
	void *bad = fs_bad_ptr();

	ASSERT_LE(0, rw);
	ASSERT_LE(0, ro);
	ASSERT_NE(NULL, bad);
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		for (i = 0; i < nsize && size[i] != sizes[s]; i++)
			;
		if (i == nsize)
			size[nsize++] = sizes[s];
	}
	for (d = 0; d < 4; d++) {
		for (nr = 0; nr < 256; nr++) {
			for (s = 0; s < nsize; s++) {
				unsigned long cmd = _IOC(dirs[d], FAIRSEM_IOC_MAGIC,
							 nr, size[s]);
				int a = fs_ret(ioctl(rw, cmd, bad));
				int b = fs_ret(ioctl(ro, cmd, bad));
				int want = a == -ENOTTY ? -ENOTTY :
					   cmd == FAIRSEM_IOC_INFO ? a : -EBADF;

				known += a != -ENOTTY;
				if (b != want && wrong++ < 10)
					TH_LOG("ioctl %#lx: %d read-write, %d read-only, want %d",
					       cmd, a, b, want);
			}
		}
	}
	EXPECT_EQ(0, wrong);
	/*
	 * INIT to NEW_HANDLE and SUBMIT to RELEASE_FAST, the twelve but LINK
	 * (between them, a directory's): the scan saw every command a handle
	 * has.
	 */
	EXPECT_EQ(11, known);
	close(ro);
	close(rw);
}

TEST(read_only_dev_fairsem_handle_ebadf)
{
	int ro = open(FAIRSEM_DEV, O_RDONLY | O_CLOEXEC);
	struct fairsem_init in = { .limit = { 1 }, .nkinds = 1 };
	struct fairsem_info_kinds info;

	ASSERT_LE(0, ro);
	EXPECT_EQ(-EBADF, fs_ret(ioctl(ro, FAIRSEM_IOC_INIT, &in)));
	/* INFO only looks: it answers, and the handle stays unbound */
	EXPECT_EQ(0, fs_info(ro, &info));
	EXPECT_EQ(0, info.nkinds);
	close(ro);
}

TEST_F(named, read_write_named_handle_new_handle_is_read_write)
{
	int fd = fsn_create(self->dirfd, "sem", 1, 0, 0600);
	int h = fsn_open(self->dir, "sem", O_RDWR);
	int n;

	ASSERT_LE(0, h);
	n = fs_new_handle(h, O_CLOEXEC);
	ASSERT_LE(0, n);
	EXPECT_EQ(O_RDWR, fcntl(n, F_GETFL) & O_ACCMODE);
	EXPECT_EQ(0, fs_get(n, 1));
	close(n);
	close(h);
	close(fd);
}

/* ---- permissions, as an unprivileged user ---- */

struct user_args {
	const char *dir;
	const char *name;
};

static int open_rw_child(void *arg)
{
	struct user_args *a = arg;
	int h = fsn_open(a->dir, a->name, O_RDWR);

	if (h >= 0)
		return 0;
	return h == -EACCES ? 13 : 1;
}

TEST_F(named, eacces_on_a_0600_root_owned_semaphore)
{
	struct user_args a = { self->dir, "sem" };
	int fd = fsn_create(self->dirfd, "sem", 1, 0, 0600);

	ASSERT_LE(0, fd);
	EXPECT_EQ(13, fsn_as_user(USER, USER, open_rw_child, &a));
	close(fd);
}

TEST_F(named, chmod_takes_effect_on_the_next_open)
{
	struct user_args a = { self->dir, "sem" };
	char path[128];
	int fd = fsn_create(self->dirfd, "sem", 1, 0, 0600);

	ASSERT_LE(0, fd);
	EXPECT_EQ(13, fsn_as_user(USER, USER, open_rw_child, &a));
	ASSERT_EQ(0, fsn_path(path, sizeof(path), self->dir, "sem"));
	ASSERT_EQ(0, chmod(path, 0666));
	EXPECT_EQ(0, fsn_as_user(USER, USER, open_rw_child, &a));
	ASSERT_EQ(0, chmod(path, 0600));
	EXPECT_EQ(13, fsn_as_user(USER, USER, open_rw_child, &a));
	close(fd);
}

static int unlink_child(void *arg)
{
	struct user_args *a = arg;
	char path[128];

	fsn_path(path, sizeof(path), a->dir, a->name);
	if (!unlink(path))
		return 0;
	return errno == EPERM ? 1 : errno == EACCES ? 13 : 2;
}

TEST_F(named, sticky_root_refuses_removing_another_users_name)
{
	struct user_args a = { self->dir, "roots" };
	int fd = fsn_create(self->dirfd, "roots", 1, 0, 0666);

	ASSERT_LE(0, fd);
	EXPECT_EQ(1, fsn_as_user(USER, USER, unlink_child, &a));
	EXPECT_LE(0, fsn_open(self->dir, "roots", O_RDONLY));
	close(fd);
}

static int create_and_remove_child(void *arg)
{
	struct user_args *a = arg;
	char path[128];
	struct stat st;
	int d = fsn_opendir(a->dir);
	int fd = d < 0 ? d : fsn_create(d, a->name, 1, 0, 0600);

	if (fd < 0)
		return fd == -EACCES ? 13 : 1;
	fsn_path(path, sizeof(path), a->dir, a->name);
	if (stat(path, &st) || st.st_uid != USER || st.st_gid != USER)
		return 3;
	return unlink(path) ? 4 : 0;
}

TEST_F(named, any_user_creates_and_removes_its_own_name)
{
	struct user_args a = { self->dir, "users" };

	EXPECT_EQ(0, fsn_as_user(USER, USER, create_and_remove_child, &a));
}

/* What a child creating names is told. */
struct names_args {
	const char *dir;
	const char *prefix;
	int n;		/* names to create: prefix0, prefix1, ... */
	int refused;	/* the one refused with EDQUOT, or n for none */
};

/*
 * Creates names until one fails or a->n are made: 0 if the first refused
 * is a->refused (with EDQUOT) or, with a->refused == a->n, none was; 1 if
 * EDQUOT came elsewhere, 2 on another error, 3 if a->refused was made.
 */
static int create_names_child(void *arg)
{
	struct names_args *a = arg;
	char name[64];
	int d = fsn_opendir(a->dir);
	int i, fd;

	if (d < 0)
		return 250;
	for (i = 0; i < a->n; i++) {
		snprintf(name, sizeof(name), "%s%d", a->prefix, i);
		fd = fsn_create(d, name, 1, 0, 0600);
		if (fd == -EDQUOT)
			return i == a->refused ? 0 : 1;
		if (fd < 0)
			return 2;
		close(fd);
	}
	close(d);
	return a->refused == a->n ? 0 : 3;
}

#define OTHER	1001	/* a second unprivileged uid */

TEST(one_user_at_its_bound_leaves_names_for_others_edquot)
{
	struct names_args first = { NULL, "a", 3, 2 }, second = { NULL, "b", 2, 2 };
	char dir[64], path[128];
	int d, fd, i;

	ASSERT_EQ(0, fsn_mount_tmp(dir, sizeof(dir), "max=8,max_per_user=2"));
	first.dir = dir;
	second.dir = dir;
	/* The first user's third name is refused: it holds its bound. */
	EXPECT_EQ(0, fsn_as_user(USER, USER, create_names_child, &first));
	/* ...and the second user still creates its own, as root does. */
	EXPECT_EQ(0, fsn_as_user(OTHER, OTHER, create_names_child, &second));
	/* The root directory's owner is not bounded: root, here. */
	d = fsn_opendir(dir);
	ASSERT_LE(0, d);
	for (i = 0; i < 3; i++) {
		char name[16];

		snprintf(name, sizeof(name), "root%d", i);
		fd = fsn_create(d, name, 1, 0, 0600);
		EXPECT_LE(0, fd);
		close(fd);
	}
	/* A name removed gives its owner one back. */
	ASSERT_EQ(0, fsn_path(path, sizeof(path), dir, "a0"));
	ASSERT_EQ(0, unlink(path));
	first.prefix = "c";
	first.n = 2;
	first.refused = 1;
	EXPECT_EQ(0, fsn_as_user(USER, USER, create_names_child, &first));
	close(d);
	EXPECT_EQ(0, fsn_unmount(dir));
}

TEST(default_per_user_bound_is_a_quarter_of_max)
{
	struct names_args first = { NULL, "a", 11, 10 };
	struct names_args second = { NULL, "b", 1, 1 };
	char dir[64], opts[512];

	ASSERT_EQ(0, fsn_mount_tmp(dir, sizeof(dir), NULL));
	ASSERT_EQ(0, mount_options_of(dir, opts, sizeof(opts)));
	EXPECT_NE(NULL, strstr(opts, ",max=4096,max_per_user=1024"))
		TH_LOG("options: %s", opts);
	EXPECT_EQ(0, fsn_unmount(dir));

	/*
	 * With max=40 the bound is 10: one user's 11th name is refused,
	 * another user's first is not.  (1,025 names of the default bound
	 * outlast the harness's 30 s on the debug kernel built in.)
	 */
	ASSERT_EQ(0, fsn_mount_tmp(dir, sizeof(dir), "max=40"));
	ASSERT_EQ(0, mount_options_of(dir, opts, sizeof(opts)));
	EXPECT_NE(NULL, strstr(opts, ",max=40,max_per_user=10"))
		TH_LOG("options: %s", opts);
	first.dir = dir;
	second.dir = dir;
	EXPECT_EQ(0, fsn_as_user(USER, USER, create_names_child, &first));
	EXPECT_EQ(0, fsn_as_user(OTHER, OTHER, create_names_child, &second));
	EXPECT_EQ(0, fsn_unmount(dir));

	/* Rounded up, and following max= on a remount unless given. */
	ASSERT_EQ(0, fsn_mount_tmp(dir, sizeof(dir), "max=10"));
	ASSERT_EQ(0, mount_options_of(dir, opts, sizeof(opts)));
	EXPECT_NE(NULL, strstr(opts, ",max=10,max_per_user=3"))
		TH_LOG("options: %s", opts);
	ASSERT_EQ(0, fsn_remount(dir, 0, "max=100"));
	ASSERT_EQ(0, mount_options_of(dir, opts, sizeof(opts)));
	EXPECT_NE(NULL, strstr(opts, ",max=100,max_per_user=25"))
		TH_LOG("options: %s", opts);
	ASSERT_EQ(0, fsn_remount(dir, 0, "max_per_user=7"));
	ASSERT_EQ(0, fsn_remount(dir, 0, "max=200"));
	ASSERT_EQ(0, mount_options_of(dir, opts, sizeof(opts)));
	EXPECT_NE(NULL, strstr(opts, ",max=200,max_per_user=7"))
		TH_LOG("options: %s", opts);
	EXPECT_EQ(0, fsn_unmount(dir));
}

TEST(chown_moves_a_name_to_its_new_owners_count)
{
	struct names_args first = { NULL, "a", 2, 2 }, second = { NULL, "b", 1, 1 };
	char dir[64], path[128];

	ASSERT_EQ(0, fsn_mount_tmp(dir, sizeof(dir), "max_per_user=2"));
	first.dir = dir;
	second.dir = dir;
	ASSERT_EQ(0, fsn_as_user(USER, USER, create_names_child, &first));
	ASSERT_EQ(0, fsn_as_user(OTHER, OTHER, create_names_child, &second));
	/* OTHER takes one of USER's (root's chown, past OTHER's bound too). */
	ASSERT_EQ(0, fsn_path(path, sizeof(path), dir, "a0"));
	ASSERT_EQ(0, chown(path, OTHER, OTHER));
	ASSERT_EQ(0, fsn_path(path, sizeof(path), dir, "a1"));
	ASSERT_EQ(0, chown(path, OTHER, OTHER));
	/* USER holds none now, OTHER three: over its bound, it makes none. */
	first.prefix = "c";
	EXPECT_EQ(0, fsn_as_user(USER, USER, create_names_child, &first));
	second.prefix = "d";
	second.refused = 0;
	EXPECT_EQ(0, fsn_as_user(OTHER, OTHER, create_names_child, &second));
	EXPECT_EQ(0, fsn_unmount(dir));
}

TEST(link_needs_write_permission_on_the_directory)
{
	struct user_args a = { NULL, "x" };
	char dir[64];

	ASSERT_EQ(0, fsn_mount_tmp(dir, sizeof(dir), "mode=0755"));
	a.dir = dir;
	EXPECT_EQ(13, fsn_as_user(USER, USER, create_and_remove_child, &a));
	EXPECT_EQ(0, fsn_unmount(dir));
}

static int read_only_child(void *arg)
{
	struct user_args *a = arg;
	struct fairsem_handle nh = { .fd = -1 };
	int ro = fsn_open(a->dir, a->name, O_RDONLY);

	if (ro < 0)
		return 1;
	if (fs_id(ro) == FS_BAD)
		return 2;
	if (fs_ret(ioctl(ro, FAIRSEM_IOC_NEW_HANDLE, &nh)) != -EBADF)
		return 3;
	if (fs_add(ro, 1) != -EBADF)
		return 4;
	if (fs_get(ro, 1) != -EBADF)
		return 5;
	/* And no write access by opening the name again. */
	if (fsn_open(a->dir, a->name, O_RDWR) != -EACCES)
		return 6;
	return 0;
}

TEST_F(named, read_only_access_never_becomes_write_access)
{
	struct user_args a = { self->dir, "watch" };
	int fd = fsn_create(self->dirfd, "watch", 1, 0, 0644);

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, fsn_as_user(USER, USER, read_only_child, &a));
	EXPECT_EQ(1, fs_limit(fd));
	EXPECT_EQ(1, fs_handles(fd));
	close(fd);
}

/* ---- accounting: the creator's memory cgroup ---- */

#define CGROOT	"/sys/fs/cgroup"
#define CGTEST	CGROOT "/fairsem-named"

static long memcg_slab(void)
{
	char buf[8192], *p;
	int fd = open(CGTEST "/memory.stat", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	p = strstr(buf, "\nslab ");
	return p ? atol(p + 6) : -1;
}

/* A long bound: under KASAN and TCG, 500 LINKs may take a while. */
TEST_F_TIMEOUT(named, names_are_charged_to_the_creators_memcg, 300)
{
	char pid[16], name[16];
	long before, after;
	int i, fd, n = 500;
	int ctl;

	mkdir(CGROOT, 0755);
	if (mount("cgroup2", CGROOT, "cgroup2", 0, NULL) && errno != EBUSY)
		SKIP(return, "no cgroup2");
	ctl = open(CGROOT "/cgroup.subtree_control", O_WRONLY);
	if (ctl < 0 || write(ctl, "+memory", 7) != 7)
		SKIP(return, "no memory controller");
	close(ctl);
	rmdir(CGTEST);
	ASSERT_EQ(0, mkdir(CGTEST, 0755));
	ctl = open(CGTEST "/cgroup.procs", O_WRONLY);
	ASSERT_LE(0, ctl);
	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_LT(0, write(ctl, pid, strlen(pid)));
	close(ctl);
	fd = fs_new(1, 0);
	ASSERT_LE(0, fd);
	before = memcg_slab();
	ASSERT_LE(0, before);
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "n%d", i);
		ASSERT_EQ(0, fsn_link(self->dirfd, fd, name, 0600));
	}
	after = memcg_slab();
	/*
	 * An inode and a dentry each: 1,684 bytes a name on the debug
	 * kernel, about 252 to 260 on 7.2, whose slab charges less of
	 * them; an uncharged name costs the creator nothing.
	 */
	EXPECT_LT(before + 128L * n, after);
	TH_LOG("%d names: slab of the creator's memcg %ld -> %ld (%ld bytes a name)",
	       n, before, after, (after - before) / n);
	close(fd);
	ctl = open(CGROOT "/cgroup.procs", O_WRONLY);
	if (ctl >= 0) {
		if (write(ctl, pid, strlen(pid)) < 0)
			TH_LOG("cannot leave " CGTEST);
		close(ctl);
	}
	rmdir(CGTEST);
}

TEST_HARNESS_MAIN
