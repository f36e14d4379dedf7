/*
 * The Lua host. Modules are looked up in package.preload so that
 * require "leakbench" never touches the file system; package.path keeps
 * only absolute entries (the loader adds a scenario directory's lib/).
 *
 * It also holds the budget under which scenario and subject files run
 * (module "leakbench.budget", for the loader only): a count hook that
 * bounds instructions and CPU time, and an allocator that bounds memory.
 * The hook is a C hook so that every coroutine a file creates inherits it
 * (lua_newthread copies a thread's hook; a debug.sethook Lua hook would
 * not fire in them). SIGINT or SIGTERM (proc_trap_signals) spends it
 * too, so a process told to stop is never held by a user's loop. Once a
 * budget is spent, the hook fires on every instruction and raises each
 * time, so a file that catches the error with pcall still cannot go on.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua-cjson.h>
#include <lualib.h>

#include "embedded.h"
#include "lhost.h"
#include "proc.h"

static int
traceback(lua_State *L)
{
	const char *msg = lua_tostring(L, 1);

	if (msg == NULL) {
		if (!lua_isnoneornil(L, 1) &&
		    luaL_callmeta(L, 1, "__tostring") &&
		    lua_type(L, -1) == LUA_TSTRING)
			return 1;
		if (lua_istable(L, 1))
			return 1; /* structured errors pass unchanged */
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

	if (!lua_checkstack(L, 1)) {
		/* as lua_pcall would: the function and its arguments give
		 * way to the error message */
		lua_settop(L, base - 1);
		lua_pushliteral(L, "lhost_pcall: no room on the Lua stack");
		return LUA_ERRMEM;
	}
	lua_pushcfunction(L, traceback);
	lua_insert(L, base);
	status = lua_pcall(L, nargs, nresults, base);
	lua_remove(L, base);
	return status;
}

/* Instructions between two looks at the budget. */
#define BUDGET_STEP 1000

/*
 * The budget of this process's state. A static, not the registry: the
 * allocator needs it before the state exists and on every allocation, and
 * there is one state per process (main.c owns it and lua_close()s it).
 */
static struct budget {
	long long used;	     /* bytes, relative to the start */
	long long mem_limit; /* used may not grow past it; 0: none */
	int armed;
	long long count, max_count;
	double deadline;  /* CLOCK_THREAD_CPUTIME_ID seconds */
	const char *over; /* "instructions", "time", "memory", "interrupted" */
	int chunk_ref;	  /* LUA_NOREF or the chunk to watch */
	int ret_line;	  /* line of its last return, or -1 */
	lua_Alloc base;	  /* the allocator we wrap */
	void *base_ud;
} budget = { .chunk_ref = LUA_NOREF, .ret_line = -1 };

/*
 * The CPU time this thread has used: a file's budget is the work it does,
 * so that a verdict never depends on how loaded the machine is (on wall
 * time, a file that allocates its way to the memory budget once hit the
 * time budget first on a machine running 20 other jobs). A Lua file has no
 * way to sleep, and the hook cannot interrupt a blocking C call anyway.
 */
static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The state's allocator: lauxlib's, counting, refusing past mem_limit. */
static void *
budget_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
	long long old = ptr != NULL ? (long long)osize : 0;
	void *p;

	(void)ud;
	if (nsize != 0 && budget.armed && budget.mem_limit != 0 &&
	    (long long)nsize > old &&
	    budget.used + ((long long)nsize - old) > budget.mem_limit) {
		if (budget.over == NULL)
			budget.over = "memory";
		return NULL; /* Lua collects and retries, then raises */
	}
	p = budget.base(budget.base_ud, ptr, osize, nsize);
	if (nsize == 0)
		budget.used -= old;
	else if (p != NULL)
		budget.used += (long long)nsize - old;
	return p;
}

static void
budget_hook(lua_State *L, lua_Debug *ar)
{
	if (ar->event == LUA_HOOKRET) {
		if (budget.chunk_ref == LUA_NOREF || !lua_getinfo(L, "fl", ar))
			return;
		lua_rawgeti(L, LUA_REGISTRYINDEX, budget.chunk_ref);
		if (lua_rawequal(L, -1, -2))
			budget.ret_line = ar->currentline;
		lua_pop(L, 2);
		return;
	}
	if (!budget.armed)
		return;
	if (budget.over == NULL) {
		budget.count += BUDGET_STEP;
		if (budget.count > budget.max_count)
			budget.over = "instructions";
		else if (now() > budget.deadline)
			budget.over = "time";
		else if (proc_interrupted() != 0)
			budget.over = "interrupted";
		else
			return;
	}
	/* spent: from now on, every instruction of this thread raises */
	lua_sethook(L, budget_hook, lua_gethookmask(L), 1);
	luaL_error(L, "budget exceeded (%s)", budget.over);
}

/*
 * budget.arm(co, instructions, seconds, memory [, chunk]): from now until
 * disarm, co and every coroutine it creates may run that many
 * instructions, for that long, and the state may grow by memory bytes
 * (0: no bound). With chunk, the line of chunk's last return is recorded.
 * Raises if a budget is already armed.
 */
