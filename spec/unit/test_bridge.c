/*
 * The loopback <-> Unix socket bridges of lb-net (src/net/bridge.c), over
 * real sockets in a temporary directory and on 127.0.0.1: both directions,
 * half-closes passed on, a megabyte each way, a peer that answers more than
 * it is sent while the other side is still sending (the bridge must never
 * wait on one direction while the other is full), the connection cap, and
 * malformed specs refused with their message. Then listeners handed down
 * by number (fd:N): a bound TCP socket made to listen, a listening Unix
 * one, each named in b.bound, and the wrong kinds refused.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "common/http.h"
#include "net/bridge.h"
#include "tap.h"

static char dir[] = "/tmp/lb-bridge-test.XXXXXX";

/* An echo server on a Unix socket: uppercases nothing, echoes until EOF,
 * then closes its write side (the client must see that EOF). */
struct echo {
	int lfd;
	int conns;
};

static void *
echo_thread(void *p)
{
	struct echo *e = p;
	char buf[65536];
	ssize_t n;
	int fd;

	for (;;) {
		fd = accept(e->lfd, NULL, NULL);
		if (fd < 0)
			return NULL;
		e->conns++;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			if (http_write_all(fd, buf, (size_t)n) < 0)
				break;
		shutdown(fd, SHUT_WR);
		close(fd);
	}
}

static void *
serve(void *p)
{
	bridge_serve(p);
	return NULL;
}

/* Writes LEN bytes to FD in a thread while reading them back. */
struct writer {
	int fd;
	const char *data;
	size_t len;
};

static void *
write_all_then_close(void *p)
{
	struct writer *w = p;

	http_write_all(w->fd, w->data, w->len);
	shutdown(w->fd, SHUT_WR);
	return NULL;
}

static size_t
read_all(int fd, char *out, size_t cap)
{
	size_t got = 0;
	ssize_t n;

	while (got < cap && (n = read(fd, out + got, cap - got)) > 0)
		got += (size_t)n;
	return got;
}

/* The connections B serves now. */
static int
active(const struct bridge *b)
{
	int n;
	long refused;

	bridge_counts(b, &n, &refused);
	return n;
}

/* Waits, at most 10 s, until B holds no connection; what it still holds. */
static int
idle(struct bridge *b)
{
	int i;

	for (i = 0; i < 1000 && active(b) > 0; i++)
		poll(NULL, 0, 10);
	return active(b);
}

/* Ends the server thread T, blocked in accept on LFD, and waits for it:
 * nothing of the test runs on once main returns. */
static void
stop(int lfd, pthread_t t)
{
	shutdown(lfd, SHUT_RDWR);
	pthread_join(t, NULL);
	close(lfd);
}

/*
 * A server that reads one chunk, then answers AMP_OUT bytes before it
 * reads again, then reads to EOF: like an HTTP server that streams its
 * answer while the upload is still coming. Its client sends AMP_IN bytes
 * and reads at the same time, so a direct connection never stalls; a
 * bridge that blocks writing one direction while the other fills does,
 * for good (each side waits for the other to read).
 */
#define AMP_IN	(4 << 20)
#define AMP_OUT (4 << 20)

struct amp {
	int lfd;
	size_t got;
};

static void *
amp_thread(void *p)
{
	struct amp *a = p;
	char buf[65536];
	size_t sent = 0, n;
	ssize_t r;
	int fd = accept(a->lfd, NULL, NULL);

	if (fd < 0)
		return NULL;
	if ((r = read(fd, buf, sizeof(buf))) > 0)
		a->got += (size_t)r;
	memset(buf, 'a', sizeof(buf));
	while (sent < AMP_OUT) {
		n = AMP_OUT - sent < sizeof(buf) ? AMP_OUT - sent : sizeof(buf);
		if (http_write_all(fd, buf, n) < 0)
			break;
		sent += n;
	}
	shutdown(fd, SHUT_WR);
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		a->got += (size_t)r;
	close(fd);
	return NULL;
}

