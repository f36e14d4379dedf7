/*
 * Small facts about the host for the runner: the number of usable cores
 * and whether a descriptor is a terminal. Neither can fail in a way the
 * caller must handle: ncpu falls back to 1.
 */
#include <sched.h>
#include <unistd.h>

#include <lauxlib.h>

#include "l_args.h"
#include "lhost.h"

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

const luaL_Reg sys_funcs[] = { { "ncpu", l_ncpu }, { "isatty", l_isatty },
	{ NULL, NULL } };
