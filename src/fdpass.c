/*
 * HTTP over a Unix socket with descriptors along (fdpass.h): the request
 * made whole in memory, its first bytes sent with the SCM_RIGHTS message,
 * the rest after; every wait a poll bounded by one deadline; the answer
 * gathered to end of stream, then parsed.
 */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "fdpass.h"

/* Room for the head of an answer on top of its body. */
#define HEAD_MAX (64u << 10)

/* The monotonic clock in milliseconds. */
static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Waits for EVENTS on FD until DEADLINE (now_ms()). 1 when ready, 0 on
 * timeout, -1 on error (errno set).
 */
static int
wait_for(int fd, short events, long long deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	long long left;
	int r;

	for (;;) {
		left = deadline - now_ms();
		if (left <= 0)
			return 0;
		r = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* A Unix stream socket connected to PATH, close-on-exec. It, or -1. */
static int
dial(const char *path, long timeout_ms)
{
	struct sockaddr_un sun;
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	int fd, e;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (*path == '\0' || strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	/* a full backlog makes connect wait: no longer than the request */
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		e = errno;
		close(fd);
		errno = e == EAGAIN || e == EINPROGRESS ? ETIMEDOUT : e;
		return -1;
	}
	return fd;
}

/*
 * Sends MSG (LEN bytes, at least 1) on FD, FDS[0..NFDS-1] with its first
 * bytes, before DEADLINE. 0, or -1 with errno (ETIMEDOUT past it).
 */
static int
send_all(int fd, const char *msg, size_t len, const int *fds, int nfds,
    long long deadline)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(FDPASS_MAX * sizeof(int))];
	} u;
	struct iovec iov;
	struct msghdr m;
	struct cmsghdr *h;
	size_t off = 0;
	ssize_t n;
	int r;

	while (off < len) {
		memset(&m, 0, sizeof(m));
		iov.iov_base = (void *)(msg + off);
		iov.iov_len = len - off;
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		if (off == 0 && nfds > 0) {
			memset(&u, 0, sizeof(u));
			m.msg_control = u.b;
			m.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
			h = CMSG_FIRSTHDR(&m);
			h->cmsg_level = SOL_SOCKET;
			h->cmsg_type = SCM_RIGHTS;
			h->cmsg_len = CMSG_LEN(nfds * sizeof(int));
			memcpy(CMSG_DATA(h), fds, nfds * sizeof(int));
		}
		n = sendmsg(fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -1;
		if ((r = wait_for(fd, POLLOUT, deadline)) <= 0) {
			if (r == 0)
				errno = ETIMEDOUT;
			return -1;
		}
	}
	return 0;
}

/*
 * The answer on FD to end of stream, before DEADLINE, into *out (malloc'd,
 * NUL-terminated; *len bytes). 0, -1 with errno (ETIMEDOUT past the
 * deadline), or -2 when it passes UHTTP_MAX and its head's room.
 */
static int
read_all(int fd, long long deadline, char **out, size_t *len)
{
	size_t cap = 4096, max = UHTTP_MAX + HEAD_MAX;
	char *buf = malloc(cap), *p;
	ssize_t n;
	int r;

	*len = 0;
	while (buf != NULL) {
		if (*len + 1 == cap) {
			if (cap > max) {
				free(buf);
				return -2;
			}
			if ((p = realloc(buf, cap * 2)) == NULL)
				break;
			buf = p;
			cap *= 2;
		}
		n = recv(fd, buf + *len, cap - 1 - *len, MSG_DONTWAIT);
		if (n == 0) {
			buf[*len] = '\0';
			*out = buf;
			return 0;
		}
		if (n > 0) {
			*len += (size_t)n;
			continue;
		}
		if (errno != EAGAIN && errno != EINTR)
			goto fail;
		if ((r = wait_for(fd, POLLIN, deadline)) <= 0) {
			if (r == 0)
				errno = ETIMEDOUT;
			goto fail;
		}
	}
	errno = ENOMEM;
fail:
	r = errno;
	free(buf);
	errno = r;
	return -1;
}

/*
 * A chunked body, B[0..n), decoded in place: its length, or (size_t)-1
 * when it is not whole (a size that is not hex, a chunk past the end, no
 * last chunk). Trailers after the last chunk are ignored.
 */
static size_t
unchunk(char *b, size_t n)
{
	size_t at = 0, out = 0, sz;
	char *stop;

	for (;;) {
		char *eol = memmem(b + at, n - at, "\r\n", 2);

		if (eol == NULL || !isxdigit((unsigned char)b[at]))
			return (size_t)-1;
		errno = 0;
		sz = strtoul(b + at, &stop, 16);
		if (errno != 0 || (stop != eol && *stop != ';'))
			return (size_t)-1;
		at = (size_t)(eol + 2 - b);
		if (sz == 0)
			return out;
		if (sz > n - at || n - at - sz < 2 ||
		    memcmp(b + at + sz, "\r\n", 2) != 0)
			return (size_t)-1;
		memmove(b + out, b + at, sz);
		out += sz;
		at += sz + 2;
	}
}

