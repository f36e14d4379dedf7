/*
 * Child processes; see proc.h for the contract. One event loop (pump)
 * serves proc_wait and proc_wait_any: it polls every pipe and pidfd of the
 * processes it was given, plus the interrupt self-pipe, and after each poll
 * does non-blocking I/O on every open descriptor and moves each process
 * through its states:
 *
 *	RUNNING   the leader has not exited; deadlines and kills apply
 *	DRAINING  the leader is reaped; pipes are read until EOF or linger
 *	DONE      everything closed; the result is final
 *
 * A process killed by us (deadline or interrupt) gets SIGTERM on its group,
 * SIGKILL grace_ms later, and SIGKILL again on the group the moment the
 * leader exits (before it is reaped), so grandchildren that outlive the
 * leader are taken too.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "proc.h"

extern char **environ;

enum state { RUNNING, DRAINING, DONE };

struct stream {
	int fd;	   /* our read end, or -1 */
	char *buf; /* malloc'd, NUL-terminated when DONE */
	size_t len, size;
};

struct proc {
	pid_t pid;
	int pidfd; /* -1 when pidfd_open is missing */
	enum state state;
	int in_fd;     /* write end of stdin, or -1 */
	char *in_data; /* our copy of the stdin bytes */
	size_t in_len, in_off;
	struct stream out, err;
	size_t cap;
	int uninterruptible;
	int killing; /* SIGTERM sent; SIGKILL due at kill_at */
	int64_t start_ms, deadline_ms, grace_ms, kill_at;
	int64_t exit_ms, drain_until;
	struct proc_result res;
};

/* The interrupt flag and its self-pipe; see proc_trap_signals. */
static volatile sig_atomic_t intr_sig, intr_count;
static int intr_pipe[2] = { -1, -1 };

static const struct {
	int num;
	const char *name;
} signames[] = { { SIGHUP, "SIGHUP" }, { SIGINT, "SIGINT" },
	{ SIGQUIT, "SIGQUIT" }, { SIGILL, "SIGILL" }, { SIGTRAP, "SIGTRAP" },
	{ SIGABRT, "SIGABRT" }, { SIGBUS, "SIGBUS" }, { SIGFPE, "SIGFPE" },
	{ SIGKILL, "SIGKILL" }, { SIGUSR1, "SIGUSR1" }, { SIGSEGV, "SIGSEGV" },
	{ SIGUSR2, "SIGUSR2" }, { SIGPIPE, "SIGPIPE" }, { SIGALRM, "SIGALRM" },
	{ SIGTERM, "SIGTERM" }, { SIGCHLD, "SIGCHLD" }, { SIGCONT, "SIGCONT" },
	{ SIGSTOP, "SIGSTOP" }, { SIGTSTP, "SIGTSTP" }, { SIGTTIN, "SIGTTIN" },
	{ SIGTTOU, "SIGTTOU" }, { SIGURG, "SIGURG" }, { SIGXCPU, "SIGXCPU" },
	{ SIGXFSZ, "SIGXFSZ" }, { SIGVTALRM, "SIGVTALRM" },
	{ SIGPROF, "SIGPROF" }, { SIGWINCH, "SIGWINCH" }, { SIGIO, "SIGIO" },
	{ SIGPWR, "SIGPWR" }, { SIGSYS, "SIGSYS" } };

const char *
proc_signame(int sig)
{
	size_t i;

	for (i = 0; i < sizeof(signames) / sizeof(signames[0]); i++)
		if (signames[i].num == sig)
			return signames[i].name;
	return NULL;
}

int
proc_signum(const char *name)
{
	size_t i;

	if (strncmp(name, "SIG", 3) == 0)
		name += 3;
	for (i = 0; i < sizeof(signames) / sizeof(signames[0]); i++)
		if (strcmp(signames[i].name + 3, name) == 0)
			return signames[i].num;
	return -1;
}

int64_t
proc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Signal handler: first signal sets the flag; the third one is fatal. */
static void
on_signal(int sig)
{
	int saved = errno;

	intr_count++;
	if (intr_count >= 3) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
	if (intr_sig == 0)
		intr_sig = sig;
	if (intr_pipe[1] != -1)
		(void)!write(intr_pipe[1], "x", 1);
	errno = saved;
}

