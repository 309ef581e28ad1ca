/* SPDX-License-Identifier: MIT */
/*
 * Shared by the fuzz targets: the libFuzzer entry point every target defines, and the property
 * check. A broken property aborts — libFuzzer then saves the input as a crash; the corpus replay
 * (fuzz-main.c, the ordinary `meson test --suite fuzz` build) fails the test and has already
 * printed which file it was reading.
 */
#ifndef KX_FUZZ_H
#define KX_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define fuzz_assert(cond, ...)                                                                       \
	do {                                                                                         \
		if (!(cond)) {                                                                       \
			fprintf(stderr, "fuzz property broken at %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                                \
			fputc('\n', stderr);                                                         \
			abort();                                                                     \
		}                                                                                    \
	} while (0)

#endif
