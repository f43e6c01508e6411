// SPDX-License-Identifier: GPL-2.0
/*
 * fairsem_cmd_test for the VM: the fairsem command and its test script,
 * fairsem_cmd_test.sh, in one static program that needs nothing but itself
 * and /bin/sh.
 *
 * Called as "fairsem" it is the command.  Called as "fairsem-as UID ARG..."
 * it is the command run as user UID (uid and gid UID, no supplementary
 * groups, umask 0), for the tests of two users, which need root.  Called
 * by any other name it makes symlinks by both names to itself in a fresh
 * directory under $TMPDIR (or /tmp), and runs the built-in script with
 * FAIRSEM and FAIRSEM_AS set to them.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <grp.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CMD_TEST_SCRIPT
#error "CMD_TEST_SCRIPT must name fairsem_cmd_test.sh"
#endif

/* The script, NUL-terminated, read in by the assembler. */
extern const char fairsem_cmd_test_script[];
__asm__(".section .rodata\n"
	".global fairsem_cmd_test_script\n"
	"fairsem_cmd_test_script:\n"
	".incbin \"" CMD_TEST_SCRIPT "\"\n"
	".byte 0\n"
	".previous\n");

/* cmd/main.c, built with -Dmain=fairsem_main. */
int fairsem_main(int argc, char **argv);

/* fairsem-as UID ARG...: the command as another user. */
static int run_as(int argc, char **argv)
{
	char *end;
	long uid;

	if (argc < 3)
		return 64;
	uid = strtol(argv[1], &end, 10);
	if (*end || uid < 0 || setgroups(0, NULL) || setgid((gid_t)uid) ||
	    setuid((uid_t)uid)) {
		fprintf(stderr, "fairsem-as: cannot become uid %s\n", argv[1]);
		return 71;
	}
	umask(0);
	return fairsem_main(argc - 1, argv + 1);
}

static int run_script(const char *self, const char *fairsem, const char *as)
{
	int status;
	pid_t pid;

	if (setenv("FAIRSEM", fairsem, 1) || setenv("FAIRSEM_AS", as, 1) ||
	    setenv("FAIRSEM_RELEASE", FAIRSEM_VERSION, 1))
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", fairsem_cmd_test_script, self,
		      (char *)NULL);
		perror("fairsem_cmd_test: /bin/sh");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	const char *base = strrchr(argv[0], '/');
	const char *tmpdir = getenv("TMPDIR");
	char exe[PATH_MAX], dir[PATH_MAX], link[PATH_MAX + 16];
	char as[PATH_MAX + 16];
	ssize_t n;
	int ret;

	if (!strcmp(base ? base + 1 : argv[0], "fairsem"))
		return fairsem_main(argc, argv);
	if (!strcmp(base ? base + 1 : argv[0], "fairsem-as"))
		return run_as(argc, argv);

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0) {
		perror("fairsem_cmd_test: /proc/self/exe");
		return 1;
	}
	exe[n] = '\0';
	snprintf(dir, sizeof(dir), "%s/fairsem_cmd_test.XXXXXX",
		 tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "fairsem_cmd_test: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	snprintf(link, sizeof(link), "%s/fairsem", dir);
	snprintf(as, sizeof(as), "%s/fairsem-as", dir);
	if (symlink(exe, link) || symlink(exe, as)) {
		fprintf(stderr, "fairsem_cmd_test: %s: %s\n", dir, strerror(errno));
		unlink(link);
		rmdir(dir);
		return 1;
	}
	ret = run_script(argv[0], link, as);
	unlink(as);
	unlink(link);
	rmdir(dir);
	if (ret < 0) {
		perror("fairsem_cmd_test");
		return 1;
	}
	return ret;
}
