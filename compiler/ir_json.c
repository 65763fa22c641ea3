/* ir_json.c: the IR as stable, indented JSON (doc/ir.md). Same IR in, same bytes out:
 * key order is fixed, lists are in IR order, locations are "file:line:col". */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "lang/buf.h"
#include "compiler/compile.h"

struct out {
	zsp_buf b;
	int depth;
	bool first;   /* no member written yet at this depth */
};

static void esc(struct out *o, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': zsp_buf_puts(&o->b, "\\\""); break;
		case '\\': zsp_buf_puts(&o->b, "\\\\"); break;
		case '\n': zsp_buf_puts(&o->b, "\\n"); break;
		case '\t': zsp_buf_puts(&o->b, "\\t"); break;
		case '\r': zsp_buf_puts(&o->b, "\\r"); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				zsp_buf_printf(&o->b, "\\u%04x", *p);
			else
				zsp_buf_add(&o->b, (const char *)p, 1);
		}
	}
}

static void str(struct out *o, const char *s)
{
	if (!s) {
		zsp_buf_puts(&o->b, "null");
		return;
	}
	zsp_buf_add(&o->b, "\"", 1);
	esc(o, s);
	zsp_buf_add(&o->b, "\"", 1);
}

static void newline(struct out *o)
{
	zsp_buf_add(&o->b, "\n", 1);
	for (int i = 0; i < o->depth; i++)
		zsp_buf_add(&o->b, "  ", 2);
}

/* Opens an object or array member: comma, newline, indentation, key. */
static void key(struct out *o, const char *k)
{
	if (!o->first)
		zsp_buf_add(&o->b, ",", 1);
	o->first = false;
	newline(o);
	if (k) {
		str(o, k);
		zsp_buf_add(&o->b, ": ", 2);
	}
}

static void open_(struct out *o, const char *k, char c)
{
	key(o, k);
	zsp_buf_add(&o->b, &c, 1);
	o->depth++;
	o->first = true;
}

static void close_(struct out *o, char c)
{
	o->depth--;
	if (!o->first)
		newline(o);
	zsp_buf_add(&o->b, &c, 1);
	o->first = false;
}

static void kv_str(struct out *o, const char *k, const char *v)
{
	key(o, k);
	str(o, v);
}

static void kv_bool(struct out *o, const char *k, bool v)
{
	key(o, k);
	zsp_buf_puts(&o->b, v ? "true" : "false");
}

static void kv_loc(struct out *o, const char *k, zsp_loc loc)
{
	key(o, k);
	if (!loc.src) {
		zsp_buf_puts(&o->b, "null");
		return;
	}
	unsigned line, col;
	zsp_source_position(loc.src, loc.begin, &line, &col);
	char buf[64];
	snprintf(buf, sizeof(buf), ":%u:%u", line, col);
	zsp_buf_add(&o->b, "\"", 1);
	esc(o, loc.src->path);
	zsp_buf_puts(&o->b, buf);
	zsp_buf_add(&o->b, "\"", 1);
}

static const char *decision(zsp_decision d)
{
	return d == ZSP_DECISION_NONE ? NULL : zsp_decision_name(d);
}

const char *zsp_access_name(zsp_access a)
{
	return a == ZSP_ACCESS_WRITE ? "write" : a == ZSP_ACCESS_DENY ? "deny" : "read";
}

const char *zsp_net_mode_name(int mode)
{
	return mode == ZSP_NET_FULL ? "full" : mode == ZSP_NET_PROXY ? "proxy" : "none";
}

/* A size limit: bytes, or "unlimited". */
static void kv_limit(struct out *o, const char *k, const zsp_ir_limit *l)
{
	key(o, k);
	if (l->unlimited)
		zsp_buf_puts(&o->b, "\"unlimited\"");
	else
		zsp_buf_printf(&o->b, "%llu", (unsigned long long)l->value);
}

