/* parser.y: grammar of the zsp language (doc/language.md); pure, reentrant, with byte-span locations.
 * Builds the AST; syntax errors name what was expected and suggest a keyword for a misspelt word. */
%require "3.8"
%define api.pure full
%define api.prefix {zsp_yy}
%define api.location.type {zsp_span}
%define parse.error custom
%locations
%param {struct zsp_lex *lx}

%code requires {
#include "lang/ast.h"
#include "lang/lex.h"
struct stmt_list { zsp_ast_stmt *head, *tail; };
struct str_list { zsp_ast_str *head, *tail; };
struct match_list { zsp_ast_matcher *head, *tail; };
}

%code provides {
#define YYSTYPE ZSP_YYSTYPE
#define YYLTYPE ZSP_YYLTYPE
int zsp_yylex(ZSP_YYSTYPE *lval, ZSP_YYLTYPE *lloc, void *scanner);
}

%code {
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lang/diag.h"
#include "lang/hint.h"

#define YYLLOC_DEFAULT(Cur, Rhs, N)                           \
	do {                                                  \
		if (N) {                                      \
			(Cur).begin = YYRHSLOC(Rhs, 1).begin; \
			(Cur).end = YYRHSLOC(Rhs, N).end;     \
		} else {                                      \
			(Cur).begin = (Cur).end = YYRHSLOC(Rhs, 0).end; \
		}                                             \
	} while (0)

static int zsp_yylex_bridge(ZSP_YYSTYPE *v, ZSP_YYLTYPE *l, struct zsp_lex *lx)
{
	return zsp_yylex(v, l, lx->scanner);
}
#define zsp_yylex(v, l, lx) zsp_yylex_bridge(v, l, lx)

static void zsp_yyerror(const zsp_span *span, struct zsp_lex *lx, const char *msg)
{
	(void)span;
	lx->oom = true;
	zsp_diag_error_noloc(lx->diag, "%s", msg);
}

static zsp_span zsp_span_of(zsp_span a, zsp_span b)
{
	zsp_span s = { a.begin, b.end };
	return s;
}

static zsp_loc L(struct zsp_lex *lx, zsp_span s)
{
	zsp_loc l = { lx->src, s.begin, s.end };
	return l;
}

#define NEW(var, type)                                   \
	do {                                             \
		var = zsp_arena_alloc(lx->arena, sizeof(type)); \
		if (!var)                                \
			YYNOMEM;                         \
	} while (0)

static zsp_ast_stmt *stmt(struct zsp_lex *lx, zsp_ast_kind k, zsp_span s)
{
	zsp_ast_stmt *st = zsp_arena_alloc(lx->arena, sizeof(*st));
	if (st) {
		st->kind = k;
		st->loc = L(lx, s);
	}
	return st;
}

#define STMT(var, kind, span)                          \
	do {                                           \
		if (!(var = stmt(lx, kind, span)))     \
			YYNOMEM;                       \
	} while (0)

static struct stmt_list one(zsp_ast_stmt *s)
{
	struct stmt_list l = { s, s };
	return l;
}

static struct stmt_list cat(struct stmt_list a, struct stmt_list b)
{
	if (!a.head)
		return b;
	if (!b.head)
		return a;
	a.tail->next = b.head;
	a.tail = b.tail;
	return a;
}
}

%union {
	const char *text;
	zsp_ast_str *str;
	zsp_ast_quantity qty;
	struct { const char *text; char flag; zsp_loc loc; } re;
	struct stmt_list stmts;
	struct str_list strs;
	struct match_list matchers;
	zsp_ast_matcher *matcher;
	zsp_ast_policy *policy;
	zsp_decision decision;
	int ival;
}

