/*
 * lb-net --pool: see pool.h. One thread, one request at a time: a poll on
 * the listening socket that wakes every POOL_TICK_MS to reap what ended.
 */
#include "net/pool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/http.h"

#define POOL_TICK_MS  100
#define POOL_ARGS_MAX 256
#define POOL_BODY_MAX (64u << 10)

struct slot {
	char id[POOL_ID_MAX + 1];
	pid_t pid;  /* 0: a free slot */
	int ended;  /* it ended by itself, with status */
	int status; /* waitpid's */
};

static struct slot slots[POOL_MAX];
static volatile sig_atomic_t stop_signal;

static void
on_signal(int sig)
{
	stop_signal = sig;
}

/* Whether ID (N bytes) is 1 to POOL_ID_MAX of [0-9A-Za-z-]. */
static int
valid_id(const char *id, size_t n)
{
	size_t i;

	if (n == 0 || n > POOL_ID_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!(id[i] == '-' || (id[i] >= '0' && id[i] <= '9') ||
			(id[i] >= 'a' && id[i] <= 'z') ||
			(id[i] >= 'A' && id[i] <= 'Z')))
			return 0;
	return 1;
}

static struct slot *
find(const char *id)
{
	int i;

	for (i = 0; i < POOL_MAX; i++)
		if (slots[i].pid != 0 && strcmp(slots[i].id, id) == 0)
			return &slots[i];
	return NULL;
}

/* A free slot, else the first whose child ended (its run never asked). */
static struct slot *
free_slot(void)
{
	int i;

	for (i = 0; i < POOL_MAX; i++)
		if (slots[i].pid == 0)
			return &slots[i];
	for (i = 0; i < POOL_MAX; i++)
		if (slots[i].ended)
			return &slots[i];
	return NULL;
}

/* How a child ended, in words: "exited N", "killed by signal N". */
static void
describe(int status, char *out, size_t n)
{
	if (WIFSIGNALED(status))
		snprintf(out, n, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(out, n, "exited %d", WEXITSTATUS(status));
}

/* /tmp/ID and what is in it (the model's socket), gone. */
static void
rm_workdir(const char *id)
{
	char path[32 + POOL_ID_MAX];
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/tmp/%s", id);
	if ((d = opendir(path)) != NULL) {
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 &&
			    strcmp(e->d_name, "..") != 0)
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(path);
}

/* RUNS/ID/logs/NAME, or -1 when it does not fit OUT. */
static int
log_path(char *out, size_t n, const char *runs, const char *id,
    const char *name)
{
	int len = snprintf(out, n, "%s/%s/logs/%s", runs, id, name);

	return len < 0 || (size_t)len >= n ? -1 : 0;
}

/* A child that ended by itself: said in RUNS/ID/logs/exit. */
static void
note_end(const char *runs, struct slot *s)
{
	char path[4096], text[64];
	int fd;

	s->ended = 1;
	kill(-s->pid, SIGKILL); /* what is left of its group */
	rm_workdir(s->id);
	if (log_path(path, sizeof(path), runs, s->id, "exit") < 0)
		return;
	describe(s->status, text, sizeof(text));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	if (fd < 0)
		return;
	if (http_write_all(fd, text, strlen(text)) < 0)
		fprintf(stderr, "lb-net: pool: cannot write '%s': %s\n", path,
		    strerror(errno));
	close(fd);
}

/*
 * Reaps every child that ended: a run's (noted) or one of its group's
 * that came to us, PID 1, when its parent died first (forgotten).
 */
static void
reap(const char *runs)
{
	struct slot *s;
	pid_t pid;
	int status, i;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (i = 0, s = NULL; i < POOL_MAX && s == NULL; i++)
			if (slots[i].pid == pid && !slots[i].ended)
				s = &slots[i];
		if (s != NULL) {
			s->status = status;
			note_end(runs, s);
		}
	}
}

/* In the child: the run's log as stdout and stderr, then exec. */
static void
child(const char *log, const char *id, char **argv)
{
	char dir[32 + POOL_ID_MAX];
	sigset_t none;
	int fd, null;

	setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0644);
	null = open("/dev/null", O_RDONLY);
	if (fd < 0 || null < 0 || dup2(null, 0) < 0 || dup2(fd, 1) < 0 ||
	    dup2(fd, 2) < 0)
		_exit(127);
	snprintf(dir, sizeof(dir), "/tmp/%s", id);
	if (chdir(dir) < 0) {
		fprintf(stderr, "lb-net: pool: cannot enter '%s': %s\n", dir,
		    strerror(errno));
		_exit(127);
	}
	execvp(argv[0], argv);
	fprintf(stderr, "lb-net: pool: cannot run '%s': %s\n", argv[0],
	    strerror(errno));
	_exit(127);
}

/*
 * Splits BODY (LEN bytes, each string NUL-ended) into ARGV (at most
 * POOL_ARGS_MAX, NULL-terminated). The count, or -1 when it is not so.
 */
