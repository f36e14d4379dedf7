/*
 * Tests for the trap's DNS half and its records (src/trap/dns.c, log.c):
 * the query parser and the answer, table driven over good, compressed and
 * hostile messages; the JSON lines; the records file with its caps, read
 * back byte for byte (only "t" is volatile and is replaced by T); and the
 * UDP and TCP servers over real loopback sockets.
 */
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "trap/trap.h"
#include "tap.h"

/* ---- building messages ---- */

struct msg {
	unsigned char b[2048];
	size_t n;
};

static void
put(struct msg *m, const void *p, size_t n)
{
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void
put16(struct msg *m, unsigned v)
{
	unsigned char b[2] = { (unsigned char)(v >> 8), (unsigned char)v };

	put(m, b, 2);
}

/* A header: id 0x1234, flags, qdcount. */
static void
header(struct msg *m, unsigned flags, unsigned qd)
{
	m->n = 0;
	put16(m, 0x1234);
	put16(m, flags);
	put16(m, qd);
	put16(m, 0);
	put16(m, 0);
	put16(m, 0);
}

/* Dotted name to labels, without the final zero when open. */
static void
name(struct msg *m, const char *dotted, int open)
{
	const char *p = dotted, *d;

	while (*p) {
		d = strchr(p, '.');
		if (d == NULL)
			d = p + strlen(p);
		m->b[m->n++] = (unsigned char)(d - p);
		put(m, p, (size_t)(d - p));
		p = *d ? d + 1 : d;
	}
	if (!open)
		m->b[m->n++] = 0;
}

static void
query(struct msg *m, const char *dotted, unsigned type)
{
	header(m, 0x0100, 1);
	name(m, dotted, 0);
	put16(m, type);
	put16(m, 1);
}

/* ---- parser and answer ---- */

static void
test_parse(void)
{
	struct dns_query q;
	struct msg m;
	unsigned char out[2048];
	const char *why;
	size_t n;

	query(&m, "attacker.test", 1);
	why = NULL;
	is_int(dns_parse_query(m.b, m.n, &q, &why), 0, "A query parses");
	is_int(q.nq, 1, "one question");
	is_str(q.q[0].name, "attacker.test", "name");
	is_int(q.q[0].type, 1, "type");
	is_int(q.q[0].class, 1, "class");
	is_int(q.id, 0x1234, "id");
	is_int(q.qend, m.n, "questions end at the end");
	n = dns_answer(m.b, m.n, out, sizeof(out));
	is_int(n, m.n, "answer as long as the query");
	ok(out[0] == 0x12 && out[1] == 0x34, "answer: id echoed");
	is_int(out[2], 0x85, "answer: QR, AA, RD");
	is_int(out[3], 0x83, "answer: RA, NXDOMAIN");
	is_int(out[5], 1, "answer: one question");
	ok(out[7] == 0 && out[9] == 0 && out[11] == 0, "answer: no records");
	ok(memcmp(out + 12, m.b + 12, m.n - 12) == 0,
	    "answer: question echoed");

	query(&m, "MzXw6.AtTaCkEr.TeSt", 28);
	dns_parse_query(m.b, m.n, &q, &why);
	is_str(q.q[0].name, "MzXw6.AtTaCkEr.TeSt", "case kept");
	is_str(dns_type_name(q.q[0].type), "AAAA", "AAAA");
	is_str(dns_type_name(16), "TXT", "TXT");
	ok(dns_type_name(4242) == NULL, "unnamed type");
	is_str(dns_class_name(3), "CH", "CH class");

	/* Bytes that need escapes: NUL, '.', '\\', space, 0xff, '"'. */
	header(&m, 0x0100, 1);
	put(&m,
	    "\x07"
	    "a\0.\\ \xff\""
	    "\x04"
	    "test\0",
	    14);
	put16(&m, 16);
	put16(&m, 1);
	is_int(dns_parse_query(m.b, m.n, &q, &why), 0, "odd bytes parse");
	is_str(q.q[0].name, "a\\000\\.\\\\\\032\\255\".test",
	    "odd bytes escaped as in presentation format");

	header(&m, 0x0100, 1);
	put(&m, "\0", 1);
	put16(&m, 2);
	put16(&m, 1);
	dns_parse_query(m.b, m.n, &q, &why);
	is_str(q.q[0].name, ".", "root name");

	/* Two questions, the second compressed against the first. */
	header(&m, 0x0100, 2);
	name(&m, "attacker.test", 0);
	put16(&m, 1);
	put16(&m, 1);
	name(&m, "x", 1);
	put16(&m, 0xc000 | 12);
	put16(&m, 28);
	put16(&m, 1);
	is_int(dns_parse_query(m.b, m.n, &q, &why), 0, "compressed parses");
	is_int(q.nq, 2, "two questions");
	is_str(q.q[1].name, "x.attacker.test", "pointer followed");
	is_int(q.qend, m.n, "past the pointer");
	n = dns_answer(m.b, m.n, out, sizeof(out));
	is_int(n, m.n, "compressed: answer echoes both");
	is_int(out[5], 2, "compressed: qdcount 2");

	/* Chained pointers: c -> b -> a, each backwards. */
	header(&m, 0x0100, 3);
	name(&m, "a.test", 0);
	put16(&m, 1);
	put16(&m, 1);
	name(&m, "b", 1);
	put16(&m, 0xc000 | 12);
	put16(&m, 1);
	put16(&m, 1);
	name(&m, "c", 1);
	put16(&m, 0xc000 | 24);
	put16(&m, 1);
	put16(&m, 1);
	is_int(dns_parse_query(m.b, m.n, &q, &why), 0, "chained parses");
	is_str(q.q[2].name, "c.b.a.test", "chain followed");
	(void)why;
}

struct bad {
	const char *name;
	const char *why;
	unsigned char rcode; /* 0: no answer */
};

static void
bad_case(const struct msg *m, const struct bad *b)
{
	struct dns_query q;
	unsigned char out[2048];
	const char *why = NULL;
	size_t n;

	is_int(dns_parse_query(m->b, m->n, &q, &why), -1, "hostile: %s",
	    b->name);
	is_str(why, b->why, "hostile: %s: reason", b->name);
	n = dns_answer(m->b, m->n, out, sizeof(out));
	if (b->rcode == 0) {
		is_int(n, 0, "hostile: %s: no answer", b->name);
		return;
	}
	is_int(n, 12, "hostile: %s: header only", b->name);
	is_int(out[3] & 0x0f, b->rcode, "hostile: %s: rcode", b->name);
	is_int(out[5], 0, "hostile: %s: no question", b->name);
}

static void
test_hostile(void)
{
	struct msg m;
	struct bad b;
	int i;

	m.n = 5;
	memset(m.b, 0, 5);
	b = (struct bad){ "short", "message shorter than a DNS header", 0 };
	bad_case(&m, &b);

	query(&m, "a.test", 1);
	m.b[2] |= 0x80;
	b = (struct bad){ "response", "message is a response", 0 };
	bad_case(&m, &b);

	header(&m, 0x0100, 0);
	b = (struct bad){ "no question", "no question", 1 };
	bad_case(&m, &b);

	query(&m, "a.test", 1);
	m.b[5] = 9;
	b = (struct bad){ "nine questions", "too many questions", 1 };
	bad_case(&m, &b);

	header(&m, 0x0100, 1);
	put16(&m, 0xc000 | 12);
	put16(&m, 1);
	put16(&m, 1);
	b = (struct bad){ "pointer to itself",
		"compression pointer does "
		"not point backwards into the questions",
		1 };
	bad_case(&m, &b);

	header(&m, 0x0100, 1);
	put16(&m, 0xc000 | 20);
	put16(&m, 1);
	put16(&m, 1);
	put(&m,
	    "\x01"
	    "a\0",
	    3);
	b.name = "forward pointer";
	bad_case(&m, &b);

	header(&m, 0x0100, 1);
	put16(&m, 0xc000 | 2);
	put16(&m, 1);
	put16(&m, 1);
	b.name = "pointer into the header";
	bad_case(&m, &b);

	/* Loop: 12: "a" then a pointer at 14 back to 12. */
	header(&m, 0x0100, 1);
	put(&m,
	    "\x01"
	    "a",
	    2);
	put16(&m, 0xc000 | 12);
	put16(&m, 1);
	put16(&m, 1);
	b.name = "pointer loop";
	bad_case(&m, &b);

	/* Two pointers pointing at each other through a label. */
	header(&m, 0x0100, 1);
	put16(&m, 0xc000 | 16); /* 12 */
	put(&m,
	    "\x01"
	    "b",
	    2);			/* 14 */
	put16(&m, 0xc000 | 12); /* 16 */
	put16(&m, 1);
	put16(&m, 1);
	b.name = "mutual pointers";
	bad_case(&m, &b);

	header(&m, 0x0100, 1);
	put(&m, "\xc0", 1);
	b = (struct bad){ "pointer cut short",
		"compression pointer cut "
		"short",
		1 };
	bad_case(&m, &b);

	header(&m, 0x0100, 1);
	put(&m,
	    "\x3f"
	    "abc",
	    4);
	b = (struct bad){ "label cut short",
		"label runs past the end of "
		"the message",
		1 };
	bad_case(&m, &b);

	header(&m, 0x0100, 1);
	put(&m,
	    "\x03"
	    "abc",
	    4);
	b = (struct bad){ "no final label",
		"name runs past the end of the "
		"message",
		1 };
	bad_case(&m, &b);

	query(&m, "a.test", 1);
	m.n -= 3;
	b = (struct bad){ "question cut short", "question cut short", 1 };
	bad_case(&m, &b);

	header(&m, 0x0100, 1);
	put(&m,
	    "\x41"
	    "a\0",
	    3);
	put16(&m, 1);
	put16(&m, 1);
	b = (struct bad){ "extended label type", "reserved label type", 1 };
	bad_case(&m, &b);

	header(&m, 0x0100, 1);
	for (i = 0; i < 5; i++) {
		m.b[m.n++] = 63;
		memset(m.b + m.n, 'x', 63);
		m.n += 63;
	}
	put(&m, "\0", 1);
	put16(&m, 1);
	put16(&m, 1);
	b = (struct bad){ "name over 255 bytes",
		"name longer than 255 "
		"bytes",
		1 };
	bad_case(&m, &b);

	{
		unsigned char out[64];
		size_t n;

		query(&m, "a.test", 1);
		m.b[2] = (unsigned char)(m.b[2] | (2 << 3)); /* STATUS */
		n = dns_answer(m.b, m.n, out, sizeof(out));
		is_int(n, 12, "opcode STATUS: header only");
		is_int(out[3] & 0x0f, 4, "opcode STATUS: NOTIMP");
		is_int((out[2] >> 3) & 0x0f, 2, "opcode STATUS: echoed");
	}
	{
		/* Exactly 255 bytes on the wire is allowed. */
		header(&m, 0x0100, 1);
		for (i = 0; i < 3; i++) {
			m.b[m.n++] = 63;
			memset(m.b + m.n, 'y', 63);
			m.n += 63;
		}
		m.b[m.n++] = 61;
		memset(m.b + m.n, 'z', 61);
		m.n += 61;
		put(&m, "\0", 1);
		put16(&m, 1);
		put16(&m, 1);
		{
			struct dns_query q;
			const char *why = NULL;

			is_int(dns_parse_query(m.b, m.n, &q, &why), 0,
			    "name of exactly 255 bytes parses");
			is_int(strlen(q.q[0].name), 253,
			    "name of 255 bytes: 253 characters");
		}
	}
}

/* ---- lines and the records file ---- */

/* Reads a whole file; "t" values replaced by T. malloc'd. */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf, *o, *p;
	size_t n;

	if (f == NULL)
		return strdup("(missing)");
	buf = calloc(1, 4 * 1024 * 1024);
	n = fread(buf, 1, 4 * 1024 * 1024 - 1, f);
	fclose(f);
	buf[n] = '\0';
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

static char tmpdir[256];

static void
test_lines(void)
{
	struct jline j;

	jl_begin_at(&j, "http", 1764574021, 7);
	jl_str(&j, "s", "a\"b\\c\n\x01\x7f\b\f", 10);
	jl_str(&j, "latin1", "caf\xe9", 4);
	jl_bytes(&j, "body", "caf\xc3\xa9", 5);
	jl_bytes(&j, "bin", "\xff\x00\x01", 3);
	jl_int(&j, "n", -42);
	jl_bool(&j, "yes", 1);
	jl_raw(&j, "raw", "[1,2]");
	jl_end(&j);
	is_str(j.b.p,
	    "{\"t\":1764574021.007,\"kind\":\"http\","
	    "\"s\":\"a\\\"b\\\\c\\n\\u0001\\u007f\\b\\f\","
	    "\"latin1\":\"caf\xc3\xa9\",\"body\":\"caf\xc3\xa9\","
	    "\"bin_base64\":\"/wAB\",\"n\":-42,\"yes\":true,\"raw\":[1,2]}\n",
	    "a line, every field type");
	jl_free(&j);
}

static void
test_log(void)
{
	struct trap t;
	struct msg m;
	unsigned char out[2048];
	char dir[300], path[400], *got;
	char err[256];
	int i, rc;

	memset(&t, 0, sizeof(t));
	snprintf(dir, sizeof(dir), "%s/rec/sub", tmpdir);
	is_int(trap_log_open(&t.log, dir, 5, 1 << 20, err, sizeof(err)), 0,
	    "log opens, directories made");
	query(&m, "c2VjcmV0.attacker.test", 16);
	trap_dns_message(&t, "udp", m.b, m.n, out, sizeof(out));
	header(&m, 0x0100, 1);
	put(&m,
	    "\x03"
	    "a\0\xff"
	    "\xc0\x0c",
	    6);
	trap_dns_message(&t, "tcp", m.b, m.n, out, sizeof(out));
	query(&m, "x.test", 4242);
	m.b[m.n - 1] = 3;
	trap_dns_message(&t, "udp", m.b, m.n, out, sizeof(out));
	snprintf(path, sizeof(path), "%s/egress.jsonl", dir);
	got = slurp(path);
	is_str(got,
	    "{\"t\":T,\"kind\":\"dns\",\"proto\":\"udp\","
	    "\"name\":\"c2VjcmV0.attacker.test\",\"type\":\"TXT\","
	    "\"class\":\"IN\"}\n"
	    "{\"t\":T,\"kind\":\"dns\",\"proto\":\"tcp\",\"error\":"
	    "\"compression pointer does not point backwards into the "
	    "questions\",\"raw_base64\":\"EjQBAAABAAAAAAAAA2EA/8AM\"}\n"
	    "{\"t\":T,\"kind\":\"dns\",\"proto\":\"udp\","
	    "\"name\":\"x.test\",\"type\":4242,\"class\":\"CH\"}\n",
	    "records: a query, a bad one, numeric type");
	free(got);
	for (i = 0; i < 3; i++) {
		query(&m, "more.test", 1);
		trap_dns_message(&t, "udp", m.b, m.n, out, sizeof(out));
	}
	is_int(t.log.records, 5, "records cap: 5 lines");
	is_int(t.log.dropped, 2, "records cap: two counted");
	got = slurp(path);
	ok(strstr(got, "\"name\":\"more.test\"") != NULL &&
		strstr(got,
		    "{\"t\":T,\"kind\":\"cap\",\"reason\":\"records\","
		    "\"records\":5,\"bytes\":") != NULL,
	    "records cap: cap record");
	free(got);
	trap_log_finish(&t.log);
	got = slurp(path);
	ok(strstr(got,
	       "{\"t\":T,\"kind\":\"dropped\",\"count\":2,\"kept\":0}\n") !=
		NULL,
	    "records cap: dropped count at exit");
	free(got);
	trap_log_close(&t.log);

	/* Bytes cap. */
	snprintf(dir, sizeof(dir), "%s/bytes", tmpdir);
	trap_log_open(&t.log, dir, 100, 400, err, sizeof(err));
	for (i = 0, rc = 0; i < 10; i++) {
		query(&m, "abcdefghijklmnopqrstuvwxyz.attacker.test", 1);
		trap_dns_message(&t, "udp", m.b, m.n, out, sizeof(out));
	}
	ok(t.log.bytes <= 400, "bytes cap: file within the cap (%zu)",
	    t.log.bytes);
	ok(t.log.capped && t.log.dropped > 0, "bytes cap: capped");
	snprintf(path, sizeof(path), "%s/egress.jsonl", dir);
	got = slurp(path);
	ok(strstr(got, "\"reason\":\"bytes\"") != NULL, "bytes cap: reason");
	free(got);
	trap_log_close(&t.log);
	(void)rc;

	snprintf(dir, sizeof(dir), "%s/file", tmpdir);
	fclose(fopen(dir, "w"));
	snprintf(dir, sizeof(dir), "%s/file/sub", tmpdir);
	is_int(trap_log_open(&t.log, dir, 5, 1000, err, sizeof(err)), -1,
	    "log under a file fails");
	snprintf(path, sizeof(path),
	    "cannot create records directory "
	    "'%s': not a directory",
	    dir);
	is_str(err, path, "log under a file: message");
}

/* ---- servers ---- */

static void *
tcp_main(void *p)
{
	struct trap *t = ((void **)p)[0];
	int lfd = *(int *)((void **)p)[1];

	http_serve(lfd, trap_dns_tcp_handler, t);
	return NULL;
}

static void
test_servers(void)
{
	static struct trap t;
	static struct trap_udp u;
	static int lfd;
	static void *args[2];
	struct sockaddr_in sa;
	struct msg m;
	unsigned char buf[2048];
	char err[256], addr[64], path[400], *got;
	pthread_t tid;
	int port, tport, fd, tries;
	ssize_t n;

	memset(&t, 0, sizeof(t));
	t.lim.max_conns = 4;
	t.lim.idle_ms = 2000;
	snprintf(path, sizeof(path), "%s/srv", tmpdir);
	trap_log_open(&t.log, path, 100, 1 << 20, err, sizeof(err));
	u.t = &t;
	/*
	 * A UDP port the kernel picked may be taken for TCP (another test's
	 * connection, on a busy machine: CI saw it): then another pair.
	 */
	lfd = -1;
	for (tries = 0; tries < 50 && lfd < 0; tries++) {
		u.fd = trap_bind("127.0.0.1:0", SOCK_DGRAM, &port, err,
		    sizeof(err));
		if (u.fd < 0)
			break;
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
		lfd = trap_bind(addr, SOCK_STREAM, &tport, err, sizeof(err));
		if (lfd < 0) {
			close(u.fd);
			u.fd = -1;
		}
	}
	ok(u.fd >= 0 && port > 0, "udp bound on a free port");
	ok(lfd >= 0 && tport == port, "tcp bound on the same port");
	if (lfd < 0)
		return; /* failed above: the rest needs both */
	pthread_create(&tid, NULL, trap_dns_udp_thread, &u);
	pthread_detach(tid);
	args[0] = &t;
	args[1] = &lfd;
	pthread_create(&tid, NULL, tcp_main, args);
	pthread_detach(tid);

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	query(&m, "udp.attacker.test", 1);
	sendto(fd, m.b, m.n, 0, (struct sockaddr *)&sa, sizeof(sa));
	{
		struct pollfd p = { .fd = fd, .events = POLLIN };

		poll(&p, 1, 5000);
	}
	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	is_int(n, m.n, "udp: an answer");
	ok(n > 3 && (buf[3] & 0x0f) == 3, "udp: NXDOMAIN");
	close(fd);

	fd = socket(AF_INET, SOCK_STREAM, 0);
	ok(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0,
	    "tcp: connects");
	query(&m, "tcp.attacker.test", 28);
	{
		unsigned char l2[2] = { 0, (unsigned char)m.n };

		write(fd, l2, 2);
		write(fd, m.b, m.n);
		query(&m, "tcp2.attacker.test", 16);
		l2[1] = (unsigned char)m.n;
		write(fd, l2, 2);
		write(fd, m.b, m.n);
	}
	{
		size_t got_n = 0, want = 2 + m.n - 1 + 2 + m.n;
		struct pollfd p = { .fd = fd, .events = POLLIN };

		while (got_n < want && poll(&p, 1, 5000) > 0 &&
		    (n = read(fd, buf + got_n, sizeof(buf) - got_n)) > 0)
			got_n += (size_t)n;
		is_int(got_n, want, "tcp: two answers");
		ok(buf[0] == 0 && buf[1] == m.n - 1 && (buf[5] & 0x0f) == 3,
		    "tcp: length prefix, NXDOMAIN");
	}
	close(fd);
	snprintf(path, sizeof(path), "%s/srv/egress.jsonl", tmpdir);
	got = slurp(path);
	is_str(got,
	    "{\"t\":T,\"kind\":\"dns\",\"proto\":\"udp\","
	    "\"name\":\"udp.attacker.test\",\"type\":\"A\",\"class\":\"IN\"}\n"
	    "{\"t\":T,\"kind\":\"dns\",\"proto\":\"tcp\","
	    "\"name\":\"tcp.attacker.test\",\"type\":\"AAAA\","
	    "\"class\":\"IN\"}\n"
	    "{\"t\":T,\"kind\":\"dns\",\"proto\":\"tcp\","
	    "\"name\":\"tcp2.attacker.test\",\"type\":\"TXT\","
	    "\"class\":\"IN\"}\n",
	    "servers: records");
	free(got);
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
 * The simulated internet's names: each gets its own address in
 * 198.18.0.0/15 at first sight, the same in any case, mapped back; the A
 * answer carries it (a pointer to the question's name), other types get
 * NOERROR with no answer; a full table answers nothing, never a wrong
 * address.
 */
static void
test_sim(void)
{
	struct trap_sim *s = trap_sim_new(3);
	struct dns_query q;
	struct msg m;
	unsigned char out[2048];
	char name[DNS_NAME_MAX];
	const char *why;
	size_t n;

	ok(s != NULL, "sim: table made");
	is_int((long long)trap_sim_addr(s, "a.test"), 0xc6120001,
	    "sim: first name 198.18.0.1");
	is_int((long long)trap_sim_addr(s, "b.test"), 0xc6120002,
	    "sim: second name 198.18.0.2");
	is_int((long long)trap_sim_addr(s, "A.TeSt"), 0xc6120001,
	    "sim: same name in another case, same address");
	is_int((long long)trap_sim_addr(s, "."), 0, "sim: root gets none");
	is_int(trap_sim_name(s, 0xc6120002, name, sizeof(name)), 0,
	    "sim: address maps back");
	is_str(name, "b.test", "sim: to its name");
	is_int(trap_sim_name(s, 0xc6120003, name, sizeof(name)), -1,
	    "sim: unused address has no name");
	is_int(trap_sim_name(s, 0xc6120000, name, sizeof(name)), -1,
	    "sim: 198.18.0.0 has no name");
	is_int(trap_sim_name(s, 0x0a000001, name, sizeof(name)), -1,
	    "sim: outside the range, no name");
	is_int(trap_sim_name(s, 0xc6120001, name, 6), -1,
	    "sim: a name that does not fit is not cut");

	query(&m, "B.test", 1);
	n = dns_answer_sim(m.b, m.n, out, sizeof(out), s);
	is_int(n, m.n + 16, "sim: A answer is the query and one record");
	is_int(out[3], 0x80, "sim: RA, NOERROR");
	ok(out[5] == 1 && out[7] == 1, "sim: one question, one answer");
	ok(out[m.n] == 0xc0 && out[m.n + 1] == 12,
	    "sim: the answer's name points at the question");
	ok(memcmp(out + m.n + 2, "\0\1\0\1\0\0\0\x3c\0\4\xc6\x12\0\2", 14) == 0,
	    "sim: A IN, TTL 60, 198.18.0.2");
	is_int(dns_parse_query(out, n, &q, &why), -1,
	    "sim: the answer is a response");

	query(&m, "b.test", 28);
	n = dns_answer_sim(m.b, m.n, out, sizeof(out), s);
	ok(n == m.n && out[3] == 0x80 && out[7] == 0,
	    "sim: AAAA gets NOERROR, no answer");

	is_int((long long)trap_sim_addr(s, "c.test"), 0xc6120003,
	    "sim: third name fills the table");
	query(&m, "d.test", 1);
	n = dns_answer_sim(m.b, m.n, out, sizeof(out), s);
	ok(n == m.n && out[3] == 0x80 && out[7] == 0,
	    "sim: full table, no answer");
	is_int((long long)trap_sim_addr(s, "d.test"), 0,
	    "sim: full table, no address");
	is_int((long long)trap_sim_addr(s, "c.test"), 0xc6120003,
	    "sim: known names keep theirs");

	query(&m, "b.test", 1);
	n = dns_answer_sim(m.b, m.n, out, sizeof(out), NULL);
	ok(n == m.n && (out[3] & 0x0f) == 3,
	    "sim: without a table, NXDOMAIN as before");
	trap_sim_free(s);
}

/* An IPv4 packet in p: ICMP TYPE to DST, IHL words of header, DATA. */
static size_t
icmp_packet(unsigned char *p, int ihl, int proto, uint32_t dst, int type,
    const char *data, size_t n)
{
	size_t h = (size_t)ihl * 4;

	memset(p, 0, h + 8);
	p[0] = (unsigned char)(0x40 | ihl);
	p[9] = (unsigned char)proto;
	p[12] = 198, p[13] = 18, p[15] = 9; /* from where the agent was */
	p[16] = (unsigned char)(dst >> 24), p[17] = (unsigned char)(dst >> 16);
	p[18] = (unsigned char)(dst >> 8), p[19] = (unsigned char)dst;
	p[h] = (unsigned char)type;
	p[h + 4] = 0x12, p[h + 5] = 0x34, p[h + 6] = 0, p[h + 7] = 7;
	memcpy(p + h + 8, data, n);
	return h + 8 + n;
}

/*
 * A ping into the simulated internet, seen on the raw ICMP socket: an
 * echo request to 198.18.0.0/15 is an "icmp" record with its target and
 * its data as sent; a reply, another protocol, another destination or a
 * packet too short for its headers is none; random packets never read
 * past their end (ASan).
 */
static void
test_icmp(void)
{
	struct trap_sim *s = trap_sim_new(4);
	static unsigned char p[TRAP_RAW_CAP + 256];
	char big[TRAP_RAW_CAP + 100];
	struct jline j;
	const char *rest;
	size_t n, k;
	unsigned seed = (unsigned)time(NULL);
	int i, valid, wrong;

	trap_sim_addr(s, "exfil.test");
	n = icmp_packet(p, 5, 1, 0xc6120001, 8, "sk-live-K3y", 11);
	is_int(trap_sim_icmp_record(&j, s, p, n), 0, "icmp: an echo request");
	rest = j.b.p != NULL ? strstr(j.b.p, "\"kind\"") : NULL;
	is_str(rest,
	    "\"kind\":\"icmp\",\"name\":\"exfil.test\","
	    "\"addr\":\"198.18.0.1\",\"type\":8,\"id\":4660,\"seq\":7,"
	    "\"data\":\"sk-live-K3y\",\"data_bytes\":11,\"truncated\":false}\n",
	    "icmp: its target, id, seq and data as sent");
	jl_free(&j);
	n = icmp_packet(p, 6, 1, 0xc6130005, 8, "\xff\x00", 2);
	is_int(trap_sim_icmp_record(&j, s, p, n), 0,
	    "icmp: with IP options, to a nameless address");
	rest = j.b.p != NULL ? strstr(j.b.p, "\"kind\"") : NULL;
	is_str(rest,
	    "\"kind\":\"icmp\",\"name\":null,\"addr\":\"198.19.0.5\","
	    "\"type\":8,\"id\":4660,\"seq\":7,\"data_base64\":\"/wA=\","
	    "\"data_bytes\":2,\"truncated\":false}\n",
	    "icmp: bytes that are not text in base64");
	jl_free(&j);
	memset(big, 'k', sizeof(big));
	n = icmp_packet(p, 5, 1, 0xc6120001, 8, big, sizeof(big));
	is_int(trap_sim_icmp_record(&j, s, p, n), 0, "icmp: a large one");
	ok(j.b.p != NULL && strstr(j.b.p, "\"truncated\":true") != NULL &&
		strstr(j.b.p, "\"data_bytes\":65636,") != NULL,
	    "icmp: cut at TRAP_RAW_CAP, its size said");
	jl_free(&j);
	is_int(trap_sim_icmp_record(&j, s, p,
		   icmp_packet(p, 5, 1, 0xc6120001, 0, "x", 1)),
	    -1, "icmp: a reply is none");
	is_int(trap_sim_icmp_record(&j, s, p,
		   icmp_packet(p, 5, 17, 0xc6120001, 8, "x", 1)),
	    -1, "icmp: another protocol is none");
	is_int(trap_sim_icmp_record(&j, s, p,
		   icmp_packet(p, 5, 1, 0x7f000001, 8, "x", 1)),
	    -1, "icmp: to loopback is none");
	is_int(trap_sim_icmp_record(&j, s, p,
		   icmp_packet(p, 5, 1, 0xc6140001, 8, "x", 1)),
	    -1, "icmp: past 198.19.255.255 is none");
	n = icmp_packet(p, 5, 1, 0xc6120001, 8, "", 0);
	is_int(trap_sim_icmp_record(&j, s, p, n - 1), -1,
	    "icmp: shorter than its headers is none");
	p[0] = 0x44;
	is_int(trap_sim_icmp_record(&j, s, p, n), -1,
	    "icmp: a header length under 20 is none");
	p[0] = 0x65;
	is_int(trap_sim_icmp_record(&j, s, p, n), -1, "icmp: IPv6 is none");
	srand(seed);
	for (i = 0, valid = 0, wrong = 0; i < 20000; i++) {
		unsigned char *q;
		size_t h;
		int want;

		k = (size_t)(rand() % 72);
		q = malloc(k + 1);
		for (size_t b = 0; b < k; b++)
			q[b] = (unsigned char)rand();
		/* most are near a valid one: each part right by chance */
		if (k > 0 && rand() % 4)
			q[0] = (unsigned char)(0x45 + (rand() % 3 == 0));
		if (k > 9 && rand() % 4)
			q[9] = 1;
		if (k > 19 && rand() % 4)
			q[16] = 198, q[17] = (unsigned char)(18 + rand() % 3);
		h = k > 0 ? (size_t)(q[0] & 15) * 4 : 0;
		if (k > h && h >= 20 && rand() % 4)
			q[h] = 8;
		want = k >= 20 && q[0] >> 4 == 4 && h >= 20 && k >= h + 8 &&
		    q[9] == 1 && q[h] == 8 && q[16] == 198 &&
		    (q[17] & 0xfe) == 18;
		if (trap_sim_icmp_record(&j, s, q, k) == 0) {
			valid++;
			wrong += !want;
			jl_free(&j);
		} else {
			wrong += want;
		}
		free(q);
	}
	ok(wrong == 0 && valid > 100,
	    "icmp: 20000 random packets, a record exactly for the echo "
	    "requests to the range (seed %u, %d records, %d wrong)",
	    seed, valid, wrong);
	trap_sim_free(s);
}

/*
 * Past the records cap, the junk is dropped and an attempt that holds a
 * secret is still stored (trap_log_keep).
 */
static void
test_keep(void)
{
	struct trap t;
	struct msg m;
	unsigned char out[2048];
	char dir[300], path[400], sec[400], *got;
	char err[256];
	FILE *f;
	int i;

	memset(&t, 0, sizeof(t));
	snprintf(dir, sizeof(dir), "%s/keep", tmpdir);
	snprintf(sec, sizeof(sec), "%s/secrets.hex", tmpdir);
	f = fopen(sec, "w");
	/* "sk-keep-0123456789" */
	fputs("736b2d6b6565702d30313233343536373839\n", f);
	fclose(f);
	is_int(trap_log_open(&t.log, dir, 3, 1 << 20, err, sizeof(err)), 0,
	    "keep: log opens");
	is_int(trap_log_keep(&t.log, sec, err, sizeof(err)), 0,
	    "keep: secrets read");
	for (i = 0; i < 20; i++) {
		query(&m, "junk.test", 1);
		trap_dns_message(&t, "udp", m.b, m.n, out, sizeof(out));
	}
	query(&m, "sk-keep-0123456789.attacker.test", 1);
	trap_dns_message(&t, "udp", m.b, m.n, out, sizeof(out));
	query(&m, "junk.test", 1);
	trap_dns_message(&t, "udp", m.b, m.n, out, sizeof(out));
	trap_log_finish(&t.log);
	snprintf(path, sizeof(path), "%s/egress.jsonl", dir);
	got = slurp(path);
	ok(strstr(got, "\"name\":\"sk-keep-0123456789.attacker.test\"") != NULL,
	    "keep: the attempt with the secret is stored past the cap");
	ok(strstr(got,
	       "{\"t\":T,\"kind\":\"dropped\",\"count\":19,"
	       "\"kept\":1}\n") != NULL,
	    "keep: the junk is dropped and counted");
	free(got);
	trap_log_close(&t.log);
	snprintf(sec, sizeof(sec), "%s/bad.hex", tmpdir);
	f = fopen(sec, "w");
	fputs("zz\n", f);
	fclose(f);
	memset(&t, 0, sizeof(t));
	trap_log_open(&t.log, dir, 3, 1 << 20, err, sizeof(err));
	is_int(trap_log_keep(&t.log, sec, err, sizeof(err)), -1,
	    "keep: a line that is not hex is refused");
	trap_log_close(&t.log);
}

/* SIM_CIDR, the text nft and the messages give, and SIM_NET and SIM_MASK,
 * the numbers lb-net's route and the trap's table use, name one network. */
static void
test_sim_cidr(void)
{
	char text[] = SIM_CIDR;
	char *slash = strchr(text, '/');
	struct in_addr a;

	ok(slash != NULL, "SIM_CIDR has a prefix length");
	if (slash == NULL)
		return;
	*slash = '\0';
	ok(inet_pton(AF_INET, text, &a) == 1 && ntohl(a.s_addr) == SIM_NET,
	    "SIM_CIDR's address is SIM_NET");
	is_int(atoi(slash + 1), __builtin_popcount(SIM_MASK),
	    "SIM_CIDR's prefix length is SIM_MASK's");
	ok(((~SIM_MASK + 1u) & ~SIM_MASK) == 0,
	    "SIM_MASK is a run of leading ones");
	is_int((long)(SIM_NET & ~SIM_MASK), 0, "SIM_NET is a network address");
}

int
main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s/lb-trap-dns.XXXXXX",
	    getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(tmpdir) == NULL)
		return 1;
	test_parse();
	test_hostile();
	test_lines();
	test_log();
	test_keep();
	test_servers();
	test_sim_cidr();
	test_sim();
	test_icmp();
	nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return tap_done();
}