%token <text> T_IDENT "identifier"
%token <text> T_TOOLNAME "MCP tool name"
%token <str> T_STRING "string"
%token <re> T_REGEX "regex"
%token <qty> T_INTEGER "integer"
%token <qty> T_QUANTITY "quantity"
%token T_ZSP "zsp" T_INCLUDE "include" T_POLICY "policy" T_EXTENDS "extends" T_PARAM "param"
%token T_DEFAULT "default" T_FS "fs" T_READ "read" T_WRITE "write" T_DENY "deny"
%token T_PROTECT "protect" T_NET "net" T_MODE "mode" T_NONE "none" T_FULL "full"
%token T_PROXY "proxy" T_ALLOW "allow" T_ASK "ask" T_UNIX "unix" T_PROCESS "process"
%token T_ENV "env" T_CLEAR "clear" T_KEEP "keep" T_SET "set" T_UNSET "unset" T_LIMIT "limit"
%token T_SYSCALLS "syscalls" T_ERRNO "errno" T_KILL "kill" T_TOOL "tool" T_PATH "path"
%token T_CASE "case" T_SENSITIVE "sensitive" T_INSENSITIVE "insensitive" T_TEST "test"
%token T_CACHE "cache" T_TMP "tmp" T_PRIVATE "private" T_HOST "host" T_SAFE "safe"
%token T_SUBSTITUTIONS "substitutions" T_JUDGED "judged" T_DENIED "denied"
%token T_DEFINE "define" T_EXPECT "expect"

%type <text> word keyword
%type <str> string
%type <strs> strlist reqargs extends_opt
%type <stmts> pstmts pstmt fsstmts fsstmt netstmts netstmt procstmts procstmt
%type <stmts> toolstmts toolstmt teststmts teststmt cacheitems
%type <stmts> cacheitem
%type <matchers> matchers
%type <matcher> matcher
%type <decision> decision
%type <ival> fsop netmode allowdeny
%type <qty> qty
%type <policy> policy_head

%%

file
	: version items
	;

version
	: T_ZSP T_INTEGER ';' {
		lx->file->has_version = true;
		lx->file->version = $2.overflow ? UINT64_MAX : $2.value;
		lx->file->version_loc = L(lx, @2);
	}
	| %empty
	;

items
	: %empty
	| items item
	;

item
	: T_INCLUDE string ';' {
		zsp_ast_include *inc;
		NEW(inc, zsp_ast_include);
		inc->name = $2;
		inc->loc = L(lx, @$);
		zsp_ast_include **p = &lx->file->includes;
		while (*p)
			p = &(*p)->next;
		*p = inc;
	}
	| policy_head '{' pstmts '}' {
		$1->stmts = $3.head;
		zsp_ast_policy **p = &lx->file->policies;
		while (*p)
			p = &(*p)->next;
		*p = $1;
	}
	| T_TEST string '{' teststmts '}' {
		zsp_ast_test *t;
		NEW(t, zsp_ast_test);
		t->name = $2;
		t->stmts = $4.head;
		t->loc = L(lx, zsp_span_of(@1, @2));
		zsp_ast_test **p = &lx->file->tests;
		while (*p)
			p = &(*p)->next;
		*p = t;
	}
	| error
	;

policy_head
	: T_POLICY string extends_opt {
		NEW($$, zsp_ast_policy);
		$$->name = $2;
		$$->extends = $3.head;
		$$->loc = L(lx, zsp_span_of(@1, @2));
	}
	;

extends_opt
	: %empty { $$.head = $$.tail = NULL; }
	| T_EXTENDS strlist { $$ = $2; }
	;

pstmts
	: %empty { $$.head = $$.tail = NULL; }
	| pstmts pstmt { $$ = cat($1, $2); }
	| pstmts error { $$ = $1; }
	;

pstmt
	: T_PARAM word ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_PARAM, @$);
		s->name = $2;
		s->name_loc = L(lx, @2);
		$$ = one(s);
	}
	| T_PARAM word '=' string ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_PARAM, @$);
		s->name = $2;
		s->name_loc = L(lx, @2);
		s->value = $4;
		$$ = one(s);
	}
	| T_DEFAULT decision ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_DEFAULT, @$);
		s->decision = $2;
		$$ = one(s);
	}
	| T_FS '{' fsstmts '}' { $$ = $3; }
	| T_NET '{' netstmts '}' { $$ = $3; }
	| T_PROCESS '{' procstmts '}' { $$ = $3; }
	| T_SENSITIVE strlist ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_SENSITIVE, @$);
		s->args = $2.head;
		$$ = one(s);
	}
	| T_TOOL string '{' toolstmts '}' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_TOOL, zsp_span_of(@1, @2));
		s->args = $2;
		s->body = $4.head;
		$$ = one(s);
	}
	;

