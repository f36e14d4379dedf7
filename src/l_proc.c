/*
 * Lua bindings for proc.c and fs.c, part of "leakbench.core". This file
 * only checks arguments and moves values: misuse (a wrong type, an unknown
 * option) raises with the parameter's path, in l_args.h's grammar:
 * 'core.run: wrong parameter "opts.argv[2]": expected string, got number';
 * failures of the environment (a missing program, an unreadable file)
 * return nil, message.
 *
 * A process is a "leakbench.process" userdata, created closed before the
 * child is spawned; __gc, __close and close() kill and reap it and are
 * idempotent. Strings handed to proc_start (argv, env) are borrowed from
 * Lua values anchored on the stack for the duration of the call.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>

#include "fs.h"
#include "l_args.h"
#include "l_proc.h"
#include "proc.h"

#define PROCESS_MT "leakbench.process"

struct lproc {
	struct proc *p; /* NULL when closed */
};

static const char *const run_options[] = { "argv", "stdin", "env", "cwd",
	"timeout", "stdout", "stderr", "uninterruptible", "grace", "max_output",
	NULL };

/* A number of seconds (>= 0, or > 0 when positive) at idx, or raise. */
static double
check_seconds(lua_State *L, int idx, const char *fn, const char *what,
    int positive)
{
	double s;

	if (lua_type(L, idx) != LUA_TNUMBER)
		l_wrong_type(L, idx, fn, what, "a number of seconds");
	s = lua_tonumber(L, idx);
	if (isnan(s) || s < 0 || (positive && s == 0))
		l_wrong(L, fn, what, "expected a %s number of seconds, got %s",
		    positive ? "positive" : "non-negative",
		    lua_tostring(L, idx));
	return s;
}

static int64_t
seconds_to_ms(double s)
{
	if (s > 1e9)
		return INT64_C(1000000000000);
	return (int64_t)ceil(s * 1000);
}

/*
 * Checks the options table at index 1 and fills o. Pushes anchors for the
 * arrays it builds; they must stay on the stack until proc_start returns.
 */