int
proc_trap_signals(void)
{
	struct sigaction sa;

	if (intr_pipe[0] == -1 &&
	    pipe2(intr_pipe, O_CLOEXEC | O_NONBLOCK) == -1)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGINT, &sa, NULL) == -1 ||
	    sigaction(SIGTERM, &sa, NULL) == -1)
		return -1;
	return 0;
}

int
proc_interrupted(void)
{
	return intr_sig;
}

void
proc_clear_interrupt(void)
{
	char buf[64];

	intr_sig = 0;
	intr_count = 0;
	if (intr_pipe[0] != -1)
		while (read(intr_pipe[0], buf, sizeof(buf)) > 0)
			;
}

int
proc_sleep_ms(int64_t ms)
{
	int64_t end = proc_now_ms() + ms, now;
	struct pollfd pfd;

	while (!intr_sig && (now = proc_now_ms()) < end) {
		pfd.fd = intr_pipe[0];
		pfd.events = POLLIN;
		poll(&pfd, intr_pipe[0] == -1 ? 0 : 1,
		    (int)(end - now > INT_MAX ? INT_MAX : end - now));
	}
	return !intr_sig;
}

/* Moves fd to 3 or above (so the child's dup2 onto 0-2 cannot clobber it). */
static int
high_fd(int fd)
{
	int nfd;

	if (fd < 0 || fd > 2)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

static int
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl == -1 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/*
 * The environment for the child: environ minus the names that add
 * overrides, then add. Returns a malloc'd array of borrowed strings, or NULL.
 */
static const char **
make_env(const char *const *add)
{
	size_t n = 0, nadd = 0, i, j, k = 0;
	const char **env;

	while (environ[n] != NULL)
		n++;
	while (add != NULL && add[nadd] != NULL)
		nadd++;
	if ((env = calloc(n + nadd + 1, sizeof(*env))) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t len = eq ? (size_t)(eq - environ[i]) :
				  strlen(environ[i]);

		for (j = 0; j < nadd; j++)
			if (strncmp(add[j], environ[i], len) == 0 &&
			    add[j][len] == '=')
				break;
		if (j == nadd)
			env[k++] = environ[i];
	}
	for (j = 0; j < nadd; j++)
		env[k++] = add[j];
	env[k] = NULL;
	return env;
}

static void
set_err(char *err, size_t errlen, const char *what, const char *subj, int e)
{
	errmsg_set(err, errlen, what, subj, e);
}

/* Opens an output file for the child. Returns the fd or -1 (errno). */
static int
open_out(const char *path)
{
	return high_fd(open(path,
	    O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0666));
}

/* A pipe with both ends at fd 3 or above and close-on-exec. */
static int
make_pipe(int fds[2])
{
	if (pipe2(fds, O_CLOEXEC) == -1)
		return -1;
	fds[0] = high_fd(fds[0]);
	fds[1] = high_fd(fds[1]);
	if (fds[0] == -1 || fds[1] == -1) {
		if (fds[0] != -1)
			close(fds[0]);
		if (fds[1] != -1)
			close(fds[1]);
		return -1;
	}
	return 0;
}

static void
close_fd(int *fd)
{
	if (*fd != -1) {
		close(*fd);
		*fd = -1;
	}
}

static void feed(struct proc *);

/*
 * The child's standard input, output and error: a pipe each, or the files
 * o names (stdin from /dev/null when o gives no input, whose copy goes in
 * p). 0, or -1 with err set; what was opened is in the arrays either way,
 * for the caller to close.
 */
static int
open_stdio(const struct proc_opts *o, struct proc *p, int in[2], int out[2],
    int errp[2], char *err, size_t errlen)
{
	if (o->stdin_data != NULL) {
		if ((p->in_data = malloc(o->stdin_len + 1)) == NULL) {
			set_err(err, errlen, "cannot run", o->argv[0], ENOMEM);
			return -1;
		}
		memcpy(p->in_data, o->stdin_data, o->stdin_len);
		p->in_len = o->stdin_len;
		if (make_pipe(in) == -1)
			goto pipe_failed;
	} else if ((in[0] = high_fd(open("/dev/null", O_RDONLY | O_CLOEXEC))) ==
	    -1) {
		set_err(err, errlen, "cannot open", "/dev/null", errno);
		return -1;
	}
	if (o->stdout_path == NULL) {
		if (make_pipe(out) == -1)
			goto pipe_failed;
	} else if ((out[1] = open_out(o->stdout_path)) == -1) {
		set_err(err, errlen, "cannot open", o->stdout_path, errno);
		return -1;
	}
	if (o->stderr_path == NULL) {
		if (make_pipe(errp) == -1)
			goto pipe_failed;
	} else if (o->stdout_path != NULL &&
	    strcmp(o->stdout_path, o->stderr_path) == 0) {
		if ((errp[1] = fcntl(out[1], F_DUPFD_CLOEXEC, 3)) == -1)
			goto pipe_failed;
	} else if ((errp[1] = open_out(o->stderr_path)) == -1) {
		set_err(err, errlen, "cannot open", o->stderr_path, errno);
		return -1;
	}
	return 0;

pipe_failed:
	set_err(err, errlen, "cannot run", o->argv[0], errno);
	return -1;
}

/* 0 when DIR is a folder we may enter, else why not (an errno). */
static int
enterable(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) == -1)
		return errno;
	if (!S_ISDIR(st.st_mode))
		return ENOTDIR;
	return access(dir, X_OK) == -1 ? errno : 0;
}

