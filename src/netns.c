/* A run's own network namespace, kept at a path (netns.h). */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "net/sim.h"
#include "netns.h"

static const char *const steps[] = { "unshare", "loopback", "mount" };

/* Brings "lo" of the current network namespace up. */
static int
lo_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int res = -1;

	if (fd == -1)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		res = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return res;
}

/*
 * Runs FN(ARG) in a thread of its own, every signal blocked there, and
 * waits for it. A thread can make or enter a network namespace (unshare,
 * setns) without the rest of the process, and it costs the caller nothing
 * afterwards; a forked child left every page of the caller's heap
 * copy-on-write, a fault each on its next write (about 3000 for a run's
 * Lua heap, at every fork). 0, or -1 with errno.
 */
static int
in_thread(void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	pthread_t t;
	int e;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e != 0) {
		errno = e;
		return -1;
	}
	pthread_join(t, NULL);
	return 0;
}

struct make_job {
	const char *path;
	int step, err; /* the step that failed (steps[]), and its errno */
};

/*
 * netns_make's thread: a namespace of its own (the thread's alone), lo
 * up, bound onto the path (the thread's namespace: /proc/thread-self,
 * not /proc/self, which is the process's).
 */
static void *
make_thread(void *arg)
{
	struct make_job *j = arg;

	if (unshare(CLONE_NEWNET) == -1)
		j->step = 0, j->err = errno;
	else if (lo_up() == -1)
		j->step = 1, j->err = errno;
	else if (mount("/proc/thread-self/ns/net", j->path, NULL, MS_BIND,
		     NULL) == -1)
		j->step = 2, j->err = errno;
	return NULL;
}

int
netns_make(const char *path, const char **step)
{
	struct make_job j = { path, 0, 0 };
	int fd, e;

	*step = "create";
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1)
		return -1;
	close(fd);
	if (in_thread(make_thread, &j) == -1) {
		*step = "thread";
		goto fail;
	}
	if (j.err == 0)
		return 0;
	*step = steps[j.step];
	errno = j.err;
fail:
	e = errno;
	umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW);
	unlink(path);
	errno = e;
	return -1;
}

int
netns_drop(const char *path, const char **step)
{
	*step = "unmount";
	if (umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) == -1 &&
	    errno != EINVAL && errno != ENOENT)
		return -1;
	*step = "remove";
	if (unlink(path) == -1 && errno != ENOENT)
		return -1;
	return 0;
}

/* Enters the namespace kept at PATH. 0, or -1 with errno. */
static int
enter(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), r;

	if (fd == -1)
		return -1;
	r = setns(fd, CLONE_NEWNET);
	close(fd);
	return r;
}

/*
 * A socket bound as SPEC says ("tcp:A.B.C.D:PORT", listening, or
 * "udp:A.B.C.D:PORT"). The fd, or -1 with a message in err.
 */
