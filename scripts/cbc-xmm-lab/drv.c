/* Driver for run.sh: calls every k_VARIANT (n blocks per iteration) in place over 16 KiB,
 * interleaved, best of 600 trials of 20 calls; the data and keys are arbitrary. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
typedef void kfn(long n, const void *dk, void *buf);
#define X(name, n) extern kfn k_##name;
VARIANTS
#undef X
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(void){
  static uint8_t dk[240] __attribute__((aligned(64)));
  static uint8_t buf[16384+4096] __attribute__((aligned(64)));
  for(int i=0;i<240;i++)dk[i]=i*7+1;
  kfn*fs[]={
#define X(name,n) k_##name,
VARIANTS
#undef X
  };
  int ns[]={
#define X(name,n) n,
VARIANTS
#undef X
  };
  const char*nm[]={
#define X(name,n) #name,
VARIANTS
#undef X
  };
  int nv=sizeof fs/sizeof fs[0]; double best[32]; for(int i=0;i<nv;i++)best[i]=1e30;
  for(int t=0;t<600;t++) for(int i=0;i<nv;i++){ long it=16384/(16*ns[i]); double t0=now(); for(int r=0;r<20;r++) fs[i](it,dk,buf); double d=(now()-t0)/20/(it*16*ns[i]); if(d<best[i])best[i]=d;}
  for(int i=0;i<nv;i++) printf("%-14s %6.3f GB/s\n",nm[i],1/best[i]);
}
