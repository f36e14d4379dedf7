/*
 * lb-net: the network of a run's container, in a sidecar that shares its
 * network namespace (and nothing else) with it.
 *
 *	lb-net [--bridge LISTEN=CONNECT]... [--sim PORT] [-- PROGRAM [ARG...]]
 *
 * Binds every bridge (see net/bridge.h), prints "lb-net: listening on
 * LISTEN=CONNECT, ..." (flushed) once all are bound, then serves them. With
 * a PROGRAM (the egress trap), starts it and supervises it: when it ends,
 * for whatever reason, lb-net says so and exits 1, so that a trap that died
 * is seen by the harness as a dead sidecar, never as a quiet run. SIGTERM
 * and SIGINT end both.
 *
 * With --sim PORT, first the simulated internet (net/sim.h): 198.18.0.0/15
 * made local and handed to a TCP listener and a UDP socket on
 * 127.0.0.1:PORT, which PROGRAM gets as fds 3 (TCP) and 4 (UDP). Then, in
 * every case, lb-net drops every capability it has before it starts a
 * thread or PROGRAM.
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
#include <sys/wait.h>
#include <unistd.h>

#include "common/usage.h"
#include "net/bridge.h"
#include "net/sim.h"

#define PROG	    "lb-net"
#define MAX_BRIDGES 8

static const char usage[] =
    "usage: lb-net [--bridge LISTEN=CONNECT]... [--sim PORT]\n"
    "              [-- PROGRAM [ARG...]]\n"
    "\n"
    "Bridges loopback TCP and Unix sockets, each way, and supervises PROGRAM:\n"
    "when it ends, lb-net ends with status 1.\n"
    "\n"
    "  --bridge LISTEN=CONNECT  endpoints are tcp:HOST:PORT or unix:PATH, "
    "e.g.\n"
    "                           tcp:127.0.0.1:8080=unix:/run/lb/api.sock\n"
    "  --sim PORT               make 198.18.0.0/15 local and hand every TCP\n"
    "                           connection and UDP datagram to it to\n"
    "                           127.0.0.1:PORT (needs CAP_NET_ADMIN, then\n"
    "                           dropped); PROGRAM gets the sockets as fds 3\n"
    "                           (TCP) and 4 (UDP)\n"
    "  --help                   this text\n";

static volatile sig_atomic_t child_pid;

static void
on_signal(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
	_exit(0);
}

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
 * In the child: the two sockets as fds 3 and 4, open across exec (each
 * first copied above 9, so that neither overwrites the other). 0, or -1.
 */
static int
give_fds(int tcp, int udp)
{
	int a = fcntl(tcp, F_DUPFD_CLOEXEC, 10);
	int b = fcntl(udp, F_DUPFD_CLOEXEC, 10);

	if (a < 0 || b < 0 || dup2(a, 3) < 0 || dup2(b, 4) < 0)
		return -1;
	return 0;
}

/* The flags. */
static const struct option opts[] = { { "bridge", required_argument, NULL,
					  'b' },
	{ "sim", required_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };

/*
 * Binds the bridges, makes the simulated internet (sim_port > 0: its
 * sockets in *sim_tcp and *sim_udp) and drops every capability. 0, or -1
 * once said on stderr.
 */
static int
setup(struct bridge *bridges, const char *const *specs, int n, int sim_port,
    int *sim_tcp, int *sim_udp)
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
	    sim_setup(sim_port, sim_tcp, sim_udp, err, sizeof(err)) < 0) {
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

/*
 * Starts PROGRAM (argv) in a child with the default signal dispositions,
 * without the bridges' sockets, with the simulated internet's as fds 3 and
 * 4 when there are (sim_tcp >= 0). Its pid, or -1 once said on stderr.
 */
static pid_t
start_program(char **argv, struct bridge *bridges, int n, int sim_tcp,
    int sim_udp)
{
	struct sigaction sa;
	pid_t pid = fork();
	int i;

	if (pid < 0) {
		fprintf(stderr, "lb-net: cannot start '%s': %s\n", argv[0],
		    strerror(errno));
		return -1;
	}
	if (pid > 0)
		return pid;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	for (i = 0; i < n; i++)
		bridge_close(&bridges[i]);
	if (sim_tcp >= 0 && give_fds(sim_tcp, sim_udp) < 0) {
		fprintf(stderr,
		    "lb-net: cannot hand the "
		    "simulated internet's sockets "
		    "over: %s\n",
		    strerror(errno));
		_exit(127);
	}
	execvp(argv[0], argv);
	fprintf(stderr, "lb-net: cannot start '%s': %s\n", argv[0],
	    strerror(errno));
	_exit(127);
}

/* Waits for the program to end and says how it ended. */
static void
report_end(const char *name)
{
	int status;

	while (waitpid((pid_t)child_pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status))
		fprintf(stderr, "lb-net: '%s' was killed by signal %d\n", name,
		    WTERMSIG(status));
	else
		fprintf(stderr, "lb-net: '%s' exited with status %d\n", name,
		    WEXITSTATUS(status));
}

int
main(int argc, char **argv)
{
	static struct bridge bridges[MAX_BRIDGES];
	const char *specs[MAX_BRIDGES];
	char line[4096];
	struct sigaction sa;
	pthread_t tid;
	size_t used = 0;
	int ch, n = 0, i, sim_port = 0, sim_tcp = -1, sim_udp = -1;
	unsigned long long port;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'b':
			if (n == MAX_BRIDGES)
				return usage_error(PROG,
				    "cannot use --bridge '%s': at most %d "
				    "bridges",
				    optarg, MAX_BRIDGES);
			specs[n++] = optarg;
			break;
		case 's':
			if (usage_count(optarg, 0, 65535, &port) < 0)
				return usage_error(PROG,
				    "cannot use --sim '%s': expected a port "
				    "number",
				    optarg);
			sim_port = (int)port;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			return usage_bad_option(PROG, ch, argv, optind);
		}
	}
	if (n == 0 && optind >= argc)
		return usage_error(PROG,
		    "nothing to do: no --bridge and no PROGRAM");

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	if (setup(bridges, specs, n, sim_port, &sim_tcp, &sim_udp) < 0)
		return 1;
	if (optind < argc &&
	    (child_pid = start_program(argv + optind, bridges, n, sim_tcp,
		 sim_udp)) < 0)
		return 1;
	if (sim_tcp >= 0) {
		close(sim_tcp);
		close(sim_udp);
	}
	for (i = 0; i < n; i++) {
		if (pthread_create(&tid, NULL, serve_thread, &bridges[i]) !=
		    0) {
			fprintf(stderr, "lb-net: cannot start a thread\n");
			return 1;
		}
		pthread_detach(tid);
	}
	used = (size_t)snprintf(line, sizeof(line), "lb-net: listening on");
	for (i = 0; i < n && used < sizeof(line); i++)
		used += (size_t)snprintf(line + used, sizeof(line) - used,
		    "%s %s=%s", i ? "," : "", bridges[i].bound,
		    bridges[i].connect);
	printf("%s\n", line);
	fflush(stdout);
	if (child_pid == 0)
		for (;;)
			pause();
	report_end(argv[optind]);
	return 1;
}
