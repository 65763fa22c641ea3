/* fuzz_gitcfg.c: a libFuzzer target for backends/gitcfg.c, the reader of config files a
 * sandboxed command may have written. Each input is parsed; every entry must be well formed
 * (lower-case section and name of key characters, no NUL past what was read), get a verdict with
 * a reason, and a key that can reach a terminal; the entries written back as canonical git
 * config text must parse to the same entries; a callback that stops must stop the parse. The
 * input vetted as a sandbox's config (zsp_gitcfg_vet) keeps no unsafe variable the config it
 * had did not have. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/gitcfg.h"
#include "compiler/textesc.h"
#include "compiler/zsp.h"
#include "tests/fuzz/fuzz.h"

typedef struct text {
	char *s;
	size_t len, cap;
} text;

static void add(text *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		t->cap = (t->len + n + 1) * 2;
		if (!(t->s = realloc(t->s, t->cap)))
			abort();
	}
	memcpy(t->s + t->len, s, n);
	t->len += n;
	t->s[t->len] = '\0';
}

static void adds(text *t, const char *s)
{
	add(t, s, strlen(s));
}

/* s in double quotes as git reads it back: `\` and `"` escaped; in a value also newline, tab
 * and backspace (a subsection holds no newline and knows no other escape). */
static void add_quoted(text *t, const char *s, bool value)
{
	adds(t, "\"");
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			add(t, "\\", 1);
		if (value && (*s == '\n' || *s == '\t' || *s == '\b'))
			adds(t, *s == '\n' ? "\\n" : *s == '\t' ? "\\t" : "\\b");
		else
			add(t, s, 1);
	}
	adds(t, "\"");
}

typedef struct run {
	size_t size;     /* of the input */
	unsigned lines;  /* in the input, at least 1 */
	unsigned last_line;
	size_t n;        /* entries */
	size_t stop_at;  /* stop when n reaches it (0: never) */
	text list;       /* one "section\1sub\1name\1value\2" per entry, for comparisons */
	text canon;      /* the entries as canonical config text */
} run;

