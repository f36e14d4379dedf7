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
 * Exit status: 2 on bad usage, 1 on any start-up or serving error (one
 * line on stderr: the harness treats a dead trap as a run error); SIGTERM
 * and SIGINT end it with 0 after the final "dropped" record, if any (every
 * other record is already on disk).
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "http.h"
#include "trap/trap.h"

#define DEFAULT_DNS    "127.0.0.1:53"
#define DEFAULT_HTTP   "127.0.0.1:3128"
#define DEFAULT_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

static const char usage[] =
    "usage: lb-trap --records DIR --ca-out DIR [--dns ADDR] [--http ADDR]\n"
    "               [--max-records N] [--max-bytes N] [--max-conns N]\n"
    "               [--body-cap N] [--idle-timeout SECS] [--system-bundle "
    "PATH]\n"
    "               [--keep-secrets PATH]\n"
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
    "  --echo HOST           answer HTTP requests to HOST with 200 and the\n"
    "                        request itself (head and body), as an echo\n"
    "                        service does; repeatable\n"
    "  --help                this text\n";

__attribute__((format(printf, 1, 2))) static int
bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lb-trap: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\ntry 'lb-trap --help'\n");
	return 2;
}

/* A positive integer up to max. 0, or -1. */
static int
number(const char *s, unsigned long long max, unsigned long long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || *out == 0 || *out > max)
		return -1;
	return 0;
}

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

