/*
 * HTTP/1.1 server framing (see http.h for the contract): listening, a
 * thread per connection, reading one request at a time with limits and
 * deadlines, writing responses.
 *
 * Invariants:
 * - Every byte a client sends is either part of the request being read or
 *   stays in conn->in for the next one: a Content-Length body is read
 *   with reads bounded by what is left of it, a chunked body through the
 *   buffer by common/chunked.c (strict), which uses no byte past the
 *   message's end, so pipelined requests are never lost.
 * - Everything is checked before it is used: the request line, each header
 *   name (a token) and value (no control bytes but HTAB), Content-Length
 *   (digits only; duplicates must agree; never together with
 *   Transfer-Encoding), chunk sizes (hex, bounded by max_body).
 * - Bare LF line ends are tolerated in the head and the chunk framing (RFC
 *   9112 §2.2 allows it); a bare CR is an error. The request is re-framed by
 *   whoever forwards it, so a lenient reading cannot smuggle a second one.
 * - A connection with fd -1 reads only what is already in conn->in: the
 *   fuzz target and table-driven tests parse buffers that way.
 */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "common/buf.h"
#include "common/chunked.h"
#include "common/errmsg.h"
#include "common/http.h"
#include "common/sock.h"

#define READ_CHUNK     (64 * 1024)
#define MAX_HEADERS    512
#define MAX_CHUNK_LINE 4096

/* Internal: more bytes are needed. */
#define HTTP_AGAIN 1

void
http_limits_default(struct http_limits *lim)
{
	if (lim->max_header_bytes == 0)
		lim->max_header_bytes = 64 * 1024;
	if (lim->max_body == 0)
		lim->max_body = 32 * 1024 * 1024;
	if (lim->idle_ms == 0)
		lim->idle_ms = 30000;
	if (lim->header_ms == 0)
		lim->header_ms = 30000;
}

int
http_error_status(int code)
{
	switch (code) {
	case HTTP_BAD:
		return 400;
	case HTTP_TIMEOUT:
		return 408;
	case HTTP_TOO_LARGE:
		return 413;
	case HTTP_HEAD_TOO_LARGE:
		return 431;
	default:
		return 0;
	}
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The connection's buffer as bytes. */
static inline unsigned char *
cbuf(const struct http_conn *c)
{
	return (unsigned char *)c->in.p;
}

/*
 * Waits until fd is readable, for at most idle_ms and not past deadline
 * (an absolute now_ms() value; 0 for none). 1 when readable, 0 on timeout,
 * -1 on error.
 */
static int
wait_readable(int fd, int idle_ms, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int64_t left;
	int ms, r;

	for (;;) {
		ms = idle_ms;
		if (deadline) {
			left = deadline - now_ms();
			if (left <= 0)
				return 0;
			if (left < ms)
				ms = (int)left;
		}
		r = poll(&p, 1, ms);
		if (r > 0)
			return 1;
		if (r == 0) {
			if (deadline && ms < idle_ms && now_ms() < deadline)
				continue;
			return 0;
		}
		if (errno != EINTR)
			return -1;
	}
}

/* Room for the descriptors of one recvmsg (more are truncated: too many). */
#define FDS_ROOM 16

/* Descriptors in M's SCM_RIGHTS into c->fds (see struct http_conn). */
static void
take_fds(struct http_conn *c, struct msghdr *m)
{
	struct cmsghdr *h;
	size_t i, k;
	int fd;

	for (h = CMSG_FIRSTHDR(m); h != NULL; h = CMSG_NXTHDR(m, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		k = (h->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < k; i++) {
			memcpy(&fd, CMSG_DATA(h) + i * sizeof(int), sizeof(fd));
			if (c->nfds < c->maxfds)
				c->fds[c->nfds] = fd;
			else
				close(fd);
			c->nfds++;
		}
	}
	if ((m->msg_flags & MSG_CTRUNC) && c->nfds <= c->maxfds)
		c->nfds = c->maxfds + 1;
}

/*
 * recv(2) on c, or recvmsg(2) taking the descriptors that come along when
 * c->fds is set. What recv returns, errno set.
 */
static ssize_t
conn_recv(struct http_conn *c, void *dst, size_t len, int flags)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(FDS_ROOM * sizeof(int))];
	} u;
	struct iovec iov = { dst, len };
	struct msghdr m;
	ssize_t n;

	if (c->fds == NULL)
		return recv(c->fd, dst, len, flags);
	memset(&m, 0, sizeof(m));
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = u.b;
	m.msg_controllen = sizeof(u.b);
	n = recvmsg(c->fd, &m, flags | MSG_CMSG_CLOEXEC);
	if (n >= 0)
		take_fds(c, &m);
	return n;
}

