/*
 * Binding of uhttp.c, part of "leakbench.core": one HTTP request over a
 * Unix socket (podman.lua's service client). Misuse raises; a request
 * that does not complete returns nil, msg; any HTTP status is a result.
 */
#include <lauxlib.h>

#include "l_args.h"
#include "uhttp.h"

/*
 * uhttp(sock, method, path, [body], [timeout]) -> status, body | nil, msg.
 * timeout in seconds (default 60).
 */
static int
l_uhttp(lua_State *L)
{
	const char *fn = "core.uhttp";
	const char *sock = l_check_string(L, 1, fn, "sock");
	const char *method = l_check_string(L, 2, fn, "method");
	const char *path = l_check_string(L, 3, fn, "path");
	const char *body = NULL;
	size_t len = 0;
	lua_Number timeout = 60;
	struct uhttp_resp r;
	char err[512];

	if (!lua_isnoneornil(L, 4)) {
		if (lua_type(L, 4) != LUA_TSTRING)
			l_wrong_type(L, 4, fn, "body", "string");
		body = lua_tolstring(L, 4, &len);
	}
	if (!lua_isnoneornil(L, 5)) {
		if (!lua_isnumber(L, 5))
			l_wrong_type(L, 5, fn, "timeout", "number");
		timeout = lua_tonumber(L, 5);
		if (!(timeout > 0 && timeout <= 86400))
			l_wrong(L, fn, "timeout",
			    "expected 0 < seconds <= 86400");
	}
	if (uhttp_request(sock, method, path, body, len, (long)(timeout * 1000),
		&r, err, sizeof(err)) == -1)
		return l_fail(L, err);
	lua_pushinteger(L, r.status);
	lua_pushlstring(L, r.body, r.len);
	uhttp_resp_free(&r);
	return 2;
}

const luaL_Reg uhttp_funcs[] = { { "uhttp", l_uhttp }, { NULL, NULL } };
