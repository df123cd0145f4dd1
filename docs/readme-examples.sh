#!/usr/bin/env bash
# Runs the README usage examples in a scratch dir and prints them as a console transcript
# (AESX=target/release/aesx docs/readme-examples.sh): keeps the README examples true.
A=${AESX:-aesx}
d=$(mktemp -d); cd "$d"
head -c 1000000 /dev/urandom > photo.jpg
printf 'meeting at noon, room 4\n' > notes.txt
head -c 16 /dev/urandom > key.bin
run() { echo "\$ $*"; eval "$@" 2>&1; }
export PATH=$(dirname "$A"):$PATH
run aesx encrypt --key-hex 000102030405060708090a0b0c0d0e0f --iv-hex f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff photo.jpg photo.jpg.enc
run openssl enc -d -aes-128-ctr -K 000102030405060708090a0b0c0d0e0f -iv f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff -in photo.jpg.enc -out back.jpg
run 'cmp photo.jpg back.jpg && echo identical'
run 'printf 000102030405060708090a0b0c0d0e0f | aesx decrypt --key-file - --iv-hex f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff photo.jpg.enc back2.jpg && cmp photo.jpg back2.jpg && echo identical'
run aesx encrypt --mode cbc --key-file key.bin --iv-hex 000102030405060708090a0b0c0d0e0f notes.txt notes.cbc
run aesx decrypt --mode cbc --key-file key.bin --iv-hex 000102030405060708090a0b0c0d0e0f notes.cbc -
run aesx decrypt --mode cbc --key-hex 0f0102030405060708090a0b0c0d0e0f --iv-hex 000102030405060708090a0b0c0d0e0f notes.cbc notes.out
run ls notes.out
run aesx encrypt --key-hex 000102030405060708090a0b0c0d0e0f --iv-hex 00 photo.jpg x
run aesx encrypt --key-hex 000102030405060708090a0b0c0d0e0f --iv-hex f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff photo.jpg photo.jpg
run aesx encrypt --key-hex 000102030405060708090a0b0c0d0e0f --iv-hex f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff photo.jpg photo.jpg.enc
run aesx decrypt --key-hex 000102030405060708090a0b0c0d0e0f --iv-hex f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff photo.jpg.enc /dev/null
run aesx encrypt --mode ecb --padding none --key-hex 000102030405060708090a0b0c0d0e0f notes.txt notes.ecb
cd /; rm -rf "$d"
