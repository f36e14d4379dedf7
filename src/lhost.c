/*
 * The Lua host. Modules are looked up in package.preload so that
 * require "leakbench" never touches the file system; package.path keeps
 * only absolute entries (the loader adds a scenario directory's lib/).
 */
#include <lauxlib.h>
#include <lua-cjson.h>
#include <lualib.h>

#include "embedded.h"
#include "lhost.h"

static int
traceback(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);

	if (msg == NULL) {
		if (!lua_isnoneornil(L, 1) && luaL_callmeta(L, 1, "__tostring") &&
		    lua_type(L, -1) == LUA_TSTRING)
			return 1;
		if (lua_istable(L, 1))
			return 1;	/* structured errors pass unchanged */
		msg = lua_pushfstring(L, "(error object is a %s value)",
		    luaL_typename(L, 1));
	}
	luaL_traceback(L, L, msg, 1);
	return 1;
}

int
lhost_pcall(lua_State *L, int nargs, int nresults)
{
	int base = lua_gettop(L) - nargs;
	int status;

	lua_pushcfunction(L, traceback);
	lua_insert(L, base);
	status = lua_pcall(L, nargs, nresults, base);
	lua_remove(L, base);
	return status;
}

/* package.preload loader for an embedded module: upvalue 1 is its index. */
static int
load_embedded(lua_State *L)
{
	const struct embedded_file *f =
	    &embedded_files[lua_tointeger(L, lua_upvalueindex(1))];

	if (luaL_loadbufferx(L, f->text, f->len, f->chunkname, "t") != LUA_OK)
		return lua_error(L);
	lua_pushstring(L, f->module);
	lua_call(L, 1, 1);
	return 1;
}

lua_State *
lhost_new(void)
{
	lua_State *L = luaL_newstate();
	int i;

	if (L == NULL)
		return NULL;
	luaL_openlibs(L);
	/*
	 * Every string shares one metatable, whose __index is the string
	 * library: protect it, so getmetatable("") cannot hand a scenario
	 * file the host's string table to patch (issue 13, finding 1).
	 */
	lua_pushliteral(L, "");
	if (lua_getmetatable(L, -1)) {
		lua_pushboolean(L, 0);
		lua_setfield(L, -2, "__metatable");
		lua_pop(L, 1);
	}
	lua_pop(L, 1);
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	lua_pushcfunction(L, luaopen_cjson);
	lua_setfield(L, -2, "cjson");
	lua_pushcfunction(L, luaopen_leakbench_core);
	lua_setfield(L, -2, "leakbench.core");
	for (i = 0; embedded_files[i].module != NULL; i++) {
		lua_pushinteger(L, i);
		lua_pushcclosure(L, load_embedded, 1);
		lua_setfield(L, -2, embedded_files[i].module);
	}
	lua_pop(L, 1);
	return L;
}
