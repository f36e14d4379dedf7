/*
 * lb-net --pool: see pool.h. One thread, one request at a time: a poll on
 * the listening socket that wakes every POOL_TICK_MS to reap what ended.
 */
#include "net/pool.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
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
static int final; /* a DELETE ?final came: end once no run is left */

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

/* Whether no run is left: every slot freed by its DELETE. */
static int
idle(void)
{
	int i;

	for (i = 0; i < POOL_MAX; i++)
		if (slots[i].pid != 0)
			return 0;
	return 1;
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

/* The control socket's folder (hidden from every run), from pool_serve. */
static char ctl_dir[256];

/* PATH (a /proc/self map file) holds TEXT. 0, or -1 with errno. */
static int
write_map(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int r = fd < 0 ? -1 : http_write_all(fd, text, strlen(text));

	if (fd >= 0 && close(fd) < 0)
		r = -1;
	return r;
}

/*
 * In a run's first process, the only one of its new user namespace: its
 * uid and gid map to themselves, nothing else is mapped.
 */
static int
map_ids(uid_t uid, gid_t gid)
{
	char map[64];

	snprintf(map, sizeof(map), "%d %d 1\n", (int)uid, (int)uid);
	if (write_map("/proc/self/uid_map", map) < 0 ||
	    write_map("/proc/self/setgroups", "deny\n") < 0)
		return -1;
	snprintf(map, sizeof(map), "%d %d 1\n", (int)gid, (int)gid);
	return write_map("/proc/self/gid_map", map);
}

#define FAIL(what) \
	do { \
		fprintf(stderr, \
		    "lb-net: pool: cannot isolate run '%s': %s: %s\n", id, \
		    what, strerror(errno)); \
		return -1; \
	} while (0)

/*
 * What a run's folder may hold, each bound on its own if there (logs
 * must be), some read-only: the model's run has logs, records, sock and
 * script.json; the trap's logs, egress, trap-ca and keep.
 */
static const struct entry {
	const char *name;
	int ro, required;
} entries[] = { { "logs", 0, 1 }, { "records", 0, 0 }, { "sock", 0, 0 },
	{ "script.json", 1, 0 }, { "egress", 0, 0 }, { "trap-ca", 0, 0 },
	{ "keep", 1, 0 } };
#define NENTRIES ((int)(sizeof(entries) / sizeof(entries[0])))

/*
 * /runs/ID in the run's view: a folder of its own (on a tmpfs over RUNS),
 * where each of RUNS/ID's entries there is bound from a descriptor FDS[i]
 * (-1: absent) taken before anything was hidden; so that the run cannot
 * replace an entry (a mount point) with a link for the harness to
 * follow. A folder is bound on a folder, a file on a file. 0, or -1 once
 * said on stderr.
 */
static int
bind_entries(const char *own, const char *id, const int *fds)
{
	char at[4096 + 32], from[64];
	struct stat st;
	int i, fd;

	if (mkdir(own, 0755) < 0)
		FAIL("make its folder");
	for (i = 0; i < NENTRIES; i++) {
		if (fds[i] < 0)
			continue;
		snprintf(at, sizeof(at), "%s/%s", own, entries[i].name);
		if (fstat(fds[i], &st) < 0)
			FAIL(entries[i].name);
		if (S_ISDIR(st.st_mode))
			fd = mkdir(at, 0755);
		else if ((fd = open(at, O_WRONLY | O_CREAT | O_CLOEXEC,
			      0644)) >= 0)
			fd = close(fd);
		if (fd < 0)
			FAIL(entries[i].name);
		snprintf(from, sizeof(from), "/proc/self/fd/%d", fds[i]);
		if (mount(from, at, NULL, MS_BIND, NULL) < 0)
			FAIL(entries[i].name);
		if (entries[i].ro &&
		    mount(NULL, at, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY,
			NULL) < 0)
			FAIL(entries[i].name);
		close(fds[i]);
	}
	return 0;
}

/*
 * RUNS/ID's entries into FDS (O_PATH; -1 for an optional one that is not
 * there). 0, or -1 once said on stderr: a required one missing, or one
 * that is neither a folder nor a file (a link is not followed).
 */
static int
open_entries(const char *own, const char *id, int *fds)
{
	char path[4096 + 32];
	struct stat st;
	int i;

	for (i = 0; i < NENTRIES; i++) {
		snprintf(path, sizeof(path), "%s/%s", own, entries[i].name);
		fds[i] = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fds[i] < 0 && errno == ENOENT && !entries[i].required)
			continue;
		if (fds[i] < 0)
			FAIL(entries[i].name);
		if (fstat(fds[i], &st) < 0)
			FAIL(entries[i].name);
		if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) {
			errno = EINVAL;
			FAIL(entries[i].name);
		}
	}
	return 0;
}

/*
 * The run's view of the files, in its own mount namespace: /runs holding
 * only ID and its entries, the control folder empty, a /tmp of its own
 * (RUNS and the control folder are not under /tmp). 0, or -1 once said
 * on stderr.
 */