/* Reads FD to EOF; stops, returning what it had, after 10 s without a
 * byte (a stuck bridge: the test says so instead of hanging CI). */
static size_t
drain(int fd, int *stuck)
{
	char buf[65536];
	size_t got = 0;
	ssize_t n;

	*stuck = 0;
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };

		if (poll(&p, 1, 10000) != 1) {
			*stuck = 1;
			return got;
		}
		if ((n = read(fd, buf, sizeof(buf))) <= 0)
			return got;
		got += (size_t)n;
	}
}

/* The answering server behind a bridge, over SERVER_KIND ("tcp" or "unix")
 * from a bridge that listens on the other kind. */
static void
bridge_under_two_way_load(const char *server_kind)
{
	/* Static: the bridge's threads outlive this function if it is stuck. */
	static struct amp amps[2];
	static struct bridge bridges[2];
	static int runs;
	struct amp *a = &amps[runs];
	struct bridge *b = &bridges[runs++];
	char err[512] = "", spec[700], sock[300], lsn[300];
	struct writer w;
	pthread_t at, bt, wt;
	char *up;
	size_t got;
	int c, stuck, port = 0;

	if (strcmp(server_kind, "unix") == 0) {
		snprintf(sock, sizeof(sock), "unix:%s/amp.sock", dir);
		a->lfd = http_listen(sock, NULL, err, sizeof(err));
		snprintf(lsn, sizeof(lsn), "tcp:127.0.0.1:0");
	} else {
		a->lfd = http_listen("127.0.0.1:0", &port, err, sizeof(err));
		snprintf(sock, sizeof(sock), "tcp:127.0.0.1:%d", port);
		snprintf(lsn, sizeof(lsn), "unix:%s/amp-in.sock", dir);
	}
	snprintf(spec, sizeof(spec), "%s=%s", lsn, sock);
	if (a->lfd < 0 || bridge_open(b, spec, err, sizeof(err)) < 0) {
		ok(0, "an answering server and its bridge (%s): %s", spec, err);
		return;
	}
	pthread_create(&at, NULL, amp_thread, a);
	pthread_create(&bt, NULL, serve, b);
	up = malloc(AMP_IN);
	memset(up, 'u', AMP_IN);
	c = bridge_dial(b->bound);
	w.fd = c;
	w.data = up;
	w.len = AMP_IN;
	pthread_create(&wt, NULL, write_all_then_close, &w);
	got = drain(c, &stuck);
	ok(!stuck,
	    "%s: a server answering 4 MB while 4 MB still come in: "
	    "the bridge keeps both directions moving",
	    spec);
	is_int((long)got, AMP_OUT, "the whole answer came through");
	if (stuck)
		return; /* the threads are stuck for good: leave them */
	pthread_join(wt, NULL);
	pthread_join(at, NULL);
	is_int((long)a->got, AMP_IN, "and the whole upload reached the server");
	close(c);
	is_int(idle(b), 0, "and its thread ended");
	stop(b->lfd, bt);
	close(a->lfd);
	free(up);
}

/* Sends "ping" through DIALED and expects it echoed back. */
static int
echoes(const char *dialed)
{
	char back[8] = "";
	int c = bridge_dial(dialed), ok = 0;

	if (c < 0)
		return 0;
	if (http_write_all(c, "ping", 4) == 0 && shutdown(c, SHUT_WR) == 0)
		ok = read_all(c, back, sizeof(back)) == 4 &&
		    memcmp(back, "ping", 4) == 0;
	close(c);
	return ok;
}

/*
 * fd:N listeners, as the pool's children get them: a TCP socket bound
 * but not listening, a listening Unix one; then a UDP socket, a closed fd
 * and a connecting side of fd:N, refused.
 */