fsstmts
	: %empty { $$.head = $$.tail = NULL; }
	| fsstmts fsstmt { $$ = cat($1, $2); }
	| fsstmts error { $$ = $1; }
	;

fsstmt
	: fsop strlist ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_FS, @$);
		s->op = $1;
		s->args = $2.head;
		$$ = one(s);
	}
	| T_CACHE cacheitems ';' { $$ = $2; }
	| T_CACHE T_LIMIT qty ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_CACHE_LIMIT, @$);
		s->qty = $3;
		$$ = one(s);
	}
	| T_TMP T_PRIVATE ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_TMP, @$);
		s->op = ZSP_TMP_PRIVATE;
		$$ = one(s);
	}
	| T_TMP T_HOST ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_TMP, @$);
		s->op = ZSP_TMP_HOST;
		$$ = one(s);
	}
	| T_TMP T_LIMIT qty ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_TMP_LIMIT, @$);
		s->qty = $3;
		$$ = one(s);
	}
	;

/* `cache npm, "~/.cache/bazel";`: one statement per tool or path */
cacheitems
	: cacheitem
	| cacheitems ',' cacheitem { $$ = cat($1, $3); }
	;

cacheitem
	: word {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_CACHE, @$);
		s->name = $1;
		s->name_loc = L(lx, @1);
		$$ = one(s);
	}
	| string {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_CACHE, @$);
		s->value = $1;
		s->name_loc = $1->loc;
		$$ = one(s);
	}
	;

fsop
	: T_READ { $$ = ZSP_FS_READ; }
	| T_WRITE { $$ = ZSP_FS_WRITE; }
	| T_DENY { $$ = ZSP_FS_DENY; }
	| T_PROTECT { $$ = ZSP_FS_PROTECT; }
	;

netstmts
	: %empty { $$.head = $$.tail = NULL; }
	| netstmts netstmt { $$ = cat($1, $2); }
	| netstmts error { $$ = $1; }
	;

netstmt
	: T_MODE netmode ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_NET_MODE, @$);
		s->op = $2;
		$$ = one(s);
	}
	| allowdeny strlist ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_NET_HOST, @$);
		s->decision = $1;
		s->args = $2.head;
		$$ = one(s);
	}
	| allowdeny T_UNIX strlist ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_NET_UNIX, @$);
		s->decision = $1;
		s->args = $3.head;
		$$ = one(s);
	}
	;

netmode
	: T_NONE { $$ = ZSP_NET_NONE; }
	| T_FULL { $$ = ZSP_NET_FULL; }
	| T_PROXY { $$ = ZSP_NET_PROXY; }
	;

allowdeny
	: T_ALLOW { $$ = ZSP_ALLOW; }
	| T_DENY { $$ = ZSP_DENY; }
	;

procstmts
	: %empty { $$.head = $$.tail = NULL; }
	| procstmts procstmt { $$ = cat($1, $2); }
	| procstmts error { $$ = $1; }
	;

