/*
 * Argument checks for the Lua bindings, in one grammar (see l_args.h).
 */
#include <stdarg.h>
#include <string.h>

#include <lauxlib.h>

#include "common/errmsg.h"
#include "l_args.h"

int
l_wrong_type(lua_State *L, int idx, const char *fn, const char *what,
    const char *expected)
{
	return luaL_error(L, "%s: wrong parameter \"%s\": expected %s, got %s",
	    fn, what, expected, luaL_typename(L, idx));
}

int
l_wrong(lua_State *L, const char *fn, const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lua_pushvfstring(L, fmt, ap);
	va_end(ap);
	return luaL_error(L, "%s: wrong parameter \"%s\": %s", fn, what,
	    lua_tostring(L, -1));
}

int
l_fail(lua_State *L, const char *msg)
{
	lua_pushnil(L);
	lua_pushstring(L, msg);
	return 2;
}

int
l_fail_errno(lua_State *L, const char *action, const char *subject, int e)
{
	char msg[512];

	if (action == NULL)
		errmsg_strerror(e, msg, sizeof(msg));
	else
		errmsg_set(msg, sizeof(msg), action, subject, e);
	return l_fail(L, msg);
}

const char *
l_check_string(lua_State *L, int idx, const char *fn, const char *what)
{
	size_t len;
	const char *s;

	if (lua_type(L, idx) != LUA_TSTRING)
		l_wrong_type(L, idx, fn, what, "string");
	s = lua_tolstring(L, idx, &len);
	if (strlen(s) != len)
		l_wrong(L, fn, what, "contains a NUL byte");
	return s;
}

const char *
l_opt_string(lua_State *L, int idx, const char *fn, const char *what)
{
	return lua_isnoneornil(L, idx) ? NULL :
					 l_check_string(L, idx, fn, what);
}

lua_Integer
l_opt_count(lua_State *L, int idx, const char *fn, const char *what,
    lua_Integer def)
{
	if (lua_isnoneornil(L, idx))
		return def;
	if (!lua_isinteger(L, idx) || lua_tointeger(L, idx) < 0)
		l_wrong_type(L, idx, fn, what, "a non-negative integer");
	return lua_tointeger(L, idx);
}
