/*
 * netns.c: a network namespace kept at a path. Root only (CAP_SYS_ADMIN);
 * as another user, the refusal is checked and nothing is left behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
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

/* This thread's network namespace, as the kernel numbers it. */
static ino_t
my_ns(void)
{
	return ns_ino("/proc/thread-self/ns/net");
}

/*
 * Every call, in the caller's thread: the namespace is the thread's own
 * work (netns.c runs it in a thread of its own), the caller's never
 * changes, and what is read is the namespace's, not the caller's.
 */
static void
callers_own(const char *dir)
{
	char path[PATH_MAX], *out[1];
	const char *step = NULL, *names[] = { "tcp" };
	const char *socks[] = { "tcp:127.0.0.1:4711" };
	ino_t self = my_ns(), proc = ns_ino("/proc/self/ns/net");
	char err[256];
	int fds[NETNS_FDS_MAX];

	snprintf(path, sizeof(path), "%s/callers", dir);
	ok(netns_make(path, &step) == 0, "made (caller's namespace)");
	ok(my_ns() == self && ns_ino("/proc/self/ns/net") == proc,
	    "the caller's namespace, thread and process, did not change");
	ok(netns_listen(path, socks, 1, 0, fds, err, sizeof(err)) == 1,
	    "a socket bound inside");
	ok(my_ns() == self, "and the caller is still where it was");
	ok(netns_read(path, names, 1, out, 1 << 20, err, sizeof(err)) == 0 &&
		strstr(out[0], "0100007F:1267 00000000:0000 0A") != NULL,
	    "what is read is the namespace's: the socket listens there");
	free(out[0]);
	ok(my_ns() == self, "the caller did not move to read it");
	close(fds[0]);
	ok(netns_drop(path, &step) == 0, "dropped (caller's namespace)");
}

struct racer {
	const char *dir;
	int id, ok;
};

/* One of several threads that each make, read and drop their own. */
static void *
race(void *arg)
{
	struct racer *r = arg;
	char path[PATH_MAX], err[256], *out[1];
	const char *step = NULL, *names[] = { "dev" };
	ino_t self = my_ns();
	int i;

	r->ok = 1;
	for (i = 0; i < 5 && r->ok; i++) {
		snprintf(path, sizeof(path), "%s/race-%d-%d", r->dir, r->id, i);
		r->ok = netns_make(path, &step) == 0 &&
		    netns_read(path, names, 1, out, 1 << 20, err,
			sizeof(err)) == 0;
		if (r->ok) {
			/* a namespace of its own: lo, and nothing else */
			r->ok = strstr(out[0], "lo:") != NULL &&
			    strstr(out[0], "eth") == NULL;
			free(out[0]);
		}
		r->ok = r->ok && netns_drop(path, &step) == 0 &&
		    my_ns() == self;
	}
	return NULL;
}

static void
racing(const char *dir)
{
	pthread_t t[4];
	struct racer r[4];
	int i, all = 1;

	for (i = 0; i < 4; i++) {
		r[i].dir = dir;
		r[i].id = i;
		r[i].ok = 0;
		if (pthread_create(&t[i], NULL, race, &r[i]) != 0)
			r[i].dir = NULL;
	}
	for (i = 0; i < 4; i++) {
		if (r[i].dir != NULL)
			pthread_join(t[i], NULL);
		all = all && r[i].dir != NULL && r[i].ok;
	}
	ok(all, "four threads at once, five namespaces each: each its own");
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
	callers_own(dir);
	racing(dir);
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