procstmt
	: T_ENV T_CLEAR ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_ENV_CLEAR, @$);
		$$ = one(s);
	}
	| T_ENV T_KEEP strlist ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_ENV_KEEP, @$);
		s->args = $3.head;
		$$ = one(s);
	}
	| T_ENV T_UNSET strlist ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_ENV_UNSET, @$);
		s->args = $3.head;
		$$ = one(s);
	}
	| T_ENV T_SET string '=' string ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_ENV_SET, @$);
		s->args = $3;
		s->value = $5;
		$$ = one(s);
	}
	| T_LIMIT word qty ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_LIMIT, @$);
		s->name = $2;
		s->name_loc = L(lx, @2);
		s->qty = $3;
		$$ = one(s);
	}
	| T_SYSCALLS allowdeny strlist ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_SYSCALLS, @$);
		s->decision = $2;
		s->args = $3.head;
		$$ = one(s);
	}
	| T_SYSCALLS allowdeny strlist T_ERRNO word ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_SYSCALLS, @$);
		s->decision = $2;
		s->args = $3.head;
		s->name = $5;
		s->err_loc = L(lx, @5);
		$$ = one(s);
	}
	| T_SYSCALLS allowdeny strlist T_ERRNO T_INTEGER ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_SYSCALLS, @$);
		s->decision = $2;
		s->args = $3.head;
		s->err = $5.overflow || $5.value > 1000000 ? 1000000 : (int)$5.value;
		s->err_loc = L(lx, @5);
		$$ = one(s);
	}
	| T_SYSCALLS allowdeny strlist T_KILL ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_SYSCALLS, @$);
		s->decision = $2;
		s->args = $3.head;
		s->kill = true;
		s->err_loc = L(lx, @4);
		$$ = one(s);
	}
	;

qty
	: T_QUANTITY
	| T_INTEGER
	;

toolstmts
	: %empty { $$.head = $$.tail = NULL; }
	| toolstmts toolstmt { $$ = cat($1, $2); }
	| toolstmts error { $$ = $1; }
	;

toolstmt
	: T_DEFAULT decision ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_TOOL_DEFAULT, @$);
		s->decision = $2;
		$$ = one(s);
	}
	| T_CASE T_SENSITIVE ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_TOOL_CASE, @$);
		s->op = 1;
		$$ = one(s);
	}
	| T_CASE T_INSENSITIVE ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_TOOL_CASE, @$);
		s->op = 0;
		$$ = one(s);
	}
	| T_SUBSTITUTIONS T_JUDGED ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_TOOL_SUBSTITUTIONS, @$);
		s->op = 1;
		$$ = one(s);
	}
	| T_SUBSTITUTIONS T_DENIED ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_TOOL_SUBSTITUTIONS, @$);
		s->op = 0;
		$$ = one(s);
	}
	| decision matchers ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_TOOL_RULE, @$);
		s->decision = $1;
		s->matchers = $2.head;
		$$ = one(s);
	}
	;

matchers
	: matcher { $$.head = $$.tail = $1; }
	| matchers ',' matcher { $1.tail->next = $3; $1.tail = $3; $$ = $1; }
	;

matcher
	: T_REGEX {
		NEW($$, zsp_ast_matcher);
		$$->text = $1.text;
		$$->flag = $1.flag;
		$$->loc = $1.loc;
	}
	| T_SAFE {
		NEW($$, zsp_ast_matcher);
		$$->is_safe = true;
		$$->text = "safe";
		$$->loc = L(lx, @1);
	}
	| T_PATH string {
		NEW($$, zsp_ast_matcher);
		$$->is_path = true;
		$$->text = $2->s;
		$$->str = $2;
		$$->loc = $2->loc;
	}
	;

teststmts
	: %empty { $$.head = $$.tail = NULL; }
	| teststmts teststmt { $$ = cat($1, $2); }
	| teststmts error { $$ = $1; }
	;

teststmt
	: T_DEFINE word '=' string ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_DEFINE, @$);
		s->name = $2;
		s->name_loc = L(lx, @2);
		s->value = $4;
		$$ = one(s);
	}
	| T_EXPECT decision word reqargs ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_EXPECT, @$);
		s->decision = $2;
		s->name = $3;
		s->name_loc = L(lx, @3);
		s->args = $4.head;
		$$ = one(s);
	}
	| T_EXPECT decision T_TOOLNAME reqargs ';' {
		zsp_ast_stmt *s;
		STMT(s, ZSP_ST_EXPECT, @$);
		s->decision = $2;
		s->name = $3;
		s->name_loc = L(lx, @3);
		s->args = $4.head;
		$$ = one(s);
	}
	;

