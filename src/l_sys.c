/*
 * Facts about the host and this process, part of "leakbench.core": the
 * number of usable cores, whether a descriptor is a terminal and its width,
 * ids, whether a process exists, the host name and resource limits. ncpu
 * falls back to 1; hostname and getrlimit return nil, message when the
 * system fails; term_width returns nil when there is no width. And a run's
 * own network namespace at a path (netns.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <lauxlib.h>

#include "conmon.h"
#include "embedded.h"
#include "l_args.h"
#include "lhost.h"
#include "netns.h"

/* ncpu() -> the number of cores this process may run on (at least 1). */
static int
l_ncpu(lua_State *L)
{
	cpu_set_t set;
	long n = 0;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	if (n < 1)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	lua_pushinteger(L, n < 1 ? 1 : n);
	return 1;
}

/* isatty(fd) -> boolean. */
static int
l_isatty(lua_State *L)
{
	if (!lua_isinteger(L, 1))
		l_wrong_type(L, 1, "core.isatty", "fd", "integer");
	lua_pushboolean(L, isatty((int)lua_tointeger(L, 1)) == 1);
	return 1;
}

/*
 * term_width(fd) -> the columns of the terminal on fd, or nil when fd is
 * not a terminal or the terminal does not say (a width of 0).
 */
static int
l_term_width(lua_State *L)
{
	struct winsize ws;

	if (!lua_isinteger(L, 1))
		l_wrong_type(L, 1, "core.term_width", "fd", "integer");
	if (ioctl((int)lua_tointeger(L, 1), TIOCGWINSZ, &ws) == -1 ||
	    ws.ws_col == 0) {
		lua_pushnil(L);
		return 1;
	}
	lua_pushinteger(L, ws.ws_col);
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
		return l_fail_errno(L, NULL, NULL, errno);
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
		    "unknown limit '%s'", name);
	if (getrlimit(res, &rl) == -1)
		return l_fail_errno(L, NULL, NULL, errno);
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

/* conmon_real() -> the conmon lb-conmon runs (conmon.h) | nil. */
static int
l_conmon_real(lua_State *L)
{
	char buf[256];

	if (conmon_real(conmon_paths, "/proc/self/exe", buf, sizeof(buf)) ==
	    NULL)
		lua_pushnil(L);
	else
		lua_pushstring(L, buf);
	return 1;
}

/* conmon_helper() -> the bytes of lb-conmon's binary (embedded.h). */
static int
l_conmon_helper(lua_State *L)
{
	lua_pushlstring(L, (const char *)lb_conmon_bin, lb_conmon_bin_size);
	return 1;
}

/* OP (netns.h) on the path at 1: true | nil, "STEP 'PATH': reason". */
static int
netns_op(lua_State *L, const char *fn, int (*op)(const char *, const char **))
{
	const char *path = l_check_string(L, 1, fn, "path");
	const char *step;

	if (op(path, &step) == -1)
		return l_fail_errno(L, step, path, errno);
	lua_pushboolean(L, 1);
	return 1;
}

/*
 * netns_make(path) -> true | nil, message: a network namespace with its
 * loopback up, kept at PATH, a new file (netns.h). Root only.
 */
static int
l_netns_make(lua_State *L)
{
	return netns_op(L, "core.netns_make", netns_make);
}

/*
 * netns_drop(path) -> true | nil, message: PATH unmounted and removed (the
 * namespace lives on while a process is in it); none there is success.
 */
static int
l_netns_drop(lua_State *L)
{
	return netns_op(L, "core.netns_drop", netns_drop);
}

/* A set of descriptors netns_listen handed back, closed with it. */
#define FDSET_MT "leakbench.fdset"
struct fdset {
	int n;
	int fd[NETNS_FDS_MAX];
};

/* fdset:close(): every descriptor closed (again: nothing). */
static int
l_fdset_close(lua_State *L)
{
	struct fdset *s = luaL_checkudata(L, 1, FDSET_MT);
	int i;

	for (i = 0; i < s->n; i++)
		close(s->fd[i]);
	s->n = 0;
	return 0;
}

