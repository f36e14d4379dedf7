/*
 * proc: spawning, capture, stdin, deadlines that kill whole process groups,
 * waits on one and on many, and the interrupt flag. Real processes (sh,
 * cat, sleep, head); timing bounds are loose because the machine is shared.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"
#include "tap.h"

static char err[256];

/* Runs argv with the given options to completion; the caller frees p. */
static struct proc *
run(struct proc_opts *o, struct proc_result *r)
{
	struct proc *p = proc_run(o, r, err, sizeof(err));

	if (p == NULL)
		printf("# spawn failed: %s\n", err);
	return p;
}

/*
 * 1 when pid is gone or a zombie, polling up to 3 s: a killed grandchild is
 * reparented and reaped by someone else, not us.
 */
static int
gone(pid_t pid)
{
	int64_t end = proc_now_ms() + 3000;
	char path[64], buf[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	while (proc_now_ms() < end) {
		const char *rp;

		if ((f = fopen(path, "r")) == NULL)
			return 1;
		if (fgets(buf, sizeof(buf), f) == NULL)
			buf[0] = '\0';
		fclose(f);
		rp = strrchr(buf, ')');
		if (rp != NULL && rp[1] == ' ' && rp[2] == 'Z')
			return 1;
		usleep(10000);
	}
	return 0;
}

static void
test_exit_and_capture(void)
{
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3",
		NULL };
	struct proc_opts o = { .argv = argv };
	struct proc_result r;
	struct proc *p = run(&o, &r);

	ok(p != NULL, "sh starts");
	if (p == NULL)
		return;
	ok(r.exited, "exit: exited");
	is_int(r.status, 3, "exit: status 3");
	is_int(r.signal, 0, "exit: no signal");
	is_str(r.out, "out\n", "exit: stdout captured");
	is_str(r.err, "err\n", "exit: stderr captured");
	ok(!r.timed_out && !r.interrupted && !r.truncated, "exit: no flags");
	ok(r.elapsed_ms >= 0 && r.elapsed_ms < 5000, "exit: elapsed %lld ms",
	    (long long)r.elapsed_ms);
	proc_free(p);
}

static void
test_signal(void)
{
	const char *argv[] = { "sh", "-c", "kill -USR1 $$; sleep 5", NULL };
	struct proc_opts o = { .argv = argv };
	struct proc_result r;
	struct proc *p = run(&o, &r);

	if (!ok(p != NULL, "signal: starts"))
		return;
	ok(!r.exited, "signal: not exited");
	is_int(r.signal, SIGUSR1, "signal: killed by SIGUSR1");
	ok(!r.timed_out, "signal: not timed out (not killed by us)");
	proc_free(p);
}

static void
test_spawn_errors(void)
{
	const char *argv[] = { "leakbench-no-such-command", NULL };
	const char *pwd[] = { "pwd", NULL };
	struct proc_opts o = { .argv = argv };

	ok(proc_start(&o, err, sizeof(err)) == NULL, "enoent: no handle");
	is_str(err,
	    "cannot run 'leakbench-no-such-command': "
	    "no such file or directory",
	    "enoent: message");
	o.argv = pwd;
	o.cwd = "/nonexistent-lb";
	ok(proc_start(&o, err, sizeof(err)) == NULL, "bad cwd: no handle");
	is_str(err,
	    "cannot change directory to '/nonexistent-lb': "
	    "no such file or directory",
	    "bad cwd: message");
	o.cwd = "/etc/hostname";
	ok(proc_start(&o, err, sizeof(err)) == NULL, "file as cwd: no handle");
	is_str(err,
	    "cannot change directory to '/etc/hostname': not a directory",
	    "file as cwd: message");
	o.cwd = NULL;
	o.stdout_path = "/nonexistent-lb/out";
	ok(proc_start(&o, err, sizeof(err)) == NULL, "bad stdout: no handle");
	is_str(err,
	    "cannot open '/nonexistent-lb/out': "
	    "no such file or directory",
	    "bad stdout: message");
}

