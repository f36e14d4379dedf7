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
	    "                [--record-dir DIR] [--log FILE]\n"
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

/* The command line. */
struct flags {
	const char *script_path, *listen_addr, *record_dir, *log_path;
	unsigned long long max_requests;
};

/*
 * The flags and the environment into *f. -1 to go on, else the exit
 * status (0 after --help, 2 on bad usage, said on stderr).
 */
static int
parse_args(int argc, char **argv, struct flags *f)
{
	int c;

	f->script_path = getenv("LB_SCRIPT");
	f->listen_addr = getenv("LB_MODEL_LISTEN");
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
		case 'l':
			*(c == 's' ? &f->script_path :
				     &f->listen_addr) = optarg;
			break;
		case 'm':
			if (usage_count(optarg, 0, INT_MAX, &f->max_requests) <
			    0)
				return usage_error(PROG,
				    "cannot use --max-requests '%s': expected "
				    "a positive whole number",
				    optarg);
			break;
		case 'r':
		case 'o':
			*(c == 'r' ? &f->record_dir : &f->log_path) = optarg;
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
	if (f->script_path == NULL || *f->script_path == '\0')
		return usage_error(PROG,
		    "no script given (--script FILE or LB_SCRIPT)");
	if (f->listen_addr == NULL || *f->listen_addr == '\0')
		f->listen_addr = DEFAULT_LISTEN;
	return -1;
}

int
main(int argc, char **argv)
{
	struct flags f = { 0 };
	struct model_server srv;
	struct script *script;
	struct engine *engine;
	char err[512], where[300];
	struct ids ids;
	int lfd, port, rc;

	if ((rc = parse_args(argc, argv, &f)) >= 0)
		return rc;
	signal(SIGPIPE, SIG_IGN);
	if ((script = script_load(f.script_path, err, sizeof(err))) == NULL) {
		fprintf(stderr, "lb-model: cannot load script '%s': %s\n",
		    f.script_path, err);
		return 1;
	}
	if (ids_init(&ids) < 0) {
		script_free(script);
		fprintf(stderr, "lb-model: cannot read random bytes for ids\n");
		return 1;
	}
	if ((engine = engine_new(script, &ids, (int)f.max_requests)) == NULL ||
	    model_server_init(&srv, engine, stdout) < 0) {
		engine_free(engine);
		fprintf(stderr, "lb-model: cannot start: out of memory\n");
		return 1;
	}
	srv.record_dir = f.record_dir;
	if ((lfd = http_listen(f.listen_addr, &port, err, sizeof(err))) < 0) {
		fprintf(stderr, "lb-model: %s\n", err);
		goto out;
	}
	http_listen_name(f.listen_addr, port, where, sizeof(where));
	if (f.log_path != NULL && to_log(f.log_path) < 0)
		goto out;
	printf("lb-model: listening on %s\n", where);
	fflush(stdout);
	http_serve(lfd, model_server_handle, &srv);
	fprintf(stderr, "lb-model: cannot accept connections on '%s'\n", where);
out:
	if (lfd >= 0)
		close(lfd);
	model_server_fini(&srv);
	engine_free(engine);
	return 1;
}
