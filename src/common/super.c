/*
 * The servers' supervisor: see super.h. The signal handler only forwards
 * the signal to the children it knows and raises a flag; the waits look
 * at the flag, so a signal that lands before a child is known still ends
 * everything.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/super.h"

#define POLL_MS 10

static struct super *active;
static volatile sig_atomic_t got_signal;

static void
on_signal(int sig)
{
	int i, saved = errno;

	got_signal = sig;
	if (active != NULL)
		for (i = 0; i < active->n; i++)
			if (active->pid[i] > 0)
				kill((pid_t)active->pid[i], sig);
	errno = saved;
}

int
super_init(struct super *s, const char *prog, int (*prep)(void *), void *arg)
{
	struct sigaction sa;

	memset(s, 0, sizeof(*s));
	s->prog = prog;
	s->prep = prep;
	s->prep_arg = arg;
	active = s;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) < 0 ||
	    sigaction(SIGINT, &sa, NULL) < 0) {
		fprintf(stderr, "%s: cannot handle signals: %s\n", prog,
		    strerror(errno));
		return -1;
	}
	return 0;
}

void
super_block_signals(int how, sigset_t *old)
{
	sigset_t set;

	if (how == SIG_SETMASK) {
		pthread_sigmask(SIG_SETMASK, old, NULL);
		return;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, old);
}

/* In the child: default dispositions, nothing blocked, PREP, exec. */
static void
child(struct super *s, const char *const argv[])
{
	struct sigaction sa;
	sigset_t none;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (s->prep != NULL && s->prep(s->prep_arg) < 0)
		_exit(127);
	execvp(argv[0], (char *const *)argv);
	fprintf(stderr, "%s: cannot start '%s': %s\n", s->prog, argv[0],
	    strerror(errno));
	_exit(127);
}

pid_t
super_spawn(struct super *s, const char *const argv[])
{
	pid_t pid;

	if (s->n == SUPER_MAX) {
		fprintf(stderr, "%s: cannot start '%s': at most %d programs\n",
		    s->prog, argv[0], SUPER_MAX);
		return -1;
	}
	if ((pid = fork()) < 0) {
		fprintf(stderr, "%s: cannot start '%s': %s\n", s->prog, argv[0],
		    strerror(errno));
		return -1;
	}
	if (pid == 0)
		child(s, argv);
	s->name[s->n] = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 :
						argv[0];
	s->pid[s->n] = pid;
	s->n++;
	return pid;
}

/* The index of the child PID, or -1. */
static int
index_of(const struct super *s, pid_t pid)
{
	int i;

	for (i = 0; i < s->n; i++)
		if ((pid_t)s->pid[i] == pid)
			return i;
	return -1;
}

/* Child I ended with STATUS: reaped, and said when SAY. */
static void
ended(struct super *s, int i, int status, int say)
{
	s->pid[i] = 0;
	if (!say)
		return;
	if (WIFSIGNALED(status))
		fprintf(stderr, "%s: '%s' was killed by signal %d\n", s->prog,
		    s->name[i], WTERMSIG(status));
	else
		fprintf(stderr, "%s: '%s' exited with status %d\n", s->prog,
		    s->name[i], WEXITSTATUS(status));
}

static long long
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
nap(void)
{
	struct timespec ts = { 0, POLL_MS * 1000000L };

	nanosleep(&ts, NULL);
}

/* The children still running, ended: SIGTERM, then SIGKILL. */
static void
end_all(struct super *s)
{
	long long deadline = now_ms() + SUPER_GRACE_MS;
	int i, live, status;

	for (i = 0; i < s->n; i++)
		if (s->pid[i] > 0)
			kill((pid_t)s->pid[i], SIGTERM);
	for (;;) {
		live = 0;
		for (i = 0; i < s->n; i++) {
			if (s->pid[i] <= 0)
				continue;
			if (waitpid((pid_t)s->pid[i], &status, WNOHANG) ==
			    (pid_t)s->pid[i])
				ended(s, i, status, 0);
			else
				live++;
		}
		if (live == 0)
			return;
		if (now_ms() >= deadline)
			break;
		nap();
	}
	for (i = 0; i < s->n; i++) {
		if (s->pid[i] <= 0)
			continue;
		kill((pid_t)s->pid[i], SIGKILL);
		while (
		    waitpid((pid_t)s->pid[i], &status, 0) < 0 && errno == EINTR)
			;
		s->pid[i] = 0;
	}
}

/*
 * One look (HANG: a wait) at the children: the supervisor's exit status
 * once one ended or a signal came (everything ended), else -1.
 */
static int
look(struct super *s, int hang)
{
	int status, i;
	pid_t pid;

	for (;;) {
		if (got_signal) {
			end_all(s);
			return 0;
		}
		pid = waitpid(-1, &status, hang ? 0 : WNOHANG);
		if (pid < 0 && errno == EINTR)
			continue;
		if (pid < 0 && hang) {
			fprintf(stderr,
			    "%s: cannot wait for its programs: %s\n", s->prog,
			    strerror(errno));
			end_all(s);
			return 1;
		}
		if (pid <= 0)
			return -1;
		if ((i = index_of(s, pid)) < 0)
			continue;
		ended(s, i, status, !got_signal);
		end_all(s);
		return got_signal ? 0 : 1;
	}
}

/* 1 when the Unix socket PATH accepts a connection, 0 when not yet. */
static int
accepts(const char *path)
{
	struct sockaddr_un sun;
	int fd, ok;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return 0;
	ok = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	close(fd);
	return ok;
}

int
super_await(struct super *s, const char *path, int *status)
{
	if (strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		fprintf(stderr, "%s: cannot wait for '%s': path too long\n",
		    s->prog, path);
		end_all(s);
		*status = 1;
		return -1;
	}
	for (;;) {
		if ((*status = look(s, 0)) >= 0)
			return -1;
		if (accepts(path))
			return 0;
		nap();
	}
}

int
super_watch(struct super *s)
{
	sigset_t old;
	int r;

	if (s->n > 0) {
		while ((r = look(s, 1)) < 0)
			;
		return r;
	}
	/* No child: only a signal ends the wait. */
	super_block_signals(SIG_BLOCK, &old);
	while (!got_signal)
		sigsuspend(&old);
	super_block_signals(SIG_SETMASK, &old);
	return 0;
}
