#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Signing keys (SPEC §10): `kindex keygen` makes a pair the openssl command line reads and checks
# signatures with, names it by an id anyone can recompute, never overwrites a key, and refuses
# what it cannot use.
source "$(dirname "$0")/cli-lib.sh"
cd "$tmp"

mkdir keys
expect 0 "$KINDEX" keygen keys/lab-a
check "keygen makes keys/lab-a.key with mode 0600 and keys/lab-a.pub" \
	bash -c '[ "$(stat -c %a keys/lab-a.key)" = 600 ] && [ -s keys/lab-a.pub ]'
id=$(awk '/^key id / { print $3 }' out)
# the id, recomputed by openssl: sha256 of the key's 32 raw bytes (the DER SubjectPublicKeyInfo ends with them)
want=sha256:$(openssl pkey -pubin -in keys/lab-a.pub -outform DER | tail -c 32 | sha256sum | cut -d' ' -f1)
check "the key id is sha256: of the public key's raw bytes, as openssl derives them ($id)" [ "$id" = "$want" ]
check "openssl reads the private key as an ED25519 key" \
	bash -c 'openssl pkey -in keys/lab-a.key -noout -text 2>/dev/null | grep -q "ED25519 Private-Key"'
printf %s "sha256:272e401936bf0000000000000000000000000000000000000000000000000000" >msg
openssl pkeyutl -sign -inkey keys/lab-a.key -rawin -in msg -out sig 2>/dev/null
check "a signature made with the private key verifies with the public key (openssl pkeyutl)" \
	bash -c 'openssl pkeyutl -verify -pubin -inkey keys/lab-a.pub -rawin -in msg -sigfile sig >/dev/null'

cp keys/lab-a.key before.key
expect 1 "$KINDEX" keygen keys/lab-a
check "a second keygen of the same name is refused, naming the file" contains err "keys/lab-a.key: File exists"
check "and the key is left as it was" cmp -s keys/lab-a.key before.key
expect 2 "$KINDEX" keygen
check "keygen without a NAME: usage" contains err "give one NAME"
expect 4 "$KINDEX" keygen no/such/dir/k
check "keygen into a missing directory says which file" contains err "cannot create no/such/dir/k.key"
check "and leaves nothing" bash -c '! ls no 2>/dev/null'
finish