static void
check_run_opts(lua_State *L, const char *fn, struct proc_opts *o)
{
	const char **argv, **env = NULL;
	lua_Integer i, n;
	char what[64];
	int k;

	memset(o, 0, sizeof(*o));
	if (!lua_istable(L, 1))
		l_wrong_type(L, 1, fn, "opts", "table");
	luaL_checkstack(L, 24, fn);
	lua_pushnil(L);
	while (lua_next(L, 1) != 0) {
		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TSTRING)
			l_wrong(L, fn, "opts",
			    "expected option names, got "
			    "a %s key",
			    luaL_typename(L, -1));
		for (k = 0; run_options[k] != NULL; k++)
			if (strcmp(lua_tostring(L, -1), run_options[k]) == 0)
				break;
		if (run_options[k] == NULL) {
			snprintf(what, sizeof(what), "opts.%.40s",
			    lua_tostring(L, -1));
			l_wrong(L, fn, what, "not an option");
		}
	}

	lua_getfield(L, 1, "argv");
	if (!lua_istable(L, -1))
		l_wrong_type(L, -1, fn, "opts.argv", "a list of strings");
	n = (lua_Integer)lua_rawlen(L, -1);
	if (n == 0)
		l_wrong(L, fn, "opts.argv",
		    "expected a list of strings, got "
		    "an empty table");
	argv = lua_newuserdatauv(L, (size_t)(n + 1) * sizeof(*argv), 0);
	for (i = 1; i <= n; i++) {
		lua_rawgeti(L, -2, i);
		snprintf(what, sizeof(what), "opts.argv[%lld]", (long long)i);
		argv[i - 1] = l_check_string(L, -1, fn, what);
		lua_pop(L, 1);
	}
	argv[n] = NULL;
	o->argv = argv;

	lua_getfield(L, 1, "env");
	if (!lua_isnil(L, -1)) {
		int t = lua_gettop(L);

		if (!lua_istable(L, t))
			l_wrong_type(L, t, fn, "opts.env", "table");
		n = 0;
		lua_pushnil(L);
		while (lua_next(L, t) != 0) {
			lua_pop(L, 1);
			n++;
		}
		env = lua_newuserdatauv(L, (size_t)(n + 1) * sizeof(*env), 0);
		lua_createtable(L, (int)n, 0); /* anchors "K=V" */
		i = 0;
		lua_pushnil(L);
		while (lua_next(L, t) != 0) {
			const char *name;
			size_t len, j;

			if (lua_type(L, -2) != LUA_TSTRING)
				l_wrong(L, fn, "opts.env",
				    "expected variable "
				    "names, got a %s key",
				    luaL_typename(L, -2));
			name = lua_tolstring(L, -2, &len);
			for (j = 0; j < len; j++)
				if (!(name[j] == '_' ||
					(name[j] >= 'A' && name[j] <= 'Z') ||
					(name[j] >= 'a' && name[j] <= 'z') ||
					(j > 0 && name[j] >= '0' &&
					    name[j] <= '9')))
					break;
			if (len == 0 || j < len)
				l_wrong(L, fn, "opts.env",
				    "expected variable "
				    "names, got the key '%s'",
				    name);
			snprintf(what, sizeof(what), "opts.env.%.40s", name);
			l_check_string(L, -1, fn, what);
			lua_pushvalue(L, -2);
			lua_pushliteral(L, "=");
			lua_pushvalue(L, -3);
			lua_concat(L, 3);
			env[i] = lua_tostring(L, -1);
			lua_rawseti(L, -4, i + 1); /* anchor, key, value */
			lua_pop(L, 1);
			i++;
		}
		env[i] = NULL;
		o->env = env;
	}

	lua_getfield(L, 1, "stdin");
	if (!lua_isnil(L, -1)) {
		size_t len;

		if (lua_type(L, -1) != LUA_TSTRING)
			l_wrong_type(L, -1, fn, "opts.stdin", "string");
		o->stdin_data = lua_tolstring(L, -1, &len);
		o->stdin_len = len;
	}
	lua_getfield(L, 1, "cwd");
	o->cwd = l_opt_string(L, -1, fn, "opts.cwd");
	lua_getfield(L, 1, "stdout");
	o->stdout_path = l_opt_string(L, -1, fn, "opts.stdout");
	lua_getfield(L, 1, "stderr");
	o->stderr_path = l_opt_string(L, -1, fn, "opts.stderr");
	lua_getfield(L, 1, "timeout");
	if (!lua_isnil(L, -1)) {
		double s = check_seconds(L, -1, fn, "opts.timeout", 1);

		if (!isinf(s))
			o->deadline_ms = proc_now_ms() + seconds_to_ms(s);
	}
	lua_getfield(L, 1, "grace");
	if (!lua_isnil(L, -1))
		o->grace_ms = seconds_to_ms(
		    check_seconds(L, -1, fn, "opts.grace", 1));
	lua_getfield(L, 1, "max_output");
	if (!lua_isnil(L, -1)) {
		if (!lua_isinteger(L, -1))
			l_wrong_type(L, -1, fn, "opts.max_output",
			    "an integer number of bytes");
		if (lua_tointeger(L, -1) < 1)
			l_wrong(L, fn, "opts.max_output",
			    "expected a positive "
			    "number of bytes, got %s",
			    lua_tostring(L, -1));
		o->cap = (size_t)lua_tointeger(L, -1);
	}
	lua_getfield(L, 1, "uninterruptible");
	if (!lua_isnil(L, -1)) {
		if (!lua_isboolean(L, -1))
			l_wrong_type(L, -1, fn, "opts.uninterruptible",
			    "boolean");
		o->uninterruptible = lua_toboolean(L, -1);
	}
}