static int
split_argv(char *body, size_t len, char **argv)
{
	size_t i, start = 0;
	int n = 0;

	if (len == 0 || body[len - 1] != '\0')
		return -1;
	for (i = 0; i < len; i++) {
		if (body[i] != '\0')
			continue;
		if (i == start || n == POOL_ARGS_MAX)
			return -1;
		argv[n++] = body + start;
		start = i + 1;
	}
	argv[n] = NULL;
	return n;
}

static int
respond(int fd, int status, const char *text)
{
	return http_respond(fd, status, "text/plain", NULL, text, strlen(text),
	    0);
}

/* POST /runs/ID. */
static void
start_run(int fd, const char *runs, const char *id, struct http_request *r)
{
	char *argv[POOL_ARGS_MAX + 1], log[4096], dir[32 + POOL_ID_MAX];
	char text[32];
	struct slot *s;
	pid_t pid;

	if (find(id) != NULL && !find(id)->ended) {
		respond(fd, 409, "already running");
		return;
	}
	if (split_argv((char *)r->body, r->body_len, argv) < 0) {
		respond(fd, 400, "expected the argv, each string NUL-ended");
		return;
	}
	if ((s = find(id)) == NULL && (s = free_slot()) == NULL) {
		respond(fd, 503, "too many runs");
		return;
	}
	if (log_path(log, sizeof(log), runs, id, "up.log") < 0) {
		respond(fd, 400, "path too long");
		return;
	}
	snprintf(dir, sizeof(dir), "/tmp/%s", id);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		respond(fd, 500, strerror(errno));
		return;
	}
	if ((pid = fork()) < 0) {
		respond(fd, 500, strerror(errno));
		return;
	}
	if (pid == 0)
		child(log, id, argv);
	setpgid(pid, pid);
	memset(s, 0, sizeof(*s));
	memcpy(s->id, id, strlen(id) + 1);
	s->pid = pid;
	snprintf(text, sizeof(text), "%d", (int)pid);
	respond(fd, 201, text);
}

/* DELETE /runs/ID: killed, reaped, the slot freed. */
static void
stop_run(int fd, const char *runs, struct slot *s)
{
	char text[64];
	int status;

	if (!s->ended) {
		kill(-s->pid, SIGKILL);
		while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
			;
		s->status = status;
		rm_workdir(s->id);
		reap(runs); /* its group's, reparented to us */
	}
	describe(s->status, text, sizeof(text));
	memset(s, 0, sizeof(*s));
	respond(fd, 200, text);
}

/* One request on the accepted FD. */
static void
handle(int fd, const char *runs)
{
	struct http_limits lim = { 8192, POOL_BODY_MAX, 5000, 5000 };
	struct http_conn c = { .fd = fd };
	struct http_request r;
	const char *id;
	struct slot *s;
	char text[64];
	int rc;

	if ((rc = http_read_request(&c, &r, &lim)) != HTTP_OK) {
		if (http_error_status(rc))
			respond(fd, http_error_status(rc), "bad request");
		buf_free(&c.in);
		return;
	}
	id = r.path + 6;
	if (strncmp(r.path, "/runs/", 6) != 0 || !valid_id(id, strlen(id)))
		respond(fd, 404, "no such route");
	else if (strcmp(r.method, "POST") == 0)
		start_run(fd, runs, id, &r);
	else if ((s = find(id)) == NULL)
		respond(fd, 404, "no such run");
	else if (strcmp(r.method, "DELETE") == 0)
		stop_run(fd, runs, s);
	else if (strcmp(r.method, "GET") == 0) {
		if (s->ended)
			describe(s->status, text, sizeof(text));
		respond(fd, 200, s->ended ? text : "running");
	} else
		respond(fd, 405, "method not allowed");
	http_request_free(&r);
	buf_free(&c.in);
}

/* Every run's group killed and reaped. */
static void
stop_all(void)
{
	int i, status;

	for (i = 0; i < POOL_MAX; i++)
		if (slots[i].pid != 0 && !slots[i].ended)
			kill(-slots[i].pid, SIGKILL);
	while (waitpid(-1, &status, 0) > 0 || errno == EINTR)
		;
	for (i = 0; i < POOL_MAX; i++)
		if (slots[i].pid != 0)
			rm_workdir(slots[i].id);
}

int
pool_serve(const char *ctl, const char *runs)
{
	struct sigaction sa;
	struct pollfd p;
	char err[512];
	int lfd, fd;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if ((lfd = http_listen(ctl, NULL, err, sizeof(err))) < 0) {
		fprintf(stderr, "lb-net: pool: %s\n", err);
		return 1;
	}
	fcntl(lfd, F_SETFD, FD_CLOEXEC);
	printf("lb-net: pool listening on %s\n", ctl);
	fflush(stdout);
	p.fd = lfd;
	p.events = POLLIN;
	while (!stop_signal) {
		reap(runs);
		if (poll(&p, 1, POOL_TICK_MS) <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		handle(fd, runs);
		close(fd);
	}
	stop_all();
	return 0;
}
