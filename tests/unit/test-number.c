// SPDX-License-Identifier: MIT
/*
 * ES6 number formatting (kx_jcs_number) against the deterministic test sequence of the RFC 8785
 * reference data (tests/data/jcs/README.md, "ES6 Numbers"): the generator below reproduces
 * numgen.js, every line "hex-ieee,expected\n" is hashed as it is produced, and the hash must equal
 * the published SHA-256 for that many lines. Usage: test-number [LINES] (default 1,000,000).
 */
#include "kx/canon.h"
#include "tap.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const uint64_t static_u64s[] = {
	0x0000000000000000ull, 0x8000000000000000ull, 0x0000000000000001ull, 0x8000000000000001ull,
	0xc46696695dbd1cc3ull, 0xc43211ede4974a35ull, 0xc3fce97ca0f21056ull, 0xc3c7213080c1a6acull,
	0xc39280f39a348556ull, 0xc35d9b1f5d20d557ull, 0xc327af4c4a80aaacull, 0xc2f2f2a36ecd5556ull,
	0xc2be51057e155558ull, 0xc28840d131aaaaacull, 0xc253670dc1555557ull, 0xc21f0b4935555557ull,
	0xc1e8d5d42aaaaaacull, 0xc1b3de4355555556ull, 0xc17fca0555555556ull, 0xc1496e6aaaaaaaabull,
	0xc114585555555555ull, 0xc0e046aaaaaaaaabull, 0xc0aa0aaaaaaaaaaaull, 0xc074d55555555555ull,
	0xc040aaaaaaaaaaabull, 0xc00aaaaaaaaaaaabull, 0xbfd5555555555555ull, 0xbfa1111111111111ull,
	0xbf6b4e81b4e81b4full, 0xbf35d867c3ece2a5ull, 0xbf0179ec9cbd821eull, 0xbecbf647612f3696ull,
	0xbe965e9f80f29212ull, 0xbe61e54c672874dbull, 0xbe2ca213d840baf8ull, 0xbdf6e80fe033c8c6ull,
	0xbdc2533fe68fd3d2ull, 0xbd8d51ffd74c861cull, 0xbd5774ccac3d3817ull, 0xbd22c3d6f030f9acull,
	0xbcee0624b3818f79ull, 0xbcb804ea293472c7ull, 0xbc833721ba905bd3ull, 0xbc4ebe9c5db3c61eull,
	0xbc18987d17c304e5ull, 0xbbe3ad30dfcf371dull, 0xbbaf7b816618582full, 0xbb792f9ab81379bfull,
	0xbb442615600f9499ull, 0xbb101e77800c76e1ull, 0xbad9ca58cce0be35ull, 0xbaa4a1e0a3e6fe90ull,
	0xba708180831f320dull, 0xba3a68cd9e985016ull, 0x446696695dbd1cc3ull, 0x443211ede4974a35ull,
	0x43fce97ca0f21056ull, 0x43c7213080c1a6acull, 0x439280f39a348556ull, 0x435d9b1f5d20d557ull,
	0x4327af4c4a80aaacull, 0x42f2f2a36ecd5556ull, 0x42be51057e155558ull, 0x428840d131aaaaacull,
	0x4253670dc1555557ull, 0x421f0b4935555557ull, 0x41e8d5d42aaaaaacull, 0x41b3de4355555556ull,
	0x417fca0555555556ull, 0x41496e6aaaaaaaabull, 0x4114585555555555ull, 0x40e046aaaaaaaaabull,
	0x40aa0aaaaaaaaaaaull, 0x4074d55555555555ull, 0x4040aaaaaaaaaaabull, 0x400aaaaaaaaaaaabull,
	0x3fd5555555555555ull, 0x3fa1111111111111ull, 0x3f6b4e81b4e81b4full, 0x3f35d867c3ece2a5ull,
	0x3f0179ec9cbd821eull, 0x3ecbf647612f3696ull, 0x3e965e9f80f29212ull, 0x3e61e54c672874dbull,
	0x3e2ca213d840baf8ull, 0x3df6e80fe033c8c6ull, 0x3dc2533fe68fd3d2ull, 0x3d8d51ffd74c861cull,
	0x3d5774ccac3d3817ull, 0x3d22c3d6f030f9acull, 0x3cee0624b3818f79ull, 0x3cb804ea293472c7ull,
	0x3c833721ba905bd3ull, 0x3c4ebe9c5db3c61eull, 0x3c18987d17c304e5ull, 0x3be3ad30dfcf371dull,
	0x3baf7b816618582full, 0x3b792f9ab81379bfull, 0x3b442615600f9499ull, 0x3b101e77800c76e1ull,
	0x3ad9ca58cce0be35ull, 0x3aa4a1e0a3e6fe90ull, 0x3a708180831f320dull, 0x3a3a68cd9e985016ull,
	0x4024000000000000ull, 0x4014000000000000ull, 0x3fe0000000000000ull, 0x3fa999999999999aull,
	0x3f747ae147ae147bull, 0x3f40624dd2f1a9fcull, 0x3f0a36e2eb1c432dull, 0x3ed4f8b588e368f1ull,
	0x3ea0c6f7a0b5ed8dull, 0x3e6ad7f29abcaf48ull, 0x3e35798ee2308c3aull, 0x3ed539223589fa95ull,
	0x3ed4ff26cd5a7781ull, 0x3ed4f95a762283ffull, 0x3ed4f8c60703520cull, 0x3ed4f8b72f19cd0dull,
	0x3ed4f8b5b31c0c8dull, 0x3ed4f8b58d1c461aull, 0x3ed4f8b5894f7f0eull, 0x3ed4f8b588ee37f3ull,
	0x3ed4f8b588e47da4ull, 0x3ed4f8b588e3849cull, 0x3ed4f8b588e36bb5ull, 0x3ed4f8b588e36937ull,
	0x3ed4f8b588e368f8ull, 0x3ed4f8b588e368f1ull, 0x3ff0000000000000ull, 0xbff0000000000000ull,
	0xbfeffffffffffffaull, 0xbfeffffffffffffbull, 0x3feffffffffffffaull, 0x3feffffffffffffbull,
	0x3feffffffffffffcull, 0x3feffffffffffffeull, 0xbfefffffffffffffull, 0xbfefffffffffffffull,
	0x3fefffffffffffffull, 0x3fefffffffffffffull, 0x3fd3333333333332ull, 0x3fd3333333333333ull,
	0x3fd3333333333334ull, 0x0010000000000000ull, 0x000ffffffffffffdull, 0x000fffffffffffffull,
	0x7fefffffffffffffull, 0xffefffffffffffffull, 0x4340000000000000ull, 0xc340000000000000ull,
	0x4430000000000000ull, 0x44b52d02c7e14af5ull, 0x44b52d02c7e14af6ull, 0x44b52d02c7e14af7ull,
	0x444b1ae4d6e2ef4eull, 0x444b1ae4d6e2ef4full, 0x444b1ae4d6e2ef50ull, 0x3eb0c6f7a0b5ed8cull,
	0x3eb0c6f7a0b5ed8dull, 0x41b3de4355555553ull, 0x41b3de4355555554ull, 0x41b3de4355555555ull,
	0x41b3de4355555556ull, 0x41b3de4355555557ull, 0xbecbf647612f3696ull, 0x43143ff3c1cb0959ull,
};