reqargs
	: %empty { $$.head = $$.tail = NULL; }
	| reqargs string {
		if ($1.tail)
			$1.tail->next = $2;
		else
			$1.head = $2;
		$1.tail = $2;
		$$ = $1;
	}
	;

decision
	: T_ALLOW { $$ = ZSP_ALLOW; }
	| T_ASK { $$ = ZSP_ASK; }
	| T_DENY { $$ = ZSP_DENY; }
	;

strlist
	: string { $$.head = $$.tail = $1; }
	| strlist ',' string { $1.tail->next = $3; $1.tail = $3; $$ = $1; }
	;

string
	: T_STRING {
		if (!$1)
			YYNOMEM;
		$$ = $1;
	}
	;

word
	: T_IDENT
	| keyword
	;

keyword
	: T_ZSP { $$ = "zsp"; } | T_INCLUDE { $$ = "include"; } | T_POLICY { $$ = "policy"; }
	| T_EXTENDS { $$ = "extends"; } | T_PARAM { $$ = "param"; } | T_DEFAULT { $$ = "default"; }
	| T_FS { $$ = "fs"; } | T_READ { $$ = "read"; } | T_WRITE { $$ = "write"; }
	| T_DENY { $$ = "deny"; } | T_PROTECT { $$ = "protect"; } | T_NET { $$ = "net"; }
	| T_MODE { $$ = "mode"; } | T_NONE { $$ = "none"; } | T_FULL { $$ = "full"; }
	| T_PROXY { $$ = "proxy"; } | T_ALLOW { $$ = "allow"; } | T_ASK { $$ = "ask"; }
	| T_UNIX { $$ = "unix"; } | T_PROCESS { $$ = "process"; } | T_ENV { $$ = "env"; }
	| T_CLEAR { $$ = "clear"; } | T_KEEP { $$ = "keep"; } | T_SET { $$ = "set"; }
	| T_UNSET { $$ = "unset"; } | T_LIMIT { $$ = "limit"; } | T_SYSCALLS { $$ = "syscalls"; }
	| T_ERRNO { $$ = "errno"; } | T_KILL { $$ = "kill"; } | T_TOOL { $$ = "tool"; }
	| T_PATH { $$ = "path"; } | T_CASE { $$ = "case"; } | T_SENSITIVE { $$ = "sensitive"; }
	| T_INSENSITIVE { $$ = "insensitive"; } | T_TEST { $$ = "test"; }
	| T_CACHE { $$ = "cache"; } | T_TMP { $$ = "tmp"; } | T_PRIVATE { $$ = "private"; }
	| T_HOST { $$ = "host"; } | T_SAFE { $$ = "safe"; }
	| T_DEFINE { $$ = "define"; } | T_EXPECT { $$ = "expect"; }
	| T_SUBSTITUTIONS { $$ = "substitutions"; } | T_JUDGED { $$ = "judged"; }
	| T_DENIED { $$ = "denied"; }
	;

%%

/* A token as users see it: `write`, `{`, a string, end of file. */
static const char *token_display(yysymbol_kind_t k, char *buf, size_t size)
{
	const char *name = yysymbol_name(k);
	size_t n = strlen(name);
	if (k == YYSYMBOL_YYEOF)
		return "end of file";
	if (k >= YYSYMBOL_T_ZSP && k <= YYSYMBOL_T_EXPECT && name[0] != '"') {
		snprintf(buf, size, "`%s`", name); /* a keyword, as written */
		return buf;
	}
	if (n >= 2 && (name[0] == '"' || name[0] == '\'')) {
		if (k == YYSYMBOL_T_IDENT || k == YYSYMBOL_T_STRING || k == YYSYMBOL_T_REGEX ||
		    k == YYSYMBOL_T_INTEGER || k == YYSYMBOL_T_QUANTITY || k == YYSYMBOL_T_TOOLNAME)
			snprintf(buf, size, "%.*s", (int)(n - 2), name + 1);
		else
			snprintf(buf, size, "`%.*s`", (int)(n - 2), name + 1);
		return buf;
	}
	return name;
}

