/*
 * lb-proxy: the recording proxy's command line (see proxy.h for what it
 * does). Settings come from flags, else from the environment (LB_PROXY_LISTEN,
 * LB_UPSTREAM, LB_CREDENTIAL_FILE, LB_RECORDS, LB_CA_FILE), else defaults.
 * Exit status: 2 on bad usage, 1 on start-up errors; SIGTERM and SIGINT end
 * it at once with 0 (every finished request is already on disk).
 *
 * stdout: the ready line "lb-proxy: listening on ADDR upstream URL", then
 * one line per request. stderr: errors.
 */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <curl/curl.h>

#include "common/http.h"
#include "common/usage.h"
#include "proxy/proxy.h"

#define PROG "lb-proxy"

static const char usage[] =
    "usage: lb-proxy [--listen ADDR] [--upstream URL] [--upstream-socket "
    "PATH]\n"
    "                [--credential-file PATH] [--records DIR] [--ca-file PATH] "
    "[--upstream-timeout SECS]\n"
    "                [--client-timeout SECS] [--max-connections N] "
    "[--max-records N]\n"
    "                [--max-record-bytes BYTES]\n"
    "\n"
    "Forwards every request to the upstream, streams the response back, and\n"
    "records each request byte for byte in DIR/wire.jsonl (response bodies in\n"
    "DIR/responses/). With a credential file, the client's x-api-key and\n"
    "authorization headers are replaced by the real credential, which is "
    "never\n"
    "written anywhere, and only POST /v1/messages and "
    "/v1/messages/count_tokens\n"
    "are forwarded: other requests get 403.\n"
    "\n"
    "  --listen ADDR            HOST:PORT or unix:PATH to listen on\n"
    "                           (LB_PROXY_LISTEN; default " PROXY_DEFAULT_LISTEN
    ")\n"
    "  --upstream URL           http(s) base URL, may have a path prefix\n"
    "                           (LB_UPSTREAM; default " PROXY_DEFAULT_UPSTREAM
    ")\n"
    "  --upstream-socket PATH   reach the upstream through this Unix socket\n"
    "                           (the URL then only names the Host)\n"
    "  --credential-file PATH   'apikey:KEY' or 'oauth:TOKEN' "
    "(LB_CREDENTIAL_FILE;\n"
    "                           default none: headers pass unchanged); "
    "/dev/stdin\n"
    "                           reads it from standard input, up to its end\n"
    "  --records DIR            where records go (LB_RECORDS; "
    "default " PROXY_DEFAULT_RECORDS ")\n"
    "  --ca-file PATH           also trust this PEM CA for the upstream "
    "(LB_CA_FILE)\n"
    "  --upstream-timeout SECS  connect timeout, and longest silence of the\n"
    "                           upstream mid-response (default 600)\n"
    "  --client-timeout SECS    longest silence of a client, and time to send "
    "a\n"
    "                           request head (default 30)\n"
    "  --max-connections N      connections served at once; more wait (default "
    "64)\n"
    "  --max-records N          requests recorded in DIR; later ones get 507\n"
    "                           (default 20000)\n"
    "  --max-record-bytes BYTES size of DIR/wire.jsonl and DIR/responses/; K, "
    "M, G\n"
    "                           suffixes (default 1G). A cap that is hit is "
    "named\n"
    "                           in DIR/caps.json and in the log\n"
    "  --help                   this text\n";

static void
on_signal(int sig)
{
	(void)sig;
	_exit(0);
}

