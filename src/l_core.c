/*
 * "leakbench.core": the C primitives under the Lua layer. Scenario authors
 * never see this table; src/lua/leakbench.lua wraps it. Binding functions
 * only move values between the stack and the core; each says which errors
 * raise (misuse) and which return nil, message (the environment).
 */
#include <string.h>

#include <lauxlib.h>
#include <uuid.h>

#include "l_args.h"
#include "lhost.h"
#include "l_proc.h"
#include "l_watch.h"

extern const luaL_Reg scan_funcs[];  /* l_scan.c: the leak scanner */
extern const luaL_Reg sys_funcs[];   /* l_sys.c: the host's facts */
extern const luaL_Reg fs_funcs[];    /* l_fs.c: files and directories */
extern const luaL_Reg uhttp_funcs[]; /* l_uhttp.c: HTTP over a Unix socket */

/*
 * canary([prefix]) -> string. The prefix, then 32 random hex digits from
 * libuuid (122 bits of entropy once the version bits are dropped: enough
 * that two runs never share a secret and ordinary text never holds one).
 */
static int
l_canary(lua_State *L)
{
	const char *prefix = lua_isnoneornil(L, 1) ?
	    "LEAKBENCH-CANARY-" :
	    l_check_string(L, 1, "core.canary", "prefix");
	static const char hex[] = "0123456789abcdef";
	unsigned char u[16];
	char out[32];
	int i;

	uuid_generate_random(u);
	for (i = 0; i < 16; i++) {
		out[2 * i] = hex[u[i] >> 4];
		out[2 * i + 1] = hex[u[i] & 15];
	}
	lua_pushstring(L, prefix);
	lua_pushlstring(L, out, sizeof(out));
	lua_concat(L, 2);
	return 1;
}

/* uuid() -> a fresh random UUID string, for session ids and run ids. */
static int
l_uuid(lua_State *L)
{
	uuid_t u;
	char s[37];

	uuid_generate_random(u);
	uuid_unparse_lower(u, s);
	lua_pushstring(L, s);
	return 1;
}

static const luaL_Reg core_funcs[] = { { "canary", l_canary },
	{ "uuid", l_uuid }, { NULL, NULL } };

int
luaopen_leakbench_core(lua_State *L)
{
	luaL_newlib(L, core_funcs);
	luaL_setfuncs(L, scan_funcs, 0);
	luaL_setfuncs(L, sys_funcs, 0);
	luaL_setfuncs(L, fs_funcs, 0);
	luaL_setfuncs(L, uhttp_funcs, 0);
	l_proc_register(L);
	l_watch_register(L);
	return 1;
}
