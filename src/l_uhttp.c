/*
 * Binding of uhttp.c, part of "leakbench.core": HTTP requests over a Unix
 * socket (podman.lua's service client), one at a time (core.uhttp) or
 * several in flight together (core.uhttp_start, a job per request, each
 * in a thread of its own). Misuse raises; a request that does not
 * complete returns nil, msg; any HTTP status is a result.
 *
 * core.uhttp_fds sends one request with descriptors along (fdpass.h), as
 * the harness hands a run's sockets to lb-net --pool.
 *
 * A job is a userdata "leakbench.uhttp_job" holding its struct uhttp_job
 * until job:wait() or its __close/__gc, which wait for the request to end
 * (bounded by its timeout) and free it; closing twice is harmless.
 */
#include <stdio.h>

#include <lauxlib.h>

#include "fdpass.h"
#include "l_args.h"
#include "uhttp.h"

#define JOB_MT "leakbench.uhttp_job"

/* The arguments of a request, from index 1 of the stack. */
struct req {
	const char *sock, *method, *path, *body;
	size_t len;
	long timeout_ms;
};

/*
 * (sock, method, path, [body]) into *r, and the timeout at index T (in
 * seconds, default 60); raises for misuse.
 */
static void
check_req(lua_State *L, const char *fn, struct req *r, int t)
{
	lua_Number timeout = 60;

	r->sock = l_check_string(L, 1, fn, "sock");
	r->method = l_check_string(L, 2, fn, "method");
	r->path = l_check_string(L, 3, fn, "path");
	r->body = NULL;
	r->len = 0;
	if (!lua_isnoneornil(L, 4)) {
		if (lua_type(L, 4) != LUA_TSTRING)
			l_wrong_type(L, 4, fn, "body", "string");
		r->body = lua_tolstring(L, 4, &r->len);
	}
	if (!lua_isnoneornil(L, t)) {
		if (!lua_isnumber(L, t))
			l_wrong_type(L, t, fn, "timeout", "number");
		timeout = lua_tonumber(L, t);
		if (!(timeout > 0 && timeout <= 86400))
			l_wrong(L, fn, "timeout",
			    "expected 0 < seconds <= 86400");
	}
	r->timeout_ms = (long)(timeout * 1000);
}

/* status, body of a completed request (and frees *resp), or nil, err. */
static int
push_result(lua_State *L, int ret, struct uhttp_resp *resp, const char *err)
{
	if (ret == -1)
		return l_fail(L, err);
	lua_pushinteger(L, resp->status);
	lua_pushlstring(L, resp->body, resp->len);
	uhttp_resp_free(resp);
	return 2;
}

/* uhttp(sock, method, path, [body], [timeout]) -> status, body | nil, msg. */
static int
l_uhttp(lua_State *L)
{
	struct req q;
	struct uhttp_resp r;
	char err[512];
	int ret;

	check_req(L, "core.uhttp", &q, 5);
	ret = uhttp_request(q.sock, q.method, q.path, q.body, q.len,
	    q.timeout_ms, &r, err, sizeof(err));
	return push_result(L, ret, &r, err);
}

/*
 * The array of descriptors at index 5 into FDS (FDPASS_MAX of room);
 * their count. Raises for misuse: not a table, more than FDPASS_MAX, an
 * item not an integer >= 0.
 */
static int
check_fds(lua_State *L, const char *fn, int *fds)
{
	char what[32];
	lua_Integer fd;
	lua_Unsigned n, i;

	if (lua_type(L, 5) != LUA_TTABLE)
		l_wrong_type(L, 5, fn, "fds", "table");
	n = lua_rawlen(L, 5);
	if (n > FDPASS_MAX)
		l_wrong(L, fn, "fds", "expected at most %d descriptors",
		    FDPASS_MAX);
	for (i = 1; i <= n; i++) {
		lua_rawgeti(L, 5, (lua_Integer)i);
		snprintf(what, sizeof(what), "fds[%d]", (int)i);
		if (!lua_isinteger(L, -1))
			l_wrong_type(L, -1, fn, what, "integer");
		fd = lua_tointeger(L, -1);
		if (fd < 0 || fd > 0x7fffffff)
			l_wrong(L, fn, what, "expected a descriptor >= 0");
		fds[i - 1] = (int)fd;
		lua_pop(L, 1);
	}
	return (int)n;
}

