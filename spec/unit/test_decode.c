/*
 * The forms issue 14 added, table-driven. Each case makes its text with
 * the real tool where there is one (od, xxd, hexdump, gzip, bzip2, xz,
 * zip, tar, uuencode, python3's base64 module), run from an argv array on
 * a file holding the secret, and expects a finding of exactly its form;
 * the same command on a file holding a near miss (the secret with one
 * byte changed) must give nothing. A tool that is not installed skips
 * its case. Then the forms without a tool (byte lists, escapes, base85 at
 * every alignment, separators, case), with independent encoders; the
 * decode budgets; pieces (split) with their near misses and the
 * shortest-piece choice; DNS labels.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <brotli/encode.h>
#include <zlib.h>

#include "scan.h"
#include "scan_int.h"
#include "tap.h"

#define S1   "sk-live-0123456789abcdef"
#define MISS "sk-live-0123456789abcdeg" /* the last byte off */

struct str {
	char *p;
	size_t n, cap;
};

static void
put(struct str *s, const void *p, size_t n)
{
	if (s->n + n + 1 > s->cap) {
		s->cap = (s->n + n + 1) * 2;
		if ((s->p = realloc(s->p, s->cap)) == NULL)
			abort();
	}
	memcpy(s->p + s->n, p, n);
	s->n += n;
	s->p[s->n] = '\0';
}

static void
puts_(struct str *s, const char *p)
{
	put(s, p, strlen(p));
}

static char tmpdir[64];

static void
write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "wb");

	if (f == NULL || fwrite(p, 1, n, f) != n || fclose(f) != 0)
		abort();
}

static int
read_file(const char *path, struct str *out)
{
	char b[65536];
	size_t got;
	FILE *f = fopen(path, "rb");

	if (f == NULL)
		return -1;
	out->n = 0;
	while ((got = fread(b, 1, sizeof(b), f)) > 0)
		put(out, b, got);
	fclose(f);
	return 0;
}

/*
 * Runs argv (an argument "@IN" is replaced by in, the input file) with
 * stdin from in and stdout to out. Returns the exit status, 127 when the
 * program is missing.
 */
static int
run(const char *const argv[], const char *in, const char *out)
{
	char *v[16];
	pid_t pid;
	int st, i, fd;

	for (i = 0; argv[i] != NULL && i < 15; i++)
		v[i] = (char *)(uintptr_t)(strcmp(argv[i], "@IN") == 0 ?
			in :
			argv[i]);
	v[i] = NULL;
	pid = fork();
	if (pid == -1)
		abort();
	if (pid == 0) {
		if ((fd = open(in, O_RDONLY)) == -1 || dup2(fd, 0) == -1)
			_exit(126);
		if ((fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600)) ==
			-1 ||
		    dup2(fd, 1) == -1)
			_exit(126);
		if ((fd = open("/dev/null", O_WRONLY)) != -1)
			dup2(fd, 2);
		execvp(v[0], v);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) == -1)
		abort();
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static struct scan *
compile1(const char *s, size_t len)
{
	struct scan_secret v = { s, len };
	struct scan *sc;
	char err[256];

	if (scan_compile(&sc, &v, 1, 0, 0, err, sizeof(err)) != 0) {
		printf("# compile: %s\n", err);
		abort();
	}
	return sc;
}

static void
dump(const struct scan_result *r)
{
	size_t i;

	for (i = 0; i < r->n && i < 8; i++)
		printf("#   finding: secret %zu form %s offset %zu length "
		       "%zu\n",
		    r->v[i].secret, r->v[i].form, r->v[i].offset,
		    r->v[i].length);
}

static int
has_form(const struct scan_result *r, const char *form)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (strcmp(r->v[i].form, form) == 0)
			return 1;
	return 0;
}

/* ---- real tools ---- */

#define MAXSTEP 3

struct tool_case {
	const char *what;
	const char *form;		/* expected */
	int big;			/* input padded to compress/wrap */
	const char *steps[MAXSTEP][10]; /* each reads the last output */
};

static const struct tool_case tool_cases[] = {
	{ "od -x", "dump-hex-le>raw", 0, { { "od", "-x", NULL } } },
	{ "od -An -tx1 -v", "dump-hex>raw", 0,
	    { { "od", "-An", "-tx1", "-v", NULL } } },
	{ "od -tx4", "dump-hex-le>raw", 0, { { "od", "-tx4", NULL } } },
	{ "od -tx8", "dump-hex-le>raw", 0, { { "od", "-tx8", NULL } } },
	{ "od -An -tx4", "dump-hex-le>raw", 0,
	    { { "od", "-An", "-tx4", NULL } } },
	{ "od -An -tx2 -w8", "dump-hex-le>raw", 0,
	    { { "od", "-An", "-tx2", "-w8", NULL } } },
	{ "od -b", "dump-octal>raw", 0, { { "od", "-b", NULL } } },
	{ "od -An -tu1", "dump-decimal>raw", 0,
	    { { "od", "-An", "-tu1", NULL } } },
	{ "od -td1", "dump-decimal>raw", 0, { { "od", "-td1", NULL } } },
	{ "od -c", "dump-char>raw", 0, { { "od", "-c", NULL } } },
	{ "od -An -c", "dump-char>raw", 0, { { "od", "-An", "-c", NULL } } },
	{ "xxd", "dump-hex>raw", 0, { { "xxd", NULL } } },
	{ "xxd -e", "dump-hex-le>raw", 0, { { "xxd", "-e", NULL } } },
	{ "xxd -g1", "dump-hex>raw", 0, { { "xxd", "-g1", NULL } } },
	{ "xxd -g8 -c32", "dump-hex>raw", 0,
	    { { "xxd", "-g8", "-c32", NULL } } },
	{ "xxd -i", "byte-list>raw", 0, { { "xxd", "-i", NULL } } },
	{ "hexdump -C", "dump-hex>raw", 0, { { "hexdump", "-C", NULL } } },
	{ "hexdump", "dump-hex-le>raw", 0, { { "hexdump", NULL } } },
	{ "hexdump -C (repeated lines)", "dump-hex>raw", 2,
	    { { "hexdump", "-C", NULL } } },
	{ "gzip -c", "gzip>raw", 0, { { "gzip", "-c", NULL } } },
	{ "gzip -c | base64", "base64>gzip>raw", 0,
	    { { "gzip", "-c", NULL }, { "base64", NULL } } },
	{ "gzip -c | base64 -w0", "base64>gzip>raw", 0,
	    { { "gzip", "-c", NULL }, { "base64", "-w0", NULL } } },
	{ "gzip -c | xxd -p", "hex>gzip>raw", 0,
	    { { "gzip", "-c", NULL }, { "xxd", "-p", "-c0", NULL } } },
	{ "gzip -c | xxd", "dump-hex>gzip>raw", 0,
	    { { "gzip", "-c", NULL }, { "xxd", NULL } } },
	{ "bzip2 -c", "bzip2>raw", 0, { { "bzip2", "-c", NULL } } },
	{ "xz -c", "xz>raw", 1, { { "xz", "-c", NULL } } },
	/*
	 * wrapped after a line of their own: decoded from the first line
	 * of the run, not from the line a window of base64 was found in
	 */
	{ "gzip -c | base64 -w22 between BEGIN and END lines",
	    "base64>gzip>raw", 0,
	    { { "gzip", "-c", NULL },
		{ "sh", "-c",
		    "echo '-----BEGIN DATA-----'; base64 -w22; "
		    "echo '-----END DATA-----'",
		    NULL } } },
	{ "gzip -c | base64 -w30 after a short line", "base64>gzip>raw", 0,
	    { { "gzip", "-c", NULL },
		{ "sh", "-c", "echo hi; base64 -w30", NULL } } },
	{ "gzip -c | base64 wrapped at 38 in a JSON string after a line",
	    "base64>gzip>raw", 0,
	    { { "gzip", "-c", NULL },
		{ "python3", "-c",
		    "import sys,base64,json,textwrap;print(json.dumps("
		    "{'a':'data\\n'+'\\n'.join(textwrap.wrap(base64."
		    "b64encode(sys.stdin.buffer.read()).decode(),38))}))",
		    NULL } } },
	{ "bzip2 -c | base64", "base64>bzip2>raw", 0,
	    { { "bzip2", "-c", NULL }, { "base64", NULL } } },
	{ "xz -c | base64", "base64>xz>raw", 1,
	    { { "xz", "-c", NULL }, { "base64", NULL } } },
	{ "zip", "zip>raw", 1, { { "zip", "-q", "-", "-", NULL } } },
	{ "tar c", "raw", 0, { { "tar", "-cf", "-", "@IN", NULL } } },
	{ "tar cz | base64", "base64>gzip>raw", 0,
	    { { "tar", "-czf", "-", "@IN", NULL }, { "base64", NULL } } },
	{ "tar cJ", "xz>raw", 0, { { "tar", "-cJf", "-", "@IN", NULL } } },
	{ "python3 zlib", "zlib>raw", 0,
	    { { "python3", "-c",
		"import sys,zlib;sys.stdout.buffer.write("
		"zlib.compress(sys.stdin.buffer.read()))",
		NULL } } },
	{ "python3 raw deflate | base64", "base64>deflate>raw", 1,
	    { { "python3", "-c",
		  "import sys,zlib;c=zlib.compressobj(9,8,-15);"
		  "sys.stdout.buffer.write(c.compress(sys.stdin.buffer.read())+"
		  "c.flush())",
		  NULL },
		{ "base64", NULL } } },
	{ "uuencode (several lines)", "uuencode>raw", 1,
	    { { "uuencode", "key", NULL } } },
	{ "python3 a85encode(wrapcol=20, adobe)", "ascii85>raw", 0,
	    { { "python3", "-c",
		"import sys,base64;print(base64.a85encode("
		"sys.stdin.buffer.read(),wrapcol=20,adobe=True).decode())",
		NULL } } },
	{ "python3 b85encode, wrapped", "base85>raw", 0,
	    { { "python3", "-c",
		"import sys,base64,textwrap;print(textwrap.fill(base64."
		"b85encode(sys.stdin.buffer.read()).decode(),24))",
		NULL } } },
	{ "python3 print(list())", "byte-list>raw", 1,
	    { { "python3", "-c",
		"import "
		"sys,pprint;pprint.pprint(list(sys.stdin.buffer.read()))",
		NULL } } },
	{ "python3 a85encode | gzip | base64", "base64>gzip>ascii85@1", 0,
	    { { "python3", "-c",
		  "import sys,base64;sys.stdout.buffer.write("
		  "base64.a85encode(b'abc'+sys.stdin.buffer.read()))",
		  NULL },
		{ "gzip", "-c", NULL }, { "base64", NULL } } },
	{ "sed 's/./& /g'", "sep", 0, { { "sed", "s/./& /g", NULL } } },
	{ "tr a-z A-Z", "case-upper", 0, { { "tr", "a-z", "A-Z", NULL } } },
};

/*
 * The input: the secret on a line of a small .env, or in a bigger one.
 * TAIL > 0: the .env ends with the secret (no line break), its first line
 * TAIL - 1 bytes longer, so that the secret's end falls at each place of
 * a dump's line (of 16 bytes) as TAIL goes through TOOL_TAILS.
 */
