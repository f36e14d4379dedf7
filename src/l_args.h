/*
 * Argument checks for the Lua bindings (l_*.c): the one grammar of their
 * misuse errors, after Tarantool's popen:
 *
 *	core.run: wrong parameter "opts.argv[2]": expected string, got number
 *
 * FN is the function as Lua code calls it ("core.run", "process:kill"),
 * WHAT the parameter's path from the caller's side ("opts.env.HOME",
 * "list[3]"). Every function here raises (luaL_error: the message gets
 * the caller's file:line) and never returns when it does. Failures of the
 * environment are not misuse: they return nil, msg (errmsg.h's grammar).
 */
#ifndef LEAKBENCH_L_ARGS_H
#define LEAKBENCH_L_ARGS_H

#include <lua.h>

/* Raises FN: wrong parameter "WHAT": expected EXPECTED, got <type at idx>. */
int l_wrong_type(lua_State *, int idx, const char *fn, const char *what,
    const char *expected);

/* Raises FN: wrong parameter "WHAT": <fmt, as lua_pushfstring>. */
int l_wrong(lua_State *, const char *fn, const char *what, const char *fmt,
    ...);

/* Pushes nil, MSG: a failure of the environment. Returns 2. */
int l_fail(lua_State *, const char *msg);

/*
 * Pushes nil and "ACTION 'SUBJECT': reason" (errmsg.h's grammar), or the
 * reason alone when ACTION is NULL; the reason is strerror(e), lowercased.
 * Returns 2.
 */
int l_fail_errno(lua_State *, const char *action, const char *subject, int e);

/* The string at idx, which must hold no NUL byte; raises otherwise. */
const char *l_check_string(lua_State *, int idx, const char *fn,
    const char *what);

/* As l_check_string, but NULL for nil or none. */
const char *l_opt_string(lua_State *, int idx, const char *fn,
    const char *what);

/*
 * The non-negative integer at idx, or def for nil or none; raises
 * ("expected a non-negative integer") otherwise.
 */
lua_Integer l_opt_count(lua_State *, int idx, const char *fn, const char *what,
    lua_Integer def);

#endif
