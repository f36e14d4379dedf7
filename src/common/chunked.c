/*
 * The chunked-framing decoder (see chunked.h): one state machine, a byte
 * at a time except for chunk data, which goes to the sink in runs.
 */
#include "common/chunked.h"

enum {
	ST_SIZE,	  /* hex digits */
	ST_BWS,		  /* strict: blanks after the digits */
	ST_EXT,		  /* the extension, up to the line end */
	ST_SIZE_LF,	  /* a CR ended the size line: its LF */
	ST_DATA,	  /* chunk data */
	ST_DATA_CR,	  /* the line end after the data */
	ST_DATA_LF,	  /* its LF after a CR */
	ST_TRAILER_START, /* a trailer line or the empty line */
	ST_TRAILER_NAME,  /* strict: a trailer's name */
	ST_TRAILER,	  /* the rest of a trailer line */
	ST_TRAILER_LF,	  /* a CR ended a trailer line: its LF */
	ST_END_LF,	  /* a CR began the empty line: its LF */
	ST_DONE,
	ST_ERROR
};

static int
hexval(unsigned char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* RFC 9110 tchar. */
static int
is_tchar(unsigned char ch)
{
	if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	    (ch >= '0' && ch <= '9'))
		return 1;
	return ch != 0 && ch < 0x80 &&
	    (ch == '!' || ch == '#' || ch == '$' || ch == '%' || ch == '&' ||
		ch == '\'' || ch == '*' || ch == '+' || ch == '-' ||
		ch == '.' || ch == '^' || ch == '_' || ch == '`' || ch == '|' ||
		ch == '~');
}

/* A visible byte, tab or obs-text: what strict extensions may hold. */
static int
is_vchar(unsigned char ch)
{
	return ch == '\t' || (ch >= 0x20 && ch != 0x7f);
}

/*
 * The size line ended: its size joins the total; next, data, or the
 * trailers of the last chunk.
 */
static int
after_size(struct chunked *d)
{
	d->total += d->left;
	d->digits = 0;
	return d->left ? ST_DATA : ST_TRAILER_START;
}

int
chunked_done(const struct chunked *d)
{
	return d->state == ST_DONE;
}

void
chunked_reset(struct chunked *d)
{
	d->state = ST_SIZE;
	d->digits = 0;
	d->left = d->total = 0;
	d->line = d->trailer = 0;
}

/* One byte of a size line. CHUNKED_MORE or an error code. */
static int
step_size(struct chunked *d, unsigned char ch)
{
	int v;

	if (d->max_line > 0 && ++d->line > d->max_line)
		return CHUNKED_BAD;
	switch (d->state) {
	case ST_SIZE:
		if ((v = hexval(ch)) >= 0) {
			if (++d->digits > 15)
				return d->max_total ? CHUNKED_TOO_LARGE :
						      CHUNKED_BAD;
			d->left = d->left * 16 + (unsigned)v;
			if (d->max_total > 0 &&
			    d->total + d->left > d->max_total)
				return CHUNKED_TOO_LARGE;
		} else if (d->digits == 0) {
			return CHUNKED_BAD;
		} else if (ch == '\r') {
			d->state = ST_SIZE_LF;
		} else if (ch == '\n') {
			d->state = after_size(d);
		} else if (d->strict && (ch == ' ' || ch == '\t')) {
			d->state = ST_BWS;
		} else if (ch == ';' || ch == ' ' || ch == '\t') {
			d->state = ST_EXT;
		} else {
			return CHUNKED_BAD;
		}
		break;
	case ST_BWS:
		if (ch == ';')
			d->state = ST_EXT;
		else if (ch == '\r')
			d->state = ST_SIZE_LF;
		else if (ch == '\n')
			d->state = after_size(d);
		else if (ch != ' ' && ch != '\t')
			return CHUNKED_BAD;
		break;
	case ST_EXT:
		if (ch == '\n')
			d->state = after_size(d);
		else if (d->strict && ch == '\r')
			d->state = ST_SIZE_LF;
		else if (d->strict && !is_vchar(ch))
			return CHUNKED_BAD;
		break;
	case ST_SIZE_LF:
		if (ch != '\n')
			return CHUNKED_BAD;
		d->state = after_size(d);
		break;
	default:
		return CHUNKED_BAD;
	}
	if (d->state == ST_DATA || d->state == ST_TRAILER_START)
		d->line = 0; /* the next size line counts from zero */
	return CHUNKED_MORE;
}

/* One byte of the trailers. CHUNKED_MORE or an error code. */
static int
step_trailer(struct chunked *d, unsigned char ch)
{
	if (d->max_trailer > 0 && ++d->trailer > d->max_trailer)
		return CHUNKED_TRAILER_TOO_LARGE;
	switch (d->state) {
	case ST_TRAILER_START:
		if (ch == '\r')
			d->state = ST_END_LF;
		else if (ch == '\n')
			d->state = ST_DONE;
		else if (!d->strict)
			d->state = ST_TRAILER;
		else if (is_tchar(ch))
			d->state = ST_TRAILER_NAME;
		else
			return CHUNKED_BAD;
		break;
	case ST_TRAILER_NAME:
		if (ch == ':')
			d->state = ST_TRAILER;
		else if (!is_tchar(ch))
			return CHUNKED_BAD;
		break;
	case ST_TRAILER:
		if (ch == '\n')
			d->state = ST_TRAILER_START;
		else if (d->strict && ch == '\r')
			d->state = ST_TRAILER_LF;
		break;
	case ST_TRAILER_LF:
	case ST_END_LF:
		if (ch != '\n')
			return CHUNKED_BAD;
		d->state = d->state == ST_END_LF ? ST_DONE : ST_TRAILER_START;
		break;
	default:
		return CHUNKED_BAD;
	}
	return CHUNKED_MORE;
}

/* One byte of framing (never data). CHUNKED_MORE or an error code. */
static int
step(struct chunked *d, unsigned char ch)
{
	if (d->state <= ST_SIZE_LF)
		return step_size(d, ch);
	if (d->state >= ST_TRAILER_START)
		return step_trailer(d, ch);
	switch (d->state) {
	case ST_DATA_CR:
		if (ch == '\r')
			d->state = ST_DATA_LF;
		else if (ch == '\n')
			d->state = ST_SIZE;
		else
			return CHUNKED_BAD;
		break;
	case ST_DATA_LF:
		if (ch != '\n')
			return CHUNKED_BAD;
		d->state = ST_SIZE;
		break;
	default:
		return CHUNKED_BAD;
	}
	return CHUNKED_MORE;
}

int
chunked_feed(struct chunked *d, const char *p, size_t n, size_t *used,
    chunked_sink *sink, void *ctx)
{
	size_t i = 0, take;
	int rc;

	*used = 0;
	if (d->state == ST_DONE)
		return CHUNKED_DONE;
	if (d->state == ST_ERROR)
		return CHUNKED_BAD;
	while (i < n && d->state != ST_DONE) {
		if (d->state == ST_DATA) {
			take = n - i < d->left ? n - i : (size_t)d->left;
			if (sink != NULL && sink(ctx, p + i, take) < 0) {
				*used = i;
				return CHUNKED_SINK;
			}
			d->left -= take;
			i += take;
			if (d->left == 0)
				d->state = ST_DATA_CR;
			continue;
		}
		rc = step(d, (unsigned char)p[i]);
		if (rc != CHUNKED_MORE) {
			d->state = ST_ERROR;
			*used = i;
			return rc;
		}
		i++;
	}
	*used = i;
	return d->state == ST_DONE ? CHUNKED_DONE : CHUNKED_MORE;
}
