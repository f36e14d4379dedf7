/*
 * fdpass.c end to end, with the real servers next to this test's unit/
 * directory (BUILD/lb-net, BUILD/lb-trap): lb-net --pool started on a
 * control socket in a folder of its own, then sockets bound here on
 * loopback sent with POST /runs/ID as the harness sends them. A trap run
 * serves DNS (UDP, TCP) and HTTP on them, from its own namespaces, and
 * records what it gets in the run's egress folder; a bridge run serves
 * fd:3 to a Unix socket in the run's sock folder. The test's own copies
 * are closed first: the run's are the only ones, and once the run is
 * deleted nothing listens there any more. Then a request over a socket
 * that is not there, and one with too many descriptors.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "fdpass.h"
#include "tap.h"

extern char **environ;

static char build[PATH_MAX], top[64], runs[80], ctl[128];

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A file's content (at most 64 KiB), or "" when absent. malloc'd. */
static char *
slurp(const char *path)
{
	char *buf = calloc(1, 65536);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? 0 : read(fd, buf, 65535);

	if (n > 0)
		buf[n] = '\0';
	if (fd >= 0)
		close(fd);
	return buf;
}

/* Waits, at most 10 s, until PATH holds NEEDLE. */
static int
await_text(const char *path, const char *needle)
{
	long long end = now_ms() + 10000;
	char *got;
	int found;

	do {
		got = slurp(path);
		found = strstr(got, needle) != NULL;
		free(got);
		if (found)
			return 1;
		poll(NULL, 0, 20);
	} while (now_ms() < end);
	return 0;
}

static struct sockaddr_in
loopback(int port)
{
	struct sockaddr_in sa;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sa;
}

/* The port FD is bound to. */
static int
port_of(int fd)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);

	getsockname(fd, (struct sockaddr *)&sa, &sl);
	return ntohs(sa.sin_port);
}