static int
isolate_files(const char *runs, const char *id, uid_t uid, gid_t gid)
{
	char own[4096], opts[96], dir[32 + POOL_ID_MAX];
	const unsigned long fl = MS_NOSUID | MS_NODEV;
	int fds[NENTRIES];

	snprintf(own, sizeof(own), "%s/%s", runs, id);
	if (open_entries(own, id, fds) < 0)
		return -1;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		FAIL("mount --make-rprivate /");
	snprintf(opts, sizeof(opts), "size=64k,mode=0755,uid=%d,gid=%d",
	    (int)uid, (int)gid);
	if (mount("tmpfs", runs, "tmpfs", fl | MS_NOEXEC, opts) < 0)
		FAIL("hide the other runs");
	if (bind_entries(own, id, fds) < 0)
		return -1;
	if (mount("tmpfs", ctl_dir, "tmpfs", fl | MS_NOEXEC | MS_RDONLY,
		"size=4k,mode=0555") < 0)
		FAIL("hide the control socket");
	snprintf(opts, sizeof(opts), "size=16m,mode=0700,uid=%d,gid=%d",
	    (int)uid, (int)gid);
	if (mount("tmpfs", "/tmp", "tmpfs", fl, opts) < 0)
		FAIL("mount a tmpfs on /tmp");
	snprintf(dir, sizeof(dir), "/tmp/%s", id);
	if (mkdir(dir, 0700) < 0 || chdir(dir) < 0)
		FAIL("make its /tmp folder");
	return 0;
}

/*
 * In a run's process, just before exec: FDS[0..N-1] (close-on-exec) as
 * fds 3, 4, ..., open across exec (each first copied above them all, so
 * that none overwrites another). 0, or -1 once said on stderr.
 */
static int
give_fds(const char *id, const int *fds, int n)
{
	int high[POOL_FDS_MAX], i;

	for (i = 0; i < n; i++)
		if ((high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC,
			 3 + POOL_FDS_MAX)) < 0)
			FAIL("copy the descriptors it was sent");
	for (i = 0; i < n; i++)
		if (dup2(high[i], 3 + i) < 0)
			FAIL("give the descriptors it was sent");
	return 0;
}

/*
 * In the child: the run's log as stdout and stderr; then, in namespaces
 * of its own (user, mount, PID, network, IPC), what ARGV runs can see no
 * other run's files or sockets, signal none of their processes, and
 * reach no abstract socket of theirs; FDS[0..NFDS-1], the descriptors
 * sent with the request, are its fds 3, 4, ... The child waits for
 * ARGV's process, the first of the new PID namespace (whose end ends
 * every process in it), with no descriptor but 0 to 2, and exits as it
 * did.
 */
static void
child(const char *runs, const char *log, const char *id, char **argv,
    const int *fds, int nfds)
{
	uid_t uid = getuid();
	gid_t gid = getgid();
	sigset_t none;
	int fd, null, status;
	pid_t pid;

	setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
	    0644);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || null < 0 || dup2(null, 0) < 0 || dup2(fd, 1) < 0 ||
	    dup2(fd, 2) < 0)
		_exit(127);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
		CLONE_NEWIPC) < 0 ||
	    map_ids(uid, gid) < 0) {
		fprintf(stderr,
		    "lb-net: pool: cannot isolate run '%s': namespaces: %s\n",
		    id, strerror(errno));
		_exit(127);
	}
	if ((pid = fork()) < 0)
		_exit(127);
	if (pid == 0) {
		if (isolate_files(runs, id, uid, gid) < 0 ||
		    give_fds(id, fds, nfds) < 0)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "lb-net: pool: cannot run '%s': %s\n", argv[0],
		    strerror(errno));
		_exit(127);
	}
	/* Only waits: holds none of the pool's sockets (its control socket,
	 * the request's connection, whose client waits for its end) nor the
	 * descriptors sent, which are ARGV's process's now. */
	if (close_range(3, ~0U, 0) < 0)
		for (fd = 3; fd < 4096; fd++)
			close(fd);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			_exit(127);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
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

/*
 * POST /runs/ID, with FDS[0..NFDS-1] for its process (the caller closes
 * its copies).
 */
static void
start_run(int fd, const char *runs, const char *id, struct http_request *r,
    const int *fds, int nfds)
{
	char *argv[POOL_ARGS_MAX + 1], log[4096], text[32];
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
	if ((pid = fork()) < 0) {
		respond(fd, 500, strerror(errno));
		return;
	}
	if (pid == 0)
		child(runs, log, id, argv, fds, nfds);
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
		reap(runs); /* its group's, reparented to us */
	}
	describe(s->status, text, sizeof(text));
	memset(s, 0, sizeof(*s));
	respond(fd, 200, text);
}

/*
 * One request on the accepted FD, and the descriptors sent with it: a
 * POST's run gets them, then (and in every other case) they are closed.
 */
