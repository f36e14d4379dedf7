/*
 * lb-net: the network of a run's container, in a sidecar that shares its
 * network namespace (and nothing else) with it.
 *
 *	lb-net [--bridge LISTEN=CONNECT]... [--sim PORT]
 *	       [-- PROGRAM [ARG...] [--once unix:PATH PROGRAM [ARG...]]...]
 *	lb-net --pool unix:PATH --runs DIR
 *
 * Binds every bridge (see net/bridge.h), or takes its listener handed
 * down as fd:N, prints "lb-net: listening on LISTEN=CONNECT, ..."
 * (flushed; fd:N as "fd:N (ADDRESS)") once all are bound (no line
 * without a bridge), then serves them. With
 * PROGRAMs (the egress trap in a network sidecar; the scripted model, then
 * the recording proxy once the model's socket accepts, in the upstream
 * container), starts them and supervises them (common/super.h): when one
 * ends, for whatever reason, lb-net says which and how in one line, ends
 * the others and exits 1, so that a program that died is seen by the
 * harness as a dead container, never as a quiet run. SIGTERM and SIGINT
 * are forwarded to the programs and end lb-net.
 *
 * With --sim PORT, first the simulated internet (net/sim.h): 198.18.0.0/15
 * made local and handed to a TCP listener and a UDP socket on
 * 127.0.0.1:PORT, which PROGRAM gets as fds 3 (TCP) and 4 (UDP), with a
 * raw ICMP socket that sees every echo request as fd 5. Then, in
 * every case, lb-net drops every capability it has before it starts a
 * thread or PROGRAM.
 *
 * With --pool, the suite's upstream container instead (net/pool.h): it
 * starts, on request, each run's model and proxy (this program again,
 * with PROGRAMs), and its trap, its logs under DIR/ID/logs, with the
 * sockets the harness sends along as fds 3, 4, ...
 *
 * Exit status: 2 bad usage, 1 a bridge could not be bound or the program
 * ended, 0 on a signal.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/super.h"
#include "common/usage.h"
#include "net/bridge.h"
#include "net/pool.h"
#include "net/sim.h"

#define PROG	    "lb-net"
#define MAX_BRIDGES 8

static const char usage[] =
    "usage: lb-net [--bridge LISTEN=CONNECT]... [--sim PORT]\n"
    "              [-- PROGRAM [ARG...] [--once unix:PATH PROGRAM "
    "[ARG...]]...]\n"
    "       lb-net --pool unix:PATH --runs DIR\n"
    "\n"
    "Bridges loopback TCP and Unix sockets, each way, and supervises the\n"
    "PROGRAMs: when one ends, lb-net ends the others and exits with status "
    "1.\n"
    "After '--once unix:PATH', the next PROGRAM starts once PATH accepts.\n"
    "\n"
    "  --bridge LISTEN=CONNECT  endpoints are tcp:HOST:PORT or unix:PATH, "
    "e.g.\n"
    "                           tcp:127.0.0.1:8080=unix:/run/lb/api.sock;\n"
    "                           LISTEN may be fd:N, an inherited TCP or\n"
    "                           Unix stream socket (made to listen)\n"
    "  --sim PORT               make 198.18.0.0/15 local and hand every TCP\n"
    "                           connection and UDP datagram to it to\n"
    "                           127.0.0.1:PORT (needs CAP_NET_ADMIN and\n"
    "                           CAP_NET_RAW, then dropped); PROGRAM gets the\n"
    "                           sockets as fds 3 (TCP), 4 (UDP) and 5 (raw\n"
    "                           ICMP, echo requests)\n"
    "  --pool unix:PATH         serve the suite's upstream: start and stop\n"
    "                           each run's programs on request (POST, GET,\n"
    "                           DELETE /runs/ID), their logs in DIR/ID/logs\n"
    "  --runs DIR               with --pool: the runs' folders\n"
    "  --help                   this text\n";

static void *
serve_thread(void *p)
{
	struct bridge *b = p;

	bridge_serve(b);
	fprintf(stderr, "lb-net: cannot accept connections on '%s': %s\n",
	    b->bound, strerror(errno));
	_exit(1);
}

/*
 * In the child: the three sockets as fds 3, 4 and 5, open across exec
 * (each first copied above 9, so that none overwrites another). 0, or -1.
 */
