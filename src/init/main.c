/*
 * lb-init: PID 1 of the claude container, which captures Claude Code's
 * standard output and error where the agent cannot write.
 *
 *	lb-init [--gate FILE] [--nodump LIB] -- PROGRAM [ARG...]
 *
 * The agent's tools run as Claude Code's uid, in its container. When Claude
 * Code was PID 1, a tool could open /proc/1/fd/1 and write events that the
 * harness took for Claude Code's. Here:
 *
 * - lb-init makes itself non-dumpable first: its /proc entries belong to
 *   root, so no process of the container can open its descriptors (the
 *   container's stdout and stderr, which podman writes to the run folder),
 *   read its memory or trace it.
 * - PROGRAM's stdout and stderr are the ends of two socketpairs, which
 *   lb-init relays to its own: /proc/PID/fd/N of a socket cannot be
 *   opened, and a socketpair has no address to connect to.
 * - With --nodump LIB, PROGRAM starts with LIB first in LD_PRELOAD: LIB
 *   (lb-nodump.so) makes PROGRAM non-dumpable too, so its descriptors and
 *   memory are out of reach as well, and takes itself out of LD_PRELOAD
 *   before PROGRAM runs, so the tools it starts are ordinary processes.
 *   lb-init checks that it worked when PROGRAM first writes: a PROGRAM
 *   whose /proc entry still belongs to its own uid is killed, and lb-init
 *   exits 125 with a message (a capture that could be forged is no
 *   capture).
 * - Signals: SIGTERM, SIGINT, SIGHUP and SIGQUIT from outside the
 *   container (podman's, whose sender has no pid in here) go to PROGRAM;
 *   the same signals from inside (the agent) are ignored. SIGKILL and
 *   SIGSTOP from inside never reach a namespace's init.
 * - Orphans are reaped. When PROGRAM ends, what it wrote is relayed whole
 *   (the socket buffers are drained) and lb-init exits with its status
 *   (128 + N when killed by signal N).
 *
 * --gate FILE: wait for FILE to exist (woken by inotify on its folder as
 * soon as it appears, and polled every 20 ms where inotify cannot watch
 * it; at most 30 min) before starting PROGRAM; the harness creates the
 * container early and opens the gate when the run is ready.
 *
 * Exit status: PROGRAM's; 125 when the gate never opened, PROGRAM could not
 * be protected, or lb-init failed; 127 when PROGRAM could not be started;
 * 2 bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GATE_POLL_MS 20
#define GATE_MAX_S   1800
#define RELAY_BUF    65536

static const char usage[] =
    "usage: lb-init [--gate FILE] [--nodump LIB] -- PROGRAM [ARG...]\n"
    "\n"
    "Runs PROGRAM with its stdout and stderr on sockets that only lb-init\n"
    "holds, and relays them to its own.\n"
    "\n"
    "  --gate FILE   start PROGRAM once FILE exists\n"
    "  --nodump LIB  preload LIB (lb-nodump.so) into PROGRAM\n"
    "  --help        this text\n";

static int sigpipe_fds[2] = { -1, -1 };
static volatile sig_atomic_t pending[NSIG];

/*
 * Records a signal for the main loop. A signal sent by a process of the
 * container carries its pid; podman's (from outside the namespace) and the
 * kernel's carry 0. Only SIGCHLD and outside signals count.
 */
static void
on_signal(int sig, siginfo_t *si, void *ctx)
{
	int saved = errno;
	char c = (char)sig;

	(void)ctx;
	if (sig != SIGCHLD && si != NULL && si->si_code <= 0 && si->si_pid != 0)
		return;
	pending[sig] = 1;
	if (write(sigpipe_fds[1], &c, 1) < 0) {
		/* the pipe is full: the loop wakes up anyway */
	}
	errno = saved;
}

static void
msg(const char *fmt, const char *arg, int err)
{
	if (err)
		fprintf(stderr, "lb-init: %s '%s': %s\n", fmt, arg,
		    strerror(err));
	else
		fprintf(stderr, "lb-init: %s '%s'\n", fmt, arg);
	fflush(stderr);
}

/* Writes all of BUF to FD; gives up on an error other than EINTR. */
static void
write_all(int fd, const char *buf, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, buf, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		buf += w;
		n -= (size_t)w;
	}
}

/*
 * Relays what is readable on FROM to TO. Returns 0 at end of file (or an
 * error), 1 when data was relayed, -1 when nothing is there now.
 */