/* The hex mask of field NAME ("SigBlk") in the status text, or ~0. */
static unsigned long long
status_mask(const char *status, const char *name)
{
	const char *at = strstr(status, name);

	return at != NULL ? strtoull(at + strlen(name) + 1, NULL, 16) : ~0ULL;
}

/*
 * Whatever state we are in, the child starts clean: a process group of
 * its own, no signal ignored or blocked, no descriptor of ours but its
 * three streams.
 */
static void
test_starts_clean(void)
{
	const char *st[] = { "cat", "/proc/self/status", NULL };
	const char *stat[] = { "cat", "/proc/self/stat", NULL };
	const char *fds[] = { "ls", "/proc/self/fd", NULL };
	struct proc_opts o = { .argv = st };
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe, old_hup;
	sigset_t usr1, old_mask;
	struct proc_result r;
	struct proc *p;
	int kept = dup(2), pid, pgrp;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old_mask);
	sigaction(SIGPIPE, &ign, &old_pipe);
	sigaction(SIGHUP, &ign, &old_hup);
	if ((p = run(&o, &r)) != NULL) {
		ok(status_mask(r.out, "SigBlk:") == 0,
		    "clean: nothing blocked");
		/* but glibc's own two (32 and 33: SIGCANCEL, SIGSETXID),
		 * which its posix_spawn leaves ignored and glibc sets again */
		ok((status_mask(r.out, "SigIgn:") & ~0x180000000ULL) == 0,
		    "clean: nothing ignored (SIGPIPE, SIGHUP were here)");
		proc_free(p);
	}
	o.argv = stat;
	if ((p = run(&o, &r)) != NULL) {
		ok(sscanf(r.out, "%d %*s %*s %*d %d", &pid, &pgrp) == 2 &&
			pid == pgrp && pgrp != getpgrp(),
		    "clean: a process group of its own");
		proc_free(p);
	}
	o.argv = fds;
	if ((p = run(&o, &r)) != NULL) {
		/* 0, 1, 2 and the folder ls reads */
		is_str(r.out, "0\n1\n2\n3\n", "clean: no descriptor of ours");
		proc_free(p);
	}
	sigaction(SIGPIPE, &old_pipe, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	close(kept);
}

static void
test_cwd_env(void)
{
	const char *argv[] = { "sh", "-c", "pwd; echo \"$LB_X|$HOME\"", NULL };
	const char *env[] = { "LB_X=hello world", "HOME=/lb-home", NULL };
	struct proc_opts o = { .argv = argv, .cwd = "/tmp", .env = env };
	struct proc_result r;
	struct proc *p = run(&o, &r);

	if (!ok(p != NULL, "cwd/env: starts"))
		return;
	is_str(r.out, "/tmp\nhello world|/lb-home\n",
	    "cwd/env: cwd set, variable added, HOME overridden");
	proc_free(p);
}

static void
test_stdin(void)
{
	size_t n = 3 << 20, i;
	char *data = malloc(n);
	const char *cat[] = { "cat", NULL };
	const char *tru[] = { "true", NULL };
	struct proc_opts o = { .argv = cat };
	struct proc_result r;
	struct proc *p;

	for (i = 0; i < n; i++)
		data[i] = (char)(i * 7); /* includes NUL bytes */
	o.stdin_data = data;
	o.stdin_len = n;
	p = run(&o, &r);
	if (ok(p != NULL, "stdin: cat starts")) {
		is_int(r.out_len, n, "stdin: 3 MiB through cat");
		ok(memcmp(r.out, data, n) == 0,
		    "stdin: bytes intact, NULs too");
		proc_free(p);
	}
	o.argv = tru;
	p = run(&o, &r);
	if (ok(p != NULL, "stdin: true starts")) {
		ok(r.exited && r.status == 0,
		    "stdin: a child that never reads does not hurt us");
		proc_free(p);
	}
	o.argv = cat;
	o.stdin_data = NULL;
	p = run(&o, &r);
	if (ok(p != NULL, "stdin: null")) {
		ok(r.exited && r.status == 0 && r.out_len == 0,
		    "stdin: /dev/null by default");
		proc_free(p);
	}
	o.stdin_data = "";
	o.stdin_len = 0;
	p = run(&o, &r);
	if (ok(p != NULL, "stdin: empty")) {
		ok(r.exited && r.status == 0 && r.out_len == 0,
		    "stdin: empty string is EOF");
		proc_free(p);
	}
	free(data);
}