static bool is_keyword(yysymbol_kind_t k)
{
	return k >= YYSYMBOL_T_ZSP && k <= YYSYMBOL_T_EXPECT;  /* T_EXPECT is declared last */
}

/* `allow //;` reads as a rule cut short by a comment. Finds such a `//` on the line before
 * `at` (the first token after it), or returns UINT32_MAX. */
static uint32_t comment_as_regex(const zsp_source *src, uint32_t at)
{
	const char *t = src->text;
	uint32_t i = at;
	while (i > 0 && strchr(" \t\r\n", t[i - 1]))
		i--;
	uint32_t ls = i;
	while (ls > 0 && t[ls - 1] != '\n')
		ls--;
	bool in_str = false;
	for (uint32_t c = ls; c + 1 < i; c++) {
		if (in_str && t[c] == '\\')
			c++;
		else if (t[c] == '"')
			in_str = !in_str;
		if (in_str || t[c] != '/' || t[c + 1] != '/') {
			if (!in_str && t[c] == '#')
				return UINT32_MAX;
			continue;
		}
		uint32_t e = c;
		while (e > ls && strchr(" \t", t[e - 1]))
			e--;
		static const char *const before[] = { "allow", "deny", "ask", "," };
		for (size_t k = 0; k < sizeof(before) / sizeof(before[0]); k++) {
			size_t n = strlen(before[k]);
			if (e - ls >= n && memcmp(t + e - n, before[k], n) == 0)
				return c;
		}
		return UINT32_MAX;
	}
	return UINT32_MAX;
}

static int yyreport_syntax_error(const yypcontext_t *ctx, struct zsp_lex *lx)
{
	enum { MAX_SHOWN = 6 };
	yysymbol_kind_t expected[YYNTOKENS];
	int n = yypcontext_expected_tokens(ctx, expected, YYNTOKENS);
	yysymbol_kind_t got = yypcontext_token(ctx);
	zsp_loc loc = L(lx, *yypcontext_location(ctx));
	char what[256], tok[64];

	if (got == YYSYMBOL_YYUNDEF)
		return 0; /* the scanner already reported it */
	if (lx->cut_at && lx->cut_at - 1 <= loc.begin) {
		/* The first token after an unterminated string or regex: the literal ate the
		 * rest of its line (a `;`, a `}`), so this error only repeats that one. */
		uint32_t i = lx->cut_at - 1;
		while (i < loc.begin && strchr(" \t\r\n", lx->src->text[i]))
			i++;
		if (i == loc.begin)
			return 0;
	}
	for (int i = 0; i < n; i++) {
		uint32_t c;
		if (expected[i] != YYSYMBOL_T_REGEX || (c = comment_as_regex(lx->src, loc.begin)) == UINT32_MAX)
			continue;
		zsp_loc cl = { lx->src, c, c + 2 };
		zsp_diag_error(lx->diag, cl, "`//` starts a comment, so this rule has no regex");
		zsp_diag_hint(lx->diag, "a regex cannot be empty (it would match every input); "
			      "use `default` to decide for every input");
		return 0;
	}
	if (got == YYSYMBOL_T_IDENT || is_keyword(got)) {
		unsigned len = loc.end - loc.begin;
		snprintf(what, sizeof(what), "%s `%.*s`", is_keyword(got) ? "keyword" : "word",
			 (int)(len > 64 ? 64 : len), lx->src->text + loc.begin);
	} else if (got == YYSYMBOL_YYEOF) {
		snprintf(what, sizeof(what), "end of file");
		if (loc.begin > 0) /* point at the last character, not past it */
			loc.begin = loc.end = (uint32_t)lx->src->len;
	} else {
		snprintf(what, sizeof(what), "%s", token_display(got, tok, sizeof(tok)));
	}

	/* Show every expected token when there are few; else the first ones and a count. */
	char list[1024] = "";
	size_t used = 0;
	int keywords = 0;
	int shown = n <= MAX_SHOWN + 2 ? n : MAX_SHOWN;
	for (int i = 0; i < shown; i++) {
		const char *sep = i == 0 ? "" : (i == n - 1 ? " or " : ", ");
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", sep,
					 token_display(expected[i], tok, sizeof(tok)));
		if (used >= sizeof(list))
			used = sizeof(list) - 1;
	}
	for (int i = 0; i < n; i++)
		keywords += is_keyword(expected[i]);
	if (n > shown)
		snprintf(list + used, sizeof(list) - used, " or %d other tokens", n - shown);

	if (n == 0)
		zsp_diag_error(lx->diag, loc, "unexpected %s", what);
	else
		zsp_diag_error(lx->diag, loc, "unexpected %s, expected %s", what, list);

	/* A misspelt keyword: suggest the closest expected one. */
	if (got == YYSYMBOL_T_IDENT || is_keyword(got)) {
		char names[YYNTOKENS][24];
		const char *cands[YYNTOKENS];
		size_t nc = 0;
		for (int i = 0; i < n; i++) {
			if (!is_keyword(expected[i]))
				continue;
			const char *name = yysymbol_name(expected[i]);
			if (name[0] == '"') /* older bison quotes aliases */
				snprintf(names[nc], sizeof(names[nc]), "%.*s", (int)strlen(name) - 2, name + 1);
			else
				snprintf(names[nc], sizeof(names[nc]), "%s", name);
			cands[nc] = names[nc];
			nc++;
		}
		char word[65];
		unsigned len = loc.end - loc.begin;
		snprintf(word, sizeof(word), "%.*s", (int)(len > 64 ? 64 : len), lx->src->text + loc.begin);
		const char *best = zsp_closest(word, cands, nc);
		if (best)
			zsp_diag_hint(lx->diag, "did you mean `%s`?", best);
	}
	if (keywords == 0 && n == 1 && strcmp(yysymbol_name(expected[0]), "';'") == 0)
		zsp_diag_hint(lx->diag, "every statement ends with `;`");
	return 0;
}

