// SPDX-License-Identifier: MIT
/*
 * CRC-32C (Castagnoli, RFC 3720's iSCSI polynomial, reflected 0x82F63B78): the check an
 * artifact's chunk carries (docs/store.md). The CPU's own instruction where it has one (x86-64's
 * SSE 4.2 crc32, 8 bytes an instruction), else a table a byte at a time: the same value either way,
 * checked against RFC 3720's test vectors (tests/unit/test-common.c).
 *
 * Why our own and not RocksDB's blob checksum: Debian's librocksdb is built portable and computes
 * its CRC32C in software, half of a mount's CPU when it streams an artifact (docs/performance-log.md).
 */
#include "kx/common.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

static uint32_t table[256];

static void table_fill(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		table[i] = c;
	}
}

static uint32_t crc_soft(uint32_t c, const unsigned char *p, size_t n)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, table_fill);
	while (n--)
		c = table[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_HW 1
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t c, const unsigned char *p, size_t n)
{
	uint64_t c64 = c;
	for (; n >= 8; n -= 8, p += 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		c64 = __builtin_ia32_crc32di(c64, w);
	}
	c = (uint32_t)c64;
	for (; n; n--)
		c = __builtin_ia32_crc32qi(c, *p++);
	return c;
}
#endif

uint32_t kx_crc32c(uint32_t crc, const void *data, size_t n)
{
	uint32_t c = ~crc;
#ifdef HAVE_HW
	if (__builtin_cpu_supports("sse4.2"))
		return ~crc_hw(c, data, n);
#endif
	return ~crc_soft(c, data, n);
}