/*
 * The status and body of the answer BUF (LEN bytes, NUL-terminated) into
 * *resp: framed by its Content-Length, chunked, or to end of stream. 0,
 * or -1 with what is wrong with it in WHY.
 */
static int
parse_answer(char *buf, size_t len, struct uhttp_resp *resp, const char **why)
{
	char *end = strstr(buf, "\r\n\r\n"), *line, *stop;
	size_t body_at, clen = 0;
	long status;
	int have_len = 0, chunked = 0;

	*why = "the answer is not HTTP";
	if (end == NULL || strncmp(buf, "HTTP/1.", 7) != 0 || buf[8] != ' ' ||
	    (status = strtol(buf + 9, &stop, 10)) < 100 || status > 999 ||
	    stop != buf + 12)
		return -1;
	body_at = (size_t)(end + 4 - buf);
	*end = '\0';
	for (line = strstr(buf, "\r\n"); line != NULL;
	     line = strstr(line, "\r\n")) {
		line += 2;
		if (strncasecmp(line, "Transfer-Encoding:", 18) == 0)
			chunked = strncasecmp(line + 18 +
					  strspn(line + 18, " \t"),
				      "chunked", 7) == 0;
		if (strncasecmp(line, "Content-Length:", 15) == 0) {
			clen = strtoul(line + 15, &stop, 10);
			have_len = 1;
		}
	}
	/* chunked over a length (RFC 9112 6.3); neither: to end of stream */
	if (chunked) {
		clen = unchunk(buf + body_at, len - body_at);
		if (clen == (size_t)-1) {
			*why = "the answer's chunks were cut short";
			return -1;
		}
	} else if (!have_len) {
		clen = len - body_at;
	} else if (clen > len - body_at) {
		*why = "the answer was cut short";
		return -1;
	}
	if (clen > UHTTP_MAX) {
		*why = "the answer is too long";
		return -1;
	}
	resp->status = status;
	resp->len = clen;
	resp->body = malloc(clen + 1);
	if (resp->body == NULL) {
		*why = "out of memory";
		return -1;
	}
	memcpy(resp->body, buf + body_at, clen);
	resp->body[clen] = '\0';
	return 0;
}

int
fdpass_request(const char *sock, const char *method, const char *path,
    const char *body, size_t len, const int *fds, int nfds, long timeout_ms,
    struct uhttp_resp *resp, char *err, size_t errlen)
{
	long long deadline = now_ms() + timeout_ms;
	char *msg = NULL, *more, *answer = NULL, why[128];
	const char *bad;
	size_t alen;
	int fd = -1, n, ret = -1, r;

	memset(resp, 0, sizeof(*resp));
	if (nfds < 0 || nfds > FDPASS_MAX) {
		snprintf(err, errlen,
		    "cannot request '%s': at most %d "
		    "descriptors",
		    path, FDPASS_MAX);
		return -1;
	}
	n = asprintf(&msg,
	    "%s %s HTTP/1.1\r\nHost: d\r\nContent-Length: %zu\r\n%s"
	    "Connection: close\r\n\r\n",
	    method, path, len,
	    body != NULL ? "Content-Type: application/json\r\n" : "");
	if (n < 0 || (more = realloc(msg, (size_t)n + len + 1)) == NULL) {
		free(n < 0 ? NULL : msg);
		snprintf(err, errlen, "cannot request '%s': out of memory",
		    path);
		return -1;
	}
	msg = more;
	if (len > 0)
		memcpy(msg + n, body, len);
	if ((fd = dial(sock, timeout_ms)) < 0 ||
	    send_all(fd, msg, (size_t)n + len, fds, nfds, deadline) < 0 ||
	    (r = read_all(fd, deadline, &answer, &alen)) == -1) {
		snprintf(err, errlen, "cannot request '%s' on '%s': %s", path,
		    sock,
		    errno == ETIMEDOUT ?
			"no answer in time" :
			errmsg_strerror(errno, why, sizeof(why)));
		goto out;
	}
	if (r == -2) {
		snprintf(err, errlen,
		    "cannot request '%s': the answer is over %u bytes", path,
		    UHTTP_MAX);
		goto out;
	}
	if (parse_answer(answer, alen, resp, &bad) < 0) {
		snprintf(err, errlen, "cannot request '%s' on '%s': %s", path,
		    sock, bad);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(msg);
	free(answer);
	return ret;
}
