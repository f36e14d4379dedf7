/*
 * Bridges between loopback TCP and Unix sockets: the only links between the
 * containers of a run, none of which has a network (docs/ARCHITECTURE.md).
 * A bridge listens on one endpoint and, for each
 * connection it accepts, connects to the other and copies bytes both ways
 * until both directions have ended. Pure C, no Lua.
 *
 * An endpoint is "tcp:HOST:PORT" (HOST numeric, e.g. 127.0.0.1) or
 * "unix:PATH". Listening Unix sockets are made mode 0666 (see http_listen);
 * who may connect is decided by where their directory is mounted. The
 * listening side may also be "fd:N": a TCP or Unix stream socket some
 * parent bound and handed down as fd N (made to listen if it was not, and
 * close-on-exec), e.g. the pool's children (net/pool.h).
 *
 * Ownership: struct bridge is the caller's; bridge_open fills it and
 * bridge_close releases its socket. Connection threads own their two fds.
 */
#ifndef LEAKBENCH_NET_BRIDGE_H
#define LEAKBENCH_NET_BRIDGE_H

#include <stddef.h>

#define BRIDGE_MAX_CONNS 64 /* concurrent connections per bridge */

struct bridge {
	char listen[256];  /* as given */
	char connect[256]; /* as given */
	char bound[300];   /* the listener's address, port filled; for
			      fd:N, "fd:N (ADDRESS)" */
	int lfd;	   /* -1 when closed */
	int max_conns;	   /* 0: BRIDGE_MAX_CONNS */
	int active;	   /* connections being served */
	long refused;	   /* connections over max_conns */
};

/*
 * Parses "LISTEN=CONNECT" and binds the listener (or takes fd:N's). 0, or
 * -1 with a message in err ("cannot listen on 'tcp:127.0.0.1:80':
 * permission denied", "cannot listen on 'fd:3': expected an open stream
 * socket's fd").
 */
int bridge_open(struct bridge *b, const char *spec, char *err, size_t errlen);

/*
 * Connects to an endpoint ("tcp:HOST:PORT" or "unix:PATH"). The socket or -1
 * with errno set (EINVAL for a malformed endpoint).
 */
int bridge_dial(const char *endpoint);

/*
 * Serves the bridge forever, one detached thread per connection (at most
 * max_conns at once; more are closed at once and counted). Returns only
 * when accept fails for good (-1, errno set).
 */
int bridge_serve(struct bridge *b);

/*
 * The connections b serves now and those it refused so far, read under
 * the lock that bridge_serve's threads count them under.
 */
void bridge_counts(const struct bridge *b, int *active, long *refused);

/* Copies between two connected sockets until both directions end. */
void bridge_pump(int a, int b);

void bridge_close(struct bridge *b);

#endif
