/*
 * Child processes: spawned from an argv array, each in its own process
 * group, with stdin from /dev/null or a byte string, stdout and stderr
 * captured into memory (up to a cap, then truncated and flagged) or written
 * to a file, and an optional deadline after which the whole group gets
 * SIGTERM, then SIGKILL after a grace period.
 *
 * Exit is watched with a pidfd in poll(2) next to the output pipes (or, on
 * kernels without pidfd_open, with waitid(WNOHANG) every 20 ms); no SIGCHLD
 * handler is installed. The leader is left a zombie (WNOWAIT) until the
 * group has been signalled for the last time, so a group id we signal can
 * never be a recycled one.
 *
 * Interrupts: proc_trap_signals() installs SIGINT and SIGTERM handlers that
 * set a process-wide flag and wake every wait through a self-pipe. Waits on
 * interruptible processes return early once the flag is set; processes
 * started with uninterruptible set (cleanup commands) run to completion.
 * A third signal restores the default action and re-raises it, so a stuck
 * cleanup can still be killed from the terminal.
 *
 * Not thread-safe: one thread drives all waits.
 */
#ifndef LEAKBENCH_PROC_H
#define LEAKBENCH_PROC_H

#include <stddef.h>
#include <stdint.h>

#define PROC_CAP_DEFAULT   (64u << 20) /* bytes kept per stream */
#define PROC_GRACE_DEFAULT 3000	       /* ms from SIGTERM to SIGKILL */
#define PROC_LINGER	   200	       /* ms to drain pipes after exit */

struct proc_opts {
	const char *const *argv; /* NULL-terminated; argv[0] searched in PATH */
	const char *const *env; /* "NAME=value" additions (override), or NULL */
	const char *cwd;	/* NULL: inherit */
	const char *stdin_data; /* NULL: /dev/null */
	size_t stdin_len;
	const char *stdout_path; /* NULL: capture; else created/truncated */
	const char *stderr_path; /* same; equal paths share one file */
	int64_t deadline_ms;	 /* absolute proc_now_ms(); 0: none */
	int64_t grace_ms;	 /* 0: PROC_GRACE_DEFAULT */
	size_t cap;		 /* 0: PROC_CAP_DEFAULT */
	int uninterruptible;
};

/*
 * The outcome. out and err point into the process object and stay valid
 * until proc_free(); they are NUL-terminated ("" when redirected to a file).
 */
struct proc_result {
	int exited;	 /* 1: status is valid */
	int status;	 /* exit status */
	int signal;	 /* the signal that killed it, or 0 */
	int timed_out;	 /* killed by us at the deadline */
	int interrupted; /* killed by us after an interrupt */
	int truncated;	 /* some output beyond the cap was dropped */
	const char *out, *err;
	size_t out_len, err_len;
	int64_t elapsed_ms;
};

struct proc;

enum {
	PROC_TIMEOUT = 0,    /* the wait's own timeout passed; still running */
	PROC_DONE = 1,	     /* finished; the result is filled in */
	PROC_INTERRUPTED = 2 /* proc_wait_any only: the interrupt flag is set */
};

/* Monotonic clock, milliseconds. */
int64_t proc_now_ms(void);

/*
 * Starts a process. Returns the handle (free with proc_free), or NULL with
 * a message in err ("cannot run 'podman': No such file or directory").
 */
struct proc *proc_start(const struct proc_opts *o, char *err, size_t errlen);

/*
 * Waits up to timeout_ms (-1: no limit) for p to finish, enforcing its
 * deadline meanwhile. Returns PROC_DONE with *r filled in (again on every
 * later call) or PROC_TIMEOUT. When the interrupt flag is set and p is
 * interruptible, p's group is killed (SIGTERM, grace, SIGKILL) and the
 * result says interrupted; this ignores timeout_ms.
 */
int proc_wait(struct proc *p, int64_t timeout_ms, struct proc_result *r);

/*
 * Waits up to timeout_ms (-1: no limit) until one of ps[0..n-1] finishes.
 * Returns PROC_DONE with *index set (a process already finished is found
 * at once; get its result with proc_wait(ps[*index], 0, r)), PROC_TIMEOUT,
 * or PROC_INTERRUPTED when the flag is set and any of them is
 * interruptible (they keep running: proc_wait kills each one).
 */
int proc_wait_any(struct proc **ps, int n, int64_t timeout_ms, int *index);

/* Sends sig to p's process group. 0, or -1 with errno (ESRCH when done). */
int proc_kill(struct proc *p, int sig);

/* The leader's pid. */
int proc_pid(const struct proc *p);

/* 1 when p has finished (its result is available). */
int proc_done(const struct proc *p);

/*
 * Kills p's group with SIGKILL if it is still running, reaps it, closes
 * everything and frees p. NULL is accepted.
 */
void proc_free(struct proc *p);

/* Runs o to completion: proc_start + proc_wait; same ownership. */
struct proc *proc_run(const struct proc_opts *o, struct proc_result *r,
    char *err, size_t errlen);

/* Installs the SIGINT/SIGTERM handlers. 0, or -1 with errno. */
int proc_trap_signals(void);

/* 0, or the signal number that set the interrupt flag. */
int proc_interrupted(void);

/* Clears the flag (tests; a runner that handled the interrupt). */
void proc_clear_interrupt(void);

/*
 * Sleeps ms milliseconds. Returns 1 when the whole time passed, 0 when the
 * interrupt flag cut it short.
 */
int proc_sleep_ms(int64_t ms);

/* "SIGKILL" for 9; NULL for an unknown number. */
const char *proc_signame(int sig);

/* 9 for "SIGKILL" or "KILL"; -1 for an unknown name. */
int proc_signum(const char *name);

#endif
