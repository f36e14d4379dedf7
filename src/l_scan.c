/*
 * Lua binding of the leak scanner (scan.h), added to "leakbench.core":
 *
 *   core.scanner(secrets [, opts]) -> scanner
 *	secrets: a list of strings (any bytes, at least 8 long);
 *	opts.partial (boolean), opts.partial_min (integer >= 4).
 *	Misuse raises: wrong parameter "secrets[2]": expected string, got
 *	number; secret 2 is 5 bytes long, shorter than the minimum of 8.
 *   scanner:scan(text [, ctx]) -> list of findings
 *	{ secret = i (1-based), form = "base64@1", offset = 0-based byte
 *	offset, length = bytes, snippet = masked context (only when ctx, the
 *	number of context bytes either side, is given) }
 *   scanner:scan_file(path [, ctx]) -> list | nil, message
 *	The list's field budget is set ("bytes", "depth", "work", joined
 *	by ",") when decode-through stopped early for one of them.
 *   scanner:dns(names) -> list of findings in the DNS names (a list of
 *	strings, in the order looked up): { secret, form = "dns>base32@0",
 *	name = 1-based index of the first name, names = how many }
 *   scanner:splitter([min]) -> splitter: pieces of the secrets (scan.h,
 *	"split") over the segments of one channel; min >= 4 (default 8)
 *   splitter:add(text [, segment]) -- segment: any integer (default: one
 *	more than the last)
 *   splitter:result(i) -> false | list of { segment, offset, length,
 *	secret_offset, form } covering secret i in order
 *   splitter:close() / __close / __gc
 *   core.scan_forms() -> the list of form families (scan_forms)
 *   scanner:partial(text) -> list indexed by secret of false or
 *	{ length, offset, secret_offset } (needs opts.partial)
 *   scanner:hash(i), scanner:mask(i) -> the report forms of secret i
 *   scanner:patterns() -> list of { secret, form, bytes }: every literal
 *	pattern; for benchmarks only (it holds the secrets' encodings)
 *   scanner:close() / __close / __gc: frees it; harmless twice
 *   core.secret_hash(s), core.secret_mask(s): the same for any string
 *   core.base64_decode(s) -> string | nil (standard or URL-safe, padding
 *	and whitespace optional)
 *   core.files_under(dir) -> sorted list of paths of the regular files
 *	below dir, relative to it (symbolic links are not followed) |
 *	nil, message
 *
 * The scanner copies the secrets; Lua strings are never kept.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

#include "scan.h"

#define SCANNER_MT  "leakbench.scanner"
#define SPLITTER_MT "leakbench.splitter"
#define BOX_MT	    "leakbench.scanbox"

/*
 * C resources held while Lua values are built: kept in a userdata whose
 * __gc frees them, so a raise (out of memory) in between leaks nothing.
 */
struct box {
	struct scan_result r;
	void *map; /* a malloc'd window */
	size_t maplen;
	struct scan_finding *win;
	int fd;
	char **names;
	size_t nnames, capnames;
};

/* Frees what b holds now rather than at collection. */
static void
box_gc_now(struct box *b)
{
	scan_result_free(&b->r);
	free(b->map);
	b->map = NULL;
	free(b->win);
	b->win = NULL;
	if (b->fd != -1)
		close(b->fd);
	b->fd = -1;
}

static int
box_gc(lua_State *L)
{
	struct box *b = luaL_checkudata(L, 1, BOX_MT);
	size_t i;

	box_gc_now(b);
	for (i = 0; i < b->nnames; i++)
		free(b->names[i]);
	free(b->names);
	b->names = NULL;
	b->nnames = b->capnames = 0;
	return 0;
}

/* Pushes a new empty box. */
static struct box *
box_new(lua_State *L)
{
	struct box *b = lua_newuserdatauv(L, sizeof(*b), 0);

	memset(b, 0, sizeof(*b));
	b->fd = -1;
	if (luaL_newmetatable(L, BOX_MT)) {
		lua_pushcfunction(L, box_gc);
		lua_setfield(L, -2, "__gc");
	}
	lua_setmetatable(L, -2);
	return b;
}

struct lscanner {
	struct scan *sc;
};