/* Pushes the result table. */
static void
push_result(lua_State *L, const struct proc_result *r)
{
	const char *name;

	lua_createtable(L, 0, 9);
	if (r->exited) {
		lua_pushinteger(L, r->status);
		lua_setfield(L, -2, "status");
	}
	if (r->signal) {
		lua_pushinteger(L, r->signal);
		lua_setfield(L, -2, "signal");
		name = proc_signame(r->signal);
		if (name != NULL)
			lua_pushstring(L, name);
		else
			lua_pushfstring(L, "SIG%d", r->signal);
		lua_setfield(L, -2, "signame");
	}
	lua_pushboolean(L, r->timed_out);
	lua_setfield(L, -2, "timed_out");
	lua_pushboolean(L, r->interrupted);
	lua_setfield(L, -2, "interrupted");
	lua_pushboolean(L, r->truncated);
	lua_setfield(L, -2, "truncated");
	lua_pushlstring(L, r->out, r->out_len);
	lua_setfield(L, -2, "stdout");
	lua_pushlstring(L, r->err, r->err_len);
	lua_setfield(L, -2, "stderr");
	lua_pushnumber(L, (double)r->elapsed_ms / 1000.0);
	lua_setfield(L, -2, "elapsed");
}

static int
push_fail(lua_State *L, const char *msg)
{
	lua_pushnil(L);
	lua_pushstring(L, msg);
	return 2;
}

/*
 * run(opts) -> result | nil, err. Raises on misuse. The child is always
 * reaped before this returns, also when a memory error is raised.
 */
static int
l_run(lua_State *L)
{
	struct proc_opts o;
	struct proc_result r;
	struct lproc *h;
	char err[512];

	check_run_opts(L, "core.run", &o);
	h = lua_newuserdatauv(L, sizeof(*h), 0);
	h->p = NULL;
	luaL_setmetatable(L, PROCESS_MT); /* reaped by __gc if we raise */
	if ((h->p = proc_start(&o, err, sizeof(err))) == NULL)
		return push_fail(L, err);
	proc_wait(h->p, -1, &r);
	push_result(L, &r);
	proc_free(h->p);
	h->p = NULL;
	return 1;
}

/* start(opts) -> process | nil, err. Raises on misuse. */
static int
l_start(lua_State *L)
{
	struct proc_opts o;
	struct lproc *h;
	char err[512];

	check_run_opts(L, "core.start", &o);
	h = lua_newuserdatauv(L, sizeof(*h), 0);
	h->p = NULL;
	luaL_setmetatable(L, PROCESS_MT);
	if ((h->p = proc_start(&o, err, sizeof(err))) == NULL)
		return push_fail(L, err);
	return 1;
}

static struct proc *
check_open(lua_State *L, const char *fn)
{
	struct lproc *h = luaL_checkudata(L, 1, PROCESS_MT);

	if (h->p == NULL)
		l_wrong(L, fn, "self", "the process is closed");
	return h->p;
}

/* A timeout in seconds at idx (nil: -1, no limit) as milliseconds. */
static int64_t
opt_timeout(lua_State *L, int idx, const char *fn)
{
	if (lua_isnoneornil(L, idx))
		return -1;
	return seconds_to_ms(check_seconds(L, idx, fn, "timeout", 0));
}

/* process:wait([timeout]) -> result | nil, "timeout". */
static int
l_process_wait(lua_State *L)
{
	struct proc *p = check_open(L, "process:wait");
	int64_t ms = opt_timeout(L, 2, "process:wait");
	struct proc_result r;

	if (proc_wait(p, ms, &r) != PROC_DONE)
		return push_fail(L, "timeout");
	push_result(L, &r);
	return 1;
}

/* process:kill([signame = "SIGTERM"]) -> true | nil, err. */
static int
l_process_kill(lua_State *L)
{
	struct proc *p = check_open(L, "process:kill");
	const char *name = lua_isnoneornil(L, 2) ?
	    "SIGTERM" :
	    l_check_string(L, 2, "process:kill", "signal");
	int sig = proc_signum(name);

	if (sig < 0)
		return l_wrong(L, "process:kill", "signal",
		    "unknown signal '%s'", name);
	if (proc_kill(p, sig) == -1)
		return push_fail(L,
		    errno == ESRCH ? "the process has finished" :
				     strerror(errno));
	lua_pushboolean(L, 1);
	return 1;
}