static void
test_fd_listen(const char *echo_sock)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct bridge b, b2, bad;
	char err[512] = "", spec[600], want[400], dialed[400];
	pthread_t t, t2;
	socklen_t sl = sizeof(sa);
	int tfd, ufd, xfd;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	tfd = socket(AF_INET, SOCK_STREAM, 0);
	bind(tfd, (struct sockaddr *)&sa, sizeof(sa));
	getsockname(tfd, (struct sockaddr *)&sa, &sl);
	snprintf(spec, sizeof(spec), "fd:%d=%s", tfd, echo_sock);
	ok(bridge_open(&b, spec, err, sizeof(err)) == 0,
	    "fd: a bound TCP socket opens: %s", err);
	snprintf(want, sizeof(want), "fd:%d (127.0.0.1:%d)", tfd,
	    ntohs(sa.sin_port));
	is_str(b.bound, want, "fd: bound names the fd and its address");
	is_int(b.lfd, tfd, "fd: the listener is that socket");
	pthread_create(&t, NULL, serve, &b);
	snprintf(dialed, sizeof(dialed), "tcp:127.0.0.1:%d",
	    ntohs(sa.sin_port));
	ok(echoes(dialed), "fd: served, made to listen");

	snprintf(un.sun_path, sizeof(un.sun_path), "%s/fd.sock", dir);
	xfd = socket(AF_UNIX, SOCK_STREAM, 0);
	bind(xfd, (struct sockaddr *)&un, sizeof(un));
	listen(xfd, 8);
	snprintf(spec, sizeof(spec), "fd:%d=%s", xfd, echo_sock);
	ok(bridge_open(&b2, spec, err, sizeof(err)) == 0,
	    "fd: a listening unix socket opens: %s", err);
	snprintf(want, sizeof(want), "fd:%d (unix:%s)", xfd, un.sun_path);
	is_str(b2.bound, want, "fd: a unix one named by its path");
	pthread_create(&t2, NULL, serve, &b2);
	snprintf(dialed, sizeof(dialed), "unix:%s", un.sun_path);
	ok(echoes(dialed), "fd: served on the unix socket");

	ufd = socket(AF_INET, SOCK_DGRAM, 0);
	snprintf(spec, sizeof(spec), "fd:%d=%s", ufd, echo_sock);
	snprintf(want, sizeof(want),
	    "cannot listen on 'fd:%d': expected an open stream socket's fd",
	    ufd);
	ok(bridge_open(&bad, spec, err, sizeof(err)) < 0, "fd: UDP refused");
	is_str(err, want, "fd: UDP, message");
	close(ufd);
	ok(bridge_open(&bad, spec, err, sizeof(err)) < 0, "fd: closed refused");
	is_str(err, want, "fd: closed, message");
	ok(bridge_open(&bad, "fd:x=unix:/x", err, sizeof(err)) < 0,
	    "fd: not a number, refused");
	is_str(err,
	    "cannot listen on 'fd:x': expected an open stream socket's fd",
	    "fd: not a number, message");
	ok(bridge_open(&bad, "tcp:127.0.0.1:0=fd:3", err, sizeof(err)) < 0,
	    "fd: never a connecting side");
	is_str(err,
	    "cannot parse bridge 'tcp:127.0.0.1:0=fd:3': endpoints are "
	    "tcp:HOST:PORT or unix:PATH (LISTEN also fd:N)",
	    "fd: connecting side, message");
	stop(b.lfd, t);
	stop(b2.lfd, t2);
}