static void
make_input(struct str *in, const char *secret, int big, int tail)
{
	int i;

	in->n = 0;
	puts_(in, "# env");
	for (i = 1; i < tail; i++)
		puts_(in, "x");
	puts_(in, "\nAPI_KEY=");
	puts_(in, secret);
	if (tail == 0)
		puts_(in, "\nOTHER=1\n");
	if (big == 1)
		for (i = 0; i < 40; i++)
			puts_(in, "PADDING_LINE=the quick brown fox jumps\n");
	if (big == 2) {
		struct str t = { 0 };

		/* zeros either side: hexdump prints '*' for the repeats */
		for (i = 0; i < 64; i++)
			put(&t, "", 1);
		put(&t, in->p, in->n);
		for (i = 0; i < 64; i++)
			put(&t, "", 1);
		in->n = 0;
		put(in, t.p, t.n);
		free(t.p);
	}
}

/* Runs the steps of tc on in; 0 and the output, or -1 (tool missing). */
static int
run_steps(const struct tool_case *tc, const struct str *in, struct str *out)
{
	char a[96], b[96];
	int k;

	snprintf(a, sizeof(a), "%s/key", tmpdir);
	write_file(a, in->p, in->n);
	for (k = 0; k < MAXSTEP && tc->steps[k][0] != NULL; k++) {
		snprintf(b, sizeof(b), "%s/out%d", tmpdir, k);
		if (run(tc->steps[k], a, b) != 0)
			return -1;
		snprintf(a, sizeof(a), "%s", b);
	}
	return read_file(a, out);
}

/*
 * The dumps (od, xxd, hexdump: line by line, in words) are tried with the
 * secret at every place of their last line: a shape a parser reads wrong
 * there (a last word taken for an offset) loses the secret's end.
 */
#define TOOL_TAILS 17

static int
tool_tails(const struct tool_case *tc)
{
	const char *t = tc->steps[0][0];

	return strcmp(t, "od") == 0 || strcmp(t, "xxd") == 0 ||
		strcmp(t, "hexdump") == 0 ?
	    TOOL_TAILS :
	    1;
}

static void
test_tools(void)
{
	struct scan *sc = compile1(S1, strlen(S1));
	struct str in = { 0 }, out = { 0 };
	struct scan_result r;
	size_t i;
	int tail, missed, hit;

	for (i = 0; i < sizeof(tool_cases) / sizeof(tool_cases[0]); i++) {
		const struct tool_case *tc = &tool_cases[i];

		for (missed = hit = -1, tail = 0; tail < tool_tails(tc);
		     tail++) {
			make_input(&in, S1, tc->big, tail);
			if (run_steps(tc, &in, &out) != 0)
				break;
			memset(&r, 0, sizeof(r));
			if (scan_buffer(sc, out.p, out.n, &r) != 0)
				abort();
			if (!has_form(&r, tc->form) && missed < 0) {
				missed = tail;
				dump(&r);
			}
			scan_result_free(&r);
			/* the same tool on the secret one byte off: nothing */
			make_input(&in, MISS, tc->big, tail);
			if (run_steps(tc, &in, &out) != 0)
				abort();
			memset(&r, 0, sizeof(r));
			if (scan_buffer(sc, out.p, out.n, &r) != 0)
				abort();
			if (r.n != 0 && hit < 0) {
				hit = tail;
				dump(&r);
			}
			scan_result_free(&r);
		}
		if (tail == 0) {
			ok(1, "%s # SKIP not installed", tc->what);
			ok(1, "%s near miss # SKIP not installed", tc->what);
			continue;
		}
		ok(missed < 0,
		    "%s: found as %s, wherever its last line ends (missed at "
		    "tail %d)",
		    tc->what, tc->form, missed);
		ok(hit < 0,
		    "near miss: %s of the secret one byte off (found at tail "
		    "%d)",
		    tc->what, hit);
	}
	free(in.p);
	free(out.p);
	scan_free(sc);
}

/* ---- forms without a tool, independent encoders ---- */

static void
b85(struct str *out, const unsigned char *p, size_t n, const char *al)
{
	size_t i, k;
	uint32_t v;
	char d[5];

	for (i = 0; i < n; i += 4) {
		unsigned char g[4] = { 0, 0, 0, 0 };
		size_t take = n - i < 4 ? n - i : 4;

		memcpy(g, p + i, take);
		v = (uint32_t)g[0] << 24 | (uint32_t)g[1] << 16 |
		    (uint32_t)g[2] << 8 | g[3];
		for (k = 5; k > 0; k--) {
			d[k - 1] = al[v % 85];
			v /= 85;
		}
		put(out, d, take + 1);
	}
}

static const char A85[] = "!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOP"
			  "QRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstu";
