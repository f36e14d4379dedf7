/*
 * lb-trap: the egress trap's command line (see trap/trap.h for what it
 * does). It makes the CA, writes ca.pem and bundle.pem, binds DNS (UDP and
 * TCP on one port) and the HTTP proxy port, and only then prints the ready
 * line, with the ports actually bound:
 *
 *	lb-trap: listening dns 127.0.0.1:53 http 127.0.0.1:3128
 *
 * (then " sim 198.18.0.0/15" when it serves the simulated internet on the
 * sockets lb-net hands it: --sim-tcp-fd and --sim-udp-fd).
 *
 * With --dns-udp-fd and --dns-tcp-fd, or --http-fd, it binds nothing for
 * that server: it serves on the sockets its parent bound and handed down
 * (the harness binds them in the run's network namespace, then the pool
 * starts the trap with them), and the ready line names their own local
 * addresses, so it reads as above.
 *
 * Exit status: 2 on bad usage, 1 on any start-up or serving error (one
 * line on stderr: the harness treats a dead trap as a run error); SIGTERM
 * and SIGINT end it with 0 after the final "dropped" record, if any (every
 * other record is already on disk).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "common/http.h"
#include "common/sock.h"
#include "common/usage.h"
#include "trap/trap.h"

#define PROG	       "lb-trap"
#define DEFAULT_DNS    "127.0.0.1:53"
#define DEFAULT_HTTP   "127.0.0.1:3128"
#define DEFAULT_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

static const char usage[] =
    "usage: lb-trap --records DIR --ca-out DIR [--dns ADDR] [--http ADDR]\n"
    "               [--max-records N] [--max-bytes N] [--max-conns N]\n"
    "               [--body-cap N] [--idle-timeout SECS] [--system-bundle "
    "PATH]\n"
    "               [--keep-secrets PATH]\n"
    "               [--dns-udp-fd FD --dns-tcp-fd FD] [--http-fd FD]\n"
    "\n"
    "Records every DNS query and HTTP(S) request it gets in DIR/egress.jsonl\n"
    "and refuses them: DNS answers NXDOMAIN, HTTP gets 403, and CONNECT gets\n"
    "its TLS terminated with a CA made at start (its key is never written) so\n"
    "that the requests inside are recorded too.\n"
    "\n"
    "  --records DIR         where egress.jsonl goes (made as needed)\n"
    "  --ca-out DIR          where ca.pem and bundle.pem (system CAs + ours) "
    "go\n"
    "  --dns ADDR            HOST:PORT for DNS over UDP and TCP (default\n"
    "                        " DEFAULT_DNS "; port 0: any free port)\n"
    "  --http ADDR           HOST:PORT of the proxy (default " DEFAULT_HTTP
    ")\n"
    "  --dns-udp-fd FD       instead of binding --dns: an inherited, bound\n"
    "                        UDP socket\n"
    "  --dns-tcp-fd FD       and its TCP socket (listening, or it is made\n"
    "                        to); both or neither\n"
    "  --http-fd FD          instead of binding --http: an inherited TCP\n"
    "                        socket, bound (listening, or it is made to)\n"
    "  --max-records N       records kept, the cap record included (10000)\n"
    "  --max-bytes N         bytes of records kept (67108864)\n"
    "  --max-conns N         connections served at once (64)\n"
    "  --body-cap N          body bytes kept per request (1048576)\n"
    "  --idle-timeout SECS   longest silence of a client (10)\n"
    "  --system-bundle PATH  CAs to put in bundle.pem before ours\n"
    "                        (default " DEFAULT_BUNDLE ")\n"
    "  --keep-secrets PATH   secrets, one per line in hex: past the caps, an\n"
    "                        attempt that holds one is still recorded\n"
    "  --sim-tcp-fd FD       the simulated internet: a listening TCP socket\n"
    "                        that gets every connection to 198.18.0.0/15\n"
    "                        (lb-net --sim); DNS then answers each name\n"
    "                        with its own address there\n"
    "  --sim-udp-fd FD       its UDP socket (IP_RECVORIGDSTADDR on); both or\n"
    "                        neither\n"
    "  --sim-icmp-fd FD      a raw ICMP socket: every echo request (ping) to\n"
    "                        198.18.0.0/15 recorded, data and all\n"
    "  --echo HOST           answer HTTP requests to HOST with 200 and the\n"
    "                        request itself (head and body), as an echo\n"
    "                        service does; repeatable\n"
    "  --help                this text\n";

/* Whether this process holds any capability (effective or permitted). */
static int
has_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0)
		return 1;
	return (d[0].effective | d[0].permitted | d[1].effective |
		   d[1].permitted) != 0;
}

