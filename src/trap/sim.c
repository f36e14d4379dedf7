/*
 * The simulated internet's names and datagrams (see trap.h): every name
 * the DNS server is asked for gets its own address in 198.18.0.0/15 (RFC
 * 2544), the first time it is asked, in order from 198.18.0.1; the same
 * name (compared without case) keeps its address for the trap's lifetime,
 * so that a connection to the address tells which name it was meant for.
 *
 * The addresses exist only inside the run's network namespace: lb-net
 * makes the range local there (a "local" route on lo) and hands every
 * TCP connection and UDP datagram to it to the trap (nftables TPROXY, to
 * the sockets it gives the trap as fds), then drops its capabilities.
 *
 * Invariants: at most max_names names (16 MiB of names at most with the
 * default cap; past it, a name gets no address and its A question no
 * answer); an address maps back to exactly one name. One mutex guards the
 * table; lookups copy the name out under it.
 */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "trap/trap.h"

struct trap_sim {
	pthread_mutex_t mu;
	char **names;	 /* index i: the name of SIM_NET + 1 + i */
	uint32_t *slots; /* open addressing: index + 1, 0 empty */
	size_t n, max, nslots;
};

static uint64_t
hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s != '\0'; s++) {
		h ^= (unsigned char)tolower((unsigned char)*s);
		h *= 1099511628211ULL;
	}
	return h;
}

struct trap_sim *
trap_sim_new(size_t max_names)
{
	struct trap_sim *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	if (max_names == 0 || max_names > SIM_MAX_NAMES)
		max_names = SIM_MAX_NAMES;
	s->max = max_names;
	s->nslots = 1;
	while (s->nslots < max_names * 2)
		s->nslots <<= 1;
	s->names = calloc(max_names, sizeof(*s->names));
	s->slots = calloc(s->nslots, sizeof(*s->slots));
	if (s->names == NULL || s->slots == NULL) {
		trap_sim_free(s);
		return NULL;
	}
	pthread_mutex_init(&s->mu, NULL);
	return s;
}

void
trap_sim_free(struct trap_sim *s)
{
	size_t i;

	if (s == NULL)
		return;
	if (s->names != NULL) {
		for (i = 0; i < s->n; i++)
			free(s->names[i]);
		pthread_mutex_destroy(&s->mu);
	}
	free(s->names);
	free(s->slots);
	free(s);
}

uint32_t
trap_sim_addr(struct trap_sim *s, const char *name)
{
	size_t i, mask = s->nslots - 1;
	uint32_t addr = 0;
	char *copy;

	if (*name == '\0' || strcmp(name, ".") == 0)
		return 0;
	pthread_mutex_lock(&s->mu);
	for (i = (size_t)hash_name(name) & mask; s->slots[i] != 0;
	     i = (i + 1) & mask) {
		if (strcasecmp(s->names[s->slots[i] - 1], name) == 0) {
			addr = SIM_NET + s->slots[i];
			goto out;
		}
	}
	if (s->n >= s->max || (copy = strdup(name)) == NULL)
		goto out;
	for (char *p = copy; *p != '\0'; p++)
		*p = (char)tolower((unsigned char)*p);
	s->names[s->n++] = copy;
	s->slots[i] = (uint32_t)s->n;
	addr = SIM_NET + (uint32_t)s->n;
out:
	pthread_mutex_unlock(&s->mu);
	return addr;
}

