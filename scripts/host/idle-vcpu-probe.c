/*
 * idle-vcpu-probe.c: where does a task go when it is woken on a busy CPU while another CPU
 * of the same LLC idles? Mainline select_idle_sibling() (3.9+) scans the LLC and wakes it
 * onto the idle CPU, unless available_idle_cpu() (4.19+) rejects that CPU (a vCPU its
 * hypervisor reports preempted, vcpu_is_preempted()) or the SIS_UTIL budget is 0.
 *
 * The waker spins on CPU 0; the wakee last ran on CPU 0 (it pins itself there before it
 * blocks, then widens its affinity to CPUs 0 and 1); CPU 1 runs nothing but, in the second
 * part, a short "tickler" task X us before each wakeup. Prints, for each X, how many of 200
 * wakeups stayed on the busy CPU 0. See docs/fidelity.md ("Placement beside an idle vCPU").
 *
 *   gcc -O2 -o idle-vcpu-probe scripts/host/idle-vcpu-probe.c -lpthread && ./idle-vcpu-probe
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>
static atomic_int word, tword; static atomic_int stop; static atomic_int wcpu = -1; static atomic_long tran;
static long ns(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000L+t.tv_nsec;}
static void spin(long d){long e=ns()+d;while(ns()<e);}
static void pin(int c){cpu_set_t s;CPU_ZERO(&s);if(c<0){CPU_SET(0,&s);CPU_SET(1,&s);}else CPU_SET(c,&s);sched_setaffinity(0,sizeof s,&s);}
static void *wakee(void*a){ while(!stop){ if(!word){ pin(0); pin(-1); syscall(SYS_futex,&word,FUTEX_WAIT_PRIVATE,0,0,0,0);continue;} word=0; wcpu=sched_getcpu(); spin(20000);} return 0;}
static void *tickler(void*a){ pin(1); while(!stop){ if(!tword){ syscall(SYS_futex,&tword,FUTEX_WAIT_PRIVATE,0,0,0,0);continue;} tword=0; tran=ns(); } return 0;}
int main(int c,char**v){ pin(0); pthread_t t,t2; pthread_create(&t,0,wakee,0); pthread_create(&t2,0,tickler,0);
 /* x < 0: CPU 1 is never tickled (idle since the start). */
 long xs[]={-1,5000,20000,50000,100000,200000,400000,1000000,3000000};
 for(int k=0;k<9;k++){ long x=xs[k]; int same=0,diff=0;
 for(int i=0;i<200;i++){ usleep(300); if(x>=0){ tran=0; tword=1; syscall(SYS_futex,&tword,FUTEX_WAKE_PRIVATE,1,0,0,0); while(!tran); spin(tran + x - ns()); } else spin(100000); wcpu=-1; word=1; syscall(SYS_futex,&word,FUTEX_WAKE_PRIVATE,1,0,0,0); spin(100000); while(wcpu<0); if(wcpu==0) same++; else diff++; }
 if(x<0) printf("cpu1 never used: stayed on busy cpu0 %3d, went to cpu1 %3d\n",same,diff);
 else printf("cpu1 idle %6ld us before the wake: stayed on busy cpu0 %3d, went to cpu1 %3d\n",x/1000,same,diff);}
 stop=1; word=1; tword=1; syscall(SYS_futex,&word,FUTEX_WAKE_PRIVATE,1,0,0,0); syscall(SYS_futex,&tword,FUTEX_WAKE_PRIVATE,1,0,0,0); return 0;}
