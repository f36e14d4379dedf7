/*
 * The trap's DNS server (see trap.h): every query is recorded, question by
 * question, and answered NXDOMAIN with its questions echoed; with the
 * simulated internet on, NOERROR with each A question's address in
 * 198.18.0.0/15 (sim.c) instead. UDP on one thread, TCP (two-byte length
 * prefix, RFC 1035 §4.2.2) on a thread per connection.
 *
 * Invariants of the parser, which reads hostile bytes:
 * - No read past len: every label, pointer and fixed field is checked
 *   against the end first.
 * - A compression pointer must point at or after the first question
 *   (offset 12) and strictly before every byte of the name read so far,
 *   so following pointers always moves backwards and ends; at most 127
 *   are followed.
 * - A name is at most 255 bytes on the wire (RFC 1035 §3.1), pointers not
 *   counted; label types 01 and 10 (EDNS0 extended labels) are errors.
 * - The answer copies the question bytes as received: a pointer in them
 *   still points to the same bytes, since the header keeps its size.
 */
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "common/sock.h"
#include "trap/trap.h"

#define DNS_HEADER   12
#define MAX_POINTERS 127

static const struct {
	uint16_t code;
	const char *name;
} types[] = {
	{ 1, "A" }, { 2, "NS" }, { 5, "CNAME" }, { 6, "SOA" }, { 12, "PTR" },
	{ 13, "HINFO" }, { 15, "MX" }, { 16, "TXT" }, { 28, "AAAA" },
	{ 33, "SRV" }, { 35, "NAPTR" }, { 43, "DS" }, { 48, "DNSKEY" },
	{ 52, "TLSA" }, { 64, "SVCB" }, { 65, "HTTPS" }, { 99, "SPF" },
	{ 252, "AXFR" }, { 255, "ANY" }, { 257, "CAA" },
}, classes[] = {
	{ 1, "IN" }, { 3, "CH" }, { 4, "HS" }, { 254, "NONE" }, { 255, "ANY" },
};

const char *
dns_type_name(uint16_t type)
{
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].code == type)
			return types[i].name;
	return NULL;
}

const char *
dns_class_name(uint16_t class)
{
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (classes[i].code == class)
			return classes[i].name;
	return NULL;
}

static uint16_t
get16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/*
 * Reads the name at *off into out (presentation format) and moves *off
 * past it in the message. 0, or -1 with *why.
 */
static int
read_name(const unsigned char *msg, size_t len, size_t *off, char *out,
    size_t outlen, const char **why)
{
	size_t pos = *off, o = 0, wire = 0, limit = *off;
	int jumped = 0, pointers = 0;
	unsigned char c;

	for (;;) {
		if (pos >= len) {
			*why = "name runs past the end of the message";
			return -1;
		}
		c = msg[pos];
		if ((c & 0xc0) == 0xc0) {
			size_t to;

			if (pos + 1 >= len) {
				*why = "compression pointer cut short";
				return -1;
			}
			to = (size_t)(get16(msg + pos) & 0x3fff);
			if (to >= limit || to < DNS_HEADER) {
				*why = "compression pointer does not point "
				       "backwards into the questions";
				return -1;
			}
			if (++pointers > MAX_POINTERS) {
				*why = "too many compression pointers";
				return -1;
			}
			if (!jumped)
				*off = pos + 2;
			jumped = 1;
			pos = limit = to;
			continue;
		}
		if ((c & 0xc0) != 0) {
			*why = "reserved label type";
			return -1;
		}
		pos++;
		if (c == 0)
			break;
		wire += (size_t)c + 1;
		if (wire + 1 > 255) {
			*why = "name longer than 255 bytes";
			return -1;
		}
		if (c > len - pos) {
			*why = "label runs past the end of the message";
			return -1;
		}
		if (o > 0)
			out[o++] = '.';
		o += trap_escape_label(msg + pos, c, out + o, outlen - o);
		pos += c;
	}
	if (o == 0)
		out[o++] = '.';
	out[o] = '\0';
	if (!jumped)
		*off = pos;
	return 0;
}

int
dns_parse_query(const unsigned char *msg, size_t len, struct dns_query *q,
    const char **why)
{
	size_t off = DNS_HEADER;
	uint16_t qd;
	int i;

	memset(q, 0, sizeof(*q));
	if (len < DNS_HEADER) {
		*why = "message shorter than a DNS header";
		return -1;
	}
	q->id = get16(msg);
	q->flags = get16(msg + 2);
	if (q->flags & 0x8000) {
		*why = "message is a response";
		return -1;
	}
	qd = get16(msg + 4);
	if (qd == 0) {
		*why = "no question";
		return -1;
	}
	if (qd > DNS_MAX_QUESTIONS) {
		*why = "too many questions";
		return -1;
	}
	for (i = 0; i < qd; i++) {
		struct dns_question *d = &q->q[i];

		d->off = off;
		if (read_name(msg, len, &off, d->name, sizeof(d->name), why) <
		    0)
			return -1;
		if (len - off < 4) {
			*why = "question cut short";
			return -1;
		}
		d->type = get16(msg + off);
		d->class = get16(msg + off + 2);
		off += 4;
		q->nq = i + 1;
	}
	q->qend = off;
	return 0;
}