static int
bind_spec(const char *spec, char *err, size_t errlen)
{
	struct sockaddr_in sa;
	char host[INET_ADDRSTRLEN];
	const char *colon;
	int type, fd, on = 1;
	long port;
	char *end;

	if (strncmp(spec, "tcp:", 4) == 0)
		type = SOCK_STREAM;
	else if (strncmp(spec, "udp:", 4) == 0)
		type = SOCK_DGRAM;
	else
		goto bad;
	colon = strrchr(spec + 4, ':');
	if (colon == NULL || (size_t)(colon - spec - 4) >= sizeof(host))
		goto bad;
	memcpy(host, spec + 4, (size_t)(colon - spec - 4));
	host[colon - spec - 4] = '\0';
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	if (*end != '\0' || end == colon + 1 || errno != 0 || port < 1 ||
	    port > 65535 || inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		goto bad;
	sa.sin_port = htons((uint16_t)port);
	fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	if (fd == -1 ||
	    (type == SOCK_STREAM &&
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) ==
		    -1) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    (type == SOCK_STREAM && listen(fd, SOMAXCONN) == -1)) {
		snprintf(err, errlen, "cannot bind '%s': %s", spec,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	return fd;
bad:
	snprintf(err, errlen,
	    "cannot bind '%s': expected tcp:A.B.C.D:PORT or udp:A.B.C.D:PORT",
	    spec);
	return -1;
}

struct listen_job {
	const char *path;
	const char *const *socks;
	int nsocks, sim_port;
	int *fds, n;
	char err[512];
};

/*
 * netns_listen's thread: inside the namespace, its sockets into the
 * job's fds (a socket stays in the namespace it was made in), or none
 * and the reason.
 */
static void *
listen_thread(void *arg)
{
	struct listen_job *j = arg;
	int i;

	if (enter(j->path) == -1)
		snprintf(j->err, sizeof(j->err),
		    "cannot enter the namespace: %s", strerror(errno));
	for (i = 0; j->err[0] == '\0' && i < j->nsocks; i++)
		if ((j->fds[j->n] = bind_spec(j->socks[i], j->err,
			 sizeof(j->err))) != -1)
			j->n++;
	if (j->err[0] == '\0' && j->sim_port > 0 &&
	    sim_setup(j->sim_port, &j->fds[j->n], &j->fds[j->n + 1],
		&j->fds[j->n + 2], j->err, sizeof(j->err)) == 0)
		j->n += 3;
	if (j->err[0] != '\0') {
		for (i = 0; i < j->n; i++)
			close(j->fds[i]);
		j->n = 0;
	}
	return NULL;
}

int
netns_listen(const char *path, const char *const *socks, int nsocks,
    int sim_port, int *fds, char *err, size_t errlen)
{
	struct listen_job j = { .path = path,
		.socks = socks,
		.nsocks = nsocks,
		.sim_port = sim_port,
		.fds = fds };

	if (nsocks < 0 || nsocks + (sim_port > 0 ? 3 : 0) > NETNS_FDS_MAX) {
		snprintf(err, errlen, "at most %d sockets", NETNS_FDS_MAX);
		return -1;
	}
	if (in_thread(listen_thread, &j) == -1) {
		snprintf(err, errlen, "cannot start a thread: %s",
		    strerror(errno));
		return -1;
	}
	if (j.err[0] != '\0') {
		snprintf(err, errlen, "%s", j.err);
		return -1;
	}
	return j.n;
}

struct read_job {
	const char *path;
	const char *const *names;
	int n;
	char **out;
	size_t cap;
	char err[256];
};

/*
 * The text of /proc/thread-self/net/NAME (the calling thread's
 * namespace), malloc'ed and NUL-ended, at most CAP bytes; NULL when it
 * cannot be read whole.
 */
static char *
read_net(const char *name, size_t cap)
{
	char file[128], *buf, *fit;
	size_t have = 0;
	ssize_t got = 1;
	int in;

	snprintf(file, sizeof(file), "/proc/thread-self/net/%s", name);
	if ((in = open(file, O_RDONLY | O_CLOEXEC)) == -1)
		return NULL;
	if ((buf = malloc(cap + 2)) == NULL) {
		close(in);
		return NULL;
	}
	while (got > 0 && have <= cap)
		if ((got = read(in, buf + have, cap + 1 - have)) > 0)
			have += (size_t)got;
		else if (got == -1 && errno == EINTR)
			got = 1;
	close(in);
	if (got < 0 || have > cap) {
		free(buf);
		return NULL;
	}
	buf[have] = '\0';
	fit = realloc(buf, have + 1);
	return fit != NULL ? fit : buf;
}

/* netns_read's thread: inside the namespace, each file, or the reason. */
static void *
read_thread(void *arg)
{
	struct read_job *j = arg;
	int i;

	if (enter(j->path) == -1) {
		snprintf(j->err, sizeof(j->err), "cannot enter the namespace");
		return NULL;
	}
	for (i = 0; i < j->n; i++)
		if ((j->out[i] = read_net(j->names[i], j->cap)) == NULL) {
			snprintf(j->err, sizeof(j->err),
			    "cannot read /proc/net/%s whole (at most %zu "
			    "bytes)",
			    j->names[i], j->cap);
			return NULL;
		}
	return NULL;
}

int
netns_read(const char *path, const char *const *names, int n, char **out,
    size_t cap, char *err, size_t errlen)
{
	struct read_job j = { .path = path,
		.names = names,
		.n = n,
		.out = out,
		.cap = cap };
	int i;

	for (i = 0; i < n; i++)
		out[i] = NULL;
	if (cap >= UINT32_MAX) {
		snprintf(err, errlen, "at most %u bytes a file",
		    UINT32_MAX - 1);
		return -1;
	}
	if (in_thread(read_thread, &j) == -1)
		snprintf(j.err, sizeof(j.err), "cannot start a thread: %s",
		    strerror(errno));
	if (j.err[0] == '\0')
		return 0;
	snprintf(err, errlen, "%s", j.err);
	for (i = 0; i < n; i++) {
		free(out[i]);
		out[i] = NULL;
	}
	return -1;
}
