/* fuzz.h: the libFuzzer entry point, also called by the fuzz_regress runner. */
#ifndef ZSP_FUZZ_H
#define ZSP_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