/* Whether fd is an open socket of socktype. */
static int
is_socket(int fd, int socktype)
{
	int type = 0;
	socklen_t sl = sizeof(type);

	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &sl) == 0 &&
	    type == socktype;
}

/* "HOST:PORT" as given, with the port actually bound. */
static void
bound_addr(const char *addr, int port, char *out, size_t outlen)
{
	const char *colon = strrchr(addr, ':');
	int hl = colon ? (int)(colon - addr) : 0;

	snprintf(out, outlen, "%.*s:%d", hl, addr, port);
}

/*
 * Binds UDP and TCP on one port: with port 0, the port UDP got, retried a
 * few times should TCP find it taken. 0, or -1 with a message in err.
 */
static int
bind_dns(const char *addr, int *ufd, int *tfd, int *port, char *err,
    size_t errlen)
{
	char again[300];
	const char *colon = strrchr(addr, ':');
	int any = colon != NULL && strcmp(colon, ":0") == 0, tport, i;

	for (i = 0; i < 20; i++) {
		*ufd = trap_bind(addr, SOCK_DGRAM, port, err, errlen);
		if (*ufd < 0)
			return -1;
		bound_addr(addr, *port, again, sizeof(again));
		*tfd = trap_bind(again, SOCK_STREAM, &tport, err, errlen);
		if (*tfd >= 0)
			return 0;
		close(*ufd);
		if (!any || errno != EADDRINUSE)
			break;
	}
	return -1;
}

struct server {
	struct trap *t;
	int fd;
	http_handler *handler;
	const char *addr;
};

static void *
serve_main(void *p)
{
	struct server *s = p;

	http_serve(s->fd, s->handler, s->t);
	fprintf(stderr, "lb-trap: cannot accept connections on '%s': %s\n",
	    s->addr, strerror(errno));
	_exit(1);
}

/* What the command line asks for. */
struct args {
	const char *dns, *http, *records, *ca_out, *bundle, *keep;
	unsigned long long max_records, max_bytes;
	int sim_tcp, sim_udp, sim_icmp;
	int dns_udp, dns_tcp, http_fd;
};

