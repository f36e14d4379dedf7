/* A run's own network namespace, kept at a path (netns.h). */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

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
