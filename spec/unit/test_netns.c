/*
 * netns.c: a network namespace kept at a path. Root only (CAP_SYS_ADMIN);
 * as another user, the refusal is checked and nothing is left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "netns.h"
#include "tap.h"

/* The namespace's inode, as the kernel numbers it, through PATH. */
static ino_t
ns_ino(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_ino : 0;
}

/* Whether PATH is in this process's network namespace (setns and back). */
static int
joins(const char *path)
{
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int res = fd != -1 && setns(fd, CLONE_NEWNET) == 0;

	if (res && setns(self, CLONE_NEWNET) != 0)
		abort();
	if (fd != -1)
		close(fd);
	close(self);
	return res;
}

static void
as_root(const char *dir)
{
	char path[PATH_MAX], other[PATH_MAX], link[PATH_MAX];
	const char *step = NULL;
	struct stat st;

	snprintf(path, sizeof(path), "%s/ns", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	ok(netns_make(path, &step) == 0, "made");
	ok(ns_ino(path) != 0 && ns_ino(path) != ns_ino("/proc/self/ns/net"),
	    "a namespace, not this process's");
	ok(joins(path), "one that can be joined");
	errno = 0;
	ok(netns_make(path, &step) == -1 && errno == EEXIST, "not twice");
	is_str(step, "create", "the step that failed");
	ok(netns_make(other, &step) == 0 && ns_ino(other) != ns_ino(path),
	    "each one its own");
	ok(symlink(path, link) == 0, "a link to it");
	ok(netns_drop(link, &step) == 0 && lstat(link, &st) == -1,
	    "dropping a link removes the link");
	ok(ns_ino(path) != 0 && joins(path), "and not what it points at");
	ok(netns_drop(path, &step) == 0 && lstat(path, &st) == -1, "dropped");
	ok(netns_drop(path, &step) == 0, "dropping none is success");
	ok(netns_drop(other, &step) == 0, "the other dropped");
}

int
main(void)
{
	char dir[] = "/tmp/lb-test-netns-XXXXXX", path[PATH_MAX];
	const char *step = NULL;
	struct stat st;

	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(path, sizeof(path), "%s/no/ns", dir);
	errno = 0;
	ok(netns_make(path, &step) == -1 && errno == ENOENT,
	    "not in a missing folder");
	is_str(step, "create", "which says where it failed");
	if (geteuid() == 0) {
		as_root(dir);
	} else {
		snprintf(path, sizeof(path), "%s/ns", dir);
		ok(netns_make(path, &step) == -1, "refused without root");
		ok(lstat(path, &st) == -1, "and nothing left at the path");
	}
	rmdir(dir);
	return tap_done();
}