/*
 * uhttp_fds(sock, method, path, body, fds, [timeout]) -> status, body |
 * nil, msg: core.uhttp's request with the descriptors of the array fds
 * sent along (SCM_RIGHTS), the caller's own left open; body may be nil.
 */
static int
l_uhttp_fds(lua_State *L)
{
	struct req q;
	struct uhttp_resp r;
	char err[512];
	int fds[FDPASS_MAX], n, ret;

	check_req(L, "core.uhttp_fds", &q, 6);
	n = check_fds(L, "core.uhttp_fds", fds);
	ret = fdpass_request(q.sock, q.method, q.path, q.body, q.len, fds, n,
	    q.timeout_ms, &r, err, sizeof(err));
	return push_result(L, ret, &r, err);
}

/* __gc, __close and job:close(): waits for the request, drops its answer. */
static int
l_job_close(lua_State *L)
{
	struct uhttp_job **j = luaL_checkudata(L, 1, JOB_MT);
	struct uhttp_resp r;
	char err[512];

	if (*j != NULL) {
		if (uhttp_finish(*j, &r, err, sizeof(err)) == 0)
			uhttp_resp_free(&r);
		*j = NULL;
	}
	return 0;
}

static struct uhttp_job *
check_job(lua_State *L, const char *fn)
{
	struct uhttp_job **j = luaL_checkudata(L, 1, JOB_MT);

	if (*j == NULL)
		luaL_error(L, "%s: the job was waited for or closed", fn);
	return *j;
}

/* job:done() -> whether its request has ended (job:wait would not block). */
static int
l_job_done(lua_State *L)
{
	lua_pushboolean(L, uhttp_done(check_job(L, "job:done")));
	return 1;
}

/* job:wait() -> status, body | nil, msg: once; the job is closed after. */
static int
l_job_wait(lua_State *L)
{
	struct uhttp_job **j = luaL_checkudata(L, 1, JOB_MT);
	struct uhttp_resp r;
	char err[512];
	int ret;

	check_job(L, "job:wait");
	ret = uhttp_finish(*j, &r, err, sizeof(err));
	*j = NULL;
	return push_result(L, ret, &r, err);
}

static const luaL_Reg job_methods[] = { { "done", l_job_done },
	{ "wait", l_job_wait }, { "close", l_job_close }, { NULL, NULL } };

static const luaL_Reg job_meta[] = { { "__gc", l_job_close },
	{ "__close", l_job_close }, { NULL, NULL } };

/*
 * uhttp_start(sock, method, path, [body], [timeout]) -> job | nil, msg:
 * the request of core.uhttp, sent from a thread of its own.
 */
static int
l_uhttp_start(lua_State *L)
{
	struct uhttp_job **j;
	struct req q;
	char err[512];

	check_req(L, "core.uhttp_start", &q, 5);
	/* created closed, before the thread starts: raises nothing after */
	j = lua_newuserdatauv(L, sizeof(*j), 0);
	*j = NULL;
	if (luaL_newmetatable(L, JOB_MT)) {
		luaL_setfuncs(L, job_meta, 0);
		lua_newtable(L);
		luaL_setfuncs(L, job_methods, 0);
		lua_setfield(L, -2, "__index");
	}
	lua_setmetatable(L, -2);
	*j = uhttp_start(q.sock, q.method, q.path, q.body, q.len, q.timeout_ms,
	    err, sizeof(err));
	if (*j == NULL)
		return l_fail(L, err);
	return 1;
}

const luaL_Reg uhttp_funcs[] = { { "uhttp", l_uhttp },
	{ "uhttp_start", l_uhttp_start }, { "uhttp_fds", l_uhttp_fds },
	{ NULL, NULL } };
