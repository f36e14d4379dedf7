/*
 * Lua bindings for proc.c, part of "leakbench.core": processes, signals
 * and the clock (l_fs.c binds fs.c, l_sys.c the system's facts). This file
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

/* Raises unless every key of the options table at index 1 is an option. */
static void
check_option_names(lua_State *L, const char *fn)
{
	char what[64];
	int k;

	lua_pushnil(L);
	while (lua_next(L, 1) != 0) {
		lua_pop(L, 1);
		if (lua_type(L, -1) != LUA_TSTRING)
			l_wrong(L, fn, "opts",
			    "expected option names, got a %s key",
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
}

/*
 * opts.argv as a NULL-terminated array, left on the stack as its anchor
 * with the list above it.
 */
static const char **
check_argv(lua_State *L, const char *fn)
{
	const char **argv;
	lua_Integer i, n;
	char what[64];

	lua_getfield(L, 1, "argv");
	if (!lua_istable(L, -1))
		l_wrong_type(L, -1, fn, "opts.argv", "a list of strings");
	n = (lua_Integer)lua_rawlen(L, -1);
	if (n == 0)
		l_wrong(L, fn, "opts.argv",
		    "expected a list of strings, got an empty table");
	argv = lua_newuserdatauv(L, (size_t)(n + 1) * sizeof(*argv), 0);
	for (i = 1; i <= n; i++) {
		lua_rawgeti(L, -2, i);
		snprintf(what, sizeof(what), "opts.argv[%lld]", (long long)i);
		argv[i - 1] = l_check_string(L, -1, fn, what);
		lua_pop(L, 1);
	}
	argv[n] = NULL;
	return argv;
}

/* Whether name[0..len) is a variable name: [A-Za-z_][A-Za-z0-9_]*. */
static int
env_name_ok(const char *name, size_t len)
{
	size_t j;

	for (j = 0; j < len; j++)
		if (!(name[j] == '_' || (name[j] >= 'A' && name[j] <= 'Z') ||
			(name[j] >= 'a' && name[j] <= 'z') ||
			(j > 0 && name[j] >= '0' && name[j] <= '9')))
			return 0;
	return len > 0;
}

/*
 * opts.env as a NULL-terminated array of "K=V", or NULL when there is
 * none; the table, the array and the strings' anchors stay on the stack.
 */
static const char **
check_env(lua_State *L, const char *fn)
{
	const char **env;
	lua_Integer i, n;
	char what[64];
	int t;

	lua_getfield(L, 1, "env");
	if (lua_isnil(L, -1))
		return NULL;
	t = lua_gettop(L);
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
		size_t len;

		if (lua_type(L, -2) != LUA_TSTRING)
			l_wrong(L, fn, "opts.env",
			    "expected variable names, got a %s key",
			    luaL_typename(L, -2));
		name = lua_tolstring(L, -2, &len);
		if (!env_name_ok(name, len))
			l_wrong(L, fn, "opts.env",
			    "expected variable names, got the key '%s'", name);
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
	return env;
}

/* opts.timeout, opts.grace, opts.max_output and opts.uninterruptible. */
static void
check_limits(lua_State *L, const char *fn, struct proc_opts *o)
{
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
			    "expected a positive number of bytes, got %s",
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

/*
 * Checks the options table at index 1 and fills o. Pushes anchors for the
 * arrays it builds; they must stay on the stack until proc_start returns.
 */
static void
check_run_opts(lua_State *L, const char *fn, struct proc_opts *o)
{
	memset(o, 0, sizeof(*o));
	if (!lua_istable(L, 1))
		l_wrong_type(L, 1, fn, "opts", "table");
	luaL_checkstack(L, 24, fn);
	check_option_names(L, fn);
	o->argv = check_argv(L, fn);
	o->env = check_env(L, fn);

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
	check_limits(L, fn, o);
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

/*
 * Checks the options at index 1 (fn's) and starts the process under a
 * handle on top of the stack, which __gc reaps if a later step raises.
 * The handle, or NULL with err set.
 */
static struct lproc *
start_handle(lua_State *L, const char *fn, char *err, size_t errlen)
{
	struct proc_opts o;
	struct lproc *h;

	check_run_opts(L, fn, &o);
	h = lua_newuserdatauv(L, sizeof(*h), 0);
	h->p = NULL;
	luaL_setmetatable(L, PROCESS_MT);
	if ((h->p = proc_start(&o, err, errlen)) == NULL)
		return NULL;
	return h;
}

/*
 * run(opts) -> result | nil, err. Raises on misuse. The child is always
 * reaped before this returns, also when a memory error is raised.
 */
static int
l_run(lua_State *L)
{
	struct proc_result r;
	struct lproc *h;
	char err[512];

	if ((h = start_handle(L, "core.run", err, sizeof(err))) == NULL)
		return l_fail(L, err);
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
	char err[512];

	if (start_handle(L, "core.start", err, sizeof(err)) == NULL)
		return l_fail(L, err);
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
		return l_fail(L, "timeout");
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
		return errno == ESRCH ? l_fail(L, "the process has finished") :
					l_fail_errno(L, NULL, NULL, errno);
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
		    "expected a list of processes, got an empty table");
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
		return l_fail(L, "timeout");
	if (rc == PROC_INTERRUPTED)
		return l_fail(L, "interrupted");
	proc_wait(ps[index], 0, &r);
	lua_pushinteger(L, index + 1);
	push_result(L, &r);
	return 2;
}

static int
l_trap_signals(lua_State *L)
{
	if (proc_trap_signals() == -1)
		return l_fail_errno(L, NULL, NULL, errno);
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

static const luaL_Reg proc_funcs[] = { { "run", l_run }, { "start", l_start },
	{ "wait_any", l_wait_any }, { "trap_signals", l_trap_signals },
	{ "interrupted", l_interrupted },
	{ "clear_interrupt", l_clear_interrupt }, { "now", l_now },
	{ "sleep", l_sleep }, { NULL, NULL } };

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