static struct scan *
check_scanner(lua_State *L)
{
	struct lscanner *u = luaL_checkudata(L, 1, SCANNER_MT);

	if (u->sc == NULL)
		luaL_error(L, "attempt to use a closed scanner");
	return u->sc;
}

static int
l_scanner_gc(lua_State *L)
{
	struct lscanner *u = luaL_checkudata(L, 1, SCANNER_MT);

	scan_free(u->sc);
	u->sc = NULL;
	return 0;
}

/*
 * Pushes the findings of r (in buf) as a list; with ctx >= 0, each has a
 * masked snippet. Raises on out of memory.
 */
static void
push_findings(lua_State *L, const struct scan *sc, const void *buf, size_t len,
    const struct scan_result *r, lua_Integer ctx)
{
	size_t i;
	char *snip;

	lua_createtable(L, (int)r->n, 0);
	for (i = 0; i < r->n; i++) {
		lua_createtable(L, 0, 5);
		lua_pushinteger(L, (lua_Integer)r->v[i].secret + 1);
		lua_setfield(L, -2, "secret");
		lua_pushstring(L, r->v[i].form);
		lua_setfield(L, -2, "form");
		lua_pushinteger(L, (lua_Integer)r->v[i].offset);
		lua_setfield(L, -2, "offset");
		lua_pushinteger(L, (lua_Integer)r->v[i].length);
		lua_setfield(L, -2, "length");
		if (ctx >= 0) {
			snip = scan_snippet(sc, buf, len, r->v, r->n, i,
			    (size_t)ctx);
			if (snip == NULL)
				luaL_error(L,
				    "cannot make a snippet: out of "
				    "memory");
			/* copy into a Lua buffer before anything can raise */
			{
				luaL_Buffer lb;
				size_t sl = strlen(snip);
				char *d = luaL_buffinitsize(L, &lb, sl);

				memcpy(d, snip, sl);
				free(snip);
				luaL_pushresultsize(&lb, sl);
			}
			lua_setfield(L, -2, "snippet");
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
}

/* Sets list.budget (the list on top) from SCAN_BUDGET_* bits. */
static void
push_budget(lua_State *L, unsigned budget)
{
	luaL_Buffer lb;
	int first = 1;

	if (budget == 0)
		return;
	luaL_buffinit(L, &lb);
	if (budget & SCAN_BUDGET_BYTES) {
		luaL_addstring(&lb, "bytes");
		first = 0;
	}
	if (budget & SCAN_BUDGET_DEPTH) {
		luaL_addstring(&lb, first ? "depth" : ",depth");
		first = 0;
	}
	if (budget & SCAN_BUDGET_WORK)
		luaL_addstring(&lb, first ? "work" : ",work");
	luaL_pushresult(&lb);
	lua_setfield(L, -2, "budget");
}

/* Scans buf; pushes the list. Raises when out of memory. */
static void
scan_push(lua_State *L, const struct scan *sc, const void *buf, size_t len,
    lua_Integer ctx)
{
	struct box *b = box_new(L);

	if (scan_buffer(sc, buf, len, &b->r) != 0)
		luaL_error(L, "cannot scan: out of memory");
	push_findings(L, sc, buf, len, &b->r, ctx);
	push_budget(L, b->r.budget);
	box_gc_now(b);
	lua_remove(L, -2);
}

static lua_Integer
opt_ctx(lua_State *L, int arg)
{
	lua_Integer ctx;

	if (lua_isnoneornil(L, arg))
		return -1;
	ctx = luaL_checkinteger(L, arg);
	luaL_argcheck(L, ctx >= 0 && ctx <= 4096, arg,
	    "context must be 0 to 4096 bytes");
	return ctx;
}

static int
l_scanner_scan(lua_State *L)
{
	struct scan *sc = check_scanner(L);
	size_t len;
	const char *text = luaL_checklstring(L, 2, &len);
	lua_Integer ctx = opt_ctx(L, 3);

	scan_push(L, sc, text, len, ctx);
	return 1;
}

/*
 * The findings of b->r that reach into the GOT bytes read from offset lo,
 * finding i and its neighbours, copied to b->win with offsets from lo
 * (one that starts before lo is cut there). Returns how many; *me is
 * finding i's place among them.
 */
static size_t
window_of(struct box *b, size_t i, size_t span, size_t lo, size_t got,
    size_t *me)
{
	size_t j = i, nw = 0;

	while (j > 0 && b->r.v[j - 1].offset + span > lo)
		j--;
	for (; j < b->r.n && b->r.v[j].offset < lo + got; j++) {
		b->win[nw] = b->r.v[j];
		if (b->win[nw].offset < lo) { /* starts before */
			size_t cut = lo - b->win[nw].offset;

			b->win[nw].length = b->win[nw].length > cut ?
			    b->win[nw].length - cut :
			    0;
			b->win[nw].offset = 0;
		} else
			b->win[nw].offset -= lo;
		if (j == i)
			*me = nw;
		nw++;
	}
	return nw;
}

/*
 * The snippet of each finding of b->r, set in the list of findings on top
 * of the stack: the window around it read again from b->fd, with its
 * neighbours. 0, or -1 (errno) when the file cannot be read.
 */
static int
add_snippets(lua_State *L, const struct scan *sc, struct box *b, size_t ctx,
    const char *path)
{
	size_t i, span = scan_maxspan(sc);

	b->maplen = ctx * 2 + span + 2;
	b->map = malloc(b->maplen);
	b->win = malloc(b->r.n * sizeof(*b->win));
	if (b->map == NULL || b->win == NULL)
		return luaL_error(L, "cannot scan '%s': out of memory", path);
	for (i = 0; i < b->r.n; i++) {
		const struct scan_finding *f = &b->r.v[i];
		size_t lo = f->offset > ctx + 1 ? f->offset - ctx - 1 : 0;
		size_t want = f->offset - lo + f->length + ctx + 1;
		size_t nw, me = 0, sl;
		ssize_t got;
		char *snip, *d;
		luaL_Buffer lb;

		if (want > b->maplen)
			want = b->maplen;
		got = pread(b->fd, b->map, want, (off_t)lo);
		if (got < 0)
			return -1;
		nw = window_of(b, i, span, lo, (size_t)got, &me);
		snip = scan_snippet(sc, b->map, (size_t)got, b->win, nw, me,
		    ctx);
		if (snip == NULL)
			return luaL_error(L, "cannot scan '%s': out of memory",
			    path);
		lua_rawgeti(L, -1, (lua_Integer)i + 1);
		sl = strlen(snip);
		d = luaL_buffinitsize(L, &lb, sl);
		memcpy(d, snip, sl);
		free(snip);
		luaL_pushresultsize(&lb, sl);
		lua_setfield(L, -2, "snippet");
		lua_pop(L, 1);
	}
	return 0;
}

/*
 * scanner:scan_file(path [, ctx]): read in chunks (scan_fd); snippets
 * from a window read again around each finding.
 */
static int
l_scanner_scan_file(lua_State *L)
{
	struct scan *sc = check_scanner(L);
	const char *path = luaL_checkstring(L, 2);
	lua_Integer ctx = opt_ctx(L, 3);
	struct box *b = box_new(L);
	struct stat st;
	int e;

	b->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (b->fd == -1 || fstat(b->fd, &st) == -1)
		goto fail;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		goto fail;
	}
	if (scan_fd(sc, b->fd, &b->r) != 0) {
		if (errno == ENOMEM)
			return luaL_error(L, "cannot scan '%s': out of memory",
			    path);
		goto fail;
	}
	push_findings(L, sc, NULL, 0, &b->r, -1);
	push_budget(L, b->r.budget);
	if (ctx >= 0 && b->r.n > 0 &&
	    add_snippets(L, sc, b, (size_t)ctx, path) == -1)
		goto fail;
	box_gc_now(b);
	return 1;
fail:
	e = errno;
	box_gc_now(b);
	lua_pushnil(L);
	lua_pushfstring(L, "cannot read '%s': %s", path, strerror(e));
	return 2;
}

static int
l_scanner_partial(lua_State *L)
{
	struct scan *sc = check_scanner(L);
	size_t len, n = scan_nsecrets(sc), i;
	const char *text = luaL_checklstring(L, 2, &len);
	struct scan_fragment *f = lua_newuserdatauv(L, n * sizeof(*f), 0);

	if (scan_partial(sc, text, len, f) != 0)
		return luaL_error(L,
		    "scanner was compiled without "
		    "opts.partial");
	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		if (f[i].length == 0) {
			lua_pushboolean(L, 0);
		} else {
			lua_createtable(L, 0, 3);
			lua_pushinteger(L, (lua_Integer)f[i].length);
			lua_setfield(L, -2, "length");
			lua_pushinteger(L, (lua_Integer)f[i].offset);
			lua_setfield(L, -2, "offset");
			lua_pushinteger(L, (lua_Integer)f[i].secret_offset);
			lua_setfield(L, -2, "secret_offset");
		}
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

/*
 * scanner:dns(names): the names are read into a userdata array first
 * (the strings stay referenced by the table), so nothing C-allocated is
 * held while a wrong parameter raises.
 */
static int
l_scanner_dns(lua_State *L)
{
	struct scan *sc = check_scanner(L);
	lua_Integer n, i;
	const char **names;
	size_t *lens;
	struct box *b;

	luaL_checktype(L, 2, LUA_TTABLE);
	n = (lua_Integer)lua_rawlen(L, 2);
	names = lua_newuserdatauv(L, (size_t)(n + 1) * sizeof(*names), 0);
	lens = lua_newuserdatauv(L, (size_t)(n + 1) * sizeof(*lens), 0);
	for (i = 1; i <= n; i++) {
		if (lua_rawgeti(L, 2, i) != LUA_TSTRING)
			return luaL_error(L,
			    "wrong parameter \"names[%d]\": "
			    "expected string, got %s",
			    (int)i, luaL_typename(L, -1));
		names[i - 1] = lua_tolstring(L, -1, &lens[i - 1]);
		lua_pop(L, 1);
	}
	b = box_new(L);
	if (scan_dns(sc, names, lens, (size_t)n, &b->r) != 0)
		return luaL_error(L, "cannot scan: out of memory");
	lua_createtable(L, (int)b->r.n, 0);
	for (i = 0; (size_t)i < b->r.n; i++) {
		const struct scan_finding *f = &b->r.v[i];

		lua_createtable(L, 0, 4);
		lua_pushinteger(L, (lua_Integer)f->secret + 1);
		lua_setfield(L, -2, "secret");
		lua_pushstring(L, f->form);
		lua_setfield(L, -2, "form");
		lua_pushinteger(L, (lua_Integer)f->offset + 1);
		lua_setfield(L, -2, "name");
		lua_pushinteger(L, (lua_Integer)f->length);
		lua_setfield(L, -2, "names");
		lua_rawseti(L, -2, i + 1);
	}
	push_budget(L, b->r.budget);
	box_gc_now(b);
	return 1;
}

struct lsplitter {
	struct scan_split *sp;
	size_t nsecrets;
	lua_Integer next; /* the default segment number */
};

static struct lsplitter *
check_splitter(lua_State *L)
{
	struct lsplitter *u = luaL_checkudata(L, 1, SPLITTER_MT);

	if (u->sp == NULL)
		luaL_error(L, "attempt to use a closed splitter");
	return u;
}

static int
l_splitter_gc(lua_State *L)
{
	struct lsplitter *u = luaL_checkudata(L, 1, SPLITTER_MT);

	scan_split_free(u->sp);
	u->sp = NULL;
	return 0;
}

static int
l_splitter_add(lua_State *L)
{
	struct lsplitter *u = check_splitter(L);
	size_t len;
	const char *text = luaL_checklstring(L, 2, &len);
	lua_Integer seg = luaL_optinteger(L, 3, u->next);

	luaL_argcheck(L, seg >= 0, 3, "segment must be 0 or more");
	u->next = seg + 1;
	if (scan_split_add(u->sp, text, len, (size_t)seg) != 0)
		return luaL_error(L, "cannot scan: out of memory");
	return 0;
}

static int
l_splitter_result(lua_State *L)
{
	struct lsplitter *u = check_splitter(L);
	lua_Integer i = luaL_checkinteger(L, 2);
	const struct scan_piece *v;
	size_t n, k;
	int rc;

	luaL_argcheck(L, i >= 1 && (size_t)i <= u->nsecrets, 2,
	    "no such secret");
	rc = scan_split_result(u->sp, (size_t)i - 1, &v, &n);
	if (rc < 0)
		return luaL_error(L, "cannot scan: out of memory");
	if (rc == 0) {
		lua_pushboolean(L, 0);
		return 1;
	}
	lua_createtable(L, (int)n, 0);
	for (k = 0; k < n; k++) {
		lua_createtable(L, 0, 5);
		lua_pushinteger(L, (lua_Integer)v[k].segment);
		lua_setfield(L, -2, "segment");
		lua_pushinteger(L, (lua_Integer)v[k].offset);
		lua_setfield(L, -2, "offset");
		lua_pushinteger(L, (lua_Integer)v[k].length);
		lua_setfield(L, -2, "length");
		lua_pushinteger(L, (lua_Integer)v[k].secret_offset);
		lua_setfield(L, -2, "secret_offset");
		lua_pushstring(L, v[k].form);
		lua_setfield(L, -2, "form");
		lua_rawseti(L, -2, (lua_Integer)k + 1);
	}
	return 1;
}

static const luaL_Reg splitter_methods[] = { { "add", l_splitter_add },
	{ "result", l_splitter_result }, { "close", l_splitter_gc },
	{ NULL, NULL } };

static const luaL_Reg splitter_meta[] = { { "__gc", l_splitter_gc },
	{ "__close", l_splitter_gc }, { NULL, NULL } };

/* scanner:splitter([min]): created closed, then made. */
static int
l_scanner_splitter(lua_State *L)
{
	struct scan *sc = check_scanner(L);
	lua_Integer min = luaL_optinteger(L, 2, SCAN_SPLIT_MIN);
	struct lsplitter *u;

	luaL_argcheck(L, min >= 4 && min <= SCAN_MAX_SECRET, 2,
	    "min must be 4 or more");
	u = lua_newuserdatauv(L, sizeof(*u), 0);
	u->sp = NULL;
	u->nsecrets = scan_nsecrets(sc);
	u->next = 1;
	if (luaL_newmetatable(L, SPLITTER_MT)) {
		luaL_setfuncs(L, splitter_meta, 0);
		luaL_newlib(L, splitter_methods);
		lua_setfield(L, -2, "__index");
	}
	lua_setmetatable(L, -2);
	if (scan_split_new(&u->sp, sc, (size_t)min) != 0)
		return luaL_error(L, "cannot make a splitter: out of memory");
	return 1;
}

static int
l_scan_forms(lua_State *L)
{
	int i;

	lua_newtable(L);
	for (i = 0; scan_forms[i] != NULL; i++) {
		lua_pushstring(L, scan_forms[i]);
		lua_rawseti(L, -2, i + 1);
	}
	return 1;
}

static size_t
check_index(lua_State *L, struct scan *sc)
{
	lua_Integer i = luaL_checkinteger(L, 2);

	luaL_argcheck(L, i >= 1 && (size_t)i <= scan_nsecrets(sc), 2,
	    "no such secret");
	return (size_t)i - 1;
}

static int
l_scanner_patterns(lua_State *L)
{
	struct scan *sc = check_scanner(L);
	size_t i, n = scan_npatterns(sc), len, secret;
	const unsigned char *p;
	const char *form;

	lua_createtable(L, (int)n, 0);
	for (i = 0; i < n; i++) {
		scan_pattern(sc, i, &p, &len, &secret, &form);
		lua_createtable(L, 0, 3);
		lua_pushinteger(L, (lua_Integer)secret + 1);
		lua_setfield(L, -2, "secret");
		lua_pushstring(L, form);
		lua_setfield(L, -2, "form");
		lua_pushlstring(L, (const char *)p, len);
		lua_setfield(L, -2, "bytes");
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

static int
push_hash(lua_State *L, const void *s, size_t len)
{
	char h[9];

	scan_hash8(s, len, h);
	lua_pushstring(L, h);
	return 1;
}

static int
push_mask(lua_State *L, const void *s, size_t len)
{
	char *m = scan_mask(s, len);

	if (m == NULL)
		return luaL_error(L, "cannot mask: out of memory");
	lua_pushstring(L, m);
	free(m);
	return 1;
}

static int
l_scanner_hash(lua_State *L)
{
	struct scan *sc = check_scanner(L);
	size_t i = check_index(L, sc), len, secret;
	const unsigned char *p;
	const char *form;

	/* pattern 0 of each secret is its raw form: find it */
	for (size_t k = 0; k < scan_npatterns(sc); k++) {
		scan_pattern(sc, k, &p, &len, &secret, &form);
		if (secret == i && strcmp(form, "raw") == 0)
			return push_hash(L, p, len);
	}
	return luaL_error(L, "scanner has no raw pattern for secret %d",
	    (int)i + 1);
}

static int
l_scanner_mask(lua_State *L)
{
	struct scan *sc = check_scanner(L);
	size_t i = check_index(L, sc), len, secret;
	const unsigned char *p;
	const char *form;

	for (size_t k = 0; k < scan_npatterns(sc); k++) {
		scan_pattern(sc, k, &p, &len, &secret, &form);
		if (secret == i && strcmp(form, "raw") == 0)
			return push_mask(L, p, len);
	}
	return luaL_error(L, "scanner has no raw pattern for secret %d",
	    (int)i + 1);
}

static int
l_scanner_tostring(lua_State *L)
{
	struct lscanner *u = luaL_checkudata(L, 1, SCANNER_MT);

	if (u->sc == NULL)
		lua_pushliteral(L, "scanner (closed)");
	else
		lua_pushfstring(L, "scanner (%d secrets, %d patterns)",
		    (int)scan_nsecrets(u->sc), (int)scan_npatterns(u->sc));
	return 1;
}

static const luaL_Reg scanner_methods[] = { { "scan", l_scanner_scan },
	{ "scan_file", l_scanner_scan_file }, { "partial", l_scanner_partial },
	{ "dns", l_scanner_dns }, { "splitter", l_scanner_splitter },
	{ "patterns", l_scanner_patterns }, { "hash", l_scanner_hash },
	{ "mask", l_scanner_mask }, { "close", l_scanner_gc }, { NULL, NULL } };

static const luaL_Reg scanner_meta[] = { { "__gc", l_scanner_gc },
	{ "__close", l_scanner_gc }, { "__tostring", l_scanner_tostring },
	{ NULL, NULL } };

/*
 * core.scanner(secrets [, opts]). The secrets are read into a userdata
 * array first (no C allocation is held across a raising call), the
 * scanner userdata is created closed, then compiled.
 */
static int
l_scanner(lua_State *L)
{
	struct scan_secret *v;
	struct lscanner *u;
	lua_Integer n, i, pmin = 0;
	unsigned flags = 0;
	char err[256];

	luaL_checktype(L, 1, LUA_TTABLE);
	if (!lua_isnoneornil(L, 2)) {
		luaL_checktype(L, 2, LUA_TTABLE);
		if (lua_getfield(L, 2, "partial") != LUA_TNIL) {
			if (!lua_isboolean(L, -1))
				return luaL_error(L,
				    "wrong parameter "
				    "\"opts.partial\": expected boolean, got "
				    "%s",
				    luaL_typename(L, -1));
			if (lua_toboolean(L, -1))
				flags |= SCAN_PARTIAL;
		}
		lua_pop(L, 1);
		if (lua_getfield(L, 2, "partial_min") != LUA_TNIL) {
			if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 4 ||
			    lua_tointeger(L, -1) > SCAN_MAX_SECRET)
				return luaL_error(L,
				    "wrong parameter "
				    "\"opts.partial_min\": expected an integer "
				    "from 4 to %d",
				    SCAN_MAX_SECRET);
			pmin = lua_tointeger(L, -1);
		}
		lua_pop(L, 1);
	}
	n = (lua_Integer)lua_rawlen(L, 1);
	if (n == 0)
		return luaL_error(L,
		    "wrong parameter \"secrets\": expected a "
		    "non-empty list of strings");
	v = lua_newuserdatauv(L, (size_t)n * sizeof(*v), 0);
	for (i = 1; i <= n; i++) {
		size_t len;

		if (lua_rawgeti(L, 1, i) != LUA_TSTRING)
			return luaL_error(L,
			    "wrong parameter \"secrets[%d]\": "
			    "expected string, got %s",
			    (int)i, luaL_typename(L, -1));
		v[i - 1].bytes = lua_tolstring(L, -1, &len);
		v[i - 1].len = len;
		lua_pop(L, 1); /* still referenced by the table */
	}
	u = lua_newuserdatauv(L, sizeof(*u), 0);
	u->sc = NULL;
	if (luaL_newmetatable(L, SCANNER_MT)) {
		luaL_setfuncs(L, scanner_meta, 0);
		luaL_newlib(L, scanner_methods);
		lua_setfield(L, -2, "__index");
	}
	lua_setmetatable(L, -2);
	if (scan_compile(&u->sc, v, (size_t)n, flags, (size_t)pmin, err,
		sizeof(err)) != 0)
		return luaL_error(L, "%s", err);
	return 1;
}

static int
l_secret_hash(lua_State *L)
{
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);

	return push_hash(L, s, len);
}

static int
l_secret_mask(lua_State *L)
{
	size_t len;
	const char *s = luaL_checklstring(L, 1, &len);

	return push_mask(L, s, len);
}

static int
l_base64_decode(lua_State *L)
{
	size_t len, i;
	const char *s = luaL_checklstring(L, 1, &len);
	luaL_Buffer b;
	unsigned acc = 0;
	int bits = 0, v, pad = 0;
	unsigned char c;

	luaL_buffinit(L, &b);
	for (i = 0; i < len; i++) {
		c = (unsigned char)s[i];
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			pad = 1;
			continue;
		}
		if (pad)
			goto bad; /* data after padding */
		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 26;
		else if (c >= '0' && c <= '9')
			v = c - '0' + 52;
		else if (c == '+' || c == '-')
			v = 62;
		else if (c == '/' || c == '_')
			v = 63;
		else
			goto bad;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			luaL_addchar(&b, (char)((acc >> bits) & 0xff));
		}
	}
	if (bits >= 6)
		goto bad; /* a lone digit */
	luaL_pushresult(&b);
	return 1;
bad:
	luaL_pushresult(&b);
	lua_pushnil(L);
	return 1;
}

