/*
 * Loopback TCP <-> Unix socket bridges (see bridge.h). Each accepted
 * connection gets a thread that dials the other side and pumps bytes with
 * poll(2): a direction ends at EOF, which is passed on as a half-close
 * (shutdown SHUT_WR), so request/response protocols that close one way
 * first keep working. Nothing is parsed and nothing is logged per byte.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "common/http.h"
#include "common/sock.h"
#include "common/usage.h"
#include "net/bridge.h"

#define PUMP_BUF (64 * 1024)

/* "tcp:HOST:PORT" -> "HOST:PORT" for http_listen; "unix:PATH" stays. */
static const char *
listen_form(const char *endpoint)
{
	if (strncmp(endpoint, "tcp:", 4) == 0)
		return endpoint + 4;
	if (strncmp(endpoint, "unix:", 5) == 0)
		return endpoint;
	return NULL;
}

/*
 * Takes the listener "fd:N" (b->listen) handed down: an open stream
 * socket, made to listen, named in b->bound as "fd:N (ADDRESS)". 0, or -1
 * with a message in err.
 */
static int
open_fd(struct bridge *b, char *err, size_t errlen)
{
	unsigned long long n;
	char name[200];

	if (usage_count(b->listen + 3, 0, 65535, &n) < 0 ||
	    sock_adopt((int)n, SOCK_STREAM) < 0) {
		snprintf(err, errlen,
		    "cannot listen on '%s': expected an open stream "
		    "socket's fd",
		    b->listen);
		return -1;
	}
	b->lfd = (int)n;
	sock_name(b->lfd, name, sizeof(name));
	snprintf(b->bound, sizeof(b->bound), "fd:%d (%.280s)", b->lfd, name);
	return 0;
}

int
bridge_open(struct bridge *b, const char *spec, char *err, size_t errlen)
{
	const char *eq = strchr(spec, '='), *addr;
	size_t ll;
	int port = 0;

	memset(b, 0, sizeof(*b));
	b->lfd = -1;
	if (eq == NULL || (ll = (size_t)(eq - spec)) == 0 ||
	    ll >= sizeof(b->listen) || strlen(eq + 1) >= sizeof(b->connect)) {
		snprintf(err, errlen,
		    "cannot parse bridge '%s': expected "
		    "LISTEN=CONNECT",
		    spec);
		return -1;
	}
	memcpy(b->listen, spec, ll);
	b->listen[ll] = '\0';
	strcpy(b->connect, eq + 1);
	addr = listen_form(b->listen);
	if ((addr == NULL && strncmp(b->listen, "fd:", 3) != 0) ||
	    listen_form(b->connect) == NULL) {
		snprintf(err, errlen,
		    "cannot parse bridge '%s': endpoints are "
		    "tcp:HOST:PORT or unix:PATH (LISTEN also fd:N)",
		    spec);
		return -1;
	}
	if (addr == NULL)
		return open_fd(b, err, errlen);
	b->lfd = http_listen(addr, &port, err, errlen);
	if (b->lfd < 0)
		return -1;
	if (strncmp(b->listen, "tcp:", 4) == 0) {
		memcpy(b->bound, "tcp:", 4);
		http_listen_name(addr, port, b->bound + 4,
		    sizeof(b->bound) - 4);
	} else {
		snprintf(b->bound, sizeof(b->bound), "%s", b->listen);
	}
	return 0;
}

int
bridge_dial(const char *endpoint)
{
	int fd, on = 1;

	if (strncmp(endpoint, "unix:", 5) == 0) {
		struct sockaddr_un sun;

		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		if (strlen(endpoint + 5) >= sizeof(sun.sun_path) ||
		    endpoint[5] == '\0') {
			errno = EINVAL;
			return -1;
		}
		strcpy(sun.sun_path, endpoint + 5);
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
			int e = errno;

			close(fd);
			errno = e;
			return -1;
		}
		return fd;
	}
	if (strncmp(endpoint, "tcp:", 4) == 0) {
		char host[256];
		const char *colon = strrchr(endpoint + 4, ':');
		struct sockaddr_in sin;
		size_t hl;
		long port;
		char *end;

		if (colon == NULL ||
		    (hl = (size_t)(colon - endpoint - 4)) == 0 ||
		    hl >= sizeof(host)) {
			errno = EINVAL;
			return -1;
		}
		memcpy(host, endpoint + 4, hl);
		host[hl] = '\0';
		port = strtol(colon + 1, &end, 10);
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		if (*end != '\0' || port < 1 || port > 65535 ||
		    inet_pton(AF_INET, host, &sin.sin_addr) != 1) {
			errno = EINVAL;
			return -1;
		}
		sin.sin_port = htons((unsigned short)port);
		if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
			return -1;
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
		if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
			int e = errno;

			close(fd);
			errno = e;
			return -1;
		}
		return fd;
	}
	errno = EINVAL;
	return -1;
}