int
main(void)
{
	char err[512] = "", spec[600], sock[300], addr[64];
	struct bridge b, bad;
	struct echo e = { -1, 0 };
	pthread_t et, bt, wt;
	struct writer w;
	char *big, *back;
	size_t len = 1 << 20, got, i;
	int c, port, fds[BRIDGE_MAX_CONNS + 4], n;

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(sock, sizeof(sock), "unix:%s/echo.sock", dir);
	e.lfd = http_listen(sock, NULL, err, sizeof(err));
	ok(e.lfd >= 0, "an echo server listens on a unix socket: %s", err);
	pthread_create(&et, NULL, echo_thread, &e);

	snprintf(spec, sizeof(spec), "tcp:127.0.0.1:0=%s", sock);
	ok(bridge_open(&b, spec, err, sizeof(err)) == 0, "a bridge opens: %s",
	    err);
	ok(strncmp(b.bound, "tcp:127.0.0.1:", 14) == 0 &&
		atoi(b.bound + 14) > 0,
	    "it says where it is bound: %s", b.bound);
	port = atoi(b.bound + 14);
	pthread_create(&bt, NULL, serve, &b);

	/* A megabyte through, and back, with the client's EOF passed on. */
	big = malloc(len);
	back = malloc(len + 1);
	for (i = 0; i < len; i++)
		big[i] = (char)(i * 7 + (i >> 9));
	snprintf(addr, sizeof(addr), "tcp:127.0.0.1:%d", port);
	c = bridge_dial(addr);
	ok(c >= 0, "a client connects to the bridge");
	w.fd = c;
	w.data = big;
	w.len = len;
	pthread_create(&wt, NULL, write_all_then_close, &w);
	got = read_all(c, back, len + 1);
	pthread_join(wt, NULL);
	is_int((long)got, (long)len, "the echo came back whole, then EOF");
	ok(memcmp(big, back, len) == 0, "byte for byte");
	close(c);
	is_int(idle(&b), 0, "the connection's thread ends once both sides end");

	/* The cap: BRIDGE_MAX_CONNS held open; one more is closed at once. */
	for (n = 0; n < BRIDGE_MAX_CONNS; n++)
		fds[n] = bridge_dial(addr);
	/* Taken once the bridge has accepted them all (at most 10 s). */
	for (i = 0; i < 1000 && active(&b) < BRIDGE_MAX_CONNS; i++)
		poll(NULL, 0, 10);
	is_int(active(&b), BRIDGE_MAX_CONNS, "%d connections held open",
	    BRIDGE_MAX_CONNS);
	c = bridge_dial(addr);
	{
		struct pollfd p = { c, POLLIN, 0 };
		char x;

		ok(poll(&p, 1, 5000) == 1 && read(c, &x, 1) == 0,
		    "a connection over the cap of %d is closed at once",
		    BRIDGE_MAX_CONNS);
	}
	{
		int held;
		long refused;

		bridge_counts(&b, &held, &refused);
		ok(refused >= 1, "and counted (%ld)", refused);
	}
	close(c);
	for (n = 0; n < BRIDGE_MAX_CONNS; n++)
		close(fds[n]);
	is_int(idle(&b), 0,
	    "every connection's thread ends once its client "
	    "has closed");

	bridge_under_two_way_load("unix");
	bridge_under_two_way_load("tcp");

	/* Malformed specs. */
	ok(bridge_open(&bad, "tcp:127.0.0.1:0", err, sizeof(err)) < 0 &&
		strcmp(err,
		    "cannot parse bridge 'tcp:127.0.0.1:0': expected "
		    "LISTEN=CONNECT") == 0,
	    "no '=': %s", err);
	ok(bridge_open(&bad, "udp:1=tcp:127.0.0.1:9", err, sizeof(err)) < 0 &&
		strcmp(err,
		    "cannot parse bridge 'udp:1=tcp:127.0.0.1:9': "
		    "endpoints are tcp:HOST:PORT or unix:PATH (LISTEN "
		    "also fd:N)") == 0,
	    "an unknown kind: %s", err);
	errno = 0;
	ok(bridge_dial("tcp:localhost:80") < 0 && errno == EINVAL,
	    "a host name is refused (numeric only, no DNS)");
	ok(bridge_dial("unix:") < 0 && errno == EINVAL, "an empty path too");

	test_fd_listen(sock);

	stop(b.lfd, bt);
	stop(e.lfd, et);
	free(big);
	free(back);
	snprintf(err, sizeof(err), "rm -rf %s", dir);
	(void)system(err);
	return tap_done();
}
