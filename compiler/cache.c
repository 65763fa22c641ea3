/* cache.c: the table of tools `cache NAME` knows. Each part is a directory the tool only ever
 * rebuilds (downloads, unpacked sources, build outputs); what configures the tool, holds a
 * credential or a program the host runs stays out, and so stays the host's own. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "compiler/cache.h"
#include "compiler/sha256.h"

/* npm: ~/.npm holds _cacache (tarballs, metadata), _npx (what npx installs) and _logs; its
 * settings and registry tokens are ~/.npmrc, a file beside it. */
static const zsp_ir_cache_part npm[] = {
	{ "npm", "${HOME}/.npm", "npm_config_cache", NULL, NULL },
};
/* pip: downloads and built wheels; pip.conf (~/.config/pip) and ~/.pypirc are not in it. */
static const zsp_ir_cache_part pip[] = {
	{ "pip", "${HOME}/.cache/pip", "PIP_CACHE_DIR", NULL, NULL },
};
/* uv: its cache; uv.toml (~/.config/uv), the Pythons and tools it installs are not in it. */
static const zsp_ir_cache_part uv[] = {
	{ "uv", "${HOME}/.cache/uv", "UV_CACHE_DIR", NULL, NULL },
};
/* go: the module cache and the build cache. $GOPATH/bin (programs the host runs) and the go
 * env file (GOPROXY, GOPRIVATE, GONOSUMDB) are not in them. */
static const zsp_ir_cache_part go[] = {
	{ "go-mod", "${HOME}/go/pkg/mod", "GOMODCACHE", NULL, NULL },
	{ "go-build", "${HOME}/.cache/go-build", "GOCACHE", NULL, NULL },
};
/* cargo: only registry/ (index, crate files, unpacked sources) and git/ (git dependencies) of
 * $CARGO_HOME, which has no variable of their own: mounted there. config.toml (build
 * wrappers, runners), credentials.toml (registry tokens) and bin/ (installed programs the host
 * runs) are never moved into or out of the sandbox. */
static const zsp_ir_cache_part cargo[] = {
	{ "cargo-registry", "${HOME}/.cargo/registry", NULL, "CARGO_HOME", "registry" },
	{ "cargo-git", "${HOME}/.cargo/git", NULL, "CARGO_HOME", "git" },
};
/* maven: the local repository, mounted (Maven has no variable for it). settings.xml (server
 * passwords), settings-security.xml and toolchains.xml in ~/.m2 are not moved. */
static const zsp_ir_cache_part maven[] = {
	{ "maven", "${HOME}/.m2/repository", NULL, NULL, NULL },
};

#define TOOL(n) { #n, n, sizeof(n) / sizeof(n[0]) }
static const zsp_cache_tool tools[] = {
	TOOL(cargo), TOOL(go), TOOL(maven), TOOL(npm), TOOL(pip), TOOL(uv),
};
#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

const zsp_cache_tool *zsp_cache_tool_find(const char *name)
{
	for (size_t i = 0; i < NTOOLS; i++)
		if (strcmp(tools[i].name, name) == 0)
			return &tools[i];
	return NULL;
}

size_t zsp_cache_tool_names(const char **out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < NTOOLS && n < max; i++)
		out[n++] = tools[i].name;
	return n;
}

void zsp_cache_path_id(const char *path, char id[14])
{
	char hex[65];
	zsp_sha256_hex(path, strlen(path), hex);
	snprintf(id, 14, "path-%.8s", hex);
}
