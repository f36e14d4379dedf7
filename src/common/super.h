/*
 * The servers' supervisor (lb-net's, in the network sidecars and in the
 * upstream container): children started from an argv, a child started
 * only once a Unix socket accepts when the one before must listen first,
 * SIGTERM and SIGINT forwarded to every child, and the end of any child
 * the end of all:
 *
 *	lb-net: 'lb-model' was killed by signal 9
 *
 * one line on stderr naming the child and how it ended, the others ended
 * (SIGTERM, then SIGKILL after SUPER_GRACE_MS), and the supervisor's exit
 * status 1, so that a dead child is seen as a dead container, never as a
 * quiet run. After a forwarded signal, the children are ended the same
 * way, nothing is said, and the status is 0.
 *
 * One supervisor per process (its signal handlers find it in a static).
 * Threads other than the one that calls super_watch or super_await must
 * block SIGTERM and SIGINT (super_block_signals), so that a signal wakes
 * the supervisor. No Lua; nothing allocated.
 */
#ifndef LEAKBENCH_COMMON_SUPER_H
#define LEAKBENCH_COMMON_SUPER_H

#include <signal.h>
#include <sys/types.h>

#define SUPER_MAX      8
#define SUPER_GRACE_MS 2000

struct super {
	const char *prog;	/* the supervisor's name, for messages */
	int (*prep)(void *arg); /* in each child before exec, or NULL;
					-1 ends the child with status 127 */
	void *prep_arg;
	int n;				      /* children started */
	volatile sig_atomic_t pid[SUPER_MAX]; /* 0 once reaped */
	const char *name[SUPER_MAX]; /* each child's program name (argv[0]
					without its directory), borrowed */
};

/*
 * Makes s the process's supervisor, named PROG in its messages, with
 * PREP(ARG) run in each child before exec (NULL: none); installs the
 * handlers that forward SIGTERM and SIGINT to its children. 0, or -1 once
 * said on stderr.
 */
int super_init(struct super *s, const char *prog, int (*prep)(void *),
    void *arg);

/*
 * Blocks (how SIG_BLOCK) or restores (SIG_SETMASK with *old) SIGTERM and
 * SIGINT in the calling thread: around pthread_create, so that the new
 * thread inherits the block.
 */
void super_block_signals(int how, sigset_t *old);

/*
 * Starts ARGV (argv[0] looked up in PATH; borrowed until the child is
 * reaped) as a child with the default dispositions of SIGTERM, SIGINT and
 * SIGPIPE and no signal blocked. Its pid, or -1 once said on stderr (a
 * program that cannot be run is a child that exits 127, having said why).
 */
pid_t super_spawn(struct super *s, const char *const argv[]);

/*
 * Waits until the Unix socket PATH accepts a connection (one connect,
 * closed at once), every child alive. 0 once it does. -1 when the wait
 * ended otherwise, every child ended, with the supervisor's exit status
 * in *status: 1 when a child ended (the line said) or PATH is too long, 0
 * on a forwarded signal.
 */
int super_await(struct super *s, const char *path, int *status);

/*
 * Waits until a child ends or a signal arrives (with no child, only a
 * signal ends the wait), then ends every child. The supervisor's exit
 * status: 1 when a child ended (the line said), 0 on a forwarded signal.
 */
int super_watch(struct super *s);

#endif