/* The flags. */
static const struct option opts[] = { { "dns", required_argument, NULL, 'd' },
	{ "http", required_argument, NULL, 'H' },
	{ "records", required_argument, NULL, 'r' },
	{ "ca-out", required_argument, NULL, 'c' },
	{ "max-records", required_argument, NULL, 'R' },
	{ "max-bytes", required_argument, NULL, 'B' },
	{ "max-conns", required_argument, NULL, 'C' },
	{ "body-cap", required_argument, NULL, 'b' },
	{ "idle-timeout", required_argument, NULL, 'i' },
	{ "system-bundle", required_argument, NULL, 's' },
	{ "sim-tcp-fd", required_argument, NULL, 'T' },
	{ "sim-udp-fd", required_argument, NULL, 'U' },
	{ "sim-icmp-fd", required_argument, NULL, 'I' },
	{ "dns-udp-fd", required_argument, NULL, 'u' },
	{ "dns-tcp-fd", required_argument, NULL, 't' },
	{ "http-fd", required_argument, NULL, 'f' },
	{ "keep-secrets", required_argument, NULL, 'k' },
	{ "echo", required_argument, NULL, 'e' },
	{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };

/* The numeric flags: their bounds and what their error says is expected. */
static const struct {
	int ch;
	const char *name;
	unsigned long long max;
	const char *expected;
} numbers[] = {
	{ 'R', "max-records", 100000000, "a positive number" },
	{ 'B', "max-bytes", 1ULL << 40, "a positive number" },
	{ 'C', "max-conns", 100000, "a positive number" },
	{ 'b', "body-cap", 1ULL << 30, "a positive number" },
	{ 'i', "idle-timeout", 86400, "a number of seconds" },
};

/* The value of numeric flag ch in *v: 0, or 2 once the error is said. */
static int
number_flag(int ch, const char *s, unsigned long long *v)
{
	size_t i;

	for (i = 0; numbers[i].ch != ch; i++)
		;
	if (usage_count(s, 0, numbers[i].max, v) < 0)
		return usage_error(PROG, "cannot use --%s '%s': expected %s",
		    numbers[i].name, s, numbers[i].expected);
	return 0;
}

/* Adds host to --echo's hosts: 0, or 2 once the error is said. */
static int
add_echo(struct trap *t, const char *host)
{
	const char **more;

	if (*host == '\0' || strlen(host) > 253 ||
	    strcspn(host, " \t\r\n:/") != strlen(host))
		return usage_error(PROG,
		    "cannot use --echo '%s': expected a host name", host);
	more = realloc(t->echo, (t->necho + 1) * sizeof(*more));
	if (more == NULL)
		return usage_error(PROG,
		    "cannot use --echo '%s': out of memory", host);
	t->echo = more;
	t->echo[t->necho++] = host;
	return 0;
}

/*
 * An inherited socket's option (CH: --sim-tcp-fd T, --sim-udp-fd U,
 * --sim-icmp-fd I, --dns-udp-fd u, --dns-tcp-fd t, --http-fd f) ARG into
 * A: an open socket of the type each needs. 0, or -1 once said on stderr.
 */
static int
sim_fd_option(struct args *a, int ch, const char *arg)
{
	static const struct {
		int ch, type;
		const char *opt, *what;
	} kinds[] = { { 'T', SOCK_STREAM, "sim-tcp-fd", "TCP" },
		{ 'U', SOCK_DGRAM, "sim-udp-fd", "UDP" },
		{ 'I', SOCK_RAW, "sim-icmp-fd", "raw ICMP" },
		{ 'u', SOCK_DGRAM, "dns-udp-fd", "UDP" },
		{ 't', SOCK_STREAM, "dns-tcp-fd", "TCP" },
		{ 'f', SOCK_STREAM, "http-fd", "TCP" } };
	int *const fds[] = { &a->sim_tcp, &a->sim_udp, &a->sim_icmp,
		&a->dns_udp, &a->dns_tcp, &a->http_fd };
	unsigned long long v;
	int i;

	for (i = 0; kinds[i].ch != ch; i++)
		;
	if (usage_count(arg, 0, 65535, &v) < 0 ||
	    !is_socket((int)v, kinds[i].type)) {
		usage_error(PROG,
		    "cannot use --%s '%s': expected an open %s socket's fd",
		    kinds[i].opt, arg, kinds[i].what);
		return -1;
	}
	*fds[i] = (int)v;
	return 0;
}

/*
 * The command line into a and t->lim. -1 to go on, else the exit status
 * (0 after --help, 2 on bad usage, said on stderr).
 */
static int
parse_args(int argc, char **argv, struct args *a, struct trap *t)
{
	unsigned long long v;
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
		case 'H':
		case 'r':
		case 'c':
		case 's':
		case 'k':
			*(ch == 'd'	  ? &a->dns :
				ch == 'H' ? &a->http :
				ch == 'r' ? &a->records :
				ch == 'c' ? &a->ca_out :
				ch == 's' ? &a->bundle :
					    &a->keep) = optarg;
			break;
		case 'e':
			if (add_echo(t, optarg) != 0)
				return 2;
			break;
		case 'R':
		case 'B':
		case 'C':
		case 'b':
		case 'i':
			if (number_flag(ch, optarg, &v) != 0)
				return 2;
			if (ch == 'R')
				a->max_records = v;
			else if (ch == 'B')
				a->max_bytes = v;
			else if (ch == 'C')
				t->lim.max_conns = (int)v;
			else if (ch == 'b')
				t->lim.body_cap = (size_t)v;
			else
				t->lim.idle_ms = (int)v * 1000;
			break;
		case 'T':
		case 'U':
		case 'I':
		case 'u':
		case 't':
		case 'f':
			if (sim_fd_option(a, ch, optarg) < 0)
				return 2;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return usage_bad_option(PROG, ch, argv, optind);
		}
	}
	if (optind < argc)
		return usage_error(PROG, "unexpected argument '%s'",
		    argv[optind]);
	if (a->records == NULL || *a->records == '\0')
		return usage_error(PROG, "option '--records' is required");
	if (a->ca_out == NULL || *a->ca_out == '\0')
		return usage_error(PROG, "option '--ca-out' is required");
	if ((a->sim_tcp < 0) != (a->sim_udp < 0))
		return usage_error(PROG,
		    "options '--sim-tcp-fd' and '--sim-udp-fd' go "
		    "together");
	if ((a->dns_udp < 0) != (a->dns_tcp < 0))
		return usage_error(PROG,
		    "options '--dns-udp-fd' and '--dns-tcp-fd' go "
		    "together");
	if (a->sim_icmp >= 0 && a->sim_tcp < 0)
		return usage_error(PROG,
		    "option '--sim-icmp-fd' needs '--sim-tcp-fd' and "
		    "'--sim-udp-fd'");
	return -1;
}

