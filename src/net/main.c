/*
 * lb-net: the network of a run's container, in a sidecar that shares its
 * network namespace (and nothing else) with it.
 *
 *	lb-net [--bridge LISTEN=CONNECT]... [-- PROGRAM [ARG...]]
 *
 * Binds every bridge (see net/bridge.h), prints "lb-net: listening on
 * LISTEN=CONNECT, ..." (flushed) once all are bound, then serves them. With
 * a PROGRAM (the egress trap), starts it and supervises it: when it ends,
 * for whatever reason, lb-net says so and exits 1, so that a trap that died
 * is seen by the harness as a dead sidecar, never as a quiet run. SIGTERM
 * and SIGINT end both.
 *
 * Exit status: 2 bad usage, 1 a bridge could not be bound or the program
 * ended, 0 on a signal.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/bridge.h"

#define MAX_BRIDGES 8

static const char usage[] =
    "usage: lb-net [--bridge LISTEN=CONNECT]... [-- PROGRAM [ARG...]]\n"
    "\n"
    "Bridges loopback TCP and Unix sockets, each way, and supervises PROGRAM:\n"
    "when it ends, lb-net ends with status 1.\n"
    "\n"
    "  --bridge LISTEN=CONNECT  endpoints are tcp:HOST:PORT or unix:PATH, "
    "e.g.\n"
    "                           tcp:127.0.0.1:8080=unix:/run/lb/api.sock\n"
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

static int
bad_usage(const char *msg, const char *arg)
{
	fprintf(stderr, "lb-net: %s '%s' (try 'lb-net --help')\n", msg, arg);
	return 2;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = { { "bridge", required_argument,
						  NULL, 'b' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	static struct bridge bridges[MAX_BRIDGES];
	const char *specs[MAX_BRIDGES];
	char err[512], line[4096];
	struct sigaction sa;
	pthread_t tid;
	size_t used = 0;
	int ch, n = 0, i, status;
	pid_t pid;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'b':
			if (n == MAX_BRIDGES)
				return bad_usage("too many bridges at", optarg);
			specs[n++] = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case ':':
			return bad_usage("missing value for", argv[optind - 1]);
		default:
			return bad_usage("unknown option", argv[optind - 1]);
		}
	}
	if (n == 0 && optind >= argc)
		return bad_usage("nothing to do: no --bridge and no",
		    "PROGRAM");

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	for (i = 0; i < n; i++) {
		if (bridge_open(&bridges[i], specs[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "lb-net: %s\n", err);
			return 1;
		}
	}
	if (optind < argc) {
		pid = fork();
		if (pid < 0) {
			fprintf(stderr, "lb-net: cannot start '%s': %s\n",
			    argv[optind], strerror(errno));
			return 1;
		}
		if (pid == 0) {
			sa.sa_handler = SIG_DFL;
			sigaction(SIGTERM, &sa, NULL);
			sigaction(SIGINT, &sa, NULL);
			sigaction(SIGPIPE, &sa, NULL);
			for (i = 0; i < n; i++)
				bridge_close(&bridges[i]);
			execvp(argv[optind], argv + optind);
			fprintf(stderr, "lb-net: cannot start '%s': %s\n",
			    argv[optind], strerror(errno));
			_exit(127);
		}
		child_pid = pid;
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
	while (waitpid((pid_t)child_pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status))
		fprintf(stderr, "lb-net: '%s' was killed by signal %d\n",
		    argv[optind], WTERMSIG(status));
	else
		fprintf(stderr, "lb-net: '%s' exited with status %d\n",
		    argv[optind], WEXITSTATUS(status));
	return 1;
}