/*
 * Starts p's child on in[0], out[1] and errp[1] (closed here in the
 * parent): in a process group of its own, every signal at its default and
 * none blocked, no other descriptor, in o->cwd. Spawned (posix_spawnp:
 * the child shares our memory until its exec), not forked: a fork left
 * every page of our heap copy-on-write, a fault on each page we wrote
 * next (the runner's, at every run it starts). 0, or -1 with err set.
 */
static int
spawn(const struct proc_opts *o, const char **env, struct proc *p, int in[2],
    int out[2], int errp[2], char *err, size_t errlen)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t all, none;
	int e;

	/* a folder the child cannot enter: posix_spawn would report it as
	 * a failed exec */
	if (o->cwd != NULL && (e = enterable(o->cwd)) != 0) {
		set_err(err, errlen, "cannot change directory to", o->cwd, e);
		return -1;
	}
	sigfillset(&all);
	sigemptyset(&none);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setpgroup(&attr, 0);
	posix_spawnattr_setsigdefault(&attr, &all);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setflags(&attr,
	    POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
		POSIX_SPAWN_SETSIGMASK);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	if (o->cwd != NULL)
		posix_spawn_file_actions_addchdir_np(&fa, o->cwd);
	p->start_ms = proc_now_ms();
	e = posix_spawnp(&p->pid, o->argv[0], &fa, &attr,
	    (char *const *)o->argv, (char *const *)env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	close_fd(&in[0]);
	close_fd(&out[1]);
	close_fd(&errp[1]);
	if (e != 0) {
		p->pid = -1;
		set_err(err, errlen, "cannot run", o->argv[0], e);
		return -1;
	}
	return 0;
}