size_t
dns_answer(const unsigned char *msg, size_t len, unsigned char *out,
    size_t outlen)
{
	return dns_answer_sim(msg, len, out, outlen, NULL);
}

/* Appends an A record for the question at off: 16 bytes, or 0. */
static size_t
answer_a(unsigned char *out, size_t n, size_t outlen, size_t off, uint32_t addr)
{
	unsigned char *p = out + n;

	if (outlen - n < 16 || off > 0x3fff)
		return 0;
	p[0] = (unsigned char)(0xc0 | (off >> 8));
	p[1] = (unsigned char)off;
	p[2] = 0, p[3] = 1;			 /* A */
	p[4] = 0, p[5] = 1;			 /* IN */
	p[6] = 0, p[7] = 0, p[8] = 0, p[9] = 60; /* TTL */
	p[10] = 0, p[11] = 4;
	p[12] = (unsigned char)(addr >> 24);
	p[13] = (unsigned char)(addr >> 16);
	p[14] = (unsigned char)(addr >> 8);
	p[15] = (unsigned char)addr;
	return 16;
}

size_t
dns_answer_sim(const unsigned char *msg, size_t len, unsigned char *out,
    size_t outlen, struct trap_sim *sim)
{
	struct dns_query q;
	const char *why;
	uint16_t flags, opcode;
	size_t n = DNS_HEADER, a;
	int rcode, i, an = 0;

	if (len < DNS_HEADER || outlen < DNS_HEADER || (msg[2] & 0x80))
		return 0;
	opcode = (msg[2] >> 3) & 0x0f;
	if (opcode != 0)
		rcode = 4; /* NOTIMP */
	else if (dns_parse_query(msg, len, &q, &why) < 0)
		rcode = 1; /* FORMERR */
	else
		rcode = sim != NULL ? 0 : 3; /* NOERROR, NXDOMAIN */
	/* QR, the opcode, AA, RD as asked, RA; the rcode. */
	flags = (uint16_t)(0x8000 | (opcode << 11) | 0x0400 |
	    (get16(msg + 2) & 0x0100) | 0x0080 | rcode);
	memset(out, 0, DNS_HEADER);
	out[0] = msg[0];
	out[1] = msg[1];
	out[2] = (unsigned char)(flags >> 8);
	out[3] = (unsigned char)flags;
	if ((rcode == 3 || rcode == 0) && q.qend <= outlen) {
		out[5] = (unsigned char)q.nq;
		memcpy(out + DNS_HEADER, msg + DNS_HEADER, q.qend - DNS_HEADER);
		n = q.qend;
		for (i = 0; rcode == 0 && i < q.nq; i++) {
			uint32_t addr;

			if (q.q[i].type != 1 || q.q[i].class != 1 ||
			    (addr = trap_sim_addr(sim, q.q[i].name)) == 0)
				continue;
			a = answer_a(out, n, outlen, q.q[i].off, addr);
			n += a;
			an += a > 0;
		}
	}
	out[7] = (unsigned char)an;
	return n;
}

size_t
trap_dns_message(struct trap *t, const char *proto, const unsigned char *msg,
    size_t len, unsigned char *out, size_t outlen)
{
	struct dns_query q;
	struct jline j;
	const char *why = NULL, *s;
	int i;

	if (dns_parse_query(msg, len, &q, &why) < 0) {
		jl_begin(&j, "dns");
		jl_str(&j, "proto", proto, strlen(proto));
		jl_str(&j, "error", why, strlen(why));
		jl_bytes(&j, "raw", msg,
		    len < TRAP_RAW_CAP ? len : TRAP_RAW_CAP);
		jl_end(&j);
		(void)trap_log_put(&t->log, &j);
	}
	for (i = 0; i < q.nq && why == NULL; i++) {
		jl_begin(&j, "dns");
		jl_str(&j, "proto", proto, strlen(proto));
		jl_str(&j, "name", q.q[i].name, strlen(q.q[i].name));
		if ((s = dns_type_name(q.q[i].type)) != NULL)
			jl_str(&j, "type", s, strlen(s));
		else
			jl_int(&j, "type", q.q[i].type);
		if ((s = dns_class_name(q.q[i].class)) != NULL)
			jl_str(&j, "class", s, strlen(s));
		else
			jl_int(&j, "class", q.q[i].class);
		if (t->sim != NULL && q.q[i].type == 1 && q.q[i].class == 1) {
			uint32_t addr = trap_sim_addr(t->sim, q.q[i].name);
			char text[INET_ADDRSTRLEN];
			struct in_addr ia = { .s_addr = htonl(addr) };

			if (addr != 0) {
				inet_ntop(AF_INET, &ia, text, sizeof(text));
				jl_str(&j, "answer", text, strlen(text));
			} else {
				jl_raw(&j, "answer", "null");
			}
		}
		jl_end(&j);
		(void)trap_log_put(&t->log, &j);
	}
	return dns_answer_sim(msg, len, out, outlen, t->sim);
}