struct gen {
	uint64_t idx;
	uint8_t block[32];
	int left; /* doubles left in block */
};

static double next_value(struct gen *g)
{
	double f = 0;
	const size_t ns = KX_ARRAY_SIZE(static_u64s);
	if (g->idx < ns) {
		memcpy(&f, &static_u64s[g->idx], 8);
	} else if (g->idx < ns + 2000) {
		uint64_t u = 0x0010000000000000ull + (g->idx - ns);
		memcpy(&f, &u, 8);
	} else {
		while (f == 0.0 || !isfinite(f)) {
			if (!g->left) {
				kx_sha256(g->block, 32, g->block);
				g->left = 4;
			}
			memcpy(&f, g->block + 8 * (4 - g->left), 8); /* little-endian Float64Array */
			g->left--;
		}
	}
	g->idx++;
	return f;
}

static const struct {
	uint64_t lines;
	const char *sha256;
} published[] = {
	{ 1000, "be18b62b6f69cdab33a7e0dae0d9cfa869fda80ddc712221570f9f40a5878687" },
	{ 10000, "b9f7a8e75ef22a835685a52ccba7f7d6bdc99e34b010992cbc5864cd12be6892" },
	{ 100000, "22776e6d4b49fa294a0d0f349268e5c28808fe7e0cb2bcbe28f63894e494d4c7" },
	{ 1000000, "49415fee2c56c77864931bd3624faad425c3c577d6d74e89a83bc725506dad16" },
	{ 10000000, "b9f8a44a91d46813b21b9602e72f112613c91408db0b8341fb94603d9db135e0" },
};

static void spot(double v, const char *want)
{
	char got[KX_JCS_NUMBER_MAX];
	kx_jcs_number(v, got);
	is_str(got, want, want);
}

int main(int argc, char **argv)
{
	uint64_t lines = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;

	/* the README's sample lines and the SPEC's examples */
	spot(9007199254740994.0, "9007199254740994");
	spot(1e21, "1e+21");
	spot(1e20, "100000000000000000000");
	spot(0.000001, "0.000001");
	spot(1e-7, "1e-7");
	spot(-0.0, "0");
	spot(274.07342529296875, "274.07342529296875");
	spot(333333333.33333329, "333333333.3333333");
	spot(4.5, "4.5");
	spot(5e-324, "5e-324");
	spot(1.7976931348623157e308, "1.7976931348623157e+308");
	spot(-1.5e-9, "-1.5e-9");
	spot(123456789012345680000.0, "123456789012345680000");
	char buf[KX_JCS_NUMBER_MAX];
	ok(kx_jcs_number(1.0 / 0.0, buf) == 0, "infinity has no JSON form");

	struct gen g = { 0 };
	struct kx_sha256 *h = kx_sha256_new();
	char line[64];
	for (uint64_t i = 1; i <= lines; i++) {
		double f = next_value(&g);
		uint64_t u;
		memcpy(&u, &f, 8);
		int n = snprintf(line, sizeof(line), "%" PRIx64 ",", u);
		n += (int)kx_jcs_number(f, line + n);
		line[n++] = '\n';
		kx_sha256_update(h, line, (size_t)n);
	}
	uint8_t d[32];
	char hex[65];
	kx_sha256_final(h, d);
	kx_hex(d, 32, hex);
	const char *want = NULL;
	for (size_t i = 0; i < KX_ARRAY_SIZE(published); i++)
		if (published[i].lines == lines)
			want = published[i].sha256;
	if (want)
		is_str(hex, want, "sha-256 of the ES6 number test file");
	else
		diag("%" PRIu64 " lines: sha-256 %s (no published value)", lines, hex);
	return tap_done();
}
