/* A run's own network namespace, kept at a path (netns.h). */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
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
 * The child: a namespace of its own, lo up, bound onto PATH; what failed
 * goes to FD as two ints (the step, errno). Only system calls: the parent
 * may have threads.
 */
static void
child(const char *path, int fd)
{
	int msg[2] = { 0, 0 };

	if (unshare(CLONE_NEWNET) == -1)
		msg[1] = errno;
	if (msg[1] == 0 && lo_up() == -1)
		msg[0] = 1, msg[1] = errno;
	if (msg[1] == 0 &&
	    mount("/proc/self/ns/net", path, NULL, MS_BIND, NULL) == -1)
		msg[0] = 2, msg[1] = errno;
	if (msg[1] != 0 && write(fd, msg, sizeof(msg)) != (ssize_t)sizeof(msg))
		_exit(2);
	_exit(msg[1] != 0);
}

/* Waits for PID; its message on FD, if any, into *step and errno. */
static int
child_result(pid_t pid, int fd, const char **step)
{
	int msg[2], status;
	ssize_t n;

	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR) {
			*step = "wait";
			return -1;
		}
	n = read(fd, msg, sizeof(msg));
	if (n == (ssize_t)sizeof(msg) && msg[0] >= 0 && msg[0] <= 2 &&
	    msg[1] > 0) {
		*step = steps[msg[0]];
		errno = msg[1];
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		*step = "child";
		errno = ECHILD;
		return -1;
	}
	return 0;
}

int
netns_make(const char *path, const char **step)
{
	int p[2], fd, res, e;
	pid_t pid;

	*step = "create";
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd == -1)
		return -1;
	close(fd);
	if (pipe2(p, O_CLOEXEC) == -1) {
		*step = "pipe";
		goto fail;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		child(path, p[1]);
	}
	close(p[1]);
	if (pid == -1) {
		close(p[0]);
		*step = "fork";
		goto fail;
	}
	res = child_result(pid, p[0], step);
	close(p[0]);
	if (res == 0)
		return 0;
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

/*
 * netns_listen's child: its sockets (or the reason it has none) over FD,
 * then it exits.
 */
static void
listen_child(int fd, const char *path, const char *const *socks, int nsocks,
    int sim_port)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * NETNS_FDS_MAX)];
		struct cmsghdr align;
	} u;
	char err[512] = "", plus[] = "+";
	int fds[NETNS_FDS_MAX], n = 0, i;
	struct iovec iov;
	struct msghdr m;
	struct cmsghdr *c;

	if (enter(path) == -1)
		snprintf(err, sizeof(err), "cannot enter the namespace: %s",
		    strerror(errno));
	for (i = 0; err[0] == '\0' && i < nsocks; i++)
		if ((fds[n] = bind_spec(socks[i], err, sizeof(err))) != -1)
			n++;
	if (err[0] == '\0' && sim_port > 0 &&
	    sim_setup(sim_port, &fds[n], &fds[n + 1], &fds[n + 2], err,
		sizeof(err)) == 0)
		n += 3;
	memset(&m, 0, sizeof(m));
	iov.iov_base = err[0] != '\0' ? err : plus;
	iov.iov_len = err[0] != '\0' ? strlen(err) : 1;
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	if (err[0] == '\0' && n > 0) {
		memset(&u, 0, sizeof(u));
		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)n);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)n);
	}
	_exit(sendmsg(fd, &m, 0) == -1 || err[0] != '\0');
}

/* Waits for PID, the child of a netns_* call. */
static void
reap(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
}