static void
test_cap(void)
{
	const char *argv[] = { "head", "-c", "5000000", "/dev/zero", NULL };
	const char *both[] = { "sh", "-c",
		"head -c 3000 /dev/zero; "
		"head -c 10 /dev/zero >&2",
		NULL };
	struct proc_opts o = { .argv = argv, .cap = 1000 };
	struct proc_result r;
	struct proc *p = run(&o, &r);

	if (ok(p != NULL, "cap: starts")) {
		is_int(r.out_len, 1000, "cap: stdout kept up to the cap");
		ok(r.truncated, "cap: flagged truncated");
		ok(r.exited && r.status == 0, "cap: child ran to the end");
		proc_free(p);
	}
	o.cap = 0;
	p = run(&o, &r);
	if (ok(p != NULL, "nocap: starts")) {
		is_int(r.out_len, 5000000, "nocap: 5 MB captured whole");
		ok(!r.truncated, "nocap: not truncated");
		proc_free(p);
	}
	o.argv = both;
	o.cap = 100;
	p = run(&o, &r);
	if (ok(p != NULL, "cap both: starts")) {
		ok(r.out_len == 100 && r.err_len == 10 && r.truncated,
		    "cap: per stream (%zu, %zu)", r.out_len, r.err_len);
		proc_free(p);
	}
}

static void
test_deadline_group(void)
{
	const char *argv[] = { "sh", "-c", "sleep 100 & echo $!; sleep 100",
		NULL };
	const char *stubborn[] = { "sh", "-c",
		"trap '' TERM; sleep 100 & echo $!; wait", NULL };
	struct proc_opts o = { .argv = argv };
	struct proc_result r;
	struct proc *p;
	int64_t t0 = proc_now_ms();
	pid_t gc;

	o.deadline_ms = t0 + 300;
	p = run(&o, &r);
	if (!ok(p != NULL, "deadline: starts"))
		return;
	ok(r.timed_out, "deadline: timed_out");
	is_int(r.signal, SIGTERM, "deadline: leader got SIGTERM");
	ok(r.elapsed_ms >= 250 && r.elapsed_ms < 20000,
	    "deadline: killed on time (%lld ms)", (long long)r.elapsed_ms);
	gc = (pid_t)atoi(r.out);
	ok(gc > 0 && gone(gc), "deadline: grandchild %d killed too", (int)gc);
	proc_free(p);

	o.argv = stubborn;
	o.deadline_ms = proc_now_ms() + 200;
	o.grace_ms = 300;
	p = run(&o, &r);
	if (!ok(p != NULL, "stubborn: starts"))
		return;
	ok(r.timed_out, "stubborn: timed_out");
	is_int(r.signal, SIGKILL, "stubborn: SIGKILL after the grace period");
	ok(r.elapsed_ms >= 450 && r.elapsed_ms < 20000,
	    "stubborn: deadline + grace (%lld ms)", (long long)r.elapsed_ms);
	gc = (pid_t)atoi(r.out);
	ok(gc > 0 && gone(gc), "stubborn: grandchild killed");
	proc_free(p);
}

