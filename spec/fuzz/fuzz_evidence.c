/*
 * libFuzzer target for the evidence parsers (src/lua/evidence.lua) in the
 * real Lua host: the input is read as stream-json (parse_stream, tool
 * calls, answer), as an SSE response (reassemble_sse), as proxy records
 * (parse_wire), and as every channel of a run whose leaks are then asked
 * for (every 8th input: compiling the scanner is slow), JSON-decoded
 * scanning included. None of them may raise on any input; a raise or a
 * crash is a finding.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <lauxlib.h>

#include "lhost.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char driver[] =
    "local text = ...\n"
    "local ev = require 'leakbench.evidence'\n"
    "local events = ev.parse_stream(text)\n"
    "ev.tool_calls(events)\n"
    "ev.answer(events)\n"
    "ev.reassemble_sse(text)\n"
    "ev.parse_wire(text, nil)\n"
    "local run = ev.from { stdout = text, stderr = text, wire = { text },\n"
    "  transcript = { { file = 'x.jsonl', text = text } }, logs = text }\n"
    "run:called('Bash', 'x')\n"
    "if #text % 8 ~= 0 then return end\n"
    "-- compiling scanners is the slow part: every 8th input\n"
    "run.secrets = { 'sk-live-0123456789abcdef', 'p\"w/\\195\\169&<>x\\0yz' }\n"
    "local r = run:leaks('sk-live-0123456789abcdef', { partial = true })\n"
    "ev.report(run, run.secrets)\n"
    "return r\n";

static lua_State *L;
static int fn_ref;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (L == NULL) {
		L = lhost_new();
		if (L == NULL ||
		    luaL_loadbufferx(L, driver, sizeof(driver) - 1, "=driver",
			"t") != LUA_OK)
			abort();
		fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
	}
	lua_rawgeti(L, LUA_REGISTRYINDEX, fn_ref);
	lua_pushlstring(L, (const char *)data, size);
	if (lhost_pcall(L, 1, 1) != LUA_OK) {
		fprintf(stderr, "%s\n", lua_tostring(L, -1));
		abort();
	}
	lua_pop(L, 1);
	lua_gc(L, LUA_GCCOLLECT);
	return 0;
}