int
main(int argc, char **argv)
{
	static const struct option opts[] = { { "dns", required_argument, NULL,
						  'd' },
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
		{ "keep-secrets", required_argument, NULL, 'k' },
		{ "echo", required_argument, NULL, 'e' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	static struct trap t;
	static struct trap_udp udp, sim_udp;
	static struct server dns_srv, http_srv, sim_srv;
	static char dns_addr[300], http_addr[300];
	const char *dns = DEFAULT_DNS, *http = DEFAULT_HTTP;
	const char *records = NULL, *ca_out = NULL, *bundle = DEFAULT_BUNDLE;
	const char *keep = NULL;
	unsigned long long max_records = TRAP_MAX_RECORDS;
	unsigned long long max_bytes = TRAP_MAX_BYTES, v;
	char err[512], *line = NULL;
	sigset_t sigs;
	pthread_t tid;
	int ch, ufd, tfd, hfd, dport, hport, sig, n;
	int sim_tcp = -1, sim_udp_fd = -1;

	memset(&t, 0, sizeof(t));
	t.lim.max_conns = TRAP_MAX_CONNS;
	t.lim.idle_ms = TRAP_IDLE_MS;
	t.lim.head_ms = TRAP_HEAD_MS;
	t.lim.body_cap = TRAP_BODY_CAP;
	t.lim.max_head = TRAP_MAX_HEAD;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			dns = optarg;
			break;
		case 'H':
			http = optarg;
			break;
		case 'r':
			records = optarg;
			break;
		case 'c':
			ca_out = optarg;
			break;
		case 's':
			bundle = optarg;
			break;
		case 'k':
			keep = optarg;
			break;
		case 'e': {
			const char **more;

			if (*optarg == '\0' || strlen(optarg) > 253 ||
			    strcspn(optarg, " \t\r\n:/") != strlen(optarg))
				return bad_usage("cannot use --echo '%s': "
						 "expected a host name",
				    optarg);
			more = realloc(t.echo, (t.necho + 1) * sizeof(*more));
			if (more == NULL)
				return bad_usage("cannot use --echo '%s': out "
						 "of memory",
				    optarg);
			t.echo = more;
			t.echo[t.necho++] = optarg;
			break;
		}
		case 'R':
			if (number(optarg, 100000000, &max_records) < 0)
				return bad_usage("cannot use --max-records "
						 "'%s': expected a positive "
						 "number",
				    optarg);
			break;
		case 'B':
			if (number(optarg, 1ULL << 40, &max_bytes) < 0)
				return bad_usage("cannot use --max-bytes "
						 "'%s': expected a positive "
						 "number",
				    optarg);
			break;
		case 'C':
			if (number(optarg, 100000, &v) < 0)
				return bad_usage("cannot use --max-conns "
						 "'%s': expected a positive "
						 "number",
				    optarg);
			t.lim.max_conns = (int)v;
			break;
		case 'b':
			if (number(optarg, 1ULL << 30, &v) < 0)
				return bad_usage("cannot use --body-cap "
						 "'%s': expected a positive "
						 "number",
				    optarg);
			t.lim.body_cap = (size_t)v;
			break;
		case 'i':
			if (number(optarg, 86400, &v) < 0)
				return bad_usage("cannot use --idle-timeout "
						 "'%s': expected a number of "
						 "seconds",
				    optarg);
			t.lim.idle_ms = (int)v * 1000;
			break;
		case 'T':
		case 'U':
			if (number(optarg, 65535, &v) < 0 ||
			    !is_socket((int)v,
				ch == 'T' ? SOCK_STREAM : SOCK_DGRAM))
				return bad_usage("cannot use --%s '%s': "
						 "expected "
						 "an open %s socket's fd",
				    ch == 'T' ? "sim-tcp-fd" : "sim-udp-fd",
				    optarg, ch == 'T' ? "TCP" : "UDP");
			*(ch == 'T' ? &sim_tcp : &sim_udp_fd) = (int)v;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case ':':
			return bad_usage("option '%s' needs a value",
			    argv[optind - 1]);
		default:
			return bad_usage("unknown option '%s'",
			    argv[optind - 1]);
		}
	}
	if (optind < argc)
		return bad_usage("unexpected argument '%s'", argv[optind]);
	if (records == NULL || *records == '\0')
		return bad_usage("option '--records' is required");
	if (ca_out == NULL || *ca_out == '\0')
		return bad_usage("option '--ca-out' is required");
	if ((sim_tcp < 0) != (sim_udp_fd < 0))
		return bad_usage("options '--sim-tcp-fd' and '--sim-udp-fd' go "
				 "together");

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

	if (trap_log_open(&t.log, records, (unsigned long)max_records,
		(size_t)max_bytes, err, sizeof(err)) < 0)
		goto fail;
	if (keep != NULL && trap_log_keep(&t.log, keep, err, sizeof(err)) < 0)
		goto fail;
	t.tls = trap_tls_new(err, sizeof(err));
	if (t.tls == NULL ||
	    trap_tls_write(t.tls, ca_out, bundle, err, sizeof(err)) < 0)
		goto fail;
	if (bind_dns(dns, &ufd, &tfd, &dport, err, sizeof(err)) < 0)
		goto fail;
	hfd = trap_bind(http, SOCK_STREAM, &hport, err, sizeof(err));
	if (hfd < 0)
		goto fail;
	if (sim_tcp >= 0 && has_caps()) {
		snprintf(err, sizeof(err),
		    "refusing to serve the simulated "
		    "internet with capabilities: they "
		    "belong to its setup only");
		goto fail;
	}
	if (sim_tcp >= 0 && (t.sim = trap_sim_new(SIM_MAX_NAMES)) == NULL) {
		snprintf(err, sizeof(err),
		    "cannot make the name table: out "
		    "of memory");
		goto fail;
	}
	bound_addr(dns, dport, dns_addr, sizeof(dns_addr));
	bound_addr(http, hport, http_addr, sizeof(http_addr));

	udp.t = &t;
	udp.fd = ufd;
	dns_srv = (struct server){ &t, tfd, trap_dns_tcp_handler, dns_addr };
	http_srv = (struct server){ &t, hfd, trap_http_handler, http_addr };
	sim_udp.t = &t;
	sim_udp.fd = sim_udp_fd;
	sim_srv = (struct server){ &t, sim_tcp, trap_sim_tcp_handler,
		"198.18.0.0/15" };
	if (pthread_create(&tid, NULL, trap_dns_udp_thread, &udp) != 0 ||
	    pthread_detach(tid) != 0 ||
	    pthread_create(&tid, NULL, serve_main, &dns_srv) != 0 ||
	    pthread_detach(tid) != 0 ||
	    pthread_create(&tid, NULL, serve_main, &http_srv) != 0 ||
	    pthread_detach(tid) != 0 ||
	    (t.sim != NULL &&
		(pthread_create(&tid, NULL, trap_sim_udp_thread, &sim_udp) !=
			0 ||
		    pthread_detach(tid) != 0 ||
		    pthread_create(&tid, NULL, serve_main, &sim_srv) != 0 ||
		    pthread_detach(tid) != 0))) {
		snprintf(err, sizeof(err), "cannot start threads: %s",
		    strerror(errno));
		goto fail;
	}
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