/*
 * One direction's state: bytes read from `from` not yet written to `to`.
 * `eof` once `from` ended; the half-close is passed on when the buffer is
 * empty.
 */
struct dir {
	int from, to;
	char *buf;
	size_t off, len;
	int eof, done;
};

/* Moves what it can without blocking; -1 on a hard error. */
static int
step(struct dir *d, short rev_from, short rev_to)
{
	ssize_t n;

	if (!d->eof && d->len == 0 &&
	    (rev_from & (POLLIN | POLLHUP | POLLERR))) {
		n = read(d->from, d->buf, PUMP_BUF);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			return 0;
		if (n <= 0) {
			d->eof = 1;
		} else {
			d->off = 0;
			d->len = (size_t)n;
		}
	}
	if (d->len > 0 && (rev_to & POLLOUT)) {
		n = write(d->to, d->buf + d->off, d->len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			return 0;
		if (n < 0)
			return -1;
		d->off += (size_t)n;
		d->len -= (size_t)n;
	}
	if (d->eof && d->len == 0 && !d->done) {
		(void)shutdown(d->to, SHUT_WR);
		d->done = 1;
	}
	return 0;
}

void
bridge_pump(int a, int b)
{
	struct dir ab = { a, b, NULL, 0, 0, 0, 0 };
	struct dir ba = { b, a, NULL, 0, 0, 0, 0 };
	struct pollfd p[2];

	ab.buf = malloc(PUMP_BUF);
	ba.buf = malloc(PUMP_BUF);
	if (ab.buf == NULL || ba.buf == NULL)
		goto out;
	while (!(ab.done && ba.done)) {
		p[0].fd = a;
		p[1].fd = b;
		p[0].events = p[1].events = 0;
		if (!ab.eof && ab.len == 0)
			p[0].events |= POLLIN;
		if (!ba.eof && ba.len == 0)
			p[1].events |= POLLIN;
		if (ab.len > 0)
			p[1].events |= POLLOUT;
		if (ba.len > 0)
			p[0].events |= POLLOUT;
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		/* A peer that reset: nothing more can pass either way. */
		if (((p[0].revents & POLLERR) && !(p[0].revents & POLLIN)) ||
		    ((p[1].revents & POLLERR) && !(p[1].revents & POLLIN)))
			break;
		if (step(&ab, p[0].revents, p[1].revents) < 0 ||
		    step(&ba, p[1].revents, p[0].revents) < 0)
			break;
	}
out:
	free(ab.buf);
	free(ba.buf);
}

struct conn_arg {
	struct bridge *b;
	int fd;
};

static pthread_mutex_t count_mu = PTHREAD_MUTEX_INITIALIZER;

static void *
conn_thread(void *p)
{
	struct conn_arg a = *(struct conn_arg *)p;
	int up;

	free(p);
	up = bridge_dial(a.b->connect);
	if (up < 0) {
		fprintf(stderr, "lb-net: cannot connect to '%s': %s\n",
		    a.b->connect, strerror(errno));
	} else {
		bridge_pump(a.fd, up);
		close(up);
	}
	close(a.fd);
	pthread_mutex_lock(&count_mu);
	a.b->active--;
	pthread_mutex_unlock(&count_mu);
	return NULL;
}

void
bridge_counts(const struct bridge *b, int *active, long *refused)
{
	pthread_mutex_lock(&count_mu);
	*active = b->active;
	*refused = b->refused;
	pthread_mutex_unlock(&count_mu);
}

int
bridge_serve(struct bridge *b)
{
	pthread_attr_t attr;
	pthread_t tid;
	struct conn_arg *a;
	int fd, max = b->max_conns > 0 ? b->max_conns : BRIDGE_MAX_CONNS,
		on = 1;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		fd = accept4(b->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED ||
			    errno == EPROTO)
				continue;
			if (errno == EMFILE || errno == ENFILE ||
			    errno == ENOBUFS || errno == ENOMEM) {
				poll(NULL, 0, 20);
				continue;
			}
			pthread_attr_destroy(&attr);
			return -1;
		}
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
		pthread_mutex_lock(&count_mu);
		if (b->active >= max) {
			b->refused++;
			pthread_mutex_unlock(&count_mu);
			close(fd);
			continue;
		}
		b->active++;
		pthread_mutex_unlock(&count_mu);
		a = malloc(sizeof(*a));
		if (a != NULL) {
			a->b = b;
			a->fd = fd;
		}
		if (a == NULL ||
		    pthread_create(&tid, &attr, conn_thread, a) != 0) {
			free(a);
			close(fd);
			pthread_mutex_lock(&count_mu);
			b->active--;
			pthread_mutex_unlock(&count_mu);
			poll(NULL, 0, 20);
		}
	}
}

void
bridge_close(struct bridge *b)
{
	if (b->lfd >= 0)
		close(b->lfd);
	b->lfd = -1;
}
