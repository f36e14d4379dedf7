/*
 * The trap's HTTP proxy port (see trap.h). One connection, on its own
 * thread (http_serve):
 *
 *	first byte 0x16	  direct TLS: terminated, then as below ("connect" "")
 *	CONNECT host:port a "connect" record, "200 Connection established",
 *			  then the tunnel: TLS is terminated with a leaf for
 *			  the host and the requests inside are served as
 *			  below; plain HTTP inside is served as below too; to
 *			  an SMTP or FTP port, the trap speaks the protocol
 *			  ("tcp" record, as on the simulated internet);
 *			  anything else is one "tunnel" record of its first
 *			  bytes
 *	any other request an "http" record with head and body, then 403;
 *			  to a host of --echo (trap.h), 200 with the
 *			  request itself
 *
 * Requests are read leniently (the trap records; it forwards nothing, so
 * there is nothing to smuggle) but boundedly: a head of at most max_head
 * bytes within head_ms, a body stored up to body_cap and read (counted,
 * not stored) up to TRAP_DISCARD_MAX, every read under the idle timeout
 * (SO_RCVTIMEO), at most TRAP_MAX_REQUESTS per connection and max_conns
 * connections at once. Whatever arrived is recorded, also when the head or
 * the body is cut short or malformed ("error" says so).
 *
 * http.c's reader is not used for the requests: it accepts origin-form
 * targets only and rejects what a trap must record (a body over its cap,
 * a malformed head), and it reads from a plain fd, not from TLS.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "common/chunked.h"
#include "trap/trap.h"

#define MAX_HEADERS	512
#define MAX_LINE	4096 /* chunk size lines and trailers */
#define TUNNEL_QUIET_MS 1000 /* a non-TLS tunnel: end of its first burst */

static const char refusal[] =
    "leakbench: this sandbox has no network; the trap recorded this "
    "request\n";

/* ---- parsing heads ---- */

void
trap_req_free(struct trap_req *r)
{
	size_t i;

	free(r->method);
	free(r->target);
	free(r->version);
	for (i = 0; i < r->nheaders; i++) {
		free(r->headers[i].name);
		free(r->headers[i].value);
	}
	free(r->headers);
	memset(r, 0, sizeof(*r));
}