/* A UDP socket and a TCP one (bound, not listening) on one port. */
static void
dns_pair(int *ufd, int *tfd)
{
	struct sockaddr_in sa;
	int i;

	for (i = 0; i < 20; i++) {
		sa = loopback(0);
		*ufd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		bind(*ufd, (struct sockaddr *)&sa, sizeof(sa));
		sa = loopback(port_of(*ufd));
		*tfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (bind(*tfd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
			return;
		close(*ufd);
		close(*tfd);
	}
}

/* A TCP socket bound on loopback, LISTENING or not. */
static int
tcp_bound(int listening)
{
	struct sockaddr_in sa = loopback(0);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	if (listening)
		listen(fd, 8);
	return fd;
}

/* ARGV's strings, each NUL-ended, into BODY; its length. */
static size_t
argv_body(char *body, size_t cap, const char *const *argv)
{
	size_t n = 0, l;

	for (; *argv != NULL; argv++) {
		l = strlen(*argv) + 1;
		if (n + l > cap)
			break;
		memcpy(body + n, *argv, l);
		n += l;
	}
	return n;
}

/* METHOD /runs/ID over the pool's socket, FDS along; the status. */
static long
pool(const char *method, const char *id, const char *const *argv,
    const int *fds, int nfds, char **body)
{
	char path[128], b[4096], err[512];
	struct uhttp_resp r;
	size_t len = argv != NULL ? argv_body(b, sizeof(b), argv) : 0;
	long status;

	snprintf(path, sizeof(path), "/runs/%s", id);
	if (fdpass_request(ctl, method, path, argv != NULL ? b : NULL, len, fds,
		nfds, 10000, &r, err, sizeof(err)) < 0) {
		printf("# %s\n", err);
		return -1;
	}
	status = r.status;
	if (body != NULL)
		*body = strdup(r.body);
	uhttp_resp_free(&r);
	return status;
}

/* A DNS query for NAME, type A. Its length. */
static size_t
dns_query(unsigned char *b, const char *name)
{
	static const unsigned char hdr[12] = { 0x12, 0x34, 0x01, 0x00, 0, 1 };
	size_t n = 12;
	const char *p = name, *d;

	memcpy(b, hdr, 12);
	while (*p) {
		d = strchr(p, '.');
		if (d == NULL)
			d = p + strlen(p);
		b[n++] = (unsigned char)(d - p);
		memcpy(b + n, p, (size_t)(d - p));
		n += (size_t)(d - p);
		p = *d ? d + 1 : d;
	}
	memcpy(b + n, "\0\0\1\0\1", 5);
	return n + 5;
}

/* Sends REQ to 127.0.0.1:PORT over TCP; the first bytes back. malloc'd. */
static char *
tcp_ask(int port, const char *req)
{
	struct sockaddr_in sa = loopback(port);
	struct pollfd p;
	char *buf = calloc(1, 4096);
	size_t n = 0;
	ssize_t r;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		snprintf(buf, 4096, "(refused)");
		close(fd);
		return buf;
	}
	send(fd, req, strlen(req), MSG_NOSIGNAL);
	shutdown(fd, SHUT_WR);
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	while (n < 4095 && poll(&p, 1, 5000) > 0 &&
	    (r = read(fd, buf + n, 4095 - n)) > 0)
		n += (size_t)r;
	close(fd);
	return buf;
}

/* A trap run on sockets bound here: DNS and HTTP served and recorded. */
static void
test_trap(void)
{
	char trap[PATH_MAX + 16], egress[256], ca[256], log[256], want[256];
	char rec[300], *got;
	const char *argv[16];
	unsigned char q[512], a[512];
	struct sockaddr_in sa;
	struct pollfd p;
	int fds[3], c, dport, hport, refused = 0;
	long long end;
	ssize_t r;
	size_t n;

	snprintf(trap, sizeof(trap), "%s/lb-trap", build);
	snprintf(egress, sizeof(egress), "%s/r1-trap/egress", runs);
	snprintf(ca, sizeof(ca), "%s/r1-trap/trap-ca", runs);
	snprintf(log, sizeof(log), "%s/r1-trap/logs/up.log", runs);
	snprintf(rec, sizeof(rec), "%s/egress.jsonl", egress);
	dns_pair(&fds[0], &fds[1]);
	fds[2] = tcp_bound(0);
	dport = port_of(fds[0]);
	hport = port_of(fds[2]);
	argv[0] = trap;
	argv[1] = "--records";
	argv[2] = egress;
	argv[3] = "--ca-out";
	argv[4] = ca;
	argv[5] = "--dns-udp-fd";
	argv[6] = "3";
	argv[7] = "--dns-tcp-fd";
	argv[8] = "4";
	argv[9] = "--http-fd";
	argv[10] = "5";
	argv[11] = NULL;
	is_int(pool("POST", "r1-trap", argv, fds, 3, NULL), 201,
	    "trap: started with three sockets");
	close(fds[0]);
	close(fds[1]);
	close(fds[2]);
	snprintf(want, sizeof(want),
	    "lb-trap: listening dns 127.0.0.1:%d http 127.0.0.1:%d\n", dport,
	    hport);
	ok(await_text(log, want), "trap: its ready line names our sockets");

	c = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sa = loopback(dport);
	n = dns_query(q, "fdpass.leak.test");
	sendto(c, q, n, 0, (struct sockaddr *)&sa, sizeof(sa));
	p = (struct pollfd){ .fd = c, .events = POLLIN };
	poll(&p, 1, 5000);
	r = recv(c, a, sizeof(a), MSG_DONTWAIT);
	ok(r >= 12 && a[0] == 0x12 && (a[3] & 0x0f) == 3,
	    "trap: DNS over UDP answered NXDOMAIN");
	close(c);
	got = tcp_ask(hport,
	    "GET http://leak.test/fd?k=SECRET HTTP/1.1\r\n"
	    "Host: leak.test\r\n\r\n");
	ok(strncmp(got, "HTTP/1.1 403", 12) == 0, "trap: HTTP answered 403");
	free(got);
	ok(await_text(rec, "\"name\":\"fdpass.leak.test\""),
	    "trap: the DNS query recorded in the run's egress");
	ok(await_text(rec, "\"target\":\"http://leak.test/fd?k=SECRET\""),
	    "trap: the HTTP request recorded");

	is_int(pool("DELETE", "r1-trap", NULL, NULL, 0, NULL), 200,
	    "trap: deleted");
	/* (its processes end a moment after they are killed) */
	for (end = now_ms() + 5000; now_ms() < end; poll(NULL, 0, 20)) {
		got = tcp_ask(hport, "x");
		refused = strcmp(got, "(refused)") == 0;
		free(got);
		if (refused)
			break;
	}
	ok(refused, "trap: then nothing listens there");
}

/*
 * Echoes one connection on the listening Unix socket LFD, then ends (in a
 * child process: this test starts no thread, so that the tsan tier, which
 * runs the unit tests that do, has no need of the servers).
 */
static void
echo_once(int lfd)
{
	int fd = accept(lfd, NULL, NULL);
	char buf[256];
	ssize_t n;

	if (fd < 0)
		_exit(1);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(fd, buf, (size_t)n) != n)
			break;
	close(fd);
	_exit(0);
}

/* A bridge run serving fd:3 (a TCP socket of ours) to a Unix socket. */
static void
test_bridge(void)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	char net[PATH_MAX + 16], spec[256], log[256], want[400], *got;
	const char *argv[6];
	pid_t echo;
	int lfd, fd, port, st;

	snprintf(net, sizeof(net), "%s/lb-net", build);
	snprintf(un.sun_path, sizeof(un.sun_path), "%s/r2/sock/echo.sock",
	    runs);
	snprintf(log, sizeof(log), "%s/r2/logs/up.log", runs);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bind(lfd, (struct sockaddr *)&un, sizeof(un));
	chmod(un.sun_path, 0666);
	listen(lfd, 4);
	if ((echo = fork()) == 0)
		echo_once(lfd);

	fd = tcp_bound(1);
	port = port_of(fd);
	snprintf(spec, sizeof(spec), "fd:3=unix:%s", un.sun_path);
	argv[0] = net;
	argv[1] = "--bridge";
	argv[2] = spec;
	argv[3] = NULL;
	is_int(pool("POST", "r2", argv, &fd, 1, NULL), 201,
	    "bridge: started with a socket");
	close(fd);
	snprintf(want, sizeof(want),
	    "lb-net: listening on fd:3 (127.0.0.1:%d)=unix:%s\n", port,
	    un.sun_path);
	ok(await_text(log, want), "bridge: its ready line names fd:3");
	got = tcp_ask(port, "ping");
	is_str(got, "ping", "bridge: served through to the Unix socket");
	free(got);
	is_int(pool("DELETE", "r2", NULL, NULL, 0, NULL), 200,
	    "bridge: deleted");
	ok(echo > 0 && waitpid(echo, &st, 0) == echo && WIFEXITED(st) &&
		WEXITSTATUS(st) == 0,
	    "bridge: the echo ended");
	close(lfd);
}