static int
l_process_pid(lua_State *L)
{
	lua_pushinteger(L, proc_pid(check_open(L, "process:pid")));
	return 1;
}

static int
l_process_done(lua_State *L)
{
	lua_pushboolean(L, proc_done(check_open(L, "process:done")));
	return 1;
}

/* close(), __close, __gc: kill and reap if running; harmless twice. */
static int
l_process_close(lua_State *L)
{
	struct lproc *h = luaL_checkudata(L, 1, PROCESS_MT);

	proc_free(h->p);
	h->p = NULL;
	return 0;
}

static int
l_process_tostring(lua_State *L)
{
	struct lproc *h = luaL_checkudata(L, 1, PROCESS_MT);

	if (h->p == NULL)
		lua_pushliteral(L, "leakbench.process (closed)");
	else
		lua_pushfstring(L, "leakbench.process (pid %d)",
		    proc_pid(h->p));
	return 1;
}

/*
 * wait_any(list, [timeout]) -> index, result | nil, "timeout" |
 * nil, "interrupted".
 */
static int
l_wait_any(lua_State *L)
{
	struct proc **ps;
	struct proc_result r;
	lua_Integer i, n;
	int64_t ms;
	int index, rc;
	char what[32];

	if (!lua_istable(L, 1))
		l_wrong_type(L, 1, "core.wait_any", "list",
		    "a list of processes");
	ms = opt_timeout(L, 2, "core.wait_any");
	n = (lua_Integer)lua_rawlen(L, 1);
	if (n == 0)
		return l_wrong(L, "core.wait_any", "list",
		    "expected a list of "
		    "processes, got an empty table");
	if (n > INT_MAX / 8)
		return l_wrong(L, "core.wait_any", "list", "too long");
	ps = lua_newuserdatauv(L, (size_t)n * sizeof(*ps), 0);
	for (i = 1; i <= n; i++) {
		struct lproc *h;

		lua_rawgeti(L, 1, i);
		h = luaL_testudata(L, -1, PROCESS_MT);
		snprintf(what, sizeof(what), "list[%lld]", (long long)i);
		if (h == NULL)
			return l_wrong_type(L, -1, "core.wait_any", what,
			    "a process");
		if (h->p == NULL)
			return l_wrong(L, "core.wait_any", what,
			    "the process is closed");
		ps[i - 1] = h->p;
		lua_pop(L, 1);
	}
	rc = proc_wait_any(ps, (int)n, ms, &index);
	if (rc == PROC_TIMEOUT)
		return push_fail(L, "timeout");
	if (rc == PROC_INTERRUPTED)
		return push_fail(L, "interrupted");
	proc_wait(ps[index], 0, &r);
	lua_pushinteger(L, index + 1);
	push_result(L, &r);
	return 2;
}

static int
l_trap_signals(lua_State *L)
{
	if (proc_trap_signals() == -1)
		return push_fail(L, strerror(errno));
	lua_pushboolean(L, 1);
	return 1;
}

/* interrupted() -> nil | "SIGINT" | "SIGTERM". */
static int
l_interrupted(lua_State *L)
{
	int sig = proc_interrupted();

	if (sig == 0)
		lua_pushnil(L);
	else
		lua_pushstring(L, proc_signame(sig));
	return 1;
}

static int
l_clear_interrupt(lua_State *L)
{
	(void)L;
	proc_clear_interrupt();
	return 0;
}

