/*
 * The egress trap (lb-trap): a DNS server and an HTTP(S) proxy on the
 * claude container's loopback that record every attempt to reach the
 * outside and refuse it. DNS answers NXDOMAIN; plain HTTP gets a 403;
 * CONNECT gets a 200, then the TLS inside is terminated with a CA made for
 * the run (its key lives in this process only) so that the inner requests
 * are recorded as fully as plain ones, and refused with a 403 too.
 *
 * With the simulated internet (sim.c; the sockets come from lb-net --sim),
 * DNS answers every name with its own address in 198.18.0.0/15 instead,
 * and every TCP connection and UDP datagram to those addresses reaches the
 * trap: HTTP and TLS as on the proxy port, SMTP and FTP spoken (the server
 * speaks first), anything else recorded raw ("tcp" and "udp" records);
 * pings, which the kernel answers, as "icmp" records with their data.
 *
 * Records: DIR/egress.jsonl, one JSON object per line, "t" (unix time,
 * seconds with three decimals) and "kind" first. Bytes the agent chose
 * (request heads, bodies, tunnel data, undecodable packets) are stored
 * losslessly the way the proxy's records store bodies: "FIELD" as a JSON
 * string when the bytes are valid UTF-8, else "FIELD_base64" with the exact
 * bytes; DNS names use presentation-format escapes (\. \\ \DDD), which are
 * ASCII and lossless. The fields of each kind are listed in log.c and in
 * the report of issue 12.
 *
 * Threads: each listener serves a thread per connection (http_serve); the
 * UDP DNS socket has one thread. The log's mutex serializes lines; the
 * leaf certificate cache has its own.
 *
 * Ownership: struct trap owns its log and TLS state; trap_fini frees them.
 * Every jline is freed by trap_log_put, whatever it returns.
 */
#ifndef LEAKBENCH_TRAP_TRAP_H
#define LEAKBENCH_TRAP_TRAP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/http.h"
#include "net/sim.h"
#include "scan.h"

#define TRAP_MAX_RECORDS  10000
#define TRAP_MAX_BYTES	  (64UL * 1024 * 1024)
#define TRAP_MAX_CONNS	  64
#define TRAP_IDLE_MS	  10000
#define TRAP_HEAD_MS	  30000
#define TRAP_BODY_CAP	  (1024 * 1024)
#define TRAP_MAX_HEAD	  (64 * 1024)
#define TRAP_RAW_CAP	  (64 * 1024)	       /* tunnel bytes, bad packets */
#define TRAP_DISCARD_MAX  (64UL * 1024 * 1024) /* body read past cap */
#define TRAP_MAX_REQUESTS 100		       /* per connection */

/* ---- one JSON line (log.c) ---- */

struct jline {
	struct buf b; /* the line so far; b.oom once an append failed */
	int nfields;
};

/* Starts {"t":NOW,"kind":KIND. */
void jl_begin(struct jline *j, const char *kind);
/* Same with a given time (tests). */
void jl_begin_at(struct jline *j, const char *kind, long long sec, long msec);
/* A string field: text is read as UTF-8 when valid, else as Latin-1. */
void jl_str(struct jline *j, const char *key, const char *s, size_t n);
/* Lossless bytes: "KEY": text when valid UTF-8, else "KEY_base64". */
void jl_bytes(struct jline *j, const char *key, const void *s, size_t n);
/* [[name, value], ...], each string as jl_str reads it. */
void jl_headers(struct jline *j, const char *key, const struct http_header *h,
    size_t n);
void jl_int(struct jline *j, const char *key, long long v);
void jl_bool(struct jline *j, const char *key, int v);
/* A field whose value is JSON text already. */
void jl_raw(struct jline *j, const char *key, const char *json);
/* Closes the object and adds the newline. */
void jl_end(struct jline *j);
void jl_free(struct jline *j);

/* ---- the records file (log.c) ---- */

struct trap_log {
	int fd;
	pthread_mutex_t mu;
	unsigned long max_records; /* the cap record included */
	size_t max_bytes;
	unsigned long records;
	size_t bytes;
	int capped;
	unsigned long dropped; /* attempts not stored after the cap */
	/*
	 * With a scanner (trap_log_keep): past the cap, an attempt that
	 * holds a secret is still stored, up to TRAP_MAX_KEPT bytes: the cap
	 * drops junk, not exfiltration.
	 */
	struct scan *keep;
	unsigned long kept;
	size_t kept_bytes;
};

#define TRAP_MAX_KEPT (64u << 20)

/*
 * Reads secrets from PATH, one per line in hex, and keeps past the cap
 * every attempt in which the scanner finds one. 0, or -1 with a message in
 * err. The scanner is freed by trap_log_close.
 */