int
trap_sim_name(struct trap_sim *s, uint32_t addr, char *out, size_t outlen)
{
	uint32_t i = addr - SIM_NET;
	int rc = -1;

	if ((addr & SIM_MASK) != SIM_NET || i == 0)
		return -1;
	pthread_mutex_lock(&s->mu);
	if (i <= s->n && strlen(s->names[i - 1]) < outlen) {
		strcpy(out, s->names[i - 1]);
		rc = 0;
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* "name" (null when addr has none) and "addr". */
static void
target_fields(struct jline *j, struct trap_sim *s, uint32_t addr)
{
	char name[DNS_NAME_MAX], text[INET_ADDRSTRLEN];
	struct in_addr a = { .s_addr = htonl(addr) };

	if (s != NULL && trap_sim_name(s, addr, name, sizeof(name)) == 0)
		jl_str(j, "name", name, strlen(name));
	else
		jl_raw(j, "name", "null");
	inet_ntop(AF_INET, &a, text, sizeof(text));
	jl_str(j, "addr", text, strlen(text));
}

void
trap_sim_fields(struct jline *j, struct trap_sim *s, uint32_t addr, int port)
{
	target_fields(j, s, addr);
	jl_int(j, "port", port);
}

int
trap_sim_icmp_record(struct jline *j, struct trap_sim *s,
    const unsigned char *p, size_t n)
{
	size_t ihl;
	uint32_t dst;

	if (n < 20 || (p[0] >> 4) != 4 ||
	    (ihl = (size_t)(p[0] & 15) * 4) < 20 || n < ihl + 8 || p[9] != 1 ||
	    p[ihl] != 8)
		return -1;
	dst = (uint32_t)p[16] << 24 | (uint32_t)p[17] << 16 |
	    (uint32_t)p[18] << 8 | p[19];
	if ((dst & SIM_MASK) != SIM_NET)
		return -1;
	p += ihl;
	n -= ihl;
	jl_begin(j, "icmp");
	target_fields(j, s, dst);
	jl_int(j, "type", p[0]);
	jl_int(j, "id", (long long)(p[4] << 8 | p[5]));
	jl_int(j, "seq", (long long)(p[6] << 8 | p[7]));
	jl_bytes(j, "data", p + 8, n - 8 < TRAP_RAW_CAP ? n - 8 : TRAP_RAW_CAP);
	jl_int(j, "data_bytes", (long long)(n - 8));
	jl_bool(j, "truncated", n - 8 > TRAP_RAW_CAP);
	jl_end(j);
	return 0;
}

void *
trap_sim_icmp_thread(void *arg)
{
	struct trap_udp *a = arg;
	unsigned char *in = malloc(65536);
	struct jline j;
	ssize_t n;

	while (in != NULL) {
		n = recv(a->fd, in, 65536, 0);
		if (n < 0) {
			if (errno != EINTR)
				poll(NULL, 0, 10);
			continue;
		}
		if (trap_sim_icmp_record(&j, a->t->sim, in, (size_t)n) == 0)
			(void)trap_log_put(&a->t->log, &j);
	}
	free(in);
	return NULL;
}

void *
trap_sim_udp_thread(void *arg)
{
	struct trap_udp *a = arg;
	unsigned char *in = malloc(65536);
	union {
		char buf[CMSG_SPACE(sizeof(struct sockaddr_in)) + 64];
		struct cmsghdr align;
	} ctl;
	struct sockaddr_in from, dst;
	struct iovec iov;
	struct msghdr mh;
	struct cmsghdr *cm;
	struct jline j;
	ssize_t n;

	while (in != NULL) {
		iov.iov_base = in;
		iov.iov_len = 65536;
		memset(&mh, 0, sizeof(mh));
		mh.msg_name = &from;
		mh.msg_namelen = sizeof(from);
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		n = recvmsg(a->fd, &mh, 0);
		if (n < 0) {
			if (errno != EINTR)
				poll(NULL, 0, 10);
			continue;
		}
		memset(&dst, 0, sizeof(dst));
		for (cm = CMSG_FIRSTHDR(&mh); cm != NULL;
		     cm = CMSG_NXTHDR(&mh, cm))
			if (cm->cmsg_level == SOL_IP &&
			    cm->cmsg_type == IP_ORIGDSTADDR &&
			    cm->cmsg_len >= CMSG_LEN(sizeof(dst)))
				memcpy(&dst, CMSG_DATA(cm), sizeof(dst));
		jl_begin(&j, "udp");
		trap_sim_fields(&j, a->t->sim, ntohl(dst.sin_addr.s_addr),
		    ntohs(dst.sin_port));
		jl_bytes(&j, "data", in,
		    (size_t)n < TRAP_RAW_CAP ? (size_t)n : TRAP_RAW_CAP);
		jl_int(&j, "data_bytes", (long long)n);
		jl_bool(&j, "truncated", (size_t)n > TRAP_RAW_CAP);
		jl_end(&j);
		(void)trap_log_put(&a->t->log, &j);
	}
	free(in);
	return NULL;
}
