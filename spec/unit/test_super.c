/*
 * Tests for src/common/super.c, the servers' supervisor: a child that
 * exits or is killed ends the others and is named in one line with how it
 * ended; a signal to the supervisor reaches every child and ends it
 * quietly with status 0; a child waits for the socket of the one before;
 * a program that cannot be run is a child that exits 127.
 *
 * Each case runs its supervisor in a process of its own (the supervisor
 * holds its signal handlers in a static), with stderr in a file. This
 * binary is also its own helper child: "test_super --listen PATH MS"
 * listens on the Unix socket PATH after MS milliseconds, then sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/super.h"
#include "tap.h"

static char self[4096];
static char dir[] = "/tmp/lb-super.XXXXXX";

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The helper child: listens on PATH after MS ms, then sleeps. */
static int
listener(const char *path, long ms)
{
	struct sockaddr_un sun;
	int fd;

	sleep_ms(ms);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    listen(fd, 4) < 0)
		return 1;
	for (;;)
		pause();
}

/* What a case left: the supervisor's exit status and its stderr. */
struct outcome {
	int status;
	char err[1024];
};

/* The whole of the file PATH into buf (NUL-terminated, cut to size). */
static void
slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd < 0 ? 0 : read(fd, buf, size - 1);

	buf[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
}

/*
 * Runs FN(arg) in a child process whose stderr is a file, with a 20 s
 * alarm; SIGNAL_AFTER_MS >= 0 sends it SIGTERM after that many ms.
 * FN's return value is the child's exit status.
 */
static struct outcome
run_case(int (*fn)(void *), void *arg, long signal_after_ms)
{
	struct outcome o = { -1, "" };
	char path[256];
	pid_t pid;
	int status, fd;

	snprintf(path, sizeof(path), "%s/stderr", dir);
	if ((pid = fork()) == 0) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 2);
		close(fd);
		alarm(20);
		_exit(fn(arg));
	}
	if (signal_after_ms >= 0) {
		sleep_ms(signal_after_ms);
		kill(pid, SIGTERM);
	}
	waitpid(pid, &status, 0);
	o.status = WIFEXITED(status) ? WEXITSTATUS(status) :
				       1000 + WTERMSIG(status);
	slurp(path, o.err, sizeof(o.err));
	return o;
}

/* 1 when no process is PID (reaped and gone), else 0. */
static int
gone(pid_t pid)
{
	return kill(pid, 0) < 0 && errno == ESRCH;
}

/* The pids of the last case's children, written by the case to a file. */
static void
save_pids(const struct super *s)
{
	char path[256];
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "%s/pids", dir);
	if ((f = fopen(path, "w")) == NULL)
		return;
	for (i = 0; i < s->n; i++)
		fprintf(f, "%d\n", (int)s->pid[i]);
	fclose(f);
}

static int
all_gone(void)
{
	char path[256], buf[256], *p, *end;
	long pid;

	snprintf(path, sizeof(path), "%s/pids", dir);
	slurp(path, buf, sizeof(buf));
	for (p = buf; *p != '\0'; p = end) {
		pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (!gone((pid_t)pid))
			return 0;
	}
	return buf[0] != '\0';
}

/* Case: a long sleeper and ARG (an argv) that ends first. */
static int
one_ends(void *arg)
{
	static const char *sleeper[] = { "sleep", "30", NULL };
	struct super s;

	if (super_init(&s, "lb-test", NULL, NULL) < 0 ||
	    super_spawn(&s, sleeper) < 0 || super_spawn(&s, arg) < 0)
		return 99;
	save_pids(&s);
	return super_watch(&s);
}

static void
test_child_ends(void)
{
	const char *exits[] = { "sh", "-c", "exit 3", NULL };
	const char *killed[] = { "sh", "-c", "kill -9 $$", NULL };
	const char *missing[] = { "/nonexistent/lb-nothing", NULL };
	struct outcome o;

	o = run_case(one_ends, exits, -1);
	is_int(o.status, 1, "a child that exits: status 1");
	is_str(o.err, "lb-test: 'sh' exited with status 3\n",
	    "a child that exits: one line, its name and status");
	ok(all_gone(), "a child that exits: the other child is ended");

	o = run_case(one_ends, killed, -1);
	is_int(o.status, 1, "a killed child: status 1");
	is_str(o.err, "lb-test: 'sh' was killed by signal 9\n",
	    "a killed child: one line, its name and signal");
	ok(all_gone(), "a killed child: the other child is ended");

	o = run_case(one_ends, missing, -1);
	is_int(o.status, 1, "a missing program: status 1");
	is_str(o.err,
	    "lb-test: cannot start '/nonexistent/lb-nothing': No such file or "
	    "directory\n"
	    "lb-test: 'lb-nothing' exited with status 127\n",
	    "a missing program: why, then its status");
}

