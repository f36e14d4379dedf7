/*
 * lb-model: the scripted model, a Messages API server that plays a
 * scenario's script to the real Claude Code (see src/model/engine.h for
 * how it picks its answers and src/model/server.h for what it serves).
 *
 *	lb-model --script FILE [--listen ADDR] [--max-requests N] [--log FILE]
 *
 * Environment fallbacks: LB_SCRIPT, LB_MODEL_LISTEN. With --log FILE,
 * stdout and stderr go to FILE once the socket listens, so that a start-up
 * error stays where its supervisor's log shows it. The ready line
 * "lb-model: listening on ADDR" is printed (and flushed) only once the
 * socket accepts; with port 0 it names the port the kernel chose. Start-up
 * errors go to stderr and exit 1; bad usage exits 2.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/http.h"
#include "common/usage.h"
#include "model/engine.h"
#include "model/server.h"

#define PROG	       "lb-model"
#define DEFAULT_LISTEN "0.0.0.0:8081"

static void
usage(FILE *f)
{
	fprintf(f,
	    "usage: lb-model --script FILE [--listen ADDR] [--max-requests N]\n"
	    "\n"
	    "The scripted model: a Messages API server that plays a script.\n"
	    "\n"
	    "  --script FILE       the script (JSON, written by leakbench);\n"
	    "                      default $LB_SCRIPT\n"
	    "  --listen ADDR       HOST:PORT to listen on; default "
	    "$LB_MODEL_LISTEN\n"
	    "                      or " DEFAULT_LISTEN " (port 0: any free "
	    "port)\n"
	    "  --max-requests N    refuse /v1/messages after N requests "
	    "(default:\n"
	    "                      the script's max_requests, else 200)\n"
	    "  --log FILE          once listening, write stdout and stderr to\n"
	    "                      FILE (made, or emptied); errors before\n"
	    "                      that stay on stderr\n"
	    "  --record-dir DIR    save every request (head and body) as\n"
	    "                      DIR/NNNN.http, mode 0600; a debugging aid:\n"
	    "                      the bodies hold whatever the client sent\n"
	    "  --help              this text\n");
}

/* The flags. */
static const struct option opts[] = { { "script", required_argument, NULL,
					  's' },
	{ "listen", required_argument, NULL, 'l' },
	{ "max-requests", required_argument, NULL, 'm' },
	{ "record-dir", required_argument, NULL, 'r' },
	{ "log", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };

/*
 * stdout and stderr to the file PATH (made 0644, or emptied): --log. 0, or
 * -1 once said on stderr.
 */
static int
to_log(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
		fprintf(stderr, "lb-model: cannot open log '%s': %s\n", path,
		    strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *script_path = getenv("LB_SCRIPT");
	const char *listen_addr = getenv("LB_MODEL_LISTEN");
	const char *record_dir = NULL, *log_path = NULL;
	struct model_server srv;
	struct script *script;
	struct engine *engine;
	char err[512], where[300];
	unsigned long long max_requests = 0;
	struct ids ids;
	int c, lfd, port;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
		case 'l':
			*(c == 's' ? &script_path : &listen_addr) = optarg;
			break;
		case 'm':
			if (usage_count(optarg, 0, INT_MAX, &max_requests) < 0)
				return usage_error(PROG,
				    "cannot use --max-requests '%s': expected "
				    "a positive whole number",
				    optarg);
			break;
		case 'r':
			record_dir = optarg;
			break;
		case 'o':
			log_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return usage_bad_option(PROG, c, argv, optind);
		}
	}
	if (optind < argc)
		return usage_error(PROG, "unexpected argument '%s'",
		    argv[optind]);
	if (script_path == NULL || *script_path == '\0')
		return usage_error(PROG,
		    "no script given (--script FILE or LB_SCRIPT)");
	if (listen_addr == NULL || *listen_addr == '\0')
		listen_addr = DEFAULT_LISTEN;

	signal(SIGPIPE, SIG_IGN);
	if ((script = script_load(script_path, err, sizeof(err))) == NULL) {
		fprintf(stderr, "lb-model: cannot load script '%s': %s\n",
		    script_path, err);
		return 1;
	}
	if (ids_init(&ids) < 0) {
		script_free(script);
		fprintf(stderr, "lb-model: cannot read random bytes for ids\n");
		return 1;
	}
	if ((engine = engine_new(script, &ids, (int)max_requests)) == NULL ||
	    model_server_init(&srv, engine, stdout) < 0) {
		engine_free(engine);
		fprintf(stderr, "lb-model: cannot start: out of memory\n");
		return 1;
	}
	srv.record_dir = record_dir;
	if ((lfd = http_listen(listen_addr, &port, err, sizeof(err))) < 0) {
		fprintf(stderr, "lb-model: %s\n", err);
		model_server_fini(&srv);
		engine_free(engine);
		return 1;
	}
	http_listen_name(listen_addr, port, where, sizeof(where));
	if (log_path != NULL && to_log(log_path) < 0) {
		close(lfd);
		model_server_fini(&srv);
		engine_free(engine);
		return 1;
	}
	printf("lb-model: listening on %s\n", where);
	fflush(stdout);
	http_serve(lfd, model_server_handle, &srv);
	fprintf(stderr, "lb-model: cannot accept connections on '%s'\n", where);
	close(lfd);
	model_server_fini(&srv);
	engine_free(engine);
	return 1;
}