static void policy(struct out *o, const zsp_ir_policy *p)
{
	open_(o, NULL, '{');
	kv_str(o, "name", p->name);
	kv_loc(o, "loc", p->loc);
	open_(o, "extends", '[');
	for (size_t i = 0; i < p->nextends; i++)
		kv_str(o, NULL, p->extends[i]);
	close_(o, ']');
	kv_str(o, "default", zsp_decision_name(p->def));

	open_(o, "params", '[');
	for (size_t i = 0; i < p->nparams; i++) {
		const zsp_ir_param *pa = &p->params[i];
		open_(o, NULL, '{');
		kv_str(o, "name", pa->name);
		kv_bool(o, "builtin", pa->builtin);
		kv_str(o, "default", pa->def);
		kv_str(o, "value", pa->value);
		kv_str(o, "from", pa->from_define ? "define" : pa->value ? "default" : NULL);
		kv_loc(o, "loc", pa->loc);
		close_(o, '}');
	}
	close_(o, ']');

	open_(o, "fs", '[');
	for (size_t i = 0; i < p->nfs; i++) {
		const zsp_ir_fs_rule *r = &p->fs[i];
		open_(o, NULL, '{');
		kv_str(o, "access", zsp_access_name(r->access));
		kv_str(o, "path", r->path);
		kv_bool(o, "glob", r->glob);
		if (r->protect) {
			kv_str(o, "protect", r->protect);
			kv_str(o, "root", r->root);
		}
		if (r->cache)
			kv_str(o, "cache", r->cache);
		kv_str(o, "policy", r->policy);
		kv_loc(o, "loc", r->loc);
		close_(o, '}');
	}
	close_(o, ']');

	open_(o, "caches", '{');
	kv_limit(o, "limit", &p->cache_limit);
	open_(o, "tools", '[');
	for (size_t i = 0; i < p->ncaches; i++) {
		const zsp_ir_cache *c = &p->caches[i];
		open_(o, NULL, '{');
		kv_str(o, "name", c->name);
		kv_str(o, "kind", c->is_path ? "path" : "tool");
		open_(o, "parts", '[');
		for (size_t k = 0; k < c->nparts; k++) {
			const zsp_ir_cache_part *pt = &c->parts[k];
			open_(o, NULL, '{');
			kv_str(o, "id", pt->id);
			kv_str(o, "path", pt->path);
			kv_str(o, "env", pt->env);
			if (pt->base_env) {
				kv_str(o, "base_env", pt->base_env);
				kv_str(o, "base_sub", pt->base_sub);
			}
			close_(o, '}');
		}
		close_(o, ']');
		kv_str(o, "policy", c->policy);
		kv_loc(o, "loc", c->loc);
		close_(o, '}');
	}
	close_(o, ']');
	close_(o, '}');
	open_(o, "tmp", '{');
	kv_str(o, "mode", p->tmp_private ? "private" : "host");
	kv_limit(o, "limit", &p->tmp_limit);
	kv_loc(o, "loc", p->tmp_loc);
	close_(o, '}');

	open_(o, "net", '{');
	kv_str(o, "mode", zsp_net_mode_name(p->net_mode));
	open_(o, "hosts", '[');
	for (size_t i = 0; i < p->nhosts; i++) {
		const zsp_ir_host *h = &p->hosts[i];
		open_(o, NULL, '{');
		kv_str(o, "decision", decision(h->decision));
		kv_str(o, "host", h->host);
		key(o, "port");
		if (h->port)
			zsp_buf_printf(&o->b, "%u", h->port);
		else
			zsp_buf_puts(&o->b, "\"*\"");
		kv_loc(o, "loc", h->loc);
		close_(o, '}');
	}
	close_(o, ']');
	open_(o, "unix", '[');
	for (size_t i = 0; i < p->nunix; i++) {
		open_(o, NULL, '{');
		kv_str(o, "decision", decision(p->unix_socks[i].decision));
		kv_str(o, "path", p->unix_socks[i].path);
		kv_loc(o, "loc", p->unix_socks[i].loc);
		close_(o, '}');
	}
	close_(o, ']');
	close_(o, '}');

	open_(o, "process", '{');
	open_(o, "env", '{');
	kv_bool(o, "clear", p->env_clear);
	open_(o, "keep", '[');
	for (size_t i = 0; i < p->nenv_keep; i++)
		kv_str(o, NULL, p->env_keep[i].name);
	close_(o, ']');
	open_(o, "unset", '[');
	for (size_t i = 0; i < p->nenv_unset; i++)
		kv_str(o, NULL, p->env_unset[i].name);
	close_(o, ']');
	open_(o, "set", '[');
	for (size_t i = 0; i < p->nenv_set; i++) {
		open_(o, NULL, '{');
		kv_str(o, "name", p->env_set[i].name);
		kv_str(o, "value", p->env_set[i].value);
		kv_loc(o, "loc", p->env_set[i].loc);
		close_(o, '}');
	}
	close_(o, ']');
	close_(o, '}');
	open_(o, "limits", '{');
	for (int k = 0; k < ZSP_LIMIT_COUNT; k++) {
		const zsp_ir_limit *l = &p->limits[k];
		if (!l->set)
			continue;
		key(o, zsp_limit_name((zsp_limit_kind)k));
		if (l->unlimited)
			zsp_buf_puts(&o->b, "\"unlimited\"");
		else
			zsp_buf_printf(&o->b, "%llu", (unsigned long long)l->value);
	}
	close_(o, '}');
	open_(o, "syscalls", '[');
	for (size_t i = 0; i < p->nsyscalls; i++) {
		const zsp_ir_syscall *s = &p->syscalls[i];
		open_(o, NULL, '{');
		kv_str(o, "name", s->name);
		kv_str(o, "action", s->action == ZSP_ALLOW ? "allow" : s->kill ? "kill" : "errno");
		if (s->action == ZSP_DENY && !s->kill) {
			key(o, "errno");
			zsp_buf_printf(&o->b, "%d", s->err);
		}
		kv_loc(o, "loc", s->loc);
		close_(o, '}');
	}
	close_(o, ']');
	close_(o, '}');

	open_(o, "tools", '[');
	for (size_t i = 0; i < p->ntools; i++) {
		const zsp_ir_tool *t = &p->tools[i];
		open_(o, NULL, '{');
		kv_str(o, "name", t->name);
		kv_str(o, "default", decision(t->def));
		if (t->judge_substitutions)   /* only when not Zed's rule, so older IR reads the same */
			kv_str(o, "substitutions", "judged");
		kv_loc(o, "loc", t->loc);
		open_(o, "rules", '[');
		for (size_t j = 0; j < t->nrules; j++) {
			const zsp_ir_tool_rule *r = &t->rules[j];
			open_(o, NULL, '{');
			kv_str(o, "decision", decision(r->decision));
			if (r->safe)
				kv_bool(o, "safe", true);
			else
				kv_str(o, r->is_path ? "path" : "regex", r->pattern);
			if (!r->is_path && !r->safe)
				kv_bool(o, "case_sensitive", r->case_sensitive);
			kv_loc(o, "loc", r->loc);
			close_(o, '}');
		}
		close_(o, ']');
		close_(o, '}');
	}
	close_(o, ']');
	open_(o, "sensitive", '[');
	for (size_t i = 0; i < p->nsensitive; i++) {
		open_(o, NULL, '{');
		kv_str(o, "name", p->sensitive[i].name);
		kv_loc(o, "loc", p->sensitive[i].loc);
		close_(o, '}');
	}
	close_(o, ']');
	close_(o, '}');
}

