// SPDX-License-Identifier: GPL-2.0
/*
 * Name squatting, as two users: fairsem_open_or_create() must not hand
 * user A a semaphore that user B made first in a directory that anyone
 * may write to (a fairsem instance's default mode=1777), as the contract's
 * security section says.  Runs as root in the VM; each user is a child
 * that drops to its uid and gid (setgroups, setgid, setuid) before calling
 * libfairsem, so what is tested is the library's check, with the
 * kernel's own permission checks under it.
 *
 * Built by lib/Makefile (it links libfairsem.a) into build/selftests/bin/.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fairsem.h"
#include "kselftest_harness.h"

#define UID_A	1000	/* the victim */
#define UID_B	1001	/* the squatter */

/* What a child reports: a return value and, for a handle, what INFO said. */
struct report {
	int ret;
	int created;	/* the handle is the creator's (/dev/fairsem) */
	__u64 id, limit;
	uid_t owner;	/* fairsem_stat_named()'s */
};

typedef void (*user_fn)(const char *name, struct report *r);

/*
 * Run fn in a child that is uid (and gid) uid, without supplementary
 * groups and with umask 0 (so a mode asked is the mode given): its report.
 */
static struct report as_user(uid_t uid, user_fn fn, const char *name)
{
	struct report r = { .ret = -ECHILD };
	int p[2], status;
	pid_t pid;