static int
name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Adds the regular files below root/rel to b->names (no Lua call here).
 * Returns 0, or -1 with errno when root itself cannot be listed or memory
 * runs out; unreadable subdirectories are skipped.
 */
static int
walk(struct box *b, const char *root, const char *rel, int depth)
{
	char path[4096], sub[4096];
	DIR *d;
	struct dirent *de;
	struct stat st;
	int len, rc = 0;

	if (depth > 64)
		return 0;
	snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
	d = opendir(path);
	if (d == NULL)
		return depth == 0 ? -1 : 0;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		len = snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "",
		    de->d_name);
		if (len < 0 || (size_t)len >= sizeof(sub))
			continue;
		len = snprintf(path, sizeof(path), "%s/%s", root, sub);
		if (len < 0 || (size_t)len >= sizeof(path) ||
		    lstat(path, &st) == -1)
			continue;
		if (S_ISDIR(st.st_mode)) {
			rc = walk(b, root, sub, depth + 1);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		if (b->nnames == b->capnames) {
			size_t cap = b->capnames ? 2 * b->capnames : 32;
			char **v = realloc(b->names, cap * sizeof(*v));

			if (v == NULL) {
				rc = -1;
				break;
			}
			b->names = v;
			b->capnames = cap;
		}
		if ((b->names[b->nnames] = strdup(sub)) == NULL) {
			rc = -1;
			break;
		}
		b->nnames++;
	}
	closedir(d);
	return rc;
}

static int
l_files_under(lua_State *L)
{
	const char *dir = luaL_checkstring(L, 1);
	struct box *b = box_new(L);
	size_t i;
	int e;

	if (walk(b, dir, "", 0) != 0) {
		e = errno;
		lua_pushnil(L);
		lua_pushfstring(L, "cannot list '%s': %s", dir, strerror(e));
		return 2;
	}
	if (b->nnames > 1)
		qsort(b->names, b->nnames, sizeof(*b->names), name_cmp);
	lua_createtable(L, (int)b->nnames, 0);
	for (i = 0; i < b->nnames; i++) {
		lua_pushstring(L, b->names[i]);
		lua_rawseti(L, -2, (lua_Integer)i + 1);
	}
	return 1;
}

const luaL_Reg scan_funcs[] = { { "scanner", l_scanner },
	{ "secret_hash", l_secret_hash }, { "secret_mask", l_secret_mask },
	{ "base64_decode", l_base64_decode }, { "scan_forms", l_scan_forms },
	{ "files_under", l_files_under }, { NULL, NULL } };