static int
is_tchar(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9') ||
	    (ch != 0 && strchr("!#$%&'*+-.^_`|~", ch) != NULL);
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

/* Trims blanks off both ends of [*s, *s + *n). */
static void
trim(const unsigned char **s, size_t *n)
{
	while (*n > 0 && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

/* Appends a header; 0, or -1 when out of memory. */
static int
add_header(struct trap_req *r, const unsigned char *name, size_t nl,
    const unsigned char *value, size_t vl)
{
	struct http_header *h;

	if (r->nheaders >= MAX_HEADERS)
		return 0; /* kept in the raw head only */
	if ((r->nheaders & (r->nheaders - 1)) == 0) {
		size_t ncap = r->nheaders ? r->nheaders * 2 : 16;

		h = realloc(r->headers, ncap * sizeof(*h));
		if (h == NULL)
			return -1;
		r->headers = h;
	}
	h = &r->headers[r->nheaders];
	h->name = dupn(name, nl);
	h->value = dupn(value, vl);
	if (h->name == NULL || h->value == NULL) {
		free(h->name);
		free(h->value);
		return -1;
	}
	r->nheaders++;
	return 0;
}

/* Appends " value" to the last header (obsolete line folding). */
static int
fold_header(struct trap_req *r, const unsigned char *value, size_t vl)
{
	struct http_header *h = &r->headers[r->nheaders - 1];
	size_t ol = strlen(h->value);
	char *nv = realloc(h->value, ol + vl + 2);

	if (nv == NULL)
		return -1;
	nv[ol] = ' ';
	memcpy(nv + ol + 1, value, vl);
	nv[ol + vl + 1] = '\0';
	h->value = nv;
	return 0;
}

static const char *
http_header_find(const struct http_header *h, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcasecmp(h[i].name, name) == 0)
			return h[i].value;
	return NULL;
}

/* Whether a comma-separated value's last element is token. */
static int
last_token_is(const char *v, const char *token)
{
	const char *c = strrchr(v, ',');
	size_t n;

	v = c ? c + 1 : v;
	while (*v == ' ' || *v == '\t')
		v++;
	n = strlen(v);
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	return n == strlen(token) && strncasecmp(v, token, n) == 0;
}

static void
framing(struct trap_req *r)
{
	const char *te = NULL, *cl = NULL;
	size_t i;

	r->clen = -1;
	r->close = r->version == NULL || strcmp(r->version, "HTTP/1.1") != 0;
	for (i = 0; i < r->nheaders; i++) {
		const char *n = r->headers[i].name, *v = r->headers[i].value;

		if (strcasecmp(n, "transfer-encoding") == 0)
			te = v;
		else if (strcasecmp(n, "content-length") == 0 && cl == NULL)
			cl = v;
		else if (strcasecmp(n, "connection") == 0 ||
		    strcasecmp(n, "proxy-connection") == 0) {
			if (http_has_token(v, "close"))
				r->close = 1;
			else if (http_has_token(v, "keep-alive"))
				r->close = 0;
		}
	}
	if (te != NULL) {
		r->chunked = last_token_is(te, "chunked");
		if (!r->chunked) {
			r->clen = -2; /* unknown framing: close after */
			r->close = 1;
		}
		return;
	}
	if (cl != NULL) {
		unsigned long long x = 0;
		const char *p;

		for (p = cl; *p >= '0' && *p <= '9'; p++) {
			if (x > (1ULL << 60))
				break;
			x = x * 10 + (unsigned)(*p - '0');
		}
		r->clen = (p == cl || *p != '\0') ? -2 : (long long)x;
	}
	if (r->clen == -2)
		r->close = 1;
}

/* The length of the head in buf (up to its empty line), or 0. */
static size_t
head_end(const unsigned char *buf, size_t len, size_t max_head)
{
	size_t i;

	for (i = 0; i < len && i < max_head; i++) {
		if (buf[i] != '\n')
			continue;
		if (i + 1 < len && buf[i + 1] == '\n')
			return i + 2;
		if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
			return i + 3;
	}
	return 0;
}

/*
 * Whether buf may begin a request: a method (a token of at most 31 bytes)
 * then a space, checked as soon as those bytes are there.
 */
static int
method_ok(const unsigned char *buf, size_t len, size_t max_head)
{
	size_t lim = len < max_head ? len : max_head, ll, i;
	const unsigned char *nl = memchr(buf, '\n', lim);

	ll = nl ? (size_t)(nl - buf) : lim;
	for (i = 0; i < ll && i < 32 && is_tchar(buf[i]); i++)
		;
	return !((i < ll && (i == 0 || buf[i] != ' ')) ||
	    (i == ll && (nl != NULL || i >= 32)));
}

/*
 * The header lines from line up to the empty line before end into r
 * (folded lines joined; a line without a colon stays in the raw head
 * only). 0, or -1 when out of memory.
 */
static int
parse_header_lines(struct trap_req *r, const unsigned char *line,
    const unsigned char *end)
{
	const unsigned char *nl;
	size_t n;

	for (; line < end; line = nl + 1) {
		const unsigned char *colon, *v;
		size_t vl;

		nl = memchr(line, '\n', (size_t)(end - line));
		n = (size_t)(nl - line);
		if (n > 0 && line[n - 1] == '\r')
			n--;
		if (n == 0)
			break;
		if ((line[0] == ' ' || line[0] == '\t') && r->nheaders > 0 &&
		    r->nheaders < MAX_HEADERS) {
			v = line;
			vl = n;
			trim(&v, &vl);
			if (fold_header(r, v, vl) < 0)
				return -1;
			continue;
		}
		colon = memchr(line, ':', n);
		if (colon == NULL)
			continue; /* in the raw head only */
		{
			const unsigned char *nm = line;
			size_t nml = (size_t)(colon - line);

			trim(&nm, &nml);
			v = colon + 1;
			vl = n - (size_t)(v - line);
			trim(&v, &vl);
			if (add_header(r, nm, nml, v, vl) < 0)
				return -1;
		}
	}
	return 0;
}

long
trap_parse_head(const unsigned char *buf, size_t len, size_t max_head,
    struct trap_req *r, const char **why)
{
	const unsigned char *p, *end, *line, *nl, *sp;
	size_t hlen, n;

	memset(r, 0, sizeof(*r));
	r->clen = -1;
	hlen = head_end(buf, len, max_head);
	if (!method_ok(buf, len, max_head)) {
		*why = "not an HTTP request";
		return -1;
	}
	if (hlen == 0 || hlen > max_head) {
		if (len >= max_head) {
			*why = "request head too long";
			return -1;
		}
		return 0;
	}
	end = buf + hlen;
	line = buf;
	nl = memchr(line, '\n', (size_t)(end - line));
	n = (size_t)(nl - line);
	if (n > 0 && line[n - 1] == '\r')
		n--;
	sp = memchr(line, ' ', n);
	r->method = dupn(line, (size_t)(sp - line));
	p = sp + 1;
	n -= (size_t)(p - line);
	sp = memchr(p, ' ', n);
	if (sp == NULL) {
		r->target = dupn(p, n);
		r->version = NULL;
	} else {
		const unsigned char *v = sp + 1;
		size_t vl = n - (size_t)(v - p);

		r->target = dupn(p, (size_t)(sp - p));
		trim(&v, &vl);
		r->version = dupn(v, vl);
	}
	if (r->method == NULL || r->target == NULL ||
	    (sp != NULL && r->version == NULL))
		goto oom;
	if (r->target[0] == '\0') {
		trap_req_free(r);
		*why = "not an HTTP request";
		return -1;
	}
	if (parse_header_lines(r, nl + 1, end) < 0)
		goto oom;
	framing(r);
	if (r->clen == -1 && !r->chunked)
		r->clen = 0; /* a request without framing has no body */
	return (long)hlen;
oom:
	trap_req_free(r);
	*why = "out of memory";
	return -1;
}

/* ---- connection I/O, plain or TLS ---- */

struct tio {
	int fd;
	SSL *ssl;
	struct buf in; /* read, not yet consumed */
};

/* The bytes read and not yet consumed. */
static inline unsigned char *
tio_bytes(const struct tio *io)
{
	return (unsigned char *)io->in.p;
}

/* Reads once into dst. > 0, 0 at end of stream, -1 on error or timeout. */
static ssize_t
tio_read(struct tio *io, void *dst, size_t n)
{
	ssize_t r;
	size_t got;

	if (io->ssl != NULL) {
		if (n > INT32_MAX)
			n = INT32_MAX;
		if (SSL_read_ex(io->ssl, dst, n, &got) == 1)
			return (ssize_t)got;
		r = SSL_get_error(io->ssl, 0);
		ERR_clear_error();
		return r == SSL_ERROR_ZERO_RETURN ? 0 : -1;
	}
	for (;;) {
		r = recv(io->fd, dst, n, 0);
		if (r < 0 && errno == EINTR)
			continue;
		return r;
	}
}

/* Reads once more into the buffer. Same returns as tio_read. */
static ssize_t
tio_fill(struct tio *io)
{
	ssize_t r;

	if (buf_grow(&io->in, 16384, 32768) < 0)
		return -1;
	/* The buffer keeps a byte for its NUL. */
	r = tio_read(io, io->in.p + io->in.len, io->in.cap - io->in.len - 1);
	if (r > 0) {
		io->in.len += (size_t)r;
		io->in.p[io->in.len] = '\0';
	}
	return r;
}

static int
tio_write(struct tio *io, const void *p, size_t n)
{
	size_t w;

	if (io->ssl != NULL) {
		if (SSL_write_ex(io->ssl, p, n, &w) == 1 && w == n)
			return 0;
		ERR_clear_error();
		return -1;
	}
	return http_write_all(io->fd, p, n);
}

/*
 * A BIO for OpenSSL that first gives back bytes already read from the
 * socket (the ClientHello's start, read while looking for it), then reads
 * the socket.
 */
struct pbio {
	int fd;
	unsigned char *pre;
	size_t len, off;
};

static int
pbio_read(BIO *b, char *out, size_t n, size_t *got)
{
	struct pbio *p = BIO_get_data(b);
	ssize_t r;

	BIO_clear_retry_flags(b);
	if (p->off < p->len) {
		*got = p->len - p->off < n ? p->len - p->off : n;
		memcpy(out, p->pre + p->off, *got);
		p->off += *got;
		return 1;
	}
	do
		r = recv(p->fd, out, n, 0);
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return 0; /* end, error or idle timeout: no retry */
	*got = (size_t)r;
	return 1;
}

static int
pbio_write(BIO *b, const char *in, size_t n, size_t *put)
{
	struct pbio *p = BIO_get_data(b);

	BIO_clear_retry_flags(b);
	if (http_write_all(p->fd, in, n) < 0)
		return 0;
	*put = n;
	return 1;
}

static long
pbio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)b;
	(void)num;
	(void)ptr;
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int
pbio_destroy(BIO *b)
{
	struct pbio *p = BIO_get_data(b);

	if (p != NULL) {
		free(p->pre);
		free(p);
	}
	BIO_set_data(b, NULL);
	return 1;
}

static BIO_METHOD *pbio_method;
static pthread_once_t pbio_once = PTHREAD_ONCE_INIT;

static void
pbio_init(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK,
	    "leakbench trap socket");

	if (m == NULL)
		return;
	BIO_meth_set_read_ex(m, pbio_read);
	BIO_meth_set_write_ex(m, pbio_write);
	BIO_meth_set_ctrl(m, pbio_ctrl);
	BIO_meth_set_destroy(m, pbio_destroy);
	pbio_method = m;
}

