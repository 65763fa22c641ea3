/* test_sha256.c: compiler/sha256.c against the FIPS 180-4 / NIST example vectors, fed whole
 * and byte by byte (block boundaries), plus the million-`a` vector. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "compiler/sha256.h"

static int failures;

static void check(const char *what, const char *got, const char *want)
{
	if (strcmp(got, want) != 0) {
		printf("FAIL: %s\n  got  %s\n  want %s\n", what, got, want);
		failures++;
	}
}

static void hex_of(zsp_sha256 *c, char hex[65])
{
	unsigned char d[32];
	zsp_sha256_final(c, d);
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

int main(void)
{
	static const struct { const char *in, *out; } v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
		  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	};
	char hex[65];
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		zsp_sha256_hex(v[i].in, strlen(v[i].in), hex);
		check(v[i].in, hex, v[i].out);
		zsp_sha256 c;
		zsp_sha256_init(&c);
		for (const char *p = v[i].in; *p; p++)
			zsp_sha256_update(&c, p, 1);
		hex_of(&c, hex);
		check(v[i].in, hex, v[i].out);
	}
	char block[1000];
	memset(block, 'a', sizeof(block));
	zsp_sha256 c;
	zsp_sha256_init(&c);
	for (int i = 0; i < 1000; i++)
		zsp_sha256_update(&c, block, sizeof(block));
	hex_of(&c, hex);
	check("a million a", hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
	printf("sha256: %s\n", failures ? "FAILED" : "ok");
	return failures ? 1 : 0;
}