/* Starts a detached thread. 0, or -1. */
static int
detached(void *(*fn)(void *), void *arg)
{
	pthread_t tid;

	return pthread_create(&tid, NULL, fn, arg) == 0 &&
		pthread_detach(tid) == 0 ?
	    0 :
	    -1;
}

/* Takes inherited FD (flag --OPT) as a socket of TYPE: 0, or -1 and err. */
static int
adopt(int fd, int type, const char *opt, char *err, size_t errlen)
{
	if (sock_adopt(fd, type) == 0)
		return 0;
	snprintf(err, errlen, "cannot listen on --%s %d: %s", opt, fd,
	    strerror(errno));
	return -1;
}

/*
 * The sockets to serve DNS and HTTP on, into *ufd, *tfd and *hfd: the
 * inherited ones (the TCP ones made to listen), else bound here; their
 * addresses in dns_addr and http_addr (300 bytes each). 0, or -1 with a
 * message in err.
 */
static int
listeners(const struct args *a, int *ufd, int *tfd, int *hfd, char *dns_addr,
    char *http_addr, char *err, size_t errlen)
{
	int dport, hport;

	if (a->dns_udp >= 0) {
		*ufd = a->dns_udp;
		*tfd = a->dns_tcp;
		if (adopt(*ufd, SOCK_DGRAM, "dns-udp-fd", err, errlen) < 0 ||
		    adopt(*tfd, SOCK_STREAM, "dns-tcp-fd", err, errlen) < 0)
			return -1;
		sock_name(*ufd, dns_addr, 300);
	} else {
		if (bind_dns(a->dns, ufd, tfd, &dport, err, errlen) < 0)
			return -1;
		bound_addr(a->dns, dport, dns_addr, 300);
	}
	if (a->http_fd >= 0) {
		*hfd = a->http_fd;
		if (adopt(*hfd, SOCK_STREAM, "http-fd", err, errlen) < 0)
			return -1;
		sock_name(*hfd, http_addr, 300);
	} else {
		*hfd = trap_bind(a->http, SOCK_STREAM, &hport, err, errlen);
		if (*hfd < 0)
			return -1;
		bound_addr(a->http, hport, http_addr, 300);
	}
	return 0;
}

/*
 * Opens the records, makes the CA and its files, gets the listeners and
 * starts a thread per server; their addresses in dns_addr and http_addr
 * (300 bytes each). 0, or -1 with a message in err.
 */
