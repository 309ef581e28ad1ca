/* SPDX-License-Identifier: MIT */
/*
 * Shared primitives of kindexfs: a growable byte buffer with a size cap, a bump arena that owns
 * parsed and built JSON trees, and the list of validation problems every stage reports.
 * Nothing here touches a third-party header; every other module builds on it.
 *
 * Conventions used across include/kx: functions return 0 or a negative errno; outputs are
 * `ret_*` parameters written only on success; `_free(NULL)` is a no-op.
 */
#ifndef KX_COMMON_H
#define KX_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define KX_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#if defined(__GNUC__)
#define KX_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KX_PRINTF(f, a)
#endif

/* ---- kx_buf: a growable byte string ----------------------------------------------------------
 *
 * Always NUL-terminated after `len` bytes (the NUL is not counted), so `buf.ptr` can be passed to
 * C string functions when the content has no embedded NUL. `cap_limit` (0 = unlimited) bounds the
 * total length: an append that would pass it fails with -E2BIG and leaves the buffer unchanged.
 * Allocation failure gives -ENOMEM. Not thread-safe; the caller owns `ptr` and frees it with
 * kx_buf_release(). A zeroed struct is a valid empty buffer.
 */
struct kx_buf {
	char *ptr;
	size_t len;
	size_t alloc;
	size_t cap_limit;
};

void kx_buf_init(struct kx_buf *b, size_t cap_limit);
void kx_buf_release(struct kx_buf *b);
void kx_buf_reset(struct kx_buf *b); /* len = 0, keeps the allocation */
int kx_buf_reserve(struct kx_buf *b, size_t extra);
int kx_buf_append(struct kx_buf *b, const void *data, size_t len);
int kx_buf_puts(struct kx_buf *b, const char *s);
int kx_buf_putc_slow(struct kx_buf *b, char c);
/* Append one byte (inline: JCS and the renderers call this per byte). */
static inline int kx_buf_putc(struct kx_buf *b, char c)
{
	if (b->len + 1 < b->alloc && (!b->cap_limit || b->len < b->cap_limit)) {
		b->ptr[b->len++] = c;
		b->ptr[b->len] = '\0';
		return 0;
	}
	return kx_buf_putc_slow(b, c);
}
int kx_buf_printf(struct kx_buf *b, const char *fmt, ...) KX_PRINTF(2, 3);
int kx_buf_vprintf(struct kx_buf *b, const char *fmt, va_list ap);
/* Hand the bytes to the caller (who frees them with free()); the buffer becomes empty. */
char *kx_buf_detach(struct kx_buf *b, size_t *ret_len);

/* Read a whole file; fails with -EFBIG when it is longer than `limit` bytes (0 = no limit). */
int kx_read_file(const char *path, size_t limit, struct kx_buf *out);

/* ---- kx_arena: bump allocation for trees that live and die together --------------------------
 *
 * Every node of a parsed or built JSON tree comes from one arena and is released with it.
 * Allocations are 8-byte aligned. kx_arena_alloc returns NULL only when malloc fails.
 * Not thread-safe.
 */
struct kx_arena;

struct kx_arena *kx_arena_new(void);
void kx_arena_free(struct kx_arena *a);
void *kx_arena_alloc(struct kx_arena *a, size_t size);      /* uninitialised */
void *kx_arena_zalloc(struct kx_arena *a, size_t size);     /* zeroed */
char *kx_arena_strndup(struct kx_arena *a, const char *s, size_t len); /* NUL-terminated copy */
char *kx_arena_printf(struct kx_arena *a, const char *fmt, ...) KX_PRINTF(2, 3);
size_t kx_arena_used(const struct kx_arena *a);

/* ---- kx_problems: everything wrong with an input, collected, not just the first ---------------
 *
 * Each problem names where (a JSON pointer into the document, "" for the whole file, prefixed by
 * the JSON Lines line number when there is one), which rule failed (a short stable identifier such
 * as "required" or "digest-mismatch", listed in docs/manifest.md) and a lowercase message for a
 * human. Strings are copied; kx_problems_release frees them.
 */
struct kx_problem {
	char *pointer;
	char *rule;
	char *message;
	unsigned line; /* 1-based source line where known, else 0 */
	unsigned col;
};

struct kx_problems {
	struct kx_problem *v;
	size_t len;
	size_t cap;
};

void kx_problems_init(struct kx_problems *p);
void kx_problems_release(struct kx_problems *p);
int kx_problems_add(struct kx_problems *p, unsigned line, unsigned col, const char *pointer,
		    const char *rule, const char *fmt, ...) KX_PRINTF(6, 7);