static int
relay(int from, int to)
{
	static char buf[RELAY_BUF];
	ssize_t r = read(from, buf, sizeof(buf));

	if (r < 0)
		return errno == EAGAIN || errno == EINTR ? -1 : 0;
	if (r == 0)
		return 0;
	write_all(to, buf, (size_t)r);
	return 1;
}

/*
 * An inotify descriptor that wakes when an entry appears in GATE's folder
 * (the harness creates GATE from outside: the folder is a bind mount, and
 * its inode is the host's), or -1 where there is none (no such folder,
 * inotify refused): then only the poll every GATE_POLL_MS sees it.
 */
static int
watch_gate(const char *gate)
{
	char dir[4096];
	const char *slash = strrchr(gate, '/');
	size_t n;
	int fd;

	if (slash == NULL)
		snprintf(dir, sizeof(dir), ".");
	else {
		n = slash == gate ? 1 : (size_t)(slash - gate);
		if (n >= sizeof(dir))
			return -1;
		memcpy(dir, gate, n);
		dir[n] = '\0';
	}
	if ((fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0)
		return -1;
	if (inotify_add_watch(fd, dir,
		IN_CREATE | IN_MOVED_TO | IN_ATTRIB | IN_ONLYDIR) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Milliseconds of CLOCK_MONOTONIC. */
static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * Waits for GATE to exist, at most GATE_MAX_S: woken by its folder's
 * inotify descriptor at once, else by the poll every GATE_POLL_MS. A
 * signal from outside (the handler writes to the signal pipe) ends the
 * wait: 128 + its number. 0 once GATE exists, 125 when it never did.
 */
static int
wait_gate(const char *gate)
{
	long long deadline = now_ms() + GATE_MAX_S * 1000LL;
	int in = watch_gate(gate), sig, rc = 125;
	char drain[512];

	for (;;) {
		struct pollfd p[2] = { { in, POLLIN, 0 },
			{ sigpipe_fds[0], POLLIN, 0 } };

		if (access(gate, F_OK) == 0) {
			rc = 0;
			break;
		}
		for (sig = 1; sig < NSIG; sig++)
			if (sig != SIGCHLD && pending[sig])
				break;
		if (sig < NSIG) {
			rc = 128 + sig;
			break;
		}
		if (now_ms() >= deadline) {
			fprintf(stderr,
			    "leakbench: the run never opened the gate\n");
			break;
		}
		if (poll(p, 2, GATE_POLL_MS) > 0) {
			while (in >= 0 && read(in, drain, sizeof(drain)) > 0)
				;
			while (read(sigpipe_fds[0], drain, sizeof(drain)) > 0)
				;
		}
	}
	if (in >= 0)
		close(in);
	return rc;
}

/*
 * LD_PRELOAD for PROGRAM: LIB first, then what was there. Returns 0 or -1
 * (no memory).
 */
static int
preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");
	char *v;
	int rc;

	if (old == NULL || *old == '\0')
		return setenv("LD_PRELOAD", lib, 1);
	if (asprintf(&v, "%s %s", lib, old) < 0)
		return -1;
	rc = setenv("LD_PRELOAD", v, 1);
	free(v);
	return rc;
}

/*
 * Is process PID non-dumpable: its /proc/PID/fd owned by another uid (the
 * directory /proc/PID itself keeps the process's uid either way)?
 */
static int
non_dumpable(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%ld/fd", (long)pid);
	if (stat(path, &st) < 0)
		return 1; /* gone: nothing left to reach */
	return st.st_uid != getuid();
}

/* The signals from outside that go to PROGRAM. */
static const int fwd[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT };
#define NFWD ((int)(sizeof(fwd) / sizeof(fwd[0])))

/*
 * The flags into *gate and *nodump; optind is then PROGRAM's. -1 to go on,
 * else the exit status (0 after --help, 2 on bad usage, said on stderr).
 */
static int
parse_args(int argc, char **argv, const char **gate, const char **nodump)
{
	static const struct option opts[] = { { "gate", required_argument, NULL,
						  'g' },
		{ "nodump", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 } };
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'g':
			*gate = optarg;
			break;
		case 'n':
			*nodump = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		case ':':
			msg("missing value for", argv[optind - 1], 0);
			return 2;
		default:
			msg("unknown option", argv[optind - 1], 0);
			return 2;
		}
	}
	if (optind >= argc) {
		msg("nothing to run: no", "PROGRAM", 0);
		return 2;
	}
	return -1;
}