struct proc *
proc_start(const struct proc_opts *o, char *err, size_t errlen)
{
	struct proc *p;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, errp[2] = { -1, -1 };
	const char **env = NULL;
	int e;

	if (o->argv == NULL || o->argv[0] == NULL) {
		snprintf(err, errlen, "cannot run an empty command");
		return NULL;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL)
		goto nomem;
	p->pidfd = p->in_fd = p->out.fd = p->err.fd = -1;
	p->cap = o->cap ? o->cap : PROC_CAP_DEFAULT;
	p->grace_ms = o->grace_ms > 0 ? o->grace_ms : PROC_GRACE_DEFAULT;
	p->deadline_ms = o->deadline_ms;
	p->uninterruptible = o->uninterruptible;
	if ((env = make_env(o->env)) == NULL)
		goto nomem;
	if (open_stdio(o, p, in, out, errp, err, errlen) == -1 ||
	    spawn(o, env, p, in, out, errp, err, errlen) == -1)
		goto free_p;
	p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
	p->in_fd = in[1];
	p->out.fd = out[0];
	p->err.fd = errp[0];
	if (p->in_fd != -1 && p->in_len == 0)
		close_fd(&p->in_fd);
	if ((p->in_fd != -1 && set_nonblock(p->in_fd) == -1) ||
	    (p->out.fd != -1 && set_nonblock(p->out.fd) == -1) ||
	    (p->err.fd != -1 && set_nonblock(p->err.fd) == -1)) {
		e = errno;
		proc_free(p);
		set_err(err, errlen, "cannot run", o->argv[0], e);
		free(env);
		return NULL;
	}
	free(env);
	/*
	 * What the pipe takes goes now, so that a process started and never
	 * waited on (a server that reads its input, then runs) has it; the
	 * rest follows as the caller waits.
	 */
	feed(p);
	return p;

nomem:
	set_err(err, errlen, "cannot run", o->argv[0], ENOMEM);
free_p:
	close_fd(&in[0]);
	close_fd(&in[1]);
	close_fd(&out[0]);
	close_fd(&out[1]);
	close_fd(&errp[0]);
	close_fd(&errp[1]);
	free(env);
	if (p != NULL) {
		free(p->in_data);
		free(p);
	}
	return NULL;
}

/*
 * Reads what is available from s into its buffer, up to the cap; the rest
 * is read and dropped (so the child never blocks on a full pipe) and the
 * result flagged truncated. Returns 1 if data arrived.
 */