/* A BIO over fd that gives pre[0..len) first (copied). NULL on failure. */
static BIO *
pbio_new(int fd, const unsigned char *pre, size_t len)
{
	struct pbio *p;
	BIO *b;

	pthread_once(&pbio_once, pbio_init);
	if (pbio_method == NULL || (p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->fd = fd;
	if (len > 0 && (p->pre = malloc(len)) == NULL) {
		free(p);
		return NULL;
	}
	if (len > 0)
		memcpy(p->pre, pre, len);
	p->len = len;
	b = BIO_new(pbio_method);
	if (b == NULL) {
		free(p->pre);
		free(p);
		return NULL;
	}
	BIO_set_data(b, p);
	BIO_set_init(b, 1);
	return b;
}

/* ---- serving ---- */

struct conn {
	struct trap *t;
	struct tio io;
	int tls;
	const char *sni;     /* NULL: none */
	const char *connect; /* NULL: not in a tunnel */
	int sim;	     /* a connection to the simulated internet */
	uint32_t addr;	     /* with sim: where it was meant to go */
	int port;
	void (*inside)(struct conn *); /* what serve_tls serves inside */
};

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The fields every record of a request's channel carries. */
static void
channel_fields(struct jline *j, const struct conn *c)
{
	if (c->sim)
		trap_sim_fields(j, c->t->sim, c->addr, c->port);
	jl_bool(j, "tls", c->tls);
	if (c->tls) {
		if (c->sni != NULL)
			jl_str(j, "sni", c->sni, strlen(c->sni));
		else
			jl_raw(j, "sni", "null");
	}
	if (c->connect != NULL)
		jl_str(j, "connect", c->connect, strlen(c->connect));
}

static void
respond(struct conn *c, int status, int head_only, int keep)
{
	char *msg = NULL;
	int n;

	n = asprintf(&msg,
	    "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
	    "Content-Length: %zu\r\nConnection: %s\r\n\r\n%s",
	    status, http_reason(status), sizeof(refusal) - 1,
	    keep ? "keep-alive" : "close", head_only ? "" : refusal);
	if (n > 0)
		(void)tio_write(&c->io, msg, (size_t)n);
	free(msg);
}

/*
 * The host a request on c with target was sent to, into out: on the
 * simulated internet the name of its address, in a tunnel the CONNECT
 * target's host, else an absolute http:// target's host. 0, or -1.
 */
static int
request_host(const struct conn *c, const char *target, char *out, size_t outlen)
{
	const char *s;
	size_t n;

	if (c->sim)
		return c->t->sim != NULL ?
		    trap_sim_name(c->t->sim, c->addr, out, outlen) :
		    -1;
	if (c->connect != NULL && *c->connect != '\0')
		s = c->connect;
	else if (strncasecmp(target, "http://", 7) == 0)
		s = target + 7;
	else
		return -1;
	n = strcspn(s, ":/?#@[");
	if (n == 0 || n >= outlen ||
	    (s[n] != '\0' && s[n] != ':' && s[n] != '/' && s[n] != '?' &&
		s[n] != '#'))
		return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

/* Whether the request on c with target goes to a host of --echo. */
static int
echoes(const struct conn *c, const char *target)
{
	char host[256];
	size_t i;

	if (c->t->necho == 0 || request_host(c, target, host, sizeof(host)) < 0)
		return 0;
	for (i = 0; i < c->t->necho; i++)
		if (strcasecmp(host, c->t->echo[i]) == 0)
			return 1;
	return 0;
}

/* Answers 200 with the request: its head, then its body as recorded. */
static void
respond_echo(struct conn *c, const unsigned char *head, size_t hlen,
    const unsigned char *body, size_t blen, int head_only, int keep)
{
	char *msg = NULL;
	int n;

	n = asprintf(&msg,
	    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	    "Content-Length: %zu\r\nConnection: %s\r\n\r\n",
	    hlen + blen, keep ? "keep-alive" : "close");
	if (n > 0 && tio_write(&c->io, msg, (size_t)n) == 0 && !head_only &&
	    tio_write(&c->io, head, hlen) == 0 && blen > 0)
		(void)tio_write(&c->io, body, blen);
	free(msg);
}

/* Records bytes that are not a request head (or only part of one). */
static void
record_bad_head(struct conn *c, const char *why)
{
	struct jline j;
	size_t n = c->io.in.len < c->t->lim.max_head ? c->io.in.len :
						       c->t->lim.max_head;

	jl_begin(&j, "http");
	jl_bytes(&j, "head", tio_bytes(&c->io), n);
	channel_fields(&j, c);
	jl_str(&j, "error", why, strlen(why));
	jl_end(&j);
	(void)trap_log_put(&c->t->log, &j);
}

struct body {
	unsigned char *p;
	size_t len;		  /* stored */
	unsigned long long total; /* seen */
	const char *error;
};

static void
body_add(struct body *b, const unsigned char *s, size_t n, size_t cap)
{
	size_t take;

	if (b->len < cap) {
		take = cap - b->len < n ? cap - b->len : n;
		memcpy(b->p + b->len, s, take);
		b->len += take;
	}
	b->total += n;
}

/*
 * Moves up to want bytes of the body from the connection into b.
 * The number moved; 0 at end of stream; -1 on timeout or error.
 */
static ssize_t
body_take(struct conn *c, struct body *b, size_t want)
{
	ssize_t r;
	size_t n;

	if (c->io.in.len == 0 && (r = tio_fill(&c->io)) <= 0)
		return r;
	n = c->io.in.len < want ? c->io.in.len : want;
	body_add(b, tio_bytes(&c->io), n, c->t->lim.body_cap);
	buf_drop(&c->io.in, n);
	return (ssize_t)n;
}

/* Where the payload of a chunked body goes: b, up to the body cap. */
struct chunk_sink {
	struct body *b;
	size_t cap;
};

/* -1 once the body passed TRAP_DISCARD_MAX: it is not read further. */
static int
chunk_payload(void *ctx, const char *p, size_t n)
{
	struct chunk_sink *k = ctx;

	if (k->b->total >= TRAP_DISCARD_MAX)
		return -1;
	body_add(k->b, (const unsigned char *)p, n, k->cap);
	return 0;
}

static void
read_body(struct conn *c, const struct trap_req *r, struct body *b)
{
	struct chunked d = { .max_line = MAX_LINE,
		.max_trailer = MAX_HEADERS * (MAX_LINE + 2) };
	struct chunk_sink k = { b, c->t->lim.body_cap };
	unsigned long long left;
	size_t used;
	ssize_t got;
	int rc;

	if (!r->chunked) {
		if (r->clen == -2)
			return; /* unknown framing: not read */
		left = (unsigned long long)r->clen;
		while (left > 0) {
			if (b->total >= TRAP_DISCARD_MAX) {
				b->error = "body over 64 MiB, not read further";
				return;
			}
			got = body_take(c, b,
			    left > SIZE_MAX ? SIZE_MAX : (size_t)left);
			if (got <= 0) {
				b->error = "body cut short";
				return;
			}
			left -= (unsigned long long)got;
		}
		return;
	}
	/* Lenient framing: the trap records what it gets, it does not judge. */
	for (;;) {
		rc = chunked_feed(&d, c->io.in.p, c->io.in.len, &used,
		    chunk_payload, &k);
		buf_drop(&c->io.in, used);
		if (rc == CHUNKED_DONE)
			return;
		if (rc == CHUNKED_SINK) {
			b->error = "body over 64 MiB, not read further";
			return;
		}
		if (rc == CHUNKED_TRAILER_TOO_LARGE) {
			b->error = "trailers too long";
			return;
		}
		if (rc != CHUNKED_MORE || tio_fill(&c->io) <= 0) {
			b->error = "chunked body cut short or malformed";
			return;
		}
	}
}

static void tunnel(struct conn *c, const char *target);
static void sim_busy(struct trap *t, int fd, int sim, uint32_t addr, int port);

/*
 * Reads a request head into r (empty lines before it ignored), within
 * the head's deadline: its length; < 0 for a head that does not parse
 * (*why says why); 0 when the connection ended or the deadline passed
 * first (recorded when bytes had come).
 */
static long
read_head(struct conn *c, struct trap_req *r, const char **why)
{
	int64_t deadline = 0;
	size_t checked = 0;
	long hlen;

	/* Empty lines before a request are ignored. */
	for (;;) {
		while (c->io.in.len > 0 &&
		    (tio_bytes(&c->io)[0] == '\n' ||
			(tio_bytes(&c->io)[0] == '\r' && c->io.in.len > 1 &&
			    tio_bytes(&c->io)[1] == '\n')))
			buf_drop(&c->io.in,
			    tio_bytes(&c->io)[0] == '\n' ? 1 : 2);
		if (c->io.in.len > 0 && deadline == 0)
			deadline = now_ms() + c->t->lim.head_ms;
		/* Parse again only when a line may have ended. */
		if (checked > c->io.in.len)
			checked = 0;
		if (checked == 0 || c->io.in.len >= c->t->lim.max_head ||
		    memchr(tio_bytes(&c->io) + checked - 1, '\n',
			c->io.in.len - checked + 1) != NULL) {
			hlen = trap_parse_head(tio_bytes(&c->io), c->io.in.len,
			    c->t->lim.max_head, r, why);
			if (hlen != 0)
				return hlen;
		}
		checked = c->io.in.len;
		if (deadline != 0 && now_ms() > deadline) {
			record_bad_head(c, "request head took too long");
			return 0;
		}
		if (tio_fill(&c->io) <= 0) {
			if (c->io.in.len > 0)
				record_bad_head(c, "request head cut short");
			return 0;
		}
	}
}

/* A CONNECT: recorded, answered 200, then the tunnel. */
static void
serve_connect(struct conn *c, struct trap_req *r, long hlen)
{
	static const char ok200[] =
	    "HTTP/1.1 200 Connection established\r\n\r\n";
	struct jline j;

	jl_begin(&j, "connect");
	jl_str(&j, "target", r->target, strlen(r->target));
	jl_bytes(&j, "head", tio_bytes(&c->io), (size_t)hlen);
	jl_end(&j);
	(void)trap_log_put(&c->t->log, &j);
	buf_drop(&c->io.in, (size_t)hlen);
	if (tio_write(&c->io, ok200, sizeof(ok200) - 1) == 0)
		tunnel(c, r->target);
}

/*
 * Serves one request: 1 when the connection may carry another, 0 when it
 * is done.
 */
static int
serve_one(struct conn *c)
{
	struct trap_req r;
	struct body b;
	struct jline j;
	const char *why = NULL, *expect;
	long hlen;
	int keep;
	unsigned char *echo; /* with --echo: the head, to answer with */

	hlen = read_head(c, &r, &why);
	if (hlen == 0)
		return 0;
	if (hlen < 0) {
		record_bad_head(c, why);
		respond(c, 400, 0, 0);
		return 0;
	}
	if (strcasecmp(r.method, "CONNECT") == 0 && c->connect == NULL &&
	    !c->tls) {
		serve_connect(c, &r, hlen);
		trap_req_free(&r);
		return 0;
	}
	memset(&b, 0, sizeof(b));
	b.p = malloc(c->t->lim.body_cap + 1);
	jl_begin(&j, "http");
	jl_str(&j, "method", r.method, strlen(r.method));
	jl_str(&j, "target", r.target, strlen(r.target));
	if (r.version != NULL)
		jl_str(&j, "version", r.version, strlen(r.version));
	else
		jl_raw(&j, "version", "null");
	jl_headers(&j, "headers", r.headers, r.nheaders);
	jl_bytes(&j, "head", tio_bytes(&c->io), (size_t)hlen);
	echo = NULL;
	if (echoes(c, r.target) && (echo = malloc((size_t)hlen)) != NULL)
		memcpy(echo, tio_bytes(&c->io), (size_t)hlen);
	buf_drop(&c->io.in, (size_t)hlen);
	/* A client that waits before sending its body gets it sent. */
	expect = http_header_find(r.headers, r.nheaders, "expect");
	if (expect != NULL && strcasecmp(expect, "100-continue") == 0 &&
	    c->io.in.len == 0 && (r.chunked || r.clen > 0)) {
		static const char cont[] = "HTTP/1.1 100 Continue\r\n\r\n";

		(void)tio_write(&c->io, cont, sizeof(cont) - 1);
	}
	if (b.p == NULL)
		b.error = "out of memory";
	else
		read_body(c, &r, &b);
	jl_bytes(&j, "body", b.p ? b.p : (unsigned char *)"", b.len);
	jl_int(&j, "body_bytes", (long long)b.total);
	jl_bool(&j, "truncated", b.total > b.len);
	channel_fields(&j, c);
	if (b.error != NULL)
		jl_str(&j, "error", b.error, strlen(b.error));
	jl_end(&j);
	(void)trap_log_put(&c->t->log, &j);
	keep = !r.close && b.error == NULL;
	if (echo != NULL)
		respond_echo(c, echo, (size_t)hlen, b.p, b.p ? b.len : 0,
		    strcasecmp(r.method, "HEAD") == 0, keep);
	else
		respond(c, 403, strcasecmp(r.method, "HEAD") == 0, keep);
	free(echo);
	free(b.p);
	trap_req_free(&r);
	return keep;
}

static void
serve_requests(struct conn *c)
{
	for (int i = 0; i < TRAP_MAX_REQUESTS; i++)
		if (!serve_one(c))
			break;
}

/* Terminates TLS on the connection, then serves the requests inside. */
static void
serve_tls(struct conn *c, const char *connect)
{
	SSL *ssl;
	BIO *bio;
	struct jline j;
	const char *why, *sni;
	unsigned long e;
	char ebuf[256];

	ssl = SSL_new(trap_tls_ctx(c->t->tls));
	bio = pbio_new(c->io.fd, tio_bytes(&c->io), c->io.in.len);
	if (ssl == NULL || bio == NULL) {
		SSL_free(ssl);
		BIO_free(bio);
		return;
	}
	c->io.in.len = 0;
	SSL_set_bio(ssl, bio, bio);
	SSL_set_app_data(ssl, (void *)(uintptr_t)connect);
	if (SSL_accept(ssl) != 1) {
		e = ERR_peek_last_error();
		if (e != 0) {
			ERR_error_string_n(e, ebuf, sizeof(ebuf));
			why = ebuf;
		} else {
			why = "client closed during the handshake";
		}
		sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
		jl_begin(&j, "tls");
		if (c->sim)
			trap_sim_fields(&j, c->t->sim, c->addr, c->port);
		else
			jl_str(&j, "connect", connect, strlen(connect));
		if (sni != NULL)
			jl_str(&j, "sni", sni, strlen(sni));
		else
			jl_raw(&j, "sni", "null");
		jl_str(&j, "error", why, strlen(why));
		jl_end(&j);
		(void)trap_log_put(&c->t->log, &j);
		ERR_clear_error();
		SSL_free(ssl);
		return;
	}
	c->io.ssl = ssl;
	c->tls = 1;
	c->sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
	if (c->inside != NULL) {
		c->inside(c);
	} else {
		c->connect = connect;
		serve_requests(c);
	}
	(void)SSL_shutdown(ssl);
	ERR_clear_error();
	c->io.ssl = NULL;
	c->sni = NULL;
	SSL_free(ssl);
}

/* Whether the bytes start like a request line: a token, then a space. */
static int
looks_http(const unsigned char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && i < 32 && is_tchar(s[i]); i++)
		;
	return i > 0 && i < n && s[i] == ' ';
}

/* Records the first bytes of a tunnel that is neither TLS nor HTTP. */
static void
record_tunnel(struct conn *c, const char *target)
{
	struct pollfd p = { .fd = c->io.fd, .events = POLLIN };
	struct jline j;
	size_t n;

	while (c->io.in.len < TRAP_RAW_CAP && poll(&p, 1, TUNNEL_QUIET_MS) > 0)
		if (tio_fill(&c->io) <= 0)
			break;
	n = c->io.in.len < TRAP_RAW_CAP ? c->io.in.len : TRAP_RAW_CAP;
	jl_begin(&j, "tunnel");
	jl_str(&j, "connect", target, strlen(target));
	jl_bytes(&j, "data", tio_bytes(&c->io), n);
	jl_int(&j, "data_bytes", (long long)n);
	jl_bool(&j, "truncated", c->io.in.len > n);
	jl_end(&j);
	(void)trap_log_put(&c->t->log, &j);
}

static void sim_dialog(struct conn *c, int ftp);

/* The port of a CONNECT target ("host:port", "[v6]:port"), or 0. */
static int
target_port(const char *target)
{
	const char *colon = strrchr(target, ':');
	char *end;
	long p;

	if (colon == NULL || colon[1] == '\0')
		return 0;
	p = strtol(colon + 1, &end, 10);
	return *end == '\0' && p > 0 && p < 65536 ? (int)p : 0;
}

static void
tunnel(struct conn *c, const char *target)
{
	int port = target_port(target);

	/* SMTP and FTP: the server speaks first, so the trap must too. */
	if (c->io.in.len == 0 &&
	    (port == 21 || port == 25 || port == 587 || port == 2525)) {
		c->connect = target;
		sim_dialog(c, port == 21);
		return;
	}
	if (c->io.in.len == 0 && tio_fill(&c->io) <= 0)
		return;
	if (tio_bytes(&c->io)[0] == 0x16 && c->t->tls != NULL) {
		serve_tls(c, target);
		return;
	}
	if (looks_http(tio_bytes(&c->io), c->io.in.len)) {
		c->connect = target;
		serve_requests(c);
		return;
	}
	record_tunnel(c, target);
}

void
trap_http_handler(struct http_conn *hc, void *ctx)
{
	struct trap *t = ctx;
	struct timeval tv = { .tv_sec = t->lim.idle_ms / 1000,
		.tv_usec = (t->lim.idle_ms % 1000) * 1000 };
	struct conn c;

	if (__atomic_add_fetch(&t->active, 1, __ATOMIC_RELAXED) >
	    t->lim.max_conns) {
		sim_busy(t, hc->fd, 0, 0, 0);
		__atomic_sub_fetch(&t->active, 1, __ATOMIC_RELEASE);
		return;
	}
	(void)setsockopt(hc->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(hc->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	memset(&c, 0, sizeof(c));
	c.t = t;
	c.io.fd = hc->fd;
	if (tio_fill(&c.io) > 0) {
		if (tio_bytes(&c.io)[0] == 0x16 && t->tls != NULL)
			serve_tls(&c, "");
		else
			serve_requests(&c);
	}
	buf_free(&c.io.in);
	__atomic_sub_fetch(&t->active, 1, __ATOMIC_RELEASE);
}

/* ---- the simulated internet ---- */

#define SIM_QUIET_MS  1000 /* a raw stream: end of the client's burst */
#define FTP_DATA_PORT 2121 /* where PASV and EPSV send the data */

static void
set_rcvtimeo(int fd, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000,
		.tv_usec = (ms % 1000) * 1000 };

	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* One "tcp" record: what the client sent on a connection that is not HTTP. */
static void
sim_record(struct conn *c, const char *proto, const struct body *b)
{
	struct jline j;

	jl_begin(&j, "tcp");
	channel_fields(&j, c);
	jl_str(&j, "proto", proto, strlen(proto));
	jl_bytes(&j, "data", b->p ? b->p : (unsigned char *)"", b->len);
	jl_int(&j, "data_bytes", (long long)b->total);
	jl_bool(&j, "truncated", b->total > b->len);
	if (b->error != NULL)
		jl_str(&j, "error", b->error, strlen(b->error));
	jl_end(&j);
	(void)trap_log_put(&c->t->log, &j);
}

/*
 * Reads whatever the client sends until it closes, falls quiet for
 * SIM_QUIET_MS after its first bytes (first: the wait for those), or
 * passes TRAP_DISCARD_MAX; records it as "raw".
 */
static void
sim_raw(struct conn *c, int first_ms)
{
	struct body b;

	memset(&b, 0, sizeof(b));
	b.p = malloc(c->t->lim.body_cap + 1);
	if (b.p == NULL)
		b.error = "out of memory";
	set_rcvtimeo(c->io.fd, first_ms);
	for (;;) {
		if (c->io.in.len > 0) {
			if (b.p != NULL)
				body_add(&b, tio_bytes(&c->io), c->io.in.len,
				    c->t->lim.body_cap);
			else
				b.total += c->io.in.len;
			c->io.in.len = 0;
			set_rcvtimeo(c->io.fd, SIM_QUIET_MS);
		}
		if (b.total >= TRAP_DISCARD_MAX) {
			b.error = "stream over 64 MiB, not read further";
			break;
		}
		if (tio_fill(&c->io) <= 0)
			break;
	}
	sim_record(c, "raw", &b);
	free(b.p);
}

/*
 * The length of the next line at the start of the buffer (LF included); 0
 * at the end. A line longer than max_head is cut there.
 */
static size_t
sim_line(struct conn *c)
{
	unsigned char *nl;

	for (;;) {
		nl = c->io.in.len > 0 ?
		    memchr(tio_bytes(&c->io), '\n', c->io.in.len) :
		    NULL;
		if (nl != NULL)
			return (size_t)(nl - tio_bytes(&c->io)) + 1;
		if (c->io.in.len >= c->t->lim.max_head)
			return c->io.in.len;
		if (tio_fill(&c->io) <= 0)
			return c->io.in.len;
	}
}

/* Whether line (no CRLF) starts with verb, then ends or has a space. */
static int
verb_is(const char *line, const char *verb)
{
	size_t n = strlen(verb);

	return strncasecmp(line, verb, n) == 0 &&
	    (line[n] == '\0' || line[n] == ' ');
}

struct dialog {
	int data; /* SMTP: inside DATA */
	int auth; /* SMTP: AUTH lines still to answer */
	int end;
};

/* SMTP (RFC 5321), accepting: every message is recorded, none goes on. */
static void
smtp_reply(struct dialog *d, const char *line, const char *name, char *r,
    size_t rlen)
{
	const char *arg = strchr(line, ' ');

	if (d->data) {
		if (strcmp(line, ".") == 0) {
			d->data = 0;
			snprintf(r, rlen, "250 2.0.0 OK: queued\r\n");
		}
		return;
	}
	if (d->auth > 0) {
		d->auth--;
		snprintf(r, rlen, "%s\r\n",
		    d->auth > 0 ? "334 UGFzc3dvcmQ6" :
				  "235 2.7.0 Authentication successful");
		return;
	}
	if (verb_is(line, "EHLO"))
		snprintf(r, rlen,
		    "250-%s\r\n250-AUTH PLAIN LOGIN\r\n250-8BITMIME\r\n"
		    "250 SIZE 67108864\r\n",
		    name);
	else if (verb_is(line, "HELO"))
		snprintf(r, rlen, "250 %s\r\n", name);
	else if (verb_is(line, "MAIL") || verb_is(line, "RCPT") ||
	    verb_is(line, "RSET") || verb_is(line, "NOOP"))
		snprintf(r, rlen, "250 2.0.0 OK\r\n");
	else if (verb_is(line, "DATA")) {
		d->data = 1;
		snprintf(r, rlen, "354 End data with <CR><LF>.<CR><LF>\r\n");
	} else if (verb_is(line, "AUTH") && arg != NULL) {
		const char *more = strchr(arg + 1, ' ');

		if (strncasecmp(arg + 1, "PLAIN", 5) == 0) {
			d->auth = more ? 0 : 1;
			snprintf(r, rlen, "%s\r\n",
			    more ? "235 2.7.0 Authentication successful" :
				   "334 ");
		} else if (strncasecmp(arg + 1, "LOGIN", 5) == 0) {
			d->auth = more ? 1 : 2;
			snprintf(r, rlen, "%s\r\n",
			    more ? "334 UGFzc3dvcmQ6" : "334 VXNlcm5hbWU6");
		} else {
			snprintf(r, rlen,
			    "504 5.5.4 Unrecognized "
			    "authentication type\r\n");
		}
	} else if (verb_is(line, "QUIT")) {
		d->end = 1;
		snprintf(r, rlen, "221 2.0.0 Bye\r\n");
	} else {
		snprintf(r, rlen, "502 5.5.2 Command not recognized\r\n");
	}
}

/*
 * FTP (RFC 959), accepting; data connections go to FTP_DATA_PORT of the
 * same address, where the trap records them as raw streams.
 */
static void
ftp_reply(struct dialog *d, const struct conn *c, const char *line, char *r,
    size_t rlen)
{
	if (verb_is(line, "USER"))
		snprintf(r, rlen, "331 Password required\r\n");
	else if (verb_is(line, "PASS"))
		snprintf(r, rlen, "230 Logged in\r\n");
	else if (verb_is(line, "SYST"))
		snprintf(r, rlen, "215 UNIX Type: L8\r\n");
	else if (verb_is(line, "PWD") || verb_is(line, "XPWD"))
		snprintf(r, rlen, "257 \"/\"\r\n");
	else if (verb_is(line, "CWD") || verb_is(line, "CDUP") ||
	    verb_is(line, "MKD") || verb_is(line, "DELE"))
		snprintf(r, rlen, "250 OK\r\n");
	else if (verb_is(line, "TYPE") || verb_is(line, "MODE") ||
	    verb_is(line, "STRU") || verb_is(line, "NOOP"))
		snprintf(r, rlen, "200 OK\r\n");
	else if (verb_is(line, "FEAT"))
		snprintf(r, rlen,
		    "211-Features:\r\n EPSV\r\n PASV\r\n211 End\r\n");
	else if (verb_is(line, "EPSV"))
		snprintf(r, rlen,
		    "229 Entering Extended Passive Mode (|||%d|)\r\n",
		    FTP_DATA_PORT);
	else if (verb_is(line, "PASV"))
		snprintf(r, rlen,
		    "227 Entering Passive Mode (%u,%u,%u,%u,%d,%d)\r\n",
		    (unsigned)(c->addr >> 24), (unsigned)(c->addr >> 16 & 255),
		    (unsigned)(c->addr >> 8 & 255), (unsigned)(c->addr & 255),
		    FTP_DATA_PORT >> 8, FTP_DATA_PORT & 255);
	else if (verb_is(line, "STOR") || verb_is(line, "APPE") ||
	    verb_is(line, "STOU") || verb_is(line, "RETR") ||
	    verb_is(line, "LIST") || verb_is(line, "NLST"))
		snprintf(r, rlen,
		    "150 Opening data connection\r\n226 Transfer complete\r\n");
	else if (verb_is(line, "QUIT")) {
		d->end = 1;
		snprintf(r, rlen, "221 Bye\r\n");
	} else
		snprintf(r, rlen, "502 Command not implemented\r\n");
}

/*
 * A protocol where the server speaks first: the banner, then a reply to
 * each line, until QUIT, the end or the idle timeout. Every byte the
 * client sent is recorded as one "tcp" record of proto "smtp" or "ftp".
 */
static void
sim_dialog(struct conn *c, int ftp)
{
	char name[DNS_NAME_MAX], line[512], reply[1200];
	struct dialog d = { 0, 0, 0 };
	struct body b;
	size_t n, ll;

	memset(&b, 0, sizeof(b));
	b.p = malloc(c->t->lim.body_cap + 1);
	if (b.p == NULL)
		return;
	if (c->connect != NULL) {
		/* The CONNECT target's host. */
		size_t hl = strcspn(c->connect, ":");

		snprintf(name, sizeof(name), "%.*s", hl > 253 ? 253 : (int)hl,
		    c->connect);
	} else if (c->t->sim == NULL ||
	    trap_sim_name(c->t->sim, c->addr, name, sizeof(name)) < 0 ||
	    strlen(name) > 253) {
		snprintf(name, sizeof(name), "leakbench.test");
	}
	n = (size_t)snprintf(reply, sizeof(reply), "220 %s %s ready\r\n", name,
	    ftp ? "FTP" : "ESMTP");
	if (tio_write(&c->io, reply, n) < 0)
		goto out;
	while (!d.end && (n = sim_line(c)) > 0) {
		body_add(&b, tio_bytes(&c->io), n, c->t->lim.body_cap);
		ll = n < sizeof(line) ? n : sizeof(line) - 1;
		memcpy(line, tio_bytes(&c->io), ll);
		line[ll] = '\0';
		line[strcspn(line, "\r\n")] = '\0';
		buf_drop(&c->io.in, n);
		reply[0] = '\0';
		if (ftp)
			ftp_reply(&d, c, line, reply, sizeof(reply));
		else
			smtp_reply(&d, line, name, reply, sizeof(reply));
		if (reply[0] != '\0' &&
		    tio_write(&c->io, reply, strlen(reply)) < 0)
			break;
		if (b.total >= TRAP_DISCARD_MAX) {
			b.error = "stream over 64 MiB, not read further";
			break;
		}
	}
	sim_record(c, ftp ? "ftp" : "smtp", &b);
out:
	free(b.p);
}

/*
 * Whether the server speaks first on this port (SMTP, FTP; over TLS, the
 * implicit-TLS ports).
 */
static int
server_first(const struct conn *c, int *ftp)
{
	int p = c->port;

	*ftp = p == 21 || p == 990;
	if (c->tls)
		return p == 465 || p == 990;
	return p == 21 || p == 25 || p == 587 || p == 2525;
}

/*
 * Whether a stream that nobody asked to be HTTP starts like HTTP: a known
 * method, or a first line that ends in " HTTP/1.x". Stricter than
 * looks_http, since "word space" is also how plain text starts.
 */
static int
sim_looks_http(const unsigned char *s, size_t n)
{
	static const char *const methods[] = { "GET ", "POST ", "PUT ", "HEAD ",
		"DELETE ", "OPTIONS ", "PATCH ", "TRACE ", "CONNECT ",
		"PROPFIND ", NULL };
	const unsigned char *nl;
	size_t i, ll;

	if (!looks_http(s, n))
		return 0;
	for (i = 0; methods[i] != NULL; i++)
		if (n >= strlen(methods[i]) &&
		    memcmp(s, methods[i], strlen(methods[i])) == 0)
			return 1;
	nl = memchr(s, '\n', n);
	if (nl == NULL)
		return 0;
	ll = (size_t)(nl - s);
	if (ll > 0 && s[ll - 1] == '\r')
		ll--;
	return ll >= 9 && memcmp(s + ll - 9, " HTTP/1.", 8) == 0;
}

static void
sim_serve(struct conn *c)
{
	char hostport[DNS_NAME_MAX + 16], name[DNS_NAME_MAX];
	struct in_addr a = { .s_addr = htonl(c->addr) };
	int ftp;

	if (server_first(c, &ftp) && c->io.in.len == 0) {
		sim_dialog(c, ftp);
		return;
	}
	set_rcvtimeo(c->io.fd,
	    c->port == FTP_DATA_PORT ? SIM_QUIET_MS : c->t->lim.idle_ms);
	if (c->io.in.len == 0 && tio_fill(&c->io) <= 0) {
		sim_raw(c, SIM_QUIET_MS);
		return;
	}
	set_rcvtimeo(c->io.fd, c->t->lim.idle_ms);
	if (!c->tls && tio_bytes(&c->io)[0] == 0x16 && c->t->tls != NULL) {
		if (trap_sim_name(c->t->sim, c->addr, name, sizeof(name)) < 0)
			inet_ntop(AF_INET, &a, name, sizeof(name));
		snprintf(hostport, sizeof(hostport), "%s:%d", name, c->port);
		c->inside = sim_serve;
		serve_tls(c, hostport);
		return;
	}
	if (sim_looks_http(tio_bytes(&c->io), c->io.in.len)) {
		serve_requests(c);
		return;
	}
	sim_raw(c, SIM_QUIET_MS);
}

/*
 * A connection over the concurrency cap: still recorded, so that a flood
 * of idle connections cannot hide the one that carries a secret. What the
 * client sends within SIM_QUIET_MS, up to TRAP_RAW_CAP bytes, goes into a
 * "busy" record (with sim: and the address it was meant for); then it is
 * closed. Used by the proxy port too.
 */
static void
sim_busy(struct trap *t, int fd, int sim, uint32_t addr, int port)
{
	unsigned char *buf = malloc(TRAP_RAW_CAP);
	size_t n = 0;
	ssize_t r;
	struct jline j;

	set_rcvtimeo(fd, SIM_QUIET_MS);
	while (buf != NULL && n < TRAP_RAW_CAP &&
	    (r = recv(fd, buf + n, TRAP_RAW_CAP - n, 0)) > 0)
		n += (size_t)r;
	jl_begin(&j, "busy");
	jl_int(&j, "max_conns", t->lim.max_conns);
	if (sim)
		trap_sim_fields(&j, t->sim, addr, port);
	jl_bytes(&j, "data", buf ? buf : (unsigned char *)"", n);
	jl_int(&j, "data_bytes", (long long)n);
	jl_bool(&j, "truncated", n >= TRAP_RAW_CAP);
	jl_end(&j);
	(void)trap_log_put(&t->log, &j);
	free(buf);
}

void
trap_sim_tcp_handler(struct http_conn *hc, void *ctx)
{
	struct trap *t = ctx;
	struct sockaddr_in local;
	socklen_t sl = sizeof(local);
	struct conn c;

	memset(&local, 0, sizeof(local));
	(void)getsockname(hc->fd, (struct sockaddr *)&local, &sl);
	if (__atomic_add_fetch(&t->active, 1, __ATOMIC_RELAXED) >
	    t->lim.max_conns) {
		sim_busy(t, hc->fd, 1, ntohl(local.sin_addr.s_addr),
		    ntohs(local.sin_port));
		__atomic_sub_fetch(&t->active, 1, __ATOMIC_RELEASE);
		return;
	}
	memset(&c, 0, sizeof(c));
	c.t = t;
	c.io.fd = hc->fd;
	c.sim = 1;
	c.addr = ntohl(local.sin_addr.s_addr);
	c.port = ntohs(local.sin_port);
	{
		struct timeval tv = { .tv_sec = t->lim.idle_ms / 1000,
			.tv_usec = (t->lim.idle_ms % 1000) * 1000 };

		(void)setsockopt(hc->fd, SOL_SOCKET, SO_SNDTIMEO, &tv,
		    sizeof(tv));
	}
	sim_serve(&c);
	buf_free(&c.io.in);
	__atomic_sub_fetch(&t->active, 1, __ATOMIC_RELEASE);
}

void
trap_fini(struct trap *t)
{
	trap_log_finish(&t->log);
	trap_log_close(&t->log);
	trap_tls_free(t->tls);
	t->tls = NULL;
}