/*
 * The forwarded signals and SIGCHLD recorded by on_signal (which wakes
 * the main loop through sigpipe_fds), SIGPIPE ignored. 0, or -1 (errno).
 */
static int
set_handlers(void)
{
	struct sigaction sa;
	int i;

	if (pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_NOCLDSTOP;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NFWD; i++)
		sigaction(fwd[i], &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sa.sa_flags = 0;
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	return 0;
}

/*
 * Starts PROGRAM (prog, its argv) with its stdout on out[1] and its stderr
 * on err[1], its signals as they were before set_handlers. The child's
 * pid, or -1 (errno).
 */
static pid_t
start(char **prog, const int out[2], const int err[2])
{
	struct sigaction sa;
	sigset_t none;
	pid_t child;
	int i;

	child = fork();
	if (child != 0)
		return child;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < NFWD; i++)
		sigaction(fwd[i], &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	shutdown(out[1], SHUT_RD);
	shutdown(err[1], SHUT_RD);
	if (dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0)
		_exit(125);
	execvp(prog[0], prog);
	msg("cannot start", prog[0], errno);
	_exit(127);
}

/*
 * Relays what child (PROGRAM, named prog) writes on out and err until it
 * ends, forwarding the signals from outside and reaping orphans; with
 * nodump, checks that child is not dumpable when it first writes. Returns
 * lb-init's exit status.
 */
static int
relay_all(pid_t child, int out, int err, const char *nodump, const char *prog)
{
	int open_out = 1, open_err = 1, checked = 0, status = 0, done = 0;
	int i, rc;
	pid_t w;

	while (!done) {
		struct pollfd p[3] = { { sigpipe_fds[0], POLLIN, 0 },
			{ open_out ? out : -1, POLLIN, 0 },
			{ open_err ? err : -1, POLLIN, 0 } };
		char drain[64];

		if (poll(p, 3, -1) < 0 && errno != EINTR)
			break;
		while (read(sigpipe_fds[0], drain, sizeof(drain)) > 0)
			;
		if (p[1].revents && (rc = relay(out, 1)) >= 0) {
			if (rc == 0)
				open_out = 0;
		}
		if (p[2].revents && (rc = relay(err, 2)) >= 0) {
			if (rc == 0)
				open_err = 0;
		}
		if (!checked && nodump != NULL &&
		    (p[1].revents || p[2].revents)) {
			checked = 1;
			if (!non_dumpable(child)) {
				kill(child, SIGKILL);
				fprintf(stderr,
				    "lb-init: '%s' is still dumpable after "
				    "preloading '%s': its output could be "
				    "forged, so it was stopped\n",
				    prog, nodump);
				fflush(stderr);
				return 125;
			}
		}
		for (i = 0; i < NFWD; i++) {
			if (pending[fwd[i]]) {
				pending[fwd[i]] = 0;
				kill(child, fwd[i]);
			}
		}
		pending[SIGCHLD] = 0;
		while ((w = waitpid(-1, &rc, WNOHANG)) > 0) {
			if (w == child) {
				status = rc;
				done = 1;
			}
		}
	}
	/* What PROGRAM wrote before it ended is in the buffers: all of it. */
	while (open_out && relay(out, 1) > 0)
		;
	while (open_err && relay(err, 2) > 0)
		;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int
main(int argc, char **argv)
{
	const char *gate = NULL, *nodump = NULL;
	int out[2], err[2], rc;
	pid_t child;

	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if ((rc = parse_args(argc, argv, &gate, &nodump)) != -1)
		return rc;
	if (set_handlers() < 0) {
		msg("cannot make", "pipe", errno);
		return 125;
	}
	if (gate != NULL && (rc = wait_gate(gate)) != 0)
		return rc;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, out) < 0 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, err) < 0) {
		msg("cannot make", "socketpair", errno);
		return 125;
	}
	if (nodump != NULL && preload(nodump) < 0) {
		msg("cannot set", "LD_PRELOAD", errno);
		return 125;
	}
	if ((child = start(argv + optind, out, err)) < 0) {
		msg("cannot start", argv[optind], errno);
		return 125;
	}
	close(out[1]);
	close(err[1]);
	shutdown(out[0], SHUT_WR);
	shutdown(err[0], SHUT_WR);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	fcntl(err[0], F_SETFL, O_NONBLOCK);
	return relay_all(child, out[0], err[0], nodump, argv[optind]);
}