/*
 * Reads up to len bytes into dst, waiting as wait_readable does. The number
 * of bytes read (> 0), 0 at end of stream, HTTP_TIMEOUT or HTTP_IO.
 */
static ssize_t
read_some(struct http_conn *c, void *dst, size_t len, int idle_ms,
    int64_t deadline)
{
	ssize_t n;
	int r;

	if (c->fd < 0)
		return 0;
	/* Bytes are often there already: try before paying for a poll. */
	n = conn_recv(c, dst, len, MSG_DONTWAIT);
	if (n >= 0)
		return n;
	if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
	    errno != ENOTSOCK)
		return HTTP_IO;
	for (;;) {
		r = wait_readable(c->fd, idle_ms, deadline);
		if (r == 0)
			return HTTP_TIMEOUT;
		if (r < 0)
			return HTTP_IO;
		n = c->fds != NULL ? conn_recv(c, dst, len, 0) :
				     read(c->fd, dst, len);
		if (n >= 0)
			return n;
		if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
			return HTTP_IO;
	}
}

/*
 * Appends what the socket has to conn->in. Same returns as read_some;
 * HTTP_IO also when out of memory.
 */
static ssize_t
fill(struct http_conn *c, int idle_ms, int64_t deadline)
{
	ssize_t n;

	if (buf_grow(&c->in, READ_CHUNK / 4, READ_CHUNK) < 0)
		return HTTP_IO;
	/* The buffer keeps a byte for its NUL. */
	n = read_some(c, c->in.p + c->in.len, c->in.cap - c->in.len - 1,
	    idle_ms, deadline);
	if (n > 0) {
		c->in.len += (size_t)n;
		c->in.p[c->in.len] = '\0';
	}
	return n;
}