static const char B85[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklm"
			  "nopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
static const char Z85[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLM"
			  "NOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

struct alpha_case {
	const char *name;
	const char *al;
};

static const struct alpha_case b85_cases[] = {
	{ "ascii85", A85 },
	{ "base85", B85 },
	{ "z85", Z85 },
};

/* Base85 at every alignment, and the secret one byte off at each. */
static void
test_b85(void)
{
	struct scan *sc = compile1(S1, strlen(S1));
	struct str plain = { 0 }, enc = { 0 };
	struct scan_result r;
	char form[32];
	size_t a, k;
	const char *sec[2] = { S1, MISS };
	int m;

	ok(strlen(A85) == 85 && strlen(B85) == 85 && strlen(Z85) == 85,
	    "the test's alphabets have 85 digits");
	for (a = 0; a < sizeof(b85_cases) / sizeof(b85_cases[0]); a++)
		for (k = 0; k < 4; k++)
			for (m = 0; m < 2; m++) {
				plain.n = enc.n = 0;
				put(&plain, "QQQ", k);
				puts_(&plain, sec[m]);
				puts_(&plain, "-tail");
				puts_(&enc, "x ");
				b85(&enc, (unsigned char *)plain.p, plain.n,
				    b85_cases[a].al);
				puts_(&enc, " y");
				memset(&r, 0, sizeof(r));
				if (scan_buffer(sc, enc.p, enc.n, &r) != 0)
					abort();
				snprintf(form, sizeof(form), "%s@%zu",
				    b85_cases[a].name, k);
				if (m == 0 &&
				    !ok(r.n == 1 &&
					    strcmp(r.v[0].form, form) == 0,
					"%s: found", form))
					dump(&r);
				if (m == 1 &&
				    !ok(r.n == 0,
					"near miss: %s of the secret one byte "
					"off",
					form))
					dump(&r);
				scan_result_free(&r);
			}
	free(plain.p);
	free(enc.p);
	scan_free(sc);
}

struct lit_case {
	const char *form;
	const char *enc;  /* for S1 */
	const char *miss; /* the same for MISS (last byte 'F') */
};

static const struct lit_case lit_cases[] = {
	{ "dec-list",
	    "115, 107, 45, 108, 105, 118, 101, 45, 48, 49, 50, 51, "
	    "52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 102",
	    "115, 107, 45, 108, 105, 118, 101, 45, 48, 49, 50, 51, "
	    "52, 53, 54, 55, 56, 57, 97, 98, 99, 100, 101, 70" },
	{ "dec-list",
	    "115,107,45,108,105,118,101,45,48,49,50,51,52,53,54,55,"
	    "56,57,97,98,99,100,101,102",
	    "115,107,45,108,105,118,101,45,48,49,50,51,52,53,54,55,"
	    "56,57,97,98,99,100,101,70" },
	{ "octal-list",
	    "0163, 0153, 055, 0154, 0151, 0166, 0145, 055, 060, "
	    "061, 062, 063, 064, 065, 066, 067, 070, 071, 0141, 0142, 0143, "
	    "0144, 0145, 0146",
	    "0163, 0153, 055, 0154, 0151, 0166, 0145, 055, 060, "
	    "061, 062, 063, 064, 065, 066, 067, 070, 071, 0141, 0142, 0143, "
	    "0144, 0145, 0106" },
	{ "octal-escape",
	    "\\163\\153\\055\\154\\151\\166\\145\\055\\060\\061"
	    "\\062\\063\\064\\065\\066\\067\\070\\071\\141\\142\\143\\144\\145"
	    "\\146",
	    "\\163\\153\\055\\154\\151\\166\\145\\055\\060\\061"
	    "\\062\\063\\064\\065\\066\\067\\070\\071\\141\\142\\143\\144\\145"
	    "\\106" },
	{ "sep", "s k - l i v e - 0 1 2 3 4 5 6 7 8 9 a b c d e f",
	    "s k - l i v e - 0 1 2 3 4 5 6 7 8 9 a b c d e F" },
	{ "sep", "s.k.-.l.i.v.e.-.0.1.2.3.4.5.6.7.8.9.a.b.c.d.e.f",
	    "s.k.-.l.i.v.e.-.0.1.2.3.4.5.6.7.8.9.a.b.c.d.e.F" },
	{ "sep+json",
	    "s\\nk\\n-\\nl\\ni\\nv\\ne\\n-\\n0\\n1\\n2\\n3\\n4\\n5"
	    "\\n6\\n7\\n8\\n9\\na\\nb\\nc\\nd\\ne\\nf",
	    "s\\nk\\n-\\nl\\ni\\nv\\ne\\n-\\n0\\n1\\n2\\n3\\n4\\n5"
	    "\\n6\\n7\\n8\\n9\\na\\nb\\nc\\nd\\ne\\nF" },
	{ "case-upper", "SK-LIVE-0123456789ABCDEF",
	    "SK-LIVE-0123456789ABCDEG" },
	{ "uuencode@0", "<VLM;&EV92TP,3(S-#4V-S@Y86)C9&5F",
	    "<VLM;&EV92TP,3(S-#4V-S@Y86)C9&5&" },
	{ "html-entities",
	    "&#115;&#107;&#45;&#108;&#105;&#118;&#101;&#45;"
	    "&#48;&#49;&#50;&#51;&#52;&#53;&#54;&#55;&#56;&#57;&#97;&#98;&#99;"
	    "&#100;&#101;&#102;",
	    "&#115;&#107;&#45;&#108;&#105;&#118;&#101;"
	    "&#45;&#48;&#49;&#50;&#51;&#52;&#53;&#54;&#55;&#56;&#57;&#97;&#98;"
	    "&#99;&#100;&#101;&#70;" },
	{ "html-entities",
	    "&#x73;&#x6b;&#x2d;&#x6c;&#x69;&#x76;&#x65;&#x2d;"
	    "&#x30;&#x31;&#x32;&#x33;&#x34;&#x35;&#x36;&#x37;&#x38;&#x39;&#x61;"
	    "&#x62;&#x63;&#x64;&#x65;&#x66;",
	    "&#x73;&#x6b;&#x2d;&#x6c;&#x69;"
	    "&#x76;&#x65;&#x2d;&#x30;&#x31;&#x32;&#x33;&#x34;&#x35;&#x36;&#x37;"
	    "&#x38;&#x39;&#x61;&#x62;&#x63;&#x64;&#x65;&#x46;" },
	{ "base58", "BXH6szrbdUSMjWsHadABm6qXGab8xA8UM",
	    "BXH6szrbdUSMjWsHadABm6qXGab8xA8To" },
};

static void
test_literals(void)
{
	struct scan *sc = compile1(S1, strlen(S1));
	struct scan *mixed;
	struct str d = { 0 };
	struct scan_result r;
	size_t i;

	for (i = 0; i < sizeof(lit_cases) / sizeof(lit_cases[0]); i++) {
		d.n = 0;
		puts_(&d, "<<");
		puts_(&d, lit_cases[i].enc);
		puts_(&d, ">>");
		memset(&r, 0, sizeof(r));
		if (scan_buffer(sc, d.p, d.n, &r) != 0)
			abort();
		if (!ok(r.n == 1 &&
			    strcmp(r.v[0].form, lit_cases[i].form) == 0 &&
			    r.v[0].offset == 2 &&
			    r.v[0].length == strlen(lit_cases[i].enc),
			"%s: found at 2", lit_cases[i].form))
			dump(&r);
		scan_result_free(&r);
		memset(&r, 0, sizeof(r));
		if (scan_buffer(sc, lit_cases[i].miss,
			strlen(lit_cases[i].miss), &r) != 0)
			abort();
		if (!ok(r.n == 0, "near miss: %s of the secret one byte off",
			lit_cases[i].form))
			dump(&r);
		scan_result_free(&r);
	}
	/* a mixed-case secret: folding loses something, a weaker form */
	mixed = compile1("Sk-Live-0123456789AbCdEf", 24);
	memset(&r, 0, sizeof(r));
	if (scan_buffer(mixed, "x sk-live-0123456789abcdef y", 28, &r) != 0)
		abort();
	if (!ok(r.n == 1 && strcmp(r.v[0].form, "case-lower-lossy") == 0,
		"a mixed-case secret lower-cased: case-lower-lossy"))
		dump(&r);
	scan_result_free(&r);
	scan_free(mixed);
	free(d.p);
	scan_free(sc);
}

/* ---- unrelated data: random dumps and archives find nothing ---- */

static void
test_unrelated(void)
{
	static const char *const secs[] = { S1, "0123456789abcdef0123",
		"MFRGGZDFMZTWQ2LK" };
	struct scan_secret v[3];
	struct scan *sc;
	struct str in = { 0 }, out = { 0 };
	struct scan_result r;
	char err[256];
	size_t i, k;
	unsigned x = 12345;

	for (i = 0; i < 3; i++) {
		v[i].bytes = secs[i];
		v[i].len = strlen(secs[i]);
	}
	if (scan_compile(&sc, v, 3, 0, 0, err, sizeof(err)) != 0)
		abort();
	for (i = 0; i < 200000; i++) {
		unsigned char c;

		x = x * 1103515245 + 12345;
		c = (unsigned char)(x >> 16);
		put(&in, &c, 1);
	}
	for (i = 0; i < sizeof(tool_cases) / sizeof(tool_cases[0]); i++) {
		if (run_steps(&tool_cases[i], &in, &out) != 0)
			continue;
		memset(&r, 0, sizeof(r));
		if (scan_buffer(sc, out.p, out.n, &r) != 0)
			abort();
		if (!ok(r.n == 0, "unrelated: %s of 200 KB of random bytes",
			tool_cases[i].what))
			dump(&r);
		scan_result_free(&r);
	}
	/* random hex and base64 text, as one buffer */
	out.n = 0;
	for (k = 0; k < in.n; k++)
		put(&out, "0123456789abcdef" + (in.p[k] & 15), 1);
	memset(&r, 0, sizeof(r));
	if (scan_buffer(sc, out.p, out.n, &r) != 0)
		abort();
	ok(r.n == 0, "unrelated: 200 KB of random hex digits");
	scan_result_free(&r);
	free(in.p);
	free(out.p);
	scan_free(sc);
}

/*
 * Issue 24's two bugs. Quoted-printable with a soft line break ("=\n")
 * anywhere in the secret, as a mail or quopri wraps it: only 6 of its
 * characters before the break must still be found. A dump at the end of
 * a JSON string (its last line ends where the value does, in the NUL
 * that joins decoded values, not in a newline) parses as it does alone.
 */
static void
test_qp_and_nul(void)
{
	static const char *const od[] = { "od", "-An", "-tx1", NULL };
	struct scan *sc = compile1(S1, strlen(S1));
	struct str t = { 0 }, out = { 0 };
	struct scan_result r = { 0 };
	char a[96], b[96];
	size_t cut, missed = 0, nearhit = 0, len = strlen(S1);
	int miss;

	for (miss = 0; miss < 2; miss++) {
		const char *s = miss ? MISS : S1;

		for (cut = 1; cut < len; cut++) {
			t.n = 0;
			puts_(&t,
			    "Content-Transfer-Encoding: quoted-printable\n"
			    "\nAPI_KEY=3D");
			put(&t, s, cut);
			puts_(&t, "=\n");
			puts_(&t, s + cut);
			puts_(&t, "\nOTHER=3D1\n");
			memset(&r, 0, sizeof(r));
			if (scan_buffer(sc, t.p, t.n, &r) != 0)
				abort();
			if (!miss && !has_form(&r, "quoted-printable>raw")) {
				if (missed++ == 0)
					dump(&r);
				printf("# soft break after %zu: missed\n", cut);
			}
			if (miss && r.n > 0) {
				if (nearhit++ == 0)
					dump(&r);
			}
			scan_result_free(&r);
		}
	}
	ok(missed == 0,
	    "quoted-printable: a soft break after each of the %zu "
	    "characters is found (%zu missed)",
	    len - 1, missed);
	ok(nearhit == 0, "near miss: quoted-printable, the last byte off");

	/* found by fuzz_decode: Ascii85 'z' is 4 bytes (ASan caught it) */
	t.n = 0;
	puts_(&t, "fzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzfffffffffffff\xa6[");
	memset(&r, 0, sizeof(r));
	ok(scan_buffer(sc, t.p, t.n, &r) == 0 && r.n == 0,
	    "a run of Ascii85 'z' decodes within its buffer");
	scan_result_free(&r);

	/* od -An -tx1 without its final newline, between two NULs */
	t.n = 0;
	make_input(&t, S1, 0, 0);
	snprintf(a, sizeof(a), "%s/nul-in", tmpdir);
	snprintf(b, sizeof(b), "%s/nul-out", tmpdir);
	write_file(a, t.p, t.n);
	if (run(od, a, b) != 0 || read_file(b, &out) != 0) {
		ok(1, "dump before a NUL # SKIP no od");
		goto out;
	}
	while (out.n > 0 && out.p[out.n - 1] == '\n')
		out.n--;
	t.n = 0;
	puts_(&t, "Bash");
	put(&t, "\0", 1);
	put(&t, out.p, out.n);
	put(&t, "\0", 1);
	puts_(&t, "tool_use_id");
	memset(&r, 0, sizeof(r));
	if (scan_buffer(sc, t.p, t.n, &r) != 0)
		abort();
	if (!ok(has_form(&r, "dump-hex>raw"),
		"od -An -tx1 as a JSON string's value, joined by NULs"))
		dump(&r);
	scan_result_free(&r);
out:
	free(t.p);
	free(out.p);
	scan_free(sc);
}

/* ---- budgets ---- */

static void
test_budgets(void)
{
	struct scan *sc = compile1(S1, strlen(S1));
	struct str in = { 0 }, out = { 0 }, t = { 0 };
	struct scan_result r;
	static const char *const gz[] = { "gzip", "-c", NULL };
	static const char *const hexp[] = { "xxd", "-p", NULL };
	char a[96], b[96];
	uint64_t t0, t1;
	size_t i;
	struct timespec ts;

	/* a bomb: 64 MB of zeros, then the secret, gzip'd (about 64 KB) */
	snprintf(a, sizeof(a), "%s/zeros", tmpdir);
	snprintf(b, sizeof(b), "%s/bomb", tmpdir);
	{
		FILE *f = fopen(a, "wb");
		static char z[1 << 16];

		for (i = 0; i < 1024; i++)
			fwrite(z, 1, sizeof(z), f);
		fputs(S1, f);
		fclose(f);
	}
	if (run(gz, a, b) != 0 || read_file(b, &out) != 0) {
		ok(1, "bomb # SKIP no gzip");
		goto tower;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	memset(&r, 0, sizeof(r));
	if (scan_buffer(sc, out.p, out.n, &r) != 0)
		abort();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t1 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	ok((r.budget & SCAN_BUDGET_BYTES) != 0,
	    "a 64 MB gzip bomb of %zu bytes: the bytes budget is hit", out.n);
	ok(t1 - t0 < 200000000u, "and the scan took %.1f ms",
	    (double)(t1 - t0) / 1e6);
	scan_result_free(&r);
tower:
	/* a tower deeper than the depth budget: the secret, gzip, hex x 5 */
	make_input(&in, S1, 0, 0);
	snprintf(a, sizeof(a), "%s/t0", tmpdir);
	write_file(a, in.p, in.n);
	snprintf(b, sizeof(b), "%s/t1", tmpdir);
	if (run(gz, a, b) != 0)
		goto out;
	for (i = 0; i < 5; i++) {
		snprintf(a, sizeof(a), "%s/t%zu", tmpdir, i + 1);
		snprintf(b, sizeof(b), "%s/t%zu", tmpdir, i + 2);
		if (run(hexp, a, b) != 0)
			goto out;
		read_file(b, &t);
		if (i < 1)
			continue;
		memset(&r, 0, sizeof(r));
		if (scan_buffer(sc, t.p, t.n, &r) != 0)
			abort();
		if (i + 2 <= SCAN_DECODE_DEPTH) {
			if (!ok(r.n == 1 && r.budget == 0,
				"a tower of gzip and "
				"%zu hex levels is found (budget %u)",
				i + 1, r.budget))
				dump(&r);
		} else
			ok(r.n == 0 && (r.budget & SCAN_BUDGET_DEPTH) != 0,
			    "a tower of gzip and %zu hex levels hits the depth "
			    "budget",
			    i + 1);
		scan_result_free(&r);
	}
out:
	free(in.p);
	free(out.p);
	free(t.p);
	scan_free(sc);
}

/*
 * A file with a gzip | base64 region across scan_fd's 512 KiB chunks:
 * a regular file is read whole, so the region decodes whole.
 */
static void
test_fd_whole(void)
{
	static const char *const gz[] = { "gzip", "-c", NULL };
	static const char *const b64[] = { "base64", NULL };
	struct scan *sc = compile1(S1, strlen(S1));
	struct scan_result r = { 0 };
	struct str t = { 0 }, out = { 0 };
	char a[96], b[96], c[96];
	unsigned x = 99;
	size_t i;
	FILE *f;

	for (i = 0; i < 1200000; i++) {
		x = x * 1103515245 + 12345;
		put(&t, "0123456789abcdef" + ((x >> 16) & 15), 1);
	}
	puts_(&t, " " S1 "\n");
	snprintf(a, sizeof(a), "%s/big", tmpdir);
	snprintf(b, sizeof(b), "%s/big.gz", tmpdir);
	snprintf(c, sizeof(c), "%s/big.b64", tmpdir);
	write_file(a, t.p, t.n);
	if (run(gz, a, b) != 0 || run(b64, b, c) != 0 ||
	    read_file(c, &out) != 0) {
		ok(1, "scan_fd whole # SKIP no gzip or base64");
		goto out;
	}
	f = fopen(a, "wb");
	for (i = 0; i < 400000; i++)
		fputc("lorem ipsum \n"[i % 13], f);
	fwrite(out.p, 1, out.n, f);
	fclose(f);
	f = fopen(a, "rb");
	if (scan_fd(sc, fileno(f), &r) != 0)
		abort();
	fclose(f);
	if (!ok(r.n == 1 && strcmp(r.v[0].form, "base64>gzip>raw") == 0 &&
		    r.v[0].offset == 400000,
		"scan_fd: a %zu-byte gzip | base64 "
		"region across chunks, decoded whole",
		out.n))
		dump(&r);
out:
	scan_result_free(&r);
	free(t.p);
	free(out.p);
	scan_free(sc);
}

/* ---- pieces ---- */

static int
split_of(const struct scan *sc, size_t min, const char *const *segs,
    size_t nseg, size_t *npieces)
{
	struct scan_split *sp;
	const struct scan_piece *v;
	size_t i;
	int rc;

	if (scan_split_new(&sp, sc, min) != 0)
		abort();
	for (i = 0; i < nseg; i++)
		if (scan_split_add(sp, segs[i], strlen(segs[i]), i) != 0)
			abort();
	rc = scan_split_result(sp, 0, &v, npieces);
	scan_split_free(sp);
	return rc;
}

static void
test_split(void)
{
	const char *hexsec = "9f86d081884c7d659a2feaa0c55ad015";
	struct scan *sc = compile1(S1, strlen(S1));
	struct scan *hs = compile1(hexsec, strlen(hexsec));
	const char *two[] = { "head -c 12: sk-live-0123",
		"tail: 456789abcdef" };
	const char *three[] = { "sk-live-0", "ignored", "sk-live-012345678",
		"x 456789abcdef" };
	const char *b64[] = { "c2stbGl2ZS0wMTIz", "NDU2Nzg5YWJjZGVm" };
	const char *back[] = { "456789abcdef", "sk-live-0123" };
	const char *gap[] = { "sk-live-0123", "56789abcdef" };
	const char *off1[] = { "sk-live-0123", "456789abcdeF" };
	const char *pre[] = { "sk-live-0123456789abcde" };
	const char *other[] = { "sk-live-0123", "sk-live-9876543210fedcba" };
	const char *small[] = { "sk-live-", "0123", "4567", "89abcdef" };
	struct str rnd = { 0 };
	const char *rv[1];
	size_t n, i;
	unsigned x = 777;

	ok(split_of(sc, 0, two, 2, &n) == 1 && n == 2,
	    "split: two raw pieces in two segments");
	ok(split_of(sc, 0, three, 4, &n) == 1 && n == 2,
	    "split: overlapping pieces, the chain is the shortest greedy one");
	ok(split_of(sc, 0, b64, 2, &n) == 1 && n == 2,
	    "split: each piece base64'd");
	ok(split_of(sc, 0, back, 2, &n) == 0, "near miss: pieces out of order");
	ok(split_of(sc, 0, gap, 2, &n) == 0, "near miss: a byte missing");
	ok(split_of(sc, 0, off1, 2, &n) == 0, "near miss: a byte off");
	ok(split_of(sc, 0, pre, 1, &n) == 0, "near miss: a prefix");
	ok(split_of(sc, 0, other, 2, &n) == 0,
	    "near miss: another secret sharing the prefix");
	ok(split_of(sc, 0, small, 4, &n) == 0,
	    "pieces shorter than %d bytes do not count", SCAN_SPLIT_MIN);
	/* the minimum: random hex covers a hex secret with 4, not with 8 */
	for (i = 0; i < 400000; i++) {
		x = x * 1103515245 + 12345;
		put(&rnd, "0123456789abcdef" + ((x >> 16) & 15), 1);
	}
	rv[0] = rnd.p;
	ok(split_of(hs, 4, rv, 1, &n) == 1,
	    "with 4-byte pieces 400 KB of random hex covers a hex secret");
	ok(split_of(hs, SCAN_SPLIT_MIN, rv, 1, &n) == 0,
	    "with %d-byte pieces it does not", SCAN_SPLIT_MIN);
	free(rnd.p);
	scan_free(hs);
	scan_free(sc);
}

/* ---- DNS labels ---- */

static void
test_dns(void)
{
	struct scan *sc = compile1(S1, strlen(S1));
	struct scan_result r = { 0 };
	/* base32 of S1: ONVS23DJOZSS2MBRGIZTINJWG44DSYLCMNSGKZQ */
	const char *b32[] = { "onvs23djozss2mbrgiz.ti.x.evil.example",
		"njwg44dsylcmnsgkzq.x.evil.example" };
	const char *b32mixed[] = { "1.oNvS23dJOZss2MBRGIZTINjwg44.evil.io",
		"2.DSYLCMNSGKZQ.evil.io" };
	const char *hexn[] = { "736b2d6c6976652d3031323334.t.example.com",
		"3536373839616263646566.t.example.com" };
	const char *miss[] = { "onvs23djozss2mbrgiz.ti.x.evil.example",
		"njwg44dsylcmnsgkzy.x.evil.example" };
	const char *half[] = { "onvs23djozss2mbrgiz.ti.x.evil.example" };
	size_t l[2];
	int i;

	for (i = 0; i < 2; i++)
		l[i] = strlen(b32[i]);
	if (scan_dns(sc, b32, l, 2, &r) != 0)
		abort();
	if (!ok(r.n == 1 && strcmp(r.v[0].form, "dns>base32-lower@0") == 0 &&
		    r.v[0].offset == 0 && r.v[0].length == 2,
		"dns: lower-case base32 over the labels of two names"))
		dump(&r);
	r.n = 0;
	for (i = 0; i < 2; i++)
		l[i] = strlen(b32mixed[i]);
	if (scan_dns(sc, b32mixed, l, 2, &r) != 0)
		abort();
	if (!ok(r.n == 1 && strcmp(r.v[0].form, "dns>base32@0") == 0,
		"dns: mixed-case base32 after sequence numbers"))
		dump(&r);
	r.n = 0;
	for (i = 0; i < 2; i++)
		l[i] = strlen(hexn[i]);
	if (scan_dns(sc, hexn, l, 2, &r) != 0)
		abort();
	if (!ok(r.n == 1 && strcmp(r.v[0].form, "dns>hex") == 0,
		"dns: hex over two names"))
		dump(&r);
	r.n = 0;
	for (i = 0; i < 2; i++)
		l[i] = strlen(miss[i]);
	if (scan_dns(sc, miss, l, 2, &r) != 0)
		abort();
	if (!ok(r.n == 0, "near miss: dns, the last digit off"))
		dump(&r);
	l[0] = strlen(half[0]);
	if (scan_dns(sc, half, l, 1, &r) != 0)
		abort();
	ok(r.n == 0, "near miss: dns, half the encoding");
	scan_result_free(&r);
	scan_free(sc);
}

/* ---- what decoders give that is not text ---- */

static void
b91(const unsigned char *p, size_t n, struct str *out)
{
	static const char al[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	    "!#$%&()*+,./:;<=>?@[]^_`{|}~\"";
	unsigned b = 0, nb = 0, v;
	size_t i;

	for (i = 0; i < n; i++) {
		b |= (unsigned)p[i] << nb;
		nb += 8;
		if (nb > 13) {
			v = b & 8191;
			if (v > 88) {
				b >>= 13;
				nb -= 13;
			} else {
				v = b & 16383;
				b >>= 14;
				nb -= 14;
			}
			put(out, al + v % 91, 1);
			put(out, al + v / 91, 1);
		}
	}
	if (nb > 0) {
		put(out, al + b % 91, 1);
		if (nb > 7 || b > 90)
			put(out, al + b / 91, 1);
	}
}

static void
b64(const unsigned char *p, size_t n, struct str *out)
{
	static const char al[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t i;

	for (i = 0; i < n; i += 3) {
		unsigned v = (unsigned)p[i] << 16 |
		    (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
		    (i + 2 < n ? p[i + 2] : 0);

		put(out, al + (v >> 18), 1);
		put(out, al + (v >> 12 & 63), 1);
		put(out, i + 1 < n ? al + (v >> 6 & 63) : "=", 1);
		put(out, i + 2 < n ? al + (v & 63) : "=", 1);
	}
}

/*
 * Decoded bytes that are not text: a binary secret in basE91 (which has
 * no literal form: the decoded bytes are scanned for the secret as it
 * is, though they are not text), and a brotli stream of a file in
 * base64 wrapped inside a JSON string (the lines are one token: the
 * stream is decoded whole, not line by line).
 */
static void
test_not_text(void)
{
	struct str line = { 0 }, t = { 0 }, f = { 0 };
	struct scan_result r;
	struct scan *sc;
	unsigned char sec[24], z[4096];
	unsigned x = 777;
	size_t i, k, found = 0, zn;

	for (k = 0; k < 16; k++) {
		for (i = 0; i < sizeof(sec); i++) {
			x = x * 1103515245 + 12345;
			sec[i] = (unsigned char)(x >> 16);
		}
		line.n = 0;
		puts_(&line, "the key, in basE91: ");
		b91(sec, sizeof(sec), &line);
		puts_(&line, " (end)\n");
		sc = compile1((const char *)sec, sizeof(sec));
		memset(&r, 0, sizeof(r));
		if (scan_buffer(sc, line.p, line.n, &r) != 0)
			abort();
		found += has_form(&r, "base91>raw");
		scan_result_free(&r);
		scan_free(sc);
	}
	ok(found == 16, "16 random binary secrets in basE91: %zu found", found);

	/* a .env whose key is past the first line's bytes */
	puts_(&f, "# settings of the service, kept out of the repository\n");
	for (i = 0; i < 6; i++)
		puts_(&f, "LOG_LEVEL=debug\nREGION=eu-west-1\nTIMEOUT=30\n");
	puts_(&f, "API_KEY=sk-live-4f9a0c7d2e1b8a6f\n");
	zn = sizeof(z);
	if (!BrotliEncoderCompress(BROTLI_DEFAULT_QUALITY,
		BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, f.n,
		(const uint8_t *)f.p, &zn, z))
		abort();
	b64(z, zn, &t);
	line.n = 0;
	puts_(&line, "{\"type\":\"tool_result\",\"content\":\"");
	for (i = 0; i < t.n; i += 76) {
		put(&line, t.p + i, t.n - i < 76 ? t.n - i : 76);
		if (i + 76 < t.n)
			puts_(&line, "\\n");
	}
	puts_(&line, "\"}\n");
	sc = compile1("sk-live-4f9a0c7d2e1b8a6f", 24);
	memset(&r, 0, sizeof(r));
	if (scan_buffer(sc, line.p, line.n, &r) != 0)
		abort();
	if (!ok(has_form(&r, "base64>brotli>raw"),
		"brotli of a file, base64 wrapped at 76 in a JSON string "
		"(%zu bytes compressed): base64>brotli>raw",
		zn))
		dump(&r);
	scan_result_free(&r);
	scan_free(sc);
	free(line.p);
	free(t.p);
	free(f.p);
}

/* Do two lists hold the same findings, in the same order? */
static int
same_findings(const struct scan_result *a, const struct scan_result *b)
{
	size_t i;

	if (a->n != b->n || a->budget != b->budget)
		return 0;
	for (i = 0; i < a->n; i++)
		if (a->v[i].offset != b->v[i].offset ||
		    a->v[i].length != b->v[i].length ||
		    a->v[i].secret != b->v[i].secret ||
		    strcmp(a->v[i].form, b->v[i].form) != 0)
			return 0;
	return 1;
}

/*
 * fold -wK | tac | tr -d '\n' of s into o ("grouprevK"), each K-byte
 * group reversed in place ("byteswapK"), or the groups in reverse order
 * joined by a blank ("grouprevK-blank") or a line break
 * ("grouprevK-line"), or by line breaks but the first two joined
 * ("grouprevK-tac": tac of a file without its last line break). fold
 * leaves the last group short.
 */
static void
group(const struct str *s, struct str *o, const char *how)
{
	size_t k = (size_t)atoi(how + 8), ng = (s->n + k - 1) / k, g, s0, e;
	int swap = how[0] == 'b';
	const char *sep = strchr(how, '-');

	for (g = 0; g < ng; g++) {
		s0 = (swap ? g : ng - 1 - g) * k;
		e = s0 + k < s->n ? s0 + k : s->n;
		if (g > 0 && sep != NULL &&
		    !(g == 1 && strcmp(sep, "-tac") == 0))
			put(o, strcmp(sep, "-blank") == 0 ? " " : "\n", 1);
		if (swap)
			for (; e > s0; e--)
				put(o, s->p + e - 1, 1);
		else
			put(o, s->p + s0, e - s0);
	}
}

/* Scans pre, then p, then post, as one buffer, into r. */
static void
scan_framed(struct scan *sc, const char *pre, const struct str *p,
    const char *post, struct scan_result *r)
{
	struct str t = { 0 };

	puts_(&t, pre);
	put(&t, p->p, p->n);
	puts_(&t, post);
	memset(r, 0, sizeof(*r));
	if (scan_buffer(sc, t.p, t.n, r) != 0)
		abort();
	free(t.p);
}

/* One step of test_undo's chains, applied to s in place. */
static void
step(struct str *s, const char *how)
{
	struct str o = { 0 };
	size_t i;

	put(&o, "", 0);
	if (strcmp(how, "base64") == 0)
		b64((unsigned char *)s->p, s->n, &o);
	else if (strcmp(how, "base91") == 0)
		b91((unsigned char *)s->p, s->n, &o);
	else if (strcmp(how, "hex") == 0)
		for (i = 0; i < s->n; i++) {
			char h[3];

			snprintf(h, sizeof(h), "%02x", (unsigned char)s->p[i]);
			put(&o, h, 2);
		}
	else if (strcmp(how, "bits") == 0) /* grouped by bytes */
		for (i = 0; i < s->n; i++) {
			int b;

			for (b = 7; b >= 0; b--)
				put(&o,
				    (unsigned char)s->p[i] >> b & 1 ? "1" : "0",
				    1);
			if (i + 1 < s->n)
				put(&o, " ", 1);
		}
	else if (strcmp(how, "zlib") == 0 || strcmp(how, "gzip") == 0) {
		unsigned char z[1024];
		z_stream zs;

		memset(&zs, 0, sizeof(zs));
		if (deflateInit2(&zs, 9, Z_DEFLATED, how[0] == 'g' ? 31 : 15, 8,
			Z_DEFAULT_STRATEGY) != Z_OK)
			abort();
		zs.next_in = (unsigned char *)s->p;
		zs.avail_in = (unsigned)s->n;
		zs.next_out = z;
		zs.avail_out = sizeof(z);
		if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
			abort();
		put(&o, z, sizeof(z) - zs.avail_out);
		deflateEnd(&zs);
	} else if (strcmp(how, "html") == 0) /* entities, every other */
		for (i = 0; i < s->n; i++) {
			char t[16];

			snprintf(t, sizeof(t), i % 3 == 0 ? "&#%u;" : "&#x%x;",
			    (unsigned char)s->p[i]);
			if (i % 3 == 2)
				put(&o, s->p + i, 1);
			else
				put(&o, t, strlen(t));
		}
	else if (strcmp(how, "mathbold") == 0) /* letters, digits */
		for (i = 0; i < s->n; i++) {
			unsigned c = (unsigned char)s->p[i], cp = 0;
			unsigned char u[4];

			if (c >= 'A' && c <= 'Z')
				cp = 0x1d400 + c - 'A';
			else if (c >= 'a' && c <= 'z')
				cp = 0x1d41a + c - 'a';
			else if (c >= '0' && c <= '9')
				cp = 0x1d7ce + c - '0';
			if (cp == 0) {
				put(&o, s->p + i, 1);
				continue;
			}
			u[0] = (unsigned char)(0xf0 | cp >> 18);
			u[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
			u[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
			u[3] = (unsigned char)(0x80 | (cp & 0x3f));
			put(&o, u, 4);
		}
	else if (strcmp(how, "qp") == 0) /* a soft break after 6 */
		for (i = 0; i < s->n; i++) {
			char t[4];

			if (i == 6)
				put(&o, "=\n", 2);
			if (s->p[i] == '=' || (unsigned char)s->p[i] < 0x21 ||
			    (unsigned char)s->p[i] > 0x7e) {
				snprintf(t, sizeof(t), "=%02X",
				    (unsigned char)s->p[i]);
				put(&o, t, 3);
			} else
				put(&o, s->p + i, 1);
		}
	else if (strcmp(how, "xor") == 0) /* one byte: 0x5a */
		for (i = 0; i < s->n; i++) {
			unsigned char c = (unsigned char)s->p[i] ^ 0x5a;

			put(&o, &c, 1);
		}
	else if (strcmp(how, "reverse") == 0)
		for (i = s->n; i > 0; i--)
			put(&o, s->p + i - 1, 1);
	else if (strncmp(how, "grouprev", 8) == 0 ||
	    strncmp(how, "byteswap", 8) == 0)
		group(s, &o, how);
	else if (strcmp(how, "rot47") == 0)
		for (i = 0; i < s->n; i++) {
			unsigned char c = (unsigned char)s->p[i];

			if (c > 0x20 && c < 0x7f)
				c = (unsigned char)(33 + (c - 33 + 47) % 94);
			put(&o, &c, 1);
		}
	else if (strncmp(how, "rot", 3) == 0)
		for (i = 0; i < s->n; i++) {
			char c = s->p[i];
			int k = atoi(how + 3);

			if (c >= 'a' && c <= 'z')
				c = (char)('a' + (c - 'a' + k) % 26);
			else if (c >= 'A' && c <= 'Z')
				c = (char)('A' + (c - 'A' + k) % 26);
			put(&o, &c, 1);
		}
	else
		abort();
	s->n = 0;
	put(s, o.p, o.n);
	free(o.p);
}

/*
 * A rotation, rot47 or reversal over a transform with no literal form
 * of the secret (base64 of its hex, basE91): no trigger shows where, the
 * run is undone where a decoder reads what that gives. XOR over a
 * compressed stream: its key is the one under which the stream's magic
 * shows. A rotation over HTML entities: the rotated 'x' of a hex entity
 * shows which. Bits grouped by blanks under rot47 ('_' and '`'). basE91
 * under a rotation: each rotation whose first group starts text.
 * Quoted-printable under rot47 (its soft break reads "l\n"); look-alikes
 * of HTML entities (both decoders read the line); XOR of look-alikes or
 * entities (the key under which they read as such). Each chain is
 * found with its name, in a line and as a JSON value; the same chains
 * over a near miss (the last byte off) find nothing. The secret's groups
 * in reverse order, joined by blanks or line breaks (fold -wK | tac):
 * literal forms, found as they are.
 */
static void
test_undo(void)
{
	static const struct {
		const char *steps[3]; /* innermost first */
		const char *form;
	} cases[] = {
		{ { "hex", "base64", "rot47" }, "rot47>base64>hex" },
		{ { "hex", "base64", "reverse" }, "reverse>base64>hex" },
		{ { "base91", "base64", "rot47" }, "rot47>base64>base91>raw" },
		{ { "base91", "reverse", NULL }, "reverse>base91>raw" },
		{ { "base64", "hex", "rot5" }, "rot5>hex>base64@0" },
		{ { "base91", "hex", "rot11" }, "rot11>hex>base91>raw" },
		{ { "bits", "reverse", NULL }, "reverse>bits>raw" },
		/* XOR over a compressor: the key from the stream's magic */
		{ { "zlib", "xor", "hex" }, "hex>xor>zlib>raw" },
		{ { "gzip", "xor", "base64" }, "base64>xor>gzip>raw" },
		/* a rotation over entities: a hex one's 'x' shows which */
		{ { "html", "rot22", NULL }, "rot22>html-unescape>raw" },
		{ { "base64", "html", "rot9" }, "rot9>html-unescape>base64@0" },
		/* basE91 under a rotation: its alphabet the same */
		{ { "base91", "rot11", NULL }, "rot11>base91>raw" },
		{ { "hex", "base91", "rot20" }, "rot20>base91>hex" },
		/* grouped bits under rot47: '_' and '`' */
		{ { "bits", "rot47", NULL }, "rot47>bits>raw" },
		{ { "bits", "reverse", "rot47" }, "rot47>reverse>bits>raw" },
		/* quoted-printable under rot47: "=\n" reads "l\n" */
		{ { "qp", "rot47", NULL }, "rot47>quoted-printable>raw" },
		{ { "hex", "qp", "rot47" }, "rot47>quoted-printable>hex" },
		/* look-alikes of entities: each decoder reads the line */
		{ { "html", "mathbold", NULL },
		    "unicode-fold>html-unescape>raw" },
		{ { "hex", "html", "mathbold" },
		    "unicode-fold>html-unescape>hex" },
		/* rot47 of basE91 is basE91 text too: undone all the same */
		{ { "base91", "rot47", NULL }, "rot47>base91>raw" },
		{ { "hex", "base91", "rot47" }, "rot47>base91>hex" },
		/* XOR of text a text decoder reads: the key that shows it */
		{ { "mathbold", "xor", "hex" }, "hex>xor>unicode-fold>raw" },
		{ { "html", "xor", "base64" }, "base64>xor>html-unescape>raw" },
		/* the secret's groups in reverse order, spaced: literal */
		{ { "grouprev4-blank", NULL, NULL }, "grouprev4-sep" },
		{ { "grouprev5-line", NULL, NULL }, "grouprev5-sep" },
		{ { "grouprev2-blank", NULL, NULL }, "grouprev2-sep" },
		{ { "grouprev8-line", NULL, NULL }, "grouprev8-sep" },
		{ { "grouprev5-tac", NULL, NULL }, "grouprev5-sep" },
		{ { "grouprev4-tac", NULL, NULL }, "grouprev4-sep" },
		/* group triggers: K-byte groups reversed, in order or each */
		{ { "grouprev4", NULL, NULL }, "grouprev4>raw" },
		{ { "grouprev5", NULL, NULL }, "grouprev5>raw" },
		{ { "grouprev7", NULL, NULL }, "grouprev7>raw" },
		{ { "grouprev8", NULL, NULL }, "grouprev8>raw" },
		{ { "byteswap2", NULL, NULL }, "byteswap2>raw" },
		{ { "byteswap4", NULL, NULL }, "byteswap4>raw" },
		{ { "byteswap7", NULL, NULL }, "byteswap7>raw" },
		{ { "grouprev3", "base64", NULL }, "base64>grouprev3>raw" },
		{ { "base64", "grouprev4", NULL }, "grouprev4>base64@0" },
		{ { "hex", "grouprev4", NULL }, "hex>grouprev2>raw" },
		{ { "byteswap4", "hex", NULL }, "hex>byteswap4>raw" },
	};
	struct scan *sc = compile1(S1, strlen(S1));
	struct str enc = { 0 };
	struct scan_result r;
	size_t i, j;
	int miss;

	for (miss = 0; miss < 2; miss++)
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			enc.n = 0;
			puts_(&enc, miss ? MISS : S1);
			for (j = 0; j < 3 && cases[i].steps[j] != NULL; j++)
				step(&enc, cases[i].steps[j]);
			scan_framed(sc, "# notes\ntoken: ", &enc,
			    "\nnext line\n", &r);
			if (miss)
				ok(r.n == 0,
				    "near miss: %s of the secret one byte off "
				    "(%zu findings)",
				    cases[i].form, r.n);
			else if (!ok(has_form(&r, cases[i].form),
				     "undone without a trigger: %s",
				     cases[i].form))
				dump(&r);
			scan_result_free(&r);
		}
	free(enc.p);
	scan_free(sc);
}

/*
 * Group reversal of a .env file folded whole (fold -wK | tac | tr -d
 * '\n': fold splits each line, so a line's last group is short; and
 * each group reversed in place), the secret after a key of every length
 * mod K (its phase), K = 2..8: found as grouprevK>raw or byteswapK>raw.
 * Near misses (the first or last byte off, 3 bytes short at either
 * end): nothing, though the edge groups are shared with the key.
 */
static void
test_group_edges(void)
{
	static const char *const miss[] = { MISS, "tk-live-0123456789abcdef",
		"sk-live-0123456789abc", "live-0123456789abcdef" };
	struct scan *sc = compile1(S1, strlen(S1));
	struct str ln[3] = { { 0 }, { 0 }, { 0 } }, enc = { 0 };
	struct scan_result r;
	char how[16], want[32];
	size_t k, lead, i, j, bad = 0, lost = 0, n = 0;
	int swap;

	for (swap = 0; swap < 2; swap++)
		for (k = 2; k <= 8; k++)
			for (lead = 0; lead < k; lead++)
				for (i = 0; i <= 4; i++) {
					for (j = 0; j < 3; j++)
						ln[j].n = 0;
					puts_(&ln[0], "# env");
					puts_(&ln[1],
					    "XXXXXXXXAPI_KEY=" + 8 - lead);
					puts_(&ln[1],
					    i == 0 ? S1 : miss[i - 1]);
					puts_(&ln[2], "OTHER=1");
					snprintf(how, sizeof(how), "%s%zu",
					    swap ? "byteswap" : "grouprev", k);
					enc.n = 0;
					put(&enc, "", 0);
					for (j = 0; j < 3; j++)
						group(&ln[swap ? j : 2 - j],
						    &enc, how);
					memset(&r, 0, sizeof(r));
					if (scan_buffer(sc, enc.p, enc.n, &r) !=
					    0)
						abort();
					snprintf(want, sizeof(want), "%s>raw",
					    how);
					n++;
					if (i == 0 && !has_form(&r, want)) {
						lost++;
						printf("# lost: %s, lead %zu\n",
						    how, lead);
						dump(&r);
					}
					if (i > 0 && r.n > 0) {
						bad++;
						printf("# near miss found: %s, "
						       "lead "
						       "%zu: %s\n",
						    how, lead, miss[i - 1]);
						dump(&r);
					}
					scan_result_free(&r);
				}
	ok(lost == 0,
	    "group reversal of a file folded whole: %zu of %zu "
	    "lost",
	    lost, n / 5);
	ok(bad == 0, "group reversal of near misses: %zu of %zu found", bad,
	    n / 5 * 4);
	for (j = 0; j < 3; j++)
		free(ln[j].p);
	free(enc.p);
	scan_free(sc);
}

/*
 * grouprev4 of a secret's base64 (its quartets in reverse order), for
 * secrets of 24 to 26 bytes: padded, and unpadded (base64url, JWTs),
 * where fold's last group, first in the output, is short: found as
 * grouprev4>base64@0 after a key and a blank; the same with the secret's
 * last byte changed: nothing.
 */
static void
test_group_b64(void)
{
	static const char *const sec[] = { S1, S1 "g", S1 "gh" };
	struct str in = { 0 }, enc = { 0 }, sv = { 0 };
	struct scan_result r;
	struct scan *sc;
	size_t i, j, pad, miss;

	for (i = 0; i < 3; i++) {
		sc = compile1(sec[i], strlen(sec[i]));
		for (pad = 0; pad < 2; pad++)
			for (miss = 0; miss < 2; miss++) {
				in.n = enc.n = sv.n = 0;
				put(&in, "", 0);
				puts_(&sv, sec[i]);
				if (miss)
					sv.p[sv.n - 1] = 'z';
				b64((const unsigned char *)sv.p, sv.n, &in);
				while (
				    !pad && in.n > 0 && in.p[in.n - 1] == '=')
					in.n--;
				put(&enc, "", 0);
				group(&in, &enc, "grouprev4");
				scan_framed(sc, "token: ", &enc, "\n", &r);
				j = strlen(sec[i]);
				if (miss)
					ok(r.n == 0,
					    "grouprev4 of %s base64 of a near "
					    "miss of %zu bytes: nothing (%zu "
					    "findings)",
					    pad ? "padded" : "unpadded", j,
					    r.n);
				else if (!ok(has_form(&r, "grouprev4>base64@0"),
					     "grouprev4 of %s base64 of a "
					     "secret of %zu bytes",
					     pad ? "padded" : "unpadded", j))
					dump(&r);
				scan_result_free(&r);
			}
		scan_free(sc);
	}
	free(in.p);
	free(enc.p);
	free(sv.p);
}

/*
 * Runs come back (the wire resends the conversation): the transform pass
 * and the decode pass (base64 and hex runs) decode a run once and
 * report what they found at every place it is
 * (scan_int.h, struct scan_memo). A scan with the memo must give what
 * one without it gives, findings and budget bits, wherever the runs
 * repeat: transforms found through triggers, runs that hit the depth
 * budget, runs that hit the bytes budget (a bomb: never kept), and
 * through scan_fd's chunks, where one memo serves the whole file.
 */
static void
test_memo(void)
{
	struct scan *sc = compile1(S1, strlen(S1));
	struct str d = { 0 }, rot = { 0 }, t = { 0 }, z = { 0 };
	struct scan_result a, b, c;
	struct scan_memo memo;
	unsigned char *zb;
	uLongf zn;
	size_t i, k, n7, nz, ng, dl;
	int pfd[2];
	pid_t pid;

	/* rot7 of the secret and rot47 of it, in runs that come back */
	for (i = 0; S1[i] != '\0'; i++) {
		char ch = S1[i];

		if (ch >= 'a' && ch <= 'z')
			ch = (char)('a' + (ch - 'a' + 7) % 26);
		put(&rot, &ch, 1);
	}
	for (i = 0; i < 60; i++) {
		char ln[160];

		snprintf(ln, sizeof(ln),
		    "{\"n\":%zu,\"text\":\"export TOKEN=%s; path=/srv/%zu/x\"}"
		    "\\n",
		    i % 7, rot.p, i % 3);
		puts_(&d, ln);
		if (i % 5 == 0)
			puts_(&d,
			    "{\"k\":\"!sp\\\\=:G6\\\\_`a2bcde7\\\\89:;<=>?@"
			    "23456789\"}\n");
	}
	/* the secret's groups of 4 in reverse order after a key, at 4
	 * phases, each 5 times: group triggers through the memo */
	for (i = 0; i < 20; i++) {
		z.n = 0;
		puts_(&z, "XXXKEY=" + i % 4);
		puts_(&z, S1);
		t.n = 0;
		put(&t, "", 0);
		group(&z, &t, "grouprev4");
		puts_(&d, "{\"g\":\"");
		put(&d, t.p, t.n);
		puts_(&d, "\"}\n");
	}
	t.n = 0;
	/* a zlib stream's base64 holding the secret, three times: the
	 * decode pass's runs through the memo */
	z.n = 0;
	puts_(&z, "# env\nAPI_KEY=");
	puts_(&z, S1);
	puts_(&z, "\nOTHER=1\n");
	zn = compressBound(z.n);
	zb = malloc(zn);
	if (zb == NULL ||
	    compress2(zb, &zn, (unsigned char *)z.p, z.n, 9) != Z_OK)
		abort();
	for (k = 0; k < 3; k++) {
		puts_(&d, "{\"att\":\"");
		b64(zb, zn, &d);
		puts_(&d, "\"}\n");
	}
	free(zb);
	z.n = 0;
	dl = d.n;
	/*
	 * long runs with the same length and ends (the memo's hash), the
	 * rot7 of the secret in every other one at another place, more of
	 * them than the memo compares for one hash; each twice
	 */
	for (k = 0; k < 16; k++) {
		size_t m = k % 8;

		puts_(&d, "# same ");
		for (i = 0; i < 64 + m; i++)
			put(&d, i < 64 ? "." : ",", 1);
		for (i = 0; i < rot.n; i++)
			put(&d, m % 2 ? rot.p + i : "!", 1);
		for (i = m; i < 8 + 64; i++)
			put(&d, i < 8 ? "," : ":", 1);
		puts_(&d, "\n");
	}
	/* a run of base64 of a bomb, three times: the bytes budget */
	zn = compressBound(1u << 20);
	zb = malloc(zn);
	put(&z, "", 0);
	for (i = 0; i < (1u << 20) / 64; i++)
		puts_(&z,
		    "                                                          "
		    "      ");
	puts_(&z, S1);
	if (zb == NULL ||
	    compress2(zb, &zn, (unsigned char *)z.p, z.n, 9) != Z_OK)
		abort();
	for (k = 0; k < 3; k++) {
		puts_(&d, " blob=");
		b64(zb, zn, &d);
		puts_(&d, " \n");
	}
	/* runs deeper than the depth budget: hex of hex ... of rot7 */
	put(&t, rot.p, rot.n);
	for (k = 0; k < SCAN_DECODE_DEPTH + 1; k++) {
		struct str h = { 0 };

		for (i = 0; i < t.n; i++) {
			char x2[3];

			snprintf(x2, sizeof(x2), "%02x", (unsigned char)t.p[i]);
			put(&h, x2, 2);
		}
		t.n = 0;
		put(&t, h.p, h.n);
		free(h.p);
	}
	for (k = 0; k < 4; k++) {
		puts_(&d, "deep ");
		put(&d, t.p, t.n);
		puts_(&d, "\n");
	}
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	if (scan_buffer_memo(sc, d.p, d.n, &a, NULL) != 0 ||
	    scan_buffer(sc, d.p, d.n, &b) != 0)
		abort();
	for (i = 0, n7 = 0, nz = 0, ng = 0; i < b.n; i++) {
		n7 += strncmp(b.v[i].form, "rot7>", 5) == 0;
		nz += strncmp(b.v[i].form, "base64>zlib>", 12) == 0;
		ng += strncmp(b.v[i].form, "grouprev4>", 10) == 0;
	}
	if (!ok(same_findings(&a, &b) && n7 >= 60 && nz >= 3 && ng >= 20,
		"runs that come back: the memo gives every finding a scan "
		"without it gives (%zu and %zu findings, %zu rot7 of 60, "
		"%zu base64>zlib of 3, %zu grouprev4 of 20, budget %u and %u)",
		a.n, b.n, n7, nz, ng, a.budget, b.budget)) {
		dump(&a);
		dump(&b);
	}
	ok((b.budget & SCAN_BUDGET_DEPTH) != 0,
	    "and the depth budget a run hit is said again (%u)", b.budget);
	/* one memo for two calls: as if each were scanned alone */
	memset(&memo, 0, sizeof(memo));
	scan_result_free(&b);
	memset(&b, 0, sizeof(b));
	if (scan_buffer_memo(sc, d.p, d.n, &c, &memo) != 0 ||
	    scan_buffer_memo(sc, d.p, d.n, &b, &memo) != 0)
		abort();
	ok(same_findings(&a, &b) && same_findings(&a, &c),
	    "a memo kept from one call to the next changes nothing (%zu, "
	    "%zu findings)",
	    c.n, b.n);
	scan_memo_clear(&memo);
	scan_result_free(&b);
	memset(&b, 0, sizeof(b));
	/* scan_fd: 1.5 MB of the lines through a pipe, in chunks */
	t.n = 0;
	while (t.n < (3u << 19))
		put(&t, d.p, dl);
	scan_result_free(&a);
	memset(&a, 0, sizeof(a));
	if (scan_buffer_memo(sc, t.p, t.n, &a, NULL) != 0)
		abort();
	if (pipe(pfd) == -1 || (pid = fork()) == -1)
		abort();
	if (pid == 0) {
		size_t off = 0;
		ssize_t w;

		close(pfd[0]);
		while (
		    off < t.n && (w = write(pfd[1], t.p + off, t.n - off)) > 0)
			off += (size_t)w;
		_exit(0);
	}
	close(pfd[1]);
	if (scan_fd(sc, pfd[0], &b) != 0)
		abort();
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	for (i = 0, n7 = 0; i < b.n; i++)
		n7 += strncmp(b.v[i].form, "rot7>", 5) == 0;
	if (!ok(same_findings(&a, &b) && n7 == 60 * (t.n / dl),
		"through scan_fd's chunks too (%zu and %zu findings, %zu "
		"rot7)",
		a.n, b.n, n7)) {
		for (i = 0; i < a.n && i < b.n; i++)
			if (a.v[i].offset != b.v[i].offset ||
			    strcmp(a.v[i].form, b.v[i].form) != 0)
				printf("#   %zu: %s at %zu+%zu, %s at "
				       "%zu+%zu\n",
				    i, a.v[i].form, a.v[i].offset,
				    a.v[i].length, b.v[i].form, b.v[i].offset,
				    b.v[i].length);
	}
	scan_result_free(&a);
	scan_result_free(&b);
	scan_result_free(&c);
	free(zb);
	free(d.p);
	free(rot.p);
	free(t.p);
	free(z.p);
	scan_free(sc);
}

/*
 * The memo tries the entry after the last one found before its table
 * (memo_get): runs that come back in the order they came, in another
 * order, and runs that come back often between them, drawn at random,
 * must give what a scan without the memo gives.
 */
static void
test_memo_order(void)
{
	static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrs"
				 "tuvwxyz0123456789+/=:,.-_{}\"";
	struct scan *sc = compile1(S1, strlen(S1));
	struct str d = { 0 }, rot = { 0 }, pool[24];
	struct scan_result a, b;
	unsigned x = 99, seed;
	size_t i, k, len, at, differ = 0, total = 0;

	for (i = 0; S1[i] != '\0'; i++) {
		char ch = S1[i];

		if (ch >= 'a' && ch <= 'z')
			ch = (char)('a' + (ch - 'a' + 7) % 26);
		put(&rot, &ch, 1);
	}
	for (seed = 0; seed < 6; seed++) {
		memset(pool, 0, sizeof(pool));
		for (k = 0; k < 24; k += 2) {
			x = x * 1103515245 + 12345;
			len = 12 + (x >> 16) % 190;
			for (i = 0; i < len; i++) {
				x = x * 1103515245 + 12345;
				put(&pool[k], &al[(x >> 16) % (sizeof(al) - 1)],
				    1);
			}
			/* its twin: the same length, the secret's rot7 in
			 * one of them, at the end */
			put(&pool[k + 1], pool[k].p, pool[k].n);
			put(&pool[k], rot.p, rot.n);
			put(&pool[k + 1], rot.p, rot.n);
			pool[k + 1].p[pool[k + 1].n - 1] = '.';
		}
		d.n = 0;
		for (i = 0, at = 0; i < 800; i++) {
			x = x * 1103515245 + 12345;
			switch ((x >> 16) % 8) {
			case 0: /* one that comes back often */
			case 1:
				k = (x >> 8) % 3;
				break;
			case 2: /* anywhere */
				k = (x >> 8) % 24;
				at = k;
				break;
			default: /* the sequence goes on */
				k = at = (at + 1) % 24;
				break;
			}
			put(&d, pool[k].p, pool[k].n);
			puts_(&d, (x >> 20) % 2 ? " " : "\n");
		}
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		if (scan_buffer_memo(sc, d.p, d.n, &a, NULL) != 0 ||
		    scan_buffer(sc, d.p, d.n, &b) != 0)
			abort();
		differ += !same_findings(&a, &b);
		total += b.n;
		scan_result_free(&a);
		scan_result_free(&b);
		for (k = 0; k < 24; k++)
			free(pool[k].p);
	}
	ok(differ == 0 && total > 0,
	    "runs that come back in order, out of order and often: the "
	    "memo gives what a scan without it gives (%zu of 6 differ, %zu "
	    "findings)",
	    differ, total);
	free(d.p);
	free(rot.p);
	scan_free(sc);
}

/*
 * Runs that come back often, in any order, with the same length and the
 * same first and last 8 bytes (the key of the memo's recent entries,
 * memo_rkey) but other bytes between: the recent entry under their key
 * is most often another of them's, which must not be taken for it
 * (taking it without comparing the bytes fails this: the rot7 of the
 * secret, in one of them, is then reported at the others).
 */
static void
test_memo_recent(void)
{
	struct scan *sc = compile1(S1, strlen(S1));
	struct str d = { 0 }, rot = { 0 };
	struct scan_result a, b;
	unsigned x = 7;
	size_t i, j, k, n7, lines = 0;

	for (i = 0; S1[i] != '\0'; i++) {
		char ch = S1[i];

		if (ch >= 'a' && ch <= 'z')
			ch = (char)('a' + (ch - 'a' + 7) % 26);
		put(&rot, &ch, 1);
	}
	for (i = 0; i < 400; i++) {
		x = x * 1103515245 + 12345;
		k = (x >> 16) % 4;
		puts_(&d, "key=ABCDEFGH");
		if (k == 0) {
			put(&d, rot.p, rot.n);
			lines++;
		} else
			for (j = 0; j < rot.n; j++)
				put(&d, &"ghijklmn"[(j * k) % 8], 1);
		puts_(&d, "STUVWXYZ\n");
	}
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (scan_buffer_memo(sc, d.p, d.n, &a, NULL) != 0 ||
	    scan_buffer(sc, d.p, d.n, &b) != 0)
		abort();
	for (i = 0, n7 = 0; i < b.n; i++)
		n7 += strncmp(b.v[i].form, "rot7>", 5) == 0;
	ok(same_findings(&a, &b) && n7 == lines,
	    "runs of one length and the same ends that come back in any "
	    "order: the memo gives what a scan without it gives (%zu and "
	    "%zu findings, %zu rot7 of %zu)",
	    a.n, b.n, n7, lines);
	scan_result_free(&a);
	scan_result_free(&b);
	free(d.p);
	free(rot.p);
	scan_free(sc);
}

/*
 * The memo's compare of two runs' bytes (8 to 64 bytes 8 or 16 at a
 * time, the last from the end, memcmp else) against a byte loop: for
 * every length up to 72 and every two offsets of buffers of one period
 * (7 bytes, so that many pairs are the same) with a byte changed at each
 * place in turn, the same answer.
 */
static void
test_memo_same(void)
{
	unsigned char b[80];
	size_t i, k, bad = 0;

	for (i = 0; i < sizeof(b); i++) {
		for (k = 0; k < sizeof(b); k++)
			b[k] = (unsigned char)"runs:a!"[k % 7];
		b[i] ^= (unsigned char)(1u << (i % 8));
		bad += scan_memo_same_differ(b, sizeof(b));
	}
	ok(bad == 0,
	    "the memo's compare of two runs gives what a byte loop gives, "
	    "for every length up to 72 and every two offsets (%zu differ)",
	    bad);
}

/*
 * A hex dump line's data read from masks of 64 bytes (the tokens) and its
 * bytes written all at once, against the byte loops: random buffers of
 * dump characters and edge bytes (the ends of the hex digits' ranges,
 * blanks, '|', NUL, bytes from 0x80), and lines as dumps write them with
 * a character changed now and then, each in a buffer of its own size
 * (so a read past it is one), from every offset for every length.
 */
static void
test_hex_tokens(void)
{
	static const char pick[] = "0123456789abcdefABCDEF  \t|:.";
	static const unsigned char edge[] = { '/', ':', '@', 'G', '`', 'g', 'F',
		'f', '9', '0', 'A', 'a', 0, 0x7f, 0x80, 0xff, 0x1f, '\n', '|',
		' ', '\t', 0x0b, 'x' };
	unsigned x = 77;
	size_t i, k, len, bad = 0;

	for (i = 0; i < 240; i++) {
		unsigned char *b;
		unsigned w;

		x = x * 1103515245 + 12345;
		len = 1 + (x >> 8) % 260;
		w = 2 * (1 + (x >> 20) % 4); /* a dump's token width */
		if ((b = malloc(len)) == NULL)
			abort();
		for (k = 0; k < len; k++) {
			x = x * 1103515245 + 12345;
			if (i % 3 == 0)
				b[k] = (x >> 16) % 4 == 0 ?
				    edge[(x >> 8) % sizeof(edge)] :
				    (unsigned char)
					pick[(x >> 18) % (sizeof(pick) - 1)];
			else if ((x >> 16) % 97 == 0)
				b[k] = edge[(x >> 8) % sizeof(edge)];
			else if (k % (w + 1) == w)
				b[k] = (x >> 10) % 50 == 0 ? '|' : ' ';
			else
				b[k] = (unsigned char)pick[(x >> 18) % 22];
		}
		bad += scan_decode_hex_differ(b, len);
		free(b);
	}
	ok(bad == 0,
	    "hex dump lines: tokens from masks, the first token's check, "
	    "bytes written at once and offset values are the byte loops' at "
	    "every offset and length of 240 random buffers (%zu differ)",
	    bad);
}

/* gzip of p[0..n) appended to out (zlib's gzip wrapper). */
static void
put_gzip(struct str *out, const void *p, size_t n)
{
	z_stream z;
	unsigned char buf[1 << 16];

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 9, Z_DEFLATED, 16 + MAX_WBITS, 8,
		Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	z.next_in = (Bytef *)(uintptr_t)p;
	z.avail_in = (uInt)n;
	z.next_out = buf;
	z.avail_out = sizeof(buf);
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	put(out, buf, sizeof(buf) - z.avail_out);
	deflateEnd(&z);
}

/* p as xxd dumps it (lines of 16 bytes), appended to out. */
static void
put_xxd(struct str *out, const char *p)
{
	size_t n = strlen(p), i, k;
	char h[16];

	for (i = 0; i < n; i += 16) {
		snprintf(h, sizeof(h), "%08zx:", i);
		puts_(out, h);
		for (k = 0; k < 16; k++) {
			if (k % 2 == 0)
				puts_(out, " ");
			if (i + k < n)
				snprintf(h, sizeof(h), "%02x",
				    (unsigned char)p[i + k]);
			else
				snprintf(h, sizeof(h), "  ");
			puts_(out, h);
		}
		puts_(out, "  ");
		for (k = 0; k < 16 && i + k < n; k++)
			put(out,
			    p[i + k] >= 0x20 && p[i + k] < 0x7f ? &p[i + k] :
								  ".",
			    1);
		puts_(out, "\n");
	}
}

/* p[0..n) as lower-case hex digits, appended to out. */
static void
put_hex(struct str *out, const char *p, size_t n)
{
	char h[3];
	size_t i;

	for (i = 0; i < n; i++) {
		snprintf(h, sizeof(h), "%02x", (unsigned char)p[i]);
		put(out, h, 2);
	}
}

/*
 * Scans in[0..n) with scan_at from a budget of work units work (the
 * bytes and depth budgets as scan_buffer gives them); the findings to r
 * (zeroed here), the budget's hit bits returned.
 */
static unsigned
scan_work(const struct scan *sc, const char *in, size_t n, uint64_t work,
    struct scan_result *r)
{
	struct scan_memo memo;
	struct scan_budget bg;

	memset(&memo, 0, sizeof(memo));
	memset(r, 0, sizeof(*r));
	bg.left = n * SCAN_DECODE_FACTOR + SCAN_DECODE_MIN;
	bg.maxdepth = SCAN_DECODE_DEPTH;
	bg.work = work;
	bg.hit = 0;
	bg.memo = &memo;
	if (scan_at(sc, (const unsigned char *)in, n, 0, &bg, r) != 0)
		abort();
	scan_memo_clear(&memo);
	return bg.hit;
}

/*
 * The work budget (scan_budget_late): a gzip | base64 run of a .env with
 * the secret is decoded and found from a budget of work, and from none
 * left it is neither decoded nor found, and the budget says "work"; towers
 * of hex side by side (each decoded down to the depth budget, by every
 * transform that fits at every level) spend scan_buffer's budget, and
 * say so, where one tower alone does not.
 */
static void
test_work_budget(void)
{
	struct scan *sc = compile1(S1, strlen(S1));
	struct str in = { 0 }, z = { 0 }, t = { 0 }, u = { 0 }, run = { 0 };
	struct scan_result r;
	unsigned hit;
	size_t i;

	make_input(&in, S1, 1, 0);
	put_gzip(&z, in.p, in.n);
	puts_(&run, "blob: ");
	b64((const unsigned char *)z.p, z.n, &run);
	puts_(&run, "\n");
	hit = scan_work(sc, run.p, run.n, SCAN_DECODE_WORK_MIN, &r);
	if (!ok(r.n == 1 && has_form(&r, "base64>gzip>raw") && hit == 0,
		"a gzip | base64 run of the secret is found from a budget of "
		"work (%zu findings, budget %u)",
		r.n, hit))
		dump(&r);
	scan_result_free(&r);
	hit = scan_work(sc, run.p, run.n, 0, &r);
	if (!ok(r.n == 0 && hit == SCAN_BUDGET_WORK,
		"and from none left it is not decoded (%zu findings, "
		"budget %u)",
		r.n, hit))
		dump(&r);
	scan_result_free(&r);

	/* the secret, hex x 7: 128 times its length */
	put(&t, S1, strlen(S1));
	for (i = 0; i < 7; i++) {
		u.n = 0;
		put_hex(&u, t.p, t.n);
		t.n = 0;
		put(&t, u.p, u.n);
	}
	puts_(&t, "\n");
	memset(&r, 0, sizeof(r));
	if (scan_buffer(sc, t.p, t.n, &r) != 0)
		abort();
	ok(r.n == 0 && r.budget == SCAN_BUDGET_DEPTH,
	    "a tower of 7 hex levels (%zu bytes) hits the depth budget alone "
	    "(budget %u)",
	    t.n, r.budget);
	scan_result_free(&r);
	u.n = 0;
	for (i = 0; i < 8; i++)
		put(&u, t.p, t.n);
	memset(&r, 0, sizeof(r));
	if (scan_buffer(sc, u.p, u.n, &r) != 0)
		abort();
	ok(r.n == 0 && r.budget == (SCAN_BUDGET_DEPTH | SCAN_BUDGET_WORK),
	    "8 of them side by side (%zu bytes) spend the work budget "
	    "(budget %u)",
	    u.n, r.budget);
	scan_result_free(&r);
	free(in.p);
	free(z.p);
	free(t.p);
	free(u.p);
	free(run.p);
	scan_free(sc);
}

/* A decoder for scan_memo_run: counts its calls, spends and finds. */
struct fake_dec {
	struct scan_budget *bg;
	struct scan_result *res;
	unsigned calls;
};

static int
fake_decode(void *ctx, size_t s, size_t e)
{
	struct fake_dec *fd = ctx;
	struct scan_finding f;

	memset(&f, 0, sizeof(f));
	f.form = "fake";
	f.offset = s + 1;
	f.length = e - s - 1;
	fd->calls++;
	scan_budget_spend(fd->bg, 100);
	fd->bg->left -= 10;
	fd->bg->hit |= SCAN_BUDGET_DEPTH;
	return scan_res_push(fd->res, &f);
}

/*
 * The memo's contract (scan_memo_run), against the decoder called each
 * time: a run that comes back is not decoded again, its finding is given
 * at its own place and its cost (work, decoded bytes, budget bits) spent
 * again; one the budget cannot pay for (work not more than it cost, or
 * fewer decoded bytes left) is decoded again, and still given from the
 * memo after; the same bytes under another tag (another pass) are
 * decoded apart. Under tags 0 and 1 (the memo's first probes find the
 * run) and SCAN_MEMO_TAGS and one more (none: its table finds it).
 */
static void
test_memo_pay(unsigned tag)
{
	static const size_t at[] = { 0, 100, 200, 200, 100, 200 };
	struct scan_memo memo;
	struct scan_budget bg;
	struct scan_result r = { 0 };
	struct fake_dec fd = { &bg, &r, 0 };
	unsigned char buf[300];
	size_t i;
	int good;

	memset(&memo, 0, sizeof(memo));
	memset(buf, '.', sizeof(buf));
	for (i = 0; i < 3; i++)
		memcpy(buf + 100 * i, "a run of 20 bytes!!!", 20);
	bg.left = 1000;
	bg.maxdepth = SCAN_DECODE_DEPTH;
	bg.work = 1000;
	bg.hit = 0;
	bg.memo = &memo;
	if (scan_memo_run(&bg, buf, 0, 20, tag, &r, fake_decode, &fd) != 0)
		abort();
	bg.hit = 0;
	if (scan_memo_run(&bg, buf, 100, 120, tag, &r, fake_decode, &fd) != 0)
		abort();
	ok(fd.calls == 1 && bg.work == 800 && bg.left == 980 &&
		bg.hit == SCAN_BUDGET_DEPTH,
	    "tag %u: a run that comes back is not decoded again, its cost is "
	    "spent again (%u calls, work %llu, left %zu, budget %u)",
	    tag, fd.calls, (unsigned long long)bg.work, bg.left, bg.hit);
	bg.work = 100;
	if (scan_memo_run(&bg, buf, 200, 220, tag, &r, fake_decode, &fd) != 0)
		abort();
	ok(fd.calls == 2 && bg.work == 0,
	    "one whose cost is all the work left is decoded again (%u calls)",
	    fd.calls);
	bg.work = 1000;
	bg.left = 5;
	if (scan_memo_run(&bg, buf, 200, 220, tag, &r, fake_decode, &fd) != 0)
		abort();
	ok(fd.calls == 3,
	    "one whose decoded bytes are more than are left is decoded "
	    "again (%u calls)",
	    fd.calls);
	bg.left = 1000;
	if (scan_memo_run(&bg, buf, 100, 120, tag + 1, &r, fake_decode, &fd) !=
	    0)
		abort();
	ok(fd.calls == 4, "the same bytes under another tag are decoded (%u)",
	    fd.calls);
	if (scan_memo_run(&bg, buf, 200, 220, tag, &r, fake_decode, &fd) != 0)
		abort();
	ok(fd.calls == 4 && bg.work == 700,
	    "and the first tag's is still given from the memo (%u calls)",
	    fd.calls);
	good = r.n == 6;
	for (i = 0; good && i < 6; i++)
		good = r.v[i].offset == at[i] + 1 && r.v[i].length == 19;
	ok(good, "each finding at its run's place (%zu findings)", r.n);
	scan_result_free(&r);
	scan_memo_clear(&memo);
}

/*
 * Windows of NULs stepped over by the decode pass, against each looked
 * at: stretches of NULs of every length among lines of text, hex,
 * control bytes, a gzip member of the secret, one of NULs then the
 * secret (a stretch of NULs one level down), lines after a NUL; the
 * findings and budgets of scans with and without the step.
 */
static void
test_nul_windows(void)
{
	struct scan *sc = compile1(S1, strlen(S1));
	struct str d = { 0 }, z = { 0 };
	struct scan_result a, b;
	unsigned x = 5;
	size_t i, k, seed, len, differ = 0, total = 0;

	for (i = 0; i < 3000; i++)
		put(&z, "", 1);
	puts_(&z, "API_KEY=" S1 "\n");
	for (seed = 0; seed < 30; seed++) {
		d.n = 0;
		for (i = 0; i < 120; i++) {
			x = x * 1103515245 + 12345;
			len = (x >> 8) % 200;
			switch ((x >> 16) % 8) {
			case 0:
			case 1: /* NULs */
				for (k = 0; k < len; k++)
					put(&d, "", 1);
				break;
			case 2:
				puts_(&d, "token " S1 "\n");
				break;
			case 3: /* the secret as xxd dumps it */
				put_xxd(&d, "API_KEY=" S1 "\n");
				break;
			case 4:
				put_gzip(&d, "API_KEY=" S1, strlen(S1) + 8);
				break;
			case 5:
				put_gzip(&d, z.p, z.n);
				break;
			case 6: /* control bytes, a magic's first bytes */
				for (k = 0; k < len % 40; k++) {
					x = x * 1103515245 + 12345;
					put(&d,
					    &"\x01\x1f\x8b\x78\x04\n\t"
					     "\r\x00 a"[(x >> 16) % 11],
					    1);
				}
				break;
			default:
				puts_(&d,
				    (x >> 20) % 2 ? "some text here\n" : "x");
				break;
			}
		}
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
		scan_decode_nul_skip(1);
		if (scan_buffer(sc, d.p, d.n, &a) != 0)
			abort();
		scan_decode_nul_skip(0);
		if (scan_buffer(sc, d.p, d.n, &b) != 0)
			abort();
		scan_decode_nul_skip(1);
		differ += !same_findings(&a, &b);
		total += a.n;
		scan_result_free(&a);
		scan_result_free(&b);
	}
	ok(differ == 0 && total > 0,
	    "windows of NULs stepped over: the findings and budgets of a "
	    "scan that looks at each (%zu of 30 differ, %zu findings)",
	    differ, total);
	free(d.p);
	free(z.p);
	scan_free(sc);
}

int
main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/lb-test-decode.XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		abort();
	test_tools();
	test_b85();
	test_literals();
	test_unrelated();
	test_qp_and_nul();
	test_budgets();
	test_work_budget();
	test_fd_whole();
	test_split();
	test_dns();
	test_not_text();
	test_memo();
	test_memo_order();
	test_memo_recent();
	test_memo_same();
	test_memo_pay(0);
	test_memo_pay(SCAN_MEMO_TAGS);
	test_undo();
	test_group_edges();
	test_group_b64();
	test_hex_tokens();
	test_nul_windows();
	{
		const char *const rm[] = { "rm", "-rf", tmpdir, NULL };

		run(rm, "/dev/null", "/dev/null");
	}
	return tap_done();
}