int
netns_listen(const char *path, const char *const *socks, int nsocks,
    int sim_port, int *fds, char *err, size_t errlen)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * NETNS_FDS_MAX)];
		struct cmsghdr align;
	} u;
	char text[512];
	struct iovec iov = { text, sizeof(text) - 1 };
	struct msghdr m;
	struct cmsghdr *c;
	int sp[2], n = 0, i;
	ssize_t got;
	pid_t pid;

	if (nsocks < 0 || nsocks + (sim_port > 0 ? 3 : 0) > NETNS_FDS_MAX) {
		snprintf(err, errlen, "at most %d sockets", NETNS_FDS_MAX);
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(sp[0]);
		listen_child(sp[1], path, socks, nsocks, sim_port);
	}
	close(sp[1]);
	if (pid == -1) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(sp[0]);
		return -1;
	}
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.buf;
	m.msg_controllen = sizeof(u.buf);
	while ((got = recvmsg(sp[0], &m, MSG_CMSG_CLOEXEC)) == -1 &&
	    errno == EINTR)
		;
	close(sp[0]);
	reap(pid);
	for (c = got > 0 ? CMSG_FIRSTHDR(&m) : NULL; c != NULL;
	     c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			memcpy(fds, CMSG_DATA(c), sizeof(int) * (size_t)n);
		}
	if (got == 1 && text[0] == '+' && !(m.msg_flags & MSG_CTRUNC) &&
	    n == nsocks + (sim_port > 0 ? 3 : 0))
		return n;
	for (i = 0; i < n; i++)
		close(fds[i]);
	if (got > 0 && text[0] != '+') {
		text[got] = '\0';
		snprintf(err, errlen, "%s", text);
	} else
		snprintf(err, errlen,
		    "the namespace's sockets were not handed "
		    "over");
	return -1;
}

/*
 * netns_read's child: for each of NAMES, a 4-byte length (UINT32_MAX when
 * it could not be read whole within CAP) and the bytes, over FD.
 */
static void
read_child(int fd, const char *path, const char *const *names, int n,
    size_t cap)
{
	char file[128], *buf = malloc(cap + 1);
	uint32_t len;
	ssize_t got;
	size_t have;
	int i, in;

	if (buf == NULL || enter(path) == -1)
		_exit(1);
	for (i = 0; i < n; i++) {
		snprintf(file, sizeof(file), "/proc/self/net/%s", names[i]);
		in = open(file, O_RDONLY | O_CLOEXEC);
		have = 0;
		got = in == -1 ? -1 : 1;
		while (got > 0 && have <= cap)
			if ((got = read(in, buf + have, cap + 1 - have)) > 0)
				have += (size_t)got;
			else if (got == -1 && errno == EINTR)
				got = 1;
		if (in != -1)
			close(in);
		len = got < 0 || have > cap ? UINT32_MAX : (uint32_t)have;
		if (write(fd, &len, sizeof(len)) != (ssize_t)sizeof(len) ||
		    (len != UINT32_MAX &&
			write(fd, buf, have) != (ssize_t)have))
			_exit(1);
	}
	_exit(0);
}

/* Exactly LEN bytes from FD into BUF. 0, or -1. */
static int
read_full(int fd, void *buf, size_t len)
{
	size_t have = 0;
	ssize_t got;

	while (have < len) {
		got = read(fd, (char *)buf + have, len - have);
		if (got == -1 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		have += (size_t)got;
	}
	return 0;
}

int
netns_read(const char *path, const char *const *names, int n, char **out,
    size_t cap, char *err, size_t errlen)
{
	int p[2], i, ok = 1;
	uint32_t len;
	pid_t pid;

	for (i = 0; i < n; i++)
		out[i] = NULL;
	if (cap >= UINT32_MAX || pipe2(p, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		read_child(p[1], path, names, n, cap);
	}
	close(p[1]);
	if (pid == -1) {
		close(p[0]);
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	for (i = 0; ok && i < n; i++) {
		if (read_full(p[0], &len, sizeof(len)) == -1) {
			snprintf(err, errlen, "cannot enter the namespace");
			ok = 0;
		} else if (len == UINT32_MAX) {
			snprintf(err, errlen,
			    "cannot read /proc/net/%s whole (at most %zu "
			    "bytes)",
			    names[i], cap);
			ok = 0;
		} else if ((out[i] = malloc((size_t)len + 1)) == NULL ||
		    read_full(p[0], out[i], len) == -1) {
			snprintf(err, errlen, "cannot read /proc/net/%s",
			    names[i]);
			ok = 0;
		} else
			out[i][len] = '\0';
	}
	close(p[0]);
	reap(pid);
	if (ok)
		return 0;
	for (i = 0; i < n; i++) {
		free(out[i]);
		out[i] = NULL;
	}
	return -1;
}
