/*
 * lb-net --pool: the suite's upstream container, which holds the scripted
 * model and the recording proxy of every offline run of a suite, each
 * run's pair its own process group, on that run's own sockets and records
 * folder, so that a run costs one container fewer (issue 26).
 *
 * The harness talks to it over HTTP on a Unix socket (CTL, in a folder no
 * other container mounts), one request at a time:
 *
 *	POST   /runs/ID	 body: the argv to start, each string NUL-ended;
 *			 201, the child's pid. The child's stdout and stderr
 *			 go to RUNS/ID/logs/up.log, its working folder is
 *			 /tmp/ID (its own /tmp), it has its own process
 *			 group and /dev/null as its stdin. Descriptors
 *			 sent with the request (SCM_RIGHTS on its
 *			 connection, at most POOL_FDS_MAX in all, else 400)
 *			 are its fds 3, 4, ... in the order sent; every
 *			 other descriptor of the pool is closed on exec.
 *	GET    /runs/ID	 200 "running", or 200 "exited N" / "killed by
 *			 signal N" once it ended by itself (also written
 *			 to RUNS/ID/logs/exit, where the harness looks).
 *	DELETE /runs/ID	 its process group killed (SIGKILL) and reaped;
 *			 200 with how it ended. With ?final (the suite's
 *			 last run), the pool also ends, with status 0, once
 *			 every run it holds has had its DELETE: the runner
 *			 then removes a container that has ended, at once,
 *			 instead of killing it (issue 26).
 *
 * The pool closes its copies of the descriptors once the child has
 * them, and at once those of any other request (not a POST, or answered
 * with an error): none stays open in the pool. The harness binds a run's
 * listening sockets in the run's network namespace and sends them so:
 * the programs serve on them from a network namespace of their own.
 *
 * Each run's programs run in namespaces of their own (user, mount, PID,
 * network, IPC): they see RUNS/ID and no other run's folder, an empty
 * control folder and a /tmp of their own (so neither RUNS nor CTL may be
 * under /tmp), no other run's processes, and no abstract socket of
 * theirs. Of RUNS/ID they see, each bound on its own and each only if
 * it is there: logs (which must be), records, sock, script.json
 * (read-only), egress, trap-ca and keep (read-only); a run's model and
 * proxy (ID) use the first four, its trap (ID-trap, a run of its own)
 * logs, egress, trap-ca and keep/secrets.hex. Where namespaces cannot be
 * made, the pool says so and ends before it listens.
 *
 * ID is 1 to POOL_ID_MAX of [0-9A-Za-z-]; an unknown one is 404, one
 * started twice 409, more than POOL_MAX at once 503; any other query
 * 404. SIGTERM and SIGINT kill every group and end the pool with status 0.
 */
#ifndef LEAKBENCH_NET_POOL_H
#define LEAKBENCH_NET_POOL_H

#define POOL_MAX     256
#define POOL_ID_MAX  64
#define POOL_FDS_MAX 8 /* descriptors sent with one request */

/*
 * Listens on CTL ("unix:PATH"), says "lb-net: pool listening on CTL" on
 * stdout, then serves until SIGTERM or SIGINT. RUNS: the folder that
 * holds each run's logs/. The exit status: 0 on a signal, 1 when it
 * could not listen (said on stderr).
 */
int pool_serve(const char *ctl, const char *runs);

#endif