static int
give_fds(int tcp, int udp, int icmp)
{
	int a = fcntl(tcp, F_DUPFD_CLOEXEC, 10);
	int b = fcntl(udp, F_DUPFD_CLOEXEC, 10);
	int c = fcntl(icmp, F_DUPFD_CLOEXEC, 10);

	if (a < 0 || b < 0 || c < 0 || dup2(a, 3) < 0 || dup2(b, 4) < 0 ||
	    dup2(c, 5) < 0)
		return -1;
	return 0;
}

/* The flags. */
static const struct option opts[] = { { "bridge", required_argument, NULL,
					  'b' },
	{ "sim", required_argument, NULL, 's' },
	{ "pool", required_argument, NULL, 'p' },
	{ "runs", required_argument, NULL, 'r' },
	{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };

/*
 * Binds the bridges, makes the simulated internet (sim_port > 0: its
 * sockets in *sim_tcp, *sim_udp and *sim_icmp) and drops every
 * capability. 0, or -1 once said on stderr.
 */
static int
setup(struct bridge *bridges, const char *const *specs, int n, int sim_port,
    int *sim_tcp, int *sim_udp, int *sim_icmp)
{
	char err[512];
	int i;

	for (i = 0; i < n; i++) {
		if (bridge_open(&bridges[i], specs[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "lb-net: %s\n", err);
			return -1;
		}
	}
	if (sim_port > 0 &&
	    sim_setup(sim_port, sim_tcp, sim_udp, sim_icmp, err, sizeof(err)) <
		0) {
		fprintf(stderr, "lb-net: %s\n", err);
		return -1;
	}
	if (sim_drop_caps(err, sizeof(err)) < 0) {
		fprintf(stderr, "lb-net: %s\n", err);
		return -1;
	}
	if (sim_port > 0) {
		printf("lb-net: simulated internet %s on 127.0.0.1:%d, every "
		       "capability dropped\n",
		    SIM_CIDR, sim_port);
		fflush(stdout);
	}
	return 0;
}

/* What every PROGRAM's child gets before exec. */
struct prep {
	struct bridge *bridges;
	int n, sim_tcp, sim_udp, sim_icmp;
};

/*
 * In a PROGRAM's child: without the bridges' sockets, with the simulated
 * internet's as fds 3, 4 and 5 when there are (sim_tcp >= 0). 0, or -1 once
 * said on stderr.
 */
static int
prep_child(void *arg)
{
	struct prep *p = arg;
	int i;

	for (i = 0; i < p->n; i++)
		bridge_close(&p->bridges[i]);
	if (p->sim_tcp >= 0 &&
	    give_fds(p->sim_tcp, p->sim_udp, p->sim_icmp) < 0) {
		fprintf(stderr,
		    "lb-net: cannot hand the simulated internet's sockets "
		    "over: %s\n",
		    strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Starts the PROGRAMs of argv (NULL-terminated; "--once unix:PATH"
 * between two, as parse checked: the next once PATH accepts), cutting
 * argv at each "--once". 0 once all started, else lb-net's exit status,
 * every started program ended.
 */
static int
start_programs(struct super *s, char **argv)
{
	char **next;
	int r;

	while (*argv != NULL) {
		for (next = argv; *next != NULL; next++)
			if (strcmp(*next, "--once") == 0)
				break;
		if (*next != NULL)
			*next = NULL;
		else
			next = NULL;
		if (super_spawn(s, (const char *const *)argv) < 0)
			return 1;
		if (next == NULL)
			return 0;
		if (super_await(s, next[1] + 5, &r) < 0)
			return r;
		argv = next + 2;
	}
	return 0;
}

/* --pool and --runs. */
static const char *pool_ctl, *pool_runs;

/*
 * The flags, and the --once between PROGRAMs. argv's index of the first
 * PROGRAM (argc: none), or minus lb-net's exit status (0: --help).
 */
static int
parse(int argc, char **argv, const char **specs, int *n, int *sim_port)
{
	unsigned long long port;
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'b':
			if (*n == MAX_BRIDGES)
				return -usage_error(PROG,
				    "cannot use --bridge '%s': at most %d "
				    "bridges",
				    optarg, MAX_BRIDGES);
			specs[(*n)++] = optarg;
			break;
		case 's':
			if (usage_count(optarg, 0, 65535, &port) < 0)
				return -usage_error(PROG,
				    "cannot use --sim '%s': expected a port "
				    "number",
				    optarg);
			*sim_port = (int)port;
			break;
		case 'p':
			if (strncmp(optarg, "unix:", 5) != 0)
				return -usage_error(PROG,
				    "cannot use --pool '%s': expected "
				    "unix:PATH",
				    optarg);
			pool_ctl = optarg;
			break;
		case 'r':
			pool_runs = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return -usage_bad_option(PROG, ch, argv, optind);
		}
	}
	if ((pool_ctl != NULL) != (pool_runs != NULL) ||
	    (pool_ctl != NULL && (*n > 0 || *sim_port > 0 || optind < argc)))
		return -usage_error(PROG,
		    "--pool takes --runs, and nothing else");
	if (pool_ctl != NULL)
		return optind;
	if (*n == 0 && optind >= argc)
		return -usage_error(PROG,
		    "nothing to do: no --bridge and no PROGRAM");
	for (ch = optind; ch < argc; ch++)
		if (strcmp(argv[ch], "--once") == 0 &&
		    (ch == optind || ch + 2 >= argc ||
			strncmp(argv[ch + 1], "unix:", 5) != 0))
			return -usage_error(PROG,
			    "cannot use --once: expected PROGRAM before it, "
			    "unix:PATH and PROGRAM after it");
	return optind;
}

/*
 * Serves every bridge in a thread of its own, SIGTERM and SIGINT blocked
 * there (they are the supervisor's), and says so in the ready line (none
 * without a bridge). 0, or -1 once said on stderr.
 */
static int
serve(struct bridge *bridges, int n)
{
	char line[4096];
	size_t used;
	sigset_t old;
	pthread_t tid;
	int i, err = 0;

	super_block_signals(SIG_BLOCK, &old);
	for (i = 0; i < n && err == 0; i++)
		if ((err = pthread_create(&tid, NULL, serve_thread,
			 &bridges[i])) == 0)
			pthread_detach(tid);
	super_block_signals(SIG_SETMASK, &old);
	if (err != 0) {
		fprintf(stderr, "lb-net: cannot start a thread: %s\n",
		    strerror(err));
		return -1;
	}
	if (n == 0) /* nothing listens: no ready line */
		return 0;
	used = (size_t)snprintf(line, sizeof(line), "lb-net: listening on");
	for (i = 0; i < n && used < sizeof(line); i++)
		used += (size_t)snprintf(line + used, sizeof(line) - used,
		    "%s %s=%s", i ? "," : "", bridges[i].bound,
		    bridges[i].connect);
	printf("%s\n", line);
	fflush(stdout);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct bridge bridges[MAX_BRIDGES];
	const char *specs[MAX_BRIDGES];
	struct sigaction sa;
	struct super sup;
	struct prep prep = { bridges, 0, -1, -1, -1 };
	int first, sim_port = 0, r;

	if ((first = parse(argc, argv, specs, &prep.n, &sim_port)) <= 0)
		return -first;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	if (pool_ctl != NULL)
		return pool_serve(pool_ctl, pool_runs);
	if (super_init(&sup, PROG, prep_child, &prep) < 0 ||
	    setup(bridges, specs, prep.n, sim_port, &prep.sim_tcp,
		&prep.sim_udp, &prep.sim_icmp) < 0)
		return 1;
	if ((r = start_programs(&sup, argv + first)) != 0)
		return r;
	if (prep.sim_tcp >= 0) {
		close(prep.sim_tcp);
		close(prep.sim_udp);
		close(prep.sim_icmp);
	}
	if (serve(bridges, prep.n) < 0)
		return 1;
	return super_watch(&sup);
}