/* Case: two sleepers, until a signal. */
static int
sleepers(void *arg)
{
	static const char *a[] = { "sleep", "30", NULL };
	static const char *b[] = { "sh", "-c", "sleep 30", NULL };
	struct super s;

	(void)arg;
	if (super_init(&s, "lb-test", NULL, NULL) < 0 ||
	    super_spawn(&s, a) < 0 || super_spawn(&s, b) < 0)
		return 99;
	save_pids(&s);
	return super_watch(&s);
}

/* Case: no child, until a signal. */
static int
none(void *arg)
{
	struct super s;

	(void)arg;
	if (super_init(&s, "lb-test", NULL, NULL) < 0)
		return 99;
	return super_watch(&s);
}

/* Case: a child that ignores SIGTERM; SIGKILL after the grace. */
static int
stubborn(void *arg)
{
	static const char *a[] = { "sh", "-c",
		"trap '' TERM; while :; do sleep 1; "
		"done",
		NULL };
	struct super s;

	(void)arg;
	if (super_init(&s, "lb-test", NULL, NULL) < 0 || super_spawn(&s, a) < 0)
		return 99;
	save_pids(&s);
	return super_watch(&s);
}

static void
test_signals(void)
{
	struct outcome o;
	time_t t0;

	o = run_case(sleepers, NULL, 200);
	is_int(o.status, 0, "SIGTERM to the supervisor: status 0");
	is_str(o.err, "", "SIGTERM to the supervisor: nothing said");
	ok(all_gone(), "SIGTERM to the supervisor: every child ended");

	o = run_case(none, NULL, 100);
	is_int(o.status, 0, "SIGTERM with no child: status 0");

	t0 = time(NULL);
	o = run_case(stubborn, NULL, 200);
	is_int(o.status, 0, "a child that ignores SIGTERM: status 0");
	ok(all_gone(), "a child that ignores SIGTERM: killed after the grace");
	ok(time(NULL) - t0 < 10,
	    "a child that ignores SIGTERM: within the "
	    "grace");
}

/* Case: the listener (after ARG ms), then a program once it accepts. */
static int
ordered(void *arg)
{
	char path[256], ms[32], mark[300];
	const char *first[] = { self, "--listen", path, ms, NULL };
	const char *second[] = { "sh", "-c", mark, NULL };
	struct super s;
	int status;

	snprintf(path, sizeof(path), "%s/sock", dir);
	snprintf(ms, sizeof(ms), "%ld", *(long *)arg);
	snprintf(mark, sizeof(mark), "test -S %s && echo second >&2; exit 5",
	    path);
	if (super_init(&s, "lb-test", NULL, NULL) < 0 ||
	    super_spawn(&s, first) < 0)
		return 99;
	save_pids(&s);
	if (super_await(&s, path, &status) < 0)
		return status;
	if (super_spawn(&s, second) < 0)
		return 99;
	save_pids(&s);
	return super_watch(&s);
}

/* Case: a first child that dies before it listens. */
static int
dies_first(void *arg)
{
	char path[256];
	const char *first[] = { "sh", "-c", "exit 4", NULL };
	struct super s;
	int status;

	(void)arg;
	snprintf(path, sizeof(path), "%s/never", dir);
	if (super_init(&s, "lb-test", NULL, NULL) < 0 ||
	    super_spawn(&s, first) < 0)
		return 99;
	if (super_await(&s, path, &status) < 0)
		return status;
	return 98;
}

static void
test_await(void)
{
	char path[256];
	long ms = 300;
	struct outcome o;

	snprintf(path, sizeof(path), "%s/sock", dir);
	unlink(path);
	o = run_case(ordered, &ms, -1);
	is_int(o.status, 1, "the second after the socket: it ran, then ended");
	is_str(o.err, "second\nlb-test: 'sh' exited with status 5\n",
	    "the second started only once the first's socket accepted");
	ok(all_gone(), "the second ended: the listener is ended too");

	o = run_case(dies_first, NULL, -1);
	is_int(o.status, 1, "a first that dies before it listens: status 1");
	is_str(o.err, "lb-test: 'sh' exited with status 4\n",
	    "a first that dies before it listens: named");

	unlink(path);
	ms = 5000;
	o = run_case(ordered, &ms, 300);
	is_int(o.status, 0, "SIGTERM while waiting for a socket: status 0");
	is_str(o.err, "", "SIGTERM while waiting for a socket: nothing said");
	ok(all_gone(), "SIGTERM while waiting for a socket: the first ended");
}