/* The flags. */
static const struct option opts[] = { { "listen", required_argument, NULL,
					  'l' },
	{ "upstream", required_argument, NULL, 'u' },
	{ "credential-file", required_argument, NULL, 'c' },
	{ "upstream-socket", required_argument, NULL, 'S' },
	{ "records", required_argument, NULL, 'r' },
	{ "ca-file", required_argument, NULL, 'a' },
	{ "upstream-timeout", required_argument, NULL, 't' },
	{ "client-timeout", required_argument, NULL, 'T' },
	{ "max-connections", required_argument, NULL, 'C' },
	{ "max-records", required_argument, NULL, 'R' },
	{ "max-record-bytes", required_argument, NULL, 'B' },
	{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };

/*
 * The value arg of the numeric flag ch (as in opts) into cfg. -1 to go on,
 * else 2 after saying on stderr what is wrong.
 */
static int
set_number(struct proxy_config *cfg, int ch, const char *arg)
{
	unsigned long long v;

	switch (ch) {
	case 't':
		if (usage_seconds(arg, 86400, &cfg->upstream_timeout) < 0)
			return usage_error(PROG,
			    "cannot use --upstream-timeout '%s': expected a "
			    "number of seconds",
			    arg);
		break;
	case 'T':
		if (usage_seconds(arg, 86400, &cfg->client_timeout) < 0)
			return usage_error(PROG,
			    "cannot use --client-timeout '%s': expected a "
			    "number of seconds",
			    arg);
		break;
	case 'C':
		if (usage_count(arg, 0, 100000, &v) < 0)
			return usage_error(PROG,
			    "cannot use --max-connections '%s': expected a "
			    "whole number from 1 to 100000",
			    arg);
		cfg->max_conns = (int)v;
		break;
	case 'R':
		if (usage_count(arg, 0, 1000000000, &v) < 0)
			return usage_error(PROG,
			    "cannot use --max-records '%s': expected a whole "
			    "number from 1 to 1000000000",
			    arg);
		cfg->max_records = (unsigned long)v;
		break;
	case 'B':
		if (usage_count(arg, 1, 1ULL << 50, &v) < 0)
			return usage_error(PROG,
			    "cannot use --max-record-bytes '%s': expected a "
			    "number of bytes, K, M or G after it",
			    arg);
		cfg->max_record_bytes = v;
		break;
	}
	return -1;
}

/*
 * The command line into cfg and *listen_addr. -1 to go on, else the exit
 * status (0 after --help, 2 on bad usage, said on stderr).
 */
static int
parse_args(int argc, char **argv, struct proxy_config *cfg,
    const char **listen_addr)
{
	int ch, status;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
		case 'u':
		case 'c':
		case 'S':
		case 'r':
		case 'a':
			*(ch == 'l'	  ? listen_addr :
				ch == 'u' ? &cfg->upstream :
				ch == 'c' ? &cfg->credential_file :
				ch == 'S' ? &cfg->upstream_socket :
				ch == 'r' ? &cfg->records :
					    &cfg->ca_file) = optarg;
			break;
		case 't':
		case 'T':
		case 'C':
		case 'R':
		case 'B':
			if ((status = set_number(cfg, ch, optarg)) != -1)
				return status;
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
	return -1;
}

int
main(int argc, char **argv)
{
	struct proxy_config cfg;
	static struct proxy p;
	const char *listen_addr = getenv("LB_PROXY_LISTEN");
	char err[512], addr[300], *line = NULL, *norm = NULL;
	struct sigaction sa;
	int lfd, port = 0, n;

	memset(&cfg, 0, sizeof(cfg));
	cfg.upstream = getenv("LB_UPSTREAM");
	cfg.credential_file = getenv("LB_CREDENTIAL_FILE");
	cfg.records = getenv("LB_RECORDS");
	cfg.ca_file = getenv("LB_CA_FILE");
	cfg.log_fd = STDOUT_FILENO;
	if ((n = parse_args(argc, argv, &cfg, &listen_addr)) >= 0)
		return n;
	if (listen_addr == NULL || *listen_addr == '\0')
		listen_addr = PROXY_DEFAULT_LISTEN;
	if (cfg.credential_file != NULL && *cfg.credential_file == '\0')
		cfg.credential_file = NULL;
	if (cfg.ca_file != NULL && *cfg.ca_file == '\0')
		cfg.ca_file = NULL;
	if (cfg.upstream == NULL || *cfg.upstream == '\0')
		cfg.upstream = PROXY_DEFAULT_UPSTREAM;
	if (proxy_check_upstream(cfg.upstream, &norm, err, sizeof(err)) < 0) {
		fprintf(stderr, "lb-proxy: %s\n", err);
		return 2;
	}
	free(norm);

	/*
	 * Every request allocates and frees body-sized buffers (85 KB and
	 * up). Keep freed memory instead of returning it to the kernel each
	 * time: faulting the pages in again cost more than all the copying
	 * (measured: 0.7 ms against 0.08 ms per 85 KB record).
	 */
	mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
	mallopt(M_TRIM_THRESHOLD, 256 * 1024 * 1024);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
#ifndef __SANITIZE_ADDRESS__
	/* No core dump, no ptrace by peers: the credential is in memory. */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
#endif

	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		fprintf(stderr, "lb-proxy: cannot start libcurl\n");
		return 1;
	}
	if (proxy_init(&p, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "lb-proxy: %s\n", err);
		proxy_fini(&p);
		curl_global_cleanup();
		return 1;
	}
	lfd = http_listen(listen_addr, &port, err, sizeof(err));
	if (lfd < 0) {
		fprintf(stderr, "lb-proxy: %s\n", err);
		proxy_fini(&p);
		curl_global_cleanup();
		return 1;
	}
	http_listen_name(listen_addr, port, addr, sizeof(addr));
	n = asprintf(&line, "lb-proxy: listening on %s upstream %s\n", addr,
	    p.upstream);
	if (n > 0)
		(void)http_write_all(STDOUT_FILENO, line, (size_t)n);
	free(line);
	http_serve_max(lfd, p.max_conns, proxy_handler, &p, proxy_on_full);
	fprintf(stderr, "lb-proxy: cannot accept connections on '%s': %s\n",
	    addr, strerror(errno));
	_exit(1);
}