static int
is_tchar(unsigned char ch)
{
	if (ch >= 'a' && ch <= 'z')
		return 1;
	if (ch >= 'A' && ch <= 'Z')
		return 1;
	if (ch >= '0' && ch <= '9')
		return 1;
	return ch != 0 && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

/* A field-value byte: visible ASCII, SP, HTAB or obs-text. */
static int
is_vchar(unsigned char ch)
{
	return ch == '\t' || (ch >= 0x20 && ch != 0x7f);
}

static char *
dupn(const unsigned char *p, size_t n)
{
	char *s = malloc(n + 1);

	if (s != NULL) {
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return s;
}

void
http_request_free(struct http_request *req)
{
	size_t i;

	free(req->method);
	free(req->target);
	free(req->path);
	for (i = 0; i < req->nheaders; i++) {
		free(req->headers[i].name);
		free(req->headers[i].value);
	}
	free(req->headers);
	free(req->body);
	memset(req, 0, sizeof(*req));
}

const char *
http_header(const struct http_request *req, const char *name)
{
	size_t i;

	for (i = 0; i < req->nheaders; i++)
		if (strcasecmp(req->headers[i].name, name) == 0)
			return req->headers[i].value;
	return NULL;
}

/*
 * Finds the end of the head in buf[0..len): the index just past the empty
 * line, or 0 when not there yet. *scanned remembers how far a previous call
 * got so that a slow client does not cost quadratic time.
 */
static size_t
find_head_end(const unsigned char *buf, size_t len, size_t *scanned)
{
	size_t i = *scanned > 2 ? *scanned - 2 : 0;

	for (; i < len; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	*scanned = len;
	return 0;
}

/*
 * Splits the next line off [*p, end): returns its start, sets *n to its
 * length without the line end and advances *p past it. NULL when a bare CR
 * is found (malformed) or no line end is left.
 */
static const unsigned char *
next_line(const unsigned char **p, const unsigned char *end, size_t *n)
{
	const unsigned char *s = *p, *nl;

	nl = memchr(s, '\n', (size_t)(end - s));
	if (nl == NULL)
		return NULL;
	*n = (size_t)(nl - s);
	if (*n > 0 && s[*n - 1] == '\r')
		(*n)--;
	if (memchr(s, '\r', *n) != NULL)
		return NULL;
	*p = nl + 1;
	return s;
}

/* Parses the request line into req. HTTP_OK or HTTP_BAD. */
static int
parse_request_line(const unsigned char *s, size_t n, struct http_request *req)
{
	size_t i = 0, m, t, tlen;
	const unsigned char *q;

	while (i < n && is_tchar(s[i]))
		i++;
	m = i;
	if (m == 0 || i >= n || s[i] != ' ')
		return HTTP_BAD;
	t = ++i;
	while (i < n && s[i] > 0x20 && s[i] < 0x7f)
		i++;
	tlen = i - t;
	if (tlen == 0 || i >= n || s[i] != ' ')
		return HTTP_BAD;
	i++;
	if (n - i != 8 || memcmp(s + i, "HTTP/1.", 7) != 0 || s[i + 7] < '0' ||
	    s[i + 7] > '9')
		return HTTP_BAD;
	if (s[t] != '/' && !(tlen == 1 && s[t] == '*'))
		return HTTP_BAD;
	req->minor = s[i + 7] - '0';
	req->method = dupn(s, m);
	req->target = dupn(s + t, tlen);
	q = memchr(s + t, '?', tlen);
	req->path = dupn(s + t, q ? (size_t)(q - (s + t)) : tlen);
	if (!req->method || !req->target || !req->path)
		return HTTP_IO;
	return HTTP_OK;
}

/* Parses one header line and appends it to req. HTTP_OK, HTTP_BAD, ... */
static int
parse_header_line(const unsigned char *s, size_t n, struct http_request *req)
{
	size_t i = 0, vs, ve;
	struct http_header *h;

	while (i < n && is_tchar(s[i]))
		i++;
	if (i == 0 || i >= n || s[i] != ':')
		return HTTP_BAD; /* no name, no colon, or space before it */
	vs = i + 1;
	while (vs < n && (s[vs] == ' ' || s[vs] == '\t'))
		vs++;
	ve = n;
	while (ve > vs && (s[ve - 1] == ' ' || s[ve - 1] == '\t'))
		ve--;
	for (size_t k = vs; k < ve; k++)
		if (!is_vchar(s[k]))
			return HTTP_BAD;
	if (req->nheaders >= MAX_HEADERS)
		return HTTP_HEAD_TOO_LARGE;
	if ((req->nheaders & (req->nheaders - 1)) == 0) {
		size_t ncap = req->nheaders ? req->nheaders * 2 : 16;

		h = realloc(req->headers, ncap * sizeof(*h));
		if (h == NULL)
			return HTTP_IO;
		req->headers = h;
	}
	h = &req->headers[req->nheaders];
	h->name = dupn(s, i);
	h->value = dupn(s + vs, ve - vs);
	if (h->name == NULL || h->value == NULL) {
		free(h->name);
		free(h->value);
		return HTTP_IO;
	}
	req->nheaders++;
	return HTTP_OK;
}

int
http_has_token(const char *value, const char *token)
{
	size_t tl = strlen(token);
	const char *p = value;

	while (p && *p) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (strncasecmp(p, token, tl) == 0) {
			const char *e = p + tl;

			while (*e == ' ' || *e == '\t')
				e++;
			if (*e == '\0' || *e == ',')
				return 1;
		}
		p = strchr(p, ',');
	}
	return 0;
}

/*
 * Works out the body framing from the headers: *chunked, or *clen (-1 when
 * there is no body). HTTP_OK, HTTP_BAD or HTTP_TOO_LARGE.
 */
static int
body_framing(const struct http_request *req, size_t max_body, int *chunked,
    long long *clen)
{
	size_t i, nte = 0;
	const char *te = NULL;
	int have_cl = 0;
	unsigned long long cl = 0;

	*chunked = 0;
	*clen = -1;
	for (i = 0; i < req->nheaders; i++) {
		const char *name = req->headers[i].name;
		const char *v = req->headers[i].value;

		if (strcasecmp(name, "transfer-encoding") == 0) {
			te = v;
			nte++;
		} else if (strcasecmp(name, "content-length") == 0) {
			unsigned long long x = 0;
			int big = 0;

			if (*v == '\0')
				return HTTP_BAD;
			for (const char *p = v; *p; p++) {
				if (*p < '0' || *p > '9')
					return HTTP_BAD;
				if (x > (ULLONG_MAX - 9) / 10)
					big = 1;
				else
					x = x * 10 + (unsigned)(*p - '0');
			}
			if (big)
				x = ULLONG_MAX;
			if (have_cl && x != cl)
				return HTTP_BAD;
			have_cl = 1;
			cl = x;
		}
	}
	if (te != NULL) {
		if (nte > 1 || have_cl || strcasecmp(te, "chunked") != 0)
			return HTTP_BAD;
		*chunked = 1;
		return HTTP_OK;
	}
	if (have_cl) {
		if (cl > max_body)
			return HTTP_TOO_LARGE;
		*clen = (long long)cl;
	}
	return HTTP_OK;
}

/* Sends "100 Continue" when the client waits for it. */
static void
maybe_continue(struct http_conn *c, const struct http_request *req)
{
	static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";
	const char *e = http_header(req, "expect");

	if (c->fd < 0 || req->minor < 1 || e == NULL || c->in.len > 0)
		return;
	if (strcasecmp(e, "100-continue") == 0)
		(void)http_write_all(c->fd, cont, sizeof(cont) - 1);
}

/* Reads a Content-Length body of clen bytes. HTTP_OK or an error code. */
static int
read_sized_body(struct http_conn *c, struct http_request *req, size_t clen,
    int idle_ms)
{
	size_t got;
	ssize_t n;

	req->body = malloc(clen + 1);
	if (req->body == NULL)
		return HTTP_IO;
	got = c->in.len < clen ? c->in.len : clen;
	memcpy(req->body, cbuf(c), got);
	buf_drop(&c->in, got);
	while (got < clen) {
		/* Bounded by what is left, so the next request stays unread. */
		n = read_some(c, req->body + got, clen - got, idle_ms, 0);
		if (n == 0)
			return HTTP_BAD;
		if (n < 0)
			return (int)n;
		got += (size_t)n;
	}
	req->body[clen] = '\0';
	req->body_len = clen;
	return HTTP_OK;
}

/* Grows the body to hold n more bytes (+ NUL). 0 or -1. */
static int
body_grow(struct http_request *req, size_t *cap, size_t n)
{
	size_t need = req->body_len + n + 1, ncap;
	unsigned char *nb;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 4096;
	while (ncap < need)
		ncap *= 2;
	nb = realloc(req->body, ncap);
	if (nb == NULL)
		return -1;
	req->body = nb;
	*cap = ncap;
	return 0;
}

/* Where a chunked body goes: the request's body, grown as it comes. */
struct body_sink {
	struct http_request *req;
	size_t cap;
};

static int
body_sink(void *ctx, const char *p, size_t n)
{
	struct body_sink *b = ctx;

	if (body_grow(b->req, &b->cap, n) < 0)
		return -1;
	memcpy(b->req->body + b->req->body_len, p, n);
	b->req->body_len += n;
	return 0;
}

/*
 * Reads a chunked body and its trailers (strict grammar, common/chunked.h)
 * from the buffer, filling it as needed. HTTP_OK or an error code.
 */
static int
read_chunked_body(struct http_conn *c, struct http_request *req,
    const struct http_limits *lim)
{
	struct chunked d = { .max_total = lim->max_body,
		.max_line = MAX_CHUNK_LINE,
		.max_trailer = lim->max_header_bytes,
		.strict = 1 };
	struct body_sink b = { req, 0 };
	size_t used;
	ssize_t r;
	int rc;

	if (body_grow(req, &b.cap, 0) < 0)
		return HTTP_IO;
	for (;;) {
		rc = chunked_feed(&d, c->in.p, c->in.len, &used, body_sink, &b);
		buf_drop(&c->in, used);
		if (rc == CHUNKED_DONE)
			break;
		if (rc == CHUNKED_TOO_LARGE)
			return HTTP_TOO_LARGE;
		if (rc == CHUNKED_TRAILER_TOO_LARGE)
			return HTTP_HEAD_TOO_LARGE;
		if (rc == CHUNKED_SINK)
			return HTTP_IO;
		if (rc != CHUNKED_MORE)
			return HTTP_BAD;
		r = fill(c, lim->idle_ms, 0);
		if (r == 0)
			return HTTP_BAD;
		if (r < 0)
			return (int)r;
	}
	req->body[req->body_len] = '\0';
	req->chunked = 1;
	return HTTP_OK;
}

/* Parses the head in buf[0..hlen) into req. HTTP_OK or an error code. */
static int
parse_head(const unsigned char *buf, size_t hlen, struct http_request *req)
{
	const unsigned char *p = buf, *end = buf + hlen, *line;
	size_t n;
	int rc;

	line = next_line(&p, end, &n);
	if (line == NULL)
		return HTTP_BAD;
	rc = parse_request_line(line, n, req);
	if (rc != HTTP_OK)
		return rc;
	for (;;) {
		line = next_line(&p, end, &n);
		if (line == NULL)
			return HTTP_BAD;
		if (n == 0)
			break;
		rc = parse_header_line(line, n, req);
		if (rc != HTTP_OK)
			return rc;
	}
	return HTTP_OK;
}

static void
set_keep_alive(struct http_request *req)
{
	int close = 0, keep = 0;
	size_t i;

	for (i = 0; i < req->nheaders; i++) {
		if (strcasecmp(req->headers[i].name, "connection") != 0)
			continue;
		close |= http_has_token(req->headers[i].value, "close");
		keep |= http_has_token(req->headers[i].value, "keep-alive");
	}
	req->keep_alive = req->minor >= 1 ? !close : keep && !close;
}

int
http_read_request(struct http_conn *c, struct http_request *req,
    const struct http_limits *limits)
{
	struct http_limits lim = *limits;
	size_t hlen = 0, scanned = 0;
	int64_t deadline = 0;
	long long clen;
	int rc, chunked;
	ssize_t r;

	http_limits_default(&lim);
	memset(req, 0, sizeof(*req));
	for (;;) {
		/* The head's deadline runs from its first byte. */
		if (c->in.len > 0 && deadline == 0)
			deadline = now_ms() + lim.header_ms;
		/* Empty lines before a request are ignored (RFC 9112 §2.2). */
		while (c->in.len > 0 &&
		    (cbuf(c)[0] == '\n' ||
			(cbuf(c)[0] == '\r' && c->in.len > 1 &&
			    cbuf(c)[1] == '\n')))
			buf_drop(&c->in, cbuf(c)[0] == '\n' ? 1 : 2);
		hlen = find_head_end(cbuf(c), c->in.len, &scanned);
		if (hlen > 0)
			break;
		if (c->in.len > lim.max_header_bytes)
			return HTTP_HEAD_TOO_LARGE;
		r = fill(c, lim.idle_ms, deadline);
		if (r == 0)
			return c->in.len == 0 ? HTTP_EOF : HTTP_BAD;
		if (r == HTTP_TIMEOUT && c->in.len == 0)
			return HTTP_EOF; /* an idle keep-alive connection */
		if (r < 0)
			return (int)r;
	}
	if (hlen > lim.max_header_bytes)
		return HTTP_HEAD_TOO_LARGE;
	rc = parse_head(cbuf(c), hlen, req);
	if (rc == HTTP_OK)
		rc = body_framing(req, lim.max_body, &chunked, &clen);
	if (rc != HTTP_OK)
		goto fail;
	set_keep_alive(req);
	buf_drop(&c->in, hlen);
	if (chunked || clen > 0)
		maybe_continue(c, req);
	if (chunked)
		rc = read_chunked_body(c, req, &lim);
	else
		rc = read_sized_body(c, req, clen > 0 ? (size_t)clen : 0,
		    lim.idle_ms);
	if (rc != HTTP_OK)
		goto fail;
	return HTTP_OK;
fail:
	http_request_free(req);
	return rc;
}

int
http_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

const char *
http_reason(int status)
{
	switch (status) {
	case 100:
		return "Continue";
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 202:
		return "Accepted";
	case 204:
		return "No Content";
	case 206:
		return "Partial Content";
	case 301:
		return "Moved Permanently";
	case 302:
		return "Found";
	case 304:
		return "Not Modified";
	case 307:
		return "Temporary Redirect";
	case 308:
		return "Permanent Redirect";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 402:
		return "Payment Required";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 408:
		return "Request Timeout";
	case 409:
		return "Conflict";
	case 411:
		return "Length Required";
	case 413:
		return "Content Too Large";
	case 415:
		return "Unsupported Media Type";
	case 417:
		return "Expectation Failed";
	case 422:
		return "Unprocessable Content";
	case 429:
		return "Too Many Requests";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 501:
		return "Not Implemented";
	case 502:
		return "Bad Gateway";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	case 507:
		return "Insufficient Storage";
	case 529:
		return "Overloaded";
	default:
		return "Unknown";
	}
}

int
http_respond(int fd, int status, const char *content_type,
    const char *extra_headers, const void *body, size_t len, int keep_alive)
{
	char *head = NULL;
	int hlen, rc;

	hlen = asprintf(&head,
	    "HTTP/1.1 %d %s\r\n"
	    "%s%s%s"
	    "Content-Length: %zu\r\n"
	    "%s"
	    "Connection: %s\r\n\r\n",
	    status, http_reason(status), content_type ? "Content-Type: " : "",
	    content_type ? content_type : "", content_type ? "\r\n" : "", len,
	    extra_headers ? extra_headers : "",
	    keep_alive ? "keep-alive" : "close");
	if (hlen < 0)
		return -1;
	if (len > 0 && (size_t)hlen + len <= 256 * 1024) {
		/* One segment for small responses: better for latency. */
		char *all = realloc(head, (size_t)hlen + len);

		if (all == NULL) {
			free(head);
			return -1;
		}
		memcpy(all + hlen, body, len);
		rc = http_write_all(fd, all, (size_t)hlen + len);
		free(all);
		return rc;
	}
	rc = http_write_all(fd, head, (size_t)hlen);
	free(head);
	if (rc == 0 && len > 0)
		rc = http_write_all(fd, body, len);
	return rc;
}

/*
 * Splits "host:port", "[v6]:port", ":port" or "port" into host (NULL for
 * any) and port. 0, or -1 when malformed.
 */
static int
split_addr(const char *addr, char *host, size_t hostlen, char *port,
    size_t portlen, int *any)
{
	const char *colon, *h;
	size_t hl;

	*any = 0;
	if (addr[0] == '[') {
		const char *rb = strchr(addr, ']');

		if (rb == NULL || rb[1] != ':')
			return -1;
		h = addr + 1;
		hl = (size_t)(rb - h);
		colon = rb + 1;
	} else {
		colon = strrchr(addr, ':');
		if (colon == NULL) {
			h = "";
			hl = 0;
			colon = addr - 1;
		} else {
			h = addr;
			hl = (size_t)(colon - addr);
			if (memchr(addr, ':', hl) != NULL)
				return -1; /* bare IPv6 needs brackets */
		}
	}
	if (hl >= hostlen || strlen(colon + 1) >= portlen || colon[1] == '\0')
		return -1;
	for (const char *p = colon + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return -1;
	memcpy(host, h, hl);
	host[hl] = '\0';
	strcpy(port, colon + 1);
	if (hl == 0 || strcmp(host, "*") == 0)
		*any = 1;
	return 0;
}

/*
 * Listens on a Unix socket at PATH: an old socket there is replaced, and the
 * new one is made mode 0666, since who may connect is decided by where its
 * directory is mounted (the two sides of one hop), not by uids, which differ
 * between rootful and rootless podman.
 */
static int
listen_unix(const char *addr, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun;
	struct stat st;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (*path == '\0' || strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen,
		    "cannot listen on '%s': path too long "
		    "or empty",
		    addr);
		return -1;
	}
	strcpy(sun.sun_path, path);
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		(void)unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    chmod(path, 0666) < 0 || listen(fd, SOMAXCONN) < 0) {
		snprintf(err, errlen, "cannot listen on '%s': %s", addr,
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

int
http_listen(const char *addr, int *port_out, char *err, size_t errlen)
{
	char host[256], port[16];
	int any, fd, gai;

	if (strncmp(addr, "unix:", 5) == 0) {
		if (port_out != NULL)
			*port_out = 0;
		return listen_unix(addr, addr + 5, err, errlen);
	}
	if (split_addr(addr, host, sizeof(host), port, sizeof(port), &any) <
	    0) {
		snprintf(err, errlen,
		    "cannot listen on '%s': expected "
		    "HOST:PORT",
		    addr);
		return -1;
	}
	fd = sock_bind(any ? NULL : host, port, SOCK_STREAM, 0, port_out, &gai);
	if (fd < 0)
		snprintf(err, errlen, "cannot listen on '%s': %s", addr,
		    gai != 0 ? gai_strerror(gai) : strerror(errno));
	return fd;
}

void
http_listen_name(const char *addr, int port, char *out, size_t outlen)
{
	const char *colon = strrchr(addr, ':');
	int hl = colon ? (int)(colon - addr) : 0;

	if (strncmp(addr, "unix:", 5) == 0)
		snprintf(out, outlen, "%s", addr);
	else
		snprintf(out, outlen, "%.*s:%d", hl, addr, port);
}

int (*http_thread_create)(pthread_t *, const pthread_attr_t *,
    void *(*)(void *), void *) = pthread_create;

/* The connection slots of one http_serve_max loop. */
struct slots {
	pthread_mutex_t mu;
	pthread_cond_t freed;
	int used, max; /* max 0: no cap */
	int done;      /* the loop returned */
};

/* Frees the slots once the loop has returned and no thread holds one. */
static void
slots_drop(struct slots *sl, int give_back)
{
	int last;

	pthread_mutex_lock(&sl->mu);
	sl->used -= give_back;
	if (give_back)
		pthread_cond_signal(&sl->freed);
	else
		sl->done = 1;
	last = sl->done && sl->used == 0;
	pthread_mutex_unlock(&sl->mu);
	if (last) {
		pthread_cond_destroy(&sl->freed);
		pthread_mutex_destroy(&sl->mu);
		free(sl);
	}
}

struct serve_arg {
	struct http_conn *conn;
	http_handler *handler;
	void *ctx;
	struct slots *slots;
};

static void *
serve_thread(void *p)
{
	struct serve_arg a = *(struct serve_arg *)p;

	free(p);
	a.handler(a.conn, a.ctx);
	close(a.conn->fd);
	buf_free(&a.conn->in);
	free(a.conn);
	slots_drop(a.slots, 1);
	return NULL;
}

/*
 * Takes a connection slot for a connection just accepted, waiting for one
 * to be freed when all are in use; on_full is told each time a wait
 * begins. Meanwhile nothing more is accepted.
 */
static void
take_slot(struct slots *sl, void (*on_full)(void *, int), void *ctx)
{
	pthread_mutex_lock(&sl->mu);
	if (sl->max > 0 && sl->used >= sl->max) {
		pthread_mutex_unlock(&sl->mu);
		if (on_full != NULL)
			on_full(ctx, sl->max);
		pthread_mutex_lock(&sl->mu);
		while (sl->used >= sl->max)
			pthread_cond_wait(&sl->freed, &sl->mu);
	}
	sl->used++;
	pthread_mutex_unlock(&sl->mu);
}

static void
format_peer(const struct sockaddr_storage *ss, char *out, size_t outlen)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)ss;

		inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a));
		snprintf(out, outlen, "%s:%u", a, ntohs(s->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)ss;

		inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof(a));
		snprintf(out, outlen, "[%s]:%u", a, ntohs(s->sin6_port));
	} else {
		snprintf(out, outlen, "local");
	}
}