static void
test_files(void)
{
	char dir[] = "/tmp/lb-proc-XXXXXX", path[128], buf[64];
	const char *argv[] = { "sh", "-c", "echo one; echo two >&2", NULL };
	struct proc_opts o = { .argv = argv };
	struct proc_result r;
	struct proc *p;
	FILE *f;
	size_t n;

	if (!ok(mkdtemp(dir) != NULL, "files: temp dir"))
		return;
	snprintf(path, sizeof(path), "%s/out", dir);
	o.stdout_path = o.stderr_path = path;
	p = run(&o, &r);
	if (ok(p != NULL, "files: starts")) {
		is_str(r.out, "", "files: nothing captured");
		f = fopen(path, "r");
		n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		buf[n] = '\0';
		if (f)
			fclose(f);
		is_str(buf, "one\ntwo\n", "files: both streams in one file");
		proc_free(p);
	}
	o.stderr_path = NULL;
	p = run(&o, &r);
	if (ok(p != NULL, "files: stdout only")) {
		is_str(r.err, "two\n", "files: stderr still captured");
		proc_free(p);
	}
	unlink(path);
	rmdir(dir);
}

static void
test_wait_timeout_and_kill(void)
{
	const char *argv[] = { "sleep", "0.3", NULL };
	const char *longer[] = { "sleep", "30", NULL };
	struct proc_opts o = { .argv = argv };
	struct proc_result r;
	struct proc *p = proc_start(&o, err, sizeof(err));
	int64_t t0 = proc_now_ms();

	if (!ok(p != NULL, "wait: starts"))
		return;
	ok(proc_pid(p) > 0, "wait: has a pid");
	is_int(proc_wait(p, 50, &r), PROC_TIMEOUT, "wait: 50 ms is too short");
	ok(proc_now_ms() - t0 < 250, "wait: returned after its timeout");
	ok(!proc_done(p), "wait: not done yet");
	is_int(proc_wait(p, -1, &r), PROC_DONE, "wait: then done");
	ok(r.exited && r.status == 0, "wait: exit 0");
	is_int(proc_wait(p, 0, &r), PROC_DONE, "wait: again, same result");
	ok(proc_kill(p, SIGTERM) == -1 && errno == ESRCH,
	    "kill: ESRCH once done");
	proc_free(p);

	o.argv = longer;
	p = proc_start(&o, err, sizeof(err));
	if (!ok(p != NULL, "kill: starts"))
		return;
	is_int(proc_kill(p, SIGKILL), 0, "kill: sent");
	is_int(proc_wait(p, 5000, &r), PROC_DONE, "kill: done");
	is_int(r.signal, SIGKILL, "kill: by SIGKILL");
	ok(!r.timed_out, "kill: not a timeout");
	proc_free(p);
}

static void
test_free_kills(void)
{
	const char *argv[] = { "sh", "-c", "sleep 100 & echo $!; wait", NULL };
	struct proc_opts o = { .argv = argv };
	struct proc_result r;
	struct proc *p = proc_start(&o, err, sizeof(err));
	pid_t leader;

	if (!ok(p != NULL, "free: starts"))
		return;
	leader = proc_pid(p);
	proc_wait(p, 200, &r);
	proc_free(p);
	ok(gone(leader), "free: kills and reaps a running process");
}

static void
test_wait_any(void)
{
	const char *a[] = { "sleep", "2", NULL };
	const char *b[] = { "sleep", "0.1", NULL };
	const char *c[] = { "sh", "-c", "exit 4", NULL };
	struct proc_opts oa = { .argv = a }, ob = { .argv = b },
			 oc = { .argv = c };
	struct proc *ps[3];
	struct proc_result r;
	int index = -1;

	ps[0] = proc_start(&oa, err, sizeof(err));
	ps[1] = proc_start(&ob, err, sizeof(err));
	if (!ok(ps[0] && ps[1], "any: started"))
		return;
	is_int(proc_wait_any(ps, 2, 20, &index), PROC_TIMEOUT,
	    "any: nothing finished within 20 ms");
	is_int(proc_wait_any(ps, 2, 5000, &index), PROC_DONE, "any: one done");
	is_int(index, 1, "any: the short sleep first");
	is_int(proc_wait_any(ps, 2, 0, &index), PROC_DONE,
	    "any: a finished handle is found at once");
	is_int(index, 1, "any: same handle");
	proc_free(ps[1]);
	ps[1] = proc_start(&oc, err, sizeof(err));
	is_int(proc_wait_any(ps, 2, 5000, &index), PROC_DONE, "any: again");
	is_int(index, 1, "any: the exit-4 one");
	proc_wait(ps[1], 0, &r);
	is_int(r.status, 4, "any: its result");
	proc_free(ps[0]);
	proc_free(ps[1]);
}

