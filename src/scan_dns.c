/*
 * DNS labels (scan.h, scan_dns): a secret exfiltrated through the names
 * a program looks up, its encoding cut into labels of one or more names
 * ("ONSWG4TF.OQQGK4TB.x.evil.example", then the next part).
 *
 * The names' labels are joined without their dots into one text per way
 * of reading them (how many trailing labels are the domain, 0 to 3; a
 * leading sequence number or not), and each text is scanned as it is and
 * upper-cased: base32 in lower or mixed case (resolvers may randomize the
 * case) becomes base32 again, and hex becomes hex-upper. Every joined
 * byte remembers its name, so a finding names the names it spans.
 */
#include <stdlib.h>
#include <string.h>

#include "scan_int.h"

struct joined {
	unsigned char *p;
	size_t *name; /* per byte: the index of its name */
	size_t n, cap;
};

static int
j_put(struct joined *j, const char *s, size_t len, size_t name, int upper)
{
	size_t i;

	if (j->n + len > j->cap) {
		size_t cap = j->cap ? j->cap : 256;
		void *p;

		while (cap < j->n + len)
			cap *= 2;
		if ((p = realloc(j->p, cap)) == NULL)
			return -1;
		j->p = p;
		if ((p = realloc(j->name, cap * sizeof(*j->name))) == NULL)
			return -1;
		j->name = p;
		j->cap = cap;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (upper && c >= 'a' && c <= 'z')
			c -= 32;
		j->p[j->n] = c;
		j->name[j->n] = name;
		j->n++;
	}
	return 0;
}

/* Appends name's labels, dropping drop trailing ones (and a number). */
static int
j_name(struct joined *j, const char *s, size_t len, size_t idx, unsigned drop,
    int seq, int upper)
{
	size_t nl = 0, i, k, start;
	size_t lab[128], lablen[128];
	int digits;

	while (len > 0 && s[len - 1] == '.')
		len--;
	for (i = 0, start = 0; i <= len && nl < 128; i++) {
		if (i == len || s[i] == '.') {
			lab[nl] = start;
			lablen[nl] = i - start;
			nl++;
			start = i + 1;
		}
	}
	if (nl <= drop)
		return 0;
	nl -= drop;
	k = 0;
	if (seq && nl > 1) {
		digits = lablen[0] > 0;
		for (i = 0; i < lablen[0]; i++)
			if (s[lab[0] + i] < '0' || s[lab[0] + i] > '9')
				digits = 0;
		if (digits)
			k = 1;
	}
	for (; k < nl; k++)
		if (j_put(j, s + lab[k], lablen[k], idx, upper) != 0)
			return -1;
	return 0;
}

/*
 * Adds f unless it is there; with any_form (the upper-cased pass), unless
 * the secret was found from the same name at all.
 */
static int
dns_push(struct scan_result *res, const struct scan_finding *f, int any_form)
{
	size_t i;

	for (i = 0; i < res->n; i++)
		if (res->v[i].secret == f->secret &&
		    res->v[i].offset == f->offset &&
		    (any_form || strcmp(res->v[i].form, f->form) == 0))
			return 0;
	return scan_res_push(res, f);
}

int
scan_dns(const struct scan *sc, const char *const *names, const size_t *lens,
    size_t n, struct scan_result *res)
{
	struct joined j = { 0 };
	struct scan_result r = { 0 };
	struct scan_finding f;
	unsigned drop;
	int seq, upper, rc = -1;
	size_t i, k;

	for (drop = 0; drop <= 3; drop++)
		for (seq = 0; seq <= 1; seq++)
			for (upper = 0; upper <= 1; upper++) {
				j.n = 0;
				for (i = 0; i < n; i++) {
					if (i > 0 && lens[i] == lens[i - 1] &&
					    memcmp(names[i], names[i - 1],
						lens[i]) == 0)
						continue; /* a retry */
					if (j_name(&j, names[i], lens[i], i,
						drop, seq, upper) != 0)
						goto out;
				}
				if (j.n == 0)
					continue;
				r.n = 0;
				if (scan_buffer(sc, j.p, j.n, &r) != 0)
					goto out;
				res->budget |= r.budget;
				for (k = 0; k < r.n; k++) {
					f = r.v[k];
					f.form = scan_form_join("dns", f.form);
					f.offset = j.name[r.v[k].offset];
					f.length = j.name[r.v[k].offset +
						       r.v[k].length - 1] -
					    f.offset + 1;
					f.wrapped = 0;
					if (dns_push(res, &f, upper) != 0)
						goto out;
				}
			}
	rc = 0;
out:
	free(j.p);
	free(j.name);
	scan_result_free(&r);
	return rc;
}