int trap_log_keep(struct trap_log *l, const char *path, char *err,
    size_t errlen);

/*
 * Creates DIR as needed and opens DIR/egress.jsonl (mode 0644) for
 * appending. 0, or -1 with a message in err.
 */
int trap_log_open(struct trap_log *l, const char *dir,
    unsigned long max_records, size_t max_bytes, char *err, size_t errlen);
/*
 * Appends the finished line (jl_end done) and frees it. 0 when stored, 1
 * when counted only (a cap was reached; the first time, one record
 * {"kind":"cap","reason":"records"|"bytes",...} is stored instead), -1 on a
 * write error or when the line ran out of memory.
 */
int trap_log_put(struct trap_log *l, struct jline *j);
/* At exit: a {"kind":"dropped","count":N} record when attempts were lost. */
void trap_log_finish(struct trap_log *l);
void trap_log_close(struct trap_log *l);

/* Lossless presentation format of a DNS label's bytes (\. \\ \DDD). */
size_t trap_escape_label(const unsigned char *s, size_t n, char *out,
    size_t outlen);

/* ---- DNS (dns.c) ---- */

#define DNS_MAX_QUESTIONS 8
#define DNS_NAME_MAX	  (255 * 4 + 1) /* presentation, with NUL */

struct dns_question {
	char name[DNS_NAME_MAX]; /* "a.example", "." for root */
	uint16_t type, class;
	size_t off; /* where its name starts in the message */
};

struct dns_query {
	uint16_t id, flags;
	int nq;
	struct dns_question q[DNS_MAX_QUESTIONS];
	size_t qend; /* offset just past the questions */
};

/*
 * Parses a DNS message as a query. 0, or -1 with a static reason in *why
 * (q->id and q->flags are set whenever the 12-byte header is there).
 * Compression pointers are followed only backwards, at most 127 times;
 * names over 255 bytes, reserved label types, truncation and messages that
 * are responses are errors.
 */
int dns_parse_query(const unsigned char *msg, size_t len, struct dns_query *q,
    const char **why);

/*
 * Writes the answer to msg into out (at least len bytes): NXDOMAIN echoing
 * the questions; FORMERR with no question when msg did not parse; NOTIMP
 * for an opcode other than QUERY. The answer's length, or 0 when msg gets
 * no answer (shorter than a header, or a response).
 */
size_t dns_answer(const unsigned char *msg, size_t len, unsigned char *out,
    size_t outlen);

struct trap_sim;
/*
 * dns_answer for the simulated internet (sim not NULL): a query that
 * parses gets NOERROR, and each A question of class IN an answer with the
 * name's address (trap_sim_addr; none when the table is full); every other
 * question gets no answer (NODATA), so clients fall back to A. With sim
 * NULL, exactly dns_answer.
 */
size_t dns_answer_sim(const unsigned char *msg, size_t len, unsigned char *out,
    size_t outlen, struct trap_sim *sim);

/* "A", "AAAA", ... or NULL for a type without a name here. */
const char *dns_type_name(uint16_t type);
const char *dns_class_name(uint16_t class);

/* ---- HTTP heads (httptrap.c) ---- */

/*
 * A request head as the trap reads it: leniently, since it only records.
 * Strings are NUL-terminated copies (a NUL byte in the head cuts the
 * parsed copy short; the raw head, recorded too, keeps every byte).
 */
struct trap_req {
	char *method, *target, *version;
	struct http_header *headers;
	size_t nheaders;
	int chunked;	/* Transfer-Encoding ends in chunked */
	long long clen; /* -1: none; -2: unreadable */
	int close;	/* no keep-alive after this one */
};

/*
 * Parses the head at the start of buf: "METHOD SP TARGET [SP VERSION]"
 * then header lines, up to an empty line (CRLF or bare LF). The head's
 * length (> 0) with *r filled (free it with trap_req_free); 0 when more
 * bytes are needed (no end within len bytes, len < max_head); -1 with a
 * static reason in *why when it is not a request head or is longer than
 * max_head. Never reads past len.
 */
long trap_parse_head(const unsigned char *buf, size_t len, size_t max_head,
    struct trap_req *r, const char **why);
void trap_req_free(struct trap_req *r);

/* ---- the trap ---- */

struct trap_limits {
	int max_conns;
	int idle_ms;
	int head_ms;
	size_t body_cap;
	size_t max_head;
};

struct trap_tls;

struct trap {
	struct trap_log log;
	struct trap_limits lim;
	struct trap_tls *tls; /* NULL: CONNECT is not opened */
	struct trap_sim *sim; /* NULL: no simulated internet */
	int active;	      /* connections being served */
	/*
	 * Hosts whose HTTP requests are answered 200 with the request itself
	 * (head as received, body as recorded), as an echo service such as
	 * httpbin's /anything answers, instead of 403: the host is the
	 * simulated internet's name of the address, the CONNECT target's
	 * host, or a plain request's URL host. Owned by main; none when
	 * necho is 0.
	 */
	const char **echo;
	size_t necho;
};

