/* sha256.h: SHA-256 (FIPS 180-4), enough to fingerprint a policy's IR for the audit trail.
 * Not for secrets: no constant-time claims, no key handling. */
#ifndef ZSP_SHA256_H
#define ZSP_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct zsp_sha256 {
	uint32_t h[8];
	uint64_t len;           /* bytes hashed so far */
	unsigned char buf[64];
	size_t nbuf;
} zsp_sha256;

void zsp_sha256_init(zsp_sha256 *c);
void zsp_sha256_update(zsp_sha256 *c, const void *data, size_t n);
void zsp_sha256_final(zsp_sha256 *c, unsigned char digest[32]);
/* The digest of data as 64 lower-case hex digits and a NUL. */
void zsp_sha256_hex(const void *data, size_t n, char hex[65]);

#endif