/* now() -> monotonic seconds, float. */
static int
l_now(lua_State *L)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	lua_pushnumber(L, (double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
	return 1;
}

/* sleep(seconds) -> true, or false when an interrupt cut it short. */
static int
l_sleep(lua_State *L)
{
	double s = check_seconds(L, 1, "core.sleep", "seconds", 0);

	lua_pushboolean(L, proc_sleep_ms(seconds_to_ms(s)));
	return 1;
}

/* tmpdir(prefix, [parent]) -> path | nil, err: a fresh 0700 directory. */
static int
l_tmpdir(lua_State *L)
{
	const char *prefix = l_check_string(L, 1, "core.tmpdir", "prefix");
	const char *parent = l_opt_string(L, 2, "core.tmpdir", "parent");
	char *path;

	if (strchr(prefix, '/') != NULL)
		return l_wrong(L, "core.tmpdir", "prefix", "contains a '/'");
	if (parent == NULL && (parent = getenv("TMPDIR")) == NULL)
		parent = "/tmp";
	lua_pushfstring(L, "%s/%sXXXXXX", parent, prefix);
	path = strdup(lua_tostring(L, -1));
	if (path == NULL)
		return luaL_error(L, "core.tmpdir: out of memory");
	if (mkdtemp(path) == NULL) {
		int e = errno;

		free(path);
		lua_pushnil(L);
		lua_pushfstring(L, "cannot create a directory in '%s': %s",
		    parent, strerror(e));
		return 2;
	}
	lua_pushstring(L, path);
	free(path);
	return 1;
}

static int
push_status(lua_State *L, int rc, const char *err)
{
	if (rc != 0)
		return push_fail(L, err);
	lua_pushboolean(L, 1);
	return 1;
}

/* rmtree(path) -> true | nil, err. Never follows links; refuses "/". */
static int
l_rmtree(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.rmtree", "path");
	char err[512];
	const char *s;

	for (s = path; *s == '/'; s++)
		;
	if (*s == '\0')
		return l_wrong(L, "core.rmtree", "path",
		    "refusing to remove "
		    "'%s'",
		    path);
	return push_status(L, fs_rmtree(path, err, sizeof(err)), err);
}

static mode_t
opt_mode(lua_State *L, int idx, const char *fn, mode_t def)
{
	lua_Integer m;

	if (lua_isnoneornil(L, idx))
		return def;
	if (!lua_isinteger(L, idx))
		l_wrong_type(L, idx, fn, "mode", "integer");
	m = lua_tointeger(L, idx);
	if (m < 0 || m > 07777)
		l_wrong(L, fn, "mode", "expected 0 to 07777, got %I",
		    (lua_Integer)m);
	return (mode_t)m;
}

/* mkdir_p(path, [mode = 0755]) -> true | nil, err. */
static int
l_mkdir_p(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.mkdir_p", "path");
	mode_t mode = opt_mode(L, 2, "core.mkdir_p", 0755);
	char err[512];

	return push_status(L, fs_mkdir_p(path, mode, err, sizeof(err)), err);
}

/*
 * write_file(path, bytes, [mode = 0644], [exclusive = false]) -> true |
 * nil, err. Never writes through a link; mode is exact (no umask).
 */
static int
l_write_file(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.write_file", "path");
	mode_t mode = opt_mode(L, 3, "core.write_file", 0644);
	const char *data;
	char err[512];
	size_t len;

	if (lua_type(L, 2) != LUA_TSTRING)
		l_wrong_type(L, 2, "core.write_file", "bytes", "string");
	data = lua_tolstring(L, 2, &len);
	if (!lua_isnoneornil(L, 4) && !lua_isboolean(L, 4))
		l_wrong_type(L, 4, "core.write_file", "exclusive", "boolean");
	return push_status(L,
	    fs_write_file(path, data, len, mode, lua_toboolean(L, 4), err,
		sizeof(err)),
	    err);
}

/* read_file(path) -> bytes | nil, err. */
static int
l_read_file(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.read_file", "path");
	char err[512], *buf;
	size_t len;

	if ((buf = fs_read_file(path, &len, err, sizeof(err))) == NULL)
		return push_fail(L, err);
	lua_pushlstring(L, buf, len);
	free(buf);
	return 1;
}

/*
 * read_beneath(root, rel, [max = 64 MiB]) -> bytes, { size =, mode =,
 * truncated = } | nil, err. For files a hostile party made: no link in rel
 * is followed, only a regular file is read, and at most max bytes of it
 * (see fs_read_beneath). Misuse raises.
 */
static int
l_read_beneath(lua_State *L)
{
	const char *root = l_check_string(L, 1, "core.read_beneath", "root");
	const char *rel = l_check_string(L, 2, "core.read_beneath", "rel");
	struct fs_read_info info;
	lua_Integer max = 64 << 20;
	char err[512], *buf;
	size_t len;

	if (!lua_isnoneornil(L, 3)) {
		if (!lua_isinteger(L, 3))
			l_wrong_type(L, 3, "core.read_beneath", "max",
			    "integer");
		max = lua_tointeger(L, 3);
		if (max < 0)
			return l_wrong(L, "core.read_beneath", "max",
			    "expected a "
			    "non-negative integer, got %I",
			    (lua_Integer)max);
	}
	buf = fs_read_beneath(root, rel, (size_t)max, &len, &info, err,
	    sizeof(err));
	if (buf == NULL)
		return push_fail(L, err);
	lua_pushlstring(L, buf, len);
	free(buf);
	lua_createtable(L, 0, 3);
	lua_pushinteger(L, (lua_Integer)info.size);
	lua_setfield(L, -2, "size");
	lua_pushinteger(L, (lua_Integer)info.mode);
	lua_setfield(L, -2, "mode");
	lua_pushboolean(L, info.truncated);
	lua_setfield(L, -2, "truncated");
	return 2;
}

/*
 * files_beneath(root, rel, [max_files = 100000]) -> sorted list of the
 * regular files below root/rel, relative to it | nil, err. No link is
 * followed, rel included; devices, FIFOs, sockets and links are skipped.
 */
static int
l_files_beneath(lua_State *L)
{
	const char *root = l_check_string(L, 1, "core.files_beneath", "root");
	const char *rel = l_check_string(L, 2, "core.files_beneath", "rel");
	lua_Integer max = 100000;
	char err[512], **names;
	size_t n, i;

	if (!lua_isnoneornil(L, 3)) {
		if (!lua_isinteger(L, 3) || lua_tointeger(L, 3) < 0)
			l_wrong_type(L, 3, "core.files_beneath", "max_files",
			    "a non-negative integer");
		max = lua_tointeger(L, 3);
	}
	names = fs_files_beneath(root, rel, (size_t)max, &n, err, sizeof(err));
	if (names == NULL)
		return push_fail(L, err);
	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		lua_pushstring(L, names[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	fs_free_list(names);
	return 1;
}

/* sha256(bytes) -> lowercase hex. */
static int
l_sha256(lua_State *L)
{
	char hex[65];
	const char *s;
	size_t len;

	if (lua_type(L, 1) != LUA_TSTRING)
		l_wrong_type(L, 1, "core.sha256", "bytes", "string");
	s = lua_tolstring(L, 1, &len);
	if (fs_sha256(s, len, hex) != 0)
		return luaL_error(L, "core.sha256: digest failed");
	lua_pushstring(L, hex);
	return 1;
}

/* sha256_file(path) -> hex | nil, err. */
static int
l_sha256_file(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.sha256_file", "path");
	char hex[65], err[512];

	if (fs_sha256_file(path, hex, err, sizeof(err)) != 0)
		return push_fail(L, err);
	lua_pushstring(L, hex);
	return 1;
}

/* listdir(path) -> sorted names | nil, err. */
static int
l_listdir(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.listdir", "path");
	char err[512], **names;
	size_t n, i;

	if ((names = fs_listdir(path, &n, err, sizeof(err))) == NULL)
		return push_fail(L, err);
	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		lua_pushstring(L, names[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	fs_free_list(names);
	return 1;
}

/*
 * stat(path) -> { type = "file" | "dir" | "link" | "other", size, mode,
 * uid, gid, mtime } | nil, err. Does not follow a final link.
 */
static int
l_stat(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.stat", "path");
	struct stat st;
	const char *type;

	if (lstat(path, &st) == -1) {
		lua_pushnil(L);
		lua_pushfstring(L, "cannot stat '%s': %s", path,
		    strerror(errno));
		return 2;
	}
	type = S_ISREG(st.st_mode) ? "file" :
	    S_ISDIR(st.st_mode)	   ? "dir" :
	    S_ISLNK(st.st_mode)	   ? "link" :
				     "other";
	lua_createtable(L, 0, 6);
	lua_pushstring(L, type);
	lua_setfield(L, -2, "type");
	lua_pushinteger(L, (lua_Integer)st.st_size);
	lua_setfield(L, -2, "size");
	lua_pushinteger(L, (lua_Integer)(st.st_mode & 07777));
	lua_setfield(L, -2, "mode");
	lua_pushinteger(L, (lua_Integer)st.st_uid);
	lua_setfield(L, -2, "uid");
	lua_pushinteger(L, (lua_Integer)st.st_gid);
	lua_setfield(L, -2, "gid");
	lua_pushnumber(L,
	    (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9);
	lua_setfield(L, -2, "mtime");
	return 1;
}

static lua_Integer
check_id(lua_State *L, int idx, const char *fn, const char *what)
{
	lua_Integer v;

	if (!lua_isinteger(L, idx))
		l_wrong_type(L, idx, fn, what, "integer");
	v = lua_tointeger(L, idx);
	if (v < 0 || v > UINT32_MAX - 1)
		l_wrong(L, fn, what, "expected 0 to %I, got %I",
		    (lua_Integer)(UINT32_MAX - 1), (lua_Integer)v);
	return v;
}

/* chown(path, uid, gid, [recursive]) -> true | nil, err. lchown semantics. */
static int
l_chown(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.chown", "path");
	uid_t uid = (uid_t)check_id(L, 2, "core.chown", "uid");
	gid_t gid = (gid_t)check_id(L, 3, "core.chown", "gid");
	char err[512];

	if (!lua_isnoneornil(L, 4) && !lua_isboolean(L, 4))
		l_wrong_type(L, 4, "core.chown", "recursive", "boolean");
	return push_status(L,
	    fs_chown(path, uid, gid, lua_toboolean(L, 4), err, sizeof(err)),
	    err);
}

/* chmod(path, mode) -> true | nil, err. */
static int
l_chmod(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.chmod", "path");
	mode_t mode;

	if (lua_isnoneornil(L, 2))
		l_wrong_type(L, 2, "core.chmod", "mode", "integer");
	mode = opt_mode(L, 2, "core.chmod", 0);
	if (chmod(path, mode) == -1) {
		lua_pushnil(L);
		lua_pushfstring(L, "cannot change mode of '%s': %s", path,
		    strerror(errno));
		return 2;
	}
	lua_pushboolean(L, 1);
	return 1;
}

static int
l_getuid(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)getuid());
	return 1;
}

static int
l_getgid(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)getgid());
	return 1;
}

static int
l_getpid(lua_State *L)
{
	lua_pushinteger(L, (lua_Integer)getpid());
	return 1;
}

/* pid_alive(pid) -> boolean: a process with this id exists. */
static int
l_pid_alive(lua_State *L)
{
	lua_Integer pid;

	if (!lua_isinteger(L, 1))
		l_wrong_type(L, 1, "core.pid_alive", "pid", "integer");
	pid = lua_tointeger(L, 1);
	lua_pushboolean(L,
	    pid > 0 && pid <= INT_MAX &&
		(kill((pid_t)pid, 0) == 0 || errno == EPERM));
	return 1;
}

static int
l_hostname(lua_State *L)
{
	char name[256];

	if (gethostname(name, sizeof(name)) == -1)
		return push_fail(L, strerror(errno));
	name[sizeof(name) - 1] = '\0';
	lua_pushstring(L, name);
	return 1;
}

/* getrlimit("nofile" | "nproc") -> soft, hard (math.huge: unlimited). */
static int
l_getrlimit(lua_State *L)
{
	const char *name = l_check_string(L, 1, "core.getrlimit", "name");
	struct rlimit rl;
	int res;

	if (strcmp(name, "nofile") == 0)
		res = RLIMIT_NOFILE;
	else if (strcmp(name, "nproc") == 0)
		res = RLIMIT_NPROC;
	else
		return l_wrong(L, "core.getrlimit", "name",
		    "unknown limit "
		    "'%s'",
		    name);
	if (getrlimit(res, &rl) == -1)
		return push_fail(L, strerror(errno));
	if (rl.rlim_cur == RLIM_INFINITY)
		lua_pushnumber(L, HUGE_VAL);
	else
		lua_pushinteger(L, (lua_Integer)rl.rlim_cur);
	if (rl.rlim_max == RLIM_INFINITY)
		lua_pushnumber(L, HUGE_VAL);
	else
		lua_pushinteger(L, (lua_Integer)rl.rlim_max);
	return 2;
}

/* realpath(path) -> absolute path | nil, err. */
static int
l_realpath(lua_State *L)
{
	const char *path = l_check_string(L, 1, "core.realpath", "path");
	char *r = realpath(path, NULL);

	if (r == NULL) {
		lua_pushnil(L);
		lua_pushfstring(L, "cannot resolve '%s': %s", path,
		    strerror(errno));
		return 2;
	}
	lua_pushstring(L, r);
	free(r);
	return 1;
}

/* exe_path() -> the running binary's absolute path | nil, err. */
static int
l_exe_path(lua_State *L)
{
	lua_settop(L, 0);
	lua_pushliteral(L, "/proc/self/exe");
	return l_realpath(L);
}

static const luaL_Reg proc_funcs[] = { { "run", l_run }, { "start", l_start },
	{ "wait_any", l_wait_any }, { "trap_signals", l_trap_signals },
	{ "interrupted", l_interrupted },
	{ "clear_interrupt", l_clear_interrupt }, { "now", l_now },
	{ "sleep", l_sleep }, { "tmpdir", l_tmpdir }, { "rmtree", l_rmtree },
	{ "mkdir_p", l_mkdir_p }, { "write_file", l_write_file },
	{ "read_file", l_read_file }, { "read_beneath", l_read_beneath },
	{ "files_beneath", l_files_beneath }, { "sha256", l_sha256 },
	{ "sha256_file", l_sha256_file }, { "listdir", l_listdir },
	{ "stat", l_stat }, { "chown", l_chown }, { "chmod", l_chmod },
	{ "getuid", l_getuid }, { "getgid", l_getgid }, { "getpid", l_getpid },
	{ "pid_alive", l_pid_alive }, { "hostname", l_hostname },
	{ "getrlimit", l_getrlimit }, { "realpath", l_realpath },
	{ "exe_path", l_exe_path }, { NULL, NULL } };

static const luaL_Reg process_methods[] = { { "wait", l_process_wait },
	{ "kill", l_process_kill }, { "pid", l_process_pid },
	{ "done", l_process_done }, { "close", l_process_close },
	{ NULL, NULL } };

static const luaL_Reg process_meta[] = { { "__gc", l_process_close },
	{ "__close", l_process_close }, { "__tostring", l_process_tostring },
	{ NULL, NULL } };

void
l_proc_register(lua_State *L)
{
	luaL_setfuncs(L, proc_funcs, 0);
	if (luaL_newmetatable(L, PROCESS_MT)) {
		luaL_setfuncs(L, process_meta, 0);
		luaL_newlib(L, process_methods);
		lua_setfield(L, -2, "__index");
	}
	lua_pop(L, 1);
}