static void test(struct out *o, const zsp_ir_test *t)
{
	open_(o, NULL, '{');
	kv_str(o, "policy", t->policy);
	kv_loc(o, "loc", t->loc);
	open_(o, "defines", '[');
	for (size_t i = 0; i < t->ndefines; i++) {
		open_(o, NULL, '{');
		kv_str(o, "name", t->defines[i].name);
		kv_str(o, "value", t->defines[i].value);
		close_(o, '}');
	}
	close_(o, ']');
	open_(o, "expects", '[');
	for (size_t i = 0; i < t->nexpects; i++) {
		const zsp_ir_expect *x = &t->expects[i];
		open_(o, NULL, '{');
		kv_str(o, "decision", decision(x->decision));
		kv_str(o, "request", x->req.kind);
		open_(o, "args", '[');
		for (size_t j = 0; j < x->req.nargs; j++)
			kv_str(o, NULL, x->req.args[j]);
		close_(o, ']');
		kv_loc(o, "loc", x->loc);
		close_(o, '}');
	}
	close_(o, ']');
	close_(o, '}');
}

int zsp_ir_to_json(const zsp_ir *ir, char **json, size_t *len)
{
	struct out o = { .first = true };
	zsp_buf_add(&o.b, "{", 1);
	o.depth = 1;
	key(&o, "zsp_ir");
	zsp_buf_printf(&o.b, "%d", ZSP_IR_VERSION);
	kv_str(&o, "source", ir->source);
	open_(&o, "policies", '[');
	for (size_t i = 0; i < ir->npolicies; i++)
		policy(&o, &ir->policies[i]);
	close_(&o, ']');
	open_(&o, "tests", '[');
	for (size_t i = 0; i < ir->ntests; i++)
		test(&o, &ir->tests[i]);
	close_(&o, ']');
	o.depth = 0;
	zsp_buf_add(&o.b, "\n}\n", 3);
	*json = zsp_buf_take(&o.b, len);
	return *json ? ZSP_OK : ZSP_EINTERNAL;
}

const zsp_ir_policy *zsp_ir_find_policy(const zsp_ir *ir, const char *name)
{
	for (size_t i = 0; i < ir->npolicies; i++)
		if (strcmp(ir->policies[i].name, name) == 0)
			return &ir->policies[i];
	return NULL;
}

const zsp_ir_policy *zsp_ir_pick_policy(const zsp_ir *ir, const char *name)
{
	if (name)
		return zsp_ir_find_policy(ir, name);
	if (ir->npolicies == 1)
		return &ir->policies[0];
	/* a file that includes the bases it extends (examples/credentials.zsp) means its own */
	const zsp_ir_policy *own = NULL;
	for (size_t i = 0; i < ir->npolicies; i++) {
		const zsp_source *src = ir->policies[i].loc.src;
		if (src && src->included_from.src)
			continue;
		if (own)
			return NULL;
		own = &ir->policies[i];
	}
	return own;
}
