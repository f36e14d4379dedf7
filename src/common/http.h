/*
 * HTTP/1.1 server framing shared by the servers: listening, a thread per
 * connection, reading requests (Content-Length or chunked bodies) with
 * limits and deadlines, and writing responses. Pure C, no Lua.
 *
 * Included by (grep '#include "common/http.h"'): the scripted model
 * (src/model/main.c, src/model/server.h), the recording proxy
 * (src/proxy/main.c, src/proxy/proxy.h, src/proxy/record.h), the egress
 * trap (src/trap/main.c, src/trap/trap.h), lb-net's bridges
 * (src/net/bridge.c, for http_listen), bench/bench_proxy's load
 * generator, and the tests (spec/unit/test_http.c, test_model_server.c,
 * test_proxy.c, test_bridge.c; spec/fuzz/fuzz_http.c, fuzz_bridge.c).
 * leakbench's Lua side does not use it.
 *
 * Ownership: http_read_request fills a struct http_request whose strings and
 * body are owned by it; http_request_free releases them. The connection
 * buffer belongs to struct http_conn and survives between requests so that
 * pipelined bytes are not lost.
 *
 * Errors never crash the server: a malformed or oversized request, a lying
 * Content-Length or a stalled client returns an error code, the handler is
 * not called, the caller answers (400/408/413/431) and closes.
 */
#ifndef LEAKBENCH_HTTP_H
#define LEAKBENCH_HTTP_H

#include <pthread.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/buf.h"

struct http_limits {
	size_t max_header_bytes; /* request line + headers; default 64 KiB */
	size_t max_body;	 /* default 32 MiB */
	int idle_ms;   /* no byte for this long: timeout; default 30 s */
	int header_ms; /* whole head must arrive within; default 30 s */
};

struct http_header {
	char *name;  /* as received */
	char *value; /* leading/trailing blanks trimmed */
};

struct http_request {
	char *method;
	char *target; /* as received: "/v1/messages?beta=true" */
	char *path;   /* target without the query */
	int minor;    /* HTTP/1.<minor> */
	struct http_header *headers;
	size_t nheaders;
	unsigned char *body; /* NUL-terminated for convenience */
	size_t body_len;
	int chunked;	/* body came chunked */
	int keep_alive; /* the client wants the connection kept */
};

/*
 * fd -1 makes http_read_request parse only what is already in buf (and see
 * end of stream after it): fuzzing and table-driven tests use that.
 *
 * A connection that sets fds (lb-net --pool's: the harness hands it
 * sockets with a request) is read with recvmsg: the descriptors passed
 * along the bytes (SCM_RIGHTS, on a Unix socket) are received
 * close-on-exec into fds[0..maxfds-1], in the order sent, and counted in
 * nfds; those past maxfds are closed at once but counted all the same
 * (nfds > maxfds: too many were sent). The caller owns and closes them.
 */
struct http_conn {
	int fd;
	struct buf in; /* bytes read but not yet consumed */
	char peer[64]; /* "addr:port", for logs */
	int *fds;      /* NULL: plain reads, descriptors refused */
	int maxfds;    /* room in fds */
	int nfds;      /* descriptors received so far */
};

enum {
	HTTP_OK = 0,
	HTTP_EOF = -1,		  /* peer closed before a new request began */
	HTTP_BAD = -2,		  /* malformed: answer 400 */
	HTTP_TOO_LARGE = -3,	  /* body over max_body: answer 413 */
	HTTP_HEAD_TOO_LARGE = -4, /* head over max_header_bytes: answer 431 */
	HTTP_TIMEOUT = -5, /* idle or header deadline passed: answer 408 */
	HTTP_IO = -6	   /* read error: just close */
};

/*
 * The status to answer an error code of http_read_request with: 400, 408,
 * 413 or 431; 0 for HTTP_EOF and HTTP_IO (just close).
 */
int http_error_status(int code);

/* Fills defaults into any zero field. */
void http_limits_default(struct http_limits *lim);

/*
 * Reads one request. Returns HTTP_OK and fills *req (free it with
 * http_request_free), or one of the negative codes above with *req empty.
 * A connection idle for idle_ms before the first byte of a new request
 * gives HTTP_EOF (close quietly, no 408). header_ms runs from the first
 * byte of the head. "Expect: 100-continue" is answered with an interim
 * 100 once the head is accepted. The body is always NUL-terminated, also
 * when empty.
 */
int http_read_request(struct http_conn *c, struct http_request *req,
    const struct http_limits *lim);
void http_request_free(struct http_request *req);

/* Whether a comma-separated header value holds TOKEN (any case). */
int http_has_token(const char *value, const char *token);

/* Case-insensitive header lookup; NULL when absent. First match wins. */
const char *http_header(const struct http_request *req, const char *name);

/* Writes all bytes, retrying on EINTR/partial writes. 0 or -1 (errno set). */
int http_write_all(int fd, const void *buf, size_t len);

/*
 * Writes a complete response with Content-Length. extra_headers is NULL or
 * a block of "Name: value\r\n" lines. 0 or -1.
 */
int http_respond(int fd, int status, const char *content_type,
    const char *extra_headers, const void *body, size_t len, int keep_alive);

/* The reason phrase for a status code ("OK", "Bad Request", ...). */
const char *http_reason(int status);

/*
 * Listens on "host:port" (IPv4/IPv6, "0.0.0.0:8080", "127.0.0.1:0") or on
 * "unix:PATH" (a Unix socket, mode 0666, replacing an old socket at PATH;
 * *port_out is then 0). Returns the socket or -1 with a message in err. *port_out, if not NULL,
 * receives the bound port (useful with port 0 in tests).
 */
int http_listen(const char *addr, int *port_out, char *err, size_t errlen);

/*
 * The address a listener is reachable at, for ready lines: ADDR with the
 * bound PORT in place of its port ("0.0.0.0:0" -> "0.0.0.0:40123"), or
 * ADDR itself for "unix:PATH".
 */
void http_listen_name(const char *addr, int port, char *out, size_t outlen);

/*
 * Serves connections on a listening socket forever: one detached thread per
 * connection, which calls handler(conn, ctx) once; the handler owns the
 * keep-alive loop (usually: http_read_request, answer, repeat) and returns
 * when the connection is done. The framework closes the fd and frees the
 * conn afterwards. Returns only on accept failure (-1).
 *
 * A connection once accepted is always served: when its thread cannot
 * start (the system is out of threads or memory), http_serve waits and
 * tries again, and new clients wait in the listen backlog meanwhile.
 */
typedef void http_handler(struct http_conn *c, void *ctx);
int http_serve(int lfd, http_handler *handler, void *ctx);

/*
 * http_serve with at most max_conns connections served at once (0: no
 * cap). A connection accepted while all are busy waits, unread, until one
 * ends, and the loop accepts nothing more meanwhile: later clients wait in
 * the listen backlog; none is refused or cut. on_full, if not NULL, is
 * called with ctx from the accept loop each time such a wait begins (the
 * proxy logs it); it must not block for long.
 */
int http_serve_max(int lfd, int max_conns, http_handler *handler, void *ctx,
    void (*on_full)(void *ctx, int max_conns));

/* What http_serve starts threads with: pthread_create; tests replace it. */
extern int (*http_thread_create)(pthread_t *, const pthread_attr_t *,
    void *(*)(void *), void *);

#endif