/* fdset:list() -> the descriptors, in order ({} once closed). */
static int
l_fdset_list(lua_State *L)
{
	struct fdset *s = luaL_checkudata(L, 1, FDSET_MT);
	int i;

	lua_createtable(L, s->n, 0);
	for (i = 0; i < s->n; i++) {
		lua_pushinteger(L, s->fd[i]);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

/* The strings of the array at IDX (at most MAX) into OUT; the count. */
static int
string_list(lua_State *L, int idx, const char *fn, const char *what,
    const char **out, int max)
{
	int i, n;

	luaL_checktype(L, idx, LUA_TTABLE);
	n = (int)luaL_len(L, idx);
	if (n > max)
		return l_wrong(L, fn, what, "at most %d", max);
	for (i = 0; i < n; i++) {
		lua_rawgeti(L, idx, i + 1);
		out[i] = l_check_string(L, -1, fn, what);
		lua_pop(L, 1); /* the table holds it */
	}
	return n;
}

/*
 * netns_listen(path, socks, [sim_port]) -> fdset | nil, message: the
 * sockets SOCKS ("tcp:A.B.C.D:PORT" or "udp:..."), then, with SIM_PORT,
 * the simulated internet's three, made in the namespace kept at PATH
 * (netns.h). Root only.
 */
static int
l_netns_listen(lua_State *L)
{
	const char *fn = "core.netns_listen", *socks[NETNS_FDS_MAX];
	const char *path = l_check_string(L, 1, fn, "path");
	int n = string_list(L, 2, fn, "socks", socks, NETNS_FDS_MAX);
	lua_Integer port = l_opt_count(L, 3, fn, "sim_port", 0);
	struct fdset *s;
	char err[512];

	if (port > 65535)
		return l_wrong(L, fn, "sim_port", "expected a port");
	s = lua_newuserdatauv(L, sizeof(*s), 0);
	s->n = 0;
	if (luaL_newmetatable(L, FDSET_MT)) {
		lua_pushcfunction(L, l_fdset_close);
		lua_setfield(L, -2, "__gc");
		lua_pushcfunction(L, l_fdset_close);
		lua_setfield(L, -2, "__close");
		lua_newtable(L);
		lua_pushcfunction(L, l_fdset_close);
		lua_setfield(L, -2, "close");
		lua_pushcfunction(L, l_fdset_list);
		lua_setfield(L, -2, "list");
		lua_setfield(L, -2, "__index");
	}
	lua_setmetatable(L, -2);
	s->n = netns_listen(path, socks, n, (int)port, s->fd, err, sizeof(err));
	if (s->n < 0) {
		s->n = 0;
		return l_fail(L, err);
	}
	return 1;
}

/*
 * netns_read(path, names, [cap]) -> { name = text } | nil, message: each
 * of /proc/net/NAMES as seen from the namespace kept at PATH, at most CAP
 * bytes each (4 MiB). Root only.
 */
static int
l_netns_read(lua_State *L)
{
	const char *fn = "core.netns_read", *names[16];
	const char *path = l_check_string(L, 1, fn, "path");
	int n = string_list(L, 2, fn, "names", names, 16), i;
	lua_Integer cap = l_opt_count(L, 3, fn, "cap", 4 << 20);
	char *out[16], err[512];

	for (i = 0; i < n; i++)
		if (names[i][0] == '\0' || strchr(names[i], '/') != NULL ||
		    names[i][0] == '.')
			return l_wrong(L, fn, "names",
			    "'%s' is not a file name", names[i]);
	if (cap > INT_MAX)
		return l_wrong(L, fn, "cap", "at most %d", INT_MAX);
	if (netns_read(path, names, n, out, (size_t)cap, err, sizeof(err)) ==
	    -1)
		return l_fail(L, err);
	lua_createtable(L, 0, n);
	for (i = 0; i < n; i++) {
		lua_pushstring(L, out[i]);
		lua_setfield(L, -2, names[i]);
		free(out[i]);
	}
	return 1;
}

const luaL_Reg sys_funcs[] = { { "ncpu", l_ncpu }, { "isatty", l_isatty },
	{ "term_width", l_term_width }, { "getuid", l_getuid },
	{ "getgid", l_getgid }, { "getpid", l_getpid },
	{ "pid_alive", l_pid_alive }, { "hostname", l_hostname },
	{ "getrlimit", l_getrlimit }, { "conmon_real", l_conmon_real },
	{ "conmon_helper", l_conmon_helper }, { "netns_make", l_netns_make },
	{ "netns_drop", l_netns_drop }, { "netns_listen", l_netns_listen },
	{ "netns_read", l_netns_read }, { NULL, NULL } };