/* stderr and exit status of the shell command CMD (stdout dropped). */
static struct outcome
shell(const char *cmd)
{
	struct outcome o = { -1, "" };
	char full[sizeof(self) * 3 + 32];
	size_t n;
	FILE *f;

	snprintf(full, sizeof(full), "%s 2>&1 >/dev/null", cmd);
	if ((f = popen(full, "r")) == NULL)
		return o;
	n = fread(o.err, 1, sizeof(o.err) - 1, f);
	o.err[n] = '\0';
	o.status = pclose(f);
	o.status = WIFEXITED(o.status) ? WEXITSTATUS(o.status) : -1;
	return o;
}

/*
 * lb-net, the supervisor's user, in $LB_BUILD (spec/run sets it): its
 * PROGRAMs and "--once" between them, misuse of "--once".
 */
static void
test_lb_net(void)
{
	const char *build = getenv("LB_BUILD");
	char cmd[sizeof(self) * 3], path[300], log[256];
	struct outcome o;

	if (build == NULL) {
		ok(1, "# SKIP lb-net: LB_BUILD is not set");
		return;
	}
	snprintf(cmd, sizeof(cmd),
	    "'%s/lb-net' -- '%s' --listen %s/net.sock 100 --once "
	    "unix:%s/net.sock sh -c 'test -S %s/net.sock && exit 6'",
	    build, self, dir, dir, dir);
	o = shell(cmd);
	is_int(o.status, 1, "lb-net: a PROGRAM ended, status 1");
	is_str(o.err, "lb-net: 'sh' exited with status 6\n",
	    "lb-net: the second PROGRAM ran once the first listened, named");
	/* The upstream container's layout: the model, its log, then more. */
	snprintf(cmd, sizeof(cmd),
	    "printf '%%s' '{\"version\":1,\"model\":\"m\",\"final\":\"x\","
	    "\"turns\":[]}' >%s/script.json && "
	    "'%s/lb-net' -- '%s/lb-model' --script %s/script.json --listen "
	    "unix:%s/model.sock --log %s/model.log --once unix:%s/model.sock "
	    "sh -c 'exit 7'",
	    dir, build, build, dir, dir, dir, dir);
	o = shell(cmd);
	is_int(o.status, 1, "lb-net: lb-model, then a PROGRAM that ends: 1");
	is_str(o.err, "lb-net: 'sh' exited with status 7\n",
	    "lb-net: lb-model said nothing on stderr, ended quietly");
	snprintf(path, sizeof(path), "%s/model.log", dir);
	slurp(path, log, sizeof(log));
	ok(strncmp(log, "lb-model: listening on unix:", 28) == 0,
	    "lb-model --log: the ready line is in its log");
	/* A model that cannot start: why, where the container's log shows it. */
	snprintf(cmd, sizeof(cmd),
	    "printf '{' >%s/bad.json && '%s/lb-net' -- '%s/lb-model' --script "
	    "%s/bad.json --listen unix:%s/m2.sock --log %s/m2.log --once "
	    "unix:%s/m2.sock sh -c 'exit 7'",
	    dir, build, build, dir, dir, dir, dir);
	o = shell(cmd);
	is_int(o.status, 1, "lb-net: a model that cannot start: 1");
	ok(strncmp(o.err, "lb-model: cannot load script '", 30) == 0 &&
		strstr(o.err, "\nlb-net: 'lb-model' exited with status 1\n") !=
		    NULL,
	    "lb-net: the model's reason, then its end, on stderr");
	snprintf(cmd, sizeof(cmd), "'%s/lb-net' -- sh --once unix:/x", build);
	o = shell(cmd);
	is_int(o.status, 2, "lb-net: --once without a PROGRAM after it, 2");
	is_str(o.err,
	    "lb-net: cannot use --once: expected PROGRAM before it, unix:PATH "
	    "and PROGRAM after it (try 'lb-net --help')\n",
	    "lb-net: --once misused, one line");
}

int
main(int argc, char **argv)
{
	ssize_t n;

	if (argc == 4 && strcmp(argv[1], "--listen") == 0)
		return listener(argv[2], atol(argv[3]));
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) < 0)
		return 1;
	self[n] = '\0';
	if (mkdtemp(dir) == NULL)
		return 1;
	test_child_ends();
	test_signals();
	test_await();
	test_lb_net();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd) != 0)
			ok(0, "cleanup of %s", dir);
	}
	return tap_done();
}