/*
 * Records one DNS message and answers it: "proto" is "udp" or "tcp". The
 * answer's length in out (0: none). Thread-safe.
 */
size_t trap_dns_message(struct trap *t, const char *proto,
    const unsigned char *msg, size_t len, unsigned char *out, size_t outlen);

/* Serves the UDP DNS socket forever (a thread's body; arg: trap_udp). */
struct trap_udp {
	struct trap *t;
	int fd;
};
void *trap_dns_udp_thread(void *arg);
/* The http_handler for DNS over TCP (ctx: struct trap). */
void trap_dns_tcp_handler(struct http_conn *c, void *ctx);
/* The http_handler for the proxy port (ctx: struct trap). */
void trap_http_handler(struct http_conn *c, void *ctx);

/*
 * Binds a socket of socktype (SOCK_DGRAM, or SOCK_STREAM which also
 * listens) on "HOST:PORT", HOST a numeric address. The socket or -1 with
 * "cannot bind 'ADDR': why" in err; *port_out receives the bound port.
 */
int trap_bind(const char *addr, int socktype, int *port_out, char *err,
    size_t errlen);

/* ---- the simulated internet (sim.c, httptrap.c) ---- */

/* SIM_CIDR, SIM_NET and SIM_MASK: net/sim.h (lb-net makes it local). */
#define SIM_MAX_NAMES 16384

/* The name table, for at most max_names names (0: SIM_MAX_NAMES). NULL. */
struct trap_sim *trap_sim_new(size_t max_names);
void trap_sim_free(struct trap_sim *s);
/*
 * The address of name (host order), given at first sight; the same for
 * the same name in any case. 0 when the table is full, or for "" and ".".
 */
uint32_t trap_sim_addr(struct trap_sim *s, const char *name);
/* The name (lowercase) of addr into out. 0, or -1 when it has none. */
int trap_sim_name(struct trap_sim *s, uint32_t addr, char *out, size_t outlen);
/* "name" (null when addr has none), "addr", "port": a record's target. */
void trap_sim_fields(struct jline *j, struct trap_sim *s, uint32_t addr,
    int port);
/*
 * Serves the simulated internet's UDP socket (IP_RECVORIGDSTADDR on)
 * forever: one "udp" record per datagram, no answer (arg: trap_udp).
 */
void *trap_sim_udp_thread(void *arg);
/*
 * An "icmp" record in j (begun and ended) of the IPv4 packet p (n bytes,
 * from a raw ICMP socket): an echo request to SIM_CIDR, which the kernel
 * answers itself; name, addr, type, id, seq and its data. 0, or -1 (j
 * untouched) for any other packet.
 */
int trap_sim_icmp_record(struct jline *j, struct trap_sim *s,
    const unsigned char *p, size_t n);
/*
 * Records every echo request to SIM_CIDR that the raw ICMP socket
 * (lb-net --sim's fd 5) sees, forever (arg: trap_udp).
 */
void *trap_sim_icmp_thread(void *arg);
/*
 * The http_handler for the simulated internet's TCP listener (ctx: struct
 * trap): the connection's local address is where the client meant to go.
 */
void trap_sim_tcp_handler(struct http_conn *c, void *ctx);

/* ---- TLS (tlsca.c) ---- */

/*
 * Makes the CA (an EC P-256 key that stays in memory) and the server
 * context. NULL with a message in err.
 */
struct trap_tls *trap_tls_new(char *err, size_t errlen);
void trap_tls_free(struct trap_tls *tls);
/* The CA certificate as PEM (owned by tls). */
const char *trap_tls_ca_pem(const struct trap_tls *tls);
/*
 * Writes DIR/ca.pem and DIR/bundle.pem (system bundle at sysbundle, when
 * readable, then the CA), each through a temporary file and rename, mode
 * 0644. 0, or -1 with a message in err.
 */
int trap_tls_write(const struct trap_tls *tls, const char *dir,
    const char *sysbundle, char *err, size_t errlen);

/* The SSL_CTX, as a void * so that this header needs no OpenSSL. */
void *trap_tls_ctx(struct trap_tls *tls);

/*
 * The certificate for host (a name or an IP address literal), made once
 * and cached (up to 4096 hosts; past that, made for each use). Used by the
 * handshake; exposed for the tests. A new reference to an X509 (as void *;
 * the caller X509_free's it), or NULL.
 */
void *trap_tls_leaf(struct trap_tls *tls, const char *host);

void trap_fini(struct trap *t);

#endif