int
trap_bind(const char *addr, int socktype, int *port_out, char *err,
    size_t errlen)
{
	char host[256], port[16], why[128];
	const char *colon = strrchr(addr, ':');
	size_t hl;
	int fd, gai;

	if (colon == NULL || colon == addr || colon[1] == '\0' ||
	    (hl = (size_t)(colon - addr)) >= sizeof(host) ||
	    strlen(colon + 1) >= sizeof(port)) {
		snprintf(err, errlen, "cannot bind '%s': expected HOST:PORT",
		    addr);
		return -1;
	}
	if (addr[0] == '[' && hl >= 2 && addr[hl - 1] == ']') {
		memcpy(host, addr + 1, hl - 2);
		host[hl - 2] = '\0';
	} else {
		memcpy(host, addr, hl);
		host[hl] = '\0';
	}
	strcpy(port, colon + 1);
	fd = sock_bind(host, port, socktype, AI_NUMERICHOST, port_out, &gai);
	if (fd >= 0)
		return fd;
	snprintf(why, sizeof(why), "%s",
	    gai != 0 ? gai_strerror(gai) : strerror(errno));
	if (gai == 0 && why[0] >= 'A' && why[0] <= 'Z' && why[1] >= 'a')
		why[0] = (char)(why[0] - 'A' + 'a');
	snprintf(err, errlen, "cannot bind '%s': %s", addr, why);
	return -1;
}

void *
trap_dns_udp_thread(void *arg)
{
	struct trap_udp *a = arg;
	unsigned char *in = malloc(65536), *out = malloc(65536);
	struct sockaddr_storage ss;
	socklen_t sl;
	ssize_t n;
	size_t m;

	while (in != NULL && out != NULL) {
		sl = sizeof(ss);
		n = recvfrom(a->fd, in, 65536, 0, (struct sockaddr *)&ss, &sl);
		if (n < 0) {
			if (errno == EINTR || errno == ECONNREFUSED)
				continue;
			poll(NULL, 0, 10);
			continue;
		}
		m = trap_dns_message(a->t, "udp", in, (size_t)n, out, 65536);
		if (m > 0)
			(void)sendto(a->fd, out, m, MSG_DONTWAIT,
			    (struct sockaddr *)&ss, sl);
	}
	free(in);
	free(out);
	return NULL;
}

/* Reads exactly n bytes. 1, 0 at end of stream or on timeout, -1 on error. */
static int
read_full(int fd, unsigned char *p, size_t n)
{
	ssize_t r;

	while (n > 0) {
		r = read(fd, p, n);
		if (r == 0)
			return 0;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 1;
}

void
trap_dns_tcp_handler(struct http_conn *c, void *ctx)
{
	struct trap *t = ctx;
	struct timeval tv = { .tv_sec = t->lim.idle_ms / 1000,
		.tv_usec = (t->lim.idle_ms % 1000) * 1000 };
	unsigned char *in, *out, len2[2];
	size_t n, m;
	int i;

	if (__atomic_add_fetch(&t->active, 1, __ATOMIC_RELAXED) >
	    t->lim.max_conns) {
		__atomic_sub_fetch(&t->active, 1, __ATOMIC_RELAXED);
		return;
	}
	(void)setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	in = malloc(65536);
	out = malloc(65536 + 2);
	for (i = 0; in != NULL && out != NULL && i < TRAP_MAX_REQUESTS; i++) {
		if (read_full(c->fd, len2, 2) <= 0)
			break;
		n = get16(len2);
		if (read_full(c->fd, in, n) <= 0)
			break;
		m = trap_dns_message(t, "tcp", in, n, out + 2, 65536);
		if (m == 0)
			break;
		out[0] = (unsigned char)(m >> 8);
		out[1] = (unsigned char)m;
		if (http_write_all(c->fd, out, m + 2) < 0)
			break;
	}
	free(in);
	free(out);
	__atomic_sub_fetch(&t->active, 1, __ATOMIC_RELAXED);
}