int zsp_yylex_init_extra(struct zsp_lex *extra, void **scanner);
int zsp_yylex_destroy(void *scanner);
void *zsp_yy_scan_bytes(const char *bytes, int len, void *scanner);

zsp_ast_file *zsp_parse(zsp_arena *a, const zsp_source *src, struct zsp_diag *diag)
{
	struct zsp_lex lx = { .arena = a, .src = src, .diag = diag };
	lx.file = zsp_arena_alloc(a, sizeof(*lx.file));
	if (!lx.file)
		return NULL;
	lx.file->src = src;
	if (src->len > ZSP_SOURCE_MAX) {
		zsp_loc none = { src, 0, 0 };
		zsp_diag_error(diag, none, "file is larger than %u bytes", ZSP_SOURCE_MAX);
		return lx.file;
	}
	if (zsp_yylex_init_extra(&lx, &lx.scanner) != 0)
		return NULL;
	if (!zsp_yy_scan_bytes(src->text, (int)src->len, lx.scanner)) {
		zsp_yylex_destroy(lx.scanner);
		return NULL;
	}
	int rc = zsp_yyparse(&lx);
	zsp_yylex_destroy(lx.scanner);
	free(lx.buf);
	if (rc == 2 || lx.oom)
		return NULL;
	if (!lx.file->has_version && diag->errors == 0) {
		zsp_loc first = { src, 0, 0 };
		while (first.begin < src->len && strchr(" \t\r\n", src->text[first.begin]))
			first.begin++;
		first.end = first.begin + 1;
		zsp_diag_error(diag, first, "missing version pin: a policy file starts with `zsp 1;`");
	}
	return lx.file;
}

const char *zsp_decision_name(zsp_decision d)
{
	switch (d) {
	case ZSP_ALLOW: return "allow";
	case ZSP_ASK: return "ask";
	case ZSP_DENY: return "deny";
	default: return "none";
	}
}