static void
test_interrupt(void)
{
	const char *argv[] = { "sleep", "30", NULL };
	const char *cleanup[] = { "sleep", "0.2", NULL };
	struct proc_opts o = { .argv = argv };
	struct proc_opts u = { .argv = cleanup, .uninterruptible = 1 };
	struct proc_result r;
	struct proc *p, *q, *ps[2];
	int64_t t0;
	int index;

	is_int(proc_trap_signals(), 0, "interrupt: handlers installed");
	is_int(proc_interrupted(), 0, "interrupt: flag clear");
	p = proc_start(&o, err, sizeof(err));
	q = proc_start(&u, err, sizeof(err));
	if (!ok(p && q, "interrupt: started"))
		return;
	raise(SIGINT);
	is_int(proc_interrupted(), SIGINT, "interrupt: flag says SIGINT");
	ps[0] = q;
	ps[1] = p;
	t0 = proc_now_ms();
	is_int(proc_wait_any(ps, 2, 10000, &index), PROC_INTERRUPTED,
	    "interrupt: wait_any returns early");
	ok(proc_now_ms() - t0 < 150, "interrupt: at once");
	is_int(proc_wait_any(ps, 1, 10000, &index), PROC_DONE,
	    "interrupt: wait_any on uninterruptible only waits");
	is_int(proc_wait(q, -1, &r), PROC_DONE, "interrupt: cleanup done");
	ok(r.exited && r.status == 0 && !r.interrupted,
	    "interrupt: cleanup ran to completion");
	t0 = proc_now_ms();
	is_int(proc_wait(p, -1, &r), PROC_DONE, "interrupt: wait returns");
	ok(r.interrupted && !r.timed_out, "interrupt: result says interrupted");
	is_int(r.signal, SIGTERM, "interrupt: child got SIGTERM");
	ok(proc_now_ms() - t0 < 2000, "interrupt: promptly");
	ok(proc_sleep_ms(5000) == 0, "interrupt: sleep returns at once");
	proc_free(p);
	proc_free(q);
	raise(SIGTERM); /* second signal: still only the flag */
	is_int(proc_interrupted(), SIGINT, "interrupt: first signal kept");
	proc_clear_interrupt();
	is_int(proc_interrupted(), 0, "interrupt: cleared");
	t0 = proc_now_ms();
	ok(proc_sleep_ms(50) == 1 && proc_now_ms() - t0 >= 50,
	    "sleep: sleeps when not interrupted");
}

static void
test_signames(void)
{
	is_str(proc_signame(SIGKILL), "SIGKILL", "signame 9");
	is_str(proc_signame(SIGTERM), "SIGTERM", "signame 15");
	ok(proc_signame(0) == NULL, "signame 0 unknown");
	is_int(proc_signum("SIGINT"), SIGINT, "signum SIGINT");
	is_int(proc_signum("KILL"), SIGKILL, "signum KILL");
	is_int(proc_signum("SIGNOPE"), -1, "signum unknown");
}

int
main(void)
{
	test_exit_and_capture();
	test_signal();
	test_spawn_errors();
	test_starts_clean();
	test_cwd_env();
	test_stdin();
	test_cap();
	test_deadline_group();
	test_files();
	test_wait_timeout_and_kill();
	test_free_kills();
	test_wait_any();
	test_interrupt();
	test_signames();
	return tap_done();
}