static void
handle(int fd, const char *runs)
{
	struct http_limits lim = { 8192, POOL_BODY_MAX, 5000, 5000 };
	int fds[POOL_FDS_MAX], i;
	struct http_conn c = { .fd = fd, .fds = fds, .maxfds = POOL_FDS_MAX };
	struct http_request r;
	const char *id;
	struct slot *s;
	const char *query;
	char text[64];
	int rc;

	if ((rc = http_read_request(&c, &r, &lim)) != HTTP_OK) {
		if (http_error_status(rc))
			respond(fd, http_error_status(rc), "bad request");
		goto out;
	}
	id = r.path + 6;
	query = strchr(r.target, '?');
	if (c.nfds > POOL_FDS_MAX)
		respond(fd, 400, "too many descriptors");
	else if (strncmp(r.path, "/runs/", 6) != 0 ||
	    !valid_id(id, strlen(id)) ||
	    (query != NULL &&
		(strcmp(query, "?final") != 0 ||
		    strcmp(r.method, "DELETE") != 0)))
		respond(fd, 404, "no such route");
	else if (strcmp(r.method, "POST") == 0)
		start_run(fd, runs, id, &r, fds, c.nfds);
	else if ((s = find(id)) == NULL)
		respond(fd, 404, "no such run");
	else if (strcmp(r.method, "DELETE") == 0) {
		stop_run(fd, runs, s);
		if (query != NULL)
			final = 1;
	} else if (strcmp(r.method, "GET") == 0) {
		if (s->ended)
			describe(s->status, text, sizeof(text));
		respond(fd, 200, s->ended ? text : "running");
	} else
		respond(fd, 405, "method not allowed");
	http_request_free(&r);
out:
	for (i = 0; i < c.nfds && i < POOL_FDS_MAX; i++)
		close(fds[i]);
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
}

/*
 * DIR and every entry a run's folder may have, empty (folders, and
 * script.json a file), for the probe. 0, or -1.
 */
static int
make_entries(const char *dir)
{
	char path[4096];
	int i, fd;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -1;
	for (i = 0; i < NENTRIES; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, entries[i].name);
		if (strchr(entries[i].name, '.') == NULL) {
			if (mkdir(path, 0755) < 0 && errno != EEXIST)
				return -1;
		} else if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC,
				0644)) < 0 ||
		    close(fd) < 0)
			return -1;
	}
	return 0;
}

/*
 * A run isolated as child() isolates it, once, before the pool listens:
 * where namespaces are not allowed, the pool ends at once (status 1),
 * having said why, instead of failing every run. 0, or -1.
 */
static int
probe(const char *runs)
{
	static char prog[] = "true";
	char *argv[] = { prog, NULL }, dir[2048], logs[4096], log[4096];
	char why[512];
	int status = 0, rc = 0, fd, i;
	ssize_t n = 0;
	pid_t pid;

	snprintf(dir, sizeof(dir), "%s/.probe", runs);
	if (log_path(log, sizeof(log), runs, ".probe", "up.log") < 0 ||
	    make_entries(dir) < 0) {
		fprintf(stderr, "lb-net: pool: cannot make '%s': %s\n", dir,
		    strerror(errno));
		return -1;
	}
	if ((pid = fork()) < 0) {
		fprintf(stderr, "lb-net: pool: cannot fork: %s\n",
		    strerror(errno));
		return -1;
	}
	if (pid == 0)
		child(runs, log, ".probe", argv, NULL, 0);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if ((fd = open(log, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
			n = read(fd, why, sizeof(why) - 1);
			close(fd);
		}
		why[n > 0 ? n : 0] = '\0';
		fprintf(stderr, "%s",
		    n > 0 ? why : "lb-net: pool: cannot isolate a run\n");
		rc = -1;
	}
	unlink(log);
	for (i = 0; i < NENTRIES; i++) {
		snprintf(logs, sizeof(logs), "%s/%s", dir, entries[i].name);
		if (unlink(logs) < 0)
			rmdir(logs);
	}
	rmdir(dir);
	return rc;
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
	snprintf(ctl_dir, sizeof(ctl_dir), "%s", ctl + 5);
	if (strrchr(ctl_dir, '/') == NULL || strrchr(ctl_dir, '/') == ctl_dir) {
		fprintf(stderr,
		    "lb-net: pool: '%s' is not in a folder of its own\n", ctl);
		return 1;
	}
	*strrchr(ctl_dir, '/') = '\0';
	if (probe(runs) < 0)
		return 1;
	if ((lfd = http_listen(ctl, NULL, err, sizeof(err))) < 0) {
		fprintf(stderr, "lb-net: pool: %s\n", err);
		return 1;
	}
	fcntl(lfd, F_SETFD, FD_CLOEXEC);
	printf("lb-net: pool listening on %s\n", ctl);
	fflush(stdout);
	p.fd = lfd;
	p.events = POLLIN;
	while (!stop_signal && !(final && idle())) {
		reap(runs);
		if (poll(&p, 1, POOL_TICK_MS) <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		handle(fd, runs);
		close(fd);
	}
	if (!stop_signal)
		printf("lb-net: pool: the suite's last run has ended\n");
	stop_all();
	return 0;
}