static int
drain(struct proc *p, struct stream *s)
{
	char scratch[65536];
	int got = 0, i;
	ssize_t n;

	for (i = 0; s->fd != -1 && i < 64; i++) {
		size_t room = 0;

		if (s->len < p->cap) {
			size_t want = s->len + sizeof(scratch);

			if (want > p->cap)
				want = p->cap;
			if (want + 1 > s->size) {
				size_t nsize = s->size * 2;
				char *nbuf;

				if (nsize < want + 1)
					nsize = want + 1;
				if (nsize > p->cap + 1)
					nsize = p->cap + 1;
				if ((nbuf = realloc(s->buf, nsize)) != NULL) {
					s->buf = nbuf;
					s->size = nsize;
				}
			}
			if (s->size > s->len + 1)
				room = s->size - 1 - s->len;
		}
		if (room > 0)
			n = read(s->fd, s->buf + s->len, room);
		else
			n = read(s->fd, scratch, sizeof(scratch));
		if (n > 0) {
			got = 1;
			if (room > 0)
				s->len += (size_t)n;
			else
				p->res.truncated = 1;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			break;
		close_fd(&s->fd); /* EOF or a real error */
	}
	return got;
}

/* Writes what the pipe takes of the stdin bytes; SIGPIPE never fires. */
static void
feed(struct proc *p)
{
	sigset_t pipeset, old, pending;
	int was_pending;
	ssize_t n;

	if (p->in_fd == -1)
		return;
	sigemptyset(&pipeset);
	sigaddset(&pipeset, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipeset, &old);
	sigpending(&pending);
	was_pending = sigismember(&pending, SIGPIPE);
	while (p->in_off < p->in_len) {
		n = write(p->in_fd, p->in_data + p->in_off,
		    p->in_len - p->in_off);
		if (n > 0) {
			p->in_off += (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			break;
		if (n == -1 && errno == EPIPE && !was_pending) {
			struct timespec zero = { 0, 0 };

			sigtimedwait(&pipeset, NULL, &zero);
		}
		p->in_off = p->in_len; /* the reader is gone */
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (p->in_off == p->in_len)
		close_fd(&p->in_fd);
}

/* Starts the kill sequence: SIGTERM now, SIGKILL after grace. */
static void
begin_kill(struct proc *p, int64_t now)
{
	if (p->killing)
		return;
	p->killing = 1;
	p->kill_at = now + p->grace_ms;
	kill(-p->pid, SIGTERM);
}

static void
finish(struct proc *p)
{
	close_fd(&p->out.fd);
	close_fd(&p->err.fd);
	close_fd(&p->in_fd);
	p->res.out = p->out.buf ? p->out.buf : "";
	p->res.err = p->err.buf ? p->err.buf : "";
	if (p->out.buf)
		p->out.buf[p->out.len] = '\0';
	if (p->err.buf)
		p->err.buf[p->err.len] = '\0';
	p->res.out_len = p->out.len;
	p->res.err_len = p->err.len;
	p->state = DONE;
}

/*
 * Advances p's state by the clock and the exit status; kill_now asks for
 * the interrupt kill sequence.
 */
static void
service(struct proc *p, int64_t now, int kill_now)
{
	siginfo_t si;
	int st;

	if (p->state == RUNNING) {
		if (kill_now && !p->killing) {
			p->res.interrupted = 1;
			begin_kill(p, now);
		}
		if (p->deadline_ms > 0 && now >= p->deadline_ms &&
		    !p->killing) {
			p->res.timed_out = 1;
			begin_kill(p, now);
		}
		if (p->killing && p->kill_at > 0 && now >= p->kill_at) {
			kill(-p->pid, SIGKILL);
			p->kill_at = 0;
		}
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)p->pid, &si,
			WEXITED | WNOHANG | WNOWAIT) == -1 &&
		    errno == ECHILD) {
			/* Someone else reaped it (SIGCHLD ignored?). */
			p->exit_ms = now;
			p->res.elapsed_ms = now - p->start_ms;
			p->drain_until = now + PROC_LINGER;
			p->state = DRAINING;
			close_fd(&p->pidfd);
		} else if (si.si_pid == p->pid) {
			if (p->killing)
				kill(-p->pid, SIGKILL);
			while (waitpid(p->pid, &st, 0) == -1 && errno == EINTR)
				;
			if (WIFEXITED(st)) {
				p->res.exited = 1;
				p->res.status = WEXITSTATUS(st);
			} else if (WIFSIGNALED(st))
				p->res.signal = WTERMSIG(st);
			p->exit_ms = now;
			p->res.elapsed_ms = now - p->start_ms;
			p->drain_until = now + PROC_LINGER;
			p->state = DRAINING;
			close_fd(&p->pidfd);
			close_fd(&p->in_fd);
		}
	}
	if (p->state == DRAINING &&
	    ((p->out.fd == -1 && p->err.fd == -1) || now >= p->drain_until))
		finish(p);
}

/* Does the pending I/O of p; extends the drain window while data flows. */
static void
do_io(struct proc *p)
{
	int got;

	if (p->state == DONE)
		return;
	feed(p);
	got = drain(p, &p->out);
	got |= drain(p, &p->err);
	if (got && p->state == DRAINING) {
		int64_t now = proc_now_ms();

		if (now + PROC_LINGER > p->drain_until)
			p->drain_until = now + PROC_LINGER;
		if (p->drain_until > p->exit_ms + 10 * PROC_LINGER)
			p->drain_until = p->exit_ms + 10 * PROC_LINGER;
	}
}

/* The earliest time p needs attention without an event, or INT64_MAX. */
static int64_t
next_timer(const struct proc *p)
{
	int64_t t = INT64_MAX;

	if (p->state == RUNNING) {
		if (p->deadline_ms > 0 && !p->killing)
			t = p->deadline_ms;
		if (p->killing && p->kill_at > 0 && p->kill_at < t)
			t = p->kill_at;
		if (p->pidfd == -1 && proc_now_ms() + 20 < t)
			t = proc_now_ms() + 20;
	} else if (p->state == DRAINING)
		t = p->drain_until;
	return t;
}

enum mode { ONE, ANY };

/*
 * The event loop. For ONE, ps[0] is waited for and killed on interrupt;
 * for ANY, the first finished process ends the wait and an interrupt
 * returns PROC_INTERRUPTED.
 */
static int
pump(struct proc **ps, int n, int64_t timeout_ms, enum mode mode, int *index)
{
	int64_t end = timeout_ms < 0 ? INT64_MAX : proc_now_ms() + timeout_ms;
	struct pollfd *fds;
	int i, k, nfds, any_intr = 0, result;

	if ((fds = calloc((size_t)n * 4 + 1, sizeof(*fds))) == NULL)
		return PROC_TIMEOUT;
	for (i = 0; i < n; i++)
		if (!ps[i]->uninterruptible)
			any_intr = 1;
	for (;;) {
		int64_t now = proc_now_ms(), t = end;

		for (i = 0; i < n; i++) {
			do_io(ps[i]);
			service(ps[i], now,
			    mode == ONE && intr_sig && !ps[i]->uninterruptible);
		}
		for (i = 0; i < n; i++)
			if (ps[i]->state == DONE) {
				*index = i;
				result = PROC_DONE;
				goto out;
			}
		if (mode == ANY && intr_sig && any_intr) {
			result = PROC_INTERRUPTED;
			goto out;
		}
		if (now >= end) {
			result = PROC_TIMEOUT;
			goto out;
		}
		nfds = 0;
		for (i = 0; i < n; i++) {
			struct proc *p = ps[i];
			int64_t pt = next_timer(p);

			if (pt < t)
				t = pt;
			if (p->in_fd != -1) {
				fds[nfds].fd = p->in_fd;
				fds[nfds++].events = POLLOUT;
			}
			for (k = 0; k < 3; k++) {
				int fd = k == 0		? p->out.fd :
				    k == 1		? p->err.fd :
				    p->state == RUNNING ? p->pidfd :
							  -1;

				if (fd != -1) {
					fds[nfds].fd = fd;
					fds[nfds++].events = POLLIN;
				}
			}
		}
		if (any_intr && !intr_sig && intr_pipe[0] != -1) {
			fds[nfds].fd = intr_pipe[0];
			fds[nfds++].events = POLLIN;
		}
		now = proc_now_ms();
		t = t <= now ? 0 : t - now;
		if (poll(fds, (nfds_t)nfds, t > INT_MAX ? INT_MAX : (int)t) ==
			-1 &&
		    errno != EINTR) {
			result = PROC_TIMEOUT;
			goto out;
		}
	}
out:
	free(fds);
	return result;
}

int
proc_wait(struct proc *p, int64_t timeout_ms, struct proc_result *r)
{
	int index, rc;

	rc = p->state == DONE ? PROC_DONE :
				pump(&p, 1, timeout_ms, ONE, &index);
	if (rc == PROC_DONE)
		*r = p->res;
	return rc;
}

int
proc_wait_any(struct proc **ps, int n, int64_t timeout_ms, int *index)
{
	int i;

	for (i = 0; i < n; i++)
		if (ps[i]->state == DONE) {
			*index = i;
			return PROC_DONE;
		}
	if (n == 0)
		return PROC_TIMEOUT;
	return pump(ps, n, timeout_ms, ANY, index);
}

int
proc_kill(struct proc *p, int sig)
{
	if (p->state != RUNNING) {
		errno = ESRCH;
		return -1;
	}
	return kill(-p->pid, sig);
}

int
proc_pid(const struct proc *p)
{
	return p->pid;
}

int
proc_done(const struct proc *p)
{
	return p->state == DONE;
}

void
proc_free(struct proc *p)
{
	if (p == NULL)
		return;
	if (p->state == RUNNING) {
		kill(-p->pid, SIGKILL);
		while (waitpid(p->pid, NULL, 0) == -1 && errno == EINTR)
			;
	}
	close_fd(&p->pidfd);
	close_fd(&p->in_fd);
	close_fd(&p->out.fd);
	close_fd(&p->err.fd);
	free(p->in_data);
	free(p->out.buf);
	free(p->err.buf);
	free(p);
}

struct proc *
proc_run(const struct proc_opts *o, struct proc_result *r, char *err,
    size_t errlen)
{
	struct proc *p = proc_start(o, err, errlen);

	if (p != NULL)
		proc_wait(p, -1, r);
	return p;
}