/* Move every problem of `from` to the end of `to`, prefixing pointers with `prefix`. */
int kx_problems_splice(struct kx_problems *to, struct kx_problems *from, const char *prefix);
/*
 * Write the problems as text, one per line: "<file>:<line>:<col>: <pointer>: <rule>: <message>"
 * (fields that are unknown are left out). `file` may be NULL.
 */
int kx_problems_format(const struct kx_problems *p, const char *file, struct kx_buf *out);

/* ---- small helpers ---------------------------------------------------------------------------- */

/* Copy n bytes of src into dst (capacity cap), cut to fit, always NUL-terminated (cap > 0). */
void kx_copyn(char *dst, size_t cap, const char *src, size_t n);

/*
 * Room for one more element in an array of `len` used of *cap allocated, `size` bytes each, whose
 * pointer is at `array` (a T **): when full, its capacity doubles (from `first`). 0, or -ENOMEM
 * with the array and *cap as they were. Use it as KX_GROW(v, cap, len, first).
 */
int kx_grow(void *array, size_t *cap, size_t len, size_t size, size_t first);
#define KX_GROW(v, cap, len, first) kx_grow(&(v), &(cap), (len), sizeof(*(v)), (first))

/* Lowercase hex of `len` bytes into `out` (2*len+1 bytes, NUL-terminated). */
void kx_hex(const uint8_t *bytes, size_t len, char *out);
/* Parse exactly 2*len hex digits (either case) into bytes; -EINVAL otherwise. */
int kx_unhex(const char *hex, size_t hexlen, uint8_t *out, size_t len);
/* CRC-32C (Castagnoli) of n bytes, continuing crc (0 to start): the CPU's instruction where it has
 * one. */
uint32_t kx_crc32c(uint32_t crc, const void *data, size_t n);

/*
 * The parsers of every number and size a user gives (options of kindex, kindexfs and
 * kindex-bench, and environment variables), one family with one rule: decimal digits only — no
 * sign, space, base prefix or exponent, so "-1", " -5" or "0x10" is never read as something
 * else, and nothing may follow the number. Each returns 0 and sets *ret; -EINVAL (*ret
 * untouched) when `s` is not such a number; -ERANGE when it is but lies outside [min, max]
 * (23 digits included: never taken as "unlimited", never wrapped). A caller's message names the
 * option, the value and the range.
 *
 * kx_parse_size: a whole number of bytes, with `suffixes` one of K, M, G (powers of 1024)
 * optionally followed by "iB" or "B", or a bare "B" (`kindex ingest --max-bytes`, -o cache).
 */
int kx_parse_size(const char *s, bool suffixes, uint64_t min, uint64_t max, uint64_t *ret);
/* A whole number: digits only ("0" to "18446744073709551615"); a generation, a count. */
int kx_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *ret);
/*
 * A non-negative decimal, seconds or a ratio: digits with an optional fraction, "2", "0.5", ".5"
 * or "2." (at least one digit); no exponent, "inf" or "nan". *ret is the nearest double.
 */
int kx_parse_decimal(const char *s, double min, double max, double *ret);

/*
 * A user's value (a field's value, a name, an option's argument) quoted for a message:
 * 'VALUE', of which at most KX_QUOTE_CHARS characters are shown; a longer value is cut at a
 * character boundary and says so, 'first 80 characters…' (+N bytes). Control bytes and bytes
 * that are not UTF-8 are shown as \xNN, so a value cannot break a message's line. Writes into
 * `buf` and returns it. Thread-safe.
 */
enum { KX_QUOTE_CHARS = 80, KX_QUOTE_SIZE = KX_QUOTE_CHARS * 4 + 48 };
const char *kx_quote(char buf[KX_QUOTE_SIZE], const char *s, size_t len);

/*
 * Names in the order people read them: each run of digits compares as the number it writes
 * (n2048 < n16384; leading zeros ignored), the rest byte by byte; names equal that way (n08 and
 * n8) fall back to strcmp, so the order is total. Every view and page lists names in this order.
 */
int kx_name_cmp(const char *a, const char *b);

/* Current wall-clock time in nanoseconds since the Unix epoch. */
int64_t kx_now_ns(void);
/* Monotonic seconds, for progress and rates. */
double kx_monotonic(void);
/* Nanoseconds since the epoch as a timespec with 0 <= tv_nsec < 1e9, before 1970 too (-1 ns is
 * { -1, 999999999 }): what stat() reports and utimensat() accepts. */
struct timespec kx_timespec_from_ns(int64_t ns);

#endif
