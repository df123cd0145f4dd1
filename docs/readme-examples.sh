#!/usr/bin/env bash
# Runs the README usage examples in a scratch dir and prints them as a console transcript
# (AESX=target/release/aesx docs/readme-examples.sh): keeps the README examples true.
# The first part is the aesx format, the second (after the "Compatibility" line) the
# openssl-enc-compatible modes.
A=${AESX:-aesx}
d=$(mktemp -d); cd "$d"
head -c 1000000 /dev/urandom > photo.jpg
printf 'meeting at noon, room 4\n' > notes.txt
printf 'correct horse battery staple\n' > pass.txt
head -c 16 /dev/urandom > key.bin
run() { echo "\$ $*"; eval "$@" 2>&1; }
export PATH=$(dirname "$A"):$PATH
run aesx keygen my.key
run aesx encrypt --key-file my.key photo.jpg photo.jpg.aesx
run aesx decrypt --key-file my.key photo.jpg.aesx back.jpg
run 'cmp photo.jpg back.jpg && echo identical'
run aesx encrypt --key-file my.key photo.jpg again.aesx
run 'cmp -s photo.jpg.aesx again.aesx || echo different'
run dd if=photo.jpg.aesx of=photo.jpg.aesx bs=1 skip=600000 seek=500000 count=16 conv=notrunc status=none
run aesx decrypt --key-file my.key photo.jpg.aesx back2.jpg
run ls back2.jpg
run 'head -c 300000 again.aesx > cut.aesx'
run 'aesx decrypt --key-file my.key cut.aesx - | wc -c'
run 'cat again.aesx pass.txt > longer.aesx'
run aesx decrypt --key-file my.key longer.aesx longer.jpg
run aesx encrypt --passphrase-file pass.txt notes.txt notes.aesx
run aesx decrypt --passphrase-file pass.txt notes.aesx -
run aesx decrypt --key-file my.key notes.aesx -
run 'printf "correct horse\n" > wrong.txt; aesx decrypt --passphrase-file wrong.txt notes.aesx -'
run aesx keygen my.key
echo "-- Compatibility"
run aesx encrypt --key-hex 000102030405060708090a0b0c0d0e0f --iv-hex f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff photo.jpg photo.jpg.enc
run openssl enc -d -aes-128-ctr -K 000102030405060708090a0b0c0d0e0f -iv f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff -in photo.jpg.enc -out back.jpg
run 'cmp photo.jpg back.jpg && echo identical'
run 'printf 000102030405060708090a0b0c0d0e0f | aesx decrypt -q --key-file - --iv-hex f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff photo.jpg.enc back2.jpg && cmp photo.jpg back2.jpg && echo identical'
run aesx encrypt -q --mode cbc --key-file key.bin --iv-hex 000102030405060708090a0b0c0d0e0f notes.txt notes.cbc
run aesx decrypt -q --mode cbc --key-file key.bin --iv-hex 000102030405060708090a0b0c0d0e0f notes.cbc -
run aesx decrypt --mode cbc --key-hex 0f0102030405060708090a0b0c0d0e0f --iv-hex 000102030405060708090a0b0c0d0e0f notes.cbc notes.out
run ls notes.out
run aesx encrypt --key-hex 000102030405060708090a0b0c0d0e0f --iv-hex 00 photo.jpg x
run aesx encrypt --key-hex 000102030405060708090a0b0c0d0e0f --iv-hex f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff photo.jpg photo.jpg
run aesx encrypt --key-hex 000102030405060708090a0b0c0d0e0f --iv-hex f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff photo.jpg photo.jpg.enc
run aesx decrypt --key-hex 000102030405060708090a0b0c0d0e0f --iv-hex f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff photo.jpg.enc /dev/null
run aesx encrypt --mode ecb --padding none --key-hex 000102030405060708090a0b0c0d0e0f notes.txt notes.ecb
cd /; rm -rf "$d"
