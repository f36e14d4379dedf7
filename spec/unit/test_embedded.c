/*
 * The embedded Lua layer (src/embed.sh, embedded.h): every module's
 * bytecode is taken by the Lua leakbench links (a build whose bytecode were
 * refused would parse every module at every start, unseen), it is the same
 * chunk as the text (same source name, same lines, same result), and a
 * module whose bytecode is refused loads from its text.
 */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "embedded.h"
#include "lhost.h"
#include "tap.h"

/* "SOURCE:LINE" of the chunk on top of the stack, as debug.getinfo gives
 * them: its source name and the line it is defined at. */
static void
source_of(lua_State *L, char *out, size_t size)
{
	lua_Debug ar;

	lua_pushvalue(L, -1);
	lua_getinfo(L, ">S", &ar);
	snprintf(out, size, "%s:%d", ar.source, ar.linedefined);
}

static void
test_bytecode(void)
{
	lua_State *L = luaL_newstate();
	size_t i, n = 0, taken = 0, same = 0;
	char a[512], b[512];

	for (i = 0; embedded_files[i].module != NULL; i++) {
		const struct embedded_file *f = &embedded_files[i];

		n++;
		if (luaL_loadbufferx(L, f->code, f->code_len, f->chunkname,
			"b") != LUA_OK) {
			printf("# %s: bytecode refused: %s\n", f->module,
			    lua_tostring(L, -1));
			lua_pop(L, 1);
			continue;
		}
		taken++;
		source_of(L, a, sizeof(a));
		lua_pop(L, 1);
		if (luaL_loadbufferx(L, f->text, f->len, f->chunkname, "t") !=
		    LUA_OK) {
			printf("# %s: text refused: %s\n", f->module,
			    lua_tostring(L, -1));
			lua_pop(L, 1);
			continue;
		}
		source_of(L, b, sizeof(b));
		lua_pop(L, 1);
		if (strcmp(a, b) == 0 &&
		    strncmp(a, f->chunkname, strlen(f->chunkname)) == 0)
			same++;
		else
			printf("# %s: bytecode %s, text %s\n", f->module, a, b);
	}
	ok(n > 30, "embedded: %zu modules", n);
	is_int(taken, n, "embedded: every module's bytecode is taken");
	is_int(same, n,
	    "embedded: each bytecode names its source, as the text");
	lua_close(L);
}

static void
test_fallback(void)
{
	lua_State *L = lhost_new();
	struct embedded_file f = embedded_files[0];
	char bad[64];
	int status;

	/* a bytecode another Lua wrote: a header this one refuses */
	memcpy(bad, f.code, sizeof(bad));
	bad[4] = (char)0x53; /* the version byte: 5.3 */
	f.code = bad;
	f.code_len = sizeof(bad);
	status = lhost_load_embedded(L, &f);
	is_int(status, LUA_OK, "fallback: a refused bytecode loads the text");
	is_int(lua_gettop(L), 1, "fallback: the chunk alone on the stack");
	lua_settop(L, 0);
	/* no bytecode at all */
	f.code = NULL;
	f.code_len = 0;
	is_int(lhost_load_embedded(L, &f), LUA_OK, "fallback: no bytecode");
	lua_settop(L, 0);
	/* text that is no Lua, and no bytecode: the parser's message */
	f.text = "local = 1";
	f.len = strlen(f.text);
	f.chunkname = "@src/lua/broken.lua";
	is_int(lhost_load_embedded(L, &f), LUA_ERRSYNTAX,
	    "fallback: a broken text fails as a syntax error");
	ok(strstr(lua_tostring(L, -1), "src/lua/broken.lua:1:") != NULL,
	    "fallback: its message names the file and line: %s",
	    lua_tostring(L, -1));
	lua_close(L);
}

/* The modules through require, as leakbench loads them: a module's
 * function names its file, and a traceback through one its lines. */
static void
test_require(void)
{
	lua_State *L = lhost_new();
	const char *prog =
	    "local j = require 'leakbench.json'\n"
	    "local s = debug.getinfo(j.encode, 'S').source\n"
	    "local _, tb = xpcall(require('leakbench').expect, debug.traceback,"
	    " nil, 1)\n"
	    "return s, tb\n";

	if (luaL_loadstring(L, prog) != LUA_OK ||
	    lhost_pcall(L, 0, 2) != LUA_OK) {
		ok(0, "require: %s", lua_tostring(L, -1));
		lua_close(L);
		return;
	}
	is_str(lua_tostring(L, -2), "@src/lua/json.lua",
	    "require: a module's function names its file");
	ok(strstr(lua_tostring(L, -1), "src/lua/args.lua:") != NULL &&
		strstr(lua_tostring(L, -1), "src/lua/leakbench.lua:") != NULL,
	    "require: a traceback names the modules' files and lines");
	lua_close(L);
}

int
main(void)
{
	test_bytecode();
	test_fallback();
	test_require();
	return tap_done();
}
