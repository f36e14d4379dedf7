/*
 * End-to-end tests of the recording proxy over real loopback sockets, in
 * one process: a test upstream (built on http.c) that remembers every
 * request it gets, proxies (proxy.c) in front of it in each credential
 * mode, a TLS front for the upstream (OpenSSL, with a CA made at test time
 * by the openssl CLI), and raw-socket clients. What is checked is what the
 * upstream received, what the client received, and what the records say.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <zlib.h>

#include "common/http.h"
#include "proxy/proxy.h"
#include "tap.h"

extern char **environ;

static char tmp[64]; /* this run's scratch directory */

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
bail(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

/* ---- the test upstream ---- */

struct seen {
	char *method, *target;
	char *headers; /* "name: value\n" lines, as received */
	unsigned char *body;
	size_t len;
};

static pthread_mutex_t seen_mu = PTHREAD_MUTEX_INITIALIZER;
static struct seen seen[4096];
static int nseen;
static sem_t sse_go;	       /* lets /sse send its second event */
static int sse_waited;	       /* 1: got the go; -1: timed out */
static unsigned char *gz_resp; /* the /gzipped response body */
static size_t gz_resp_len;

static void
remember(const struct http_request *req)
{
	struct seen *s;
	size_t i, n = 0;

	pthread_mutex_lock(&seen_mu);
	if (nseen < (int)(sizeof(seen) / sizeof(seen[0]))) {
		s = &seen[nseen++];
		s->method = strdup(req->method);
		s->target = strdup(req->target);
		for (i = 0; i < req->nheaders; i++)
			n += strlen(req->headers[i].name) +
			    strlen(req->headers[i].value) + 3;
		s->headers = calloc(1, n + 1);
		for (i = 0; i < req->nheaders; i++) {
			strcat(s->headers, req->headers[i].name);
			strcat(s->headers, ": ");
			strcat(s->headers, req->headers[i].value);
			strcat(s->headers, "\n");
		}
		s->body = malloc(req->body_len + 1);
		memcpy(s->body, req->body, req->body_len + 1);
		s->len = req->body_len;
	}
	pthread_mutex_unlock(&seen_mu);
}

/* The last request the upstream saw for target (a copy of the pointer). */
static struct seen *
seen_for(const char *target)
{
	struct seen *r = NULL;

	pthread_mutex_lock(&seen_mu);
	for (int i = nseen - 1; i >= 0 && r == NULL; i--)
		if (strcmp(seen[i].target, target) == 0)
			r = &seen[i];
	pthread_mutex_unlock(&seen_mu);
	return r;
}

/* How many times header `name:` (any case) occurs in a seen request. */
static int
header_count(const struct seen *s, const char *name)
{
	const char *p = s->headers;
	size_t nl = strlen(name);
	int n = 0;

	while (p && *p) {
		if (strncasecmp(p, name, nl) == 0 && p[nl] == ':')
			n++;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return n;
}

/* The value of header name in a seen request; a thread's copy or NULL. */
static const char *
header_value(const struct seen *s, const char *name)
{
	static _Thread_local char v[4096];
	const char *p = s->headers, *e;
	size_t nl = strlen(name);

	while (p && *p) {
		if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			e = strchr(p, '\n');
			snprintf(v, sizeof(v), "%.*s", (int)(e - p - nl - 2),
			    p + nl + 2);
			return v;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static void
put(int fd, const char *s)
{
	(void)http_write_all(fd, s, strlen(s));
}

static void
put_chunk(int fd, const char *s)
{
	char h[32];

	snprintf(h, sizeof(h), "%zx\r\n", strlen(s));
	put(fd, h);
	put(fd, s);
	put(fd, "\r\n");
}

/* Serves the upstream's routes; see the file's head comment. */
static void
upstream(struct http_conn *c, void *ctx)
{
	struct http_limits lim = { 0 };
	struct http_request req;
	int ka;

	(void)ctx;
	while (http_read_request(c, &req, &lim) == HTTP_OK) {
		remember(&req);
		ka = req.keep_alive;
		if (strcmp(req.path, "/sse") == 0) {
			struct timespec dl;

			put(c->fd,
			    "HTTP/1.1 200 OK\r\nContent-Type: "
			    "text/event-stream\r\nTransfer-Encoding: "
			    "chunked\r\n"
			    "\r\n");
			put_chunk(c->fd,
			    "event: message_start\ndata: {\"type\":"
			    "\"message_start\"}\n\n");
			clock_gettime(CLOCK_REALTIME, &dl);
			dl.tv_sec += 30; /* a guard: posted at once normally */
			sse_waited = sem_timedwait(&sse_go, &dl) == 0 ? 1 : -1;
			put_chunk(c->fd,
			    "event: message_stop\ndata: {\"type\":"
			    "\"message_stop\"}\n\n");
			put(c->fd, "0\r\n\r\n");
		} else if (strncmp(req.path, "/status/", 8) == 0) {
			int st = atoi(req.path + 8);
			const char *b =
			    "{\"type\":\"error\",\"error\":{\"type\":"
			    "\"overloaded_error\",\"message\":\"Overloaded\"}}";

			http_respond(c->fd, st, "application/json", NULL, b,
			    strlen(b), ka);
		} else if (strncmp(req.path, "/bytes/", 7) == 0) {
			/* A response of N bytes to a small request. */
			size_t n = strtoul(req.path + 7, NULL, 10);
			char *b = malloc(n + 1);

			memset(b, 'r', n);
			http_respond(c->fd, 200, "text/plain", NULL, b, n, ka);
			free(b);
		} else if (strcmp(req.path, "/gzipped") == 0) {
			http_respond(c->fd, 200, "application/json",
			    "Content-Encoding: gzip\r\n", gz_resp, gz_resp_len,
			    ka);
		} else if (strcmp(req.path, "/close-delimited") == 0) {
			put(c->fd,
			    "HTTP/1.0 200 OK\r\nContent-Type: text/plain"
			    "\r\n\r\nuntil the end");
			ka = 0;
		} else if (strcmp(req.path, "/cut") == 0) {
			put(c->fd,
			    "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n"
			    "\r\n0123456789");
			ka = 0;
		} else if (strcmp(req.path, "/hang") == 0) {
			/* Says nothing for 3 s, then answers. */
			poll(NULL, 0, 3000);
			http_respond(c->fd, 200, "text/plain", NULL, "late", 4,
			    ka);
		} else if (strcmp(req.path, "/chunks") == 0) {
			put(c->fd,
			    "HTTP/1.1 200 OK\r\nTransfer-Encoding: "
			    "chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world"
			    "\r\n0\r\nX-Trailer: t\r\n\r\n");
		} else if (strcmp(req.path, "/cl-and-te") == 0) {
			put(c->fd,
			    "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n"
			    "Transfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0"
			    "\r\n\r\n");
			ka = 0;
		} else if (strcmp(req.path, "/badchunks") == 0) {
			put(c->fd,
			    "HTTP/1.1 200 OK\r\nTransfer-Encoding: "
			    "chunked\r\n\r\n5\r\nhelloXX\r\n0\r\n\r\n");
			ka = 0;
		} else if (strcmp(req.path, "/hop") == 0) {
			http_respond(c->fd, 200, "text/plain",
			    "Keep-Alive: "
			    "timeout=5\r\nX-Upstream: yes\r\nSet-Cookie: "
			    "a=b\r\n"
			    "Upgrade: h2c\r\n",
			    "hop", 3, ka);
		} else if (strcmp(req.method, "HEAD") == 0) {
			put(c->fd,
			    "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n"
			    "\r\n");
		} else {
			http_respond(c->fd, 200, "application/octet-stream",
			    "X-Upstream: yes\r\n", req.body, req.body_len, ka);
		}
		http_request_free(&req);
		if (!ka)
			break;
	}
}

struct server {
	int lfd, port;
	pthread_t tid;
	http_handler *h;
	void *ctx;
	int max; /* connections; 0: no cap */
};

static void *
serve_main(void *p)
{
	struct server *s = p;

	http_serve_max(s->lfd, s->max, s->h, s->ctx,
	    s->max ? proxy_on_full : NULL);
	return NULL;
}

static void
server_start(struct server *s, http_handler *h, void *ctx)
{
	char err[256];

	s->h = h;
	s->ctx = ctx;
	s->lfd = http_listen("127.0.0.1:0", &s->port, err, sizeof(err));
	if (s->lfd < 0) {
		printf("Bail out! %s\n", err);
		exit(1);
	}
	pthread_create(&s->tid, NULL, serve_main, s);
}

/* ---- TLS in front of the upstream ---- */

static SSL_CTX *tls;
static int tls_target; /* the plain upstream's port */

static int
dial(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	/* Only a guard against a hang: under sanitizers on a loaded machine
	 * 20 concurrent clients took longer than 10 s once. */
	struct timeval tv = { .tv_sec = 60 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		bail("cannot connect");
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Relays one TLS connection to the plain upstream, both ways. */
static void
tls_relay(struct http_conn *c, void *ctx)
{
	SSL *s = SSL_new(tls);
	char buf[65536];
	struct pollfd p[2];
	int up, n;

	(void)ctx;
	SSL_set_fd(s, c->fd);
	if (SSL_accept(s) <= 0) {
		SSL_free(s);
		return;
	}
	up = dial(tls_target);
	p[0].fd = c->fd;
	p[1].fd = up;
	p[0].events = p[1].events = POLLIN;
	for (;;) {
		if (SSL_pending(s) == 0 && poll(p, 2, 10000) <= 0)
			break;
		if (SSL_pending(s) > 0 || (p[0].revents & (POLLIN | POLLHUP))) {
			n = SSL_read(s, buf, sizeof(buf));
			if (n <= 0 || http_write_all(up, buf, (size_t)n) < 0)
				break;
		}
		if (p[1].revents & (POLLIN | POLLHUP)) {
			n = (int)read(up, buf, sizeof(buf));
			if (n <= 0 || SSL_write(s, buf, n) <= 0)
				break;
		}
		p[0].revents = p[1].revents = 0;
	}
	SSL_shutdown(s);
	SSL_free(s);
	close(up);
}

/* Runs argv (no shell) with output discarded; its exit status. */
static int
run(const char *const argv[])
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st = -1;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, (char *const *)argv,
		environ) != 0)
		return -1;
	posix_spawn_file_actions_destroy(&fa);
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void
write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0 || http_write_all(fd, data, len) < 0)
		bail(path);
	close(fd);
}

/* Makes a CA and a server certificate for 127.0.0.1 with the openssl CLI. */
static int
make_certs(void)
{
	char cakey[128], ca[128], key[128], csr[128], crt[128], ext[128];
	int rc = 0;

	snprintf(cakey, sizeof(cakey), "%s/ca.key", tmp);
	snprintf(ca, sizeof(ca), "%s/ca.pem", tmp);
	snprintf(key, sizeof(key), "%s/srv.key", tmp);
	snprintf(csr, sizeof(csr), "%s/srv.csr", tmp);
	snprintf(crt, sizeof(crt), "%s/srv.pem", tmp);
	snprintf(ext, sizeof(ext), "%s/ext.cnf", tmp);
	write_file(ext, "subjectAltName=IP:127.0.0.1,DNS:localhost\n", 42);
	{
		const char *a[] = { "openssl", "req", "-x509", "-newkey", "ec",
			"-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
			"-keyout", cakey, "-out", ca, "-days", "2", "-subj",
			"/CN=leakbench test CA", NULL };
		rc |= run(a);
	}
	{
		const char *a[] = { "openssl", "req", "-new", "-newkey", "ec",
			"-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
			"-keyout", key, "-out", csr, "-subj", "/CN=127.0.0.1",
			NULL };
		rc |= run(a);
	}
	{
		const char *a[] = { "openssl", "x509", "-req", "-in", csr,
			"-CA", ca, "-CAkey", cakey, "-CAcreateserial", "-out",
			crt, "-days", "2", "-extfile", ext, NULL };
		rc |= run(a);
	}
	if (rc != 0)
		return -1;
	tls = SSL_CTX_new(TLS_server_method());
	if (SSL_CTX_use_certificate_file(tls, crt, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_use_PrivateKey_file(tls, key, SSL_FILETYPE_PEM) != 1)
		return -1;
	return 0;
}

/* ---- proxies under test ---- */

struct tproxy {
	struct proxy p;
	struct server s;
	char dir[128]; /* records */
	char log[128]; /* log lines */
};

static void
proxy_start_cfg(struct tproxy *t, const char *name, const char *upstream_url,
    const char *cred, struct proxy_config *cfg)
{
	char err[512], credfile[128];

	snprintf(t->dir, sizeof(t->dir), "%s/%s", tmp, name);
	snprintf(t->log, sizeof(t->log), "%s/%s.log", tmp, name);
	cfg->upstream = upstream_url;
	cfg->records = t->dir;
	cfg->log_fd = open(t->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (cred != NULL) {
		snprintf(credfile, sizeof(credfile), "%s/%s.cred", tmp, name);
		write_file(credfile, cred, strlen(cred));
		cfg->credential_file = credfile;
	}
	if (proxy_init(&t->p, cfg, err, sizeof(err)) < 0) {
		printf("Bail out! %s\n", err);
		exit(1);
	}
	t->s.max = cfg->max_conns;
	server_start(&t->s, proxy_handler, &t->p);
}

static void
proxy_start(struct tproxy *t, const char *name, const char *upstream_url,
    const char *cred, const char *ca, double client_timeout,
    double upstream_timeout)
{
	struct proxy_config cfg = { 0 };
	char err[512], credfile[128];

	snprintf(t->dir, sizeof(t->dir), "%s/%s", tmp, name);
	snprintf(t->log, sizeof(t->log), "%s/%s.log", tmp, name);
	cfg.upstream = upstream_url;
	cfg.records = t->dir;
	cfg.ca_file = ca;
	cfg.client_timeout = client_timeout;
	cfg.upstream_timeout = upstream_timeout;
	cfg.log_fd = open(t->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (cred != NULL) {
		snprintf(credfile, sizeof(credfile), "%s/%s.cred", tmp, name);
		write_file(credfile, cred, strlen(cred));
		cfg.credential_file = credfile;
	}
	if (proxy_init(&t->p, &cfg, err, sizeof(err)) < 0) {
		printf("Bail out! %s\n", err);
		exit(1);
	}
	server_start(&t->s, proxy_handler, &t->p);
}

/* ---- the client side ---- */

struct rbuf {
	unsigned char buf[1 << 20];
	size_t len;
};

static int
rb_fill(int fd, struct rbuf *rb)
{
	ssize_t n;

	if (rb->len == sizeof(rb->buf))
		return -1;
	n = read(fd, rb->buf + rb->len, sizeof(rb->buf) - rb->len);
	if (n <= 0)
		return -1;
	rb->len += (size_t)n;
	return 0;
}

static void
rb_drop(struct rbuf *rb, size_t n)
{
	memmove(rb->buf, rb->buf + n, rb->len - n);
	rb->len -= n;
}

struct cresp {
	int status;
	char *head;
	unsigned char *body;
	size_t len;
	int chunked, complete;
};

static void
cresp_free(struct cresp *r)
{
	free(r->head);
	free(r->body);
	memset(r, 0, sizeof(*r));
}

static void
body_add(struct cresp *r, const unsigned char *p, size_t n)
{
	r->body = realloc(r->body, r->len + n + 1);
	memcpy(r->body + r->len, p, n);
	r->len += n;
	r->body[r->len] = '\0';
}

/*
 * A header's value in a response head; a copy of this thread's own or
 * NULL. Thread-local: the concurrency test's 20 clients parse responses at
 * once, and one shared copy let a client read another's Content-Length
 * (a short read left the rest of a body to pass for the next head).
 */
static const char *
resp_header(const struct cresp *r, const char *name)
{
	static _Thread_local char v[1024];
	const char *p = r->head;
	size_t nl = strlen(name);

	while ((p = strstr(p, "\r\n")) != NULL) {
		p += 2;
		if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			const char *e = strstr(p, "\r\n");

			snprintf(v, sizeof(v), "%.*s", (int)(e - p - nl - 2),
			    p + nl + 2);
			return v;
		}
	}
	return NULL;
}

/*
 * Reads one response: Content-Length, chunked, or up to EOF. 100
 * Continue interim responses are skipped. complete says whether the body
 * was whole.
 */
static void
read_response(int fd, struct rbuf *rb, struct cresp *r, int head_only)
{
	unsigned char *he;
	const char *cl, *te;
	size_t hl;

	memset(r, 0, sizeof(*r));
	r->status = -1;
	r->body = calloc(1, 1);
again:
	while ((he = memmem(rb->buf, rb->len, "\r\n\r\n", 4)) == NULL)
		if (rb_fill(fd, rb) < 0)
			return;
	hl = (size_t)(he - rb->buf) + 4;
	free(r->head);
	r->head = strndup((char *)rb->buf, hl);
	sscanf(r->head, "HTTP/1.1 %d", &r->status);
	rb_drop(rb, hl);
	if (r->status == 100)
		goto again;
	if (head_only) {
		r->complete = 1;
		return;
	}
	te = resp_header(r, "transfer-encoding");
	if (te != NULL && strcasecmp(te, "chunked") == 0) {
		r->chunked = 1;
		for (;;) {
			unsigned char *nl;
			size_t sz, n;

			while ((nl = memchr(rb->buf, '\n', rb->len)) == NULL)
				if (rb_fill(fd, rb) < 0)
					return;
			sz = strtoul((char *)rb->buf, NULL, 16);
			rb_drop(rb, (size_t)(nl - rb->buf) + 1);
			if (sz == 0) {
				/* Trailers, up to the empty line. */
				for (;;) {
					while ((nl = memchr(rb->buf, '\n',
						    rb->len)) == NULL)
						if (rb_fill(fd, rb) < 0)
							return;
					n = (size_t)(nl - rb->buf) + 1;
					rb_drop(rb, n);
					if (n <= 2) {
						r->complete = 1;
						return;
					}
				}
			}
			while (rb->len < sz + 2)
				if (rb_fill(fd, rb) < 0)
					return;
			body_add(r, rb->buf, sz);
			rb_drop(rb, sz + 2);
			if (sz == 0) {
				r->complete = 1;
				return;
			}
		}
	}
	cl = resp_header(r, "content-length");
	if (cl != NULL) {
		size_t want = strtoul(cl, NULL, 10), take;
		ssize_t k;

		take = want < rb->len ? want : rb->len;
		body_add(r, rb->buf, take);
		rb_drop(rb, take);
		/* The rest straight into the body: it may be large. */
		r->body = realloc(r->body, want + 1);
		while (r->len < want) {
			k = read(fd, r->body + r->len, want - r->len);
			if (k <= 0)
				break;
			r->len += (size_t)k;
		}
		r->body[r->len] = '\0';
		r->complete = r->len == want;
		return;
	}
	while (rb_fill(fd, rb) == 0)
		;
	body_add(r, rb->buf, rb->len);
	rb_drop(rb, rb->len);
	r->complete = 1;
}

static struct rbuf rb_main;

/* One request on a fresh connection; the response in *r. */
static void
request(int port, const void *raw, size_t n, struct cresp *r)
{
	int fd = dial(port);

	rb_main.len = 0;
	(void)http_write_all(fd, raw, n ? n : strlen(raw));
	read_response(fd, &rb_main, r, 0);
	close(fd);
}

/* "POST target" with body and extra header lines, on a fresh connection. */
static void
post(int port, const char *target, const char *extra, const void *body,
    size_t len, struct cresp *r)
{
	char *head = NULL;
	int hl;
	unsigned char *all;

	hl = asprintf(&head,
	    "POST %s HTTP/1.1\r\nHost: client.example\r\n"
	    "%sContent-Length: %zu\r\n\r\n",
	    target, extra ? extra : "", len);
	all = malloc((size_t)hl + len);
	memcpy(all, head, (size_t)hl);
	memcpy(all + hl, body, len);
	request(port, all, (size_t)hl + len, r);
	free(all);
	free(head);
}

/* ---- records ---- */

/* Every line of DIR/wire.jsonl, parsed; a new array. */
static json_t *
records(const char *dir)
{
	char path[256];
	json_t *arr = json_array();
	FILE *f;
	char *line = NULL;
	size_t cap = 0;

	snprintf(path, sizeof(path), "%s/wire.jsonl", dir);
	f = fopen(path, "r");
	if (f == NULL)
		return arr;
	while (getline(&line, &cap, f) > 0) {
		json_error_t e;
		json_t *j = json_loads(line, JSON_ALLOW_NUL, &e);

		json_array_append_new(arr, j ? j : json_null());
	}
	free(line);
	fclose(f);
	return arr;
}

/* The last record for target; a new reference or NULL. */
static json_t *
record_for(const char *dir, const char *target)
{
	json_t *arr = records(dir), *r = NULL, *v;
	size_t i;

	json_array_foreach(arr, i, v)
	{
		const char *t = json_string_value(json_object_get(v, "target"));

		if (t != NULL && strcmp(t, target) == 0)
			r = v;
	}
	json_incref(r);
	json_decref(arr);
	return r;
}

static const char *
rs(json_t *rec, const char *key)
{
	return json_string_value(json_object_get(rec, key));
}

static long long
ri(json_t *rec, const char *key)
{
	return json_integer_value(json_object_get(rec, key));
}

/* Decodes base64 (test helper; trusts its input). */
static unsigned char *
unb64(const char *s, size_t *n)
{
	static const char t[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t l = strlen(s), i, o = 0;
	unsigned char *out = malloc(l / 4 * 3 + 1);
	unsigned v = 0;
	int bits = 0;

	for (i = 0; i < l && s[i] != '='; i++) {
		v = (v << 6) | (unsigned)(strchr(t, s[i]) - t);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(v >> bits);
		}
	}
	*n = o;
	return out;
}

/* The response file of a record, read whole; malloc'd, length in *n. */
static unsigned char *
response_file(const char *dir, json_t *rec, size_t *n)
{
	char path[256];
	unsigned char *buf = malloc(1 << 22);
	int fd;
	ssize_t k;

	*n = 0;
	snprintf(path, sizeof(path), "%s/%s", dir,
	    rs(rec, "response_file") ? rs(rec, "response_file") : "none");
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return buf;
	while ((k = read(fd, buf + *n, (1 << 22) - *n)) > 0)
		*n += (size_t)k;
	close(fd);
	return buf;
}

static const char *needle_g;
static int found_g;

static int
scan_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	unsigned char *buf;
	int fd;
	ssize_t n;

	(void)f;
	if (flag != FTW_F)
		return 0;
	buf = malloc((size_t)st->st_size + 1);
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, buf, (size_t)st->st_size) : -1;
	if (fd >= 0)
		close(fd);
	if (n > 0 && memmem(buf, (size_t)n, needle_g, strlen(needle_g)))
		found_g = 1;
	free(buf);
	return 0;
}

/* Whether needle occurs in any file under path (or the file path). */
static int
tree_contains(const char *path, const char *needle)
{
	needle_g = needle;
	found_g = 0;
	nftw(path, scan_one, 16, FTW_PHYS);
	return found_g;
}

/* ---- the tests ---- */

static struct server up, up_tls;
static struct tproxy px_off, px_key, px_oauth, px_tls, px_tls_noca, px_down,
    px_bad, px_prefix, px_slow, px_big;

#define API_KEY	    "sk-ant-api03-REALKEY-0123456789abcdef"
#define OAUTH_TOKEN "sk-ant-oat01-REALTOKEN-fedcba9876543210"

static void
test_forwarding(void)
{
	static const char json[] =
	    "{\"model\":\"claude\",\"messages\":[{\"role\":"
	    "\"user\",\"content\":\"h\xc3\xa9llo \\u0000 \\\"q\\\"\"}]}";
	struct cresp r;
	struct seen *s;
	json_t *rec, *h;
	unsigned char *f;
	size_t n;

	post(px_off.s.port, "/v1/messages?beta=true",
	    "Content-Type: "
	    "application/json\r\nx-api-key: sk-dummy\r\nAuthorization: Bearer "
	    "dummy\r\nCookie: c=1\r\nanthropic-version: 2023-06-01\r\n"
	    "Connection: keep-alive, X-Hop\r\nKeep-Alive: timeout=5\r\n"
	    "TE: trailers\r\nX-Hop: 1\r\n",
	    json, sizeof(json) - 1, &r);
	is_int(r.status, 200, "forward: answered 200");
	ok(r.len == sizeof(json) - 1 && memcmp(r.body, json, r.len) == 0,
	    "forward: the upstream's response reaches the client");
	is_str(resp_header(&r, "x-upstream"), "yes",
	    "forward: upstream headers reach the client");
	cresp_free(&r);
	s = seen_for("/v1/messages?beta=true");
	ok(s != NULL && s->len == sizeof(json) - 1 &&
		memcmp(s->body, json, s->len) == 0,
	    "forward: the upstream got the body byte for byte");
	ok(s && strcmp(s->method, "POST") == 0, "forward: method");
	{
		char hostport[64];

		snprintf(hostport, sizeof(hostport), "127.0.0.1:%d", up.port);
		is_str(s ? header_value(s, "host") : NULL, hostport,
		    "forward: host is the upstream's");
	}
	is_str(s ? header_value(s, "x-api-key") : NULL, "sk-dummy",
	    "forward: offline, x-api-key passes unchanged");
	is_str(s ? header_value(s, "authorization") : NULL, "Bearer dummy",
	    "forward: offline, authorization passes unchanged");
	is_str(s ? header_value(s, "anthropic-version") : NULL, "2023-06-01",
	    "forward: other headers pass");
	ok(s && header_value(s, "keep-alive") == NULL &&
		header_value(s, "te") == NULL,
	    "forward: hop-by-hop dropped");
	ok(s && header_value(s, "x-hop") == NULL,
	    "forward: headers named by Connection dropped");
	ok(s && header_value(s, "expect") == NULL &&
		header_value(s, "accept") == NULL,
	    "forward: libcurl adds no "
	    "Expect or Accept");
	{
		char want[32];

		snprintf(want, sizeof(want), "%zu", sizeof(json) - 1);
		is_str(s ? header_value(s, "content-length") : NULL, want,
		    "forward: content-length");
	}

	rec = record_for(px_off.dir, "/v1/messages?beta=true");
	ok(rec != NULL, "record: written");
	is_str(rs(rec, "method"), "POST", "record: method");
	is_str(rs(rec, "path"), "/v1/messages", "record: path");
	{
		json_t *b = json_object_get(rec, "body");

		ok(json_string_length(b) == sizeof(json) - 1 &&
			memcmp(json_string_value(b), json, sizeof(json) - 1) ==
			    0,
		    "record: body equals the sent body byte for byte");
	}
	ok(json_is_true(json_object_get(rec, "body_utf8")),
	    "record: body_utf8");
	is_int(ri(rec, "status"), 200, "record: status");
	ok(ri(rec, "seq") >= 1, "record: seq");
	ok(rs(rec, "time") && strlen(rs(rec, "time")) == 24 &&
		rs(rec, "time")[23] == 'Z',
	    "record: time (%s)", rs(rec, "time"));
	ok(json_is_real(json_object_get(rec, "duration_ms")),
	    "record: duration_ms");
	h = json_object_get(rec, "headers");
	{
		int removed = 0, ct = 0;
		size_t i;
		json_t *pair;

		json_array_foreach(h, i, pair)
		{
			const char *k = json_string_value(
			    json_array_get(pair, 0));
			const char *v = json_string_value(
			    json_array_get(pair, 1));

			if (wire_is_secret_header(k))
				removed += strcmp(v, "[removed]") == 0;
			if (strcmp(k, "Content-Type") == 0)
				ct = strcmp(v, "application/json") == 0;
		}
		is_int(removed, 3,
		    "record: x-api-key, authorization, cookie "
		    "[removed]");
		ok(ct, "record: headers in the case received");
	}
	f = response_file(px_off.dir, rec, &n);
	ok(n == sizeof(json) - 1 && memcmp(f, json, n) == 0,
	    "record: response file holds the response body");
	is_int(ri(rec, "response_bytes"), sizeof(json) - 1,
	    "record: response_bytes");
	free(f);
	ok(!tree_contains(px_off.dir, "sk-dummy") &&
		!tree_contains(px_off.log, "sk-dummy"),
	    "record: the dummy key "
	    "is in no record and no log line");
	json_decref(rec);

	/* Not UTF-8. */
	{
		static const unsigned char bin[] = { 'a', 0x80, 0xff, 0x00,
			0xc3, 'z', 0xed, 0xa0, 0x80 };
		unsigned char *d;

		post(px_off.s.port, "/bin", NULL, bin, sizeof(bin), &r);
		ok(r.status == 200 && r.len == sizeof(bin) &&
			memcmp(r.body, bin, sizeof(bin)) == 0,
		    "binary: echoed");
		cresp_free(&r);
		s = seen_for("/bin");
		ok(s && s->len == sizeof(bin) &&
			memcmp(s->body, bin, sizeof(bin)) == 0,
		    "binary: upstream got it exactly");
		rec = record_for(px_off.dir, "/bin");
		d = unb64(rs(rec, "body_base64") ? rs(rec, "body_base64") : "",
		    &n);
		ok(n == sizeof(bin) && memcmp(d, bin, n) == 0,
		    "binary: record keeps it losslessly (base64)");
		ok(json_is_false(json_object_get(rec, "body_utf8")) &&
			json_object_get(rec, "body") == NULL,
		    "binary: flagged not UTF-8");
		free(d);
		json_decref(rec);
	}

	/* A gzip body. */
	{
		const char *text = "{\"messages\":\"compressed secret-ish\"}";
		unsigned char gz[256], *d;
		z_stream z;

		memset(&z, 0, sizeof(z));
		deflateInit2(&z, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
		z.next_in = (unsigned char *)(uintptr_t)text;
		z.avail_in = (uInt)strlen(text);
		z.next_out = gz;
		z.avail_out = sizeof(gz);
		deflate(&z, Z_FINISH);
		n = z.total_out;
		deflateEnd(&z);
		post(px_off.s.port, "/gz", "Content-Encoding: gzip\r\n", gz, n,
		    &r);
		cresp_free(&r);
		s = seen_for("/gz");
		ok(s && s->len == n && memcmp(s->body, gz, n) == 0,
		    "gzip: upstream got the compressed bytes");
		is_str(s ? header_value(s, "content-encoding") : NULL, "gzip",
		    "gzip: content-encoding forwarded");
		rec = record_for(px_off.dir, "/gz");
		{
			size_t dn;

			d = unb64(rs(rec, "body_base64") ?
				rs(rec, "body_base64") :
				"",
			    &dn);
			ok(dn == n && memcmp(d, gz, n) == 0,
			    "gzip: record keeps the compressed bytes");
			free(d);
		}
		is_str(rs(rec, "body_decoded"), text,
		    "gzip: and the decoded "
		    "body");
		is_str(rs(rec, "content_encoding"), "gzip",
		    "gzip: content_encoding recorded");
		json_decref(rec);
	}

	/* Chunked request body. */
	request(px_off.s.port,
	    "POST /chunked HTTP/1.1\r\nTransfer-Encoding: "
	    "chunked\r\n\r\n4;x=y\r\nabcd\r\n3\r\nefg\r\n0\r\nT: 1\r\n\r\n",
	    0, &r);
	is_str((char *)r.body, "abcdefg", "chunked request: echoed");
	cresp_free(&r);
	s = seen_for("/chunked");
	ok(s && s->len == 7 && memcmp(s->body, "abcdefg", 7) == 0 &&
		header_value(s, "transfer-encoding") == NULL,
	    "chunked request: upstream got the body, re-framed");
	rec = record_for(px_off.dir, "/chunked");
	is_str(rs(rec, "body"), "abcdefg", "chunked request: recorded");
	json_decref(rec);

	/* GET with no body; query kept. */
	request(px_off.s.port, "GET /v1/models?limit=1000 HTTP/1.1\r\n\r\n", 0,
	    &r);
	is_int(r.status, 200, "get: answered");
	cresp_free(&r);
	s = seen_for("/v1/models?limit=1000");
	ok(s && strcmp(s->method, "GET") == 0 && s->len == 0 &&
		header_value(s, "content-length") == NULL,
	    "get: forwarded without a body");
	rec = record_for(px_off.dir, "/v1/models?limit=1000");
	ok(rec && rs(rec, "body") && strcmp(rs(rec, "body"), "") == 0,
	    "get: recorded with an empty body");
	json_decref(rec);

	/* Other methods. */
	request(px_off.s.port, "DELETE /thing HTTP/1.1\r\n\r\n", 0, &r);
	cresp_free(&r);
	s = seen_for("/thing");
	is_str(s ? s->method : NULL, "DELETE", "method: DELETE forwarded");
	request(px_off.s.port,
	    "PUT /put HTTP/1.1\r\nContent-Length: 2\r\n\r\n"
	    "pp",
	    0, &r);
	cresp_free(&r);
	s = seen_for("/put");
	ok(s && strcmp(s->method, "PUT") == 0 && s->len == 2,
	    "method: PUT with a body forwarded");

	/* Expect: 100-continue from the client. */
	{
		int fd = dial(px_off.s.port);
		char got[32] = "";

		put(fd,
		    "POST /expect HTTP/1.1\r\nExpect: 100-continue\r\n"
		    "Content-Length: 5\r\n\r\n");
		ok(read(fd, got, 25) == 25 &&
			memcmp(got,
			    "HTTP/1.1 100 Continue"
			    "\r\n\r\n",
			    25) == 0,
		    "expect: 100 Continue first");
		put(fd, "later");
		rb_main.len = 0;
		read_response(fd, &rb_main, &r, 0);
		is_str((char *)r.body, "later", "expect: then the response");
		cresp_free(&r);
		close(fd);
	}

	/* Keep-alive: several requests, one connection. */
	{
		int fd = dial(px_off.s.port), good = 0;

		rb_main.len = 0;
		for (int i = 0; i < 3; i++) {
			char req[128];

			snprintf(req, sizeof(req),
			    "POST /ka%d HTTP/1.1\r\n"
			    "Content-Length: 1\r\n\r\n%d",
			    i, i);
			put(fd, req);
			read_response(fd, &rb_main, &r, 0);
			good += r.status == 200 && r.len == 1 &&
			    r.body[0] == '0' + i;
			cresp_free(&r);
		}
		is_int(good, 3, "keep-alive: three requests on one connection");
		close(fd);
	}

	/* Response headers. */
	request(px_off.s.port, "GET /hop HTTP/1.1\r\n\r\n", 0, &r);
	ok(resp_header(&r, "keep-alive") == NULL &&
		resp_header(&r, "upgrade") == NULL,
	    "response: hop-by-hop headers dropped");
	is_str(resp_header(&r, "set-cookie"), "a=b",
	    "response: end-to-end headers kept");
	is_str(resp_header(&r, "connection"), "keep-alive",
	    "response: the proxy's own connection header");
	cresp_free(&r);

	/* A gzip response is passed on as it is. */
	request(px_off.s.port,
	    "GET /gzipped HTTP/1.1\r\n"
	    "Accept-Encoding: gzip\r\n\r\n",
	    0, &r);
	ok(r.len == gz_resp_len && memcmp(r.body, gz_resp, r.len) == 0,
	    "response: gzip bytes not decoded");
	is_str(resp_header(&r, "content-encoding"), "gzip",
	    "response: content-encoding kept");
	cresp_free(&r);

	/* Error statuses are forwarded, not replaced. */
	request(px_off.s.port,
	    "POST /status/529 HTTP/1.1\r\nContent-Length: 0"
	    "\r\n\r\n",
	    0, &r);
	is_int(r.status, 529, "response: upstream 529 forwarded");
	ok(strstr((char *)r.body, "overloaded_error") != NULL,
	    "response: with its body");
	cresp_free(&r);
	rec = record_for(px_off.dir, "/status/529");
	is_int(ri(rec, "status"), 529, "response: 529 recorded");
	ok(json_object_get(rec, "error") == NULL, "response: not as an error");
	json_decref(rec);

	/* An upstream response with no length: chunked to the client. */
	request(px_off.s.port, "GET /close-delimited HTTP/1.1\r\n\r\n", 0, &r);
	ok(r.chunked && r.complete &&
		strcmp((char *)r.body, "until the end") == 0,
	    "response: close-delimited upstream re-chunked");
	cresp_free(&r);

	/* Chunked from the upstream: passed on as sent, read for the file. */
	request(px_off.s.port, "GET /chunks HTTP/1.1\r\n\r\n", 0, &r);
	ok(r.chunked && r.complete &&
		strcmp((char *)r.body, "hello world") == 0,
	    "chunked response: passed to an HTTP/1.1 client");
	cresp_free(&r);
	rec = record_for(px_off.dir, "/chunks");
	{
		unsigned char *rf = response_file(px_off.dir, rec, &n);

		ok(n == 11 && memcmp(rf, "hello world", 11) == 0 &&
			ri(rec, "response_bytes") == 11,
		    "chunked response: response file holds the payload");
		free(rf);
	}
	json_decref(rec);
	request(px_off.s.port, "GET /chunks HTTP/1.0\r\n\r\n", 0, &r);
	ok(!r.chunked && strcmp((char *)r.body, "hello world") == 0 &&
		resp_header(&r, "transfer-encoding") == NULL,
	    "chunked response: de-chunked for an HTTP/1.0 client");
	is_str(resp_header(&r, "connection"), "close",
	    "chunked response: which is then closed");
	cresp_free(&r);
	request(px_off.s.port, "GET /cl-and-te HTTP/1.1\r\n\r\n", 0, &r);
	ok(r.chunked && r.complete && strcmp((char *)r.body, "ok") == 0 &&
		resp_header(&r, "content-length") == NULL,
	    "chunked response: with a Content-Length too, chunked wins");
	cresp_free(&r);
	request(px_off.s.port, "GET /badchunks HTTP/1.1\r\n\r\n", 0, &r);
	ok(!r.complete,
	    "chunked response: malformed chunks cut the client "
	    "off");
	cresp_free(&r);
	rec = record_for(px_off.dir, "/badchunks");
	ok(rs(rec, "error") && strstr(rs(rec, "error"), "chunked framing"),
	    "chunked response: and are recorded as an error (%s)",
	    rs(rec, "error"));
	json_decref(rec);

	/* An upstream that stops mid-body. */
	request(px_off.s.port, "GET /cut HTTP/1.1\r\n\r\n", 0, &r);
	ok(r.status == 200 && !r.complete,
	    "response: cut upstream gives the "
	    "client a cut response, not a whole one");
	cresp_free(&r);
	rec = record_for(px_off.dir, "/cut");
	ok(rs(rec, "error") && strstr(rs(rec, "error"), "mid-response"),
	    "response: cut recorded as an error (%s)", rs(rec, "error"));
	json_decref(rec);

	/* HEAD. */
	{
		int fd = dial(px_off.s.port);

		put(fd, "HEAD /head HTTP/1.1\r\n\r\n");
		rb_main.len = 0;
		read_response(fd, &rb_main, &r, 1);
		is_str(resp_header(&r, "content-length"), "1234",
		    "head: content-length passed");
		cresp_free(&r);
		put(fd, "GET /afterhead HTTP/1.1\r\n\r\n");
		read_response(fd, &rb_main, &r, 0);
		is_int(r.status, 200, "head: no body, connection still good");
		cresp_free(&r);
		close(fd);
	}

	/* Base URL with a path prefix. */
	request(px_prefix.s.port,
	    "POST /v1/messages?beta=true HTTP/1.1\r\n"
	    "Content-Length: 2\r\n\r\n{}",
	    0, &r);
	cresp_free(&r);
	ok(seen_for("/prefix/v1/messages?beta=true") != NULL,
	    "prefix: the target is appended to the base path");
}

/*
 * The largest body allowed, 32 MiB of printable bytes, through a proxy of
 * its own (its records would slow every later record_for).
 */
static void
test_big_body(void)
{
	struct cresp r;
	struct seen *s;
	json_t *rec;

	{
		size_t big = 32u * 1024 * 1024, blen;
		char *b = malloc(big);
		const char *got;

		for (size_t i = 0; i < big; i++)
			b[i] = (char)(' ' + (i * 31 + i / 4096) % 95);
		post(px_big.s.port, "/big", NULL, b, big, &r);
		ok(r.status == 200 && r.len == big &&
			memcmp(r.body, b, big) == 0,
		    "32 MiB: echoed whole");
		cresp_free(&r);
		s = seen_for("/big");
		ok(s && s->len == big && memcmp(s->body, b, big) == 0,
		    "32 MiB: upstream got it exactly");
		rec = record_for(px_big.dir, "/big");
		got = rs(rec, "body");
		blen = json_string_length(json_object_get(rec, "body"));
		ok(got && blen == big && memcmp(got, b, big) == 0,
		    "32 MiB: recorded exactly");
		json_decref(rec);
		free(b);
	}
}

static void
test_streaming(void)
{
	int fd = dial(px_off.s.port), got_first = 0;
	struct cresp r;
	double t0;

	sse_waited = 0;
	put(fd, "POST /sse HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
	rb_main.len = 0;
	t0 = now_s();
	/* The first event must arrive while the upstream still holds the
	 * second: only then is it released. */
	while (now_s() - t0 < 5) {
		if (memmem(rb_main.buf, rb_main.len, "message_start", 13)) {
			got_first = 1;
			break;
		}
		if (rb_fill(fd, &rb_main) < 0)
			break;
	}
	ok(got_first &&
		memmem(rb_main.buf, rb_main.len, "message_stop", 12) == NULL,
	    "stream: first event reached the client before the "
	    "upstream sent the second");
	sem_post(&sse_go);
	read_response(fd, &rb_main, &r, 0);
	ok(r.chunked && r.complete && strstr((char *)r.body, "message_stop"),
	    "stream: then the rest, chunked");
	is_int(sse_waited, 1,
	    "stream: the upstream was released by the "
	    "client's receipt");
	is_str(resp_header(&r, "content-type"), "text/event-stream",
	    "stream: content type");
	cresp_free(&r);
	close(fd);
	{
		json_t *rec = record_for(px_off.dir, "/sse");
		size_t n;
		unsigned char *f = response_file(px_off.dir, rec, &n);
		const char
		    *want = "event: message_start\ndata: {\"type\":"
			    "\"message_start\"}\n\nevent: message_stop\ndata: "
			    "{\"type\":\"message_stop\"}\n\n";

		ok(n == strlen(want) && memcmp(f, want, n) == 0,
		    "stream: response file holds the whole event stream");
		free(f);
		json_decref(rec);
	}
}

struct worker {
	int id, ok;
};

/* The lines of a log that hold needle, as comment lines. */
static void
print_log_lines(const char *path, const char *needle)
{
	FILE *f = fopen(path, "r");
	char line[2048];

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, needle) != NULL)
			printf("#     log: %s", line);
	if (f != NULL)
		fclose(f);
}

/* A response head as one comment line, CR and LF shown as | . */
static void
print_head(const char *h)
{
	printf("#     head: ");
	for (; h != NULL && *h != '\0'; h++)
		putchar(*h == '\r' ? ' ' : *h == '\n' ? '|' : *h);
	putchar('\n');
}

static void *
worker_main(void *p)
{
	struct worker *w = p;
	struct rbuf *rb = calloc(1, sizeof(*rb));
	int fd = dial(px_off.s.port);

	for (int i = 0; i < 5; i++) {
		char body[20000], head[128];
		struct cresp r;
		int hl;
		size_t n = 1000 + (size_t)w->id * 500 + (size_t)i * 37;

		for (size_t k = 0; k < n; k++)
			body[k] = (char)('a' + (w->id * 7 + i + k) % 26);
		hl = snprintf(head, sizeof(head),
		    "POST /c/%d/%d HTTP/1.1\r\n"
		    "Content-Length: %zu\r\n\r\n",
		    w->id, i, n);
		struct timespec t0, t1;
		int wr, err;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		wr = http_write_all(fd, head, (size_t)hl) < 0 ||
			http_write_all(fd, body, n) < 0 ?
		    errno :
		    0;
		errno = 0;
		read_response(fd, rb, &r, 0);
		err = errno;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (r.status == 200 && r.len == n &&
		    memcmp(r.body, body, n) == 0)
			w->ok++;
		else /* what came back, for the failure's cause */
			printf("#   client %d, request %d: status %d, %zu of "
			       "%zu bytes after %ld ms (write: %s, read: %s): "
			       "%.*s\n",
			    w->id, i, r.status, r.len, n,
			    (long)((t1.tv_sec - t0.tv_sec) * 1000 +
				(t1.tv_nsec - t0.tv_nsec) / 1000000),
			    wr ? strerror(wr) : "ok",
			    err ? strerror(err) : "end of stream",
			    (int)(r.len < 200 ? r.len : 200),
			    r.body ? (const char *)r.body : "");
		if (r.status != 200 || r.len != n) {
			char tg[32];

			print_head(r.head);
			snprintf(tg, sizeof(tg), "/c/%d/%d ", w->id, i);
			print_log_lines(px_off.log, tg);
		}
		cresp_free(&r);
	}
	close(fd);
	free(rb);
	return NULL;
}

static void
test_concurrency(void)
{
	struct worker w[20];
	pthread_t t[20];
	json_t *arr, *v;
	size_t i;
	int total = 0, matched = 0;

	for (i = 0; i < 20; i++) {
		w[i].id = (int)i;
		w[i].ok = 0;
		pthread_create(&t[i], NULL, worker_main, &w[i]);
	}
	for (i = 0; i < 20; i++) {
		pthread_join(t[i], NULL);
		total += w[i].ok;
	}
	is_int(total, 100, "concurrent: 20 clients x 5 requests all echoed");
	arr = records(px_off.dir);
	json_array_foreach(arr, i, v)
	{
		int id, k;
		const char *tg = json_string_value(
		    json_object_get(v, "target"));
		const char *b = json_string_value(json_object_get(v, "body"));
		size_t n;

		if (tg == NULL || sscanf(tg, "/c/%d/%d", &id, &k) != 2)
			continue;
		n = 1000 + (size_t)id * 500 + (size_t)k * 37;
		if (b == NULL || strlen(b) != n)
			continue;
		matched++;
		for (size_t q = 0; q < n; q++)
			if (b[q] != (char)('a' + (id * 7 + k + q) % 26)) {
				matched--;
				break;
			}
	}
	is_int(matched, 100, "concurrent: 100 records, each body exact");
	{
		/* Every line parses and sequence numbers are unique. */
		int bad = 0;
		char *seen_seq = calloc(100000, 1);

		json_array_foreach(arr, i, v)
		{
			long long s = json_integer_value(
			    json_object_get(v, "seq"));

			if (!json_is_object(v) || s <= 0 || s >= 100000 ||
			    seen_seq[s]++)
				bad++;
		}
		is_int(bad, 0, "concurrent: every line whole, seqs unique");
		free(seen_seq);
	}
	json_decref(arr);
}

static void
test_credentials(void)
{
	struct cresp r;
	struct seen *s;
	json_t *rec;

	post(px_key.s.port, "/v1/messages?k=1",
	    "x-api-key: sk-dummy-key\r\n"
	    "Authorization: Bearer dummy-bearer\r\n",
	    "{}", 2, &r);
	is_int(r.status, 200, "apikey: answered");
	cresp_free(&r);
	s = seen_for("/v1/messages?k=1");
	is_int(s ? header_count(s, "x-api-key") : -1, 1,
	    "apikey: exactly one x-api-key upstream");
	is_str(s ? header_value(s, "x-api-key") : NULL, API_KEY,
	    "apikey: it is the real key");
	is_int(s ? header_count(s, "authorization") : -1, 0,
	    "apikey: the client's authorization removed");

	post(px_oauth.s.port, "/v1/messages?o=1",
	    "x-api-key: sk-dummy-key\r\n"
	    "Authorization: Bearer dummy-bearer\r\nanthropic-beta: "
	    "claude-code-20250219,interleaved-thinking-2025-05-14\r\n",
	    "{}", 2, &r);
	cresp_free(&r);
	s = seen_for("/v1/messages?o=1");
	is_str(s ? header_value(s, "authorization") : NULL,
	    "Bearer " OAUTH_TOKEN, "oauth: bearer token upstream");
	is_int(s ? header_count(s, "authorization") : -1, 1,
	    "oauth: only one authorization");
	is_int(s ? header_count(s, "x-api-key") : -1, 0,
	    "oauth: x-api-key removed");
	is_str(s ? header_value(s, "anthropic-beta") : NULL,
	    "claude-code-20250219,interleaved-thinking-2025-05-14,"
	    "oauth-2025-04-20",
	    "oauth: oauth beta appended");
	post(px_oauth.s.port, "/v1/messages?o=2", NULL, "{}", 2, &r);
	cresp_free(&r);
	s = seen_for("/v1/messages?o=2");
	is_str(s ? header_value(s, "anthropic-beta") : NULL, "oauth-2025-04-20",
	    "oauth: beta header added when absent");
	post(px_oauth.s.port, "/v1/messages?o=3",
	    "anthropic-beta: a, "
	    "oauth-2025-04-20\r\n",
	    "{}", 2, &r);
	cresp_free(&r);
	s = seen_for("/v1/messages?o=3");
	is_str(s ? header_value(s, "anthropic-beta") : NULL,
	    "a, oauth-2025-04-20", "oauth: beta header left when present");

	/* Defence in depth: the real key sent back is scrubbed from files. */
	post(px_key.s.port, "/echo-key", NULL, "{\"k\":\"" API_KEY "\"}",
	    strlen(API_KEY) + 8, &r);
	cresp_free(&r);
	rec = record_for(px_key.dir, "/echo-key");
	is_str(rs(rec, "body"), "{\"k\":\"[credential]\"}",
	    "scrub: credential in a body recorded as [credential]");
	json_decref(rec);
	request(px_key.s.port, "GET /q?key=" API_KEY " HTTP/1.1\r\n\r\n", 0,
	    &r);
	cresp_free(&r);

	ok(!tree_contains(px_key.dir, API_KEY),
	    "apikey: the key is in no "
	    "record or response file");
	ok(!tree_contains(px_key.log, API_KEY), "apikey: nor in a log line");
	ok(tree_contains(px_key.log, "/q?key=[credential]"),
	    "apikey: the log "
	    "line has it scrubbed");
	ok(!tree_contains(px_key.dir, "sk-dummy-key") &&
		!tree_contains(px_key.dir, "dummy-bearer"),
	    "apikey: the dummy "
	    "credentials are in no record");
	ok(!tree_contains(px_oauth.dir, OAUTH_TOKEN) &&
		!tree_contains(px_oauth.log, OAUTH_TOKEN),
	    "oauth: the token is in no record and no log line");
	ok(tree_contains(px_key.log, "POST /v1/messages?k=1 200"),
	    "log: one line per request");
}

static void
test_tls(void)
{
	struct cresp r;
	static const unsigned char bin[] = { 0xde, 0xad, 0xbe, 0xef, 0x00,
		'\n' };
	json_t *rec;
	struct seen *s;

	post(px_tls.s.port, "/v1/messages?tls=1", "x-api-key: d\r\n", bin,
	    sizeof(bin), &r);
	is_int(r.status, 200, "tls: answered through https");
	if (r.status != 200)
		printf("# %s\n", r.body);
	ok(r.len == sizeof(bin) && memcmp(r.body, bin, r.len) == 0,
	    "tls: body echoed exactly");
	cresp_free(&r);
	s = seen_for("/v1/messages?tls=1");
	ok(s && s->len == sizeof(bin) && memcmp(s->body, bin, s->len) == 0,
	    "tls: upstream got the bytes exactly");
	is_str(s ? header_value(s, "x-api-key") : NULL, API_KEY,
	    "tls: with the real key");
	rec = record_for(px_tls.dir, "/v1/messages?tls=1");
	is_str(rs(rec, "body_base64"), "3q2+7wAK", "tls: recorded");
	json_decref(rec);
	ok(!tree_contains(px_tls.dir, API_KEY) &&
		!tree_contains(px_tls.log, API_KEY),
	    "tls: key in no record or log");

	post(px_tls_noca.s.port, "/tls-untrusted", NULL, "{}", 2, &r);
	is_int(r.status, 502, "tls: an untrusted upstream gives 502");
	ok(strstr((char *)r.body, "certificate") != NULL,
	    "tls: saying why (%s)", r.body);
	cresp_free(&r);
}

static void
test_upstream_down(void)
{
	struct cresp r;
	json_t *rec, *j;
	int fd;

	fd = dial(px_down.s.port);
	rb_main.len = 0;
	put(fd, "POST /v1/messages HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}");
	read_response(fd, &rb_main, &r, 0);
	is_int(r.status, 502, "down: 502");
	is_str(resp_header(&r, "content-type"), "application/json",
	    "down: JSON");
	j = json_loads((char *)r.body, 0, NULL);
	is_str(json_string_value(json_object_get(j, "type")), "error",
	    "down: type error");
	is_str(json_string_value(
		   json_object_get(json_object_get(j, "error"), "type")),
	    "api_error", "down: error.type api_error");
	ok(strncmp(
	       json_string_value(json_object_get(json_object_get(j, "error"), "message")) ?:
		   "",
	       "lb-proxy: cannot reach upstream '", 33) == 0,
	    "down: error.message says what (%s)", r.body);
	json_decref(j);
	cresp_free(&r);
	put(fd, "GET /again HTTP/1.1\r\n\r\n");
	read_response(fd, &rb_main, &r, 0);
	is_int(r.status, 502, "down: the proxy keeps serving, same connection");
	cresp_free(&r);
	close(fd);
	rec = record_for(px_down.dir, "/v1/messages");
	is_int(ri(rec, "status"), 502, "down: recorded with status 502");
	is_str(rs(rec, "body"), "{}", "down: and the body");
	ok(rs(rec, "error") != NULL, "down: and the error");
	json_decref(rec);
}

static void
test_upstream_timeout(void)
{
	struct cresp r;
	double t0 = now_s(), dt;
	json_t *rec;

	request(px_slow.s.port, "GET /hang HTTP/1.1\r\n\r\n", 0, &r);
	dt = now_s() - t0;
	is_int(r.status, 502, "timeout: a silent upstream gives 502");
	ok(dt < 2.9, "timeout: after --upstream-timeout (%.2f s)", dt);
	cresp_free(&r);
	rec = record_for(px_slow.dir, "/hang");
	ok(rs(rec, "error") &&
		strstr(rs(rec, "error"),
		    "did not answer in "
		    "time"),
	    "timeout: recorded as an error (%s)", rs(rec, "error"));
	json_decref(rec);
}

static json_t *cap_entry(const char *dir, const char *cap);
static const char *error_message(const struct cresp *r, const char **type);

static void
test_bad_input(void)
{
	struct cresp r;
	json_t *before = records(px_bad.dir), *after;
	double t0, dt;
	int fd;

	request(px_bad.s.port, "NOT A REQUEST\r\n\r\n", 0, &r);
	is_int(r.status, 400, "bad: malformed request line gives 400");
	ok(strstr((char *)r.body, "invalid_request_error") != NULL,
	    "bad: in the API's error shape");
	cresp_free(&r);
	{
		size_t n = 70 * 1024;
		char *h = malloc(n);

		memset(h, 'a', n);
		memcpy(h, "GET / HTTP/1.1\r\nX-Big: ", 23);
		memcpy(h + n - 4, "\r\n\r\n", 4);
		request(px_bad.s.port, h, n, &r);
		is_int(r.status, 431, "bad: oversize headers give 431");
		cresp_free(&r);
		free(h);
	}
	request(px_bad.s.port, "POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
	    0, &r);
	is_int(r.status, 400, "bad: negative content-length gives 400");
	cresp_free(&r);
	request(px_bad.s.port,
	    "POST / HTTP/1.1\r\nContent-Length: 33554433\r\n"
	    "\r\n",
	    0, &r);
	is_int(r.status, 413, "bad: body over 32 MB gives 413");
	is_str(error_message(&r, NULL),
	    "lb-proxy: cap 'request_body' "
	    "reached: the request body is over 32 MiB",
	    "bad: naming the cap");
	cresp_free(&r);
	t0 = now_s();
	request(px_bad.s.port,
	    "POST / HTTP/1.1\r\nContent-Length: 50\r\n\r\n"
	    "short",
	    0, &r);
	dt = now_s() - t0;
	is_int(r.status, 408, "bad: lying content-length gives 408");
	ok(dt < 3, "bad: after the client timeout (%.2f s)", dt);
	cresp_free(&r);

	/* Slowloris: one byte at a time, never finishing the head. */
	fd = dial(px_bad.s.port);
	t0 = now_s();
	for (const char *p = "GET / HTTP/1.1\r\nX: aaaaaaaaaaaaaaaaaaaaaaaa";
	     *p && now_s() - t0 < 3; p++) {
		struct pollfd q = { .fd = fd, .events = POLLIN };

		if (http_write_all(fd, p, 1) < 0 || poll(&q, 1, 100) == 1)
			break;
	}
	rb_main.len = 0;
	read_response(fd, &rb_main, &r, 0);
	dt = now_s() - t0;
	is_int(r.status, 408, "bad: slowloris gives 408");
	ok(dt < 2.5, "bad: at the head deadline (%.2f s)", dt);
	cresp_free(&r);
	close(fd);

	/* Meanwhile and after, others are served. */
	request(px_bad.s.port,
	    "POST /good HTTP/1.1\r\nContent-Length: 2\r\n\r\n"
	    "ok",
	    0, &r);
	is_int(r.status, 200, "bad: the proxy keeps serving others");
	cresp_free(&r);
	after = records(px_bad.dir);
	is_int(json_array_size(after), json_array_size(before) + 1,
	    "bad: refused requests are not recorded (never forwarded)");
	{
		json_t *e = cap_entry(px_bad.dir, "request_body");

		is_str(json_string_value(json_object_get(e, "message")),
		    "lb-proxy: cap 'request_body' reached: the request body is "
		    "over 32 MiB",
		    "bad: a body over 32 MiB is cap "
		    "'request_body' in caps.json");
		json_decref(e);
		e = cap_entry(px_bad.dir, "request_head");
		is_str(json_string_value(json_object_get(e, "message")),
		    "lb-proxy: cap 'request_head' reached: the request head is "
		    "over 64 KiB",
		    "bad: a head over 64 KiB is cap "
		    "'request_head'");
		json_decref(e);
	}
	ok(tree_contains(px_bad.log, "- 400 from 127.0.0.1:") &&
		tree_contains(px_bad.log, "- 431 from") &&
		tree_contains(px_bad.log, "- 413 from") &&
		tree_contains(px_bad.log, "- 408 from"),
	    "bad: each one logged");
	json_decref(before);
	json_decref(after);
}

static void
test_init_errors(void)
{
	struct proxy p;
	struct proxy_config cfg = { 0 };
	char err[512], path[256];

	cfg.upstream = "ftp://example.com";
	ok(proxy_init(&p, &cfg, err, sizeof(err)) < 0,
	    "init: ftp upstream "
	    "refused");
	is_str(err,
	    "cannot use upstream 'ftp://example.com': expected an "
	    "http:// or https:// URL",
	    "init: message");
	proxy_fini(&p);
	cfg.upstream = "http://h/x?q=1";
	ok(proxy_init(&p, &cfg, err, sizeof(err)) < 0 &&
		strstr(err,
		    "no "
		    "query"),
	    "init: query refused (%s)", err);
	proxy_fini(&p);
	cfg.upstream = "http://127.0.0.1:1";
	snprintf(path, sizeof(path), "%s/bad.cred", tmp);
	write_file(path, "apikey:has SECRETPART space", 27);
	cfg.credential_file = path;
	cfg.records = tmp;
	ok(proxy_init(&p, &cfg, err, sizeof(err)) < 0 &&
		strstr(err, "SECRETPART") == NULL && strstr(err, "bad.cred"),
	    "init: malformed credential refused without quoting it (%s)", err);
	proxy_fini(&p);
	cfg.credential_file = NULL;
	snprintf(path, sizeof(path), "%s/notca.pem", tmp);
	write_file(path, "hello", 5);
	cfg.ca_file = path;
	ok(proxy_init(&p, &cfg, err, sizeof(err)) < 0 &&
		strstr(err, "no PEM certificate"),
	    "init: a CA file without a certificate "
	    "refused (%s)",
	    err);
	proxy_fini(&p);
}

/* ---- caps (issue 13, finding 6) ---- */

static struct tproxy px_rec, px_bytes, px_conns, px_dec;
static char up_url[128];

/* Bytes of DIR/wire.jsonl plus DIR/responses/. */
static long long
records_size(const char *dir)
{
	char path[256];
	struct stat st;
	long long n = 0;

	snprintf(path, sizeof(path), "%s/wire.jsonl", dir);
	if (stat(path, &st) == 0)
		n += st.st_size;
	for (int i = 1; i < 100; i++) {
		snprintf(path, sizeof(path), "%s/responses/%06d.body", dir, i);
		if (stat(path, &st) == 0)
			n += st.st_size;
	}
	return n;
}

/* The member for cap in DIR/caps.json; a new reference or NULL. */
static json_t *
cap_entry(const char *dir, const char *cap)
{
	char path[256];
	json_t *all, *e;

	snprintf(path, sizeof(path), "%s/caps.json", dir);
	all = json_load_file(path, 0, NULL);
	e = json_object_get(all, cap);
	json_incref(e);
	json_decref(all);
	return e;
}

/* error.message of an API-shaped error body; a static copy or NULL. */
static const char *
error_message(const struct cresp *r, const char **type)
{
	static char m[512], t[64];
	json_t *j = json_loads((const char *)r->body, 0, NULL);
	json_t *e = json_object_get(j, "error");
	const char *s = json_string_value(json_object_get(e, "message"));

	snprintf(t, sizeof(t), "%s",
	    json_string_value(json_object_get(e, "type")) ?: "");
	if (type != NULL)
		*type = t;
	if (s != NULL)
		snprintf(m, sizeof(m), "%s", s);
	json_decref(j);
	return s ? m : NULL;
}

/*
 * What a client and the harness see for each cap that refuses: the status,
 * the error type and the message, the same in caps.json and the log.
 */
static const struct {
	const char *cap;
	int status;
	const char *type;
	const char *message;
} refusals[] = {
	{ "records", 507, "api_error",
	    "lb-proxy: cap 'records' reached: 3 "
	    "requests recorded, no more are forwarded (--max-records)" },
	{ "record_bytes", 507, "api_error",
	    "lb-proxy: cap 'record_bytes' "
	    "reached: 60000 bytes recorded, no more requests are forwarded "
	    "(--max-record-bytes)" },
	{ "decoded_body", 413, "request_too_large",
	    "lb-proxy: cap "
	    "'decoded_body' reached: the request body decodes to over 64 MiB, "
	    "which cannot be recorded; not forwarded" },
};

/* Checks a refused request against refusals[i]; target never forwarded. */
static void
check_refusal(int i, const struct cresp *r, const struct tproxy *t,
    const char *target)
{
	const char *type, *m = error_message(r, &type);
	json_t *e = cap_entry(t->dir, refusals[i].cap);
	char prefix[64];

	is_int(r->status, refusals[i].status, "cap %s: answered %d",
	    refusals[i].cap, refusals[i].status);
	is_str(m, refusals[i].message, "cap %s: the message names it",
	    refusals[i].cap);
	is_str(type, refusals[i].type, "cap %s: error type", refusals[i].cap);
	ok(seen_for(target) == NULL, "cap %s: not forwarded", refusals[i].cap);
	/* caps.json keeps the first hit's message, maybe another one's. */
	snprintf(prefix, sizeof(prefix),
	    "lb-proxy: cap '%s' reached: ", refusals[i].cap);
	ok(strncmp(json_string_value(json_object_get(e, "message")) ?: "",
	       prefix, strlen(prefix)) == 0,
	    "cap %s: in caps.json", refusals[i].cap);
	ok(json_integer_value(json_object_get(e, "hits")) >= 1 &&
		json_string_value(json_object_get(e, "first_hit")) != NULL,
	    "cap %s: caps.json counts hits, says when", refusals[i].cap);
	ok(tree_contains(t->log, refusals[i].message), "cap %s: and the log",
	    refusals[i].cap);
	json_decref(e);
}

static void
test_cap_records(void)
{
	struct proxy_config cfg = { .max_records = 3 };
	struct cresp r;
	char target[64];
	json_t *arr, *e;
	int good = 0;

	proxy_start_cfg(&px_rec, "caprec", up_url, NULL, &cfg);
	for (int i = 0; i < 3; i++) {
		snprintf(target, sizeof(target), "/v1/messages?rec=%d", i);
		post(px_rec.s.port, target, NULL, "{}", 2, &r);
		good += r.status == 200;
		cresp_free(&r);
	}
	is_int(good, 3, "cap records: the first 3 forwarded");
	e = cap_entry(px_rec.dir, "records");
	ok(e == NULL, "cap records: no caps.json entry before it is hit");
	json_decref(e);
	post(px_rec.s.port, "/v1/messages?rec=3", NULL, "{}", 2, &r);
	check_refusal(0, &r, &px_rec, "/v1/messages?rec=3");
	cresp_free(&r);
	post(px_rec.s.port, "/v1/messages?rec=4", NULL, "{}", 2, &r);
	cresp_free(&r);
	arr = records(px_rec.dir);
	is_int(json_array_size(arr), 3, "cap records: 3 records, no more");
	json_decref(arr);
	e = cap_entry(px_rec.dir, "records");
	is_int(json_integer_value(json_object_get(e, "hits")), 2,
	    "cap records: every refusal counted");
	is_int(json_integer_value(json_object_get(e, "limit")), 3,
	    "cap records: with the limit");
	json_decref(e);
}

static void
test_cap_bytes(void)
{
	struct proxy_config cfg = { .max_record_bytes = 60000 };
	struct cresp r;
	char *b = malloc(30000), target[64];
	long long left;
	json_t *rec;
	int i, refused = 0;

	memset(b, 'b', 30000);
	proxy_start_cfg(&px_bytes, "capbytes", up_url, NULL, &cfg);
	post(px_bytes.s.port, "/bytes1", NULL, b, 10000, &r);
	is_int(r.status, 200, "cap record_bytes: a request that fits");
	cresp_free(&r);
	rec = record_for(px_bytes.dir, "/bytes1");
	ok(rec && rs(rec, "cap") == NULL,
	    "cap record_bytes: with its whole "
	    "response file");
	json_decref(rec);
	/* Room for the next request's record, not for its response. */
	left = 60000 - records_size(px_bytes.dir);
	ok(left > 6000, "cap record_bytes: the test's sizes (%lld left)", left);
	snprintf(target, sizeof(target), "/bytes/%lld", left + 1000);
	snprintf(b, 30000, "GET %s HTTP/1.1\r\n\r\n", target);
	request(px_bytes.s.port, b, 0, &r);
	ok(r.status == 200 && (long long)r.len == left + 1000,
	    "cap "
	    "record_bytes: a response arriving at the cap still reaches the "
	    "client whole");
	cresp_free(&r);
	rec = record_for(px_bytes.dir, target);
	is_str(rs(rec, "cap"), "record_bytes",
	    "cap record_bytes: its record "
	    "names the cap");
	ok(json_is_true(json_object_get(rec, "response_file_truncated")),
	    "cap record_bytes: its response file is cut");
	json_decref(rec);
	memset(b, 'b', 30000);
	for (i = 3; i < 20 && !refused; i++) {
		snprintf(target, sizeof(target), "/bytes%d", i);
		post(px_bytes.s.port, target, NULL, b, 100, &r);
		if (r.status != 200) {
			refused = 1;
			check_refusal(1, &r, &px_bytes, target);
		}
		cresp_free(&r);
	}
	ok(refused, "cap record_bytes: later requests are refused");
	ok(records_size(px_bytes.dir) <= 60000,
	    "cap record_bytes: the records "
	    "never pass it (%lld bytes)",
	    records_size(px_bytes.dir));
	free(b);
}

static void
test_cap_connections(void)
{
	struct proxy_config cfg = { .max_conns = 2 };
	const char
	    *want = "lb-proxy: cap 'connections' reached: 2 "
		    "connections open, new ones wait (--max-connections)";
	struct rbuf *rb = calloc(3, sizeof(*rb));
	struct pollfd q;
	struct cresp r;
	int fd[3], good = 0;
	json_t *e;

	proxy_start_cfg(&px_conns, "capconn", up_url, NULL, &cfg);
	for (int i = 0; i < 2; i++) {
		fd[i] = dial(px_conns.s.port);
		put(fd[i], "GET /open HTTP/1.1\r\n\r\n");
		read_response(fd[i], &rb[i], &r, 0);
		good += r.status == 200;
		cresp_free(&r);
	}
	is_int(good, 2, "cap connections: two kept-alive connections");
	fd[2] = dial(px_conns.s.port);
	put(fd[2], "GET /third HTTP/1.1\r\n\r\n");
	q.fd = fd[2];
	q.events = POLLIN;
	is_int(poll(&q, 1, 300), 0, "cap connections: a third one waits");
	close(fd[0]);
	read_response(fd[2], &rb[2], &r, 0);
	is_int(r.status, 200, "cap connections: and is served when one ends");
	cresp_free(&r);
	e = cap_entry(px_conns.dir, "connections");
	is_str(json_string_value(json_object_get(e, "message")), want,
	    "cap connections: in caps.json");
	is_int(json_integer_value(json_object_get(e, "limit")), 2,
	    "cap connections: with the limit");
	json_decref(e);
	ok(tree_contains(px_conns.log, want), "cap connections: and the log");
	close(fd[1]);
	close(fd[2]);
	free(rb);
}

/* deflate (zlib-wrapped) of n bytes of ch; malloc'd, length in *len. */
static unsigned char *
deflated(int ch, size_t n, size_t *len)
{
	unsigned char *in = malloc(n), *out;
	uLongf ol = compressBound((uLong)n);

	memset(in, ch, n);
	out = malloc(ol);
	compress2(out, &ol, in, (uLong)n, 9);
	free(in);
	*len = ol;
	return out;
}

/*
 * The reproduction: a deflate body of ~63 KB that decodes to
 * 63 MiB of 0x01 was recorded as ~380 MB of \u0001 escapes. It is now
 * recorded in base64, exactly; a body decoding to over 64 MiB is refused.
 */
static void
test_cap_decoded(void)
{
	const size_t big = 63u * 1024 * 1024;
	struct proxy_config cfg = { 0 };
	unsigned char *z, *d;
	size_t zl, dn, i;
	struct cresp r;
	json_t *rec;
	int same;

	proxy_start_cfg(&px_dec, "capdec", up_url, NULL, &cfg);
	z = deflated(1, big, &zl);
	post(px_dec.s.port, "/v1/messages?dec=63",
	    "Content-Encoding: "
	    "deflate\r\n",
	    z, zl, &r);
	is_int(r.status, 200,
	    "decoded: a %zu-byte deflate body of 63 MiB "
	    "forwarded",
	    zl);
	cresp_free(&r);
	free(z);
	ok(records_size(px_dec.dir) < 90LL * 1024 * 1024,
	    "decoded: recorded "
	    "in %lld bytes, not ~380 MB",
	    records_size(px_dec.dir));
	rec = record_for(px_dec.dir, "/v1/messages?dec=63");
	ok(rs(rec, "body_decoded") == NULL && rs(rec, "body_decoded_base64"),
	    "decoded: as base64");
	d = unb64(rs(rec, "body_decoded_base64") ?: "", &dn);
	for (i = 0, same = dn == big; same && i < dn; i++)
		same = d[i] == 1;
	ok(same, "decoded: exactly the decoded bytes (%zu)", dn);
	free(d);
	json_decref(rec);

	z = deflated(0, 65u * 1024 * 1024, &zl);
	post(px_dec.s.port, "/v1/messages?dec=65",
	    "Content-Encoding: "
	    "deflate\r\n",
	    z, zl, &r);
	check_refusal(2, &r, &px_dec, "/v1/messages?dec=65");
	cresp_free(&r);
	free(z);
}

/* ---- the credential goes to the Messages API only (finding 7) ---- */

static const struct {
	const char *method, *target;
	int forwarded;
} api_paths[] = {
	{ "POST", "/v1/messages", 1 },
	{ "POST", "/v1/messages?beta=true", 1 },
	{ "POST", "/v1/messages/count_tokens", 1 },
	{ "POST", "/v1/messages/count_tokens?beta=true", 1 },
	{ "GET", "/v1/messages", 0 },
	{ "DELETE", "/v1/messages", 0 },
	{ "GET", "/v1/models", 0 },
	{ "POST", "/v1/complete", 0 },
	{ "POST", "/v1/messages/batches", 0 },
	{ "POST", "/v1/messages/", 0 },
	{ "POST", "//v1/messages", 0 },
	{ "POST", "/v1/messages/../models", 0 },
	{ "POST", "/v1/messages/count_tokens/../../models", 0 },
	{ "POST", "/v1/messages%2F..%2Fmodels", 0 },
	{ "POST", "/V1/messages", 0 },
	{ "POST", "/v1/messages;x", 0 },
	{ "POST", "/", 0 },
};

static void
test_messages_only(void)
{
	struct tproxy *px[] = { &px_key, &px_oauth };
	char raw[256];
	struct cresp r;
	struct seen *s;
	json_t *rec;
	size_t i, k;
	int fwd;

	for (k = 0; k < 2; k++) {
		const char *hdr = k == 0 ? "x-api-key" : "authorization";
		const char *want = k == 0 ? API_KEY : "Bearer " OAUTH_TOKEN;

		for (i = 0; i < sizeof(api_paths) / sizeof(api_paths[0]); i++) {
			char target[128];

			/* A marker keeps each case's target apart. */
			snprintf(target, sizeof(target), "%s%sk=%zu.%zu",
			    api_paths[i].target,
			    strchr(api_paths[i].target, '?') ? "&" : "?", k, i);
			snprintf(raw, sizeof(raw),
			    "%s %s HTTP/1.1\r\n"
			    "x-api-key: sk-dummy\r\nContent-Length: "
			    "2\r\n\r\n{}",
			    api_paths[i].method, target);
			request(px[k]->s.port, raw, 0, &r);
			s = seen_for(target);
			fwd = api_paths[i].forwarded;
			is_int(r.status, fwd ? 200 : 403,
			    "%s: %s %s answered %d", hdr, api_paths[i].method,
			    api_paths[i].target, fwd ? 200 : 403);
			if (fwd) {
				is_str(s ? header_value(s, hdr) : NULL, want,
				    "%s: %s %s forwarded with the credential",
				    hdr, api_paths[i].method,
				    api_paths[i].target);
			} else {
				const char *type;

				(void)error_message(&r, &type);
				ok(s == NULL &&
					strcmp(type, "permission_error") == 0,
				    "%s: %s %s refused (permission_error),"
				    " not forwarded",
				    hdr, api_paths[i].method,
				    api_paths[i].target);
				rec = record_for(px[k]->dir, target);
				ok(ri(rec, "status") == 403 && rs(rec, "error"),
				    "%s: %s %s recorded as refused", hdr,
				    api_paths[i].method, api_paths[i].target);
				json_decref(rec);
			}
			cresp_free(&r);
		}
	}
	request(px_key.s.port, "GET /v1/models?limit=5 HTTP/1.1\r\n\r\n", 0,
	    &r);
	is_str(error_message(&r, NULL),
	    "lb-proxy: cannot forward 'GET "
	    "/v1/models' with the credential: only POST /v1/messages and POST "
	    "/v1/messages/count_tokens are",
	    "403: the message");
	cresp_free(&r);
	ok(tree_contains(px_key.log, "GET /v1/models?limit=5 403"),
	    "403: logged");
	/* Offline, the scripted model answers every path. */
	request(px_off.s.port, "GET /v1/models?offline=1 HTTP/1.1\r\n\r\n", 0,
	    &r);
	ok(r.status == 200 && seen_for("/v1/models?offline=1") != NULL,
	    "offline: other paths still forwarded");
	cresp_free(&r);
}

static char lb_proxy_bin[512];

/*
 * lb-proxy itself, the credential handed over a pipe as its standard input
 * (--credential-file /dev/stdin): the upstream gets it, no file does.
 */
static void
test_stdin_credential(void)
{
	static const struct {
		const char *file, *header, *want, *name;
	} creds[] = {
		{ "apikey:" API_KEY "\n", "x-api-key", API_KEY,
		    "stdin apikey" },
		{ "oauth:" OAUTH_TOKEN, "authorization", "Bearer " OAUTH_TOKEN,
		    "stdin oauth" },
	};
	char dir[128], port_s[16], *out;
	size_t i, olen, ocap;

	if (access(lb_proxy_bin, X_OK) != 0) {
		ok(0, "stdin: no lb-proxy at '%s'", lb_proxy_bin);
		return;
	}
	for (i = 0; i < 2; i++) {
		posix_spawn_file_actions_t fa;
		int in[2], outp[2], port = 0, st;
		char target[64];
		const char *argv[] = { lb_proxy_bin, "--listen", "127.0.0.1:0",
			"--upstream", up_url, "--credential-file", "/dev/stdin",
			"--records", dir, NULL };
		struct pollfd q;
		struct cresp r;
		struct seen *s;
		pid_t pid;
		ssize_t n;
		double t0;

		snprintf(dir, sizeof(dir), "%s/stdin%zu", tmp, i);
		if (pipe(in) < 0 || pipe(outp) < 0)
			bail("pipe");
		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_adddup2(&fa, in[0], 0);
		posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
		posix_spawn_file_actions_addclose(&fa, in[1]);
		posix_spawn_file_actions_addclose(&fa, outp[0]);
		if (posix_spawn(&pid, lb_proxy_bin, &fa, NULL,
			(char *const *)argv, environ) != 0)
			bail("posix_spawn lb-proxy");
		posix_spawn_file_actions_destroy(&fa);
		close(in[0]);
		close(outp[1]);
		(void)http_write_all(in[1], creds[i].file,
		    strlen(creds[i].file));
		close(in[1]);
		/* The ready line names the port. */
		ocap = 65536;
		out = calloc(1, ocap);
		olen = 0;
		t0 = now_s();
		while (strchr(out, '\n') == NULL && now_s() - t0 < 20) {
			q.fd = outp[0];
			q.events = POLLIN;
			if (poll(&q, 1, 1000) == 1 &&
			    (n = read(outp[0], out + olen, ocap - olen - 1)) >
				0)
				olen += (size_t)n;
			else if (q.revents & POLLHUP)
				break;
		}
		if (sscanf(out, "lb-proxy: listening on 127.0.0.1:%15[0-9]",
			port_s) == 1)
			port = atoi(port_s);
		ok(port > 0, "%s: lb-proxy started (%.60s)", creds[i].name,
		    out);
		if (port > 0) {
			snprintf(target, sizeof(target),
			    "/v1/messages?stdin=%zu", i);
			post(port, target,
			    "x-api-key: sk-dummy\r\n"
			    "Authorization: Bearer dummy\r\n",
			    "{}", 2, &r);
			is_int(r.status, 200, "%s: answered", creds[i].name);
			cresp_free(&r);
			s = seen_for(target);
			is_str(s ? header_value(s, creds[i].header) : NULL,
			    creds[i].want,
			    "%s: the upstream got the credential "
			    "in %s",
			    creds[i].name, creds[i].header);
			is_int(s ? header_count(s, "x-api-key") +
				    header_count(s, "authorization") :
				   -1,
			    1, "%s: and no other", creds[i].name);
		}
		kill(pid, SIGTERM);
		waitpid(pid, &st, 0);
		while ((n = read(outp[0], out + olen, ocap - olen - 1)) > 0)
			olen += (size_t)n;
		out[olen] = '\0';
		close(outp[0]);
		ok(strstr(out, "/v1/messages?stdin=") != NULL, "%s: logged",
		    creds[i].name);
		ok(!tree_contains(dir, i == 0 ? API_KEY : OAUTH_TOKEN) &&
			strstr(out, i == 0 ? API_KEY : OAUTH_TOKEN) == NULL,
		    "%s: in no record and no log line", creds[i].name);
		free(out);
	}
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(path);
}

int
main(int argc, char **argv)
{
	char url[256], ca[128];
	z_stream z;
	static unsigned char gzb[512];
	const char *gtext = "{\"content\":\"gzip response\"}";

	signal(SIGPIPE, SIG_IGN);
	unsetenv("http_proxy");
	unsetenv("https_proxy");
	unsetenv("HTTPS_PROXY");
	unsetenv("ALL_PROXY");
	unsetenv("all_proxy");
	snprintf(tmp, sizeof(tmp), "/tmp/lb-proxy-test-XXXXXX");
	if (mkdtemp(tmp) == NULL)
		bail("mkdtemp");
	sem_init(&sse_go, 0, 0);
	memset(&z, 0, sizeof(z));
	deflateInit2(&z, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
	z.next_in = (unsigned char *)(uintptr_t)gtext;
	z.avail_in = (uInt)strlen(gtext);
	z.next_out = gzb;
	z.avail_out = sizeof(gzb);
	deflate(&z, Z_FINISH);
	gz_resp = gzb;
	gz_resp_len = z.total_out;
	deflateEnd(&z);
	curl_global_init(CURL_GLOBAL_DEFAULT);

	server_start(&up, upstream, NULL);
	tls_target = up.port;
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", up.port);
	proxy_start(&px_off, "off", url, NULL, NULL, 0, 0);
	proxy_start(&px_key, "key", url, "apikey:" API_KEY "\n", NULL, 0, 0);
	proxy_start(&px_oauth, "oauth", url, "oauth:" OAUTH_TOKEN, NULL, 0, 0);
	proxy_start(&px_bad, "bad", url, NULL, NULL, 0.4, 0);
	proxy_start(&px_slow, "slow", url, NULL, NULL, 0, 1);
	proxy_start(&px_big, "big", url, NULL, NULL, 0, 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/prefix/", up.port);
	proxy_start(&px_prefix, "prefix", url, NULL, NULL, 0, 0);
	{
		int lfd, port;
		char err[256];

		/* A port nobody listens on: bind, note it, close. */
		lfd = http_listen("127.0.0.1:0", &port, err, sizeof(err));
		close(lfd);
		snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
		proxy_start(&px_down, "down", url, NULL, NULL, 0, 2);
	}

	test_forwarding();
	test_big_body();
	test_streaming();
	test_concurrency();
	test_credentials();
	if (make_certs() == 0) {
		server_start(&up_tls, tls_relay, NULL);
		snprintf(url, sizeof(url), "https://127.0.0.1:%d", up_tls.port);
		snprintf(ca, sizeof(ca), "%s/ca.pem", tmp);
		proxy_start(&px_tls, "tls", url, "apikey:" API_KEY, ca, 0, 30);
		proxy_start(&px_tls_noca, "tlsnoca", url, NULL, NULL, 0, 30);
		test_tls();
	} else {
		ok(0, "tls: cannot make test certificates with openssl");
	}
	test_upstream_down();
	test_upstream_timeout();
	test_bad_input();
	test_init_errors();
	snprintf(up_url, sizeof(up_url), "http://127.0.0.1:%d", up.port);
	test_cap_records();
	test_cap_bytes();
	test_cap_connections();
	test_cap_decoded();
	test_messages_only();
	{
		/* build/X/unit/test_proxy -> build/X/lb-proxy */
		const char *e = getenv("LB_PROXY");
		char *slash;

		(void)argc;
		snprintf(lb_proxy_bin, sizeof(lb_proxy_bin), "%s",
		    e ? e : argv[0]);
		if (e == NULL && (slash = strrchr(lb_proxy_bin, '/')) != NULL) {
			*slash = '\0';
			slash = strrchr(lb_proxy_bin, '/');
			snprintf(slash ? slash + 1 : lb_proxy_bin,
			    sizeof(lb_proxy_bin) -
				(size_t)(slash ? slash + 1 - lb_proxy_bin : 0),
			    "lb-proxy");
		}
	}
	test_stdin_credential();

	nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return tap_done();
}