static int
start(const struct args *a, struct trap *t, char *dns_addr, char *http_addr,
    char *err, size_t errlen)
{
	static struct trap_udp udp, sim_udp, sim_icmp;
	static struct server dns_srv, http_srv, sim_srv;
	int ufd, tfd, hfd;

	if (trap_log_open(&t->log, a->records, (unsigned long)a->max_records,
		(size_t)a->max_bytes, err, errlen) < 0)
		return -1;
	if (a->keep != NULL && trap_log_keep(&t->log, a->keep, err, errlen) < 0)
		return -1;
	t->tls = trap_tls_new(err, errlen);
	if (t->tls == NULL ||
	    trap_tls_write(t->tls, a->ca_out, a->bundle, err, errlen) < 0)
		return -1;
	if (listeners(a, &ufd, &tfd, &hfd, dns_addr, http_addr, err, errlen) <
	    0)
		return -1;
	if (a->sim_tcp >= 0 && has_caps()) {
		snprintf(err, errlen,
		    "refusing to serve the simulated "
		    "internet with capabilities: they "
		    "belong to its setup only");
		return -1;
	}
	if (a->sim_tcp >= 0 && (t->sim = trap_sim_new(SIM_MAX_NAMES)) == NULL) {
		snprintf(err, errlen,
		    "cannot make the name table: out "
		    "of memory");
		return -1;
	}

	udp.t = t;
	udp.fd = ufd;
	dns_srv = (struct server){ t, tfd, trap_dns_tcp_handler, dns_addr };
	http_srv = (struct server){ t, hfd, trap_http_handler, http_addr };
	sim_udp.t = t;
	sim_udp.fd = a->sim_udp;
	sim_icmp.t = t;
	sim_icmp.fd = a->sim_icmp;
	sim_srv = (struct server){ t, a->sim_tcp, trap_sim_tcp_handler,
		"198.18.0.0/15" };
	if (detached(trap_dns_udp_thread, &udp) < 0 ||
	    detached(serve_main, &dns_srv) < 0 ||
	    detached(serve_main, &http_srv) < 0 ||
	    (t->sim != NULL &&
		(detached(trap_sim_udp_thread, &sim_udp) < 0 ||
		    detached(serve_main, &sim_srv) < 0 ||
		    (a->sim_icmp >= 0 &&
			detached(trap_sim_icmp_thread, &sim_icmp) < 0)))) {
		snprintf(err, errlen, "cannot start threads: %s",
		    strerror(errno));
		return -1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	static struct trap t;
	static char dns_addr[300], http_addr[300];
	struct args a = { DEFAULT_DNS, DEFAULT_HTTP, NULL, NULL, DEFAULT_BUNDLE,
		NULL, TRAP_MAX_RECORDS, TRAP_MAX_BYTES, -1, -1, -1, -1, -1,
		-1 };
	char err[512], *line = NULL;
	sigset_t sigs;
	int rc, sig, n;

	memset(&t, 0, sizeof(t));
	t.lim.max_conns = TRAP_MAX_CONNS;
	t.lim.idle_ms = TRAP_IDLE_MS;
	t.lim.head_ms = TRAP_HEAD_MS;
	t.lim.body_cap = TRAP_BODY_CAP;
	t.lim.max_head = TRAP_MAX_HEAD;
	if ((rc = parse_args(argc, argv, &a, &t)) >= 0)
		return rc;

	/* Signals go to the main thread's sigwait only. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
#ifndef __SANITIZE_ADDRESS__
	/* No core dump, no ptrace by peers: the CA key is in memory. */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
#endif

	if (start(&a, &t, dns_addr, http_addr, err, sizeof(err)) < 0)
		goto fail;
	n = asprintf(&line, "lb-trap: listening dns %s http %s%s\n", dns_addr,
	    http_addr, t.sim != NULL ? " sim 198.18.0.0/15" : "");
	if (n < 0 || http_write_all(STDOUT_FILENO, line, (size_t)n) < 0) {
		snprintf(err, sizeof(err), "cannot write the ready line: %s",
		    strerror(errno));
		goto fail;
	}
	free(line);
	while (sigwait(&sigs, &sig) != 0)
		;
	trap_log_finish(&t.log);
	_exit(0);
fail:
	fprintf(stderr, "lb-trap: %s\n", err);
	return 1;
}