/*
 * Starts the thread of an accepted connection. An accepted connection is
 * never dropped: when the system is short of threads or memory (EAGAIN,
 * ENOMEM), this waits and tries again, with pauses growing to 200 ms,
 * until the thread starts. Meanwhile the accept loop waits too, so new
 * clients queue in the listen backlog instead of being cut off. Says so
 * on stderr, once per connection.
 */
static void
start_thread(const pthread_attr_t *attr, struct serve_arg *a)
{
	pthread_t tid;
	char why[128];
	int e, ms = 1, said = 0;

	while ((e = http_thread_create(&tid, attr, serve_thread, a)) != 0) {
		if (!said) {
			errmsg_strerror(e, why, sizeof(why));
			fprintf(stderr,
			    "%s: cannot start a thread for "
			    "connection '%s': %s (trying again)\n",
			    program_invocation_short_name, a->conn->peer, why);
			said = 1;
		}
		poll(NULL, 0, ms);
		if (ms < 200)
			ms *= 2;
	}
}

int
http_serve(int lfd, http_handler *handler, void *ctx)
{
	return http_serve_max(lfd, 0, handler, ctx, NULL);
}

int
http_serve_max(int lfd, int max_conns, http_handler *handler, void *ctx,
    void (*on_full)(void *ctx, int max_conns))
{
	struct sockaddr_storage ss;
	socklen_t sl;
	pthread_attr_t attr;
	struct serve_arg *a;
	struct http_conn *c;
	struct slots *slots;
	int fd, on = 1;

	/* Freed by the last of the loop and its threads (slots_drop). */
	while ((slots = calloc(1, sizeof(*slots))) == NULL)
		poll(NULL, 0, 20);
	pthread_mutex_init(&slots->mu, NULL);
	pthread_cond_init(&slots->freed, NULL);
	slots->max = max_conns > 0 ? max_conns : 0;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		sl = sizeof(ss);
		while ((fd = accept4(lfd, (struct sockaddr *)&ss, &sl,
			    SOCK_CLOEXEC)) < 0) {
			sl = sizeof(ss);
			switch (errno) {
			case EINTR:
			case ECONNABORTED:
			case EPROTO:
				continue;
			case EMFILE:
			case ENFILE:
			case ENOBUFS:
			case ENOMEM:
				/* Out of resources: let others finish. */
				poll(NULL, 0, 20);
				continue;
			default:
				pthread_attr_destroy(&attr);
				slots_drop(slots, 0);
				return -1;
			}
		}
		/* At the cap, later clients wait in the backlog. */
		take_slot(slots, on_full, ctx);
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
		/* Out of memory: wait for some, as for threads below. */
		while ((c = calloc(1, sizeof(*c))) == NULL)
			poll(NULL, 0, 20);
		while ((a = malloc(sizeof(*a))) == NULL)
			poll(NULL, 0, 20);
		c->fd = fd;
		format_peer(&ss, c->peer, sizeof(c->peer));
		a->conn = c;
		a->handler = handler;
		a->ctx = ctx;
		a->slots = slots;
		start_thread(&attr, a);
	}
}