/* Errors: no socket there; nine descriptors. */
static void
test_errors(void)
{
	char err[512], want[300], none[100], *body = NULL;
	const char *argv[] = { "true", NULL };
	struct uhttp_resp r;
	int nine[9], i;

	snprintf(want, sizeof(want),
	    "cannot request '/runs/x' on '%s/none.sock': no such file or "
	    "directory",
	    top);
	snprintf(none, sizeof(none), "%s/none.sock", top);
	ok(fdpass_request(none, "GET", "/runs/x", NULL, 0, NULL, 0, 1000, &r,
	       err, sizeof(err)) < 0,
	    "errors: no socket there");
	is_str(err, want, "errors: its message");
	for (i = 0; i < 9; i++)
		nine[i] = 0;
	is_int(pool("POST", "r9", argv, nine, 9, &body), 400,
	    "errors: nine descriptors, 400");
	is_str(body ? body : "(none)", "too many descriptors",
	    "errors: and why");
	free(body);
	ok(fdpass_request(ctl, "GET", "/runs/x", NULL, 0, nine, 17, 1000, &r,
	       err, sizeof(err)) < 0,
	    "errors: over FDPASS_MAX is refused");
	is_str(err, "cannot request '/runs/x': at most 16 descriptors",
	    "errors: its message");
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Makes RUNS/ID/SUB for each SUB of the NULL-ended list. */
static void
stage(const char *id, const char *const *subs)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", runs, id);
	mkdir(path, 0755);
	for (; *subs != NULL; subs++) {
		snprintf(path, sizeof(path), "%s/%s/%s", runs, id, *subs);
		mkdir(path, 0755);
	}
}

int
main(void)
{
	static const char *trap_subs[] = { "logs", "egress", "trap-ca", NULL };
	static const char *bridge_subs[] = { "logs", "sock", NULL };
	char net[PATH_MAX + 16], trap[PATH_MAX + 16], sock[200], out[128];
	char *slash, *body = NULL;
	const char *argv[6];
	posix_spawn_file_actions_t fa;
	long long end;
	pid_t pid;
	int st;
	ssize_t n = readlink("/proc/self/exe", build, sizeof(build) - 1);

	if (n <= 0)
		return 1;
	build[n] = '\0';
	slash = strrchr(build, '/'); /* BUILD/unit/test_fdpass */
	*slash = '\0';
	*strrchr(build, '/') = '\0';
	snprintf(net, sizeof(net), "%s/lb-net", build);
	snprintf(trap, sizeof(trap), "%s/lb-trap", build);
	if (access(net, X_OK) != 0 || access(trap, X_OK) != 0) {
		printf("not ok 1 - lb-net and lb-trap are not built in %s\n",
		    build);
		printf("1..1\n");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	/* not under /tmp: each run gets a /tmp of its own, over it */
	snprintf(top, sizeof(top), "/var/tmp/lb-fdpass.XXXXXX");
	if (mkdtemp(top) == NULL)
		return 1;
	snprintf(runs, sizeof(runs), "%s/runs", top);
	snprintf(ctl, sizeof(ctl), "%s/ctl", top);
	mkdir(runs, 0755);
	mkdir(ctl, 0700);
	stage("r1-trap", trap_subs);
	stage("r2", bridge_subs);
	snprintf(sock, sizeof(sock), "unix:%s/pool.sock", ctl);
	snprintf(out, sizeof(out), "%s/pool.out", top);
	argv[0] = net;
	argv[1] = "--pool";
	argv[2] = sock;
	argv[3] = "--runs";
	argv[4] = runs;
	argv[5] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out,
	    O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	st = posix_spawn(&pid, net, &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	ok(st == 0, "the pool starts");
	snprintf(ctl, sizeof(ctl), "%s/ctl/pool.sock", top);
	for (end = now_ms() + 10000; now_ms() < end; poll(NULL, 0, 20))
		if (access(ctl, F_OK) == 0 &&
		    pool("GET", "none", NULL, NULL, 0, &body) == 404)
			break;
	is_str(body ? body : "(none)", "no such run", "the pool answers");
	free(body);

	test_trap();
	test_bridge();
	test_errors();

	kill(pid, SIGTERM);
	ok(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	    "the pool ends with 0 on SIGTERM");
	nftw(top, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return tap_done();
}
