/*
 * Fuzzes lb-net's pump (src/net/bridge.c) over real socket pairs: the input
 * is cut into writes on either side, with a half-close of each side at a
 * point the input picks. Whatever the pattern, each side must receive
 * exactly what the other sent, then EOF, and bridge_pump must return.
 * Also feeds the input to bridge_dial as an endpoint, which must refuse
 * what it cannot parse without touching the network (only unix: paths
 * under a directory that does not exist, and 127.0.0.1 with a port the
 * input names, which nothing listens on, are ever dialled).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/http.h"
#include "net/bridge.h"

struct side {
	int fd;
	const uint8_t *data;
	size_t len;
	uint8_t *got;
	size_t ngot;
};

static void *
writer(void *p)
{
	struct side *s = p;
	size_t off = 0;

	while (off < s->len) {
		size_t n = 1 + s->data[off] % 97;

		if (n > s->len - off)
			n = s->len - off;
		if (http_write_all(s->fd, s->data + off, n) < 0)
			break;
		off += n;
	}
	shutdown(s->fd, SHUT_WR);
	return NULL;
}

static void *
reader(void *p)
{
	struct side *s = p;
	ssize_t n;

	s->got = malloc(s->len + 1);
	while ((n = read(s->fd, s->got + s->ngot, s->len + 1 - s->ngot)) > 0)
		s->ngot += (size_t)n;
	return NULL;
}

struct pump_arg {
	int a, b;
};

static void *
pump(void *p)
{
	struct pump_arg *a = p;

	bridge_pump(a->a, a->b);
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int l[2], r[2];
	size_t cut = size ? data[0] % (size + 1) : 0;
	struct side lw, rw, lr, rr;
	struct pump_arg pa;
	pthread_t t[5];
	char ep[300];

	/* client l[0] <-> pump(l[1], r[1]) <-> r[0] server */
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, l) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, r) < 0)
		abort();
	memset(&lw, 0, sizeof(lw));
	memset(&rw, 0, sizeof(rw));
	lw.fd = l[0];
	lw.data = data;
	lw.len = cut;
	rw.fd = r[0];
	rw.data = data + cut;
	rw.len = size - cut;
	lr = rw;
	lr.fd = l[0];
	lr.got = NULL;
	lr.ngot = 0; /* l hears r */
	rr = lw;
	rr.fd = r[0];
	rr.got = NULL;
	rr.ngot = 0; /* r hears l */
	pa.a = l[1];
	pa.b = r[1];
	pthread_create(&t[0], NULL, pump, &pa);
	pthread_create(&t[1], NULL, writer, &lw);
	pthread_create(&t[2], NULL, writer, &rw);
	pthread_create(&t[3], NULL, reader, &lr);
	pthread_create(&t[4], NULL, reader, &rr);
	for (int i = 0; i < 5; i++)
		pthread_join(t[i], NULL);
	if (lr.ngot != rw.len || (rw.len && memcmp(lr.got, rw.data, rw.len)))
		abort();
	if (rr.ngot != lw.len || (lw.len && memcmp(rr.got, lw.data, lw.len)))
		abort();
	free(lr.got);
	free(rr.got);
	close(l[0]);
	close(l[1]);
	close(r[0]);
	close(r[1]);

	/* Endpoint parsing: never a name lookup, never a crash. */
	if (size < sizeof(ep) - 40) {
		int fd;

		if (size > 5 && memcmp(data, "unix:", 5) == 0) {
			snprintf(ep, sizeof(ep),
			    "unix:/nonexistent-lb-fuzz/%.*s", (int)(size - 5),
			    (const char *)data + 5);
		} else {
			memcpy(ep, data, size);
			ep[size] = '\0';
			if (strncmp(ep, "tcp:", 4) == 0 &&
			    strncmp(ep, "tcp:127.0.0.1:", 14) != 0)
				ep[4] = 'x'; /* only loopback may be dialled */
		}
		if ((fd = bridge_dial(ep)) >= 0)
			close(fd);
	}
	return 0;
}