static int
l_budget_arm(lua_State *L)
{
	lua_State *co = lua_tothread(L, 1);
	lua_Integer n = luaL_checkinteger(L, 2);
	lua_Number secs = luaL_checknumber(L, 3);
	lua_Integer mem = luaL_checkinteger(L, 4);

	luaL_argexpected(L, co != NULL, 1, "coroutine");
	if (budget.armed)
		return luaL_error(L, "budget.arm: a budget is already armed");
	budget.count = 0;
	budget.max_count = n;
	budget.deadline = now() + secs;
	budget.over = NULL;
	budget.ret_line = -1;
	budget.chunk_ref = LUA_NOREF;
	if (!lua_isnoneornil(L, 5)) {
		lua_pushvalue(L, 5);
		budget.chunk_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	}
	budget.mem_limit = mem > 0 ? budget.used + mem : 0;
	budget.armed = 1;
	lua_sethook(co, budget_hook,
	    LUA_MASKCOUNT | (budget.chunk_ref != LUA_NOREF ? LUA_MASKRET : 0),
	    BUDGET_STEP);
	return 0;
}

/*
 * budget.disarm(co) -> over ("instructions", "time", "memory" or nil),
 * the chunk's last return line (or nil), instructions run (about).
 */
static int
l_budget_disarm(lua_State *L)
{
	lua_State *co = lua_tothread(L, 1);

	luaL_argexpected(L, co != NULL, 1, "coroutine");
	lua_sethook(co, NULL, 0, 0);
	budget.armed = 0;
	budget.mem_limit = 0;
	luaL_unref(L, LUA_REGISTRYINDEX, budget.chunk_ref);
	budget.chunk_ref = LUA_NOREF;
	if (budget.over != NULL)
		lua_pushstring(L, budget.over);
	else
		lua_pushnil(L);
	if (budget.ret_line >= 0)
		lua_pushinteger(L, budget.ret_line);
	else
		lua_pushnil(L);
	lua_pushinteger(L, budget.count);
	return 3;
}

static const luaL_Reg budget_funcs[] = { { "arm", l_budget_arm },
	{ "disarm", l_budget_disarm }, { NULL, NULL } };

static int
luaopen_budget(lua_State *L)
{
	luaL_newlib(L, budget_funcs);
	return 1;
}

int
lhost_load_embedded(lua_State *L, const struct embedded_file *f)
{
	/*
	 * The bytecode, where this Lua takes it; else the text (a Lua library
	 * at run time other than the one that compiled it refuses it).
	 */
	if (f->code != NULL &&
	    luaL_loadbufferx(L, f->code, f->code_len, f->chunkname, "b") ==
		LUA_OK)
		return LUA_OK;
	if (f->code != NULL)
		lua_pop(L, 1);
	return luaL_loadbufferx(L, f->text, f->len, f->chunkname, "t");
}

/* package.preload loader for an embedded module: upvalue 1 is its index. */
static int
load_embedded(lua_State *L)
{
	const struct embedded_file
	    *f = &embedded_files[lua_tointeger(L, lua_upvalueindex(1))];

	if (lhost_load_embedded(L, f) != LUA_OK)
		return lua_error(L);
	lua_pushstring(L, f->module);
	lua_call(L, 1, 1);
	return 1;
}

/*
 * package[field] with only its absolute entries: "./?.lua" would let a file
 * in whatever directory leakbench runs from shadow a module (STYLE rule
 * 12). The loader adds a scenario directory's lib/ itself.
 */
static void
absolute_only(lua_State *L, const char *field)
{
	const char *p, *e;
	luaL_Buffer b;
	int first = 1;

	lua_getfield(L, -1, field);
	p = lua_tostring(L, -1);
	luaL_buffinit(L, &b);
	while (p != NULL && *p != '\0') {
		e = strchr(p, ';');
		if (e == NULL)
			e = p + strlen(p);
		if (*p == '/') {
			if (!first)
				luaL_addchar(&b, ';');
			luaL_addlstring(&b, p, (size_t)(e - p));
			first = 0;
		}
		p = *e == ';' ? e + 1 : e;
	}
	luaL_pushresult(&b);
	lua_setfield(L, -3, field);
	lua_pop(L, 1);
}

lua_State *
lhost_new(void)
{
	lua_State *L = luaL_newstate();
	int i;

	if (L == NULL)
		return NULL;
	budget.base = lua_getallocf(L, &budget.base_ud);
	budget.used = 0;
	lua_setallocf(L, budget_alloc, NULL);
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
	lua_getglobal(L, "package");
	absolute_only(L, "path");
	absolute_only(L, "cpath");
	lua_pop(L, 1);
	luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
	lua_pushcfunction(L, luaopen_cjson);
	lua_setfield(L, -2, "cjson");
	lua_pushcfunction(L, luaopen_leakbench_core);
	lua_setfield(L, -2, "leakbench.core");
	lua_pushcfunction(L, luaopen_budget);
	lua_setfield(L, -2, "leakbench.budget");
	for (i = 0; embedded_files[i].module != NULL; i++) {
		lua_pushinteger(L, i);
		lua_pushcclosure(L, load_embedded, 1);
		lua_setfield(L, -2, embedded_files[i].module);
	}
	lua_pop(L, 1);
	return L;
}