	if (pipe(p))
		return r;
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			r.ret = -ECHILD;	/* the test's own failure */
		else
			fn(name, &r);
		if (write(p[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (pid > 0 && read(p[0], &r, sizeof(r)) != sizeof(r))
		r.ret = -ECHILD;
	close(p[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return r;
}

static void fill(struct report *r, int fd)
{
	struct fairsem_info info;
	struct stat st;

	r->ret = fd;
	if (fd < 0)
		return;
	if (!fairsem_info(fd, &info)) {
		r->id = info.id;
		r->limit = info.limit;
	}
	if (!fstat(fd, &st))
		r->created = S_ISCHR(st.st_mode);
	close(fd);
}

/* B squats: a big limit, and a mode that lets A open it. */
static void squat(const char *name, struct report *r)
{
	umask(0);
	fill(r, fairsem_create_named(name, 1000, O_CLOEXEC, 0666));
}

/* A, as `fairsem run --name X --create 1` does it. */
static void open_or_create(const char *name, struct report *r)
{
	umask(0);
	fill(r, fairsem_open_or_create(name, 1, O_CLOEXEC, 0666));
}

static void open_or_create_any_owner(const char *name, struct report *r)
{
	umask(0);
	fill(r, fairsem_open_or_create(name, 1, O_CLOEXEC | FAIRSEM_ANY_OWNER,
				       0666));
}

static void stat_named(const char *name, struct report *r)
{
	struct stat st;

	r->ret = fairsem_stat_named(name, &st);
	r->owner = st.st_uid;
}

static void create_private(const char *name, struct report *r)
{
	fill(r, fairsem_create_named(name, 1, O_CLOEXEC, 0600));
}

FIXTURE(instance) {
	char dir[64];
	bool mounted;
};

/*
 * The harness runs a test even when its setup skipped: each test asks
 * (setup said why).
 */

/* A fresh instance as root mounts it by default: mode=1777, root's. */
static int mount_at(char *dir, const char *options)
{
	if (!mkdtemp(dir))
		return -errno;
	/* The users must reach it: mkdtemp made it 0700. */
	if (chmod(dir, 0755) || mount("fairsem", dir, "fairsem", 0, options)) {
		int err = errno;

		rmdir(dir);
		return -err;
	}
	setenv(FAIRSEM_DIR_ENV, dir, 1);
	return 0;
}

FIXTURE_SETUP(instance)
{
	int ret;

	snprintf(self->dir, sizeof(self->dir), "/tmp/fairsem_squat.XXXXXX");
	if (access(FAIRSEM_DEVICE_PATH, F_OK))
		SKIP(return, "no %s: fairsem module not loaded",
		     FAIRSEM_DEVICE_PATH);
	if (geteuid())
		SKIP(return, "needs root, to be two users");
	ret = mount_at(self->dir, NULL);
	ASSERT_EQ(0, ret);
	self->mounted = true;
}

FIXTURE_TEARDOWN(instance)
{
	if (!self->mounted)
		return;
	if (umount(self->dir))
		umount2(self->dir, MNT_DETACH);
	rmdir(self->dir);
}

TEST_F(instance, open_or_create_refuses_another_users_name)
{
	struct report b, a;

	if (!self->mounted)
		return;
	b = as_user(UID_B, squat, "build");
	ASSERT_LE(0, b.ret);
	/* Both of A's jobs are refused: neither runs on B's 1000 permits. */
	a = as_user(UID_A, open_or_create, "build");
	EXPECT_EQ(-EPERM, a.ret);
	a = as_user(UID_A, open_or_create, "build");
	EXPECT_EQ(-EPERM, a.ret);
}

TEST_F(instance, stat_named_tells_the_squatters_uid)
{
	struct report b, a;

	if (!self->mounted)
		return;
	b = as_user(UID_B, squat, "build");
	ASSERT_LE(0, b.ret);
	a = as_user(UID_A, stat_named, "build");
	EXPECT_EQ(0, a.ret);
	EXPECT_EQ(UID_B, a.owner);
}

TEST_F(instance, root_is_refused_another_users_name_too)
{
	struct report b, r = { 0 };

	if (!self->mounted)
		return;
	b = as_user(UID_B, squat, "build");
	ASSERT_LE(0, b.ret);
	/* As fs.protected_regular: the rule holds for root as well. */
	open_or_create("build", &r);
	EXPECT_EQ(-EPERM, r.ret);
}

TEST_F(instance, any_owner_opens_another_users_name)
{
	struct report b, a;

	if (!self->mounted)
		return;
	b = as_user(UID_B, squat, "build");
	ASSERT_LE(0, b.ret);
	a = as_user(UID_A, open_or_create_any_owner, "build");
	ASSERT_LE(0, a.ret);
	EXPECT_EQ(b.id, a.id);
	EXPECT_EQ(1000, a.limit);
}

TEST_F(instance, open_or_create_trusts_the_directory_owners_name)
{
	struct report root = { 0 }, a;

	if (!self->mounted)
		return;
	/* root owns the instance: its names are as safe as the directory. */
	squat("shared", &root);
	ASSERT_LE(0, root.ret);
	a = as_user(UID_A, open_or_create, "shared");
	ASSERT_LE(0, a.ret);
	EXPECT_EQ(root.id, a.id);
}

TEST_F(instance, open_or_create_trusts_the_callers_own_name)
{
	struct report first, again;

	if (!self->mounted)
		return;
	first = as_user(UID_A, open_or_create, "mine");
	ASSERT_LE(0, first.ret);
	EXPECT_TRUE(first.created);
	again = as_user(UID_A, open_or_create, "mine");
	ASSERT_LE(0, again.ret);
	EXPECT_FALSE(again.created);
	EXPECT_EQ(first.id, again.id);
}

/*
 * Two users race open-or-create on one name: one creates it, and the
 * other is refused rather than handed the winner's semaphore.
 */
TEST_F(instance, the_loser_of_a_race_between_users_is_refused)
{
	struct report r[2];
	int i, p[2][2], go[2], created = 0, refused = 0;
	uid_t uids[2] = { UID_A, UID_B };
	pid_t pids[2];

	if (!self->mounted)
		return;
	ASSERT_EQ(0, pipe(go));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, pipe(p[i]));
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (pids[i] == 0) {
			struct report c = { .ret = -ECHILD };
			char ch;

			close(go[1]);
			if (setgroups(0, NULL) || setgid(uids[i]) ||
			    setuid(uids[i]))
				_exit(2);
			if (read(go[0], &ch, 1) == 0)
				open_or_create("race", &c);
			if (write(p[i][1], &c, sizeof(c)) != sizeof(c))
				_exit(3);
			_exit(0);
		}
		close(p[i][1]);
	}
	close(go[0]);
	close(go[1]);		/* both go at once */
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(sizeof(r[i]), read(p[i][0], &r[i], sizeof(r[i])));
		close(p[i][0]);
		waitpid(pids[i], NULL, 0);
		created += r[i].ret >= 0 && r[i].created;
		refused += r[i].ret == -EPERM;
	}
	EXPECT_EQ(1, created);
	EXPECT_EQ(1, refused);
}

TEST_F(instance, a_plain_open_names_whose_semaphore_it_trusts)
{
	struct report b, a = { 0 };
	int fd;

	if (!self->mounted)
		return;
	b = as_user(UID_B, squat, "build");
	ASSERT_LE(0, b.ret);
	/* Not open-or-create: whoever names it wants that one. */
	fd = fairsem_open_named("build", O_CLOEXEC);
	fill(&a, fd);
	ASSERT_LE(0, a.ret);
	EXPECT_EQ(b.id, a.id);
}

/*
 * A directory that others may not write to (mode=1775: the group's):
 * only its group could have made a name, so a member's name is trusted.
 */
TEST(a_directory_closed_to_others_trusts_its_names)
{
	char dir[] = "/tmp/fairsem_squat.XXXXXX";
	struct report a, b;

	if (access(FAIRSEM_DEVICE_PATH, F_OK) || geteuid())
		SKIP(return, "needs root and the fairsem module");
	ASSERT_EQ(0, mount_at(dir, "mode=1775,gid=1001"));
	b = as_user(UID_B, squat, "team");
	ASSERT_LE(0, b.ret);
	a = as_user(UID_A, create_private, "other");
	EXPECT_EQ(-EACCES, a.ret);	/* not of the group: cannot create */
	a = as_user(UID_A, open_or_create, "team");
	ASSERT_LE(0, a.ret);
	EXPECT_EQ(b.id, a.id);
	umount(dir);
	rmdir(dir);
}

/* fairsem mount --user's instance: mode=0700, the user's. */
TEST(a_private_instance_keeps_other_users_out)
{
	char dir[] = "/tmp/fairsem_squat.XXXXXX";
	struct report a, b;

	if (access(FAIRSEM_DEVICE_PATH, F_OK) || geteuid())
		SKIP(return, "needs root and the fairsem module");
	ASSERT_EQ(0, mount_at(dir, "mode=0700,uid=1000,gid=1000"));
	b = as_user(UID_B, create_private, "x");
	EXPECT_EQ(-EACCES, b.ret);
	b = as_user(UID_B, open_or_create, "x");
	EXPECT_EQ(-EACCES, b.ret);
	a = as_user(UID_A, create_private, "x");
	EXPECT_LE(0, a.ret);
	umount(dir);
	rmdir(dir);
}

/*
 * The helper of setgid_program_ignores_FAIRSEM_DIR: "PROG --stat-named
 * NAME" exits with fairsem_stat_named()'s errno.  A constructor, because
 * the harness owns main(); glibc passes it argc and argv.
 */
__attribute__((constructor)) static void stat_named_mode(int argc, char **argv)
{
	struct stat st;

	if (argc == 3 && !strcmp(argv[1], "--stat-named"))
		_exit(-fairsem_stat_named(argv[2], &st));
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in, out, ret = 0;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			ret = -1;
	if (in < 0 || out < 0 || n < 0)
		ret = -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ret;
}

/* Exit status of prog --stat-named name, run as uid. */
static int run_as(uid_t uid, const char *prog, const char *name)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(uid) || setuid(uid))
			_exit(100);
		execl(prog, prog, "--stat-named", name, (char *)NULL);
		_exit(101);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * secure_getenv(): a set-group-ID program that uses libfairsem must not
 * let whoever runs it move its names elsewhere with $FAIRSEM_DIR.
 */
TEST_F(instance, setgid_program_ignores_FAIRSEM_DIR)
{
	char dir[] = "/tmp/fairsem_squat_prog.XXXXXX", prog[64];
	struct report root = { 0 };

	if (!self->mounted)
		return;
	squat("probe", &root);
	ASSERT_LE(0, root.ret);
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, chmod(dir, 0755));
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	ASSERT_EQ(0, copy_file("/proc/self/exe", prog));
	/* Plain: $FAIRSEM_DIR (our instance) holds the name. */
	EXPECT_EQ(0, run_as(UID_A, prog, "probe"));
	ASSERT_EQ(0, chown(prog, 0, UID_B));
	ASSERT_EQ(0, chmod(prog, 02755));
	/* Set-group-ID: the default directory, where there is no such name. */
	EXPECT_EQ(ENOENT, run_as(UID_A, prog, "probe"));
	unlink(prog);
	rmdir(dir);
}

TEST_HARNESS_MAIN