static bool key_word(const char *s, bool first_alpha)
{
	if (!*s)
		return false;
	if (first_alpha && !(*s >= 'a' && *s <= 'z'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

static int check_entry(void *ctx, const zsp_gitcfg_entry *e)
{
	run *r = ctx;
	if (!e->section || !e->name || !key_word(e->section, false) || !key_word(e->name, true))
		abort();
	if (e->line < 1 || e->line > r->lines || e->line < r->last_line)
		abort();
	size_t used = strlen(e->section) + strlen(e->name) +
		      (e->subsection ? strlen(e->subsection) : 0) + (e->value ? strlen(e->value) : 0);
	if (used > 2 * r->size)
		abort();
	if (e->subsection && strchr(e->subsection, '\n'))
		abort();
	r->last_line = e->line;

	const char *why = "unset";
	bool ok = zsp_gitcfg_safe(e, &why);
	if (ok != (why == NULL) || (why && !*why))
		abort();
	if (!strcmp(e->section, "include") || !strcmp(e->section, "includeif") ||
	    !strcmp(e->section, "alias") || (!strcmp(e->section, "core") && e->subsection == NULL &&
					     (!strcmp(e->name, "fsmonitor") ||
					      !strcmp(e->name, "hookspath")))) {
		if (ok)
			abort();
	}
	char key[48], tiny[5];
	if (!zsp_text_plain(zsp_gitcfg_key(e, key, sizeof(key))) || strlen(key) >= sizeof(key))
		abort();
	if (!zsp_text_plain(zsp_gitcfg_key(e, tiny, sizeof(tiny))) || strlen(tiny) >= sizeof(tiny))
		abort();

	adds(&r->list, e->section);
	adds(&r->list, "\1");
	adds(&r->list, e->subsection ? e->subsection : "\3");
	adds(&r->list, "\1");
	adds(&r->list, e->name);
	adds(&r->list, "\1");
	adds(&r->list, e->value ? e->value : "\3");
	adds(&r->list, "\2");

	adds(&r->canon, "[");
	adds(&r->canon, e->section);
	if (e->subsection) {
		adds(&r->canon, " ");
		add_quoted(&r->canon, e->subsection, false);
	}
	adds(&r->canon, "]\n\t");
	adds(&r->canon, e->name);
	if (e->value) {
		adds(&r->canon, " = ");
		add_quoted(&r->canon, e->value, true);
	}
	adds(&r->canon, "\n");

	r->n++;
	return r->stop_at && r->n >= r->stop_at;
}

static void run_free(run *r)
{
	free(r->list.s);
	free(r->canon.s);
}

static int parse(const char *data, size_t size, run *r, char *err, size_t errlen)
{
	r->size = size;
	r->lines = 1;
	for (size_t i = 0; i < size; i++)
		r->lines += data[i] == '\n';
	int st = zsp_gitcfg_parse(data, size, check_entry, r, err, errlen);
	if (st != ZSP_OK && st != ZSP_EPOLICY)
		abort();
	if (st == ZSP_OK ? err[0] != '\0' : strncmp(err, "line ", 5) != 0)
		abort();
	return st;
}

typedef struct unsafe_list {
	char **key;
	size_t n;
	bool *used;
} unsafe_list;

/* section, subsection, name and value of e as one string (subsection and value marked). */
static char *entry_key(const zsp_gitcfg_entry *e)
{
	char *k;
	if (asprintf(&k, "%s\1%s%s\1%s\1%s%s", e->section, e->subsection ? "s" : "n",
		     e->subsection ? e->subsection : "", e->name, e->value ? "v" : "b",
		     e->value ? e->value : "") < 0)
		abort();
	return k;
}

static int collect_unsafe(void *ctx, const zsp_gitcfg_entry *e)
{
	unsafe_list *l = ctx;
	if (zsp_gitcfg_safe(e, NULL))
		return 0;
	if (!(l->key = realloc(l->key, (l->n + 1) * sizeof(char *))))
		abort();
	l->key[l->n++] = entry_key(e);
	return 0;
}

static void unsafe_free(unsafe_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->key[i]);
	free(l->key);
	free(l->used);
}

static void vet_check(const char *old, size_t oldlen, const char *text, size_t len)
{
	char err[256], *out = NULL, *again = NULL;
	size_t outlen = 0, againlen = 0;
	int st = zsp_gitcfg_vet(old, oldlen, text, len, NULL, NULL, &out, &outlen, err, sizeof(err));
	if (st == ZSP_EINTERNAL)
		return;
	if (st != ZSP_OK) {
		if (out || !err[0])
			abort();
		return;
	}
	if (!out || strlen(out) != outlen)
		abort();
	/* every unsafe variable of out is one of old's, one for one */
	unsafe_list ou = { 0 }, ol = { 0 };
	if (zsp_gitcfg_parse(out, outlen, collect_unsafe, &ou, err, sizeof(err)) != ZSP_OK)
		abort();
	if (old && zsp_gitcfg_parse(old, oldlen, collect_unsafe, &ol, err, sizeof(err)) != ZSP_OK) {
		unsafe_free(&ol);
		ol = (unsafe_list){ 0 };
	}
	if (!(ol.used = calloc(ol.n + 1, sizeof(bool))))
		abort();
	for (size_t i = 0; i < ou.n; i++) {
		bool found = false;
		for (size_t k = 0; k < ol.n && !found; k++)
			if (!ol.used[k] && strcmp(ol.key[k], ou.key[i]) == 0)
				ol.used[k] = found = true;
		if (!found)
			abort();
	}
	unsafe_free(&ou);
	unsafe_free(&ol);
	/* vetted text vets to itself */
	if (zsp_gitcfg_vet(old, oldlen, out, outlen, NULL, NULL, &again, &againlen, err, sizeof(err)) == ZSP_OK &&
	    (againlen != outlen || memcmp(again, out, outlen) != 0))
		abort();
	free(again);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[200];
	run a = { 0 };
	int st = parse((const char *)data, size, &a, err, sizeof(err));

	/* the same input again, stopped after the first entry */
	if (a.n) {
		run b = { .stop_at = 1 };
		if (parse((const char *)data, size, &b, err, sizeof(err)) != ZSP_OK || b.n != 1)
			abort();
		run_free(&b);
	}
	/* canonical text reads back to the same entries */
	if (st == ZSP_OK && a.n) {
		run c = { 0 };
		if (parse(a.canon.s, a.canon.len, &c, err, sizeof(err)) != ZSP_OK || c.n != a.n ||
		    c.list.len != a.list.len || memcmp(c.list.s, a.list.s, a.list.len) != 0)
			abort();
		run_free(&c);
	}
	run_free(&a);
	/* vetting: the input as the sandbox's config, with its first half (and with nothing) as the
	 * config it had; a vetted text holds no unsafe variable that the old one does not vouch for
	 * (vet_holds) and vets to itself */
	vet_check(NULL, 0, (const char *)data, size);
	vet_check((const char *)data, size / 2, (const char *)data, size);
	return 0;
}
