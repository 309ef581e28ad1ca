/* SPDX-License-Identifier: MIT */
/*
 * JSON values: a strict RFC 8259 parser and a tree builder, both allocating from a kx_arena.
 *
 * Why not cJSON: cJSON accepts text that is not JSON ("01", "1."), silently truncates strings at
 * "\u0000", does not check UTF-8 and keeps duplicate keys without saying so. Each of those changes
 * what a document hashes to, so digests would depend on the parser's leniency. This parser
 * accepts exactly RFC 8259 JSON in UTF-8, keeps strings with their lengths (embedded NUL allowed),
 * reports the first syntax error with its line and column, and leaves duplicate keys and
 * out-of-range numbers in the tree for kx_json_lint() to report with their JSON pointers.
 *
 * Ownership: every node, key and string belongs to the arena it was made in. Trees are read-only
 * after construction as far as thread safety goes: concurrent readers are fine, writers are not.
 */
#ifndef KX_JSON_H
#define KX_JSON_H

#include "kx/common.h"

enum kx_json_type {
	KX_JSON_NULL,
	KX_JSON_FALSE,
	KX_JSON_TRUE,
	KX_JSON_NUMBER,
	KX_JSON_STRING,
	KX_JSON_ARRAY,
	KX_JSON_OBJECT,
};

struct kx_json;

struct kx_json_member {
	const char *key; /* NUL-terminated, may also contain NUL: use key_len */
	size_t key_len;
	struct kx_json *value;
};

struct kx_json {
	enum kx_json_type type;
	uint32_t line; /* 1-based position in the parsed text; 0 for built values */
	uint32_t col;
	bool nonfinite; /* a number literal out of the range of a double (kx_json_lint reports it) */
	/* objects and arrays from the parser: their source text (NULL when built). It describes the
	 * tree only while the tree is unchanged: the builders below clear it on the container they
	 * change, not on its ancestors. */
	const char *src;
	size_t src_len;
	union {
		double number;
		struct {
			const char *ptr; /* NUL-terminated, may also contain NUL: use len */
			size_t len;
		} str;
		struct {
			struct kx_json **v;
			size_t len, cap;
		} arr;
		struct {
			struct kx_json_member *v; /* in source / insertion order */
			size_t len, cap;
		} obj;
	};
};

#define KX_JSON_MAX_DEPTH_DEFAULT 64

struct kx_json_error {
	unsigned line, col; /* 1-based; col counts bytes */
	size_t offset;
	const char *rule;   /* "json-syntax", "utf8", "depth" (static strings) */
	char message[160];
};

/*
 * Parse one JSON value from text[0..len), skipping whitespace before and after it. On success
 * *ret_value is the tree and *ret_end the offset just past the value and its trailing whitespace
 * (len when the text holds exactly one value: callers reading JSON Lines continue from there).
 * Nesting deeper than max_depth (0 = KX_JSON_MAX_DEPTH_DEFAULT) is an error.
 * Returns 0, -EINVAL with *err filled (syntax, UTF-8, depth), or -ENOMEM.
 */
int kx_json_parse(struct kx_arena *a, const char *text, size_t len, unsigned max_depth,
		  struct kx_json **ret_value, size_t *ret_end, struct kx_json_error *err);

/*
 * Report what the parser let through but a document may not hold: duplicate object keys (rule
 * "duplicate-key") and numbers beyond a double's range (rule "non-finite"), each with its JSON
 * pointer (prefixed by `prefix`, which may be "" or NULL) and source position. Returns the number
 * of problems added (or -ENOMEM).
 */
int kx_json_lint(const struct kx_json *v, const char *prefix, struct kx_problems *problems);

/* ---- building ---------------------------------------------------------------------------------
 * Constructors return NULL only when the arena cannot allocate. Strings are copied.
 */
struct kx_json *kx_json_new(struct kx_arena *a, enum kx_json_type type);
struct kx_json *kx_json_new_number(struct kx_arena *a, double n);
struct kx_json *kx_json_new_string(struct kx_arena *a, const char *s);
struct kx_json *kx_json_new_stringn(struct kx_arena *a, const char *s, size_t len);
struct kx_json *kx_json_new_bool(struct kx_arena *a, bool b);
struct kx_json *kx_json_clone(struct kx_arena *a, const struct kx_json *v);

/* Set obj[key] = value, replacing an existing member of that key (the first one). */
int kx_json_set(struct kx_arena *a, struct kx_json *obj, const char *key, struct kx_json *value);
int kx_json_set_string(struct kx_arena *a, struct kx_json *obj, const char *key, const char *s);
int kx_json_set_number(struct kx_arena *a, struct kx_json *obj, const char *key, double n);
int kx_json_append(struct kx_arena *a, struct kx_json *arr, struct kx_json *value);

/* ---- reading ---------------------------------------------------------------------------------- */

/* obj[key] (the first member of that name), or NULL when obj is not an object or has no such key. */
struct kx_json *kx_json_get(const struct kx_json *obj, const char *key);
/* The string at obj[key], or NULL when absent or not a string (or when it holds a NUL byte). */
const char *kx_json_get_string(const struct kx_json *obj, const char *key);
/* Follow an RFC 6901 pointer ("/spec/timing/latencyNs/median"); NULL when it leads nowhere. */
struct kx_json *kx_json_pointer(const struct kx_json *root, const char *pointer);
const char *kx_json_type_name(enum kx_json_type t);
bool kx_json_equal(const struct kx_json *x, const struct kx_json *y);

/* Append `key` to a JSON pointer, escaping "~" and "/" per RFC 6901. */
int kx_json_pointer_append(struct kx_buf *ptr, const char *key, size_t key_len);

#endif
