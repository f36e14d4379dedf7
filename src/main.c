/*
 * leakbench: the program. The command line is parsed and dispatched by the
 * embedded Lua module "leakbench.cli"; C only creates the state, hands it
 * the arguments and turns an uncaught error into "leakbench: message".
 *
 * "leakbench lua SCRIPT [ARGS...]" runs a Lua script in a state that has the
 * leakbench modules, like lua(1); the test suite runs busted this way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lualib.h>

#include "lhost.h"

/* Sets the global "arg" as lua.c does: arg[0] is the script. */
static void
set_arg(lua_State *L, int argc, char **argv, int script)
{
	int i;

	lua_createtable(L, argc - script - 1, script + 1);
	for (i = 0; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - script);
	}
	lua_setglobal(L, "arg");
}

static int
run_script(lua_State *L, int argc, char **argv)
{
	int i, n;

	if (argc < 3) {
		fprintf(stderr,
		    "leakbench: usage: leakbench lua SCRIPT [ARGS...]\n");
		return 2;
	}
	set_arg(L, argc, argv, 2);
	if (luaL_loadfilex(L, argv[2], "t") != LUA_OK)
		return -1;
	n = argc - 3;
	/* the stack holds LUA_MINSTACK values at first: room for every
	 * argument, and for lhost_pcall's message handler */
	if (!lua_checkstack(L, n + 1)) {
		fprintf(stderr, "leakbench: lua: too many arguments (%d)\n", n);
		return 2;
	}
	for (i = 3; i < argc; i++)
		lua_pushstring(L, argv[i]);
	if (lhost_pcall(L, n, 0) != LUA_OK)
		return -1;
	return 0;
}

static int
run_cli(lua_State *L, int argc, char **argv)
{
	int i;

	lua_getglobal(L, "require");
	lua_pushliteral(L, "leakbench.cli");
	if (lhost_pcall(L, 1, 1) != LUA_OK)
		return -1;
	lua_getfield(L, -1, "main");
	lua_createtable(L, argc, 0);
	for (i = 1; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i);
	}
	if (lhost_pcall(L, 1, 1) != LUA_OK)
		return -1;
	return (int)luaL_optinteger(L, -1, 0);
}

int
main(int argc, char **argv)
{
	lua_State *L;
	int status;

	L = lhost_new();
	if (L == NULL) {
		fprintf(stderr,
		    "leakbench: cannot create lua state: out of memory\n");
		return 1;
	}
	if (argc > 1 && strcmp(argv[1], "lua") == 0)
		status = run_script(L, argc, argv);
	else
		status = run_cli(L, argc, argv);
	if (status < 0) {
		const char *msg = lua_tostring(L, -1);

		fprintf(stderr, "leakbench: %s\n",
		    msg ? msg : "(error object)");
		status = 1;
	}
	lua_close(L);
	return status;
}
